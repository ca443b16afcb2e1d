//! Streaming input (`--input-format stream-json --output-format stream-json`): how the Claude Agent SDK drives
//! a CLI. NDJSON frames come in on stdin (user messages, control requests, answers to tandem's own requests) and
//! go out on stdout, one flushed line each; logs go to stderr. The session lives until stdin closes: each `user`
//! frame is a turn of the same conversation. See shared/sdk-protocol.md for the protocol as the SDK uses it.
//!
//! The agent is started at the first frame, so the hooks and agents an `initialize` request carries are part of
//! it from the start. Requests tandem sends (`can_use_tool`, `hook_callback`) wait for their answers beside the
//! loop, so other frames (an interrupt, another control request) are read and handled meanwhile.

pub mod control;
mod requests;
mod rewind;
mod sdk_mcp;

use serde_json::{Value, json};
use tandem_core::agent::{self, OpSender};
use tandem_core::mcp::relay::SdkRelay;
use tandem_core::setup::{self, SessionOptions};
use tandem_protocol::{Event, EventMsg, Op, PermissionAnswer, SubmissionId};
use tokio::io::{AsyncBufReadExt, AsyncReadExt as _};
use tokio::sync::mpsc;

use crate::cli::Cli;
use crate::headless::{HeadlessOptions, Output, Printer, SESSION_END_WAIT};
use crate::stream_json;
use control::HostLink;

/// Largest input line read (the SDK's own limit for a line is 1 MiB; an image may be larger).
const MAX_LINE: usize = 64 * 1024 * 1024;

/// What the stdin reader hands the loop.
enum Inbound {
    Frame(Value),
    /// stdin closed (or failed).
    Closed,
}

/// Runs the session until stdin closes; returns the exit code (1 when the last result was an error).
#[expect(
    clippy::too_many_lines,
    reason = "the SDK loop: initialize, then frames, answers and events in one select; the event arm is where to cut it"
)]
pub async fn run(mut options: SessionOptions, cwd: std::path::PathBuf, cli: &Cli) -> i32 {
    let out = Output::stdout();
    let link = HostLink::new(out);
    let (frames_tx, mut frames) = mpsc::unbounded_channel::<Inbound>();
    tokio::spawn(read_stdin(frames_tx, link.clone()));
    crate::headless::end_on_terminate();

    // The first frame decides how the session is built: an `initialize` may carry its system prompt, MCP servers
    // and settings (so the session waits for it, as `--await-initialize` asks), its hooks and its agents.
    let first = match frames.recv().await {
        Some(Inbound::Frame(frame)) => frame,
        // Nothing to do, but a session that could not be built (a settings file that can't be read) still says so.
        _ => {
            return match setup::build(&options, cwd) {
                Ok(_) => 0,
                Err(error) => {
                    eprintln!("tandem: {}", error.0);
                    2
                }
            };
        }
    };
    let relay = SdkRelay::new(std::sync::Arc::new(link.clone()));
    options.sdk_mcp_relay = Some(relay.clone());
    let initialize = is_control(&first, "initialize").then(|| (request_id(&first), first["request"].clone()));
    let mut problems = Vec::new();
    let applied = match &initialize {
        Some((id, request)) => match requests::initialize_options(&mut options, request, &mut problems) {
            Ok(applied) => applied,
            Err(error) => {
                out.line(&failure(id, &error));
                eprintln!("tandem: error: {error}");
                return 2;
            }
        },
        None => requests::Applied::default(),
    };
    let mut config = match setup::build(&options, cwd) {
        Ok(config) => config,
        Err(error) => {
            if let Some((id, _)) = &initialize {
                out.line(&failure(id, &error.0));
            }
            eprintln!("tandem: {}", error.0);
            return 2;
        }
    };
    config.raw_stream = cli.include_partial_messages;

    let session_id = config.session_id.clone();
    let api_key_source = crate::headless::api_key_source(&config);
    let headless_options = HeadlessOptions {
        format: cli.output_format,
        include_partial_messages: cli.include_partial_messages,
        include_hook_events: cli.include_hook_events,
    };
    let mut printer = Printer::new(session_id.clone(), api_key_source.clone(), headless_options, out);
    printer.init_at_start = false;
    let stdio_prompts = cli.permission_prompt_tool.as_deref() == Some("stdio");
    if let Some(tool) = cli.permission_prompt_tool.as_deref().filter(|tool| *tool != "stdio") {
        eprintln!(
            "tandem: warning: --permission-prompt-tool {tool}: only \"stdio\" (the SDK host answers) is supported; calls that need a decision are denied"
        );
    }
    let first = match initialize {
        Some((id, request)) => {
            problems.extend(requests::apply_initialize(&mut config, &request, &link));
            for problem in &problems {
                eprintln!("tandem: warning: initialize: {problem}");
            }
            out.line(&success(&id, requests::initialize_response(&config, &api_key_source, applied)));
            None
        }
        None => Some(first),
    };
    crate::headless::await_mcp_servers(&config).await;
    let mcp = config.mcp.clone();
    let mut handle = agent::spawn(config);
    let ops = handle.ops.clone();
    let mut state = State {
        ops: ops.clone(),
        running: 0,
        closed: false,
        last_code: 0,
        mcp,
        replay_user_messages: cli.replay_user_messages,
        relay,
        rewinds: std::collections::HashMap::new(),
        asking: std::collections::HashMap::new(),
    };
    if let Some(first) = first {
        state.frame(first, &out, &mut printer);
    }

    let (answers_tx, mut answers) = mpsc::unbounded_channel::<(String, String, control::ToolVerdict)>();
    loop {
        tokio::select! {
            inbound = frames.recv(), if !state.closed => match inbound {
                Some(Inbound::Frame(frame)) => state.frame(frame, &out, &mut printer),
                Some(Inbound::Closed) | None => {
                    state.closed = true;
                    if state.done() {
                        break;
                    }
                }
            },
            Some((call_id, request_id, verdict)) = answers.recv() => {
                // Only the answer to the prompt that is open for the call counts: a call id is the model's, and a
                // later call may reuse it.
                if state.asking.get(&call_id) != Some(&request_id) {
                    continue;
                }
                state.asking.remove(&call_id);
                for warning in &verdict.warnings {
                    eprintln!("tandem: warning: can_use_tool: {warning}");
                }
                if let Some(mode) = verdict.mode {
                    let _ = ops.send(Op::SetPermissionMode(mode));
                    printer.set_mode(mode);
                }
                let _ = ops.send(Op::PermissionAnswer { call_id, answer: verdict.answer });
                if verdict.interrupt {
                    let _ = ops.send(Op::Interrupt);
                }
                out.line(&stream_json::session_state(&session_id, "running"));
            }
            event = handle.events.recv() => {
                let Some(EventMsg { submission, event }) = event else {
                    eprintln!("tandem: error: the agent stopped unexpectedly");
                    return 1;
                };
                match event {
                    Event::TurnStarted { .. } => {
                        if let Some(init) = printer.init.clone() {
                            let mut init = init;
                            init["uuid"] = json!(agent::new_session_id());
                            out.line(&init);
                        }
                    }
                    Event::RequestStarted { .. } if cli.include_partial_messages => {
                        out.line(&stream_json::status_requesting(&session_id));
                    }
                    Event::PermissionRequested { call_id, tool, input, preview, suggested_rule, reason, agent, .. } => {
                        if !stdio_prompts {
                            let message = crate::headless::non_interactive_denial(&tool, &suggested_rule);
                            let _ = ops.send(Op::PermissionAnswer { call_id, answer: PermissionAnswer::Reject { message } });
                            continue;
                        }
                        out.line(&stream_json::session_state(&session_id, "requires_action"));
                        // A file edit (a diff to review) is what acceptEdits would allow.
                        let edits_files = matches!(preview, Some(tandem_protocol::tools::Preview::Diff { .. }));
                        let request = control::can_use_tool_request(
                            &tool,
                            edits_files,
                            &input,
                            &call_id,
                            &suggested_rule,
                            reason.as_deref(),
                            agent.as_deref(),
                        );
                        let request_id = agent::new_session_id();
                        if let Some(old) = state.asking.insert(call_id.clone(), request_id.clone()) {
                            link.cancel(&old);
                        }
                        let (link, answers_tx) = (link.clone(), answers_tx.clone());
                        tokio::spawn(async move {
                            let answer = link.request_as(request_id.clone(), request).await;
                            let _ = answers_tx.send((call_id, request_id, control::tool_verdict(answer, &input)));
                        });
                    }
                    Event::TurnFinished(summary) => {
                        // Nothing of the turn waits for an answer any more.
                        for (_, open) in state.asking.drain() {
                            link.cancel(&open);
                        }
                        state.last_code = printer.finish(&summary);
                        state.running = state.running.saturating_sub(1);
                        if state.running == 0 {
                            out.line(&stream_json::session_state(&session_id, "idle"));
                            if state.closed && state.done() {
                                break;
                            }
                        }
                    }
                    Event::Rewound(outcome) => {
                        if let Some(rewind) = submission.and_then(|id| state.rewinds.remove(&id)) {
                            out.line(&rewind::answer(&rewind, outcome));
                        }
                        if state.closed && state.done() {
                            break;
                        }
                    }
                    event => {
                        if let Some(call_id) = finished_call(&event) {
                            state.stop_asking(call_id, &link);
                        }
                        printer.event(&event);
                    }
                }
            }
        }
    }
    link.close();
    let _ = handle.ops.send(Op::Shutdown);
    drop(handle.events);
    let _ = tokio::time::timeout(SESSION_END_WAIT, handle.task).await;
    state.last_code
}

/// The call a `ToolCallFinished` (the session's or a subagent's) says is over.
fn finished_call(event: &Event) -> Option<&str> {
    match event {
        Event::ToolCallFinished { call_id, .. } => Some(call_id),
        Event::Subagent { event, .. } => finished_call(event),
        _ => None,
    }
}

/// The loop's state between frames.
struct State {
    ops: OpSender,
    /// Turns asked for and not finished yet (a `user` frame during a turn is queued by the agent).
    running: usize,
    closed: bool,
    last_code: i32,
    mcp: Option<std::sync::Arc<tandem_core::mcp::McpManager>>,
    /// `--replay-user-messages`: each user frame is printed back with its uuid.
    replay_user_messages: bool,
    /// `rewind_files` requests sent to the session, by the submission its outcome will name.
    rewinds: std::collections::HashMap<SubmissionId, rewind::Pending>,
    /// How the host's SDK MCP servers are reached, and what they say unasked comes back.
    relay: SdkRelay,
    /// The `can_use_tool` request open for each call waiting for the host's answer.
    asking: std::collections::HashMap<String, String>,
}

impl State {
    /// Nothing asked of the session waits any more: no turn, no rewind (a host that closes stdin right after
    /// `rewind_files` still gets its answer).
    fn done(&self) -> bool {
        self.running == 0 && self.rewinds.is_empty()
    }

    /// The call no longer waits for the host: its open prompt, if any, is cancelled, and a late answer to it
    /// approves nothing.
    fn stop_asking(&mut self, call_id: &str, link: &HostLink) {
        if let Some(open) = self.asking.remove(call_id) {
            link.cancel(&open);
        }
    }

    fn frame(&mut self, frame: Value, out: &Output, printer: &mut Printer) {
        match frame.get("type").and_then(Value::as_str) {
            Some("user") => match requests::user_turn(&frame) {
                Ok(turn) => {
                    // The prompt is checkpointed under the frame's uuid (the host's, or one made here) so that
                    // `rewind_files` can name it.
                    let uuid = match frame.get("uuid").and_then(Value::as_str) {
                        Some(uuid) if !uuid.is_empty() => uuid.to_owned(),
                        _ => agent::new_session_id(),
                    };
                    if self.replay_user_messages {
                        out.line(&stream_json::user_replay(&printer.session_id, &frame, &uuid));
                    }
                    if self.running == 0 {
                        out.line(&stream_json::session_state(&printer.session_id, "running"));
                    }
                    self.running += 1;
                    let _ = self.ops.send(Op::NamePrompt { id: uuid });
                    let _ = self.ops.send(turn);
                }
                Err(why) => eprintln!("tandem: warning: a user message was not understood ({why}); it is ignored"),
            },
            Some("control_request") => {
                let id = request_id(&frame);
                let request = frame.get("request").cloned().unwrap_or(Value::Null);
                let subtype = request.get("subtype").and_then(Value::as_str).unwrap_or_default();
                if subtype == "mcp_message" {
                    out.line(&match sdk_mcp::unasked(&request, &self.relay) {
                        Ok(response) => success(&id, response),
                        Err(error) => failure(&id, &error),
                    });
                    return;
                }
                if let Some(answer) = sdk_mcp::answer(subtype, &request, self.mcp.as_ref()) {
                    // Reconnecting takes a while: answered when done, while other frames are read.
                    let out = *out;
                    tokio::spawn(async move {
                        out.line(&match answer.await {
                            Ok(response) => success(&id, response),
                            Err(error) => failure(&id, &error),
                        });
                    });
                    return;
                }
                if subtype == "rewind_files" {
                    match rewind::request(&id, &request, &self.ops) {
                        Ok((submission, pending)) => {
                            self.rewinds.insert(submission, pending);
                        }
                        Err(error) => out.line(&failure(&id, &error)),
                    }
                    return;
                }
                let reply = requests::handle(&request, &self.ops, printer);
                out.line(&match reply {
                    Ok(response) => success(&id, response),
                    Err(error) => failure(&id, &error),
                });
            }
            // The host gave up on one of its own requests: nothing of tandem's waits for it.
            Some("control_cancel_request") | Some("keep_alive") => {}
            Some(other) => eprintln!("tandem: warning: a {other:?} frame is not one tandem reads; it is ignored"),
            None => eprintln!("tandem: warning: a frame without \"type\" was ignored"),
        }
    }
}

/// Reads NDJSON lines from stdin: answers to tandem's requests go straight to their waiters (so they arrive while
/// the loop is busy), everything else to the loop. Lines that are not JSON objects are skipped, as the SDK does.
async fn read_stdin(frames: mpsc::UnboundedSender<Inbound>, link: HostLink) {
    let mut reader = tokio::io::BufReader::with_capacity(64 * 1024, tokio::io::stdin());
    let mut line = Vec::new();
    loop {
        line.clear();
        match (&mut reader).take(MAX_LINE as u64 + 1).read_until(b'\n', &mut line).await {
            Ok(0) => break,
            Ok(_) if line.len() > MAX_LINE && !line.ends_with(b"\n") => {
                eprintln!("tandem: error: an input line is longer than {} MiB; stopping", MAX_LINE >> 20);
                break;
            }
            Ok(_) => {}
            Err(error) => {
                eprintln!("tandem: error: cannot read stdin: {error}");
                break;
            }
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim();
        if !text.starts_with('{') {
            continue;
        }
        let frame: Value = match serde_json::from_str(text) {
            Ok(frame) => frame,
            Err(error) => {
                eprintln!("tandem: warning: an input line is not valid JSON ({error}); it is ignored");
                continue;
            }
        };
        if frame.get("type").and_then(Value::as_str) == Some("control_response") {
            let response = frame.get("response").cloned().unwrap_or(Value::Null);
            if !link.answer(&response) {
                eprintln!("tandem: warning: a control_response answers no request of tandem's; it is ignored");
            }
            continue;
        }
        if frames.send(Inbound::Frame(frame)).is_err() {
            return;
        }
    }
    let _ = frames.send(Inbound::Closed);
}

fn is_control(frame: &Value, subtype: &str) -> bool {
    frame.get("type").and_then(Value::as_str) == Some("control_request")
        && frame.pointer("/request/subtype").and_then(Value::as_str) == Some(subtype)
}

fn request_id(frame: &Value) -> String {
    match frame.get("request_id") {
        Some(Value::String(id)) => id.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    }
}

fn success(request_id: &str, response: Value) -> Value {
    json!({"type": "control_response", "response": {"subtype": "success", "request_id": request_id, "response": response}})
}

fn failure(request_id: &str, error: &str) -> Value {
    json!({"type": "control_response", "response": {"subtype": "error", "request_id": request_id, "error": error}})
}
