//! Drawing the permission dialog: a bordered panel across the screen between the conversation and the input
//! (the frame decides its rows), with the tool and risk in its title, the scrollable body (diff, command or input), and a footer of key hints or the feedback field.
//!
//! The body is rendered once per width, colour depth and review state and cached, so a redraw of a long diff
//! costs only the visible rows. Every size down to nothing is drawn without panicking.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Widget};
use tandem_core::tools::Risk;
use unicode_segmentation::UnicodeSegmentation;

use super::{Body, BodyCache, PermissionDialog};
use crate::ui::diff::text::{display_text, rows};
use crate::ui::theme::{ColorDepth, Theme};
use crate::ui::wrap;

/// Columns between hint items in the footer.
const HINT_GAP: &str = "  ";

/// A footer hint: the key and what it does, in a long and a short wording (for narrow dialogs).
struct Hint {
    key: &'static str,
    short_key: &'static str,
    long: Vec<Span<'static>>,
    short: Vec<Span<'static>>,
}

impl PermissionDialog {
    /// The rows the dialog wants at `width` columns: its whole body, the footer and the frame.
    pub fn desired_height(&self, width: u16, theme: &Theme) -> u16 {
        let inner = usize::from(width.saturating_sub(2));
        if inner == 0 {
            return 2;
        }
        let needed = self.body_lines(inner, theme).len() + self.footer_lines(inner, theme, usize::MAX).len() + 1 + 2;
        needed.min(usize::from(u16::MAX)) as u16
    }

    /// Draws the dialog in `area` (clearing it), at the bottom of it when it needs fewer rows.
    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        let mut dialog = area.intersection(buf.area);
        if dialog.is_empty() {
            return;
        }
        let block = Block::bordered().border_style(theme.border).title(self.title(theme));
        let inner_width = usize::from(block.inner(dialog).width);
        if inner_width == 0 {
            Clear.render(dialog, buf);
            block.render(dialog, buf);
            return;
        }
        let body = self.body_lines(inner_width, theme);
        let footer_room = usize::from(dialog.height).saturating_sub(body.len() + 1 + 2);
        let footer = self.footer_lines(inner_width, theme, footer_room);
        // Only as tall as its content, at the bottom of the screen: the conversation stays visible above.
        let needed = body.len() + footer.len() + 1 + 2;
        if needed < usize::from(dialog.height) {
            let height = needed as u16;
            dialog.y += dialog.height - height;
            dialog.height = height;
        }
        Clear.render(dialog, buf);
        let inner = block.inner(dialog);
        if inner.is_empty() {
            block.render(dialog, buf);
            return;
        }
        let width = usize::from(inner.width);
        let height = usize::from(inner.height);
        let footer_height = footer.len().min(height.saturating_sub(1));
        let rule = height >= footer_height + 2 && height > body.len().min(4) + footer_height;
        let body_height = height - footer_height - usize::from(rule);
        self.body_width.store(width, Ordering::Relaxed);
        self.body_height.store(body_height.max(1), Ordering::Relaxed);

        let scroll = self.scroll.min(body.len().saturating_sub(body_height));
        let block = if body.len() > body_height {
            let last = (scroll + body_height).min(body.len());
            let position = format!(" ↑↓ {}-{}/{} ", scroll + 1, last, body.len());
            block.title_bottom(Line::from(Span::styled(position, theme.dim)).right_aligned())
        } else {
            block
        };
        block.render(dialog, buf);

        let mut y = inner.y;
        for line in body.iter().skip(scroll).take(body_height) {
            buf.set_line(inner.x, y, line, inner.width);
            y += 1;
        }
        y = inner.y + (body_height as u16);
        if rule {
            buf.set_string(inner.x, y, "─".repeat(width), theme.border);
            y += 1;
        }
        for line in footer.iter().take(footer_height) {
            buf.set_line(inner.x, y, line, inner.width);
            y += 1;
        }
    }

    /// ` Allow Edit? medium risk `, the risk in its colour.
    fn title(&self, theme: &Theme) -> Line<'static> {
        match &self.body {
            Body::Plan(_) => return Line::from(Span::styled(" Approve the plan? ", theme.dialog_title)),
            Body::Questions(questions) => {
                let of = if questions.questions.len() > 1 {
                    format!(" {}/{}", questions.current + 1, questions.questions.len())
                } else {
                    String::new()
                };
                return Line::from(Span::styled(format!(" The model asks{of} "), theme.dialog_title));
            }
            _ => {}
        }
        let (risk, style) = match self.risk {
            Risk::Low => ("low risk", theme.risk_low),
            Risk::Medium => ("medium risk", theme.risk_medium),
            Risk::High => ("high risk", theme.risk_high),
        };
        let mut title = vec![
            Span::styled(format!(" Allow {}? ", self.tool), theme.dialog_title),
            Span::styled(risk, style),
            Span::raw(" "),
        ];
        if let Some(agent) = &self.agent {
            title.push(Span::styled(format!("· asked by the {agent} subagent "), theme.accent));
        }
        Line::from(title)
    }

    /// The body's lines at `width`, from the cache when nothing changed since the last render.
    fn body_lines(&self, width: usize, theme: &Theme) -> Arc<Vec<Line<'static>>> {
        // A question changes with every key (and is short): never cached.
        if matches!(self.body, Body::Questions(_)) {
            return Arc::new(build_body(self, width, theme));
        }
        let Ok(mut cache) = self.cache.lock() else { return Arc::new(build_body(self, width, theme)) };
        if let Some(hit) = cache.as_ref()
            && hit.width == width
            && hit.depth == theme.depth
            && hit.review == self.review
        {
            return Arc::clone(&hit.lines);
        }
        let lines = Arc::new(build_body(self, width, theme));
        *cache = Some(BodyCache { width, depth: theme.depth, review: self.review.clone(), lines: Arc::clone(&lines) });
        lines
    }

    /// The reason it asks and the key help. Every key is listed where `room` rows hold them with the body; where
    /// they don't, one line of the commonest and `?` for the rest, so that the diff keeps the rows.
    fn footer_lines(&self, width: usize, theme: &Theme, room: usize) -> Vec<Line<'static>> {
        if self.typing_feedback {
            return self.feedback_lines(width, theme);
        }
        let hints = self.hints(theme);
        let long = pack(&hints, width, theme, false);
        // The plan and the questions are the user's to answer: no reason to give.
        let reason = self.reason.as_ref().filter(|_| !matches!(self.body, Body::Plan(_) | Body::Questions(_)));
        let mut lines = match reason {
            Some(reason) => {
                prefixed(&format!("Asks because {reason}."), "! ", "  ", theme.warning, theme.warning, width)
            }
            None => Vec::new(),
        };
        let all = if long.len() <= 3 { long } else { pack(&hints, width, theme, true) };
        if all.len() <= 1 || lines.len() + all.len() <= room {
            lines.extend(all);
        } else if self.all_keys {
            let fewer = question_hint("fewer keys", theme);
            let mut all = all;
            match all.last_mut() {
                Some(last) if last.width() + HINT_GAP.len() + fewer.width() <= width => {
                    last.spans.push(Span::raw(HINT_GAP));
                    last.spans.extend(fewer.spans);
                }
                _ => all.push(fewer),
            }
            lines.extend(all);
        } else {
            lines.push(one_line(&hints, width, theme));
        }
        lines
    }

    fn hints(&self, theme: &Theme) -> Vec<Hint> {
        let text = |label: &str| vec![Span::styled(label.to_owned(), theme.text)];
        let hint =
            |key, short_key, long: &str, short: &str| Hint { key, short_key, long: text(long), short: text(short) };
        match &self.body {
            Body::Plan(_) => {
                return vec![
                    hint("y", "y", "approve", "approve"),
                    hint("a", "a", "approve and accept edits", "+ edits"),
                    hint("n/Esc", "n", "keep planning and stop the turn", "no"),
                    hint("f", "f", "keep planning, with feedback", "feedback"),
                    hint("⇧PgUp/PgDn", "⇧PgUp", "scroll the conversation", "scroll"),
                ];
            }
            Body::Questions(questions) => {
                let multi = questions.question().is_some_and(|question| question.multi_select);
                let mut hints = vec![hint("↑↓", "↑↓", "choose", "choose")];
                if multi {
                    hints.push(hint("Space", "Space", "tick", "tick"));
                }
                hints.push(hint("Enter", "Enter", "answer", "answer"));
                hints.push(hint("Esc", "Esc", "don't answer, stop the turn", "stop"));
                return hints;
            }
            _ => {}
        }
        // Says what will be written before it is: only the accepted hunks once one is rejected.
        if self.review_is_partial() {
            let mut hints = vec![hint("y/Enter", "y", "write only the accepted hunks", "write accepted")];
            hints.push(hint("n/Esc", "n", "deny and stop the turn", "no, stop"));
            hints.push(hint("Tab/⇧Tab", "Tab", "select hunk", "hunk"));
            hints.push(hint("Space", "Space", "accept/reject hunk", "toggle"));
            return hints;
        }
        let mut hints = vec![hint("y", "y", "allow once", "yes")];
        if !self.suggested_rule.is_empty() {
            let rule = Span::styled(self.suggested_rule.clone(), theme.bold);
            hints.push(Hint {
                key: "a",
                short_key: "a",
                long: vec![Span::raw("always allow "), rule.clone(), Span::raw(" this session")],
                short: vec![Span::raw("always allow "), rule],
            });
            hints.push(hint("p", "p", "… for this project", "… project"));
            hints.push(hint("u", "u", "… everywhere", "… everywhere"));
        }
        hints.push(hint("n/Esc", "n", "deny and stop the turn", "no, stop"));
        hints.push(hint("f", "f", "deny and tell the model why", "no, say why"));
        if self.editor_start().is_some() {
            hints.push(hint("e", "e", "edit first", "edit"));
        }
        if self.review.is_some() {
            hints.push(hint("Tab/⇧Tab", "Tab", "select hunk", "hunk"));
            hints.push(hint("Space", "Space", "accept/reject hunk", "toggle"));
            hints.push(hint("Enter", "Enter", "apply review", "apply"));
        }
        hints.push(hint("⇧PgUp/PgDn", "⇧PgUp", "scroll the conversation", "scroll"));
        hints
    }

    /// The feedback prompt and the one-line field, showing the end of the text and a cursor.
    fn feedback_lines(&self, width: usize, theme: &Theme) -> Vec<Line<'static>> {
        let (ask, send) = if matches!(self.body, Body::Questions(_)) {
            ("Your answer", " answer  ")
        } else {
            ("Tell the model what to do instead", " deny and send  ")
        };
        let prompt = Line::from(vec![
            Span::styled(ask, theme.bold),
            Span::raw(HINT_GAP),
            Span::styled("Enter", theme.key_hint),
            Span::styled(send, theme.dim),
            Span::styled("Esc", theme.key_hint),
            Span::styled(" back", theme.dim),
        ]);
        let mut lines = wrap::wrap_line(&prompt, width, &[]);
        let room = width.saturating_sub(3);
        let text = display_text(&self.feedback);
        let mut start = text.len();
        let mut used = 0;
        for (at, grapheme) in text.grapheme_indices(true).rev() {
            used += wrap::width(grapheme);
            if used > room {
                break;
            }
            start = at;
        }
        lines.push(Line::from(vec![
            Span::styled("> ", theme.accent),
            Span::styled(text[start..].to_owned(), theme.text),
            Span::styled(" ", Style::new().add_modifier(Modifier::REVERSED)),
        ]));
        lines
    }
}

impl PermissionDialog {
    /// Scrolls a question so its highlighted row is in view (from the top when it fits).
    pub(super) fn follow_question_cursor(&mut self) {
        let (width, height) = self.body_size();
        let lines = build_body(self, width, &Theme::new(ColorDepth::None));
        let pointer = lines.iter().position(|line| line.spans.first().is_some_and(|span| span.content == "❯ "));
        let Some(row) = pointer else { return };
        if row < height {
            self.scroll = 0;
        } else if row < self.scroll {
            self.scroll = row;
        } else if row >= self.scroll + height {
            self.scroll = row + 1 - height;
        }
    }
}

/// Number of body lines at `width` (what the render scrolls over).
pub(super) fn body_len(dialog: &PermissionDialog, width: usize) -> usize {
    match &dialog.body {
        Body::Diff(diff) => diff.view.line_count(width),
        Body::Command { .. } | Body::Input(_) | Body::Plan(_) | Body::Questions(_) => {
            build_body(dialog, width, &Theme::new(ColorDepth::None)).len()
        }
    }
}

fn build_body(dialog: &PermissionDialog, width: usize, theme: &Theme) -> Vec<Line<'static>> {
    match &dialog.body {
        Body::Diff(diff) => diff.view.render(width, theme, dialog.review.as_ref()),
        Body::Command { command, cwd, description } => {
            let mut lines = Vec::new();
            for (index, line) in command.split('\n').enumerate() {
                let first = if index == 0 { "$ " } else { "  " };
                lines.extend(prefixed(line, first, "  ", theme.accent, theme.bold, width));
            }
            if let Some(description) = description {
                lines.extend(prefixed(description, "  ", "  ", theme.dim, theme.dim, width));
            }
            lines.extend(prefixed(&cwd.display().to_string(), "  in ", "     ", theme.dim, theme.dim, width));
            lines
        }
        Body::Input(json) => {
            json.lines().flat_map(|line| prefixed(line, "", "", theme.dim, theme.text, width)).collect()
        }
        Body::Plan(plan) => crate::ui::markdown::render_markdown(plan, width, theme),
        Body::Questions(questions) => question_lines(questions, width, theme),
    }
}

/// The question on screen: its header and text, then its options (ticked ones marked for a multi-select), then
/// the row for an answer of the user's own; the highlighted row has a pointer.
fn question_lines(questions: &super::Questions, width: usize, theme: &Theme) -> Vec<Line<'static>> {
    let Some(question) = questions.question() else { return Vec::new() };
    let header: String = question.header.chars().take(12).collect();
    let header = if header.len() < question.header.len() { format!("{header}…") } else { header };
    let mut lines = prefixed(&question.question, &format!("[{header}] "), "  ", theme.accent, theme.bold, width);
    lines.push(Line::default());
    for (index, option) in question.options.iter().enumerate() {
        let pointer = if questions.cursor == index { "❯ " } else { "  " };
        let tick = match (question.multi_select, questions.ticked.get(index)) {
            (true, Some(true)) => "[x] ",
            (true, _) => "[ ] ",
            (false, _) => "",
        };
        let style = if questions.cursor == index { theme.bold } else { theme.text };
        lines.extend(prefixed(
            &format!("{tick}{}. {}", index + 1, option.label),
            pointer,
            "    ",
            theme.accent,
            style,
            width,
        ));
        if !option.description.is_empty() {
            lines.extend(prefixed(&option.description, "     ", "     ", theme.dim, theme.dim, width));
        }
    }
    let other = questions.other_row();
    let pointer = if questions.cursor == other { "❯ " } else { "  " };
    let style = if questions.cursor == other { theme.bold } else { theme.dim };
    lines.extend(prefixed(
        &format!("{}. Something else (type your answer)", other + 1),
        pointer,
        "    ",
        theme.accent,
        style,
        width,
    ));
    lines
}

/// `text` broken into rows under a prefix (`first` on the first row, `rest` after), keeping every character.
fn prefixed(
    text: &str,
    first: &str,
    rest: &str,
    prefix_style: Style,
    style: Style,
    width: usize,
) -> Vec<Line<'static>> {
    let text = display_text(text);
    let room = width.saturating_sub(wrap::width(first)).max(1);
    rows(&text, room)
        .into_iter()
        .enumerate()
        .map(|(index, range)| {
            let prefix = if index == 0 { first } else { rest };
            Line::from(vec![Span::styled(prefix.to_owned(), prefix_style), Span::styled(text[range].to_owned(), style)])
        })
        .collect()
}

/// The hints that fit one line, short, and `? more keys` for the rest: the diff keeps the rows.
fn one_line(hints: &[Hint], width: usize, theme: &Theme) -> Line<'static> {
    let more = question_hint("more keys", theme);
    let more_width = more.width() + HINT_GAP.len();
    let mut spans: Vec<Span<'static>> = Vec::new();
    let mut used = 0;
    let mut left_out = false;
    for hint in hints {
        let mut hint_spans = vec![Span::styled(hint.short_key, theme.key_hint), Span::raw(" ")];
        hint_spans.extend(hint.short.iter().cloned());
        let gap = if spans.is_empty() { 0 } else { HINT_GAP.len() };
        let hint_width: usize = hint_spans.iter().map(Span::width).sum();
        // One that does not fit is left to `?` with its `… project` variants; a shorter one after them may still
        // fit (`n no`).
        let variant = hint.short.first().is_some_and(|span| span.content.starts_with('…'));
        left_out = (left_out && variant) || used + gap + hint_width + more_width > width;
        if left_out {
            continue;
        }
        if gap > 0 {
            spans.push(Span::raw(HINT_GAP));
        }
        spans.extend(hint_spans);
        used += gap + hint_width;
    }
    if !spans.is_empty() {
        spans.push(Span::raw(HINT_GAP));
    }
    spans.extend(more.spans);
    Line::from(spans)
}

/// `? more keys` / `? fewer keys`: what `?` does now.
fn question_hint(what: &'static str, theme: &Theme) -> Line<'static> {
    Line::from(vec![Span::styled("?", theme.key_hint), Span::raw(" "), Span::styled(what, theme.dim)])
}

/// Packs hints into lines of `width` columns, in order; one too long for a line wraps onto its own lines.
fn pack(hints: &[Hint], width: usize, theme: &Theme, short: bool) -> Vec<Line<'static>> {
    let mut lines: Vec<Line<'static>> = Vec::new();
    let mut current: Vec<Span<'static>> = Vec::new();
    let mut used = 0;
    for hint in hints {
        let key = if short { hint.short_key } else { hint.key };
        let mut spans = vec![Span::styled(key, theme.key_hint), Span::raw(" ")];
        spans.extend((if short { &hint.short } else { &hint.long }).iter().cloned());
        let hint_width: usize = spans.iter().map(|span| wrap::width(&span.content)).sum();
        let gap = if current.is_empty() { 0 } else { HINT_GAP.len() };
        if used + gap + hint_width <= width {
            if gap > 0 {
                current.push(Span::raw(HINT_GAP));
            }
            current.extend(spans);
            used += gap + hint_width;
            continue;
        }
        if !current.is_empty() {
            lines.push(Line::from(std::mem::take(&mut current)));
        }
        if hint_width <= width {
            current = spans;
            used = hint_width;
        } else {
            lines.extend(wrap::wrap_line(&Line::from(spans), width, &[Span::raw("  ")]));
            used = 0;
        }
    }
    if !current.is_empty() {
        lines.push(Line::from(current));
    }
    lines
}
