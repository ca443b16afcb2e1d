//! Streaming-response decoding throughput: each protocol's decoder on top of eventsource-stream's parser (the
//! one reqwest-eventsource runs on a live response), and the assembler folding the decoded events into a
//! message.
//!
//! The bodies are synthetic recordings shaped like real replies (a long text answer in ~20-byte deltas, then a
//! tool call whose input arrives as many small `input_json_delta` / `arguments` fragments), 2.0 and 4.4 MB,
//! fed in 16 KB pieces as a network read would deliver them, so chunk-boundary handling is included.
//!
//! Run: `cargo bench -p tandem-core --bench sse`. Prints figures; asserts nothing about time.

// Test code: a panic is how a failure is reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkGroup, Criterion, Throughput, criterion_group, criterion_main, measurement::WallTime};
use serde_json::json;
use tandem_core::provider::StreamEvent;
use tandem_core::provider::anthropic::AnthropicDecoder;
use tandem_core::provider::assemble::MessageAssembler;
use tandem_core::provider::openai::OpenAiDecoder;
use tandem_core::provider::sse::{EventDecoder, decode_chunks};

/// Size of one network read.
const CHUNK: usize = 16 * 1024;
/// Text deltas in each body: about 2.0 MB of Anthropic events, 4.4 MB of OpenAI chunks (more per delta).
const TEXT_DELTAS: usize = 12_000;
/// Lines of the file the tool call writes (its input arrives in about 1,800 fragments).
const TOOL_LINES: usize = 1_000;

/// Words text deltas are made of, including non-ASCII and characters JSON must escape.
const WORDS: &[&str] = &[
    "the",
    "function",
    "returns",
    "a",
    "`Result`",
    "so",
    "callers",
    "can",
    "handle",
    "errors",
    "—",
    "naïve",
    "“quoted”",
    "path/to/file.rs",
    "\"x\"",
    "\n",
    "\n\n",
    "✓",
    "let",
    "mut",
    "buffer",
    "=",
    "Vec::new();",
    "tab\there",
    "over",
    "line",
    "42",
    "é",
];

/// About 20 bytes of text, as one streamed token group.
fn text_piece(rng: &mut fastrand::Rng) -> String {
    let mut text = String::new();
    while text.len() < 16 + rng.usize(0..8) {
        if !text.is_empty() && !text.ends_with('\n') {
            text.push(' ');
        }
        text.push_str(WORDS[rng.usize(0..WORDS.len())]);
    }
    text
}

/// The tool call's input, a Write of a generated file, cut into fragments of 10–60 bytes of JSON text.
fn tool_input_fragments(rng: &mut fastrand::Rng) -> Vec<String> {
    let mut content = String::new();
    for i in 0..TOOL_LINES {
        content.push_str(&format!("    let value_{i} = compute(\"{}\", {i});\n", text_piece(rng)));
    }
    let input = json!({"file_path": "/home/user/project/src/generated.rs", "content": content}).to_string();
    let mut fragments = Vec::new();
    let mut rest = input.as_str();
    while !rest.is_empty() {
        let mut n = rng.usize(10..=60).min(rest.len());
        while !rest.is_char_boundary(n) {
            n += 1;
        }
        fragments.push(rest[..n].to_string());
        rest = &rest[n..];
    }
    fragments
}

fn anthropic_body() -> Vec<u8> {
    let mut rng = fastrand::Rng::with_seed(1);
    let mut out = String::new();
    let mut event = |name: &str, data: serde_json::Value| {
        out.push_str(&format!("event: {name}\ndata: {data}\n\n"));
    };
    event(
        "message_start",
        json!({"type":"message_start","message":{"id":"msg_01XFDUDYJgAACzvnptvVoYEL","type":"message",
            "role":"assistant","content":[],"model":"claude-sonnet-4-5-20250929","stop_reason":null,
            "stop_sequence":null,"usage":{"input_tokens":2519,"cache_creation_input_tokens":0,
            "cache_read_input_tokens":18230,"output_tokens":1}}}),
    );
    event(
        "content_block_start",
        json!({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}),
    );
    event("ping", json!({"type": "ping"}));
    for i in 0..TEXT_DELTAS {
        let text = text_piece(&mut rng);
        event(
            "content_block_delta",
            json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":text}}),
        );
        if i % 1000 == 999 {
            event("ping", json!({"type": "ping"}));
        }
    }
    event("content_block_stop", json!({"type":"content_block_stop","index":0}));
    event(
        "content_block_start",
        json!({"type":"content_block_start","index":1,"content_block":{"type":"tool_use",
            "id":"toolu_01T1x1fJ34qAmk2tNTrN7Up6","name":"Write","input":{}}}),
    );
    for fragment in tool_input_fragments(&mut rng) {
        event(
            "content_block_delta",
            json!({"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":fragment}}),
        );
    }
    event("content_block_stop", json!({"type":"content_block_stop","index":1}));
    event(
        "message_delta",
        json!({"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},
            "usage":{"output_tokens":31877}}),
    );
    event("message_stop", json!({"type":"message_stop"}));
    out.into_bytes()
}

fn openai_body() -> Vec<u8> {
    let mut rng = fastrand::Rng::with_seed(2);
    let mut out = String::new();
    let mut chunk = |choices: serde_json::Value| {
        let chunk = json!({"id":"chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG","object":"chat.completion.chunk",
            "created":1741569952,"model":"gpt-4.1-2025-04-14","service_tier":"default",
            "system_fingerprint":"fp_b376dfbbd5","choices":choices});
        out.push_str(&format!("data: {chunk}\n\n"));
    };
    let delta = |delta: serde_json::Value, finish: Option<&str>| json!([{"index":0,"delta":delta,"logprobs":null,"finish_reason":finish}]);
    chunk(delta(json!({"role":"assistant","content":"","refusal":null}), None));
    for _ in 0..TEXT_DELTAS {
        chunk(delta(json!({"content": text_piece(&mut rng)}), None));
    }
    chunk(delta(
        json!({"tool_calls":[{"index":0,"id":"call_DdmO9pD3xa9XTPNJ32zg2hcA","type":"function",
            "function":{"name":"Write","arguments":""}}]}),
        None,
    ));
    for fragment in tool_input_fragments(&mut rng) {
        chunk(delta(json!({"tool_calls":[{"index":0,"function":{"arguments":fragment}}]}), None));
    }
    chunk(delta(json!({}), Some("tool_calls")));
    let usage = json!({"id":"chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG","object":"chat.completion.chunk",
        "created":1741569952,"model":"gpt-4.1-2025-04-14","choices":[],
        "usage":{"prompt_tokens":20749,"completion_tokens":31877,"total_tokens":52626,
            "prompt_tokens_details":{"cached_tokens":18230}}});
    out.push_str(&format!("data: {usage}\n\ndata: [DONE]\n\n"));
    out.into_bytes()
}

/// Frames `body` (in network-sized chunks) with eventsource-stream alone; returns the number of events and data
/// bytes seen.
fn parse(body: &[u8]) -> (usize, usize) {
    use eventsource_stream::Eventsource;
    use futures::StreamExt;
    let chunks =
        body.chunks(CHUNK).map(|chunk| Ok::<_, std::convert::Infallible>(bytes::Bytes::copy_from_slice(chunk)));
    let mut events = futures::stream::iter(chunks).eventsource();
    futures::executor::block_on(async {
        let (mut count, mut data) = (0, 0);
        while let Some(event) = events.next().await {
            count += 1;
            data += event.expect("the recorded body parses").data.len();
        }
        (count, data)
    })
}

/// Decodes `body` in network-sized chunks through the same parser and driver as a live response.
fn decode_chunked<D: EventDecoder + Send + 'static>(decoder: D, body: &[u8]) -> Vec<StreamEvent> {
    decode_chunks(decoder, body.chunks(CHUNK)).into_iter().map(|e| e.expect("the recorded body decodes")).collect()
}

/// Decodes and assembles: the whole path from body bytes to the assistant message.
fn decode_and_assemble<D: EventDecoder + Send + 'static>(decoder: D, body: &[u8]) -> usize {
    assemble(&decode_chunked(decoder, body))
}

fn assemble(events: &[StreamEvent]) -> usize {
    let mut assembler = MessageAssembler::new();
    for event in events {
        assembler.push(event).expect("the events assemble");
    }
    assembler.finish().message.content.len()
}

/// Decodes the whole body once, checking it is a complete, valid response (a broken generator would make the
/// figures meaningless).
fn decoded<D: EventDecoder + Send + 'static>(decoder: D, body: &[u8]) -> Vec<StreamEvent> {
    let events = decode_chunked(decoder, body);
    assert!(matches!(events.last(), Some(StreamEvent::MessageStop)));
    assert_eq!(assemble(&events), 2, "a text block and a tool call");
    events
}

fn configure(group: &mut BenchmarkGroup<'_, WallTime>) {
    group.sample_size(20).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(3));
}

fn bench_sse(c: &mut Criterion) {
    let bodies = [("anthropic", anthropic_body()), ("openai", openai_body())];
    let anthropic_events = decoded(AnthropicDecoder::new(), &bodies[0].1);
    let openai_events = decoded(OpenAiDecoder::new(), &bodies[1].1);
    for (name, body) in &bodies {
        let (events, data) = parse(body);
        eprintln!("{name} body: {} bytes, {events} SSE events, {data} bytes of data", body.len());
    }

    let mut group = c.benchmark_group("sse_parser");
    configure(&mut group);
    for (name, body) in &bodies {
        group.throughput(Throughput::Bytes(body.len() as u64));
        group.bench_function(*name, |b| b.iter(|| parse(black_box(body))));
    }
    group.finish();

    let mut group = c.benchmark_group("sse_decode_16k_chunks");
    configure(&mut group);
    let (anthropic, openai) = (&bodies[0].1, &bodies[1].1);
    group.throughput(Throughput::Bytes(anthropic.len() as u64));
    group.bench_function("anthropic", |b| {
        b.iter(|| decode_chunked(AnthropicDecoder::new(), black_box(anthropic)).len())
    });
    group.throughput(Throughput::Bytes(openai.len() as u64));
    group.bench_function("openai", |b| b.iter(|| decode_chunked(OpenAiDecoder::new(), black_box(openai)).len()));
    group.finish();

    let mut group = c.benchmark_group("sse_decode_and_assemble");
    configure(&mut group);
    group.throughput(Throughput::Bytes(anthropic.len() as u64));
    group
        .bench_function("anthropic", |b| b.iter(|| decode_and_assemble(AnthropicDecoder::new(), black_box(anthropic))));
    group.throughput(Throughput::Bytes(openai.len() as u64));
    group.bench_function("openai", |b| b.iter(|| decode_and_assemble(OpenAiDecoder::new(), black_box(openai))));
    group.finish();

    let mut group = c.benchmark_group("assemble");
    configure(&mut group);
    for (name, events) in [("anthropic", &anthropic_events), ("openai", &openai_events)] {
        group.throughput(Throughput::Elements(events.len() as u64));
        group.bench_function(name, |b| b.iter(|| assemble(black_box(events))));
    }
    group.finish();
}

criterion_group!(benches, bench_sse);
criterion_main!(benches);
