//! A streaming answer's layout, kept up to date in time proportional to what is still changing.
//!
//! An answer grows by a few characters per delta and is drawn up to 60 times a second, line in progress
//! included, so laying the whole text out again per frame would cost more the longer the answer gets. Instead
//! the answer is split at top-level Markdown blocks: once a later block has begun on a complete line, every
//! block before it can no longer change (CommonMark decides block structure line by line), so its lines are
//! laid out once and kept. Each frame only lays out the blocks that are still open — usually the paragraph,
//! list or code block being written — and replaces the end of the cached lines with them.
//!
//! The line in progress is drawn with the inline spans it leaves open closed (`close_open_inline`), so `**bold`
//! is bold as it arrives instead of showing its markers until the closing ones come.
//!
//! When the answer is complete the cell is laid out whole once more, so the final look is the ordinary
//! rendering (link reference definitions, the one thing a later block can change, are then applied).

use std::ops::Range;
use std::rc::Rc;

use pulldown_cmark::{CodeBlockKind, Event, Parser, Tag, TagEnd};
use ratatui::text::{Line, Span};

use super::markdown::{close_open_inline, markdown_options, render_markdown_into};
use super::packed::PackedLines;
use super::theme::Theme;

/// What is known about the settled part of a streaming answer, for one width.
#[derive(Clone, Debug, Default)]
pub struct StreamLayout {
    width: usize,
    /// Bytes of the answer whose blocks are final (always the start of a top-level block).
    settled_bytes: usize,
    /// Lines those blocks take (marker and indent included, no spacer).
    settled_lines: usize,
}

impl StreamLayout {
    /// Brings `lines` (this state's previous output, reused in place when nothing else holds it) up to date
    /// for `text` at `width`: the settled lines stay, the open blocks, the line in progress and the spacer are
    /// laid out again.
    pub fn render(&mut self, lines: &mut Rc<PackedLines>, text: &str, width: usize, theme: &Theme) {
        let width = width.max(4);
        if self.width != width || self.settled_bytes > text.len() || !text.is_char_boundary(self.settled_bytes) {
            *self = StreamLayout { width, ..StreamLayout::default() };
        }
        let out = Rc::make_mut(lines);
        out.truncate(self.settled_lines);
        let body_width = width - 2;
        let tail = &text[self.settled_bytes..];
        let cut = settled_prefix(tail);
        if cut > 0 {
            push_body(out, &tail[..cut], body_width, theme);
            self.settled_bytes += cut;
            self.settled_lines = out.len();
        }
        push_body(out, &close_open_inline(&text[self.settled_bytes..]), body_width, theme);
        if out.is_empty() {
            out.push(&Line::from(Span::styled("● …", theme.dim)));
        }
        out.push(&Line::default());
    }
}

/// Lays out Markdown as an answer's body lines after `out`'s: "● " before the answer's first line, a
/// two-column indent before the others, and one blank line between blocks laid out separately (as between
/// blocks laid out together).
pub fn push_body(out: &mut PackedLines, markdown: &str, width: usize, theme: &Theme) {
    let marker = Span::styled("● ", theme.accent);
    let indent = Span::raw("  ");
    let mut first = true;
    render_markdown_into(markdown, width, theme, &mut |line| {
        if first && !out.is_empty() {
            out.push(&Line::from(indent.clone()));
        }
        first = false;
        let prefix = if out.is_empty() { &marker } else { &indent };
        out.push_prefixed(Some(prefix), &line);
    });
}

/// How many leading bytes of `text` (which starts a top-level block) hold only blocks that later text cannot
/// change: everything before the last top-level block that began on a line already complete. 0 when there is
/// no such block.
pub fn settled_prefix(text: &str) -> usize {
    let mut depth = 0usize;
    let mut cut = 0;
    let mut fence: Option<(usize, Fence)> = None;
    for (event, Range { start, end }) in Parser::new_ext(text, markdown_options()).into_offset_iter() {
        // A block's offset can be past its indentation (indented code): the cut goes to the start of the line.
        let start = text[..start].rfind('\n').map_or(0, |newline| newline + 1);
        let complete_line_at = |at: usize| text[at..].contains('\n');
        match event {
            Event::Start(tag) => {
                if depth == 0 {
                    if start > 0 && complete_line_at(start) {
                        cut = start;
                    }
                    if let Tag::CodeBlock(CodeBlockKind::Fenced(_)) = tag {
                        fence = Fence::opening(&text[start..]).map(|opening| (start, opening));
                    }
                }
                depth += 1;
            }
            Event::End(TagEnd::CodeBlock) if depth == 1 => {
                depth = 0;
                // A closed fence ends its block for good: nothing after it can change the code.
                if let Some((block_start, opening)) = fence.take()
                    && let Some(after) = opening.closed_at(text, block_start, end)
                {
                    cut = after;
                }
            }
            Event::End(_) => depth = depth.saturating_sub(1),
            Event::Rule if depth == 0 && start > 0 && complete_line_at(start) => cut = start,
            _ => {}
        }
    }
    cut
}

/// A code fence: its character and length.
#[derive(Clone, Copy, Debug)]
struct Fence {
    char: char,
    len: usize,
}

impl Fence {
    fn opening(line: &str) -> Option<Fence> {
        let line = line.trim_start_matches(' ');
        let char = line.chars().next().filter(|c| *c == '`' || *c == '~')?;
        Some(Fence { char, len: line.chars().take_while(|c| *c == char).count() })
    }

    /// Where the line after the block's closing fence starts, when the block (`text[start..end]`) ends with a
    /// complete closing fence line rather than at the end of the text.
    fn closed_at(self, text: &str, start: usize, end: usize) -> Option<usize> {
        let newline = end.saturating_sub(1) + text[end.saturating_sub(1)..].find('\n')?;
        let line_start = text[..newline].rfind('\n').map_or(0, |at| at + 1);
        if line_start <= start {
            return None;
        }
        let line = text[line_start..newline].trim_matches([' ', '\t', '\r']);
        let closes = line.chars().count() >= self.len && line.chars().all(|c| c == self.char);
        closes.then_some(newline + 1)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;
    use crate::app::cells::{Cell, CellKind};
    use crate::ui::theme::ColorDepth;

    /// Markdown that exercises what can make a later line change an earlier block: setext underlines, tables
    /// under a paragraph, lists that continue after blank lines, lazy continuation, fences, rules.
    const DOCUMENT: &str = "# Plan\n\nThe parser reads the input **once**, left to right.\nIt keeps a window.\n\
        Setext heading\n---\n\nA paragraph\n\n---\n\n\
        - keep the window small,\n- refill lazily,\n\n- loose item after a blank line\n  continued\n\n    indented code in the item\n\n\
        1. first\n2. second\n\n3. third, same list\n\n\
        > a quote\nlazy continuation\n\n> another quote\n\n\
        ```rust\nfn main() {\n    println!(\"hi\");\n}\n```\n\n\
        header | other\n--- | ---\n1 MB | 4.1 ms\n10 MB | 41 ms\n\n\
        <div>\nhtml block\n</div>\n\n\
        ***\n\n    indented code\n    more\n\nLast paragraph with `code` and a [link](http://x) that runs on \
        and on past the width of the terminal so that it wraps onto a second line.\n";

    fn whole(text: &str, width: usize, theme: &Theme) -> Vec<String> {
        let cell = Cell::new(CellKind::Assistant {
            text: tandem_protocol::conversation::SharedText::new(text.into()),
            streaming: false,
        });
        crate::ui::cell::render(&cell, width, theme, Instant::now())
            .iter()
            .map(|line| crate::ui::wrap::line_text(&line))
            .collect()
    }

    #[test]
    fn streamed_layout_matches_the_whole_layout_of_the_completed_text_at_every_step() {
        let theme = Theme::new(ColorDepth::None);
        for step in [1, 3, 17] {
            let mut layout = StreamLayout::default();
            let mut lines = Rc::new(PackedLines::new());
            let mut end = 0;
            while end < DOCUMENT.len() {
                end = (end + step).min(DOCUMENT.len());
                while !DOCUMENT.is_char_boundary(end) {
                    end += 1;
                }
                let text = &DOCUMENT[..end];
                layout.render(&mut lines, text, 60, &theme);
                let streamed: Vec<String> = lines.iter().map(|line| crate::ui::wrap::line_text(&line)).collect();
                let expected = whole(&close_open_inline(text), 60, &theme);
                if expected == [""] {
                    assert_eq!(streamed, ["● …", ""], "nothing to show yet shows a placeholder");
                    continue;
                }
                assert_eq!(streamed, expected, "after {end} bytes (step {step}):\n{text}");
            }
            assert!(layout.settled_bytes > DOCUMENT.len() / 2, "settled {} bytes", layout.settled_bytes);
        }
    }

    #[test]
    fn the_settled_prefix_ends_before_the_last_block_begun_on_a_complete_line() {
        assert_eq!(settled_prefix("one\n\ntwo\n\nthr"), 5);
        assert_eq!(settled_prefix("one\n\ntwo\n\nthree\n"), 10);
        assert_eq!(settled_prefix("only a paragraph\nstill it"), 0);
        // The underline turns the paragraph into a heading: nothing settles before it.
        assert_eq!(settled_prefix("Title\n---"), 0);
        // A closed fence settles at once; an open one, or one whose closing line is still being written, doesn't.
        assert_eq!(settled_prefix("```rust\nfn x() {}\n```\nmore"), 22);
        assert_eq!(settled_prefix("```rust\nfn x() {}\n``"), 0);
        assert_eq!(settled_prefix("```rust\nfn x() {}\n```"), 0);
        assert_eq!(settled_prefix("````\n```\nstill code\n"), 0);
    }

    #[test]
    fn a_line_in_progress_shows_its_styles_not_its_markers() {
        let theme = Theme::new(ColorDepth::None);
        let mut layout = StreamLayout::default();
        let mut lines = Rc::new(PackedLines::new());
        layout.render(&mut lines, "Done.\n\nRun **cargo te", 60, &theme);
        let last = lines.iter().nth(2).expect("the line in progress");
        assert_eq!(crate::ui::wrap::line_text(&last), "  Run cargo te");
        let bold = last.spans.iter().find(|span| span.content.contains("cargo")).expect("a span");
        assert!(bold.style.add_modifier.contains(ratatui::style::Modifier::BOLD), "{last:?}");
        layout.render(&mut lines, "Done.\n\nRun **cargo test** then `", 60, &theme);
        let last = lines.iter().nth(2).expect("the line in progress");
        assert_eq!(crate::ui::wrap::line_text(&last), "  Run cargo test then");
    }

    #[test]
    fn a_resize_lays_the_answer_out_again() {
        let theme = Theme::new(ColorDepth::None);
        let mut layout = StreamLayout::default();
        let mut lines = Rc::new(PackedLines::new());
        layout.render(&mut lines, DOCUMENT, 60, &theme);
        layout.render(&mut lines, DOCUMENT, 30, &theme);
        let streamed: Vec<String> = lines.iter().map(|line| crate::ui::wrap::line_text(&line)).collect();
        assert_eq!(streamed, whole(DOCUMENT, 30, &theme));
    }
}
