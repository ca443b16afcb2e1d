//! Server-sent events: an incremental parser and the driver that turns an HTTP body into an [`EventStream`].
//!
//! The parser is written for the two things that matter here: it must be correct wherever the network happens
//! to split the bytes (a `\r\n` can straddle two chunks, so can a multi-byte character or a whole event), and
//! it must be fast, because every token of every reply goes through it. It never allocates per event: the
//! event name and data are built in reused buffers and handed to a callback by reference.

use std::collections::VecDeque;

use futures::StreamExt;

use super::{EventStream, ProviderError, StreamEvent};

/// One server-sent event, borrowed from the parser's buffers for the duration of a callback.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SseEvent<'a> {
    /// The `event:` field; empty when the server sent none (the spec's default type "message").
    pub event: &'a str,
    /// The `data:` lines joined with `\n`.
    pub data: &'a str,
}

/// An incremental parser for the `text/event-stream` format (WHATWG HTML §9.2.6).
#[derive(Debug, Default)]
pub struct SseParser {
    /// Bytes of an unterminated line carried over from the previous chunk.
    pending: Vec<u8>,
    event: String,
    data: String,
    has_data: bool,
    /// The previous chunk ended in `\r`, so a `\n` starting the next one belongs to that line break.
    skip_lf: bool,
    /// Nothing has been parsed yet: a byte-order mark may still have to be skipped.
    at_start: bool,
}

impl SseParser {
    pub fn new() -> Self {
        SseParser { at_start: true, ..SseParser::default() }
    }

    /// Parses a chunk of the body, calling `on_event` for every event it completes.
    pub fn feed(&mut self, chunk: &[u8], on_event: &mut impl FnMut(SseEvent<'_>)) {
        if self.pending.is_empty() {
            let used = self.parse_lines(chunk, on_event);
            self.pending.extend_from_slice(&chunk[used..]);
        } else {
            let mut buf = std::mem::take(&mut self.pending);
            buf.extend_from_slice(chunk);
            let used = self.parse_lines(&buf, on_event);
            buf.drain(..used);
            self.pending = buf;
        }
    }

    /// Ends the stream. An event whose lines all arrived but whose closing blank line did not is still
    /// dispatched (some servers end the body right after the last `data:` line); an unterminated last line is
    /// dropped, because a line cut off by a broken connection may be a truncated JSON document.
    pub fn finish(&mut self, on_event: &mut impl FnMut(SseEvent<'_>)) {
        self.pending.clear();
        self.dispatch(on_event);
    }

    /// Parses the complete lines at the start of `bytes`; returns how many bytes were consumed.
    fn parse_lines(&mut self, bytes: &[u8], on_event: &mut impl FnMut(SseEvent<'_>)) -> usize {
        let mut pos = 0;
        if self.skip_lf && !bytes.is_empty() {
            self.skip_lf = false;
            if bytes[0] == b'\n' {
                pos = 1;
            }
        }
        while let Some(offset) = find_line_end(&bytes[pos..]) {
            let end = pos + offset;
            let mut next = end + 1;
            if bytes[end] == b'\r' {
                match bytes.get(next) {
                    Some(b'\n') => next += 1,
                    Some(_) => {}
                    None => self.skip_lf = true,
                }
            }
            self.line(&bytes[pos..end], on_event);
            pos = next;
        }
        pos
    }

    fn line(&mut self, mut line: &[u8], on_event: &mut impl FnMut(SseEvent<'_>)) {
        if self.at_start {
            self.at_start = false;
            line = line.strip_prefix("\u{feff}".as_bytes()).unwrap_or(line);
        }
        if line.is_empty() {
            self.dispatch(on_event);
            return;
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(0) => return, // a comment, e.g. a keep-alive
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &b""[..]),
        };
        match field {
            b"data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.has_data = true;
                push_utf8(&mut self.data, value);
            }
            b"event" => {
                self.event.clear();
                push_utf8(&mut self.event, value);
            }
            _ => {} // id, retry and unknown fields mean nothing to a one-shot request
        }
    }

    fn dispatch(&mut self, on_event: &mut impl FnMut(SseEvent<'_>)) {
        if self.has_data {
            on_event(SseEvent { event: &self.event, data: &self.data });
        }
        self.event.clear();
        self.data.clear();
        self.has_data = false;
    }
}

fn push_utf8(out: &mut String, bytes: &[u8]) {
    match std::str::from_utf8(bytes) {
        Ok(text) => out.push_str(text),
        Err(_) => out.push_str(&String::from_utf8_lossy(bytes)),
    }
}

/// Finds the first `\n` or `\r`, eight bytes at a time: most of a stream is long `data:` lines.
fn find_line_end(bytes: &[u8]) -> Option<usize> {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    const LF: u64 = LO * b'\n' as u64;
    const CR: u64 = LO * b'\r' as u64;
    let mut words = bytes.chunks_exact(8);
    let mut base = 0;
    for word in &mut words {
        let mut array = [0u8; 8];
        array.copy_from_slice(word);
        let x = u64::from_le_bytes(array);
        let (a, b) = (x ^ LF, x ^ CR);
        // A zero byte in `a` or `b` is a match. The lowest flagged byte is always a true match.
        let found = (a.wrapping_sub(LO) & !a & HI) | (b.wrapping_sub(LO) & !b & HI);
        if found != 0 {
            return Some(base + (found.trailing_zeros() / 8) as usize);
        }
        base += 8;
    }
    words.remainder().iter().position(|&b| b == b'\n' || b == b'\r').map(|i| base + i)
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
}

/// An SSE parser and a protocol decoder together: bytes in, stream events out. Public so that benchmarks and
/// tests can decode a recorded body without a server.
#[derive(Debug)]
pub struct StreamDecoder<D> {
    parser: SseParser,
    decoder: D,
    done: bool,
}

impl<D: EventDecoder> StreamDecoder<D> {
    pub fn new(decoder: D) -> Self {
        StreamDecoder { parser: SseParser::new(), decoder, done: false }
    }

    /// Whether the decoder has seen the end of the response; later bytes are ignored.
    pub fn is_done(&self) -> bool {
        self.done
    }

    pub fn feed(&mut self, chunk: &[u8], out: &mut VecDeque<Result<StreamEvent, ProviderError>>) {
        if self.done {
            return;
        }
        let StreamDecoder { parser, decoder, done } = self;
        parser.feed(chunk, &mut |event| {
            if !*done && decoder.event(event, out) == Flow::Done {
                *done = true;
            }
        });
    }

    /// The body ended cleanly.
    pub fn finish(&mut self, out: &mut VecDeque<Result<StreamEvent, ProviderError>>) {
        if self.done {
            return;
        }
        let StreamDecoder { parser, decoder, done } = self;
        parser.finish(&mut |event| {
            if !*done && decoder.event(event, out) == Flow::Done {
                *done = true;
            }
        });
        if !self.done {
            self.done = true;
            self.decoder.end(out);
        }
    }
}

/// Decodes everything in `body` as one complete response.
pub fn decode_all<D: EventDecoder>(decoder: D, body: &[u8]) -> Vec<Result<StreamEvent, ProviderError>> {
    let mut out = VecDeque::new();
    let mut stream = StreamDecoder::new(decoder);
    stream.feed(body, &mut out);
    stream.finish(&mut out);
    out.into()
}

struct Driver<D> {
    body: futures::stream::BoxStream<'static, reqwest::Result<bytes::Bytes>>,
    decoder: StreamDecoder<D>,
    queue: VecDeque<Result<StreamEvent, ProviderError>>,
    /// Nothing more will be read from the body.
    ended: bool,
}

/// Streams a successful response's body through `decoder`. The stream ends after the first error.
pub(crate) fn event_stream<D: EventDecoder + Send + 'static>(response: reqwest::Response, decoder: D) -> EventStream {
    let driver = Driver {
        body: response.bytes_stream().boxed(),
        decoder: StreamDecoder::new(decoder),
        queue: VecDeque::new(),
        ended: false,
    };
    Box::pin(futures::stream::unfold(driver, |mut driver| async move {
        loop {
            if let Some(item) = driver.queue.pop_front() {
                if item.is_err() {
                    driver.queue.clear();
                    driver.ended = true;
                }
                return Some((item, driver));
            }
            if driver.ended || driver.decoder.is_done() {
                return None;
            }
            match driver.body.next().await {
                Some(Ok(chunk)) => driver.decoder.feed(&chunk, &mut driver.queue),
                Some(Err(err)) => {
                    driver.ended = true;
                    driver.queue.push_back(Err(super::transport::body_error(err)));
                }
                None => {
                    driver.ended = true;
                    driver.decoder.finish(&mut driver.queue);
                }
            }
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_chunks(chunks: &[&[u8]]) -> Vec<(String, String)> {
        let mut parser = SseParser::new();
        let mut events = Vec::new();
        let mut push = |e: SseEvent<'_>| events.push((e.event.to_owned(), e.data.to_owned()));
        for chunk in chunks {
            parser.feed(chunk, &mut push);
        }
        parser.finish(&mut push);
        events
    }

    fn owned(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
    }

    const SAMPLE: &str = "\u{feff}: keep-alive\r\nevent: a\r\ndata: {\"x\":1}\r\n\r\n\
        data: line1\ndata:line2\ndata\n\n\
        event: é\rdata:  two spaces\r\r\
        id: 7\nretry: 10\ndata: ünïcödé ✓\n\n\
        data\n\n\
        event: ignored-without-data\n\n\
        data: [DONE]\n\n";

    fn expected() -> Vec<(String, String)> {
        owned(&[
            ("a", "{\"x\":1}"),
            ("", "line1\nline2\n"),
            ("é", " two spaces"),
            ("", "ünïcödé ✓"),
            ("", ""),
            ("", "[DONE]"),
        ])
    }

    #[test]
    fn parses_fields_comments_and_line_endings() {
        assert_eq!(parse_chunks(&[SAMPLE.as_bytes()]), expected());
    }

    #[test]
    fn any_split_into_two_chunks_gives_the_same_events() {
        let bytes = SAMPLE.as_bytes();
        for at in 0..=bytes.len() {
            assert_eq!(parse_chunks(&[&bytes[..at], &bytes[at..]]), expected(), "split at {at}");
        }
    }

    #[test]
    fn byte_by_byte_and_random_splits_give_the_same_events() {
        let bytes = SAMPLE.as_bytes();
        let singles: Vec<&[u8]> = bytes.chunks(1).collect();
        assert_eq!(parse_chunks(&singles), expected());
        let mut rng = fastrand::Rng::with_seed(7);
        for _ in 0..200 {
            let mut chunks = Vec::new();
            let mut rest = bytes;
            while !rest.is_empty() {
                let n = rng.usize(1..=rest.len().min(9));
                chunks.push(&rest[..n]);
                rest = &rest[n..];
            }
            assert_eq!(parse_chunks(&chunks), expected());
        }
    }

    #[test]
    fn end_of_body_dispatches_complete_lines_but_drops_a_cut_line() {
        assert_eq!(parse_chunks(&[b"data: whole\n"]), owned(&[("", "whole")]));
        assert_eq!(parse_chunks(&[b"data: {\"cut"]), owned(&[]));
        assert_eq!(parse_chunks(&[b"data: a\n\ndata: {\"cut"]), owned(&[("", "a")]));
    }

    #[test]
    fn line_end_search_finds_the_first_break_at_every_offset() {
        for len in 0..40 {
            for at in 0..len {
                for byte in [b'\n', b'\r'] {
                    let mut bytes = vec![b'x'; len];
                    bytes[at] = byte;
                    if at + 3 < len {
                        bytes[at + 3] = b'\n';
                    }
                    assert_eq!(find_line_end(&bytes), Some(at), "len {len} at {at}");
                }
            }
            assert_eq!(find_line_end(&vec![0x8b; len]), None);
            assert_eq!(find_line_end(&vec![0x0b; len]), None);
        }
    }
}
