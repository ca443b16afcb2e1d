//! Markdown tables laid out in columns that fit the terminal.
//!
//! Columns are padded to their widest cell; when the table is wider than the screen the widest columns give
//! way first (cells cut with `…`), and when even narrow columns can't fit, each row becomes one wrapped line
//! of cells separated by `│`, which stays readable at any width.

use pulldown_cmark::Alignment;
use ratatui::text::{Line, Span};
use unicode_segmentation::UnicodeSegmentation;

use crate::ui::theme::Theme;
use crate::ui::wrap::{width as text_width, wrap_line};

/// Between two columns.
const SEPARATOR: &str = " │ ";
/// Columns are not squeezed below this (or their natural width when smaller); "ab…" still hints at content.
const MIN_COLUMN: usize = 3;

/// A table being collected from parser events.
pub(super) struct TableState {
    alignments: Vec<Alignment>,
    rows: Vec<Vec<Vec<Span<'static>>>>,
    row: Vec<Vec<Span<'static>>>,
    head_rows: usize,
    /// Inside the header row: its cells are bold and underlined by a rule.
    pub(super) in_head: bool,
}

impl TableState {
    pub(super) fn new(alignments: Vec<Alignment>) -> Self {
        TableState { alignments, rows: Vec::new(), row: Vec::new(), head_rows: 0, in_head: false }
    }

    pub(super) fn push_cell(&mut self, cell: Vec<Span<'static>>) {
        self.row.push(cell);
    }

    pub(super) fn end_row(&mut self) {
        if self.in_head {
            self.head_rows += 1;
        }
        self.rows.push(std::mem::take(&mut self.row));
    }

    /// The table's lines, each at most `avail` columns.
    pub(super) fn render(mut self, avail: usize, theme: &Theme) -> Vec<Vec<Span<'static>>> {
        if !self.row.is_empty() {
            self.end_row();
        }
        let columns = self.rows.iter().map(Vec::len).max().unwrap_or(0).max(self.alignments.len());
        if columns == 0 {
            return Vec::new();
        }
        let mut natural = vec![1; columns];
        for row in &self.rows {
            for (column, cell) in row.iter().enumerate() {
                natural[column] = natural[column].max(spans_width(cell));
            }
        }
        let Some(widths) = fit_columns(&natural, avail.saturating_sub(SEPARATOR.chars().count() * (columns - 1)))
        else {
            return self.pipe_rows(avail, theme);
        };

        let mut lines = Vec::new();
        for (index, row) in self.rows.iter().enumerate() {
            let mut line = Vec::new();
            for (column, width) in widths.iter().enumerate() {
                if column > 0 {
                    line.push(Span::styled(SEPARATOR, theme.dim));
                }
                let cell = row.get(column).map(Vec::as_slice).unwrap_or(&[]);
                let alignment = self.alignments.get(column).copied().unwrap_or(Alignment::None);
                let last = column + 1 == columns;
                line.extend(pad(truncate_spans(cell, *width), *width, alignment, last));
            }
            super::trim_trailing_spaces(&mut line);
            lines.push(line);
            if index + 1 == self.head_rows {
                let rules: Vec<String> = widths.iter().map(|width| "─".repeat(*width)).collect();
                lines.push(vec![Span::styled(rules.join("─┼─"), theme.dim)]);
            }
        }
        lines
    }

    /// The narrow-screen fallback: one wrapped line per row.
    fn pipe_rows(self, avail: usize, theme: &Theme) -> Vec<Vec<Span<'static>>> {
        let mut lines = Vec::new();
        for row in self.rows {
            let mut line = Vec::new();
            for (column, cell) in row.into_iter().enumerate() {
                if column > 0 {
                    line.push(Span::styled(SEPARATOR, theme.dim));
                }
                line.extend(cell);
            }
            lines.extend(wrap_line(&Line::from(line), avail, &[]).into_iter().map(|line| line.spans));
        }
        lines
    }
}

/// Column widths within `budget`: natural widths when they fit, else the widest columns capped at the same
/// width (the largest cap that fits, found by bisection), or `None` when even minimal columns don't fit.
fn fit_columns(natural: &[usize], budget: usize) -> Option<Vec<usize>> {
    let total = |cap: usize| natural.iter().map(|width| (*width).min(cap)).sum::<usize>();
    let widest = natural.iter().copied().max().unwrap_or(1);
    if total(widest) <= budget {
        return Some(natural.to_vec());
    }
    if total(MIN_COLUMN) > budget {
        return None;
    }
    let (mut low, mut high) = (MIN_COLUMN, widest);
    while low + 1 < high {
        let mid = (low + high) / 2;
        if total(mid) <= budget { low = mid } else { high = mid }
    }
    let mut widths: Vec<usize> = natural.iter().map(|width| (*width).min(low)).collect();
    // Columns at the cap share what's left, one column each (less than one per capped column remains).
    let mut spare = budget - total(low);
    for (width, natural) in widths.iter_mut().zip(natural) {
        if spare == 0 {
            break;
        }
        if *natural > *width {
            *width += 1;
            spare -= 1;
        }
    }
    Some(widths)
}

fn spans_width(spans: &[Span<'_>]) -> usize {
    spans.iter().map(|span| text_width(&span.content)).sum()
}

/// Cuts styled text to at most `width` columns, ending with `…` when cut.
fn truncate_spans(spans: &[Span<'static>], width: usize) -> Vec<Span<'static>> {
    if spans_width(spans) <= width {
        return spans.to_vec();
    }
    let mut out = Vec::new();
    let mut used = 0;
    for span in spans {
        let mut kept = String::new();
        for grapheme in span.content.graphemes(true) {
            let grapheme_width = text_width(grapheme);
            if used + grapheme_width + 1 > width {
                kept.push('…');
                out.push(Span::styled(kept, span.style));
                return out;
            }
            kept.push_str(grapheme);
            used += grapheme_width;
        }
        out.push(Span::styled(kept, span.style));
    }
    out
}

/// Pads a cell to its column's width by its alignment; the last column isn't padded on the right, so lines
/// carry no trailing spaces.
fn pad(mut cell: Vec<Span<'static>>, width: usize, alignment: Alignment, last: bool) -> Vec<Span<'static>> {
    let gap = width.saturating_sub(spans_width(&cell));
    let (left, right) = match alignment {
        Alignment::Right => (gap, 0),
        Alignment::Center => (gap / 2, gap - gap / 2),
        Alignment::None | Alignment::Left => (0, gap),
    };
    if left > 0 {
        cell.insert(0, Span::raw(" ".repeat(left)));
    }
    if right > 0 && !last {
        cell.push(Span::raw(" ".repeat(right)));
    }
    cell
}
