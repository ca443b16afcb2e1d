//! The SDK host's frames: its `user` messages and the control requests it sends (`initialize`, `interrupt`,
//! `set_permission_mode`, `set_model`, `mcp_status`, `get_context_usage`, …), each answered with a response
//! object or an error message.

use std::sync::Arc;

use serde_json::{Value, json};
use tandem_core::agent::AgentConfig;
use tandem_core::permissions::PermissionMode;
use tandem_protocol::Op;

use super::control::HostLink;
use crate::headless::Printer;
use crate::stream_json::CLAUDE_CODE_COMPATIBLE_VERSION;

/// Applies an `initialize` request to the session before it starts: the host's hook callbacks join the hook
/// engine and its agents the Task tool's catalog. Returns what could not be used.
pub(super) fn apply_initialize(config: &mut AgentConfig, request: &Value, link: &HostLink) -> Vec<String> {
    let mut problems = Vec::new();
    if let Some(hooks) = request.get("hooks").filter(|hooks| !hooks.is_null()) {
        let (entries, hook_problems) = tandem_core::hooks::config::sdk_hooks(hooks);
        problems.extend(hook_problems);
        if !entries.is_empty() {
            config.hooks = Arc::new(config.hooks.with_host(entries, Arc::new(link.clone())));
        }
    }
    if let Some(agents) = request.get("agents").filter(|agents| !agents.is_null()) {
        let mut catalog = (*config.agents).clone();
        if let Some(problem) = catalog.add_json(agents, "initialize agents") {
            problems.push(problem);
        }
        let catalog = Arc::new(catalog);
        config.agents = catalog.clone();
        if config.tools.get(tandem_core::tools::task::TASK_TOOL).is_some() {
            config.tools.register(Arc::new(tandem_core::tools::task::TaskTool { catalog }));
        }
    }
    for key in ["excludeDynamicSections", "systemPromptSnapshot", "forwardSubagentText", "skills"] {
        if request.get(key).is_some_and(|value| !value.is_null()) {
            problems.push(format!("{key} is not supported by tandem yet; it is ignored"));
        }
    }
    problems
}

/// The answer to `initialize`: what this session offers, in the real CLI's keys.
pub(super) fn initialize_response(config: &AgentConfig, api_key_source: &str) -> Value {
    let mut commands: Vec<Value> = tandem_core::commands::headless_builtins()
        .map(|builtin| json!({"name": builtin.name, "description": builtin.description, "argumentHint": "", "builtin": true}))
        .collect();
    commands.extend(config.commands.commands.iter().map(|command| {
        json!({
            "name": command.name,
            "description": command.description,
            "argumentHint": command.argument_hint.clone().unwrap_or_default(),
            "builtin": false,
        })
    }));
    commands.extend(config.skills.skills.iter().map(
        |skill| json!({"name": skill.name, "description": skill.description, "argumentHint": "", "builtin": false}),
    ));
    let agents: Vec<Value> = config
        .agents
        .agents
        .iter()
        .map(|agent| json!({"name": agent.name, "description": agent.description, "model": agent.model}))
        .collect();
    let endpoint = config.provider.endpoint();
    let models: Vec<Value> = tandem_core::models::models_for(endpoint.kind)
        .into_iter()
        .map(|id| json!({"value": id, "displayName": id, "description": ""}))
        .collect();
    json!({
        "commands": commands,
        "agents": agents,
        "output_style": "default",
        "available_output_styles": ["default"],
        "models": models,
        "account": {"apiKeySource": api_key_source, "apiProvider": endpoint.name},
        "pid": std::process::id(),
        "claude_code_version": CLAUDE_CODE_COMPATIBLE_VERSION,
        "tandem_version": env!("CARGO_PKG_VERSION"),
        "current_permission_mode": config.permissions.mode.as_str(),
        "hook_on_failure_supported": true,
        "hooks_applied": true,
    })
}

/// The turn a `user` frame asks for: its `content` string, or its text blocks joined and its images.
pub(super) fn user_turn(frame: &Value) -> Result<Op, String> {
    let content = frame.pointer("/message/content").ok_or("it has no message.content")?;
    match content {
        Value::String(text) => Ok(Op::UserTurn { text: text.clone() }),
        Value::Array(blocks) => {
            let mut texts = Vec::new();
            let mut images = Vec::new();
            for block in blocks {
                match block.get("type").and_then(Value::as_str) {
                    Some("text") => texts.push(block.get("text").and_then(Value::as_str).unwrap_or_default()),
                    Some("image") => match block.get("source") {
                        Some(source)
                            if matches!(source.get("type").and_then(Value::as_str), Some("base64" | "url")) =>
                        {
                            images.push(source.clone())
                        }
                        _ => return Err("an image block needs a base64 or url source".into()),
                    },
                    Some(other) => {
                        return Err(format!("a {other:?} content block is not supported (text and image are)"));
                    }
                    None => return Err("a content block has no type".into()),
                }
            }
            let text = texts.join("\n\n");
            if images.is_empty() { Ok(Op::UserTurn { text }) } else { Ok(Op::UserTurnWithImages { text, images }) }
        }
        _ => Err("message.content is neither a string nor a list of blocks".into()),
    }
}

/// Handles one control request from the host; the result is its response object or an error message.
pub(super) fn handle(
    request: &Value,
    ops: &tandem_core::agent::OpSender,
    printer: &mut Printer,
) -> Result<Value, String> {
    let subtype = request.get("subtype").and_then(Value::as_str).unwrap_or_default();
    let sent = |op: Op| ops.send(op).map_err(|_| "the session has ended".to_owned());
    match subtype {
        "initialize" => Err("the session is already initialized".into()),
        "interrupt" => {
            sent(Op::Interrupt)?;
            Ok(json!({}))
        }
        "set_permission_mode" => {
            let text = request.get("mode").and_then(Value::as_str).unwrap_or_default();
            let mode = PermissionMode::parse(text).ok_or_else(|| {
                let names: Vec<&str> = PermissionMode::ALL.iter().map(|mode| mode.as_str()).collect();
                format!("{text:?} is not a permission mode (use one of {})", names.join(", "))
            })?;
            sent(Op::SetPermissionMode(mode))?;
            printer.set_mode(mode);
            Ok(json!({}))
        }
        "set_model" => {
            let model = match request.get("model") {
                Some(Value::String(model)) if !model.trim().is_empty() => model.clone(),
                None | Some(Value::Null) => return Err("set_model needs a model".into()),
                Some(other) => return Err(format!("model {other} is not a model id")),
            };
            sent(Op::SetModel { model })?;
            Ok(json!({}))
        }
        "get_context_usage" => {
            let (used, window) = printer.context;
            let percentage = if window == 0 { 0.0 } else { used as f64 * 100.0 / window as f64 };
            Ok(json!({
                "categories": [],
                "totalTokens": used,
                "maxTokens": window,
                "rawMaxTokens": window,
                "percentage": percentage,
                "model": printer.model(),
            }))
        }
        "stop_task" => {
            let id = request.get("task_id").and_then(Value::as_str).ok_or("stop_task needs a task_id")?;
            sent(Op::KillBackground { id: id.to_owned() })?;
            Ok(json!({}))
        }
        "mcp_message" => Err("SDK MCP servers (type \"sdk\") are not supported by tandem".into()),
        "" => Err("the control request has no subtype".into()),
        other => Err(format!("unknown control request subtype {other:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_content_may_be_a_string_or_text_blocks() {
        let frame = json!({"type": "user", "message": {"role": "user", "content": "hi"}});
        assert_eq!(user_turn(&frame).unwrap(), Op::UserTurn { text: "hi".into() });
        let frame = json!({"type": "user", "message": {"role": "user", "content": [
            {"type": "text", "text": "one"}, {"type": "text", "text": "two"}]}});
        assert_eq!(user_turn(&frame).unwrap(), Op::UserTurn { text: "one\n\ntwo".into() });
        let image = json!({"type": "base64", "media_type": "image/png", "data": "iVBOR"});
        let frame = json!({"type": "user", "message": {"role": "user", "content": [
            {"type": "text", "text": "what is this?"}, {"type": "image", "source": image}]}});
        assert_eq!(
            user_turn(&frame).unwrap(),
            Op::UserTurnWithImages { text: "what is this?".into(), images: vec![image] }
        );
        assert!(user_turn(&json!({"type": "user"})).is_err());
        let frame = json!({"type": "user", "message": {"content": [{"type": "image", "source": {"type": "file"}}]}});
        assert!(user_turn(&frame).is_err());
    }
}
