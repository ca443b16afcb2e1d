//! The permission dialog in the whole screen: between the conversation and the input, with the model's last
//! words and the card it asks about still in view, the conversation scrollable behind it, and the turn's clock
//! stopped while it waits.

use std::time::{Duration, Instant};

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::json;
use tandem_core::tools::{Preview, Risk};
use tandem_protocol::Event;

use super::tests::{app, core, key, screen, stream_text, type_text};
use super::{App, Input};

const LAST_WORDS: &str = "The tests pass, so I will deploy now.";

/// A long answer, then a Bash call that asks.
fn asking(width: u16, height: u16) -> App {
    let mut app = app(width, height);
    type_text(&mut app, "Fix the build and deploy it");
    app.update(key(KeyCode::Enter), Instant::now());
    core(&mut app, Event::RequestStarted { round: 1 });
    let earlier: String = (1..=30).map(|n| format!("- step {n} of the fix\n")).collect();
    stream_text(&mut app, 0, &format!("{earlier}\n{LAST_WORDS}\n"));
    let input = json!({"command": "make deploy ENV=staging", "description": "Deploy the fixed build to staging"});
    core(&mut app, super::tests::tool_started("b1", "Bash", input.clone()));
    core(
        &mut app,
        Event::PermissionRequested {
            call_id: "b1".into(),
            tool: "Bash".into(),
            risk: Risk::High,
            input: input.into(),
            preview: Some(Preview::Command { command: "make deploy ENV=staging".into(), cwd: "/work/project".into() }),
            suggested_rule: "Bash(make deploy:*)".into(),
            reason: None,
            agent: None,
        },
    );
    app
}

#[test]
fn the_dialog_sits_below_the_conversation_with_the_models_last_words_in_view() {
    for (width, height) in [(120, 40), (80, 24), (50, 20)] {
        let app = asking(width, height);
        let text = screen(&app);
        let rows: Vec<&str> = text.lines().collect();
        let dialog_top = rows.iter().position(|row| row.contains("Allow Bash?")).expect("the dialog");
        let words = rows.iter().position(|row| row.contains("deploy now")).unwrap_or_else(|| {
            panic!("the model's last sentence is on screen at {width}x{height}:\n{text}");
        });
        let card = rows.iter().position(|row| row.contains("Bash") && !row.contains("Allow")).expect("the card");
        assert!(words < dialog_top && card < dialog_top, "above the dialog at {width}x{height}:\n{text}");
        assert!(rows[dialog_top].starts_with('┌'), "the dialog spans the screen, nothing shows at its edges:\n{text}");
        assert!(text.contains("Deploy the fixed build to staging"), "the command's description:\n{text}");
        let input_rule = rows.iter().rposition(|row| row.starts_with("────")).expect("the input's rule");
        assert!(input_rule > dialog_top, "the input stays below the dialog:\n{text}");
        insta::assert_snapshot!(format!("dialog_in_screen_{width}x{height}"), text);
    }
}

#[test]
fn the_conversation_scrolls_behind_an_open_dialog() {
    let mut app = asking(80, 24);
    let shift = |code| Input::Key(KeyEvent::new(code, KeyModifiers::SHIFT));
    app.update(shift(KeyCode::PageUp), Instant::now());
    assert!(app.transcript.scroll_from_bottom > 0, "shift+pgup scrolls the conversation");
    assert_eq!(app.dialogs.len(), 1, "and does not answer the dialog");
    assert!(screen(&app).contains("scroll the conversation"), "the dialog says how");
    app.update(shift(KeyCode::PageDown), Instant::now());
    assert_eq!(app.transcript.scroll_from_bottom, 0);
}

#[test]
fn the_turns_clock_stops_while_the_dialog_waits() {
    let mut app = asking(80, 24);
    assert!(!app.is_animating(), "nothing moves while the app waits for the user");
    let asked = app.status.waiting_since.expect("waiting");
    let started = app.status.working_since.expect("working");
    let later = asked + Duration::from_secs(30);
    app.update(key(KeyCode::Char('y')), later);
    assert!(app.status.waiting_since.is_none());
    let resumed = app.status.working_since.expect("still working");
    assert_eq!(resumed, started + Duration::from_secs(30), "the 30 s spent deciding are not counted");
    assert!(app.is_animating());
}

/// Issue 28: at 80×24 the dialog of an Edit showed three context lines and no change, while the conversation and
/// the checklist kept their rows. The conversation, the checklist and the key help (one line, `?` for the rest)
/// yield to the diff: at every size down to 60×20 at least half of the screen's rows are rows of the diff (its
/// lines and hunk headers).
/// An Edit of a 60-line module asking, with a checklist showing.
fn editing(width: u16, height: u16) -> App {
    let old: String = (1..=60).map(|n| format!("line {n} of the module\n")).collect();
    let new = old.replace("line 20 of the module\n", "").replace("line 30 of", "the thirtieth line of");
    let new: String = new
        .lines()
        .map(|line| if line.starts_with("line 2") { format!("{line} // changed\n") } else { format!("{line}\n") })
        .collect();
    let mut app = app(width, height);
    core(&mut app, Event::RequestStarted { round: 1 });
    core(
        &mut app,
        Event::Todos(vec![tandem_protocol::tools::TodoItem {
            content: "Change the module".into(),
            status: tandem_protocol::tools::TodoStatus::InProgress,
            active_form: "Changing the module".into(),
        }]),
    );
    let diff = tandem_core::diff::unified_diff("src/module.rs", &old, &new, 3);
    let preview = Preview::Diff {
        path: "/work/project/src/module.rs".into(),
        diff,
        new_file: false,
        texts: Some(tandem_core::tools::DiffTexts { old: Some(old.clone()), new: new.clone() }),
    };
    let input = json!({"file_path": "/work/project/src/module.rs", "old_string": "…", "new_string": "…"});
    core(&mut app, super::tests::tool_started("e1", "Edit", input.clone()));
    core(
        &mut app,
        Event::PermissionRequested {
            call_id: "e1".into(),
            tool: "Edit".into(),
            risk: Risk::Medium,
            input: input.into(),
            preview: Some(preview),
            suggested_rule: "Edit".into(),
            reason: None,
            agent: None,
        },
    );
    app
}

#[test]
fn the_diff_gets_half_the_screen_at_every_size() {
    for (width, height) in [(120, 40), (80, 24), (60, 20)] {
        let shown = screen(&editing(width, height));
        let diff_rows = shown
            .lines()
            .filter(|row| {
                row.strip_prefix('│').is_some_and(|rest| {
                    let rest = rest.trim_start();
                    rest.starts_with(|c: char| c.is_ascii_digit()) || rest.contains("@@ -")
                })
            })
            .count();
        assert!(diff_rows * 2 >= usize::from(height), "{width}×{height}: {diff_rows} rows of diff\n{shown}");
    }
}

/// The key help of a dialog is one line where more would take the diff's rows; `?` shows every key and hides
/// them again. A dialog with room lists every key.
#[test]
fn question_mark_shows_every_key_of_the_dialog() {
    let roomy = screen(&asking(120, 40));
    assert!(roomy.contains("scroll the conversation") && !roomy.contains("more keys"), "{roomy}");
    let mut app = editing(60, 20);
    let short = screen(&app);
    assert!(short.contains("? more keys"), "one line and a way to the rest:\n{short}");
    assert!(!short.contains("Tab hunk"), "the rest wait for ?:\n{short}");
    app.update(key(KeyCode::Char('?')), Instant::now());
    let all = screen(&app);
    assert!(all.contains("? fewer keys"), "every key, and the way back:\n{all}");
    assert_eq!(app.dialogs.len(), 1, "? answers nothing");
    app.update(key(KeyCode::Char('?')), Instant::now());
    assert_eq!(screen(&app), short);
}

/// The three sizes every dialog is drawn at: a roomy terminal, the classic one, and the smallest we support.
const SIZES: [(u16, u16); 3] = [(120, 40), (80, 24), (60, 20)];

/// A call of `tool` asking with `preview`, after a prompt and a few words from the model.
fn dialog_of(width: u16, height: u16, tool: &str, input: serde_json::Value, preview: Preview) -> App {
    let mut app = app(width, height);
    type_text(&mut app, "Tidy up the module");
    app.update(key(KeyCode::Enter), Instant::now());
    core(&mut app, Event::RequestStarted { round: 1 });
    stream_text(&mut app, 0, "Here is what I will do next.\n");
    core(&mut app, super::tests::tool_started("c1", tool, input.clone()));
    core(
        &mut app,
        Event::PermissionRequested {
            call_id: "c1".into(),
            tool: tool.into(),
            risk: Risk::Medium,
            input: input.into(),
            preview: Some(preview),
            suggested_rule: tool.into(),
            reason: None,
            agent: None,
        },
    );
    app
}

fn write_of(old: Option<&str>, new: &str, width: u16, height: u16) -> App {
    let path = "/work/project/src/report.py";
    let diff = tandem_core::diff::unified_diff("src/report.py", old.unwrap_or(""), new, 3);
    let preview = Preview::Diff {
        path: path.into(),
        diff,
        new_file: old.is_none(),
        texts: Some(tandem_core::tools::DiffTexts { old: old.map(str::to_owned), new: new.to_owned() }),
    };
    dialog_of(width, height, "Write", json!({"file_path": path, "content": new}), preview)
}

fn report(lines: usize) -> String {
    (1..=lines).map(|n| format!("def step_{n}(total):\n    return total + {n}\n")).collect()
}

#[test]
fn every_kind_of_dialog_at_every_size() {
    let old = report(30);
    let rewritten = old.replace("total + 3\n", "total * 3\n").replace("step_25(total)", "step_25(total, rate)");
    let plan = "## Plan\n\n1. Read `src/report.py` and list the steps.\n2. Replace the additions by a table.\n\
                3. Run `pytest -q` and fix what fails.\n\n| step | file | risk |\n|---|---|---|\n| 1 | src/report.py | none |\n\
                | 2 | src/report.py | medium: the totals change |\n| 3 | tests/ | none |\n";
    let questions = json!([
        {"question": "Which database should the report read from?", "header": "Database", "multiSelect": false,
         "options": [{"label": "Postgres", "description": "The production replica, read-only"},
                     {"label": "SQLite", "description": "The local fixture in tests/data"}]},
        {"question": "Which formats should it write?", "header": "Formats", "multiSelect": true,
         "options": [{"label": "CSV", "description": "One row per step"},
                     {"label": "JSON", "description": "Nested by file"},
                     {"label": "HTML", "description": "A page with the table"}]}
    ]);
    for (width, height) in SIZES {
        let dialogs = [
            ("edit", editing(width, height)),
            ("write_two_hunks", write_of(Some(&old), &rewritten, width, height)),
            ("write_new_file", write_of(None, &report(12), width, height)),
            ("bash", asking(width, height)),
            (
                "plan",
                dialog_of(width, height, "ExitPlanMode", json!({"plan": plan}), Preview::Plan { plan: plan.into() }),
            ),
            (
                "questions",
                dialog_of(
                    width,
                    height,
                    "AskUserQuestion",
                    json!({"questions": questions}),
                    Preview::Questions { questions: serde_json::from_value(questions.clone()).unwrap() },
                ),
            ),
        ];
        for (name, app) in dialogs {
            insta::assert_snapshot!(format!("{name}_dialog_{width}x{height}"), screen(&app));
        }
    }
}
