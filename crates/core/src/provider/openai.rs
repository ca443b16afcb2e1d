//! OpenAI-compatible Chat Completions, streaming (protocols.md §2): OpenAI, OpenRouter, Ollama, llama.cpp,
//! vLLM, LM Studio.
//!
//! Chunks are translated into the Anthropic event vocabulary. The servers differ in small ways, so the decoder
//! is liberal: it merges tool-call fragments by index whatever order and grouping they come in, tolerates
//! repeated names and missing ids, takes usage from wherever it appears, and accepts a stream that ends without
//! `[DONE]` once a finish reason was seen.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::time::Duration;

use futures::future::BoxFuture;
use reqwest::header::{HeaderMap, HeaderValue};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::anthropic::excerpt;
use super::sse::{self, EventDecoder, Flow, SseEvent};
use super::transport::{self, Client};
use super::{BlockStart, Endpoint, EventStream, ModelRequest, Provider, ProviderError, StreamEvent};
use crate::conversation::{ContentBlock, Message, Role, StopReason, Usage};

/// Prefix of a failed tool's result: Chat Completions has no error flag on tool messages.
pub const TOOL_ERROR_PREFIX: &str = "Error: ";

pub struct OpenAiProvider {
    endpoint: Endpoint,
    url: String,
    client: Client,
}

impl OpenAiProvider {
    pub fn new(endpoint: Endpoint) -> Self {
        let url = transport::join_url(&endpoint.base_url, "", "/chat/completions");
        OpenAiProvider { endpoint, url, client: transport::build_client(transport::IDLE_TIMEOUT) }
    }

    /// Replaces the time a response may stay silent before it counts as disconnected.
    pub fn with_idle_timeout(mut self, idle: Duration) -> Self {
        self.client = transport::build_client(idle);
        self
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    fn headers(&self) -> Result<HeaderMap, ProviderError> {
        let mut headers = HeaderMap::new();
        headers.insert(reqwest::header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
        if let Some(key) = &self.endpoint.api_key {
            let mut value = HeaderValue::from_str(&format!("Bearer {}", key.expose().trim())).map_err(|_| {
                ProviderError::Connect {
                    url: self.url.clone(),
                    message: format!(
                        "the API key contains characters that can't be sent in a header (check {})",
                        self.endpoint.api_key_env.as_deref().unwrap_or("OPENAI_API_KEY")
                    ),
                }
            })?;
            value.set_sensitive(true);
            headers.insert(reqwest::header::AUTHORIZATION, value);
        }
        Ok(headers)
    }
}

impl Provider for OpenAiProvider {
    fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    fn wire(&self, request: &ModelRequest) -> Option<super::WireRequest> {
        let body = request_body(request, uses_max_completion_tokens(&self.endpoint.base_url)).ok()?;
        let headers = self.headers().ok()?;
        Some(super::WireRequest::post(&self.url, &headers, body))
    }

    fn replay<'a>(
        &'a self,
        body: Vec<u8>,
        _recorded_headers: &'a [(String, String)],
    ) -> BoxFuture<'a, Result<EventStream, ProviderError>> {
        Box::pin(async move {
            let headers = self.headers()?;
            sse::open(&self.client, &self.endpoint, &self.url, headers, body, OpenAiDecoder::new()).await
        })
    }

    fn wire_for_replay(&self, body: Vec<u8>, _recorded_headers: &[(String, String)]) -> Option<super::WireRequest> {
        let headers = self.headers().ok()?;
        Some(super::WireRequest::post(&self.url, &headers, body))
    }

    fn stream<'a>(&'a self, request: &'a ModelRequest) -> BoxFuture<'a, Result<EventStream, ProviderError>> {
        Box::pin(async move {
            let body = request_body(request, uses_max_completion_tokens(&self.endpoint.base_url))?;
            let headers = self.headers()?;
            tracing::debug!(url = %self.url, model = %request.model, bytes = body.len(), "chat completions request");
            sse::open(&self.client, &self.endpoint, &self.url, headers, body, OpenAiDecoder::new()).await
        })
    }
}

/// OpenAI's own API rejects `max_tokens` for its newer models and accepts `max_completion_tokens` for all;
/// other servers only know `max_tokens`.
fn uses_max_completion_tokens(base_url: &str) -> bool {
    base_url.contains("api.openai.com")
}

// ---- request ----

#[derive(Serialize)]
struct Body<'a> {
    model: &'a str,
    messages: Vec<WireMessage<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<WireTool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_completion_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning_effort: Option<&'static str>,
    stream: bool,
    stream_options: StreamOptions,
}

#[derive(Serialize)]
struct StreamOptions {
    include_usage: bool,
}

#[derive(Serialize)]
#[serde(tag = "role", rename_all = "lowercase")]
enum WireMessage<'a> {
    System {
        content: String,
    },
    User {
        content: Cow<'a, str>,
    },
    /// A user message with images: content parts (`text`, `image_url`).
    #[serde(rename = "user")]
    UserParts {
        content: Vec<Value>,
    },
    Assistant {
        content: Option<Cow<'a, str>>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<WireToolCall<'a>>,
    },
    Tool {
        tool_call_id: &'a str,
        content: Cow<'a, str>,
    },
}

#[derive(Serialize)]
struct WireToolCall<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: WireFunctionCall<'a>,
}

#[derive(Serialize)]
struct WireFunctionCall<'a> {
    name: &'a str,
    arguments: String,
}

#[derive(Serialize)]
struct WireTool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: WireFunction<'a>,
}

#[derive(Serialize)]
struct WireFunction<'a> {
    name: &'a str,
    description: &'a str,
    parameters: &'a Value,
}

/// The text blocks of a message, joined; borrowed when there is just one.
fn joined_text(blocks: &[ContentBlock]) -> Option<Cow<'_, str>> {
    let mut texts = blocks.iter().filter_map(|b| match b {
        ContentBlock::Text { text } => Some(text.as_str()),
        _ => None,
    });
    let first = texts.next()?;
    match texts.next() {
        None => Some(Cow::Borrowed(first)),
        Some(second) => {
            let mut out = format!("{first}\n\n{second}");
            for text in texts {
                out.push_str("\n\n");
                out.push_str(text);
            }
            Some(Cow::Owned(out))
        }
    }
}

fn push_message<'a>(message: &'a Message, out: &mut Vec<WireMessage<'a>>) {
    match message.role {
        Role::User => {
            // Tool results first: they must directly follow the assistant message that called the tools.
            let mut had_results = false;
            for block in &message.content {
                if let ContentBlock::ToolResult { tool_use_id, content, is_error } = block {
                    had_results = true;
                    let content = if *is_error {
                        Cow::Owned(format!("{TOOL_ERROR_PREFIX}{content}"))
                    } else {
                        Cow::Borrowed(content.as_str())
                    };
                    out.push(WireMessage::Tool { tool_call_id: tool_use_id, content });
                }
            }
            let images: Vec<Value> = message
                .content
                .iter()
                .filter_map(|block| match block {
                    ContentBlock::Image { source } => image_part(source),
                    _ => None,
                })
                .collect();
            if !images.is_empty() {
                let mut parts: Vec<Value> = joined_text(&message.content)
                    .map(|text| serde_json::json!({"type": "text", "text": text}))
                    .into_iter()
                    .collect();
                parts.extend(images);
                out.push(WireMessage::UserParts { content: parts });
                return;
            }
            match joined_text(&message.content) {
                Some(content) => out.push(WireMessage::User { content }),
                None if !had_results => out.push(WireMessage::User { content: Cow::Borrowed("") }),
                None => {}
            }
        }
        Role::Assistant => {
            let tool_calls: Vec<WireToolCall<'a>> = message
                .tool_uses()
                .map(|(id, name, input)| WireToolCall {
                    id,
                    kind: "function",
                    function: WireFunctionCall { name, arguments: input.to_string() },
                })
                .collect();
            // Thinking is dropped: these APIs have no way to take it back. An assistant message needs content
            // or tool calls, so a thinking-only one becomes empty text.
            let content = match joined_text(&message.content) {
                Some(text) => Some(text),
                None if tool_calls.is_empty() => Some(Cow::Borrowed("")),
                None => None,
            };
            out.push(WireMessage::Assistant { content, tool_calls });
        }
    }
}

/// An Anthropic image source as Chat Completions' `image_url` part: a `data:` URL for base64 data, the URL as is.
fn image_part(source: &Value) -> Option<Value> {
    let url = match source.get("type").and_then(Value::as_str) {
        Some("base64") => format!(
            "data:{};base64,{}",
            source.get("media_type").and_then(Value::as_str).unwrap_or("image/png"),
            source.get("data").and_then(Value::as_str)?
        ),
        Some("url") => source.get("url").and_then(Value::as_str)?.to_owned(),
        _ => return None,
    };
    Some(serde_json::json!({"type": "image_url", "image_url": {"url": url}}))
}

/// The JSON body for `request`. Deterministic, so that local servers' prompt caches hit.
pub fn request_body(request: &ModelRequest, max_completion_tokens: bool) -> Result<Vec<u8>, ProviderError> {
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    if !request.system.is_empty() {
        let system: Vec<&str> = request.system.iter().map(|b| b.text.as_str()).collect();
        messages.push(WireMessage::System { content: system.join("\n\n") });
    }
    for message in &request.messages {
        push_message(message, &mut messages);
    }
    let tools = request
        .tools
        .iter()
        .map(|tool| WireTool {
            kind: "function",
            function: WireFunction { name: &tool.name, description: &tool.description, parameters: &tool.input_schema },
        })
        .collect();
    let body = Body {
        model: &request.model,
        messages,
        tools,
        max_tokens: (!max_completion_tokens).then_some(request.max_tokens),
        max_completion_tokens: max_completion_tokens.then_some(request.max_tokens),
        reasoning_effort: request.reasoning.reasoning_effort,
        stream: true,
        stream_options: StreamOptions { include_usage: true },
    };
    serde_json::to_vec(&body).map_err(|err| ProviderError::Request { message: format!("it does not serialize: {err}") })
}

// ---- response ----

#[derive(Deserialize)]
struct Chunk {
    id: Option<String>,
    model: Option<String>,
    choices: Option<Vec<Choice>>,
    usage: Option<WireUsage>,
    error: Option<Value>,
}

#[derive(Deserialize)]
struct Choice {
    #[serde(default)]
    index: u64,
    delta: Option<Delta>,
    finish_reason: Option<String>,
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
struct Delta {
    content: Option<Value>,
    reasoning_content: Option<String>,
    reasoning: Option<String>,
    tool_calls: Option<Vec<Fragment>>,
}

#[derive(Deserialize)]
struct Fragment {
    index: Option<u64>,
    id: Option<String>,
    function: Option<FunctionFragment>,
}

#[derive(Deserialize)]
struct FunctionFragment {
    name: Option<String>,
    arguments: Option<Value>,
}

#[derive(Deserialize)]
struct WireUsage {
    prompt_tokens: Option<u64>,
    completion_tokens: Option<u64>,
    prompt_tokens_details: Option<PromptDetails>,
    /// DeepSeek's name for cached prompt tokens.
    prompt_cache_hit_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct PromptDetails {
    cached_tokens: Option<u64>,
}

impl WireUsage {
    fn to_usage(&self) -> Usage {
        let prompt = self.prompt_tokens.unwrap_or(0);
        let cached = self
            .prompt_tokens_details
            .as_ref()
            .and_then(|d| d.cached_tokens)
            .or(self.prompt_cache_hit_tokens)
            .unwrap_or(0)
            .min(prompt);
        Usage {
            input_tokens: prompt - cached,
            output_tokens: self.completion_tokens.unwrap_or(0),
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: cached,
        }
    }
}

/// A tool call being merged from its fragments.
#[derive(Debug)]
struct ToolSlot {
    /// The server's tool-call index.
    key: u64,
    /// Our block index.
    block: usize,
    id: String,
    name: String,
    /// Arguments received before the block started.
    pending: String,
    /// Whether `BlockStart` was sent. It waits for the first arguments so that a name sent in pieces is whole.
    started: bool,
}

/// Decodes Chat Completions chunks into [`StreamEvent`]s. Public for benchmarks and recorded-stream tests.
#[derive(Debug, Default)]
pub struct OpenAiDecoder {
    started: bool,
    next_block: usize,
    text: Option<usize>,
    reasoning: Option<usize>,
    tools: Vec<ToolSlot>,
    saw_tools: bool,
    finish_reason: Option<String>,
    usage: Usage,
}

type Out = VecDeque<Result<StreamEvent, ProviderError>>;

impl OpenAiDecoder {
    pub fn new() -> Self {
        Self::default()
    }

    fn start_message(&mut self, id: Option<String>, model: Option<String>, out: &mut Out) {
        if !self.started {
            self.started = true;
            out.push_back(Ok(StreamEvent::MessageStart {
                id: id.unwrap_or_default(),
                model: model.unwrap_or_default(),
                usage: Usage::default(),
            }));
        }
    }

    fn open_block(next_block: &mut usize, slot: &mut Option<usize>, start: BlockStart, out: &mut Out) -> usize {
        *slot.get_or_insert_with(|| {
            let index = *next_block;
            *next_block += 1;
            out.push_back(Ok(StreamEvent::BlockStart { index, block: start }));
            index
        })
    }

    fn text(&mut self, text: String, out: &mut Out) {
        if !text.is_empty() {
            let index = Self::open_block(&mut self.next_block, &mut self.text, BlockStart::Text, out);
            out.push_back(Ok(StreamEvent::TextDelta { index, text }));
        }
    }

    fn reasoning(&mut self, thinking: String, out: &mut Out) {
        if !thinking.is_empty() {
            let index = Self::open_block(&mut self.next_block, &mut self.reasoning, BlockStart::Thinking, out);
            out.push_back(Ok(StreamEvent::ThinkingDelta { index, thinking }));
        }
    }

    fn fragment(&mut self, fragment: Fragment, out: &mut Out) {
        self.saw_tools = true;
        let key = match fragment.index {
            Some(key) => key,
            // No index: a new id means a new call; otherwise it continues the latest one.
            None => match (self.tools.last(), &fragment.id) {
                (Some(last), Some(id)) if !last.id.is_empty() && last.id != *id => last.key + 1,
                (Some(last), _) => last.key,
                (None, _) => 0,
            },
        };
        let position = match self.tools.iter().position(|slot| slot.key == key) {
            Some(position) => position,
            None => {
                self.tools.push(ToolSlot {
                    key,
                    block: self.next_block,
                    id: String::new(),
                    name: String::new(),
                    pending: String::new(),
                    started: false,
                });
                self.next_block += 1;
                self.tools.len() - 1
            }
        };
        let slot = &mut self.tools[position];
        let (name, arguments) = match fragment.function {
            Some(function) => (function.name, function.arguments),
            None => (None, None),
        };
        if !slot.started {
            if let Some(id) = fragment.id.filter(|id| !id.is_empty() && slot.id.is_empty()) {
                slot.id = id;
            }
            // llama-cpp-python repeats the whole name in every fragment; others may send it in pieces.
            if let Some(name) = name.filter(|n| !n.is_empty() && *n != slot.name) {
                slot.name.push_str(&name);
            }
        }
        match arguments {
            Some(Value::String(piece)) => slot.pending.push_str(&piece),
            Some(Value::Null) | None => {}
            Some(other) => slot.pending.push_str(&other.to_string()),
        }
        if !slot.pending.is_empty() {
            start_tool(slot, out);
            let partial_json = std::mem::take(&mut slot.pending);
            out.push_back(Ok(StreamEvent::ToolInputDelta { index: slot.block, partial_json }));
        }
    }

    /// Stops every open block, in index order. Content after this opens new blocks.
    fn close_blocks(&mut self, out: &mut Out) {
        let mut open: Vec<usize> = self.text.take().into_iter().chain(self.reasoning.take()).collect();
        for mut slot in self.tools.drain(..) {
            let had_input = !slot.pending.is_empty();
            start_tool(&mut slot, out);
            if had_input {
                out.push_back(Ok(StreamEvent::ToolInputDelta { index: slot.block, partial_json: slot.pending }));
            }
            open.push(slot.block);
        }
        open.sort_unstable();
        for index in open {
            out.push_back(Ok(StreamEvent::BlockStop { index }));
        }
    }

    fn finish(&mut self, out: &mut Out) {
        self.start_message(None, None, out);
        self.close_blocks(out);
        let stop_reason = match self.finish_reason.as_deref() {
            Some("tool_calls" | "function_call") => StopReason::ToolUse,
            // Some local servers say "stop" (or nothing) after tool calls; the calls are what matter.
            Some("stop") | None if self.saw_tools => StopReason::ToolUse,
            Some("stop") | None => StopReason::EndTurn,
            Some("length") => StopReason::MaxTokens,
            Some("content_filter") => StopReason::Refusal,
            Some(other) => StopReason::Other(other.to_owned()),
        };
        out.push_back(Ok(StreamEvent::MessageDelta { stop_reason: Some(stop_reason), usage: self.usage }));
        out.push_back(Ok(StreamEvent::MessageStop));
    }

    fn chunk(&mut self, chunk: Chunk, out: &mut Out) {
        self.start_message(chunk.id, chunk.model, out);
        if let Some(usage) = &chunk.usage {
            self.usage = usage.to_usage();
        }
        for choice in chunk.choices.unwrap_or_default() {
            if choice.index != 0 {
                continue;
            }
            if let Some(usage) = &choice.usage {
                self.usage = usage.to_usage();
            }
            if let Some(delta) = choice.delta {
                if let Some(thinking) = delta.reasoning_content.or(delta.reasoning) {
                    self.reasoning(thinking, out);
                }
                match delta.content {
                    Some(Value::String(text)) => self.text(text, out),
                    Some(Value::Array(parts)) => {
                        for part in parts {
                            if let Some(Value::String(text)) = part.get("text") {
                                self.text(text.clone(), out);
                            }
                        }
                    }
                    _ => {}
                }
                for fragment in delta.tool_calls.unwrap_or_default() {
                    self.fragment(fragment, out);
                }
            }
            if let Some(reason) = choice.finish_reason.filter(|r| !r.is_empty()) {
                self.finish_reason = Some(reason);
                self.close_blocks(out);
            }
        }
    }
}

fn start_tool(slot: &mut ToolSlot, out: &mut Out) {
    if slot.started {
        return;
    }
    slot.started = true;
    if slot.id.is_empty() {
        slot.id = format!("call_{:016x}", fastrand::u64(..));
    }
    let block = BlockStart::ToolUse { id: slot.id.clone(), name: slot.name.clone() };
    out.push_back(Ok(StreamEvent::BlockStart { index: slot.block, block }));
}

fn stream_error(error: &Value) -> ProviderError {
    let field = |name: &str| match error.get(name) {
        Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    };
    let message = match error {
        Value::String(s) => s.clone(),
        _ => field("message").unwrap_or_else(|| excerpt(&error.to_string())),
    };
    let error_type = field("type").or_else(|| field("code")).unwrap_or_else(|| "error".to_owned());
    ProviderError::StreamError { error_type, message }
}

impl EventDecoder for OpenAiDecoder {
    fn event(&mut self, event: SseEvent<'_>, out: &mut Out) -> Flow {
        let data = event.data.trim();
        if data.is_empty() {
            return Flow::Continue;
        }
        if data == "[DONE]" {
            self.finish(out);
            return Flow::Done;
        }
        if event.event == "error" {
            let error = serde_json::from_str::<Value>(data).unwrap_or_else(|_| Value::String(excerpt(data)));
            out.push_back(Err(stream_error(error.get("error").unwrap_or(&error))));
            return Flow::Done;
        }
        match serde_json::from_str::<Chunk>(data) {
            Ok(Chunk { error: Some(error), .. }) if !error.is_null() => {
                out.push_back(Err(stream_error(&error)));
                Flow::Done
            }
            Ok(chunk) => {
                self.chunk(chunk, out);
                Flow::Continue
            }
            Err(err) => {
                let message = format!("could not parse a chat completion chunk ({err}): {}", excerpt(data));
                out.push_back(Err(ProviderError::Malformed { message }));
                Flow::Done
            }
        }
    }

    fn end(&mut self, out: &mut Out) {
        if self.finish_reason.is_some() {
            self.finish(out);
        } else {
            out.push_back(Err(ProviderError::Disconnected {
                message: "the response ended before a finish reason or [DONE]".to_owned(),
            }));
        }
    }
}

#[cfg(test)]
#[path = "openai_tests.rs"]
mod tests;
