//! Unified diffs drawn for the terminal: line-number gutters, `+`/`-` signs, word-level highlights inside
//! changed lines, syntax colours, and per-hunk review markers.
//!
//! A [`DiffView`] is built once from the old and new texts (hunks, display text and changed words are
//! computed then) and rendered to any width as already-wrapped lines: the caller's height is simply the
//! number of lines. The +/- sign column always carries the meaning, so the view reads the same without colours
//! (`NO_COLOR`), where word highlights fall back to the theme's modifiers. [`DiffView::hunk_line_offsets`]
//! gives the row of each hunk's header for the same width, so a dialog can scroll a hunk into view.

mod parse;
mod prepare;
mod syntax;
pub(crate) mod text;

#[cfg(test)]
mod tests;

use std::ops::Range;
use std::sync::{Arc, OnceLock};

use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use tandem_core::diff::{self as core_diff, DEFAULT_CONTEXT, Hunk, LineKind};

use self::prepare::Row;
use self::syntax::{HunkSyntax, Runs};
use super::theme::{ColorDepth, Theme};
use super::wrap;

/// Content narrower than this drops the line-number gutters: at 20 columns the code matters more.
const MIN_CONTENT_WITH_NUMBERS: usize = 12;

/// Width of the sign column: the `+`/`-`/` ` and a space.
const SIGN_WIDTH: usize = 2;

/// Which hunks a reviewer accepts and which one is selected; drawn as `[✓]`/`[✗]` and `▶` on hunk headers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HunkReview {
    /// One flag per hunk; a missing flag counts as accepted.
    pub accepted: Vec<bool>,
    /// Index of the selected hunk.
    pub current: usize,
}

impl HunkReview {
    /// Every one of `hunks` accepted, the first selected.
    pub fn all_accepted(hunks: usize) -> HunkReview {
        HunkReview { accepted: vec![true; hunks], current: 0 }
    }

    fn is_accepted(&self, hunk: usize) -> bool {
        self.accepted.get(hunk).copied().unwrap_or(true)
    }
}

/// A diff prepared for drawing. Cheap to render repeatedly; syntax colours are computed on the first render
/// for a colour depth and kept.
#[derive(Clone, Debug)]
pub struct DiffView {
    path_label: String,
    new_file: bool,
    hunks: Vec<Hunk>,
    rows: Vec<Vec<Row>>,
    added: usize,
    removed: usize,
    /// Columns of the widest line number, for the gutters.
    number_width: usize,
    syntax: OnceLock<(ColorDepth, Arc<HunkSyntax>)>,
}

/// How a width is divided between gutters and code.
#[derive(Clone, Copy, Debug)]
struct Geometry {
    /// Digits per line number, or 0 when the numbers are left out.
    numbers: usize,
    /// Columns before the sign column.
    gutter: usize,
    /// Columns for the code itself.
    content: usize,
}

impl DiffView {
    /// The diff from `old` to `new` (`None`: a new file, every line added), with 3 lines of context.
    /// `path_label` is shown in the header and picks the syntax by its extension.
    pub fn new(path_label: &str, old: Option<&str>, new: &str) -> DiffView {
        let hunks = core_diff::hunks(old.unwrap_or(""), new, DEFAULT_CONTEXT);
        DiffView::from_hunks(path_label, hunks, old.is_none())
    }

    /// A view of a unified diff's text (`@@` hunks; `---`/`+++` lines are skipped), for previews that carry
    /// only the text. Lines that are not part of a hunk are ignored.
    pub fn from_unified(path_label: &str, diff: &str, new_file: bool) -> DiffView {
        DiffView::from_hunks(path_label, parse::parse_unified(diff), new_file)
    }

    fn from_hunks(path_label: &str, hunks: Vec<Hunk>, new_file: bool) -> DiffView {
        let (added, removed) = core_diff::counts(&hunks);
        let last_line = hunks.iter().map(|h| (h.old_start + h.old_len).max(h.new_start + h.new_len)).max();
        let number_width = last_line.unwrap_or(1).max(1).to_string().len();
        DiffView {
            path_label: path_label.to_owned(),
            new_file,
            rows: prepare::rows_for(&hunks),
            hunks,
            added,
            removed,
            number_width,
            syntax: OnceLock::new(),
        }
    }

    /// The same diff with at most `context` unchanged lines around each hunk's changes.
    pub fn with_context(&self, context: usize) -> DiffView {
        let hunks = self.hunks.iter().map(|hunk| hunk.trimmed(context)).collect();
        DiffView::from_hunks(&self.path_label, hunks, self.new_file)
    }

    /// The hunks, in file order (what [`core_diff::apply_hunks`] takes).
    pub fn hunks(&self) -> &[Hunk] {
        &self.hunks
    }

    /// Lines added and removed over all hunks.
    pub fn counts(&self) -> (usize, usize) {
        (self.added, self.removed)
    }

    /// Whether the old side is empty because the file does not exist yet.
    pub fn is_new_file(&self) -> bool {
        self.new_file
    }

    /// The label shown in the header.
    pub fn path_label(&self) -> &str {
        &self.path_label
    }

    /// How many lines [`DiffView::render`] returns at `width`.
    pub fn line_count(&self, width: usize) -> usize {
        let offsets = self.hunk_line_offsets(width);
        match (offsets.last(), self.rows.last()) {
            (Some(last), Some(rows)) => last + 1 + self.rows_height(rows, self.geometry(width)),
            _ => self.header_height(width) + 1,
        }
    }

    /// The index, in [`DiffView::render`]'s lines at `width`, of each hunk's header line.
    pub fn hunk_line_offsets(&self, width: usize) -> Vec<usize> {
        let geometry = self.geometry(width);
        let mut at = self.header_height(width);
        let mut offsets = Vec::with_capacity(self.rows.len());
        for rows in &self.rows {
            offsets.push(at);
            at += 1 + self.rows_height(rows, geometry);
        }
        offsets
    }

    /// The index, in [`DiffView::render`]'s lines at `width`, of each hunk's first added or removed line.
    pub fn first_change_offsets(&self, width: usize) -> Vec<usize> {
        let geometry = self.geometry(width);
        let headers = self.hunk_line_offsets(width);
        headers
            .iter()
            .zip(&self.rows)
            .map(|(&header, rows)| {
                let context = rows.iter().take_while(|row| row.kind == LineKind::Context).count();
                header + 1 + self.rows_height(&rows[..context], geometry)
            })
            .collect()
    }

    /// The diff as lines of at most `width` columns: a file header, then per hunk its `@@` header (with the
    /// review's markers when given) and its lines. Rejected hunks are drawn with `theme.diff_rejected`.
    pub fn render(&self, width: usize, theme: &Theme, review: Option<&HunkReview>) -> Vec<Line<'static>> {
        let width = width.max(1);
        let geometry = self.geometry(width);
        let mut out = wrap::wrap_line(&self.header_line(Some(theme)), width, &[]);
        if self.hunks.is_empty() {
            let note = if self.new_file { "(empty file)" } else { "(no changes)" };
            out.push(Line::from(Span::styled(note, theme.dim)));
            return out;
        }
        let syntax = self.syntax(theme);
        for (index, (hunk, rows)) in self.hunks.iter().zip(&self.rows).enumerate() {
            out.push(self.hunk_header(index, hunk, width, theme, review));
            let rejected = review.is_some_and(|review| !review.is_accepted(index));
            let hunk_syntax = syntax.get(index);
            for (row_index, row) in rows.iter().enumerate() {
                let runs = hunk_syntax.and_then(|runs| runs.get(row_index)).and_then(Option::as_ref);
                self.render_row(row, runs, geometry, theme, rejected, &mut out);
            }
        }
        out
    }

    fn geometry(&self, width: usize) -> Geometry {
        let width = width.max(1);
        let numbers_width = 2 * self.number_width + 2;
        if width >= numbers_width + SIGN_WIDTH + MIN_CONTENT_WITH_NUMBERS {
            Geometry { numbers: self.number_width, gutter: numbers_width, content: width - numbers_width - SIGN_WIDTH }
        } else {
            Geometry { numbers: 0, gutter: 0, content: width.saturating_sub(SIGN_WIDTH).max(1) }
        }
    }

    fn header_height(&self, width: usize) -> usize {
        wrap::wrap_line(&self.header_line(None), width.max(1), &[]).len()
    }

    fn rows_height(&self, rows: &[Row], geometry: Geometry) -> usize {
        rows.iter().map(|row| text::row_count(&row.text, geometry.content) + usize::from(row.missing_newline)).sum()
    }

    /// `path  new file  +3 −1`; without a theme (for measuring) the same text unstyled.
    fn header_line(&self, theme: Option<&Theme>) -> Line<'static> {
        let style = |pick: fn(&Theme) -> Style| theme.map(pick).unwrap_or_default();
        let mut spans = vec![Span::styled(self.path_label.clone(), style(|t| t.bold))];
        if self.new_file {
            spans.push(Span::styled("  new file", style(|t| t.dim)));
        }
        spans.push(Span::styled(format!("  +{}", self.added), style(|t| t.success)));
        if !self.new_file {
            spans.push(Span::styled(format!(" −{}", self.removed), style(|t| t.error)));
        }
        Line::from(spans)
    }

    fn hunk_header(
        &self,
        index: usize,
        hunk: &Hunk,
        width: usize,
        theme: &Theme,
        review: Option<&HunkReview>,
    ) -> Line<'static> {
        let mut spans = Vec::new();
        let mut header_style = theme.diff_hunk;
        if let Some(review) = review {
            let current = review.current == index;
            let pointer = if current { "▶ " } else { "  " };
            spans.push(Span::styled(pointer, theme.accent.add_modifier(Modifier::BOLD)));
            spans.push(if review.is_accepted(index) {
                Span::styled("[✓] ", theme.success)
            } else {
                Span::styled("[✗] ", theme.error)
            });
            if current {
                header_style = header_style.add_modifier(Modifier::BOLD);
            }
        }
        spans.push(Span::styled(hunk.header(), header_style));
        if let Some(review) = review {
            spans.push(Span::styled(format!("  hunk {}/{}", index + 1, review.accepted.len().max(1)), theme.dim));
        }
        fit(spans, width)
    }

    fn render_row(
        &self,
        row: &Row,
        syntax: Option<&Runs>,
        geometry: Geometry,
        theme: &Theme,
        rejected: bool,
        out: &mut Vec<Line<'static>>,
    ) {
        let (base, word_style, sign) = match row.kind {
            LineKind::Context => (theme.diff_context, theme.diff_context, ' '),
            LineKind::Removed => (theme.diff_del, theme.diff_del_word, '-'),
            LineKind::Added => (theme.diff_add, theme.diff_add_word, '+'),
        };
        let (base, word_style, syntax) = if rejected {
            (theme.diff_rejected, theme.diff_rejected, None)
        } else {
            // A line coloured by its foreground (16 colours) keeps that colour: syntax would hide the +/-.
            (base, word_style, syntax.filter(|_| base.fg.is_none()))
        };
        let runs = styled_runs(&row.text, base, syntax, &row.words, word_style);
        let blank_gutter = " ".repeat(geometry.gutter);
        let pad = base.bg.is_some();
        for (row_index, range) in text::rows(&row.text, geometry.content).into_iter().enumerate() {
            let mut spans = Vec::with_capacity(runs.len() + 3);
            if row_index == 0 {
                if geometry.numbers > 0 {
                    let number = |n: Option<usize>| n.map(|n| n.to_string()).unwrap_or_default();
                    let width = geometry.numbers;
                    let numbers = format!("{:>width$} {:>width$} ", number(row.old_number), number(row.new_number));
                    spans.push(Span::styled(numbers, theme.diff_line_number));
                }
                spans.push(Span::styled(format!("{sign} "), base));
            } else {
                if geometry.gutter > 0 {
                    spans.push(Span::raw(blank_gutter.clone()));
                }
                spans.push(Span::styled("  ", base));
            }
            let mut used = 0;
            for (run, style) in &runs {
                let (start, end) = (run.start.max(range.start), run.end.min(range.end));
                if start < end {
                    used += wrap::width(&row.text[start..end]);
                    spans.push(Span::styled(row.text[start..end].to_owned(), *style));
                }
            }
            if pad && used < geometry.content {
                spans.push(Span::styled(" ".repeat(geometry.content - used), base));
            }
            out.push(Line::from(spans));
        }
        if row.missing_newline {
            let note = wrap::truncate("\\ No newline at end of file", geometry.content);
            let lead = " ".repeat(geometry.gutter + SIGN_WIDTH);
            out.push(Line::from(vec![Span::raw(lead), Span::styled(note, theme.dim)]));
        }
    }

    /// Syntax runs for this theme's colour depth, computed once per view (the depth never changes in a
    /// session; another depth is computed without being kept).
    fn syntax(&self, theme: &Theme) -> Arc<HunkSyntax> {
        let compute = || Arc::new(syntax::highlight_rows(&self.rows, &self.path_label, theme));
        let (depth, runs) = self.syntax.get_or_init(|| (theme.depth, compute()));
        if *depth == theme.depth { Arc::clone(runs) } else { compute() }
    }
}

/// Splits a row's text into `(byte range, style)` runs: the line's base style, patched by its syntax colours,
/// patched by the word style inside changed words.
fn styled_runs(
    text: &str,
    base: Style,
    syntax: Option<&Runs>,
    words: &[Range<usize>],
    word_style: Style,
) -> Vec<(Range<usize>, Style)> {
    let mut bounds: Vec<usize> = Vec::with_capacity(2 + words.len() * 2 + syntax.map_or(0, Vec::len));
    bounds.extend([0, text.len()]);
    bounds.extend(words.iter().flat_map(|range| [range.start, range.end]));
    if let Some(runs) = syntax {
        bounds.extend(runs.iter().map(|(end, _)| *end));
    }
    bounds.retain(|&at| at <= text.len() && text.is_char_boundary(at));
    bounds.sort_unstable();
    bounds.dedup();
    let (mut syntax_at, mut word_at) = (0, 0);
    let mut out: Vec<(Range<usize>, Style)> = Vec::new();
    for pair in bounds.windows(2) {
        let (start, end) = (pair[0], pair[1]);
        let mut style = base;
        if let Some(runs) = syntax {
            while syntax_at < runs.len() && runs[syntax_at].0 <= start {
                syntax_at += 1;
            }
            if let Some((_, syntax_style)) = runs.get(syntax_at) {
                style = style.patch(*syntax_style);
            }
        }
        while word_at < words.len() && words[word_at].end <= start {
            word_at += 1;
        }
        if words.get(word_at).is_some_and(|word| word.start <= start) {
            style = style.patch(word_style);
        }
        match out.last_mut() {
            Some((range, last)) if *last == style => range.end = end,
            _ => out.push((start..end, style)),
        }
    }
    out
}

/// Cuts spans to `width` columns (the last visible one ends with `…` when cut).
fn fit(spans: Vec<Span<'static>>, width: usize) -> Line<'static> {
    let mut used = 0;
    let mut out = Vec::with_capacity(spans.len());
    for span in spans {
        let span_width = wrap::width(&span.content);
        if used + span_width <= width {
            used += span_width;
            out.push(span);
            continue;
        }
        let rest = width - used;
        if rest > 0 {
            out.push(Span::styled(wrap::truncate(&span.content, rest), span.style));
        }
        break;
    }
    Line::from(out)
}
