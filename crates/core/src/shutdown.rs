//! Ending everything a session started, in one call that every front end makes on its way out — a normal exit,
//! a signal, stdin closing, a second Ctrl-C: running commands (foreground, background, hooks) with their process
//! groups, then the MCP servers, busy or not.

/// Ends every running command, stops every MCP server and removes the session's own directories
/// ([`crate::fs_util::removed_at_exit`]); returns how many commands there were.
pub fn end_everything() -> usize {
    let commands = crate::tools::bash::running::end_all();
    crate::mcp::stdio::stop_all();
    crate::fs_util::removed_at_exit::remove_now();
    commands
}
