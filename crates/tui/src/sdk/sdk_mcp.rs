//! The SDK's MCP control requests: `mcp_status` (the servers, their state and tools, in the SDK's
//! `McpServerStatus` shape), `mcp_reconnect {serverName}` and `mcp_toggle {serverName, enabled}`; and what the
//! host's own SDK servers send unasked (`mcp_message` from the host: a changed tool list, a log line).

use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::{Value, json};
use tandem_core::mcp::McpManager;
use tandem_core::mcp::relay::SdkRelay;

/// The answer to an MCP request (`None` for other subtypes).
pub(super) fn answer(
    subtype: &str,
    request: &Value,
    mcp: Option<&Arc<McpManager>>,
) -> Option<BoxFuture<'static, Result<Value, String>>> {
    if !matches!(subtype, "mcp_status" | "mcp_reconnect" | "mcp_toggle") {
        return None;
    }
    let mcp = mcp.cloned();
    let server = request.get("serverName").and_then(Value::as_str).map(str::to_owned);
    let enabled = request.get("enabled").and_then(Value::as_bool);
    let subtype = subtype.to_owned();
    Some(Box::pin(async move {
        if subtype == "mcp_status" {
            return Ok(json!({"mcpServers": mcp.map(|mcp| status(&mcp)).unwrap_or_default()}));
        }
        let mcp = mcp.ok_or("no MCP server is configured in this session")?;
        let server = server.ok_or_else(|| format!("{subtype} needs a serverName"))?;
        match subtype.as_str() {
            "mcp_reconnect" => mcp.reconnect(&server).await?,
            _ => mcp.set_enabled(&server, enabled.ok_or("mcp_toggle needs enabled: true or false")?).await?,
        }
        Ok(json!({}))
    }))
}

/// Every server as the SDK's `McpServerStatus`.
pub(crate) fn status(mcp: &McpManager) -> Vec<Value> {
    mcp.statuses()
        .into_iter()
        .map(|server| {
            let mut entry = json!({
                "name": server.name,
                "status": server.status.as_str(),
                "scope": server.scope.as_str(),
                "config": server.config,
                "tools": server
                    .listed
                    .iter()
                    .map(|tool| json!({
                        "name": tool.name,
                        "description": tool.description,
                        "annotations": {"readOnly": tool.read_only},
                    }))
                    .collect::<Vec<_>>(),
            });
            if !server.server_info.is_null() {
                entry["serverInfo"] = server.server_info.clone();
            }
            if let Some(reason) = server.status.reason() {
                entry["error"] = Value::String(reason.to_owned());
            }
            entry
        })
        .collect()
}

/// An `mcp_message` the host sends unasked: a notification of one of its SDK servers, handed to that server's
/// client (a changed tool list is listed again). Acknowledged as the SDK acknowledges notifications.
pub(super) fn unasked(request: &Value, relay: &SdkRelay) -> Result<Value, String> {
    let server = request.get("server_name").and_then(Value::as_str).ok_or("mcp_message needs a server_name")?;
    let message = request.get("message").cloned().ok_or("mcp_message needs a message")?;
    if !relay.deliver(server, message) {
        return Err(format!("there is no SDK MCP server {server:?} in this session"));
    }
    Ok(json!({"mcp_response": {"jsonrpc": "2.0", "result": {}, "id": 0}}))
}
