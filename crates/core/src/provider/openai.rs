//! OpenAI-compatible Chat Completions, streaming (protocols.md §2): OpenAI, OpenRouter, Ollama, llama.cpp,
//! vLLM, LM Studio.
//!
//! This file builds the request; the stream's chunks are translated into the Anthropic event vocabulary by
//! [`OpenAiDecoder`] (`openai_stream.rs`), which is liberal because the servers differ in small ways.

use std::borrow::Cow;
use std::time::Duration;

use futures::future::BoxFuture;
use reqwest::header::{HeaderMap, HeaderValue};
use serde::Serialize;
use serde_json::Value;

pub use super::openai_stream::OpenAiDecoder;
use super::sse;
use super::transport::{self, Client};
use super::{Endpoint, EventStream, ModelRequest, Provider, ProviderError};
use crate::conversation::{ContentBlock, Message, Role};

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

#[cfg(test)]
#[path = "openai_tests.rs"]
mod tests;
