//! Slash commands typed in the prompt: `/help`, `/clear`, `/compact`, `/model`, `/mode`, `/cost`, `/copy`,
//! `/quit`. The editor's completion popup lists them (`app::editor::SLASH_COMMANDS`).

use std::time::Instant;

use tandem_core::permissions::PermissionMode;
use tandem_core::protocol::Op;

use super::cells::NoticeKind;
use super::{App, Effect};
use crate::ui::status::format_tokens;

impl App {
    /// Runs `/name args` (without the slash).
    pub(crate) fn run_command(&mut self, command: &str, _now: Instant) -> Vec<Effect> {
        let (name, args) = command.trim().split_once(char::is_whitespace).unwrap_or((command.trim(), ""));
        let args = args.trim();
        match name {
            "help" | "?" => {
                self.show_help = true;
                Vec::new()
            }
            "quit" | "exit" | "q" => vec![Effect::Quit],
            "clear" | "reset" | "new" => {
                if self.working {
                    self.status.notice = Some("still working: press esc to interrupt first".into());
                    return Vec::new();
                }
                self.transcript.clear();
                self.printed_cells = 0;
                self.notice(NoticeKind::Info, "Started a new conversation.");
                vec![Effect::Op(Op::ClearConversation)]
            }
            "compact" => {
                if self.working {
                    self.status.notice = Some("still working: press esc to interrupt first".into());
                    return Vec::new();
                }
                self.notice(NoticeKind::Info, "Compacting the conversation…");
                let instructions = (!args.is_empty()).then(|| args.to_owned());
                vec![Effect::Op(Op::Compact { instructions })]
            }
            "model" => {
                if args.is_empty() {
                    let text = format!(
                        "Model: {} ({}, {} token context). Change it with /model NAME, e.g. /model claude-haiku-4-5.",
                        self.status.model,
                        self.status.provider,
                        format_tokens(self.status.context_window)
                    );
                    self.notice(NoticeKind::Info, text);
                    return Vec::new();
                }
                if self.working {
                    self.status.notice = Some("the model changes after this turn".into());
                }
                vec![Effect::Op(Op::SetModel { model: args.to_owned() })]
            }
            "mode" => {
                let mode = if args.is_empty() {
                    match self.status.mode {
                        PermissionMode::Default => PermissionMode::AcceptEdits,
                        PermissionMode::AcceptEdits => PermissionMode::Plan,
                        _ => PermissionMode::Default,
                    }
                } else {
                    match PermissionMode::parse(args) {
                        Some(PermissionMode::BypassPermissions) if !self.bypass_allowed => {
                            self.notice(
                                NoticeKind::Warning,
                                "bypassPermissions can only be chosen at start (--permission-mode bypassPermissions).",
                            );
                            return Vec::new();
                        }
                        Some(mode) => mode,
                        None => {
                            let names: Vec<&str> = PermissionMode::ALL.iter().map(|mode| mode.as_str()).collect();
                            self.notice(
                                NoticeKind::Error,
                                format!("Unknown mode {args:?}: use one of {}.", names.join(", ")),
                            );
                            return Vec::new();
                        }
                    }
                };
                self.status.mode = mode;
                self.notice(NoticeKind::Info, format!("Permission mode: {}", mode.as_str()));
                vec![Effect::Op(Op::SetPermissionMode(mode))]
            }
            "cost" | "usage" => {
                let usage = self.status.usage;
                let cost = match self.status.cost_usd {
                    Some(cost) => format!("${cost:.4}"),
                    None => "unknown (no prices for this model)".to_owned(),
                };
                self.notice(
                    NoticeKind::Info,
                    format!(
                        "Session cost: {cost}\nTokens: {} input, {} output, {} written to cache, {} read from cache",
                        usage.input_tokens,
                        usage.output_tokens,
                        usage.cache_creation_input_tokens,
                        usage.cache_read_input_tokens
                    ),
                );
                Vec::new()
            }
            "copy" => self.copy_last_answer(),
            "permissions" | "allowed-tools" => vec![Effect::Op(Op::ListPermissionRules)],
            other => {
                self.notice(NoticeKind::Error, format!("Unknown command /{other}: type /help for the list."));
                Vec::new()
            }
        }
    }
}
