//! `tandem-fake-mcp`: an MCP server built with `rmcp`, for tests and manual checks. It speaks stdio by default and
//! streamable HTTP with `--http 127.0.0.1:PORT` (served at `/mcp`).
//!
//! Tools: `echo {text}`, `lookup {key}` (annotated read-only), `env {name}` (an environment variable's value),
//! `slow {ms}` (sleeps, with a progress notification every 100 ms), `crash` (the process exits mid-call),
//! `fail` (an error result), `big {chars}` (that much text), `image` (a PNG), plus `--tools N` generated ones
//! (`tool_0` …, long descriptions, for tool search). One resource (`note://readme`) and one prompt (`review`,
//! argument `topic`). Every call is appended to `--record FILE` as a JSON line.
//!
//! Options: `--name NAME` (serverInfo), `--slow-start MS` (sleep before serving), `--require-header NAME=VALUE`
//! (HTTP: refuse requests without it), `--exit-after-start` (exit right after listing, to test restarts).

use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, GetPromptRequestParams, GetPromptResponse,
    GetPromptResult, Implementation, ListPromptsResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ProgressNotificationParam, Prompt, PromptArgument, PromptMessage, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, Resource, ResourceContents, Role, ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};

/// A 1×1 PNG.
const PIXEL_PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

#[derive(Clone, Default)]
struct Options {
    name: String,
    generated: usize,
    record: Option<String>,
    http: Option<String>,
    slow_start: u64,
    require_header: Option<(String, String)>,
}

#[derive(Clone)]
struct FakeServer {
    options: Arc<Options>,
}

fn schema(properties: Value, required: &[&str]) -> Arc<serde_json::Map<String, Value>> {
    let value = json!({"type": "object", "properties": properties, "required": required});
    Arc::new(value.as_object().cloned().unwrap_or_default())
}

impl FakeServer {
    fn tools(&self) -> Vec<Tool> {
        let text = |name: &str| json!({name: {"type": "string"}});
        let mut tools = vec![
            Tool::new("echo", "Repeats the text it is given.", schema(text("text"), &["text"])),
            Tool::new("lookup", "Looks a key up in the fake directory.", schema(text("key"), &["key"]))
                .with_annotations(ToolAnnotations::new().read_only(true)),
            Tool::new(
                "env",
                "Tells the value of an environment variable of the server.",
                schema(text("name"), &["name"]),
            ),
            Tool::new(
                "slow",
                "Waits the given milliseconds, reporting progress.",
                schema(json!({"ms": {"type": "integer"}}), &["ms"]),
            ),
            Tool::new("crash", "Makes the server exit in the middle of the call.", schema(json!({}), &[])),
            Tool::new("fail", "Always fails.", schema(json!({}), &[])),
            Tool::new(
                "big",
                "Returns that many characters.",
                schema(json!({"chars": {"type": "integer"}}), &["chars"]),
            ),
            Tool::new("image", "Returns a tiny PNG image.", schema(json!({}), &[])),
        ];
        for i in 0..self.options.generated {
            let description = format!(
                "Generated tool number {i} of the fake server: it stands for one of the many tools a large MCP server \
                 offers (issue trackers, cloud consoles), each with a description long enough to count. {}",
                "It echoes its input. ".repeat(12)
            );
            let properties =
                json!({"input": {"type": "string", "description": "Anything"}, "count": {"type": "integer"}});
            tools.push(Tool::new(format!("tool_{i}"), description, schema(properties, &["input"])));
        }
        tools
    }

    fn record(&self, name: &str, arguments: &Value) {
        if let Some(path) = &self.options.record
            && let Ok(mut file) = std::fs::OpenOptions::new().create(true).append(true).open(path)
        {
            let _ = writeln!(file, "{}", json!({"server": self.options.name, "tool": name, "arguments": arguments}));
        }
    }
}

fn text_result(text: impl Into<String>) -> Result<CallToolResponse, ErrorData> {
    Ok(CallToolResponse::Complete(CallToolResult::success(vec![ContentBlock::text(text.into())])))
}

impl ServerHandler for FakeServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_resources().enable_prompts().build())
            .with_server_info(Implementation::new(self.options.name.clone(), "1.0.0"))
            .with_instructions("A fake server for tandem's tests.")
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = Value::Object(request.arguments.clone().unwrap_or_default());
        self.record(&request.name, &arguments);
        let field = |name: &str| arguments.get(name).and_then(Value::as_str).unwrap_or_default().to_owned();
        let number = |name: &str| arguments.get(name).and_then(Value::as_u64).unwrap_or(0);
        match request.name.as_ref() {
            "echo" => text_result(format!("echo: {}", field("text"))),
            "lookup" => text_result(format!("{} = value-of-{}", field("key"), field("key"))),
            "env" => text_result(std::env::var(field("name")).unwrap_or_else(|_| "(unset)".into())),
            "slow" => {
                let ms = number("ms");
                let token = context.meta.get_progress_token();
                let steps = (ms / 100).max(1);
                for step in 1..=steps {
                    tokio::select! {
                        _ = tokio::time::sleep(Duration::from_millis(ms / steps)) => {}
                        _ = context.ct.cancelled() => {
                            self.record("slow:cancelled", &arguments);
                            return text_result("cancelled");
                        }
                    }
                    if let Some(token) = token.clone() {
                        let params = ProgressNotificationParam::new(token, step as f64)
                            .with_total(steps as f64)
                            .with_message(format!("step {step}"));
                        let _ = context.peer.notify_progress(params).await;
                    }
                }
                text_result(format!("slept {ms} ms"))
            }
            "crash" => {
                eprintln!("fake MCP server: crashing as asked");
                std::process::exit(3)
            }
            "fail" => {
                Ok(CallToolResponse::Complete(CallToolResult::error(vec![ContentBlock::text("the fake failure")])))
            }
            "big" => text_result("x".repeat(number("chars") as usize)),
            "image" => Ok(CallToolResponse::Complete(CallToolResult::success(vec![
                ContentBlock::text("a pixel:"),
                ContentBlock::image(PIXEL_PNG, "image/png"),
            ]))),
            name if name.starts_with("tool_") => text_result(format!("{name} got {arguments}")),
            other => Err(ErrorData::invalid_params(format!("no tool {other}"), None)),
        }
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(vec![Resource::new("note://readme", "readme")]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        if request.uri != "note://readme" {
            return Err(ErrorData::resource_not_found(format!("no resource {}", request.uri), None));
        }
        let contents = ResourceContents::text("The readme of the fake server.", request.uri.clone());
        Ok(ReadResourceResponse::Complete(ReadResourceResult::new(vec![contents])))
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let argument = PromptArgument::new("topic").with_description("What to review").with_required(true);
        let prompt = Prompt::new("review", Some("Review something"), Some(vec![argument]));
        Ok(ListPromptsResult::with_all_items(vec![prompt]))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let topic = request.arguments.as_ref().and_then(|a| a.get("topic")).and_then(Value::as_str).unwrap_or("it");
        let message = PromptMessage::new_text(Role::User, format!("Please review {topic} carefully."));
        Ok(GetPromptResponse::Complete(GetPromptResult::new(vec![message])))
    }
}

fn parse_options() -> Result<Options, String> {
    let mut options = Options { name: "fake".into(), ..Options::default() };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--name" => options.name = value()?,
            "--tools" => options.generated = value()?.parse().map_err(|_| "--tools takes a number")?,
            "--record" => options.record = Some(value()?),
            "--http" => options.http = Some(value()?),
            "--slow-start" => options.slow_start = value()?.parse().map_err(|_| "--slow-start takes milliseconds")?,
            "--require-header" => {
                let text = value()?;
                let (name, value) = text.split_once('=').ok_or("--require-header takes NAME=VALUE")?;
                options.require_header = Some((name.to_ascii_lowercase(), value.to_owned()));
            }
            other => return Err(format!("unknown option {other}")),
        }
    }
    Ok(options)
}

#[tokio::main]
async fn main() {
    let options = match parse_options() {
        Ok(options) => options,
        Err(problem) => {
            eprintln!("tandem-fake-mcp: {problem}");
            std::process::exit(2)
        }
    };
    if options.slow_start > 0 {
        tokio::time::sleep(Duration::from_millis(options.slow_start)).await;
    }
    let server = FakeServer { options: Arc::new(options.clone()) };
    let result = match &options.http {
        None => serve_stdio(server).await,
        Some(address) => serve_http(server, address, options.require_header.clone()).await,
    };
    if let Err(problem) = result {
        eprintln!("tandem-fake-mcp: {problem}");
        std::process::exit(1)
    }
}

async fn serve_stdio(server: FakeServer) -> Result<(), String> {
    let running = server.serve(rmcp::transport::stdio()).await.map_err(|err| err.to_string())?;
    running.waiting().await.map_err(|err| err.to_string())?;
    Ok(())
}

async fn serve_http(server: FakeServer, address: &str, header: Option<(String, String)>) -> Result<(), String> {
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let mut router = axum::Router::new().nest_service("/mcp", service);
    if let Some((name, value)) = header {
        router = router.layer(axum::middleware::from_fn(
            move |request: axum::extract::Request, next: axum::middleware::Next| {
                let ok = request.headers().get(&name).and_then(|v| v.to_str().ok()) == Some(value.as_str());
                async move {
                    if ok {
                        next.run(request).await
                    } else {
                        axum::response::IntoResponse::into_response((
                            axum::http::StatusCode::UNAUTHORIZED,
                            "missing header",
                        ))
                    }
                }
            },
        ));
    }
    let listener =
        tokio::net::TcpListener::bind(address).await.map_err(|err| format!("cannot listen on {address}: {err}"))?;
    println!("listening on http://{}/mcp", listener.local_addr().map_err(|e| e.to_string())?);
    axum::serve(listener, router).await.map_err(|err| err.to_string())
}
