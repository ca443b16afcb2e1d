//! Ending everything a session started, in one call that every front end makes on its way out — a normal exit,
//! a signal, stdin closing, a second Ctrl-C: running commands (foreground, background, hooks) with their process
//! groups, then the MCP servers, busy or not.

use std::path::PathBuf;
use std::sync::Mutex;

/// Directories that go with the session whatever ends it (an unsaved session's log: a signal ends the process
/// before any destructor runs).
static REMOVED_AT_EXIT: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Removes `dir` (and what is in it) when the session ends, by any way [`end_everything`] is called.
pub fn remove_at_exit(dir: PathBuf) {
    REMOVED_AT_EXIT.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(dir);
}

/// Ends every running command, stops every MCP server and removes what [`remove_at_exit`] named; returns how many
/// commands there were.
pub fn end_everything() -> usize {
    let commands = crate::tools::bash::running::end_all();
    crate::mcp::stdio::stop_all();
    for dir in REMOVED_AT_EXIT.lock().unwrap_or_else(std::sync::PoisonError::into_inner).drain(..) {
        let _ = std::fs::remove_dir_all(dir);
    }
    commands
}
