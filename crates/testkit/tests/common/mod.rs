//! Helpers shared by the integration tests: posting to the fake server and splitting SSE bodies.
#![allow(dead_code)]

use serde_json::Value;

/// Posts `body` as JSON to `url` + `path`.
pub(crate) async fn post(url: &str, path: &str, body: Value) -> reqwest::Response {
    reqwest::Client::new()
        .post(format!("{url}{path}"))
        .header("x-api-key", "sk-test-secret")
        .header("anthropic-version", "2023-06-01")
        .json(&body)
        .send()
        .await
        .expect("request reaches the fake server")
}

/// A streaming Anthropic request.
pub(crate) fn anthropic_stream() -> Value {
    serde_json::json!({"model": "claude-test", "max_tokens": 100, "stream": true,
        "messages": [{"role": "user", "content": "hi"}]})
}

/// A streaming OpenAI request with usage.
pub(crate) fn openai_stream() -> Value {
    serde_json::json!({"model": "gpt-test", "stream": true, "stream_options": {"include_usage": true},
        "messages": [{"role": "user", "content": "hi"}]})
}

/// One parsed SSE event.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Event {
    pub name: Option<String>,
    pub data: String,
}

impl Event {
    pub(crate) fn json(&self) -> Value {
        serde_json::from_str(&self.data).unwrap_or_else(|e| panic!("event data {:?} is not JSON: {e}", self.data))
    }
}

/// Splits a complete SSE body into events, asserting the exact framing.
pub(crate) fn events(body: &str) -> Vec<Event> {
    assert!(body.is_empty() || body.ends_with("\n\n"), "body must end with a blank line: {body:?}");
    body.split_terminator("\n\n")
        .map(|raw| {
            let mut name = None;
            let mut data = None;
            for line in raw.split('\n') {
                if let Some(n) = line.strip_prefix("event: ") {
                    name = Some(n.to_owned());
                } else if let Some(d) = line.strip_prefix("data: ") {
                    data = Some(d.to_owned());
                } else {
                    panic!("unexpected SSE line {line:?} in {raw:?}");
                }
            }
            Event { name, data: data.expect("every event has data") }
        })
        .collect()
}

/// Reads the body chunk by chunk; returns what arrived and whether it ended in an error.
pub(crate) async fn read_until_end(mut resp: reqwest::Response) -> (String, Option<reqwest::Error>) {
    let mut bytes = Vec::new();
    loop {
        match resp.chunk().await {
            Ok(Some(chunk)) => bytes.extend_from_slice(&chunk),
            Ok(None) => return (String::from_utf8(bytes).unwrap(), None),
            Err(e) => return (String::from_utf8(bytes).unwrap(), Some(e)),
        }
    }
}
