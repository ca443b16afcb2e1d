//! The rewind list and the chosen prompt's preview, over the screen.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Widget};

use super::inspector::cut;
use super::theme::Theme;
use crate::app::rewind_view::{REWIND_CHOICES, RewindView};

pub fn render_rewind(view: &RewindView, area: Rect, buf: &mut Buffer, theme: &Theme) {
    Clear.render(area, buf);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.border)
        .title(Span::styled(" Rewind to just before a prompt ", theme.dialog_title));
    let inner = block.inner(area);
    block.render(area, buf);
    if inner.height < 4 || inner.width < 10 {
        return;
    }
    let width = inner.width as usize;
    let mut lines: Vec<Line> = Vec::new();
    match view.choosing {
        None => {
            let visible = inner.height.saturating_sub(2) as usize;
            let newest_first: Vec<usize> = (0..view.points.len()).rev().collect();
            let at = newest_first.iter().position(|index| *index == view.selected).unwrap_or(0);
            let start = at.saturating_sub(visible.saturating_sub(1));
            for index in newest_first.into_iter().skip(start).take(visible) {
                let point = &view.points[index];
                let files = match point.files.len() {
                    0 => "no file changes".to_owned(),
                    1 => "1 file".to_owned(),
                    n => format!("{n} files"),
                };
                let prompt = point.text.lines().next().unwrap_or_default();
                let text =
                    cut(&format!("{}  {prompt}  · {files}", if index == view.selected { "▶" } else { " " }), width);
                let style = if index == view.selected { theme.selection } else { theme.text };
                lines.push(Line::from(Span::styled(text, style)));
            }
            lines.push(Line::default());
            lines.push(hints(&[("↑↓", "choose a prompt"), ("enter", "preview"), ("esc", "close")], theme));
        }
        Some(choice) => {
            let point = &view.points[view.selected];
            lines.push(Line::from(Span::styled(
                cut(&format!("Before: {}", point.text.lines().next().unwrap_or_default()), width),
                theme.bold,
            )));
            for (index, (_, _, label)) in REWIND_CHOICES.iter().enumerate() {
                let style = if index == choice { theme.selection } else { theme.text };
                let marker = if index == choice { "▶" } else { " " };
                lines.push(Line::from(Span::styled(cut(&format!("{marker} {}. {label}", index + 1), width), style)));
            }
            if !point.conflicts.is_empty() {
                let text = format!("Changed outside tandem since (left as they are): {}", point.conflicts.join(", "));
                lines.push(Line::from(Span::styled(cut(&text, width), theme.warning)));
            }
            let header = lines.len() + 2;
            let room = (inner.height as usize).saturating_sub(header);
            let diff: Vec<&str> = if point.diff.is_empty() {
                vec!["No file changes since this prompt."]
            } else {
                point.diff.lines().collect()
            };
            let start = view.scroll.min(diff.len().saturating_sub(room));
            for line in diff.iter().skip(start).take(room) {
                let style = if line.starts_with('+') && !line.starts_with("+++") {
                    theme.diff_add
                } else if line.starts_with('-') && !line.starts_with("---") {
                    theme.diff_del
                } else if line.starts_with("@@") || line.starts_with('#') {
                    theme.diff_hunk
                } else {
                    theme.dim
                };
                lines.push(Line::from(Span::styled(cut(line, width), style)));
            }
            lines.push(Line::default());
            lines.push(hints(&[("1-3 enter", "go back"), ("pgup pgdn", "scroll the diff"), ("esc", "back")], theme));
        }
    }
    Paragraph::new(lines).render(inner, buf);
}

fn hints(pairs: &[(&str, &str)], theme: &Theme) -> Line<'static> {
    let mut spans = Vec::new();
    for (index, (key, what)) in pairs.iter().enumerate() {
        if index > 0 {
            spans.push(Span::raw("  "));
        }
        spans.push(Span::styled((*key).to_owned(), theme.key_hint));
        spans.push(Span::raw(format!(" {what}")));
    }
    Line::from(spans)
}
