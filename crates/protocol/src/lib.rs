//! The only language between a front end (TUI, headless) and the agent.
//!
//! `Op` flows front end → core in a [`Submission`] with an id, `Event` flows core → front end in an [`EventMsg`]
//! that names the submission it belongs to. Tool calls are item lifecycles sharing one
//! call id: `ToolCallStarted` → (`PermissionRequested` → `Op::PermissionAnswer`) → `ToolCallOutput`* →
//! `ToolCallFinished`. No business logic lives here.
//!
//! A crate of its own so that the compiler keeps it a leaf: it depends on serde and schemars only, never on
//! tandem's core, so a front end (and a future one) can speak it without knowing how the agent works, and the
//! agent's modules can all use it without a cycle. The data the messages carry lives here too: the conversation
//! (`conversation`), what a tool call would do (`tools`), the stream of an answer (`stream`) and the permission
//! vocabulary (`permissions`).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub mod conversation;
pub mod permissions;
mod rewind;
pub mod stream;
pub mod tools;

use crate::conversation::{AssistantMessage, Message, SharedText, StopReason, ToolInput, Usage};
use crate::permissions::PermissionMode;
use crate::stream::StreamEvent;
use crate::tools::{CallDisplay, Preview, ResultView, Risk};
pub use rewind::{ReplayAnswer, RewindFileView, RewindHunks, RewindOutcome, RewindPointView, RewindTarget};

/// Names one submission. Core puts it on every event the submission caused, so that a front end matches an
/// answer to what it asked (a `RewindPoints` to its `ListRewindPoints`, a `PromptRefused` to its prompt) by id,
/// never by order or by text. A turn is named by the submission that started it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SubmissionId(pub u64);

/// An [`Op`] with its id: what travels from a front end to core.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Submission {
    pub id: SubmissionId,
    pub op: Op,
}

/// An [`Event`] with the submission it belongs to: what travels from core to a front end. `None`: it belongs to
/// no submission (the session announcing itself, a server that connected, a background command that ended
/// between turns).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct EventMsg {
    pub submission: Option<SubmissionId>,
    pub event: Event,
}

impl From<Event> for EventMsg {
    /// An event of no submission.
    fn from(event: Event) -> EventMsg {
        EventMsg { submission: None, event }
    }
}

/// Front end → core.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", content = "data", rename_all = "snake_case")]
pub enum Op {
    /// The user's message: starts a turn that runs until the model replies without tool calls.
    UserTurn {
        text: String,
    },
    /// A user message with images (an SDK host's content blocks): like [`Op::UserTurn`], the images sent after
    /// the text, each an Anthropic image `source` (`{"type": "base64", "media_type", "data"}` or `{"type": "url"}`).
    UserTurnWithImages {
        text: String,
        images: Vec<Value>,
    },
    /// The answer to a [`Event::PermissionRequested`] with the same call id.
    PermissionAnswer {
        call_id: String,
        answer: PermissionAnswer,
    },
    /// Stop the running turn: cancel the stream, kill the running tool's process group.
    Interrupt,
    SetPermissionMode(PermissionMode),
    /// Use another model of the same provider from the next request on.
    SetModel {
        model: String,
    },
    /// The effort of the requests from now on (`None`: the model's default); answered with an [`Event::Info`].
    SetEffort(Option<Effort>),
    /// Start a new conversation (the old one is dropped from the model's context).
    ClearConversation,
    /// Summarize the conversation now (`/compact [instructions]`).
    Compact {
        instructions: Option<String>,
    },
    /// Ask for the active permission rules ([`Event::PermissionRules`]).
    ListPermissionRules,
    /// Remove a rule (from its settings file too); answered with a fresh [`Event::PermissionRules`].
    RemovePermissionRule {
        rule: RuleListing,
    },
    /// Describe the session's hooks (`/hooks`), answered with an [`Event::Info`].
    ListHooks,
    /// Let the project's own hooks run, now and in later sessions while they stay as they are (`/hooks trust`).
    TrustProjectHooks,
    /// Apply what tracked personal settings files would allow, now and in later sessions while they stay as
    /// they are (`/permissions trust`); answered with an [`Event::Info`].
    TrustHeldSettings,
    /// Stop a `run_in_background` command (`/bashes kill ID`); answered with an [`Event::Info`] or an error.
    KillBackground {
        id: String,
    },
    /// Act on the session's MCP servers (`/mcp`, the `.mcp.json` approval dialog); every change of theirs comes
    /// as an [`Event::McpServers`].
    Mcp(McpRequest),
    /// Sends a recorded request (`request`, its number in the inspector) again, `body` as recorded or as the
    /// user edited it; its answer comes as [`Event::Replayed`]. Nothing enters the conversation, no tool runs.
    Replay {
        request: u64,
        body: Value,
        headers: Vec<(String, String)>,
        /// The user edited the body first (recorded with the replay).
        edited: bool,
    },
    /// Lists the prompts the session can go back to, as [`Event::RewindPoints`].
    ListRewindPoints,
    /// What going back to just before prompt `seq` would change in the files, as [`Event::RewindPreview`].
    PreviewRewind {
        seq: u64,
    },
    /// The next prompt's id as its host knows it (an SDK user message's `uuid`), so that a rewind can name it.
    NamePrompt {
        id: String,
    },
    /// Goes back to just before a prompt: the conversation, the files tandem's tools changed, or both; of the
    /// files in `hunks`, only the chosen hunks. `dry_run` only says what would change. Answered with
    /// [`Event::Rewound`].
    Rewind {
        to: RewindTarget,
        conversation: bool,
        files: bool,
        /// Every file of the preview the user saw (`None`: there was none, as for an SDK host): only these go
        /// back, and only as they were previewed.
        hunks: Option<Vec<RewindHunks>>,
        dry_run: bool,
    },
    /// Ends the agent task.
    Shutdown,
}

/// What a front end asks of the MCP servers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", content = "data", rename_all = "snake_case")]
pub enum McpRequest {
    /// Send the list now.
    Refresh,
    /// Stop a server and start it again.
    Reconnect { server: String },
    /// The user's answer about a `.mcp.json` server waiting for approval (remembered in
    /// `.tandem/settings.local.json`).
    Decide { server: String, choice: McpChoice },
}

/// Claude Code's three answers about a new `.mcp.json` server.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum McpChoice {
    /// Use it and every future server of this project's `.mcp.json` (`enableAllProjectMcpServers`).
    ApproveAll,
    /// Use this one (`enabledMcpjsonServers`).
    Approve,
    /// Don't start it (`disabledMcpjsonServers`).
    Refuse,
}

/// A server as front ends show it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct McpServerView {
    pub name: String,
    /// `user`, `project`, `local` or `dynamic`.
    pub scope: String,
    /// `command args` or `url`.
    pub target: String,
    /// The rest of its entry as written (nothing expanded): `cwd …`, `env NAME=value`, `header Name: value`, so
    /// the approval dialog shows everything the server will be given.
    pub details: Vec<String>,
    /// `stdio` or `http`.
    pub transport: String,
    /// Claude Code's status names: `pending`, `connected`, `failed`, `disabled`.
    pub status: String,
    /// Why it failed or is disabled.
    pub reason: Option<String>,
    pub needs_approval: bool,
    /// The names the model calls its tools by.
    pub tools: Vec<String>,
    /// Resource URIs, for `@server:uri` mentions.
    pub resources: Vec<String>,
    /// Prompts, offered as `/mcp__server__prompt` commands.
    pub prompts: Vec<McpPromptView>,
}

/// A server's prompt.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct McpPromptView {
    /// The slash command's name, without the slash: `mcp__server__prompt`.
    pub command: String,
    pub description: String,
    /// Argument names in order (a required one first in the server's list is still in its place).
    pub arguments: Vec<String>,
}

/// How the user answered a permission request.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", content = "data", rename_all = "snake_case")]
pub enum PermissionAnswer {
    AllowOnce,
    /// Allow, and remember `rule` (one or more rules separated by ", ") at `scope`.
    AllowAlways {
        rule: String,
        scope: AlwaysScope,
    },
    /// Deny; the feedback, if any, goes to the model with the denial.
    Deny {
        feedback: Option<String>,
    },
    /// Allow an Edit or Write, but write `content` instead of what the model proposed (the user accepted only
    /// some hunks, or edited the result). `note` tells the model what the user changed; the tool result also
    /// carries the diff that was really applied, so the model knows the file's real state.
    AllowModified {
        content: String,
        note: String,
    },
    /// The answers to an AskUserQuestion call, one per question (several choices of one joined with ", ").
    Answered {
        answers: Vec<String>,
    },
    /// Approve an ExitPlanMode plan and continue in this mode (default or acceptEdits).
    AllowWithMode(PermissionMode),
    /// Allow the call with this input instead of the model's (an SDK host's `updatedInput`). It is checked against
    /// the tool's schema like the model's; for AskUserQuestion, its `answers` object answers the questions.
    AllowUpdated {
        input: Value,
    },
    /// Deny with exactly this message as the tool result (an SDK host's own words, not "the user denied").
    Reject {
        message: String,
    },
}

/// How long an "always" answer is remembered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AlwaysScope {
    /// Until tandem exits.
    Session,
    /// In this project: `.tandem/settings.local.json` (git-ignored).
    Project,
    /// Everywhere: the user's `settings.json`.
    User,
}

/// An active permission rule and where it comes from, for `/permissions`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuleListing {
    pub text: String,
    pub kind: crate::permissions::RuleKind,
    pub scope: crate::permissions::Scope,
    /// The settings file it is in (`None` for flags and session rules).
    pub file: Option<PathBuf>,
}

/// How an item (an assistant message, a thinking block, a compaction) ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ItemOutcome {
    Completed,
    /// The user interrupted the turn.
    Interrupted,
    /// The response broke and is being retried: front ends drop what they showed of it.
    Discarded,
    /// The request failed for good.
    Failed,
}

/// How a tool call ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolCallStatus {
    Completed,
    Failed,
    Denied,
    Interrupted,
}

/// Why a run (everything after a prompt in headless mode) ended. Names are stream-json's result subtypes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunOutcome {
    Success,
    ErrorMaxTurns,
    ErrorMaxBudgetUsd,
    ErrorDuringExecution,
    /// `--json-schema`: the model did not give valid structured output in the attempts it had.
    ErrorMaxStructuredOutputRetries,
}

/// A `run_in_background` command, for front ends to list.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BackgroundTask {
    pub id: String,
    pub command: String,
    pub running: bool,
}

/// A tool call that the permission policy denied.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PermissionDenial {
    pub tool_name: String,
    pub tool_use_id: String,
    pub tool_input: ToolInput,
}

/// The end of a turn, with everything a result line needs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TurnSummary {
    /// The id [`Event::TurnStarted`] gave the turn.
    pub turn_id: u64,
    pub outcome: RunOutcome,
    /// The final assistant text (success only).
    pub result_text: Option<String>,
    pub stop_reason: Option<StopReason>,
    /// Model round trips in this turn.
    pub num_turns: u32,
    pub duration_ms: u64,
    pub duration_api_ms: u64,
    /// Session totals.
    pub usage: Usage,
    /// `None` when the model's price is unknown.
    pub total_cost_usd: Option<f64>,
    pub permission_denials: Vec<PermissionDenial>,
    pub errors: Vec<String>,
    /// The user interrupted the turn (then `outcome` is `ErrorDuringExecution`): front ends decide on this, not
    /// on the wording of `errors`.
    pub interrupted: bool,
    /// The model request failed for good: its HTTP status (when the server answered) and error type.
    pub api_error: Option<ApiFailure>,
    /// `--json-schema`: the accepted output (success only).
    pub structured_output: Option<Value>,
    /// The session's transcript could not be saved (a full disk…): why. Front ends say so; the run is not a
    /// plain success even when the model's answer is.
    pub unsaved: Option<String>,
}

/// A model request that failed for good, for Claude Code's `api_error_status` and synthetic error message.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiFailure {
    pub status: Option<u16>,
    pub error_type: Option<String>,
    pub message: String,
}

/// Core → front end.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "type", content = "data", rename_all = "snake_case")]
pub enum Event {
    SessionConfigured {
        session_id: String,
        provider: String,
        model: String,
        cwd: PathBuf,
        tools: Vec<String>,
        permission_mode: PermissionMode,
        /// The slash commands a prompt may start with (built-in ones that work without the app, then custom
        /// ones), without the slash.
        slash_commands: Vec<String>,
        /// The skills the model can load.
        skills: Vec<String>,
        /// The subagents the Task tool can start, by name.
        agents: Vec<String>,
        /// The MCP servers: (name, status) with Claude Code's status names (`pending`, `connected`, …).
        mcp_servers: Vec<(String, String)>,
    },
    /// A prompt of a resumed conversation, as the user typed it (what tandem added for the model left out), in
    /// the events that tell a saved conversation again. Prompts typed in this session are the front end's own.
    PromptReplayed {
        text: String,
    },
    /// A user turn begins (ids count up from 1 in a session); [`Event::TurnFinished`] carries the same id.
    TurnStarted {
        turn_id: u64,
    },
    /// The turn's prompt went into the conversation as rewind point `seq` ([`RewindPointView::seq`]): a front
    /// end that shows it can later cut its transcript right there.
    PromptCheckpointed {
        seq: u64,
    },
    /// A model round trip begins (1-based within the turn).
    RequestStarted {
        round: u32,
    },
    /// An assistant text block began streaming. Its text arrives in [`Event::MessageDelta`]s with the same id.
    MessageStarted {
        item_id: String,
    },
    MessageDelta {
        item_id: String,
        text: String,
    },
    /// `text` is the whole text when the block completed, shared with the conversation: a front end that kept
    /// its own copy from the deltas can hold this one instead.
    MessageCompleted {
        item_id: String,
        outcome: ItemOutcome,
        text: Option<SharedText>,
    },
    /// A thinking block began (`redacted`: its content is encrypted and never shown).
    ThinkingStarted {
        item_id: String,
        redacted: bool,
    },
    ThinkingDelta {
        item_id: String,
        text: String,
    },
    ThinkingCompleted {
        item_id: String,
        outcome: ItemOutcome,
    },
    /// The model began writing a tool call; [`Event::ToolCallStarted`] follows once the reply is complete.
    ToolInputStarted {
        call_id: String,
        name: String,
    },
    /// A compaction began (automatic, or `/compact`); [`Event::CompactionFinished`] follows.
    CompactionStarted {
        trigger: CompactTrigger,
    },
    /// A compaction ended: `Completed` after its [`Event::CompactBoundary`], else the conversation is unchanged.
    CompactionFinished {
        trigger: CompactTrigger,
        outcome: ItemOutcome,
    },
    /// The provider's raw stream event, in Anthropic's vocabulary with its block index — sent only when
    /// `AgentConfig::raw_stream` asks (stream-json's `--include-partial-messages`).
    RawStream(StreamEvent),
    /// A request failed and will be retried after `delay_ms`. If output had already streamed, it is discarded:
    /// front ends must drop what they showed of it.
    Retrying {
        attempt: u32,
        max_attempts: u32,
        delay_ms: u64,
        reason: String,
        discarded_partial_output: bool,
        /// The HTTP status of the failed attempt, when the server answered.
        status: Option<u16>,
    },
    /// A complete assistant reply, appended to the conversation.
    AssistantMessage(AssistantMessage),
    /// A tool call is about to be checked and run. Carries what a front end shows, so it needs no tables of
    /// tool names: adding a tool touches core only.
    ToolCallStarted {
        call_id: String,
        name: String,
        input: ToolInput,
        /// How to show the call: its kind, whether it only looks something up, its risk class and summary.
        display: CallDisplay,
    },
    /// What an allowed call will change (the diff of an Edit or Write that needed no dialog), so its card can
    /// show what was applied.
    ToolCallPreview {
        call_id: String,
        preview: Preview,
    },
    /// The user must decide; answer with [`Op::PermissionAnswer`] carrying the same call id.
    PermissionRequested {
        call_id: String,
        tool: String,
        risk: Risk,
        input: ToolInput,
        preview: Option<Preview>,
        /// The rule an "always" answer would add (e.g. `Bash(npm test:*)`, `Edit`; several separated by ", ";
        /// empty when no rule could allow this call).
        suggested_rule: String,
        /// Why this call asks, when it is not obvious (outside the workspace, a protected path…).
        reason: Option<String>,
        /// The subagent that makes the call (its type), when it is not the session the user talks to.
        agent: Option<String>,
    },
    ToolCallOutput {
        call_id: String,
        chunk: String,
    },
    ToolCallFinished {
        call_id: String,
        content: String,
        is_error: bool,
        status: ToolCallStatus,
        /// How long it ran; `None` for a call of a resumed conversation (not measured again).
        duration_ms: Option<u64>,
        /// The result in Claude Code's per-tool shape (stream-json's `tool_use_result`), when the tool gives one.
        structured: Option<Value>,
        /// The result as people read it (core's `Tool::result_view`), when the tool gives one.
        view: Option<ResultView>,
    },
    /// Tool results sent back to the model as the next user message.
    ToolResults(Message),
    /// Session totals after each response, with the context window of the model in use.
    Usage {
        total: Usage,
        last: Usage,
        cost_usd: Option<f64>,
        context_window: u64,
    },
    /// What a tool's own requests to `model` cost (WebFetch's reader, WebSearch), counted in the session's
    /// totals with the next [`Event::Usage`]; front ends that list usage by model put it under `model`.
    ToolSpend {
        model: String,
        usage: Usage,
        cost_usd: Option<f64>,
        web_searches: u64,
    },
    /// How full the context is now: the last reported usage plus an estimate of what was added since (tool
    /// results, the next prompt). Sent whenever it changes.
    Context {
        used: u64,
        window: u64,
    },
    /// The model was changed with [`Op::SetModel`].
    ModelChanged {
        model: String,
        context_window: u64,
    },
    /// The conversation was cleared with [`Op::ClearConversation`].
    ConversationCleared,
    /// Something the user should know that is not an error (a rule saved to a file, a settings problem).
    Info {
        message: String,
    },
    /// The active permission rules, for `/permissions`.
    PermissionRules(Vec<RuleListing>),
    /// The MCP servers, sent when the session starts and whenever one changes (status, tools, prompts), or an
    /// [`Op::Mcp`] asked.
    McpServers(Vec<McpServerView>),
    /// The answer to an [`Op::Replay`].
    Replayed(ReplayAnswer),
    /// The answer to [`Op::ListRewindPoints`], oldest first.
    RewindPoints(Vec<RewindPointView>),
    /// The answer to [`Op::PreviewRewind`]: each file that going back to prompt `seq` would change.
    RewindPreview {
        seq: u64,
        files: Vec<RewindFileView>,
    },
    /// The answer to [`Op::Rewind`]: what it did, or why it could not.
    Rewound(Result<RewindOutcome, String>),
    /// The conversation was compacted: earlier messages were replaced by `summary`; the context took
    /// `pre_tokens` before and `post_tokens` after (the next request's estimate).
    CompactBoundary {
        trigger: CompactTrigger,
        pre_tokens: u64,
        post_tokens: u64,
        summary: String,
    },
    /// A resumed conversation was compacted before the point it resumes from: the model continues from
    /// `summary`.
    CompactedBefore {
        summary: String,
    },
    /// Something went wrong that the user should see (the turn may still continue).
    Error {
        message: String,
    },
    TurnFinished(TurnSummary),
    /// A UserPromptSubmit hook refused the prompt: it was not sent, and front ends give it back to the user
    /// (an [`Event::Error`] with the reason and the turn's end follow).
    PromptRefused {
        prompt: String,
    },
    /// A hook began to run (for stream-json's `--include-hook-events`).
    HookStarted {
        hook_id: String,
        /// The hook's command (or its SDK callback's name).
        hook_name: String,
        hook_event: String,
    },
    /// A hook ended: what it printed and how (`success`, `error`, `cancelled`).
    HookFinished {
        hook_id: String,
        hook_name: String,
        hook_event: String,
        stdout: String,
        stderr: String,
        exit_code: Option<i32>,
        outcome: String,
    },
    /// The model's checklist changed (a TodoWrite call), or a resumed session has one: the whole list.
    Todos(Vec<crate::tools::TodoItem>),
    /// The background commands changed (one started, ended or was killed): the whole list.
    BackgroundTasks(Vec<BackgroundTask>),
    /// Something a subagent did (its messages, its tool calls), for the Task call `parent_call_id`. Its
    /// permission requests come as ordinary [`Event::PermissionRequested`]s.
    Subagent {
        parent_call_id: String,
        event: Box<Event>,
    },
}

/// How hard the model works on an answer (Claude Code's `--effort`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Effort {
    Low,
    Medium,
    High,
    Xhigh,
    Max,
}

impl Effort {
    pub const ALL: [Effort; 5] = [Effort::Low, Effort::Medium, Effort::High, Effort::Xhigh, Effort::Max];

    pub fn as_str(self) -> &'static str {
        match self {
            Effort::Low => "low",
            Effort::Medium => "medium",
            Effort::High => "high",
            Effort::Xhigh => "xhigh",
            Effort::Max => "max",
        }
    }

    pub fn parse(text: &str) -> Option<Effort> {
        Effort::ALL.into_iter().find(|effort| effort.as_str().eq_ignore_ascii_case(text.trim()))
    }
}

/// What started a compaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompactTrigger {
    Auto,
    Manual,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The protocol is data: a submission and an event cross a process boundary as tagged JSON and come back the
    /// same (an SDK or a remote front end could speak it as it is).
    #[test]
    fn submissions_and_events_travel_as_tagged_json() {
        let submission = Submission {
            id: SubmissionId(7),
            op: Op::PermissionAnswer {
                call_id: "t1".into(),
                answer: PermissionAnswer::Reject { message: "no".into() },
            },
        };
        let json = serde_json::to_value(&submission).unwrap();
        assert_eq!(json["id"], 7);
        assert_eq!(json["op"]["type"], "permission_answer");
        assert_eq!(serde_json::from_value::<Submission>(json).unwrap(), submission);
        let message = EventMsg { submission: Some(SubmissionId(7)), event: Event::Info { message: "hi".into() } };
        let json = serde_json::to_value(&message).unwrap();
        assert_eq!(json["event"], serde_json::json!({"type": "info", "data": {"message": "hi"}}));
        let back: EventMsg = serde_json::from_value(json).unwrap();
        assert!(matches!(back.event, Event::Info { message } if message == "hi"));
        let mode = serde_json::to_value(Op::SetPermissionMode(PermissionMode::AcceptEdits)).unwrap();
        assert_eq!(mode, serde_json::json!({"type": "set_permission_mode", "data": "acceptEdits"}));
    }
}
