//! The API inspector's record: every model request of a session — each attempt of it, retries included — with
//! what came back, kept in the session's directory (`requests.jsonl`, one [`Exchange`] a line). Keys never reach
//! it: the request's headers are listed with the key's value redacted ([`crate::provider::WireRequest`]), the body
//! holds no key, and error messages are scrubbed where they are made. Bodies and event lists are bounded, the
//! omitted amount stated.

mod events;
pub mod replay;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::conversation::Usage;
use crate::provider::{StreamEvent, WireRequest};

pub use events::event_json;

/// The record's file in a session's directory.
pub const REQUESTS_FILE: &str = "requests.jsonl";
/// Request body kept at most (bytes); a longer one is kept as the start of its text.
const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;
/// Response events kept at most (bytes of their JSON).
const MAX_EVENT_BYTES: usize = 4 * 1024 * 1024;

/// How a recorded body builds on the one recorded before it: a conversation's next request repeats the whole
/// conversation so far, so a long session recorded whole would grow with the square of its length.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BodyDelta {
    /// The exchange whose body this one builds on.
    pub base: u64,
    /// The leading `messages` that are the base's: the stored body's `messages` are the rest.
    pub shared_messages: usize,
    /// The top-level fields (`system`, `tools`…) left out because they are the base's, unchanged.
    pub same_fields: Vec<String>,
}

/// The error of an attempt the user interrupted (listed as `stop`).
pub const INTERRUPTED: &str = "interrupted by the user";

/// One attempt of one model request and its response.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Exchange {
    /// Numbered from 1 in the session, in the order attempts started.
    pub id: u64,
    /// When it started (milliseconds since the Unix epoch).
    pub at_ms: u64,
    /// `turn` (the conversation's next reply) or `compaction` (a subagent's are in its own directory).
    pub purpose: String,
    /// The session's prompt it was made for (its number, as `/rewind` counts them; 0: not known).
    #[serde(default)]
    pub turn: u64,
    pub model: String,
    /// 1 for the first try, 2 for its first retry…
    pub attempt: u32,
    pub method: String,
    pub url: String,
    pub request_headers: Vec<(String, String)>,
    /// The body as JSON, when it was kept whole.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_body: Option<Value>,
    /// The start of a body too large to keep whole.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_body_start: Option<String>,
    /// On disk only: `request_body` holds just what is new since an earlier exchange's body ([`BodyDelta`]);
    /// [`read`] gives the body whole again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_body_delta: Option<BodyDelta>,
    pub request_bytes: u64,
    /// The HTTP status (200 once a stream opened), or none when no response came.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The headers of a response that failed (cookies and the key redacted). A stream that opened has none:
    /// reqwest-eventsource, which reads it, does not hand a successful response's headers over.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub response_headers: Vec<(String, String)>,
    /// The response's events in Anthropic's vocabulary (both providers' streams are read into it).
    pub events: Vec<Value>,
    /// Events left out past the size bound.
    #[serde(default)]
    pub events_omitted: u64,
    /// Time to the first event (the response's headers for a failure), to the first text or tool input, to the
    /// end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_event_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_token_ms: Option<u64>,
    pub total_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// A replay: the request it sent again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay_of: Option<u64>,
    /// A replay of a body the user edited first.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub edited: bool,
}

impl Exchange {
    /// The status as lists show it: the HTTP status (`529!` when it came with an error), `stop` when the user
    /// interrupted it, `error` when no response came, `-` when nothing is known.
    pub fn status_label(&self) -> String {
        match (self.status, &self.error) {
            (_, Some(error)) if error == INTERRUPTED => "stop".to_owned(),
            (Some(status), None) => status.to_string(),
            (Some(status), Some(_)) => format!("{status}!"),
            (None, Some(_)) => "error".to_owned(),
            (None, None) => "-".to_owned(),
        }
    }

    /// What it was for, as lists show it: `turn`, `compaction`, … or `replay 3` (`replay 3*` when edited).
    pub fn purpose_label(&self) -> String {
        match self.replay_of {
            Some(request) => format!("replay {request}{}", if self.edited { "*" } else { "" }),
            None => self.purpose.clone(),
        }
    }

    /// The cost as lists show it: `-` when no usage came (a failure costs nothing), `?` when the model's prices
    /// are not known.
    pub fn cost_label(&self) -> String {
        match (self.usage, self.cost_usd()) {
            (None, _) => "-".to_owned(),
            (Some(_), Some(cost)) => format!("${cost:.4}"),
            (Some(_), None) => "?".to_owned(),
        }
    }

    /// What the response cost at the model's listed prices (`None`: no usage, or prices unknown).
    pub fn cost_usd(&self) -> Option<f64> {
        crate::models::lookup(&self.model).cost(self.usage.as_ref()?)
    }
}

/// Writes a session's exchanges.
#[derive(Debug)]
pub struct Recorder {
    /// Changes when `/clear` starts a new session ([`Recorder::move_to`]); held while a line is written, so
    /// that ids follow the order lines are written in.
    file: Mutex<PathBuf>,
    next_id: AtomicU64,
    /// The prompt requests are made for now.
    turn: AtomicU64,
    /// The last body written whole or as a delta, with its exchange's id: the next one is stored as what
    /// differs from it.
    last_body: Mutex<Option<(u64, Value)>>,
}

impl Recorder {
    /// The record of the session whose directory is `dir` (made on the first write); numbering goes on after
    /// what a resumed session recorded.
    pub fn new(dir: &Path) -> Recorder {
        let file = dir.join(REQUESTS_FILE);
        let written = count_lines(&file);
        Recorder {
            file: Mutex::new(file),
            next_id: AtomicU64::new(written + 1),
            turn: AtomicU64::new(0),
            last_body: Mutex::new(None),
        }
    }

    /// Records from now on in the session whose directory is `dir` (`/clear` started it), numbered from there.
    pub fn move_to(&self, dir: &Path) {
        let mut file = self.file.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        *file = dir.join(REQUESTS_FILE);
        self.next_id.store(count_lines(&file) + 1, Ordering::SeqCst);
        self.turn.store(0, Ordering::SeqCst);
        *self.last_body.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = None;
    }

    /// Requests from now on are made for prompt `turn`.
    pub fn set_turn(&self, turn: u64) {
        self.turn.store(turn, Ordering::SeqCst);
    }

    /// The record's file now.
    pub fn path(&self) -> PathBuf {
        self.file.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    /// Starts recording one attempt.
    pub fn start(&self, purpose: &str, model: &str, attempt: u32, wire: Option<WireRequest>) -> Attempt {
        let mut exchange = Exchange {
            at_ms: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |since| since.as_millis() as u64),
            purpose: purpose.to_owned(),
            turn: self.turn.load(Ordering::SeqCst),
            model: model.to_owned(),
            attempt,
            ..Exchange::default()
        };
        if let Some(wire) = wire {
            exchange.method = wire.method.to_owned();
            exchange.url = wire.url;
            exchange.request_headers = wire.headers;
            exchange.request_bytes = wire.body.len() as u64;
            if wire.body.len() <= MAX_BODY_BYTES {
                exchange.request_body = serde_json::from_slice(&wire.body).ok();
            }
            if exchange.request_body.is_none() {
                let cut = wire.body.len().min(MAX_BODY_BYTES);
                exchange.request_body_start = Some(String::from_utf8_lossy(&wire.body[..cut]).into_owned());
            }
        }
        Attempt { exchange, started: Instant::now(), event_bytes: 0 }
    }

    /// Appends a finished attempt (numbered now, so that ids follow the order they are written in).
    pub fn finish(&self, mut attempt: Attempt) {
        attempt.exchange.total_ms = attempt.started.elapsed().as_millis() as u64;
        let path = self.file.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        attempt.exchange.id = self.next_id.fetch_add(1, Ordering::SeqCst);
        let mut last = self.last_body.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(body) = attempt.exchange.request_body.take() {
            let (stored, delta) = match last.as_ref() {
                Some((base, previous)) => delta_from(*base, previous, &body),
                None => (body.clone(), None),
            };
            attempt.exchange.request_body = Some(stored);
            attempt.exchange.request_body_delta = delta;
            *last = Some((attempt.exchange.id, body));
        }
        drop(last);
        let Ok(line) = serde_json::to_string(&attempt.exchange) else { return };
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&*path)
            .and_then(|mut file| file.write_all(format!("{line}\n").as_bytes()));
        if let Err(err) = written {
            tracing::warn!(file = %path.display(), "the request record could not be written: {err}");
        }
    }
}

/// Lines in a record file (one exchange a line): a long session's record is large, and is not parsed just to
/// number the next exchange.
fn count_lines(file: &Path) -> u64 {
    std::fs::File::open(file).map_or(0, |file| {
        use std::io::BufRead;
        std::io::BufReader::new(file).split(b'\n').count() as u64
    })
}

/// An attempt being recorded.
#[derive(Debug)]
pub struct Attempt {
    exchange: Exchange,
    started: Instant,
    event_bytes: usize,
}

impl Attempt {
    /// Notes a response event.
    pub fn event(&mut self, event: &StreamEvent) {
        let elapsed = self.started.elapsed().as_millis() as u64;
        self.exchange.first_event_ms.get_or_insert(elapsed);
        if matches!(
            event,
            StreamEvent::TextDelta { .. } | StreamEvent::ToolInputDelta { .. } | StreamEvent::ThinkingDelta { .. }
        ) {
            self.exchange.first_token_ms.get_or_insert(elapsed);
        }
        if self.exchange.status.is_none() {
            self.exchange.status = Some(200);
        }
        let value = event_json(event);
        let size = value.to_string().len();
        if self.event_bytes + size > MAX_EVENT_BYTES {
            self.exchange.events_omitted += 1;
            return;
        }
        self.event_bytes += size;
        self.exchange.events.push(value);
    }

    /// A response that was not streamed: its status and JSON document, kept as its one event.
    pub fn document(&mut self, status: u16, document: Value) {
        let elapsed = self.started.elapsed().as_millis() as u64;
        self.exchange.first_event_ms.get_or_insert(elapsed);
        self.exchange.status = Some(status);
        if document.to_string().len() <= MAX_EVENT_BYTES {
            self.exchange.events.push(document);
        } else {
            self.exchange.events_omitted += 1;
        }
    }

    /// Marks it a replay of `request` (edited first, or not).
    pub fn replay_of(&mut self, request: u64, edited: bool) {
        self.exchange.replay_of = Some(request);
        self.exchange.edited = edited;
    }

    /// Notes the response a failure came with (its headers), when one came.
    pub fn failed(&mut self, error: &crate::provider::ProviderError) {
        self.exchange.response_headers = error.response_headers().to_vec();
    }

    /// How the attempt ended: an error (with its HTTP status when there was one), or the message's usage.
    pub fn end(&mut self, error: Option<(String, Option<u16>)>, usage: Option<Usage>) {
        if let Some((message, status)) = error {
            self.exchange.error = Some(message);
            if status.is_some() {
                self.exchange.status = status;
            }
            let elapsed = self.started.elapsed().as_millis() as u64;
            self.exchange.first_event_ms.get_or_insert(elapsed);
        }
        self.exchange.usage = usage;
    }
}

/// Reads a response stream to its complete message, noting each event in `record`; the error (with its HTTP
/// status when there was one) when it fails or ends early. For requests made outside the agent's sampling
/// (a replay, a tool's own request).
pub async fn read_stream(
    request: impl std::future::Future<Output = Result<crate::provider::EventStream, crate::provider::ProviderError>>,
    mut record: Option<&mut Attempt>,
) -> Result<crate::conversation::AssistantMessage, (String, Option<u16>)> {
    use futures::StreamExt;
    let mut stream = match request.await {
        Ok(stream) => stream,
        Err(err) => {
            if let Some(record) = record {
                record.failed(&err);
            }
            return Err((err.to_string(), err.http_status()));
        }
    };
    let mut assembler = crate::provider::assemble::MessageAssembler::new();
    while let Some(event) = stream.next().await {
        let event = event.map_err(|err| (err.to_string(), err.http_status()))?;
        if let Some(record) = record.as_deref_mut() {
            record.event(&event);
        }
        assembler.push(&event).map_err(|err| (err.to_string(), None))?;
        if assembler.is_complete() {
            break;
        }
    }
    if !assembler.is_complete() {
        return Err(("the answer ended before it was complete".to_owned(), None));
    }
    Ok(assembler.finish().message)
}

/// `body` as what differs from `previous` (exchange `base`'s body): its new messages, and its fields that
/// changed.
fn delta_from(base: u64, previous: &Value, body: &Value) -> (Value, Option<BodyDelta>) {
    let (Some(old), Some(new)) = (previous.as_object(), body.as_object()) else { return (body.clone(), None) };
    let messages = |map: &serde_json::Map<String, Value>| map.get("messages").and_then(Value::as_array).cloned();
    let (old_messages, new_messages) = (messages(old).unwrap_or_default(), messages(new));
    let shared = match &new_messages {
        Some(list) => old_messages.iter().zip(list).take_while(|(a, b)| a == b).count(),
        None => 0,
    };
    let mut stored = serde_json::Map::new();
    let mut same_fields = Vec::new();
    for (key, value) in new {
        if key == "messages" {
            let rest = new_messages.as_deref().map(|list| list[shared..].to_vec()).unwrap_or_default();
            stored.insert(key.clone(), Value::Array(rest));
        } else if old.get(key) == Some(value) {
            same_fields.push(key.clone());
        } else {
            stored.insert(key.clone(), value.clone());
        }
    }
    if new_messages.is_none() || (shared == 0 && same_fields.is_empty()) {
        return (body.clone(), None);
    }
    (Value::Object(stored), Some(BodyDelta { base, shared_messages: shared, same_fields }))
}

/// The body `delta` describes, from its base's whole body; `None` when they don't fit together.
fn rebuild(base: &Value, stored: Value, delta: &BodyDelta) -> Option<Value> {
    let (base, Value::Object(mut body)) = (base.as_object()?, stored) else { return None };
    for key in &delta.same_fields {
        body.insert(key.clone(), base.get(key)?.clone());
    }
    let shared = base.get("messages")?.as_array()?.get(..delta.shared_messages)?.to_vec();
    let rest = body.get("messages").and_then(Value::as_array).cloned().unwrap_or_default();
    body.insert("messages".into(), Value::Array(shared.into_iter().chain(rest).collect()));
    Some(Value::Object(body))
}

/// The exchanges of a record file, in order, each body whole; lines that don't parse are skipped (and a body
/// that builds on a skipped one is said to be missing).
pub fn read(file: &Path) -> Vec<Exchange> {
    let Ok(text) = std::fs::read_to_string(file) else { return Vec::new() };
    let mut last: Option<(u64, Value)> = None;
    let mut out = Vec::new();
    for line in text.lines() {
        let Ok(mut exchange) = serde_json::from_str::<Exchange>(line) else { continue };
        if let Some(delta) = exchange.request_body_delta.take()
            && let Some(stored) = exchange.request_body.take()
        {
            let base = last.as_ref().filter(|(id, _)| *id == delta.base).map(|(_, body)| body);
            exchange.request_body = base.and_then(|base| rebuild(base, stored, &delta));
            if exchange.request_body.is_none() {
                exchange.request_body_start = Some(format!(
                    "(not recorded whole: it builds on request {}, which is missing from the record)",
                    delta.base
                ));
            }
        }
        if let Some(body) = &exchange.request_body {
            last = Some((exchange.id, body.clone()));
        }
        out.push(exchange);
    }
    out
}

/// A session's exchanges (from its directory), then each subagent's, labelled with the subagent's name and
/// numbered after the session's own so that every request has one number.
pub fn read_session(dir: &Path) -> Vec<(String, Exchange)> {
    let mut all: Vec<(String, Exchange)> =
        read(&dir.join(REQUESTS_FILE)).into_iter().map(|exchange| (String::new(), exchange)).collect();
    let mut agents: Vec<PathBuf> = std::fs::read_dir(dir.join("subagents"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.join(REQUESTS_FILE).is_file())
        .collect();
    agents.sort();
    let mut next = all.iter().map(|(_, exchange)| exchange.id).max().unwrap_or(0);
    for agent in agents {
        let name = agent.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
        for mut exchange in read(&agent.join(REQUESTS_FILE)) {
            next += 1;
            exchange.id = next;
            all.push((name.clone(), exchange));
        }
    }
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wire(body: &Value) -> WireRequest {
        WireRequest { method: "POST", url: "http://x".into(), headers: Vec::new(), body: body.to_string().into_bytes() }
    }

    /// Found from the outside: every request body was stored whole, and a conversation re-sends its growing
    /// prefix every turn, so a long session's record grew with the square of its length.
    #[test]
    fn a_long_session_records_each_body_as_what_is_new_and_reads_it_back_whole() {
        let dir = tempfile::tempdir().unwrap();
        let recorder = Recorder::new(dir.path());
        let system = "You are tandem. ".repeat(500);
        let mut messages = Vec::new();
        let mut bodies = Vec::new();
        let turns = 200;
        for turn in 0..turns {
            messages
                .push(serde_json::json!({"role": "user", "content": format!("prompt {turn}: {}", "x".repeat(2000))}));
            let body = serde_json::json!({"model": "m", "system": system, "messages": messages, "stream": true});
            recorder.finish(recorder.start("turn", "m", 1, Some(wire(&body))));
            bodies.push(body);
            messages.push(serde_json::json!({"role": "assistant", "content": format!("answer {turn}")}));
        }
        let whole: usize = bodies.iter().map(|body| body.to_string().len()).sum();
        let stored = std::fs::metadata(dir.path().join(REQUESTS_FILE)).unwrap().len() as usize;
        eprintln!("a {turns}-turn record: {stored} bytes stored, {whole} bytes of bodies");
        assert!(stored * 20 < whole, "{stored} bytes stored for {whole} bytes of bodies");
        let read = read(&dir.path().join(REQUESTS_FILE));
        assert_eq!(read.len(), turns);
        for (exchange, body) in read.iter().zip(&bodies) {
            assert_eq!(exchange.request_body.as_ref(), Some(body), "exchange {}", exchange.id);
            assert_eq!(exchange.request_body_delta, None);
        }

        // A line lost from the middle: the next body says it is missing rather than being rebuilt wrong.
        let text = std::fs::read_to_string(dir.path().join(REQUESTS_FILE)).unwrap();
        let damaged: Vec<&str> = text.lines().enumerate().filter(|(i, _)| *i != 5).map(|(_, line)| line).collect();
        std::fs::write(dir.path().join(REQUESTS_FILE), damaged.join("\n")).unwrap();
        let read = super::read(&dir.path().join(REQUESTS_FILE));
        assert!(read[5].request_body.is_none() && read[5].request_body_start.as_deref().unwrap().contains("missing"));
    }
}
