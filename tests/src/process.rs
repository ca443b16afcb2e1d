//! Watching the processes a command started: the pid files they write and whether they still run.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Polls until `path` holds a complete line (a pid a command wrote); returns it trimmed. Panics after 30 s.
pub fn wait_for_line(path: &Path) -> String {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(text) = std::fs::read_to_string(path)
            && text.ends_with('\n')
        {
            return text.trim().to_owned();
        }
        assert!(Instant::now() < deadline, "{} never appeared", path.display());
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether the process runs (a zombie does not: it is dead, only its parent has not looked yet).
pub fn alive(pid: &str) -> bool {
    let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let zombie = state.rsplit_once(") ").is_some_and(|(_, rest)| rest.starts_with('Z'));
    !zombie && Command::new("kill").args(["-0", pid]).stderr(Stdio::null()).status().is_ok_and(|s| s.success())
}
