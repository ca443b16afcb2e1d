//! The rewind list and the chosen prompt's preview, over the screen.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Widget};

use super::diff::HunkReview;
use super::inspector::cut;
use super::theme::Theme;
use crate::app::rewind_view::{FileGoingBack, REWIND_CHOICES, RewindView};

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
                // Files tools changed from this prompt on; the preview says which still differ.
                let files = match point.files.len() {
                    0 => "no file changes".to_owned(),
                    1 => "1 file touched".to_owned(),
                    n => format!("{n} files touched"),
                };
                let prompt = point.text.lines().next().unwrap_or_default();
                let marker = if index == view.selected { "▶" } else { " " };
                // A prompt rewound or compacted away: its files can still go back (which redoes a rewind).
                let gone = if point.in_conversation { "" } else { "(files only) " };
                let text = cut(&format!("{marker}{:>3}  {gone}{prompt}  · {files}", point.seq), width);
                let style = match (index == view.selected, point.in_conversation) {
                    (true, _) => theme.selection,
                    (false, true) => theme.text,
                    (false, false) => theme.dim,
                };
                lines.push(Line::from(Span::styled(text, style)));
            }
            lines.push(Line::default());
            lines.push(hints(&[("↑↓", "choose a prompt"), ("enter", "preview"), ("esc", "close")], theme));
        }
        Some(choice) => {
            let point = &view.points[view.selected];
            lines.push(Line::from(Span::styled(
                cut(&format!("Before prompt {}: {}", point.seq, point.text.lines().next().unwrap_or_default()), width),
                theme.bold,
            )));
            for (index, (conversation, _, label)) in REWIND_CHOICES.iter().enumerate() {
                let open = point.in_conversation || !conversation;
                let style = match (index == choice, open) {
                    (true, _) => theme.selection,
                    (false, true) => theme.text,
                    (false, false) => theme.dim,
                };
                let marker = if index == choice { "▶" } else { " " };
                let closed = if open { "" } else { " (not in the conversation any more)" };
                lines.push(Line::from(Span::styled(
                    cut(&format!("{marker} {}. {label}{closed}", index + 1), width),
                    style,
                )));
            }
            let (diff, cursor) = match &view.preview {
                None => (vec![Line::from(Span::styled("Reading the checkpoints…", theme.dim))], None),
                Some(files) if files.is_empty() => {
                    (vec![Line::from(Span::styled("No file changes since this prompt.", theme.dim))], None)
                }
                Some(files) => preview_lines(files, view.cursor, width, theme),
            };
            if let Some(files) = &view.preview {
                lines.push(Line::from(Span::styled(cut(&summary(files, view.cursor), width), theme.dim)));
            }
            let room = (inner.height as usize).saturating_sub(lines.len() + 2);
            let most = diff.len().saturating_sub(room);
            let mut scroll = view.scroll.get().min(most);
            if view.follow.replace(false)
                && let Some((start, end)) = cursor
                && (start < scroll || end > scroll + room)
            {
                scroll = start.min(most);
            }
            view.scroll.set(scroll);
            lines.extend(diff.into_iter().skip(scroll).take(room));
            lines.push(Line::default());
            lines.push(hints(
                &[
                    ("1-3", "go back"),
                    ("tab", "next hunk"),
                    ("space", "keep it as now"),
                    ("pgdn", "scroll"),
                    ("esc", "back"),
                ],
                theme,
            ));
        }
    }
    Paragraph::new(lines).render(inner, buf);
}

/// The files going back, one after the other: a conflict's diff is shown without review (it stays as it is), a
/// file that is not text is named. Returns the lines and the rows of the cursor's hunk.
fn preview_lines(
    files: &[FileGoingBack],
    cursor: (usize, usize),
    width: usize,
    theme: &Theme,
) -> (Vec<Line<'static>>, Option<(usize, usize)>) {
    let mut lines: Vec<Line<'static>> = Vec::new();
    let mut rows = None;
    for (index, file) in files.iter().enumerate() {
        if index > 0 {
            lines.push(Line::default());
        }
        if file.conflict {
            let why = file.why.as_deref().unwrap_or("changed outside tandem since");
            let text = format!("{}: {why}; left as it is", file.path);
            lines.push(Line::from(Span::styled(cut(&text, width), theme.warning)));
            if let Some(diff) = &file.diff {
                // Drawn as hunks that stay as they are.
                let stays = HunkReview { accepted: vec![false; diff.hunks().len()], current: usize::MAX };
                lines.extend(diff.render(width, theme, Some(&stays)));
            }
            continue;
        }
        let Some(diff) = &file.diff else {
            let text = match file.removed {
                true => format!("{}: not text; created since this prompt, going back removes it", file.path),
                false => format!("{}: not text; it goes back whole", file.path),
            };
            lines.push(Line::from(Span::styled(cut(&text, width), theme.warning)));
            continue;
        };
        if file.removed {
            let text = format!("{}: created since this prompt; going back removes it", file.path);
            lines.push(Line::from(Span::styled(cut(&text, width), theme.dim)));
        }
        let current = if cursor.0 == index { cursor.1 } else { usize::MAX };
        let review = HunkReview { current, ..file.review.clone() };
        let base = lines.len();
        if cursor.0 == index {
            let offsets = diff.hunk_line_offsets(width);
            if let Some(&start) = offsets.get(cursor.1) {
                let end = offsets.get(cursor.1 + 1).copied().unwrap_or_else(|| diff.line_count(width));
                rows = Some((base + start, base + end));
            }
        }
        lines.extend(diff.render(width, theme, Some(&review)));
    }
    (lines, rows)
}

/// "3 files · 4 of 5 hunks go back · 1 conflict · at src/main.rs" (the file of the hunk Tab is on, whose name
/// may have scrolled out of view).
fn summary(files: &[FileGoingBack], cursor: (usize, usize)) -> String {
    let reviewable: Vec<&FileGoingBack> = files.iter().filter(|file| file.reviewable()).collect();
    let hunks: usize = reviewable.iter().map(|file| file.review.accepted.len()).sum();
    let going: usize = reviewable.iter().map(|file| file.review.accepted.iter().filter(|&&yes| yes).count()).sum();
    let conflicts = files.iter().filter(|file| file.conflict).count();
    let mut text = match files.len() {
        1 => "1 file".to_owned(),
        n => format!("{n} files"),
    };
    if hunks > 0 {
        text.push_str(&format!(" · {going} of {hunks} hunks go back"));
    }
    match conflicts {
        0 => {}
        1 => text.push_str(" · 1 conflict, left as it is"),
        n => text.push_str(&format!(" · {n} conflicts, left as they are")),
    }
    if hunks > 0
        && let Some(file) = files.get(cursor.0).filter(|file| file.reviewable())
    {
        text.push_str(&format!(" · at {}", file.path));
    }
    text
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
