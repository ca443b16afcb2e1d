//! Where an MCP server stands, as `/mcp`, the SDK's `mcp_status` and stream-json's `init` show it.

use serde_json::Value;

use super::config::McpScope;

/// Where a server stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    /// Starting.
    Pending,
    Connected,
    /// Could not start, or stopped; the reason says which and why.
    Failed(String),
    /// Not started: waiting for the user's approval (a `.mcp.json` server), refused, or switched off.
    Disabled(String),
}

impl Status {
    /// Claude Code's status names (the SDK's `McpServerStatus`).
    pub fn as_str(&self) -> &'static str {
        match self {
            Status::Pending => "pending",
            Status::Connected => "connected",
            Status::Failed(_) => "failed",
            Status::Disabled(_) => "disabled",
        }
    }

    pub fn reason(&self) -> Option<&str> {
        match self {
            Status::Failed(reason) | Status::Disabled(reason) => Some(reason),
            _ => None,
        }
    }
}

/// A server as `/mcp`, `init` and `mcp_status` show it.
#[derive(Clone, Debug)]
pub struct ServerStatus {
    pub name: String,
    pub scope: McpScope,
    pub origin: String,
    /// `stdio` or `http`.
    pub transport: &'static str,
    pub status: Status,
    /// The names the model calls its tools by.
    pub tools: Vec<String>,
    /// The same tools as the server lists them (for SDK hosts' `mcp_status`).
    pub listed: Vec<ListedTool>,
    pub server_info: Value,
    pub resources: usize,
    pub prompts: usize,
    /// A `.mcp.json` server waiting for the user's approval.
    pub needs_approval: bool,
    /// The configuration entry as written.
    pub config: Value,
    /// Problems with its tools (left out, kept asking).
    pub notes: Vec<String>,
}

/// A tool as its server lists it: its own name, its description, and whether it says it only reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListedTool {
    pub name: String,
    pub description: String,
    pub read_only: bool,
}

/// Why a project server is not started yet.
pub const NEEDS_APPROVAL: &str = "a server of the project's .mcp.json: it starts once you approve it (the app asks; or enabledMcpjsonServers in your user settings)";
