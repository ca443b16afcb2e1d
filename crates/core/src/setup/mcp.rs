//! The session's MCP servers from Claude Code's files and the `--mcp-config` flags: loaded, reported, and started
//! in the background (the session does not wait for them).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::mcp::config::{self, LoadInputs, ProjectChoices};
use crate::mcp::{ManagerOptions, McpManager};
use crate::shell_env::ShellEnvPolicy;

/// What the MCP part of the setup needs.
pub(super) struct McpInputs<'a> {
    pub(super) options: &'a super::SessionOptions,
    pub(super) project_root: &'a Path,
    pub(super) config_dir: &'a Path,
    pub(super) cwd: &'a Path,
    pub(super) home: Option<&'a Path>,
    pub(super) choices: &'a ProjectChoices,
    pub(super) shell_env: Arc<ShellEnvPolicy>,
    pub(super) context_window: u64,
}

/// Claude Code's `~/.claude.json` (`$CLAUDE_CONFIG_DIR/.claude.json` when that is set).
pub fn claude_json(env: &dyn Fn(&str) -> Option<String>, home: Option<&Path>) -> Option<PathBuf> {
    match env("CLAUDE_CONFIG_DIR").filter(|dir| !dir.is_empty()) {
        Some(dir) if Path::new(&dir).is_absolute() => Some(PathBuf::from(dir).join(".claude.json")),
        _ => home.filter(|home| home.is_absolute()).map(|home| home.join(".claude.json")),
    }
}

/// The servers of the session, started; `None` when there are none. Problems and servers waiting for approval
/// are added to `notices`.
pub(super) fn start(inputs: McpInputs<'_>, notices: &mut Vec<String>) -> Option<Arc<McpManager>> {
    let env = |name: &str| std::env::var(name).ok();
    let loaded = config::load(&LoadInputs {
        project_root: inputs.project_root,
        config_dir: inputs.config_dir,
        claude_json: claude_json(&env, inputs.home),
        flag_configs: &inputs.options.mcp_configs,
        strict: inputs.options.strict_mcp_config,
        choices: inputs.choices,
        env: &env,
        cwd: inputs.cwd,
    });
    notices.extend(loaded.problems.iter().map(|problem| format!("MCP: {problem}")));
    for server in &loaded.servers {
        if let Err(reason) = &server.transport {
            notices.push(format!("MCP: server {} ({}) can't be started: {reason}", server.name, server.origin));
        }
    }
    // The app asks about each of them in a dialog; headless runs can't, so they say how to approve.
    if !loaded.awaiting_approval.is_empty() && inputs.options.front_end.headless() {
        let names: Vec<&str> = loaded.awaiting_approval.iter().map(|server| server.name.as_str()).collect();
        let how = "approve them once in the app (tandem remembers it), list them in enabledMcpjsonServers (or set \
                   enableAllProjectMcpServers) in your user settings, or pass the file with --mcp-config .mcp.json";
        notices.push(format!(
            "MCP: the project's .mcp.json has servers that are not approved yet, so they are not started: {} ({how})",
            names.join(", ")
        ));
    }
    if !loaded.awaiting_approval.is_empty() && !inputs.choices.ignored_files.is_empty() {
        let files: Vec<String> = inputs.choices.ignored_files.iter().map(|file| file.display().to_string()).collect();
        notices.push(format!(
            "MCP: approvals of .mcp.json servers in {} are not used: that file is inside the repository, which could \
             have committed it (tandem keeps your answers in its config directory)",
            files.join(", ")
        ));
    }
    if !loaded.refused.is_empty() {
        notices.push(format!("MCP: .mcp.json servers you turned down are not started: {}", loaded.refused.join(", ")));
    }
    if loaded.servers.is_empty() && loaded.awaiting_approval.is_empty() {
        return None;
    }
    let mut problems = Vec::new();
    let mut options = ManagerOptions::from_env(&env, inputs.shell_env, inputs.context_window, &mut problems);
    options.relay = inputs.options.sdk_mcp_relay.clone();
    notices.extend(problems.into_iter().map(|problem| format!("MCP: {problem}")));
    let manager = McpManager::new(loaded, options);
    manager.start();
    Some(manager)
}
