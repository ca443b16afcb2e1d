//! The whole screen: transcript, optional search bar and completion popup, input, status line, and modals
//! (permission dialog, help) above them.

use std::time::Instant;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Widget};

use super::input::{input_height, render_input};
use super::onboarding::render_onboarding;
use super::popup::{popup_height, render_completions};
use super::status::render_status;
use super::transcript::render_transcript;
use crate::app::modal::Modal;
use crate::app::{App, Focus};

/// Most rows the queued messages take (one each; more are counted on the last).
const MAX_QUEUED_ROWS: u16 = 3;

/// Most rows the input may take.
const MAX_INPUT_ROWS: u16 = 12;

/// How tall the transcript area is for the app's current screen size.
pub fn transcript_height(app: &App) -> u16 {
    let (width, height) = app.size;
    let areas = areas(app, Rect::new(0, 0, width, height));
    areas.transcript.height
}

pub(crate) struct Areas {
    pub(crate) transcript: Rect,
    /// The permission dialog, between the conversation and the input.
    pub(crate) dialog: Option<Rect>,
    /// Messages waiting for the turn to end.
    queued: Option<Rect>,
    /// The model's checklist.
    todos: Option<Rect>,
    search: Option<Rect>,
    popup: Option<Rect>,
    input: Rect,
    status: Rect,
}

/// Rows the conversation keeps above a dialog that wants more than the screen has: the card of the call being
/// asked about. Everything else yields to the diff (issue 28: at 80×24 the dialog showed three context lines and
/// no change while the transcript and the checklist kept their rows).
const ROWS_KEPT_ABOVE_DIALOG: u16 = 1;

pub(crate) fn areas(app: &App, area: Rect) -> Areas {
    let input_rows = input_height(&app.editor, area.width, MAX_INPUT_ROWS.min(area.height / 2).max(2));
    let completions = app.editor.completions();
    let dialog = app.dialogs.front();
    let popup_rows = if completions.is_empty() || app.focus != Focus::Input || dialog.is_some() {
        0
    } else {
        popup_height(completions.len())
    };
    let search_rows = u16::from(app.transcript.search.is_some());
    let queued_rows = (app.queued.len() as u16).min(MAX_QUEUED_ROWS).min(area.height / 4);
    // The checklist yields to a dialog (it is back once the dialog is answered).
    let todo_rows = if dialog.is_some() { 0 } else { super::todos::height(&app.todos, area.height / 4) };
    let free = area.height.saturating_sub(input_rows + 1 + search_rows + popup_rows + queued_rows + todo_rows);
    let dialog_rows = match dialog {
        Some(dialog) => dialog.desired_height(area.width, &app.theme).min(free.saturating_sub(ROWS_KEPT_ABOVE_DIALOG)),
        None => 0,
    };
    let [transcript, dialog_area, todos, search, popup, queued, input, status] = Layout::vertical([
        Constraint::Min(if dialog_rows >= free { 0 } else { 1 }),
        Constraint::Length(dialog_rows),
        Constraint::Length(todo_rows),
        Constraint::Length(search_rows),
        Constraint::Length(popup_rows),
        Constraint::Length(queued_rows),
        Constraint::Length(input_rows),
        Constraint::Length(1),
    ])
    .areas(area);
    Areas {
        transcript,
        dialog: (dialog_rows > 0).then_some(dialog_area),
        queued: (queued_rows > 0).then_some(queued),
        todos: (todo_rows > 0).then_some(todos),
        search: (search_rows > 0).then_some(search),
        popup: (popup_rows > 0).then_some(popup),
        input,
        status,
    }
}

/// Draws everything. No I/O: a pure function of the app's state (and the clock, for spinners).
pub fn render(app: &App, frame: &mut Frame<'_>, now: Instant) {
    let area = frame.area();
    let buf = frame.buffer_mut();
    let modal = app.modal();
    match (modal, &app.onboarding, &app.session_picker) {
        (Some(Modal::Onboarding), Some(onboarding), _) => return render_onboarding(onboarding, area, buf, &app.theme),
        (Some(Modal::SessionPicker), _, Some(picker)) => {
            return super::picker::render_picker(picker, area, buf, &app.theme);
        }
        _ => {}
    }
    let areas = areas(app, area);
    let scrolled = render_transcript(&app.transcript, areas.transcript, buf, &app.theme, now);
    if let Some(rect) = areas.todos {
        super::todos::render(&app.todos, rect, buf, &app.theme);
    }
    if let (Some(rect), Some(search)) = (areas.search, &app.transcript.search) {
        let count = if search.query.is_empty() {
            String::new()
        } else if search.matches.is_empty() {
            "  no matches".into()
        } else {
            let folded = search.matches.get(search.current).is_some_and(|found| found.folded_in.is_some());
            let opens = if folded && search.editing { " (in a collapsed card: enter opens it)" } else { "" };
            format!("  {}/{}{opens}", search.current + 1, search.matches.len())
        };
        let hint = if search.editing { "  enter confirm · esc cancel" } else { "  n/N next/prev · esc close" };
        Line::from(vec![
            Span::styled("search: ", app.theme.key_hint),
            Span::raw(search.query.clone()),
            Span::styled(count, app.theme.dim),
            Span::styled(hint, app.theme.dim),
        ])
        .render(rect, buf);
    }
    if let Some(rect) = areas.popup {
        render_completions(&app.editor.completions(), app.editor.completion_selected(), rect, buf, &app.theme);
    }
    if let Some(rect) = areas.queued {
        render_queued(&app.queued, rect, buf, &app.theme);
    }
    let placeholder = match app.focus {
        Focus::Scroll => "scroll mode: j/k · v select · y copy · c answer · b code · / search · esc back",
        Focus::Input if app.working => "esc to interrupt · type ahead…",
        Focus::Input => "Ask tandem anything · / for commands · shift+tab mode · ctrl+s scroll/copy",
    };
    let cursor = render_input(&app.editor, areas.input, buf, &app.theme, placeholder);
    render_status(&app.status, areas.status, buf, &app.theme, now);

    if let (Some(dialog), Some(rect)) = (app.dialogs.front(), areas.dialog) {
        dialog.render(rect, buf, &app.theme);
    }
    // On the row under the conversation, so it hides none of it.
    super::transcript::render_scroll_marker(&app.transcript, areas.transcript, scrolled, buf, &app.theme);
    // The status line stays visible under the rewind view and the inspector: what their keys did is said there.
    let above_status = Rect { height: areas.status.y.saturating_sub(area.y).max(3).min(area.height), ..area };
    match modal {
        // Drawn in its own area above; it has the keys: no cursor in the prompt, no other modal over it.
        Some(Modal::Dialog | Modal::Onboarding | Modal::SessionPicker) => {}
        Some(Modal::McpApproval) => {
            if let Some(server) = app.approval_server() {
                super::mcp::render_mcp_approval(server, app.mcp.approval_selected, area, buf, &app.theme);
            }
        }
        Some(Modal::Help) => render_help(app, area, buf),
        Some(Modal::ModelPicker) => {
            if let Some(picker) = &app.model_picker {
                let rect = centered(area, 60, picker.models.len() as u16 + 4);
                super::picker::render_model_picker(picker, rect, buf, &app.theme);
            }
        }
        Some(Modal::Rules) => {
            if let Some(view) = &app.rules_view {
                super::rules::render_rules(view, area, buf, &app.theme);
            }
        }
        Some(Modal::Mcp) => {
            if let Some(view) = &app.mcp.view {
                super::mcp::render_mcp_view(&app.mcp.servers, view, area, buf, &app.theme);
            }
        }
        Some(Modal::Rewind) => {
            if let Some(view) = &app.rewind {
                super::rewind::render_rewind(view, above_status, buf, &app.theme);
            }
        }
        Some(Modal::Inspector) => {
            if let Some(inspector) = &app.inspector {
                super::inspector::render_inspector(inspector, above_status, buf, &app.theme);
            }
        }
        None => {
            if let (Focus::Input, None, Some((x, y))) = (app.focus, &app.transcript.search, cursor) {
                frame.set_cursor_position((x, y));
            }
        }
    }
}

/// One dim row per queued message (the first line of it), the last row counting any that don't fit.
fn render_queued(queued: &[String], area: Rect, buf: &mut ratatui::buffer::Buffer, theme: &crate::ui::theme::Theme) {
    let rows = usize::from(area.height);
    for (index, text) in queued.iter().take(rows).enumerate() {
        let first = text.lines().next().unwrap_or_default();
        let more = if index + 1 == rows && queued.len() > rows {
            format!("  (+{} more)", queued.len() - rows)
        } else {
            String::new()
        };
        let hint = if index == 0 { "  · esc to edit" } else { "" };
        // The hint and the count stay; the message gives way (with "…") on a narrow screen.
        let fixed = crate::ui::wrap::width("⏎ queued: ") + crate::ui::wrap::width(&more) + crate::ui::wrap::width(hint);
        let room = usize::from(area.width).saturating_sub(fixed).max(4);
        Line::from(vec![
            Span::styled("⏎ queued: ", theme.key_hint),
            Span::styled(crate::ui::wrap::truncate(first, room), theme.dim),
            Span::styled(more, theme.dim),
            Span::styled(hint, theme.dim),
        ])
        .render(Rect { y: area.y + index as u16, height: 1, ..area }, buf);
    }
}

/// A box of at most `width` × `height` in the middle of `area`.
fn centered(area: Rect, width: u16, height: u16) -> Rect {
    let width = width.min(area.width);
    let height = height.min(area.height);
    Rect { x: area.x + (area.width - width) / 2, y: area.y + (area.height - height) / 2, width, height }
}

/// The help's lines at `width` columns: the keys, then every slash command; a description too long for the
/// row wraps under itself.
fn help_lines(app: &App, width: usize) -> Vec<Line<'static>> {
    let key = |text: &str| Span::styled(format!("{text:>13}  "), app.theme.key_hint);
    let indent = [Span::raw(" ".repeat(15))];
    let row = |keys: &str, what: &str| {
        crate::ui::wrap::wrap_line(&Line::from(vec![key(keys), Span::raw(what.to_owned())]), width.max(20), &indent)
    };
    let mut lines: Vec<Line<'static>> =
        crate::app::keymap::KEYS.iter().flat_map(|key_row| row(key_row.keys, key_row.what)).collect();
    lines.push(Line::default());
    for command in crate::app::editor::SLASH_COMMANDS.iter().chain(app.editor.custom_commands()) {
        lines.extend(row(&command.name, &command.description));
    }
    lines
}

/// The help box's width on a screen `screen_width` wide.
fn help_width(screen_width: u16) -> u16 {
    screen_width.min(80)
}

/// How many lines the help has on the current screen (for scrolling it).
pub fn help_len(app: &App) -> usize {
    help_lines(app, usize::from(help_width(app.size.0).saturating_sub(2))).len()
}

fn render_help(app: &App, area: Rect, buf: &mut ratatui::buffer::Buffer) {
    let width = help_width(area.width);
    let lines = help_lines(app, usize::from(width.saturating_sub(2)));
    let height = (lines.len() as u16 + 2).min(area.height);
    let rect = Rect {
        x: area.x + (area.width.saturating_sub(width)) / 2,
        y: area.y + (area.height.saturating_sub(height)) / 2,
        width,
        height,
    };
    Clear.render(rect, buf);
    let visible = usize::from(height.saturating_sub(2));
    let scroll = app.help_scroll.min(lines.len().saturating_sub(visible));
    let title = match (lines.len() > visible, width >= 70) {
        (true, true) => " tandem — keys and commands (↑↓ scroll, any other key closes) ",
        (true, false) => " keys · ↑↓ scroll · others close ",
        (false, true) => " tandem — keys and commands (any key closes) ",
        (false, false) => " keys · any key closes ",
    };
    Paragraph::new(lines)
        .scroll((scroll as u16, 0))
        .block(
            Block::default()
                .borders(Borders::ALL)
                .border_style(app.theme.border)
                .title(Span::styled(title, app.theme.dialog_title)),
        )
        .render(rect, buf);
}
