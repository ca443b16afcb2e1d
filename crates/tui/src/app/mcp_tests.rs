//! MCP servers in the app: the `.mcp.json` approval dialog, the `/mcp` list, server prompts as commands.

use std::time::Instant;

use ratatui::crossterm::event::KeyCode;
use tandem_protocol::{Event, McpChoice, McpPromptView, McpRequest, McpServerView, Op};

use super::tests::{app, core, key, screen, type_text};
use super::{App, Effect};

fn server(name: &str, status: &str, needs_approval: bool) -> McpServerView {
    McpServerView {
        name: name.into(),
        scope: if needs_approval { "project".into() } else { "user".into() },
        target: format!("{name}-server --stdio"),
        details: vec!["env NODE_OPTIONS=--require ./hook.js".into()],
        transport: "stdio".into(),
        status: status.into(),
        reason: (status == "failed").then(|| "exited with status 1: no such table".into()),
        needs_approval,
        tools: vec![format!("mcp__{name}__search"), format!("mcp__{name}__create")],
        resources: vec!["note://readme".into()],
        prompts: vec![McpPromptView {
            command: format!("mcp__{name}__review"),
            description: "Review a topic".into(),
            arguments: vec!["topic".into()],
        }],
    }
}

fn decisions(effects: &[Effect]) -> Vec<(String, McpChoice)> {
    effects
        .iter()
        .filter_map(|effect| match effect {
            Effect::Op(Op::Mcp(McpRequest::Decide { server, choice })) => Some((server.clone(), *choice)),
            _ => None,
        })
        .collect()
}

fn list(app: &mut App, servers: Vec<McpServerView>) {
    core(app, Event::McpServers(servers));
}

#[test]
fn a_project_server_is_asked_about_once_in_claude_codes_words() {
    for (width, height) in [(120, 40), (80, 24)] {
        let mut app = app(width, height);
        list(&mut app, vec![server("tracker", "disabled", true)]);
        let text = screen(&app);
        assert!(text.contains("tracker"), "{text}");
        assert!(text.contains("Use this MCP server"), "{text}");
        assert!(text.contains("Continue without using this MCP server"), "{text}");
        for row in text.lines().filter(|row| row.contains("Use this and all")) {
            assert!(!row.ends_with("Use this and all"), "not cut mid-sentence at {width}: {row:?}");
        }
        // What the server will be given is shown, not just its command.
        assert!(text.contains("env NODE_OPTIONS=--require ./hook.js"), "{text}");
        // A stray Enter does not approve: the highlighted answer is "Continue without"; ↑ then Enter picks the
        // second answer.
        app.update(key(KeyCode::Up), Instant::now());
        let effects = app.update(key(KeyCode::Enter), Instant::now());
        assert_eq!(decisions(&effects), vec![("tracker".into(), McpChoice::Approve)]);
        // The next list still says it needs approval (core is starting it): not asked twice.
        list(&mut app, vec![server("tracker", "disabled", true)]);
        assert!(app.approval_server().is_none());
        assert!(!screen(&app).contains("Continue without using"));
    }
}

#[test]
fn esc_means_not_now_and_the_prompt_gets_the_keys_back() {
    let mut app = app(100, 30);
    list(&mut app, vec![server("a", "disabled", true), server("b", "disabled", true)]);
    assert_eq!(app.approval_server().map(|server| server.name.as_str()), Some("a"));
    assert!(decisions(&app.update(key(KeyCode::Esc), Instant::now())).is_empty());
    // The second server is asked next; `3` refuses it.
    assert_eq!(app.approval_server().map(|server| server.name.as_str()), Some("b"));
    let effects = app.update(key(KeyCode::Char('3')), Instant::now());
    assert_eq!(decisions(&effects), vec![("b".into(), McpChoice::Refuse)]);
    assert!(app.approval_server().is_none());
    type_text(&mut app, "hello");
    assert_eq!(app.editor.text(), "hello", "keys go to the prompt again");
}

#[test]
fn approving_all_answers_every_waiting_server() {
    let mut app = app(100, 30);
    list(&mut app, vec![server("a", "disabled", true), server("b", "disabled", true)]);
    let effects = app.update(key(KeyCode::Char('1')), Instant::now());
    assert_eq!(decisions(&effects), vec![("a".into(), McpChoice::ApproveAll)]);
    assert!(app.approval_server().is_none(), "b is approved with it, not asked");
}

#[test]
fn slash_mcp_lists_servers_expands_tools_and_reconnects() {
    for (width, height) in [(120, 40), (80, 24)] {
        let mut app = app(width, height);
        list(&mut app, vec![server("docs", "connected", false), server("db", "failed", false)]);
        let effects = app.submit("/mcp".into(), Instant::now());
        assert!(effects.iter().any(|effect| matches!(effect, Effect::Op(Op::Mcp(McpRequest::Refresh)))));
        let text = screen(&app);
        assert!(text.contains("docs") && text.contains("connected · 2 tools"), "{text}");
        assert!(text.contains("db") && text.contains("failed"), "{text}");
        // Enter lists the tools of the selected server.
        app.update(key(KeyCode::Enter), Instant::now());
        let text = screen(&app);
        assert!(text.contains("mcp__docs__search") && text.contains("/mcp__docs__review"), "{text}");
        // ↓ to the failed one: its reason shows; r reconnects it.
        app.update(key(KeyCode::Down), Instant::now());
        assert!(screen(&app).contains("no such table"));
        let effects = app.update(key(KeyCode::Char('r')), Instant::now());
        assert!(
            effects.iter().any(
                |effect| matches!(effect, Effect::Op(Op::Mcp(McpRequest::Reconnect { server })) if server == "db")
            ),
            "{effects:?}"
        );
        // Esc closes it and the prompt has the keys.
        app.update(key(KeyCode::Esc), Instant::now());
        assert!(app.mcp.view.is_none());
        type_text(&mut app, "x");
        assert_eq!(app.editor.text(), "x");
    }
}

#[test]
fn r_on_a_server_waiting_for_approval_asks_again() {
    let mut app = app(100, 30);
    list(&mut app, vec![server("tracker", "disabled", true)]);
    app.update(key(KeyCode::Esc), Instant::now());
    app.submit("/mcp".into(), Instant::now());
    assert!(screen(&app).contains("needs approval"));
    assert!(app.update(key(KeyCode::Char('r')), Instant::now()).is_empty());
    assert_eq!(app.approval_server().map(|server| server.name.as_str()), Some("tracker"));
    let effects = app.update(key(KeyCode::Char('2')), Instant::now());
    assert_eq!(decisions(&effects), vec![("tracker".into(), McpChoice::Approve)]);
}

#[test]
fn server_prompts_are_slash_commands_in_the_popup() {
    let mut app = app(120, 40);
    list(&mut app, vec![server("docs", "connected", false)]);
    type_text(&mut app, "/mcp__do");
    let text = screen(&app);
    assert!(text.contains("/mcp__docs__review"), "{text}");
    assert!(text.contains("<topic>"), "the arguments are shown: {text}");
    // A later list without the server takes the command away.
    list(&mut app, Vec::new());
    assert!(!screen(&app).contains("/mcp__docs__review"));
}

#[test]
fn at_completes_a_resource_in_the_middle_of_a_prompt() {
    let mut app = app(120, 40);
    list(&mut app, vec![server("docs", "connected", false)]);
    type_text(&mut app, "summarize @do");
    let text = screen(&app);
    assert!(text.contains("@docs:note://readme") && text.contains("resource (MCP docs)"), "{text}");
    app.update(key(KeyCode::Tab), Instant::now());
    assert_eq!(app.editor.text(), "summarize @docs:note://readme ");
    type_text(&mut app, "briefly");
    assert!(!screen(&app).contains("resource (MCP docs)"), "the popup closed");
    // Enter on a complete mention sends the prompt.
    let mut app = super::tests::app(120, 40);
    list(&mut app, vec![server("docs", "connected", false)]);
    type_text(&mut app, "@docs:note://readme");
    let effects = app.update(key(KeyCode::Enter), Instant::now());
    assert!(
        effects
            .iter()
            .any(|effect| matches!(effect, Effect::Op(Op::UserTurn { text }) if text == "@docs:note://readme")),
        "{effects:?}"
    );
}
