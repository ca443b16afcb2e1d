//! What both endpoint renderers share: the reply being served with its resolved ids and model, and the mapping
//! between HTTP statuses and error types.

use serde_json::Value;

use crate::scenario::{Block, Reply};

/// A reply resolved for one request.
#[derive(Clone, Debug)]
pub(crate) struct Turn {
    /// The scripted reply.
    pub reply: Reply,
    /// 1-based position of the reply in the scenario (used in generated ids).
    pub number: usize,
    /// How many tool uses the earlier replies had, so generated tool ids are unique across the scenario.
    pub tools_before: usize,
    /// Model to report: the reply's override, else the request's `model`, else `fake-model`.
    pub model: String,
    /// Unix seconds, for OpenAI's `created`.
    pub created: u64,
}

/// A tool use block with everything resolved.
pub(crate) struct ToolCall<'a> {
    /// Index among the reply's tool uses (OpenAI's `tool_calls[].index`).
    pub ordinal: usize,
    /// The explicit id, if the scenario gave one.
    pub id: Option<&'a str>,
    /// 1-based number across the scenario, for generated ids.
    pub number: usize,
    pub name: &'a str,
    /// Exactly the characters to stream as partial JSON.
    pub input_text: String,
    /// The input as a JSON value for non-streaming answers (a raw input that does not parse becomes a string).
    pub input_value: Value,
    pub chunks: usize,
}

impl Turn {
    /// Resolves the model name from the request body.
    pub(crate) fn new(reply: Reply, number: usize, tools_before: usize, request: &Value) -> Self {
        let model = reply
            .model
            .clone()
            .or_else(|| request.get("model").and_then(Value::as_str).map(str::to_owned))
            .unwrap_or_else(|| "fake-model".to_owned());
        let created = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
        Turn { reply, number, tools_before, model, created }
    }

    /// If `block` is a tool use, its resolved form; `ordinal` is its index among this reply's tool uses.
    pub(crate) fn tool_call<'a>(&self, block: &'a Block, ordinal: usize) -> Option<ToolCall<'a>> {
        let Block::ToolUse { id, name, input, raw_input, chunks } = block else {
            return None;
        };
        let (input_text, input_value) = match raw_input {
            Some(raw) => (raw.clone(), serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.clone()))),
            None => (input.to_string(), input.clone()),
        };
        Some(ToolCall {
            ordinal,
            id: id.as_deref(),
            number: self.tools_before + ordinal + 1,
            name,
            input_text,
            input_value,
            chunks: *chunks,
        })
    }

    /// All tool uses of the reply, in order.
    pub(crate) fn tool_calls(&self) -> Vec<ToolCall<'_>> {
        self.reply
            .blocks
            .iter()
            .filter(|b| matches!(b, Block::ToolUse { .. }))
            .enumerate()
            .filter_map(|(i, b)| self.tool_call(b, i))
            .collect()
    }
}

/// Number of tool use blocks in `reply`.
pub(crate) fn count_tool_uses(reply: &Reply) -> usize {
    reply.blocks.iter().filter(|b| matches!(b, Block::ToolUse { .. })).count()
}

/// Anthropic error type for an HTTP status (protocols.md §1), with sensible fallbacks for other codes.
pub(crate) fn error_type_for_status(status: u16) -> &'static str {
    match status {
        400 => "invalid_request_error",
        401 => "authentication_error",
        402 => "billing_error",
        403 => "permission_error",
        404 => "not_found_error",
        413 => "request_too_large",
        429 => "rate_limit_error",
        504 => "timeout_error",
        529 => "overloaded_error",
        s if s >= 500 => "api_error",
        _ => "invalid_request_error",
    }
}

/// The HTTP status that goes with an error type (used when an error event must become an HTTP error).
pub(crate) fn status_for_error_type(error_type: &str) -> u16 {
    match error_type {
        "invalid_request_error" => 400,
        "authentication_error" => 401,
        "billing_error" => 402,
        "permission_error" => 403,
        "not_found_error" => 404,
        "request_too_large" => 413,
        "rate_limit_error" => 429,
        "timeout_error" => 504,
        "overloaded_error" => 529,
        _ => 500,
    }
}
