//! The servers as front ends show them ([`McpServerView`]), and the user's answers about `.mcp.json` servers.

use serde_json::Value;

use super::McpManager;
use super::approvals;
use super::tool::{clean, server_prefix};
use crate::protocol::{McpChoice, McpPromptView, McpServerView};

impl McpManager {
    /// Every server with its status, tools, resources and prompts.
    pub fn views(&self) -> Vec<McpServerView> {
        let resources = self.resources();
        let prompts = self.prompts();
        self.statuses()
            .into_iter()
            .map(|status| McpServerView {
                scope: status.scope.as_str().to_owned(),
                target: target(&status.config),
                details: details(&status.config),
                transport: status.transport.to_owned(),
                status: status.status.as_str().to_owned(),
                reason: {
                    let lines: Vec<&str> =
                        status.status.reason().into_iter().chain(status.notes.iter().map(String::as_str)).collect();
                    (!lines.is_empty()).then(|| lines.join("\n"))
                },
                needs_approval: status.needs_approval,
                tools: status.tools,
                resources: resources
                    .iter()
                    .filter(|(server, _)| *server == status.name)
                    .filter_map(|(_, entry)| entry.get("uri").and_then(Value::as_str).map(str::to_owned))
                    .collect(),
                prompts: prompts
                    .iter()
                    .filter(|(server, _)| *server == status.name)
                    .filter_map(|(server, entry)| prompt_view(server, entry))
                    .collect(),
                name: status.name,
            })
            .collect()
    }

    /// Applies and remembers the user's answer about a `.mcp.json` server (in tandem's config directory, with
    /// the entry answered about, so later sessions don't ask until it changes); approving starts it now.
    /// Returns what was written, for the user.
    pub fn decide(&self, server: &str, choice: McpChoice) -> Result<String, String> {
        let (config_dir, root) = (self.config_dir(), self.project_root());
        let entry = self.entry(server).unwrap_or_default();
        let written = match choice {
            McpChoice::ApproveAll => approvals::remember_all(config_dir, root),
            McpChoice::Approve => approvals::remember(config_dir, root, server, &entry, true),
            McpChoice::Refuse => approvals::remember(config_dir, root, server, &entry, false),
        };
        match choice {
            McpChoice::ApproveAll => {
                for view in self.statuses().into_iter().filter(|status| status.needs_approval) {
                    self.approve(&view.name);
                }
            }
            McpChoice::Approve => self.approve(server),
            McpChoice::Refuse => self.refuse(server),
        }
        match written {
            Ok(file) => Ok(format!("remembered in {}", file.display())),
            Err(why) => Err(format!("applied for this session, but not remembered: {why}")),
        }
    }

    /// [`Self::prompt_for_command`], waiting for servers still starting when it is not (yet) known: a prompt
    /// typed right after start-up, or given to `tandem -p`, is not sent to the model as text.
    pub async fn find_prompt(&self, command: &str) -> Option<(String, String, Vec<String>)> {
        if let Some(found) = self.prompt_for_command(command) {
            return Some(found);
        }
        self.settle(self.options.startup_timeout).await;
        self.prompt_for_command(command)
    }

    /// A prompt of `server` by the command that runs it (`mcp__server__prompt`).
    pub fn prompt_for_command(&self, command: &str) -> Option<(String, String, Vec<String>)> {
        self.prompts().into_iter().find_map(|(server, entry)| {
            let view = prompt_view(&server, &entry)?;
            let name = entry.get("name").and_then(Value::as_str)?.to_owned();
            (view.command == command).then_some((server, name, view.arguments))
        })
    }
}

fn prompt_view(server: &str, entry: &Value) -> Option<McpPromptView> {
    let name = entry.get("name").and_then(Value::as_str)?;
    let arguments = entry
        .get("arguments")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|argument| argument.get("name").and_then(Value::as_str).map(str::to_owned))
        .collect();
    Some(McpPromptView {
        command: format!("{}__{}", server_prefix(server), clean(name)),
        description: entry.get("description").and_then(Value::as_str).unwrap_or("").to_owned(),
        arguments,
    })
}

/// `command args` or the url, as `claude mcp list` shows a server.
/// An entry's working directory, environment and headers as written, one line each.
pub fn details(entry: &Value) -> Vec<String> {
    let mut lines = Vec::new();
    if let Some(cwd) = entry.get("cwd").and_then(Value::as_str) {
        lines.push(format!("cwd {cwd}"));
    }
    for (field, format) in [("env", "env {}={}"), ("headers", "header {}: {}")] {
        for (name, value) in entry.get(field).and_then(Value::as_object).into_iter().flatten() {
            let value = value.as_str().map(str::to_owned).unwrap_or_else(|| value.to_string());
            lines.push(format.replacen("{}", name, 1).replacen("{}", &value, 1));
        }
    }
    lines
}

pub fn target(entry: &Value) -> String {
    if let Some(url) = entry.get("url").and_then(Value::as_str) {
        return url.to_owned();
    }
    let command = entry.get("command").and_then(Value::as_str).unwrap_or("?");
    let args: Vec<&str> =
        entry.get("args").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
    if args.is_empty() { command.to_owned() } else { format!("{command} {}", args.join(" ")) }
}
