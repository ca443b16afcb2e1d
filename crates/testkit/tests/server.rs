//! Server-level behaviour: exhaustion, recording with redaction, API key checks, scenario files, the background
//! thread variant and the binary.

// Test code: a panic is how a failure is reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};

use common::{anthropic_stream, openai_stream, post};
use serde_json::{Value, json};
use tandem_testkit::{Block, FakeServer, Fault, Reply, Scenario, Usage};

#[tokio::test]
async fn exhaustion_is_a_loud_500_on_both_routes() {
    let server = FakeServer::start(Scenario::new(vec![Reply::text("only one")])).await.unwrap();
    assert_eq!(post(&server.url(), "/v1/messages", anthropic_stream()).await.status(), 200);
    let resp = post(&server.url(), "/v1/messages", anthropic_stream()).await;
    assert_eq!(resp.status(), 500);
    assert_eq!(resp.headers()["x-should-retry"], "false");
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["type"], "error");
    assert_eq!(body["error"]["type"], "api_error");
    assert_eq!(body["error"]["message"], "fake-llm: scenario exhausted after 1 requests");
    let resp = post(&server.url(), "/v1/chat/completions", openai_stream()).await;
    assert_eq!(resp.status(), 500);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["error"]["message"], "fake-llm: scenario exhausted after 1 requests");
    assert_eq!(server.served(), 1);
    assert_eq!(server.requests().len(), 3);
    server.push_reply(Reply::text("late"));
    assert_eq!(server.remaining(), 1);
    assert_eq!(post(&server.url(), "/v1/messages", anthropic_stream()).await.status(), 200);
}

#[tokio::test]
async fn requests_are_recorded_in_order_with_secrets_redacted() {
    let server =
        FakeServer::start(Scenario::new(vec![Reply::text("a"), Reply::text("b"), Reply::text("c")])).await.unwrap();
    post(&server.url(), "/v1/messages", anthropic_stream()).await.text().await.unwrap();
    let client = reqwest::Client::new();
    client
        .post(format!("{}/v1/chat/completions", server.url()))
        .bearer_auth("sk-openai-secret")
        .json(&json!({"model": "gpt", "messages": [{"role": "user", "content": "yo"}]}))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    client.post(format!("{}/v1/messages", server.url())).body("not json {").send().await.unwrap().text().await.unwrap();
    let reqs = server.requests();
    assert_eq!(reqs.len(), 3);
    assert_eq!((reqs[0].method.as_str(), reqs[0].path.as_str()), ("POST", "/v1/messages"));
    assert_eq!(reqs[0].headers["x-api-key"], "[redacted]");
    assert_eq!(reqs[0].header("Anthropic-Version"), Some("2023-06-01"));
    assert_eq!(reqs[0].body, anthropic_stream());
    assert_eq!(reqs[0].model(), Some("claude-test"));
    assert!(reqs[0].is_stream());
    assert_eq!(reqs[1].path, "/v1/chat/completions");
    assert_eq!(reqs[1].headers["authorization"], "[redacted]");
    assert_eq!(reqs[1].messages(), [json!({"role": "user", "content": "yo"})]);
    assert_eq!(reqs[2].body, json!("not json {"));
    let debug = format!("{reqs:?}");
    assert!(!debug.contains("secret"), "{debug}");
}

#[tokio::test]
async fn required_api_key_rejects_without_consuming() {
    let scenario = Scenario::new(vec![Reply::text("ok")]).with_required_api_key("sk-right");
    let server = FakeServer::start(scenario).await.unwrap();
    // The helper sends x-api-key sk-test-secret.
    let resp = post(&server.url(), "/v1/messages", anthropic_stream()).await;
    assert_eq!(resp.status(), 401);
    assert_eq!(resp.json::<Value>().await.unwrap()["error"]["type"], "authentication_error");
    assert_eq!(server.served(), 0);
    let resp = reqwest::Client::new()
        .post(format!("{}/v1/chat/completions", server.url()))
        .bearer_auth("sk-right")
        .json(&openai_stream())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(server.served(), 1);
    assert_eq!(server.requests().len(), 2);
}

const BRIEF_EXAMPLE: &str = r#"{ "replies": [
  { "blocks": [
      {"type":"thinking","thinking":"Let me look.","signature":"sig-1","chunks":2},
      {"type":"text","text":"I'll read the file.","chunks":3},
      {"type":"tool_use","id":"toolu_01","name":"Read","input":{"file_path":"hello.txt"},"chunks":3}
    ],
    "stop_reason": "tool_use",
    "usage": {"input_tokens":100,"output_tokens":20,"cache_creation_input_tokens":0,"cache_read_input_tokens":0},
    "delay_ms": 0,
    "fault": null
  }
]}"#;

#[test]
fn scenario_json_round_trip() {
    let parsed = Scenario::from_json(BRIEF_EXAMPLE).unwrap();
    let built = Scenario::new(vec![
        Reply::new()
            .block(Block::thinking("Let me look.", "sig-1").chunks(2))
            .block(Block::text_chunks("I'll read the file.", 3))
            .block(Block::tool_use("Read", json!({"file_path": "hello.txt"})).with_id("toolu_01").chunks(3))
            .with_stop_reason("tool_use")
            .with_usage(Usage::new(100, 20)),
    ]);
    assert_eq!(parsed, built);
    let rich = built
        .reply(Reply::fault(Fault::rate_limit()))
        .reply(Reply::text("x").with_fault(Fault::error_event_at(4, "api_error", "boom")).with_delay_ms(3))
        .reply(Reply::new().block(Block::tool_use_raw("Bash", "{\"comm")).block(Block::redacted_thinking("xx")))
        .reply(Reply::text("y").with_fault(Fault::stall_after(1)).with_model("m").with_id("msg_1"))
        .with_required_api_key("k");
    let again = Scenario::from_json(&rich.to_json()).unwrap();
    assert_eq!(again, rich);
    let dir = std::env::temp_dir().join(format!("tandem-testkit-rt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("scenario.json");
    std::fs::write(&file, rich.to_json()).unwrap();
    assert_eq!(Scenario::from_file(&file).unwrap(), rich);
    assert!(Scenario::from_file(dir.join("missing.json")).is_err());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A minimal blocking HTTP/1.1 GET, so the synchronous test needs no async client.
fn http_get(addr: &str, path: &str) -> std::io::Result<String> {
    let mut stream = std::net::TcpStream::connect(addr)?;
    write!(stream, "GET {path} HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\n\r\n")?;
    let mut out = String::new();
    stream.read_to_string(&mut out)?;
    Ok(out)
}

#[test]
fn spawned_server_serves_sync_tests_and_stops_on_drop() {
    let server = FakeServer::spawn(Scenario::new(vec![Reply::text("hi")])).unwrap();
    let addr = server.url().trim_start_matches("http://").to_owned();
    let health = http_get(&addr, "/health").unwrap();
    assert!(health.starts_with("HTTP/1.1 200"), "{health}");
    assert!(health.ends_with("ok"), "{health}");
    drop(server);
    assert!(http_get(&addr, "/health").is_err(), "the port is closed after drop");
}

#[test]
fn binary_serves_a_scenario_file_and_logs_requests() {
    let dir = std::env::temp_dir().join(format!("tandem-testkit-bin-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let scenario = dir.join("s.json");
    let log = dir.join("requests.jsonl");
    std::fs::write(&scenario, Scenario::new(vec![Reply::text("from the binary")]).to_json()).unwrap();
    let bin = env!("CARGO_BIN_EXE_tandem-fake-llm");
    let mut child = Command::new(bin)
        .arg("--scenario")
        .arg(&scenario)
        .arg(format!("--log={}", log.display()))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let url = line.trim().strip_prefix("listening on ").expect(&line).to_owned();
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let body = rt.block_on(async { post(&url, "/v1/messages", anthropic_stream()).await.text().await.unwrap() });
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(body.contains("from the binary"));
    let logged: Vec<Value> =
        std::fs::read_to_string(&log).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(logged.len(), 1);
    assert_eq!(logged[0]["path"], "/v1/messages");
    assert_eq!(logged[0]["headers"]["x-api-key"], "[redacted]");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn binary_usage_errors_exit_2() {
    let bin = env!("CARGO_BIN_EXE_tandem-fake-llm");
    let out = Command::new(bin).arg("--bogus").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("usage: tandem-fake-llm"));
    let out = Command::new(bin).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = Command::new(bin).arg("--help").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("--scenario FILE"));
}

#[tokio::test]
async fn started_server_stops_on_drop() {
    let server = FakeServer::start(Scenario::default()).await.unwrap();
    let url = server.url();
    let health = reqwest::get(format!("{url}/health")).await.unwrap();
    assert_eq!(health.text().await.unwrap(), "ok");
    drop(server);
    let mut closed = false;
    for _ in 0..100 {
        tokio::time::sleep(std::time::Duration::from_millis(2)).await;
        if tokio::net::TcpStream::connect(url.trim_start_matches("http://")).await.is_err() {
            closed = true;
            break;
        }
    }
    assert!(closed, "the listener closes after drop");
}
