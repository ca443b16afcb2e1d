//! Syntax colours for diff rows, from [`crate::ui::highlight`] by the file's extension.
//!
//! Only the hunks' lines are highlighted, never the whole file: each hunk's new side (context and added
//! lines) is highlighted as one snippet, so the parser state flows across the hunk, and its removed lines as
//! another. syntect costs tens of microseconds a line, so past [`MAX_HIGHLIGHTED_LINES`] lines (or
//! [`MAX_HIGHLIGHTED_BYTES`]) the remaining hunks stay plain: a huge diff (a 5,000-line new file) still opens
//! in a few milliseconds, and typical edits are always coloured.

use ratatui::style::Style;
use tandem_core::diff::LineKind;

use super::prepare::Row;
use crate::ui::highlight;
use crate::ui::theme::{ColorDepth, Theme};

/// How many source lines all hunks together may highlight: about 30 ms of syntect on a slow machine.
pub(crate) const MAX_HIGHLIGHTED_LINES: usize = 400;

/// How many bytes all hunks together may highlight (long lines cost more than short ones).
pub(crate) const MAX_HIGHLIGHTED_BYTES: usize = 24 * 1024;

/// A row's syntax colours: `(end byte, style)` runs that cover its text in order.
pub(crate) type Runs = Vec<(usize, Style)>;

/// Syntax runs per hunk, per row (`None`: draw that row without syntax colours).
pub(crate) type HunkSyntax = Vec<Vec<Option<Runs>>>;

/// Syntax runs for every row of every hunk.
pub(crate) fn highlight_rows(hunks: &[Vec<Row>], path: &str, theme: &Theme) -> HunkSyntax {
    let mut out: HunkSyntax = hunks.iter().map(|rows| vec![None; rows.len()]).collect();
    if theme.depth == ColorDepth::None || !highlight::knows(path) {
        return out;
    }
    let (mut lines_left, mut bytes_left) = (MAX_HIGHLIGHTED_LINES, MAX_HIGHLIGHTED_BYTES);
    for (rows, runs) in hunks.iter().zip(out.iter_mut()) {
        let lines = rows.len();
        let bytes: usize = rows.iter().map(|row| row.text.len() + 1).sum();
        if lines > lines_left || bytes > bytes_left {
            // Too big for what is left; smaller hunks further on may still fit.
            continue;
        }
        lines_left -= lines;
        bytes_left -= bytes;
        highlight_side(rows, runs, path, theme, |kind| kind != LineKind::Removed);
        highlight_side(rows, runs, path, theme, |kind| kind == LineKind::Removed);
    }
    out
}

/// Highlights the rows `include` selects as one snippet and stores their runs.
fn highlight_side(
    rows: &[Row],
    runs: &mut [Option<Runs>],
    path: &str,
    theme: &Theme,
    include: impl Fn(LineKind) -> bool,
) {
    let selected: Vec<usize> = (0..rows.len()).filter(|&index| include(rows[index].kind)).collect();
    if selected.is_empty() {
        return;
    }
    let snippet = selected.iter().map(|&index| rows[index].text.as_str()).collect::<Vec<_>>().join("\n");
    let Some(lines) = highlight::highlight(&snippet, path, theme) else { return };
    for (&index, spans) in selected.iter().zip(lines) {
        let mut end = 0;
        let mut row_runs = Runs::with_capacity(spans.len());
        for span in spans {
            end += span.content.len();
            row_runs.push((end, span.style));
        }
        // Only runs that cover the row exactly can be merged with its word ranges.
        if end == rows[index].text.len() {
            runs[index] = Some(row_runs);
        }
    }
}
