//! Token accounting: how full the context window is, without shipping a tokenizer.
//!
//! Providers report exact token counts, but only for requests already sent. So the context used by the *next*
//! request is the last reported total (every input token, cached or not, plus the reply's output tokens, which
//! are now part of the history) plus an estimate of what was appended since (tool results, the next user
//! message). The estimate divides a character count by a chars-per-token ratio that every reported usage
//! calibrates, so it drifts toward the real tokenizer of the model in use (code and non-English text tokenize
//! very differently from English prose).
//!
//! "Chars" are UTF-8 bytes throughout: counting them is free, and for non-Latin scripts bytes track tokens
//! better than code points do; calibration absorbs the difference either way.

use std::io;

use serde_json::Value;

use crate::conversation::{ContentBlock, Message, Usage};
use crate::provider::ModelRequest;

/// The ratio before any usage is reported: typical for a mix of English and code.
pub const INITIAL_CHARS_PER_TOKEN: f64 = 3.5;
/// The ratio never goes below this: even CJK text or base64 rarely gets under ~1 byte per token.
pub const MIN_CHARS_PER_TOKEN: f64 = 1.0;
/// The ratio never goes above this, so one odd report (a mostly cached or image-heavy request) can't make
/// the estimate wildly optimistic.
pub const MAX_CHARS_PER_TOKEN: f64 = 8.0;
/// Weight of the newest observation in the moving average: converges in a handful of requests while one
/// outlier moves the ratio by less than a third of its error.
const SMOOTHING: f64 = 0.3;
/// Requests smaller than this (in reported tokens) are too dominated by fixed framing to calibrate on.
const MIN_CALIBRATION_TOKENS: u64 = 200;
/// Framing the API adds per message (role markers), in chars.
const MESSAGE_OVERHEAD_CHARS: usize = 8;
/// Framing per tool block (type, id, name wrappers), in chars.
const TOOL_BLOCK_OVERHEAD_CHARS: usize = 24;

/// Tracks the context used by a session and calibrates the chars-per-token estimate.
#[derive(Clone, Debug, PartialEq)]
pub struct TokenCounter {
    chars_per_token: f64,
    /// Input + output tokens of the last response. `None` before the first response and after
    /// [`reset_baseline`](Self::reset_baseline), when the history it described no longer exists.
    last_total: Option<u64>,
}

impl Default for TokenCounter {
    fn default() -> Self {
        Self::new()
    }
}

impl TokenCounter {
    pub fn new() -> Self {
        TokenCounter { chars_per_token: INITIAL_CHARS_PER_TOKEN, last_total: None }
    }

    /// The current chars-per-token ratio.
    pub fn chars_per_token(&self) -> f64 {
        self.chars_per_token
    }

    /// The last response's input + output tokens, if one was recorded since the last reset.
    pub fn last_reported(&self) -> Option<u64> {
        self.last_total
    }

    /// Records a response's usage. `request_chars` is [`request_chars`](Self::request_chars) of the request
    /// that produced it (the same request, system prompt and tools included, or the ratio is skewed).
    ///
    /// A provider that reports no input tokens (some OpenAI-compatible servers) leaves the ratio alone, and
    /// the request's estimate stands in for the missing count, so compaction still triggers.
    pub fn record_usage(&mut self, request_chars: usize, usage: &Usage) {
        let input = usage.total_input();
        if input == 0 {
            self.last_total = Some(self.estimate_chars(request_chars) + usage.output_tokens);
            return;
        }
        if input >= MIN_CALIBRATION_TOKENS && request_chars > 0 {
            let observed = (request_chars as f64 / input as f64).clamp(MIN_CHARS_PER_TOKEN, MAX_CHARS_PER_TOKEN);
            self.chars_per_token += SMOOTHING * (observed - self.chars_per_token);
            self.chars_per_token = self.chars_per_token.clamp(MIN_CHARS_PER_TOKEN, MAX_CHARS_PER_TOKEN);
        }
        self.last_total = Some(input + usage.output_tokens);
    }

    /// Forgets the last reported total. Call after compaction: the total described a history that was
    /// replaced, so until the next response [`next_request_tokens`](Self::next_request_tokens) estimates the
    /// whole request instead. The calibrated ratio is kept.
    pub fn reset_baseline(&mut self) {
        self.last_total = None;
    }

    /// Tokens for `chars` characters at the current ratio, rounded up (over-estimating is the safe side).
    pub fn estimate_chars(&self, chars: usize) -> u64 {
        (chars as f64 / self.chars_per_token).ceil() as u64
    }

    /// Estimated tokens of some messages.
    pub fn estimate_messages(&self, messages: &[Message]) -> u64 {
        self.estimate_chars(Self::chars_of(messages))
    }

    /// Context used: the last reported total plus an estimate of `added_since_last`, the messages appended to
    /// the history after the last response's assistant message (tool results, the next user message). The
    /// reply itself is already counted by the reported output tokens. Before any usage is recorded this is
    /// the estimate of the messages alone; prefer [`next_request_tokens`](Self::next_request_tokens).
    pub fn context_used(&self, added_since_last: &[Message]) -> u64 {
        self.last_total.unwrap_or(0) + self.estimate_messages(added_since_last)
    }

    /// The size of the next request: [`context_used`](Self::context_used) when a reported total is known,
    /// otherwise (first request, or right after compaction) the estimate of the whole request, whose size in
    /// chars is `request_chars` (system prompt and tool definitions included).
    pub fn next_request_tokens(&self, request_chars: usize, added_since_last: &[Message]) -> u64 {
        match self.last_total {
            Some(_) => self.context_used(added_since_last),
            None => self.estimate_chars(request_chars),
        }
    }

    /// Chars of a whole request: system blocks, tool definitions (as JSON) and messages. This is what a
    /// reported input count corresponds to, so it is what [`record_usage`](Self::record_usage) wants.
    pub fn request_chars(request: &ModelRequest) -> usize {
        let system: usize = request.system.iter().map(|block| block.text.len()).sum();
        let tools: usize = request
            .tools
            .iter()
            .map(|tool| tool.name.len() + tool.description.len() + json_len(&tool.input_schema))
            .sum();
        system + tools + Self::chars_of(&request.messages)
    }

    /// Chars of messages: the text of every block, tool inputs as JSON and tool results included, plus a
    /// little per-message and per-tool-block framing. Thinking signatures are opaque and not counted.
    pub fn chars_of(messages: &[Message]) -> usize {
        messages
            .iter()
            .map(|message| MESSAGE_OVERHEAD_CHARS + message.content.iter().map(block_chars).sum::<usize>())
            .sum()
    }
}

/// What an image counts for, in characters of text (the counter's unit): 1,600 tokens.
const IMAGE_CHARS: usize = 1600 * 4;

fn block_chars(block: &ContentBlock) -> usize {
    match block {
        ContentBlock::Text { text } => text.len(),
        ContentBlock::Thinking { thinking, .. } => thinking.len(),
        ContentBlock::RedactedThinking { data } => data.len(),
        // Anthropic counts an image as about (width × height) / 750 tokens, at most about 1,600: the most is assumed.
        ContentBlock::Image { .. } => IMAGE_CHARS,
        ContentBlock::ToolUse { id, name, input } => {
            TOOL_BLOCK_OVERHEAD_CHARS + id.len() + name.len() + json_len(input)
        }
        ContentBlock::ToolResult { tool_use_id, content, .. } => {
            TOOL_BLOCK_OVERHEAD_CHARS + tool_use_id.len() + content.len()
        }
    }
}

/// Length of a value serialized as compact JSON, without building the string.
fn json_len(value: &Value) -> usize {
    let mut counter = ByteCount(0);
    // Writing to a counter can't fail; should serde ever report an error, the partial count is still a
    // reasonable estimate.
    let _ = serde_json::to_writer(&mut counter, value);
    counter.0
}

struct ByteCount(usize);

impl io::Write for ByteCount {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::conversation::Role;
    use crate::provider::{SystemBlock, ToolSpec};

    fn usage(input: u64, cache_read: u64, output: u64) -> Usage {
        Usage {
            input_tokens: input,
            output_tokens: output,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: cache_read,
        }
    }

    #[test]
    fn calibration_converges_toward_reported_ratio() {
        let mut counter = TokenCounter::new();
        assert_eq!(counter.chars_per_token(), INITIAL_CHARS_PER_TOKEN);
        // The real tokenizer turns 25,000 chars into 10,000 tokens: 2.5 chars per token.
        let mut previous_error = (counter.chars_per_token() - 2.5).abs();
        for _ in 0..20 {
            counter.record_usage(25_000, &usage(4_000, 6_000, 300));
            let error = (counter.chars_per_token() - 2.5).abs();
            assert!(error < previous_error || error < 1e-9, "error went from {previous_error} to {error}");
            previous_error = error;
        }
        assert!(previous_error < 0.01, "ratio {} did not converge to 2.5", counter.chars_per_token());
        assert_eq!(counter.estimate_chars(2_500), 1_000);
    }

    #[test]
    fn ratio_is_clamped_and_tiny_requests_do_not_calibrate() {
        let mut counter = TokenCounter::new();
        counter.record_usage(10, &usage(50, 0, 1));
        assert_eq!(counter.chars_per_token(), INITIAL_CHARS_PER_TOKEN);
        for _ in 0..50 {
            counter.record_usage(10_000_000, &usage(1_000, 0, 0));
        }
        assert!(counter.chars_per_token() <= MAX_CHARS_PER_TOKEN);
        for _ in 0..50 {
            counter.record_usage(1_000, &usage(100_000, 0, 0));
        }
        assert!(counter.chars_per_token() >= MIN_CHARS_PER_TOKEN);
        assert!((counter.chars_per_token() - MIN_CHARS_PER_TOKEN).abs() < 1e-6);
    }

    #[test]
    fn context_used_is_last_total_plus_added_estimate() {
        let mut counter = TokenCounter::new();
        assert_eq!(counter.last_reported(), None);
        counter.record_usage(35_000, &usage(1_000, 9_000, 500));
        // 35,000 chars / 10,000 tokens = 3.5: the ratio stays put.
        assert!((counter.chars_per_token() - 3.5).abs() < 1e-9);
        assert_eq!(counter.last_reported(), Some(10_500));
        let added = [Message::user_text("x".repeat(3_500 - MESSAGE_OVERHEAD_CHARS))];
        assert_eq!(counter.context_used(&added), 11_500);
        assert_eq!(counter.context_used(&[]), 10_500);
        assert_eq!(counter.next_request_tokens(1, &added), 11_500);

        counter.reset_baseline();
        assert_eq!(counter.next_request_tokens(7_000, &added), 2_000);
    }

    #[test]
    fn missing_usage_falls_back_to_the_request_estimate() {
        let mut counter = TokenCounter::new();
        counter.record_usage(7_000, &usage(0, 0, 0));
        assert_eq!(counter.last_reported(), Some(2_000));
        assert_eq!(counter.chars_per_token(), INITIAL_CHARS_PER_TOKEN);
    }

    #[test]
    fn chars_count_every_block_kind() {
        let messages = vec![
            Message::user_text("hello"),
            Message {
                role: Role::Assistant,
                content: vec![
                    ContentBlock::Thinking { thinking: "hmm".into(), signature: "s".repeat(1_000) },
                    ContentBlock::ToolUse {
                        id: "t1".into(),
                        name: "Read".into(),
                        input: json!({"file_path": "a.rs"}).into(),
                    },
                ],
            },
            Message {
                role: Role::User,
                content: vec![ContentBlock::ToolResult {
                    tool_use_id: "t1".into(),
                    content: "x".repeat(100),
                    is_error: false,
                }],
            },
        ];
        let input_len = json!({"file_path": "a.rs"}).to_string().len();
        let expected = 3 * MESSAGE_OVERHEAD_CHARS
            + 5
            + 3
            + (TOOL_BLOCK_OVERHEAD_CHARS + 2 + 4 + input_len)
            + (TOOL_BLOCK_OVERHEAD_CHARS + 2 + 100);
        assert_eq!(TokenCounter::chars_of(&messages), expected);

        let request = ModelRequest {
            model: "m".into(),
            system: vec![SystemBlock { text: "sys".into(), cache: true }],
            messages: messages.clone(),
            tools: vec![ToolSpec { name: "Read".into(), description: "reads".into(), input_schema: json!({}) }],
            max_tokens: 1,
            reasoning: Default::default(),
            betas: Vec::new(),
        };
        assert_eq!(TokenCounter::request_chars(&request), expected + 3 + 4 + 5 + 2);
    }
}
