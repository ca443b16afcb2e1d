//! The app driven like the runtime drives it: inputs in, effects and screens out.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::json;
use tandem_core::permissions::PermissionMode;
use tandem_core::tools::{Preview, Risk};
use tandem_protocol::conversation::{AssistantMessage, ContentBlock, SharedText, StopReason, Usage};
use tandem_protocol::{Event, ItemOutcome, Op, PermissionAnswer, RunOutcome, ToolCallStatus, TurnSummary};

use super::cells::CellKind;
use super::editor::Editor;
use super::{App, Effect, Focus, Input};
use crate::ui::status::StatusInfo;
use crate::ui::theme::{ColorDepth, Theme};

pub(super) fn app(width: u16, height: u16) -> App {
    let status = StatusInfo {
        provider: "anthropic".into(),
        model: "claude-sonnet-4-5".into(),
        context_window: 200_000,
        cost_usd: Some(0.0),
        ..Default::default()
    };
    let mut app =
        App::new(Theme::new(ColorDepth::TrueColor), Editor::default(), status, PathBuf::from("/work/project"));
    app.set_size(width, height);
    app
}

pub(super) fn key(code: KeyCode) -> Input {
    Input::Key(KeyEvent::new(code, KeyModifiers::NONE))
}

pub(super) fn ctrl(c: char) -> Input {
    Input::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL))
}

pub(super) fn core(app: &mut App, event: Event) -> Vec<Effect> {
    app.update(Input::Core(Box::new(event.into())), Instant::now())
}

pub(super) fn type_text(app: &mut App, text: &str) {
    for c in text.chars() {
        app.update(key(KeyCode::Char(c)), Instant::now());
    }
}

pub(super) fn screen(app: &App) -> String {
    let (width, height) = app.size;
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal.draw(|frame| crate::ui::frame::render(app, frame, Instant::now())).unwrap();
    let buffer = terminal.backend().buffer().clone();
    (0..height)
        .map(|y| (0..width).map(|x| buffer[(x, y)].symbol().to_owned()).collect::<String>().trim_end().to_owned())
        .collect::<Vec<_>>()
        .join("\n")
}

/// `ToolCallStarted` as core sends it, described by the built-in tools.
pub(super) fn tool_started(id: &str, name: &str, input: serde_json::Value) -> Event {
    let context = tandem_core::tools::ToolContext::new(PathBuf::from("/work/project"));
    // The registry the binary builds: the built-in tools and the two that answer from the dialog.
    let mut tools = tandem_core::tools::ToolRegistry::builtin();
    tools.register(std::sync::Arc::new(tandem_core::tools::ask_user::AskUserQuestionTool));
    tools.register(std::sync::Arc::new(tandem_core::tools::ask_user::ExitPlanModeTool));
    let display = tools.describe(name, &input, &context);
    let display = tandem_core::tools::CallDisplay { risk: Risk::High, ..display };
    Event::ToolCallStarted { call_id: id.into(), name: name.into(), input: input.into(), display }
}

/// The permission request core sends for `ls` run by Bash call `id`.
pub(super) fn ls_request(id: &str) -> Event {
    Event::PermissionRequested {
        call_id: id.into(),
        tool: "Bash".into(),
        risk: Risk::High,
        input: json!({"command": "ls"}).into(),
        preview: Some(Preview::Command { command: "ls".into(), cwd: "/work/project".into() }),
        suggested_rule: "Bash(ls:*)".into(),
        reason: None,
        agent: None,
    }
}

/// `ToolCallFinished` of a successful call as core sends it, with the tool's view of `content`.
pub(super) fn tool_finished(id: &str, name: &str, input: &serde_json::Value, content: &str) -> Event {
    Event::ToolCallFinished {
        call_id: id.into(),
        content: content.into(),
        is_error: false,
        status: ToolCallStatus::Completed,
        duration_ms: Some(3),
        structured: None,
        view: tandem_core::tools::ToolRegistry::builtin().result_view(name, input, content),
    }
}

pub(super) fn stream_text(app: &mut App, index: usize, text: &str) {
    let item_id = format!("item_{index}");
    core(app, Event::MessageStarted { item_id: item_id.clone() });
    core(app, Event::MessageDelta { item_id: item_id.clone(), text: text.into() });
    let text = Some(SharedText::new(text.into()));
    core(app, Event::MessageCompleted { item_id, outcome: tandem_protocol::ItemOutcome::Completed, text });
}

/// The end of a turn; an error starting with "Interrupted" marks it interrupted, as core does.
pub(super) fn finished(outcome: RunOutcome, errors: Vec<String>) -> Event {
    let interrupted = errors.iter().any(|error| error.starts_with("Interrupted"));
    Event::TurnFinished(TurnSummary {
        turn_id: 1,
        outcome,
        result_text: None,
        stop_reason: Some(StopReason::EndTurn),
        num_turns: 1,
        duration_ms: 1,
        duration_api_ms: 1,
        usage: Usage::default(),
        total_cost_usd: Some(0.01),
        permission_denials: vec![],
        errors,
        interrupted,
        api_error: None,
        structured_output: None,
        unsaved: None,
    })
}

/// A finished exchange: prompt, answer, a Read card and an Edit card.
pub(super) fn conversation(app: &mut App) {
    type_text(app, "Fix the greeting");
    let effects = app.update(key(KeyCode::Enter), Instant::now());
    assert_eq!(effects, vec![Effect::Op(Op::UserTurn { text: "Fix the greeting".into() })]);
    core(app, Event::RequestStarted { round: 1 });
    stream_text(app, 0, "I'll look at `hello.rs` first.\n\n- it prints a **greeting**\n- it needs a fix\n");
    core(app, tool_started("t1", "Read", json!({"file_path": "hello.rs"})));
    core(app, tool_finished("t1", "Read", &json!({"file_path": "hello.rs"}), "     1\tfn main() {}"));
    stream_text(app, 0, "Done: the greeting now says hello to tandem.\n");
    core(app, finished(RunOutcome::Success, vec![]));
}

#[test]
fn a_turn_renders_at_wide_and_narrow_widths() {
    for (width, height) in [(120, 24), (40, 24)] {
        let mut app = app(width, height);
        conversation(&mut app);
        let text = screen(&app);
        assert!(text.contains("> Fix the greeting"), "{text}");
        assert!(text.contains("Read"), "{text}");
        insta::assert_snapshot!(format!("turn_{width}x{height}"), text);
    }
}

#[test]
fn the_line_in_progress_is_drawn_as_it_arrives() {
    let mut app = app(80, 20);
    core(&mut app, Event::RequestStarted { round: 1 });
    core(&mut app, Event::MessageStarted { item_id: "m".into() });
    core(&mut app, Event::MessageDelta { item_id: "m".into(), text: "first line\n\nsecond li".into() });
    let text = screen(&app);
    assert!(text.contains("first line") && text.contains("second li"), "{text}");
    core(&mut app, Event::MessageDelta { item_id: "m".into(), text: "ne goes on".into() });
    assert!(screen(&app).contains("second line goes on"));
}

#[test]
fn a_retry_after_partial_output_discards_it() {
    let mut app = app(80, 20);
    core(&mut app, Event::RequestStarted { round: 1 });
    stream_text(&mut app, 0, "partial answer that will be dropped\n");
    core(
        &mut app,
        Event::Retrying {
            attempt: 1,
            max_attempts: 10,
            delay_ms: 500,
            reason: "the connection to the model was lost".into(),
            discarded_partial_output: true,
            status: None,
        },
    );
    stream_text(&mut app, 0, "the real answer\n");
    let text = screen(&app);
    assert!(!text.contains("partial answer that"), "{text}");
    assert!(text.contains("retrying") && text.contains("the real answer"), "{text}");
}

#[test]
fn a_completed_answer_holds_the_conversation_s_copy_of_its_text() {
    let mut app = app(80, 20);
    let shared = SharedText::new("A long answer.".into());
    core(&mut app, Event::MessageStarted { item_id: "item_1".into() });
    for piece in ["A long ", "answer."] {
        core(&mut app, Event::MessageDelta { item_id: "item_1".into(), text: piece.into() });
    }
    let completed = Some(shared.clone());
    core(
        &mut app,
        Event::MessageCompleted { item_id: "item_1".into(), outcome: ItemOutcome::Completed, text: completed },
    );
    let held = app.transcript.cells().iter().find_map(|cell| match &cell.kind {
        CellKind::Assistant { text, streaming: false } => Some(text.clone()),
        _ => None,
    });
    assert!(held.is_some_and(|held| SharedText::ptr_eq(&held, &shared)), "the app keeps its own copy");
}

/// Issue 27: the keys and the frame each had their own order of modals. With `/help` open while the model works,
/// a permission request was drawn over the help while the keys still went to the hidden help (`y` closed it and
/// answered nothing). One order now decides both: what is drawn on top has the keys.
#[test]
fn a_dialog_over_the_help_has_the_keys_it_is_drawn_with() {
    let mut app = app(100, 30);
    core(&mut app, Event::RequestStarted { round: 1 });
    app.submit("/help".into(), Instant::now());
    assert!(screen(&app).contains("keys and commands"), "the help is open");
    core(&mut app, tool_started("b1", "Bash", json!({"command": "ls"})));
    core(&mut app, ls_request("b1"));
    let shown = screen(&app);
    assert!(shown.contains("Bash(ls:*)") && !shown.contains("keys and commands"), "the dialog is on top:\n{shown}");
    let effects = app.update(key(KeyCode::Char('y')), Instant::now());
    assert_eq!(
        effects,
        vec![Effect::Op(Op::PermissionAnswer { call_id: "b1".into(), answer: PermissionAnswer::AllowOnce })],
        "the key went to the dialog drawn on top"
    );
}

#[test]
fn permission_requests_queue_and_answers_go_back_with_the_call_id() {
    let mut app = app(100, 30);
    core(&mut app, Event::RequestStarted { round: 1 });
    for id in ["b1", "b2"] {
        core(&mut app, tool_started(id, "Bash", json!({"command": "ls"})));
        core(&mut app, ls_request(id));
    }
    assert_eq!(app.dialogs.len(), 2);
    assert!(screen(&app).contains("Bash(ls:*)"));
    let effects = app.update(key(KeyCode::Char('y')), Instant::now());
    assert_eq!(
        effects,
        vec![Effect::Op(Op::PermissionAnswer { call_id: "b1".into(), answer: PermissionAnswer::AllowOnce })]
    );
    let effects = app.update(key(KeyCode::Char('n')), Instant::now());
    assert_eq!(
        effects,
        vec![Effect::Op(Op::PermissionAnswer {
            call_id: "b2".into(),
            answer: PermissionAnswer::Deny { feedback: None }
        })]
    );
    assert!(app.dialogs.is_empty());
}

#[test]
fn esc_interrupts_only_while_working_and_ctrl_c_twice_quits() {
    let mut app = app(80, 20);
    assert!(app.update(key(KeyCode::Esc), Instant::now()).is_empty(), "an idle Esc does nothing");
    type_text(&mut app, "hello");
    app.update(key(KeyCode::Enter), Instant::now());
    assert_eq!(app.update(key(KeyCode::Esc), Instant::now()), vec![Effect::Op(Op::Interrupt)]);
    core(&mut app, finished(RunOutcome::ErrorDuringExecution, vec!["Interrupted by the user.".into()]));
    assert!(screen(&app).contains("Interrupted"));

    type_text(&mut app, "draft");
    let now = Instant::now();
    assert!(app.update(ctrl('c'), now).is_empty());
    assert!(app.editor.is_empty(), "the first ctrl+c clears the input");
    assert!(app.update(ctrl('c'), now).is_empty());
    assert_eq!(app.update(ctrl('c'), now + Duration::from_millis(200)), vec![Effect::Quit]);
    assert_eq!(app.update(ctrl('d'), now), vec![Effect::Quit], "ctrl+d on an empty prompt quits");
}

#[test]
fn shift_tab_cycles_the_permission_mode() {
    let mut app = app(80, 20);
    let backtab = Input::Key(KeyEvent::new(KeyCode::BackTab, KeyModifiers::SHIFT));
    let modes: Vec<Vec<Effect>> = (0..3).map(|_| app.update(backtab_clone(&backtab), Instant::now())).collect();
    assert_eq!(
        modes,
        vec![
            vec![Effect::Op(Op::SetPermissionMode(PermissionMode::AcceptEdits))],
            vec![Effect::Op(Op::SetPermissionMode(PermissionMode::Plan))],
            vec![Effect::Op(Op::SetPermissionMode(PermissionMode::Default))],
        ]
    );
}

fn backtab_clone(input: &Input) -> Input {
    match input {
        Input::Key(key) => Input::Key(*key),
        _ => unreachable!(),
    }
}

#[test]
fn search_highlights_matches_and_steps_through_them() {
    let mut app = app(80, 24);
    conversation(&mut app);
    app.update(ctrl('f'), Instant::now());
    type_text(&mut app, "greeting");
    app.update(key(KeyCode::Enter), Instant::now());
    let search = app.transcript.search.as_ref().unwrap();
    assert!(search.matches.len() >= 3, "{:?}", search.matches);
    let text = screen(&app);
    assert!(text.contains("search: greeting"), "{text}");
    insta::assert_snapshot!("search_80x24", text);

    // The current match is drawn in the current-match style, the others in the match style.
    let mut terminal = Terminal::new(TestBackend::new(80, 24)).unwrap();
    terminal.draw(|frame| crate::ui::frame::render(&app, frame, Instant::now())).unwrap();
    let buffer = terminal.backend().buffer();
    let styled = |style: ratatui::style::Style| {
        (0..24u16)
            .flat_map(|y| (0..80u16).map(move |x| (x, y)))
            .filter(|&(x, y)| {
                Some(buffer[(x, y)].bg) == style.bg && buffer[(x, y)].modifier.contains(style.add_modifier)
            })
            .count()
    };
    assert!(styled(app.theme.search_match) >= "greeting".len(), "other matches are highlighted");
    app.update(key(KeyCode::Char('n')), Instant::now());
    assert_eq!(app.focus, Focus::Scroll);
}

#[test]
fn search_finds_text_inside_a_collapsed_card_and_opens_it() {
    let mut app = app(80, 24);
    conversation(&mut app);
    assert!(!screen(&app).contains("fn main"), "the Read card starts collapsed");
    app.update(ctrl('f'), Instant::now());
    type_text(&mut app, "FN MAIN");
    let search = app.transcript.search.as_ref().unwrap();
    assert_eq!(search.matches.len(), 1, "{:?}", search.matches);
    assert!(search.matches[0].folded_in.is_some());
    assert!(screen(&app).contains("1/1 (in a collapsed card: enter opens it)"), "{}", screen(&app));
    app.update(key(KeyCode::Enter), Instant::now());
    let text = screen(&app);
    assert!(text.contains("fn main() {}"), "Enter opens the card at the match:\n{text}");
    let search = app.transcript.search.as_ref().unwrap();
    let current = &search.matches[search.current];
    assert_eq!(current.folded_in, None);
    assert_eq!(app.transcript.cursor_line, Some(current.line));
    // Searching again finds it where it is now drawn, once.
    app.update(key(KeyCode::Char('n')), Instant::now());
    assert_eq!(app.transcript.search.as_ref().unwrap().matches.len(), 1);
}

#[test]
fn scroll_mode_copies_the_answer_and_code_blocks() {
    let mut app = app(80, 24);
    core(&mut app, Event::RequestStarted { round: 1 });
    stream_text(&mut app, 0, "Run this:\n\n```sh\ncargo test\n```\n");
    core(&mut app, finished(RunOutcome::Success, vec![]));
    app.update(ctrl('s'), Instant::now());
    assert_eq!(app.update(key(KeyCode::Char('b')), Instant::now()), vec![Effect::Copy("cargo test".into())]);
    let effects = app.update(key(KeyCode::Char('c')), Instant::now());
    assert_eq!(effects, vec![Effect::Copy("Run this:\n\n```sh\ncargo test\n```\n".into())]);
    app.update(key(KeyCode::Esc), Instant::now());
    assert_eq!(app.focus, Focus::Input);
}

#[test]
fn copied_lines_are_the_logical_lines_without_gutters_or_wraps() {
    let mut app = app(40, 30);
    core(&mut app, Event::RequestStarted { round: 1 });
    let paragraph = "This paragraph is long enough that it wraps over several rows at forty columns.";
    stream_text(
        &mut app,
        0,
        &format!(
            "{paragraph}\n\n- a list item that also wraps at this narrow width\n\n```rust\nfn main() {{\n    run();\n}}\n```\n\nEnd.\n"
        ),
    );
    core(&mut app, finished(RunOutcome::Success, vec![]));
    let text = screen(&app);
    assert!(text.contains("● This paragraph is long enough that"), "the paragraph wraps:\n{text}");
    app.update(ctrl('s'), Instant::now());
    app.update(key(KeyCode::Char('g')), Instant::now());
    // Move to the paragraph's first row, select to the end of the code block and copy.
    while app.transcript.cursor_line.is_none_or(|line| !screen_line(&app, line).starts_with("● This")) {
        app.update(key(KeyCode::Char('j')), Instant::now());
    }
    app.update(key(KeyCode::Char('v')), Instant::now());
    while app.transcript.cursor_line.is_none_or(|line| screen_line(&app, line).trim() != "}") {
        app.update(key(KeyCode::Char('j')), Instant::now());
    }
    let effects = app.update(key(KeyCode::Char('y')), Instant::now());
    let expected = format!(
        "{paragraph}\n\n• a list item that also wraps at this narrow width\n\n  fn main() {{\n      run();\n  }}"
    );
    assert_eq!(effects, vec![Effect::Copy(expected)]);
    // Code alone copies without its gutter.
    app.update(key(KeyCode::Char('k')), Instant::now());
    app.update(key(KeyCode::Char('v')), Instant::now());
    app.update(key(KeyCode::Char('j')), Instant::now());
    let effects = app.update(key(KeyCode::Char('y')), Instant::now());
    assert_eq!(effects, vec![Effect::Copy("    run();\n}".into())]);
}

/// The text of transcript line `line` as laid out at the app's width.
fn screen_line(app: &App, line: usize) -> String {
    let layout = app.transcript.layout(app.size.0 as usize, &app.theme, Instant::now());
    let mut rest = line;
    for lines in layout {
        if rest < lines.len() {
            return lines.text(rest).to_owned();
        }
        rest -= lines.len();
    }
    String::new()
}

#[test]
fn b_copies_the_code_block_nearest_the_cursor() {
    let mut app = app(80, 24);
    core(&mut app, Event::RequestStarted { round: 1 });
    let filler = "Some prose between the blocks.\n\n".repeat(6);
    stream_text(
        &mut app,
        0,
        &format!("First:\n\n```sh\nmake one\n```\n\n{filler}Second:\n\n```py\nprint(2)\n```\n\nDone.\n"),
    );
    core(&mut app, finished(RunOutcome::Success, vec![]));
    app.update(ctrl('s'), Instant::now());
    // The cursor starts at the bottom of the view: the second block is the one nearest.
    assert_eq!(app.update(key(KeyCode::Char('b')), Instant::now()), vec![Effect::Copy("print(2)".into())]);
    assert_eq!(app.update(key(KeyCode::Char('b')), Instant::now()), vec![Effect::Copy("print(2)".into())]);
    app.update(key(KeyCode::Char('g')), Instant::now());
    assert_eq!(app.update(key(KeyCode::Char('b')), Instant::now()), vec![Effect::Copy("make one".into())]);
    for _ in 0..3 {
        app.update(key(KeyCode::Char('j')), Instant::now());
    }
    assert_eq!(app.update(key(KeyCode::Char('b')), Instant::now()), vec![Effect::Copy("make one".into())]);
}

#[test]
fn scrolling_up_marks_new_output_below() {
    let mut app = app(60, 12);
    for i in 0..30 {
        stream_text(&mut app, 0, &format!("answer number {i}\n"));
    }
    app.update(key(KeyCode::PageUp), Instant::now());
    assert!(app.transcript.scroll_from_bottom > 0);
    stream_text(&mut app, 0, "fresh output\n");
    assert!(app.transcript.new_output_below);
    assert!(screen(&app).contains("new output below"));
    app.update(key(KeyCode::End), Instant::now());
    assert_eq!(app.transcript.scroll_from_bottom, 0);
}

#[test]
fn slash_commands_act_on_the_session() {
    let mut app = app(80, 24);
    assert_eq!(
        app.submit("/model claude-haiku-4-5".into(), Instant::now()),
        vec![Effect::Op(Op::SetModel { model: "claude-haiku-4-5".into() })]
    );
    assert_eq!(
        app.submit("/mode plan".into(), Instant::now()),
        vec![Effect::Op(Op::SetPermissionMode(PermissionMode::Plan))]
    );
    assert_eq!(app.submit("/quit".into(), Instant::now()), vec![Effect::Quit]);
    conversation(&mut app);
    assert_eq!(app.submit("/clear".into(), Instant::now()), vec![Effect::Op(Op::ClearConversation)]);
    assert_eq!(app.transcript.len(), 1, "only the 'new conversation' notice remains");
    app.submit("/cost".into(), Instant::now());
    assert!(
        matches!(&app.transcript.cells().last().unwrap().kind, CellKind::Notice { text, .. } if text.contains("Session cost"))
    );
    assert_eq!(
        app.submit("/compact keep the API notes".into(), Instant::now()),
        vec![Effect::Op(Op::Compact { instructions: Some("keep the API notes".into()) })]
    );
    core(&mut app, Event::Context { used: 50_000, window: 200_000 });
    assert_eq!(app.status.context_used, Some(50_000));
    let effects = app.submit("/init".into(), Instant::now());
    assert!(matches!(&effects[..], [Effect::Op(Op::UserTurn { text })] if text.contains("CLAUDE.md")), "{effects:?}");
    core(&mut app, finished(RunOutcome::Success, vec![]));
    app.submit("/help".into(), Instant::now());
    assert!(screen(&app).contains("keys"));
}

#[test]
fn assistant_messages_fill_in_tool_inputs_and_interrupts_mark_cards() {
    let mut app = app(80, 20);
    core(&mut app, Event::RequestStarted { round: 1 });
    core(&mut app, Event::ToolInputStarted { call_id: "x".into(), name: "Bash".into() });
    core(
        &mut app,
        Event::AssistantMessage(AssistantMessage {
            id: "m".into(),
            model: "m".into(),
            content: vec![ContentBlock::ToolUse {
                id: "x".into(),
                name: "Bash".into(),
                input: json!({"command": "sleep 5"}).into(),
            }],
            stop_reason: Some(StopReason::ToolUse),
            usage: Usage::default(),
        }),
    );
    assert!(screen(&app).contains("sleep 5"));
    core(&mut app, finished(RunOutcome::ErrorDuringExecution, vec!["Interrupted by the user.".into()]));
    let CellKind::Tool(card) = &app.transcript.cells()[0].kind else { panic!() };
    assert_eq!(card.state, super::cells::ToolState::Finished(ToolCallStatus::Interrupted));
}

#[test]
fn a_resize_lays_out_only_what_is_visible() {
    let mut app = app(80, 24);
    for i in 0..500 {
        stream_text(
            &mut app,
            0,
            &format!("answer {i}: a paragraph long enough to wrap at narrower widths, twice over.\n"),
        );
    }
    let theme = app.theme.clone();
    let now = Instant::now();
    assert!(
        app.transcript
            .view(80, usize::MAX, &theme, now)
            .iter()
            .all(|laid| matches!(laid, super::transcript::Laid::Lines(_)))
    );
    let view = app.transcript.view(50, 40, &theme, now);
    let exact = view.iter().filter(|laid| matches!(laid, super::transcript::Laid::Lines(_))).count();
    assert!(exact < 20, "only the cells near the bottom are laid out again: {exact}");
    assert!(matches!(view.last(), Some(super::transcript::Laid::Lines(_))));
    // The estimate is close to the real height.
    let estimated: usize = view.iter().map(super::transcript::Laid::height).sum();
    let real = app.transcript.height(50, &theme, now);
    assert!(estimated.abs_diff(real) * 5 < real, "estimate {estimated} vs real {real}");
    app.set_size(50, 24);
    assert!(screen(&app).contains("answer 499"));
}

#[test]
fn a_custom_command_goes_to_core_as_typed() {
    let mut app = app(80, 24);
    let catalog = tandem_core::commands::CommandCatalog {
        commands: vec![tandem_core::commands::CustomCommand {
            name: "review".into(),
            description: "Review a file".into(),
            argument_hint: Some("[file]".into()),
            allowed_tools: Vec::new(),
            model: None,
            body: "Review $1".into(),
            path: std::path::PathBuf::from(".claude/commands/review.md"),
            scope: "project",
        }],
        problems: Vec::new(),
    };
    app.set_custom_commands(&catalog, &tandem_core::skills::SkillCatalog::default());
    assert_eq!(
        app.submit("/review src/a.rs".into(), Instant::now()),
        vec![Effect::Op(Op::UserTurn { text: "/review src/a.rs".into() })]
    );
    assert!(
        matches!(&app.transcript.cells().last().unwrap().kind, CellKind::User { text } if text == "/review src/a.rs")
    );
}

#[test]
fn bashes_lists_background_commands_and_kills_one() {
    let mut app = app(80, 24);
    core(
        &mut app,
        Event::BackgroundTasks(vec![tandem_protocol::BackgroundTask {
            id: "bash_1".into(),
            command: "npm run dev".into(),
            running: true,
        }]),
    );
    assert_eq!(app.status.background_running, 1);
    app.submit("/bashes".into(), Instant::now());
    assert!(screen(&app).contains("bash_1  running  npm run dev"), "{}", screen(&app));
    assert_eq!(
        app.submit("/bashes kill bash_1".into(), Instant::now()),
        vec![Effect::Op(Op::KillBackground { id: "bash_1".into() })]
    );
}

/// A prompt a hook refused goes back into the input: the refusal names the prompt's submission, so only that
/// prompt's cell is taken out (the app matched the prompt's text before, and any cell with the same text would do).
#[test]
fn a_refused_prompt_is_taken_back_by_its_submission() {
    let mut app = app(80, 24);
    type_text(&mut app, "deploy it");
    app.update(key(KeyCode::Enter), Instant::now());
    app.prompt_submitted(tandem_protocol::SubmissionId(4));
    let refused = |submission| tandem_protocol::EventMsg {
        submission: Some(tandem_protocol::SubmissionId(submission)),
        event: Event::PromptRefused { prompt: "deploy it".into() },
    };
    app.update(Input::Core(Box::new(refused(9))), Instant::now());
    assert!(screen(&app).contains("deploy it"), "another submission's refusal takes nothing back");
    app.update(Input::Core(Box::new(refused(4))), Instant::now());
    let user_cells = app.transcript.cells().iter().filter(|cell| matches!(cell.kind, CellKind::User { .. })).count();
    assert_eq!(user_cells, 0);
    assert_eq!(app.editor.text(), "deploy it", "the prompt is back in the input");
}
