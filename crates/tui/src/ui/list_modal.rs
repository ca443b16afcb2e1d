//! A bordered list with one selectable row per item and a line of key hints: the shape shared by the session
//! picker and the `/permissions` list.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Widget, Wrap};

use super::theme::Theme;

/// Draws `rows` (the selected one highlighted, with a `▶` marker), a blank line and `hints` as (key, what)
/// pairs, in a box titled `title`.
pub fn render_list_modal(
    title: &str,
    rows: Vec<(bool, Vec<Span<'static>>)>,
    hints: &[(&str, &str)],
    area: Rect,
    buf: &mut Buffer,
    theme: &Theme,
) {
    let mut lines: Vec<Line<'static>> = rows
        .into_iter()
        .map(|(selected, spans)| {
            let mut all = vec![Span::styled(if selected { "▶ " } else { "  " }, theme.key_hint)];
            all.extend(spans);
            let line = Line::from(all);
            if selected { line.style(theme.selection) } else { line }
        })
        .collect();
    lines.push(Line::default());
    let mut hint_spans = Vec::new();
    for (index, (key, what)) in hints.iter().enumerate() {
        if index > 0 {
            hint_spans.push(Span::raw("  "));
        }
        hint_spans.push(Span::styled((*key).to_owned(), theme.key_hint));
        hint_spans.push(Span::raw(format!(" {what}")));
    }
    lines.push(Line::from(hint_spans));
    // A row or the hints too long for a narrow screen wrap rather than being cut off.
    Paragraph::new(lines)
        .wrap(Wrap { trim: false })
        .block(
            Block::default()
                .borders(Borders::ALL)
                .border_style(theme.border)
                .title(Span::styled(format!(" {title} "), theme.dialog_title)),
        )
        .render(area, buf);
}
