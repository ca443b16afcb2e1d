//! The first-run panel: how to configure a provider, and the local model servers found on this machine.
//!
//! The panel is built from sections with priorities; when the terminal is too small for everything, the
//! least useful sections (spacing, then the introduction) are dropped first, so the server list and the key
//! hints always show. Every line is clipped to the panel, so no size panics.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Clear, Widget};
use unicode_width::UnicodeWidthChar;

use super::theme::Theme;
use super::wrap::{truncate, width, wrap_line};
use crate::app::onboarding::{LocalServer, Onboarding};
use tandem_core::provider::local::LOCAL_SERVERS;

/// The panel's widest size; wider terminals get margins.
const MAX_WIDTH: u16 = 78;
/// Columns of padding inside the border on each side.
const PADDING: u16 = 1;

/// A block of lines that is shown or dropped as a whole.
struct Section {
    lines: Vec<Line<'static>>,
    /// Higher survives longer on a small terminal.
    keep: u8,
}

/// Draws the onboarding panel centred in `area`.
pub fn render_onboarding(state: &Onboarding, area: Rect, buf: &mut Buffer, theme: &Theme) {
    let area = area.intersection(buf.area);
    if area.width < 8 || area.height < 3 {
        return;
    }
    let panel_width = area.width.min(MAX_WIDTH);
    let inner_width = usize::from(panel_width.saturating_sub(2 + 2 * PADDING)).max(1);
    let max_inner_height = usize::from(area.height - 2);

    let mut sections = sections(state, inner_width, theme);
    while sections.iter().map(|section| section.lines.len()).sum::<usize>() > max_inner_height {
        let lowest = sections.iter().enumerate().min_by_key(|(_, section)| section.keep).map(|(index, _)| index);
        match lowest {
            Some(index) if sections.len() > 1 => {
                sections.remove(index);
            }
            _ => break,
        }
    }
    let lines: Vec<Line<'static>> = sections.into_iter().flat_map(|section| section.lines).collect();

    let height = (lines.len() + 2).min(usize::from(area.height)) as u16;
    let panel = Rect {
        x: area.x + (area.width - panel_width) / 2,
        y: area.y + (area.height - height) / 2,
        width: panel_width,
        height,
    };
    Clear.render(panel, buf);
    let block = Block::bordered()
        .border_type(BorderType::Rounded)
        .border_style(theme.border)
        .title(Span::styled(" Welcome to tandem ", theme.dialog_title));
    let inner = block.inner(panel);
    block.render(panel, buf);
    let x = inner.x + PADDING.min(inner.width / 2);
    let line_width = inner.width.saturating_sub(2 * PADDING);
    for (row, line) in lines.iter().take(usize::from(inner.height)).enumerate() {
        buf.set_line(x, inner.y + row as u16, line, line_width);
    }
}

/// The panel's content, in order.
fn sections(state: &Onboarding, room: usize, theme: &Theme) -> Vec<Section> {
    let text = |text: &str, style: Style| Line::from(Span::styled(text.to_owned(), style));
    let blank = || Section { lines: vec![Line::default()], keep: 0 };
    let command = |command: &str| command_lines(command, room, theme.inline_code);
    let wrapped = |line: Line<'static>| wrap_line(&line, room, &[]);

    let mut sections = Vec::new();
    sections.push(Section { lines: wrapped(text("No model provider is configured yet.", theme.bold)), keep: 3 });
    sections.push(blank());

    let mut hosted = wrapped(text("Set a key, then start tandem again:", theme.text));
    for var in ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY"] {
        hosted.extend(command(&format!("export {var}=…")));
    }
    sections.push(Section { lines: hosted, keep: 8 });

    let heading = "Or a local server (Ollama, llama.cpp, LM Studio):";
    let heading = if width(heading) <= room { heading } else { "Or a local server:" };
    let mut local = wrapped(text(heading, theme.text));
    local.extend(command("tandem --provider ollama --model …"));
    local.extend(command("tandem --provider llamacpp"));
    local.extend(command("tandem --provider openai --base-url http://127.0.0.1:1234/v1 --model …"));
    sections.push(Section { lines: local, keep: 7 });

    let mut config = wrapped(text("Or set `provider` and `model` in", theme.text));
    config.extend(command(&state.config_file.display().to_string()));
    sections.push(Section { lines: config, keep: 6 });
    sections.push(blank());

    sections.push(Section { lines: server_lines(state, room, theme), keep: 10 });
    sections.push(blank());
    if let Some(question) = save_question(state, theme) {
        sections.push(Section { lines: wrapped(question), keep: 11 });
    }
    sections.push(Section { lines: wrapped(key_hints(state, theme)), keep: 9 });
    sections
}

/// A shell command, indented, wrapped between flags (a flag stays with its value) with continuation lines
/// indented under it, so a narrow panel still shows it whole and copyable. A single word wider than the
/// panel (a long path) is broken where it must be.
fn command_lines(command: &str, room: usize, style: Style) -> Vec<Line<'static>> {
    const FIRST: &str = "  ";
    const NEXT: &str = "    ";
    let piece_room = room.saturating_sub(NEXT.len()).max(1);
    // A flag stays with its value: `--base-url http://…` is one unit.
    let mut units: Vec<String> = Vec::new();
    for word in command.split_whitespace() {
        match units.last_mut() {
            Some(flag) if flag.starts_with("--") && !flag.contains(' ') && !word.starts_with('-') => {
                flag.push(' ');
                flag.push_str(word);
            }
            _ => units.push(word.to_owned()),
        }
    }
    // Unless the unit is wider than a line on its own; a word that is (a long path) is broken after a `/`.
    let mut pieces: Vec<String> = Vec::new();
    for unit in units {
        if width(&unit) <= piece_room {
            pieces.push(unit);
        } else {
            pieces.extend(unit.split(' ').flat_map(|word| break_word(word, piece_room)));
        }
    }
    let mut rows: Vec<String> = Vec::new();
    let mut current = String::new();
    for piece in pieces {
        let prefix = if rows.is_empty() { FIRST } else { NEXT };
        if !current.is_empty() && width(prefix) + width(&current) + 1 + width(&piece) > room {
            rows.push(std::mem::take(&mut current));
        }
        if !current.is_empty() {
            current.push(' ');
        }
        current.push_str(&piece);
    }
    rows.push(current);
    rows.into_iter()
        .enumerate()
        .map(|(index, row)| {
            Line::from(vec![Span::raw(if index == 0 { FIRST } else { NEXT }), Span::styled(row, style)])
        })
        .collect()
}

/// Splits a word into pieces of at most `room` columns, preferring to end each piece after a `/`.
fn break_word(word: &str, room: usize) -> Vec<String> {
    let mut pieces = Vec::new();
    let mut rest = word;
    while width(rest) > room {
        // The longest prefix that fits, then back to its last `/` if it has one.
        let mut end = 0;
        let mut used = 0;
        for (index, c) in rest.char_indices() {
            let char_width = UnicodeWidthChar::width(c).unwrap_or(0);
            if used + char_width > room {
                break;
            }
            used += char_width;
            end = index + c.len_utf8();
        }
        if end == 0 {
            // A character wider than the room: take it anyway so the loop ends.
            end = rest.chars().next().map_or(rest.len(), char::len_utf8);
        }
        let cut = rest[..end].rfind('/').filter(|&slash| slash > 0).map_or(end, |slash| slash + 1);
        pieces.push(rest[..cut].to_owned());
        rest = &rest[cut..];
    }
    if !rest.is_empty() {
        pieces.push(rest.to_owned());
    }
    pieces
}

/// The local-server list: a heading, then one row per server (the highlighted one marked).
fn server_lines(state: &Onboarding, room: usize, theme: &Theme) -> Vec<Line<'static>> {
    let heading = |text: &str| Line::from(Span::styled(text.to_owned(), theme.heading));
    if state.probing {
        return vec![heading("Local servers"), Line::from(Span::styled("  scanning local ports…", theme.dim))];
    }
    if state.servers.is_empty() {
        let ports: Vec<String> = LOCAL_SERVERS.iter().map(|(_, _, port)| port.to_string()).collect();
        let text = format!("  no local server found on {}", ports.join(", "));
        let mut lines = vec![heading("Local servers")];
        lines.extend(wrap_line(&Line::from(Span::styled(text, theme.dim)), room, &[Span::raw("  ")]));
        return lines;
    }
    let selected = state.selected.min(state.servers.len() - 1);
    let name_width = state.servers.iter().map(|server| width(server.name)).max().unwrap_or(0);
    let mut lines = vec![heading("Local servers found — pick one")];
    for (index, server) in state.servers.iter().enumerate() {
        lines.push(server_line(server, index == selected, name_width, room, theme));
    }
    lines
}

/// One server: marker, name, address, and its current model (with ‹ › to cycle when it has several).
fn server_line(server: &LocalServer, selected: bool, name_width: usize, room: usize, theme: &Theme) -> Line<'static> {
    let marker = if selected { Span::styled("› ", theme.accent) } else { Span::raw("  ") };
    let name_style = if selected { theme.bold } else { theme.text };
    let pad = " ".repeat(name_width.saturating_sub(width(server.name)) + 2);
    let address = server.base_url.trim_start_matches("http://").trim_end_matches("/v1").to_owned();
    let mut spans = vec![marker, Span::styled(server.name.to_owned(), name_style), Span::raw(pad)];
    let models = match server.models.as_slice() {
        [] => vec![Span::styled("no model loaded", theme.warning)],
        [only] => vec![Span::styled(only.clone(), theme.inline_code)],
        [first, rest @ ..] if selected => vec![
            Span::styled("‹ ", theme.dim),
            Span::styled(first.clone(), theme.inline_code),
            Span::styled(format!(" › +{} more", rest.len()), theme.dim),
        ],
        [first, rest @ ..] => vec![
            Span::styled(first.clone(), theme.inline_code),
            Span::styled(format!(" +{} more", rest.len()), theme.dim),
        ],
    };
    spans.extend(models);
    let used: usize = spans.iter().map(|span| width(&span.content)).sum();
    if used + width(&address) + 2 <= room {
        spans.push(Span::styled(format!("  {address}"), theme.dim));
    }
    // One row per server, so the list lines up with the selection: cut what doesn't fit.
    let mut out = Vec::new();
    let mut left = room;
    for span in spans {
        let span_width = width(&span.content);
        if span_width <= left {
            left -= span_width;
            out.push(span);
        } else {
            out.push(Span::styled(truncate(&span.content, left), span.style));
            break;
        }
    }
    Line::from(out)
}

/// After Enter: what will start, and whether to remember it.
fn save_question(state: &Onboarding, theme: &Theme) -> Option<Line<'static>> {
    let (server, model) = state.selected_model().filter(|_| state.confirming)?;
    Some(Line::from(vec![
        Span::styled(format!("Start with {model} on {}. ", server.name), theme.bold),
        Span::styled("Save it to config.toml, so tandem starts with it next time?", theme.text),
    ]))
}

/// Keys that do something now.
fn key_hints(state: &Onboarding, theme: &Theme) -> Line<'static> {
    let mut keys: Vec<(&str, &str)> = Vec::new();
    if state.confirming {
        keys.extend([("enter/y", "start and save"), ("n", "start, don't save"), ("esc", "back")]);
    } else if !state.servers.is_empty() && !state.probing {
        if state.servers.len() > 1 {
            keys.push(("↑↓", "select"));
        }
        if state.selected_server().is_some_and(|server| server.models.len() > 1) {
            keys.push(("←→", "model"));
        }
        keys.push(("enter", "start"));
    }
    if !state.confirming {
        keys.extend([("d", "try the demo"), ("r", "rescan"), ("q", "quit")]);
    }
    let mut spans = Vec::new();
    for (index, (key, action)) in keys.into_iter().enumerate() {
        if index > 0 {
            spans.push(Span::styled(" · ", theme.dim));
        }
        spans.push(Span::styled(key.to_owned(), theme.key_hint));
        spans.push(Span::styled(format!(" {action}"), theme.dim));
    }
    Line::from(spans)
}

#[cfg(test)]
mod tests;
