//! A model's answer as it streams, in Anthropic's vocabulary (every provider's stream is translated into it).

use crate::conversation::{StopReason, Usage};
use serde::{Deserialize, Serialize};

/// The kind of a content block as it starts streaming.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", content = "data", rename_all = "snake_case")]
pub enum BlockStart {
    Text,
    Thinking,
    RedactedThinking { data: String },
    ToolUse { id: String, name: String },
}

/// One streaming event, in Anthropic's vocabulary.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", content = "data", rename_all = "snake_case")]
pub enum StreamEvent {
    MessageStart {
        id: String,
        model: String,
        usage: Usage,
    },
    BlockStart {
        index: usize,
        block: BlockStart,
    },
    TextDelta {
        index: usize,
        text: String,
    },
    ThinkingDelta {
        index: usize,
        thinking: String,
    },
    SignatureDelta {
        index: usize,
        signature: String,
    },
    ToolInputDelta {
        index: usize,
        partial_json: String,
    },
    BlockStop {
        index: usize,
    },
    /// Usage here is cumulative for the message: it replaces, never adds to, what came before.
    MessageDelta {
        stop_reason: Option<StopReason>,
        usage: Usage,
    },
    MessageStop,
}
