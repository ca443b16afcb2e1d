//! Text geometry for the editor: grapheme and word steps, and wrapping into display rows.
//!
//! Everything works on byte indices into the editor's display text (pastes collapsed to tokens). A
//! "unit" is what one cursor step crosses: a grapheme cluster, or a whole paste token, so the cursor can
//! never stop inside a token and deleting one unit deletes the whole token.

use std::ops::Range;

use ratatui::buffer::CellWidth;
use unicode_segmentation::UnicodeSegmentation;

/// Columns a tab takes. Tabs only arrive in pastes; a fixed width keeps wrapping simple and predictable.
const TAB_WIDTH: usize = 4;

/// Display width of one grapheme, matching what ratatui's buffer draws for [`grapheme_display`].
pub(super) fn grapheme_width(grapheme: &str) -> usize {
    if grapheme == "\t" {
        TAB_WIDTH
    } else if grapheme.contains(char::is_control) {
        1
    } else {
        usize::from(grapheme.cell_width())
    }
}

/// What is drawn for a grapheme: tabs become spaces and other control characters a replacement mark,
/// since writing them to the terminal would move its cursor behind ratatui's back.
pub(super) fn grapheme_display(grapheme: &str) -> &str {
    if grapheme == "\t" {
        "    "
    } else if grapheme.contains(char::is_control) {
        "\u{FFFD}"
    } else {
        grapheme
    }
}

/// Display width of a string without line breaks.
pub(super) fn str_width(text: &str) -> usize {
    text.graphemes(true).map(grapheme_width).sum()
}

/// What word motions see a unit as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Class {
    /// Whitespace, line breaks included.
    Space,
    /// Letters, digits and `_`, in any script.
    Word,
    /// Anything else: punctuation, symbols, emoji.
    Punct,
    /// A collapsed paste token, always a word of its own.
    Paste,
}

fn class_of(grapheme: &str) -> Class {
    match grapheme.chars().next() {
        Some(c) if c.is_whitespace() => Class::Space,
        Some(c) if c.is_alphanumeric() || c == '_' => Class::Word,
        _ => Class::Punct,
    }
}

/// The units of a text, given where its paste tokens are (sorted, non-overlapping).
pub(super) struct Units<'a> {
    pub text: &'a str,
    pub pastes: &'a [Range<usize>],
}

impl Units<'_> {
    /// The unit ending at `pos`: its start and class.
    pub(super) fn prev(&self, pos: usize) -> Option<(usize, Class)> {
        if let Some(paste) = self.pastes.iter().find(|paste| paste.end == pos) {
            return Some((paste.start, Class::Paste));
        }
        let (start, grapheme) = self.text.get(..pos)?.grapheme_indices(true).next_back()?;
        Some((start, class_of(grapheme)))
    }

    /// The unit starting at `pos`: its end and class.
    pub(super) fn next(&self, pos: usize) -> Option<(usize, Class)> {
        if let Some(paste) = self.pastes.iter().find(|paste| paste.start == pos) {
            return Some((paste.end, Class::Paste));
        }
        let grapheme = self.text.get(pos..)?.graphemes(true).next()?;
        Some((pos + grapheme.len(), class_of(grapheme)))
    }

    /// Start of the word before `pos` (Alt+B, Alt+Backspace): skips whitespace, then one run of word
    /// characters or of punctuation, so `foo.bar|` goes to `foo.|bar`.
    pub(super) fn word_left(&self, pos: usize) -> usize {
        let pos = self.skip_left(pos, |class| class == Class::Space);
        match self.prev(pos) {
            None => pos,
            Some((start, Class::Paste)) => start,
            Some((start, class)) => self.skip_left(start, |other| other == class),
        }
    }

    /// End of the word after `pos` (Alt+F, Alt+D); the mirror of [`Units::word_left`].
    pub(super) fn word_right(&self, pos: usize) -> usize {
        let pos = self.skip_right(pos, |class| class == Class::Space);
        match self.next(pos) {
            None => pos,
            Some((end, Class::Paste)) => end,
            Some((end, class)) => self.skip_right(end, |other| other == class),
        }
    }

    /// Start of the whitespace-delimited word before `pos` (Ctrl+W, as in shells: `rm -rf foo/bar|` deletes
    /// `foo/bar` whole).
    pub(super) fn big_word_left(&self, pos: usize) -> usize {
        let pos = self.skip_left(pos, |class| class == Class::Space);
        self.skip_left(pos, |class| class != Class::Space)
    }

    fn skip_left(&self, mut pos: usize, take: impl Fn(Class) -> bool) -> usize {
        while let Some((start, class)) = self.prev(pos) {
            if !take(class) {
                break;
            }
            pos = start;
        }
        pos
    }

    fn skip_right(&self, mut pos: usize, take: impl Fn(Class) -> bool) -> usize {
        while let Some((end, class)) = self.next(pos) {
            if !take(class) {
                break;
            }
            pos = end;
        }
        pos
    }

    /// Grows `range` to whole paste tokens, so no edit leaves half a token behind.
    pub(super) fn expand(&self, range: Range<usize>) -> Range<usize> {
        let mut range = range;
        for paste in self.pastes {
            if paste.start < range.end && range.start < paste.end {
                range.start = range.start.min(paste.start);
                range.end = range.end.max(paste.end);
            }
        }
        range
    }

    /// `pos` moved to a place the cursor may be: a grapheme boundary outside any token.
    pub(super) fn snap(&self, pos: usize) -> usize {
        let pos = pos.min(self.text.len());
        if let Some(paste) = self.pastes.iter().find(|paste| paste.start < pos && pos < paste.end) {
            return paste.end;
        }
        let on_boundary = unicode_segmentation::GraphemeCursor::new(pos, self.text.len(), true)
            .is_boundary(self.text, 0)
            .unwrap_or(true);
        if on_boundary && self.text.is_char_boundary(pos) {
            return pos;
        }
        self.text
            .grapheme_indices(true)
            .map(|(start, grapheme)| start + grapheme.len())
            .find(|end| *end > pos)
            .unwrap_or(self.text.len())
    }
}

/// Start of the line holding `pos`.
pub(super) fn line_start(text: &str, pos: usize) -> usize {
    text[..pos].rfind('\n').map_or(0, |at| at + 1)
}

/// End of the line holding `pos` (before its `\n`).
pub(super) fn line_end(text: &str, pos: usize) -> usize {
    text[pos..].find('\n').map_or(text.len(), |at| pos + at)
}

/// One display row: a byte range of the text, without the `\n`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Row {
    pub start: usize,
    pub end: usize,
    /// The last row of its line, where the cursor may sit at `end`; on other rows `end` is the next row's
    /// start and a cursor there shows at the start of that row.
    pub last: bool,
}

/// Splits the text into rows of at most `width` columns (`None`: one row per line). Lines break after
/// whitespace when they can and inside a word only when a word is wider than the row. A token that fits is
/// never split. When the cursor is at the end of a line that exactly fills its last row, an empty row follows
/// for the cursor to show on (as a terminal does); only then, so a full row elsewhere is not followed by a
/// blank that looks like an empty line.
pub(super) fn layout(text: &str, pastes: &[Range<usize>], width: Option<usize>, cursor: usize) -> Vec<Row> {
    let mut rows = Vec::new();
    let mut line_begin = 0;
    for line in text.split('\n') {
        let line_finish = line_begin + line.len();
        match width {
            None => rows.push(Row { start: line_begin, end: line_finish, last: true }),
            Some(width) => wrap_line(text, pastes, line_begin..line_finish, width.max(1), cursor, &mut rows),
        }
        line_begin = line_finish + 1;
    }
    rows
}

fn wrap_line(
    text: &str,
    pastes: &[Range<usize>],
    line: Range<usize>,
    width: usize,
    cursor: usize,
    rows: &mut Vec<Row>,
) {
    let mut row_start = line.start;
    let mut col = 0;
    // Just after the latest whitespace on this row, and the column there: where the row may break.
    let mut break_at: Option<(usize, usize)> = None;
    let mut pos = line.start;
    while pos < line.end {
        let (end, unit_width, is_space) = match pastes.iter().find(|paste| paste.start == pos) {
            Some(paste) if str_width(&text[paste.clone()]) <= width => {
                (paste.end, str_width(&text[paste.clone()]), false)
            }
            _ => {
                let grapheme = text[pos..line.end].graphemes(true).next().unwrap_or_default();
                (pos + grapheme.len().max(1), grapheme_width(grapheme), class_of(grapheme) == Class::Space)
            }
        };
        while col + unit_width > width && pos > row_start {
            match break_at.take() {
                Some((at, at_col)) if !is_space && at > row_start => {
                    rows.push(Row { start: row_start, end: at, last: false });
                    row_start = at;
                    col -= at_col;
                }
                _ => {
                    rows.push(Row { start: row_start, end: pos, last: false });
                    row_start = pos;
                    col = 0;
                }
            }
        }
        col += unit_width;
        if is_space {
            break_at = Some((end, col));
        }
        pos = end;
    }
    rows.push(Row { start: row_start, end: line.end, last: true });
    if col >= width && cursor == line.end {
        if let Some(full) = rows.last_mut() {
            full.last = false;
        }
        rows.push(Row { start: line.end, end: line.end, last: true });
    }
}

/// The row showing the cursor at `pos`: on a boundary between wrapped rows, the later one.
pub(super) fn row_of(rows: &[Row], pos: usize) -> usize {
    rows.iter().rposition(|row| row.start <= pos && pos <= row.end).unwrap_or(0)
}

/// The position in `row` closest to column `goal` without passing it.
pub(super) fn position_in_row(units: &Units<'_>, row: Row, goal: usize) -> usize {
    let mut pos = row.start;
    let mut col = 0;
    while pos < row.end {
        let Some((end, _)) = units.next(pos) else { break };
        let unit_width = str_width(&units.text[pos..end]);
        if end > row.end || col + unit_width > goal {
            break;
        }
        col += unit_width;
        pos = end;
    }
    if !row.last && pos == row.end {
        pos = units.prev(pos).map_or(pos, |(start, _)| start.max(row.start));
    }
    units.snap(pos)
}

/// How a piece of a display row is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SegmentKind {
    /// Typed (or small pasted) text.
    Text,
    /// A collapsed paste's `[pasted N lines]` token.
    Paste,
}

/// A run of one kind within a display row. `text` is ready to draw (tabs expanded, control characters
/// replaced), so its width is its display width.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    pub text: String,
    pub kind: SegmentKind,
}

/// One wrapped row of the editor, as drawn (no prompt).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DisplayLine {
    pub segments: Vec<Segment>,
}

impl DisplayLine {
    /// The row's text, all segments together.
    pub fn text(&self) -> String {
        self.segments.iter().map(|segment| segment.text.as_str()).collect()
    }
}

/// The rows' text, split into segments at paste tokens.
pub(super) fn display(text: &str, pastes: &[Range<usize>], rows: &[Row]) -> Vec<DisplayLine> {
    rows.iter()
        .map(|row| {
            let mut line = DisplayLine::default();
            for (offset, grapheme) in text[row.start..row.end].grapheme_indices(true) {
                let at = row.start + offset;
                let kind = if pastes.iter().any(|paste| paste.start <= at && at < paste.end) {
                    SegmentKind::Paste
                } else {
                    SegmentKind::Text
                };
                let shown = grapheme_display(grapheme);
                match line.segments.last_mut() {
                    Some(last) if last.kind == kind => last.text.push_str(shown),
                    _ => line.segments.push(Segment { text: shown.to_owned(), kind }),
                }
            }
            line
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows with the cursor at the start, so no cursor row is added.
    fn rows_text(text: &str, width: usize) -> Vec<&str> {
        layout(text, &[], Some(width), 0).iter().map(|row| &text[row.start..row.end]).collect()
    }

    #[test]
    fn wraps_after_whitespace_and_breaks_long_words() {
        assert_eq!(rows_text("hello world foo", 8), ["hello ", "world ", "foo"]);
        assert_eq!(rows_text("abcdefghij", 4), ["abcd", "efgh", "ij"]);
        assert_eq!(rows_text("ab\n\ncd", 4), ["ab", "", "cd"]);
        // A line that fills its row exactly gets an empty row for the cursor when the cursor is at its end.
        assert_eq!(rows_text("abcd", 4), ["abcd"]);
        assert_eq!(layout("abcd\nx", &[], Some(4), 4).len(), 3);
        assert_eq!(layout("abcd\nx", &[], Some(4), 6).len(), 2);
        assert_eq!(rows_text("", 4), [""]);
        // Wide characters never straddle the edge.
        assert_eq!(rows_text("日本語", 5), ["日本", "語"]);
        assert_eq!(rows_text("日本語", 1), ["日", "本", "語"]);
    }

    #[test]
    fn tokens_stay_whole_when_they_fit() {
        let text = "ab [pasted 3 lines] cd";
        let pastes = [Range { start: 3, end: 19 }];
        let rows: Vec<&str> = layout(text, &pastes, Some(18), 0).iter().map(|row| &text[row.start..row.end]).collect();
        assert_eq!(rows, ["ab ", "[pasted 3 lines] ", "cd"]);
    }

    #[test]
    fn word_steps() {
        let text = "foo.bar  héllo_wörld 日本 😀😀";
        let units = Units { text, pastes: &[] };
        let end = text.len();
        let before_emoji = text.find('😀').unwrap();
        assert_eq!(units.word_left(end), before_emoji);
        let japanese = text.find('日').unwrap();
        assert_eq!(units.word_left(before_emoji), japanese);
        let hello = text.find('h').unwrap();
        assert_eq!(units.word_left(japanese), hello);
        assert_eq!(units.word_left(hello), 4);
        assert_eq!(units.word_left(4), 3);
        assert_eq!(units.big_word_left(hello), 0);
        assert_eq!(units.word_right(0), 3);
        assert_eq!(units.word_right(7), hello + "héllo_wörld".len());
    }

    #[test]
    fn snaps_out_of_tokens_and_graphemes() {
        let text = "e\u{301}x[pasted 3 lines]";
        let pastes = [Range { start: 4, end: 20 }];
        let units = Units { text, pastes: &pastes };
        assert_eq!(units.snap(1), 3);
        assert_eq!(units.snap(8), 20);
        assert_eq!(units.expand(2..6), 2..20);
        assert_eq!(units.prev(20), Some((4, Class::Paste)));
        assert_eq!(units.next(0), Some((3, Class::Word)));
    }
}
