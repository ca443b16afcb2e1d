//! Rendering replies in the OpenAI Chat Completions wire format (protocols.md §2).
//!
//! Thinking blocks have no standard Chat Completions form, so they are skipped here; tool calls are streamed the way
//! OpenAI does it (first fragment carries `id`, `type` and `name` with empty arguments, later fragments only
//! argument pieces), which is the shape every OpenAI-compatible client must merge by `index`.

use serde_json::{Map, Value, json};

use crate::scenario::{Block, split_even};
use crate::sse::{FaultShapes, Frame};
use crate::turn::{Turn, status_for_error_type};

/// The endpoint's fault shapes.
pub(crate) struct OpenAi;

impl FaultShapes for OpenAi {
    fn malformed(&self, frame: &Frame) -> Frame {
        Frame { data: "{not json".to_owned(), ..frame.clone() }
    }

    fn error_event(&self, error_type: &str, message: &str) -> Frame {
        Frame::data(&error_body(error_type, message, status_for_error_type(error_type)))
    }
}

/// `{"error":{"message","type","code"}}`; `code` is the HTTP status number, as llama.cpp's server sends it.
pub(crate) fn error_body(error_type: &str, message: &str, code: u16) -> Value {
    json!({"error": {"message": message, "type": error_type, "code": code}})
}

/// Maps an Anthropic stop reason to a Chat Completions `finish_reason`.
pub(crate) fn finish_reason(stop_reason: &str) -> &'static str {
    match stop_reason {
        "tool_use" => "tool_calls",
        "max_tokens" | "model_context_window_exceeded" => "length",
        "refusal" => "content_filter",
        _ => "stop",
    }
}

fn completion_id(turn: &Turn) -> String {
    turn.reply.id.clone().unwrap_or_else(|| format!("chatcmpl-fake-{}", turn.number))
}

fn call_id(explicit: Option<&str>, number: usize) -> String {
    explicit.map_or_else(|| format!("call_fake_{number}"), str::to_owned)
}

fn usage_json(turn: &Turn) -> Value {
    let u = turn.reply.effective_usage();
    let prompt = u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens;
    json!({
        "prompt_tokens": prompt,
        "completion_tokens": u.output_tokens,
        "total_tokens": prompt + u.output_tokens,
        "prompt_tokens_details": {"cached_tokens": u.cache_read_input_tokens},
    })
}

/// The SSE events of a streamed reply: role chunk, content and tool call chunks, the finish chunk, the usage chunk
/// when `include_usage`, then `[DONE]`.
pub(crate) fn stream_frames(turn: &Turn, include_usage: bool) -> Vec<Frame> {
    let id = completion_id(turn);
    let chunk = |choices: Value, usage: Option<Value>| {
        let mut obj = Map::new();
        obj.insert("id".into(), json!(id));
        obj.insert("object".into(), json!("chat.completion.chunk"));
        obj.insert("created".into(), json!(turn.created));
        obj.insert("model".into(), json!(turn.model));
        obj.insert("choices".into(), choices);
        // Real OpenAI only sends the `usage` key at all when usage was asked for.
        if include_usage {
            obj.insert("usage".into(), usage.unwrap_or(Value::Null));
        }
        Frame::data(&Value::Object(obj))
    };
    let delta = |delta: Value| chunk(json!([{"index": 0, "delta": delta, "finish_reason": null}]), None);

    let mut frames = vec![delta(json!({"role": "assistant", "content": ""}))];
    let mut tool_ordinal = 0;
    for block in &turn.reply.blocks {
        match block {
            Block::Text { text, chunks } => {
                for piece in split_even(text, *chunks) {
                    frames.push(delta(json!({"content": piece})));
                }
            }
            Block::Thinking { .. } | Block::RedactedThinking { .. } | Block::Raw { .. } => {}
            Block::ToolUse { .. } => {
                let Some(call) = turn.tool_call(block, tool_ordinal) else { continue };
                tool_ordinal += 1;
                frames.push(delta(json!({"tool_calls": [{
                    "index": call.ordinal,
                    "id": call_id(call.id, call.number),
                    "type": "function",
                    "function": {"name": call.name, "arguments": ""},
                }]})));
                for piece in split_even(&call.input_text, call.chunks) {
                    frames.push(delta(json!({"tool_calls": [{
                        "index": call.ordinal,
                        "function": {"arguments": piece},
                    }]})));
                }
            }
        }
    }
    let finish = finish_reason(&turn.reply.effective_stop_reason());
    frames.push(chunk(json!([{"index": 0, "delta": {}, "finish_reason": finish}]), None));
    if include_usage {
        frames.push(chunk(json!([]), Some(usage_json(turn))));
    }
    frames.push(Frame::data_text("[DONE]"));
    frames
}

/// The body of a non-streaming reply (`chat.completion`).
pub(crate) fn completion_body(turn: &Turn) -> Value {
    let text: String = turn
        .reply
        .blocks
        .iter()
        .filter_map(|b| match b {
            Block::Text { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    let calls: Vec<Value> = turn
        .tool_calls()
        .into_iter()
        .map(|call| {
            json!({
                "id": call_id(call.id, call.number),
                "type": "function",
                "function": {"name": call.name, "arguments": call.input_text},
            })
        })
        .collect();
    let mut message = Map::new();
    message.insert("role".into(), json!("assistant"));
    let content = if text.is_empty() && !calls.is_empty() { Value::Null } else { json!(text) };
    message.insert("content".into(), content);
    if !calls.is_empty() {
        message.insert("tool_calls".into(), Value::Array(calls));
    }
    json!({
        "id": completion_id(turn),
        "object": "chat.completion",
        "created": turn.created,
        "model": turn.model,
        "choices": [{
            "index": 0,
            "message": message,
            "finish_reason": finish_reason(&turn.reply.effective_stop_reason()),
        }],
        "usage": usage_json(turn),
    })
}
