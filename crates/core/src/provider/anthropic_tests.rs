use serde_json::json;

use super::*;
use crate::provider::SystemBlock;
use crate::provider::assemble::MessageAssembler;
use crate::provider::sse::decode_all;

fn request(messages: Vec<Message>) -> ModelRequest {
    ModelRequest {
        model: "claude-test".into(),
        system: vec![
            SystemBlock { text: "base prompt".into(), cache: false },
            SystemBlock { text: "project docs".into(), cache: true },
        ],
        messages,
        tools: vec![ToolSpec {
            name: "Read".into(),
            description: "Reads a file".into(),
            input_schema: json!({"type":"object","properties":{"file_path":{"type":"string"}},"required":["file_path"]}),
        }],
        max_tokens: 1024,
        reasoning: Default::default(),
        betas: Vec::new(),
    }
}

fn body_json(request: &ModelRequest) -> Value {
    serde_json::from_slice(&request_body(request).unwrap()).unwrap()
}

fn conversation(turns: usize) -> Vec<Message> {
    let mut messages = vec![Message::user_text("read a")];
    for turn in 0..turns {
        let id = format!("toolu_{turn}");
        messages.push(Message {
            role: Role::Assistant,
            content: vec![
                ContentBlock::Thinking { thinking: "hmm".into(), signature: "sig".into() },
                ContentBlock::text("Reading."),
                ContentBlock::ToolUse {
                    id: id.clone(),
                    name: "Read".into(),
                    input: json!({"file_path":"a","limit":2}).into(),
                },
            ],
        });
        messages.push(Message {
            role: Role::User,
            content: vec![ContentBlock::ToolResult { tool_use_id: id, content: "1\tx".into(), is_error: turn == 1 }],
        });
    }
    messages
}

#[test]
fn body_has_the_documented_shape() {
    let mut req = request(conversation(1));
    req.reasoning.thinking = Some(crate::reasoning::ThinkingParam::Enabled { budget_tokens: 2048 });
    let body = body_json(&req);
    assert_eq!(
        body,
        json!({
            "model": "claude-test",
            "max_tokens": 1024,
            "system": [
                {"type":"text","text":"base prompt"},
                {"type":"text","text":"project docs","cache_control":{"type":"ephemeral"}}
            ],
            "messages": [
                {"role":"user","content":[{"type":"text","text":"read a"}]},
                {"role":"assistant","content":[
                    {"type":"thinking","thinking":"hmm","signature":"sig"},
                    {"type":"text","text":"Reading."},
                    {"type":"tool_use","id":"toolu_0","name":"Read","input":{"file_path":"a","limit":2}}
                ]},
                {"role":"user","content":[
                    {"type":"tool_result","tool_use_id":"toolu_0","content":"1\tx","cache_control":{"type":"ephemeral"}}
                ]}
            ],
            "tools": [{"name":"Read","description":"Reads a file","input_schema":
                {"type":"object","properties":{"file_path":{"type":"string"}},"required":["file_path"]}}],
            "thinking": {"type":"enabled","budget_tokens":2048},
            "stream": true
        })
    );
}

#[test]
fn empty_system_and_tools_are_left_out() {
    let mut req = request(vec![Message::user_text("hi")]);
    req.system.clear();
    req.tools.clear();
    let body = body_json(&req);
    assert!(body.get("system").is_none() && body.get("tools").is_none() && body.get("thinking").is_none());
    assert_eq!(body["messages"][0]["content"][0]["cache_control"], json!({"type":"ephemeral"}));
}

#[test]
fn at_most_four_breakpoints_the_last_system_ones_kept() {
    let mut req = request(vec![Message::user_text("hi")]);
    req.system = (0..6).map(|i| SystemBlock { text: format!("s{i}"), cache: true }).collect();
    let text = String::from_utf8(request_body(&req).unwrap()).unwrap();
    assert_eq!(text.matches("cache_control").count(), 4);
    let body: Value = serde_json::from_str(&text).unwrap();
    let flagged: Vec<bool> =
        body["system"].as_array().unwrap().iter().map(|b| b.get("cache_control").is_some()).collect();
    assert_eq!(flagged, [false, false, false, true, true, true]);
}

#[test]
fn breakpoint_skips_blocks_that_cannot_carry_one() {
    let messages = vec![
        Message::user_text("hi"),
        Message {
            role: Role::Assistant,
            content: vec![
                ContentBlock::text("prefill"),
                ContentBlock::text(""),
                ContentBlock::Thinking { thinking: "t".into(), signature: "s".into() },
            ],
        },
    ];
    let body = body_json(&request(messages));
    let content = &body["messages"][1]["content"];
    assert!(content[0].get("cache_control").is_some());
    assert!(content[1].get("cache_control").is_none() && content[2].get("cache_control").is_none());
    assert!(body["messages"][0]["content"][0].get("cache_control").is_none());
}

#[test]
fn a_growing_conversation_keeps_a_byte_identical_prefix() {
    let first = request_body(&request(conversation(1))).unwrap();
    let again = request_body(&request(conversation(1))).unwrap();
    assert_eq!(first, again, "serialization must be deterministic");
    let second = request_body(&request(conversation(3))).unwrap();
    // Everything up to the first request's breakpoint (its last block, before the marker) must be unchanged.
    let marker = br#","cache_control":{"type":"ephemeral"}}]}]"#;
    let at = first.windows(marker.len()).position(|w| w == marker).unwrap();
    assert_eq!(first[..at], second[..at]);
}

const STREAM: &str = concat!(
    "event: message_start\n",
    r#"data: {"type":"message_start","message":{"id":"msg_01","type":"message","role":"assistant","model":"claude-test","content":[],"stop_reason":null,"usage":{"input_tokens":12,"output_tokens":1,"cache_creation_input_tokens":100,"cache_read_input_tokens":2000}}}"#,
    "\n\n",
    "event: ping\ndata: {\"type\":\"ping\"}\n\n",
    "event: content_block_start\n",
    r#"data: {"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}"#,
    "\n\n",
    "event: content_block_delta\n",
    r#"data: {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Let me see ✓"}}"#,
    "\n\n",
    "event: content_block_delta\n",
    r#"data: {"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQB=="}}"#,
    "\n\n",
    "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
    "event: content_block_start\r\n",
    r#"data: {"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}"#,
    "\r\n\r\n",
    "event: content_block_delta\n",
    r#"data: {"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"I'll read\nit."}}"#,
    "\n\n",
    "event: future_event\ndata: {\"type\":\"future_event\",\"x\":1}\n\n",
    "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}\n\n",
    "event: content_block_start\n",
    r#"data: {"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_1","name":"Read","input":{}}}"#,
    "\n\n",
    "event: content_block_delta\n",
    r#"data: {"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":""}}"#,
    "\n\n",
    "event: content_block_delta\n",
    r#"data: {"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"file_path\": \"/tmp/a"}}"#,
    "\n\n",
    "event: content_block_delta\n",
    r#"data: {"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":".txt\"}"}}"#,
    "\n\n",
    ": a comment\n",
    "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":2}\n\n",
    "event: message_delta\n",
    r#"data: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":87}}"#,
    "\n\n",
    "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
);

fn expected_usage() -> Usage {
    Usage { input_tokens: 12, output_tokens: 87, cache_creation_input_tokens: 100, cache_read_input_tokens: 2000 }
}

fn expected_events() -> Vec<StreamEvent> {
    let start_usage = Usage { output_tokens: 1, ..expected_usage() };
    vec![
        StreamEvent::MessageStart { id: "msg_01".into(), model: "claude-test".into(), usage: start_usage },
        StreamEvent::BlockStart { index: 0, block: BlockStart::Thinking },
        StreamEvent::ThinkingDelta { index: 0, thinking: "Let me see ✓".into() },
        StreamEvent::SignatureDelta { index: 0, signature: "EqQB==".into() },
        StreamEvent::BlockStop { index: 0 },
        StreamEvent::BlockStart { index: 1, block: BlockStart::Text },
        StreamEvent::TextDelta { index: 1, text: "I'll read\nit.".into() },
        StreamEvent::BlockStop { index: 1 },
        StreamEvent::BlockStart { index: 2, block: BlockStart::ToolUse { id: "toolu_1".into(), name: "Read".into() } },
        StreamEvent::ToolInputDelta { index: 2, partial_json: String::new() },
        StreamEvent::ToolInputDelta { index: 2, partial_json: "{\"file_path\": \"/tmp/a".into() },
        StreamEvent::ToolInputDelta { index: 2, partial_json: ".txt\"}".into() },
        StreamEvent::BlockStop { index: 2 },
        StreamEvent::MessageDelta { stop_reason: Some(StopReason::ToolUse), usage: expected_usage() },
        StreamEvent::MessageStop,
    ]
}

fn decode_chunks(chunks: &[&[u8]]) -> Vec<Result<StreamEvent, ProviderError>> {
    sse::decode_chunks(AnthropicDecoder::new(), chunks.iter().copied())
}

fn ok(events: Vec<Result<StreamEvent, ProviderError>>) -> Vec<StreamEvent> {
    events.into_iter().map(|e| e.unwrap()).collect()
}

#[test]
fn recorded_stream_decodes_at_every_split_point() {
    let bytes = STREAM.as_bytes();
    assert_eq!(ok(decode_all(AnthropicDecoder::new(), bytes)), expected_events());
    for at in 0..=bytes.len() {
        assert_eq!(ok(decode_chunks(&[&bytes[..at], &bytes[at..]])), expected_events(), "split at {at}");
    }
    let mut rng = fastrand::Rng::with_seed(42);
    for _ in 0..50 {
        let (a, b) = (rng.usize(0..=bytes.len()), rng.usize(0..=bytes.len()));
        let (a, b) = (a.min(b), a.max(b));
        assert_eq!(ok(decode_chunks(&[&bytes[..a], &bytes[a..b], &bytes[b..]])), expected_events());
    }
}

#[test]
fn recorded_stream_assembles_into_a_message() {
    let mut assembler = MessageAssembler::new();
    for event in expected_events() {
        assembler.push(&event).unwrap();
    }
    let done = assembler.finish();
    assert!(done.invalid_tool_inputs.is_empty());
    assert_eq!(done.message.usage, expected_usage());
    assert_eq!(done.message.content.len(), 3);
    assert_eq!(
        done.message.content[2],
        ContentBlock::ToolUse {
            id: "toolu_1".into(),
            name: "Read".into(),
            input: json!({"file_path":"/tmp/a.txt"}).into()
        }
    );
}

#[test]
fn events_without_names_are_recognised_by_their_type() {
    let body = STREAM.lines().filter(|l| !l.starts_with("event:")).collect::<Vec<_>>().join("\n") + "\n\n";
    assert_eq!(ok(decode_all(AnthropicDecoder::new(), body.as_bytes())), expected_events());
}

#[test]
fn message_delta_with_full_usage_overwrites() {
    let body = concat!(
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"model\":\"x\",\"usage\":{\"input_tokens\":5,\"output_tokens\":1,\"cache_read_input_tokens\":null}}}\n\n",
        "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"input_tokens\":6,\"output_tokens\":9,\"cache_read_input_tokens\":3}}\n\n",
        "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
        "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
    );
    let events = ok(decode_all(AnthropicDecoder::new(), body.as_bytes()));
    assert_eq!(events.len(), 3, "nothing after message_stop: {events:?}");
    assert_eq!(
        events[1],
        StreamEvent::MessageDelta {
            stop_reason: Some(StopReason::EndTurn),
            usage: Usage { input_tokens: 6, output_tokens: 9, cache_read_input_tokens: 3, ..Usage::default() },
        }
    );
}

#[test]
fn unknown_block_types_are_skipped_with_their_deltas() {
    let body = concat!(
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"server_tool_use\",\"id\":\"s\",\"name\":\"web_search\"}}\n\n",
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{}\"}}\n\n",
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"text\",\"text\":\"pre\"}}\n\n",
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"citations_delta\",\"citation\":{}}}\n\n",
        "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
    );
    assert_eq!(
        ok(decode_all(AnthropicDecoder::new(), body.as_bytes())),
        vec![
            StreamEvent::BlockStart { index: 1, block: BlockStart::Text },
            StreamEvent::TextDelta { index: 1, text: "pre".into() },
            StreamEvent::MessageStop,
        ]
    );
}

#[test]
fn error_event_ends_the_stream_with_a_stream_error() {
    let body = concat!(
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"model\":\"x\"}}\n\n",
        "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n",
        "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
    );
    let events = decode_all(AnthropicDecoder::new(), body.as_bytes());
    assert_eq!(events.len(), 2);
    match &events[1] {
        Err(ProviderError::StreamError { error_type, message }) => {
            assert_eq!((error_type.as_str(), message.as_str()), ("overloaded_error", "Overloaded"));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn unparseable_data_is_malformed_and_names_the_event() {
    let body = "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_del\n\n";
    let events = decode_all(AnthropicDecoder::new(), body.as_bytes());
    match &events[..] {
        [Err(ProviderError::Malformed { message })] => {
            assert!(message.contains("content_block_delta") && message.contains("text_del"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    let events = decode_all(AnthropicDecoder::new(), b"data: not json\n\n");
    assert!(matches!(&events[..], [Err(ProviderError::Malformed { .. })]), "{events:?}");
}

#[test]
fn stream_ending_early_is_a_disconnect() {
    let cut = &STREAM[..STREAM.find("event: message_delta").unwrap()];
    let events = decode_all(AnthropicDecoder::new(), cut.as_bytes());
    assert!(matches!(events.last(), Some(Err(ProviderError::Disconnected { .. }))), "{events:?}");
    assert_eq!(events.iter().filter(|e| e.is_err()).count(), 1);
    // A body cut in the middle of a line is a disconnect too, not a malformed event.
    let cut = &STREAM[..STREAM.find("\"I'll read").unwrap()];
    let events = decode_all(AnthropicDecoder::new(), cut.as_bytes());
    assert!(matches!(events.last(), Some(Err(ProviderError::Disconnected { .. }))), "{events:?}");
}

#[test]
fn key_goes_only_into_a_sensitive_header() {
    let provider = AnthropicProvider::new(Endpoint {
        name: "anthropic".into(),
        kind: crate::provider::ProviderKind::Anthropic,
        base_url: "http://127.0.0.1:9/".into(),
        api_key: Some(crate::provider::ApiKey::new("sk-secret")),
        api_key_env: Some("ANTHROPIC_API_KEY".into()),
    });
    assert_eq!(provider.url(), "http://127.0.0.1:9/v1/messages");
    let headers = request_headers(provider.endpoint(), provider.url()).unwrap();
    assert!(headers["x-api-key"].is_sensitive());
    assert_eq!(headers["anthropic-version"], API_VERSION);
    assert!(!format!("{headers:?}").contains("sk-secret"));
    // What the inspector records of the same request.
    let wire = provider.wire(&crate::provider::ModelRequest {
        model: "m".into(),
        system: Vec::new(),
        messages: Vec::new(),
        tools: Vec::new(),
        max_tokens: 1,
        reasoning: Default::default(),
        betas: vec!["extra-beta".into()],
    });
    let wire = wire.unwrap();
    assert!(wire.headers.contains(&("x-api-key".into(), "[redacted]".into())), "{:?}", wire.headers);
    assert!(wire.headers.contains(&("anthropic-beta".into(), "extra-beta".into())), "{:?}", wire.headers);
    assert!(!format!("{wire:?}").contains("sk-secret"));
}

/// Found from the outside: a server (or proxy) that answered 200 with a JSON document instead of a stream ended
/// the run at once, where Claude Code retried and finished.
#[test]
fn a_whole_message_document_is_the_answer_and_an_error_document_the_streams_error() {
    let message = json!({"id": "msg_01", "type": "message", "role": "assistant", "model": "claude-test",
        "content": [
            {"type": "thinking", "thinking": "Let me see ✓", "signature": "EqQB=="},
            {"type": "text", "text": "I'll read\nit."},
            {"type": "server_tool_use", "id": "s", "name": "web_search", "input": {}},
            {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "/tmp/a.txt"}}],
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 12, "output_tokens": 87, "cache_creation_input_tokens": 100,
                  "cache_read_input_tokens": 2000}});
    let events = ok(sse::decode_document(AnthropicDecoder::new(), message.to_string().as_bytes()));
    let mut assembler = MessageAssembler::new();
    for event in &events {
        assembler.push(event).unwrap();
    }
    let done = assembler.finish();
    assert_eq!(done.message.usage, expected_usage());
    assert_eq!(done.message.stop_reason, Some(StopReason::ToolUse));
    assert_eq!(done.message.content.len(), 3, "{:?}", done.message.content);
    assert_eq!(
        done.message.content[2],
        ContentBlock::ToolUse {
            id: "toolu_1".into(),
            name: "Read".into(),
            input: json!({"file_path":"/tmp/a.txt"}).into()
        }
    );

    let overloaded = r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
    match &sse::decode_document(AnthropicDecoder::new(), overloaded.as_bytes())[..] {
        [Err(ProviderError::StreamError { error_type, .. })] => assert_eq!(error_type, "overloaded_error"),
        other => panic!("{other:?}"),
    }
    for garbage in ["{\"type\":\"error\"}", "not json", "{\"type\":\"completion\"}", "[1]"] {
        let events = sse::decode_document(AnthropicDecoder::new(), garbage.as_bytes());
        assert!(matches!(&events[..], [Err(ProviderError::Malformed { .. })]), "{garbage}: {events:?}");
    }
}

#[test]
fn an_error_event_without_an_error_object_is_a_malformed_stream() {
    let body = "event: error\ndata: {\"type\":\"error\"}\n\n";
    let events = decode_all(AnthropicDecoder::new(), body.as_bytes());
    assert!(matches!(&events[..], [Err(ProviderError::Malformed { .. })]), "{events:?}");
}
