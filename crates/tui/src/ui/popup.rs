//! The slash-command completion popup, drawn over the transcript just above the input pane.
//!
//! Names line up with the text after the input's `> ` prompt, descriptions dim in a column after the
//! longest name; the selected row is reversed so it reads in any colour depth.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::{Clear, Widget};

use crate::app::editor::SlashCommand;
use crate::ui::input::PROMPT_WIDTH;
use crate::ui::theme::Theme;
use crate::ui::wrap;

/// Rows shown at most; longer lists scroll to keep the selection visible.
pub const MAX_POPUP_ROWS: usize = 8;

/// Rows the popup wants for `n` commands.
pub fn popup_height(n: usize) -> u16 {
    n.min(MAX_POPUP_ROWS) as u16
}

/// Draws `commands` into `area` (which the app places right above the input pane, `popup_height` rows
/// tall), `selected` highlighted.
pub fn render_completions(commands: &[&SlashCommand], selected: usize, area: Rect, buf: &mut Buffer, theme: &Theme) {
    let area = area.intersection(buf.area);
    if area.is_empty() || commands.is_empty() {
        return;
    }
    Clear.render(area, buf);
    let visible = usize::from(area.height);
    let selected = selected.min(commands.len() - 1);
    let first = (selected + 1).saturating_sub(visible);
    let name_width = commands.iter().map(|command| wrap::width(&command.name)).max().unwrap_or(0);
    let indent = PROMPT_WIDTH.min(area.width);
    for (offset, (index, command)) in commands.iter().enumerate().skip(first).take(visible).enumerate() {
        let y = area.y + offset as u16;
        let row = Rect { y, height: 1, ..area };
        let (name_style, description_style) = if index == selected {
            buf.set_style(row, theme.selection);
            (theme.bold.patch(theme.selection), theme.dim.patch(theme.selection))
        } else {
            (theme.text, theme.dim)
        };
        let right = usize::from(area.right());
        let x = area.x + indent;
        let x = buf.set_stringn(x, y, &command.name, right.saturating_sub(usize::from(x)), name_style).0;
        let gap = name_width - wrap::width(&command.name) + 2;
        let x = x.saturating_add(gap as u16);
        let room = right.saturating_sub(usize::from(x));
        if room > 0 {
            buf.set_stringn(x, y, wrap::truncate(&command.description, room), room, description_style);
        }
    }
}

#[cfg(test)]
mod tests {
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    use ratatui::style::Modifier;

    use super::*;
    use crate::app::editor::SLASH_COMMANDS;
    use crate::ui::theme::ColorDepth;

    fn draw(commands: &[&SlashCommand], selected: usize, width: u16, height: u16) -> Terminal<TestBackend> {
        let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
        let theme = Theme::new(ColorDepth::TrueColor);
        terminal
            .draw(|frame| {
                let area = frame.area();
                render_completions(commands, selected, area, frame.buffer_mut(), &theme);
            })
            .unwrap();
        terminal
    }

    #[test]
    fn popup_lists_commands() {
        let commands: Vec<&SlashCommand> = SLASH_COMMANDS.iter().collect();
        let terminal = draw(&commands, 1, 50, popup_height(commands.len()));
        insta::assert_snapshot!(terminal.backend());
        let buffer = terminal.backend().buffer();
        assert!(buffer[(0, 1)].modifier.contains(Modifier::REVERSED));
        assert!(!buffer[(0, 0)].modifier.contains(Modifier::REVERSED));
    }

    #[test]
    fn popup_scrolls_to_the_selection_and_truncates() {
        let commands: Vec<&SlashCommand> = SLASH_COMMANDS.iter().collect();
        let terminal = draw(&commands, 6, 30, 3);
        insta::assert_snapshot!(terminal.backend());
    }

    #[test]
    fn heights() {
        assert_eq!(popup_height(0), 0);
        assert_eq!(popup_height(3), 3);
        assert_eq!(popup_height(20), MAX_POPUP_ROWS as u16);
    }
}
