//! One connection to one MCP server, through `rmcp`: starting it (a child process or streamable HTTP), the
//! `initialize` handshake, listing what it offers, calling a tool with a timeout, progress and cancellation.
//!
//! The server's answers are kept as JSON (`serde_json::Value`) past this module: tandem only reads a few fields
//! of them, and JSON keeps that reading stable across the crate's fast-moving typed model.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotificationParam, ClientCapabilities, ClientRequest,
    Implementation, InitializeRequestParams, ProgressNotificationParam, ProgressToken, ProtocolVersion, ServerResult,
};
use rmcp::service::{NotificationContext, PeerRequestOptions, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::Value;
use tokio::io::AsyncBufReadExt;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::config::Transport;
use crate::shell_env::ShellEnvPolicy;

/// The last lines a stdio server wrote to stderr, kept to explain why it failed.
const STDERR_TAIL_LINES: usize = 20;

/// A tool as the server lists it.
#[derive(Clone, Debug)]
pub struct RemoteTool {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
    /// The server says the tool changes nothing (`annotations.readOnlyHint`); nothing else makes it read-only.
    pub read_only: bool,
    pub title: Option<String>,
}

impl RemoteTool {
    fn from_json(tool: &Value) -> Option<RemoteTool> {
        let name = tool.get("name")?.as_str()?.to_owned();
        let mut input_schema = tool.get("inputSchema").cloned().unwrap_or_else(|| serde_json::json!({}));
        if !input_schema.is_object() {
            input_schema = serde_json::json!({});
        }
        if input_schema.get("type").is_none()
            && let Some(schema) = input_schema.as_object_mut()
        {
            schema.insert("type".into(), "object".into());
        }
        let annotations = tool.get("annotations");
        Some(RemoteTool {
            name,
            description: tool.get("description").and_then(Value::as_str).unwrap_or_default().to_owned(),
            input_schema,
            // A tool that says it is read-only and destructive at once is taken at its worse word.
            read_only: annotations.and_then(|a| a.get("readOnlyHint")).and_then(Value::as_bool) == Some(true)
                && annotations.and_then(|a| a.get("destructiveHint")).and_then(Value::as_bool) != Some(true),
            title: tool
                .get("title")
                .or_else(|| annotations.and_then(|a| a.get("title")))
                .and_then(Value::as_str)
                .map(str::to_owned),
        })
    }
}

/// What a connected server offers.
#[derive(Clone, Debug, Default)]
pub struct Offer {
    pub tools: Vec<RemoteTool>,
    /// `resources/list` entries (`uri`, `name`, `mimeType`, …), when the server has resources.
    pub resources: Vec<Value>,
    /// `prompts/list` entries (`name`, `description`, `arguments`), when the server has prompts.
    pub prompts: Vec<Value>,
    /// The server's `serverInfo` (`name`, `version`).
    pub server_info: Value,
    /// The server's `instructions`, if any.
    pub instructions: Option<String>,
}

/// Where a running call's progress notifications go.
type ProgressRoutes = Arc<Mutex<HashMap<ProgressToken, mpsc::UnboundedSender<String>>>>;

/// tandem's side of the connection: who it is, and what it does with the server's notifications.
pub struct Handler {
    progress: ProgressRoutes,
    /// Set when the server says its tools, resources or prompts changed; the manager lists them again.
    changed: Arc<tokio::sync::Notify>,
}

impl ClientHandler for Handler {
    fn get_info(&self) -> InitializeRequestParams {
        InitializeRequestParams::new(
            ClientCapabilities::default(),
            Implementation::new("tandem", env!("CARGO_PKG_VERSION")).with_title("tandem"),
        )
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }

    async fn on_progress(&self, params: ProgressNotificationParam, _context: NotificationContext<RoleClient>) {
        let route = lock(&self.progress).get(&params.progress_token).cloned();
        if let Some(route) = route {
            let _ = route.send(progress_line(&params));
        }
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.changed.notify_one();
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.changed.notify_one();
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.changed.notify_one();
    }
}

/// How a progress notification reads in a running call's live output.
fn progress_line(params: &ProgressNotificationParam) -> String {
    let amount = match params.total {
        Some(total) if total > 0.0 => {
            format!("{}/{} ({:.0}%)", params.progress, total, 100.0 * params.progress / total)
        }
        _ => format!("{}", params.progress),
    };
    match params.message.as_deref() {
        Some(message) if !message.is_empty() => format!("progress {amount}: {message}\n"),
        _ => format!("progress {amount}\n"),
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A live connection.
pub struct Connection {
    service: RunningService<RoleClient, Handler>,
    progress: ProgressRoutes,
    pub changed: Arc<tokio::sync::Notify>,
    stderr: Arc<Mutex<Vec<String>>>,
    /// Turns true (or closes) once the server's stderr reached its end: what a crashed server said last is read
    /// before the crash is explained.
    stderr_done: tokio::sync::watch::Receiver<bool>,
    /// A stdio server's process: held, so that it is stopped when the connection is dropped.
    _process: Option<super::stdio::ServerProcess>,
    /// The size of an answer that was too large to be read ([`super::http::SIZE_UNKNOWN`] over HTTP).
    oversized: Option<tokio::sync::watch::Receiver<Option<u64>>>,
}

/// How long an explanation of a closed connection waits for the rest of the server's stderr.
const STDERR_SETTLE: Duration = Duration::from_millis(500);

/// Waits (up to [`STDERR_SETTLE`]) until the server's stderr ended; an HTTP server has none.
async fn stderr_settled(done: &tokio::sync::watch::Receiver<bool>) {
    let mut done = done.clone();
    let _ = tokio::time::timeout(STDERR_SETTLE, done.wait_for(|ended| *ended)).await;
}

/// How a call ended, when it did not return a result.
#[derive(Debug)]
pub enum CallFailure {
    /// The connection is gone (the process exited, the HTTP session ended).
    Closed(String),
    TimedOut(Duration),
    Interrupted,
    /// The server answered with a JSON-RPC error, or something tandem could not read.
    Failed(String),
}

impl Connection {
    /// Starts the server and does the handshake, within `timeout`.
    pub async fn open(
        server: &str,
        transport: &Transport,
        shell_env: &ShellEnvPolicy,
        relay: Option<&super::relay::SdkRelay>,
        timeout: Duration,
    ) -> Result<Connection, String> {
        let progress = ProgressRoutes::default();
        let changed = Arc::new(tokio::sync::Notify::new());
        let handler = Handler { progress: progress.clone(), changed: changed.clone() };
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let (stderr_end, stderr_done) = tokio::sync::watch::channel(false);
        let mut process = None;
        let oversized;
        let started = match transport {
            Transport::Stdio { command, args, env, cwd } => {
                let mut cmd = tokio::process::Command::new(command);
                cmd.args(args);
                shell_env.apply(&mut cmd);
                cmd.envs(env);
                if let Some(dir) = cwd {
                    cmd.current_dir(dir);
                }
                cmd.stdin(std::process::Stdio::piped())
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped())
                    .kill_on_drop(true);
                // Its own process group: the terminal's Ctrl-C is tandem's to handle, and the group is stopped
                // with the connection.
                #[cfg(unix)]
                cmd.process_group(0);
                let mut child = cmd.spawn().map_err(|err| format!("cannot start {command:?}: {err}"))?;
                let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
                    return Err(format!("cannot start {command:?}: its standard input and output are not pipes"));
                };
                if let Some(pipe) = child.stderr.take() {
                    tokio::spawn(keep_stderr_tail(pipe, stderr.clone(), server.to_owned(), stderr_end));
                }
                let (stdout, sizes) = super::stdio::MessageSizes::new(stdout);
                process = Some(super::stdio::ServerProcess::new(child));
                oversized = Some(sizes);
                tokio::time::timeout(timeout, handler.serve((stdout, stdin))).await
            }
            Transport::Sdk => {
                let Some(relay) = relay else {
                    return Err("an SDK server is served by the program that started tandem through the Agent SDK, \
                                and this session has none"
                        .into());
                };
                oversized = None;
                tokio::time::timeout(timeout, handler.serve(super::relay::open(server, relay))).await
            }
            Transport::Http { url, headers } => {
                super::install_crypto_provider();
                let mut custom = HashMap::new();
                for (name, value) in headers {
                    let name = reqwest::header::HeaderName::from_bytes(name.as_bytes())
                        .map_err(|_| format!("header name {name:?} is not valid"))?;
                    let value = reqwest::header::HeaderValue::from_str(value)
                        .map_err(|_| format!("the value of header {name} is not valid"))?;
                    custom.insert(name, value);
                }
                let config = rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(
                    url.as_str(),
                )
                .custom_headers(custom);
                let (client, sizes) = super::http::SizeNotingClient::new();
                oversized = Some(sizes);
                let transport = StreamableHttpClientTransport::with_client(client, config);
                tokio::time::timeout(timeout, handler.serve(transport)).await
            }
        };
        let tail = |stderr: &Arc<Mutex<Vec<String>>>| stderr_note(&lock(stderr));
        match started {
            Err(_) => Err(format!("it did not finish starting within {}s{}", timeout.as_secs_f32(), tail(&stderr))),
            Ok(Err(err)) => {
                stderr_settled(&stderr_done).await;
                Err(format!("{}{}", describe_init_error(&err), tail(&stderr)))
            }
            Ok(Ok(service)) => {
                Ok(Connection { service, progress, changed, stderr, stderr_done, _process: process, oversized })
            }
        }
    }

    /// Lists tools, resources and prompts (each only when the server has that capability).
    pub async fn list(&self, timeout: Duration) -> Result<Offer, String> {
        let info = self.service.peer_info();
        let info_json = info.as_ref().and_then(|info| serde_json::to_value(info.as_ref()).ok()).unwrap_or_default();
        let capabilities = info_json.get("capabilities").cloned().unwrap_or_default();
        let has = |name: &str| capabilities.get(name).is_some_and(|value| !value.is_null());
        let mut offer = Offer {
            server_info: info_json.get("serverInfo").cloned().unwrap_or_default(),
            instructions: info_json.get("instructions").and_then(Value::as_str).map(str::to_owned),
            ..Offer::default()
        };
        let within =
            |what: &'static str| move |_| format!("listing its {what} took longer than {}s", timeout.as_secs());
        if has("tools") {
            let tools = tokio::time::timeout(timeout, self.service.list_all_tools())
                .await
                .map_err(within("tools"))?
                .map_err(|err| format!("listing its tools failed: {err}"))?;
            for tool in tools {
                let json = serde_json::to_value(&tool).unwrap_or_default();
                match RemoteTool::from_json(&json) {
                    Some(tool) => offer.tools.push(tool),
                    None => tracing::warn!(?json, "MCP tool without a name"),
                }
            }
        }
        // Resources and prompts are extras: a server that fails to list them still offers its tools.
        if has("resources")
            && let Ok(Ok(resources)) = tokio::time::timeout(timeout, self.service.list_all_resources()).await
        {
            offer.resources = resources.iter().filter_map(|r| serde_json::to_value(r).ok()).collect();
        }
        if has("prompts")
            && let Ok(Ok(prompts)) = tokio::time::timeout(timeout, self.service.list_all_prompts()).await
        {
            offer.prompts = prompts.iter().filter_map(|p| serde_json::to_value(p).ok()).collect();
        }
        Ok(offer)
    }

    /// Whether the connection has ended (the server exited or closed it).
    pub fn is_closed(&self) -> bool {
        self.service.is_closed() || self.service.is_transport_closed()
    }

    /// What the server last wrote to stderr, as a note for an error message ("" when nothing).
    pub fn stderr_note(&self) -> String {
        stderr_note(&lock(&self.stderr))
    }

    /// Calls `tool` with `arguments`; progress notifications go to `live` as lines. The timeout restarts on each
    /// progress notification. Cancelling `cancel` tells the server the call is cancelled.
    pub async fn call_tool(
        &self,
        tool: &str,
        arguments: Value,
        timeout: Duration,
        live: Option<mpsc::UnboundedSender<String>>,
        cancel: &CancellationToken,
    ) -> Result<Value, CallFailure> {
        let mut params = CallToolRequestParams::new(tool.to_owned());
        params.arguments = arguments.as_object().cloned();
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let options = PeerRequestOptions::with_timeout(timeout).reset_timeout_on_progress();
        let peer = self.service.peer().clone();
        let handle = match peer.send_request_with_option(request, options).await {
            Ok(handle) => handle,
            Err(err) => return Err(self.settled_failure(err).await),
        };
        let id = handle.id.clone();
        let token = handle.progress_token.clone();
        if let Some(live) = live {
            lock(&self.progress).insert(token.clone(), live);
        }
        let mut oversized = self.oversized.clone();
        if let Some(oversized) = &mut oversized {
            oversized.mark_unchanged();
        }
        let too_large = async {
            let Some(oversized) = &mut oversized else { return std::future::pending().await };
            match oversized.changed().await {
                Ok(()) => *oversized.borrow(),
                Err(_) => std::future::pending().await,
            }
        };
        let outcome = tokio::select! {
            response = handle.await_response() => Some(response),
            _ = cancel.cancelled() => None,
            Some(size) = too_large => {
                lock(&self.progress).remove(&token);
                return Err(too_large_failure(size));
            }
        };
        lock(&self.progress).remove(&token);
        // The connection can end before the size is heard of: a size noted during this call explains it.
        if let (Some(Err(_)), Some(oversized)) = (&outcome, &oversized)
            && oversized.has_changed().unwrap_or(true)
            && let Some(size) = *oversized.borrow()
        {
            return Err(too_large_failure(size));
        }
        match outcome {
            None => {
                let cancelled = CancelledNotificationParam::new(Some(id), Some("interrupted by the user".into()));
                let _ = tokio::time::timeout(Duration::from_secs(1), peer.notify_cancelled(cancelled)).await;
                Err(CallFailure::Interrupted)
            }
            Some(Err(err)) => Err(self.settled_failure(err).await),
            Some(Ok(ServerResult::CallToolResult(result))) => {
                serde_json::to_value(&result).map_err(|err| CallFailure::Failed(err.to_string()))
            }
            Some(Ok(ServerResult::EmptyResult(_))) => Ok(serde_json::json!({"content": []})),
            Some(Ok(other)) => Err(CallFailure::Failed(format!(
                "the server answered the call with something that is not a tool result ({})",
                serde_json::to_string(&other).unwrap_or_default().chars().take(200).collect::<String>()
            ))),
        }
    }

    /// Reads a resource: its `contents` entries (`uri`, `mimeType`, `text` or `blob`).
    pub async fn read_resource(&self, uri: &str, timeout: Duration) -> Result<Vec<Value>, String> {
        let params = rmcp::model::ReadResourceRequestParams::new(uri.to_owned());
        let result = tokio::time::timeout(timeout, self.service.read_resource(params))
            .await
            .map_err(|_| format!("reading {uri} took longer than {}s", timeout.as_secs()))?
            .map_err(|err| format!("reading {uri} failed: {err}"))?;
        let json = serde_json::to_value(&result).unwrap_or_default();
        Ok(json.get("contents").and_then(Value::as_array).cloned().unwrap_or_default())
    }

    /// Gets a prompt with its arguments: its `messages` (`role`, `content`).
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: serde_json::Map<String, Value>,
        timeout: Duration,
    ) -> Result<Vec<Value>, String> {
        let mut params = rmcp::model::GetPromptRequestParams::new(name.to_owned());
        params.arguments = Some(arguments);
        let result = tokio::time::timeout(timeout, self.service.get_prompt(params))
            .await
            .map_err(|_| format!("getting the prompt {name} took longer than {}s", timeout.as_secs()))?
            .map_err(|err| format!("getting the prompt {name} failed: {err}"))?;
        let json = serde_json::to_value(&result).unwrap_or_default();
        Ok(json.get("messages").and_then(Value::as_array).cloned().unwrap_or_default())
    }

    /// Ends the connection (closes the child's stdin, then stops it).
    pub async fn close(mut self) {
        let _ = self.service.close_with_timeout(Duration::from_secs(2)).await;
    }

    /// [`Connection::failure`], once a closed connection's stderr had its moment to end.
    async fn settled_failure(&self, err: rmcp::ServiceError) -> CallFailure {
        if matches!(err, rmcp::ServiceError::TransportClosed | rmcp::ServiceError::TransportSend(_)) {
            stderr_settled(&self.stderr_done).await;
        }
        self.failure(err)
    }

    fn failure(&self, err: rmcp::ServiceError) -> CallFailure {
        match err {
            rmcp::ServiceError::Timeout { timeout } => CallFailure::TimedOut(timeout),
            rmcp::ServiceError::TransportClosed | rmcp::ServiceError::TransportSend(_) => {
                CallFailure::Closed(format!("the connection to the server ended{}", self.stderr_note()))
            }
            rmcp::ServiceError::McpError(error) => {
                CallFailure::Failed(format!("the server answered with an error: {}", error.message))
            }
            other => CallFailure::Failed(other.to_string()),
        }
    }
}

/// A call whose answer was too large to be read (`size` in bytes, or [`super::http::SIZE_UNKNOWN`]).
fn too_large_failure(size: u64) -> CallFailure {
    let limit = crate::fs_util::human_size(super::stdio::MAX_MESSAGE_BYTES);
    let size = match size {
        super::http::SIZE_UNKNOWN => format!("over the {limit} limit"),
        size => format!("{} — over the {limit} limit", crate::fs_util::human_size(size)),
    };
    CallFailure::Failed(format!(
        "the server's answer was {size} of one MCP message, so it can't be read; ask the tool for less"
    ))
}

fn describe_init_error(err: &rmcp::service::ClientInitializeError) -> String {
    let text = err.to_string();
    if text.to_ascii_lowercase().contains("connection closed") {
        "it exited (or closed its output) before answering `initialize`".into()
    } else {
        format!("the MCP handshake failed: {text}")
    }
}

fn stderr_note(lines: &[String]) -> String {
    match lines.iter().rev().find(|line| !line.trim().is_empty()) {
        Some(_) => {
            let shown: Vec<&str> =
                lines.iter().rev().take(5).map(String::as_str).collect::<Vec<_>>().into_iter().rev().collect();
            format!("; its stderr ends: {}", shown.join(" | "))
        }
        None => String::new(),
    }
}

async fn keep_stderr_tail(
    pipe: tokio::process::ChildStderr,
    tail: Arc<Mutex<Vec<String>>>,
    server: String,
    ended: tokio::sync::watch::Sender<bool>,
) {
    let mut lines = tokio::io::BufReader::new(pipe).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        tracing::debug!(server = %server, "MCP server stderr: {line}");
        let mut tail = lock(&tail);
        if tail.len() == STDERR_TAIL_LINES {
            tail.remove(0);
        }
        tail.push(line.chars().take(500).collect());
    }
    let _ = ended.send(true);
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::RemoteTool;

    #[test]
    fn read_only_needs_the_hint_and_no_destructive_one() {
        let tool = |annotations: serde_json::Value| {
            RemoteTool::from_json(&json!({"name": "t", "annotations": annotations})).unwrap().read_only
        };
        assert!(tool(json!({"readOnlyHint": true})));
        assert!(!tool(json!({"readOnlyHint": true, "destructiveHint": true})));
        assert!(!tool(json!({"readOnlyHint": "true"})));
        assert!(!tool(json!({})));
    }
}
