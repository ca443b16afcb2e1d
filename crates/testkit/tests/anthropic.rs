//! The Anthropic route: exact SSE bytes, block indices, deltas, ids and the non-streaming message.

// Test code: a panic is how a failure is reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{anthropic_stream, events, post};
use serde_json::{Value, json};
use tandem_testkit::{Block, FakeServer, Reply, Scenario, Usage};

#[tokio::test]
async fn text_reply_streams_exact_bytes() {
    let reply = Reply::new().block(Block::text_chunks("Hello", 2)).with_usage(Usage::new(12, 7).with_cache(3, 4));
    let server = FakeServer::start(Scenario::new(vec![reply])).await.unwrap();
    let resp = post(&server.url(), "/v1/messages", anthropic_stream()).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["content-type"], "text/event-stream");
    let body = resp.text().await.unwrap();
    let expected = concat!(
        "event: message_start\n",
        r#"data: {"type":"message_start","message":{"id":"msg_fake_1","type":"message","role":"assistant","model":"claude-test","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":12,"cache_creation_input_tokens":3,"cache_read_input_tokens":4,"output_tokens":1}}}"#,
        "\n\n",
        "event: ping\ndata: {\"type\":\"ping\"}\n\n",
        "event: content_block_start\n",
        r#"data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
        "\n\n",
        "event: content_block_delta\n",
        r#"data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}"#,
        "\n\n",
        "event: content_block_delta\n",
        r#"data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"lo"}}"#,
        "\n\n",
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
        "event: message_delta\n",
        r#"data: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":7}}"#,
        "\n\n",
        "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
    );
    assert_eq!(body, expected);
    assert_eq!(server.served(), 1);
}

#[tokio::test]
async fn thinking_text_and_tool_use_blocks() {
    let scenario = Scenario::from_json(
        r#"{ "replies": [
          { "blocks": [
              {"type":"thinking","thinking":"Let me look.","signature":"sig-1","chunks":2},
              {"type":"text","text":"I'll read the file.","chunks":3},
              {"type":"tool_use","id":"toolu_01","name":"Read","input":{"file_path":"hello.txt"},"chunks":3}
            ],
            "usage": {"input_tokens":100,"output_tokens":20,"cache_creation_input_tokens":0,"cache_read_input_tokens":0}
          }
        ]}"#,
    )
    .unwrap();
    let server = FakeServer::start(scenario).await.unwrap();
    let body = post(&server.url(), "/v1/messages", anthropic_stream()).await.text().await.unwrap();
    let evs = events(&body);
    let names: Vec<&str> = evs.iter().map(|e| e.name.as_deref().unwrap()).collect();
    let mut expected = vec!["message_start", "ping"];
    expected.extend(["content_block_start", "content_block_delta", "content_block_delta", "content_block_delta"]);
    expected.push("content_block_stop");
    expected.extend(["content_block_start", "content_block_delta", "content_block_delta", "content_block_delta"]);
    expected.push("content_block_stop");
    expected.push("content_block_start");
    expected.extend(["content_block_delta"; 4]);
    expected.extend(["content_block_stop", "message_delta", "message_stop"]);
    assert_eq!(names, expected);
    // Every event's `type` matches its name.
    for e in &evs {
        assert_eq!(e.json()["type"], e.name.as_deref().unwrap());
    }

    let block_events = |index: u64| -> Vec<Value> {
        evs.iter().map(|e| e.json()).filter(|j| j.get("index").and_then(Value::as_u64) == Some(index)).collect()
    };
    let thinking = block_events(0);
    assert_eq!(thinking[0]["content_block"], json!({"type":"thinking","thinking":"","signature":""}));
    assert_eq!(thinking[1]["delta"], json!({"type":"thinking_delta","thinking":"Let me"}));
    assert_eq!(thinking[2]["delta"], json!({"type":"thinking_delta","thinking":" look."}));
    assert_eq!(thinking[3]["delta"], json!({"type":"signature_delta","signature":"sig-1"}));

    let text: String = block_events(1)[1..4].iter().map(|j| j["delta"]["text"].as_str().unwrap()).collect();
    assert_eq!(text, "I'll read the file.");

    let tool = block_events(2);
    assert_eq!(tool[0]["content_block"], json!({"type":"tool_use","id":"toolu_01","name":"Read","input":{}}));
    assert_eq!(tool[1]["delta"], json!({"type":"input_json_delta","partial_json":""}));
    let partial: String = tool[1..5].iter().map(|j| j["delta"]["partial_json"].as_str().unwrap()).collect();
    assert_eq!(serde_json::from_str::<Value>(&partial).unwrap(), json!({"file_path":"hello.txt"}));
    assert_eq!(tool[5]["type"], "content_block_stop");

    let delta = evs[evs.len() - 2].json();
    assert_eq!(delta["delta"]["stop_reason"], "tool_use");
    assert_eq!(delta["usage"], json!({"output_tokens": 20}));
    let start = evs[0].json();
    assert_eq!(start["message"]["usage"]["input_tokens"], 100);
    assert_eq!(start["message"]["usage"]["output_tokens"], 1);
}

#[tokio::test]
async fn generated_tool_ids_are_unique_across_replies_and_raw_input_is_verbatim() {
    let scenario = Scenario::new(vec![
        Reply::tool_use("Bash", json!({"command": "ls"})),
        Reply::new()
            .block(Block::tool_use("Read", json!({"file_path": "a"})))
            .block(Block::tool_use_raw("Write", r#"{"file_path": "b", "content": "unterminated"#).chunks(4)),
    ]);
    let server = FakeServer::start(scenario).await.unwrap();
    let first = events(&post(&server.url(), "/v1/messages", anthropic_stream()).await.text().await.unwrap());
    assert_eq!(first[2].json()["content_block"]["id"], "toolu_fake_1");
    assert_eq!(first[first.len() - 2].json()["delta"]["stop_reason"], "tool_use");

    let second = events(&post(&server.url(), "/v1/messages", anthropic_stream()).await.text().await.unwrap());
    let starts: Vec<Value> =
        second.iter().filter(|e| e.name.as_deref() == Some("content_block_start")).map(|e| e.json()).collect();
    assert_eq!(starts[0]["content_block"]["id"], "toolu_fake_2");
    assert_eq!(
        (starts[1]["index"].as_u64(), starts[1]["content_block"]["id"].as_str()),
        (Some(1), Some("toolu_fake_3"))
    );
    let raw: String = second
        .iter()
        .map(|e| e.json())
        .filter(|j| j["index"] == 1 && j["delta"]["type"] == "input_json_delta")
        .map(|j| j["delta"]["partial_json"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(raw, r#"{"file_path": "b", "content": "unterminated"#);
}

#[tokio::test]
async fn non_streaming_message() {
    let reply = Reply::new()
        .block(Block::thinking("hmm", "sig"))
        .block(Block::text("Reading."))
        .block(Block::tool_use("Read", json!({"file_path": "x"})).with_id("toolu_x"))
        .with_model("claude-override")
        .with_id("msg_custom")
        .with_usage(Usage::new(5, 6));
    let server = FakeServer::start(Scenario::new(vec![reply])).await.unwrap();
    let resp = post(&server.url(), "/v1/messages", json!({"model": "m", "max_tokens": 5, "messages": []})).await;
    assert_eq!(resp.status(), 200);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(
        body,
        json!({
            "id": "msg_custom", "type": "message", "role": "assistant", "model": "claude-override",
            "content": [
                {"type": "thinking", "thinking": "hmm", "signature": "sig"},
                {"type": "text", "text": "Reading."},
                {"type": "tool_use", "id": "toolu_x", "name": "Read", "input": {"file_path": "x"}},
            ],
            "stop_reason": "tool_use", "stop_sequence": null,
            "usage": {"input_tokens": 5, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0,
                      "output_tokens": 6},
        })
    );
}

#[tokio::test]
async fn delay_spaces_events() {
    let server = FakeServer::start(Scenario::new(vec![Reply::text("slow").with_delay_ms(5)])).await.unwrap();
    let started = std::time::Instant::now();
    let body = post(&server.url(), "/v1/messages", anthropic_stream()).await.text().await.unwrap();
    let n = events(&body).len() as u32;
    assert_eq!(n, 7);
    assert!(started.elapsed() >= std::time::Duration::from_millis(5) * (n - 1));
}
