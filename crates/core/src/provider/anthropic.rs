//! The Anthropic Messages API, streaming (protocols.md §1).
//!
//! The request body is serialized from borrowed structs in a fixed field order, so the same conversation
//! always gives the same bytes: prompt caching only hits when everything before a breakpoint is byte-identical
//! to an earlier request.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::time::Duration;

use futures::future::BoxFuture;
use reqwest::header::{HeaderMap, HeaderValue};
use serde::de::DeserializeOwned;
use serde::ser::SerializeSeq;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;

use super::sse::{self, EventDecoder, Flow, SseEvent};
use super::transport::{self, Client};
use super::{BlockStart, Endpoint, EventStream, ModelRequest, Provider, ProviderError, StreamEvent, ToolSpec};
use crate::conversation::{ContentBlock, Message, Role, StopReason, Usage};

pub const API_VERSION: &str = "2023-06-01";
/// The API accepts at most this many `cache_control` breakpoints per request.
const MAX_BREAKPOINTS: usize = 4;
/// How much of an event's data is quoted when it can't be parsed.
const EXCERPT_CHARS: usize = 200;

pub struct AnthropicProvider {
    endpoint: Endpoint,
    url: String,
    client: Client,
}

impl AnthropicProvider {
    pub fn new(endpoint: Endpoint) -> Self {
        let url = transport::join_url(&endpoint.base_url, "/v1", "/messages");
        AnthropicProvider { endpoint, url, client: transport::build_client(transport::IDLE_TIMEOUT) }
    }

    /// Replaces the time a response may stay silent before it counts as disconnected.
    pub fn with_idle_timeout(mut self, idle: Duration) -> Self {
        self.client = transport::build_client(idle);
        self
    }

    /// The URL requests go to.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The common headers and the recorded request's betas.
    fn replay_headers(&self, recorded: &[(String, String)]) -> Result<HeaderMap, ProviderError> {
        let mut headers = request_headers(&self.endpoint, &self.url)?;
        for (name, value) in recorded.iter().filter(|(name, _)| super::REPLAYED_HEADERS.contains(&name.as_str())) {
            if let (Ok(name), Ok(value)) =
                (reqwest::header::HeaderName::try_from(name.as_str()), HeaderValue::from_str(value))
            {
                headers.insert(name, value);
            }
        }
        Ok(headers)
    }

    /// Everything a request carries: the common headers and the betas it needs.
    fn full_headers(&self, request: &ModelRequest) -> Result<HeaderMap, ProviderError> {
        let mut headers = request_headers(&self.endpoint, &self.url)?;
        if let Some(betas) = beta_header(request) {
            headers.insert("anthropic-beta", betas);
        }
        Ok(headers)
    }
}

/// The headers every Messages request carries: the API version, the content type and the key (marked
/// sensitive, so it never shows in a debug print).
pub(crate) fn request_headers(endpoint: &Endpoint, url: &str) -> Result<HeaderMap, ProviderError> {
    let mut headers = HeaderMap::new();
    headers.insert("anthropic-version", HeaderValue::from_static(API_VERSION));
    headers.insert(reqwest::header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    if let Some(key) = &endpoint.api_key {
        let mut value = HeaderValue::from_str(key.expose().trim()).map_err(|_| ProviderError::Connect {
            url: url.to_owned(),
            message: format!(
                "the API key contains characters that can't be sent in a header (check {})",
                endpoint.api_key_env.as_deref().unwrap_or("ANTHROPIC_API_KEY")
            ),
        })?;
        value.set_sensitive(true);
        headers.insert("x-api-key", value);
    }
    Ok(headers)
}

impl Provider for AnthropicProvider {
    fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    fn wire(&self, request: &ModelRequest) -> Option<super::WireRequest> {
        let body = request_body(request).ok()?;
        let headers = self.full_headers(request).ok()?;
        Some(super::WireRequest::post(&self.url, &headers, body))
    }

    fn replay<'a>(
        &'a self,
        body: Vec<u8>,
        recorded_headers: &'a [(String, String)],
    ) -> BoxFuture<'a, Result<EventStream, ProviderError>> {
        Box::pin(async move {
            let headers = self.replay_headers(recorded_headers)?;
            sse::open(&self.client, &self.endpoint, &self.url, headers, body, AnthropicDecoder::new()).await
        })
    }

    fn wire_for_replay(&self, body: Vec<u8>, recorded_headers: &[(String, String)]) -> Option<super::WireRequest> {
        let headers = self.replay_headers(recorded_headers).ok()?;
        Some(super::WireRequest::post(&self.url, &headers, body))
    }

    fn stream<'a>(&'a self, request: &'a ModelRequest) -> BoxFuture<'a, Result<EventStream, ProviderError>> {
        Box::pin(async move {
            let body = request_body(request)?;
            let headers = self.full_headers(request)?;
            tracing::debug!(url = %self.url, model = %request.model, bytes = body.len(), "anthropic request");
            sse::open(&self.client, &self.endpoint, &self.url, headers, body, AnthropicDecoder::new()).await
        })
    }
}

// ---- request ----

/// `anthropic-beta`: what the request's features need, then what the user asked for, each once.
fn beta_header(request: &ModelRequest) -> Option<HeaderValue> {
    let mut betas: Vec<&str> = request.reasoning.betas.to_vec();
    for beta in request.betas.iter().flat_map(|list| list.split(',')).map(str::trim).filter(|beta| !beta.is_empty()) {
        if !betas.contains(&beta) {
            betas.push(beta);
        }
    }
    if betas.is_empty() {
        return None;
    }
    HeaderValue::from_str(&betas.join(",")).ok()
}

#[derive(Serialize)]
struct Body<'a> {
    model: &'a str,
    max_tokens: u32,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    system: Vec<SystemPart<'a>>,
    messages: Vec<WireMessage<'a>>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    tools: &'a [ToolSpec],
    #[serde(skip_serializing_if = "Option::is_none")]
    thinking: Option<&'a crate::reasoning::ThinkingParam>,
    #[serde(skip_serializing_if = "Option::is_none")]
    output_config: Option<OutputConfig>,
    stream: bool,
}

#[derive(Serialize)]
struct OutputConfig {
    effort: crate::reasoning::Effort,
}

#[derive(Serialize)]
struct SystemPart<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    text: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_control: Option<CacheControl>,
}

#[derive(Clone, Copy, Serialize)]
struct CacheControl {
    #[serde(rename = "type")]
    kind: &'static str,
}

const EPHEMERAL: CacheControl = CacheControl { kind: "ephemeral" };

#[derive(Serialize)]
struct WireMessage<'a> {
    role: Role,
    content: Blocks<'a>,
}

/// A message's blocks, with a cache breakpoint on the one at `cached` if any.
struct Blocks<'a> {
    blocks: &'a [ContentBlock],
    cached: Option<usize>,
}

#[derive(Serialize)]
struct CachedBlock<'a> {
    #[serde(flatten)]
    block: &'a ContentBlock,
    cache_control: CacheControl,
}

impl Serialize for Blocks<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.blocks.len()))?;
        for (i, block) in self.blocks.iter().enumerate() {
            if self.cached == Some(i) {
                seq.serialize_element(&CachedBlock { block, cache_control: EPHEMERAL })?;
            } else {
                seq.serialize_element(block)?;
            }
        }
        seq.end()
    }
}

/// The block of the last message that gets the conversation's cache breakpoint: its last block that may carry
/// one (thinking blocks can't, and the API rejects `cache_control` on empty text).
fn message_breakpoint(messages: &[Message]) -> Option<(usize, usize)> {
    let last = messages.len().checked_sub(1)?;
    let block = messages[last].content.iter().rposition(|block| match block {
        ContentBlock::Text { text } => !text.is_empty(),
        ContentBlock::Thinking { .. } | ContentBlock::RedactedThinking { .. } => false,
        ContentBlock::ToolUse { .. } | ContentBlock::ToolResult { .. } | ContentBlock::Image { .. } => true,
    })?;
    Some((last, block))
}

/// The JSON body for `request`. Deterministic: it depends on nothing but the request.
pub fn request_body(request: &ModelRequest) -> Result<Vec<u8>, ProviderError> {
    let message_bp = message_breakpoint(&request.messages);
    // When system blocks ask for more breakpoints than are left, the last ones win: a later breakpoint caches
    // everything before it anyway.
    let system_budget = MAX_BREAKPOINTS - usize::from(message_bp.is_some());
    let mut skip_flags = request.system.iter().filter(|b| b.cache).count().saturating_sub(system_budget);
    let system = request
        .system
        .iter()
        .map(|block| {
            let cache = block.cache && {
                let keep = skip_flags == 0;
                skip_flags = skip_flags.saturating_sub(1);
                keep
            };
            SystemPart { kind: "text", text: &block.text, cache_control: cache.then_some(EPHEMERAL) }
        })
        .collect();
    let messages = request
        .messages
        .iter()
        .enumerate()
        .map(|(i, message)| WireMessage {
            role: message.role,
            content: Blocks { blocks: &message.content, cached: message_bp.and_then(|(m, b)| (m == i).then_some(b)) },
        })
        .collect();
    let body = Body {
        model: &request.model,
        max_tokens: request.max_tokens,
        system,
        messages,
        tools: &request.tools,
        thinking: request.reasoning.thinking.as_ref(),
        output_config: request.reasoning.effort.map(|effort| OutputConfig { effort }),
        stream: true,
    };
    serde_json::to_vec(&body).map_err(|err| ProviderError::Request { message: format!("it does not serialize: {err}") })
}

// ---- response ----

/// Decodes the Messages API's SSE events. Public for benchmarks and recorded-stream tests.
#[derive(Debug, Default)]
pub struct AnthropicDecoder {
    /// Usage so far. `message_delta` may report only `output_tokens`; the input and cache counts from
    /// `message_start` are carried forward so every `MessageDelta` has the full cumulative usage.
    usage: Usage,
    /// Blocks of kinds we don't know (server tools, future types): their deltas and stop are skipped.
    ignored: Vec<usize>,
}

impl AnthropicDecoder {
    pub fn new() -> Self {
        Self::default()
    }
}

#[derive(Deserialize)]
struct TypeOnly<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
}

#[derive(Deserialize, Default)]
struct WireUsage {
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    cache_creation_input_tokens: Option<u64>,
    cache_read_input_tokens: Option<u64>,
}

impl WireUsage {
    /// Overwrites the counts this report has; the others keep their earlier values.
    fn apply(&self, usage: &mut Usage) {
        let fields = [
            (self.input_tokens, &mut usage.input_tokens),
            (self.output_tokens, &mut usage.output_tokens),
            (self.cache_creation_input_tokens, &mut usage.cache_creation_input_tokens),
            (self.cache_read_input_tokens, &mut usage.cache_read_input_tokens),
        ];
        for (new, old) in fields {
            if let Some(new) = new {
                *old = new;
            }
        }
    }
}

#[derive(Deserialize)]
struct MessageStartData {
    message: MessageStartInner,
}

#[derive(Deserialize)]
struct MessageStartInner {
    #[serde(default)]
    id: String,
    #[serde(default)]
    model: String,
    usage: Option<WireUsage>,
}

/// An answer sent whole, not streamed.
#[derive(Deserialize)]
struct WholeMessage {
    #[serde(default)]
    id: String,
    #[serde(default)]
    model: String,
    #[serde(default)]
    content: Vec<WireBlock>,
    stop_reason: Option<String>,
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
struct BlockStartData {
    index: usize,
    content_block: WireBlock,
}

#[derive(Deserialize)]
struct WireBlock {
    #[serde(rename = "type")]
    kind: String,
    id: Option<String>,
    name: Option<String>,
    data: Option<String>,
    text: Option<String>,
    thinking: Option<String>,
    signature: Option<String>,
    input: Option<Value>,
}

#[derive(Deserialize)]
struct DeltaData {
    index: usize,
    delta: WireDelta,
}

#[derive(Deserialize)]
struct WireDelta {
    #[serde(rename = "type")]
    kind: String,
    text: Option<String>,
    thinking: Option<String>,
    signature: Option<String>,
    partial_json: Option<String>,
}

#[derive(Deserialize)]
struct IndexOnly {
    index: usize,
}

#[derive(Deserialize)]
struct MessageDeltaData {
    delta: Option<MessageDeltaInner>,
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
struct MessageDeltaInner {
    stop_reason: Option<String>,
}

#[derive(Deserialize)]
struct ErrorData {
    error: WireError,
}

#[derive(Deserialize)]
struct WireError {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    message: String,
}

type Out = VecDeque<Result<StreamEvent, ProviderError>>;

impl EventDecoder for AnthropicDecoder {
    fn event(&mut self, event: SseEvent<'_>, out: &mut Out) -> Flow {
        let peeked;
        let kind = if event.event.is_empty() || event.event == "message" {
            match serde_json::from_str::<TypeOnly<'_>>(event.data) {
                Ok(t) => {
                    peeked = t.kind;
                    peeked.as_ref()
                }
                Err(err) => return fail(out, malformed("an event", event.data, &err)),
            }
        } else {
            event.event
        };
        match self.decode(kind, event.data, out) {
            Ok(flow) => flow,
            Err(err) => fail(out, err),
        }
    }

    fn end(&mut self, out: &mut Out) {
        out.push_back(Err(ProviderError::Disconnected {
            message: "the response ended before message_stop".to_owned(),
        }));
    }

    /// A whole message becomes the events that stream it; an error document is the error event it would be.
    fn document(&mut self, body: &str, out: &mut Out) {
        let kind = match serde_json::from_str::<TypeOnly<'_>>(body) {
            Ok(TypeOnly { kind }) => kind,
            Err(err) => {
                fail(out, malformed("the answer document", body, &err));
                return;
            }
        };
        let result = match kind.as_ref() {
            "message" => parse::<WholeMessage>("the answer document", body).map(|message| self.whole(message, out)),
            "error" => self.decode("error", body, out).map(drop),
            other => Err(ProviderError::Malformed {
                message: format!("the server sent a `{other}` document instead of a message: {}", excerpt(body)),
            }),
        };
        if let Err(err) = result {
            fail(out, err);
        }
    }
}

fn fail(out: &mut Out, err: ProviderError) -> Flow {
    out.push_back(Err(err));
    Flow::Done
}

fn parse<T: DeserializeOwned>(kind: &str, data: &str) -> Result<T, ProviderError> {
    serde_json::from_str(data).map_err(|err| malformed(kind, data, &err))
}

fn malformed(kind: &str, data: &str, err: &serde_json::Error) -> ProviderError {
    ProviderError::Malformed { message: format!("could not parse {kind} ({err}): {}", excerpt(data)) }
}

pub(crate) fn excerpt(data: &str) -> String {
    match data.char_indices().nth(EXCERPT_CHARS) {
        Some((at, _)) => format!("{}…", &data[..at]),
        None => data.to_owned(),
    }
}

impl AnthropicDecoder {
    /// The events a streamed answer with this content would have carried.
    fn whole(&mut self, message: WholeMessage, out: &mut Out) {
        self.usage = Usage::default();
        if let Some(usage) = &message.usage {
            usage.apply(&mut self.usage);
        }
        out.push_back(Ok(StreamEvent::MessageStart { id: message.id, model: message.model, usage: self.usage }));
        for (index, block) in message.content.into_iter().enumerate() {
            self.block_start(index, block, out);
            if !self.ignored.contains(&index) {
                out.push_back(Ok(StreamEvent::BlockStop { index }));
            }
        }
        let stop_reason = message.stop_reason.map(|reason| StopReason::from_anthropic(&reason));
        out.push_back(Ok(StreamEvent::MessageDelta { stop_reason, usage: self.usage }));
        out.push_back(Ok(StreamEvent::MessageStop));
    }

    fn decode(&mut self, kind: &str, data: &str, out: &mut Out) -> Result<Flow, ProviderError> {
        match kind {
            "content_block_delta" => {
                let DeltaData { index, delta } = parse(kind, data)?;
                if self.ignored.contains(&index) {
                    return Ok(Flow::Continue);
                }
                let WireDelta { kind: delta_kind, text, thinking, signature, partial_json } = delta;
                let event = match (delta_kind.as_str(), text, thinking, signature, partial_json) {
                    ("text_delta", Some(text), ..) => StreamEvent::TextDelta { index, text },
                    ("thinking_delta", _, Some(thinking), ..) => StreamEvent::ThinkingDelta { index, thinking },
                    ("signature_delta", _, _, Some(signature), _) => StreamEvent::SignatureDelta { index, signature },
                    ("input_json_delta", .., Some(partial_json)) => StreamEvent::ToolInputDelta { index, partial_json },
                    ("text_delta" | "thinking_delta" | "signature_delta" | "input_json_delta", ..) => {
                        return Err(ProviderError::Malformed {
                            message: format!("content_block_delta without its payload: {}", excerpt(data)),
                        });
                    }
                    _ => return Ok(Flow::Continue), // citations and future delta kinds
                };
                out.push_back(Ok(event));
            }
            "content_block_start" => {
                let BlockStartData { index, content_block: block } = parse(kind, data)?;
                self.block_start(index, block, out);
            }
            "content_block_stop" => {
                let IndexOnly { index } = parse(kind, data)?;
                if !self.ignored.contains(&index) {
                    out.push_back(Ok(StreamEvent::BlockStop { index }));
                }
            }
            "message_start" => {
                let MessageStartData { message } = parse(kind, data)?;
                self.usage = Usage::default();
                if let Some(usage) = &message.usage {
                    usage.apply(&mut self.usage);
                }
                out.push_back(Ok(StreamEvent::MessageStart {
                    id: message.id,
                    model: message.model,
                    usage: self.usage,
                }));
            }
            "message_delta" => {
                let MessageDeltaData { delta, usage } = parse(kind, data)?;
                if let Some(usage) = &usage {
                    usage.apply(&mut self.usage);
                }
                let stop_reason = delta.and_then(|d| d.stop_reason).map(|s| StopReason::from_anthropic(&s));
                out.push_back(Ok(StreamEvent::MessageDelta { stop_reason, usage: self.usage }));
            }
            "message_stop" => {
                out.push_back(Ok(StreamEvent::MessageStop));
                return Ok(Flow::Done);
            }
            "error" => {
                // An error event without an error object says nothing of what went wrong: a malformed stream,
                // retried as one.
                let Ok(ErrorData { error }) = serde_json::from_str::<ErrorData>(data) else {
                    return Err(ProviderError::Malformed {
                        message: format!("an error event without an error object: {}", excerpt(data)),
                    });
                };
                let (error_type, message) = (error.kind, error.message);
                let error_type = if error_type.is_empty() { "error".to_owned() } else { error_type };
                return Err(ProviderError::StreamError { error_type, message });
            }
            _ => {} // ping, and event types newer than this code
        }
        Ok(Flow::Continue)
    }

    fn block_start(&mut self, index: usize, block: WireBlock, out: &mut Out) {
        let start = match block.kind.as_str() {
            "text" => BlockStart::Text,
            "thinking" => BlockStart::Thinking,
            "redacted_thinking" => BlockStart::RedactedThinking { data: block.data.unwrap_or_default() },
            "tool_use" => {
                BlockStart::ToolUse { id: block.id.unwrap_or_default(), name: block.name.unwrap_or_default() }
            }
            _ => {
                self.ignored.push(index);
                return;
            }
        };
        out.push_back(Ok(StreamEvent::BlockStart { index, block: start }));
        // The API starts blocks empty, but a block that arrives with content must not lose it.
        let mut initial = |event: StreamEvent| out.push_back(Ok(event));
        match block.kind.as_str() {
            "text" => {
                if let Some(text) = block.text.filter(|t| !t.is_empty()) {
                    initial(StreamEvent::TextDelta { index, text });
                }
            }
            "thinking" => {
                if let Some(thinking) = block.thinking.filter(|t| !t.is_empty()) {
                    initial(StreamEvent::ThinkingDelta { index, thinking });
                }
                if let Some(signature) = block.signature.filter(|t| !t.is_empty()) {
                    initial(StreamEvent::SignatureDelta { index, signature });
                }
            }
            "tool_use" => {
                if let Some(input) = block.input.filter(|v| v.as_object().is_some_and(|o| !o.is_empty())) {
                    initial(StreamEvent::ToolInputDelta { index, partial_json: input.to_string() });
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
#[path = "anthropic_tests.rs"]
mod tests;
