//! The SDK host's frames: its `user` messages and the control requests it sends (`initialize`, `interrupt`,
//! `set_permission_mode`, `set_model`, `mcp_status`, `get_context_usage`, …), each answered with a response
//! object or an error message.

use std::sync::Arc;

use serde_json::{Value, json};
use tandem_core::agent::AgentConfig;
use tandem_core::permissions::PermissionMode;
use tandem_core::setup::SessionOptions;
use tandem_protocol::Op;

use super::control::HostLink;
use crate::headless::Printer;
use crate::stream_json::CLAUDE_CODE_COMPATIBLE_VERSION;

/// What an `initialize` request delivered that the SDK wants confirmed in the answer (`*_applied`).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Applied {
    mcp_servers: bool,
    settings: bool,
    disallowed_tools: bool,
    additional_directories: bool,
}

/// The keys of `initialize` tandem reads: here (before the session is built) or in [`apply_initialize`].
const READ_KEYS: &[&str] = &[
    "subtype",
    "systemPrompt",
    "appendSystemPrompt",
    "mcpServers",
    "sdkMcpServers",
    "sdkMcpServerConfigs",
    "jsonSchema",
    "settings",
    "disallowedTools",
    "additionalDirectories",
    "hooks",
    "agents",
];

/// Keys that describe the host, not the session: they change nothing tandem does. (`sdkMcpServerManifests`
/// saves a host's handshake; tandem makes its own, through `mcp_message`, as the SDK allows.)
const HOST_KEYS: &[&str] = &[
    "sdkMcpServerManifests",
    "supportedDialogKinds",
    "perTaskStopAffordance",
    "offersBypassSwitchBack",
    "keepsBypassHeld",
    "agentSdkVersion",
    "workspaceTrust",
];

/// Puts what an `initialize` request says about the session into its options, before it is built: the system
/// prompt (a list of parts, or one text) and what to append, the MCP servers (the host's own, `sdkMcpServers`,
/// reached through `mcp_message`, and the others as `--mcp-config` would give them), the output schema, and
/// settings, disallowed tools and directories when the SDK sends them here. What tandem can't honour is an error
/// (the SDK ends the session with it); keys it doesn't use are said in `problems`.
pub(super) fn initialize_options(
    options: &mut SessionOptions,
    request: &Value,
    problems: &mut Vec<String>,
) -> Result<Applied, String> {
    let field = |key: &str| request.get(key).filter(|value| !value.is_null());
    for key in ["managedSettings", "plugins"] {
        if field(key).is_some() {
            return Err(format!("initialize: {key} is not supported by tandem"));
        }
    }
    let mut applied = Applied::default();
    match field("systemPrompt") {
        None => {}
        Some(Value::String(text)) => options.system_prompt = Some(text.clone()),
        Some(Value::Array(parts)) => {
            let parts: Option<Vec<&str>> = parts.iter().map(Value::as_str).collect();
            let parts = parts.ok_or("initialize: systemPrompt holds something that is not text")?;
            options.system_prompt = Some(parts.join("\n\n"));
        }
        Some(_) => return Err("initialize: systemPrompt is neither text nor a list of texts".into()),
    }
    if let Some(append) = field("appendSystemPrompt") {
        let append = append.as_str().ok_or("initialize: appendSystemPrompt is not text")?;
        options.append_system_prompt = Some(match options.append_system_prompt.take() {
            Some(before) => format!("{before}\n\n{append}"),
            None => append.to_owned(),
        });
    }
    if let Some(servers) = field("mcpServers") {
        if !servers.is_object() {
            return Err("initialize: mcpServers is not an object".into());
        }
        options.mcp_configs.push(json!({ "mcpServers": servers }).to_string());
        applied.mcp_servers = true;
    }
    if let Some(names) = field("sdkMcpServers") {
        let names = strings(names).ok_or("initialize: sdkMcpServers is not a list of names")?;
        let servers: serde_json::Map<String, Value> =
            names.into_iter().map(|name| (name.clone(), json!({"type": "sdk", "name": name}))).collect();
        options.mcp_configs.push(json!({ "mcpServers": servers }).to_string());
    }
    if let Some(configs) = field("sdkMcpServerConfigs") {
        let names: Vec<&String> = configs.as_object().map(|configs| configs.keys().collect()).unwrap_or_default();
        problems.push(format!(
            "sdkMcpServerConfigs ({}) are not used by tandem: its MCP_TOOL_TIMEOUT and your permission rules apply \
             to SDK servers as to any other",
            names.iter().map(|name| name.as_str()).collect::<Vec<_>>().join(", ")
        ));
    }
    if let Some(agents) = field("agents") {
        let mut all = match options.agents.as_deref().map(serde_json::from_str::<Value>) {
            Some(Ok(Value::Object(given))) => given,
            _ => serde_json::Map::new(),
        };
        let agents = agents.as_object().ok_or("initialize: agents is not an object")?;
        all.extend(agents.clone());
        options.agents = Some(Value::Object(all).to_string());
    }
    if let Some(schema) = field("jsonSchema") {
        options.json_schema.get_or_insert_with(|| schema.to_string());
    }
    if let Some(settings) = field("settings") {
        if !settings.is_object() {
            return Err("initialize: settings is not an object".into());
        }
        options.settings = Some(settings.to_string());
        applied.settings = true;
    }
    if let Some(tools) = field("disallowedTools") {
        options.disallowed_tools.extend(strings(tools).ok_or("initialize: disallowedTools is not a list of rules")?);
        applied.disallowed_tools = true;
    }
    if let Some(dirs) = field("additionalDirectories") {
        let dirs = strings(dirs).ok_or("initialize: additionalDirectories is not a list of paths")?;
        options.add_dirs.extend(dirs.into_iter().map(std::path::PathBuf::from));
        applied.additional_directories = true;
    }
    if let Some(keys) = request.as_object().map(|request| request.keys()) {
        for key in keys.filter(|key| !READ_KEYS.contains(&key.as_str()) && !HOST_KEYS.contains(&key.as_str())) {
            if field(key).is_some() {
                problems.push(format!("{key} is not supported by tandem; it is not used"));
            }
        }
    }
    Ok(applied)
}

fn strings(value: &Value) -> Option<Vec<String>> {
    value.as_array()?.iter().map(|item| item.as_str().map(str::to_owned)).collect()
}

/// Applies an `initialize` request to the session before it starts: the host's hook callbacks join the hook
/// engine. Returns what could not be used.
pub(super) fn apply_initialize(config: &mut AgentConfig, request: &Value, link: &HostLink) -> Vec<String> {
    let mut problems = Vec::new();
    if let Some(hooks) = request.get("hooks").filter(|hooks| !hooks.is_null()) {
        let (entries, hook_problems) = tandem_core::hooks::config::sdk_hooks(hooks);
        problems.extend(hook_problems);
        if !entries.is_empty() {
            config.hooks = Arc::new(config.hooks.with_host(entries, Arc::new(link.clone())));
        }
    }
    problems
}

/// The answer to `initialize`: what this session offers, in the real CLI's keys.
pub(super) fn initialize_response(config: &AgentConfig, api_key_source: &str, applied: Applied) -> Value {
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
    let mut response = json!({
        "commands": commands,
        "agents": agents,
        "output_style": "default",
        "available_output_styles": ["default"],
        "models": models,
        "account": account(api_key_source, endpoint),
        "pid": std::process::id(),
        "claude_code_version": CLAUDE_CODE_COMPATIBLE_VERSION,
        "tandem_version": env!("CARGO_PKG_VERSION"),
        "current_permission_mode": config.permissions.mode.as_str(),
        "hook_on_failure_supported": true,
        "hooks_applied": true,
    });
    for (key, sent) in [
        ("mcp_servers_applied", applied.mcp_servers),
        ("settings_applied", applied.settings),
        ("disallowed_tools_applied", applied.disallowed_tools),
        ("additional_directories_applied", applied.additional_directories),
    ] {
        if sent {
            response[key] = json!(true);
        }
    }
    response
}

/// The SDK's `AccountInfo`: `apiProvider` is one of its names (`firstParty` for Anthropic's API); another
/// provider has none of them, so it is left out, and tandem's own name for it is in `tandemProvider`.
fn account(api_key_source: &str, endpoint: &tandem_core::provider::Endpoint) -> Value {
    let mut account = json!({"apiKeySource": api_key_source, "tandemProvider": endpoint.name});
    if endpoint.kind == tandem_core::provider::ProviderKind::Anthropic {
        account["apiProvider"] = json!("firstParty");
    }
    account
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
                // The SDK's `setModel()` without a model: the session's own again.
                None | Some(Value::Null) if !printer.default_model().is_empty() => printer.default_model().to_owned(),
                None | Some(Value::Null) => return Err("the session has not started yet, so it has no model".into()),
                Some(other) => return Err(format!("model {other} is not a model id")),
            };
            sent(Op::SetModel { model })?;
            Ok(json!({}))
        }
        "get_context_usage" => {
            let (used, window) = printer.context;
            let percentage = if window == 0 { 0.0 } else { used as f64 * 100.0 / window as f64 };
            // The SDK's shape with what tandem counts: the conversation's tokens and the room left (no finer
            // breakdown; the lists are empty, never missing).
            Ok(json!({
                "categories": [
                    {"id": "messages", "name": "Messages", "tokens": used, "color": "purple", "kind": "used"},
                    {"id": "free_space", "name": "Free space", "tokens": window.saturating_sub(used),
                     "color": "gray", "kind": "free"},
                ],
                "totalTokens": used,
                "maxTokens": window,
                "rawMaxTokens": window,
                "percentage": percentage,
                "gridRows": [],
                "model": printer.model(),
                "memoryFiles": [],
                "mcpTools": [],
                "agents": [],
                "isAutoCompactEnabled": true,
                "apiUsage": null,
            }))
        }
        "stop_task" => {
            let id = request.get("task_id").and_then(Value::as_str).ok_or("stop_task needs a task_id")?;
            sent(Op::KillBackground { id: id.to_owned() })?;
            Ok(json!({}))
        }
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
