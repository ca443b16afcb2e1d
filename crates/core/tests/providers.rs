//! Both providers end to end against the scripted fake server: what goes over the wire, what comes back, and
//! how each kind of failure surfaces.

// Test code: a panic is how a failure is reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use futures::StreamExt;
use serde_json::{Value, json};
use tandem_core::conversation::{ContentBlock, Message, Role, StopReason, Usage};
use tandem_core::provider::anthropic::AnthropicProvider;
use tandem_core::provider::assemble::{Assembled, MessageAssembler};
use tandem_core::provider::openai::OpenAiProvider;
use tandem_core::provider::{
    ApiKey, Endpoint, ModelRequest, Provider, ProviderError, ProviderKind, StreamEvent, SystemBlock, ToolSpec,
};
use tandem_testkit::{Block, FakeServer, Fault, Reply, Scenario};

const KEY: &str = "sk-test-very-secret-key-123";

fn endpoint(kind: ProviderKind, base_url: String, key: Option<&str>) -> Endpoint {
    let env = match kind {
        ProviderKind::Anthropic => "ANTHROPIC_API_KEY",
        ProviderKind::Openai => "LOCAL_LLM_KEY",
    };
    Endpoint { name: "test".into(), kind, base_url, api_key: key.map(ApiKey::new), api_key_env: Some(env.into()) }
}

fn anthropic(server: &FakeServer, key: Option<&str>) -> AnthropicProvider {
    AnthropicProvider::new(endpoint(ProviderKind::Anthropic, server.url(), key))
}

fn openai(server: &FakeServer, key: Option<&str>) -> OpenAiProvider {
    OpenAiProvider::new(endpoint(ProviderKind::Openai, server.openai_base_url(), key))
}

fn request(messages: Vec<Message>) -> ModelRequest {
    ModelRequest {
        model: "test-model".into(),
        system: vec![
            SystemBlock { text: "You are tandem.".into(), cache: false },
            SystemBlock { text: "Project guidelines.".into(), cache: true },
        ],
        messages,
        tools: vec![ToolSpec {
            name: "Read".into(),
            description: "Reads a file.".into(),
            input_schema: json!({"type":"object","properties":{"file_path":{"type":"string"}},"required":["file_path"]}),
        }],
        max_tokens: 4096,
        reasoning: Default::default(),
        betas: Vec::new(),
    }
}

/// Streams one response into a message, stopping at the first error.
async fn run(provider: &dyn Provider, request: &ModelRequest) -> Result<Assembled, ProviderError> {
    let mut stream = provider.stream(request).await?;
    let mut assembler = MessageAssembler::new();
    while let Some(event) = stream.next().await {
        assembler.push(&event?)?;
    }
    assert!(assembler.is_complete(), "a stream that ends without error is complete");
    Ok(assembler.finish())
}

/// Streams one response, returning the events before the error and the error.
async fn run_to_error(provider: &dyn Provider, request: &ModelRequest) -> (Vec<StreamEvent>, ProviderError) {
    let mut events = Vec::new();
    let mut stream = match provider.stream(request).await {
        Ok(stream) => stream,
        Err(err) => return (events, err),
    };
    while let Some(event) = stream.next().await {
        match event {
            Ok(event) => events.push(event),
            Err(err) => {
                assert!(stream.next().await.is_none(), "the stream ends after an error");
                return (events, err);
            }
        }
    }
    panic!("expected an error, got only {events:?}");
}

fn assert_no_key(err: &ProviderError) {
    let shown = format!("{err} | {err:?}");
    assert!(!shown.contains(KEY), "the key leaked: {shown}");
}

fn tool_turn(id: &str, result: &str) -> [Message; 2] {
    [
        Message {
            role: Role::Assistant,
            content: vec![
                ContentBlock::text("Reading."),
                ContentBlock::ToolUse {
                    id: id.into(),
                    name: "Read".into(),
                    input: json!({"file_path":"a.txt"}).into(),
                },
            ],
        },
        Message {
            role: Role::User,
            content: vec![ContentBlock::ToolResult { tool_use_id: id.into(), content: result.into(), is_error: false }],
        },
    ]
}

// ---- Anthropic ----

#[tokio::test]
async fn anthropic_streams_thinking_text_and_a_tool_call() {
    let reply = Reply::new()
        .block(Block::thinking("Let me look.", "sig_abc"))
        .block(Block::text_chunks("I'll read the file.", 3))
        .block(Block::tool_use("Read", json!({"file_path":"/tmp/a.txt"})).with_id("toolu_1").chunks(4))
        .with_usage(tandem_testkit::Usage::new(100, 42).with_cache(10, 2000));
    let server = FakeServer::start(Scenario::new(vec![reply])).await.unwrap();
    let provider = anthropic(&server, Some(KEY));
    let mut req = request(vec![Message::user_text("read a")]);
    req.reasoning.thinking = Some(tandem_core::reasoning::ThinkingParam::Enabled { budget_tokens: 1024 });
    let done = run(&provider, &req).await.unwrap();

    assert!(done.invalid_tool_inputs.is_empty());
    let message = done.message;
    assert_eq!(
        message.content,
        vec![
            ContentBlock::Thinking { thinking: "Let me look.".into(), signature: "sig_abc".into() },
            ContentBlock::text("I'll read the file."),
            ContentBlock::ToolUse {
                id: "toolu_1".into(),
                name: "Read".into(),
                input: json!({"file_path":"/tmp/a.txt"}).into()
            },
        ]
    );
    assert_eq!(message.stop_reason, Some(StopReason::ToolUse));
    assert_eq!(
        message.usage,
        Usage { input_tokens: 100, output_tokens: 42, cache_creation_input_tokens: 10, cache_read_input_tokens: 2000 }
    );

    let recorded = server.requests();
    assert_eq!(recorded.len(), 1);
    let sent = &recorded[0];
    assert_eq!((sent.method.as_str(), sent.path.as_str()), ("POST", "/v1/messages"));
    assert_eq!(sent.header("x-api-key"), Some("[redacted]"));
    assert_eq!(sent.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(sent.header("content-type"), Some("application/json"));
    assert_eq!(sent.header("accept"), Some("text/event-stream"));
    let body = &sent.body;
    assert_eq!(body["model"], "test-model");
    assert_eq!(body["max_tokens"], 4096);
    assert_eq!(body["stream"], true);
    assert_eq!(body["thinking"], json!({"type":"enabled","budget_tokens":1024}));
    assert_eq!(
        body["system"],
        json!([
            {"type":"text","text":"You are tandem."},
            {"type":"text","text":"Project guidelines.","cache_control":{"type":"ephemeral"}}
        ])
    );
    assert_eq!(
        body["messages"],
        json!([{"role":"user","content":[{"type":"text","text":"read a","cache_control":{"type":"ephemeral"}}]}])
    );
    assert_eq!(body["tools"][0]["name"], "Read");
    assert!(body["tools"][0].get("input_schema").is_some());
}

#[tokio::test]
async fn anthropic_growing_conversation_keeps_the_cached_prefix_byte_identical() {
    let server = FakeServer::start(Scenario::new(vec![Reply::text("one"), Reply::text("two")])).await.unwrap();
    let provider = anthropic(&server, Some(KEY));
    let mut messages = vec![Message::user_text("read a")];
    messages.extend(tool_turn("toolu_1", "1\tfirst line"));
    run(&provider, &request(messages.clone())).await.unwrap();
    messages.extend(tool_turn("toolu_2", "2\tsecond line"));
    run(&provider, &request(messages)).await.unwrap();

    let recorded = server.requests();
    let (first, second) = (recorded[0].body.to_string(), recorded[1].body.to_string());
    assert_eq!(first.matches("cache_control").count(), 2);
    assert_eq!(second.matches("cache_control").count(), 2);
    let marker = r#","cache_control":{"type":"ephemeral"}}]}]"#;
    let at = first.find(marker).expect("the breakpoint sits on the last block of the last message");
    assert_eq!(first[..at], second[..at], "everything before the first request's breakpoint is unchanged");
    let last = &recorded[1].body["messages"][4]["content"][0];
    assert_eq!(last["cache_control"], json!({"type":"ephemeral"}));
}

#[tokio::test]
async fn anthropic_bad_key_names_the_variable_not_the_key() {
    let scenario = Scenario::new(vec![Reply::text("never")]).with_required_api_key("the-right-key");
    let server = FakeServer::start(scenario).await.unwrap();
    let err = run(&anthropic(&server, Some(KEY)), &request(vec![Message::user_text("hi")])).await.unwrap_err();
    assert!(matches!(err, ProviderError::Http { status: 401, .. }), "{err:?}");
    assert!(err.to_string().contains("check ANTHROPIC_API_KEY"), "{err}");
    assert_no_key(&err);

    let err = run(&anthropic(&server, None), &request(vec![Message::user_text("hi")])).await.unwrap_err();
    assert!(err.to_string().contains("no API key set: export ANTHROPIC_API_KEY="), "{err}");
}

#[tokio::test]
async fn anthropic_400_shows_the_server_message() {
    let body =
        json!({"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: must be at most 8192"}});
    let server = FakeServer::start(Scenario::new(vec![Reply::fault(Fault::http(400).with_body(body))])).await.unwrap();
    let err = run(&anthropic(&server, Some(KEY)), &request(vec![Message::user_text("hi")])).await.unwrap_err();
    assert_eq!(err.to_string(), "API error 400 (invalid_request_error): max_tokens: must be at most 8192");
    assert!(!tandem_core::provider::retry::is_retryable(&err));
}

#[tokio::test]
async fn anthropic_429_and_529_carry_retry_information() {
    let scenario = Scenario::new(vec![
        Reply::fault(Fault::http(429).with_header("retry-after", "7")),
        Reply::fault(Fault::overloaded().with_header("retry-after-ms", "1500").with_header("x-should-retry", "true")),
    ]);
    let server = FakeServer::start(scenario).await.unwrap();
    let provider = anthropic(&server, Some(KEY));
    let req = request(vec![Message::user_text("hi")]);
    match run(&provider, &req).await.unwrap_err() {
        ProviderError::Http { status: 429, error_type, retry_after, .. } => {
            assert_eq!(error_type.as_deref(), Some("rate_limit_error"));
            assert_eq!(retry_after, Some(Duration::from_secs(7)));
        }
        other => panic!("{other:?}"),
    }
    match run(&provider, &req).await.unwrap_err() {
        ProviderError::Http { status: 529, error_type, retry_after, should_retry, .. } => {
            assert_eq!(error_type.as_deref(), Some("overloaded_error"));
            assert_eq!(retry_after, Some(Duration::from_millis(1500)));
            assert_eq!(should_retry, Some(true));
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn anthropic_stream_failures_map_to_their_errors() {
    let text = || Reply::text("some text").block(Block::tool_use("Read", json!({"file_path":"x"})));
    let scenario = Scenario::new(vec![
        text().with_fault(Fault::drop_after(4)),
        text().with_fault(Fault::malformed_at(3)),
        text().with_fault(Fault::error_event_at(3, "overloaded_error", "Overloaded")),
    ]);
    let server = FakeServer::start(scenario).await.unwrap();
    let provider = anthropic(&server, Some(KEY));
    let req = request(vec![Message::user_text("hi")]);

    let (events, err) = run_to_error(&provider, &req).await;
    assert!(matches!(err, ProviderError::Disconnected { .. }), "{err:?}");
    assert!(matches!(events.first(), Some(StreamEvent::MessageStart { .. })));

    let (_, err) = run_to_error(&provider, &req).await;
    assert!(matches!(err, ProviderError::Malformed { .. }), "{err:?}");

    let (_, err) = run_to_error(&provider, &req).await;
    match &err {
        ProviderError::StreamError { error_type, message } => {
            assert_eq!((error_type.as_str(), message.as_str()), ("overloaded_error", "Overloaded"));
        }
        other => panic!("{other:?}"),
    }
    assert!(tandem_core::provider::retry::is_retryable(&err));
}

#[tokio::test]
async fn anthropic_stall_hits_the_idle_timeout() {
    let scenario = Scenario::new(vec![Reply::text("slow").with_fault(Fault::stall_after(3))]);
    let server = FakeServer::start(scenario).await.unwrap();
    let provider = anthropic(&server, Some(KEY)).with_idle_timeout(Duration::from_millis(300));
    let (_, err) = run_to_error(&provider, &request(vec![Message::user_text("hi")])).await;
    assert!(matches!(err, ProviderError::Disconnected { .. }), "{err:?}");
}

#[tokio::test]
async fn refused_connection_names_the_url() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let base = format!("http://127.0.0.1:{port}");
    let provider = AnthropicProvider::new(endpoint(ProviderKind::Anthropic, base.clone(), Some(KEY)));
    let err = run(&provider, &request(vec![Message::user_text("hi")])).await.unwrap_err();
    match &err {
        ProviderError::Connect { url, .. } => assert_eq!(*url, format!("{base}/v1/messages")),
        other => panic!("{other:?}"),
    }
    assert!(err.to_string().contains(&format!("127.0.0.1:{port}")), "{err}");
    assert_no_key(&err);

    let provider = OpenAiProvider::new(endpoint(ProviderKind::Openai, format!("{base}/v1"), Some(KEY)));
    let err = run(&provider, &request(vec![Message::user_text("hi")])).await.unwrap_err();
    assert!(matches!(&err, ProviderError::Connect { url, .. } if url.ends_with("/v1/chat/completions")), "{err:?}");
    assert!(tandem_core::provider::retry::is_retryable(&err));
}

// ---- OpenAI-compatible ----

#[tokio::test]
async fn openai_streams_text_and_tool_calls() {
    let reply = Reply::new()
        .block(Block::text_chunks("Looking at it.", 4))
        .block(Block::tool_use("Read", json!({"file_path":"/tmp/a.txt"})).with_id("call_1").chunks(3))
        .block(Block::tool_use("Read", json!({"file_path":"/tmp/b.txt"})).with_id("call_2"))
        .with_usage(tandem_testkit::Usage::new(30, 12).with_cache(0, 70));
    let server = FakeServer::start(Scenario::new(vec![reply])).await.unwrap();
    let provider = openai(&server, Some(KEY));
    let mut messages = vec![Message::user_text("read both")];
    messages.extend(tool_turn("call_0", "earlier result"));
    let done = run(&provider, &request(messages)).await.unwrap();

    let message = done.message;
    assert_eq!(
        message.content,
        vec![
            ContentBlock::text("Looking at it."),
            ContentBlock::ToolUse {
                id: "call_1".into(),
                name: "Read".into(),
                input: json!({"file_path":"/tmp/a.txt"}).into()
            },
            ContentBlock::ToolUse {
                id: "call_2".into(),
                name: "Read".into(),
                input: json!({"file_path":"/tmp/b.txt"}).into()
            },
        ]
    );
    assert_eq!(message.stop_reason, Some(StopReason::ToolUse));
    // The fake reports prompt tokens as input + cached; cached ones come back as cache reads.
    assert_eq!(message.usage.output_tokens, 12);
    assert_eq!(message.usage.total_input(), 100);

    let sent = &server.requests()[0];
    assert_eq!(sent.path, "/v1/chat/completions");
    assert_eq!(sent.header("authorization"), Some("[redacted]"));
    let body = &sent.body;
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"], json!({"include_usage": true}));
    assert_eq!(body["max_tokens"], 4096);
    assert_eq!(body["tools"][0]["type"], "function");
    assert_eq!(body["tools"][0]["function"]["name"], "Read");
    assert!(body["tools"][0]["function"].get("parameters").is_some());
    let roles: Vec<&str> = sent.messages().iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["system", "user", "assistant", "tool"]);
    assert_eq!(sent.messages()[0]["content"], "You are tandem.\n\nProject guidelines.");
    assert_eq!(sent.messages()[2]["tool_calls"][0]["function"]["arguments"], "{\"file_path\":\"a.txt\"}");
    assert_eq!(sent.messages()[3], json!({"role":"tool","tool_call_id":"call_0","content":"earlier result"}));
}

#[tokio::test]
async fn openai_without_key_sends_no_authorization() {
    let server = FakeServer::start(Scenario::new(vec![Reply::text("hello")])).await.unwrap();
    let done = run(&openai(&server, None), &request(vec![Message::user_text("hi")])).await.unwrap();
    assert_eq!(done.message.to_message().text(), "hello");
    assert_eq!(done.message.stop_reason, Some(StopReason::EndTurn));
    assert_eq!(server.requests()[0].header("authorization"), None);
}

#[tokio::test]
async fn openai_errors_map_like_anthropic_ones() {
    let scenario = Scenario::new(vec![
        Reply::fault(Fault::http(500)),
        Reply::text("abc").with_fault(Fault::drop_after(2)),
        Reply::text("abc").with_fault(Fault::error_event_at(2, "server_error", "model crashed")),
        Reply::text("abc").with_fault(Fault::malformed_at(1)),
        Reply::fault(Fault::http(400).with_body(Value::String("plain text failure".into()))),
    ])
    .with_required_api_key(KEY);
    let server = FakeServer::start(scenario).await.unwrap();
    let req = request(vec![Message::user_text("hi")]);

    let err = run(&openai(&server, Some("sk-wrong")), &req).await.unwrap_err();
    assert!(matches!(err, ProviderError::Http { status: 401, .. }), "{err:?}");
    assert!(err.to_string().contains("check LOCAL_LLM_KEY"), "{err}");

    let provider = openai(&server, Some(KEY));
    let err = run(&provider, &req).await.unwrap_err();
    assert!(matches!(err, ProviderError::Http { status: 500, .. }), "{err:?}");
    assert!(tandem_core::provider::retry::is_retryable(&err));
    assert_no_key(&err);

    let (_, err) = run_to_error(&provider, &req).await;
    assert!(matches!(err, ProviderError::Disconnected { .. }), "{err:?}");

    let (_, err) = run_to_error(&provider, &req).await;
    assert!(matches!(&err, ProviderError::StreamError { message, .. } if message == "model crashed"), "{err:?}");

    let (_, err) = run_to_error(&provider, &req).await;
    assert!(matches!(err, ProviderError::Malformed { .. }), "{err:?}");

    let err = run(&provider, &req).await.unwrap_err();
    assert_eq!(err.to_string(), "API error 400: plain text failure");
}
