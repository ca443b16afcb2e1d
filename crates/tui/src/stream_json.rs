//! The JSON shapes of headless output (`--output-format json|stream-json`), as Claude Code emits them and the
//! Claude Agent SDK parses them (see shared/protocols.md §3).

use serde_json::{Value, json};
use tandem_core::provider::StreamEvent;
use tandem_protocol::conversation::{AssistantMessage, Message};
use tandem_protocol::{RunOutcome, TurnSummary};

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
        "slash_commands": [],
        "apiKeySource": "none",
        "claude_code_version": CLAUDE_CODE_COMPATIBLE_VERSION,
        "tandem_version": env!("CARGO_PKG_VERSION"),
        "output_style": "default",
        "agents": [],
        "skills": [],
        "plugins": [],
        "uuid": uuid(),
    })
}

/// The `claude_code_version` tandem reports: the Claude Code release whose headless interface and control
/// protocol it speaks (the Agent SDK checks it against its minimum). tandem's own is `tandem_version`.
pub const CLAUDE_CODE_COMPATIBLE_VERSION: &str = "2.1.332";

/// `system/api_retry`: a request failed and is sent again; a consumer drops the attempt's partial stream events.
pub fn api_retry(
    session_id: &str,
    attempt: u32,
    max_attempts: u32,
    delay_ms: u64,
    status: Option<u16>,
    reason: &str,
) -> Value {
    json!({
        "type": "system",
        "subtype": "api_retry",
        "attempt": attempt,
        "max_retries": max_attempts.saturating_sub(1),
        "retry_delay_ms": delay_ms,
        "error_status": status,
        "error": reason,
        "session_id": session_id,
        "uuid": uuid(),
    })
}

/// `system/hook_started` and `system/hook_response` (`--include-hook-events`); `None` for other events.
pub fn hook_event(session_id: &str, event: &tandem_protocol::Event) -> Option<Value> {
    use tandem_protocol::Event;
    let value = match event {
        Event::HookStarted { hook_id, hook_name, hook_event } => json!({
            "type": "system", "subtype": "hook_started", "hook_id": hook_id, "hook_name": hook_name,
            "hook_event": hook_event, "session_id": session_id, "uuid": uuid(),
        }),
        Event::HookFinished { hook_id, hook_name, hook_event, stdout, stderr, exit_code, outcome } => json!({
            "type": "system", "subtype": "hook_response", "hook_id": hook_id, "hook_name": hook_name,
            "hook_event": hook_event, "output": format!("{stdout}{stderr}"), "stdout": stdout, "stderr": stderr,
            "exit_code": exit_code, "outcome": outcome, "session_id": session_id, "uuid": uuid(),
        }),
        _ => return None,
    };
    Some(value)
}

/// Claude Code's synthetic assistant message for a request that failed for good.
pub fn api_error_message(session_id: &str, failure: &tandem_protocol::ApiFailure) -> Value {
    let text = format!("API Error: {}", failure.message);
    json!({
        "type": "assistant",
        "message": {
            "id": uuid(),
            "type": "message",
            "role": "assistant",
            "model": "<synthetic>",
            "content": [{"type": "text", "text": text}],
            "stop_reason": "stop_sequence",
            "stop_sequence": "",
            "usage": {"input_tokens": 0, "output_tokens": 0, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
        },
        "parent_tool_use_id": null,
        "session_id": session_id,
        "uuid": uuid(),
        "timestamp": timestamp(),
        "error": "unknown",
        "is_api_error_message": true,
        "api_error_status": failure.status,
        "api_error_type": failure.error_type,
    })
}

/// `system/session_state_changed` (`running`, `requires_action`, `idle`), for an SDK host only.
pub fn session_state(session_id: &str, state: &str) -> Value {
    json!({
        "type": "system",
        "subtype": "session_state_changed",
        "state": state,
        "sdk_host_only": true,
        "session_id": session_id,
        "uuid": uuid(),
    })
}

/// `system/status`: a model request is being sent.
pub fn status_requesting(session_id: &str) -> Value {
    json!({"type": "system", "subtype": "status", "status": "requesting", "session_id": session_id, "uuid": uuid()})
}

/// Now as an ISO 8601 UTC time with milliseconds, as Claude Code stamps its messages.
pub fn timestamp() -> String {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let secs = now.as_secs();
    let (year, month, day) = tandem_core::prompt::civil_date(secs);
    let rest = secs % 86_400;
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rest / 3600,
        rest / 60 % 60,
        rest % 60,
        now.subsec_millis()
    )
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
        "timestamp": timestamp(),
    })
}

/// Tool results going back to the model, one `user` frame per result as Claude Code sends them, each with its
/// call's `tool_use_result` (taken from `results`) when there is one.
pub fn users(
    session_id: &str,
    message: &Message,
    results: &mut std::collections::HashMap<String, Value>,
) -> Vec<Value> {
    use tandem_protocol::conversation::ContentBlock;
    let mut frames = Vec::new();
    let mut rest = Vec::new();
    for block in &message.content {
        match block {
            ContentBlock::ToolResult { tool_use_id, .. } => {
                let mut frame = user_blocks(session_id, std::slice::from_ref(block));
                if let Some(result) = results.remove(tool_use_id) {
                    frame["tool_use_result"] = result;
                }
                frames.push(frame);
            }
            other => rest.push(other.clone()),
        }
    }
    // Hook context sent beside the results (PostToolUse additionalContext) is a frame of its own.
    if !rest.is_empty() {
        frames.push(user_blocks(session_id, &rest));
    }
    frames
}

/// A user message the host sent, printed back (`--replay-user-messages`) with the uuid that names it.
pub fn user_replay(session_id: &str, frame: &Value, uuid: &str) -> Value {
    json!({
        "type": "user",
        "message": frame.get("message").cloned().unwrap_or(Value::Null),
        "parent_tool_use_id": frame.get("parent_tool_use_id").cloned().unwrap_or(Value::Null),
        "session_id": session_id,
        "uuid": uuid,
        "timestamp": timestamp(),
        "isReplay": true,
    })
}

fn user_blocks(session_id: &str, content: &[tandem_protocol::conversation::ContentBlock]) -> Value {
    json!({
        "type": "user",
        "message": { "role": "user", "content": content },
        "parent_tool_use_id": null,
        "session_id": session_id,
        "uuid": uuid(),
        "timestamp": timestamp(),
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
pub fn result(session_id: &str, summary: &TurnSummary, model_usage: &Value) -> Value {
    let subtype = match summary.outcome {
        RunOutcome::Success => "success",
        RunOutcome::ErrorMaxTurns => "error_max_turns",
        RunOutcome::ErrorMaxBudgetUsd => "error_max_budget_usd",
        RunOutcome::ErrorMaxStructuredOutputRetries => "error_max_structured_output_retries",
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
        // The SDK types it as a number: 0 when the price is unknown (then `modelUsage` says `costUnknown`).
        "total_cost_usd": summary.total_cost_usd.unwrap_or(0.0),
        "usage": result_usage(&summary.usage, model_usage),
        "modelUsage": model_usage,
        "permission_denials": summary.permission_denials,
        "terminal_reason": terminal_reason(summary),
        "api_error_status": summary.api_error.as_ref().and_then(|failure| failure.status),
        "uuid": uuid(),
    });
    if let Some(text) = &summary.result_text {
        value["result"] = json!(text);
    }
    if let Some(output) = &summary.structured_output {
        value["structured_output"] = output.clone();
    }
    if !summary.errors.is_empty() {
        value["errors"] = json!(summary.errors);
    }
    // The answer may be fine, but the conversation is not saved: never a plain success.
    if let Some(unsaved) = &summary.unsaved {
        value["is_error"] = json!(true);
        value["warnings"] = json!([unsaved]);
    }
    value
}

/// The run's usage in the SDK's `NonNullableUsage` shape (Anthropic's usage with every field present): the
/// server tools' requests (web searches, counted per model in `modelUsage`), the service tier, and the cache
/// writes by lifetime (tandem writes 5-minute cache entries only).
fn result_usage(usage: &tandem_protocol::conversation::Usage, model_usage: &Value) -> Value {
    let searches: u64 = model_usage
        .as_object()
        .map(|models| models.values().filter_map(|model| model["webSearchRequests"].as_u64()).sum())
        .unwrap_or(0);
    let mut value = json!(usage);
    value["server_tool_use"] = json!({"web_search_requests": searches, "web_fetch_requests": 0});
    value["service_tier"] = json!("standard");
    value["cache_creation"] = json!({
        "ephemeral_1h_input_tokens": 0,
        "ephemeral_5m_input_tokens": usage.cache_creation_input_tokens,
    });
    value
}

/// Why the run ended, in Claude Code's words.
fn terminal_reason(summary: &TurnSummary) -> &'static str {
    match summary.outcome {
        RunOutcome::Success => "completed",
        RunOutcome::ErrorMaxTurns => "max_turns",
        RunOutcome::ErrorMaxBudgetUsd => "max_budget_usd",
        RunOutcome::ErrorMaxStructuredOutputRetries => "max_structured_output_retries",
        RunOutcome::ErrorDuringExecution if summary.interrupted => "interrupted",
        RunOutcome::ErrorDuringExecution if summary.api_error.is_some() => "api_error",
        RunOutcome::ErrorDuringExecution => "error",
    }
}

/// An event in Anthropic's wire shape (both providers' streams are read into its vocabulary).
pub fn anthropic_event(event: &StreamEvent) -> Value {
    tandem_core::inspect::event_json(event)
}

fn uuid() -> String {
    tandem_core::agent::new_session_id()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tandem_protocol::conversation::{StopReason, Usage};

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
            api_error: None,
            structured_output: None,
            unsaved: None,
        };
        let value = result("s", &summary, &json!({}));
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
        assert_eq!(value["total_cost_usd"], 0.0);
        assert_eq!(value["subtype"], "success");
        // The SDK types usage as NonNullableUsage: a program may read any of these without a check.
        let usage = &value["usage"];
        assert_eq!(usage["server_tool_use"]["web_search_requests"], 0, "{usage}");
        assert_eq!(usage["service_tier"], "standard");
        assert!(usage["cache_creation"]["ephemeral_5m_input_tokens"].is_number());
    }
}
