//! Colours and styles, adapted to what the terminal can show.
//!
//! Every style the app draws with comes from [`Theme`], so one place decides how things look in truecolor,
//! 256-colour and 16-colour terminals, and with `NO_COLOR` (no colours at all; bold, underline and reverse
//! still carry structure, as the NO_COLOR convention allows).

use ratatui::style::{Color, Modifier, Style};

/// How many colours the terminal shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColorDepth {
    /// `NO_COLOR` or a dumb terminal: attributes only.
    None,
    Ansi16,
    Ansi256,
    TrueColor,
}

impl ColorDepth {
    /// From the environment: `NO_COLOR` (any non-empty value) wins, then `COLORTERM`, then `TERM`.
    pub fn detect(env: &dyn Fn(&str) -> Option<String>) -> ColorDepth {
        if env("NO_COLOR").is_some_and(|value| !value.is_empty()) {
            return ColorDepth::None;
        }
        let colorterm = env("COLORTERM").unwrap_or_default().to_ascii_lowercase();
        if colorterm.contains("truecolor") || colorterm.contains("24bit") {
            return ColorDepth::TrueColor;
        }
        let term = env("TERM").unwrap_or_default().to_ascii_lowercase();
        if term == "dumb" {
            ColorDepth::None
        } else if term.contains("256") || term.contains("direct") {
            ColorDepth::Ansi256
        } else {
            ColorDepth::Ansi16
        }
    }
}

/// A colour given as RGB with the named colour to use in a 16-colour terminal.
#[derive(Clone, Copy, Debug)]
pub struct Rgb(pub u8, pub u8, pub u8, pub Color);

/// The app's styles.
#[derive(Clone, Debug)]
pub struct Theme {
    pub depth: ColorDepth,
    pub text: Style,
    pub dim: Style,
    pub bold: Style,
    pub user: Style,
    pub user_prefix: Style,
    pub heading: Style,
    pub inline_code: Style,
    pub code_block: Style,
    pub link: Style,
    pub quote: Style,
    pub tool_name: Style,
    pub tool_arg: Style,
    pub success: Style,
    pub error: Style,
    pub warning: Style,
    pub accent: Style,
    pub diff_add: Style,
    pub diff_del: Style,
    pub diff_add_word: Style,
    pub diff_del_word: Style,
    pub diff_context: Style,
    pub diff_hunk: Style,
    pub diff_line_number: Style,
    pub diff_rejected: Style,
    pub border: Style,
    pub dialog_title: Style,
    pub key_hint: Style,
    pub selection: Style,
    pub search_match: Style,
    pub search_current: Style,
    pub status: Style,
    pub risk_low: Style,
    pub risk_medium: Style,
    pub risk_high: Style,
}

impl Theme {
    pub fn new(depth: ColorDepth) -> Theme {
        let fg = |rgb: Rgb| Style::new().fg(to_color(rgb, depth));
        let bg = |rgb: Rgb| Style::new().bg(to_color(rgb, depth));
        let plain = depth == ColorDepth::None;
        let green = Rgb(0x7e, 0xc6, 0x7e, Color::Green);
        let red = Rgb(0xe0, 0x6c, 0x75, Color::Red);
        let yellow = Rgb(0xe5, 0xc0, 0x7b, Color::Yellow);
        let blue = Rgb(0x61, 0xaf, 0xef, Color::Blue);
        let magenta = Rgb(0xc6, 0x78, 0xdd, Color::Magenta);
        let cyan = Rgb(0x56, 0xb6, 0xc2, Color::Cyan);
        let gray = Rgb(0x80, 0x86, 0x90, Color::DarkGray);
        let add_bg = Rgb(0x1f, 0x3b, 0x26, Color::Green);
        let del_bg = Rgb(0x45, 0x1f, 0x24, Color::Red);
        let add_word_bg = Rgb(0x2f, 0x6b, 0x3b, Color::LightGreen);
        let del_word_bg = Rgb(0x80, 0x2d, 0x36, Color::LightRed);

        // In 16 colours a background tint would hide the text, so +/- lines are coloured text instead.
        let (diff_add, diff_del, diff_add_word, diff_del_word) = match depth {
            ColorDepth::None => (
                Style::new(),
                Style::new(),
                Style::new().add_modifier(Modifier::BOLD | Modifier::UNDERLINED),
                Style::new().add_modifier(Modifier::CROSSED_OUT | Modifier::UNDERLINED),
            ),
            ColorDepth::Ansi16 => (
                Style::new().fg(Color::Green),
                Style::new().fg(Color::Red),
                Style::new().fg(Color::Black).bg(Color::Green),
                Style::new().fg(Color::Black).bg(Color::Red),
            ),
            ColorDepth::Ansi256 | ColorDepth::TrueColor => (bg(add_bg), bg(del_bg), bg(add_word_bg), bg(del_word_bg)),
        };

        Theme {
            depth,
            text: Style::new(),
            dim: if plain { Style::new().add_modifier(Modifier::DIM) } else { fg(gray) },
            bold: Style::new().add_modifier(Modifier::BOLD),
            user: Style::new().add_modifier(Modifier::BOLD),
            user_prefix: fg(blue).add_modifier(Modifier::BOLD),
            heading: fg(magenta).add_modifier(Modifier::BOLD),
            inline_code: fg(cyan),
            code_block: Style::new(),
            link: fg(blue).add_modifier(Modifier::UNDERLINED),
            quote: fg(gray).add_modifier(Modifier::ITALIC),
            tool_name: Style::new().add_modifier(Modifier::BOLD),
            tool_arg: fg(gray),
            success: fg(green),
            error: fg(red).add_modifier(Modifier::BOLD),
            warning: fg(yellow),
            accent: fg(magenta),
            diff_add,
            diff_del,
            diff_add_word,
            diff_del_word,
            diff_context: Style::new(),
            diff_hunk: fg(cyan),
            diff_line_number: if plain { Style::new() } else { fg(gray) },
            diff_rejected: if plain {
                Style::new().add_modifier(Modifier::CROSSED_OUT)
            } else {
                fg(gray).add_modifier(Modifier::CROSSED_OUT)
            },
            border: if plain { Style::new() } else { fg(gray) },
            dialog_title: Style::new().add_modifier(Modifier::BOLD),
            key_hint: fg(cyan).add_modifier(Modifier::BOLD),
            selection: Style::new().add_modifier(Modifier::REVERSED),
            search_match: if plain {
                Style::new().add_modifier(Modifier::UNDERLINED)
            } else {
                Style::new().fg(Color::Black).bg(to_color(yellow, depth))
            },
            search_current: Style::new().add_modifier(Modifier::REVERSED | Modifier::BOLD),
            status: if plain { Style::new() } else { fg(gray) },
            risk_low: fg(green),
            risk_medium: fg(yellow),
            risk_high: fg(red).add_modifier(Modifier::BOLD),
        }
    }

    /// A syntax-highlighting colour at this theme's depth (none without colours).
    pub fn syntax(&self, r: u8, g: u8, b: u8) -> Style {
        match self.depth {
            ColorDepth::None => Style::new(),
            depth => Style::new().fg(to_color(Rgb(r, g, b, nearest_ansi16(r, g, b)), depth)),
        }
    }
}

/// Maps an RGB colour to what the terminal can show.
pub fn to_color(rgb: Rgb, depth: ColorDepth) -> Color {
    let Rgb(r, g, b, named) = rgb;
    match depth {
        ColorDepth::TrueColor => Color::Rgb(r, g, b),
        ColorDepth::Ansi256 => Color::Indexed(nearest_ansi256(r, g, b)),
        ColorDepth::Ansi16 => named,
        ColorDepth::None => Color::Reset,
    }
}

/// The closest entry of the xterm 256-colour palette (6×6×6 cube or the grey ramp).
pub fn nearest_ansi256(r: u8, g: u8, b: u8) -> u8 {
    const LEVELS: [u8; 6] = [0, 95, 135, 175, 215, 255];
    let level = |v: u8| {
        LEVELS
            .iter()
            .enumerate()
            .min_by_key(|(_, l)| (i32::from(**l) - i32::from(v)).abs())
            .map(|(i, _)| i as u8)
            .unwrap_or(0)
    };
    let (ri, gi, bi) = (level(r), level(g), level(b));
    let cube = 16 + 36 * ri + 6 * gi + bi;
    let cube_rgb = (LEVELS[ri as usize], LEVELS[gi as usize], LEVELS[bi as usize]);
    let average = (u16::from(r) + u16::from(g) + u16::from(b)) / 3;
    let grey_index = if average < 8 { 0 } else { ((average - 8) / 10).min(23) as u8 };
    let grey = 8 + 10 * grey_index;
    let distance = |(cr, cg, cb): (u8, u8, u8)| {
        let d = |a: u8, b: u8| (i32::from(a) - i32::from(b)).pow(2);
        d(cr, r) + d(cg, g) + d(cb, b)
    };
    if distance((grey, grey, grey)) < distance(cube_rgb) { 232 + grey_index } else { cube }
}

/// A rough named colour for RGB, for 16-colour terminals.
pub fn nearest_ansi16(r: u8, g: u8, b: u8) -> Color {
    let max = r.max(g).max(b);
    let min = r.min(g).min(b);
    if max - min < 40 {
        return if max > 170 {
            Color::White
        } else if max > 90 {
            Color::Gray
        } else {
            Color::DarkGray
        };
    }
    let (r, g, b) = (r > max / 2 + 20, g > max / 2 + 20, b > max / 2 + 20);
    match (r, g, b) {
        (true, false, false) => Color::Red,
        (false, true, false) => Color::Green,
        (false, false, true) => Color::Blue,
        (true, true, false) => Color::Yellow,
        (true, false, true) => Color::Magenta,
        (false, true, true) => Color::Cyan,
        _ => Color::White,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| pairs.iter().find(|(key, _)| *key == name).map(|(_, value)| value.to_string())
    }

    #[test]
    fn detects_depth() {
        assert_eq!(ColorDepth::detect(&env(&[("NO_COLOR", "1"), ("COLORTERM", "truecolor")])), ColorDepth::None);
        assert_eq!(ColorDepth::detect(&env(&[("COLORTERM", "truecolor")])), ColorDepth::TrueColor);
        assert_eq!(ColorDepth::detect(&env(&[("TERM", "xterm-256color")])), ColorDepth::Ansi256);
        assert_eq!(ColorDepth::detect(&env(&[("TERM", "xterm")])), ColorDepth::Ansi16);
        assert_eq!(ColorDepth::detect(&env(&[("TERM", "dumb")])), ColorDepth::None);
        assert_eq!(ColorDepth::detect(&env(&[("NO_COLOR", ""), ("TERM", "xterm")])), ColorDepth::Ansi16);
    }

    #[test]
    fn maps_colors_down() {
        assert_eq!(nearest_ansi256(255, 0, 0), 196);
        assert_eq!(nearest_ansi256(128, 128, 128), 244);
        assert_eq!(nearest_ansi16(200, 40, 40), Color::Red);
        let theme = Theme::new(ColorDepth::None);
        assert_eq!(theme.diff_add.fg, None);
        assert_eq!(theme.diff_add.bg, None);
        assert_eq!(theme.syntax(1, 2, 3), Style::new());
    }
}
