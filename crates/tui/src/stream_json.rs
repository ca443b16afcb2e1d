//! The JSON shapes of headless output (`--output-format json|stream-json`), as Claude Code emits them and the
//! Claude Agent SDK parses them (see shared/protocols.md §3).

use serde_json::{Value, json};
use tandem_core::conversation::{AssistantMessage, Message};
use tandem_core::protocol::{RunOutcome, TurnSummary};
use tandem_core::provider::{BlockStart, StreamEvent};

/// `{"type":"system","subtype":"init",…}`, once at the start of a run.
pub fn init(session_id: &str, cwd: &str, model: &str, tools: &[String], permission_mode: &str) -> Value {
    json!({
        "type": "system",
        "subtype": "init",
        "session_id": session_id,
        "cwd": cwd,
        "model": model,
        "tools": tools,
        "mcp_servers": [],
        "permissionMode": permission_mode,
        "apiKeySource": "none",
        "output_style": "default",
        "uuid": uuid(),
    })
}

/// The conversation was compacted.
pub fn compact_boundary(session_id: &str, trigger: tandem_core::session::CompactTrigger, pre_tokens: u64) -> Value {
    json!({
        "type": "system",
        "subtype": "compact_boundary",
        "session_id": session_id,
        "compact_metadata": { "trigger": trigger, "pre_tokens": pre_tokens },
        "uuid": uuid(),
    })
}

/// One complete API message.
pub fn assistant(session_id: &str, message: &AssistantMessage) -> Value {
    json!({
        "type": "assistant",
        "message": {
            "id": message.id,
            "type": "message",
            "role": "assistant",
            "model": message.model,
            "content": message.content,
            "stop_reason": message.stop_reason,
            "stop_sequence": null,
            "usage": message.usage,
        },
        "parent_tool_use_id": null,
        "session_id": session_id,
        "uuid": uuid(),
    })
}

/// Tool results going back to the model.
pub fn user(session_id: &str, message: &Message) -> Value {
    json!({
        "type": "user",
        "message": { "role": "user", "content": message.content },
        "parent_tool_use_id": null,
        "session_id": session_id,
        "uuid": uuid(),
    })
}

/// A raw streaming event, for `--include-partial-messages`.
pub fn stream_event(session_id: &str, event: &StreamEvent) -> Value {
    json!({
        "type": "stream_event",
        "event": anthropic_event(event),
        "session_id": session_id,
        "parent_tool_use_id": null,
        "uuid": uuid(),
    })
}

/// The last line: how the run ended.
pub fn result(session_id: &str, summary: &TurnSummary) -> Value {
    let subtype = match summary.outcome {
        RunOutcome::Success => "success",
        RunOutcome::ErrorMaxTurns => "error_max_turns",
        RunOutcome::ErrorMaxBudgetUsd => "error_max_budget_usd",
        RunOutcome::ErrorDuringExecution => "error_during_execution",
    };
    let mut value = json!({
        "type": "result",
        "subtype": subtype,
        "is_error": summary.outcome != RunOutcome::Success,
        "duration_ms": summary.duration_ms,
        "duration_api_ms": summary.duration_api_ms,
        "num_turns": summary.num_turns,
        "session_id": session_id,
        "stop_reason": summary.stop_reason,
        "total_cost_usd": summary.total_cost_usd,
        "usage": summary.usage,
        "permission_denials": summary.permission_denials,
        "uuid": uuid(),
    });
    if let Some(text) = &summary.result_text {
        value["result"] = json!(text);
    }
    if !summary.errors.is_empty() {
        value["errors"] = json!(summary.errors);
    }
    value
}

/// A provider-neutral stream event in Anthropic's SSE event shape.
pub fn anthropic_event(event: &StreamEvent) -> Value {
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

fn uuid() -> String {
    tandem_core::agent::new_session_id()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tandem_core::conversation::{StopReason, Usage};

    #[test]
    fn stream_events_have_anthropic_shapes() {
        let event = StreamEvent::ToolInputDelta { index: 2, partial_json: "{\"a\"".into() };
        assert_eq!(
            anthropic_event(&event),
            json!({"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"a\""}})
        );
        let event = StreamEvent::MessageDelta { stop_reason: Some(StopReason::ToolUse), usage: Usage::default() };
        assert_eq!(anthropic_event(&event)["delta"]["stop_reason"], "tool_use");
    }

    #[test]
    fn result_has_the_sdk_fields() {
        let summary = TurnSummary {
            turn_id: 1,
            outcome: RunOutcome::Success,
            result_text: Some("done".into()),
            stop_reason: Some(StopReason::EndTurn),
            num_turns: 2,
            duration_ms: 5,
            duration_api_ms: 3,
            usage: Usage::default(),
            total_cost_usd: None,
            permission_denials: vec![],
            errors: vec![],
            interrupted: false,
        };
        let value = result("s", &summary);
        for field in [
            "type",
            "subtype",
            "is_error",
            "duration_ms",
            "duration_api_ms",
            "num_turns",
            "session_id",
            "result",
            "stop_reason",
            "total_cost_usd",
            "usage",
            "permission_denials",
        ] {
            assert!(value.get(field).is_some(), "{field}");
        }
        assert_eq!(value["total_cost_usd"], Value::Null);
        assert_eq!(value["subtype"], "success");
    }
}
