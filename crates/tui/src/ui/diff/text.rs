//! Text helpers shared by the diff view and the permission dialog: the display form of a line of code, and
//! breaking a line into rows without losing a single character.
//!
//! Invariant: the rows returned by [`rows`] concatenate to exactly the text given, so a wrapped command or
//! diff line always shows every byte the model proposed (a space at a row's end may be clipped by the
//! terminal edge, nothing else).

use std::ops::Range;

use unicode_segmentation::UnicodeSegmentation;
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// Tab stops every this many columns: a tab has no width of its own in a terminal cell grid.
const TAB_WIDTH: usize = 4;

/// Whether every byte is printable ASCII, i.e. one column per byte (the fast path for wrapping).
pub(crate) fn is_plain_ascii(text: &str) -> bool {
    text.bytes().all(|byte| (0x20..0x7f).contains(&byte))
}

/// The display form of one line of code: a trailing `\r` (CRLF files) dropped, tabs expanded to
/// [`TAB_WIDTH`]-column stops, and other control characters shown as `�`, so file content can never move
/// the terminal's cursor or change its modes.
pub(crate) fn display_text(raw: &str) -> String {
    let raw = raw.strip_suffix('\r').unwrap_or(raw);
    if is_plain_ascii(raw) {
        return raw.to_owned();
    }
    let mut out = String::with_capacity(raw.len() + 8);
    let mut column = 0;
    for ch in raw.chars() {
        match ch {
            '\t' => {
                let spaces = TAB_WIDTH - column % TAB_WIDTH;
                out.extend(std::iter::repeat_n(' ', spaces));
                column += spaces;
            }
            ch if ch.is_control() => {
                out.push('\u{fffd}');
                column += 1;
            }
            ch => {
                out.push(ch);
                column += ch.width().unwrap_or(0);
            }
        }
    }
    out
}

/// Splits `text` (already in display form, one line) into rows of at most `width` columns and returns their
/// byte ranges. A row ends after the last space in its second half when there is one (so words mostly stay
/// whole), otherwise at the width; a single space that would start the next row stays at the end of this one.
/// An empty text is one empty row.
pub(crate) fn rows(text: &str, width: usize) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    for_each_row(text, width, |range| out.push(range));
    out
}

/// How many rows [`rows`] would return, without allocating in the common case of a short line.
pub(crate) fn row_count(text: &str, width: usize) -> usize {
    let width = width.max(1);
    if text.len() <= width && is_plain_ascii(text) {
        return 1;
    }
    let mut count = 0;
    for_each_row(text, width, |_| count += 1);
    count
}

fn for_each_row(text: &str, width: usize, mut emit: impl FnMut(Range<usize>)) {
    let width = width.max(1);
    if text.is_empty() {
        emit(0..0);
        return;
    }
    if is_plain_ascii(text) {
        ascii_rows(text.as_bytes(), width, emit);
    } else {
        unicode_rows(text, width, emit);
    }
}

fn ascii_rows(bytes: &[u8], width: usize, mut emit: impl FnMut(Range<usize>)) {
    let mut start = 0;
    while start < bytes.len() {
        if bytes.len() - start <= width {
            emit(start..bytes.len());
            return;
        }
        let hard = start + width;
        let end = if bytes[hard] == b' ' {
            hard + 1
        } else {
            let soft_from = start + width / 2;
            match bytes[soft_from..hard].iter().rposition(|byte| *byte == b' ') {
                Some(index) if soft_from + index + 1 > start => soft_from + index + 1,
                _ => hard,
            }
        };
        emit(start..end);
        start = end;
    }
}

fn unicode_rows(text: &str, width: usize, mut emit: impl FnMut(Range<usize>)) {
    let mut start = 0;
    let mut used = 0;
    // The byte just after the last space in this row that lies in its second half, and the columns before it.
    let mut soft_break: Option<(usize, usize)> = None;
    for (index, grapheme) in text.grapheme_indices(true) {
        let grapheme_width = grapheme.width();
        if used + grapheme_width > width && index > start {
            if grapheme == " " {
                // The space stays at the end of this row, past the edge: it is invisible either way.
                emit(start..index + 1);
                start = index + 1;
                used = 0;
                soft_break = None;
                continue;
            }
            if let Some((at, before)) = soft_break.take() {
                emit(start..at);
                start = at;
                used -= before;
            }
            if used + grapheme_width > width && index > start {
                emit(start..index);
                start = index;
                used = 0;
            }
        }
        used += grapheme_width;
        if grapheme == " " && used * 2 >= width {
            soft_break = Some((index + 1, used));
        }
    }
    if start < text.len() {
        emit(start..text.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(text: &str, width: usize) -> Vec<&str> {
        rows(text, width).into_iter().map(|range| &text[range]).collect()
    }

    #[test]
    fn display_text_strips_cr_and_expands_tabs() {
        assert_eq!(display_text("a\tb\r"), "a   b");
        assert_eq!(display_text("\tx"), "    x");
        assert_eq!(display_text("é\u{1b}[2J"), "é\u{fffd}[2J");
        assert_eq!(display_text("plain"), "plain");
    }

    #[test]
    fn rows_keep_every_character() {
        let text = "cargo test --workspace --all-features -- --nocapture  two  spaces";
        for width in 1..40 {
            let parts = split(text, width);
            assert_eq!(parts.concat(), text, "width {width}");
            assert_eq!(parts.len(), row_count(text, width));
            assert!(parts.iter().all(|part| part.trim_end().len() <= width), "width {width}: {parts:?}");
        }
        assert_eq!(split("aaaa bbbb", 4), ["aaaa ", "bbbb"]);
        assert_eq!(split("the quick brown", 10), ["the quick ", "brown"]);
        assert_eq!(split("", 5), [""]);
    }

    #[test]
    fn unicode_rows_respect_columns() {
        let text = "日本語のテキスト and more words here ✓";
        for width in 2..30 {
            let parts = split(text, width);
            assert_eq!(parts.concat(), text);
            assert_eq!(parts.len(), row_count(text, width));
            assert!(parts.iter().all(|part| part.trim_end().width() <= width), "width {width}: {parts:?}");
        }
    }
}
