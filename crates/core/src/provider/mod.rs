//! Model providers: one trait, two wire protocols.
//!
//! A provider turns a [`ModelRequest`] into a stream of [`StreamEvent`]s. The events are Anthropic's streaming
//! events in provider-neutral form (the OpenAI provider translates Chat Completions chunks into them), so one
//! [`assemble::MessageAssembler`] builds the final [`AssistantMessage`] for both, and headless mode can print
//! them as Anthropic SSE event objects for `--include-partial-messages`.
//!
//! Providers do not retry: the agent owns retries (see [`retry`]) because a stream that breaks after output
//! has begun must be retried as a whole request, with the partial output discarded in front of the user.

pub mod anthropic;
pub mod assemble;
pub mod error;
pub mod limits;
pub mod local;
pub mod openai;
mod openai_stream;
pub mod retry;
pub mod sse;
pub mod transport;

use std::pin::Pin;

use futures::Stream;
use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use error::ProviderError;

use crate::conversation::Message;

pub use crate::models::ProviderKind;

/// An API key. Its `Debug` never shows the key, so it can't leak into a log or an error by accident.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    pub fn new(key: impl Into<String>) -> Self {
        ApiKey(key.into())
    }

    /// The key itself, for the one place that needs it: the request header.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApiKey(***)")
    }
}

/// Where and how to reach a provider.
#[derive(Clone, Debug)]
pub struct Endpoint {
    /// The provider's name as the user knows it (`anthropic`, `openrouter`, a name from config.toml).
    pub name: String,
    pub kind: ProviderKind,
    /// For Anthropic the base without `/v1` (e.g. `https://api.anthropic.com`); for OpenAI-compatible servers
    /// the base including `/v1` (e.g. `http://127.0.0.1:11434/v1`), as each ecosystem writes them.
    pub base_url: String,
    pub api_key: Option<ApiKey>,
    /// The environment variable the key came from (or should come from), named in authentication errors.
    pub api_key_env: Option<String>,
}

/// A system prompt block; `cache` marks a prompt-caching breakpoint after it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SystemBlock {
    pub text: String,
    pub cache: bool,
}

/// A tool as the model sees it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
}

/// One model round trip's request, provider-neutral.
#[derive(Clone, Debug)]
pub struct ModelRequest {
    pub model: String,
    pub system: Vec<SystemBlock>,
    pub messages: Vec<Message>,
    pub tools: Vec<ToolSpec>,
    pub max_tokens: u32,
    /// Extended thinking and effort, as this model takes them ([`crate::reasoning::Reasoning::for_model`]).
    pub reasoning: crate::reasoning::RequestReasoning,
    /// Anthropic beta headers the user asked for (`--betas`), besides those the request's features need.
    pub betas: Vec<String>,
}

pub use tandem_protocol::stream::{BlockStart, StreamEvent};

/// A stream of events of one response. It ends after `MessageStop`, or with an error.
pub type EventStream = Pin<Box<dyn Stream<Item = Result<StreamEvent, ProviderError>> + Send>>;

/// A model API. Implementations make exactly one HTTP request per call and never retry.
pub trait Provider: Send + Sync {
    /// The endpoint this provider talks to.
    fn endpoint(&self) -> &Endpoint;

    /// Sends the request and returns the event stream once the response headers arrived with a success status.
    /// HTTP errors (status and body) are returned here, mapped to [`ProviderError`].
    fn stream<'a>(&'a self, request: &'a ModelRequest) -> BoxFuture<'a, Result<EventStream, ProviderError>>;

    /// The HTTP request [`Provider::stream`] sends for `request` — the same bytes, since serialization is
    /// deterministic — with the key's header value redacted: what the request inspector shows, exports and
    /// replays. `None` for a provider that speaks no HTTP (the demo).
    fn wire(&self, request: &ModelRequest) -> Option<WireRequest> {
        let _ = request;
        None
    }

    /// Sends a recorded request's `body` again to this provider's endpoint, with its key and the recorded
    /// request's other headers that say what the body needs (`anthropic-beta`); never to a URL from the record.
    fn replay<'a>(
        &'a self,
        body: Vec<u8>,
        recorded_headers: &'a [(String, String)],
    ) -> BoxFuture<'a, Result<EventStream, ProviderError>> {
        let _ = (body, recorded_headers);
        Box::pin(async {
            Err(ProviderError::Connect { url: String::new(), message: "this provider can't replay requests".into() })
        })
    }

    /// What [`Provider::replay`] sends, as the record shows it.
    fn wire_for_replay(&self, body: Vec<u8>, recorded_headers: &[(String, String)]) -> Option<WireRequest> {
        let _ = (body, recorded_headers);
        None
    }
}

/// Headers of a recorded request that a replay sends again: those that say how to read the body.
pub(crate) const REPLAYED_HEADERS: &[&str] = &["anthropic-beta"];

/// A model request as it goes over the wire.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WireRequest {
    pub method: &'static str,
    pub url: String,
    /// Every header sent, in order; the key's value is `[redacted]`.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

/// Header names whose values are secrets.
const SECRET_HEADERS: &[&str] = &["x-api-key", "authorization", "proxy-authorization", "cookie", "api-key"];

impl WireRequest {
    /// A POST of `body` to `url` with `headers` (listed, secrets redacted, with tandem's user agent).
    pub fn post(url: &str, headers: &reqwest::header::HeaderMap, body: Vec<u8>) -> WireRequest {
        WireRequest {
            method: "POST",
            url: url.to_owned(),
            headers: Self::listed_headers(headers, transport::USER_AGENT),
            body,
        }
    }

    /// `headers` as they are listed, secrets redacted, with the client's `user-agent` (which it adds itself).
    pub fn listed_headers(headers: &reqwest::header::HeaderMap, user_agent: &str) -> Vec<(String, String)> {
        let mut listed: Vec<(String, String)> = headers
            .iter()
            .map(|(name, value)| {
                let name = name.as_str().to_owned();
                let value = if SECRET_HEADERS.contains(&name.as_str()) || value.is_sensitive() {
                    "[redacted]".to_owned()
                } else {
                    value.to_str().unwrap_or("[not text]").to_owned()
                };
                (name, value)
            })
            .collect();
        listed.push(("user-agent".to_owned(), user_agent.to_owned()));
        listed
    }
}

/// Builds the provider for an endpoint.
pub fn connect(endpoint: Endpoint) -> Box<dyn Provider> {
    match endpoint.kind {
        ProviderKind::Anthropic => Box::new(anthropic::AnthropicProvider::new(endpoint)),
        ProviderKind::Openai => Box::new(openai::OpenAiProvider::new(endpoint)),
    }
}
