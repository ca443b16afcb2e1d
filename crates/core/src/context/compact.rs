//! Automatic compaction: when the context window is nearly full, the history is replaced by a summary of its
//! earlier part, the most recent exchanges verbatim, and the current contents of the files being worked on.
//!
//! Everything here is pure: the agent loop decides when to call, sends the summary request and reads files;
//! these functions only build and cut message lists. The summary prompt asks for the things a resumed session
//! cannot rediscover on its own (the user's exact words, what was decided and why, what failed), while file
//! contents are re-read from disk rather than remembered, so nothing stale survives.

mod history;
pub mod prompts;
#[cfg(test)]
mod tests;

use std::path::PathBuf;

use serde_json::Value;

pub use history::{repair_history, validate_history};

use super::tokens::TokenCounter;
use crate::conversation::{ContentBlock, Message, Role};

/// The system prompt of the summary request. It replaces the agent's system prompt, so the model writes notes
/// instead of continuing the work.
pub const SUMMARY_SYSTEM: &str = "You summarize a coding session between a user and tandem, an AI coding assistant \
working in the user's terminal and repository, so that the assistant can continue the work after the conversation \
is cleared. You cannot call tools: reply with text only. Be accurate and specific: record only what the conversation \
shows, keep exact file paths, function names, commands and error messages, and quote the user's own words for what \
they asked.";

/// The sections the summary must have, in order, as the summary prompt names them.
pub const SUMMARY_SECTIONS: [&str; 6] =
    ["Task and acceptance criteria", "Files", "Decisions", "Errors and fixes", "Current state", "Next step"];

/// What each section must hold, in the order of [`SUMMARY_SECTIONS`].
const SECTION_DETAILS: [&str; 6] = [
    "the user's original request in their own words (quote it), every later request, correction or preference \
they stated (quoted), and what counts as done",
    "every file path that was read, created or modified, each with what was done to it and why it matters; \
include a short code snippet only where the exact text is needed to continue",
    "the decisions made and the reason for each, including approaches that were tried and rejected",
    "every error met (failed commands, compiler or test failures, tool errors) and how it was solved, or that it \
is still open",
    "what is finished, what is in progress, and what has been verified (which tests or commands pass)",
    "the very next action, in line with the user's most recent request (quote it) and where the work stopped; if \
the task is complete, say so and do not invent new work",
];

/// Opens the first message of a compacted history, so the model knows its memory has a seam.
pub const SUMMARY_PREAMBLE: &str = "This session is being continued from a previous conversation that ran out of \
context. The summary below covers the earlier part of the conversation.";

/// Heads the restored file contents.
pub const FILES_PREAMBLE: &str = "Current contents of files you were working with (read from disk after the \
summary was written, so they include every change made so far):";

/// Told to the model when no recent exchange could be kept, so it resumes instead of waiting.
const CONTINUE_NOTE: &str = "Continue from where the work stopped, without asking the user further questions: \
pick up the next step from the summary.";

/// Added to the first message by [`drop_oldest`], so the summarizer knows part of the history is missing.
const DROPPED_NOTE: &str = "[Part of the earlier conversation was removed here to fit the context window.]";

/// Tool results and long tool input strings are cut to about this many chars in the summary request: the
/// summary needs what happened, not whole file dumps, and the request must fit where the history no longer
/// does.
pub const TOOL_OUTPUT_LIMIT: usize = 2_000;
/// At most this many files are restored after compaction.
pub const MAX_RESTORED_FILES: usize = 5;
/// Each restored file is cut to about 5,000 tokens.
pub const MAX_RESTORED_FILE_CHARS: usize = 17_500;

/// When to compact.
///
/// Compaction triggers when `next_request_tokens > limit`, where
/// `limit = floor(threshold × window) − min(reserve_tokens, window / 4)` (saturating at 0). The reserve keeps
/// room for the summary request's instructions and the summary itself; it is capped at a quarter of the
/// window so small local models don't compact on every request.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CompactionPolicy {
    /// Fraction of the context window the next request may fill (clamped to 0..=1).
    pub threshold: f64,
    /// Tokens kept free for producing the summary.
    pub reserve_tokens: u64,
}

impl Default for CompactionPolicy {
    fn default() -> Self {
        CompactionPolicy { threshold: 0.92, reserve_tokens: 13_000 }
    }
}

impl CompactionPolicy {
    /// The most tokens the next request may have before compaction triggers (see the type's docs).
    pub fn limit(&self, window: u64) -> u64 {
        let threshold = if self.threshold.is_nan() { 1.0 } else { self.threshold.clamp(0.0, 1.0) };
        let budget = (threshold * window as f64).floor() as u64;
        budget.saturating_sub(self.reserve_tokens.min(window / 4))
    }

    /// Whether the next request, of `next_request_tokens` (see
    /// [`TokenCounter::next_request_tokens`]), should be preceded by compaction. A window of 0 means unknown and never triggers (compacting on every request would be worse).
    pub fn should_compact(&self, next_request_tokens: u64, window: u64) -> bool {
        window > 0 && next_request_tokens > self.limit(window)
    }

    /// A sensible `keep_tail_tokens` for [`rebuild`]: a tenth of the window, at most 20,000 tokens, so that a
    /// compacted history starts well under the limit and the next compaction is far off.
    pub fn keep_tail_tokens(&self, window: u64) -> u64 {
        (window / 10).min(20_000)
    }
}

/// The summary request as the next turn of the conversation itself: the history exactly as it was sent (so its
/// prefix is read from the prompt cache), with the summary instruction as the last user turn.
pub fn cached_summary_request(messages: &[Message], extra_instructions: Option<&str>) -> Vec<Message> {
    let mut out = messages.to_vec();
    let prompt = ContentBlock::text(summary_prompt(extra_instructions));
    match out.last_mut() {
        Some(last) if last.role == Role::User => last.content.push(prompt),
        _ => out.push(Message { role: Role::User, content: vec![prompt] }),
    }
    out
}

/// The messages of the summary request: the conversation, made small and valid, followed by the instruction
/// to summarize it (and `extra_instructions`, from CLAUDE.md's summary instructions or `/compact`'s argument).
///
/// Thinking blocks are dropped (the summary request runs without thinking), tool results and long strings in
/// tool inputs are cut to about [`TOOL_OUTPUT_LIMIT`] chars, and a final assistant message whose tool calls
/// have no results yet is dropped, so every `tool_use` keeps its `tool_result`. Send it with
/// [`SUMMARY_SYSTEM`] and the session's tool definitions (Anthropic rejects tool blocks in a request that
/// defines no tools).
pub fn summary_request(messages: &[Message], extra_instructions: Option<&str>) -> Vec<Message> {
    let mut shrunk: Vec<Message> = messages.iter().map(shrink_for_summary).collect();
    if shrunk.last().is_some_and(|last| {
        last.role == Role::Assistant && last.content.iter().any(|block| matches!(block, ContentBlock::ToolUse { .. }))
    }) {
        shrunk.pop();
    }
    let mut out = repair_history(shrunk);
    let prompt = ContentBlock::text(summary_prompt(extra_instructions));
    match out.last_mut() {
        Some(last) if last.role == Role::User => last.content.push(prompt),
        _ => out.push(Message { role: Role::User, content: vec![prompt] }),
    }
    out
}

/// The final instruction of the summary request.
fn summary_prompt(extra_instructions: Option<&str>) -> String {
    let mut prompt = String::from(
        "Your task now is to write a detailed summary of the conversation so far. It will replace the \
conversation: afterwards the assistant continues with only your summary, the most recent messages and the current \
contents of the files it was working with, so anything you leave out is forgotten. Be thorough about what matters \
for continuing the work and brief about the rest.\n\nDo not call any tools. You may first think it through inside \
<analysis> tags; then write the summary inside <summary> tags, with exactly these sections:\n",
    );
    for (number, (name, details)) in SUMMARY_SECTIONS.iter().zip(SECTION_DETAILS).enumerate() {
        prompt.push_str(&format!("\n{}. {name}: {details}.", number + 1));
    }
    if let Some(extra) = extra_instructions.map(str::trim).filter(|extra| !extra.is_empty()) {
        prompt.push_str("\n\nAdditional instructions for this summary:\n");
        prompt.push_str(extra);
    }
    prompt
}

/// The summary from the summary response's text: the content of its `<summary>` tags, or, if the model
/// didn't use them, the whole text without any `<analysis>` part.
pub fn extract_summary(response_text: &str) -> String {
    if let Some(start) = response_text.find("<summary>") {
        let body = &response_text[start + "<summary>".len()..];
        let body = body.rfind("</summary>").map_or(body, |end| &body[..end]);
        return body.trim().to_owned();
    }
    let without_analysis = match (response_text.find("<analysis>"), response_text.find("</analysis>")) {
        (Some(start), Some(end)) if start < end => {
            format!("{}{}", &response_text[..start], &response_text[end + "</analysis>".len()..])
        }
        _ => response_text.to_owned(),
    };
    without_analysis.trim().to_owned()
}

fn shrink_for_summary(message: &Message) -> Message {
    let content = message
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Thinking { .. } | ContentBlock::RedactedThinking { .. } => None,
            // The summary model reads what the images were about from the conversation, not the pixels.
            ContentBlock::Image { .. } => Some(ContentBlock::text("[an image the user attached]")),
            ContentBlock::ToolResult { tool_use_id, content, is_error } => Some(ContentBlock::ToolResult {
                tool_use_id: tool_use_id.clone(),
                content: truncate_middle(content, TOOL_OUTPUT_LIMIT),
                is_error: *is_error,
            }),
            ContentBlock::ToolUse { id, name, input } => Some(ContentBlock::ToolUse {
                id: id.clone(),
                name: name.clone(),
                input: truncate_strings(input, TOOL_OUTPUT_LIMIT).into(),
            }),
            ContentBlock::Text { .. } => Some(block.clone()),
        })
        .collect();
    Message { role: message.role, content }
}

/// Cuts long string values inside a tool input (a Write's content, an Edit's strings), keeping it valid JSON
/// of the same shape.
fn truncate_strings(value: &Value, limit: usize) -> Value {
    match value {
        Value::String(text) => Value::String(truncate_middle(text, limit)),
        Value::Array(items) => Value::Array(items.iter().map(|item| truncate_strings(item, limit)).collect()),
        Value::Object(fields) => {
            Value::Object(fields.iter().map(|(key, item)| (key.clone(), truncate_strings(item, limit))).collect())
        }
        other => other.clone(),
    }
}

/// Keeps the first three quarters and the last quarter of `limit` chars: tool output tends to matter at both
/// ends (what ran, and how it ended).
fn truncate_middle(text: &str, limit: usize) -> String {
    if text.len() <= limit {
        return text.to_owned();
    }
    let head_end = floor_boundary(text, limit * 3 / 4);
    let tail_start = ceil_boundary(text, text.len() - limit / 4);
    format!("{}\n[… {} chars omitted …]\n{}", &text[..head_end], tail_start - head_end, &text[tail_start..])
}

/// Keeps the first `limit` chars.
fn truncate_head(text: &str, limit: usize, note: &str) -> String {
    if text.len() <= limit {
        return text.to_owned();
    }
    format!("{}\n[{note}]", &text[..floor_boundary(text, limit)])
}

fn floor_boundary(text: &str, mut index: usize) -> usize {
    index = index.min(text.len());
    while !text.is_char_boundary(index) {
        index -= 1;
    }
    index
}

fn ceil_boundary(text: &str, mut index: usize) -> usize {
    while index < text.len() && !text.is_char_boundary(index) {
        index += 1;
    }
    index
}

/// Removes about `fraction` (by size) of the oldest exchanges, for retrying a summary request that failed
/// or overflowed. The first user message (the original task) is always kept, cuts fall only where no
/// `tool_use` is parted from its `tool_result`, and the last exchange is always kept. When nothing can be
/// removed the history comes back as it was (the same length): then give up rather than retry.
pub fn drop_oldest(messages: &[Message], fraction: f64) -> Vec<Message> {
    let Some(first) = messages.iter().position(|message| message.role == Role::User) else {
        return repair_history(messages.to_vec());
    };
    let rest = &messages[first + 1..];
    let target = (fraction.clamp(0.0, 1.0) * TokenCounter::chars_of(rest) as f64).ceil() as usize;
    let mut dropped = 0;
    let mut cut = None;
    // A cut at `index` removes rest[..index]; at least one message goes and at least one stays.
    for index in 1..rest.len() {
        dropped += TokenCounter::chars_of(&rest[index - 1..index]);
        if history::is_cut_point(rest, index) {
            cut = Some(index);
            if dropped >= target {
                break;
            }
        }
    }
    let Some(cut) = cut.filter(|_| target > 0) else {
        return repair_history(messages.to_vec());
    };
    let mut task = messages[first].clone();
    task.content.push(ContentBlock::text(DROPPED_NOTE));
    let mut out = vec![task];
    out.extend_from_slice(&rest[cut..]);
    repair_history(out)
}

/// The compacted history: one user message with the marked `summary` and the current contents of
/// `recent_files` (at most [`MAX_RESTORED_FILES`], each cut to [`MAX_RESTORED_FILE_CHARS`]), then the most
/// recent exchanges of `messages` verbatim, as many as fit in `keep_tail_tokens` (estimated by `counter`).
///
/// The tail starts at a user message without tool results or at an assistant message, so no `tool_result`
/// loses its `tool_use`; a user message at its start is merged into the summary message so roles alternate.
/// It never includes the first message (a compaction must replace something). Call it when `messages` ends
/// with a user message or a finished assistant reply (between rounds, before the next request): a trailing
/// `tool_use` without results is removed to keep the history valid.
pub fn rebuild(
    summary: &str,
    messages: &[Message],
    recent_files: &[(PathBuf, String)],
    keep_tail_tokens: u64,
    counter: &TokenCounter,
) -> Vec<Message> {
    let start = tail_start(messages, keep_tail_tokens, counter);
    let tail = &messages[start..];
    let mut first =
        vec![ContentBlock::text(format!("{SUMMARY_PREAMBLE}\n\n<summary>\n{}\n</summary>", summary.trim()))];
    // The user's words from the part the summary replaces stay as they were written.
    if let Some(prompts) = prompts::prompts_block(&prompts::user_prompts(&messages[..start])) {
        first.push(ContentBlock::text(prompts));
    }
    if let Some(files) = files_block(recent_files) {
        first.push(ContentBlock::text(files));
    }
    if tail.is_empty() {
        first.push(ContentBlock::text(CONTINUE_NOTE));
    }
    let mut out = vec![Message { role: Role::User, content: first }];
    out.extend_from_slice(tail);
    repair_history(out)
}

/// The tokens of what [`rebuild`] would replace by the summary: `messages` before the tail it keeps verbatim.
pub fn summarized_tokens(messages: &[Message], keep_tail_tokens: u64, counter: &TokenCounter) -> u64 {
    counter.estimate_messages(&messages[..tail_start(messages, keep_tail_tokens, counter)])
}

/// The index where the kept tail starts: the earliest cut point (after the first message) whose suffix fits
/// the budget, or `messages.len()` (nothing kept) when even the last exchange doesn't.
fn tail_start(messages: &[Message], keep_tail_tokens: u64, counter: &TokenCounter) -> usize {
    let mut start = messages.len();
    let mut chars = 0;
    for index in (1..messages.len()).rev() {
        chars += TokenCounter::chars_of(&messages[index..=index]);
        if counter.estimate_chars(chars) > keep_tail_tokens {
            break;
        }
        if history::is_cut_point(messages, index) {
            start = index;
        }
    }
    start
}

fn files_block(recent_files: &[(PathBuf, String)]) -> Option<String> {
    if recent_files.is_empty() {
        return None;
    }
    let mut block = String::from(FILES_PREAMBLE);
    for (path, content) in recent_files.iter().take(MAX_RESTORED_FILES) {
        let note = format!("… cut at {MAX_RESTORED_FILE_CHARS} of {} chars; Read the file for the rest", content.len());
        let content = truncate_head(content, MAX_RESTORED_FILE_CHARS, &note);
        block.push_str(&format!("\n\n<file path=\"{}\">\n{}\n</file>", path.display(), content.trim_end()));
    }
    Some(block)
}

/// The files most recently touched by Read, Edit or Write calls (their `file_path`), newest first, each once,
/// at most `limit`. Paths are as the model wrote them; relative ones are relative to the session's cwd.
pub fn recent_file_paths(messages: &[Message], limit: usize) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = Vec::new();
    let add = |path: &str, paths: &mut Vec<PathBuf>| {
        if paths.len() < limit && !paths.iter().any(|seen| seen.as_os_str() == path) {
            paths.push(PathBuf::from(path));
        }
    };
    let blocks = messages.iter().rev().flat_map(|message| message.content.iter().rev());
    for block in blocks {
        match block {
            ContentBlock::ToolUse { name, input, .. } if matches!(name.as_str(), "Read" | "Edit" | "Write") => {
                if let Some(path) = input.get("file_path").and_then(Value::as_str) {
                    add(path, &mut paths);
                }
            }
            // Files an earlier compaction restored are still being worked on: they survive the next one too.
            ContentBlock::Text { text } if text.contains("<file path=\"") => {
                for marker in text.split("<file path=\"").skip(1) {
                    if let Some((path, _)) = marker.split_once("\">") {
                        add(path, &mut paths);
                    }
                }
            }
            _ => {}
        }
    }
    paths
}
