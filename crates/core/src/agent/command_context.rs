//! What a custom command's prompt pulls in before it is sent, as in Claude Code: `` !`cmd` `` is replaced by the
//! command's output and `@path` adds the file's content. Both go through the permission policy like the model's
//! own calls (with the command's `allowed-tools` already added): what the policy would not allow without asking
//! is left as text, and the user is told why.

use std::sync::Arc;

use serde_json::json;

use super::lock;
use super::turn::Session;
use crate::permissions::Decision;
use crate::protocol::Event;
use crate::tools::{Tool, ToolContext};

/// Most of one `@file` pulled into a prompt.
const MAX_FILE_CHARS: usize = 100_000;

impl Session {
    /// The command's prompt: its body with the `` !`…` `` outputs, then the arguments put in, then the `@file`
    /// contents.
    pub(super) async fn command_prompt(&self, command: &crate::commands::CustomCommand, args: &str) -> String {
        let body = self.run_shell_parts(&command.name, command.body.clone()).await;
        let mut out = crate::commands::expand_text(&body, args);
        let files = self.file_parts(&command.name, &out);
        for (path, content) in files {
            out.push_str(&format!("\n\nContents of {path}:\n```\n{content}\n```"));
        }
        out
    }

    async fn run_shell_parts(&self, command: &str, prompt: String) -> String {
        let Ok(pattern) = regex::Regex::new(r"!`([^`\n]+)`") else { return prompt };
        let mut out = String::with_capacity(prompt.len());
        let mut last = 0;
        for found in pattern.captures_iter(&prompt) {
            let (Some(whole), Some(line)) = (found.get(0), found.get(1)) else { continue };
            out.push_str(&prompt[last..whole.start()]);
            last = whole.end();
            let input = json!({ "command": line.as_str() });
            let bash = crate::tools::bash::BashTool;
            let (decision, grant) = lock(&self.shared.policy).decide_with_grant(&bash, &input);
            match decision {
                Decision::Allow => {}
                Decision::Deny { reason } => {
                    self.emit(Event::Info {
                        message: format!("/{command}: !`{}` was not run: {reason}", line.as_str()),
                    });
                    out.push_str(whole.as_str());
                    continue;
                }
                Decision::Ask { .. } => {
                    self.emit(Event::Info {
                        message: format!(
                            "/{command}: !`{}` was not run: no rule allows it (the command's allowed-tools can, e.g. Bash({}:*)).",
                            line.as_str(),
                            line.as_str().split_whitespace().next().unwrap_or_default()
                        ),
                    });
                    out.push_str(whole.as_str());
                    continue;
                }
            }
            let mut ctx = ToolContext::new(self.config.cwd.clone());
            ctx.shell_env = self.config.shell_env.clone();
            ctx.sandbox = self.config.sandbox.as_ref().and_then(|confinement| confinement.policy_for(grant));
            let output = bash.run(input.into(), &ctx).await;
            out.push_str(output.content.trim_end());
        }
        out.push_str(&prompt[last..]);
        out
    }

    /// The files `@path` names that the policy lets be read (paths that aren't files are just text).
    fn file_parts(&self, command: &str, prompt: &str) -> Vec<(String, String)> {
        let mut files: Vec<(String, String)> = Vec::new();
        let read = Arc::new(crate::tools::read::ReadTool);
        let hidden = lock(&self.shared.policy).walk_hidden();
        for word in prompt.split_whitespace() {
            let Some(path) = word.strip_prefix('@') else { continue };
            let path = path.trim_end_matches([',', '.', ';', ':', ')', '"', '\'']);
            if path.is_empty() || files.iter().any(|(seen, _)| seen == path) {
                continue;
            }
            let resolved = crate::fs_util::resolve_path(&self.config.cwd, path);
            if !resolved.is_file() {
                continue;
            }
            let input = json!({ "file_path": resolved.display().to_string() });
            if lock(&self.shared.policy).decide(read.as_ref(), &input) != Decision::Allow {
                self.emit(Event::Info {
                    message: format!(
                        "/{command}: @{path} was not included: reading it needs your permission or is denied."
                    ),
                });
                continue;
            }
            let contents = crate::tools::open_unasked(&resolved, &*hidden).and_then(|mut file| {
                let mut text = String::new();
                std::io::Read::read_to_string(&mut file, &mut text).map_err(|err| err.to_string())?;
                Ok(text)
            });
            match contents {
                Ok(text) => {
                    let mut text: String = text.chars().take(MAX_FILE_CHARS).collect();
                    if text.len() < std::fs::metadata(&resolved).map_or(0, |meta| meta.len() as usize) {
                        text.push_str("\n… (cut: the file is longer; read it with Read)");
                    }
                    files.push((path.to_owned(), text));
                }
                Err(err) => {
                    self.emit(Event::Info { message: format!("/{command}: @{path} was not included: {err}") });
                }
            }
        }
        files
    }
}
