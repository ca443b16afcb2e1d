//! Rendering replies in the Anthropic Messages API wire format (protocols.md §1).
//!
//! Key order inside every JSON object follows the real API (`type` first), since serde_json is built with
//! `preserve_order` in this workspace: tests can compare bytes, and clients that sniff prefixes are exercised
//! against realistic text.

use serde_json::{Value, json};

use crate::scenario::{Block, split_even};
use crate::sse::{FaultShapes, Frame};
use crate::turn::Turn;

/// The endpoint's fault shapes.
pub(crate) struct Anthropic;

impl FaultShapes for Anthropic {
    fn malformed(&self, frame: &Frame) -> Frame {
        let name = frame.event.unwrap_or("message");
        Frame { event: frame.event, data: format!("{{\"type\":\"{name}\", broken json"), raw: frame.raw }
    }

    fn error_event(&self, error_type: &str, message: &str) -> Frame {
        Frame::named("error", &json!({"type": "error", "error": {"type": error_type, "message": message}}))
    }
}

/// The error body of a failed request: `{"type":"error","error":{"type","message"},"request_id"}`.
pub(crate) fn error_body(error_type: &str, message: &str) -> Value {
    json!({
        "type": "error",
        "error": {"type": error_type, "message": message},
        "request_id": "req_fake",
    })
}

fn message_id(turn: &Turn) -> String {
    turn.reply.id.clone().unwrap_or_else(|| format!("msg_fake_{}", turn.number))
}

fn tool_id(explicit: Option<&str>, number: usize) -> String {
    explicit.map_or_else(|| format!("toolu_fake_{number}"), str::to_owned)
}

/// The SSE events of a streamed reply, in order: `message_start`, `ping`, each block's start / deltas / stop,
/// `message_delta`, `message_stop`.
pub(crate) fn stream_frames(turn: &Turn) -> Vec<Frame> {
    let usage = turn.reply.effective_usage();
    let mut frames = vec![
        Frame::named(
            "message_start",
            &json!({
                "type": "message_start",
                "message": {
                    "id": message_id(turn),
                    "type": "message",
                    "role": "assistant",
                    "model": turn.model,
                    "content": [],
                    "stop_reason": null,
                    "stop_sequence": null,
                    "usage": {
                        "input_tokens": usage.input_tokens,
                        "cache_creation_input_tokens": usage.cache_creation_input_tokens,
                        "cache_read_input_tokens": usage.cache_read_input_tokens,
                        "output_tokens": 1,
                    },
                },
            }),
        ),
        Frame::named("ping", &json!({"type": "ping"})),
    ];
    let mut tool_ordinal = 0;
    for (index, block) in turn.reply.blocks.iter().enumerate() {
        let delta = |delta: Value| {
            Frame::named("content_block_delta", &json!({"type": "content_block_delta", "index": index, "delta": delta}))
        };
        let start = |block: Value| {
            Frame::named(
                "content_block_start",
                &json!({"type": "content_block_start", "index": index, "content_block": block}),
            )
        };
        match block {
            Block::Text { text, chunks } => {
                frames.push(start(json!({"type": "text", "text": ""})));
                for piece in split_even(text, *chunks) {
                    frames.push(delta(json!({"type": "text_delta", "text": piece})));
                }
            }
            Block::Thinking { thinking, signature, chunks } => {
                frames.push(start(json!({"type": "thinking", "thinking": "", "signature": ""})));
                for piece in split_even(thinking, *chunks) {
                    frames.push(delta(json!({"type": "thinking_delta", "thinking": piece})));
                }
                frames.push(delta(json!({"type": "signature_delta", "signature": signature})));
            }
            Block::RedactedThinking { data } => {
                frames.push(start(json!({"type": "redacted_thinking", "data": data})));
            }
            Block::Raw { block } => frames.push(start(block.clone())),
            Block::ToolUse { .. } => {
                let Some(call) = turn.tool_call(block, tool_ordinal) else { continue };
                tool_ordinal += 1;
                frames.push(start(json!({
                    "type": "tool_use",
                    "id": tool_id(call.id, call.number),
                    "name": call.name,
                    "input": {},
                })));
                // The real API opens every tool input with an empty fragment.
                frames.push(delta(json!({"type": "input_json_delta", "partial_json": ""})));
                for piece in split_even(&call.input_text, call.chunks) {
                    frames.push(delta(json!({"type": "input_json_delta", "partial_json": piece})));
                }
            }
        }
        frames.push(Frame::named("content_block_stop", &json!({"type": "content_block_stop", "index": index})));
    }
    frames.push(Frame::named(
        "message_delta",
        &json!({
            "type": "message_delta",
            "delta": {"stop_reason": turn.reply.effective_stop_reason(), "stop_sequence": null},
            "usage": {"output_tokens": usage.output_tokens},
        }),
    ));
    frames.push(Frame::named("message_stop", &json!({"type": "message_stop"})));
    frames
}

/// The body of a non-streaming reply.
pub(crate) fn message_body(turn: &Turn) -> Value {
    let usage = turn.reply.effective_usage();
    let mut tool_ordinal = 0;
    let content: Vec<Value> = turn
        .reply
        .blocks
        .iter()
        .filter_map(|block| match block {
            Block::Text { text, .. } => Some(json!({"type": "text", "text": text})),
            Block::Thinking { thinking, signature, .. } => {
                Some(json!({"type": "thinking", "thinking": thinking, "signature": signature}))
            }
            Block::RedactedThinking { data } => Some(json!({"type": "redacted_thinking", "data": data})),
            Block::Raw { block } => Some(block.clone()),
            Block::ToolUse { .. } => {
                let call = turn.tool_call(block, tool_ordinal)?;
                tool_ordinal += 1;
                Some(json!({
                    "type": "tool_use",
                    "id": tool_id(call.id, call.number),
                    "name": call.name,
                    "input": call.input_value,
                }))
            }
        })
        .collect();
    json!({
        "id": message_id(turn),
        "type": "message",
        "role": "assistant",
        "model": turn.model,
        "content": content,
        "stop_reason": turn.reply.effective_stop_reason(),
        "stop_sequence": null,
        "usage": {
            "input_tokens": usage.input_tokens,
            "cache_creation_input_tokens": usage.cache_creation_input_tokens,
            "cache_read_input_tokens": usage.cache_read_input_tokens,
            "output_tokens": usage.output_tokens,
        },
    })
}
