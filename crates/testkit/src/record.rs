//! What the server remembers about each model request, so tests can assert on what the agent actually sent
//! (messages, tools, cache breakpoints, headers) without a real provider.

use std::collections::BTreeMap;

use axum::http::{HeaderMap, Method, Uri};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Headers whose values are secrets: recorded as `"[redacted]"` so logs and test output never hold a key, while
/// tests can still assert that a key was sent.
const SECRET_HEADERS: [&str; 2] = ["x-api-key", "authorization"];

/// One request to a model route, in arrival order.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct RecordedRequest {
    /// `POST`, normally.
    pub method: String,
    /// The path without query, e.g. `/v1/messages`.
    pub path: String,
    /// Lower-case header names; repeated headers joined with `", "`; secrets redacted.
    pub headers: BTreeMap<String, String>,
    /// The body parsed as JSON, or a JSON string holding the raw text when it is not valid JSON.
    pub body: Value,
}

impl RecordedRequest {
    pub(crate) fn capture(method: &Method, uri: &Uri, headers: &HeaderMap, body: &[u8]) -> Self {
        let mut recorded: BTreeMap<String, String> = BTreeMap::new();
        for (name, value) in headers {
            let name = name.as_str().to_ascii_lowercase();
            let value = if SECRET_HEADERS.contains(&name.as_str()) {
                "[redacted]".to_owned()
            } else {
                String::from_utf8_lossy(value.as_bytes()).into_owned()
            };
            recorded
                .entry(name)
                .and_modify(|v| {
                    v.push_str(", ");
                    v.push_str(&value);
                })
                .or_insert(value);
        }
        let body =
            serde_json::from_slice(body).unwrap_or_else(|_| Value::String(String::from_utf8_lossy(body).into_owned()));
        RecordedRequest { method: method.as_str().to_owned(), path: uri.path().to_owned(), headers: recorded, body }
    }

    /// A header value by case-insensitive name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(&name.to_ascii_lowercase()).map(String::as_str)
    }

    /// The request's `model` field, if any.
    pub fn model(&self) -> Option<&str> {
        self.body.get("model").and_then(Value::as_str)
    }

    /// Whether the request asked for a streamed answer.
    pub fn is_stream(&self) -> bool {
        self.body.get("stream").and_then(Value::as_bool) == Some(true)
    }

    /// The request's `messages` array (empty if absent).
    pub fn messages(&self) -> &[Value] {
        self.body.get("messages").and_then(Value::as_array).map_or(&[], Vec::as_slice)
    }
}

/// The keys a request presents, from `x-api-key` and `Authorization: Bearer`.
pub(crate) fn presented_keys(headers: &HeaderMap) -> Vec<String> {
    let mut keys = Vec::new();
    for v in headers.get_all("x-api-key") {
        if let Ok(v) = v.to_str() {
            keys.push(v.trim().to_owned());
        }
    }
    for v in headers.get_all("authorization") {
        if let Some((scheme, token)) = v.to_str().ok().and_then(|a| a.split_once(' '))
            && scheme.eq_ignore_ascii_case("bearer")
        {
            keys.push(token.trim().to_owned());
        }
    }
    keys
}
