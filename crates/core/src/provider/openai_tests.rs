use serde_json::json;

use super::*;
use crate::conversation::{StopReason, Usage};
use crate::provider::assemble::{Assembled, MessageAssembler};
use crate::provider::sse::{decode_all, decode_chunks};
use crate::provider::{BlockStart, StreamEvent, SystemBlock, ToolSpec};

fn request() -> ModelRequest {
    ModelRequest {
        model: "qwen".into(),
        system: vec![
            SystemBlock { text: "base".into(), cache: false },
            SystemBlock { text: "docs".into(), cache: true },
        ],
        messages: vec![
            Message::user_text("weather?"),
            Message {
                role: Role::Assistant,
                content: vec![
                    ContentBlock::Thinking { thinking: "hidden".into(), signature: "s".into() },
                    ContentBlock::text("Checking."),
                    ContentBlock::ToolUse {
                        id: "call_1".into(),
                        name: "get_weather".into(),
                        input: json!({"city":"Oslo"}).into(),
                    },
                    ContentBlock::ToolUse { id: "call_2".into(), name: "get_weather".into(), input: json!({}).into() },
                ],
            },
            Message {
                role: Role::User,
                content: vec![
                    ContentBlock::ToolResult { tool_use_id: "call_1".into(), content: "-3C".into(), is_error: false },
                    ContentBlock::ToolResult {
                        tool_use_id: "call_2".into(),
                        content: "city required".into(),
                        is_error: true,
                    },
                    ContentBlock::text("and tomorrow?"),
                ],
            },
            Message {
                role: Role::Assistant,
                content: vec![ContentBlock::ToolUse {
                    id: "call_3".into(),
                    name: "get_weather".into(),
                    input: json!({"city":"Oslo"}).into(),
                }],
            },
        ],
        tools: vec![ToolSpec {
            name: "get_weather".into(),
            description: "Weather".into(),
            input_schema: json!({"type":"object","properties":{"city":{"type":"string"}}}),
        }],
        max_tokens: 512,
        reasoning: crate::reasoning::RequestReasoning { reasoning_effort: Some("low"), ..Default::default() },
        betas: Vec::new(),
    }
}

#[test]
fn body_has_the_documented_shape() {
    let body: Value = serde_json::from_slice(&request_body(&request(), false).unwrap()).unwrap();
    assert_eq!(
        body,
        json!({
            "model": "qwen",
            "messages": [
                {"role":"system","content":"base\n\ndocs"},
                {"role":"user","content":"weather?"},
                {"role":"assistant","content":"Checking.","tool_calls":[
                    {"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Oslo\"}"}},
                    {"id":"call_2","type":"function","function":{"name":"get_weather","arguments":"{}"}}
                ]},
                {"role":"tool","tool_call_id":"call_1","content":"-3C"},
                {"role":"tool","tool_call_id":"call_2","content":"Error: city required"},
                {"role":"user","content":"and tomorrow?"},
                {"role":"assistant","content":null,"tool_calls":[
                    {"id":"call_3","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Oslo\"}"}}
                ]}
            ],
            "tools": [{"type":"function","function":{"name":"get_weather","description":"Weather",
                "parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}],
            "max_tokens": 512,
            "reasoning_effort": "low",
            "stream": true,
            "stream_options": {"include_usage": true}
        })
    );
    let body: Value = serde_json::from_slice(&request_body(&request(), true).unwrap()).unwrap();
    assert_eq!(body["max_completion_tokens"], 512);
    assert!(body.get("max_tokens").is_none());
    assert!(uses_max_completion_tokens("https://api.openai.com/v1"));
    assert!(!uses_max_completion_tokens("http://127.0.0.1:11434/v1"));
}

#[test]
fn thinking_only_assistant_message_gets_empty_content() {
    let mut req = request();
    req.system.clear();
    req.tools.clear();
    req.messages = vec![Message {
        role: Role::Assistant,
        content: vec![ContentBlock::Thinking { thinking: "t".into(), signature: String::new() }],
    }];
    let body: Value = serde_json::from_slice(&request_body(&req, false).unwrap()).unwrap();
    assert_eq!(body["messages"], json!([{"role":"assistant","content":""}]));
    assert!(body.get("tools").is_none());
}

fn sse(chunks: &[Value], done: bool) -> String {
    let mut out: String = chunks.iter().map(|c| format!("data: {c}\n\n")).collect();
    if done {
        out.push_str("data: [DONE]\n\n");
    }
    out
}

fn chunk(delta: Value, finish: Option<&str>) -> Value {
    json!({"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"qwen",
           "choices":[{"index":0,"delta":delta,"finish_reason":finish}]})
}

fn decode(body: &str) -> Vec<Result<StreamEvent, ProviderError>> {
    decode_all(OpenAiDecoder::new(), body.as_bytes())
}

fn ok(events: Vec<Result<StreamEvent, ProviderError>>) -> Vec<StreamEvent> {
    events.into_iter().map(|e| e.unwrap()).collect()
}

/// (id, name, input) of each tool call.
fn calls(message: &crate::conversation::AssistantMessage) -> Vec<(&str, &str, Value)> {
    message
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::ToolUse { id, name, input } => Some((id.as_str(), name.as_str(), (**input).clone())),
            _ => None,
        })
        .collect()
}

fn assemble(events: &[StreamEvent]) -> Assembled {
    let mut assembler = MessageAssembler::new();
    for event in events {
        assembler.push(event).unwrap();
    }
    assert!(assembler.is_complete());
    assembler.finish()
}

fn openai_stream() -> String {
    let mut body = sse(
        &[
            chunk(json!({"role":"assistant","content":""}), None),
            chunk(json!({"content":"Let me "}), None),
            chunk(json!({"content":"check."}), None),
            chunk(
                json!({"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"get_weather","arguments":""}}]}),
                None,
            ),
            chunk(json!({"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":"}}]}), None),
            chunk(json!({"tool_calls":[{"index":0,"function":{"arguments":"\"Oslo\"}"}}]}), None),
            chunk(
                json!({"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"get_time","arguments":"{}"}}]}),
                None,
            ),
            chunk(json!({}), Some("tool_calls")),
            json!({"id":"chatcmpl-1","object":"chat.completion.chunk","model":"qwen","choices":[],
                   "usage":{"prompt_tokens":100,"completion_tokens":20,"total_tokens":120,"prompt_tokens_details":{"cached_tokens":60}}}),
        ],
        true,
    );
    body.insert_str(0, ": OPENROUTER PROCESSING\r\n\r\n");
    body
}

fn openai_expected() -> Vec<StreamEvent> {
    let tool = |id: &str, name: &str| BlockStart::ToolUse { id: id.into(), name: name.into() };
    vec![
        StreamEvent::MessageStart { id: "chatcmpl-1".into(), model: "qwen".into(), usage: Usage::default() },
        StreamEvent::BlockStart { index: 0, block: BlockStart::Text },
        StreamEvent::TextDelta { index: 0, text: "Let me ".into() },
        StreamEvent::TextDelta { index: 0, text: "check.".into() },
        StreamEvent::BlockStart { index: 1, block: tool("call_a", "get_weather") },
        StreamEvent::ToolInputDelta { index: 1, partial_json: "{\"city\":".into() },
        StreamEvent::ToolInputDelta { index: 1, partial_json: "\"Oslo\"}".into() },
        StreamEvent::BlockStart { index: 2, block: tool("call_b", "get_time") },
        StreamEvent::ToolInputDelta { index: 2, partial_json: "{}".into() },
        StreamEvent::BlockStop { index: 0 },
        StreamEvent::BlockStop { index: 1 },
        StreamEvent::BlockStop { index: 2 },
        StreamEvent::MessageDelta {
            stop_reason: Some(StopReason::ToolUse),
            usage: Usage { input_tokens: 40, output_tokens: 20, cache_read_input_tokens: 60, ..Usage::default() },
        },
        StreamEvent::MessageStop,
    ]
}

#[test]
fn standard_stream_decodes_at_every_split_point() {
    let body = openai_stream();
    let bytes = body.as_bytes();
    assert_eq!(ok(decode(&body)), openai_expected());
    for at in 0..=bytes.len() {
        let events = decode_chunks(OpenAiDecoder::new(), [&bytes[..at], &bytes[at..]]);
        assert_eq!(ok(events), openai_expected(), "split at {at}");
    }
    let message = assemble(&openai_expected()).message;
    assert_eq!(message.to_message().text(), "Let me check.");
    assert_eq!(calls(&message), [("call_a", "get_weather", json!({"city":"Oslo"})), ("call_b", "get_time", json!({}))]);
}

#[test]
fn llama_cpp_null_first_chunk_and_usage_with_timings() {
    let body = sse(
        &[
            chunk(json!({"role":"assistant","content":null}), None),
            chunk(json!({"content":"Hi"}), None),
            chunk(json!({}), Some("stop")),
            json!({"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":1,"total_tokens":6},"timings":{"predicted_ms":1.5}}),
        ],
        true,
    );
    let events = ok(decode(&body));
    let message = assemble(&events).message;
    assert_eq!(message.to_message().text(), "Hi");
    assert_eq!(message.stop_reason, Some(StopReason::EndTurn));
    assert_eq!(message.usage, Usage { input_tokens: 5, output_tokens: 1, ..Usage::default() });
}

#[test]
fn error_object_after_a_200_is_a_stream_error() {
    let body = sse(
        &[
            chunk(json!({"content":"partial"}), None),
            json!({"error":{"code":500,"message":"context overflow","type":"server_error"}}),
        ],
        false,
    );
    let events = decode(&body);
    match events.last() {
        Some(Err(ProviderError::StreamError { error_type, message })) => {
            assert_eq!((error_type.as_str(), message.as_str()), ("server_error", "context overflow"));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(events.iter().filter(|e| e.is_err()).count(), 1);
    let events = decode("event: error\ndata: {\"error\":{\"message\":\"oops\",\"code\":\"rate_limited\"}}\n\n");
    assert!(
        matches!(&events[..], [Err(ProviderError::StreamError { error_type, .. })] if error_type == "rate_limited")
    );
}

#[test]
fn llama_cpp_python_repeated_ids_and_names_are_not_doubled() {
    let frag = |args: &str| {
        chunk(
            json!({"tool_calls":[{"index":0,"id":"call_x","type":"function","function":{"name":"get_weather","arguments":args}}]}),
            None,
        )
    };
    let body = sse(&[frag("{\"ci"), frag("ty\": \"Os"), frag("lo\"}"), chunk(json!({}), Some("tool_calls"))], true);
    let done = assemble(&ok(decode(&body)));
    assert_eq!(calls(&done.message), [("call_x", "get_weather", json!({"city":"Oslo"}))]);
    assert_eq!(done.message.usage, Usage::default(), "no usage chunk: zeros");
}

#[test]
fn name_sent_in_pieces_is_joined_before_the_block_starts() {
    let body = sse(
        &[
            chunk(json!({"tool_calls":[{"index":0,"id":"c","function":{"name":"get_"}}]}), None),
            chunk(json!({"tool_calls":[{"index":0,"function":{"name":"weather"}}]}), None),
            chunk(json!({"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]}), None),
        ],
        true,
    );
    let events = ok(decode(&body));
    assert!(events.contains(&StreamEvent::BlockStart {
        index: 0,
        block: BlockStart::ToolUse { id: "c".into(), name: "get_weather".into() }
    }));
    assert_eq!(assemble(&events).message.stop_reason, Some(StopReason::ToolUse));
}

#[test]
fn whole_calls_and_several_fragments_in_one_chunk_and_missing_ids() {
    let body = sse(
        &[
            chunk(
                json!({"tool_calls":[
                    {"index":0,"id":"call_1","type":"function","function":{"name":"Read","arguments":"{\"file_path\":\"a\"}"}},
                    {"index":1,"id":"call_2","type":"function","function":{"name":"Grep","arguments":"{\"pat"}}
                ]}),
                None,
            ),
            chunk(json!({"tool_calls":[{"index":1,"function":{"arguments":"tern\":\"x\"}"}}]}), None),
            chunk(json!({"tool_calls":[{"index":2,"function":{"name":"Glob","arguments":{"pattern":"*.rs"}}}]}), None),
            chunk(json!({}), Some("tool_calls")),
        ],
        false,
    );
    let done = assemble(&ok(decode(&body)));
    assert!(done.invalid_tool_inputs.is_empty());
    let calls = calls(&done.message);
    assert_eq!(calls[..2], [("call_1", "Read", json!({"file_path":"a"})), ("call_2", "Grep", json!({"pattern":"x"}))]);
    assert!(calls[2].0.starts_with("call_"), "an id is made up when the server sends none");
    assert_eq!((calls[2].1, &calls[2].2), ("Glob", &json!({"pattern":"*.rs"})));
}

#[test]
fn fragments_without_index_are_merged_by_id() {
    let body = sse(
        &[
            chunk(json!({"tool_calls":[{"id":"a","function":{"name":"Read","arguments":"{\"file_path\":"}}]}), None),
            chunk(json!({"tool_calls":[{"function":{"arguments":"\"x\"}"}}]}), None),
            chunk(json!({"tool_calls":[{"id":"b","function":{"name":"Read","arguments":"{}"}}]}), None),
            chunk(json!({}), Some("tool_calls")),
        ],
        true,
    );
    let done = assemble(&ok(decode(&body)));
    assert_eq!(calls(&done.message), [("a", "Read", json!({"file_path":"x"})), ("b", "Read", json!({}))]);
}

#[test]
fn finish_reasons_map_and_usage_may_ride_on_a_choice() {
    for (reason, expected) in [
        ("length", StopReason::MaxTokens),
        ("content_filter", StopReason::Refusal),
        ("stop", StopReason::EndTurn),
        ("eos", StopReason::Other("eos".into())),
    ] {
        let mut last = chunk(json!({}), Some(reason));
        last["choices"][0]["usage"] = json!({"prompt_tokens":7,"completion_tokens":3});
        let body = sse(&[chunk(json!({"content":"x"}), None), last], true);
        let message = assemble(&ok(decode(&body))).message;
        assert_eq!(message.stop_reason, Some(expected));
        assert_eq!(message.usage.output_tokens, 3);
    }
}

#[test]
fn reasoning_content_becomes_a_thinking_block() {
    let body = sse(
        &[
            chunk(json!({"reasoning_content":"hmm"}), None),
            chunk(json!({"content":"answer"}), None),
            chunk(json!({}), Some("stop")),
        ],
        true,
    );
    let message = assemble(&ok(decode(&body))).message;
    assert_eq!(
        message.content,
        vec![ContentBlock::Thinking { thinking: "hmm".into(), signature: String::new() }, ContentBlock::text("answer")]
    );
}

#[test]
fn ending_without_done_is_fine_after_a_finish_reason_and_a_disconnect_before() {
    let body = sse(&[chunk(json!({"content":"x"}), None), chunk(json!({}), Some("stop"))], false);
    assert!(assemble(&ok(decode(&body))).message.to_message().text() == "x");
    let body = sse(&[chunk(json!({"content":"x"}), None)], false);
    let events = decode(&body);
    assert!(matches!(events.last(), Some(Err(ProviderError::Disconnected { .. }))), "{events:?}");
    let events = decode("");
    assert!(matches!(&events[..], [Err(ProviderError::Disconnected { .. })]), "{events:?}");
}

#[test]
fn malformed_chunk_is_reported_with_an_excerpt() {
    let events = decode("data: {\"choices\":[{\"delta\":{\"content\":\"x\"}\n\n");
    match &events[..] {
        [Err(ProviderError::Malformed { message })] => assert!(message.contains("{\"choices\""), "{message}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn bearer_key_is_sensitive_and_url_is_joined() {
    let provider = OpenAiProvider::new(Endpoint {
        name: "local".into(),
        kind: crate::provider::ProviderKind::Openai,
        base_url: "http://127.0.0.1:11434/v1/".into(),
        api_key: Some(crate::provider::ApiKey::new("sk-local-secret")),
        api_key_env: None,
    });
    assert_eq!(provider.url(), "http://127.0.0.1:11434/v1/chat/completions");
    let headers = provider.headers().unwrap();
    assert!(headers[reqwest::header::AUTHORIZATION].is_sensitive());
    assert!(!format!("{headers:?}").contains("sk-local-secret"));
}

/// Found from the outside: a 200 JSON document where a stream was expected ended the run.
#[test]
fn a_whole_chat_completion_document_is_the_answer() {
    let document = json!({"id": "chatcmpl-1", "object": "chat.completion", "model": "qwen",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant",
            "content": "Reading it.", "reasoning_content": "think",
            "tool_calls": [
                {"id": "call_a", "type": "function", "function": {"name": "Read", "arguments": "{\"file_path\":\"a\"}"}},
                {"id": "call_b", "type": "function", "function": {"name": "Glob", "arguments": "{\"pattern\":\"*\"}"}}]}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5}});
    let events = ok(crate::provider::sse::decode_document(OpenAiDecoder::new(), document.to_string().as_bytes()));
    let mut assembler = crate::provider::assemble::MessageAssembler::new();
    for event in &events {
        assembler.push(event).unwrap();
    }
    let done = assembler.finish();
    assert_eq!(
        calls(&done.message),
        [("call_a", "Read", json!({"file_path": "a"})), ("call_b", "Glob", json!({"pattern": "*"}))]
    );
    assert_eq!(done.message.usage.output_tokens, 5);
    let error = r#"{"error":{"message":"Rate limit","type":"rate_limit_error"}}"#;
    let events = crate::provider::sse::decode_document(OpenAiDecoder::new(), error.as_bytes());
    assert!(matches!(&events[..], [Err(ProviderError::StreamError { .. })]), "{events:?}");
    for garbage in ["{}", "nonsense", "[]"] {
        let events = crate::provider::sse::decode_document(OpenAiDecoder::new(), garbage.as_bytes());
        assert!(matches!(&events[..], [Err(ProviderError::Malformed { .. })]), "{garbage}: {events:?}");
    }
}
