//! When and how long to wait before sending a failed request again.
//!
//! The rules follow the official Anthropic SDK (protocols.md §1): the server's `x-should-retry` wins; otherwise
//! timeouts, conflicts, rate limits, server errors and broken connections are retried with exponential
//! backoff, and a request the server rejected as wrong is not, because sending it again cannot help.
//! Decisions are pure functions of the error and the attempt number so they can be tested without waiting.

use std::time::Duration;

use super::ProviderError;

/// The longest server-requested wait we honour; a longer `retry-after` is capped rather than obeyed, so a
/// misconfigured proxy can't park the agent for an hour.
pub const MAX_SERVER_DELAY: Duration = Duration::from_secs(60);

/// The environment variable that overrides [`RetryPolicy::base_delay`] in milliseconds (for tests).
pub const BASE_DELAY_ENV: &str = "TANDEM_RETRY_BASE_MS";

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in all, the first one included.
    pub max_attempts: u32,
    pub base_delay: Duration,
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy { max_attempts: 10, base_delay: Duration::from_millis(500), max_delay: Duration::from_secs(8) }
    }
}

impl RetryPolicy {
    /// The default policy, with `TANDEM_RETRY_BASE_MS` (if set to a number) as the base delay. The maximum
    /// delay shrinks with it, so a test that sets the base to 1 ms never waits seconds.
    pub fn from_env() -> Self {
        let base_ms = std::env::var(BASE_DELAY_ENV).ok().and_then(|v| v.trim().parse::<u64>().ok());
        Self::default().with_base_ms(base_ms)
    }

    fn with_base_ms(self, base_ms: Option<u64>) -> Self {
        match base_ms {
            Some(ms) => {
                let default = RetryPolicy::default();
                let base_delay = Duration::from_millis(ms);
                let ratio = default.max_delay.as_millis() / default.base_delay.as_millis().max(1);
                let max_delay = base_delay.saturating_mul(u32::try_from(ratio).unwrap_or(u32::MAX));
                RetryPolicy { base_delay, max_delay, ..self }
            }
            None => self,
        }
    }

    /// How long to wait before attempt `attempt + 1`, after attempt number `attempt` (1-based) failed with
    /// `err`; `None` when the error is final or the attempts are used up.
    pub fn retry_delay(&self, err: &ProviderError, attempt: u32) -> Option<Duration> {
        if attempt >= self.max_attempts || !is_retryable(err) {
            return None;
        }
        let server = match err {
            ProviderError::Http { retry_after: Some(delay), .. } => Some(*delay),
            _ => None,
        };
        Some(match server {
            Some(delay) => delay.min(MAX_SERVER_DELAY),
            None => self.jittered(self.backoff(attempt), fastrand::f64()),
        })
    }

    /// `base · 2^(attempt-1)`, capped at `max_delay`.
    pub fn backoff(&self, attempt: u32) -> Duration {
        let exponent = attempt.saturating_sub(1).min(30);
        self.base_delay.saturating_mul(1u32 << exponent).min(self.max_delay)
    }

    /// 75–100 % of `delay`, `unit` being a random number in [0, 1): jitter keeps many clients that failed
    /// together from coming back together.
    fn jittered(&self, delay: Duration, unit: f64) -> Duration {
        delay.mul_f64(0.75 + 0.25 * unit.clamp(0.0, 1.0))
    }
}

/// Whether sending the same request again could succeed.
pub fn is_retryable(err: &ProviderError) -> bool {
    match err {
        ProviderError::Http { should_retry: Some(decision), .. } => *decision,
        ProviderError::Http { status, .. } => matches!(status, 408 | 409 | 429) || *status >= 500,
        ProviderError::Connect { .. } | ProviderError::Disconnected { .. } => true,
        ProviderError::StreamError { error_type, .. } => {
            // OpenAI-compatible servers use other names for the same transient failures.
            matches!(
                error_type.as_str(),
                "overloaded_error"
                    | "api_error"
                    | "rate_limit_error"
                    | "server_error"
                    | "timeout_error"
                    | "500"
                    | "502"
                    | "503"
                    | "529"
            )
        }
        ProviderError::Malformed { .. } => true,
        ProviderError::Request { .. } => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn http(status: u16) -> ProviderError {
        ProviderError::Http {
            status,
            error_type: None,
            message: String::new(),
            hint: None,
            retry_after: None,
            should_retry: None,
            headers: Vec::new(),
        }
    }

    fn stream_error(kind: &str) -> ProviderError {
        ProviderError::StreamError { error_type: kind.into(), message: "x".into() }
    }

    #[test]
    fn retryable_errors() {
        for status in [408, 409, 429, 500, 502, 503, 529] {
            assert!(is_retryable(&http(status)), "{status}");
        }
        for status in [400, 401, 403, 404, 413, 422] {
            assert!(!is_retryable(&http(status)), "{status}");
        }
        assert!(is_retryable(&ProviderError::Connect { url: "u".into(), message: "m".into() }));
        assert!(is_retryable(&ProviderError::Disconnected { message: "m".into() }));
        assert!(is_retryable(&stream_error("overloaded_error")));
        assert!(is_retryable(&stream_error("api_error")));
        assert!(!is_retryable(&stream_error("invalid_request_error")));
        assert!(is_retryable(&ProviderError::Malformed { message: "m".into() }));
        assert!(!is_retryable(&ProviderError::Request { message: "m".into() }));
    }

    #[test]
    fn should_retry_header_wins() {
        let mut err = http(400);
        if let ProviderError::Http { should_retry, .. } = &mut err {
            *should_retry = Some(true);
        }
        assert!(is_retryable(&err));
        let mut err = http(503);
        if let ProviderError::Http { should_retry, .. } = &mut err {
            *should_retry = Some(false);
        }
        assert!(!is_retryable(&err));
        assert_eq!(RetryPolicy::default().retry_delay(&err, 1), None);
    }

    #[test]
    fn backoff_doubles_within_bounds_and_jitters_down_only() {
        let policy = RetryPolicy::default();
        let expected = [500, 1000, 2000, 4000, 8000, 8000, 8000];
        for (attempt, ms) in (1..).zip(expected) {
            assert_eq!(policy.backoff(attempt), Duration::from_millis(ms), "attempt {attempt}");
            let delay = policy.retry_delay(&http(529), attempt).unwrap();
            let ms = u128::from(ms);
            assert!(delay.as_millis() >= ms * 3 / 4 && delay.as_millis() <= ms, "{delay:?} for {ms}");
        }
        assert_eq!(policy.backoff(1000), policy.max_delay);
        assert_eq!(policy.jittered(Duration::from_secs(4), 0.0), Duration::from_secs(3));
        assert_eq!(policy.jittered(Duration::from_secs(4), 1.0), Duration::from_secs(4));
    }

    #[test]
    fn attempts_run_out() {
        let policy = RetryPolicy { max_attempts: 3, ..RetryPolicy::default() };
        assert!(policy.retry_delay(&http(500), 1).is_some());
        assert!(policy.retry_delay(&http(500), 2).is_some());
        assert_eq!(policy.retry_delay(&http(500), 3), None);
        assert_eq!(policy.retry_delay(&http(400), 1), None);
    }

    #[test]
    fn server_delay_is_obeyed_and_capped() {
        let with_delay = |secs| ProviderError::Http {
            status: 429,
            error_type: Some("rate_limit_error".into()),
            message: String::new(),
            hint: None,
            retry_after: Some(Duration::from_secs(secs)),
            should_retry: None,
            headers: Vec::new(),
        };
        let policy = RetryPolicy::default();
        assert_eq!(policy.retry_delay(&with_delay(0), 1), Some(Duration::ZERO));
        assert_eq!(policy.retry_delay(&with_delay(12), 4), Some(Duration::from_secs(12)));
        assert_eq!(policy.retry_delay(&with_delay(3600), 1), Some(MAX_SERVER_DELAY));
    }

    #[test]
    fn base_override_scales_the_cap() {
        let policy = RetryPolicy::default().with_base_ms(Some(1));
        assert_eq!(policy.base_delay, Duration::from_millis(1));
        assert_eq!(policy.max_delay, Duration::from_millis(16));
        assert_eq!(RetryPolicy::default().with_base_ms(None), RetryPolicy::default());
    }
}
