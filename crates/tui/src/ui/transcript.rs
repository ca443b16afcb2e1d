//! Draws the visible slice of the transcript, with search highlights, the keyboard selection and a
//! "new output below" marker when the user has scrolled up.

use std::time::Instant;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use super::theme::Theme;
use super::wrap::width as display_width;
use crate::app::transcript::{Laid, Transcript};

/// Draws the transcript into `area`, bottom-aligned (a short conversation sits just above the input); returns
/// how many lines it is scrolled up (clamped), for [`render_scroll_marker`].
pub fn render_transcript(transcript: &Transcript, area: Rect, buf: &mut Buffer, theme: &Theme, now: Instant) -> usize {
    if area.width == 0 || area.height == 0 {
        return 0;
    }
    let viewport = area.height as usize;
    // Exact lines only where they can be seen; cells far above keep an estimated height after a resize.
    let from_bottom = transcript.scroll_from_bottom.saturating_add(viewport);
    let layout = transcript.view(area.width as usize, from_bottom, theme, now);
    let total: usize = layout.iter().map(Laid::height).sum();
    let scroll = transcript.scroll_from_bottom.min(total.saturating_sub(viewport));
    let end = total - scroll;
    let start = end.saturating_sub(viewport);
    // Bottom-aligned: when the content is shorter than the viewport, it starts lower.
    let top_padding = viewport.saturating_sub(end - start);

    // Walk cells to the first visible line without touching the lines before it.
    let mut line_index = 0usize;
    let mut row = top_padding;
    for laid in &layout {
        let lines = match laid {
            Laid::Lines(lines) => lines,
            Laid::Estimate(height) => {
                // Only cells above the visible window are estimated.
                line_index += height;
                continue;
            }
        };
        if line_index + lines.len() <= start {
            line_index += lines.len();
            continue;
        }
        for offset in start.saturating_sub(line_index)..lines.len() {
            let global = line_index + offset;
            if global >= end {
                break;
            }
            let y = area.y + row as u16;
            let row_area = Rect { x: area.x, y, width: area.width, height: 1 };
            lines.line(offset).render(row_area, buf);
            decorate(transcript, global, lines.text(offset), row_area, buf, theme);
            row += 1;
        }
        line_index += lines.len();
        if line_index >= end {
            break;
        }
    }

    scroll
}

/// The "↑ N lines up" / "↓ new output below" marker, drawn on the row under the transcript (the input's rule or
/// the dialog's top border) so it hides no text; `scroll` is what [`render_transcript`] returned.
pub fn render_scroll_marker(transcript: &Transcript, area: Rect, scroll: usize, buf: &mut Buffer, theme: &Theme) {
    let y = area.y + area.height;
    if area.width == 0 || y >= buf.area.y + buf.area.height {
        return;
    }
    if transcript.new_output_below && scroll > 0 {
        let marker = " ↓ new output below (End) ";
        let width = display_width(marker) as u16;
        if area.width > width {
            let x = area.x + area.width - width - 1;
            Line::from(Span::styled(marker, theme.key_hint.add_modifier(ratatui::style::Modifier::REVERSED)))
                .render(Rect { x, y, width, height: 1 }, buf);
        }
    } else if scroll > 0 {
        let marker = format!(" ↑ {scroll} line{} up ", if scroll == 1 { "" } else { "s" });
        let width = display_width(&marker) as u16;
        if area.width > width {
            let x = area.x + area.width - width - 1;
            Line::from(Span::styled(marker, theme.dim)).render(Rect { x, y, width, height: 1 }, buf);
        }
    }
}

/// Search matches, the selection and the scroll-mode cursor drawn over a line.
fn decorate(transcript: &Transcript, global: usize, text: &str, row: Rect, buf: &mut Buffer, theme: &Theme) {
    if let Some((anchor, head)) = transcript.selection {
        if (anchor.min(head)..=anchor.max(head)).contains(&global) {
            buf.set_style(row, theme.selection);
        }
    } else if transcript.cursor_line == Some(global) {
        buf.set_style(Rect { width: 1, ..row }, theme.key_hint);
        buf.set_style(row, theme.selection);
    }
    let Some(search) = &transcript.search else { return };
    for (index, found) in search.matches.iter().enumerate().filter(|(_, found)| found.line == global) {
        let column = display_width(&text[..found.start.min(text.len())]) as u16;
        let width = display_width(&text[found.start.min(text.len())..found.end.min(text.len())]) as u16;
        if column >= row.width {
            continue;
        }
        let style = if index == search.current { theme.search_current } else { theme.search_match };
        buf.set_style(Rect { x: row.x + column, y: row.y, width: width.min(row.width - column), height: 1 }, style);
    }
}
