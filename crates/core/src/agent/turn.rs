//! A session's conversation and the turn loop.

use crate::events::EventSink;
use std::sync::Arc;
use std::time::Instant;

use tokio_util::sync::CancellationToken;

use super::compaction::Compaction;
use super::sampling::{self, SampleError};
use super::tool_calls::{ToolRunner, TurnStop};
use super::{AgentConfig, Shared, lock};
use crate::context::tokens::TokenCounter;
use crate::conversation::{ContentBlock, Message, Role, StopReason, Usage};
use crate::protocol::{Event, PermissionDenial, RunOutcome, TurnSummary};
use crate::provider::ModelRequest;
use crate::tools::{FileState, ToolContext};

/// Tries to make a turn durable before it is reported unsaved.
const SAVE_ATTEMPTS: u32 = 3;
const SAVE_RETRY_PAUSE: std::time::Duration = std::time::Duration::from_millis(100);

/// What the user reads when the transcript can't be written.
pub(super) fn save_failure(log: &crate::session::SessionWriter, err: &std::io::Error) -> String {
    format!(
        "Could not save the session to {}: {err}. What is not saved yet is kept and written as soon as it can be; \
         free some space to keep this conversation.",
        log.path().display()
    )
}

/// The turn's error when the user interrupted it.
const INTERRUPTED_ERROR: &str = "Interrupted by the user.";

pub(super) struct Session {
    pub(super) config: AgentConfig,
    pub(super) shared: Arc<Shared>,
    pub(super) events: EventSink,
    pub(super) messages: Vec<Message>,
    pub(super) files: Arc<FileState>,
    pub(super) total_usage: Usage,
    /// Spend so far; `None` once any response came from a model whose price is unknown.
    pub(super) total_cost: Option<f64>,
    /// Automatic compaction waits until the context is larger than this (after one that could not shrink it).
    pub(super) compaction_floor: u64,
    /// Images to send with the next prompt (after its text).
    pub(super) attachments: Vec<ContentBlock>,
    /// What a resumed session had spent before this run: `--max-budget-usd` counts this run's spending only.
    cost_before_run: f64,
    /// The previous turn ended in an interrupt; the model hears about it with the next message.
    pub(super) interrupted: bool,
    /// Tokens of the context, from reported usage plus an estimate of what was added since.
    pub(super) counter: TokenCounter,
    /// How many messages the last reported usage covered.
    pub(super) reported_len: usize,
    /// Whether the session log has its title yet.
    pub(super) titled: bool,
    /// Turns run so far (the last turn's id).
    turns: u64,
    /// Context from SessionStart hooks, for the next prompt (the hook's event, its text).
    pub(super) hook_context: Vec<(&'static str, String)>,
    /// Runs the Task tool's subagents (sessions that offer Task).
    pub(super) launcher: Option<Arc<super::subagent::Launcher>>,
    /// Set for a subagent: whose interrupt reaches it, what it is, where its transcript is.
    pub(super) parent_cancel: Option<CancellationToken>,
    pub(super) role: Option<super::subagent::SubagentRole>,
    pub(super) subagent_transcript: Option<std::path::PathBuf>,
    /// The session tree's budget: the parent's and every subagent's responses count in it.
    pub(super) shared_budget: Option<Arc<super::subagent::SharedBudget>>,
    /// The checklist front ends were last told about.
    pub(super) todos: Vec<crate::tools::todo_write::TodoItem>,
    /// Commands started with `run_in_background` (killed when the session is dropped).
    background: Arc<crate::tools::bash::background::BackgroundShells>,
    /// The first turn waited for the MCP servers that were starting (later ones don't).
    servers_awaited: bool,
    /// The transcript could not be written the last time it was tried: why (reported once, not per line).
    save_failure: Option<String>,
    /// What tools spent on model requests of their own (WebFetch's reader, WebSearch).
    tool_spend: Arc<crate::spend::ToolSpend>,
    /// Every model request and response, for the API inspector (sessions with a log).
    pub(super) recorder: Option<Arc<crate::inspect::Recorder>>,
    /// The files tools changed, prompt by prompt, for rewind (sessions with a log).
    pub(super) checkpoints: Option<Arc<crate::rewind::Checkpoints>>,
    /// Told to the model with the next prompt (what a rewind did).
    pub(super) pending_notes: Vec<String>,
    /// The prompts in the conversation now, oldest first, by number: the points a rewind can cut the
    /// conversation at (a prompt rewound or compacted away is not here).
    pub(super) live_prompts: Vec<u64>,
    /// A resumed session saved before prompts were logged: its older prompts are found by their text.
    pub(super) untracked_prompts: bool,
    /// The prompts the session log has a line for, those compacted or rewound away included: rewind can read
    /// the conversation as it stood before each back from the log.
    pub(super) logged_prompts: std::collections::HashSet<u64>,
    /// What the next prompt's host calls it ([`crate::protocol::Op::NamePrompt`]).
    pub(super) next_prompt_id: Option<String>,
    /// The directories below the working directory whose guidelines the model was given with a Read.
    pub(super) announced_guidelines: std::sync::Mutex<std::collections::HashSet<std::path::PathBuf>>,
}

impl Session {
    pub(super) fn new(mut config: AgentConfig, shared: Arc<Shared>, events: EventSink) -> Self {
        // A resumed session keeps its totals and title even when its conversation is empty (all of it rewound).
        let resumed = config.resume.is_some();
        let resume = config.resume.take().unwrap_or_default();
        let untracked_prompts = resumed && resume.prompts_unlogged;
        let messages = crate::context::compact::repair_history(resume.messages);
        let interrupted = super::user_message::ends_interrupted(&messages);
        let reported_len = messages.len();
        let launcher = config
            .tools
            .get(crate::tools::task::TASK_TOOL)
            .map(|_| Arc::new(super::subagent::Launcher::new(&config, &shared, &events)));
        let shared_budget = launcher.as_ref().and_then(|launcher| launcher.budget().cloned());
        let background = Arc::new(crate::tools::bash::background::BackgroundShells::new(Some(events.clone())));
        let recorder = shared.recorder.clone();
        Session {
            config,
            shared,
            events,
            messages,
            files: Arc::new(FileState::default()),
            total_usage: resume.usage,
            total_cost: if resumed { resume.cost_usd } else { Some(0.0) },
            attachments: Vec::new(),
            compaction_floor: 0,
            cost_before_run: if resumed { resume.cost_usd.unwrap_or(0.0) } else { 0.0 },
            interrupted,
            counter: TokenCounter::new(),
            reported_len,
            titled: resumed,
            turns: 0,
            hook_context: Vec::new(),
            launcher,
            tool_spend: Arc::default(),
            checkpoints: recorder
                .as_ref()
                .and_then(|recorder| recorder.path().parent().map(crate::rewind::Checkpoints::for_session_dir))
                .map(Arc::new),
            recorder,
            pending_notes: resume.notes,
            live_prompts: resume.prompts,
            untracked_prompts,
            logged_prompts: resume.logged_prompts.into_iter().collect(),
            next_prompt_id: None,
            announced_guidelines: Default::default(),
            parent_cancel: None,
            role: None,
            subagent_transcript: None,
            shared_budget,
            todos: Vec::new(),
            background,
            servers_awaited: false,
            save_failure: None,
        }
    }

    pub(super) fn announce(&mut self) {
        self.announce_session();
        self.report_todos(0);
        for notice in &self.config.notices {
            self.emit(Event::Info { message: notice.clone() });
        }
        self.report_reasoning();
    }

    /// Tells front ends which session this is (at the start, and again after `/clear` made a new one).
    pub(super) fn announce_session(&self) {
        let mode = lock(&self.shared.policy).mode;
        self.emit(Event::SessionConfigured {
            session_id: self.config.session_id.clone(),
            provider: self.config.provider.endpoint().name.clone(),
            model: self.config.model.id.clone(),
            cwd: self.config.cwd.clone(),
            tools: self.config.tools.names(),
            permission_mode: mode,
            slash_commands: crate::commands::headless_builtins()
                .map(|builtin| builtin.name.to_owned())
                .chain(self.config.commands.commands.iter().map(|command| command.name.clone()))
                .chain(self.config.skills.skills.iter().map(|skill| skill.name.clone()))
                .collect(),
            skills: self.config.skills.skills.iter().map(|skill| skill.name.clone()).collect(),
            agents: self.config.agents.agents.iter().map(|agent| agent.name.clone()).collect(),
            mcp_servers: self
                .config
                .mcp
                .iter()
                .flat_map(|manager| manager.statuses())
                .map(|server| (server.name, server.status.as_str().to_owned()))
                .collect(),
        });
    }

    /// Before the session's first request: waits for the MCP servers still starting (up to `MCP_TIMEOUT`), saying
    /// so, so that their tools are in it. An interrupt (Esc) skips the wait, not the turn; servers that did not
    /// connect are named.
    async fn wait_for_starting_servers(&mut self) {
        if std::mem::replace(&mut self.servers_awaited, true) {
            return;
        }
        let Some(manager) = self.config.mcp.clone() else { return };
        let starting = manager.starting();
        if starting == 0 {
            return;
        }
        let skip = CancellationToken::new();
        *lock(&self.shared.cancel) = skip.clone();
        let (servers, their) = if starting == 1 { ("server", "its") } else { ("servers", "their") };
        self.emit(Event::Info { message: format!("Connecting to {starting} MCP {servers}… (Esc skips the wait)") });
        tokio::select! {
            problems = manager.await_start() => {
                for message in problems {
                    self.emit(Event::Error { message });
                }
            }
            () = skip.cancelled() => {
                let message = format!("Not waiting for the MCP {servers}: {their} tools join a later request.");
                self.emit(Event::Info { message });
            }
        }
    }

    pub(super) fn emit(&self, event: Event) {
        let _ = self.events.send(event);
    }

    /// Runs one user turn to its end and reports it with `Event::TurnFinished`.
    #[expect(
        clippy::too_many_lines,
        reason = "the turn loop (prompt hooks, rounds of sampling and tool calls, stop hooks); issue 27 names it for cutting"
    )]
    pub(super) async fn run_turn(&mut self, text: String) {
        let started = Instant::now();
        let prompt_id = self.next_prompt_id.take();
        let turn_id = self.next_turn_id();
        self.emit(Event::TurnStarted { turn_id });
        // An empty prompt (the SDK's `query({prompt: ""})`, to resume a session and rewind it) asks nothing: the
        // API would refuse an empty message, so the turn ends at once.
        if text.trim().is_empty() && self.attachments.is_empty() {
            self.finish_without_model(turn_id, started, Ok(String::new()));
            return;
        }
        self.wait_for_starting_servers().await;
        let cancel = super::subagent::turn_cancel(self.parent_cancel.as_ref());
        *lock(&self.shared.cancel) = cancel.clone();

        let hook_blocks = match self.prompt_hooks(&text, &cancel).await {
            super::session_hooks::PromptVerdict::Send(context) => self.take_hook_context(context),
            super::session_hooks::PromptVerdict::Refused(reason) => {
                let message = format!("A UserPromptSubmit hook refused the prompt: {reason}");
                self.attachments.clear();
                self.emit(Event::PromptRefused { prompt: text });
                self.emit(Event::Error { message: message.clone() });
                self.finish_without_model(turn_id, started, Err(message));
                return;
            }
        };
        self.push_prompt(text, prompt_id.as_deref(), hook_blocks);

        let mut rounds = 0u32;
        let mut api_ms = 0u64;
        let mut denials: Vec<PermissionDenial> = Vec::new();
        let mut errors: Vec<String> = Vec::new();
        // The user stopped the turn (an interrupt), as opposed to its ending on an error.
        let mut stopped_by_user = false;
        let mut result_text = None;
        let mut stop_reason: Option<StopReason> = None;
        let mut stop_continuations = 0u32;
        let mut api_error = None;
        let mut structured_output = None;
        let mut structured_misses = 0u32;
        if let Some(slot) = &self.config.structured_output {
            lock(slot).take();
        }

        // A "prompt is too long" from the server compacts once and tries again (what came of it words the error).
        let mut room_compaction: Option<Compaction> = None;
        let outcome = loop {
            if self.config.max_turns.is_some_and(|max| rounds >= max) {
                // Claude Code's wording and count: the round that would have come next counts as a turn.
                errors.push(format!("Reached maximum number of turns ({rounds})"));
                rounds += 1;
                break RunOutcome::ErrorMaxTurns;
            }
            rounds += 1;
            // MCP servers that are quick to start make it into the request; slow ones join a later one.
            self.config.tools.settle(crate::mcp::manager::FIRST_REQUEST_WAIT).await;
            let mut request = self.request();
            let mut tokens = self.request_tokens(&request);
            if self.needs_compaction(tokens) {
                self.compact(crate::session::CompactTrigger::Auto, None, &cancel).await;
                request = self.request();
                tokens = self.request_tokens(&request);
            }
            self.emit(Event::Context { used: tokens, window: self.config.model.context_window });
            // A reply can only have what the window has left after the request (a small local model's window
            // fills up fast).
            let room = self.config.model.context_window.saturating_sub(tokens).max(MIN_REPLY_TOKENS);
            request.max_tokens = request.max_tokens.min(u32::try_from(room).unwrap_or(u32::MAX));
            let request_chars = TokenCounter::request_chars(&request);
            self.emit(Event::RequestStarted { round: rounds });
            let api_started = Instant::now();
            let reply = sampling::sample(
                self.config.provider.as_ref(),
                &request,
                &self.config.retry,
                &cancel,
                &self.events,
                self.config.raw_stream,
                self.recorder.as_deref().map(|recorder| (recorder, "turn")),
            )
            .await;
            api_ms += api_started.elapsed().as_millis() as u64;

            let assembled = match reply {
                Ok(assembled) => assembled,
                Err(SampleError::Interrupted { partial, usage }) => {
                    // Counted as `/inspect` counts it: the stopped response's input is billed.
                    if usage != Usage::default() {
                        self.pay_for(usage);
                    }
                    if !partial.is_empty() {
                        self.push_message(Message { role: Role::Assistant, content: partial });
                    }
                    self.interrupted = true;
                    stopped_by_user = true;
                    errors.push(INTERRUPTED_ERROR.into());
                    break RunOutcome::ErrorDuringExecution;
                }
                Err(SampleError::Failed(error)) if self.should_fall_back(&error) => {
                    let fallback = self.config.fallback_model.take().unwrap_or_default();
                    let message = format!(
                        "{} is unavailable ({error}); switching to the fallback model {fallback}",
                        self.config.model.id
                    );
                    self.emit(Event::Info { message });
                    self.set_model(&fallback);
                    rounds -= 1;
                    continue;
                }
                Err(SampleError::Failed(error)) => {
                    if error.is_prompt_too_long() && room_compaction.is_none() {
                        self.emit(Event::Info {
                            message: format!(
                                "The conversation no longer fits the model's context window ({error}); compacting it \
                                 and trying again."
                            ),
                        });
                        let compaction = self.compact(crate::session::CompactTrigger::Auto, None, &cancel).await;
                        if compaction == Compaction::Done {
                            room_compaction = Some(compaction);
                            rounds -= 1;
                            continue;
                        }
                        room_compaction = Some(compaction);
                    }
                    let mut message = error.to_string();
                    match &room_compaction {
                        Some(Compaction::Done) if error.is_prompt_too_long() => {
                            message.push_str(" (still too long after compacting: /clear starts afresh)");
                        }
                        Some(_) if error.is_prompt_too_long() => {
                            message.push_str(" (compacting could not make it smaller: /clear starts afresh)");
                        }
                        _ => {}
                    }
                    self.emit(Event::Error { message: message.clone() });
                    api_error = Some(crate::protocol::ApiFailure {
                        status: error.http_status(),
                        error_type: error.error_type(),
                        message: message.clone(),
                    });
                    errors.push(message);
                    break RunOutcome::ErrorDuringExecution;
                }
            };

            let usage = assembled.message.usage;
            self.pay_for(usage);
            self.counter.record_usage(request_chars, &usage);
            stop_reason = assembled.message.stop_reason.clone();
            if !assembled.message.content.is_empty() {
                self.push_message(assembled.message.to_message());
            }
            self.emit(Event::AssistantMessage(assembled.message.clone()));

            self.reported_len = self.messages.len();
            if assembled.message.tool_uses().next().is_none() {
                if let Some(instruction) = self.stop_hooks(stop_continuations, &cancel).await {
                    stop_continuations += 1;
                    self.push_user(vec![ContentBlock::text(format!("Stop hook feedback:\n{instruction}"))]);
                    continue;
                }
                // `--json-schema`: an answer in prose is not the answer; the model is reminded, a few times.
                if self.config.structured_output.is_some() {
                    structured_misses += 1;
                    if structured_misses > crate::tools::structured_output::MAX_RETRIES {
                        errors.push(structured_failure(structured_misses));
                        break RunOutcome::ErrorMaxStructuredOutputRetries;
                    }
                    self.push_user(vec![ContentBlock::text(crate::tools::structured_output::REMINDER)]);
                    continue;
                }
                result_text = Some(assembled.message.to_message().text());
                break RunOutcome::Success;
            }

            let (hidden, unreadable) = {
                let policy = lock(&self.shared.policy);
                (policy.walk_hidden(), policy.never_readable())
            };
            let runner = ToolRunner {
                hooks: &self.config.hooks,
                hook_base: self.hook_base(),
                stopped: std::sync::Mutex::new(None),
                tools: &self.config.tools,
                shared: &self.shared,
                events: &self.events,
                config_dir: &self.config.config_dir,
                guidelines: Some(super::nested_guidelines::NestedGuidelines {
                    sources: self.config.guideline_sources,
                    announced: &self.announced_guidelines,
                }),
                context: ToolContext {
                    cwd: self.config.cwd.clone(),
                    files: self.files.clone(),
                    cancel: cancel.clone(),
                    live_output: None,
                    hidden: Some(hidden),
                    unreadable: Some(unreadable),
                    judged_path: None,
                    output_dir: self.config.session_log.as_ref().map(|log| log.path().with_extension("")),
                    sandbox: None,
                    confinement: self.config.sandbox.clone(),
                    shell_env: self.config.shell_env.clone(),
                    subagents: self
                        .launcher
                        .clone()
                        .map(|launcher| launcher as Arc<dyn crate::tools::task::SubagentLauncher>),
                    call_id: None,
                    background: self.background.clone(),
                    spend: self.tool_spend.clone(),
                    recorder: self.recorder.clone(),
                    checkpoints: self.checkpoints.clone(),
                },
            };

            let round = runner.run(&assembled.message, &assembled.invalid_tool_inputs).await;
            denials.extend(round.denials);
            if let Some(launcher) = &self.launcher {
                denials.extend(launcher.take_denials());
                let (usage, cost) = launcher.take_spent();
                self.total_usage.accumulate(&usage);
                self.total_cost = self.total_cost.zip(cost).map(|(total, cost)| total + cost);
            }
            self.count_tool_spend();
            let results = Message { role: Role::User, content: round.results };
            self.emit(Event::ToolResults(results.clone()));
            self.push_message(results);
            // What the edits applied, so that a resumed session shows their diffs as a live one does.
            for (call_id, change) in round.applied {
                self.log(&crate::session::SessionLine::Applied { call_id, change });
            }
            // Only this round's call and results can have changed the list.
            self.report_todos(self.messages.len().saturating_sub(2));
            if let Some(slot) = &self.config.structured_output {
                if let Some(accepted) = lock(slot).take() {
                    result_text = Some(accepted.to_string());
                    structured_output = Some(accepted);
                    stop_reason = Some(StopReason::EndTurn);
                    break RunOutcome::Success;
                }
                let tried = assembled
                    .message
                    .tool_uses()
                    .any(|(_, name, _)| name == crate::tools::structured_output::STRUCTURED_OUTPUT);
                if tried {
                    structured_misses += 1;
                    if structured_misses > crate::tools::structured_output::MAX_RETRIES {
                        errors.push(structured_failure(structured_misses));
                        break RunOutcome::ErrorMaxStructuredOutputRetries;
                    }
                }
            }

            match round.stopped {
                Some(TurnStop::Hook(reason)) => {
                    let message = format!("A hook stopped the turn: {reason}");
                    self.emit(Event::Info { message: message.clone() });
                    errors.push(message);
                    break RunOutcome::ErrorDuringExecution;
                }
                Some(TurnStop::Declined) if !round.interrupted => {
                    let message = "You declined, so the turn stopped · tell the model what to do instead".into();
                    self.emit(Event::Info { message });
                    stop_reason = Some(StopReason::EndTurn);
                    break RunOutcome::Success;
                }
                _ => {}
            }
            if round.interrupted {
                self.interrupted = true;
                stopped_by_user = true;
                errors.push(INTERRUPTED_ERROR.into());
                break RunOutcome::ErrorDuringExecution;
            }
            if let Some(spent) = self.shared_budget.as_ref().and_then(|budget| budget.exhausted())
                && self.role.is_some()
            {
                let max = self.shared_budget.as_ref().map_or(0.0, |budget| budget.max);
                errors
                    .push(format!("Reached the maximum budget (${max:.4}; spent ${spent:.4} with the other agents)."));
                break RunOutcome::ErrorMaxBudgetUsd;
            }
            if let (Some(budget), Some(cost)) = (self.config.max_budget_usd, self.cost())
                && cost - self.cost_before_run >= budget
            {
                let cost = cost - self.cost_before_run;
                errors.push(format!("Reached the maximum budget (${budget:.4}; spent ${cost:.4} in this run)."));
                break RunOutcome::ErrorMaxBudgetUsd;
            }
        };

        let unsaved = self.save_turn().await;
        self.emit(Event::TurnFinished(TurnSummary {
            turn_id,
            outcome,
            result_text: if outcome == RunOutcome::Success { result_text } else { None },
            stop_reason,
            num_turns: rounds,
            duration_ms: started.elapsed().as_millis() as u64,
            duration_api_ms: api_ms,
            usage: self.total_usage,
            total_cost_usd: self.cost(),
            permission_denials: denials,
            interrupted: stopped_by_user,
            errors,
            api_error,
            structured_output: if outcome == RunOutcome::Success { structured_output } else { None },
            unsaved,
        }));
    }

    /// `/bashes kill ID`: the user stops a background command.
    pub(super) fn kill_background(&self, id: &str) {
        match self.background.kill(id) {
            Ok(message) => self.emit(Event::Info { message }),
            Err(message) => self.emit(Event::Error { message }),
        }
    }

    pub(super) fn todos(&self) -> &[crate::tools::todo_write::TodoItem] {
        &self.todos
    }

    /// Tells front ends the checklist when a TodoWrite call changed it (a compacted conversation has no calls
    /// left: the list stays as it was).
    /// `from` is the first message that may hold a new TodoWrite call.
    pub(super) fn report_todos(&mut self, from: usize) {
        let recent = &self.messages[from.min(self.messages.len())..];
        let Some(todos) = crate::tools::todo_write::current_todos(recent) else { return };
        self.set_todos(todos);
    }

    /// The checklist is now `todos`; front ends are told when it changed.
    pub(super) fn set_todos(&mut self, todos: Vec<crate::tools::todo_write::TodoItem>) {
        if todos != self.todos {
            self.todos = todos.clone();
            self.emit(Event::Todos(todos));
        }
    }

    /// Puts `messages` in place of the conversation (compacted, rewound, cleared). The last reported size was
    /// the old conversation's, so the next request is estimated whole (a conversation cut short is not
    /// compacted for what it no longer holds).
    pub(super) fn replace_conversation(&mut self, messages: Vec<Message>) {
        self.messages = messages;
        // The Read results that carried a directory's guidelines may be gone: the next Read there brings them.
        lock(&self.announced_guidelines).clear();
        self.reported_len = self.messages.len();
        self.counter.reset_baseline();
    }

    pub(super) fn next_turn_id(&mut self) -> u64 {
        self.turns += 1;
        self.turns
    }

    /// Appends user content, merging into the last message when it is already the user's (tool results), so
    /// roles keep alternating.
    pub(super) fn push_user(&mut self, content: Vec<ContentBlock>) {
        self.log_message(&Message { role: Role::User, content: content.clone() });
        match self.messages.last_mut() {
            Some(last) if last.role == Role::User => last.content.extend(content),
            _ => self.messages.push(Message { role: Role::User, content }),
        }
    }

    /// Appends a message to the conversation and the session log.
    fn push_message(&mut self, message: Message) {
        self.log_message(&message);
        self.messages.push(message);
    }

    fn log_message(&mut self, message: &Message) {
        if let Some(log) = &mut self.config.session_log
            && let Err(err) = log.append_message(message).and_then(|()| log.write_through())
        {
            tracing::warn!("could not append to the session log: {err}");
        }
    }

    pub(super) fn log(&mut self, line: &crate::session::SessionLine) {
        let failed = match &mut self.config.session_log {
            Some(log) => log.append(line).err().map(|err| save_failure(log, &err)),
            None => None,
        };
        if let Some(message) = failed {
            self.report_save_failure(message);
        }
    }

    /// Says at once that the transcript can't be written (once until it can again): what is not written yet is
    /// kept and written with the next line that can be.
    pub(super) fn report_save_failure(&mut self, message: String) {
        tracing::warn!("{message}");
        if self.save_failure.is_none() {
            self.emit(Event::Error { message: message.clone() });
        }
        self.save_failure = Some(message);
    }

    /// Makes the turn durable, trying again a few times before saying it could not: why, when it could not.
    async fn save_turn(&mut self) -> Option<String> {
        for attempt in 0..SAVE_ATTEMPTS {
            let failed = match &mut self.config.session_log {
                Some(log) => log.flush().err().map(|err| save_failure(log, &err)),
                None => None,
            };
            match failed {
                None => {
                    self.save_failure = None;
                    return None;
                }
                Some(message) if attempt + 1 == SAVE_ATTEMPTS => {
                    self.report_save_failure(message.clone());
                    return Some(message);
                }
                Some(_) => tokio::time::sleep(SAVE_RETRY_PAUSE).await,
            }
        }
        None
    }

    /// Makes the turn durable: a crash after this loses nothing of it.
    pub(super) fn flush_log(&mut self) {
        let failed = match &mut self.config.session_log {
            Some(log) => log.flush().err().map(|err| save_failure(log, &err)),
            None => None,
        };
        match failed {
            Some(message) => self.report_save_failure(message),
            None => self.save_failure = None,
        }
    }

    /// Adds what tools spent on requests of their own to the session's totals, its log and its budget.
    fn count_tool_spend(&mut self) {
        let spent = self.tool_spend.take();
        if spent.is_empty() {
            return;
        }
        let (mut usage, mut cost) = (Usage::default(), Some(0.0));
        for (model, spend) in spent {
            usage.accumulate(&spend.usage);
            cost = cost.zip(spend.cost).map(|(total, cost)| total + cost);
            self.emit(Event::ToolSpend {
                model,
                usage: spend.usage,
                cost_usd: spend.cost,
                web_searches: spend.web_searches,
            });
        }
        self.total_usage.accumulate(&usage);
        self.total_cost = self.total_cost.zip(cost).map(|(total, cost)| total + cost);
        if let (Some(budget), Some(cost)) = (&self.shared_budget, cost) {
            budget.add(cost);
        }
        self.log(&crate::session::SessionLine::Usage { usage, cost_usd: cost, at: crate::session::now_secs() });
    }

    pub(super) fn cost(&self) -> Option<f64> {
        self.total_cost
    }

    /// Adds a response's usage to the session's totals, the shared budget and the log, and tells the front end.
    pub(super) fn pay_for(&mut self, usage: Usage) {
        self.total_usage.accumulate(&usage);
        let response_cost = self.config.model.cost(&usage);
        if let (Some(budget), Some(cost)) = (&self.shared_budget, response_cost) {
            budget.add(cost);
        }
        self.total_cost = self.total_cost.zip(response_cost).map(|(total, cost)| total + cost);
        self.log(&crate::session::SessionLine::Usage {
            usage,
            cost_usd: response_cost,
            at: crate::session::now_secs(),
        });
        self.emit(Event::Usage {
            total: self.total_usage,
            last: usage,
            cost_usd: self.cost(),
            context_window: self.config.model.context_window,
        });
    }

    /// The next request. Guidelines (CLAUDE.md, AGENTS.md) and the memory index are re-read every time, so an
    /// edit takes effect on the next request; they form the last system block, after the fixed base prompt and
    /// the environment, so the prefix before them stays byte-identical (prompt caching).
    pub(super) fn request(&self) -> ModelRequest {
        let mut system = self.config.system.clone();
        let context = self.context_block();
        if !context.is_empty() {
            system.push(crate::provider::SystemBlock { text: context, cache: true });
        }
        let tools = self.config.tools.specs();
        let (reasoning, _) = self.request_reasoning(!tools.is_empty());
        let mut max_tokens = self.config.model.request_max_tokens();
        if let Some(least) = reasoning.min_max_tokens {
            max_tokens = max_tokens.max(least).min(self.config.model.max_output_tokens.max(1) as u32);
        }
        ModelRequest {
            model: self.config.model.id.clone(),
            system,
            messages: self.messages.clone(),
            tools,
            max_tokens,
            reasoning,
            betas: self.config.betas.clone(),
        }
    }
}

/// Why a `--json-schema` run failed.
fn structured_failure(attempts: u32) -> String {
    format!("Failed to provide valid structured output after {attempts} attempts")
}

/// The least `max_tokens` asked for, even when the estimate says the window is (nearly) full.
const MIN_REPLY_TOKENS: u64 = 256;
