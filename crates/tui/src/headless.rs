//! Headless mode (`tandem -p`): the same agent as the app, driven by a policy instead of a person.
//!
//! It consumes the agent's events, prints them in the chosen output format, and answers every permission
//! request that the rules left open with a denial (nobody is there to ask). Ctrl-C interrupts the run; a second
//! Ctrl-C exits at once.

use std::io::Write;

use serde_json::Value;
use tandem_core::agent::{self, AgentConfig};
use tandem_protocol::{Event, EventMsg, Op, PermissionAnswer, RunOutcome, TurnSummary};

use crate::cli::OutputFormat;
use crate::stream_json;

/// How headless output is printed.
pub struct HeadlessOptions {
    pub format: OutputFormat,
    pub include_partial_messages: bool,
    /// stream-json: print `hook_started` / `hook_response` frames.
    pub include_hook_events: bool,
}

/// How long the end of a session may wait for its SessionEnd hooks (each has its own timeout too).
pub(crate) const SESSION_END_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

/// SIGTERM or SIGHUP (a supervisor, an SDK host aborting, a closed terminal) ends tandem at once, and with it
/// every command it is running — foreground, background, hooks — and their process groups; protected entries
/// a command changed are put back first. The exit code says which signal (128 + its number), as a shell would.
pub(crate) fn end_on_terminate() {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut hup)) = (signal(SignalKind::terminate()), signal(SignalKind::hangup())) else {
        eprintln!("tandem: warning: cannot watch for SIGTERM and SIGHUP; commands may outlive tandem if it is killed");
        return;
    };
    tokio::spawn(async move {
        let (name, code) = tokio::select! {
            _ = term.recv() => ("SIGTERM", 143),
            _ = hup.recv() => ("SIGHUP", 129),
        };
        let ended = tandem_core::shutdown::end_everything();
        if ended > 0 {
            eprintln!("tandem: {name}: ended {ended} running command{}", if ended == 1 { "" } else { "s" });
        }
        std::process::exit(code);
    });
}

/// Waits for the session's MCP servers to connect (all at once, up to `MCP_TIMEOUT`) before the prompt given at
/// start is sent, as Claude Code does: the first request has their tools and `init` says where each stands.
/// Those that did not connect are named on stderr.
pub(crate) async fn await_mcp_servers(config: &AgentConfig) {
    let Some(manager) = &config.mcp else { return };
    for problem in manager.await_start().await {
        eprintln!("tandem: warning: {problem}");
    }
}

/// Runs one prompt to its end; returns the process exit code (0 success, 1 error result).
pub async fn run(config: AgentConfig, prompt: String, options: HeadlessOptions) -> i32 {
    let session_id = config.session_id.clone();
    let api_key_source = api_key_source(&config);
    end_on_terminate();
    await_mcp_servers(&config).await;
    let mut handle = agent::spawn(config);
    let _ = handle.ops.send(Op::UserTurn { text: prompt });

    let interrupt_ops = handle.ops.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            eprintln!("tandem: interrupting (Ctrl-C again to quit now)");
            let _ = interrupt_ops.send(Op::Interrupt);
            if tokio::signal::ctrl_c().await.is_ok() {
                tandem_core::shutdown::end_everything();
                std::process::exit(130);
            }
        }
    });

    let mut printer = Printer::new(session_id, api_key_source, options, Output::stdout());
    while let Some(EventMsg { event, .. }) = handle.events.recv().await {
        match event {
            Event::PermissionRequested { call_id, tool, .. }
                if tool == tandem_core::tools::ask_user::ASK_USER_QUESTION
                    || tool == tandem_core::tools::ask_user::EXIT_PLAN_MODE =>
            {
                let feedback = if tool == tandem_core::tools::ask_user::EXIT_PLAN_MODE {
                    "Nobody can approve a plan here: tandem is running non-interactively (-p), so plan mode stays on. Give the plan as your answer.".to_owned()
                } else {
                    "AskUserQuestion is not available: tandem is running non-interactively (-p), so nobody can answer. Decide yourself and say what you assumed.".to_owned()
                };
                let answer = PermissionAnswer::Deny { feedback: Some(feedback) };
                let _ = handle.ops.send(Op::PermissionAnswer { call_id, answer });
            }
            Event::PermissionRequested { call_id, tool, suggested_rule, .. } => {
                let answer = PermissionAnswer::Reject { message: non_interactive_denial(&tool, &suggested_rule) };
                let _ = handle.ops.send(Op::PermissionAnswer { call_id, answer });
            }
            Event::TurnFinished(summary) => {
                let code = printer.finish(&summary);
                let _ = handle.ops.send(Op::Shutdown);
                // The session ends with its SessionEnd hooks; later events are only their reports.
                drop(handle.events);
                let _ = tokio::time::timeout(SESSION_END_WAIT, handle.task).await;
                return code;
            }
            event => printer.event(&event),
        }
    }
    eprintln!("tandem: error: the agent stopped unexpectedly");
    1
}

/// Where the key came from, for init lines: the variable's name (never its value), or `none`.
pub(crate) fn api_key_source(config: &AgentConfig) -> String {
    let endpoint = config.provider.endpoint();
    match (&endpoint.api_key, &endpoint.api_key_env) {
        (Some(_), Some(var)) => var.clone(),
        _ => "none".to_owned(),
    }
}

/// What the model is told when a call needs a person and none is there: what happened and how to allow it.
pub(crate) fn non_interactive_denial(tool: &str, suggested_rule: &str) -> String {
    let rule = suggested_rule.split(", ").next().filter(|rule| !rule.is_empty()).unwrap_or(tool);
    format!(
        "{tool} was not run: it is not allowed by the permission rules, and tandem is running non-interactively, so nobody could be asked. The user can allow it with --allowedTools '{rule}', a rule in settings, or --permission-mode."
    )
}

/// A call's `tool_use_result`: the tool's structured result, else its text (`Error: …` for a failure, as Claude
/// Code writes it).
fn tool_use_result(content: &str, is_error: bool, structured: &Option<Value>) -> Value {
    match structured {
        Some(structured) if !is_error => structured.clone(),
        _ if is_error => Value::String(format!("Error: {content}")),
        _ => Value::String(content.to_owned()),
    }
}

/// Standard output for NDJSON frames, for everything that writes them: each frame is written under stdout's own
/// lock, so lines from different tasks never interleave.
#[derive(Clone, Copy)]
pub(crate) struct Output;

impl Output {
    pub(crate) fn stdout() -> Self {
        Output
    }

    /// Writes one frame as one flushed line. A closed stdout (e.g. piped into `head`) must not crash the run.
    pub(crate) fn line(&self, value: &Value) {
        let mut out = std::io::stdout().lock();
        let _ = serde_json::to_writer(&mut out, value);
        let _ = out.write_all(b"\n");
        let _ = out.flush();
    }

    /// Writes plain text (text output mode).
    pub(crate) fn text(&self, text: &str) {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{text}");
        let _ = out.flush();
    }
}

/// What one model cost in this session, for the result's `modelUsage`.
#[derive(Clone, Debug, Default)]
pub(crate) struct ModelTally {
    pub usage: tandem_protocol::conversation::Usage,
    pub cost_usd: f64,
    /// Some of its usage had no price.
    pub cost_unknown: bool,
    pub context_window: u64,
    pub web_searches: u64,
}

pub(crate) struct Printer {
    pub(crate) session_id: String,
    /// Where the key came from (the variable's name, never its value), for the init line.
    api_key_source: String,
    options: HeadlessOptions,
    out: Output,
    /// The last init line, printed again at every turn in streaming-input mode.
    pub(crate) init: Option<Value>,
    /// The model in use, and what each model of the session used.
    model: String,
    /// The model the session started with: an SDK host's `set_model` without a model goes back to it.
    default_model: String,
    model_usage: std::collections::BTreeMap<String, ModelTally>,
    last_cost: Option<f64>,
    /// How full the context is, for `get_context_usage`.
    pub(crate) context: (u64, u64),
    /// Finished calls' `tool_use_result`s, until their results are printed.
    tool_results: std::collections::HashMap<String, Value>,
    /// The mode a host set since the session announced itself (the announcement may predate it).
    mode: Option<tandem_core::permissions::PermissionMode>,
    /// Print the init line when the session is configured (`-p`); streaming input prints it per turn instead.
    pub(crate) init_at_start: bool,
}

impl Printer {
    pub(crate) fn new(session_id: String, api_key_source: String, options: HeadlessOptions, out: Output) -> Self {
        Printer {
            session_id,
            api_key_source,
            options,
            out,
            init: None,
            model: String::new(),
            default_model: String::new(),
            model_usage: Default::default(),
            last_cost: Some(0.0),
            context: (0, 0),
            tool_results: Default::default(),
            mode: None,
            init_at_start: true,
        }
    }

    fn streaming(&self) -> bool {
        self.options.format == OutputFormat::StreamJson
    }

    pub(crate) fn line(&mut self, value: &Value) {
        self.out.line(value);
    }

    pub(crate) fn model(&self) -> &str {
        &self.model
    }

    pub(crate) fn default_model(&self) -> &str {
        &self.default_model
    }

    /// The session's permission mode changed: later init lines say so.
    pub(crate) fn set_mode(&mut self, mode: tandem_core::permissions::PermissionMode) {
        self.mode = Some(mode);
        if let Some(init) = &mut self.init {
            init["permissionMode"] = Value::String(mode.as_str().to_owned());
        }
    }

    #[expect(clippy::too_many_lines, reason = "one match over the protocol's events, as stream-json prints them")]
    pub(crate) fn event(&mut self, event: &Event) {
        match event {
            Event::SessionConfigured {
                model,
                cwd,
                tools,
                permission_mode,
                slash_commands,
                skills,
                agents,
                mcp_servers,
                ..
            } => {
                self.model = model.clone();
                if self.default_model.is_empty() {
                    self.default_model = model.clone();
                }
                let mut value = stream_json::init(
                    &self.session_id,
                    &cwd.display().to_string(),
                    model,
                    tools,
                    self.mode.unwrap_or(*permission_mode).as_str(),
                );
                value["apiKeySource"] = Value::String(self.api_key_source.clone());
                value["slash_commands"] = serde_json::json!(slash_commands);
                value["skills"] = serde_json::json!(skills);
                value["agents"] = serde_json::json!(agents);
                value["mcp_servers"] = mcp_servers
                    .iter()
                    .map(|(name, status)| serde_json::json!({"name": name, "status": status}))
                    .collect();
                if self.streaming() && self.init_at_start {
                    self.line(&value);
                }
                self.init = Some(value);
            }
            Event::ModelChanged { model, .. } => {
                self.model = model.clone();
                if let Some(init) = &mut self.init {
                    init["model"] = Value::String(model.clone());
                }
            }
            Event::Usage { last, cost_usd, context_window, .. } => {
                let tally = self.model_usage.entry(self.model.clone()).or_default();
                tally.usage.accumulate(last);
                tally.context_window = *context_window;
                match (cost_usd, self.last_cost) {
                    (Some(now), Some(before)) => tally.cost_usd += (now - before).max(0.0),
                    _ => tally.cost_unknown = true,
                }
                self.last_cost = *cost_usd;
            }
            Event::ToolSpend { model, usage, cost_usd, web_searches } => {
                let tally = self.model_usage.entry(model.clone()).or_default();
                tally.usage.accumulate(usage);
                tally.web_searches += web_searches;
                match cost_usd {
                    Some(cost) => tally.cost_usd += cost,
                    None => tally.cost_unknown = true,
                }
                // The session's next total includes it: the conversation's model is not charged for it.
                self.last_cost = self.last_cost.zip(*cost_usd).map(|(before, cost)| before + cost);
            }
            Event::Context { used, window } => self.context = (*used, *window),
            Event::HookStarted { .. } | Event::HookFinished { .. }
                if self.streaming() && self.options.include_hook_events =>
            {
                if let Some(value) = stream_json::hook_event(&self.session_id, event) {
                    self.line(&value);
                }
            }
            Event::RawStream(stream_event) if self.streaming() && self.options.include_partial_messages => {
                let value = stream_json::stream_event(&self.session_id, stream_event);
                self.line(&value);
            }
            Event::AssistantMessage(message) if self.streaming() => {
                let value = stream_json::assistant(&self.session_id, message);
                self.line(&value);
            }
            Event::ToolCallFinished { call_id, content, is_error, structured, .. } if self.streaming() => {
                self.tool_results.insert(call_id.clone(), tool_use_result(content, *is_error, structured));
            }
            Event::ToolResults(message) if self.streaming() => {
                for value in stream_json::users(&self.session_id, message, &mut self.tool_results) {
                    self.line(&value);
                }
            }
            Event::Retrying { attempt, max_attempts, delay_ms, reason, discarded_partial_output, status } => {
                if self.streaming() {
                    let value =
                        stream_json::api_retry(&self.session_id, *attempt, *max_attempts, *delay_ms, *status, reason);
                    self.line(&value);
                }
                let discarded = if *discarded_partial_output { "; partial output discarded" } else { "" };
                eprintln!(
                    "tandem: {reason} — retrying in {:.1}s (attempt {}/{max_attempts}{discarded})",
                    *delay_ms as f64 / 1000.0,
                    attempt + 1
                );
            }
            Event::Subagent { parent_call_id, event } if self.streaming() => {
                let values = match event.as_ref() {
                    Event::AssistantMessage(message) => vec![stream_json::assistant(&self.session_id, message)],
                    Event::ToolCallFinished { call_id, content, is_error, structured, .. } => {
                        self.tool_results.insert(call_id.clone(), tool_use_result(content, *is_error, structured));
                        return;
                    }
                    Event::ToolResults(message) => {
                        stream_json::users(&self.session_id, message, &mut self.tool_results)
                    }
                    _ => return,
                };
                for mut value in values {
                    value["parent_tool_use_id"] = Value::String(parent_call_id.clone());
                    self.line(&value);
                }
            }
            Event::Error { message } => eprintln!("tandem: error: {message}"),
            Event::Info { message } => eprintln!("tandem: {message}"),
            Event::CompactBoundary { trigger, pre_tokens, .. } if self.streaming() => {
                let value = stream_json::compact_boundary(&self.session_id, *trigger, *pre_tokens);
                self.line(&value);
            }
            _ => {}
        }
    }

    pub(crate) fn finish(&mut self, summary: &TurnSummary) -> i32 {
        match self.options.format {
            OutputFormat::Text => {
                if let Some(text) = &summary.result_text {
                    self.out.text(text.trim_end());
                } else if summary.outcome != RunOutcome::ErrorDuringExecution || summary.interrupted {
                    for error in &summary.errors {
                        eprintln!("tandem: {error}");
                    }
                }
                if summary.stop_reason == Some(tandem_protocol::conversation::StopReason::MaxTokens) {
                    eprintln!("tandem: warning: the answer was cut off at the model's output limit (max_tokens)");
                }
            }
            OutputFormat::Json | OutputFormat::StreamJson => {
                if self.streaming()
                    && let Some(failure) = &summary.api_error
                {
                    let value = stream_json::api_error_message(&self.session_id, failure);
                    self.line(&value);
                }
                let value = stream_json::result(&self.session_id, summary, &self.model_usage_value());
                self.line(&value);
            }
        }
        // An unsaved transcript was said on stderr when it happened.
        if summary.outcome == RunOutcome::Success && summary.unsaved.is_none() { 0 } else { 1 }
    }

    /// `modelUsage`: per model, tokens, cost (0 and `costUnknown` when its prices are unknown) and limits.
    fn model_usage_value(&self) -> Value {
        let mut map = serde_json::Map::new();
        for (model, tally) in &self.model_usage {
            let info = tandem_core::models::lookup(model);
            let mut entry = serde_json::json!({
                "inputTokens": tally.usage.input_tokens,
                "outputTokens": tally.usage.output_tokens,
                "cacheReadInputTokens": tally.usage.cache_read_input_tokens,
                "cacheCreationInputTokens": tally.usage.cache_creation_input_tokens,
                "webSearchRequests": tally.web_searches,
                "costUSD": tally.cost_usd,
                "contextWindow": if tally.context_window > 0 { tally.context_window } else { info.context_window },
                "maxOutputTokens": info.max_output_tokens,
            });
            if tally.cost_unknown {
                entry["costUnknown"] = Value::Bool(true);
            }
            map.insert(model.clone(), entry);
        }
        Value::Object(map)
    }
}
