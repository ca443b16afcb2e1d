//! Slash commands typed in the prompt: `/help`, `/clear`, `/compact`, `/model`, `/mode`, `/cost`, `/copy`,
//! `/quit`. The editor's completion popup lists them (`app::editor::SLASH_COMMANDS`).

use std::time::Instant;

use tandem_core::permissions::PermissionMode;
use tandem_protocol::Op;

use super::cells::NoticeKind;
use super::editor::SlashCommand;
use super::{App, Effect};

impl App {
    /// The saved memories arrived (`/memory`, read by the runtime from core's memory module): the list, or
    /// the N-th topic opened in `$EDITOR` when one was named.
    pub(crate) fn show_memories(
        &mut self,
        topics: Vec<tandem_core::memory::MemoryTopic>,
        open: Option<usize>,
    ) -> Vec<Effect> {
        if topics.is_empty() {
            self.notice(
                NoticeKind::Info,
                "No memories yet. The model saves them with SaveMemory (project: .tandem/memory/, user: your config directory).",
            );
            return Vec::new();
        }
        if let Some(topic) = open.and_then(|number| topics.get(number.wrapping_sub(1))) {
            return vec![Effect::EditFile { path: topic.path.clone() }];
        }
        let list: Vec<String> =
            topics.iter().enumerate().map(|(index, topic)| format!("{:>2}. {}", index + 1, topic.line)).collect();
        self.notice(NoticeKind::Info, format!("Memory (open one with /memory N):\n{}", list.join("\n")));
        Vec::new()
    }

    /// The modes `/mode NAME` accepts here (bypass only when the session started in it), comma-separated.
    fn mode_names(&self) -> String {
        let names: Vec<&str> = PermissionMode::ALL
            .iter()
            .filter(|mode| self.bypass_allowed || **mode != PermissionMode::BypassPermissions)
            .map(|mode| mode.as_str())
            .collect();
        names.join(", ")
    }

    /// Runs `/name args` (without the slash).
    #[expect(clippy::too_many_lines, reason = "one match over the app's slash commands")]
    pub(crate) fn run_command(&mut self, command: &str, now: Instant) -> Vec<Effect> {
        let (name, args) = command.trim().split_once(char::is_whitespace).unwrap_or((command.trim(), ""));
        let args = args.trim();
        let name = tandem_core::commands::find_builtin(name).map_or(name, |builtin| builtin.name);
        match name {
            "help" => {
                self.show_help = true;
                Vec::new()
            }
            "quit" => vec![Effect::Quit],
            "clear" => {
                if self.working {
                    self.flash("still working: press esc to interrupt first");
                    self.editor.set_text(&format!("/{}", command.trim()));
                    return Vec::new();
                }
                self.transcript.clear();
                self.printed_cells = 0;
                self.notice(NoticeKind::Info, "Started a new conversation.");
                vec![Effect::Op(Op::ClearConversation)]
            }
            "compact" => {
                if self.working {
                    self.flash("still working: press esc to interrupt first");
                    self.editor.set_text(&format!("/{}", command.trim()));
                    return Vec::new();
                }
                // The status line says it is compacting; the transcript gets what came of it (the marker, or why not).
                let instructions = (!args.is_empty()).then(|| args.to_owned());
                vec![Effect::Op(Op::Compact { instructions })]
            }
            "model" => {
                if args.is_empty() {
                    self.open_model_picker();
                    return Vec::new();
                }
                if self.working {
                    self.flash("the model changes after this turn");
                }
                vec![Effect::Op(Op::SetModel { model: args.to_owned() })]
            }
            "mode" => {
                let mode = if args.is_empty() {
                    self.notice(
                        NoticeKind::Info,
                        format!(
                            "Permission mode: {}. Change it with /mode NAME ({}) or shift+tab.",
                            self.status.mode.as_str(),
                            self.mode_names()
                        ),
                    );
                    return Vec::new();
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
                            self.notice(
                                NoticeKind::Error,
                                format!("Unknown mode {args:?}: use one of {}.", self.mode_names()),
                            );
                            return Vec::new();
                        }
                    }
                };
                self.status.mode = mode;
                self.notice(NoticeKind::Info, format!("Permission mode: {}", mode.as_str()));
                vec![Effect::Op(Op::SetPermissionMode(mode))]
            }
            "effort" => {
                let words: Vec<&str> =
                    tandem_core::reasoning::Effort::ALL.iter().map(|effort| effort.as_str()).collect();
                match args {
                    "" => {
                        self.notice(
                            NoticeKind::Info,
                            format!(
                                "Set how hard the model thinks: /effort {} (auto: the model's default)",
                                words.join("|")
                            ),
                        );
                        Vec::new()
                    }
                    "auto" | "default" => vec![Effect::Op(Op::SetEffort(None))],
                    text => match tandem_core::reasoning::Effort::parse(text) {
                        Some(effort) => vec![Effect::Op(Op::SetEffort(Some(effort)))],
                        None => {
                            self.notice(
                                NoticeKind::Error,
                                format!("/effort {text}: use one of {} or auto", words.join(", ")),
                            );
                            Vec::new()
                        }
                    },
                }
            }
            "cost" => {
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
            "init" => {
                if self.working {
                    self.flash("still working: press esc to interrupt first");
                    self.editor.set_text(&format!("/{}", command.trim()));
                    return Vec::new();
                }
                self.submit(tandem_core::prompt::INIT_PROMPT.to_owned(), now)
            }
            "memory" => vec![Effect::ListMemories { open: args.parse().ok() }],
            "resume" => {
                if self.working {
                    self.flash("still working: press esc to interrupt first");
                    self.editor.set_text(&format!("/{}", command.trim()));
                    return Vec::new();
                }
                vec![Effect::ListSessions]
            }
            "permissions" | "allowed-tools" => match args {
                "" => vec![Effect::Op(Op::ListPermissionRules)],
                "trust" => vec![Effect::Op(Op::TrustHeldSettings)],
                other => {
                    self.notice(
                        NoticeKind::Error,
                        format!("Unknown /permissions argument {other:?}: use /permissions or /permissions trust."),
                    );
                    Vec::new()
                }
            },
            "mcp" => self.open_mcp_view(),
            "sandbox" => {
                self.notice(NoticeKind::Info, self.sandbox_description.clone());
                Vec::new()
            }
            "inspect" => self.open_inspector(),
            "rewind" => self.open_rewind(),
            "bashes" if args.starts_with("kill") => {
                let id = args.trim_start_matches("kill").trim();
                if id.is_empty() {
                    self.notice(NoticeKind::Error, "Say which: /bashes kill bash_1 (/bashes lists them).");
                    return Vec::new();
                }
                vec![Effect::Op(Op::KillBackground { id: id.to_owned() })]
            }
            "bashes" => {
                let list: Vec<String> = self
                    .background
                    .iter()
                    .map(|task| {
                        let state = if task.running { "running" } else { "finished" };
                        format!("{}  {state}  {}", task.id, task.command)
                    })
                    .collect();
                let text = if list.is_empty() {
                    "No background commands. The model starts them with Bash run_in_background; they are killed when the session ends.".to_owned()
                } else {
                    format!(
                        "Background commands (the model reads them with BashOutput; /bashes kill ID stops one):\n{}",
                        list.join("\n")
                    )
                };
                self.notice(NoticeKind::Info, text);
                Vec::new()
            }
            "hooks" => match args {
                "" => vec![Effect::Op(Op::ListHooks)],
                "trust" => vec![Effect::Op(Op::TrustProjectHooks)],
                other => {
                    self.notice(
                        NoticeKind::Error,
                        format!("Unknown /hooks argument {other:?}: use /hooks or /hooks trust."),
                    );
                    Vec::new()
                }
            },
            other
                if self
                    .editor
                    .custom_commands()
                    .iter()
                    .any(|command| command.name.strip_prefix('/') == Some(other)) =>
            {
                if self.working {
                    self.flash("still working: press esc to interrupt first");
                    self.editor.set_text(&format!("/{}", command.trim()));
                    return Vec::new();
                }
                // Core expands it (the same way for headless prompts); the transcript shows what was typed.
                self.send_prompt(format!("/{}", command.trim()), now)
            }
            other => {
                self.notice(NoticeKind::Error, format!("Unknown command /{other}: type /help for the list."));
                Vec::new()
            }
        }
    }

    /// The custom commands of the session (`.claude/commands/`), for the prompt's popup, `/help` and dispatch.
    pub(crate) fn set_custom_commands(
        &mut self,
        catalog: &tandem_core::commands::CommandCatalog,
        skills: &tandem_core::skills::SkillCatalog,
    ) {
        let mut entries: Vec<SlashCommand> = catalog
            .commands
            .iter()
            .map(|command| {
                let hint = command.argument_hint.as_deref().map(|hint| format!("{hint} · ")).unwrap_or_default();
                SlashCommand {
                    name: format!("/{}", command.name).into(),
                    description: format!("{hint}{} ({})", command.description, command.scope).into(),
                }
            })
            .collect();
        // A skill runs as `/name` too, unless a command has its name.
        for skill in &skills.skills {
            if catalog.find(&skill.name).is_some() {
                continue;
            }
            entries.push(SlashCommand {
                name: format!("/{}", skill.name).into(),
                description: format!("{} (skill)", skill.description).into(),
            });
        }
        self.editor.set_custom_commands(entries);
    }
}
