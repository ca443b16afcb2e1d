//! Turning hunks into display rows once, when the view is built: display text, line numbers and the byte
//! ranges of changed words. Everything that does not depend on the width or the theme is done here, so a
//! render (which may run every frame) only wraps and styles.

use std::ops::Range;

use similar::{Algorithm, DiffTag};
use tandem_core::diff::{Hunk, LineKind};

use super::text::display_text;

/// Lines longer than this get no word-level highlight: the word diff would cost more than it shows.
const MAX_WORD_DIFF_BYTES: usize = 2_000;

/// Below this share of unchanged bytes a line pair counts as rewritten, not edited: highlighting nearly every
/// word would be noise, so the pair is shown as plain removed/added lines.
const MIN_UNCHANGED_SHARE: f32 = 0.3;

/// Byte ranges of changed words in a line (sorted, disjoint).
pub(crate) type WordRanges = Vec<Range<usize>>;

/// One diff line ready to draw.
#[derive(Clone, Debug)]
pub(crate) struct Row {
    pub kind: LineKind,
    pub old_number: Option<usize>,
    pub new_number: Option<usize>,
    /// Display form of the line (see [`display_text`]).
    pub text: String,
    /// Byte ranges of `text` that the word-level diff marks as changed (sorted, disjoint).
    pub words: WordRanges,
    pub missing_newline: bool,
}

/// Rows for every hunk, with line numbers counted from each hunk's header.
pub(crate) fn rows_for(hunks: &[Hunk]) -> Vec<Vec<Row>> {
    hunks.iter().map(hunk_rows).collect()
}

fn hunk_rows(hunk: &Hunk) -> Vec<Row> {
    // An empty range's start is the line before it, so its first line would be start + 1.
    let mut old_number = if hunk.old_len == 0 { hunk.old_start + 1 } else { hunk.old_start };
    let mut new_number = if hunk.new_len == 0 { hunk.new_start + 1 } else { hunk.new_start };
    let mut rows: Vec<Row> = hunk
        .lines
        .iter()
        .map(|line| {
            let (old, new) = match line.kind {
                LineKind::Context => (Some(old_number), Some(new_number)),
                LineKind::Removed => (Some(old_number), None),
                LineKind::Added => (None, Some(new_number)),
            };
            old_number += usize::from(old.is_some());
            new_number += usize::from(new.is_some());
            Row {
                kind: line.kind,
                old_number: old,
                new_number: new,
                text: display_text(&line.text),
                words: Vec::new(),
                missing_newline: line.missing_newline,
            }
        })
        .collect();
    mark_changed_words(&mut rows);
    rows
}

/// Pairs each run of removed lines with the run of added lines right after it (first with first, and so on)
/// and marks the words that differ inside each pair.
fn mark_changed_words(rows: &mut [Row]) {
    let mut index = 0;
    while index < rows.len() {
        if rows[index].kind != LineKind::Removed {
            index += 1;
            continue;
        }
        let removed_start = index;
        while index < rows.len() && rows[index].kind == LineKind::Removed {
            index += 1;
        }
        let added_start = index;
        while index < rows.len() && rows[index].kind == LineKind::Added {
            index += 1;
        }
        let pairs = (added_start - removed_start).min(index - added_start);
        for offset in 0..pairs {
            let (before, after) = rows.split_at_mut(added_start + offset);
            let (old_row, new_row) = (&mut before[removed_start + offset], &mut after[0]);
            if let Some((old_words, new_words)) = changed_words(&old_row.text, &new_row.text) {
                old_row.words = old_words;
                new_row.words = new_words;
            }
        }
    }
}

/// The changed byte ranges of `old` and `new` by a token-level diff (see [`tokens`]), or `None` when the lines
/// are too long or too different for word highlights to help.
pub(crate) fn changed_words(old: &str, new: &str) -> Option<(WordRanges, WordRanges)> {
    if old.len() > MAX_WORD_DIFF_BYTES || new.len() > MAX_WORD_DIFF_BYTES || old == new {
        return None;
    }
    let (old_tokens, new_tokens) = (tokens(old), tokens(new));
    let old_texts: Vec<&str> = old_tokens.iter().map(|range| &old[range.clone()]).collect();
    let new_texts: Vec<&str> = new_tokens.iter().map(|range| &new[range.clone()]).collect();
    let span = |tokens: &[Range<usize>], range: Range<usize>| -> Option<Range<usize>> {
        Some(tokens.get(range.start)?.start..tokens.get(range.end.checked_sub(1)?)?.end)
    };
    let (mut old_words, mut new_words) = (Vec::new(), Vec::new());
    let mut unchanged = 0;
    for op in similar::capture_diff_slices(Algorithm::Myers, &old_texts, &new_texts) {
        let (tag, old_range, new_range) = op.as_tag_tuple();
        if tag == DiffTag::Equal {
            unchanged += old_texts[old_range].iter().map(|token| token.trim().len()).sum::<usize>();
            continue;
        }
        if let Some(range) = span(&old_tokens, old_range) {
            push_range(&mut old_words, range);
        }
        if let Some(range) = span(&new_tokens, new_range) {
            push_range(&mut new_words, range);
        }
    }
    let longest = old.trim().len().max(new.trim().len()).max(1);
    if (unchanged as f32) / (longest as f32) < MIN_UNCHANGED_SHARE {
        return None;
    }
    Some((old_words, new_words))
}

/// Splits a line into diff tokens: runs of word characters (letters, digits, `_`), runs of whitespace, and
/// single other characters, so `text.split_whitespace()` diffs as `text` `.` `split_whitespace` `(` `)` and a
/// renamed method does not drag its receiver into the highlight.
fn tokens(text: &str) -> Vec<Range<usize>> {
    #[derive(PartialEq)]
    enum Class {
        Word,
        Space,
        Other,
    }
    let class = |ch: char| {
        if ch.is_alphanumeric() || ch == '_' {
            Class::Word
        } else if ch.is_whitespace() {
            Class::Space
        } else {
            Class::Other
        }
    };
    let mut out: Vec<Range<usize>> = Vec::new();
    let mut previous: Option<Class> = None;
    for (at, ch) in text.char_indices() {
        let current = class(ch);
        let extends = current != Class::Other && previous.as_ref() == Some(&current);
        match out.last_mut() {
            Some(last) if extends => last.end = at + ch.len_utf8(),
            _ => out.push(at..at + ch.len_utf8()),
        }
        previous = Some(current);
    }
    out
}

/// Appends a range, merging it into the previous one when they touch.
fn push_range(ranges: &mut Vec<Range<usize>>, range: Range<usize>) {
    match ranges.last_mut() {
        Some(last) if last.end == range.start => last.end = range.end,
        _ => ranges.push(range),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_only_the_changed_words() {
        let (before, after) = ("let total = price * count;", "let total = price * amount;");
        let (old, new) = changed_words(before, after).unwrap();
        let words = |text: &str, ranges: &[Range<usize>]| -> Vec<String> {
            ranges.iter().map(|range| text[range.clone()].to_owned()).collect()
        };
        assert_eq!(words(before, &old), ["count"]);
        assert_eq!(words(after, &new), ["amount"]);
        assert!(changed_words("completely different", "nothing alike here at all").is_none());
        assert!(changed_words("same", "same").is_none());
        let (before, after) = ("for word in text.split_whitespace() {", "for word in text.split_ascii_whitespace() {");
        let (old, new) = changed_words(before, after).unwrap();
        assert_eq!(words(before, &old), ["split_whitespace"]);
        assert_eq!(words(after, &new), ["split_ascii_whitespace"]);
    }

    #[test]
    fn numbers_lines_from_the_header() {
        let hunks = tandem_core::diff::hunks("a\nb\nc\n", "a\nB\nc\nd\n", 3);
        let rows = rows_for(&hunks);
        let numbers: Vec<_> = rows[0].iter().map(|row| (row.old_number, row.new_number)).collect();
        assert_eq!(
            numbers,
            [(Some(1), Some(1)), (Some(2), None), (None, Some(2)), (Some(3), Some(3)), (None, Some(4))]
        );
        let inserted = tandem_core::diff::hunks("", "x\n", 3);
        assert_eq!(rows_for(&inserted)[0][0].new_number, Some(1));
    }
}
