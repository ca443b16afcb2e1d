//! The session picker: one row per saved session, newest first.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Widget};

use super::theme::Theme;
use super::wrap::truncate;
use crate::app::picker::SessionPicker;

pub fn render_picker(picker: &SessionPicker, area: Rect, buf: &mut Buffer, theme: &Theme) {
    Clear.render(area, buf);
    let inner_width = area.width.saturating_sub(2) as usize;
    let rows = area.height.saturating_sub(4) as usize;
    let first = picker.selected.saturating_sub(rows.saturating_sub(1));
    let mut lines: Vec<Line<'_>> = Vec::new();
    for (index, session) in picker.sessions.iter().enumerate().skip(first).take(rows) {
        let when = tandem_core::session::format_utc(session.modified_at);
        let title = session.title.as_deref().or(session.first_prompt.as_deref()).unwrap_or("(no prompt)");
        let size = if session.size_bytes >= 1 << 20 {
            format!("{:.1} MB", session.size_bytes as f64 / (1 << 20) as f64)
        } else {
            format!("{} KB", session.size_bytes.div_ceil(1024))
        };
        let meta = format!("  {when}  {} turns  {size}", session.turns);
        let room = inner_width.saturating_sub(crate::ui::wrap::width(&meta) + 2).max(8);
        let mut line = Line::from(vec![
            Span::styled(if index == picker.selected { "▶ " } else { "  " }, theme.key_hint),
            Span::styled(truncate(title, room), theme.bold),
            Span::styled(meta, theme.dim),
        ]);
        if index == picker.selected {
            line = line.style(theme.selection);
        }
        lines.push(line);
    }
    lines.push(Line::default());
    lines.push(Line::from(vec![
        Span::styled("↑↓", theme.key_hint),
        Span::raw(" select  "),
        Span::styled("Enter", theme.key_hint),
        Span::raw(" resume  "),
        Span::styled("Esc", theme.key_hint),
        Span::raw(" quit"),
    ]));
    Paragraph::new(lines)
        .block(
            Block::default()
                .borders(Borders::ALL)
                .border_style(theme.border)
                .title(Span::styled(" Resume a session ", theme.dialog_title)),
        )
        .render(area, buf);
}
