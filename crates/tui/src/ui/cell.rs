//! One transcript cell as lines for a width: user messages, answers (Markdown), thinking, tool cards,
//! notices. Every cell ends with a blank spacer line.

use std::time::Instant;

use ratatui::text::{Line, Span};

use super::markdown::render_markdown;
use super::streaming::StreamLayout;
use super::theme::Theme;
use super::tool_card::{render_tool_card, render_tool_group};
use super::wrap::wrap_line;
use crate::app::cells::{Cell, CellKind, NoticeKind, ToolCard};

/// Lays out one cell.
pub fn render(cell: &Cell, width: usize, theme: &Theme, now: Instant) -> Vec<Line<'static>> {
    let width = width.max(4);
    let mut lines = match &cell.kind {
        CellKind::User { text } => {
            let mut lines = Vec::new();
            for (index, line) in text.lines().enumerate() {
                let prefix = if index == 0 { Span::styled("> ", theme.user_prefix) } else { Span::raw("  ") };
                let line = Line::from(vec![prefix, Span::styled(line.to_owned(), theme.user)]);
                lines.extend(wrap_line(&line, width, &[Span::raw("  ")]));
            }
            if lines.is_empty() {
                lines.push(Line::from(Span::styled("> ", theme.user_prefix)));
            }
            lines
        }
        CellKind::Assistant { text, streaming: true } => {
            let mut lines = std::rc::Rc::new(Vec::new());
            StreamLayout::default().render(&mut lines, text, width, theme);
            return std::rc::Rc::unwrap_or_clone(lines);
        }
        CellKind::Assistant { text, streaming: false } => {
            let body = render_markdown(text, width.saturating_sub(2), theme);
            let mut lines: Vec<Line<'static>> = Vec::with_capacity(body.len());
            for (index, line) in body.into_iter().enumerate() {
                let marker = if index == 0 { Span::styled("● ", theme.accent) } else { Span::raw("  ") };
                let mut spans = vec![marker];
                spans.extend(line.spans);
                lines.push(Line::from(spans));
            }
            lines
        }
        CellKind::Thinking { text, streaming } => render_thinking(text, *streaming, cell.expanded, width, theme),
        CellKind::Tool(card) => render_tool_card(card, cell.expanded, width, theme, now),
        CellKind::Notice { kind, text } => {
            let (glyph, style) = match kind {
                NoticeKind::Info => ("· ", theme.dim),
                NoticeKind::Warning => ("! ", theme.warning),
                NoticeKind::Error => ("✗ ", theme.error),
            };
            let mut lines = Vec::new();
            for (index, line) in text.lines().enumerate() {
                let prefix = if index == 0 { glyph } else { "  " };
                let line = Line::from(vec![Span::styled(prefix, style), Span::styled(line.to_owned(), style)]);
                lines.extend(wrap_line(&line, width, &[Span::raw("  ")]));
            }
            lines
        }
    };
    lines.push(Line::default());
    lines
}

/// Lays out a group of consecutive finished read-only tool calls as one compact card.
pub fn render_group(cells: &[Cell], width: usize, theme: &Theme, now: Instant) -> Vec<Line<'static>> {
    let cards: Vec<&ToolCard> = cells
        .iter()
        .filter_map(|cell| match &cell.kind {
            CellKind::Tool(card) => Some(card.as_ref()),
            _ => None,
        })
        .collect();
    let mut lines = render_tool_group(&cards, width.max(4), theme, now);
    lines.push(Line::default());
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
        let lines: Vec<String> = render(&cell, 20, &theme, Instant::now()).iter().map(line_text).collect();
        assert_eq!(lines[0], "> fix the failing");
        assert!(lines[1].starts_with("  "));
        assert_eq!(lines.last().unwrap(), "");
        let cell = Cell::new(CellKind::Notice { kind: NoticeKind::Error, text: "boom".into() });
        assert_eq!(line_text(&render(&cell, 20, &theme, Instant::now())[0]), "✗ boom");
    }
}
