//! A session's conversation and the turn loop.

use std::sync::Arc;
use std::time::Instant;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::sampling::{self, SampleError};
use super::tool_calls::ToolRunner;
use super::{AgentConfig, Shared, lock};
use crate::conversation::{ContentBlock, Message, Role, StopReason, Usage};
use crate::protocol::{Event, PermissionDenial, RuleListing, RunOutcome, TurnSummary};
use crate::provider::ModelRequest;
use crate::tools::{FileState, ToolContext};

/// Sent with every user message while plan mode is on.
const PLAN_MODE_NOTE: &str = "<system-reminder>Plan mode is on: you may read and search, and run read-only commands, but \
must not change files or run anything else. Investigate, then present a plan for the user to approve.</system-reminder>";

/// Told to the model at the start of the next turn after an interrupt.
const INTERRUPTED_NOTE: &str =
    "[The user interrupted the previous response; tool calls that did not finish were not run.]";

pub(super) struct Session {
    config: AgentConfig,
    shared: Arc<Shared>,
    events: mpsc::UnboundedSender<Event>,
    messages: Vec<Message>,
    files: Arc<FileState>,
    total_usage: Usage,
    /// Spend so far; `None` once any response came from a model whose price is unknown.
    total_cost: Option<f64>,
    /// The previous turn ended in an interrupt; the model hears about it with the next message.
    interrupted: bool,
}

impl Session {
    pub fn new(config: AgentConfig, shared: Arc<Shared>, events: mpsc::UnboundedSender<Event>) -> Self {
        Session {
            config,
            shared,
            events,
            messages: Vec::new(),
            files: Arc::new(FileState::default()),
            total_usage: Usage::default(),
            total_cost: Some(0.0),
            interrupted: false,
        }
    }

    pub fn announce(&self) {
        let mode = lock(&self.shared.policy).mode;
        self.emit(Event::SessionConfigured {
            session_id: self.config.session_id.clone(),
            provider: self.config.provider.endpoint().name.clone(),
            model: self.config.model.id.clone(),
            cwd: self.config.cwd.clone(),
            tools: self.config.tools.names().into_iter().map(str::to_owned).collect(),
            permission_mode: mode,
        });
        for notice in &self.config.notices {
            self.emit(Event::Info { message: notice.clone() });
        }
    }

    /// Reports the active permission rules (`/permissions`).
    pub fn list_rules(&self) {
        let listing = lock(&self.shared.policy)
            .rules
            .iter()
            .map(|rule| RuleListing {
                text: rule.text.clone(),
                kind: rule.kind,
                scope: rule.scope,
                file: rule.file.clone(),
            })
            .collect();
        self.emit(Event::PermissionRules(listing));
    }

    /// Removes a rule from the session and from its settings file.
    pub fn remove_rule(&self, listing: &RuleListing) {
        {
            let mut policy = lock(&self.shared.policy);
            policy
                .rules
                .retain(|rule| !(rule.text == listing.text && rule.kind == listing.kind && rule.file == listing.file));
        }
        if let Some(file) = &listing.file
            && let Err(problem) = crate::permissions::settings::remove_rule(file, listing.kind, &listing.text)
        {
            self.emit(Event::Error {
                message: format!("Could not remove {} from {}: {problem}", listing.text, file.display()),
            });
        }
        self.list_rules();
    }

    fn emit(&self, event: Event) {
        let _ = self.events.send(event);
    }

    /// Runs one user turn to its end and reports it with `Event::TurnFinished`.
    pub async fn run_turn(&mut self, text: String) {
        let started = Instant::now();
        let cancel = CancellationToken::new();
        *lock(&self.shared.cancel) = cancel.clone();

        let text = if std::mem::take(&mut self.interrupted) { format!("{INTERRUPTED_NOTE}\n\n{text}") } else { text };
        // The model hears about plan mode with the message it applies to (the system prompt stays cacheable).
        let text = if lock(&self.shared.policy).mode == crate::permissions::PermissionMode::Plan {
            format!("{PLAN_MODE_NOTE}\n\n{text}")
        } else {
            text
        };
        self.push_user(vec![ContentBlock::text(text)]);

        let mut rounds = 0u32;
        let mut api_ms = 0u64;
        let mut denials: Vec<PermissionDenial> = Vec::new();
        let mut errors: Vec<String> = Vec::new();
        let mut result_text = None;
        let mut stop_reason: Option<StopReason> = None;

        let outcome = loop {
            if self.config.max_turns.is_some_and(|max| rounds >= max) {
                errors.push(format!("Reached the maximum number of turns ({rounds})."));
                break RunOutcome::ErrorMaxTurns;
            }
            rounds += 1;
            self.emit(Event::RequestStarted { round: rounds });
            let request = self.request();
            let api_started = Instant::now();
            let reply =
                sampling::sample(self.config.provider.as_ref(), &request, &self.config.retry, &cancel, &self.events)
                    .await;
            api_ms += api_started.elapsed().as_millis() as u64;

            let assembled = match reply {
                Ok(assembled) => assembled,
                Err(SampleError::Interrupted { partial }) => {
                    if !partial.is_empty() {
                        self.messages.push(Message { role: Role::Assistant, content: partial });
                    }
                    self.interrupted = true;
                    errors.push("Interrupted by the user.".into());
                    break RunOutcome::ErrorDuringExecution;
                }
                Err(SampleError::Failed(error)) => {
                    let message = error.to_string();
                    self.emit(Event::Error { message: message.clone() });
                    errors.push(message);
                    break RunOutcome::ErrorDuringExecution;
                }
            };

            let usage = assembled.message.usage;
            self.total_usage.accumulate(&usage);
            self.total_cost = self.total_cost.zip(self.config.model.cost(&usage)).map(|(total, cost)| total + cost);
            self.emit(Event::Usage {
                total: self.total_usage,
                last: usage,
                cost_usd: self.cost(),
                context_window: self.config.model.context_window,
            });
            stop_reason = assembled.message.stop_reason.clone();
            if !assembled.message.content.is_empty() {
                self.messages.push(assembled.message.to_message());
            }
            self.emit(Event::AssistantMessage(assembled.message.clone()));

            if assembled.message.tool_uses().next().is_none() {
                result_text = Some(assembled.message.to_message().text());
                break RunOutcome::Success;
            }

            let runner = ToolRunner {
                tools: &self.config.tools,
                shared: &self.shared,
                events: &self.events,
                config_dir: &self.config.config_dir,
                context: ToolContext {
                    cwd: self.config.cwd.clone(),
                    files: self.files.clone(),
                    cancel: cancel.clone(),
                    live_output: None,
                    sandbox: self.config.sandbox.clone(),
                },
            };
            let round = runner.run(&assembled.message, &assembled.invalid_tool_inputs).await;
            denials.extend(round.denials);
            let results = Message { role: Role::User, content: round.results };
            self.emit(Event::ToolResults(results.clone()));
            self.messages.push(results);

            if round.interrupted {
                self.interrupted = true;
                errors.push("Interrupted by the user.".into());
                break RunOutcome::ErrorDuringExecution;
            }
            if let (Some(budget), Some(cost)) = (self.config.max_budget_usd, self.cost())
                && cost >= budget
            {
                errors.push(format!("Reached the maximum budget (${budget:.4}; spent ${cost:.4})."));
                break RunOutcome::ErrorMaxBudgetUsd;
            }
        };

        self.emit(Event::TurnFinished(TurnSummary {
            outcome,
            result_text: if outcome == RunOutcome::Success { result_text } else { None },
            stop_reason,
            num_turns: rounds,
            duration_ms: started.elapsed().as_millis() as u64,
            duration_api_ms: api_ms,
            usage: self.total_usage,
            total_cost_usd: self.cost(),
            permission_denials: denials,
            errors,
        }));
    }

    /// Switches the model for the next requests; a local (free) model stays free.
    pub fn set_model(&mut self, model: &str) {
        let mut info = crate::models::lookup(model);
        if self.config.model.prices == Some(crate::models::Prices::LOCAL) {
            info.prices = Some(crate::models::Prices::LOCAL);
        }
        self.config.model = info;
        self.emit(Event::ModelChanged { model: model.to_owned(), context_window: self.config.model.context_window });
    }

    /// Forgets the conversation (and what was read in it); totals and settings stay.
    pub fn clear(&mut self) {
        self.messages.clear();
        self.files = Arc::new(FileState::default());
        self.interrupted = false;
        self.emit(Event::ConversationCleared);
    }

    /// Appends user content, merging into the last message when it is already the user's (tool results), so
    /// roles keep alternating.
    fn push_user(&mut self, content: Vec<ContentBlock>) {
        match self.messages.last_mut() {
            Some(last) if last.role == Role::User => last.content.extend(content),
            _ => self.messages.push(Message { role: Role::User, content }),
        }
    }

    fn cost(&self) -> Option<f64> {
        self.total_cost
    }

    fn request(&self) -> ModelRequest {
        ModelRequest {
            model: self.config.model.id.clone(),
            system: self.config.system.clone(),
            messages: self.messages.clone(),
            tools: self.config.tools.specs(),
            max_tokens: self.config.model.request_max_tokens(),
            thinking_budget: None,
        }
    }
}
