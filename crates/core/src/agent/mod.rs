//! The agent: a task that owns the conversation and runs turns.
//!
//! A turn is: send → stream → run the requested tools → append the results → repeat, until the model replies
//! without tool calls, the user interrupts, or a limit is reached. Every `tool_use` gets a `tool_result` in the
//! next request, also when it was denied, failed or interrupted, so the conversation is always valid to send.
//!
//! The agent never talks to a front end except through [`Op`] and [`Event`]. Ops are routed by a small task so
//! that an interrupt or a permission answer is seen while a turn is running.

mod clear;
mod command_context;
mod commands;
mod compaction;
mod dispatch;
mod items;
mod mcp_input;
mod mcp_ops;
mod model_settings;
mod nested_guidelines;
mod replay;
mod rewind_ops;
mod rule_ops;
mod sampling;
mod session_hooks;
mod subagent;
mod tool_calls;
mod tool_hooks;
mod turn;
mod user_message;

pub use replay::replay_events;
pub use rewind_ops::{REWIND_NOTE_START, rewind_notes_for_user};
pub use user_message::INTERRUPTED_NOTE;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use crate::events::EventSink;
use crate::models::ModelInfo;
use crate::permissions::PermissionPolicy;
use crate::protocol::{EventMsg, Op, PermissionAnswer, Submission, SubmissionId};
use crate::provider::retry::RetryPolicy;
use crate::provider::{Provider, SystemBlock};
use crate::tools::ToolRegistry;

/// Everything a session needs to run.
pub struct AgentConfig {
    pub session_id: String,
    pub provider: Arc<dyn Provider>,
    pub model: ModelInfo,
    pub system: Vec<SystemBlock>,
    pub tools: ToolRegistry,
    pub permissions: PermissionPolicy,
    pub cwd: PathBuf,
    /// Model round trips allowed per turn.
    pub max_turns: Option<u32>,
    /// Spend allowed for the session, in US dollars.
    pub max_budget_usd: Option<f64>,
    pub retry: RetryPolicy,
    /// The session's sandbox: each Bash call runs in the policy its grant calls for. `None`: no sandbox.
    pub sandbox: Option<Arc<crate::sandbox::Confinement>>,
    /// The environment of the processes the session starts (secrets removed).
    pub shell_env: Arc<crate::shell_env::ShellEnvPolicy>,
    /// Where "always, everywhere" answers are saved (`settings.json` in it).
    pub config_dir: PathBuf,
    /// Claude Code's user directory (`~/.claude`, `$CLAUDE_CONFIG_DIR`): its `CLAUDE.md` is a user guideline file.
    pub claude_dir: Option<PathBuf>,
    /// Which guideline files are read (the settings sources the session was given).
    pub guideline_sources: crate::context::guidelines::Sources,
    /// Shown once at the start (settings problems, sandbox notes).
    pub notices: Vec<String>,
    /// Where the session is recorded (append-only JSONL), when it is.
    pub session_log: Option<crate::session::SessionWriter>,
    /// `--no-session-persistence`: the private directory the log is in, removed when the session is dropped.
    pub unsaved_dir: Option<std::sync::Arc<tempfile::TempDir>>,
    /// A resumed conversation to continue from.
    pub resume: Option<Resume>,
    /// When to compact the conversation automatically.
    pub compaction: crate::context::compact::CompactionPolicy,
    /// The hooks of the settings files (and, later, of an SDK host).
    pub hooks: Arc<crate::hooks::HookEngine>,
    /// Custom slash commands (`.claude/commands/`): a prompt `/name args` runs the command's prompt.
    pub commands: Arc<crate::commands::CommandCatalog>,
    /// The skills (`.claude/skills/`), served by the `Skill` tool when there are any.
    pub skills: Arc<crate::skills::SkillCatalog>,
    /// The agents the Task tool can start (built-in, `.claude/agents/`, `--agents`).
    pub agents: Arc<crate::agents::AgentCatalog>,
    /// Also send the provider's raw stream events ([`crate::protocol::Event::RawStream`]), for stream-json's
    /// `--include-partial-messages`; front ends that draw use the item events.
    pub raw_stream: bool,
    /// Extended thinking and effort as asked for (flags, config.toml, `/effort`); each request sends what its
    /// model takes.
    pub reasoning: crate::reasoning::Reasoning,
    /// Anthropic beta headers asked for with `--betas`.
    pub betas: Vec<String>,
    /// `--json-schema`: where the StructuredOutput tool puts an accepted answer (the tool is in `tools`). A turn
    /// ends once it is there, and fails after [`crate::tools::structured_output::MAX_RETRIES`] misses.
    pub structured_output: Option<Arc<Mutex<Option<serde_json::Value>>>>,
    /// `--fallback-model`: used from then on when a request to the model fails for good because it is
    /// overloaded or unavailable.
    pub fallback_model: Option<String>,
    /// The session's MCP servers (their tools are in `tools` through the registry's source), for `/mcp`, `init`
    /// and the SDK's `mcp_*` requests.
    pub mcp: Option<Arc<crate::mcp::McpManager>>,
}

/// The state a resumed session starts from.
#[derive(Clone, Debug, Default)]
pub struct Resume {
    pub messages: Vec<crate::conversation::Message>,
    pub usage: crate::conversation::Usage,
    pub cost_usd: Option<f64>,
    /// The prompts of `messages` that rewind can cut the conversation at ([`crate::session::LoadedSession::prompts`]),
    /// oldest first.
    pub prompts: Vec<u64>,
    /// The session was saved before prompts were logged: its prompts are found by their text.
    pub prompts_unlogged: bool,
    /// What the model was still to be told with the next prompt.
    pub notes: Vec<String>,
    /// Every prompt the log has a line for ([`crate::session::LoadedSession::logged_prompts`]).
    pub logged_prompts: Vec<u64>,
    /// What each file-changing call applied ([`crate::session::LoadedSession::applied`]), for front ends.
    pub applied: std::collections::HashMap<String, serde_json::Value>,
}

impl From<crate::session::LoadedSession> for Resume {
    /// The state a saved session goes on from (`--continue`, `--resume`).
    fn from(loaded: crate::session::LoadedSession) -> Resume {
        Resume {
            prompts: loaded.prompts.iter().map(|(seq, _)| *seq).collect(),
            prompts_unlogged: !loaded.prompts_logged,
            notes: loaded.pending_notes,
            logged_prompts: loaded.logged_prompts,
            applied: loaded.applied,
            messages: loaded.messages,
            usage: loaded.usage_total,
            cost_usd: loaded.cost_total,
        }
    }
}

/// The front end's side of a running agent.
pub struct AgentHandle {
    pub ops: OpSender,
    pub events: mpsc::UnboundedReceiver<EventMsg>,
    pub task: tokio::task::JoinHandle<()>,
}

/// Sends ops to the agent, each as a [`Submission`] with a new id, which the events it causes carry.
#[derive(Clone, Debug)]
pub struct OpSender {
    tx: mpsc::UnboundedSender<Submission>,
    next: Arc<std::sync::atomic::AtomicU64>,
}

/// The agent has ended: the op was not delivered.
#[derive(Debug, thiserror::Error)]
#[error("the session has ended")]
pub struct SessionEnded;

impl OpSender {
    /// Submits `op`; its id is on every event it causes.
    pub fn send(&self, op: Op) -> Result<SubmissionId, SessionEnded> {
        let id = SubmissionId(self.next.fetch_add(1, std::sync::atomic::Ordering::SeqCst));
        self.tx.send(Submission { id, op }).map_err(|_| SessionEnded)?;
        Ok(id)
    }
}

/// State shared between the op router and the turn runner.
struct Shared {
    /// Cancelled by `Op::Interrupt`; replaced at the start of every turn.
    cancel: Mutex<CancellationToken>,
    /// Permission requests waiting for an answer, by call id (a subagent's too: answers come to the session).
    pending: Arc<Mutex<HashMap<String, oneshot::Sender<PermissionAnswer>>>>,
    /// The live permission policy (modes change, session rules are added), the same for subagents.
    policy: Arc<Mutex<PermissionPolicy>>,
    /// The session's request record (one writer, so that replays and turns share its numbering).
    recorder: Option<Arc<crate::inspect::Recorder>>,
}

/// The request record of the session logged in `log`, in its directory.
fn recorder_for(log: Option<&crate::session::SessionWriter>) -> Option<Arc<crate::inspect::Recorder>> {
    log.map(|log| Arc::new(crate::inspect::Recorder::new(&log.path().with_extension(""))))
}

/// Starts the agent on the current tokio runtime.
pub fn spawn(config: AgentConfig) -> AgentHandle {
    let (op_tx, mut op_rx) = mpsc::unbounded_channel::<Submission>();
    let (event_tx, event_rx) = EventSink::channel();
    let (turn_tx, mut turn_rx) = mpsc::unbounded_channel::<Submission>();
    let shared = Arc::new(Shared {
        cancel: Mutex::new(CancellationToken::new()),
        pending: Arc::new(Mutex::new(HashMap::new())),
        policy: Arc::new(Mutex::new(config.permissions.clone())),
        recorder: recorder_for(config.session_log.as_ref()),
    });

    let router_shared = shared.clone();
    let router_mcp = config.mcp.clone();
    let router_events = event_tx.clone();
    let replay_provider = config.provider.clone();
    let replay_recorder = shared.recorder.clone();
    tokio::spawn(async move {
        while let Some(Submission { id, op }) = op_rx.recv().await {
            // What must be seen while a turn runs is done here; the rest waits its turn, in order.
            match op {
                Op::PermissionAnswer { call_id, answer } => {
                    let waiter = lock(&router_shared.pending).remove(&call_id);
                    if let Some(waiter) = waiter {
                        let _ = waiter.send(answer);
                    }
                }
                Op::Interrupt => lock(&router_shared.cancel).cancel(),
                Op::SetPermissionMode(mode) => lock(&router_shared.policy).mode = mode,
                Op::Mcp(request) => {
                    mcp_ops::handle(router_mcp.clone(), request, router_events.for_submission(Some(id)));
                }
                Op::Replay { request, body, headers, edited } => {
                    // Beside the session, not in its turn queue: a replay is only read.
                    let (provider, events) = (replay_provider.clone(), router_events.for_submission(Some(id)));
                    let recorder = replay_recorder.clone();
                    tokio::spawn(async move {
                        crate::inspect::replay::replay(
                            provider.as_ref(),
                            recorder.as_deref(),
                            request,
                            body,
                            headers,
                            edited,
                            &events,
                        )
                        .await;
                    });
                }
                Op::Shutdown => {
                    lock(&router_shared.cancel).cancel();
                    break;
                }
                op => {
                    if turn_tx.send(Submission { id, op }).is_err() {
                        break;
                    }
                }
            }
        }
        // Dropping the pending senders answers every waiting request with "abort".
        lock(&router_shared.pending).clear();
    });

    let task = tokio::spawn(async move {
        config.hooks.observe(event_tx.clone());
        let mcp = config.mcp.clone();
        let mcp_events = event_tx.for_submission(None);
        let mut session = turn::Session::new(config, shared, event_tx.clone());
        session.announce();
        if let Some(manager) = mcp {
            mcp_ops::watch(manager, mcp_events);
        }
        session.learn_server_limits().await;
        session.session_start_hooks().await;
        // After a turn, a Notification hook hears once if the user leaves tandem waiting (Claude Code's
        // `idle_prompt`).
        let mut idle_since: Option<tokio::time::Instant> = None;
        loop {
            let work = match idle_since {
                Some(since) if session.has_idle_hooks() => {
                    tokio::select! {
                        work = turn_rx.recv() => work,
                        _ = tokio::time::sleep_until(since + session_hooks::idle_notice_after()) => {
                            idle_since = None;
                            session.idle_notification().await;
                            continue;
                        }
                    }
                }
                _ => turn_rx.recv().await,
            };
            let Some(Submission { id, op }) = work else { break };
            event_tx.working_on(Some(id));
            if session.run_op(op).await {
                idle_since = Some(tokio::time::Instant::now());
            }
            event_tx.working_on(None);
        }
        session.session_end_hooks("other").await;
    });

    let ops = OpSender { tx: op_tx, next: Arc::new(std::sync::atomic::AtomicU64::new(1)) };
    AgentHandle { ops, events: event_rx, task }
}

/// Locks a mutex, recovering the data if a panicking thread poisoned it (the state stays usable).
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A fresh random session id in UUID v4 form.
pub fn new_session_id() -> String {
    uuid::Uuid::new_v4().to_string()
}
