//! Every fault kind, on both routes.

// Test code: a panic is how a failure is reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::{anthropic_stream, events, openai_stream, post, read_until_end};
use serde_json::{Value, json};
use tandem_testkit::{FakeServer, Fault, Reply, Scenario};

const ANTHROPIC: &str = "/v1/messages";
const OPENAI: &str = "/v1/chat/completions";

fn request(route: &str) -> Value {
    if route == ANTHROPIC { anthropic_stream() } else { openai_stream() }
}

/// Events in a clean "Hello" reply: Anthropic 7 (start, ping, block start/delta/stop, delta, stop), OpenAI 5.
fn clean_len(route: &str) -> usize {
    if route == ANTHROPIC { 7 } else { 5 }
}

async fn server_with(fault: Fault) -> FakeServer {
    FakeServer::start(Scenario::new(vec![Reply::text("Hello").with_fault(fault), Reply::text("after")])).await.unwrap()
}

#[tokio::test]
async fn http_fault_with_headers_and_default_body() {
    for route in [ANTHROPIC, OPENAI] {
        let server = server_with(Fault::rate_limit()).await;
        let resp = post(&server.url(), route, request(route)).await;
        assert_eq!(resp.status(), 429);
        assert_eq!(resp.headers()["retry-after"], "0");
        let body: Value = resp.json().await.unwrap();
        if route == ANTHROPIC {
            assert_eq!(body["type"], "error");
            assert_eq!(body["error"]["type"], "rate_limit_error");
            assert_eq!(body["request_id"], "req_fake");
            assert!(body["error"]["message"].is_string());
        } else {
            assert_eq!(body["error"]["type"], "rate_limit_error");
            assert_eq!(body["error"]["code"], 429);
            assert!(body["error"]["message"].is_string());
        }
        // The fault consumed a reply; the next request gets the next one.
        assert_eq!(server.served(), 1);
        let ok = post(&server.url(), route, request(route)).await;
        assert_eq!(ok.status(), 200);
        assert!(ok.text().await.unwrap().contains("after"));
    }
}

#[tokio::test]
async fn http_fault_status_types_and_custom_body() {
    let server = FakeServer::start(Scenario::new(vec![
        Reply::fault(Fault::overloaded()),
        Reply::fault(Fault::http(502).with_body(json!("<html>bad gateway</html>"))),
        Reply::fault(Fault::http(400).with_body(json!({"custom": true})).with_header("x-should-retry", "false")),
    ]))
    .await
    .unwrap();
    let resp = post(&server.url(), ANTHROPIC, anthropic_stream()).await;
    assert_eq!(resp.status(), 529);
    assert_eq!(resp.json::<Value>().await.unwrap()["error"]["type"], "overloaded_error");
    let resp = post(&server.url(), ANTHROPIC, anthropic_stream()).await;
    assert_eq!(resp.status(), 502);
    assert_eq!(resp.text().await.unwrap(), "<html>bad gateway</html>");
    let resp = post(&server.url(), OPENAI, openai_stream()).await;
    assert_eq!(resp.status(), 400);
    assert_eq!(resp.headers()["x-should-retry"], "false");
    assert_eq!(resp.json::<Value>().await.unwrap(), json!({"custom": true}));
}

#[tokio::test]
async fn drop_after_aborts_the_body() {
    for route in [ANTHROPIC, OPENAI] {
        let server = server_with(Fault::drop_after(3)).await;
        let resp = post(&server.url(), route, request(route)).await;
        assert_eq!(resp.status(), 200);
        let (text, err) = read_until_end(resp).await;
        assert!(err.is_some(), "{route}: the client must see an error, got a clean end after {text:?}");
        assert_eq!(events(&text).len(), 3, "{route}: {text:?}");
        // The connection was dropped, not the server.
        let ok = post(&server.url(), route, request(route)).await;
        assert!(ok.text().await.unwrap().contains("after"));
    }
}

#[tokio::test]
async fn drop_after_zero_and_bytes_errors() {
    let server = server_with(Fault::drop_after(0)).await;
    let resp = post(&server.url(), OPENAI, openai_stream()).await;
    assert!(resp.bytes().await.is_err());
}

#[tokio::test]
async fn malformed_event_then_normal_stream() {
    for (route, at) in [(ANTHROPIC, 3), (OPENAI, 1)] {
        let server = server_with(Fault::malformed_at(at)).await;
        let text = post(&server.url(), route, request(route)).await.text().await.unwrap();
        let evs = events(&text);
        assert_eq!(evs.len(), clean_len(route));
        assert!(serde_json::from_str::<Value>(&evs[at].data).is_err(), "{:?}", evs[at]);
        if route == ANTHROPIC {
            assert_eq!(evs[at].name.as_deref(), Some("content_block_delta"));
            assert_eq!(evs[at].data, r#"{"type":"content_block_delta", broken json"#);
            assert_eq!(evs.last().unwrap().name.as_deref(), Some("message_stop"));
        } else {
            assert_eq!(evs[at].data, "{not json");
            assert_eq!(evs.last().unwrap().data, "[DONE]");
        }
        for (i, e) in evs.iter().enumerate() {
            if i != at && e.data != "[DONE]" {
                e.json();
            }
        }
    }
}

#[tokio::test]
async fn error_event_ends_the_stream() {
    for route in [ANTHROPIC, OPENAI] {
        let server = server_with(Fault::error_event_at(2, "overloaded_error", "Overloaded")).await;
        let (text, err) = read_until_end(post(&server.url(), route, request(route)).await).await;
        assert!(err.is_none(), "an error event is a clean end of the HTTP body");
        let evs = events(&text);
        assert_eq!(evs.len(), 3);
        let error = evs[2].json();
        if route == ANTHROPIC {
            assert_eq!(evs[2].name.as_deref(), Some("error"));
            assert_eq!(error, json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}));
        } else {
            assert_eq!(evs[2].name, None);
            assert_eq!(error, json!({"error": {"message": "Overloaded", "type": "overloaded_error", "code": 529}}));
        }
    }
}

#[tokio::test]
async fn stall_keeps_the_connection_silent_until_shutdown() {
    for route in [ANTHROPIC, OPENAI] {
        let server = server_with(Fault::stall_after(2)).await;
        let mut resp = post(&server.url(), route, request(route)).await;
        let mut got = Vec::new();
        while events_in(&got) < 2 {
            let chunk = tokio::time::timeout(Duration::from_secs(5), resp.chunk()).await.unwrap().unwrap();
            got.extend_from_slice(&chunk.expect("two events arrive"));
        }
        assert_eq!(events_in(&got), 2);
        let silent = tokio::time::timeout(Duration::from_millis(100), resp.chunk()).await;
        assert!(silent.is_err(), "{route}: a stalled stream sends nothing");
        // Dropping the server aborts the stalled stream instead of leaving it open.
        drop(server);
        let end = tokio::time::timeout(Duration::from_secs(5), resp.chunk()).await.unwrap();
        assert!(end.is_err(), "{route}: {end:?}");
    }
}

fn events_in(bytes: &[u8]) -> usize {
    String::from_utf8_lossy(bytes).matches("\n\n").count()
}

#[tokio::test]
async fn faults_on_non_streaming_requests() {
    let server = FakeServer::start(Scenario::new(vec![
        Reply::text("x").with_fault(Fault::error_event_at(0, "overloaded_error", "Overloaded")),
        Reply::text("x").with_fault(Fault::drop_after(0)),
        Reply::text("x").with_fault(Fault::malformed_at(0)),
    ]))
    .await
    .unwrap();
    let plain = json!({"model": "m", "max_tokens": 5, "messages": []});
    let resp = post(&server.url(), ANTHROPIC, plain.clone()).await;
    assert_eq!(resp.status(), 529);
    assert_eq!(resp.json::<Value>().await.unwrap()["error"]["type"], "overloaded_error");
    let resp = post(&server.url(), ANTHROPIC, plain.clone()).await;
    assert!(resp.bytes().await.is_err());
    let resp = post(&server.url(), OPENAI, plain).await;
    assert_eq!(resp.status(), 200);
    assert!(resp.json::<Value>().await.is_err());
}
