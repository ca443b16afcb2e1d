//! The front end's MCP requests (`/mcp`, the `.mcp.json` approval dialog), answered beside a running turn, and
//! the list of servers sent again whenever one of them changes.

use crate::events::EventSink;
use std::sync::Arc;

use crate::mcp::McpManager;
use crate::protocol::{Event, McpChoice, McpRequest};

/// Sends [`Event::McpServers`] now and after every change, until the front end goes away.
pub(super) fn watch(manager: Arc<McpManager>, events: EventSink) {
    let mut changes = manager.subscribe();
    tokio::spawn(async move {
        loop {
            changes.borrow_and_update();
            if events.send(Event::McpServers(manager.views())).is_err() {
                break;
            }
            if changes.changed().await.is_err() {
                break;
            }
        }
    });
}

/// Does what the front end asked; a change shows in the next [`Event::McpServers`] (sent here too, so an
/// answer arrives when nothing changed).
pub(super) fn handle(manager: Option<Arc<McpManager>>, request: McpRequest, events: EventSink) {
    let Some(manager) = manager else {
        let _ = events.send(Event::McpServers(Vec::new()));
        return;
    };
    tokio::spawn(async move {
        match request {
            McpRequest::Refresh => {}
            McpRequest::Reconnect { server } => {
                let message = match manager.reconnect(&server).await {
                    Ok(()) => Event::Info { message: format!("MCP server {server}: reconnected.") },
                    Err(why) => Event::Error { message: format!("MCP server {server}: {why}") },
                };
                let _ = events.send(message);
            }
            McpRequest::Decide { server, choice } => {
                let what = match choice {
                    McpChoice::ApproveAll => "approved, with every other server of this project's .mcp.json",
                    McpChoice::Approve => "approved",
                    McpChoice::Refuse => "not used",
                };
                let message = match manager.decide(&server, choice) {
                    Ok(note) => Event::Info { message: format!("MCP server {server}: {what} ({note}).") },
                    Err(why) => Event::Error { message: format!("MCP server {server}: {why}") },
                };
                let _ = events.send(message);
            }
        }
        let _ = events.send(Event::McpServers(manager.views()));
    });
}
