//! The API inspector over the whole screen: the list of requests, or one request's detail in tabs.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Widget};

use super::theme::Theme;
use crate::app::inspector::{Inspector, LineKind, Tab};

#[expect(
    clippy::too_many_lines,
    reason = "draws the inspector's list, headers and body in one pass; the three panes are where to cut it"
)]
pub fn render_inspector(inspector: &Inspector, area: Rect, buf: &mut Buffer, theme: &Theme) {
    Clear.render(area, buf);
    let title = match inspector.detail {
        None => format!(" API inspector · {} requests ", inspector.requests.len()),
        Some(_) => {
            let exchange = &inspector.requests[inspector.selected].1;
            let replay = match (exchange.replay_of, exchange.edited) {
                (Some(source), true) => format!(" · replay of {source}, edited"),
                (Some(source), false) => format!(" · replay of {source}"),
                (None, _) => String::new(),
            };
            format!(" API inspector · request {}{replay} ", exchange.id)
        }
    };
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.border)
        .title(Span::styled(title, theme.dialog_title));
    let inner = block.inner(area);
    block.render(area, buf);
    if inner.height < 3 || inner.width < 10 {
        return;
    }
    let body = Rect { height: inner.height - 1, ..inner };
    let hints_row = Rect { y: inner.y + inner.height - 1, height: 1, ..inner };
    let hints: &[(&str, &str)] = match inspector.detail {
        None => &[("↑↓", "select"), ("enter", "open"), ("r e", "replay"), ("c y", "copy curl/json"), ("esc", "close")],
        Some(_) => &[
            ("tab", "tabs"),
            ("[ ]", "prev/next"),
            ("f", "fold"),
            ("/", "search"),
            ("r e", "replay"),
            ("c y", "curl json"),
            ("esc", "back"),
        ],
    };
    let mut spans = Vec::new();
    for (index, (key, what)) in hints.iter().enumerate() {
        if index > 0 {
            spans.push(Span::raw("  "));
        }
        spans.push(Span::styled((*key).to_owned(), theme.key_hint));
        spans.push(Span::raw(format!(" {what}")));
    }
    Paragraph::new(Line::from(spans)).render(hints_row, buf);
    match &inspector.detail {
        None => render_list(inspector, body, buf, theme),
        Some(detail) => {
            let mut tabs = Vec::new();
            for tab in Tab::ALL {
                let style = if tab == detail.tab { theme.selection } else { theme.dim };
                tabs.push(Span::styled(format!(" {} ", tab.label()), style));
                tabs.push(Span::raw(" "));
            }
            let fold = match detail.tab {
                Tab::Request => {
                    Some(detail.fold.map_or("f fold".to_owned(), |depth| format!("f folded below {depth}")))
                }
                Tab::Response if detail.events_laid_out => Some("f one line an event".to_owned()),
                Tab::Response => Some("f lay events out".to_owned()),
                Tab::Changes => None,
            };
            if let Some(fold) = fold {
                tabs.push(Span::styled(fold, theme.dim));
            }
            Paragraph::new(Line::from(tabs)).render(Rect { height: 1, ..body }, buf);
            // The search line takes the last row while there is a query.
            let searching = detail.typing || !detail.query.is_empty();
            let text_height = body.height.saturating_sub(1 + u16::from(searching));
            let text_area = Rect { y: body.y + 1, height: text_height, ..body };
            let width = text_area.width as usize;
            let lines = inspector.detail_rows(detail.tab, width);
            let query = detail.query.to_lowercase();
            let visible = text_area.height as usize;
            let start = detail.scroll.min(lines.len().saturating_sub(visible));
            let shown: Vec<Line> = lines
                .iter()
                .skip(start)
                .take(visible)
                .map(|(kind, line)| {
                    let line = line.clone();
                    if !query.is_empty() && line.to_lowercase().contains(&query) {
                        return Line::from(Span::styled(line, theme.search_match));
                    }
                    match kind {
                        LineKind::Json => json_line(&line, theme),
                        _ => Line::from(Span::styled(line, style_of(*kind, theme))),
                    }
                })
                .collect();
            Paragraph::new(shown).render(text_area, buf);
            if searching {
                let count = inspector.matches(width).len();
                let text = if detail.typing {
                    format!("/{}▏", detail.query)
                } else {
                    let lines = if count == 1 { "1 line matches".to_owned() } else { format!("{count} lines match") };
                    format!("/{} · {lines} · n next · N previous · esc clears", detail.query)
                };
                let row = Rect { y: text_area.y + text_area.height, height: 1, ..body };
                Paragraph::new(Line::from(Span::styled(cut(&text, width), theme.key_hint))).render(row, buf);
            }
        }
    }
}

/// A line of JSON in colours — keys, strings, other values, punctuation — whether pretty (a key a line) or
/// compact (a whole streamed event on one line). A string cut by wrapping is coloured as a string to the end.
fn json_line(line: &str, theme: &Theme) -> Line<'static> {
    let mut spans = Vec::new();
    let mut rest = line;
    while let Some(first) = rest.chars().next() {
        let (token, style) = match first {
            '"' => {
                let end = key_end(&rest[1..]).map_or(rest.len(), |end| end + 1);
                let is_key = rest[end..].trim_start().starts_with(':');
                (&rest[..end], if is_key { theme.accent } else { theme.success })
            }
            '{' | '}' | '[' | ']' | ',' | ':' => (&rest[..1], theme.dim),
            ch if ch.is_whitespace() => {
                let end = rest.find(|ch: char| !ch.is_whitespace()).unwrap_or(rest.len());
                (&rest[..end], Style::default())
            }
            _ => {
                let end = rest.find(['{', '}', '[', ']', ',', ':', '"']).unwrap_or(rest.len());
                // A folded object or array (`{… 3 keys}`) is punctuation, not a value.
                (&rest[..end], if first == '…' { theme.dim } else { theme.warning })
            }
        };
        spans.push(Span::styled(token.to_owned(), style));
        rest = &rest[token.len()..];
    }
    Line::from(spans)
}

/// Where a JSON string that starts right after its opening quote ends (the index of its closing quote).
fn key_end(text: &str) -> Option<usize> {
    let mut escaped = false;
    for (at, ch) in text.char_indices() {
        match ch {
            '\\' if !escaped => escaped = true,
            '"' if !escaped => return Some(at + 1),
            _ => escaped = false,
        }
    }
    None
}

fn style_of(kind: LineKind, theme: &Theme) -> Style {
    match kind {
        LineKind::Heading => theme.bold,
        LineKind::Plain | LineKind::Json => theme.text,
        LineKind::Added => theme.diff_add,
        LineKind::Removed => theme.diff_del,
        LineKind::Dim => theme.dim,
    }
}

/// The "for" column at 80 columns: `replay 12*` does not fit, `↻ 12*` does.
fn narrow_purpose(purpose: &str, exchange: &tandem_core::inspect::Exchange) -> String {
    match exchange.replay_of {
        Some(source) if purpose.chars().count() > 8 => {
            format!("↻ {source}{}", if exchange.edited { "*" } else { "" })
        }
        _ => purpose.to_owned(),
    }
}

fn render_list(inspector: &Inspector, area: Rect, buf: &mut Buffer, theme: &Theme) {
    let wide = area.width >= 100;
    let header = if wide {
        format!(
            "{:>4} {:>4} {:<14} {:<24} {:>3} {:>6} {:>8} {:>8} {:>8} {:>7} {:>8}",
            "#", "turn", "for", "model", "try", "status", "latency", "input", "cached", "output", "cost"
        )
    } else {
        format!(
            "{:>3} {:>4} {:<8} {:<12} {:>3} {:>5} {:>7} {:>6} {:>6} {:>5} {:>7}",
            "#", "turn", "for", "model", "try", "stat", "latency", "in", "cached", "out", "cost"
        )
    };
    let mut lines = vec![Line::from(Span::styled(cut(&header, area.width as usize), theme.bold))];
    let visible = (area.height as usize).saturating_sub(1);
    let start = inspector.selected.saturating_sub(visible.saturating_sub(1));
    for (index, (agent, exchange)) in inspector.requests.iter().enumerate().skip(start).take(visible) {
        let purpose = if agent.is_empty() { exchange.purpose_label() } else { agent.clone() };
        let usage = exchange.usage.unwrap_or_default();
        let status = exchange.status_label();
        let latency = format!("{}ms", exchange.first_token_ms.or(exchange.first_event_ms).unwrap_or(exchange.total_ms));
        let turn = if exchange.turn == 0 { "-".to_owned() } else { exchange.turn.to_string() };
        let cost = exchange.cost_label();
        let text = if wide {
            format!(
                "{:>4} {:>4} {:<14} {:<24} {:>3} {:>6} {:>8} {:>8} {:>8} {:>7} {:>8}",
                exchange.id,
                turn,
                cut(&purpose, 14),
                cut(&exchange.model, 24),
                exchange.attempt,
                status,
                latency,
                usage.input_tokens,
                usage.cache_read_input_tokens,
                usage.output_tokens,
                cost
            )
        } else {
            format!(
                "{:>3} {:>4} {:<8} {:<12} {:>3} {:>5} {:>7} {:>6} {:>6} {:>5} {:>7}",
                exchange.id,
                turn,
                // A replay of a request numbered past 9 is `↻ 12` here.
                cut(&narrow_purpose(&purpose, exchange), 8),
                // Narrow, the family prefix every model of the provider shares is left out.
                cut(exchange.model.strip_prefix("claude-").unwrap_or(&exchange.model), 12),
                exchange.attempt,
                status,
                latency,
                usage.input_tokens,
                usage.cache_read_input_tokens,
                usage.output_tokens,
                cost
            )
        };
        let style = if index == inspector.selected {
            theme.selection
        } else if exchange.error.is_some() {
            theme.error
        } else {
            theme.text
        };
        lines.push(Line::from(Span::styled(cut(&text, area.width as usize), style)));
    }
    Paragraph::new(lines).render(area, buf);
}

/// `text` in at most `width` characters (a `…` marks a cut).
pub(crate) fn cut(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(width.saturating_sub(1)).collect();
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ui::theme::ColorDepth;

    fn styled(line: &Line<'_>, theme: &Theme) -> Vec<(String, &'static str)> {
        let name = |style: Style| match style {
            style if style == theme.accent => "key",
            style if style == theme.success => "string",
            style if style == theme.warning => "value",
            style if style == theme.dim => "punctuation",
            _ => "space",
        };
        line.spans.iter().map(|span| (span.content.to_string(), name(span.style))).collect()
    }

    #[test]
    fn a_streamed_event_on_one_line_is_coloured_token_by_token() {
        let theme = Theme::new(ColorDepth::TrueColor);
        let line = json_line(r#"{"index":0,"delta":{"text":"a \"b\": c"}}"#, &theme);
        let spans = styled(&line, &theme);
        assert_eq!(
            spans,
            [
                ("{", "punctuation"),
                ("\"index\"", "key"),
                (":", "punctuation"),
                ("0", "value"),
                (",", "punctuation"),
                ("\"delta\"", "key"),
                (":", "punctuation"),
                ("{", "punctuation"),
                ("\"text\"", "key"),
                (":", "punctuation"),
                ("\"a \\\"b\\\": c\"", "string"),
                ("}", "punctuation"),
                ("}", "punctuation"),
            ]
            .map(|(text, kind)| (text.to_owned(), kind))
        );
    }

    #[test]
    fn a_pretty_line_keeps_its_indent_and_a_folded_value_reads_as_punctuation() {
        let theme = Theme::new(ColorDepth::TrueColor);
        let spans = styled(&json_line("    \"content\": {… 2 keys},", &theme), &theme);
        assert_eq!(spans[0], ("    ".to_owned(), "space"));
        assert_eq!(spans[1], ("\"content\"".to_owned(), "key"));
        assert!(spans.contains(&("… 2 keys".to_owned(), "punctuation")), "{spans:?}");
        let cut = styled(&json_line("\"text\": \"a string cut by wrapp", &theme), &theme);
        assert_eq!(cut.last().unwrap(), &("\"a string cut by wrapp".to_owned(), "string"));
    }
}
