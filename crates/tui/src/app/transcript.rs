//! The transcript: cells, their cached layout, scrolling and search.
//!
//! Virtualised: each cell is laid out once per (width, revision) and cached; a frame only checks the cache
//! keys, sums heights and draws the visible slice. Only a changed cell (the one streaming, a running tool) is
//! laid out again. Consecutive finished read-only tool calls are shown as one compact group.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Instant;

use super::cells::{Cell, CellKind, ToolState};
use crate::ui::cell as cell_ui;
use crate::ui::packed::PackedLines;
use crate::ui::streaming::StreamLayout;
use crate::ui::theme::Theme;
use tandem_protocol::ToolCallStatus;

/// Lines of one laid-out cell (possibly empty: a cell folded into a group above it).
#[derive(Clone)]
struct Layout {
    width: usize,
    key: u64,
    lines: Rc<PackedLines>,
    /// Height estimated for another width (width, height), so a frame after a resize doesn't redo it.
    estimate: Option<(usize, usize)>,
    /// A streaming answer's settled blocks, so the next frame lays out only what is still open.
    stream: Option<StreamLayout>,
}

/// A search match: a line of the whole transcript and a byte range in its text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchMatch {
    pub line: usize,
    pub start: usize,
    pub end: usize,
    /// The text is inside this collapsed card (or thinking block), drawn at `line`: reaching the match opens it.
    pub folded_in: Option<usize>,
}

/// Search state: the query and where its matches are.
#[derive(Clone, Debug, Default)]
pub struct Search {
    pub query: String,
    /// Still typing the query (the search bar has focus).
    pub editing: bool,
    pub matches: Vec<SearchMatch>,
    pub current: usize,
}

/// The conversation as the user sees it.
#[derive(Default)]
pub struct Transcript {
    cells: Vec<Cell>,
    layout: RefCell<Vec<Option<Layout>>>,
    /// Lines scrolled up from the bottom; 0 follows new output.
    pub scroll_from_bottom: usize,
    /// New output arrived while scrolled up.
    pub new_output_below: bool,
    pub search: Option<Search>,
    /// Keyboard selection: (anchor line, cursor line) in transcript lines.
    pub selection: Option<(usize, usize)>,
    /// Line the keyboard cursor is on in scroll mode.
    pub cursor_line: Option<usize>,
}

impl Transcript {
    pub fn cells(&self) -> &[Cell] {
        &self.cells
    }

    pub fn len(&self) -> usize {
        self.cells.len()
    }

    pub fn is_empty(&self) -> bool {
        self.cells.is_empty()
    }

    pub fn push(&mut self, kind: CellKind) -> usize {
        self.cells.push(Cell::new(kind));
        self.output_arrived();
        self.cells.len() - 1
    }

    /// Changes a cell in place (and invalidates its layout).
    pub fn update(&mut self, index: usize, change: impl FnOnce(&mut Cell)) {
        if let Some(cell) = self.cells.get_mut(index) {
            change(cell);
            cell.touch();
            self.output_arrived();
        }
    }

    /// Drops cells from `len` on (a retried response's partial output).
    pub fn truncate(&mut self, len: usize) {
        self.cells.truncate(len);
        self.layout.borrow_mut().truncate(len);
    }

    /// Finds the tool card with this call id, newest first.
    pub fn find_tool(&self, call_id: &str) -> Option<usize> {
        self.cells.iter().rposition(|cell| matches!(&cell.kind, CellKind::Tool(card) if card.call_id == call_id))
    }

    pub fn clear(&mut self) {
        self.cells.clear();
        self.layout.borrow_mut().clear();
        self.scroll_from_bottom = 0;
        self.new_output_below = false;
        self.search = None;
        self.selection = None;
        self.cursor_line = None;
    }

    fn output_arrived(&mut self) {
        if self.scroll_from_bottom > 0 {
            self.new_output_below = true;
        }
    }

    /// Lays out every cell for `width` (cached) and returns each cell's lines.
    pub fn layout(&self, width: usize, theme: &Theme, now: Instant) -> Vec<Rc<PackedLines>> {
        self.view(width, usize::MAX, theme, now)
            .into_iter()
            .map(|laid| match laid {
                Laid::Lines(lines) => lines,
                Laid::Estimate(_) => Rc::new(PackedLines::new()),
            })
            .collect()
    }

    /// What drawing needs: exact lines for the cells covering the last `from_bottom` lines (the viewport and what
    /// is scrolled below it), and for cells further up whatever the cache has — after a resize only an estimate
    /// of their height, so a resize costs the visible cells, not the whole transcript. Cells never laid out are
    /// laid out exactly.
    pub fn view(&self, width: usize, from_bottom: usize, theme: &Theme, now: Instant) -> Vec<Laid> {
        let mut cache = self.layout.borrow_mut();
        cache.resize(self.cells.len(), None);
        let groups = self.groups();
        let mut out = vec![Laid::Estimate(0); self.cells.len()];
        let mut covered = 0usize;
        for index in (0..self.cells.len()).rev() {
            let cell = &self.cells[index];
            let group = groups[index];
            let key = layout_key(cell, group, &self.cells[index..]);
            let fresh = cache[index]
                .as_ref()
                .is_some_and(|layout| layout.width == width && layout.key == key && !cell.is_live());
            let needed = covered < from_bottom || cache[index].is_none();
            if fresh || needed {
                if !fresh {
                    let (lines, stream) = match (group, &cell.kind) {
                        (Group::Member, _) => (Rc::new(PackedLines::new()), None),
                        (Group::Lead(len), _) => {
                            (Rc::new(cell_ui::render_group(&self.cells[index..index + len], width, theme, now)), None)
                        }
                        (Group::Alone, CellKind::Assistant { text, streaming: true }) => {
                            let (mut lines, mut stream) = match cache[index].take() {
                                Some(Layout { lines, stream: Some(stream), .. }) => (lines, stream),
                                _ => (Rc::new(PackedLines::new()), StreamLayout::default()),
                            };
                            stream.render(&mut lines, text, width, theme);
                            (lines, Some(stream))
                        }
                        (Group::Alone, _) => (Rc::new(cell_ui::render(cell, width, theme, now)), None),
                    };
                    cache[index] = Some(Layout { width, key, lines, estimate: None, stream });
                }
                let lines = cache[index].as_ref().map(|layout| layout.lines.clone()).unwrap_or_default();
                covered += lines.len();
                out[index] = Laid::Lines(lines);
            } else if let Some(old) = &mut cache[index] {
                // Laid out at another width: each old line re-wrapped on its own (a close estimate, no rendering).
                let estimate = match old.estimate {
                    Some((estimated_for, height)) if estimated_for == width => height,
                    _ => {
                        let height = (0..old.lines.len())
                            .map(|line| crate::ui::wrap::width(old.lines.text(line)).div_ceil(width.max(1)).max(1))
                            .sum();
                        old.estimate = Some((width, height));
                        height
                    }
                };
                covered += estimate;
                out[index] = Laid::Estimate(estimate);
            }
        }
        out
    }

    /// Total height of the transcript at `width`, exact.
    pub fn height(&self, width: usize, theme: &Theme, now: Instant) -> usize {
        self.layout(width, theme, now).iter().map(|lines| lines.len()).sum()
    }

    /// Height for scrolling: exact near the bottom, estimated far above it after a resize.
    pub fn approximate_height(&self, width: usize, viewport: usize, theme: &Theme, now: Instant) -> usize {
        let from_bottom = self.scroll_from_bottom.saturating_add(viewport * 2);
        self.view(width, from_bottom, theme, now).iter().map(Laid::height).sum()
    }

    /// Which cells are grouped: runs of ≥ 2 finished, successful, collapsed read-only tool calls.
    fn groups(&self) -> Vec<Group> {
        let groupable = |cell: &Cell| {
            !cell.expanded
                && matches!(&cell.kind, CellKind::Tool(card)
                    if card.is_read_only_tool() && card.state == ToolState::Finished(ToolCallStatus::Completed))
        };
        let mut groups = vec![Group::Alone; self.cells.len()];
        let mut index = 0;
        while index < self.cells.len() {
            let run = self.cells[index..].iter().take_while(|cell| groupable(cell)).count();
            if run >= 2 {
                groups[index] = Group::Lead(run);
                for member in &mut groups[index + 1..index + run] {
                    *member = Group::Member;
                }
                index += run;
            } else {
                index += 1;
            }
        }
        groups
    }

    /// What copying rows `first..=last` gives: the logical lines they show (a paragraph wrapped over several
    /// rows is one line, as it is laid out with no width limit), without the two-column gutter every cell is
    /// drawn with, and with the indentation all of them share removed. A row that is no line's start or
    /// continuation there (a table cell wrapped within its column, a rule) is copied as drawn.
    pub fn copy_text(&self, first: usize, last: usize, width: usize, theme: &Theme, now: Instant) -> String {
        let groups = self.groups();
        let mut copied: Vec<String> = Vec::new();
        let mut start = 0;
        for (index, rows) in self.layout(width, theme, now).iter().enumerate() {
            let cell_rows = start..start + rows.len();
            start = cell_rows.end;
            let (from, to) = (first.max(cell_rows.start), last.min(cell_rows.end.saturating_sub(1)));
            if rows.is_empty() || from > to {
                continue;
            }
            let unwrapped = match groups[index] {
                Group::Alone => Some(cell_ui::render(&self.cells[index], UNWRAPPED_WIDTH, theme, now)),
                _ => None,
            };
            let lines_of = unwrapped.as_ref().map(|wide| logical_lines(rows, wide));
            let mut previous = None;
            for row in from - cell_rows.start..=to - cell_rows.start {
                match (lines_of.as_ref().and_then(|of| of[row]), unwrapped.as_ref()) {
                    (Some(line), Some(wide)) if previous != Some(line) => {
                        previous = Some(line);
                        copied.push(without_gutter(wide.text(line)).to_owned());
                    }
                    (Some(_), _) => {}
                    (None, _) => {
                        previous = None;
                        copied.push(without_gutter(rows.text(row)).to_owned());
                    }
                }
            }
        }
        dedent(&copied)
    }

    /// Recomputes search matches (case-insensitive) at `width`: in the lines drawn, and one per collapsed card
    /// whose hidden part holds the query.
    pub fn refresh_search(&mut self, width: usize, theme: &Theme, now: Instant) {
        let Some(query) = self.search.as_ref().map(|search| search.query.to_lowercase()) else { return };
        let mut matches = Vec::new();
        if !query.is_empty() {
            let mut line = 0;
            let mut drawn_at = 0;
            for (index, lines) in self.layout(width, theme, now).iter().enumerate() {
                // A card folded into a group is drawn by the group's first card.
                if !lines.is_empty() {
                    drawn_at = line;
                }
                for row in 0..lines.len() {
                    let text = lines.text(row);
                    let lower = text.to_lowercase();
                    // Lowercasing can change byte lengths for some scripts; only keep ranges valid in the original.
                    for (start, found) in lower.match_indices(&query) {
                        let end = (start + found.len()).min(text.len());
                        if text.is_char_boundary(start) && text.is_char_boundary(end) {
                            matches.push(SearchMatch { line: line + row, start, end, folded_in: None });
                        }
                    }
                }
                if self.hides(index, &query, width, theme, now) {
                    matches.push(SearchMatch { line: drawn_at, start: 0, end: 0, folded_in: Some(index) });
                }
                line += lines.len();
            }
        }
        if let Some(search) = &mut self.search {
            search.current = search.current.min(matches.len().saturating_sub(1));
            search.matches = matches;
        }
    }

    /// Whether cell `index` is collapsed and expanding it would show `query` (lowercase) more often than now.
    fn hides(&self, index: usize, query: &str, width: usize, theme: &Theme, now: Instant) -> bool {
        let cell = &self.cells[index];
        let text_holds = |text: &str| text.to_lowercase().contains(query);
        let may_hold = match &cell.kind {
            CellKind::Thinking { text, .. } | CellKind::Compaction { summary: text, .. } => text_holds(text),
            CellKind::Tool(card) => text_holds(&card.output) || strings_hold(&card.input, &text_holds),
            _ => false,
        };
        if cell.expanded || !may_hold {
            return false;
        }
        let mut open = cell.clone();
        open.expanded = true;
        let count = |lines: &PackedLines| {
            (0..lines.len()).map(|row| lines.text(row).to_lowercase().matches(query).count()).sum::<usize>()
        };
        count(&cell_ui::render(&open, width, theme, now)) > count(&cell_ui::render(cell, width, theme, now))
    }

    /// When the current match is inside a collapsed card, expands the card and moves to the first match in it.
    pub fn open_current_match(&mut self, width: usize, theme: &Theme, now: Instant) {
        let Some(index) = self.search.as_ref().and_then(|search| search.matches.get(search.current)?.folded_in) else {
            return;
        };
        self.update(index, |cell| cell.expanded = true);
        self.refresh_search(width, theme, now);
        let layout = self.layout(width, theme, now);
        let start: usize = layout[..index].iter().map(|lines| lines.len()).sum();
        let cell_lines = start..start + layout[index].len();
        if let Some(search) = &mut self.search
            && let Some(first) = search.matches.iter().position(|found| cell_lines.contains(&found.line))
        {
            search.current = first;
        }
    }

    /// Moves to the next (or previous) match and scrolls it into view for a viewport of `viewport` lines.
    pub fn step_search(&mut self, forward: bool, total: usize, viewport: usize) {
        let Some(search) = &mut self.search else { return };
        if search.matches.is_empty() {
            return;
        }
        let count = search.matches.len();
        search.current = if forward { (search.current + 1) % count } else { (search.current + count - 1) % count };
        let line = search.matches[search.current].line;
        self.reveal(line, total, viewport);
    }

    /// Scrolls so transcript line `line` is visible.
    pub fn reveal(&mut self, line: usize, total: usize, viewport: usize) {
        let top = total.saturating_sub(viewport + self.scroll_from_bottom);
        let bottom = top + viewport;
        if line < top {
            self.scroll_from_bottom = total.saturating_sub(viewport + line);
        } else if line >= bottom {
            self.scroll_from_bottom = total.saturating_sub(line + 1);
        }
        if self.scroll_from_bottom == 0 {
            self.new_output_below = false;
        }
    }

    /// Scrolls by `delta` lines (positive = up, towards older output), clamped.
    pub fn scroll_by(&mut self, delta: isize, total: usize, viewport: usize) {
        let max = total.saturating_sub(viewport);
        let next = (self.scroll_from_bottom as isize + delta).clamp(0, max as isize) as usize;
        self.scroll_from_bottom = next;
        if next == 0 {
            self.new_output_below = false;
        }
    }

    pub fn scroll_to_bottom(&mut self) {
        self.scroll_from_bottom = 0;
        self.new_output_below = false;
    }

    /// The index of the last assistant answer cell.
    pub fn last_answer(&self) -> Option<&str> {
        self.cells.iter().rev().find_map(|cell| match &cell.kind {
            CellKind::Assistant { text, .. } if !text.trim().is_empty() => Some(text.as_str()),
            _ => None,
        })
    }

    /// The cell that contains transcript line `line` at `width`.
    pub fn cell_at_line(&self, line: usize, width: usize, theme: &Theme, now: Instant) -> Option<usize> {
        let mut start = 0;
        for (index, lines) in self.layout(width, theme, now).iter().enumerate() {
            if line < start + lines.len() {
                return Some(index);
            }
            start += lines.len();
        }
        None
    }

    pub fn toggle_expanded(&mut self, index: usize) {
        self.update(index, |cell| cell.expanded = !cell.expanded);
    }
}

/// A cell's layout for drawing: its lines, or only an estimate of its height (far above the viewport).
#[derive(Clone)]
pub enum Laid {
    Lines(Rc<PackedLines>),
    Estimate(usize),
}

impl Laid {
    pub fn height(&self) -> usize {
        match self {
            Laid::Lines(lines) => lines.len(),
            Laid::Estimate(height) => *height,
        }
    }
}

/// The cache key of a cell's layout: what its look depends on.
fn layout_key(cell: &Cell, group: Group, from_here: &[Cell]) -> u64 {
    match group {
        Group::Member => u64::MAX,
        Group::Lead(len) => group_key(&from_here[..len]),
        Group::Alone => match &cell.kind {
            CellKind::Assistant { text, streaming: true } => 1 << 62 | text.len() as u64,
            _ => u64::from(cell.expanded) << 63 | cell.revision,
        },
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Group {
    Alone,
    /// First cell of a group of this many cells: it draws the whole group.
    Lead(usize),
    /// Drawn by the group's lead.
    Member,
}

fn group_key(cells: &[Cell]) -> u64 {
    cells.iter().fold(cells.len() as u64, |key, cell| key.wrapping_mul(1_000_003).wrapping_add(cell.revision))
}

/// Whether any string in a tool's input satisfies `holds`.
fn strings_hold(value: &serde_json::Value, holds: &dyn Fn(&str) -> bool) -> bool {
    match value {
        serde_json::Value::String(text) => holds(text),
        serde_json::Value::Array(items) => items.iter().any(|item| strings_hold(item, holds)),
        serde_json::Value::Object(fields) => fields.values().any(|field| strings_hold(field, holds)),
        _ => false,
    }
}

/// Wide enough that prose never wraps; long code lines still break (and copy as they are drawn then).
const UNWRAPPED_WIDTH: usize = 1000;

/// For each of `rows` (a cell laid out at the screen's width), the line of `wide` (the same cell laid out
/// unwrapped) that it starts or continues, compared without whitespace (wrapping drops the spaces it breaks at
/// and adds hanging indents). `None` for a blank row or one that neither continues the line before it nor
/// starts a later one.
fn logical_lines(rows: &PackedLines, wide: &PackedLines) -> Vec<Option<usize>> {
    let squeeze = |text: &str| text.chars().filter(|c| !c.is_whitespace()).collect::<String>();
    let mut current: Option<(usize, String)> = None;
    let mut next = 0;
    (0..rows.len())
        .map(|row| {
            let text = squeeze(rows.text(row));
            if text.is_empty() || text.chars().all(|c| matches!(c, '─' | '┼' | '│')) {
                return None;
            }
            if let Some((line, seen)) = &mut current
                && squeeze(wide.text(*line)).starts_with(&format!("{seen}{text}"))
            {
                seen.push_str(&text);
                return Some(*line);
            }
            let line = (next..wide.len()).find(|&line| squeeze(wide.text(line)).starts_with(&text))?;
            next = line + 1;
            current = Some((line, text));
            Some(line)
        })
        .collect()
}

/// A row's text without the cell's two-column gutter ("● ", "> ", or blanks).
fn without_gutter(text: &str) -> &str {
    let mut chars = text.char_indices();
    match (chars.next(), chars.next()) {
        (Some((_, '●' | '>' | ' ')), Some((at, ' '))) => &text[at + 1..],
        _ => text.trim_start_matches(' '),
    }
}

/// The lines joined, without the leading blanks all non-blank lines share and without blank lines at the end.
fn dedent(lines: &[String]) -> String {
    let shared = lines
        .iter()
        .filter(|line| !line.trim().is_empty())
        .map(|line| line.len() - line.trim_start_matches(' ').len())
        .min()
        .unwrap_or(0);
    let mut text = lines.iter().map(|line| line.get(shared..).unwrap_or("").trim_end()).collect::<Vec<_>>().join("\n");
    text.truncate(text.trim_end().len());
    text
}
