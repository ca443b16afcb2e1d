//! Syntax highlighting with syntect (pure-Rust regex engine), loaded once on first use.
//!
//! Output is styled spans per line, already mapped to the terminal's colour depth by the [`Theme`].

use std::sync::OnceLock;

use ratatui::style::{Modifier, Style};
use ratatui::text::Span;
use syntect::easy::HighlightLines;
use syntect::highlighting::{FontStyle, ThemeSet};
use syntect::parsing::{SyntaxReference, SyntaxSet};

use super::theme::{ColorDepth, Theme};

struct Assets {
    syntaxes: SyntaxSet,
    theme: syntect::highlighting::Theme,
}

fn assets() -> &'static Assets {
    static ASSETS: OnceLock<Assets> = OnceLock::new();
    ASSETS.get_or_init(|| {
        let syntaxes = SyntaxSet::load_defaults_newlines();
        let mut themes = ThemeSet::load_defaults();
        let theme = themes.themes.remove("base16-ocean.dark").unwrap_or_default();
        Assets { syntaxes, theme }
    })
}

/// Above this many bytes a block is shown without highlighting: it would cost more than a frame.
const MAX_HIGHLIGHT_BYTES: usize = 512 * 1024;

/// Finds a syntax by a fenced block's language token (`rust`, `py`, `sh`) or by a file path's extension.
fn find_syntax<'a>(syntaxes: &'a SyntaxSet, hint: &str) -> Option<&'a SyntaxReference> {
    let hint = hint.trim();
    if hint.is_empty() {
        return None;
    }
    let token = hint.rsplit('/').next().unwrap_or(hint);
    let extension = token.rsplit_once('.').map(|(_, ext)| ext).unwrap_or(token);
    syntaxes
        .find_syntax_by_token(token)
        .or_else(|| syntaxes.find_syntax_by_extension(extension))
        .or_else(|| syntaxes.find_syntax_by_token(&token.to_ascii_lowercase()))
}

/// Whether `hint` names a language we can highlight.
pub fn knows(hint: &str) -> bool {
    find_syntax(&assets().syntaxes, hint).is_some()
}

/// Highlights `code` (lines without their newlines in the result), or returns `None` when there is no
/// syntax for `hint`, the terminal has no colours, or the code is too large.
pub fn highlight(code: &str, hint: &str, theme: &Theme) -> Option<Vec<Vec<Span<'static>>>> {
    if theme.depth == ColorDepth::None || code.len() > MAX_HIGHLIGHT_BYTES {
        return None;
    }
    let assets = assets();
    let syntax = find_syntax(&assets.syntaxes, hint)?;
    let mut highlighter = HighlightLines::new(syntax, &assets.theme);
    let mut lines = Vec::new();
    for line in syntect::util::LinesWithEndings::from(code) {
        let ranges = highlighter.highlight_line(line, &assets.syntaxes).ok()?;
        let spans = ranges
            .into_iter()
            .filter_map(|(style, text)| {
                let text = text.trim_end_matches(['\n', '\r']);
                if text.is_empty() {
                    return None;
                }
                let mut span_style: Style = theme.syntax(style.foreground.r, style.foreground.g, style.foreground.b);
                if style.font_style.contains(FontStyle::BOLD) {
                    span_style = span_style.add_modifier(Modifier::BOLD);
                }
                if style.font_style.contains(FontStyle::ITALIC) {
                    span_style = span_style.add_modifier(Modifier::ITALIC);
                }
                Some(Span::styled(text.to_owned(), span_style))
            })
            .collect();
        lines.push(spans);
    }
    Some(lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn highlights_by_token_or_path() {
        let theme = Theme::new(ColorDepth::TrueColor);
        let lines = highlight("fn main() {\n    let x = 1;\n}\n", "rust", &theme).unwrap();
        assert_eq!(lines.len(), 3);
        assert!(lines[0].iter().any(|span| span.style.fg.is_some()));
        let text: String = lines[1].iter().map(|span| span.content.as_ref()).collect();
        assert_eq!(text, "    let x = 1;");
        assert!(highlight("x = 1", "src/app.py", &theme).is_some());
        assert!(highlight("x", "no-such-language", &theme).is_none());
        assert!(highlight("fn x() {}", "rust", &Theme::new(ColorDepth::None)).is_none());
        assert!(knows("rs") && knows("main.rs") && !knows(""));
    }
}
