//! Keys in every state: each documented key does what the help says, whatever came before it (a dialog, an
//! interrupt, a resize, a suspend).

use std::time::{Duration, Instant};

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::KeyCode;
use serde_json::json;
use tandem_core::permissions::PermissionMode;
use tandem_core::tools::{Preview, Risk};
use tandem_protocol::{Event, Op, PermissionAnswer, RunOutcome};

use super::cells::CellKind;
use super::tests::{app, core, ctrl, finished, key, type_text};
use super::{App, Effect, Input};

/// The screen as drawn at `now` (transient messages depend on the clock).
fn screen_at(app: &App, now: Instant) -> String {
    let (width, height) = app.size;
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal.draw(|frame| crate::ui::frame::render(app, frame, now)).unwrap();
    let buffer = terminal.backend().buffer().clone();
    (0..height)
        .map(|y| (0..width).map(|x| buffer[(x, y)].symbol().to_owned()).collect::<String>().trim_end().to_owned())
        .collect::<Vec<_>>()
        .join("\n")
}

fn press(app: &mut App, input: Input, at: Instant) -> Vec<Effect> {
    app.update(input, at)
}

fn working(app: &mut App) {
    type_text(app, "do it");
    app.update(key(KeyCode::Enter), Instant::now());
    core(app, Event::RequestStarted { round: 1 });
}

fn bash_dialog(app: &mut App, id: &str) {
    core(app, super::tests::tool_started(id, "Bash", json!({"command": "make deploy"})));
    core(
        app,
        Event::PermissionRequested {
            call_id: id.into(),
            tool: "Bash".into(),
            risk: Risk::High,
            input: json!({"command": "make deploy"}).into(),
            preview: Some(Preview::Command { command: "make deploy".into(), cwd: "/work/project".into() }),
            suggested_rule: "Bash(make deploy:*)".into(),
            reason: None,
            agent: None,
        },
    );
}

#[test]
fn the_ctrl_c_hint_lasts_exactly_as_long_as_a_second_press_would_quit() {
    let mut app = app(80, 20);
    let start = Instant::now();
    assert!(press(&mut app, ctrl('c'), start).is_empty());
    assert!(screen_at(&app, start).contains("ctrl+c again to quit"));
    let late = start + Duration::from_millis(1600);
    assert!(!screen_at(&app, late).contains("ctrl+c again"), "the hint is gone when its window closes");
    assert_eq!(app.next_change(), Some(start + Duration::from_millis(1500)), "the runtime redraws when it expires");
    assert!(press(&mut app, ctrl('c'), late).is_empty(), "a press after the window starts a new one");
    assert!(screen_at(&app, late).contains("ctrl+c again to quit"));
    assert_eq!(press(&mut app, ctrl('c'), late + Duration::from_millis(100)), vec![Effect::Quit]);
}

#[test]
fn ctrl_c_while_working_interrupts_and_a_second_quits() {
    let mut app = app(80, 20);
    working(&mut app);
    let now = Instant::now();
    assert_eq!(press(&mut app, ctrl('c'), now), vec![Effect::Op(Op::Interrupt)]);
    assert!(screen_at(&app, now).contains("ctrl+c again to quit"));
    assert_eq!(press(&mut app, ctrl('c'), now + Duration::from_millis(300)), vec![Effect::Quit]);
}

#[test]
fn ctrl_c_in_a_dialog_denies_and_interrupts_the_turn() {
    let mut app = app(100, 30);
    working(&mut app);
    bash_dialog(&mut app, "b1");
    bash_dialog(&mut app, "b2");
    let effects = press(&mut app, ctrl('c'), Instant::now());
    assert_eq!(
        effects,
        vec![
            Effect::Op(Op::PermissionAnswer {
                call_id: "b1".into(),
                answer: PermissionAnswer::Deny { feedback: None }
            }),
            Effect::Op(Op::Interrupt),
        ]
    );
    assert!(app.dialogs.is_empty(), "no dialog is left for a turn that is being stopped");
}

#[test]
fn ctrl_z_suspends_from_a_dialog_and_keys_after_it_still_answer_the_dialog() {
    let mut app = app(100, 30);
    working(&mut app);
    bash_dialog(&mut app, "b1");
    assert_eq!(press(&mut app, ctrl('z'), Instant::now()), vec![Effect::Suspend]);
    assert_eq!(app.dialogs.len(), 1, "the dialog waits for the user's return");
    // Back from the suspend: a resize, then the answer.
    app.update(Input::Resize(80, 24), Instant::now());
    let effects = press(&mut app, key(KeyCode::Char('y')), Instant::now());
    assert_eq!(
        effects,
        vec![Effect::Op(Op::PermissionAnswer { call_id: "b1".into(), answer: PermissionAnswer::AllowOnce })]
    );
}

#[test]
fn ctrl_z_and_ctrl_l_work_in_help_and_scroll_mode() {
    let mut app = app(80, 24);
    app.submit("/help".into(), Instant::now());
    assert_eq!(press(&mut app, ctrl('z'), Instant::now()), vec![Effect::Suspend]);
    assert_eq!(press(&mut app, ctrl('l'), Instant::now()), vec![Effect::Redraw]);
    press(&mut app, key(KeyCode::Esc), Instant::now());
    press(&mut app, ctrl('s'), Instant::now());
    assert_eq!(press(&mut app, ctrl('l'), Instant::now()), vec![Effect::Redraw]);
}

#[test]
fn slash_mode_without_an_argument_shows_the_mode_and_changes_nothing() {
    let mut app = app(100, 24);
    assert!(app.submit("/mode".into(), Instant::now()).is_empty());
    assert_eq!(app.status.mode, PermissionMode::Default);
    let text = screen_at(&app, Instant::now());
    assert!(text.contains("Permission mode: default"), "{text}");
    assert_eq!(
        app.submit("/mode acceptEdits".into(), Instant::now()),
        vec![Effect::Op(Op::SetPermissionMode(PermissionMode::AcceptEdits))]
    );
    assert!(app.submit("/mode".into(), Instant::now()).is_empty());
    assert_eq!(app.status.mode, PermissionMode::AcceptEdits);
}

#[test]
fn ctrl_d_deletes_the_character_under_the_cursor_and_quits_only_on_an_empty_prompt() {
    let mut app = app(80, 20);
    type_text(&mut app, "abc");
    press(&mut app, key(KeyCode::Left), Instant::now());
    press(&mut app, key(KeyCode::Left), Instant::now());
    assert!(press(&mut app, ctrl('d'), Instant::now()).is_empty());
    assert_eq!(app.editor.text(), "ac");
    press(&mut app, ctrl('d'), Instant::now());
    assert_eq!(app.editor.text(), "a");
    assert!(press(&mut app, ctrl('d'), Instant::now()).is_empty(), "at the end of the text it deletes nothing");
    press(&mut app, key(KeyCode::Backspace), Instant::now());
    assert_eq!(press(&mut app, ctrl('d'), Instant::now()), vec![Effect::Quit]);
}

#[test]
fn status_messages_clear_by_themselves_and_at_the_next_turn() {
    let mut app = app(80, 20);
    working(&mut app);
    let now = Instant::now();
    press(&mut app, key(KeyCode::Esc), now);
    assert!(screen_at(&app, now).contains("interrupting…"));
    core(&mut app, finished(RunOutcome::ErrorDuringExecution, vec!["Interrupted by the user.".into()]));
    assert!(!screen_at(&app, now + Duration::from_secs(5)).contains("interrupting"), "gone after a few seconds");
    press(&mut app, key(KeyCode::Esc), now);
    type_text(&mut app, "again");
    press(&mut app, key(KeyCode::Enter), now);
    assert!(!screen_at(&app, now).contains("interrupting"), "gone at the next turn");
}

#[test]
fn the_retry_message_clears_when_the_retried_stream_delivers() {
    let mut app = app(100, 20);
    working(&mut app);
    core(
        &mut app,
        Event::Retrying {
            attempt: 4,
            max_attempts: 10,
            delay_ms: 100,
            reason: "connection refused".into(),
            discarded_partial_output: false,
            status: None,
        },
    );
    assert!(app.status.retry.is_some());
    core(&mut app, Event::MessageStarted { item_id: "m".into() });
    core(&mut app, Event::MessageDelta { item_id: "m".into(), text: "Hi".into() });
    assert!(app.status.retry.is_none());
    assert!(!screen_at(&app, Instant::now()).contains("retrying ("));
}

#[test]
fn a_connection_that_keeps_failing_shows_one_updating_line() {
    let mut app = app(120, 20);
    working(&mut app);
    for attempt in 1..4 {
        core(
            &mut app,
            Event::Retrying {
                attempt,
                max_attempts: 10,
                delay_ms: 4000,
                reason: "connection refused at http://127.0.0.1:9".into(),
                discarded_partial_output: false,
                status: None,
            },
        );
    }
    let text = screen_at(&app, Instant::now());
    assert_eq!(text.matches("retrying in").count(), 1, "{text}");
    assert!(text.contains("retrying in 4 s, attempt 4/10 — connection refused at http://127.0.0.1:9"), "{text}");
}

#[test]
fn enter_while_working_queues_the_message_and_the_turn_end_sends_it() {
    let mut app = app(100, 24);
    working(&mut app);
    type_text(&mut app, "also update the docs");
    assert!(press(&mut app, key(KeyCode::Enter), Instant::now()).is_empty(), "nothing is sent yet");
    assert!(app.editor.is_empty());
    assert!(screen_at(&app, Instant::now()).contains("queued: also update the docs"));
    // Esc takes it back to edit; Enter queues it again.
    assert!(press(&mut app, key(KeyCode::Esc), Instant::now()).is_empty(), "esc does not interrupt yet");
    assert_eq!(app.editor.text(), "also update the docs");
    type_text(&mut app, " too");
    press(&mut app, key(KeyCode::Enter), Instant::now());
    assert_eq!(app.queued, vec!["also update the docs too".to_owned()]);
    let effects = core(&mut app, finished(RunOutcome::Success, vec![]));
    assert_eq!(effects, vec![Effect::Op(Op::UserTurn { text: "also update the docs too".into() })]);
    assert!(app.working && app.queued.is_empty());
    assert!(!screen_at(&app, Instant::now()).contains("queued:"));
}

/// Two finished Bash cards with long output, far apart, and a short answer after them.
fn two_cards(app: &mut App) {
    working(app);
    for id in ["first", "second"] {
        let input = json!({"command": format!("run {id}")});
        core(app, super::tests::tool_started(id, "Bash", input));
        let output: String = (1..=12).map(|n| format!("{id} output line {n}\n")).collect();
        core(
            app,
            Event::ToolCallFinished {
                call_id: id.into(),
                content: output,
                is_error: false,
                status: tandem_protocol::ToolCallStatus::Completed,
                duration_ms: Some(5),
                structured: None,
                view: None,
            },
        );
        if id == "first" {
            let between: String = (1..=20).map(|n| format!("- note {n}\n")).collect();
            super::tests::stream_text(app, 0, &between);
        }
    }
    core(app, finished(RunOutcome::Success, vec![]));
}

fn expanded(app: &App, id: &str) -> bool {
    app.transcript
        .cells()
        .iter()
        .any(|cell| cell.expanded && matches!(&cell.kind, super::cells::CellKind::Tool(card) if card.call_id == id))
}

#[test]
fn ctrl_o_expands_the_card_in_view_or_under_the_cursor_not_only_the_latest() {
    let mut app = app(80, 16);
    two_cards(&mut app);
    press(&mut app, ctrl('o'), Instant::now());
    assert!(expanded(&app, "second") && !expanded(&app, "first"), "at the bottom: the latest");
    press(&mut app, ctrl('o'), Instant::now());
    assert!(!expanded(&app, "second"));
    // Scrolled up to the first card, ctrl+o expands that one.
    app.update(key(KeyCode::Home), Instant::now());
    let text = screen_at(&app, Instant::now());
    assert!(text.contains("run first") && !text.contains("run second"), "{text}");
    press(&mut app, ctrl('o'), Instant::now());
    assert!(expanded(&app, "first") && !expanded(&app, "second"));
    // In scroll mode, the card under the cursor.
    app.update(key(KeyCode::End), Instant::now());
    press(&mut app, ctrl('s'), Instant::now());
    press(&mut app, key(KeyCode::Char('g')), Instant::now());
    for _ in 0..3 {
        press(&mut app, key(KeyCode::Char('j')), Instant::now());
    }
    press(&mut app, ctrl('o'), Instant::now());
    assert!(!expanded(&app, "first"), "the cursor is on the first card: it collapses");
}

/// Issue 27: the README's list of commands was kept by hand and had fallen behind (`/effort`, `/mcp`, `/rewind`,
/// `/inspect` missing). It lists exactly core's table.
#[test]
fn the_readme_lists_every_built_in_command() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md")).unwrap();
    let row = readme.lines().find(|line| line.starts_with("| `/help`")).expect("the README's row of commands");
    let keys = row.split(" | ").next().unwrap_or_default();
    let listed: Vec<&str> = keys.split('`').filter(|part| part.starts_with('/')).collect();
    let table: Vec<String> =
        tandem_core::commands::BUILTINS.iter().map(|builtin| format!("/{}", builtin.name)).collect();
    assert_eq!(listed, table, "README.md's row of commands against tandem_core::commands::BUILTINS");
}

/// The rows of the README's table whose header is `header`.
fn readme_table<'a>(readme: &'a str, header: &str) -> Vec<&'a str> {
    readme.lines().skip_while(|line| *line != header).skip(2).take_while(|line| line.starts_with('|')).collect()
}

/// The keys a README row names in backticks, lower-cased, one per word (`PgUp PgDn` is two).
fn backticked_keys(text: &str) -> Vec<String> {
    text.split('`').skip(1).step_by(2).flat_map(str::split_whitespace).map(str::to_lowercase).collect()
}

/// Issue 28: the README's key tables and the app's help are two lists; they name the same keys. Every key of the
/// help is in the README's tables, and every key of the README's "everywhere else" table is in the help.
#[test]
fn the_readme_and_the_help_name_the_same_keys() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md")).unwrap();
    let everywhere = readme_table(&readme, "| key | everywhere else |");
    let dialog = readme_table(&readme, "| key | in the permission dialog |");
    assert!(!everywhere.is_empty() && !dialog.is_empty(), "the README's key tables");
    let in_readme: Vec<String> = everywhere.iter().chain(&dialog).flat_map(|row| backticked_keys(row)).collect();
    let in_help: Vec<String> = super::keymap::KEYS
        .iter()
        .map(|row| row.keys)
        .filter(|keys| !matches!(*keys, "" | "click" | "dialog"))
        .flat_map(|keys| keys.split(['/', ' ']).filter(|key| !key.is_empty()).map(str::to_lowercase))
        .collect();
    for key in &in_help {
        assert!(in_readme.contains(key), "the help's {key} is not in the README's key tables");
    }
    for row in everywhere.iter().filter(|row| !row.starts_with("| `/")) {
        let first = row.split(" | ").next().unwrap_or_default();
        for key in backticked_keys(first) {
            assert!(in_help.contains(&key), "the README's {key} is not in the app's help");
        }
    }
}

/// Every built-in of core's table is one the app runs (none answers "Unknown command"), by its name or an alias.
#[test]
fn the_app_runs_every_built_in_command_and_its_aliases() {
    for builtin in tandem_core::commands::BUILTINS {
        for name in std::iter::once(&builtin.name).chain(builtin.aliases) {
            let mut app = app(80, 24);
            app.run_command(name, Instant::now());
            let unknown =
                app.transcript.cells().iter().any(
                    |cell| matches!(&cell.kind, CellKind::Notice { text, .. } if text.starts_with("Unknown command")),
                );
            assert!(!unknown, "/{name} is unknown to the app");
        }
    }
}

#[test]
fn help_lists_every_command_and_key_and_fits_in_80_columns() {
    let mut tall = app(80, 60);
    tall.submit("/help".into(), Instant::now());
    let text = screen_at(&tall, Instant::now());
    for command in crate::app::editor::SLASH_COMMANDS.iter() {
        let row = text.lines().find(|row| row.contains(&format!("{}  ", command.name))).unwrap_or_else(|| {
            panic!("{} is in the help:\n{text}", command.name);
        });
        assert!(row.trim_end().ends_with('│'), "{} is not cut off: {row:?}", command.name);
        assert!(row.contains(command.description.as_ref()), "{row:?}");
    }
    for key in ["ctrl+c", "ctrl+d", "ctrl+z", "ctrl+l", "ctrl+o", "ctrl+f", "ctrl+s", "shift+tab", "esc", "ctrl+r"] {
        assert!(text.contains(key), "{key} is in the help:\n{text}");
    }
    for row in text.lines().filter(|row| row.starts_with('│')) {
        assert!(row.trim_end().ends_with('│'), "every line fits: {row:?}");
    }
    // On a short screen it scrolls.
    let mut short = app(80, 24);
    short.submit("/help".into(), Instant::now());
    assert!(screen_at(&short, Instant::now()).contains("↑↓ scroll"));
    press(&mut short, key(KeyCode::PageDown), Instant::now());
    assert!(short.show_help && screen_at(&short, Instant::now()).contains("/model"));
    press(&mut short, key(KeyCode::End), Instant::now());
    assert!(short.show_help && screen_at(&short, Instant::now()).contains("/quit"));
    press(&mut short, key(KeyCode::Char('x')), Instant::now());
    assert!(!short.show_help);
}

#[test]
fn esc_closes_search_and_scroll_mode_without_interrupting_the_model() {
    let mut app = app(80, 20);
    working(&mut app);
    press(&mut app, ctrl('f'), Instant::now());
    type_text(&mut app, "x");
    press(&mut app, key(KeyCode::Enter), Instant::now());
    assert!(press(&mut app, key(KeyCode::Esc), Instant::now()).is_empty(), "no interrupt");
    assert!(app.transcript.search.is_none());
    press(&mut app, ctrl('s'), Instant::now());
    assert!(press(&mut app, key(KeyCode::Esc), Instant::now()).is_empty(), "no interrupt");
    assert_eq!(app.focus, super::Focus::Input);
    assert_eq!(press(&mut app, key(KeyCode::Esc), Instant::now()), vec![Effect::Op(Op::Interrupt)], "now it does");
}

#[test]
fn scrolled_up_the_view_holds_still_while_output_arrives_below() {
    let mut app = app(80, 16);
    working(&mut app);
    core(&mut app, Event::MessageStarted { item_id: "m".into() });
    let lines: String = (1..=40).map(|n| format!("line {n}\n\n")).collect();
    core(&mut app, Event::MessageDelta { item_id: "m".into(), text: lines });
    press(&mut app, key(KeyCode::PageUp), Instant::now());
    app.hold_scroll_position();
    let before = screen_at(&app, Instant::now());
    let more: String = (41..=60).map(|n| format!("line {n}\n\n")).collect();
    core(&mut app, Event::MessageDelta { item_id: "m".into(), text: more });
    app.hold_scroll_position();
    let after = screen_at(&app, Instant::now());
    let first_row = |text: &str| text.lines().find(|row| row.contains("line ")).map(str::to_owned);
    assert_eq!(first_row(&after), first_row(&before), "before:\n{before}\nafter:\n{after}");
    press(&mut app, key(KeyCode::End), Instant::now());
    app.hold_scroll_position();
    assert!(screen_at(&app, Instant::now()).contains("line 60"));
}

#[test]
fn help_and_the_rules_list_fit_a_50_column_screen() {
    let mut narrow = app(50, 40);
    narrow.submit("/help".into(), Instant::now());
    let text = screen_at(&narrow, Instant::now());
    for row in text.lines().filter(|row| row.starts_with('│')) {
        assert!(row.trim_end().ends_with('│'), "{row:?}");
    }
    assert!(text.contains("under the cursor"), "a long description wraps instead of being cut:\n{text}");
    press(&mut narrow, key(KeyCode::Char('x')), Instant::now());
    narrow.update(Input::Core(Box::new(Event::PermissionRules(Vec::new()).into())), Instant::now());
    let rules = screen_at(&narrow, Instant::now());
    assert!(rules.contains("settings.json") && rules.contains("close"), "wrapped, not cut:\n{rules}");
}

#[test]
fn a_restored_conversation_leaves_out_what_tandem_added_to_user_messages() {
    use tandem_protocol::conversation::{ContentBlock, Message, Role};
    let mut app = app(100, 30);
    let user = |text: String| Message { role: Role::User, content: vec![ContentBlock::text(text)] };
    let summary = format!("{}\n<summary>the task</summary>", tandem_core::context::compact::SUMMARY_PREAMBLE);
    let interrupted = format!("{}\n\nnext step please", tandem_core::agent::INTERRUPTED_NOTE);
    app.restore_conversation(&[user(summary), user(interrupted)]);
    let text = screen_at(&app, Instant::now());
    assert!(text.contains("> next step please"), "{text}");
    assert!(!text.contains("interrupted the previous") && !text.contains("<summary>"), "{text}");
    assert!(text.contains("compacted"), "{text}");
    // The marker opens to the summary the model continues from.
    assert!(!text.contains("the task"), "{text}");
    press(&mut app, ctrl('o'), Instant::now());
    let opened = screen_at(&app, Instant::now());
    assert!(opened.contains("the task"), "{opened}");
}

/// Issue 28: the compaction marker said how much was summarized, not what the context became, and the summary
/// could not be opened. It now says before → after and opens (Ctrl+O) to the summary.
#[test]
fn a_compaction_marker_says_before_and_after_and_opens_to_the_summary() {
    let mut app = app(100, 30);
    let boundary = Event::CompactBoundary {
        trigger: tandem_core::session::CompactTrigger::Manual,
        pre_tokens: 13_600,
        post_tokens: 4_100,
        summary: "## Task\n\nKeep the **pelican** safe.".into(),
    };
    app.update(Input::Core(Box::new(boundary.into())), Instant::now());
    let text = screen_at(&app, Instant::now());
    assert!(
        text.contains("── conversation compacted on request: 13.6k → 4.1k tokens · ctrl+o shows the summary"),
        "{text}"
    );
    assert!(!text.contains("pelican"), "{text}");
    press(&mut app, ctrl('o'), Instant::now());
    let opened = screen_at(&app, Instant::now());
    assert!(
        opened.contains("the model continues from this summary:") && opened.contains("Keep the pelican safe."),
        "{opened}"
    );
    assert!(!opened.contains("**"), "the summary is Markdown: {opened}");
}

#[test]
fn ctrl_f_over_a_dialog_searches_and_its_letters_never_answer_the_dialog() {
    let mut app = app(100, 30);
    working(&mut app);
    bash_dialog(&mut app, "b1");
    press(&mut app, ctrl('f'), Instant::now());
    let mut effects = Vec::new();
    for c in "run".chars() {
        effects.extend(press(&mut app, key(KeyCode::Char(c)), Instant::now()));
    }
    effects.extend(press(&mut app, key(KeyCode::Enter), Instant::now()));
    effects.extend(press(&mut app, key(KeyCode::Char('n')), Instant::now()));
    assert!(effects.is_empty(), "nothing answered: {effects:?}");
    assert_eq!(app.dialogs.len(), 1);
    assert!(screen_at(&app, Instant::now()).contains("search: run"));
    press(&mut app, key(KeyCode::Esc), Instant::now());
    assert!(app.transcript.search.is_none() && app.focus == super::Focus::Input);
    assert_eq!(
        press(&mut app, key(KeyCode::Char('y')), Instant::now()),
        vec![Effect::Op(Op::PermissionAnswer { call_id: "b1".into(), answer: PermissionAnswer::AllowOnce })]
    );
}

#[test]
fn in_scroll_mode_the_view_holds_still_even_from_the_bottom() {
    let mut app = app(80, 16);
    working(&mut app);
    core(&mut app, Event::MessageStarted { item_id: "m".into() });
    let lines: String = (1..=40).map(|n| format!("line {n}\n\n")).collect();
    core(&mut app, Event::MessageDelta { item_id: "m".into(), text: lines });
    press(&mut app, ctrl('s'), Instant::now());
    press(&mut app, key(KeyCode::Char('k')), Instant::now());
    app.hold_scroll_position();
    let before = screen_at(&app, Instant::now());
    let more: String = (41..=60).map(|n| format!("line {n}\n\n")).collect();
    core(&mut app, Event::MessageDelta { item_id: "m".into(), text: more });
    app.hold_scroll_position();
    let after = screen_at(&app, Instant::now());
    let first_row = |text: &str| text.lines().find(|row| row.contains("line ")).map(str::to_owned);
    assert_eq!(first_row(&after), first_row(&before), "before:\n{before}\nafter:\n{after}");
}
