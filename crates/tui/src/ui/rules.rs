//! The `/permissions` modal: every active rule, its kind and where it comes from.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Span;
use ratatui::widgets::{Clear, Widget};
use tandem_core::permissions::{RuleKind, Scope};

use super::list_modal::render_list_modal;
use super::theme::Theme;
use super::wrap::truncate;
use crate::app::rules_view::RulesView;

/// `text` in at most `room` columns, keeping its end (a path's file name) behind a leading "…".
fn keep_end(text: &str, room: usize) -> String {
    if crate::ui::wrap::width(text) <= room {
        return text.to_owned();
    }
    let chars: Vec<char> = text.chars().collect();
    let mut tail = String::new();
    for ch in chars.iter().rev() {
        if crate::ui::wrap::width(&tail) + crate::ui::wrap::width(&ch.to_string()) + 1 > room {
            break;
        }
        tail.insert(0, *ch);
    }
    format!("…{tail}")
}

pub fn render_rules(view: &RulesView, area: Rect, buf: &mut Buffer, theme: &Theme) {
    // Narrow screens get the whole width: a rule's source file is what tells rules apart.
    let width = if area.width < 60 { area.width } else { area.width.saturating_sub(4).clamp(20, 110) };
    // Room for the hints (and the "no rules" note) to wrap on a narrow screen.
    let extra = if area.width < 90 { 3 } else { 0 } + if view.rules.is_empty() { 2 } else { 0 };
    let height = (view.rules.len() as u16 + 5 + extra).clamp(6, area.height.max(1));
    let rect = Rect {
        x: area.x + area.width.saturating_sub(width) / 2,
        y: area.y + area.height.saturating_sub(height) / 2,
        width,
        height: height.min(area.height),
    };
    Clear.render(rect, buf);
    let inner_width = rect.width.saturating_sub(2) as usize;
    let visible = rect.height.saturating_sub(4) as usize;
    let first = view.selected.saturating_sub(visible.saturating_sub(1));
    let mut rows = Vec::new();
    if view.rules.is_empty() {
        rows.push((
            false,
            vec![Span::styled(
                "No rules yet. Answer a permission dialog with a/p/u, or add rules to .tandem/settings.json.",
                theme.dim,
            )],
        ));
    }
    for (index, rule) in view.rules.iter().enumerate().skip(first).take(visible) {
        let (kind, style) = match rule.kind {
            RuleKind::Allow => ("allow", theme.success),
            RuleKind::Ask => ("ask  ", theme.warning),
            RuleKind::Deny => ("deny ", theme.error),
        };
        let source = match (&rule.file, rule.scope) {
            (Some(file), _) => file.display().to_string(),
            (None, Scope::Flag) => "command line".to_owned(),
            (None, Scope::Session) => "this session".to_owned(),
            (None, scope) => scope.as_str().to_owned(),
        };
        let text = truncate(&rule.text, inner_width.saturating_sub(8).max(8) / 2 + 10);
        let used = 8 + crate::ui::wrap::width(&text) + 3;
        let source = keep_end(&source, inner_width.saturating_sub(used).max(4));
        let spans = vec![
            Span::styled(format!("{kind} "), style),
            Span::styled(text, theme.bold),
            Span::styled(format!("  {source}"), theme.dim),
        ];
        rows.push((index == view.selected, spans));
    }
    let hints = [("↑↓", "select"), ("d", "remove (from its file too)"), ("Esc", "close")];
    render_list_modal("Permission rules (deny > ask > allow)", rows, &hints, rect, buf, theme);
}
