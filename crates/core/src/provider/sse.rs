//! Server-sent events: the request goes out through reqwest-eventsource's [`EventSource`], and each protocol's
//! [`EventDecoder`] turns the events it yields into [`StreamEvent`]s.
//!
//! The event source's own reconnecting is switched off ([`Never`]): re-sending a model request is a decision
//! for the agent loop, which must discard the partial answer and tell the front end (see `agent::turn`). A
//! failure status is read from `Error::InvalidStatusCode`'s response (its headers carry `retry-after-ms` and
//! `x-should-retry`, its body the server's message), and a JSON document where events were expected from
//! `Error::InvalidContentType`'s. A success whose content type is not `text/event-stream` (some local servers
//! label their stream `text/plain` or not at all) is still read as events, with the same crate's parser.

use std::cell::Cell;
use std::collections::VecDeque;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::StreamExt;
use futures::stream::BoxStream;
use reqwest::header::HeaderMap;
use reqwest_eventsource::retry::Never;
use reqwest_eventsource::{Error as SourceError, Event, EventSource};

use super::transport::{self, Client};
use super::{Endpoint, EventStream, ProviderError, StreamEvent};

/// One server-sent event, borrowed for the duration of a decoder call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SseEvent<'a> {
    /// The `event:` field; `message` (the spec's default type) when the server sent none.
    pub event: &'a str,
    /// The `data:` lines joined with `\n`.
    pub data: &'a str,
}

/// What a decoder wants after an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    Continue,
    /// The response is over (message stop, or an error): read no further.
    Done,
}

/// Turns one wire protocol's SSE events into [`StreamEvent`]s.
pub trait EventDecoder {
    fn event(&mut self, event: SseEvent<'_>, out: &mut VecDeque<Result<StreamEvent, ProviderError>>) -> Flow;

    /// The body ended before the decoder said [`Flow::Done`].
    fn end(&mut self, out: &mut VecDeque<Result<StreamEvent, ProviderError>>);

    /// A success answered with one JSON document where events were expected (a server or proxy that ignored
    /// `stream: true`, or sent its error that way): the events the same answer would have streamed, or the
    /// error it would have been in a stream.
    fn document(&mut self, body: &str, out: &mut VecDeque<Result<StreamEvent, ProviderError>>);
}

/// What the body gave: an event, its clean end, or a failure (already put in a user's terms).
enum Item {
    Event(eventsource_stream::Event),
    End,
    Failed(ProviderError),
}

/// Sends a JSON POST as an event source and waits for the response's headers: a failure status, a connection
/// that can't be made or a JSON error document is returned here, as the error the agent's retry logic reads;
/// a stream is returned once the server has started one.
pub(crate) async fn open<D: EventDecoder + Send + 'static>(
    client: &Client,
    endpoint: &Endpoint,
    url: &str,
    headers: HeaderMap,
    body: Vec<u8>,
    decoder: D,
) -> Result<EventStream, ProviderError> {
    let client = client.as_ref().map_err(|message| ProviderError::Connect {
        url: url.to_owned(),
        message: format!("the HTTP client could not be set up: {message}"),
    })?;
    let request = client.post(url).headers(headers).body(body);
    let mut source = EventSource::new(request).map_err(|err| ProviderError::Connect {
        url: url.to_owned(),
        message: format!("the request could not be prepared: {err}"),
    })?;
    source.set_retry_policy(Box::new(Never));
    match source.next().await {
        // The source says `Open` before any message.
        Some(Ok(event)) => {
            let first = futures::stream::iter(from_source(Ok(event)));
            let rest = source.filter_map(|item| futures::future::ready(from_source(item)));
            Ok(decode(first.chain(rest).boxed(), decoder))
        }
        Some(Err(SourceError::Transport(err))) => Err(transport::send_error(err, url, endpoint)),
        Some(Err(SourceError::InvalidStatusCode(status, response))) if status.is_success() => {
            Ok(decode(body_events(response), decoder))
        }
        Some(Err(SourceError::InvalidStatusCode(status, response))) => {
            let headers = response.headers().clone();
            let body = transport::read_limited(response).await;
            Err(transport::http_error(status.as_u16(), &headers, &body, endpoint))
        }
        Some(Err(SourceError::InvalidContentType(content_type, response))) => {
            let media = content_type.to_str().unwrap_or("").trim().to_ascii_lowercase();
            if media.starts_with("application/json") {
                // A server that ignored `stream: true`, or an error document from a proxy.
                return match transport::read_document(response).await {
                    Ok(body) => Ok(document_events(&body, decoder)),
                    Err(err) => Err(err),
                };
            }
            tracing::debug!(%url, content_type = %media, "reading a stream not labelled text/event-stream");
            Ok(decode(body_events(response), decoder))
        }
        Some(Err(err)) => Err(ProviderError::Disconnected { message: format!("{url}: {err}") }),
        None => Err(ProviderError::Disconnected { message: format!("{url}: the connection closed") }),
    }
}

/// The events of a whole answer sent as one document, up to the first error.
fn document_events<D: EventDecoder>(body: &[u8], mut decoder: D) -> EventStream {
    let mut out = VecDeque::new();
    match std::str::from_utf8(body) {
        Ok(text) => decoder.document(text, &mut out),
        Err(_) => out.push_back(Err(not_utf8())),
    }
    let cut = out.iter().position(Result::is_err).map_or(out.len(), |at| at + 1);
    out.truncate(cut);
    Box::pin(futures::stream::iter(out))
}

/// Decodes a whole answer document as [`open`] does (for tests and benchmarks without a server).
pub fn decode_document<D: EventDecoder>(decoder: D, body: &[u8]) -> Vec<Result<StreamEvent, ProviderError>> {
    futures::executor::block_on(document_events(body, decoder).collect())
}

/// The events of a response read directly, for a success the event source would not take as a stream.
fn body_events(response: reqwest::Response) -> BoxStream<'static, Item> {
    use eventsource_stream::{EventStreamError, Eventsource};
    let events = response.bytes_stream().eventsource().map(|item| match item {
        Ok(event) => Item::Event(event),
        Err(EventStreamError::Transport(err)) => Item::Failed(transport::body_error(err)),
        Err(EventStreamError::Utf8(_)) => Item::Failed(not_utf8()),
        Err(EventStreamError::Parser(err)) => Item::Failed(unparseable(&err.input)),
    });
    events.chain(futures::stream::once(async { Item::End })).boxed()
}

/// What an item of the event source means here; `Open` means nothing once the headers are in.
fn from_source(item: Result<Event, SourceError>) -> Option<Item> {
    Some(match item {
        Ok(Event::Open) => return None,
        Ok(Event::Message(event)) => Item::Event(event),
        Err(SourceError::StreamEnded) => Item::End,
        Err(SourceError::Transport(err)) => Item::Failed(transport::body_error(err)),
        Err(SourceError::Utf8(_)) => Item::Failed(not_utf8()),
        Err(SourceError::Parser(err)) => Item::Failed(unparseable(&err.input)),
        Err(err) => Item::Failed(ProviderError::Disconnected { message: err.to_string() }),
    })
}

fn not_utf8() -> ProviderError {
    ProviderError::Malformed { message: "the event stream is not valid UTF-8".to_owned() }
}

fn unparseable(input: &str) -> ProviderError {
    let excerpt = super::anthropic::excerpt(input);
    ProviderError::Malformed { message: format!("the event stream could not be parsed at: {excerpt}") }
}

thread_local! {
    static PARSING: Cell<bool> = const { Cell::new(false) };
}

/// Whether this thread is inside the event-stream parser, where a panic is caught and becomes a malformed-stream
/// error (eventsource-stream 0.2.3 panics on a stream that starts with a byte-order mark). A panic hook asks
/// this so that it neither prints nor restores the terminal for a panic that is handled.
pub fn panic_is_caught() -> bool {
    PARSING.with(Cell::get)
}

/// Polls the parser with panics caught: a bug in a dependency's parser ends the response with an error the
/// agent retries, instead of taking the agent down.
struct CatchPanics {
    inner: Option<BoxStream<'static, Item>>,
}

impl futures::Stream for CatchPanics {
    type Item = Item;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Item>> {
        let Some(inner) = self.inner.as_mut() else { return Poll::Ready(None) };
        let was = PARSING.with(|parsing| parsing.replace(true));
        let polled = std::panic::catch_unwind(AssertUnwindSafe(|| inner.poll_next_unpin(cx)));
        PARSING.with(|parsing| parsing.set(was));
        match polled {
            Ok(poll) => poll,
            Err(payload) => {
                self.inner = None;
                let what = payload
                    .downcast_ref::<&str>()
                    .map(|s| (*s).to_owned())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "a panic".to_owned());
                tracing::warn!(panic = %what, "the event-stream parser panicked");
                // The panic's first clause says what; the rest quotes the body at length.
                let first = what.split([';', '\n']).next().unwrap_or_default();
                let message = format!("the event-stream parser failed: {}", super::anthropic::excerpt(first));
                Poll::Ready(Some(Item::Failed(ProviderError::Malformed { message })))
            }
        }
    }
}

struct Driver<D> {
    items: BoxStream<'static, Item>,
    decoder: D,
    queue: VecDeque<Result<StreamEvent, ProviderError>>,
    /// Nothing more will be read from the body: the decoder said it is done, or the body ended or failed.
    ended: bool,
}

/// Runs `items` through `decoder`. The stream ends after the first error, and as soon as the decoder has seen
/// the end of the response (later bytes are never read).
fn decode<D: EventDecoder + Send + 'static>(items: BoxStream<'static, Item>, decoder: D) -> EventStream {
    let items = CatchPanics { inner: Some(items) }.boxed();
    let driver = Driver { items, decoder, queue: VecDeque::new(), ended: false };
    Box::pin(futures::stream::unfold(driver, |mut driver| async move {
        loop {
            if let Some(item) = driver.queue.pop_front() {
                if item.is_err() {
                    driver.queue.clear();
                    driver.ended = true;
                }
                return Some((item, driver));
            }
            if driver.ended {
                return None;
            }
            match driver.items.next().await {
                Some(Item::Event(event)) => {
                    let event = SseEvent { event: &event.event, data: &event.data };
                    if driver.decoder.event(event, &mut driver.queue) == Flow::Done {
                        driver.ended = true;
                    }
                }
                Some(Item::Failed(err)) => {
                    driver.ended = true;
                    driver.queue.push_back(Err(err));
                }
                Some(Item::End) | None => {
                    driver.ended = true;
                    driver.decoder.end(&mut driver.queue);
                }
            }
        }
    }))
}

/// Decodes a recorded body delivered in `chunks` (as network reads would split it) with the same parser and
/// driver as a live response. Public so that benchmarks and tests can decode without a server.
pub fn decode_chunks<'a, D: EventDecoder + Send + 'static>(
    decoder: D,
    chunks: impl IntoIterator<Item = &'a [u8]>,
) -> Vec<Result<StreamEvent, ProviderError>> {
    use eventsource_stream::Eventsource;
    let chunks: Vec<bytes::Bytes> = chunks.into_iter().map(bytes::Bytes::copy_from_slice).collect();
    let events =
        futures::stream::iter(chunks.into_iter().map(Ok::<_, std::convert::Infallible>)).eventsource().map(|item| {
            match item {
                Ok(event) => Item::Event(event),
                Err(eventsource_stream::EventStreamError::Utf8(_)) => Item::Failed(not_utf8()),
                Err(eventsource_stream::EventStreamError::Parser(err)) => Item::Failed(unparseable(&err.input)),
                Err(eventsource_stream::EventStreamError::Transport(never)) => match never {},
            }
        });
    let items = events.chain(futures::stream::once(async { Item::End })).boxed();
    futures::executor::block_on(decode(items, decoder).collect())
}

/// Decodes everything in `body` as one complete response, read in one piece.
pub fn decode_all<D: EventDecoder + Send + 'static>(
    decoder: D,
    body: &[u8],
) -> Vec<Result<StreamEvent, ProviderError>> {
    decode_chunks(decoder, [body])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records every event it is given as `Text` deltas of `event|data`, and ends cleanly.
    struct Recorder;

    impl EventDecoder for Recorder {
        fn event(&mut self, event: SseEvent<'_>, out: &mut VecDeque<Result<StreamEvent, ProviderError>>) -> Flow {
            out.push_back(Ok(StreamEvent::TextDelta { index: 0, text: format!("{}|{}", event.event, event.data) }));
            if event.data == "[DONE]" { Flow::Done } else { Flow::Continue }
        }

        fn end(&mut self, out: &mut VecDeque<Result<StreamEvent, ProviderError>>) {
            out.push_back(Err(ProviderError::Disconnected { message: "ended".to_owned() }));
        }

        fn document(&mut self, body: &str, out: &mut VecDeque<Result<StreamEvent, ProviderError>>) {
            out.push_back(Ok(StreamEvent::TextDelta { index: 0, text: format!("document|{body}") }));
        }
    }

    const ENDED: &str = "error: the connection to the model was lost: ended";

    fn texts(events: Vec<Result<StreamEvent, ProviderError>>) -> Vec<String> {
        events
            .into_iter()
            .map(|event| match event {
                Ok(StreamEvent::TextDelta { text, .. }) => text,
                Ok(other) => panic!("{other:?}"),
                Err(err) => format!("error: {err}"),
            })
            .collect()
    }

    const SAMPLE: &str = ": keep-alive\r\nevent: a\r\ndata: {\"x\":1}\r\n\r\n\
        data: line1\ndata:line2\ndata\n\n\
        event: é\rdata:  two spaces\r\r\
        id: 7\nretry: 10\ndata: ünïcödé ✓\n\n\
        event: ignored-without-data\n\n\
        data: [DONE]\n\ndata: never read\n\n";

    fn expected() -> Vec<String> {
        ["a|{\"x\":1}", "message|line1\nline2\n", "é| two spaces", "message|ünïcödé ✓", "message|[DONE]"]
            .map(str::to_owned)
            .to_vec()
    }

    #[test]
    fn fields_comments_line_endings_and_the_default_type() {
        assert_eq!(texts(decode_all(Recorder, SAMPLE.as_bytes())), expected());
    }

    #[test]
    fn any_split_gives_the_same_events() {
        let bytes = SAMPLE.as_bytes();
        for at in 0..=bytes.len() {
            assert_eq!(texts(decode_chunks(Recorder, [&bytes[..at], &bytes[at..]])), expected(), "split at {at}");
        }
        assert_eq!(texts(decode_chunks(Recorder, bytes.chunks(1))), expected());
        let mut rng = fastrand::Rng::with_seed(7);
        for _ in 0..100 {
            let mut chunks = Vec::new();
            let mut rest = bytes;
            while !rest.is_empty() {
                let n = rng.usize(1..=rest.len().min(9));
                chunks.push(&rest[..n]);
                rest = &rest[n..];
            }
            assert_eq!(texts(decode_chunks(Recorder, chunks)), expected());
        }
    }

    #[test]
    fn a_body_that_ends_is_the_decoders_to_judge_and_a_cut_event_is_dropped() {
        assert_eq!(texts(decode_all(Recorder, b"data: whole\n\n")), ["message|whole", ENDED]);
        // The event source dispatches an event at its blank line only, so neither a cut line nor a complete
        // last event without one reaches the decoder (which then reports a body that ended early).
        assert_eq!(texts(decode_all(Recorder, b"data: {\"cut")), [ENDED]);
        assert_eq!(texts(decode_all(Recorder, b"data: a\n\ndata: b\n")), ["message|a", ENDED]);
    }

    #[test]
    fn a_byte_order_mark_is_a_malformed_stream_not_a_panic() {
        // The crate's parser slices one byte off a three-byte mark; the panic is caught and reported.
        let events = decode_all(Recorder, "\u{feff}data: a\n\n".as_bytes());
        assert!(matches!(&events[..], [Err(ProviderError::Malformed { .. })]), "{events:?}");
        assert!(!panic_is_caught(), "the flag is reset after the poll");
    }

    #[test]
    fn invalid_utf8_is_a_malformed_stream() {
        let events = decode_all(Recorder, b"data: ok\n\ndata: \xff\xfe\n\n");
        assert!(matches!(events.last(), Some(Err(ProviderError::Malformed { .. }))), "{events:?}");
    }
}
