//! The HTTP server: routes, the shared scenario cursor and request log, and the two ways to run it (inside the
//! caller's tokio runtime, or on a background thread for synchronous tests that drive a subprocess).

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{DefaultBodyLimit, State};
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, Uri};
use axum::response::Response;
use axum::routing::{get, post};
use axum::serve::ListenerExt;
use serde_json::Value;
use tokio::net::TcpListener;
use tokio::sync::watch;

use crate::anthropic::{self, Anthropic};
use crate::openai::{self, OpenAi};
use crate::record::{RecordedRequest, presented_keys};
use crate::scenario::{Fault, Reply, Scenario};
use crate::sse::{self, FaultShapes, Frame, Plan};
use crate::turn::{Turn, count_tool_uses, error_type_for_status, status_for_error_type};

/// Options beyond the scenario.
#[derive(Clone, Debug, Default)]
pub struct ServerOptions {
    /// Port on 127.0.0.1; 0 (the default) picks a free one.
    pub port: u16,
    /// When set, every recorded request is appended to this file as one JSON line.
    pub log: Option<PathBuf>,
}

/// A running fake LLM server. Dropping it shuts the server down: open streams (stalled ones included) are aborted.
pub struct FakeServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    stop: watch::Sender<bool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl std::fmt::Debug for FakeServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeServer").field("addr", &self.addr).field("served", &self.served()).finish()
    }
}

impl FakeServer {
    /// Starts on 127.0.0.1:0 inside the current tokio runtime.
    pub async fn start(scenario: Scenario) -> io::Result<FakeServer> {
        Self::start_with(scenario, ServerOptions::default()).await
    }

    /// Like [`FakeServer::start`], with a fixed port and/or a request log.
    pub async fn start_with(scenario: Scenario, options: ServerOptions) -> io::Result<FakeServer> {
        let listener = TcpListener::bind(("127.0.0.1", options.port)).await?;
        let (stop, shared) = Shared::new(scenario, options.log);
        let addr = listener.local_addr()?;
        tokio::spawn(serve(listener, shared.clone()));
        Ok(FakeServer { addr, shared, stop, thread: None })
    }

    /// Starts on its own background thread + runtime; for synchronous tests that drive a subprocess.
    pub fn spawn(scenario: Scenario) -> io::Result<FakeServer> {
        Self::spawn_with(scenario, ServerOptions::default())
    }

    /// Like [`FakeServer::spawn`], with a fixed port and/or a request log.
    pub fn spawn_with(scenario: Scenario, options: ServerOptions) -> io::Result<FakeServer> {
        // Bind here so the port is known (and bind errors reported) before this returns.
        let std_listener = std::net::TcpListener::bind(("127.0.0.1", options.port))?;
        std_listener.set_nonblocking(true)?;
        let addr = std_listener.local_addr()?;
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        let listener = {
            let _guard = runtime.enter();
            TcpListener::from_std(std_listener)?
        };
        let (stop, shared) = Shared::new(scenario, options.log);
        let server_shared = shared.clone();
        let thread = std::thread::Builder::new().name(format!("tandem-fake-llm-{}", addr.port())).spawn(move || {
            runtime.block_on(async move {
                let mut stop_rx = server_shared.shutdown.clone();
                let server = tokio::spawn(serve(listener, server_shared));
                sse::shutdown_signal(&mut stop_rx).await;
                // Let the graceful shutdown close idle connections; whatever is left is cancelled when the
                // runtime is dropped right after.
                let _ = tokio::time::timeout(Duration::from_millis(500), server).await;
            });
        })?;
        Ok(FakeServer { addr, shared, stop, thread: Some(thread) })
    }

    /// e.g. "http://127.0.0.1:43211" (no trailing slash, no /v1).
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The OpenAI-style base URL, `url()` + `/v1`.
    pub fn openai_base_url(&self) -> String {
        format!("{}/v1", self.url())
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Every model request so far, in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.lock().requests.clone()
    }

    /// How many replies have been consumed.
    pub fn served(&self) -> usize {
        self.shared.lock().next
    }

    /// Replies not yet consumed.
    pub fn remaining(&self) -> usize {
        let state = self.shared.lock();
        state.scenario.replies.len().saturating_sub(state.next)
    }

    /// Appends a reply to the running scenario (for tests that decide the next answer late).
    pub fn push_reply(&self, reply: Reply) {
        self.shared.lock().scenario.replies.push(reply);
    }
}

impl Drop for FakeServer {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// State shared by the handle and the request handlers.
struct Shared {
    state: Mutex<ScenarioState>,
    log: Option<PathBuf>,
    shutdown: watch::Receiver<bool>,
}

struct ScenarioState {
    scenario: Scenario,
    /// Index of the next reply = replies consumed so far.
    next: usize,
    requests: Vec<RecordedRequest>,
}

/// What to do with a request.
enum Decision {
    Unauthorized,
    Exhausted(usize),
    Serve(Box<Turn>),
}

impl Shared {
    fn new(scenario: Scenario, log: Option<PathBuf>) -> (watch::Sender<bool>, Arc<Shared>) {
        let (stop, shutdown) = watch::channel(false);
        let state = ScenarioState { scenario, next: 0, requests: Vec::new() };
        let shared = Arc::new(Shared { state: Mutex::new(state), log, shutdown });
        (stop, shared)
    }

    /// A panicking test thread must not hide the recorded requests from the others: ignore poisoning.
    fn lock(&self) -> MutexGuard<'_, ScenarioState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records the request and takes the next reply in one critical section, so recording order is serving order.
    fn record_and_take(&self, recorded: RecordedRequest, headers: &HeaderMap) -> Decision {
        let mut state = self.lock();
        if let Some(path) = &self.log {
            append_log(path, &recorded);
        }
        let request_body = recorded.body.clone();
        state.requests.push(recorded);
        if let Some(expected) = &state.scenario.require_api_key
            && !presented_keys(headers).iter().any(|k| k == expected)
        {
            return Decision::Unauthorized;
        }
        let Some(reply) = state.scenario.replies.get(state.next).cloned() else {
            return Decision::Exhausted(state.next);
        };
        let tools_before = state.scenario.replies[..state.next].iter().map(count_tool_uses).sum();
        state.next += 1;
        Decision::Serve(Box::new(Turn::new(reply, state.next, tools_before, &request_body)))
    }
}

fn append_log(path: &PathBuf, request: &RecordedRequest) {
    let line = serde_json::to_string(request).unwrap_or_else(|error| format!("{{\"error\": \"{error}\"}}"));
    let result =
        std::fs::OpenOptions::new().create(true).append(true).open(path).and_then(|mut f| writeln!(f, "{line}"));
    if let Err(e) = result {
        eprintln!("fake-llm: cannot append to log {}: {e}", path.display());
    }
}

async fn serve(listener: TcpListener, shared: Arc<Shared>) {
    let mut stop_rx = shared.shutdown.clone();
    let app = Router::new()
        .route("/v1/messages", post(anthropic_route))
        .route("/v1/chat/completions", post(openai_route))
        .route("/health", get(|| async { "ok" }))
        .fallback(server_info_route)
        // Agent requests carry whole conversations: axum's 2 MB default would reject long sessions.
        .layer(DefaultBodyLimit::disable())
        .with_state(shared);
    // Events are tiny: without TCP_NODELAY, Nagle + delayed ACKs would add latency and blur scripted timing.
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    let result = axum::serve(listener, app)
        .with_graceful_shutdown(async move { sse::shutdown_signal(&mut stop_rx).await })
        .await;
    if let Err(e) = result {
        eprintln!("fake-llm: server error: {e}");
    }
}

/// Any other path: the scenario's `server_info` for it (a local server describing itself), else 404.
async fn server_info_route(State(shared): State<Arc<Shared>>, uri: Uri) -> Response {
    let info = shared.lock().scenario.server_info.get(uri.path()).cloned();
    match info {
        Some(body) => axum::response::IntoResponse::into_response(axum::Json(body)),
        None => {
            axum::response::IntoResponse::into_response((axum::http::StatusCode::NOT_FOUND, "fake-llm: no such route"))
        }
    }
}

/// Which wire format a route speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Api {
    Anthropic,
    OpenAi,
}

impl Api {
    fn shapes(self) -> &'static dyn FaultShapes {
        match self {
            Api::Anthropic => &Anthropic,
            Api::OpenAi => &OpenAi,
        }
    }

    fn error_body(self, status: u16, error_type: &str, message: &str) -> Value {
        match self {
            Api::Anthropic => anthropic::error_body(error_type, message),
            Api::OpenAi => openai::error_body(error_type, message, status),
        }
    }
}

async fn anthropic_route(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    handle(Api::Anthropic, &shared, &method, &uri, &headers, &body).await
}

async fn openai_route(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    handle(Api::OpenAi, &shared, &method, &uri, &headers, &body).await
}

async fn handle(api: Api, shared: &Shared, method: &Method, uri: &Uri, headers: &HeaderMap, body: &[u8]) -> Response {
    let recorded = RecordedRequest::capture(method, uri, headers, body);
    let request = recorded.body.clone();
    match shared.record_and_take(recorded, headers) {
        Decision::Unauthorized => error_response(api, 401, "fake-llm: invalid or missing API key", &[]),
        Decision::Exhausted(n) => error_response(
            api,
            500,
            &format!("fake-llm: scenario exhausted after {n} requests"),
            // A retrying client would otherwise back off for a long while before the test fails.
            &[("x-should-retry", "false")],
        ),
        Decision::Serve(turn) => {
            if let Some(wanted) = turn.reply.wait_for_requests {
                let deadline = tokio::time::Instant::now() + RENDEZVOUS_TIMEOUT;
                loop {
                    let arrived = shared.lock().requests.len();
                    if arrived >= wanted {
                        break;
                    }
                    if tokio::time::Instant::now() >= deadline {
                        return error_response(
                            api,
                            500,
                            &format!("fake-llm: this reply waits for {wanted} requests, only {arrived} arrived"),
                            &[("x-should-retry", "false")],
                        );
                    }
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
            }
            serve_turn(api, &turn, &request, shared.shutdown.clone()).await
        }
    }
}

/// How long a reply waits for the requests it is held for ([`crate::Reply::wait_for_requests`]).
const RENDEZVOUS_TIMEOUT: Duration = Duration::from_secs(10);

async fn serve_turn(api: Api, turn: &Turn, request: &Value, shutdown: watch::Receiver<bool>) -> Response {
    let delay = Duration::from_millis(turn.reply.delay_ms);
    let fault = turn.reply.fault.as_ref();
    let streaming =
        request.get("stream").and_then(Value::as_bool) == Some(true) && !matches!(fault, Some(Fault::NotStreamed));
    if !streaming || matches!(fault, Some(Fault::Http { .. })) {
        // A non-streaming answer or an HTTP error is a single event: the delay comes before it.
        if !delay.is_zero() {
            tokio::time::sleep(delay).await;
        }
    }
    match fault {
        Some(Fault::Http { status, headers, body }) => return http_fault(api, *status, headers, body.as_ref()),
        Some(Fault::ErrorEventAt { error_type, message, .. }) if !streaming => {
            let status = status_for_error_type(error_type);
            let body = api.error_body(status, error_type, message);
            return json_response(status, body.to_string(), &[]);
        }
        _ => {}
    }
    let mut builder = Response::builder().status(StatusCode::OK);
    if api == Api::Anthropic {
        builder = builder.header("request-id", format!("req_fake_{}", turn.number));
    }
    let plan = if streaming {
        builder = match fault {
            Some(Fault::ContentType { content_type }) if content_type.is_empty() => builder,
            Some(Fault::ContentType { content_type }) => builder.header(CONTENT_TYPE, content_type.as_str()),
            _ => builder.header(CONTENT_TYPE, "text/event-stream"),
        };
        builder = builder.header(CACHE_CONTROL, "no-cache");
        let frames = match api {
            Api::Anthropic => anthropic::stream_frames(turn),
            Api::OpenAi => {
                let include_usage = request.pointer("/stream_options/include_usage").and_then(Value::as_bool);
                openai::stream_frames(turn, include_usage == Some(true))
            }
        };
        sse::plan(frames, fault, api.shapes(), delay)
    } else {
        builder = builder.header(CONTENT_TYPE, "application/json");
        let body = match api {
            Api::Anthropic => anthropic::message_body(turn),
            Api::OpenAi => openai::completion_body(turn),
        };
        sse::plan(vec![Frame::raw(body.to_string())], fault, api.shapes(), Duration::ZERO)
    };
    body_response(builder, plan, shutdown)
}

fn body_response(builder: axum::http::response::Builder, plan: Plan, shutdown: watch::Receiver<bool>) -> Response {
    builder.body(Body::from_stream(sse::body_stream(plan, shutdown))).unwrap_or_else(|_| server_error())
}

/// An error in the endpoint's shape, the type matching the status.
fn error_response(api: Api, status: u16, message: &str, extra: &[(&str, &str)]) -> Response {
    let body = api.error_body(status, error_type_for_status(status), message);
    json_response(status, body.to_string(), extra)
}

fn json_response(status: u16, body: String, extra: &[(&str, &str)]) -> Response {
    let mut builder = Response::builder()
        .status(StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR))
        .header(CONTENT_TYPE, "application/json");
    for (name, value) in extra {
        builder = builder.header(*name, *value);
    }
    builder.body(Body::from(body)).unwrap_or_else(|_| server_error())
}

/// A bare 500, for a response that could not be built (a header a scenario set that HTTP can't carry).
fn server_error() -> Response {
    let mut response = Response::new(Body::from("the fake server could not build this response"));
    *response.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
    response
}

/// The scripted HTTP error. Invalid statuses or headers in the scenario are a test bug: answer with a 500 saying so.
fn http_fault(api: Api, status: u16, headers: &BTreeMap<String, String>, body: Option<&Value>) -> Response {
    let Ok(code) = StatusCode::from_u16(status) else {
        return error_response(api, 500, &format!("fake-llm: invalid status {status} in scenario"), &[]);
    };
    let (content_type, text) = match body {
        None => {
            let message = format!("fake-llm: scripted HTTP {status}");
            let body = api.error_body(status, error_type_for_status(status), &message);
            ("application/json", body.to_string())
        }
        Some(Value::String(s)) => ("text/plain; charset=utf-8", s.clone()),
        Some(other) => ("application/json", other.to_string()),
    };
    let mut response = Response::new(Body::from(text));
    *response.status_mut() = code;
    let map = response.headers_mut();
    map.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    for (name, value) in headers {
        match (HeaderName::try_from(name.as_str()), HeaderValue::try_from(value.as_str())) {
            (Ok(n), Ok(v)) => {
                map.insert(n, v);
            }
            _ => {
                let message = format!("fake-llm: invalid header {name:?}: {value:?} in scenario");
                return error_response(api, 500, &message, &[]);
            }
        }
    }
    response
}
