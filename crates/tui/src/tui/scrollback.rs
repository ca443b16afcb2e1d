//! Printing the conversation to the normal screen (on exit and on Ctrl+Z), so it stays in the terminal's
//! scrollback after the full-screen app is gone.

use std::io::Write;
use std::time::Instant;

use ratatui::crossterm::style::{Attribute, Color as CtColor, ContentStyle, StyledContent};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Line;

use crate::app::App;

/// Prints the cells not printed yet, styled, at `width` columns.
pub fn print_new_cells(app: &mut App, out: &mut impl Write, width: u16) -> std::io::Result<()> {
    let layout = app.transcript.layout(width.max(20) as usize, &app.theme, Instant::now());
    for lines in layout.iter().skip(app.printed_cells) {
        for line in lines.iter() {
            writeln!(out, "{}", line_to_ansi(&line))?;
        }
    }
    app.printed_cells = layout.len();
    out.flush()
}

/// How to come back to this session once it holds a prompt (Claude Code prints the same on exit).
pub fn resume_hint(app: &App) -> Option<String> {
    let prompted =
        app.transcript.cells().iter().any(|cell| matches!(cell.kind, crate::app::cells::CellKind::User { .. }));
    (prompted && !app.session_id.is_empty()).then(|| format!("Resume this session with: tandem -r {}", app.session_id))
}

/// A styled line as text with ANSI escape sequences.
pub fn line_to_ansi(line: &Line<'_>) -> String {
    let mut out = String::new();
    for span in &line.spans {
        let style = line.style.patch(span.style);
        if style == Style::default() {
            out.push_str(&span.content);
        } else {
            out.push_str(&StyledContent::new(content_style(style), span.content.as_ref()).to_string());
        }
    }
    out
}

fn content_style(style: Style) -> ContentStyle {
    let mut content = ContentStyle::new();
    content.foreground_color = style.fg.and_then(color);
    content.background_color = style.bg.and_then(color);
    for (modifier, attribute) in [
        (Modifier::BOLD, Attribute::Bold),
        (Modifier::DIM, Attribute::Dim),
        (Modifier::ITALIC, Attribute::Italic),
        (Modifier::UNDERLINED, Attribute::Underlined),
        (Modifier::REVERSED, Attribute::Reverse),
        (Modifier::CROSSED_OUT, Attribute::CrossedOut),
    ] {
        if style.add_modifier.contains(modifier) {
            content.attributes.set(attribute);
        }
    }
    content
}

fn color(color: Color) -> Option<CtColor> {
    Some(match color {
        Color::Reset => return None,
        Color::Black => CtColor::Black,
        Color::Red => CtColor::DarkRed,
        Color::Green => CtColor::DarkGreen,
        Color::Yellow => CtColor::DarkYellow,
        Color::Blue => CtColor::DarkBlue,
        Color::Magenta => CtColor::DarkMagenta,
        Color::Cyan => CtColor::DarkCyan,
        Color::Gray => CtColor::Grey,
        Color::DarkGray => CtColor::DarkGrey,
        Color::LightRed => CtColor::Red,
        Color::LightGreen => CtColor::Green,
        Color::LightYellow => CtColor::Yellow,
        Color::LightBlue => CtColor::Blue,
        Color::LightMagenta => CtColor::Magenta,
        Color::LightCyan => CtColor::Cyan,
        Color::White => CtColor::White,
        Color::Rgb(r, g, b) => CtColor::Rgb { r, g, b },
        Color::Indexed(i) => CtColor::AnsiValue(i),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::text::Span;

    /// Issue 28: nothing said how to come back to a session after quitting.
    #[test]
    fn a_session_with_a_prompt_says_how_to_resume_it() {
        use crate::app::editor::Editor;
        use crate::ui::status::StatusInfo;
        use crate::ui::theme::{ColorDepth, Theme};
        let mut app = App::new(
            Theme::new(ColorDepth::None),
            Editor::default(),
            StatusInfo::default(),
            std::path::PathBuf::from("/"),
        );
        app.session_id = "0a1b2c".into();
        assert_eq!(resume_hint(&app), None, "nothing asked yet: nothing to resume");
        app.restore_conversation(&[tandem_protocol::conversation::Message::user_text("fix it")]);
        assert_eq!(resume_hint(&app).as_deref(), Some("Resume this session with: tandem -r 0a1b2c"));
    }

    #[test]
    fn plain_text_stays_plain_and_styles_become_escapes() {
        assert_eq!(line_to_ansi(&Line::from("hello")), "hello");
        let styled = line_to_ansi(&Line::from(Span::styled("x", Style::new().fg(Color::Red))));
        assert!(styled.contains("\x1b[") && styled.contains('x'));
    }
}
