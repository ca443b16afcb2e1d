//! End to end: keys in every state of the real full-screen app — after a dialog, an interrupt, a resize and a
//! suspend — and the screen while an answer streams slowly or a dialog waits. Each test types into a
//! pseudo-terminal and reads the screen back; nothing relies on timing except the Ctrl+C window, which is the
//! behaviour under test.

// Test code: a panic is how a failure is reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use serde_json::json;
use tandem_e2e::app::{IDLE, expect_idle_with, input_line, scenario, start, status_line, submit, suspend_and_continue};
use tandem_e2e::pty::{Pty, framed, keys};
use tandem_e2e::{FakeServer, Workspace};

/// A reply that runs a Bash command needing approval, then a closing answer.
fn asks_for_a_command(before: &str, after: &str) -> serde_json::Value {
    json!({"replies": [
        {"blocks": [
            {"type": "text", "text": before, "chunks": 2},
            {"type": "tool_use", "id": "toolu_cmd", "name": "Bash",
             "input": {"command": "touch made-by-the-command", "description": "Create the marker file"}}
        ]},
        {"blocks": [{"type": "text", "text": after}]}
    ]})
}

fn wait_gone(pty: &Pty, text: &str, within: Duration) -> String {
    pty.wait_for(|screen| !screen.contains(text), within)
        .unwrap_or_else(|screen| panic!("{text:?} is still on screen:\n{}", framed(&screen)))
}

#[test]
fn the_ctrl_c_hint_disappears_when_its_window_closes_and_then_one_press_does_not_quit() {
    let workspace = Workspace::new();
    let server = FakeServer::spawn(scenario(json!({"replies": []}))).unwrap();
    let mut pty = start(&workspace, &server, 24, 80, &[]);
    pty.send(keys::CTRL_C);
    pty.expect_text("ctrl+c again to quit");
    // No key is pressed: the app must take the hint away by itself when the window closes.
    wait_gone(&pty, "ctrl+c again", Duration::from_secs(5));
    pty.send(keys::CTRL_C);
    pty.expect_text("ctrl+c again to quit");
    assert!(pty.wait_exit(Duration::from_millis(300)).is_none(), "one press after the window does not quit");
    pty.send(keys::CTRL_C);
    assert!(pty.wait_exit(Duration::from_secs(10)).is_some(), "a second press inside the window quits");
}

#[test]
fn ctrl_z_suspends_from_an_open_dialog_and_the_dialog_is_still_there_afterwards() {
    let workspace = Workspace::new();
    let server =
        FakeServer::spawn(scenario(asks_for_a_command("I will create the marker file.", "The marker is there.")))
            .unwrap();
    let pty = start(&workspace, &server, 40, 120, &[]);
    submit(&pty, "Make the marker");
    pty.expect_text("Allow Bash?");
    let printed = suspend_and_continue(&pty);
    assert!(printed.contains("tandem is suspended"), "{printed:?}");
    let back = pty.expect("the dialog after coming back", |screen| screen.contains("Allow Bash?"));
    assert!(!workspace.path().join("made-by-the-command").exists(), "nothing ran:\n{}", framed(&back));
    // `fg` was typed in the shell; what the user types now answers the dialog as usual.
    pty.send("y");
    expect_idle_with(&pty, "The marker is there.");
    assert!(workspace.path().join("made-by-the-command").exists());
}

#[test]
fn slash_mode_shows_the_mode_and_changes_nothing_until_named() {
    let workspace = Workspace::new();
    let server = FakeServer::spawn(scenario(json!({"replies": []}))).unwrap();
    let pty = start(&workspace, &server, 24, 100, &[]);
    submit(&pty, "/mode");
    let screen = pty.expect_text("Permission mode: default");
    assert!(!status_line(&screen).contains("accept edits"), "{}", framed(&screen));
    submit(&pty, "/mode acceptEdits");
    pty.expect("accept edits in the status line", |screen| status_line(screen).contains("accept edits"));
}

#[test]
fn a_slowly_streamed_paragraph_shows_its_first_words_before_its_line_ends() {
    let workspace = Workspace::new();
    let paragraph = "Streaming words arrive one by one and the reader sees each of them at once, long before this \
                     sentence, which has no newline anywhere, reaches its final word: omega.";
    let server = FakeServer::spawn(scenario(json!({"replies": [
        {"blocks": [{"type": "text", "text": paragraph, "chunks": 40}], "delay_ms": 60}
    ]})))
    .unwrap();
    let pty = start(&workspace, &server, 24, 80, &[]);
    submit(&pty, "Stream slowly");
    let early =
        pty.expect("the first words while the line is still open", |screen| screen.contains("Streaming words arrive"));
    assert!(!early.contains("omega"), "seen before the paragraph ended:\n{}", framed(&early));
    expect_idle_with(&pty, "omega.");
}

#[test]
fn while_a_dialog_is_open_the_models_last_sentence_stays_on_screen() {
    for (rows, cols) in [(40, 120), (24, 80)] {
        let workspace = Workspace::new();
        let earlier: String = (1..=40).map(|n| format!("- finding {n}\n")).collect();
        let before = format!("{earlier}\nSo the last thing to do is to create the marker.");
        let server = FakeServer::spawn(scenario(asks_for_a_command(&before, "Done."))).unwrap();
        let pty = start(&workspace, &server, rows, cols, &[]);
        submit(&pty, "Go");
        let screen = pty.expect_text("Allow Bash?");
        let rows_text: Vec<&str> = screen.lines().collect();
        let dialog = rows_text.iter().position(|row| row.contains("Allow Bash?")).unwrap();
        let sentence = rows_text.iter().position(|row| row.contains("create the marker"));
        assert!(sentence.is_some_and(|at| at < dialog), "at {cols}x{rows}:\n{}", framed(&screen));
        assert!(screen.contains("Create the marker file"), "the description:\n{}", framed(&screen));
        // Shift+PgUp scrolls the conversation without answering.
        pty.send(keys::SHIFT_PAGE_UP);
        pty.expect("an earlier page behind the dialog", |screen| {
            screen.contains("Allow Bash?") && !screen.contains("create the marker")
        });
        pty.send("n");
        expect_idle_with(&pty, "You declined, so the turn stopped");
    }
}

#[test]
fn keys_keep_working_after_a_dialog_an_interrupt_a_resize_and_a_suspend() {
    let workspace = Workspace::new();
    let server = FakeServer::spawn(scenario(json!({"replies": [
        {"blocks": [
            {"type": "tool_use", "id": "toolu_cmd", "name": "Bash", "input": {"command": "touch marker"}}
        ]},
        {"blocks": [{"type": "text", "text": "First done."}]},
        {"blocks": [{"type": "text", "text": "a very slow answer that will be interrupted\n", "chunks": 40}],
         "delay_ms": 200},
        {"blocks": [{"type": "text", "text": "Third done."}]}
    ]})))
    .unwrap();
    let pty = start(&workspace, &server, 30, 100, &[]);
    // After a dialog: Ctrl+C and Ctrl+L behave as documented.
    submit(&pty, "first");
    pty.expect_text("Allow Bash?");
    pty.send("y");
    expect_idle_with(&pty, "First done.");
    pty.send(keys::CTRL_L);
    pty.send(keys::CTRL_C);
    pty.expect_text("ctrl+c again to quit");
    wait_gone(&pty, "ctrl+c again", Duration::from_secs(5));
    // Interrupted with Ctrl+C (as Esc does) while the model works, the app is usable and the hint goes away.
    submit(&pty, "second");
    pty.expect_text("a very");
    pty.send(keys::CTRL_C);
    pty.expect_text("Interrupted");
    let screen = wait_gone(&pty, "ctrl+c again", Duration::from_secs(5));
    assert!(!screen.contains("interrupting"), "{}", framed(&screen));
    // After a resize, Shift+Tab still cycles the mode.
    pty.resize(24, 80);
    pty.send(keys::SHIFT_TAB);
    pty.expect("accept edits after a resize", |screen| status_line(screen).contains("accept edits"));
    // After a suspend, typing and Enter still send.
    suspend_and_continue(&pty);
    pty.expect("back from the suspend", |screen| screen.contains(IDLE));
    pty.send("third");
    pty.expect("the prompt typed after the suspend", |screen| input_line(screen) == "> third");
    pty.send(keys::ENTER);
    expect_idle_with(&pty, "Third done.");
}
