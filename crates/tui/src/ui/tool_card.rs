//! A tool call in the transcript: a header line (state glyph, tool name, key argument, time or state words)
//! and the output under a `⎿` gutter.
//!
//! Collapsed, a card shows only what a reader needs at a glance (a summary for reads and searches, a few lines
//! of command output, a `+N −M` count for edits) so the transcript stays about the conversation; `expanded`
//! shows everything. Lines come back already wrapped to the width, so a card's height is its line count.

use std::time::Instant;

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use tandem_core::tools::Preview;
use tandem_protocol::ToolCallStatus;
use tandem_protocol::tools::{FoundUnit, ResultView, ToolKind};
use unicode_width::UnicodeWidthChar;

use super::status::{format_duration_ms, format_elapsed, spinner_frame};
use super::theme::Theme;
use super::wrap::{truncate, width, wrap_line};
use crate::app::cells::{ToolCard, ToolState};

/// Output lines shown under a collapsed card.
pub const COLLAPSED_LINES: usize = 4;
/// Key arguments listed under a grouped card.
pub const GROUP_LINES: usize = 5;
/// The gutter before the first output line, and the indent of the others.
const GUTTER: &str = "  ⎿ ";
const INDENT: &str = "    ";
/// Tab stops in tool output (the Read tool separates line numbers with a tab).
const TAB_WIDTH: usize = 4;

/// Lays out one tool call for `width` columns. `now` animates the spinner and the elapsed time of a
/// running call; nothing else depends on it, so finished cards can be cached.
pub fn render_tool_card(
    card: &ToolCard,
    expanded: bool,
    width: usize,
    theme: &Theme,
    now: Instant,
) -> Vec<Line<'static>> {
    let width = width.max(1);
    let mut lines = header(card, width, theme, now);
    let room = width.saturating_sub(self::width(INDENT)).max(1);
    let body = match applied_diff(card, expanded, room, theme) {
        Some(diff) => diff_body(diff, expanded, theme),
        None if expanded => expanded_body(card, theme),
        None => collapsed_body(card, theme),
    };
    lines.extend(layout_body(body, expanded, width, theme));
    lines
}

/// Diff lines shown under a collapsed Edit or Write card: an edit of a few lines shows all it wrote.
pub const COLLAPSED_DIFF_LINES: usize = 10;

/// The diff an approved Edit or Write applied, laid out for `room` columns: the view the dialog showed, with one
/// line of context around the changes while collapsed, so that the rows go to what was written.
fn applied_diff(card: &ToolCard, expanded: bool, room: usize, theme: &Theme) -> Option<Vec<Line<'static>>> {
    if card.kind != ToolKind::Edit || failed(card) {
        return None;
    }
    if card.state != ToolState::Finished(ToolCallStatus::Completed) {
        return None;
    }
    let Some(Preview::Diff { path, diff, new_file, texts }) = &card.preview else { return None };
    let label = card.display_path(path);
    let view = match texts {
        Some(texts) => crate::ui::diff::DiffView::new(&label, texts.old.as_deref(), &texts.new),
        None => crate::ui::diff::DiffView::from_unified(&label, diff, *new_file),
    };
    let view = if expanded { view } else { view.with_context(1) };
    Some(view.render(room, theme, None))
}

/// The applied diff under the card: all of it when expanded, else its first lines and how many are hidden.
fn diff_body(diff: Vec<Line<'static>>, expanded: bool, theme: &Theme) -> Body {
    if expanded || diff.len() <= COLLAPSED_DIFF_LINES + 1 {
        return diff;
    }
    let hidden = diff.len() - COLLAPSED_DIFF_LINES;
    let mut body: Body = diff.into_iter().take(COLLAPSED_DIFF_LINES).collect();
    body.push(Line::from(Span::styled(format!("… +{hidden} line{} (ctrl+o to expand)", plural(hidden)), theme.dim)));
    body
}

/// Lays out consecutive finished read-only calls (Read, Grep, Glob) as one compact card:
/// "Read 3 files, searched 2 patterns" and the key arguments, dimmed, one per line.
pub fn render_tool_group(cards: &[&ToolCard], width: usize, theme: &Theme, _now: Instant) -> Vec<Line<'static>> {
    let width = width.max(1);
    let count = |kind: ToolKind| cards.iter().filter(|card| card.kind == kind).count();
    let (reads, searches) = (count(ToolKind::Read), count(ToolKind::Search));
    let others = cards.len() - reads - searches;
    let mut summary = Vec::new();
    if reads > 0 {
        summary.push(format!("read {reads} file{}", plural(reads)));
    }
    if searches > 0 {
        summary.push(format!("searched {searches} pattern{}", plural(searches)));
    }
    if others > 0 {
        summary.push(format!("made {others} other lookup{}", plural(others)));
    }
    let summary = capitalize(&summary.join(", "));
    let failures = cards.iter().filter(|card| failed(card)).count();
    let glyph = if failures == cards.len() && failures > 0 {
        Span::styled("✗", theme.error)
    } else {
        Span::styled("●", theme.success)
    };
    let mut header = vec![glyph, Span::raw(" "), Span::styled(summary, theme.tool_name)];
    if failures > 0 && failures < cards.len() {
        header.push(Span::styled(format!(" · {failures} failed"), theme.error));
    }
    let mut lines = wrap(Line::from(header), width, "  ");

    let mut body = Vec::new();
    for card in cards.iter().take(GROUP_LINES) {
        let style = if failed(card) { theme.error } else { theme.dim };
        body.push(Line::from(Span::styled(clean(&card.key_argument()), style)));
    }
    if cards.len() > GROUP_LINES {
        body.push(Line::from(Span::styled(format!("… +{} more", cards.len() - GROUP_LINES), theme.dim)));
    }
    lines.extend(layout_body(body, false, width, theme));
    lines
}

/// Whether a finished call went wrong.
fn failed(card: &ToolCard) -> bool {
    card.is_error || card.state == ToolState::Finished(ToolCallStatus::Failed)
}

/// The header: glyph, name, key argument and what the call is doing or how long it took.
fn header(card: &ToolCard, width: usize, theme: &Theme, now: Instant) -> Vec<Line<'static>> {
    let (glyph, suffix) = match &card.state {
        ToolState::Streaming => (Span::styled("…", theme.dim), None),
        ToolState::AwaitingApproval => {
            let waiting =
                if card.kind == ToolKind::Question { "waiting for your answer" } else { "waiting for approval" };
            (Span::styled("?", theme.warning), Some(Span::styled(waiting, theme.warning)))
        }
        ToolState::Running { since } => {
            let elapsed = now.saturating_duration_since(*since);
            (Span::styled(spinner_frame(elapsed), theme.accent), Some(Span::styled(format_elapsed(elapsed), theme.dim)))
        }
        ToolState::Finished(status) => {
            let took = card.duration_ms.map(|ms| Span::styled(format_duration_ms(ms), theme.dim));
            match status {
                ToolCallStatus::Completed if !card.is_error => (Span::styled("●", theme.success), took),
                ToolCallStatus::Completed | ToolCallStatus::Failed => (Span::styled("✗", theme.error), took),
                ToolCallStatus::Denied => {
                    (Span::styled("⊘", theme.warning), Some(Span::styled("denied", theme.warning)))
                }
                ToolCallStatus::Interrupted => {
                    (Span::styled("■", theme.warning), Some(Span::styled("interrupted", theme.warning)))
                }
            }
        }
    };

    let name = clean(&card.name);
    let argument = key_argument(card);
    let suffix_width = suffix.as_ref().map_or(0, |span| 3 + self::width(&span.content));
    // glyph + space + name, then "(argument)" in what is left after the suffix.
    let fixed = 2 + self::width(&name) + suffix_width;
    let mut spans = vec![glyph, Span::raw(" "), Span::styled(name, theme.tool_name)];
    if !argument.is_empty() {
        // On a very narrow card the argument gets a line of its own (wrapped), but never more.
        let room = width.saturating_sub(fixed + 2);
        let room = if room >= 8 { room } else { width.saturating_sub(4).max(4) };
        let argument = truncate(&argument, room);
        spans.push(Span::styled("(", theme.tool_arg));
        spans.push(Span::styled(argument, theme.tool_arg));
        spans.push(Span::styled(")", theme.tool_arg));
    }
    if let Some(suffix) = suffix {
        spans.push(Span::styled(" · ", theme.dim));
        spans.push(suffix);
    }
    wrap(Line::from(spans), width, "  ")
}

/// The key argument for the header, on one line (a Bash script shows its first line).
fn key_argument(card: &ToolCard) -> String {
    let argument = card.key_argument();
    let mut lines = argument.lines().filter(|line| !line.trim().is_empty());
    let first = lines.next().unwrap_or_default();
    let more = if lines.next().is_some() { " …" } else { "" };
    format!("{}{more}", clean(first.trim_end()))
}

/// A card's output lines before the gutter goes on and they are fitted to the width.
type Body = Vec<Line<'static>>;

fn expanded_body(card: &ToolCard, theme: &Theme) -> Body {
    let style = output_style(card, theme);
    let mut body: Body =
        output_lines(&card.output).into_iter().map(|line| Line::from(Span::styled(line, style))).collect();
    if let Some((added, removed)) = diff_counts(card) {
        body.insert(0, diff_count_line(added, removed, theme));
    }
    body
}

fn collapsed_body(card: &ToolCard, theme: &Theme) -> Body {
    let lines = output_lines(&card.output);
    let style = output_style(card, theme);
    let styled = |text: String, style: Style| Line::from(Span::styled(text, style));
    let hint = |hidden: usize| {
        Line::from(Span::styled(format!("… +{hidden} line{} (ctrl+o to expand)", plural(hidden)), theme.dim))
    };
    let first_lines = |lines: Vec<String>, style: Style| {
        let hidden = lines.len().saturating_sub(COLLAPSED_LINES);
        let mut body: Body = lines.into_iter().take(COLLAPSED_LINES).map(|line| styled(line, style)).collect();
        if hidden > 0 {
            body.push(hint(hidden));
        }
        body
    };

    // The newest output is what a reader of a running command wants, and a finished command's verdict (the test
    // summary, the error, its exit code) is at its end.
    let running = matches!(card.state, ToolState::Running { .. });
    let last_lines = |lines: Vec<String>, style: Style| {
        let hidden = lines.len().saturating_sub(COLLAPSED_LINES);
        let mut body = Vec::new();
        if hidden > 0 {
            let expand = if running { "" } else { " (ctrl+o to expand)" };
            let above = format!("… +{hidden} line{} above{expand}", plural(hidden));
            body.push(Line::from(Span::styled(above, theme.dim)));
        }
        body.extend(lines.into_iter().skip(hidden).map(|line| styled(line, style)));
        body
    };

    match &card.state {
        ToolState::Streaming | ToolState::AwaitingApproval => Vec::new(),
        ToolState::Running { .. } => last_lines(lines, style),
        ToolState::Finished(ToolCallStatus::Denied) => {
            let reason = lines.into_iter().next().unwrap_or_else(|| "Denied".to_owned());
            vec![styled(reason, theme.warning)]
        }
        ToolState::Finished(ToolCallStatus::Interrupted) => {
            let mut body = first_lines(lines, theme.dim);
            if body.is_empty() {
                body.push(styled("Interrupted by the user".to_owned(), theme.dim));
            }
            body
        }
        ToolState::Finished(_) if failed(card) && card.kind == ToolKind::Exec => last_lines(lines, theme.error),
        ToolState::Finished(_) if failed(card) => first_lines(lines, theme.error),
        ToolState::Finished(_) => match &card.view {
            Some(ResultView::FileRead { lines: 0, total: None }) => {
                vec![summary_line("Read 0 lines (empty file)".to_owned(), false, theme)]
            }
            Some(ResultView::FileRead { lines: shown, total }) => {
                let of_total = total.map(|total| format!(" of {total}")).unwrap_or_default();
                let summary = format!("Read {shown} line{}{of_total}", plural(*shown));
                vec![summary_line(summary, !lines.is_empty(), theme)]
            }
            Some(ResultView::Found { count, unit, items }) => search_body(*count, *unit, items, theme),
            Some(ResultView::Note { text }) => {
                let mut body = vec![styled(clean(text), theme.text)];
                if let Some((added, removed)) = diff_counts(card) {
                    body.push(diff_count_line(added, removed, theme));
                }
                body
            }
            None if lines.is_empty() => vec![styled("(no output)".to_owned(), theme.dim)],
            None if card.kind == ToolKind::Exec => last_lines(lines, style),
            None => first_lines(lines, style),
        },
    }
}

/// A search's collapsed body: its count, then the first results.
fn search_body(count: usize, unit: FoundUnit, items: &[String], theme: &Theme) -> Body {
    let summary = match count {
        0 if unit == FoundUnit::File => "No files found".to_owned(),
        0 => "No matches found".to_owned(),
        _ => format!("Found {count} {}", unit.word(count)),
    };
    let shown = COLLAPSED_LINES - 1;
    let hidden = items.len().saturating_sub(shown);
    let mut body = vec![Line::from(Span::styled(summary, theme.text))];
    body.extend(items.iter().take(shown).map(|line| Line::from(Span::styled(clean(line), theme.dim))));
    if hidden > 0 {
        body.push(Line::from(Span::styled(
            format!("… +{hidden} line{} (ctrl+o to expand)", plural(hidden)),
            theme.dim,
        )));
    }
    body
}

fn summary_line(summary: String, expandable: bool, theme: &Theme) -> Line<'static> {
    let mut spans = vec![Span::styled(summary, theme.text)];
    if expandable {
        spans.push(Span::styled(" (ctrl+o to expand)", theme.dim));
    }
    Line::from(spans)
}

/// Lines added and removed by the applied diff, when the card kept one.
fn diff_counts(card: &ToolCard) -> Option<(usize, usize)> {
    let Some(Preview::Diff { diff, .. }) = &card.preview else { return None };
    if failed(card) || card.state != ToolState::Finished(ToolCallStatus::Completed) {
        return None;
    }
    let (mut added, mut removed, mut in_hunk) = (0, 0, false);
    for line in diff.lines() {
        if line.starts_with("@@") {
            in_hunk = true;
        } else if in_hunk && line.starts_with('+') {
            added += 1;
        } else if in_hunk && line.starts_with('-') {
            removed += 1;
        }
    }
    Some((added, removed))
}

fn diff_count_line(added: usize, removed: usize, theme: &Theme) -> Line<'static> {
    Line::from(vec![
        Span::styled(format!("+{added}"), theme.success),
        Span::raw(" "),
        Span::styled(format!("−{removed}"), theme.error),
    ])
}

fn output_style(card: &ToolCard, theme: &Theme) -> Style {
    if failed(card) { theme.error } else { theme.dim }
}

/// Puts the gutter on the body and fits it to the width: collapsed lines are cut to one row each so a
/// collapsed card's height stays small; expanded lines wrap.
fn layout_body(body: Body, expanded: bool, width: usize, theme: &Theme) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    let room = width.saturating_sub(self::width(INDENT)).max(1);
    for (index, line) in body.into_iter().enumerate() {
        let gutter = if index == 0 { GUTTER } else { INDENT };
        let mut spans = vec![Span::styled(gutter, theme.dim)];
        spans.extend(if expanded { line.spans } else { truncate_spans(line.spans, room) });
        lines.extend(wrap(Line::from(spans), width, INDENT));
    }
    lines
}

/// Wraps with a hanging indent, dropping the indent when the width is too small to hold it and some text.
fn wrap(line: Line<'static>, width: usize, indent: &'static str) -> Vec<Line<'static>> {
    let indent = if self::width(indent) * 2 < width { vec![Span::raw(indent)] } else { Vec::new() };
    wrap_line(&line, width, &indent)
}

/// Cuts styled spans to `room` columns, ending with `…` when cut.
fn truncate_spans(spans: Vec<Span<'static>>, room: usize) -> Vec<Span<'static>> {
    let mut out = Vec::new();
    let mut used = 0;
    for span in spans {
        let span_width = width(&span.content);
        if used + span_width <= room {
            used += span_width;
            out.push(span);
            continue;
        }
        let cut = truncate(&span.content, room.saturating_sub(used));
        out.push(Span::styled(cut, span.style));
        break;
    }
    out
}

/// The output as display lines: terminal escapes removed, tabs expanded, carriage-return overwrites resolved,
/// trailing blank lines dropped.
fn output_lines(output: &str) -> Vec<String> {
    let mut lines: Vec<String> = output
        .split('\n')
        .map(|line| {
            // A progress bar redraws with `\r`: what shows is the text after the last one.
            let line = line.trim_end_matches('\r');
            clean(line.rsplit('\r').next().unwrap_or(line))
        })
        .collect();
    while lines.last().is_some_and(|line| line.trim().is_empty()) {
        lines.pop();
    }
    lines
}

/// Makes text safe to draw: removes ANSI escape sequences and other control characters (a raw escape in a
/// cell would reach the terminal), and expands tabs.
fn clean(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut column = 0;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\t' => {
                let spaces = TAB_WIDTH - column % TAB_WIDTH;
                out.extend(std::iter::repeat_n(' ', spaces));
                column += spaces;
            }
            '\u{1b}' => match chars.peek() {
                // CSI: parameters and intermediates, then one final byte.
                Some('[') => {
                    chars.next();
                    for c in chars.by_ref() {
                        if ('\u{40}'..='\u{7e}').contains(&c) {
                            break;
                        }
                    }
                }
                // OSC: up to BEL or ST.
                Some(']') => {
                    chars.next();
                    while let Some(c) = chars.next() {
                        if c == '\u{7}' || (c == '\u{1b}' && chars.next_if_eq(&'\\').is_some()) {
                            break;
                        }
                    }
                }
                _ => {
                    chars.next();
                }
            },
            c if c.is_control() => {}
            c => {
                out.push(c);
                column += UnicodeWidthChar::width(c).unwrap_or(0);
            }
        }
    }
    out
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

fn capitalize(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests;
