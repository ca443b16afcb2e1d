//! The script a [`FakeServer`](crate::FakeServer) plays back.
//!
//! A scenario is one ordered list of [`Reply`]s. Every POST to a model route consumes the next reply, whatever the
//! route, so one scenario can drive an agent through several turns (model call → tool → model call …) and the test
//! knows exactly what the "model" will say at each step. The same types are (de)serialized from the JSON files the
//! `tandem-fake-llm` binary reads, and built in Rust with the small builder methods below.
//!
//! Serde attributes are strict (`deny_unknown_fields`) on purpose: a typo such as `"chunk": 3` in a hand-written
//! scenario should fail loudly instead of silently streaming a single chunk.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Why a scenario could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    /// The scenario file could not be read.
    #[error("cannot read scenario file {path}: {source}")]
    Io {
        /// The file that was asked for.
        path: PathBuf,
        /// What the OS said.
        #[source]
        source: std::io::Error,
    },
    /// The text is not a valid scenario.
    #[error("invalid scenario JSON: {0}")]
    Json(#[from] serde_json::Error),
}

/// An ordered list of replies, consumed one per model request.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// The replies, in the order requests will receive them.
    #[serde(default)]
    pub replies: Vec<Reply>,
    /// When set, a model request whose `x-api-key` (or `Authorization: Bearer`) is not exactly this value gets a 401
    /// in the endpoint's error shape. Such a rejected request is recorded but does **not** consume a reply, the way
    /// a real server rejects it before any model runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub require_api_key: Option<String>,
    /// What the server says about itself, by path: a GET or POST to a path here (`/props` as llama.cpp,
    /// `/v1/models` as vLLM, `/api/show` as Ollama) answers with this JSON, consumes no reply and is not recorded.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub server_info: BTreeMap<String, Value>,
}

impl Scenario {
    /// A scenario that plays `replies` in order.
    pub fn new(replies: Vec<Reply>) -> Self {
        Scenario { replies, require_api_key: None, server_info: BTreeMap::new() }
    }

    /// Parses the JSON format (`{"replies":[...]}`).
    pub fn from_json(text: &str) -> Result<Self, ScenarioError> {
        Ok(serde_json::from_str(text)?)
    }

    /// Reads and parses a JSON scenario file.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, ScenarioError> {
        let path = path.as_ref();
        let text =
            std::fs::read_to_string(path).map_err(|source| ScenarioError::Io { path: path.to_path_buf(), source })?;
        Self::from_json(&text)
    }

    /// Pretty JSON, loadable again with [`Scenario::from_json`] (handy to write a file for the binary).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|error| format!("{{\"error\": \"{error}\"}}"))
    }

    /// Appends one reply.
    pub fn reply(mut self, reply: Reply) -> Self {
        self.replies.push(reply);
        self
    }

    /// Requires this exact API key on every model request (see [`Scenario::require_api_key`]).
    pub fn with_required_api_key(mut self, key: impl Into<String>) -> Self {
        self.require_api_key = Some(key.into());
        self
    }
}

impl FromStr for Scenario {
    type Err = ScenarioError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::from_json(s)
    }
}

impl From<Vec<Reply>> for Scenario {
    fn from(replies: Vec<Reply>) -> Self {
        Scenario::new(replies)
    }
}

/// One model response: content blocks plus how to deliver them.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Reply {
    /// Content blocks, streamed in order with consecutive indices.
    #[serde(default)]
    pub blocks: Vec<Block>,
    /// Anthropic stop reason (`end_turn`, `tool_use`, `max_tokens`, …). Defaults to `tool_use` when a block is a
    /// tool use, else `end_turn`. OpenAI's `finish_reason` is mapped from it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    /// Token usage to report. Defaults to [`Usage::SMALL`] so clients that sum usage see non-zero numbers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// Pause between consecutive SSE events (and before a non-streaming answer), to script slow streams.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub delay_ms: u64,
    /// Something to go wrong with this reply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<Fault>,
    /// Model name to report instead of the one in the request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Message / completion id instead of the generated `msg_fake_<n>` / `chatcmpl-fake-<n>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Hold this reply until the server has received this many requests in all (a rendezvous that proves
    /// requests run concurrently: served one after the other, the reply fails with a 500 instead).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_for_requests: Option<usize>,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

impl Reply {
    /// A reply with no blocks yet; add them with [`Reply::block`].
    pub fn new() -> Self {
        Reply::default()
    }

    /// A reply that is a single text block, ending the turn.
    pub fn text(text: impl Into<String>) -> Self {
        Reply::new().block(Block::text(text))
    }

    /// A reply that is a single tool call (stop reason `tool_use`).
    pub fn tool_use(name: impl Into<String>, input: Value) -> Self {
        Reply::new().block(Block::tool_use(name, input))
    }

    /// A reply that only fails (e.g. `Reply::fault(Fault::rate_limit())`).
    pub fn fault(fault: Fault) -> Self {
        Reply::new().with_fault(fault)
    }

    /// Appends a content block.
    pub fn block(mut self, block: Block) -> Self {
        self.blocks.push(block);
        self
    }

    /// Reports this usage.
    pub fn with_usage(mut self, usage: Usage) -> Self {
        self.usage = Some(usage);
        self
    }

    /// Overrides the stop reason.
    pub fn with_stop_reason(mut self, stop_reason: impl Into<String>) -> Self {
        self.stop_reason = Some(stop_reason.into());
        self
    }

    /// Makes this reply fail in the given way.
    pub fn with_fault(mut self, fault: Fault) -> Self {
        self.fault = Some(fault);
        self
    }

    /// Pauses `ms` milliseconds between SSE events.
    pub fn with_delay_ms(mut self, ms: u64) -> Self {
        self.delay_ms = ms;
        self
    }

    /// Reports this model name instead of the requested one.
    pub fn with_model(mut self, model: impl Into<String>) -> Self {
        self.model = Some(model.into());
        self
    }

    /// Uses this message id.
    pub fn with_id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }

    /// The stop reason that will be sent: the explicit one, else the default described on the field.
    pub fn effective_stop_reason(&self) -> String {
        match &self.stop_reason {
            Some(s) => s.clone(),
            None if self.blocks.iter().any(|b| matches!(b, Block::ToolUse { .. })) => "tool_use".into(),
            None => "end_turn".into(),
        }
    }

    /// The usage that will be reported.
    pub fn effective_usage(&self) -> Usage {
        self.usage.unwrap_or(Usage::SMALL)
    }
}

/// One content block of a reply. `chunks` says into how many deltas its text is split.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Block {
    /// Plain text, streamed as `text_delta`s (OpenAI: `content` deltas).
    Text {
        /// The full text.
        text: String,
        /// Number of deltas (default 1).
        #[serde(default = "one")]
        chunks: usize,
    },
    /// Extended thinking, streamed as `thinking_delta`s then one `signature_delta`. Skipped on the OpenAI route.
    Thinking {
        /// The full thinking text.
        thinking: String,
        /// Signature the client must send back unchanged (default `sig_fake`).
        #[serde(default = "default_signature")]
        signature: String,
        /// Number of thinking deltas (default 1).
        #[serde(default = "one")]
        chunks: usize,
    },
    /// A redacted thinking block: a start carrying `data`, then a stop, no deltas. Skipped on the OpenAI route.
    RedactedThinking {
        /// Opaque data to echo back.
        data: String,
    },
    /// A tool call; its input is streamed as `input_json_delta`s (OpenAI: `tool_calls` argument fragments).
    ToolUse {
        /// Tool use id; default `toolu_fake_<n>` (Anthropic) / `call_fake_<n>` (OpenAI), `n` counting tool uses
        /// across the whole scenario from 1.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        /// Tool name.
        name: String,
        /// Tool input (default `{}`).
        #[serde(default = "empty_object")]
        input: Value,
        /// Exact characters to stream as the partial JSON instead of `input` serialized, to test invalid or truncated
        /// tool input.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        raw_input: Option<String>,
        /// Number of input pieces after the leading empty fragment (default 2).
        #[serde(default = "two")]
        chunks: usize,
    },
    /// A block sent exactly as given (a server tool's `server_tool_use` or `web_search_tool_result`): in a
    /// stream, one `content_block_start` carrying it and its stop. Skipped on the OpenAI route.
    Raw { block: Value },
}

fn one() -> usize {
    1
}

fn two() -> usize {
    2
}

fn default_signature() -> String {
    "sig_fake".into()
}

fn empty_object() -> Value {
    Value::Object(Default::default())
}

impl Block {
    /// A text block sent as one delta.
    pub fn text(text: impl Into<String>) -> Self {
        Block::Text { text: text.into(), chunks: 1 }
    }

    /// A text block split into `chunks` deltas.
    pub fn text_chunks(text: impl Into<String>, chunks: usize) -> Self {
        Block::text(text).chunks(chunks)
    }

    /// A thinking block with its signature.
    pub fn thinking(thinking: impl Into<String>, signature: impl Into<String>) -> Self {
        Block::Thinking { thinking: thinking.into(), signature: signature.into(), chunks: 1 }
    }

    /// A redacted thinking block.
    pub fn redacted_thinking(data: impl Into<String>) -> Self {
        Block::RedactedThinking { data: data.into() }
    }

    /// A tool call with a generated id, input streamed in 2 pieces.
    pub fn tool_use(name: impl Into<String>, input: Value) -> Self {
        Block::ToolUse { id: None, name: name.into(), input, raw_input: None, chunks: 2 }
    }

    /// A tool call whose streamed input is exactly `raw` (may be invalid JSON).
    pub fn tool_use_raw(name: impl Into<String>, raw: impl Into<String>) -> Self {
        Block::ToolUse { id: None, name: name.into(), input: empty_object(), raw_input: Some(raw.into()), chunks: 2 }
    }

    /// Sets the number of deltas (no effect on redacted thinking).
    pub fn chunks(mut self, n: usize) -> Self {
        match &mut self {
            Block::Text { chunks, .. } | Block::Thinking { chunks, .. } | Block::ToolUse { chunks, .. } => *chunks = n,
            Block::RedactedThinking { .. } | Block::Raw { .. } => {}
        }
        self
    }

    /// Sets the tool use id.
    ///
    /// # Panics
    /// When the block is not a tool use: that is a bug in the test.
    pub fn with_id(mut self, new_id: impl Into<String>) -> Self {
        match &mut self {
            Block::ToolUse { id, .. } => *id = Some(new_id.into()),
            other => panic!("Block::with_id on a non tool_use block: {other:?}"),
        }
        self
    }
}

/// Token counts, Anthropic style. Missing JSON fields are 0.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct Usage {
    /// Uncached input tokens.
    pub input_tokens: u64,
    /// Output tokens (reported in `message_delta`; `message_start` says 1 like the real API).
    pub output_tokens: u64,
    /// Tokens written to the prompt cache.
    pub cache_creation_input_tokens: u64,
    /// Tokens read from the prompt cache.
    pub cache_read_input_tokens: u64,
}

impl Usage {
    /// What a reply reports when it gives no usage.
    pub const SMALL: Usage =
        Usage { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };

    /// Input and output tokens, no caching.
    pub fn new(input_tokens: u64, output_tokens: u64) -> Self {
        Usage { input_tokens, output_tokens, ..Usage::default() }
    }

    /// Adds cache creation / read counts.
    pub fn with_cache(mut self, creation: u64, read: u64) -> Self {
        self.cache_creation_input_tokens = creation;
        self.cache_read_input_tokens = read;
        self
    }
}

/// How a reply goes wrong. Event positions count every SSE event the stream would send, 0-based, `ping` and
/// OpenAI's `[DONE]` included (Anthropic: 0 = `message_start`, 1 = `ping`, 2 = first `content_block_start`;
/// OpenAI: 0 = the role chunk). A non-streaming answer counts as a single event.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Fault {
    /// Answer with this HTTP status instead of a model reply.
    Http {
        /// Status code, e.g. 429 or 529.
        status: u16,
        /// Extra response headers (e.g. `retry-after`).
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        headers: BTreeMap<String, String>,
        /// Body: a JSON string is sent verbatim as text, anything else as JSON. Default: the endpoint's error shape
        /// with the error type matching the status.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        body: Option<Value>,
    },
    /// Send `events` events, then abort the connection (the client sees a broken body, not a clean end).
    DropAfter {
        /// Events sent before the abort.
        events: usize,
    },
    /// Replace event number `event` with a malformed one, then carry on normally.
    MalformedAt {
        /// Position of the broken event.
        event: usize,
    },
    /// Send an error event at position `event` (after the events before it) and end the stream there.
    ErrorEventAt {
        /// Position of the error event.
        event: usize,
        /// Error type, e.g. `overloaded_error` (default).
        #[serde(default = "default_error_type")]
        error_type: String,
        /// Error message (default `Overloaded`).
        #[serde(default = "default_error_message")]
        message: String,
    },
    /// Send `events` events, then keep the connection open, silent, until the client goes away.
    StallAfter {
        /// Events sent before going silent.
        events: usize,
    },
    /// Stream normally, but label the body with this content type (empty: no `content-type` header at all), as
    /// some local servers do.
    ContentType {
        /// The `content-type` header's value.
        content_type: String,
    },
    /// Start the body with a UTF-8 byte-order mark (the SSE spec allows one).
    ByteOrderMark,
    /// Answer a streaming request with the whole non-streaming body (`application/json`), as a server or proxy
    /// that ignores `stream: true` does.
    NotStreamed,
}

fn default_error_type() -> String {
    "overloaded_error".into()
}

fn default_error_message() -> String {
    "Overloaded".into()
}

impl Fault {
    /// An HTTP error with the default body.
    pub fn http(status: u16) -> Self {
        Fault::Http { status, headers: BTreeMap::new(), body: None }
    }

    /// 429 with `retry-after: 0`, so retrying clients retry at once.
    pub fn rate_limit() -> Self {
        Fault::http(429).with_header("retry-after", "0")
    }

    /// 529 `overloaded_error`.
    pub fn overloaded() -> Self {
        Fault::http(529)
    }

    /// See [`Fault::DropAfter`].
    pub fn drop_after(events: usize) -> Self {
        Fault::DropAfter { events }
    }

    /// See [`Fault::MalformedAt`].
    pub fn malformed_at(event: usize) -> Self {
        Fault::MalformedAt { event }
    }

    /// See [`Fault::ErrorEventAt`].
    pub fn error_event_at(event: usize, error_type: impl Into<String>, message: impl Into<String>) -> Self {
        Fault::ErrorEventAt { event, error_type: error_type.into(), message: message.into() }
    }

    /// See [`Fault::ContentType`].
    pub fn content_type(content_type: impl Into<String>) -> Self {
        Fault::ContentType { content_type: content_type.into() }
    }

    /// See [`Fault::StallAfter`].
    pub fn stall_after(events: usize) -> Self {
        Fault::StallAfter { events }
    }

    /// Adds a response header to an HTTP fault.
    ///
    /// # Panics
    /// When the fault is not [`Fault::Http`]: that is a bug in the test.
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        match &mut self {
            Fault::Http { headers, .. } => {
                headers.insert(name.into(), value.into());
            }
            other => panic!("Fault::with_header on a non-http fault: {other:?}"),
        }
        self
    }

    /// Sets the body of an HTTP fault (a JSON string is sent verbatim).
    ///
    /// # Panics
    /// When the fault is not [`Fault::Http`]: that is a bug in the test.
    pub fn with_body(mut self, new_body: Value) -> Self {
        match &mut self {
            Fault::Http { body, .. } => *body = Some(new_body),
            other => panic!("Fault::with_body on a non-http fault: {other:?}"),
        }
        self
    }
}

/// Splits `s` into at most `n` non-empty pieces of nearly equal length, on char boundaries. Empty text gives no
/// pieces; `n == 0` is treated as 1.
pub(crate) fn split_even(s: &str, n: usize) -> Vec<&str> {
    let count = s.chars().count();
    if count == 0 {
        return Vec::new();
    }
    let n = n.clamp(1, count);
    let (base, rem) = (count / n, count % n);
    let mut pieces = Vec::with_capacity(n);
    let mut rest = s;
    for i in 0..n {
        let len = base + usize::from(i < rem);
        let cut = rest.char_indices().nth(len).map_or(rest.len(), |(at, _)| at);
        let (piece, tail) = rest.split_at(cut);
        pieces.push(piece);
        rest = tail;
    }
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_even_keeps_all_chars() {
        assert_eq!(split_even("abcdefg", 3), ["abc", "de", "fg"]);
        assert_eq!(split_even("ab", 5), ["a", "b"]);
        assert_eq!(split_even("", 3), Vec::<&str>::new());
        assert_eq!(split_even("héllo", 0), ["héllo"]);
        assert_eq!(split_even("ééé", 2), ["éé", "é"]);
    }

    #[test]
    fn defaults_fill_in() {
        let s = Scenario::from_json(
            r#"{"replies":[{"blocks":[{"type":"text","text":"hi"},{"type":"tool_use","name":"Read"}]}]}"#,
        )
        .unwrap();
        let r = &s.replies[0];
        assert_eq!(r.effective_stop_reason(), "tool_use");
        assert_eq!(r.effective_usage(), Usage::SMALL);
        assert_eq!(r.blocks[0], Block::text("hi"));
        assert_eq!(r.blocks[1], Block::tool_use("Read", serde_json::json!({})));
    }

    #[test]
    fn typos_are_rejected() {
        let err = Scenario::from_json(r#"{"replies":[{"blocks":[{"type":"text","text":"x","chunk":2}]}]}"#);
        assert!(err.is_err());
        let err = Scenario::from_json(r#"{"replies":[{"fault":{"kind":"drop_after","event":2}}]}"#);
        assert!(err.is_err());
    }
}
