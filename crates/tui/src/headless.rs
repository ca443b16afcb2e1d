//! Headless mode (`tandem -p`): the same agent as the app, driven by a policy instead of a person.
//!
//! It consumes the agent's events, prints them in the chosen output format, and answers every permission
//! request that the rules left open with a denial (nobody is there to ask). Ctrl-C interrupts the run; a second
//! Ctrl-C exits at once.

use std::io::Write;

use serde_json::Value;
use tandem_core::agent::{self, AgentConfig};
use tandem_core::protocol::{Event, Op, PermissionAnswer, RunOutcome, TurnSummary};

use crate::cli::OutputFormat;
use crate::stream_json;

/// How headless output is printed.
pub struct HeadlessOptions {
    pub format: OutputFormat,
    pub include_partial_messages: bool,
}

/// How long the end of a session may wait for its SessionEnd hooks (each has its own timeout too).
pub(crate) const SESSION_END_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

/// Runs one prompt to its end; returns the process exit code (0 success, 1 error result).
pub async fn run(config: AgentConfig, prompt: String, options: HeadlessOptions) -> i32 {
    let session_id = config.session_id.clone();
    let endpoint = config.provider.endpoint();
    let api_key_source = match (&endpoint.api_key, &endpoint.api_key_env) {
        (Some(_), Some(var)) => var.clone(),
        _ => "none".to_owned(),
    };
    let mut handle = agent::spawn(config);
    let _ = handle.ops.send(Op::UserTurn { text: prompt });

    let interrupt_ops = handle.ops.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            eprintln!("tandem: interrupting (Ctrl-C again to quit now)");
            let _ = interrupt_ops.send(Op::Interrupt);
            if tokio::signal::ctrl_c().await.is_ok() {
                std::process::exit(130);
            }
        }
    });

    let mut printer = Printer { session_id, api_key_source, options, stdout: std::io::stdout() };
    while let Some(event) = handle.events.recv().await {
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
            Event::PermissionRequested { call_id, tool, .. } => {
                let feedback = format!(
                    "Permission to use {tool} was denied: tandem is running non-interactively (-p) and no rule allows this call. The user can allow it with --allowedTools or --permission-mode."
                );
                let answer = PermissionAnswer::Deny { feedback: Some(feedback) };
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

struct Printer {
    session_id: String,
    /// Where the key came from (the variable's name, never its value), for the init line.
    api_key_source: String,
    options: HeadlessOptions,
    stdout: std::io::Stdout,
}

impl Printer {
    fn streaming(&self) -> bool {
        self.options.format == OutputFormat::StreamJson
    }

    fn line(&mut self, value: &Value) {
        let mut out = self.stdout.lock();
        // A closed stdout (e.g. piped into `head`) must not crash the run.
        let _ = serde_json::to_writer(&mut out, value);
        let _ = out.write_all(b"\n");
        let _ = out.flush();
    }

    fn event(&mut self, event: &Event) {
        match event {
            Event::SessionConfigured { model, cwd, tools, permission_mode, slash_commands, skills, .. }
                if self.streaming() =>
            {
                let mut value = stream_json::init(
                    &self.session_id,
                    &cwd.display().to_string(),
                    model,
                    tools,
                    permission_mode.as_str(),
                );
                value["apiKeySource"] = Value::String(self.api_key_source.clone());
                value["slash_commands"] = serde_json::json!(slash_commands);
                value["skills"] = serde_json::json!(skills);
                self.line(&value);
            }
            Event::RawStream(stream_event) if self.streaming() && self.options.include_partial_messages => {
                let value = stream_json::stream_event(&self.session_id, stream_event);
                self.line(&value);
            }
            Event::AssistantMessage(message) if self.streaming() => {
                let value = stream_json::assistant(&self.session_id, message);
                self.line(&value);
            }
            Event::ToolResults(message) if self.streaming() => {
                let value = stream_json::user(&self.session_id, message);
                self.line(&value);
            }
            Event::Retrying { attempt, max_attempts, delay_ms, reason, discarded_partial_output } => {
                let discarded = if *discarded_partial_output { "; partial output discarded" } else { "" };
                eprintln!(
                    "tandem: {reason} — retrying in {:.1}s (attempt {}/{max_attempts}{discarded})",
                    *delay_ms as f64 / 1000.0,
                    attempt + 1
                );
            }
            Event::Subagent { parent_call_id, event } if self.streaming() => {
                let value = match event.as_ref() {
                    Event::AssistantMessage(message) => stream_json::assistant(&self.session_id, message),
                    Event::ToolResults(message) => stream_json::user(&self.session_id, message),
                    _ => return,
                };
                let mut value = value;
                value["parent_tool_use_id"] = Value::String(parent_call_id.clone());
                self.line(&value);
            }
            Event::Error { message } => eprintln!("tandem: error: {message}"),
            Event::Info { message } => eprintln!("tandem: {message}"),
            Event::CompactBoundary { trigger, pre_tokens } if self.streaming() => {
                let value = stream_json::compact_boundary(&self.session_id, *trigger, *pre_tokens);
                self.line(&value);
            }
            _ => {}
        }
    }

    fn finish(&mut self, summary: &TurnSummary) -> i32 {
        match self.options.format {
            OutputFormat::Text => {
                if let Some(text) = &summary.result_text {
                    let mut out = self.stdout.lock();
                    let _ = writeln!(out, "{}", text.trim_end());
                    let _ = out.flush();
                } else if summary.outcome != RunOutcome::ErrorDuringExecution || summary.interrupted {
                    for error in &summary.errors {
                        eprintln!("tandem: {error}");
                    }
                }
            }
            OutputFormat::Json | OutputFormat::StreamJson => {
                let value = stream_json::result(&self.session_id, summary);
                self.line(&value);
            }
        }
        if summary.outcome == RunOutcome::Success { 0 } else { 1 }
    }
}
