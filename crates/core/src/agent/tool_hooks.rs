//! The hooks around one tool call: PreToolUse and PermissionRequest (in `tool_calls`' decision), the
//! Notification of a dialog, and PostToolUse / PostToolUseFailure after the run.

use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::lock;
use super::tool_calls::{Call, ToolRunner, TurnStop};
use crate::hooks::{HookEvent, HookOutcome};
use crate::permissions::split_rule_list;
use crate::tools::ToolOutput;

impl ToolRunner<'_> {
    /// Runs a tool event's hooks for `call` with `input` (Claude Code's `tool_name`, `tool_input`,
    /// `tool_use_id`, plus `fields`) and tells the user what they said for them.
    pub(super) async fn fire(
        &self,
        event: HookEvent,
        call: &Call,
        input: &Value,
        mut fields: Map<String, Value>,
    ) -> HookOutcome {
        fields.insert("tool_name".into(), json!(call.name));
        fields.insert("tool_input".into(), input.clone());
        fields.insert("tool_use_id".into(), json!(call.id));
        let outcome =
            self.hooks.fire(event, Some(&call.name), &self.hook_base, fields, Some(&self.context.cancel)).await;
        super::session_hooks::report(self.events, &outcome);
        outcome
    }

    /// The Notification hooks of a permission dialog; they run beside it (a notification never holds it up).
    pub(super) fn notify_permission_prompt(&self, tool: &str) {
        if !self.hooks.has(HookEvent::Notification) {
            return;
        }
        let hooks = Arc::clone(self.hooks);
        let base = self.hook_base.clone();
        let events = self.events.clone();
        let mut fields = Map::new();
        fields.insert("message".into(), json!(format!("tandem needs your permission to use {tool}")));
        fields.insert("notification_type".into(), json!("permission_prompt"));
        tokio::spawn(async move {
            let outcome = hooks.fire(HookEvent::Notification, Some("permission_prompt"), &base, fields, None).await;
            super::session_hooks::report(&events, &outcome);
        });
    }

    /// PostToolUse (or PostToolUseFailure) for a call that ran: a hook's feedback and context go to the model
    /// with the result.
    pub(super) async fn after_run(&self, call: &Call, input: &Value, output: &mut ToolOutput) {
        let event = if output.is_error { HookEvent::PostToolUseFailure } else { HookEvent::PostToolUse };
        if !self.hooks.has(event) {
            return;
        }
        let mut fields = Map::new();
        if output.is_error {
            fields.insert("error".into(), json!(output.content));
            fields.insert("is_interrupt".into(), json!(false));
        } else {
            fields.insert("tool_response".into(), tool_response(input, &output.content));
        }
        let outcome = self.fire(event, call, input, fields).await;
        if let Some(reason) = outcome.stop {
            *lock(&self.stopped) = Some(TurnStop::Hook(reason));
        }
        if let Some(reason) = outcome.blocked {
            output.content.push_str(&format!("\n\n{} hook feedback: {reason}", event.as_str()));
        }
        for context in outcome.context {
            output.content.push_str(&format!("\n\n{} hook additional context: {context}", event.as_str()));
        }
    }
}

/// Claude Code's `permission_suggestions` for the rule an "always" answer would save.
pub(super) fn suggestions(tool: &str, suggested_rule: &str) -> Value {
    let rules: Vec<Value> = split_rule_list(suggested_rule)
        .iter()
        .map(|text| match crate::permissions::Rule::parse(text) {
            Ok(rule) => json!({"toolName": rule.tool, "ruleContent": rule.specifier}),
            Err(_) => json!({"toolName": tool}),
        })
        .collect();
    if rules.is_empty() {
        return json!([]);
    }
    json!([{"type": "addRules", "rules": rules, "behavior": "allow", "destination": "localSettings"}])
}

/// What PostToolUse hooks get as `tool_response`: the result's text, and for file tools the path (Claude Code's
/// `filePath`), which is what most hooks (formatters, linters) read.
fn tool_response(input: &Value, content: &str) -> Value {
    let mut response = json!({ "content": content, "success": true });
    if let Some(path) = input.get("file_path").and_then(Value::as_str) {
        response["filePath"] = json!(path);
    }
    response
}
