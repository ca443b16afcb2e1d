//! The servers as front ends show them ([`McpServerView`]), and the user's answers about `.mcp.json` servers.

use serde_json::Value;

use super::McpManager;
use super::tool::{clean, server_prefix};
use crate::permissions::settings;
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
                transport: status.transport.to_owned(),
                status: status.status.as_str().to_owned(),
                reason: status.status.reason().map(str::to_owned),
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

    /// Applies and remembers the user's answer about a `.mcp.json` server (in `.tandem/settings.local.json`,
    /// so later sessions don't ask); approving starts it now. Returns what was written, for the user.
    pub fn decide(&self, server: &str, choice: McpChoice) -> Result<String, String> {
        let root = self.project_root();
        let written = match choice {
            McpChoice::ApproveAll => settings::persist_mcp_enable_all(root),
            McpChoice::Approve => settings::persist_mcp_choice(root, server, true),
            McpChoice::Refuse => settings::persist_mcp_choice(root, server, false),
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
pub fn target(entry: &Value) -> String {
    if let Some(url) = entry.get("url").and_then(Value::as_str) {
        return url.to_owned();
    }
    let command = entry.get("command").and_then(Value::as_str).unwrap_or("?");
    let args: Vec<&str> =
        entry.get("args").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
    if args.is_empty() { command.to_owned() } else { format!("{command} {}", args.join(" ")) }
}
