//! The only language between a front end (TUI, headless) and the agent.
//!
//! `Op` flows front end → core, `Event` flows core → front end. Tool calls are item lifecycles sharing one
//! call id: `ToolCallStarted` → (`PermissionRequested` → `Op::PermissionAnswer`) → `ToolCallOutput`* →
//! `ToolCallFinished`. No business logic lives here.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::conversation::{AssistantMessage, Message, StopReason, Usage};
use crate::permissions::PermissionMode;
use crate::provider::StreamEvent;
use crate::tools::{Preview, Risk};

/// Front end → core.
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    /// The user's message: starts a turn that runs until the model replies without tool calls.
    UserTurn {
        text: String,
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
    /// Start a new conversation (the old one is dropped from the model's context).
    ClearConversation,
    /// Ends the agent task.
    Shutdown,
}

/// How the user answered a permission request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PermissionAnswer {
    AllowOnce,
    /// Allow, and remember the rule for the rest of the session.
    AllowForSession {
        rule: String,
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
}

/// A tool call that the permission policy denied.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PermissionDenial {
    pub tool_name: String,
    pub tool_use_id: String,
    pub tool_input: Value,
}

/// The end of a turn, with everything a result line needs.
#[derive(Clone, Debug, PartialEq)]
pub struct TurnSummary {
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
}

/// Core → front end.
#[derive(Clone, Debug)]
pub enum Event {
    SessionConfigured {
        session_id: String,
        provider: String,
        model: String,
        cwd: PathBuf,
        tools: Vec<String>,
        permission_mode: PermissionMode,
    },
    /// A model round trip begins (1-based within the turn).
    RequestStarted {
        round: u32,
    },
    /// A raw streaming event of the current response (text and thinking deltas, tool input as it streams).
    Stream(StreamEvent),
    /// A request failed and will be retried after `delay_ms`. If output had already streamed, it is discarded:
    /// front ends must drop what they showed of it.
    Retrying {
        attempt: u32,
        max_attempts: u32,
        delay_ms: u64,
        reason: String,
        discarded_partial_output: bool,
    },
    /// A complete assistant reply, appended to the conversation.
    AssistantMessage(AssistantMessage),
    ToolCallStarted {
        call_id: String,
        name: String,
        input: Value,
    },
    /// The user must decide; answer with [`Op::PermissionAnswer`] carrying the same call id.
    PermissionRequested {
        call_id: String,
        tool: String,
        risk: Risk,
        input: Value,
        preview: Option<Preview>,
        /// The session rule an "always allow" answer would add (e.g. `Bash(npm test:*)`, `Edit`).
        suggested_rule: String,
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
        duration_ms: u64,
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
    /// The model was changed with [`Op::SetModel`].
    ModelChanged {
        model: String,
        context_window: u64,
    },
    /// The conversation was cleared with [`Op::ClearConversation`].
    ConversationCleared,
    /// Something went wrong that the user should see (the turn may still continue).
    Error {
        message: String,
    },
    TurnFinished(TurnSummary),
}
