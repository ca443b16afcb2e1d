//! End to end in the app: three prompts edit and write files; `/rewind` puts the conversation and the files
//! back to just before the second (byte for byte, CRLF and mode kept), the model hears of it, and after a
//! restart (`--continue`) the files go back further while a file changed by hand is left as it is.

// Test code: a panic is how a failure is reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use serde_json::json;
use tandem_e2e::app::{IDLE, expect_idle_with, scenario, start, submit};
use tandem_e2e::pty::{Pty, keys};
use tandem_e2e::{FakeServer, Workspace};

fn quit(mut pty: Pty) {
    pty.send(keys::CTRL_C);
    pty.send(keys::CTRL_C);
    assert!(pty.wait_exit(Duration::from_secs(10)).is_some(), "the app quits");
}

#[cfg(unix)]
#[test]
fn rewind_restores_conversation_and_files_and_works_after_a_restart() {
    use std::os::unix::fs::PermissionsExt;
    let workspace = Workspace::new();
    let notes = workspace.write("notes.txt", "one\r\n");
    std::fs::set_permissions(&notes, std::fs::Permissions::from_mode(0o755)).unwrap();
    let log = workspace.write("log.txt", "log\n");
    let gone = workspace.write("gone.txt", "still here\n");
    let edit = |id: &str, old: &str, new: &str| {
        json!({"blocks": [{"type": "tool_use", "id": id, "name": "Edit",
                           "input": {"file_path": "notes.txt", "old_string": old, "new_string": new}}]})
    };
    let text = |text: &str| json!({"blocks": [{"type": "text", "text": text}]});
    let server = FakeServer::spawn(scenario(json!({"replies": [
        {"blocks": [{"type": "tool_use", "id": "r1", "name": "Read", "input": {"file_path": "notes.txt"}}]},
        edit("e1", "one", "two"),
        text("First done."),
        {"blocks": [{"type": "tool_use", "id": "w1", "name": "Write", "input": {"file_path": "new.txt", "content": "x\n"}}]},
        text("Second done."),
        edit("e2", "two", "three"),
        {"blocks": [{"type": "tool_use", "id": "b1", "name": "Bash",
                     "input": {"command": "printf 'by a command\\r\\n' > log.txt && rm gone.txt"}}]},
        text("Third done."),
        text("Again, after the rewind."),
    ]})))
    .unwrap();
    let pty = start(&workspace, &server, 30, 100, &["--permission-mode", "acceptEdits", "--allowedTools", "Bash"]);
    submit(&pty, "first change");
    expect_idle_with(&pty, "First done.");
    submit(&pty, "second change");
    expect_idle_with(&pty, "Second done.");
    submit(&pty, "third change");
    expect_idle_with(&pty, "Third done.");
    assert_eq!(std::fs::read(&notes).unwrap(), b"three\r\n");
    assert_eq!(std::fs::read(&log).unwrap(), b"by a command\r\n");
    assert!(!gone.exists());

    // Esc twice on the empty prompt opens the list, newest first; ↓ picks the second prompt.
    pty.send(keys::ESC);
    std::thread::sleep(Duration::from_millis(100));
    pty.send(keys::ESC);
    pty.expect_text("Rewind to just before a prompt");
    pty.send(keys::DOWN);
    pty.send(keys::ENTER);
    let preview = expect_preview(&pty, "Restore the conversation and the files");
    assert!(preview.contains("Before prompt 2: second change"), "{preview}");
    assert!(preview.contains("- three") && preview.contains("+ two"), "the diff of going back: {preview}");
    assert!(preview.contains("new.txt: created since this prompt; going back removes it"), "{preview}");
    assert!(preview.contains("4 files · 4 of 4 hunks go back"), "{preview}");
    pty.send("1");
    let screen = pty.expect("the conversation rewound", |screen| {
        screen.contains("Files put back") && !screen.contains("Third done.") && !screen.contains("Second done.")
    });
    assert!(screen.contains("> second change"), "the prompt is back in the input: {screen}");
    assert!(screen.contains("Removed (created since): new.txt"), "{screen}");
    assert_eq!(std::fs::read(&notes).unwrap(), b"two\r\n", "byte for byte, CRLF kept");
    assert_eq!(std::fs::metadata(&notes).unwrap().permissions().mode() & 0o777, 0o755, "mode kept");
    assert!(!workspace.path().join("new.txt").exists(), "a file created since is removed");
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "log\n", "a file the command changed is put back");
    assert_eq!(std::fs::read_to_string(&gone).unwrap(), "still here\n", "a file the command removed is back");

    // Sent again: the model hears what was rewound, and the conversation it gets ends before it.
    pty.send(keys::ENTER);
    expect_idle_with(&pty, "Again, after the rewind.");
    let last = server.requests().last().unwrap().body.clone();
    let sent = last["messages"].to_string();
    assert!(sent.contains("The user rewound to just before their prompt"), "{sent}");
    assert!(!sent.contains("third change"), "{sent}");
    quit(pty);

    // After a restart the checkpoints are still there; a file changed by hand is a conflict, left alone.
    std::fs::write(&notes, "edited by hand\n").unwrap();
    let pty = start(&workspace, &server, 30, 100, &["--continue"]);
    submit(&pty, "/rewind");
    pty.expect_text("Rewind to just before a prompt");
    for _ in 0..5 {
        pty.send(keys::DOWN);
    }
    pty.send(keys::ENTER);
    let preview = expect_preview(&pty, "Restore the files only");
    assert!(preview.contains("Before prompt 1: first change"), "{preview}");
    assert!(preview.contains("changed outside tandem"), "{preview}");
    pty.send("3");
    let screen = pty.expect("the files-only rewind", |screen| screen.contains("· Rewound."));
    let said = &screen[screen.find("· Rewound.").unwrap()..];
    assert!(said.contains("left as they are: notes.txt"), "{screen}");
    assert!(!said.contains("Files put back"), "files already as they were are not listed: {screen}");
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "edited by hand\n");
    pty.expect_text(IDLE);
    quit(pty);
}

/// The session id of the only session in the workspace's config directory (the one whose dir has checkpoints).
fn session_with_checkpoints(dir: &std::path::Path) -> Option<String> {
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let path = entry.path();
        if path.join("checkpoints").is_dir() {
            return path.file_name().map(|name| name.to_string_lossy().into_owned());
        }
        if path.is_dir()
            && let Some(found) = session_with_checkpoints(&path)
        {
            return Some(found);
        }
    }
    None
}

#[test]
fn a_partial_rewind_after_resume_keeps_the_hunks_left_unticked() {
    let workspace = Workspace::new();
    let original: String = (1..=30).map(|line| format!("line {line}\n")).collect();
    let code = workspace.write("code.txt", &original);
    let changed = original.replace("line 2\n", "line two\n").replace("line 28\n", "line twenty-eight\n");
    let server = FakeServer::spawn(scenario(json!({"replies": [
        {"blocks": [{"type": "tool_use", "id": "r1", "name": "Read", "input": {"file_path": "code.txt"}}]},
        {"blocks": [{"type": "tool_use", "id": "w1", "name": "Write",
                     "input": {"file_path": "code.txt", "content": changed}}]},
        {"blocks": [{"type": "text", "text": "Renamed both."}]},
    ]})))
    .unwrap();
    let pty = start(&workspace, &server, 24, 80, &["--permission-mode", "acceptEdits"]);
    submit(&pty, "rename two lines");
    expect_idle_with(&pty, "Renamed both.");
    assert_eq!(std::fs::read_to_string(&code).unwrap(), changed);
    quit(pty);

    let id = session_with_checkpoints(workspace.config.path()).expect("the session keeps checkpoints");
    let pty = start(&workspace, &server, 24, 80, &["--resume", &id]);
    submit(&pty, "/rewind");
    pty.expect_text("Rewind to just before a prompt");
    pty.send(keys::ENTER);
    let preview = pty.expect_text("2 of 2 hunks go back");
    assert!(preview.contains("▶ [✓]") && preview.contains("hunk 1/2"), "{preview}");
    // Tab to the second hunk, untick it (it stays as it is now): only the first goes back.
    pty.send(keys::TAB);
    pty.expect_text("hunk 2/2");
    pty.send(" ");
    let preview = pty.expect_text("1 of 2 hunks go back");
    assert!(preview.contains("[✗]"), "{preview}");
    pty.send("3");
    pty.expect_text("Only the ticked hunks of: code.txt");
    let kept = original.replace("line 28\n", "line twenty-eight\n");
    assert_eq!(std::fs::read_to_string(&code).unwrap(), kept);
    quit(pty);
}

/// The rewind preview once it is whole: the checkpoints are read in the background, and until "Reading the
/// checkpoints…" is gone the menu is drawn without the diff and the conflicts (under load a test took it then).
fn expect_preview(pty: &Pty, text: &str) -> String {
    pty.expect("the whole rewind preview", |screen| {
        screen.contains(text) && !screen.contains("Reading the checkpoints")
    })
}
