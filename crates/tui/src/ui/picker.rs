//! The session picker: one row per saved session, newest first.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Span;
use ratatui::widgets::{Clear, Widget};

use super::list_modal::render_list_modal;
use super::theme::Theme;
use super::wrap::truncate;
use crate::app::picker::{ModelPicker, SessionPicker};

pub fn render_picker(picker: &SessionPicker, area: Rect, buf: &mut Buffer, theme: &Theme) {
    Clear.render(area, buf);
    let inner_width = area.width.saturating_sub(2) as usize;
    let first = picker.selected.saturating_sub(rows_visible(area).saturating_sub(1));
    let mut rows = Vec::new();
    for (index, session) in picker.sessions.iter().enumerate().skip(first).take(rows_visible(area)) {
        let when = tandem_core::session::format_utc(session.modified_at);
        let title = session.title.as_deref().or(session.first_prompt.as_deref()).unwrap_or("(no prompt)");
        let size = if session.size_bytes >= 1 << 20 {
            format!("{:.1} MB", session.size_bytes as f64 / (1 << 20) as f64)
        } else {
            format!("{} KB", session.size_bytes.div_ceil(1024))
        };
        let meta = format!("  {when}  {} turns  {size}", session.turns);
        let room = inner_width.saturating_sub(crate::ui::wrap::width(&meta) + 2).max(8);
        let spans = vec![Span::styled(truncate(title, room), theme.bold), Span::styled(meta, theme.dim)];
        rows.push((index == picker.selected, spans));
    }
    let close = if picker.in_session { "close" } else { "quit" };
    let hints = [("↑↓", "select"), ("Enter", "resume"), ("Esc", close)];
    render_list_modal("Resume a session", rows, &hints, area, buf, theme);
}

/// The `/model` picker: one model id per row, the one in use marked.
pub fn render_model_picker(picker: &ModelPicker, area: Rect, buf: &mut Buffer, theme: &Theme) {
    Clear.render(area, buf);
    let first = picker.selected.saturating_sub(rows_visible(area).saturating_sub(1));
    let rows = picker
        .models
        .iter()
        .enumerate()
        .skip(first)
        .take(rows_visible(area))
        .map(|(index, model)| {
            let mut spans = vec![Span::styled(model.clone(), theme.bold)];
            if *model == picker.current {
                spans.push(Span::styled("  (in use)", theme.dim));
            }
            (index == picker.selected, spans)
        })
        .collect();
    let hints = [("↑↓", "select"), ("Enter", "use"), ("Esc", "close")];
    render_list_modal("Model", rows, &hints, area, buf, theme);
}

fn rows_visible(area: Rect) -> usize {
    area.height.saturating_sub(4) as usize
}
