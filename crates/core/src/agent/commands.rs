//! A prompt that is a slash command: a custom command (`.claude/commands/`) runs its expanded prompt with its
//! `allowed-tools` and `model` for that turn; the built-ins that make sense without the app (`/compact`,
//! `/clear`, `/model NAME`) run as they do there, so headless and SDK prompts can use them. Front ends that
//! have their own commands handle those before sending.

use std::time::Instant;

use super::compaction::Compaction;
use super::lock;
use super::turn::Session;
use crate::commands::{CustomCommand, Reach, find_builtin, headless_builtins, parse_invocation};
use crate::permissions::{RuleKind, Scope};
use crate::protocol::{Event, RunOutcome};

impl Session {
    /// Runs what the user submitted: a slash command, or a prompt.
    #[expect(clippy::too_many_lines, reason = "one match over the built-in commands a prompt can run")]
    pub(super) async fn run_input(&mut self, text: String) {
        let Some((name, args)) = parse_invocation(&text) else {
            let text = self.attach_mcp_resources(text).await;
            return self.run_turn(text).await;
        };
        let (name, args) = (name.to_owned(), args.to_owned());
        if name.starts_with("mcp__") && self.run_mcp_prompt(&name, &args).await {
            return;
        }
        let started = Instant::now();
        let builtin = find_builtin(&name);
        let canonical = builtin.filter(|builtin| builtin.reach == Reach::Everywhere).map_or(name.as_str(), |b| b.name);
        match canonical {
            "compact" => {
                let turn_id = self.begin_builtin();
                let result = match self.compact_now((!args.is_empty()).then_some(args)).await {
                    Compaction::Done => Ok("Compacted the conversation.".to_owned()),
                    Compaction::NotWorthIt(reason) => Ok(reason),
                    Compaction::Failed(reason) => Err(reason),
                    Compaction::Interrupted => Err("The compaction was interrupted.".to_owned()),
                };
                self.finish_without_model(turn_id, started, result);
            }
            "clear" => {
                let turn_id = self.begin_builtin();
                self.clear_with_hooks().await;
                self.finish_without_model(turn_id, started, Ok("Started a new conversation.".into()));
            }
            "model" if !args.is_empty() => {
                let turn_id = self.begin_builtin();
                self.set_model(&args);
                self.finish_without_model(turn_id, started, Ok(format!("The model is now {args}.")));
            }
            "model" => {
                let turn_id = self.begin_builtin();
                let now = format!("The model is {}. Switch with /model NAME.", self.config.model.id);
                self.finish_without_model(turn_id, started, Ok(now));
            }
            "effort" => {
                let turn_id = self.begin_builtin();
                let words: Vec<&str> = crate::reasoning::Effort::ALL.iter().map(|effort| effort.as_str()).collect();
                let result = match args.trim() {
                    "" => {
                        let now = self.config.reasoning.effort.map_or("the model's default", |effort| effort.as_str());
                        Ok(format!("Effort: {now}. Set it with /effort {} or /effort auto.", words.join("|")))
                    }
                    "auto" | "default" => {
                        self.set_effort(None);
                        Ok("Effort: the model's default.".to_owned())
                    }
                    text => match crate::reasoning::Effort::parse(text) {
                        Some(effort) => {
                            self.set_effort(Some(effort));
                            Ok(format!("Effort: {}.", effort.as_str()))
                        }
                        None => Err(format!("/effort {text}: use one of {} or auto", words.join(", "))),
                    },
                };
                if let Err(why) = &result {
                    self.emit(Event::Error { message: why.clone() });
                }
                self.finish_without_model(turn_id, started, result);
            }
            "init" => self.run_turn(crate::prompt::INIT_PROMPT.to_owned()).await,
            "cost" => {
                let turn_id = self.begin_builtin();
                let cost =
                    self.cost().map_or("unknown (no prices for this model)".to_owned(), |cost| format!("${cost:.4}"));
                let usage = self.total_usage;
                let text = format!(
                    "Session cost: {cost}. Tokens: {} input, {} output, {} written to cache, {} read from cache.",
                    usage.input_tokens,
                    usage.output_tokens,
                    usage.cache_creation_input_tokens,
                    usage.cache_read_input_tokens
                );
                self.finish_without_model(turn_id, started, Ok(text));
            }
            "hooks" => {
                let turn_id = self.begin_builtin();
                self.finish_without_model(turn_id, started, Ok(self.hooks_listing()));
            }
            "help" => {
                let turn_id = self.begin_builtin();
                let mut names: Vec<String> =
                    headless_builtins().map(|builtin| format!("/{} — {}", builtin.name, builtin.description)).collect();
                names.extend(
                    self.config
                        .commands
                        .commands
                        .iter()
                        .map(|command| format!("/{} — {}", command.name, command.description)),
                );
                names.extend(
                    self.config
                        .skills
                        .skills
                        .iter()
                        .map(|skill| format!("/{} — {} (skill)", skill.name, skill.description)),
                );
                self.finish_without_model(turn_id, started, Ok(format!("Commands here:\n{}", names.join("\n"))));
            }
            _ => match self.config.commands.find(&name).cloned() {
                Some(command) => self.run_command(&command, &args).await,
                // A skill is a command too (Claude Code's `/skill-name`): its instructions, then the request.
                None if self.config.skills.find(&name).is_some() => {
                    let prompt = format!(
                        "Load the skill {name} with the Skill tool and follow it.{}",
                        if args.is_empty() { String::new() } else { format!("\n\nARGUMENTS: {args}") }
                    );
                    self.run_turn(prompt).await;
                }
                None => {
                    let turn_id = self.begin_builtin();
                    let why = if builtin.is_some_and(|builtin| builtin.reach == Reach::App) {
                        format!("/{name} is a command of the full-screen app; it does nothing here.")
                    } else {
                        format!(
                            "Unknown command /{name}: custom commands are Markdown files in .claude/commands/ (or ~/.claude/commands/)."
                        )
                    };
                    self.emit(Event::Error { message: why.clone() });
                    self.finish_without_model(turn_id, started, Err(why));
                }
            },
        }
    }

    /// A custom command's turn: its prompt, with its rules and model for this turn only.
    async fn run_command(&mut self, command: &CustomCommand, args: &str) {
        for rule in &command.allowed_tools {
            if let Err(problem) = lock(&self.shared.policy).add_rule(RuleKind::Allow, rule, Scope::Command) {
                self.emit(Event::Error {
                    message: format!("/{}: allowed-tools {rule:?} is not a rule ({problem}); not added", command.name),
                });
            }
        }
        let previous = command.model.as_ref().map(|model| {
            let mut info = crate::models::lookup(model);
            if self.config.model.prices == Some(crate::models::Prices::LOCAL) {
                info.prices = Some(crate::models::Prices::LOCAL);
            }
            std::mem::replace(&mut self.config.model, info)
        });
        let prompt = self.command_prompt(command, args).await;
        self.run_turn(prompt).await;
        if let Some(previous) = previous {
            self.config.model = previous;
        }
        lock(&self.shared.policy).rules.retain(|rule| rule.scope != Scope::Command);
    }

    fn begin_builtin(&mut self) -> u64 {
        let turn_id = self.next_turn_id();
        self.emit(Event::TurnStarted { turn_id });
        turn_id
    }

    /// Ends a turn that sent nothing to the model: a built-in command's (with what it did) or a refused one.
    pub(super) fn finish_without_model(&mut self, turn_id: u64, started: Instant, result: Result<String, String>) {
        let (outcome, result_text, errors) = match result {
            Ok(text) => (RunOutcome::Success, Some(text), Vec::new()),
            Err(error) => (RunOutcome::ErrorDuringExecution, None, vec![error]),
        };
        self.emit(Event::TurnFinished(crate::protocol::TurnSummary {
            turn_id,
            outcome,
            result_text,
            stop_reason: None,
            num_turns: 0,
            duration_ms: started.elapsed().as_millis() as u64,
            duration_api_ms: 0,
            usage: self.total_usage,
            total_cost_usd: self.cost(),
            permission_denials: Vec::new(),
            interrupted: false,
            api_error: None,
            structured_output: None,
            errors,
            unsaved: None,
        }));
    }
}
