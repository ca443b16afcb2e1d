//! The OpenAI route: chunk order, tool call fragments by index, finish reasons and the usage chunk.

// Test code: a panic is how a failure is reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{events, openai_stream, post};
use serde_json::{Value, json};
use tandem_testkit::{Block, FakeServer, Reply, Scenario, Usage};

fn choice_deltas(chunks: &[Value]) -> Vec<Value> {
    chunks.iter().filter_map(|c| c["choices"].get(0).map(|ch| ch["delta"].clone())).collect()
}

#[tokio::test]
async fn text_and_tool_calls_stream_with_usage() {
    let reply = Reply::new()
        .block(Block::thinking("skipped on openai", "sig"))
        .block(Block::text_chunks("Let me check.", 2))
        .block(Block::tool_use("Read", json!({"file_path": "a.txt"})).chunks(3))
        .block(Block::tool_use("Glob", json!({"pattern": "*.rs"})).with_id("call_given"))
        .with_usage(Usage::new(100, 20).with_cache(5, 30));
    let server = FakeServer::start(Scenario::new(vec![reply])).await.unwrap();
    let resp = post(&server.url(), "/v1/chat/completions", openai_stream()).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["content-type"], "text/event-stream");
    let body = resp.text().await.unwrap();
    assert!(body.ends_with("data: [DONE]\n\n"), "{body}");
    let evs = events(&body);
    assert!(evs.iter().all(|e| e.name.is_none()), "OpenAI events have no names");
    let chunks: Vec<Value> = evs[..evs.len() - 1].iter().map(|e| e.json()).collect();
    for c in &chunks {
        assert_eq!(c["object"], "chat.completion.chunk");
        assert_eq!(c["id"], "chatcmpl-fake-1");
        assert_eq!(c["model"], "gpt-test");
        assert!(c.as_object().unwrap().contains_key("usage"));
    }
    let deltas = choice_deltas(&chunks);
    assert_eq!(deltas[0], json!({"role": "assistant", "content": ""}));
    assert_eq!(deltas[1], json!({"content": "Let me "}));
    assert_eq!(deltas[2], json!({"content": "check."}));
    assert_eq!(
        deltas[3],
        json!({"tool_calls": [{"index": 0, "id": "call_fake_1", "type": "function",
                               "function": {"name": "Read", "arguments": ""}}]})
    );
    let args: String = deltas[4..7]
        .iter()
        .map(|d| {
            let frag = &d["tool_calls"][0];
            assert_eq!(frag.as_object().unwrap().keys().collect::<Vec<_>>(), ["index", "function"]);
            assert_eq!(frag["index"], 0);
            frag["function"]["arguments"].as_str().unwrap().to_owned()
        })
        .collect();
    assert_eq!(serde_json::from_str::<Value>(&args).unwrap(), json!({"file_path": "a.txt"}));
    assert_eq!(deltas[7]["tool_calls"][0]["index"], 1);
    assert_eq!(deltas[7]["tool_calls"][0]["id"], "call_given");
    assert_eq!(deltas[8]["tool_calls"][0]["index"], 1);
    assert_eq!(deltas[9]["tool_calls"][0]["index"], 1);
    assert_eq!(deltas.len(), 11);
    let finish = &chunks[10];
    assert_eq!(finish["choices"][0]["finish_reason"], "tool_calls");
    assert_eq!(finish["choices"][0]["delta"], json!({}));
    let usage = &chunks[11];
    assert_eq!(usage["choices"], json!([]));
    assert_eq!(
        usage["usage"],
        json!({"prompt_tokens": 135, "completion_tokens": 20, "total_tokens": 155,
               "prompt_tokens_details": {"cached_tokens": 30}})
    );
    assert_eq!(chunks.len(), 12);
}

#[tokio::test]
async fn without_include_usage_there_is_no_usage_chunk_and_finish_maps() {
    let server =
        FakeServer::start(Scenario::new(vec![Reply::text("cut").with_stop_reason("max_tokens"), Reply::text("done")]))
            .await
            .unwrap();
    let request = json!({"model": "m", "stream": true, "messages": []});
    for expected in ["length", "stop"] {
        let body = post(&server.url(), "/v1/chat/completions", request.clone()).await.text().await.unwrap();
        let evs = events(&body);
        assert_eq!(evs.len(), 4, "{body}");
        assert_eq!(evs[3].data, "[DONE]");
        let finish = evs[2].json();
        assert_eq!(finish["choices"][0]["finish_reason"], expected);
        assert!(finish.get("usage").is_none());
    }
}

#[tokio::test]
async fn exact_bytes_of_a_short_stream() {
    let server = FakeServer::start(Scenario::new(vec![Reply::text("hi").with_usage(Usage::new(3, 1))])).await.unwrap();
    let body = post(&server.url(), "/v1/chat/completions", openai_stream()).await.text().await.unwrap();
    let created = events(&body)[0].json()["created"].as_u64().unwrap();
    let head = format!(
        r#"{{"id":"chatcmpl-fake-1","object":"chat.completion.chunk","created":{created},"model":"gpt-test","choices":"#
    );
    let expected = [
        format!(r#"data: {head}[{{"index":0,"delta":{{"role":"assistant","content":""}},"finish_reason":null}}],"usage":null}}"#),
        format!(r#"data: {head}[{{"index":0,"delta":{{"content":"hi"}},"finish_reason":null}}],"usage":null}}"#),
        format!(r#"data: {head}[{{"index":0,"delta":{{}},"finish_reason":"stop"}}],"usage":null}}"#),
        format!(
            r#"data: {head}[],"usage":{{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4,"prompt_tokens_details":{{"cached_tokens":0}}}}}}"#
        ),
        "data: [DONE]".to_owned(),
    ]
    .map(|line| line + "\n\n")
    .concat();
    assert_eq!(body, expected);
}

#[tokio::test]
async fn non_streaming_completion() {
    let reply = Reply::new()
        .block(Block::text("Calling."))
        .block(Block::tool_use_raw("Bash", r#"{"command":"ls"}"#))
        .with_usage(Usage::new(10, 2).with_cache(0, 4));
    let server = FakeServer::start(Scenario::new(vec![reply, Reply::tool_use("Read", json!({}))])).await.unwrap();
    let body: Value =
        post(&server.url(), "/v1/chat/completions", json!({"model": "m", "messages": []})).await.json().await.unwrap();
    assert_eq!(body["object"], "chat.completion");
    assert_eq!(
        body["choices"][0],
        json!({"index": 0, "message": {"role": "assistant", "content": "Calling.", "tool_calls": [
            {"id": "call_fake_1", "type": "function", "function": {"name": "Bash", "arguments": "{\"command\":\"ls\"}"}}
        ]}, "finish_reason": "tool_calls"})
    );
    assert_eq!(body["usage"]["prompt_tokens"], 14);
    assert_eq!(body["usage"]["prompt_tokens_details"]["cached_tokens"], 4);
    let body: Value =
        post(&server.url(), "/v1/chat/completions", json!({"model": "m", "messages": []})).await.json().await.unwrap();
    assert_eq!(body["choices"][0]["message"]["content"], Value::Null);
    assert_eq!(body["choices"][0]["message"]["tool_calls"][0]["id"], "call_fake_2");
}
