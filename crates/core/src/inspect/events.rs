//! Stream events in Anthropic's wire shape: how stream-json's `stream_event` frames and the request record
//! show a response, whichever provider streamed it.

use serde_json::{Value, json};

use crate::provider::{BlockStart, StreamEvent};

/// `event` as the Messages API streams it.
pub fn event_json(event: &StreamEvent) -> Value {
    match event {
        StreamEvent::MessageStart { id, model, usage } => json!({
            "type": "message_start",
            "message": {
                "id": id, "type": "message", "role": "assistant", "model": model, "content": [],
                "stop_reason": null, "stop_sequence": null, "usage": usage,
            },
        }),
        StreamEvent::BlockStart { index, block } => {
            let content_block = match block {
                BlockStart::Text => json!({"type": "text", "text": ""}),
                BlockStart::Thinking => json!({"type": "thinking", "thinking": "", "signature": ""}),
                BlockStart::RedactedThinking { data } => json!({"type": "redacted_thinking", "data": data}),
                BlockStart::ToolUse { id, name } => json!({"type": "tool_use", "id": id, "name": name, "input": {}}),
            };
            json!({"type": "content_block_start", "index": index, "content_block": content_block})
        }
        StreamEvent::TextDelta { index, text } => delta(*index, json!({"type": "text_delta", "text": text})),
        StreamEvent::ThinkingDelta { index, thinking } => {
            delta(*index, json!({"type": "thinking_delta", "thinking": thinking}))
        }
        StreamEvent::SignatureDelta { index, signature } => {
            delta(*index, json!({"type": "signature_delta", "signature": signature}))
        }
        StreamEvent::ToolInputDelta { index, partial_json } => {
            delta(*index, json!({"type": "input_json_delta", "partial_json": partial_json}))
        }
        StreamEvent::BlockStop { index } => json!({"type": "content_block_stop", "index": index}),
        StreamEvent::MessageDelta { stop_reason, usage } => json!({
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": null},
            "usage": usage,
        }),
        StreamEvent::MessageStop => json!({"type": "message_stop"}),
    }
}

fn delta(index: usize, delta: Value) -> Value {
    json!({"type": "content_block_delta", "index": index, "delta": delta})
}
