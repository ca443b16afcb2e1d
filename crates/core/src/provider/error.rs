//! Provider errors, with messages a user can act on. Never contains an API key.
use std::time::Duration;

/// Why a model request failed.
#[derive(Debug, thiserror::Error)]
pub enum ProviderError {
    /// The server answered with a non-success status.
    #[error("{}", http_message(.status, .error_type, .message, .hint))]
    Http {
        status: u16,
        /// The provider's error type (`rate_limit_error`, `overloaded_error`, …) when it sent one.
        error_type: Option<String>,
        /// The server's own message, or the body text when it was not JSON.
        message: String,
        /// What the user can do, e.g. which environment variable holds the key (never the key).
        hint: Option<String>,
        /// From `retry-after-ms` / `retry-after`.
        retry_after: Option<Duration>,
        /// From `x-should-retry`.
        should_retry: Option<bool>,
        /// The response's headers (lower-case names; cookies and anything holding the key redacted), kept for
        /// the request inspector: a failure's `request-id` and rate-limit headers are what support asks for.
        headers: Vec<(String, String)>,
    },
    /// No connection could be made (refused, DNS, TLS).
    #[error("could not connect to {url}: {message}")]
    Connect { url: String, message: String },
    /// The connection broke or timed out during the response.
    #[error("the connection to the model was lost: {message}")]
    Disconnected { message: String },
    /// The server sent an error event inside a successful stream (e.g. `overloaded_error`).
    #[error("the model API reported an error mid-stream: {error_type}: {message}")]
    StreamError { error_type: String, message: String },
    /// The stream had an event we could not understand (retried: a proxy may have garbled one response).
    #[error("the model API sent a malformed event: {message}")]
    Malformed { message: String },
    /// The request could not be built (never sent, so never retried).
    #[error("could not build the request: {message}")]
    Request { message: String },
}

fn http_message(status: &u16, error_type: &Option<String>, message: &str, hint: &Option<String>) -> String {
    let mut out = format!("API error {status}");
    if let Some(kind) = error_type {
        out.push_str(&format!(" ({kind})"));
    }
    if !message.is_empty() {
        out.push_str(": ");
        out.push_str(message);
    }
    if let Some(hint) = hint {
        out.push_str(" — ");
        out.push_str(hint);
    }
    out
}

impl ProviderError {
    /// The headers of the response that failed, when one came.
    pub fn response_headers(&self) -> &[(String, String)] {
        match self {
            ProviderError::Http { headers, .. } => headers,
            _ => &[],
        }
    }

    /// The HTTP status the server answered with, when it did.
    pub fn http_status(&self) -> Option<u16> {
        match self {
            ProviderError::Http { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// The provider's error type (`overloaded_error`…), when it sent one.
    pub fn error_type(&self) -> Option<String> {
        match self {
            ProviderError::Http { error_type, .. } => error_type.clone(),
            ProviderError::StreamError { error_type, .. } => Some(error_type.clone()),
            _ => None,
        }
    }

    /// Whether the server refused the request because the conversation does not fit the model's context window,
    /// in any provider's words: Anthropic's "prompt is too long", OpenAI's `context_length_exceeded`, llama.cpp's
    /// `exceed_context_size_error`, and the phrasings of compatible servers.
    pub fn is_prompt_too_long(&self) -> bool {
        let (status, kind, message) = match self {
            ProviderError::Http { status, error_type, message, .. } => (Some(*status), error_type.as_deref(), message),
            ProviderError::StreamError { error_type, message } => (None, Some(error_type.as_str()), message),
            _ => return false,
        };
        if !matches!(status, None | Some(400 | 413 | 422)) {
            return false;
        }
        let message = message.to_ascii_lowercase();
        matches!(kind, Some("context_length_exceeded" | "exceed_context_size_error" | "request_too_large"))
            || [
                "prompt is too long",
                "context_length_exceeded",
                "maximum context length",
                "context length exceeded",
                "exceeds the available context size",
                "exceeds the context window",
                "too many tokens",
                "input is too long",
            ]
            .iter()
            .any(|phrase| message.contains(phrase))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn http(status: u16, kind: &str, message: &str) -> ProviderError {
        ProviderError::Http {
            status,
            error_type: Some(kind.to_owned()),
            message: message.to_owned(),
            hint: None,
            retry_after: None,
            should_retry: None,
            headers: Vec::new(),
        }
    }

    #[test]
    fn a_prompt_too_long_is_known_in_each_providers_words() {
        assert!(
            http(400, "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum")
                .is_prompt_too_long()
        );
        assert!(http(400, "invalid_request_error", "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.").is_prompt_too_long());
        assert!(http(400, "context_length_exceeded", "").is_prompt_too_long());
        assert!(
            http(400, "exceed_context_size_error", "the request exceeds the available context size")
                .is_prompt_too_long()
        );
        assert!(
            http(413, "request_too_large", "Request exceeds the maximum allowed number of bytes.").is_prompt_too_long()
        );
        assert!(!http(400, "invalid_request_error", "messages.0: bad thing happened").is_prompt_too_long());
        assert!(!http(429, "rate_limit_error", "too many tokens per minute").is_prompt_too_long(), "a rate limit");
    }
}
