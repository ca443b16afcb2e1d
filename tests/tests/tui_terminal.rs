//! End to end: what the full-screen `tandem` does to the terminal itself, in a pseudo-terminal against the fake
//! LLM server — the alternate screen entered and left, the conversation printed to scrollback on quit, on a panic
//! and on Ctrl+Z, the clipboard written with OSC 52, and the onboarding screen without a provider.

// Test code: a panic is how a failure is reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use serde_json::json;
use tandem_e2e::app::{IDLE, expect_idle_with, scenario, start, submit, suspend_and_continue};
use tandem_e2e::pty::{Answers, Pty, anthropic_command, assert_no_key_leak, find, framed, keys, rfind, tandem_command};
use tandem_e2e::{FakeServer, Workspace};

const ENTER_ALT_SCREEN: &[u8] = b"\x1b[?1049h";
const LEAVE_ALT_SCREEN: &[u8] = b"\x1b[?1049l";
const EXIT_GUARD: Duration = Duration::from_secs(30);

/// Decodes standard base64 (with or without padding); `None` on a character outside the alphabet.
fn base64_decode(text: &str) -> Option<Vec<u8>> {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = Vec::new();
    let (mut bits, mut count) = (0u32, 0u32);
    for byte in text.bytes().filter(|byte| *byte != b'=') {
        let value = ALPHABET.iter().position(|candidate| *candidate == byte)? as u32;
        bits = (bits << 6) | value;
        count += 6;
        if count >= 8 {
            count -= 8;
            out.push((bits >> count) as u8);
            bits &= (1 << count) - 1;
        }
    }
    Some(out)
}

#[test]
fn quitting_restores_the_terminal_and_prints_the_conversation() {
    let workspace = Workspace::new();
    let server = FakeServer::spawn(scenario(json!({"replies": [
        {"blocks": [{"type": "text", "text": "Goodbye, and thanks for all the fish.", "chunks": 3}]}
    ]})))
    .unwrap();
    let mut pty = start(&workspace, &server, 40, 120, &[]);
    submit(&pty, "Say goodbye");
    expect_idle_with(&pty, "Goodbye, and thanks for all the fish.");
    assert!(pty.alternate_screen(), "the app runs on the alternate screen");
    // Both presses in one write: the second arrives well within the double-press window.
    pty.send(&format!("{}{}", keys::CTRL_C, keys::CTRL_C));
    let status =
        pty.wait_exit(EXIT_GUARD).unwrap_or_else(|| panic!("tandem did not quit:\n{}", framed(&pty.screen_text())));
    assert!(status.success(), "{status:?}");

    let raw = pty.raw_output();
    let entered = find(&raw, ENTER_ALT_SCREEN).expect("the app entered the alternate screen");
    let left = rfind(&raw, LEAVE_ALT_SCREEN).expect("the app left the alternate screen");
    assert!(entered < left, "left the alternate screen before entering it");
    let after = String::from_utf8_lossy(&raw[left..]);
    assert!(after.contains("Goodbye, and thanks for all the fish."), "the conversation is printed after leaving");
    assert!(!pty.alternate_screen());
    let screen = pty.screen_text();
    assert!(screen.contains("> Say goodbye"), "{}", framed(&screen));
    assert!(screen.contains("● Goodbye, and thanks for all the fish."), "{}", framed(&screen));
    assert_no_key_leak(&pty);
}

#[test]
fn slash_quit_quits() {
    let workspace = Workspace::new();
    let server = FakeServer::spawn(scenario(json!({"replies": []}))).unwrap();
    let mut pty = start(&workspace, &server, 24, 80, &[]);
    submit(&pty, "/quit");
    let status =
        pty.wait_exit(EXIT_GUARD).unwrap_or_else(|| panic!("tandem did not quit:\n{}", framed(&pty.screen_text())));
    assert!(status.success(), "{status:?}");
    assert!(!pty.alternate_screen());
    assert_eq!(server.served(), 0);
}

#[test]
fn a_panic_restores_the_terminal_and_shows_the_message() {
    let workspace = Workspace::new();
    let server = FakeServer::spawn(scenario(json!({"replies": []}))).unwrap();
    let mut command = anthropic_command(&workspace, &server);
    command.env("TANDEM_TEST_PANIC", "1");
    let mut pty = Pty::spawn(command, 30, 100);
    let status =
        pty.wait_exit(EXIT_GUARD).unwrap_or_else(|| panic!("tandem did not exit:\n{}", framed(&pty.screen_text())));
    assert!(!status.success(), "{status:?}");

    let raw = pty.raw_output();
    let entered = find(&raw, ENTER_ALT_SCREEN).expect("the app entered the alternate screen");
    let left = rfind(&raw, LEAVE_ALT_SCREEN).expect("the app left the alternate screen");
    assert!(entered < left, "left the alternate screen before entering it");
    assert!(!pty.alternate_screen());
    let screen = pty.screen_text();
    assert!(screen.contains("TANDEM_TEST_PANIC: deliberate panic after the first frame"), "{}", framed(&screen));
    assert!(screen.contains("panicked"), "{}", framed(&screen));
}

#[test]
fn ctrl_s_then_c_copies_the_last_answer_with_osc52() {
    let workspace = Workspace::new();
    let answer = "Copy me: the answer is 42 — «exactly».";
    let server =
        FakeServer::spawn(scenario(json!({"replies": [{"blocks": [{"type": "text", "text": answer, "chunks": 3}]}]})))
            .unwrap();
    let pty = start(&workspace, &server, 40, 120, &[]);
    submit(&pty, "What is the answer?");
    expect_idle_with(&pty, "the answer is 42");
    pty.send(keys::CTRL_S);
    pty.expect_text("scroll mode");
    pty.send("c");
    pty.expect_text("copied the last answer");
    let raw = pty.expect_raw("an OSC 52 sequence", |raw| {
        find(raw, b"\x1b]52;c;").is_some_and(|start| raw[start..].contains(&0x07))
    });
    let start = find(&raw, b"\x1b]52;c;").unwrap() + b"\x1b]52;c;".len();
    let end = start + raw[start..].iter().position(|byte| *byte == 0x07).unwrap();
    let payload = std::str::from_utf8(&raw[start..end]).expect("ascii base64");
    let decoded = base64_decode(payload).unwrap_or_else(|| panic!("not base64: {payload:?}"));
    assert_eq!(String::from_utf8(decoded).expect("utf-8"), answer);
}

#[test]
fn without_a_provider_the_onboarding_screen_explains_and_q_quits() {
    let workspace = Workspace::new();
    let mut pty = Pty::spawn(tandem_command(&workspace), 30, 100);
    let screen = pty.expect_text("ANTHROPIC_API_KEY");
    assert!(screen.contains("No model provider is configured"), "{}", framed(&screen));
    let config = workspace.config.path().join("config.toml");
    assert!(screen.contains(&config.display().to_string()), "the config file is named:\n{}", framed(&screen));
    pty.send("q");
    let status =
        pty.wait_exit(EXIT_GUARD).unwrap_or_else(|| panic!("tandem did not quit:\n{}", framed(&pty.screen_text())));
    assert!(status.success(), "{status:?}");
    assert!(!pty.alternate_screen());
    let raw = pty.raw_output();
    assert!(find(&raw, ENTER_ALT_SCREEN) < rfind(&raw, LEAVE_ALT_SCREEN));
}

#[test]
fn ctrl_z_prints_the_conversation_and_the_app_comes_back() {
    let workspace = Workspace::new();
    let server = FakeServer::spawn(scenario(json!({"replies": [
        {"blocks": [{"type": "text", "text": "Before the break."}]},
        {"blocks": [{"type": "text", "text": "After the break."}]}
    ]})))
    .unwrap();
    let pty = start(&workspace, &server, 40, 120, &[]);
    submit(&pty, "First");
    expect_idle_with(&pty, "Before the break.");
    let printed = suspend_and_continue(&pty);
    let left = printed.find("\x1b[?1049l").expect("the app left the alternate screen to suspend");
    let answer = printed.find("Before the break.").expect("the conversation is printed before stopping");
    assert!(left < answer, "{printed:?}");
    pty.expect("the app back on the alternate screen", |screen| {
        screen.contains(IDLE) && screen.contains("Before the break.")
    });
    assert!(pty.alternate_screen());
    submit(&pty, "Second");
    expect_idle_with(&pty, "After the break.");
}

/// Coming back from Ctrl+Z, the app clears the screen with ratatui's `Terminal::clear`, which first asks the
/// terminal where the cursor is. A terminal that never answers (or answers after crossterm's two second
/// timeout) makes `clear` fail before it resets ratatui's back buffer; the error is ignored, the next frame is
/// diffed against the stale buffer, and nothing is redrawn: the screen stays blank.
#[test]
fn ctrl_z_redraws_even_when_the_terminal_does_not_report_the_cursor() {
    let workspace = Workspace::new();
    let server =
        FakeServer::spawn(scenario(json!({"replies": [{"blocks": [{"type": "text", "text": "Before the break."}]}]})))
            .unwrap();
    let command = anthropic_command(&workspace, &server);
    let answers = Answers { cursor_position: false, ..Answers::default() };
    let pty = Pty::spawn_with(command, 40, 120, answers);
    pty.expect("the first frame", |screen| screen.contains(IDLE));
    submit(&pty, "First");
    expect_idle_with(&pty, "Before the break.");
    suspend_and_continue(&pty);
    // crossterm gives up on the cursor report after two seconds; ten is plenty to redraw after that.
    pty.wait_for(|screen| screen.contains(IDLE) && screen.contains("Before the break."), Duration::from_secs(10))
        .unwrap_or_else(|err| panic!("the app was not redrawn after coming back: {err}"));
}

/// Found from the outside: a Read of a named pipe in the workspace hung the app, and neither Esc nor Ctrl+C
/// twice ended it. The Read is refused at once, and the keys still do what they say afterwards.
#[test]
fn a_named_pipe_read_in_the_app_is_refused_and_esc_then_ctrl_c_twice_quits() {
    let workspace = Workspace::new();
    let made = std::process::Command::new("mkfifo").arg(workspace.path().join("pipe")).status().unwrap();
    assert!(made.success());
    let server = FakeServer::spawn(scenario(json!({"replies": [
        {"blocks": [{"type": "tool_use", "id": "toolu_read", "name": "Read", "input": {"file_path": "pipe"}}]},
        {"blocks": [{"type": "text", "text": "The pipe cannot be read."}]}
    ]})))
    .unwrap();
    let mut pty = start(&workspace, &server, 24, 80, &[]);
    submit(&pty, "read the pipe");
    let screen = expect_idle_with(&pty, "The pipe cannot be read.");
    assert!(screen.contains("named pipe"), "{}", framed(&screen));
    pty.send(keys::ESC);
    pty.send(&format!("{}{}", keys::CTRL_C, keys::CTRL_C));
    let status =
        pty.wait_exit(EXIT_GUARD).unwrap_or_else(|| panic!("tandem did not quit:\n{}", framed(&pty.screen_text())));
    assert!(status.success(), "{status:?}");
    assert!(!pty.alternate_screen());
}

/// Every clipboard write so far (OSC 52), decoded, once there are `count` of them.
fn clipboard_writes(pty: &Pty, count: usize) -> Vec<String> {
    const START: &[u8] = b"\x1b]52;c;";
    let writes = |raw: &[u8]| {
        let mut found = Vec::new();
        let mut rest = raw;
        while let Some(start) = find(rest, START) {
            let payload = &rest[start + START.len()..];
            let Some(end) = payload.iter().position(|byte| *byte == 0x07) else { break };
            found.push(
                String::from_utf8(base64_decode(std::str::from_utf8(&payload[..end]).unwrap()).unwrap()).unwrap(),
            );
            rest = &payload[end..];
        }
        found
    };
    writes(&pty.expect_raw(&format!("{count} clipboard writes"), |raw| writes(raw).len() >= count))
}

/// Issue 28: `y` copied the screen rows of a paragraph (gutter and hard wraps included) and `b` the first code block
/// of the answer whatever was in view. At 60 columns, a paragraph that wraps over several rows is copied as the one
/// line it is, and `b` takes the block the cursor is at, then the one at the bottom.
#[test]
fn copies_a_wrapped_paragraph_as_one_line_and_the_code_block_in_view() {
    let workspace = Workspace::new();
    let paragraph = "The migration renames the column in three steps, so that the old readers keep working until \
                     the last deploy, and only then drops the alias.";
    let filler: String = (1..=30).map(|n| format!("- note {n}\n")).collect();
    let answer = format!(
        "{paragraph}\n\n```sh\necho first-block\n```\n\n{filler}\n```sh\necho second-block\n```\n\nThat is all.\n"
    );
    let server =
        FakeServer::spawn(scenario(json!({"replies": [{"blocks": [{"type": "text", "text": answer, "chunks": 4}]}]})))
            .unwrap();
    let pty = start(&workspace, &server, 20, 60, &[]);
    submit(&pty, "How does the migration go?");
    expect_idle_with(&pty, "That is all.");
    pty.send(keys::CTRL_S);
    pty.expect_text("scroll mode");
    pty.send("b");
    assert_eq!(clipboard_writes(&pty, 1)[0], "echo second-block", "the block in view at the bottom");
    pty.send("/old readers\r");
    pty.expect_text("1/1");
    pty.send("y");
    assert_eq!(clipboard_writes(&pty, 2)[1], paragraph, "the paragraph, not its screen rows");
    pty.send("b");
    assert_eq!(clipboard_writes(&pty, 3)[2], "echo first-block", "the block nearest the cursor, now in view");
}
