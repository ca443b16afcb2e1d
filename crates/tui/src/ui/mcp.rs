//! The `/mcp` list (servers, status, tools) and the `.mcp.json` approval dialog.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Span;
use ratatui::widgets::{Clear, Widget};
use tandem_protocol::McpServerView;

use super::list_modal::render_list_modal;
use super::theme::Theme;
use super::wrap::truncate;
use crate::app::mcp_view::{APPROVAL_CHOICES, McpView};

/// A centred box `width` wide (at most the screen) and tall enough for `rows` plus borders and hints.
fn modal_rect(area: Rect, rows: usize, max_width: u16) -> Rect {
    let width = if area.width < 60 { area.width } else { area.width.saturating_sub(4).clamp(20, max_width) };
    let extra = if area.width < 90 { 2 } else { 0 };
    let height = (rows as u16 + 4 + extra).clamp(6, area.height.max(1));
    Rect {
        x: area.x + area.width.saturating_sub(width) / 2,
        y: area.y + area.height.saturating_sub(height) / 2,
        width,
        height: height.min(area.height),
    }
}

fn status_span(server: &McpServerView, theme: &Theme) -> Span<'static> {
    let (text, style) = match (server.status.as_str(), server.needs_approval) {
        (_, true) => ("⚠ needs approval".to_owned(), theme.warning),
        ("connected", _) => (format!("✓ connected · {} tools", server.tools.len()), theme.success),
        ("pending", _) => ("… connecting".to_owned(), theme.dim),
        ("failed", _) => ("✗ failed".to_owned(), theme.error),
        (other, _) => (format!("○ {other}"), theme.dim),
    };
    Span::styled(text, style)
}

pub fn render_mcp_view(servers: &[McpServerView], view: &McpView, area: Rect, buf: &mut Buffer, theme: &Theme) {
    let selected = servers.get(view.selected);
    let detail: Vec<String> = match selected {
        Some(server) if view.expanded => {
            let mut lines = vec![format!("{} · {} · {}", server.transport, server.scope, server.target)];
            if let Some(reason) = &server.reason {
                lines.extend(reason.lines().take(6).map(str::to_owned));
            }
            lines.extend(server.tools.iter().map(|tool| format!("  {tool}")));
            if !server.resources.is_empty() {
                let count = server.resources.len();
                let noun = if count == 1 { "resource" } else { "resources" };
                lines.push(format!("  {count} {noun} (@{}:uri in a prompt)", server.name));
            }
            lines.extend(server.prompts.iter().map(|prompt| format!("  /{}", prompt.command)));
            lines
        }
        Some(server) => server.reason.iter().map(|reason| reason.lines().next().unwrap_or("").to_owned()).collect(),
        None => Vec::new(),
    };
    let rect = modal_rect(area, servers.len().max(1) + detail.len(), 110);
    Clear.render(rect, buf);
    let inner_width = rect.width.saturating_sub(4) as usize;
    let mut rows: Vec<(bool, Vec<Span<'static>>)> = Vec::new();
    if servers.is_empty() {
        rows.push((
            false,
            vec![Span::styled(
                "No MCP servers. Add one with `tandem mcp add`, a .mcp.json in the project, or --mcp-config.",
                theme.dim,
            )],
        ));
    }
    let visible = rect.height.saturating_sub(4) as usize;
    let mut used = 0;
    for (index, server) in servers.iter().enumerate() {
        if used >= visible {
            break;
        }
        let name = truncate(&server.name, inner_width / 3);
        rows.push((
            index == view.selected,
            vec![Span::styled(format!("{name}  "), theme.bold), status_span(server, theme)],
        ));
        used += 1;
        if index == view.selected {
            for line in &detail {
                if used >= visible {
                    break;
                }
                rows.push((
                    false,
                    vec![Span::styled(format!("  {}", truncate(line, inner_width.saturating_sub(4))), theme.dim)],
                ));
                used += 1;
            }
        }
    }
    let hints = [("↑↓", "select"), ("enter", "tools"), ("r", "reconnect"), ("esc", "close")];
    render_list_modal("MCP servers", rows, &hints, rect, buf, theme);
}

pub fn render_mcp_approval(server: &McpServerView, selected: usize, area: Rect, buf: &mut Buffer, theme: &Theme) {
    let inner_width = (modal_rect(area, 0, 90).width.saturating_sub(4) as usize).max(8);
    // The whole entry, wrapped rather than cut: what is not shown can't be judged. Room is kept for the name,
    // the warning and the three answers; an entry longer than that ends with a count of what is left.
    let mut entry: Vec<String> = std::iter::once(server.target.as_str())
        .chain(server.details.iter().map(String::as_str))
        .flat_map(|line| wrap_chars(line, inner_width))
        .collect();
    let room = (area.height as usize).saturating_sub(4 + 2 + 5).max(1);
    if entry.len() > room {
        let left = entry.len() - (room - 1);
        entry.truncate(room - 1);
        entry.push(format!("… {left} more lines: read .mcp.json before approving"));
    }
    let rect = modal_rect(area, 5 + entry.len(), 90);
    Clear.render(rect, buf);
    let mut rows: Vec<(bool, Vec<Span<'static>>)> = vec![(
        false,
        vec![Span::styled(format!("{}: ", server.name), theme.bold), Span::raw(format!("({})", server.transport))],
    )];
    rows.extend(entry.into_iter().map(|line| (false, vec![Span::styled(line, theme.tool_arg)])));
    rows.push((
        false,
        vec![Span::styled("MCP servers run commands on this machine; approve only ones you trust.", theme.dim)],
    ));
    for (index, (_, label)) in APPROVAL_CHOICES.iter().enumerate() {
        rows.push((index == selected, vec![Span::styled(format!("{}. {label}", index + 1), theme.text)]));
    }
    let hints = [("1-3", "answer"), ("↑↓ enter", "choose"), ("esc", "not now")];
    render_list_modal("New MCP server found in .mcp.json", rows, &hints, rect, buf, theme);
}

/// `text` in pieces of at most `width` characters.
fn wrap_chars(text: &str, width: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    if chars.is_empty() {
        return vec![String::new()];
    }
    chars.chunks(width.max(1)).map(|chunk| chunk.iter().collect()).collect()
}
