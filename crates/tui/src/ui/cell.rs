//! One transcript cell as lines for a width: user messages, answers (Markdown), thinking, tool cards,
//! notices. Every cell ends with a blank spacer line.

use std::rc::Rc;
use std::time::Instant;

use ratatui::text::{Line, Span};

use super::packed::PackedLines;
use super::streaming::{StreamLayout, push_body};
use super::theme::Theme;
use super::tool_card::{render_tool_card, render_tool_group};
use super::wrap::{wrap_line, wrap_line_into};
use crate::app::cells::{Cell, CellKind, NoticeKind, ToolCard};

/// Lays out one cell.
pub fn render(cell: &Cell, width: usize, theme: &Theme, now: Instant) -> PackedLines {
    let width = width.max(4);
    let mut out = PackedLines::new();
    let mut push = |line: Line<'static>| out.push(&line);
    match &cell.kind {
        CellKind::User { text } => {
            for (index, line) in text.lines().enumerate() {
                let prefix = if index == 0 { Span::styled("> ", theme.user_prefix) } else { Span::raw("  ") };
                let line = Line::from(vec![prefix, Span::styled(line, theme.user)]);
                wrap_line_into(&line, width, &[Span::raw("  ")], &mut push);
            }
            if out.is_empty() {
                out.push(&Line::from(Span::styled("> ", theme.user_prefix)));
            }
        }
        CellKind::Assistant { text, streaming: true } => {
            let mut lines = Rc::new(PackedLines::new());
            StreamLayout::default().render(&mut lines, text, width, theme);
            return Rc::unwrap_or_clone(lines);
        }
        CellKind::Assistant { text, streaming: false } => push_body(&mut out, text, width.saturating_sub(2), theme),
        CellKind::Thinking { text, streaming } => {
            out.extend(&render_thinking(text, *streaming, cell.expanded, width, theme));
        }
        CellKind::Tool(card) => out.extend(&render_tool_card(card, cell.expanded, width, theme, now)),
        CellKind::Compaction { headline, summary } => {
            let hint = match (cell.expanded, summary.trim().is_empty()) {
                (_, true) => "",
                (false, false) => " · ctrl+o shows the summary",
                (true, false) => " · the model continues from this summary:",
            };
            let line =
                Line::from(vec![Span::styled("── ", theme.dim), Span::styled(format!("{headline}{hint}"), theme.dim)]);
            wrap_line_into(&line, width, &[Span::raw("   ")], &mut push);
            if cell.expanded && !summary.trim().is_empty() {
                out.push(&Line::default());
                push_body_indented(&mut out, summary, width, theme);
            }
        }
        CellKind::Notice { kind, text } => {
            let (glyph, style) = match kind {
                NoticeKind::Info => ("· ", theme.dim),
                NoticeKind::Warning => ("! ", theme.warning),
                NoticeKind::Error => ("✗ ", theme.error),
            };
            for (index, line) in text.lines().enumerate() {
                let prefix = if index == 0 { glyph } else { "  " };
                let line = Line::from(vec![Span::styled(prefix, style), Span::styled(line, style)]);
                wrap_line_into(&line, width, &[Span::raw("  ")], &mut push);
            }
        }
    }
    out.push(&Line::default());
    out.shrink_to_fit();
    out
}

/// A compaction's summary as Markdown under its marker, indented like an answer's body.
fn push_body_indented(out: &mut PackedLines, markdown: &str, width: usize, theme: &Theme) {
    let indent = Span::raw("  ");
    super::markdown::render_markdown_into(markdown, width.saturating_sub(2), theme, &mut |line| {
        out.push_prefixed(Some(&indent), &line);
    });
}

/// Lays out a group of consecutive finished read-only tool calls as one compact card.
pub fn render_group(cells: &[Cell], width: usize, theme: &Theme, now: Instant) -> PackedLines {
    let cards: Vec<&ToolCard> = cells
        .iter()
        .filter_map(|cell| match &cell.kind {
            CellKind::Tool(card) => Some(card.as_ref()),
            _ => None,
        })
        .collect();
    let mut lines: PackedLines = render_tool_group(&cards, width.max(4), theme, now).into_iter().collect();
    lines.push(&Line::default());
    lines
}

fn render_thinking(text: &str, streaming: bool, expanded: bool, width: usize, theme: &Theme) -> Vec<Line<'static>> {
    let label = if streaming { "✻ Thinking…" } else { "✻ Thought" };
    if !expanded {
        let count = text.lines().count();
        let hint = if count > 0 && !streaming {
            format!(" ({count} line{} · ctrl+o to expand)", if count == 1 { "" } else { "s" })
        } else {
            String::new()
        };
        return vec![Line::from(vec![Span::styled(label, theme.dim), Span::styled(hint, theme.dim)])];
    }
    let mut lines = vec![Line::from(Span::styled(label, theme.dim))];
    for line in text.lines() {
        let line = Line::from(vec![
            Span::raw("  "),
            Span::styled(line.to_owned(), theme.dim.add_modifier(ratatui::style::Modifier::ITALIC)),
        ]);
        lines.extend(wrap_line(&line, width, &[Span::raw("  ")]));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ui::theme::ColorDepth;
    use crate::ui::wrap::line_text;

    #[test]
    fn user_and_notice_cells_wrap_with_prefixes() {
        let theme = Theme::new(ColorDepth::None);
        let cell = Cell::new(CellKind::User { text: "fix the failing test in the parser module".into() });
        let lines: Vec<String> =
            render(&cell, 20, &theme, Instant::now()).iter().map(|line| line_text(&line)).collect();
        assert_eq!(lines[0], "> fix the failing");
        assert!(lines[1].starts_with("  "));
        assert_eq!(lines.last().unwrap(), "");
        let cell = Cell::new(CellKind::Notice { kind: NoticeKind::Error, text: "boom".into() });
        assert_eq!(render(&cell, 20, &theme, Instant::now()).text(0), "✗ boom");
    }
}
