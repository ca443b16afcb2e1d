//! Provider-neutral conversation: messages and their content blocks.
//!
//! The serde shape of these types is the Anthropic Messages wire shape, because it is the richest of the two
//! protocols (thinking signatures, tool results with error flags) and the one our transcripts and
//! stream-json output speak. The OpenAI provider translates to and from it.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A tool call's input, shared: a Write's can be hundreds of megabytes, and the conversation, the events to front
/// ends and the tool runner all hold it at once, so they share one copy.
pub type ToolInput = Arc<Value>;

/// An answer's text, shared: the conversation keeps it for the next request and the app shows it, and a long
/// answer (tens of megabytes) should cost its size once, not once per holder.
pub type SharedText = Arc<String>;

/// Who said a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Assistant,
}

/// One block of a message's content.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    Text {
        text: SharedText,
    },
    /// Extended thinking. The signature must be sent back unchanged with the assistant turn that had it.
    Thinking {
        thinking: String,
        #[serde(default)]
        signature: String,
    },
    RedactedThinking {
        data: String,
    },
    ToolUse {
        id: String,
        name: String,
        input: ToolInput,
    },
    ToolResult {
        tool_use_id: String,
        content: String,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
    },
    /// An image in a user message (from an SDK host): Anthropic's `source`, `{"type": "base64", "media_type",
    /// "data"}` or `{"type": "url", "url"}`, kept as given.
    Image {
        source: Value,
    },
}

impl ContentBlock {
    pub fn text(text: impl Into<String>) -> Self {
        ContentBlock::Text { text: Arc::new(text.into()) }
    }
}

/// A message in the conversation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub content: Vec<ContentBlock>,
}

impl Message {
    pub fn user_text(text: impl Into<String>) -> Self {
        Message { role: Role::User, content: vec![ContentBlock::text(text)] }
    }

    /// The concatenated text blocks of the message (thinking and tools left out).
    pub fn text(&self) -> String {
        let mut out = String::new();
        for block in &self.content {
            if let ContentBlock::Text { text } = block {
                out.push_str(text);
            }
        }
        out
    }

    /// The tool calls the message asks for, in order: (id, name, input).
    pub fn tool_uses(&self) -> impl Iterator<Item = (&str, &str, &ToolInput)> {
        tool_uses(&self.content)
    }
}

/// Token usage as the providers report it. Anthropic's fields; OpenAI's are mapped onto them
/// (`prompt_tokens` minus cached → input, cached → cache read).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    #[serde(default)]
    pub input_tokens: u64,
    #[serde(default)]
    pub output_tokens: u64,
    #[serde(default)]
    pub cache_creation_input_tokens: u64,
    #[serde(default)]
    pub cache_read_input_tokens: u64,
}

impl Usage {
    /// Adds another request's usage to a running total.
    pub fn accumulate(&mut self, other: &Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_creation_input_tokens += other.cache_creation_input_tokens;
        self.cache_read_input_tokens += other.cache_read_input_tokens;
    }

    /// Every input token of the request: uncached, written to cache and read from cache.
    pub fn total_input(&self) -> u64 {
        self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens
    }
}

/// Why the model stopped. Serialized with Anthropic's names.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    EndTurn,
    MaxTokens,
    StopSequence,
    ToolUse,
    PauseTurn,
    Refusal,
    ModelContextWindowExceeded,
    #[serde(untagged)]
    Other(String),
}

impl StopReason {
    /// Parses Anthropic's stop reason strings; anything unknown is kept as `Other`.
    pub fn from_anthropic(s: &str) -> Self {
        serde_json::from_value(Value::String(s.to_owned())).unwrap_or_else(|_| StopReason::Other(s.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        match self {
            StopReason::EndTurn => "end_turn",
            StopReason::MaxTokens => "max_tokens",
            StopReason::StopSequence => "stop_sequence",
            StopReason::ToolUse => "tool_use",
            StopReason::PauseTurn => "pause_turn",
            StopReason::Refusal => "refusal",
            StopReason::ModelContextWindowExceeded => "model_context_window_exceeded",
            StopReason::Other(s) => s,
        }
    }
}

/// A complete assistant reply from one model round trip.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AssistantMessage {
    pub id: String,
    pub model: String,
    pub content: Vec<ContentBlock>,
    pub stop_reason: Option<StopReason>,
    pub usage: Usage,
}

impl AssistantMessage {
    pub fn to_message(&self) -> Message {
        Message { role: Role::Assistant, content: self.content.clone() }
    }

    /// The tool calls the reply asks for, in order: (id, name, input).
    pub fn tool_uses(&self) -> impl Iterator<Item = (&str, &str, &ToolInput)> {
        tool_uses(&self.content)
    }
}

fn tool_uses(content: &[ContentBlock]) -> impl Iterator<Item = (&str, &str, &ToolInput)> {
    content.iter().filter_map(|block| match block {
        ContentBlock::ToolUse { id, name, input } => Some((id.as_str(), name.as_str(), input)),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_serialize_in_anthropic_shape() {
        let block = ContentBlock::ToolResult { tool_use_id: "t1".into(), content: "ok".into(), is_error: false };
        assert_eq!(
            serde_json::to_value(&block).unwrap(),
            serde_json::json!({"type":"tool_result","tool_use_id":"t1","content":"ok"})
        );
        let block = ContentBlock::ToolUse {
            id: "t".into(),
            name: "Read".into(),
            input: serde_json::json!({"file_path":"a"}).into(),
        };
        assert_eq!(serde_json::to_value(&block).unwrap()["type"], "tool_use");
    }

    #[test]
    fn stop_reasons_round_trip() {
        assert_eq!(StopReason::from_anthropic("tool_use"), StopReason::ToolUse);
        assert_eq!(StopReason::from_anthropic("weird"), StopReason::Other("weird".into()));
        assert_eq!(serde_json::to_value(StopReason::MaxTokens).unwrap(), "max_tokens");
        assert_eq!(serde_json::to_value(StopReason::Other("x".into())).unwrap(), "x");
    }
}
