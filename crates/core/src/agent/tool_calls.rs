//! Running the tool calls of one assistant message.
//!
//! Each call is validated, checked against the permission policy (asking the front end when needed), run, and
//! answered with exactly one `tool_result`, in the model's order. Consecutive read-only calls run concurrently;
//! a mutating call runs alone. After an interrupt, calls that did not run are answered "not run".

use crate::events::EventSink;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Map, Value};
use tokio::sync::mpsc;

use super::tool_hooks::suggestions;
use super::{Shared, lock};
use crate::conversation::{AssistantMessage, ContentBlock, StopReason, ToolInput};
use crate::diff;
use crate::hooks::{HookBase, HookEngine, HookEvent, Verdict};
use crate::permissions::PermissionMode;
use crate::permissions::{Decision, hook_verdicts};
use crate::protocol::{Event, PermissionDenial, ToolCallStatus};
use crate::sandbox::Grant;
use crate::tools::write::WriteTool;
use crate::tools::{FileAccess, Tool, ToolContext, ToolKind, ToolOutput, ToolRegistry};

mod ask;

/// What running one message's tool calls produced.
pub(super) struct ToolRound {
    /// One `tool_result` per `tool_use`, in order.
    pub results: Vec<ContentBlock>,
    pub denials: Vec<PermissionDenial>,
    pub interrupted: bool,
    /// Why the turn ends after this round, if it does.
    pub stopped: Option<TurnStop>,
    /// (call id, change) of each call that changed a file ([`crate::diff::applied_change`]), for the session log.
    pub applied: Vec<(String, serde_json::Value)>,
}

/// Why a turn ends after the round of tool calls it is in; the calls after the one that stopped it are not run.
#[derive(Clone, Debug)]
pub(super) enum TurnStop {
    /// A hook said `"continue": false`, for this reason.
    Hook(String),
    /// The user said no to a call without a reason: the turn waits for them.
    Declined,
}

/// What a turn's tool calls run with.
pub(super) struct ToolRunner<'a> {
    pub hooks: &'a Arc<HookEngine>,
    pub hook_base: HookBase,
    /// Set by a hook that stops the turn, or by the user declining a call.
    pub stopped: std::sync::Mutex<Option<TurnStop>>,
    pub tools: &'a ToolRegistry,
    pub shared: &'a Arc<Shared>,
    pub events: &'a EventSink,
    pub context: ToolContext,
    /// Where "always, everywhere" answers are saved.
    pub config_dir: &'a std::path::Path,
    /// Adds the guidelines of a directory below the working directory to the first Read there (`None`: never).
    pub guidelines: Option<super::nested_guidelines::NestedGuidelines<'a>>,
}

pub(super) struct Call {
    pub(super) id: String,
    pub(super) name: String,
    pub(super) input: ToolInput,
    /// Why the streamed input could not be used, if it couldn't.
    invalid_input: Option<String>,
}

enum Prepared {
    /// Run the tool with this input (a PreToolUse hook may have changed the model's), then add `notes` (hook
    /// context) to its result.
    Ready {
        tool: Arc<dyn Tool>,
        input: ToolInput,
        notes: Vec<String>,
        /// Why it runs: the sandbox holds a Bash command to it.
        grant: Grant,
    },
    /// The user allowed an Edit/Write with content of their own (some hunks, or edited in $EDITOR).
    Modified {
        /// The call's input as it was asked about (a PreToolUse hook may have changed the model's).
        input: ToolInput,
        content: String,
        note: String,
    },
    Finished {
        output: ToolOutput,
        status: ToolCallStatus,
    },
}

impl ToolRunner<'_> {
    pub(super) async fn run(&self, message: &AssistantMessage, invalid_inputs: &[(String, String)]) -> ToolRound {
        let truncated = message.stop_reason == Some(StopReason::MaxTokens);
        let calls: Vec<Call> = message
            .tool_uses()
            .map(|(id, name, input)| Call {
                id: id.to_owned(),
                name: name.to_owned(),
                input: input.clone(),
                invalid_input: invalid_inputs
                    .iter()
                    .find(|(bad, _)| bad == id)
                    .map(|(_, why)| invalid_input_message(why, truncated)),
            })
            .collect();
        let mut round = ToolRound {
            results: Vec::with_capacity(calls.len()),
            denials: Vec::new(),
            interrupted: false,
            stopped: None,
            applied: Vec::new(),
        };
        let mut images = Vec::new();

        let mut index = 0;
        while index < calls.len() {
            let read_only = |call: &Call| self.tools.get(&call.name).is_some_and(|tool| tool.is_read_only());
            let group_end = if read_only(&calls[index]) {
                index + calls[index..].iter().take_while(|call| read_only(call)).count()
            } else {
                index + 1
            };
            let group = &calls[index..group_end];
            index = group_end;

            let mut prepared = Vec::with_capacity(group.len());
            for call in group {
                let display = self.tools.describe(&call.name, &call.input, &self.context);
                let _ = self.events.send(Event::ToolCallStarted {
                    call_id: call.id.clone(),
                    name: call.name.clone(),
                    input: call.input.clone(),
                    display,
                });
                let step = if self.context.cancel.is_cancelled() {
                    not_run()
                } else if let Some(stop) = lock(&self.stopped).clone() {
                    not_run_after(stop)
                } else {
                    self.prepare(call, &mut round.denials).await
                };
                prepared.push(step);
            }
            let outputs =
                futures::future::join_all(group.iter().zip(prepared).map(|(call, step)| self.execute(call, step)))
                    .await;
            for (call, (mut output, status, duration_ms)) in group.iter().zip(outputs) {
                round.interrupted |= status == ToolCallStatus::Interrupted;
                // Every result reaches the model within one bound, whatever tool, hook or error made it.
                let keep_in = self.context.output_dir.as_deref();
                output.content = crate::context::bound::for_model(output.content, keep_in, &call.id);
                // From the text the model gets, as a resumed session will have it.
                let view = match output.is_error {
                    true => None,
                    false => self.tools.result_view(&call.name, &call.input, &output.content),
                };
                let _ = self.events.send(Event::ToolCallFinished {
                    call_id: call.id.clone(),
                    content: output.content.clone(),
                    is_error: output.is_error,
                    status,
                    duration_ms: Some(duration_ms),
                    structured: output.structured.clone(),
                    view,
                });
                if let Some(change) =
                    output.structured.as_ref().filter(|_| !output.is_error).and_then(crate::diff::applied_change)
                {
                    round.applied.push((call.id.clone(), change));
                }
                let attached = output.images.take().map(|list| *list).unwrap_or_default();
                images.extend(attached.into_iter().map(|source| ContentBlock::Image { source }));
                round.results.push(ContentBlock::ToolResult {
                    tool_use_id: call.id.clone(),
                    content: output.content,
                    is_error: output.is_error,
                });
            }
        }
        // Images go after every result: the results must come first in the message.
        round.results.extend(images);
        round.interrupted |= self.context.cancel.is_cancelled();
        round.stopped = lock(&self.stopped).take();
        round
    }

    /// Validation, the PreToolUse hooks and the permission decision; asks the front end (after the
    /// PermissionRequest hooks) when the policy says so.
    #[expect(
        clippy::too_many_lines,
        reason = "a call's preparation (input, hooks, decision, sandbox grant) in order; the hook part is where to cut it"
    )]
    async fn prepare(&self, call: &Call, denials: &mut Vec<PermissionDenial>) -> Prepared {
        if let Some(message) = &call.invalid_input {
            return failed(message.clone());
        }
        // A tool of an MCP server still starting: wait for the server rather than call the tool unknown.
        if call.name.starts_with(crate::mcp::tool::PREFIX) && self.tools.get(&call.name).is_none() {
            self.tools.settle(crate::mcp::manager::DEFAULT_STARTUP_TIMEOUT).await;
        }
        let mut tool = match self.tools.prepare(&call.name, &call.input) {
            Ok(tool) => tool,
            Err(output) => return Prepared::Finished { output, status: ToolCallStatus::Failed },
        };
        let mut input = call.input.clone();
        let mut notes = Vec::new();
        let mut verdict = None;
        if self.hooks.has(HookEvent::PreToolUse) {
            let outcome = self.fire(HookEvent::PreToolUse, call, &input, Map::new()).await;
            if self.context.cancel.is_cancelled() {
                return not_run();
            }
            if let Some(reason) = outcome.stop {
                *lock(&self.stopped) = Some(TurnStop::Hook(reason.clone()));
                return deny(
                    call,
                    format!("{} was not run: a PreToolUse hook stopped the turn ({reason}).", call.name),
                    denials,
                );
            }
            if let Some(reason) = outcome.blocked {
                return deny(call, format!("A PreToolUse hook blocked this {} call: {reason}", call.name), denials);
            }
            if let Some(updated) = outcome.updated_input {
                match self.tools.prepare(&call.name, &updated) {
                    Ok(updated_tool) => {
                        tool = updated_tool;
                        input = updated.into();
                    }
                    Err(output) => {
                        return failed(format!(
                            "A PreToolUse hook changed the input into one that is not valid: {}",
                            output.content
                        ));
                    }
                }
            }
            notes = outcome.context;
            verdict = outcome.verdict;
        }
        let (judged, mode) = match self.judge(tool.as_ref(), &input) {
            Ok(judged) => judged,
            Err(message) => return failed(message),
        };
        let (decision, grant) = hook_verdicts::after_pre_tool_use(&call.name, judged, verdict, mode);
        match decision {
            Decision::Allow => {
                // Allowed without a dialog (a rule, acceptEdits): front ends still show the diff it applies.
                // The preview reads files: off the async workers, and given up on an interrupt.
                if !tool.is_read_only() {
                    let (previewer, preview_input, context) = (tool.clone(), input.clone(), self.context.clone());
                    let preview = tokio::select! {
                        _ = self.context.cancel.cancelled() => None,
                        preview = tokio::task::spawn_blocking(move || previewer.preview(&preview_input, &context)) => {
                            preview.ok()
                        }
                    };
                    if let Some(Ok(Some(preview @ crate::tools::Preview::Diff { .. }))) = preview {
                        let _ = self.events.send(Event::ToolCallPreview { call_id: call.id.clone(), preview });
                    }
                }
                Prepared::Ready { tool, input, notes, grant }
            }
            Decision::Deny { reason } => deny(call, reason, denials),
            Decision::Ask { suggested_rule, reason } => {
                if self.hooks.has(HookEvent::PermissionRequest) {
                    let mut fields = Map::new();
                    fields.insert("permission_suggestions".into(), suggestions(&call.name, &suggested_rule));
                    let outcome = self.fire(HookEvent::PermissionRequest, call, &input, fields).await;
                    if self.context.cancel.is_cancelled() {
                        return not_run();
                    }
                    if let Some(reason) = outcome.blocked {
                        return deny(
                            call,
                            format!("A PermissionRequest hook denied this {} call: {reason}", call.name),
                            denials,
                        );
                    }
                    match outcome.verdict {
                        Some((Verdict::Allow, _)) => {
                            // The hook's input is judged like the model's: it runs only if the policy would let
                            // a hook allow it, and otherwise comes to the dialog (or is denied).
                            let updated = outcome.updated_input.map(ToolInput::new).unwrap_or_else(|| input.clone());
                            let tool = match self.tools.prepare(&call.name, &updated) {
                                Ok(tool) => tool,
                                Err(output) => return Prepared::Finished { output, status: ToolCallStatus::Failed },
                            };
                            let (judged, mode) = match self.judge(tool.as_ref(), &updated) {
                                Ok(judged) => judged,
                                Err(message) => return failed(message),
                            };
                            return match hook_verdicts::after_permission_request_allow(judged, mode) {
                                (Decision::Allow, grant) => Prepared::Ready { tool, input: updated, notes, grant },
                                (Decision::Deny { reason }, _) => deny(call, reason, denials),
                                (Decision::Ask { suggested_rule, reason }, _) => {
                                    self.notify_permission_prompt(&call.name);
                                    self.ask(call, tool, updated, notes, suggested_rule, reason, denials).await
                                }
                            };
                        }
                        Some((Verdict::Deny, message)) => {
                            if outcome.interrupt {
                                self.context.cancel.cancel();
                            }
                            let message = if message.is_empty() { "no reason given".to_owned() } else { message };
                            return deny(
                                call,
                                format!("A PermissionRequest hook denied this {} call: {message}", call.name),
                                denials,
                            );
                        }
                        _ => {}
                    }
                }
                self.notify_permission_prompt(&call.name);
                self.ask(call, tool, input, notes, suggested_rule, reason, denials).await
            }
        }
    }

    /// The policy's decision and grant for `input`, with the session's mode; a plan approval outside plan mode is
    /// an error, not a permission matter.
    fn judge(&self, tool: &dyn Tool, input: &Value) -> Result<((Decision, Grant), PermissionMode), String> {
        let (judged, mode) = {
            let policy = lock(&self.shared.policy);
            (policy.decide_with_grant(tool, input), policy.mode)
        };
        plan_approval_in_mode(tool, &judged.0, mode)?;
        Ok((judged, mode))
    }

    /// A file call nobody approved is judged again just before it runs: its path was resolved when the message's
    /// calls were judged, and a command running meanwhile (in the background) may have put a link in the way
    /// since. Judged on its path resolved now, which is what the tool then writes (`ToolContext::judged_path`: a
    /// link put in the way after this fails the write). Refused (the output says why) when it would no longer
    /// run unasked: denied now, or asking for a reason (outside the workspace, protected, unresolvable) — an
    /// ordinary question may be a hook's to answer.
    fn judged_again(&self, tool: &dyn Tool, input: &Value, grant: Grant) -> Result<Option<PathBuf>, ToolOutput> {
        if grant == Grant::Approved {
            return Ok(None);
        }
        let crate::tools::Subject::File(access) = tool.permission_subject(input, &self.context.cwd) else {
            return Ok(None);
        };
        let policy = lock(&self.shared.policy);
        let resolved = access.path.as_deref().and_then(|path| policy.workspace.resolve_strict(path));
        // A file's path, or a search's root (Grep checks that what it opens lies beneath the root so judged).
        let names_a_path = ["file_path", "path"].into_iter().any(|field| input.get(field).is_some());
        let judged = FileAccess { path: resolved.as_ref().map(|path| path.display().to_string()), ..access };
        let why = match policy.decide_file_access(tool, &judged) {
            Decision::Deny { reason } => reason,
            Decision::Ask { reason: Some(reason), .. } => reason,
            Decision::Allow | Decision::Ask { reason: None, .. } => return Ok(resolved.filter(|_| names_a_path)),
        };
        Err(ToolOutput::error(format!(
            "{} was not run: what its path leads to changed since the call was judged ({why}).",
            tool.name()
        )))
    }

    /// Runs a prepared call, streaming its live output; returns the output, its status and duration.
    async fn execute(&self, call: &Call, step: Prepared) -> (ToolOutput, ToolCallStatus, u64) {
        let started = Instant::now();
        let (tool, input, notes, grant, judged_path) = match step {
            Prepared::Finished { output, status } => return (output, status, 0),
            Prepared::Ready { tool, input, notes, grant } => match self.judged_again(tool.as_ref(), &input, grant) {
                Ok(judged) => (tool, input, notes, grant, judged),
                Err(output) => return (output, ToolCallStatus::Failed, 0),
            },
            Prepared::Modified { input, content, note } => {
                // The file the call changes, whatever its tool calls the field (Edit's file_path, NotebookEdit's
                // notebook_path).
                let target = self.tools.get(&call.name).and_then(|tool| tool.target_path(&input, &self.context));
                let output = write_modified(target, content, &note, &self.context).await;
                let status = if output.is_error { ToolCallStatus::Failed } else { ToolCallStatus::Completed };
                return (output, status, started.elapsed().as_millis() as u64);
            }
        };
        let (live_tx, mut live_rx) = mpsc::unbounded_channel::<String>();
        let mut context = self.context.clone();
        // Each call runs in the sandbox its grant calls for (a Bash command; other tools ignore it).
        context.sandbox = self.context.confinement.as_ref().and_then(|confinement| confinement.policy_for(grant));
        context.live_output = Some(live_tx);
        context.call_id = Some(call.id.clone());
        context.judged_path = judged_path;
        let events = self.events.clone();
        let call_id = call.id.clone();
        let forward = tokio::spawn(async move {
            while let Some(chunk) = live_rx.recv().await {
                let _ = events.send(Event::ToolCallOutput { call_id: call_id.clone(), chunk });
            }
        });
        let mut output = run_until_interrupted(tool.run(input.clone(), &context), &self.context.cancel).await;
        drop(context);
        let _ = forward.await;
        for note in notes {
            output.content.push_str(&format!("\n\nPreToolUse hook additional context: {note}"));
        }
        if !self.context.cancel.is_cancelled() {
            self.add_nested_guidelines(call, &input, &mut output);
            self.after_run(call, &input, &mut output).await;
        }
        let status = if self.context.cancel.is_cancelled() {
            ToolCallStatus::Interrupted
        } else if output.is_error {
            ToolCallStatus::Failed
        } else {
            ToolCallStatus::Completed
        };
        (output, status, started.elapsed().as_millis() as u64)
    }
}

/// Writes the user's version of a proposed Edit/Write and tells the model exactly what changed on disk.
async fn write_modified(target: Option<PathBuf>, content: String, note: &str, context: &ToolContext) -> ToolOutput {
    let Some(resolved) = target else {
        return ToolOutput::error("The user's modified content could not be written: the call names no file.");
    };
    let before = std::fs::read_to_string(&resolved).unwrap_or_default();
    let input = serde_json::json!({ "file_path": resolved.display().to_string(), "content": content });
    let written = WriteTool.run(input.into(), context).await;
    if written.is_error {
        return ToolOutput::error(format!("{note}\n\nBut writing the user's version failed: {}", written.content));
    }
    let label = crate::tools::display_path(&resolved, &context.cwd);
    let applied = diff::unified_diff(&label, &before, &content, diff::DEFAULT_CONTEXT);
    let applied = if applied.is_empty() { "(no change: the file is as it was)".to_owned() } else { applied };
    ToolOutput::ok(format!(
        "{note}\n\nThe user's version was written to {label}. This is the change that was really applied, so the file's current state is the old content with exactly this diff:\n{applied}"
    ))
}

/// ExitPlanMode makes sense only in plan mode: elsewhere a call that was not denied fails (it is not a
/// permission matter).
fn plan_approval_in_mode(tool: &dyn Tool, decision: &Decision, mode: PermissionMode) -> Result<(), String> {
    let denied = matches!(decision, Decision::Deny { .. });
    if tool.kind() == ToolKind::Plan && mode != PermissionMode::Plan && !denied {
        return Err("ExitPlanMode is for plan mode, and plan mode is not on: go ahead without it.".to_owned());
    }
    Ok(())
}

/// The result of a call after the one that stopped the turn, in the same reply.
fn not_run_after(stop: TurnStop) -> Prepared {
    match stop {
        TurnStop::Hook(reason) => failed(format!("Not run: a hook stopped the turn ({reason}).")),
        TurnStop::Declined => Prepared::Finished {
            output: ToolOutput::error("Not run: the user declined an earlier call of this reply and stopped the turn."),
            status: ToolCallStatus::Denied,
        },
    }
}

fn failed(message: String) -> Prepared {
    Prepared::Finished { output: ToolOutput::error(message), status: ToolCallStatus::Failed }
}

/// How long a tool has, after an interrupt, to end on its own (Bash kills its command and keeps what it
/// printed) before the call is abandoned.
const INTERRUPT_GRACE: Duration = Duration::from_millis(80);

/// `run`, given up a moment after the user interrupts: a tool blocked in a read (a slow disk, a device) must not
/// hold the turn. Dropping the call ends what it started (a command's process group).
async fn run_until_interrupted(
    run: impl std::future::Future<Output = ToolOutput>,
    cancel: &tokio_util::sync::CancellationToken,
) -> ToolOutput {
    tokio::pin!(run);
    tokio::select! {
        output = &mut run => return output,
        _ = cancel.cancelled() => {}
    }
    tokio::time::timeout(INTERRUPT_GRACE, run)
        .await
        .unwrap_or_else(|_| ToolOutput::error(crate::tools::CALL_INTERRUPTED))
}

fn not_run() -> Prepared {
    Prepared::Finished {
        output: ToolOutput::error(crate::tools::NOT_RUN_INTERRUPTED),
        status: ToolCallStatus::Interrupted,
    }
}

fn deny(call: &Call, reason: String, denials: &mut Vec<PermissionDenial>) -> Prepared {
    denials.push(PermissionDenial {
        tool_name: call.name.clone(),
        tool_use_id: call.id.clone(),
        tool_input: call.input.clone(),
    });
    Prepared::Finished { output: ToolOutput::error(reason), status: ToolCallStatus::Denied }
}

fn invalid_input_message(why: &str, truncated: bool) -> String {
    if truncated {
        format!(
            "This tool call was cut off because the response reached the max_tokens limit, so it was not run ({why}). Make the call again with smaller input, e.g. split a large Write into several Edits."
        )
    } else {
        format!("The tool input was not valid JSON, so the call was not run: {why}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found from the outside: a tool blocked in a read (a FIFO) held the turn, and Esc did not end it.
    #[tokio::test]
    async fn an_interrupt_abandons_a_call_that_does_not_end_on_its_own() {
        let cancel = tokio_util::sync::CancellationToken::new();
        let stuck = futures::future::pending::<ToolOutput>();
        let canceller = cancel.clone();
        tokio::spawn(async move { canceller.cancel() });
        let started = Instant::now();
        let output = run_until_interrupted(stuck, &cancel).await;
        assert!(output.is_error && output.content == crate::tools::CALL_INTERRUPTED, "{}", output.content);
        assert!(started.elapsed() < Duration::from_secs(2));

        let cancel = tokio_util::sync::CancellationToken::new();
        cancel.cancel();
        let ends_itself = async { ToolOutput::ok("partial output") };
        assert_eq!(run_until_interrupted(ends_itself, &cancel).await.content, "partial output", "its own result");
    }
}
