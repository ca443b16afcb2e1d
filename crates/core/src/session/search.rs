//! Phrase search across all saved sessions, for the SearchSessions tool.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::path::Path;

use serde_json::Value;

use super::{LineReader, RawLine, SessionLine, now_secs, read_header, truncate_chars};
use crate::conversation::{ContentBlock, Message, Role};
use crate::fs_util::normalize;

/// One message that contains the phrase.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchHit {
    pub session_id: String,
    /// The session's latest title line, if it has one.
    pub title: Option<String>,
    /// Unix seconds: when the message was saved.
    pub at: u64,
    pub role: Role,
    /// The first matching line with up to 2 lines either side, from the text block, tool result or tool input
    /// that matched; long lines are cut around the match, the whole to about 400 characters.
    pub excerpt: String,
    /// Higher is better: grows (logarithmically) with the number of occurrences in the message and shrinks with
    /// its age (halved after 30 days).
    pub score: f64,
}

/// [`search_in`] over every session.
pub fn search(data_dir: &Path, query: &str, limit: usize) -> Vec<SearchHit> {
    search_in(data_dir, query, None, limit)
}

/// Case-insensitive phrase search over the text of every message (text blocks, tool results, tool inputs;
/// not thinking) of the sessions that ran in `cwd` (all of them when `None`). At most `limit` hits, best first.
///
/// Transcripts are streamed one line at a time and only the best `limit` hits are kept, so memory stays small
/// whatever the size of the history. A line is parsed only when its raw JSON contains the phrase (phrases that
/// JSON would escape, with quotes, backslashes or control characters, disable that shortcut). History replayed
/// after a compaction is skipped: it repeats messages found where they first appeared.
pub fn search_in(data_dir: &Path, query: &str, cwd: Option<&Path>, limit: usize) -> Vec<SearchHit> {
    let needle = query.trim().to_lowercase();
    if needle.is_empty() || limit == 0 {
        return Vec::new();
    }
    let mut paths = super::list::session_files(data_dir);
    paths.sort();
    let cwd = cwd.map(normalize);
    let matcher = Matcher::new(needle);
    let now = now_secs();
    let mut best = TopK::new(limit);
    for path in paths {
        let Ok(mut reader) = LineReader::open(&path) else { continue };
        let Ok(meta) = read_header(&mut reader, &path) else { continue };
        if cwd.as_ref().is_some_and(|cwd| normalize(&meta.cwd) != *cwd) {
            continue;
        }
        // Titles can come after the hits, so this session's hits are collected first and titled at the end.
        let mut session_best = TopK::new(limit);
        let mut title = None;
        let mut replay_left = 0usize;
        while let Ok(Some(line)) = reader.next_line() {
            let Some(text) = line.text else { continue };
            if text.starts_with(MESSAGE_PREFIX) {
                if replay_left > 0 {
                    replay_left -= 1;
                    continue;
                }
                if !matcher.raw_may_match(text) {
                    continue;
                }
            }
            let Ok(Ok(Some(parsed))) = serde_json::from_str::<RawLine>(text).map(RawLine::into_line) else { continue };
            match parsed {
                SessionLine::Message { .. } if replay_left > 0 => replay_left -= 1,
                SessionLine::Message { message, at } => {
                    let occurrences: usize = units(&message).map(|unit| matcher.count(unit)).sum();
                    if occurrences == 0 {
                        continue;
                    }
                    let age_days = now.saturating_sub(at) as f64 / 86_400.0;
                    let score = (1.0 + (occurrences as f64).ln()) / (1.0 + age_days / 30.0);
                    if !session_best.accepts(score, at) || !best.accepts(score, at) {
                        continue;
                    }
                    let Some(excerpt) = units(&message).find_map(|unit| matcher.excerpt(unit)) else { continue };
                    let hit =
                        SearchHit { session_id: meta.id.clone(), title: None, at, role: message.role, excerpt, score };
                    session_best.push(hit);
                }
                SessionLine::Title { title: t } => title = Some(t),
                SessionLine::CompactBoundary { messages, .. } | SessionLine::Restore { messages, .. } => {
                    replay_left = messages
                }
                _ => {}
            }
        }
        for mut hit in session_best.into_sorted() {
            hit.title = title.clone();
            best.push(hit);
        }
    }
    best.into_sorted()
}

/// How [`super::SessionWriter`] starts a message line; other lines are parsed whatever they start with.
const MESSAGE_PREFIX: &str = r#"{"type":"message","#;

/// The searchable text of a message: text blocks, tool results, and the string values in tool inputs.
fn units(message: &Message) -> impl Iterator<Item = &str> {
    message.content.iter().flat_map(|block| {
        let mut out = Vec::new();
        match block {
            ContentBlock::Text { text } => out.push(text.as_str()),
            ContentBlock::ToolResult { content, .. } => out.push(content.as_str()),
            ContentBlock::ToolUse { input, .. } => strings(input, &mut out),
            ContentBlock::Thinking { .. } | ContentBlock::RedactedThinking { .. } | ContentBlock::Image { .. } => {}
        }
        out
    })
}

fn strings<'a>(value: &'a Value, out: &mut Vec<&'a str>) {
    match value {
        Value::String(s) => out.push(s),
        Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
        Value::Object(map) => map.values().for_each(|v| strings(v, out)),
        _ => {}
    }
}

/// The lowercased phrase, and how to look for it.
struct Matcher {
    needle: String,
    /// Whether the phrase appears verbatim in the raw JSON of any text containing it (JSON escapes only quotes,
    /// backslashes and control characters).
    raw_searchable: bool,
}

impl Matcher {
    fn new(needle: String) -> Self {
        let raw_searchable = !needle.chars().any(|c| c == '"' || c == '\\' || c.is_control());
        Matcher { needle, raw_searchable }
    }

    /// A cheap test on a raw line: false only when the phrase cannot be in it.
    fn raw_may_match(&self, line: &str) -> bool {
        if !self.raw_searchable {
            return true;
        }
        if self.needle.is_ascii() {
            // ASCII lowercasing keeps byte offsets and UTF-8 validity, and is much cheaper than `to_lowercase`.
            contains_ascii_ci(line.as_bytes(), self.needle.as_bytes())
        } else {
            line.to_lowercase().contains(&self.needle)
        }
    }

    fn count(&self, text: &str) -> usize {
        if text.len() < self.needle.len() {
            return 0;
        }
        text.to_lowercase().matches(&self.needle).count()
    }

    /// The first line that contains the phrase with 2 lines either side, or `None` when there is no match.
    fn excerpt(&self, text: &str) -> Option<String> {
        // A phrase spanning lines is located by its first line.
        let first = self.needle.lines().next().unwrap_or(&self.needle);
        let lines: Vec<&str> = text.lines().collect();
        let (index, offset) =
            lines.iter().enumerate().find_map(|(i, line)| line.to_lowercase().find(first).map(|o| (i, o)))?;
        let mut out = Vec::new();
        for (i, line) in lines.iter().enumerate().take(index + 3).skip(index.saturating_sub(2)) {
            if i == index {
                out.push(window(line, offset, 200));
            } else {
                out.push(truncate_chars(line.trim_end(), 50));
            }
        }
        Some(truncate_chars(&out.join("\n"), 420))
    }
}

/// About `width` characters of `line` around the match at `lower_offset` (a byte offset in the lowercased line,
/// mapped back by character count since lowercasing can change byte lengths).
fn window(line: &str, lower_offset: usize, width: usize) -> String {
    let lower = line.to_lowercase();
    let match_char = lower.get(..lower_offset).map_or(0, |s| s.chars().count());
    let start = match_char.saturating_sub(width / 3);
    let mut out: String = line.chars().skip(start).take(width).collect();
    if line.chars().count() > start + width {
        out.push('…');
    }
    if start > 0 {
        out.insert(0, '…');
    }
    out.trim_end().to_string()
}

/// Whether `haystack` contains `needle` (already lowercase ASCII), ignoring ASCII case.
fn contains_ascii_ci(haystack: &[u8], needle: &[u8]) -> bool {
    let Some((&first, rest)) = needle.split_first() else { return true };
    let upper = first.to_ascii_uppercase();
    let mut i = 0;
    while i + needle.len() <= haystack.len() {
        let b = haystack[i];
        if (b == first || b == upper) && haystack[i + 1..i + needle.len()].eq_ignore_ascii_case(rest) {
            return true;
        }
        i += 1;
    }
    false
}

/// The best `limit` hits, by score then recency.
struct TopK {
    limit: usize,
    heap: BinaryHeap<Reverse<Ranked>>,
}

struct Ranked(SearchHit);

impl Ranked {
    fn key(&self) -> (f64, u64) {
        (self.0.score, self.0.at)
    }
}

fn cmp_key(a: (f64, u64), b: (f64, u64)) -> Ordering {
    a.0.total_cmp(&b.0).then(a.1.cmp(&b.1))
}

impl PartialEq for Ranked {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Ranked {}
impl PartialOrd for Ranked {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Ranked {
    fn cmp(&self, other: &Self) -> Ordering {
        cmp_key(self.key(), other.key())
    }
}

impl TopK {
    fn new(limit: usize) -> Self {
        TopK { limit, heap: BinaryHeap::with_capacity(limit.min(1024) + 1) }
    }

    /// Whether a hit with this key would be kept (checked before building its excerpt).
    fn accepts(&self, score: f64, at: u64) -> bool {
        self.heap.len() < self.limit
            || self.heap.peek().is_some_and(|Reverse(min)| cmp_key((score, at), min.key()) == Ordering::Greater)
    }

    fn push(&mut self, hit: SearchHit) {
        if self.accepts(hit.score, hit.at) {
            self.heap.push(Reverse(Ranked(hit)));
            if self.heap.len() > self.limit {
                self.heap.pop();
            }
        }
    }

    /// Best first.
    fn into_sorted(self) -> Vec<SearchHit> {
        // `Reverse` sorts ascending as descending.
        self.heap.into_sorted_vec().into_iter().map(|Reverse(Ranked(hit))| hit).collect()
    }
}
