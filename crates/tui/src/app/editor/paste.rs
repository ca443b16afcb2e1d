//! Large pastes, shown collapsed as a placeholder token while the real text waits in a side table.
//!
//! A long paste (a log, a file) would otherwise fill the input pane and bury what the user is typing
//! around it. The token is ordinary text in the editor, so it moves and wraps like any word; the editor keeps
//! the cursor from landing inside it and deletes it whole, and expands every token on submit.

use std::ops::Range;

/// Pastes with more lines than this are collapsed.
pub const COLLAPSE_LINES: usize = 10;
/// Pastes with more characters than this are collapsed.
pub const COLLAPSE_CHARS: usize = 1_000;

/// A collapsed paste: the token shown and the text it stands for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Paste {
    pub placeholder: String,
    pub content: String,
}

/// Terminals send `\r` or `\r\n` for line breaks in pastes; the editor only knows `\n`.
pub(super) fn normalize_newlines(text: &str) -> String {
    text.replace("\r\n", "\n").replace('\r', "\n")
}

/// Whether a paste is big enough to collapse.
pub(super) fn is_large(text: &str) -> bool {
    text.lines().count() > COLLAPSE_LINES || text.chars().count() > COLLAPSE_CHARS
}

/// A token for `content` that no paste in `existing` uses: `[pasted N lines]`, or `[pasted N chars]` for a
/// single long line, with ` #2`, ` #3`… added when pastes of the same size are present.
pub(super) fn placeholder_for(content: &str, existing: &[Paste]) -> String {
    let lines = content.lines().count();
    let size = if lines > 1 { format!("{lines} lines") } else { format!("{} chars", content.chars().count()) };
    let taken = |candidate: &str| existing.iter().any(|paste| paste.placeholder == candidate);
    let base = format!("[pasted {size}]");
    if !taken(&base) {
        return base;
    }
    (2..).map(|n| format!("[pasted {size} #{n}]")).find(|candidate| !taken(candidate)).unwrap_or(base)
}

/// Where each paste's token occurs in `text`, in order, as (byte range, index into `pastes`). Overlaps
/// (only possible if the user typed a token by hand) resolve to the earlier occurrence.
pub(super) fn occurrences(text: &str, pastes: &[Paste]) -> Vec<(Range<usize>, usize)> {
    let mut found: Vec<(Range<usize>, usize)> = pastes
        .iter()
        .enumerate()
        .flat_map(|(index, paste)| {
            text.match_indices(paste.placeholder.as_str()).map(move |(at, token)| (at..at + token.len(), index))
        })
        .collect();
    found.sort_by_key(|(range, _)| (range.start, std::cmp::Reverse(range.end)));
    let mut out: Vec<(Range<usize>, usize)> = Vec::with_capacity(found.len());
    for (range, index) in found {
        if out.last().is_none_or(|(last, _)| last.end <= range.start) {
            out.push((range, index));
        }
    }
    out
}

/// `text` with every token replaced by its paste.
pub(super) fn expand(text: &str, pastes: &[Paste]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (range, index) in occurrences(text, pastes) {
        out.push_str(&text[at..range.start]);
        out.push_str(&pastes[index].content);
        at = range.end;
    }
    out.push_str(&text[at..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paste(placeholder: &str, content: &str) -> Paste {
        Paste { placeholder: placeholder.into(), content: content.into() }
    }

    #[test]
    fn sizes_and_names() {
        let eleven = "x\n".repeat(11);
        assert!(is_large(&eleven));
        assert!(!is_large(&"x\n".repeat(10)));
        assert!(is_large(&"y".repeat(1_001)));
        assert_eq!(placeholder_for(&eleven, &[]), "[pasted 11 lines]");
        assert_eq!(placeholder_for(&"y".repeat(1_001), &[]), "[pasted 1001 chars]");
        let existing = [paste("[pasted 11 lines]", ""), paste("[pasted 11 lines #2]", "")];
        assert_eq!(placeholder_for(&eleven, &existing), "[pasted 11 lines #3]");
        assert_eq!(normalize_newlines("a\r\nb\rc\n"), "a\nb\nc\n");
    }

    #[test]
    fn expands_every_token() {
        let pastes = [paste("[pasted 2 lines]", "one\ntwo"), paste("[pasted 2 lines #2]", "three\nfour")];
        let text = "a [pasted 2 lines] b [pasted 2 lines #2] c";
        assert_eq!(expand(text, &pastes), "a one\ntwo b three\nfour c");
        assert_eq!(occurrences(text, &pastes), [(2..18, 0), (21..40, 1)]);
        assert_eq!(expand("no tokens", &pastes), "no tokens");
    }
}
