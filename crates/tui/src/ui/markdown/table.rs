//! Markdown tables laid out in columns that fit the terminal.
//!
//! Columns are padded to their widest cell; when the table is wider than the screen the widest columns give
//! way first and their cells wrap within the column (words stay whole down to a column as wide as its longest
//! word, or [`WORD_CAP`]), with a dim rule between rows once any row takes more than one line. When even
//! those columns can't fit, each row becomes a block of "header: value" lines, which stays readable at any
//! width. Nothing is cut: a table is read for its cells.

use pulldown_cmark::Alignment;
use ratatui::text::{Line, Span};

use crate::ui::theme::Theme;
use crate::ui::wrap::{width as text_width, wrap_line};

/// Between two columns.
const SEPARATOR: &str = " │ ";
/// A column is not squeezed below its longest word, up to this many columns: a longer word (a URL, a path)
/// is broken rather than pushing the table into the fallback form.
const WORD_CAP: usize = 12;
/// Continuation lines of a "header: value" record, where the screen has room for it.
const RECORD_INDENT: &str = "  ";
/// Nor below this (or its natural width when smaller): a column of a few letters per line is not a column.
const MIN_COLUMN: usize = 4;

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
        let mut floor = vec![1; columns];
        for row in &self.rows {
            for (column, cell) in row.iter().enumerate() {
                natural[column] = natural[column].max(spans_width(cell));
                floor[column] = floor[column].max(longest_word(cell).min(WORD_CAP));
            }
        }
        for (floor, natural) in floor.iter_mut().zip(&natural) {
            *floor = (*floor).max(MIN_COLUMN).min(*natural);
        }
        let budget = avail.saturating_sub(text_width(SEPARATOR) * (columns - 1));
        match fit_columns(&natural, &floor, budget) {
            Some(widths) => self.columns(&widths, theme),
            None => self.records(avail, theme),
        }
    }

    /// Rows in columns of `widths`, each cell wrapped within its column.
    fn columns(&self, widths: &[usize], theme: &Theme) -> Vec<Vec<Span<'static>>> {
        let rows: Vec<Vec<Vec<Line<'static>>>> = self
            .rows
            .iter()
            .map(|row| {
                let cell = |column: usize| row.get(column).map(Vec::as_slice).unwrap_or(&[]);
                widths
                    .iter()
                    .enumerate()
                    .map(|(column, width)| wrap_line(&Line::from(cell(column).to_vec()), *width, &[]))
                    .collect()
            })
            .collect();
        let tall = rows.iter().skip(self.head_rows).any(|cells| cells.iter().any(|lines| lines.len() > 1));
        let rule = |cross: &str| {
            vec![Span::styled(widths.iter().map(|width| "─".repeat(*width)).collect::<Vec<_>>().join(cross), theme.dim)]
        };
        let mut lines = Vec::new();
        for (index, cells) in rows.iter().enumerate() {
            if tall && index > self.head_rows {
                lines.push(rule("─┼─"));
            }
            let height = cells.iter().map(Vec::len).max().unwrap_or(1);
            for physical in 0..height {
                let mut line = Vec::new();
                for (column, width) in widths.iter().enumerate() {
                    if column > 0 {
                        line.push(Span::styled(SEPARATOR, theme.dim));
                    }
                    let part = cells[column].get(physical).map(|line| line.spans.clone()).unwrap_or_default();
                    // Wrapped prose reads from the left whatever the column's alignment (meant for figures).
                    let alignment = match cells[column].len() {
                        1 => self.alignments.get(column).copied().unwrap_or(Alignment::None),
                        _ => Alignment::Left,
                    };
                    line.extend(pad(part, *width, alignment, column + 1 == widths.len()));
                }
                super::trim_trailing_spaces(&mut line);
                lines.push(line);
            }
            if index + 1 == self.head_rows {
                lines.push(rule("─┼─"));
            }
        }
        lines
    }

    /// The narrow-screen form: each body row a block of "header: value" lines, wrapped under a hanging indent,
    /// with a blank line between rows.
    fn records(self, avail: usize, theme: &Theme) -> Vec<Vec<Span<'static>>> {
        let mut rows = self.rows.into_iter();
        let head: Vec<Vec<Span<'static>>> =
            if self.head_rows > 0 { rows.next().unwrap_or_default() } else { Vec::new() };
        let mut lines = Vec::new();
        for (index, row) in rows.enumerate() {
            if index > 0 {
                lines.push(Vec::new());
            }
            for (column, cell) in row.into_iter().enumerate() {
                let mut line: Vec<Span<'static>> = match head.get(column) {
                    Some(name) if spans_width(name) > 0 => name
                        .iter()
                        .map(|span| Span::styled(span.content.clone(), span.style.patch(theme.bold)))
                        .collect(),
                    _ => vec![Span::styled(format!("column {}", column + 1), theme.bold)],
                };
                line.push(Span::styled(": ", theme.dim));
                line.extend(cell);
                let indent = if avail > RECORD_INDENT.len() * 2 { RECORD_INDENT } else { "" };
                lines.extend(
                    wrap_line(&Line::from(line), avail, &[Span::raw(indent)]).into_iter().map(|line| line.spans),
                );
            }
        }
        lines
    }
}

/// Column widths within `budget`: natural widths when they fit, else the widest columns capped at the same
/// width (the largest cap that fits, found by bisection) but none below its floor, or `None` when even the
/// floors don't fit.
fn fit_columns(natural: &[usize], floor: &[usize], budget: usize) -> Option<Vec<usize>> {
    let capped = |cap: usize| natural.iter().zip(floor).map(move |(natural, floor)| (*natural).min(cap).max(*floor));
    let total = |cap: usize| capped(cap).sum::<usize>();
    let widest = natural.iter().copied().max().unwrap_or(1);
    if total(widest) <= budget {
        return Some(natural.to_vec());
    }
    if total(0) > budget {
        return None;
    }
    let (mut low, mut high) = (0, widest);
    while low + 1 < high {
        let mid = (low + high) / 2;
        if total(mid) <= budget { low = mid } else { high = mid }
    }
    let mut widths: Vec<usize> = capped(low).collect();
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

/// The widest run of non-blank text in a cell, in columns.
fn longest_word(spans: &[Span<'_>]) -> usize {
    let text: String = spans.iter().map(|span| span.content.as_ref()).collect();
    text.split_whitespace().map(text_width).max().unwrap_or(0)
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
