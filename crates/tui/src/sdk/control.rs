//! tandem's side of the control protocol: requests tandem sends the SDK host (`can_use_tool`, `hook_callback`)
//! and the matching of its `control_response`s to them.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tandem_core::permissions::split_rule_list;
use tandem_protocol::{AlwaysScope, PermissionAnswer};
use tokio::sync::oneshot;

use crate::headless::Output;

/// The host's answer to one of tandem's requests: its `response` object, or its error message.
pub type HostAnswer = Result<Value, String>;

/// Sends requests to the host and hands each `control_response` to the request that waits for it.
#[derive(Clone)]
pub struct HostLink {
    out: Output,
    waiting: Arc<Mutex<HashMap<String, oneshot::Sender<HostAnswer>>>>,
}

impl HostLink {
    pub(crate) fn new(out: Output) -> Self {
        HostLink { out, waiting: Arc::default() }
    }

    /// Sends `request` (its `subtype` included) and waits for the host's answer. A host that goes away
    /// answers with an error.
    pub async fn request(&self, request: Value) -> HostAnswer {
        self.request_as(tandem_core::agent::new_session_id(), request).await
    }

    /// [`HostLink::request`] under a request id the caller chose (to cancel it later).
    pub async fn request_as(&self, id: String, request: Value) -> HostAnswer {
        let (tx, rx) = oneshot::channel();
        lock(&self.waiting).insert(id.clone(), tx);
        self.out.line(&json!({"type": "control_request", "request_id": id, "request": request}));
        rx.await.unwrap_or_else(|_| Err("the SDK host closed the connection before answering".into()))
    }

    /// Hands a `control_response` frame's `response` to its request; false when nothing waits for it.
    pub fn answer(&self, response: &Value) -> bool {
        let Some(id) = response.get("request_id").and_then(Value::as_str) else { return false };
        let Some(waiter) = lock(&self.waiting).remove(id) else { return false };
        let answer = match response.get("subtype").and_then(Value::as_str) {
            Some("success") => Ok(response.get("response").cloned().unwrap_or(Value::Object(Default::default()))),
            _ => Err(response
                .get("error")
                .and_then(Value::as_str)
                .unwrap_or("the host answered with an error")
                .to_owned()),
        };
        let _ = waiter.send(answer);
        true
    }

    /// Tells the host that tandem no longer waits for request `id` (its call was interrupted): an answer that
    /// still comes is one nothing waits for.
    pub fn cancel(&self, id: &str) {
        if lock(&self.waiting).remove(id).is_some() {
            self.out.line(&json!({"type": "control_cancel_request", "request_id": id}));
        }
    }

    /// Ends every request still waiting (stdin closed): each gets an error answer.
    pub fn close(&self) {
        lock(&self.waiting).clear();
    }
}

/// The host's SDK MCP servers are reached with `mcp_message` control requests; the answer's `mcp_response` is
/// the server's JSON-RPC reply.
impl tandem_core::mcp::relay::McpRelay for HostLink {
    fn send(&self, server: &str, message: Value) -> futures::future::BoxFuture<'static, Result<Value, String>> {
        let link = self.clone();
        let request = json!({"subtype": "mcp_message", "server_name": server, "message": message});
        Box::pin(async move {
            let answer = link.request(request).await?;
            answer.get("mcp_response").cloned().ok_or_else(|| "the SDK host's answer has no mcp_response".to_owned())
        })
    }
}

impl tandem_core::hooks::HookHost for HostLink {
    fn run_callback(
        &self,
        callback_id: &str,
        input: Value,
        tool_use_id: Option<String>,
    ) -> futures::future::BoxFuture<'static, Result<Value, String>> {
        let link = self.clone();
        let request = json!({
            "subtype": "hook_callback",
            "callback_id": callback_id,
            "input": input,
            "tool_use_id": tool_use_id,
        });
        Box::pin(async move { link.request(request).await })
    }
}

/// The `can_use_tool` request for a call the rules left open.
pub fn can_use_tool_request(
    tool: &str,
    edits_files: bool,
    input: &Value,
    call_id: &str,
    suggested_rule: &str,
    reason: Option<&str>,
    agent: Option<&str>,
) -> Value {
    let mut request = json!({
        "subtype": "can_use_tool",
        "tool_name": tool,
        "display_name": tool,
        "input": input,
        "tool_use_id": call_id,
        "permission_suggestions": permission_suggestions(suggested_rule, edits_files),
        "blocked_path": blocked_path(input),
    });
    if let Some(description) = input.get("description").and_then(Value::as_str) {
        request["description"] = json!(description);
    }
    if let Some(reason) = reason {
        request["decision_reason"] = json!(reason);
    }
    if let Some(agent) = agent {
        request["agent_id"] = json!(agent);
    }
    request
}

/// The rules an "always" answer would save, as the SDK's PermissionUpdate list (the exact rule tandem would write
/// to `.tandem/settings.local.json`), plus acceptEdits for a call that edits files.
pub fn permission_suggestions(suggested_rule: &str, edits_files: bool) -> Value {
    let rules: Vec<Value> = split_rule_list(suggested_rule)
        .iter()
        .map(|rule| match rule.split_once('(') {
            Some((name, rest)) if rest.ends_with(')') => {
                json!({"toolName": name, "ruleContent": &rest[..rest.len() - 1]})
            }
            _ => json!({"toolName": rule}),
        })
        .collect();
    let mut suggestions = Vec::new();
    if !rules.is_empty() {
        suggestions
            .push(json!({"type": "addRules", "rules": rules, "behavior": "allow", "destination": "localSettings"}));
    }
    if edits_files {
        suggestions.push(json!({"type": "setMode", "mode": "acceptEdits", "destination": "session"}));
    }
    Value::Array(suggestions)
}

fn blocked_path(input: &Value) -> Value {
    ["file_path", "notebook_path", "path"]
        .iter()
        .find_map(|field| input.get(field).and_then(Value::as_str))
        .map_or(Value::Null, |path| json!(path))
}

/// What the host's answer to `can_use_tool` means for the call, and what else it asks for.
#[derive(Debug, PartialEq)]
pub struct ToolVerdict {
    pub answer: PermissionAnswer,
    /// `setMode` updates: the session's new permission mode.
    pub mode: Option<tandem_core::permissions::PermissionMode>,
    /// Deny with `interrupt: true`: the turn stops too.
    pub interrupt: bool,
    /// Parts of the answer tandem could not apply, said on stderr.
    pub warnings: Vec<String>,
}

/// Reads the host's `can_use_tool` answer. An error, or anything that is not a clear allow, denies.
pub fn tool_verdict(answer: HostAnswer, original_input: &Value) -> ToolVerdict {
    let mut verdict = ToolVerdict {
        answer: PermissionAnswer::Reject { message: String::new() },
        mode: None,
        interrupt: false,
        warnings: Vec::new(),
    };
    let response = match answer {
        Ok(response) => response,
        Err(error) => {
            verdict.answer =
                PermissionAnswer::Reject { message: format!("The SDK host's permission check failed: {error}") };
            return verdict;
        }
    };
    match response.get("behavior").and_then(Value::as_str) {
        Some("allow") => {
            let input = response.get("updatedInput").filter(|input| input.is_object()).cloned();
            let mut always: Option<(Vec<String>, AlwaysScope)> = None;
            for update in response.get("updatedPermissions").and_then(Value::as_array).into_iter().flatten() {
                apply_update(update, &mut verdict, &mut always);
            }
            let changed = input.as_ref().filter(|input| *input != original_input);
            verdict.answer = match (changed, always) {
                (Some(input), always) => {
                    if always.is_some() {
                        verdict
                            .warnings
                            .push("the host's addRules came with a changed input; the rules are not saved".to_owned());
                    }
                    PermissionAnswer::AllowUpdated { input: input.clone() }
                }
                (None, Some((rules, scope))) => match tandem_protocol::permissions::join_rules(&rules) {
                    joined if joined.is_empty() => {
                        verdict.warnings.push(format!(
                            "the host's rules {rules:?} can't be saved as written (a rule holds \", \" or an \
                             unmatched parenthesis); the call is allowed once"
                        ));
                        PermissionAnswer::AllowOnce
                    }
                    rule => PermissionAnswer::AllowAlways { rule, scope },
                },
                (None, None) => PermissionAnswer::AllowOnce,
            };
        }
        Some("deny") => {
            let message = response.get("message").and_then(Value::as_str).unwrap_or_default();
            let message = if message.trim().is_empty() { "Permission denied by the SDK host." } else { message };
            verdict.answer = PermissionAnswer::Reject { message: message.to_owned() };
            verdict.interrupt = response.get("interrupt").and_then(Value::as_bool) == Some(true);
        }
        other => {
            verdict.answer = PermissionAnswer::Reject {
                message: format!("The SDK host's answer had behavior {other:?}, neither allow nor deny; not run."),
            };
        }
    }
    verdict
}

/// One PermissionUpdate of an allow answer.
fn apply_update(update: &Value, verdict: &mut ToolVerdict, always: &mut Option<(Vec<String>, AlwaysScope)>) {
    let kind = update.get("type").and_then(Value::as_str).unwrap_or_default();
    match kind {
        "addRules" if update.get("behavior").and_then(Value::as_str).unwrap_or("allow") == "allow" => {
            let scope = match update.get("destination").and_then(Value::as_str) {
                Some("userSettings") => AlwaysScope::User,
                Some("localSettings") | Some("projectSettings") => AlwaysScope::Project,
                _ => AlwaysScope::Session,
            };
            let rules: Vec<String> = update
                .get("rules")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|rule| {
                    let tool = rule.get("toolName").and_then(Value::as_str)?;
                    Some(match rule.get("ruleContent").and_then(Value::as_str) {
                        Some(content) => format!("{tool}({content})"),
                        None => tool.to_owned(),
                    })
                })
                .collect();
            match always {
                Some((existing, _)) => existing.extend(rules),
                None => *always = Some((rules, scope)),
            }
        }
        "setMode" => {
            match update.get("mode").and_then(Value::as_str).and_then(tandem_core::permissions::PermissionMode::parse) {
                Some(mode) => verdict.mode = Some(mode),
                None => verdict.warnings.push(format!("setMode {} is not a permission mode; ignored", update["mode"])),
            }
        }
        other => verdict.warnings.push(format!("the permission update {other:?} is not supported yet; ignored")),
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions_carry_the_rule_tandem_would_save() {
        let value = permission_suggestions("Bash(npm test:*)", false);
        assert_eq!(value[0]["rules"][0], json!({"toolName": "Bash", "ruleContent": "npm test:*"}));
        assert_eq!(value[0]["destination"], "localSettings");
        assert_eq!(permission_suggestions("Edit", true)[1]["mode"], "acceptEdits");
        assert_eq!(permission_suggestions("", false), json!([]));
    }

    #[test]
    fn answers_map_to_permission_answers() {
        let input = json!({"command": "ls"});
        let allow = tool_verdict(Ok(json!({"behavior": "allow", "updatedInput": {"command": "ls"}})), &input);
        assert_eq!(allow.answer, PermissionAnswer::AllowOnce);
        let changed = tool_verdict(Ok(json!({"behavior": "allow", "updatedInput": {"command": "pwd"}})), &input);
        assert_eq!(changed.answer, PermissionAnswer::AllowUpdated { input: json!({"command": "pwd"}) });
        let rules = json!({"behavior": "allow", "updatedInput": input, "updatedPermissions": [
            {"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "ls:*"}], "behavior": "allow", "destination": "session"},
            {"type": "setMode", "mode": "acceptEdits", "destination": "session"}]});
        let saved = tool_verdict(Ok(rules), &input);
        assert_eq!(
            saved.answer,
            PermissionAnswer::AllowAlways { rule: "Bash(ls:*)".into(), scope: AlwaysScope::Session }
        );
        assert_eq!(saved.mode, Some(tandem_core::permissions::PermissionMode::AcceptEdits));
        let deny = tool_verdict(Ok(json!({"behavior": "deny", "message": "no", "interrupt": true})), &input);
        assert_eq!(deny.answer, PermissionAnswer::Reject { message: "no".into() });
        assert!(deny.interrupt);
        let error = tool_verdict(Err("boom".into()), &input);
        assert!(matches!(error.answer, PermissionAnswer::Reject { message } if message.contains("boom")));
        let odd = tool_verdict(Ok(json!({"behavior": "maybe"})), &input);
        assert!(matches!(odd.answer, PermissionAnswer::Reject { .. }));
    }
}
