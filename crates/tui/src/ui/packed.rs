//! Laid-out lines kept compactly: one text buffer, a small table of styles, and offsets.
//!
//! The transcript keeps every cell's layout so a frame only draws the visible slice. As `Vec<Line>` each line
//! is a vector of spans that each own a string: a 20 MB answer became 170,000 lines costing about 260 bytes of
//! bookkeeping each on top of their text. Here a span costs 8 bytes and a line 4, the text is stored once, back
//! to back, so a line's plain text is a slice (search and copy read it without building anything), and a
//! [`Line`] is built only for the few lines a frame draws.

use std::collections::HashMap;

use ratatui::layout::Alignment;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

/// One span: where its text ends in the buffer, and its style's index in the table.
#[derive(Clone, Copy, Debug)]
struct PackedSpan {
    end: u32,
    style: u32,
}

/// Lines as spans over one text buffer. Offsets are 32-bit: a layout holds at most 4 GiB of text (the
/// model's output and tool results reaching the transcript are bounded far below that).
#[derive(Clone, Debug, Default)]
pub struct PackedLines {
    text: String,
    spans: Vec<PackedSpan>,
    /// Index of each line's first span.
    lines: Vec<u32>,
    styles: Vec<Style>,
    style_index: HashMap<Style, u32>,
    /// The few lines with a style or alignment of their own (diff rows, centred text), by line index.
    looks: Vec<(u32, Style, Option<Alignment>)>,
}

impl PackedLines {
    pub fn new() -> Self {
        PackedLines::default()
    }

    pub fn len(&self) -> usize {
        self.lines.len()
    }

    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// Appends a line.
    pub fn push(&mut self, line: &Line<'_>) {
        self.push_prefixed(None, line);
    }

    /// Appends a line with `prefix` before its spans (an answer's marker or indent), without building it first.
    pub fn push_prefixed(&mut self, prefix: Option<&Span<'_>>, line: &Line<'_>) {
        self.lines.push(offset(self.spans.len()));
        if line.style != Style::default() || line.alignment.is_some() {
            self.looks.push((offset(self.lines.len() - 1), line.style, line.alignment));
        }
        for span in prefix.into_iter().chain(&line.spans) {
            self.push_span(&span.content, span.style);
        }
    }

    pub fn extend<'a>(&mut self, lines: impl IntoIterator<Item = &'a Line<'a>>) {
        for line in lines {
            self.push(line);
        }
    }

    fn push_span(&mut self, content: &str, style: Style) {
        if content.is_empty() {
            return;
        }
        let style = self.intern(style);
        let line_start = self.lines.last().map_or(0, |&first| first as usize);
        let in_line = self.spans.len() > line_start;
        match self.spans.last_mut() {
            // Spans of one style side by side are one span (they draw the same).
            Some(last) if in_line && last.style == style => {
                self.text.push_str(content);
                last.end = offset(self.text.len());
            }
            _ => {
                self.text.push_str(content);
                self.spans.push(PackedSpan { end: offset(self.text.len()), style });
            }
        }
    }

    fn intern(&mut self, style: Style) -> u32 {
        if let Some(&index) = self.style_index.get(&style) {
            return index;
        }
        let index = offset(self.styles.len());
        self.styles.push(style);
        self.style_index.insert(style, index);
        index
    }

    /// Keeps the first `len` lines.
    pub fn truncate(&mut self, len: usize) {
        let Some(&first_span) = self.lines.get(len) else { return };
        let first_span = first_span as usize;
        self.text.truncate(self.span_start(first_span));
        self.spans.truncate(first_span);
        self.lines.truncate(len);
        self.looks.retain(|(line, ..)| (*line as usize) < len);
    }

    /// Gives back the room reserved for growth: for a layout that is complete.
    pub fn shrink_to_fit(&mut self) {
        self.text.shrink_to_fit();
        self.spans.shrink_to_fit();
        self.lines.shrink_to_fit();
    }

    fn span_start(&self, span: usize) -> usize {
        match span.checked_sub(1) {
            Some(previous) => self.spans[previous].end as usize,
            None => 0,
        }
    }

    fn span_range(&self, index: usize) -> std::ops::Range<usize> {
        let first = self.lines[index] as usize;
        let end = self.lines.get(index + 1).map_or(self.spans.len(), |&next| next as usize);
        first..end
    }

    /// The plain text of line `index` ("" past the end).
    pub fn text(&self, index: usize) -> &str {
        if index >= self.lines.len() {
            return "";
        }
        let spans = self.span_range(index);
        let end = if spans.is_empty() { self.span_start(spans.start) } else { self.spans[spans.end - 1].end as usize };
        &self.text[self.span_start(spans.start)..end]
    }

    /// Line `index`, borrowing its text (an empty line past the end).
    pub fn line(&self, index: usize) -> Line<'_> {
        if index >= self.lines.len() {
            return Line::default();
        }
        let spans = self.span_range(index);
        let mut start = self.span_start(spans.start);
        let mut line = Line::from(
            self.spans[spans]
                .iter()
                .map(|span| {
                    let content = &self.text[start..span.end as usize];
                    start = span.end as usize;
                    Span::styled(content, self.styles[span.style as usize])
                })
                .collect::<Vec<_>>(),
        );
        let look = self.looks.binary_search_by_key(&offset(index), |(line, ..)| *line);
        if let Ok(found) = look {
            let (_, style, alignment) = self.looks[found];
            line.style = style;
            line.alignment = alignment;
        }
        line
    }

    pub fn iter(&self) -> impl Iterator<Item = Line<'_>> {
        (0..self.len()).map(|index| self.line(index))
    }
}

/// Equal when every line looks the same (however the styles happen to be numbered).
impl PartialEq for PackedLines {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().zip(other.iter()).all(|(mine, theirs)| mine == theirs)
    }
}

impl<'a> FromIterator<Line<'a>> for PackedLines {
    fn from_iter<I: IntoIterator<Item = Line<'a>>>(lines: I) -> Self {
        let mut packed = PackedLines::new();
        for line in lines {
            packed.push(&line);
        }
        packed
    }
}

/// An offset into a layout, as stored (saturating: see [`PackedLines`]).
fn offset(value: usize) -> u32 {
    u32::try_from(value).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use ratatui::style::Color;

    use super::*;
    use crate::ui::wrap::line_text;

    fn sample() -> Vec<Line<'static>> {
        vec![
            Line::from(vec![Span::styled("● ", Style::new().fg(Color::Blue)), Span::raw("hello "), Span::raw("world")]),
            Line::default(),
            Line::from(vec![Span::raw(""), Span::styled("red", Style::new().fg(Color::Red))])
                .style(Style::new().bold()),
            Line::from("centred").centered(),
            Line::from(vec![Span::raw("  "), Span::raw("last")]),
        ]
    }

    #[test]
    fn lines_come_back_as_they_went_in() {
        let lines = sample();
        let packed: PackedLines = lines.iter().cloned().collect();
        assert_eq!(packed.len(), 5);
        for (index, line) in lines.iter().enumerate() {
            let back = packed.line(index);
            assert_eq!(line_text(&back), line_text(line), "line {index}");
            assert_eq!(packed.text(index), line_text(line), "line {index}");
            assert_eq!(back.style, line.style, "line {index}");
            assert_eq!(back.alignment, line.alignment, "line {index}");
            let styles = |line: &Line<'_>| {
                line.spans.iter().flat_map(|span| span.content.chars().map(move |_| span.style)).collect::<Vec<_>>()
            };
            assert_eq!(styles(&back), styles(line), "line {index}");
        }
        assert_eq!(packed.line(0).spans.len(), 2, "neighbours of one style are one span");
        assert_eq!(packed.text(9), "");
    }

    #[test]
    fn truncating_keeps_the_first_lines_and_appending_goes_on_after_them() {
        let mut packed: PackedLines = sample().into_iter().collect();
        packed.truncate(3);
        assert_eq!(packed.len(), 3);
        assert_eq!(packed.text(2), "red");
        packed.truncate(1);
        packed.push(&Line::from("next").centered());
        assert_eq!(packed.iter().map(|line| line_text(&line)).collect::<Vec<_>>(), ["● hello world", "next"]);
        assert_eq!(packed.line(1).alignment, Some(Alignment::Center));
        assert_eq!(packed.line(0).alignment, None);
    }

    #[test]
    fn a_prefix_goes_before_the_line() {
        let mut packed = PackedLines::new();
        packed.push_prefixed(Some(&Span::raw("  ")), &Line::from("body"));
        assert_eq!(packed.text(0), "  body");
    }
}
