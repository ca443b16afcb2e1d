//! The session's MCP servers: started together in the background when the session starts, their state kept
//! for `/mcp`, `init` and `mcp_status`, their tools offered through the tool registry as they connect, and a
//! server that died started again on its next use.
//!
//! Nothing here blocks the session: a server that is slow to start joins when it is ready, and one that fails is
//! reported (`failed` with the reason) while the others work.

use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use serde_json::Value;

use super::client::{CallFailure, Connection, Offer};
use super::config::{McpConfig, ServerConfig, Transport};
use super::search::{self, ToolSearchMode, ToolSearchTool};
pub use super::status::{NEEDS_APPROVAL, ServerStatus, Status};
use super::tool::{self, McpTool};
use crate::shell_env::ShellEnvPolicy;
use crate::tools::registry::ToolSource;
use crate::tools::{Tool, ToolContext, ToolOutput};

/// Default time a server gets to start and answer `initialize` (`MCP_TIMEOUT`, milliseconds, overrides it).
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(30);
/// Default time a tool call may run without a progress notification (`MCP_TOOL_TIMEOUT` overrides it).
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(600);
/// Default cap on a tool result, in tokens (`MAX_MCP_OUTPUT_TOKENS` overrides it), as in Claude Code.
pub const DEFAULT_MAX_OUTPUT_TOKENS: usize = 25_000;
/// How long the session's first request waits for servers still starting: a few milliseconds, so that a
/// server that is quick to start is in it, and one that is slow delays nothing.
pub const FIRST_REQUEST_WAIT: Duration = Duration::from_millis(25);

/// How the session's servers are run.
#[derive(Clone, Debug)]
pub struct ManagerOptions {
    pub startup_timeout: Duration,
    pub call_timeout: Duration,
    pub max_output_tokens: usize,
    /// The environment of stdio servers: tandem's, without its secrets, plus each server's `env`.
    pub shell_env: Arc<ShellEnvPolicy>,
    pub tool_search: ToolSearchMode,
    /// How SDK servers (type `"sdk"`) are reached: the Agent SDK host's relay, when tandem runs under one.
    pub relay: Option<super::relay::SdkRelay>,
}

impl ManagerOptions {
    /// The options from Claude Code's environment variables (`MCP_TIMEOUT`, `MCP_TOOL_TIMEOUT`,
    /// `MAX_MCP_OUTPUT_TOKENS`, `ENABLE_TOOL_SEARCH`); a value that can't be read is reported in `problems`.
    pub fn from_env(
        env: &dyn Fn(&str) -> Option<String>,
        shell_env: Arc<ShellEnvPolicy>,
        context_window: u64,
        problems: &mut Vec<String>,
    ) -> ManagerOptions {
        let mut number = |name: &str| -> Option<u64> {
            let text = env(name)?;
            match text.trim().parse::<u64>() {
                Ok(value) if value > 0 => Some(value),
                _ => {
                    problems.push(format!("{name}={text:?} is not a positive whole number; the default is used"));
                    None
                }
            }
        };
        let startup_timeout = number("MCP_TIMEOUT").map_or(DEFAULT_STARTUP_TIMEOUT, Duration::from_millis);
        let call_timeout = number("MCP_TOOL_TIMEOUT").map_or(DEFAULT_CALL_TIMEOUT, Duration::from_millis);
        let max_output_tokens = number("MAX_MCP_OUTPUT_TOKENS").map_or(DEFAULT_MAX_OUTPUT_TOKENS, |n| n as usize);
        let tool_search = match ToolSearchMode::parse(env("ENABLE_TOOL_SEARCH").as_deref(), context_window) {
            Ok(mode) => mode,
            Err(problem) => {
                problems.push(problem);
                ToolSearchMode::parse(None, context_window).unwrap_or(ToolSearchMode::Never)
            }
        };
        ManagerOptions { startup_timeout, call_timeout, max_output_tokens, shell_env, tool_search, relay: None }
    }
}

struct Slot {
    status: Status,
    connection: Option<Arc<Connection>>,
    offer: Offer,
    /// The tools last listed; kept when the server dies, so the model can still call them (which restarts it).
    tools: Vec<Arc<McpTool>>,
    needs_approval: bool,
    /// The user declined this `.mcp.json` server for the session: nothing starts it again.
    refused: bool,
    /// Tools this server listed as not read-only at some point: a later listing can't make them read-only
    /// (a server can't first be asked about and then quietly stop being asked about).
    writable_seen: std::collections::HashSet<String>,
    /// What was wrong with its last listing (tools left out), for `/mcp`.
    notes: Vec<String>,
}

struct Server {
    config: ServerConfig,
    /// Held while connecting, so that two calls to a dead server start it once.
    connecting: tokio::sync::Mutex<()>,
    slot: Mutex<Slot>,
}

impl Server {
    fn slot(&self) -> std::sync::MutexGuard<'_, Slot> {
        self.slot.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// The session's servers.
pub struct McpManager {
    servers: Vec<Arc<Server>>,
    pub(super) options: ManagerOptions,
    this: Weak<McpManager>,
    search_tool: Arc<ToolSearchTool>,
    /// The tools ToolSearch found, in the order found: declared with it while the others are behind it.
    found: Mutex<Vec<String>>,
    changes: tokio::sync::watch::Sender<u64>,
    project_root: std::path::PathBuf,
    config_dir: std::path::PathBuf,
}

impl McpManager {
    /// The servers of `config`, not started yet ([`McpManager::start`]).
    pub fn new(config: McpConfig, options: ManagerOptions) -> Arc<McpManager> {
        let project_root = config.project_root.clone();
        let config_dir = config.config_dir.clone();
        let mut servers = Vec::new();
        let slot = |status: Status, needs_approval: bool| Slot {
            status,
            connection: None,
            offer: Offer::default(),
            tools: Vec::new(),
            needs_approval,
            refused: false,
            writable_seen: Default::default(),
            notes: Vec::new(),
        };
        for server in config.servers {
            let status = match &server.transport {
                Ok(_) => Status::Pending,
                Err(reason) => Status::Failed(reason.clone()),
            };
            servers.push((server, slot(status, false)));
        }
        for server in config.awaiting_approval {
            servers.push((server, slot(Status::Disabled(NEEDS_APPROVAL.into()), true)));
        }
        let servers = servers
            .into_iter()
            .map(|(config, slot)| {
                Arc::new(Server { config, connecting: tokio::sync::Mutex::new(()), slot: Mutex::new(slot) })
            })
            .collect();
        Arc::new_cyclic(|this: &Weak<McpManager>| McpManager {
            servers,
            options,
            this: this.clone(),
            search_tool: Arc::new(ToolSearchTool { manager: this.clone() }),
            found: Mutex::new(Vec::new()),
            changes: tokio::sync::watch::channel(0).0,
            project_root,
            config_dir,
        })
    }

    /// Starts every server that may start, each in its own task; returns at once.
    pub fn start(&self) {
        for server in &self.servers {
            if server.slot().status == Status::Pending {
                self.spawn_connect(server.clone());
            }
        }
    }

    /// The project whose `.mcp.json` servers this session has.
    pub fn project_root(&self) -> &std::path::Path {
        &self.project_root
    }

    /// Where answers about `.mcp.json` servers are remembered ([`super::approvals`]).
    pub fn config_dir(&self) -> &std::path::Path {
        &self.config_dir
    }

    /// The entry of server `name` as configured.
    pub fn entry(&self, name: &str) -> Option<Value> {
        self.server(name).map(|server| server.config.raw.clone())
    }

    /// Whether the session has any server at all.
    pub fn is_empty(&self) -> bool {
        self.servers.is_empty()
    }

    /// Bumped on every change of a server's state or tools (front ends redraw their lists).
    pub fn subscribe(&self) -> tokio::sync::watch::Receiver<u64> {
        self.changes.subscribe()
    }

    fn changed(&self) {
        self.changes.send_modify(|n| *n += 1);
    }

    fn spawn_connect(&self, server: Arc<Server>) {
        let this = self.this.clone();
        tokio::spawn(async move {
            if let Some(manager) = this.upgrade() {
                let _ = manager.connect(&server).await;
            }
        });
    }

    /// How many servers are starting now.
    pub fn starting(&self) -> usize {
        self.servers.iter().filter(|server| server.slot().status == Status::Pending).count()
    }

    /// Waits for the servers still starting (all at once) up to `MCP_TIMEOUT`, so that a prompt given at start
    /// reaches the model with their tools, as in Claude Code; then says which did not connect and why, one line
    /// each.
    pub async fn await_start(&self) -> Vec<String> {
        // A moment past the timeout, so that a server that did not answer is reported as failed by its own
        // attempt, not still pending.
        self.settle(self.options.startup_timeout + Duration::from_secs(1)).await;
        let seconds = self.options.startup_timeout.as_secs_f64();
        self.statuses()
            .into_iter()
            .filter_map(|server| match server.status {
                Status::Failed(reason) => Some(format!("MCP server {}: failed to connect: {reason}", server.name)),
                Status::Pending => Some(format!(
                    "MCP server {}: not connected within {seconds}s (MCP_TIMEOUT); its tools join a later request \
                     once it is",
                    server.name
                )),
                Status::Connected | Status::Disabled(_) => None,
            })
            .collect()
    }

    /// Waits until no server is starting any more, or `wait` has passed.
    pub async fn settle(&self, wait: Duration) {
        let mut changes = self.subscribe();
        let pending = || self.servers.iter().any(|server| server.slot().status == Status::Pending);
        let _ = tokio::time::timeout(wait, async {
            while pending() {
                if changes.changed().await.is_err() {
                    break;
                }
            }
        })
        .await;
    }

    /// Starts (or restarts) `server`; afterwards its slot says how that went.
    async fn connect(&self, server: &Arc<Server>) -> Result<Arc<Connection>, String> {
        let _connecting = server.connecting.lock().await;
        if let Some(connection) = server.slot().connection.clone().filter(|c| !c.is_closed()) {
            return Ok(connection);
        }
        let transport = match &server.config.transport {
            Ok(transport) => transport.clone(),
            Err(reason) => return Err(reason.clone()),
        };
        server.slot().status = Status::Pending;
        self.changed();
        let name = &server.config.name;
        let timeout = self.options.startup_timeout;
        let opened =
            match Connection::open(name, &transport, &self.options.shell_env, self.options.relay.as_ref(), timeout)
                .await
            {
                Ok(connection) => match connection.list(timeout).await {
                    Ok(offer) => Ok((Arc::new(connection), offer)),
                    Err(reason) => {
                        let reason = format!("{reason}{}", connection.stderr_note());
                        connection.close().await;
                        Err(reason)
                    }
                },
                Err(reason) => Err(reason),
            };
        let result = match opened {
            Ok((connection, offer)) => {
                {
                    let mut slot = server.slot();
                    slot.status = Status::Connected;
                    slot.connection = Some(connection.clone());
                }
                self.install(server, offer);
                tracing::info!(server = %name, "MCP server connected");
                self.watch_lists(server.clone(), &connection);
                Ok(connection)
            }
            Err(reason) => {
                tracing::warn!(server = %name, %reason, "MCP server failed");
                let mut slot = server.slot();
                slot.status = Status::Failed(reason.clone());
                slot.connection = None;
                Err(reason)
            }
        };
        self.changed();
        result
    }

    /// Lists a server's tools again whenever it says they changed, while its connection lives.
    fn watch_lists(&self, server: Arc<Server>, connection: &Arc<Connection>) {
        let changed = connection.changed.clone();
        let connection = Arc::downgrade(connection);
        let this = self.this.clone();
        tokio::spawn(async move {
            loop {
                changed.notified().await;
                let (Some(connection), Some(manager)) = (connection.upgrade(), this.upgrade()) else { return };
                if let Ok(offer) = connection.list(manager.options.startup_timeout).await {
                    manager.install(&server, offer);
                    manager.changed();
                }
            }
        });
    }

    /// Makes `offer` what `server` offers: its tools become the model's.
    /// Two of its tools whose names come out the same (after cleaning and cutting) keep the first; the other is
    /// left out and said in `/mcp`. A tool once listed as not read-only stays so for the session.
    fn install(&self, server: &Server, offer: Offer) {
        let name = &server.config.name;
        let mut slot = server.slot();
        let mut tools: Vec<Arc<McpTool>> = Vec::new();
        let mut notes = Vec::new();
        for remote in &offer.tools {
            let mut remote = remote.clone();
            if !remote.read_only {
                slot.writable_seen.insert(remote.name.clone());
            } else if slot.writable_seen.contains(&remote.name) {
                remote.read_only = false;
                notes.push(format!("{} now says it is read-only; it keeps asking this session", remote.name));
            }
            let tool = McpTool::new(name, remote, self.this.clone());
            if let Some(first) = tools.iter().find(|other| other.name == tool.name) {
                notes.push(format!(
                    "{} is left out: its name becomes {}, as {}'s does",
                    tool.remote_name(),
                    tool.name,
                    first.remote_name()
                ));
                continue;
            }
            tools.push(tool);
        }
        for note in &notes {
            tracing::warn!(server = %name, "{note}");
        }
        slot.offer = offer;
        slot.tools = tools;
        slot.notes = notes;
    }

    /// Puts `server` in `status` and ends its connection (closed cleanly when no call is using it).
    async fn stop(&self, server: &Server, status: Status) {
        let old = {
            let mut slot = server.slot();
            if matches!(status, Status::Disabled(_)) {
                slot.tools.clear();
            }
            slot.status = status;
            slot.connection.take()
        };
        self.changed();
        if let Some(old) = old.and_then(|old| Arc::try_unwrap(old).ok()) {
            old.close().await;
        }
    }

    fn server(&self, name: &str) -> Option<&Arc<Server>> {
        self.servers.iter().find(|server| server.config.name == name)
    }

    /// A live connection to `name`, starting the server again when it died.
    pub(super) async fn live(&self, name: &str) -> Result<Arc<Connection>, String> {
        let Some(server) = self.server(name) else { return Err(format!("there is no MCP server {name:?}")) };
        {
            let slot = server.slot();
            if let Status::Disabled(reason) = &slot.status {
                return Err(format!("the MCP server {name} is disabled: {reason}"));
            }
            if let Some(connection) = slot.connection.clone().filter(|c| !c.is_closed()) {
                return Ok(connection);
            }
        }
        self.connect(server).await.map_err(|reason| format!("the MCP server {name} could not be started: {reason}"))
    }

    /// Runs `tool` of `server` for the model.
    pub(super) async fn call(&self, server: &str, tool: &str, input: Value, ctx: &ToolContext) -> ToolOutput {
        let connection = match self.live(server).await {
            Ok(connection) => connection,
            Err(reason) => return ToolOutput::error(capitalized(&reason)),
        };
        let spill = ctx.output_dir.as_ref().map(|dir| {
            let id = ctx.call_id.clone().unwrap_or_else(|| format!("{:x}", fastrand::u64(..)));
            dir.join(format!("mcp-{}.txt", id.replace(['/', '\\'], "_")))
        });
        let timeout = self.options.call_timeout;
        match connection.call_tool(tool, input, timeout, ctx.live_output.clone(), &ctx.cancel).await {
            Ok(result) => tool::result_output(&result, self.options.max_output_tokens * 4, spill.as_deref()),
            Err(CallFailure::Closed(reason)) => {
                if let Some(server) = self.server(server) {
                    let mut slot = server.slot();
                    slot.status = Status::Failed(format!("it stopped during a call of {tool}: {reason}"));
                    slot.connection = None;
                }
                self.changed();
                ToolOutput::error(format!(
                    "The MCP server {server} stopped during the call of {tool} ({reason}). It is started again on \
                     the next call of one of its tools."
                ))
            }
            Err(CallFailure::TimedOut(after)) => ToolOutput::error(format!(
                "The MCP tool {tool} of {server} did not answer within {}s (MCP_TOOL_TIMEOUT); the call was cancelled.",
                after.as_secs()
            )),
            Err(CallFailure::Interrupted) => ToolOutput::error("Interrupted by the user."),
            Err(CallFailure::Failed(reason)) => {
                ToolOutput::error(format!("The MCP tool {tool} of {server} failed: {reason}"))
            }
        }
    }

    /// Every server with its state.
    pub fn statuses(&self) -> Vec<ServerStatus> {
        self.servers
            .iter()
            .map(|server| {
                let mut slot = server.slot();
                if slot.status == Status::Connected && slot.connection.as_ref().is_some_and(|c| c.is_closed()) {
                    let note = slot.connection.as_ref().map(|c| c.stderr_note()).unwrap_or_default();
                    slot.status = Status::Failed(format!("the server exited{note}"));
                    slot.connection = None;
                }
                ServerStatus {
                    name: server.config.name.clone(),
                    scope: server.config.scope,
                    origin: server.config.origin.clone(),
                    transport: match &server.config.transport {
                        Ok(Transport::Http { .. }) => "http",
                        Ok(Transport::Sdk) => "sdk",
                        _ => "stdio",
                    },
                    status: slot.status.clone(),
                    tools: slot.tools.iter().map(|tool| tool.name.clone()).collect(),
                    listed: slot
                        .tools
                        .iter()
                        .map(|tool| super::status::ListedTool {
                            name: tool.remote_name().to_owned(),
                            description: tool.description_text(),
                            read_only: tool.is_read_only(),
                        })
                        .collect(),
                    server_info: slot.offer.server_info.clone(),
                    resources: slot.offer.resources.len(),
                    prompts: slot.offer.prompts.len(),
                    needs_approval: slot.needs_approval,
                    config: server.config.raw.clone(),
                    notes: slot.notes.clone(),
                }
            })
            .collect()
    }

    /// Starts a `.mcp.json` server the user just approved.
    pub fn approve(&self, name: &str) {
        if let Some(server) = self.server(name) {
            let mut slot = server.slot();
            if slot.needs_approval {
                slot.needs_approval = false;
                slot.status = Status::Pending;
                drop(slot);
                self.changed();
                self.spawn_connect(server.clone());
            }
        }
    }

    /// Marks a `.mcp.json` server as refused for this session.
    pub fn refuse(&self, name: &str) {
        if let Some(server) = self.server(name) {
            let mut slot = server.slot();
            slot.needs_approval = false;
            slot.refused = true;
            slot.status = Status::Disabled("refused: you declined this .mcp.json server".into());
            drop(slot);
            self.changed();
        }
    }

    /// Stops `name` and starts it again (`/mcp` reconnect, the SDK's `mcp_reconnect`).
    pub async fn reconnect(&self, name: &str) -> Result<(), String> {
        let Some(server) = self.server(name) else { return Err(format!("there is no MCP server {name:?}")) };
        if server.slot().needs_approval {
            return Err(format!("the MCP server {name} waits for your approval"));
        }
        if server.slot().refused {
            return Err(format!("you declined the MCP server {name} for this session"));
        }
        self.stop(server, Status::Pending).await;
        self.connect(server).await.map(|_| ())
    }

    /// Switches `name` off for the session, or on again (the SDK's `mcp_toggle`).
    pub async fn set_enabled(&self, name: &str, enabled: bool) -> Result<(), String> {
        let Some(server) = self.server(name) else { return Err(format!("there is no MCP server {name:?}")) };
        if enabled {
            return self.reconnect(name).await;
        }
        self.stop(server, Status::Disabled("switched off in this session".into())).await;
        Ok(())
    }

    /// Every tool of every server that has connected (its last list when it died since), in server order.
    pub fn all_tools(&self) -> Vec<Arc<McpTool>> {
        self.servers
            .iter()
            .flat_map(|server| {
                let slot = server.slot();
                match slot.status {
                    Status::Disabled(_) => Vec::new(),
                    _ => slot.tools.clone(),
                }
            })
            .collect()
    }

    /// Declares `tools` (found by ToolSearch) from the next request on.
    pub(super) fn declare(&self, tools: &[Arc<McpTool>]) {
        let mut found = self.found.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        for tool in tools {
            if !found.contains(&tool.name) {
                found.push(tool.name.clone());
            }
        }
    }

    /// Whether the tools are behind the ToolSearch tool now (their schemas are over the budget).
    pub fn searching(&self) -> bool {
        self.options.tool_search.defers(&self.all_tools())
    }

    /// Every entry `pick` takes from the connected servers' offers: (server, entry).
    pub(super) fn listed(&self, pick: impl Fn(&Offer) -> &Vec<Value>) -> Vec<(String, Value)> {
        self.servers
            .iter()
            .flat_map(|server| {
                let slot = server.slot();
                let entries: Vec<Value> =
                    if slot.status == Status::Connected { pick(&slot.offer).clone() } else { Vec::new() };
                entries.into_iter().map(|entry| (server.config.name.clone(), entry)).collect::<Vec<_>>()
            })
            .collect()
    }
}

impl ToolSource for McpManager {
    fn offered(&self) -> Vec<Arc<dyn Tool>> {
        let tools = self.all_tools();
        if self.options.tool_search.defers(&tools) {
            let found = self.found.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            let declared = found.iter().filter_map(|name| tools.iter().find(|tool| tool.name == *name));
            let declared = declared.map(|tool| tool.clone() as Arc<dyn Tool>);
            return std::iter::once(self.search_tool.clone() as Arc<dyn Tool>).chain(declared).collect();
        }
        tools.into_iter().map(|tool| tool as Arc<dyn Tool>).collect()
    }

    fn get(&self, name: &str) -> Option<Arc<dyn Tool>> {
        if name == search::TOOL_SEARCH {
            return self.searching().then(|| self.search_tool.clone() as Arc<dyn Tool>);
        }
        self.all_tools().into_iter().find(|tool| tool.name == name).map(|tool| tool as Arc<dyn Tool>)
    }

    fn settle(&self, wait: Duration) -> futures::future::BoxFuture<'_, ()> {
        Box::pin(McpManager::settle(self, wait))
    }
}

fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect::<String>() + ".",
        None => String::new(),
    }
}

#[cfg(test)]
#[path = "manager_tests.rs"]
mod tests;
