//! End to end: the demo a new user gets without any key or server — `tandem --demo`, or `d` on the welcome
//! screen — runs the scripted session through the real app: a streamed answer, tool cards, the edit dialog with
//! per-hunk review, the command dialog, and the way to connect a real provider; "DEMO" is on every screen.

// Test code: a panic is how a failure is reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use tandem_e2e::Workspace;
use tandem_e2e::app::status_line;
use tandem_e2e::pty::{Pty, framed, keys, tandem_command};

fn walk_through_the_demo(pty: &Pty) {
    let edit = pty.expect_text("Allow Edit?");
    assert!(edit.contains("hunk 1/2"), "a per-hunk review:\n{}", framed(&edit));
    assert!(status_line(&edit).contains("DEMO"), "{}", framed(&edit));
    // Reject the comment's hunk, keep the fix.
    pty.send(" ");
    pty.send(keys::ENTER);
    let command = pty.expect_text("Allow Bash?");
    assert!(command.contains("$ sh test.sh") && command.contains("Run the project's tests"), "{}", framed(&command));
    assert!(status_line(&command).contains("DEMO"));
    pty.send("y");
    let end = pty.expect_text("To use tandem with a real model");
    assert!(end.contains("all tests passed"), "the fix made the tests pass:\n{}", framed(&end));
    assert!(status_line(&end).contains("DEMO"));
}

#[test]
fn tandem_demo_runs_the_scripted_session_without_a_key() {
    let workspace = Workspace::new();
    let pty = Pty::spawn(
        {
            let mut command = tandem_command(&workspace);
            command.arg("--demo");
            command
        },
        40,
        120,
    );
    walk_through_the_demo(&pty);
    assert!(!workspace.path().join("greet.sh").exists(), "the demo works on a scratch copy, not in the directory");
}

#[test]
fn d_on_the_welcome_screen_starts_the_demo() {
    let workspace = Workspace::new();
    let pty = Pty::spawn(tandem_command(&workspace), 24, 80);
    pty.expect_text("try the demo");
    pty.send("d");
    walk_through_the_demo(&pty);
}
