//! What the full-screen tests share: starting the app against the fake server, typing a prompt, reading the
//! input and status rows, and suspending with Ctrl+Z.

use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::pty::{Pty, anthropic_command, keys};
use crate::{FakeServer, Scenario, Workspace};

/// The input's placeholder: visible only when the prompt is empty and the app is idle.
pub const IDLE: &str = "Ask tandem anything";

pub fn scenario(value: Value) -> Scenario {
    Scenario::from_json(&value.to_string()).expect("scenario")
}

/// Starts the app against `server` in a `rows` × `cols` terminal and waits for its first idle frame.
pub fn start(workspace: &Workspace, server: &FakeServer, rows: u16, cols: u16, args: &[&str]) -> Pty {
    let mut command = anthropic_command(workspace, server);
    command.args(args);
    let pty = Pty::spawn(command, rows, cols);
    pty.expect("the first frame", |screen| screen.contains(IDLE));
    pty
}

/// Types a prompt, waits until the input shows it, and sends it.
pub fn submit(pty: &Pty, prompt: &str) {
    pty.send(prompt);
    let shown = format!("> {prompt}");
    pty.expect(&format!("the prompt {prompt:?} in the input"), |screen| input_line(screen) == shown);
    pty.send(keys::ENTER);
}

/// Waits until `text` is on screen and the app is idle again (the turn is over).
pub fn expect_idle_with(pty: &Pty, text: &str) -> String {
    pty.expect(&format!("{text:?} on an idle screen"), |screen| screen.contains(text) && screen.contains(IDLE))
}

/// The input's rows (between the last full-width rule and the status line), trailing blanks trimmed.
pub fn input_line(screen: &str) -> String {
    let lines: Vec<&str> = screen.lines().collect();
    let Some(rule) = lines.iter().rposition(|line| !line.is_empty() && line.chars().all(|ch| ch == '─')) else {
        return String::new();
    };
    let rows = &lines[rule + 1..lines.len().saturating_sub(1).max(rule + 1)];
    rows.iter().map(|row| row.trim_end()).collect::<Vec<_>>().join("\n")
}

/// The last row with text: the status line.
pub fn status_line(screen: &str) -> &str {
    screen.lines().rev().find(|line| !line.trim().is_empty()).unwrap_or("")
}

/// Whether the process is stopped (state `T` in `/proc/<pid>/stat`).
pub fn stopped(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| stat.rsplit_once(") ").map(|(_, rest)| rest.starts_with('T')))
        .unwrap_or(false)
}

/// Ctrl+Z, then `fg`: waits for the conversation and the suspend message on the normal screen, continues the
/// process if it really stopped (a PTY session's process group is orphaned, so the kernel may have discarded the
/// stop), and returns the raw output printed while suspending.
pub fn suspend_and_continue(pty: &Pty) -> String {
    let before = pty.raw_output().len();
    pty.send("\x1a");
    let raw = pty.expect_raw("the suspend message", |raw| {
        String::from_utf8_lossy(&raw[before..]).contains("tandem is suspended")
    });
    let pid = pty.pid().expect("a pid");
    let deadline = Instant::now() + Duration::from_secs(30);
    // Back by itself (the stop was discarded), or stopped and waiting for SIGCONT: never signal too early, or
    // the stop would come after the continue.
    while !stopped(pid) && !pty.alternate_screen() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    if stopped(pid) {
        assert!(Command::new("kill").args(["-CONT", &pid.to_string()]).status().unwrap().success());
    }
    String::from_utf8_lossy(&raw[before..]).into_owned()
}
