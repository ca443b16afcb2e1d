//! End to end: sessions from inside the full-screen app — `/clear` starts a new session that `--continue`
//! resumes (the old one stays listed), `/resume` opens the picker, `/model` alone opens the model picker and
//! aliases reach the API as full model ids.

// Test code: a panic is how a failure is reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use serde_json::json;
use tandem_e2e::app::{expect_idle_with, scenario, start, status_line, submit};
use tandem_e2e::pty::{framed, keys};
use tandem_e2e::{FakeServer, Workspace, execute};

fn listed_sessions(workspace: &Workspace) -> Vec<String> {
    let mut command = workspace.tandem();
    command.arg("sessions");
    let listing = execute(command);
    assert_eq!(listing.code, 0, "{listing:?}");
    listing.stdout.lines().skip(1).map(str::to_owned).collect()
}

fn texts(body: &serde_json::Value) -> String {
    body["messages"].to_string()
}

#[test]
fn slash_clear_starts_a_new_session_that_continue_resumes_and_the_old_one_stays_listed() {
    let workspace = Workspace::new();
    let server = FakeServer::spawn(scenario(json!({"replies": [
        {"blocks": [{"type": "text", "text": "Noted: pelican."}]},
        {"blocks": [{"type": "text", "text": "Noted: walrus."}]},
        {"blocks": [{"type": "text", "text": "The word was walrus."}]}
    ]})))
    .unwrap();
    let mut pty = start(&workspace, &server, 30, 100, &[]);
    submit(&pty, "remember pelican");
    expect_idle_with(&pty, "Noted: pelican.");
    submit(&pty, "/clear");
    pty.expect_text("New session");
    submit(&pty, "remember walrus");
    expect_idle_with(&pty, "Noted: walrus.");
    let second = server.requests()[1].body.clone();
    assert!(!texts(&second).contains("pelican"), "the cleared conversation is not sent: {}", texts(&second));
    submit(&pty, "/quit");
    assert!(pty.wait_exit(Duration::from_secs(10)).is_some());

    let sessions = listed_sessions(&workspace);
    assert_eq!(sessions.len(), 2, "both sessions are listed:\n{}", sessions.join("\n"));

    let mut command = workspace.anthropic(&server);
    command.args(["-p", "what word?", "--continue", "--output-format", "json"]);
    let run = execute(command);
    assert_eq!(run.code, 0, "{run:?}");
    let third = server.requests()[2].body.clone();
    assert!(texts(&third).contains("walrus") && !texts(&third).contains("pelican"), "{}", texts(&third));
}

#[test]
fn slash_resume_opens_the_picker_and_resumes_the_chosen_session() {
    let workspace = Workspace::new();
    let server = FakeServer::spawn(scenario(json!({"replies": [
        {"blocks": [{"type": "text", "text": "Noted: pelican."}]},
        {"blocks": [{"type": "text", "text": "Noted: walrus."}]},
        {"blocks": [{"type": "text", "text": "Back with the pelican."}]}
    ]})))
    .unwrap();
    let pty = start(&workspace, &server, 30, 100, &[]);
    submit(&pty, "remember pelican");
    expect_idle_with(&pty, "Noted: pelican.");
    submit(&pty, "/clear");
    pty.expect_text("New session");
    submit(&pty, "remember walrus");
    expect_idle_with(&pty, "Noted: walrus.");
    submit(&pty, "/resume");
    let picker = pty.expect_text("Resume a session");
    // The running session (walrus) is not offered: only the one /clear left behind.
    assert!(picker.contains("remember pelican") && !picker.contains("remember walrus"), "{}", framed(&picker));
    pty.send(keys::ENTER);
    let resumed = pty.expect_text("Resumed session");
    assert!(resumed.contains("remember pelican") && !resumed.contains("remember walrus"), "{}", framed(&resumed));
    assert!(!resumed.contains("New session"), "a resumed session is not announced as new:\n{}", framed(&resumed));
    submit(&pty, "which animal?");
    expect_idle_with(&pty, "Back with the pelican.");
    let last = server.requests()[2].body.clone();
    assert!(texts(&last).contains("pelican") && !texts(&last).contains("walrus"), "{}", texts(&last));
}

#[test]
fn slash_model_alone_opens_a_picker_and_aliases_are_sent_as_full_ids() {
    let workspace = Workspace::new();
    let server = FakeServer::spawn(scenario(json!({"replies": [
        {"blocks": [{"type": "text", "text": "First answer."}]},
        {"blocks": [{"type": "text", "text": "Second answer."}]}
    ]})))
    .unwrap();
    let pty = start(&workspace, &server, 30, 100, &["--model", "sonnet"]);
    pty.expect("the full id in the status line", |screen| status_line(screen).contains("claude-sonnet-4-5"));
    submit(&pty, "hello");
    expect_idle_with(&pty, "First answer.");
    assert_eq!(server.requests()[0].body["model"], "claude-sonnet-4-5", "the alias is resolved before sending");
    submit(&pty, "/model");
    let picker = pty.expect_text("(in use)");
    assert!(picker.contains("claude-opus-4-5") && picker.contains("claude-haiku-4-5"), "{}", framed(&picker));
    // Pick another model: move until its row is selected, then Enter.
    let target = "claude-haiku-4-5";
    for _ in 0..20 {
        let screen = pty.screen_text();
        if screen.lines().any(|row| row.contains(&format!("▶ {target}"))) {
            break;
        }
        pty.send(keys::DOWN);
        pty.expect("the selection moved", |now| now != screen);
    }
    pty.send(keys::ENTER);
    pty.expect("the new model in the status line", |screen| status_line(screen).contains(target));
    submit(&pty, "again");
    expect_idle_with(&pty, "Second answer.");
    assert_eq!(server.requests()[1].body["model"], target);
}

/// Issue 28: `/compact` on a short conversation made the next request larger and said "summarized". Now a
/// conversation a summary would not shrink is kept (and the user is told why, with no summary request); a long
/// one is compacted, its marker says by how much, and Ctrl+O opens it to the summary.
#[test]
fn slash_compact_keeps_a_short_conversation_and_compacts_a_long_one_visibly() {
    let workspace = Workspace::new();
    let long_answer = "A long paragraph of the first answer, well worth summarizing later on. ".repeat(2000);
    let server = FakeServer::spawn(scenario(json!({"replies": [
        {"blocks": [{"type": "text", "text": "Short answer."}]},
        {"blocks": [{"type": "text", "text": format!("{long_answer}\n\nEnd of the long answer.")}]},
        {"blocks": [{"type": "text", "text": "Second answer."}]},
        {"blocks": [{"type": "text", "text": "<summary>We discussed the migration plan in depth.</summary>"}]}
    ]})))
    .unwrap();
    let pty = start(&workspace, &server, 30, 100, &[]);
    submit(&pty, "hello");
    expect_idle_with(&pty, "Short answer.");
    submit(&pty, "/compact");
    let screen = pty.expect_text("Not compacted");
    assert_eq!(server.served(), 1, "no summary was asked for:\n{}", framed(&screen));

    submit(&pty, "tell me everything");
    expect_idle_with(&pty, "End of the long answer.");
    submit(&pty, "and then?");
    expect_idle_with(&pty, "Second answer.");
    submit(&pty, "/compact");
    let screen = pty.expect_text("ctrl+o shows the summary");
    assert!(screen.contains("conversation compacted on request:"), "{}", framed(&screen));
    assert!(!screen.contains("migration plan in depth"), "the summary waits for ctrl+o:\n{}", framed(&screen));
    assert_eq!(server.served(), 4);
    pty.send(keys::CTRL_O);
    pty.expect_text("We discussed the migration plan in depth.");
}

/// Issue 28: a resumed session showed an Edit or Write card with the sentence the model got ("Created file …")
/// where the live session showed the diff. The log keeps what each change applied, and the resumed cards show
/// the same diff: the removed and added lines of the Edit, every line of the new file.
#[test]
fn a_resumed_session_shows_the_diffs_its_edits_applied() {
    let workspace = Workspace::new();
    workspace.write("calc.py", "def total(xs):\n    s = 0\n    for x in xs:\n        s += x\n    return s\n");
    let edit = json!({"file_path": "calc.py", "old_string": "    s = 0\n    for x in xs:\n        s += x\n    return s",
                      "new_string": "    return sum(xs)"});
    let server = FakeServer::spawn(scenario(json!({"replies": [
        {"blocks": [{"type": "tool_use", "id": "toolu_r", "name": "Read", "input": {"file_path": "calc.py"}}]},
        {"blocks": [{"type": "tool_use", "id": "toolu_e", "name": "Edit", "input": edit}]},
        {"blocks": [{"type": "tool_use", "id": "toolu_w", "name": "Write",
                     "input": {"file_path": "notes.md", "content": "# Notes\n\n- total uses sum\n"}}]},
        {"blocks": [{"type": "text", "text": "Simplified, and noted."}]}
    ]})))
    .unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "simplify total", "--permission-mode", "acceptEdits"]);
    let run = execute(command);
    assert_eq!(run.code, 0, "{run:?}");
    let pty = start(&workspace, &server, 40, 100, &["--continue"]);
    let screen = pty.expect_text("Simplified, and noted.");
    for line in ["-     s = 0", "-     return s", "+     return sum(xs)", "+ # Notes", "+ - total uses sum"] {
        assert!(screen.contains(line), "{line:?} missing from the resumed cards:\n{}", framed(&screen));
    }
    assert!(!screen.contains("Created file"), "the sentence for the model stays out:\n{}", framed(&screen));
}
