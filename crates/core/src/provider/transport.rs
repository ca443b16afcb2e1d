//! The HTTP side shared by both providers: the client, sending a request, and turning failures into
//! [`ProviderError`]s a user can act on.
//!
//! Nothing here may put the API key into a message: reqwest's own errors name the URL (which never holds the
//! key: both protocols send it in a header) and never the headers, and server messages are scrubbed of the key
//! in case a proxy echoes it back.

use std::time::{Duration, SystemTime};

use reqwest::header::HeaderMap;

use super::{Endpoint, ProviderError, ProviderKind};

/// How long to wait for a TCP/TLS connection.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a response may go without sending a byte. Generous, because a local server may think about a long
/// prompt for minutes before its first token; there is deliberately no overall timeout, since a long answer
/// streams for as long as it needs.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(300);
/// How much of an error body is kept in a message.
const MAX_MESSAGE_CHARS: usize = 500;
/// How much of an error body is read at all.
const MAX_ERROR_BODY: usize = 64 * 1024;

/// Sent with every request, so servers and proxies can tell tandem's traffic apart.
pub const USER_AGENT: &str = concat!("tandem/", env!("CARGO_PKG_VERSION"));

/// The shared client of a provider, or why it could not be built (reported on first use rather than panicking).
pub(crate) type Client = Result<reqwest::Client, String>;

pub(crate) fn build_client(idle_timeout: Duration) -> Client {
    reqwest::Client::builder()
        .user_agent(USER_AGENT)
        .connect_timeout(CONNECT_TIMEOUT)
        .read_timeout(idle_timeout)
        .build()
        .map_err(|err| error_chain(&err))
}

/// Reads at most [`MAX_ERROR_BODY`] bytes of an error response's body.
pub(crate) async fn read_limited(mut response: reqwest::Response) -> Vec<u8> {
    let mut body = Vec::new();
    while let Ok(Some(chunk)) = response.chunk().await {
        body.extend_from_slice(&chunk);
        if body.len() >= MAX_ERROR_BODY {
            body.truncate(MAX_ERROR_BODY);
            break;
        }
    }
    body
}

/// The most of a whole (non-streamed) answer that is read: far more than any model writes in one reply.
const MAX_DOCUMENT: usize = 64 * 1024 * 1024;

/// Reads a success's body whole (an answer sent as one JSON document); a body that fails midway or is larger
/// than [`MAX_DOCUMENT`] is an error, never a cut document.
pub(crate) async fn read_document(mut response: reqwest::Response) -> Result<Vec<u8>, ProviderError> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(body_error)? {
        body.extend_from_slice(&chunk);
        if body.len() > MAX_DOCUMENT {
            return Err(ProviderError::Malformed {
                message: format!("the answer document is larger than {} MB", MAX_DOCUMENT >> 20),
            });
        }
    }
    Ok(body)
}

/// Maps a failure to get response headers.
pub(crate) fn send_error(err: reqwest::Error, url: &str, endpoint: &Endpoint) -> ProviderError {
    let message = error_chain(&err);
    if err.is_connect() || err.is_builder() {
        ProviderError::Connect {
            url: url.to_owned(),
            message: format!("{message} — {}", where_the_address_comes_from(endpoint)),
        }
    } else if err.is_timeout() {
        ProviderError::Disconnected { message: format!("no response from {url} within {}s", IDLE_TIMEOUT.as_secs()) }
    } else {
        ProviderError::Disconnected { message: format!("{url}: {message}") }
    }
}

/// What to check when the server can't be reached: that it runs, and where its address was set.
fn where_the_address_comes_from(endpoint: &Endpoint) -> String {
    let variable = match endpoint.name.as_str() {
        "anthropic" => "ANTHROPIC_BASE_URL, ",
        "openai" => "OPENAI_BASE_URL, ",
        _ => "",
    };
    format!(
        "is the server running there? The address comes from --base-url, {variable}or base_url under \
         [providers.{}] in config.toml",
        endpoint.name
    )
}

/// Maps a failure while reading a streaming body.
pub(crate) fn body_error(err: reqwest::Error) -> ProviderError {
    if err.is_timeout() {
        ProviderError::Disconnected { message: "the server stopped sending data (idle timeout)".to_owned() }
    } else {
        ProviderError::Disconnected { message: error_chain(&err) }
    }
}

/// The innermost two messages of the error's source chain, without the URL (callers name it once
/// themselves): the outer layers are generic ("error sending request", "client error (Connect)") and the
/// innermost says what happened ("tcp connect error: Connection refused").
fn error_chain(err: &reqwest::Error) -> String {
    let top = err.to_string();
    let top = match err.url() {
        Some(url) => top.replace(&format!(" for url ({url})"), ""),
        None => top,
    };
    let mut messages = vec![top];
    let mut current = std::error::Error::source(err);
    while let Some(err) = current {
        let text = err.to_string();
        if messages.last() != Some(&text) {
            messages.push(text);
        }
        current = err.source();
    }
    let keep = messages.len().saturating_sub(2);
    messages[keep..].join(": ")
}

/// Builds the error for a non-success response from its parts. Pure, so the mapping is testable without a
/// server.
pub fn http_error(status: u16, headers: &HeaderMap, body: &[u8], endpoint: &Endpoint) -> ProviderError {
    let (error_type, message) = parse_error_body(body);
    // Real keys are long; scrubbing a short test key would mangle ordinary words.
    let secret = endpoint.api_key.as_ref().map(|k| k.expose()).filter(|k| k.len() >= 8);
    let scrub = |text: String| match secret {
        Some(key) if text.contains(key) => text.replace(key, "***"),
        _ => text,
    };
    let hint = match status {
        200..=299 => Some("the server answered with a JSON document instead of an event stream".to_owned()),
        401 | 403 => Some(auth_hint(endpoint)),
        404 if endpoint.kind == ProviderKind::Openai => {
            Some(format!("check the base URL ({}) and the model name", endpoint.base_url))
        }
        _ => None,
    };
    ProviderError::Http {
        status,
        error_type: error_type.map(scrub),
        message: scrub(message),
        hint,
        retry_after: retry_after(headers, SystemTime::now()),
        should_retry: headers.get("x-should-retry").and_then(|v| v.to_str().ok()).and_then(|v| {
            match v.trim().to_ascii_lowercase().as_str() {
                "true" => Some(true),
                "false" => Some(false),
                _ => None,
            }
        }),
        headers: recorded_headers(headers, &scrub),
    }
}

/// A response's headers as the request inspector keeps them: cookies are redacted (a proxy's session is not
/// the user's to leak into a file), and so is any value holding the key.
fn recorded_headers(headers: &HeaderMap, scrub: &dyn Fn(String) -> String) -> Vec<(String, String)> {
    headers
        .iter()
        .map(|(name, value)| {
            let value = if name == reqwest::header::SET_COOKIE {
                "[redacted]".to_owned()
            } else {
                scrub(String::from_utf8_lossy(value.as_bytes()).into_owned())
            };
            (name.as_str().to_owned(), value)
        })
        .collect()
}

fn auth_hint(endpoint: &Endpoint) -> String {
    let env = endpoint.api_key_env.clone().unwrap_or_else(|| match endpoint.kind {
        ProviderKind::Anthropic => "ANTHROPIC_API_KEY".to_owned(),
        ProviderKind::Openai => "OPENAI_API_KEY".to_owned(),
    });
    if endpoint.api_key.is_some() {
        format!("check {env} (the key for provider `{}`)", endpoint.name)
    } else {
        format!("no API key set: export {env}=…")
    }
}

/// Reads `{"error":{"type"|"code","message"}}` (both protocols' shape, and Anthropic's outer `type:"error"`),
/// or falls back to the body text.
fn parse_error_body(body: &[u8]) -> (Option<String>, String) {
    if let Ok(value) = serde_json::from_slice::<serde_json::Value>(body) {
        let error = value.get("error").unwrap_or(&value);
        let text = |v: Option<&serde_json::Value>| match v {
            Some(serde_json::Value::String(s)) => Some(s.clone()),
            Some(serde_json::Value::Number(n)) => Some(n.to_string()),
            _ => None,
        };
        let message = match error {
            serde_json::Value::String(s) => Some(s.clone()),
            _ => text(error.get("message")).or_else(|| text(value.get("message"))),
        };
        if let Some(message) = message {
            let error_type = text(error.get("type")).or_else(|| text(error.get("code")));
            return (error_type, truncate(message.trim()));
        }
    }
    (None, truncate(String::from_utf8_lossy(body).trim()))
}

pub(crate) fn truncate(text: &str) -> String {
    match text.char_indices().nth(MAX_MESSAGE_CHARS) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

/// `retry-after-ms` (milliseconds), then `retry-after` (seconds, or an HTTP date relative to `now`).
pub fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::trim);
    let ms = header("retry-after-ms").and_then(|v| v.parse::<f64>().ok());
    if let Some(ms) = ms.filter(|ms| ms.is_finite() && *ms >= 0.0) {
        return Some(Duration::from_secs_f64(ms.min(86_400_000.0) / 1000.0));
    }
    let value = header("retry-after")?;
    if let Ok(secs) = value.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs.min(86_400.0)));
    }
    let date = httpdate::parse_http_date(value).ok()?;
    Some(date.duration_since(now).unwrap_or(Duration::ZERO))
}

/// The URL of an endpoint's API path: trailing slashes trimmed, and `prefix` (e.g. `/v1`) added only when the
/// base does not already end with it.
pub(crate) fn join_url(base: &str, prefix: &str, path: &str) -> String {
    let base = base.trim_end_matches('/');
    if base.ends_with(&format!("{prefix}{path}")) {
        return base.to_owned();
    }
    if prefix.is_empty() || base.ends_with(prefix) { format!("{base}{path}") } else { format!("{base}{prefix}{path}") }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::ApiKey;
    use reqwest::header::HeaderValue;

    const KEY: &str = "sk-ant-secret-0123456789";

    fn endpoint(key: Option<&str>) -> Endpoint {
        Endpoint {
            name: "anthropic".into(),
            kind: ProviderKind::Anthropic,
            base_url: "https://api.anthropic.com".into(),
            api_key: key.map(ApiKey::new),
            api_key_env: Some("ANTHROPIC_API_KEY".into()),
        }
    }

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, HeaderValue::from_str(value).unwrap());
        }
        map
    }

    #[test]
    fn a_failures_headers_are_kept_for_the_inspector_without_cookies_or_the_key() {
        let sent = headers(&[
            ("request-id", "req_011"),
            ("set-cookie", "session=abc"),
            ("x-echo", "sk-ant-secret-0123456789"),
            ("retry-after", "3"),
        ]);
        let err = http_error(529, &sent, b"{}", &endpoint(Some(KEY)));
        let kept = err.response_headers();
        assert!(kept.contains(&("request-id".to_owned(), "req_011".to_owned())), "{kept:?}");
        assert!(kept.contains(&("set-cookie".to_owned(), "[redacted]".to_owned())), "{kept:?}");
        assert!(kept.contains(&("x-echo".to_owned(), "***".to_owned())), "{kept:?}");
        assert!(!format!("{kept:?}").contains(KEY));
    }

    #[test]
    fn anthropic_error_body_is_parsed() {
        let body = br#"{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: too big"},"request_id":"r"}"#;
        let err = http_error(400, &HeaderMap::new(), body, &endpoint(Some(KEY)));
        match &err {
            ProviderError::Http { status, error_type, message, hint, retry_after, should_retry, .. } => {
                assert_eq!(*status, 400);
                assert_eq!(error_type.as_deref(), Some("invalid_request_error"));
                assert_eq!(message, "max_tokens: too big");
                assert!(hint.is_none() && retry_after.is_none() && should_retry.is_none());
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(err.to_string(), "API error 400 (invalid_request_error): max_tokens: too big");
    }

    #[test]
    fn openai_error_body_with_code_and_raw_bodies() {
        let (kind, message) = parse_error_body(br#"{"error":{"message":"bad model","code":"model_not_found"}}"#);
        assert_eq!((kind.as_deref(), message.as_str()), (Some("model_not_found"), "bad model"));
        let (kind, message) = parse_error_body(br#"{"error":{"code":500,"message":"boom","type":"server_error"}}"#);
        assert_eq!((kind.as_deref(), message.as_str()), (Some("server_error"), "boom"));
        let (kind, message) = parse_error_body(br#"{"error":"plain string"}"#);
        assert_eq!((kind, message.as_str()), (None, "plain string"));
        let (kind, message) = parse_error_body(b"<html>502 Bad Gateway</html>\n");
        assert_eq!((kind, message.as_str()), (None, "<html>502 Bad Gateway</html>"));
        let long = "x".repeat(2000);
        let (_, message) = parse_error_body(long.as_bytes());
        assert_eq!(message.chars().count(), MAX_MESSAGE_CHARS + 1);
    }

    #[test]
    fn auth_errors_name_the_variable_and_never_the_key() {
        let body = format!(r#"{{"error":{{"type":"authentication_error","message":"invalid x-api-key {KEY}"}}}}"#);
        let err = http_error(401, &HeaderMap::new(), body.as_bytes(), &endpoint(Some(KEY)));
        let shown = format!("{err} {err:?}");
        assert!(shown.contains("check ANTHROPIC_API_KEY"), "{shown}");
        assert!(!shown.contains(KEY), "{shown}");
        let err = http_error(403, &HeaderMap::new(), b"", &endpoint(None));
        assert!(err.to_string().contains("no API key set: export ANTHROPIC_API_KEY="), "{err}");
        let mut openai = endpoint(None);
        openai.kind = ProviderKind::Openai;
        openai.api_key_env = None;
        let err = http_error(401, &HeaderMap::new(), b"", &openai);
        assert!(err.to_string().contains("OPENAI_API_KEY"), "{err}");
    }

    #[test]
    fn retry_headers_are_read() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000_000);
        assert_eq!(retry_after(&headers(&[("retry-after-ms", "250")]), now), Some(Duration::from_millis(250)));
        assert_eq!(
            retry_after(&headers(&[("retry-after-ms", "1500"), ("retry-after", "9")]), now),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(retry_after(&headers(&[("retry-after", "3")]), now), Some(Duration::from_secs(3)));
        let date = httpdate::fmt_http_date(now + Duration::from_secs(20));
        assert_eq!(retry_after(&headers(&[("retry-after", &date)]), now), Some(Duration::from_secs(20)));
        let past = httpdate::fmt_http_date(now - Duration::from_secs(20));
        assert_eq!(retry_after(&headers(&[("retry-after", &past)]), now), Some(Duration::ZERO));
        assert_eq!(retry_after(&headers(&[("retry-after", "soon")]), now), None);
        assert_eq!(retry_after(&HeaderMap::new(), now), None);

        let err = http_error(529, &headers(&[("x-should-retry", "false"), ("retry-after", "2")]), b"", &endpoint(None));
        match err {
            ProviderError::Http { should_retry, retry_after, .. } => {
                assert_eq!(should_retry, Some(false));
                assert_eq!(retry_after, Some(Duration::from_secs(2)));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn urls_are_joined_once() {
        assert_eq!(join_url("https://api.anthropic.com", "/v1", "/messages"), "https://api.anthropic.com/v1/messages");
        assert_eq!(join_url("https://api.anthropic.com/", "/v1", "/messages"), "https://api.anthropic.com/v1/messages");
        assert_eq!(join_url("http://h:1/v1/", "/v1", "/messages"), "http://h:1/v1/messages");
        assert_eq!(join_url("http://h:1/v1", "", "/chat/completions"), "http://h:1/v1/chat/completions");
        assert_eq!(
            join_url("http://h:1/v1/chat/completions", "", "/chat/completions"),
            "http://h:1/v1/chat/completions"
        );
    }
}
