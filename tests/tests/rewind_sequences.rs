//! `/rewind` and `/inspect` in sequences, not only from a fresh start: right after a permission dialog, after an
//! interrupt, across a resize to 80×24 and across a suspend (Ctrl+Z, then `fg`).

// Test code: a panic is how a failure is reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use serde_json::json;
use tandem_e2e::app::{IDLE, expect_idle_with, scenario, start, submit, suspend_and_continue};
use tandem_e2e::pty::{Pty, keys};
use tandem_e2e::{FakeServer, Workspace};

fn double_esc(pty: &Pty) {
    pty.send(keys::ESC);
    std::thread::sleep(Duration::from_millis(100));
    pty.send(keys::ESC);
}

#[test]
fn rewind_and_inspect_after_a_dialog_an_interrupt_a_resize_and_a_suspend() {
    let workspace = Workspace::new();
    let slow =
        json!({"blocks": [{"type": "text", "text": "A long story. ".repeat(60), "chunks": 60}], "delay_ms": 100});
    let server = FakeServer::spawn(scenario(json!({"replies": [
        {"blocks": [{"type": "tool_use", "id": "w1", "name": "Write",
                     "input": {"file_path": "plan.txt", "content": "step one\n"}}]},
        {"blocks": [{"type": "text", "text": "Plan written."}]},
        slow,
        {"blocks": [{"type": "text", "text": "Short answer."}]},
    ]})))
    .unwrap();
    let mut pty = start(&workspace, &server, 40, 120, &[]);

    // A key right after a permission dialog: the dialog's answer is not taken as the first Esc of a pair, and
    // Esc Esc on the empty prompt then opens the list.
    submit(&pty, "write the plan");
    pty.expect_text("Allow Write?");
    pty.send("y");
    expect_idle_with(&pty, "Plan written.");
    assert_eq!(workspace.read("plan.txt"), "step one\n");
    double_esc(&pty);
    pty.expect_text("Rewind to just before a prompt");
    pty.send(keys::ESC);
    pty.expect("the list closed", |screen| !screen.contains("Rewind to just before a prompt") && screen.contains(IDLE));

    // An interrupt: the Esc that stops the reply does not count towards Esc Esc; /inspect then lists the
    // interrupted request.
    submit(&pty, "tell me a story");
    pty.expect_text("A long story.");
    pty.send(keys::ESC);
    let screen = pty.expect("the interrupt", |screen| screen.contains(IDLE) && screen.contains("nterrupted"));
    assert!(!screen.contains("Rewind to just before a prompt"), "{screen}");
    submit(&pty, "/inspect");
    let screen = pty.expect_text("API inspector · 3 requests");
    let interrupted = screen.lines().find(|line| line.contains("   3    2 turn")).expect("the interrupted request");
    assert!(interrupted.contains("stop"), "listed as stopped: {screen}");
    assert!(!interrupted.contains("     0        0       0"), "the input it was billed for is counted: {screen}");

    // A suspend with the inspector open: it is still there after `fg`, and its keys work.
    suspend_and_continue(&pty);
    pty.expect("the inspector back after fg", |screen| screen.contains("API inspector · 3 requests"));
    pty.send(keys::ENTER);
    pty.expect_text("POST ");
    // The response's events fold and unfold after the suspend too.
    pty.send(keys::TAB);
    pty.expect_text("f lay events out");
    pty.send("f");
    pty.expect_text("f one line an event");
    pty.send(keys::ESC);
    pty.expect("back at the list", |screen| screen.contains("enter open"));
    pty.send(keys::ESC);
    pty.expect("the inspector closed", |screen| !screen.contains("API inspector") && screen.contains(IDLE));

    // A resize to 80×24 with the rewind preview open: it is drawn again at the new size, and going back works.
    submit(&pty, "/rewind");
    pty.expect_text("Rewind to just before a prompt");
    pty.send(keys::DOWN);
    pty.send(keys::ENTER);
    pty.expect_text("1 of 1 hunks go back");
    pty.resize(24, 80);
    let screen = pty.expect("the preview at 80×24", |screen| {
        screen.lines().all(|line| line.chars().count() <= 80) && screen.contains("1-3 go back")
    });
    assert!(screen.contains(": write the plan") && screen.contains("Before prompt"), "{screen}");
    pty.send("3");
    pty.expect_text("Removed (created since): plan.txt");
    assert!(!workspace.path().join("plan.txt").exists(), "the file the first prompt created is gone");

    // And the session goes on.
    submit(&pty, "short please");
    expect_idle_with(&pty, "Short answer.");

    // A conversation rewind to the interrupted prompt: it and the prompt after it can then only have their
    // files go back, and the conversation choices are refused for them.
    submit(&pty, "/rewind");
    pty.expect_text("Rewind to just before a prompt");
    pty.send(keys::DOWN);
    pty.send(keys::ENTER);
    pty.expect_text("Before prompt 2: tell me a story");
    pty.send("2");
    pty.expect_text("Rewound the conversation to just before this prompt");
    pty.send(keys::CTRL_U);
    double_esc(&pty);
    let list = pty.expect_text("(files only) short please");
    assert!(list.contains("(files only) tell me a story") && !list.contains("(files only) write the plan"), "{list}");
    pty.send(keys::HOME);
    pty.send(keys::ENTER);
    pty.expect_text("(not in the conversation any more)");
    pty.send("1");
    pty.expect_text("only its files can go back");
    pty.send(keys::ESC);
    pty.expect_text("enter preview");
    pty.send(keys::ESC);
    pty.expect("the list closed", |screen| !screen.contains("Rewind to just before a prompt"));
    pty.send(keys::CTRL_C);
    pty.send(keys::CTRL_C);
    assert!(pty.wait_exit(Duration::from_secs(10)).is_some(), "the app quits");
}
