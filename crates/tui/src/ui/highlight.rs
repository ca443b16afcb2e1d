//! Syntax highlighting with syntect (pure-Rust regex engine), loaded once on first use.
//!
//! Output is styled spans per line, already mapped to the terminal's colour depth by the [`Theme`].

use std::cell::RefCell;
use std::sync::OnceLock;

use ratatui::style::{Modifier, Style};
use ratatui::text::Span;
use syntect::easy::HighlightLines;
use syntect::highlighting::{FontStyle, HighlightState, ThemeSet};
use syntect::parsing::{ParseState, SyntaxReference, SyntaxSet};

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
///
/// A code block that grows (an answer streaming) is highlighted again every frame; highlighting is the costly
/// part, so the state after the last complete line is remembered and a block that starts with what was
/// highlighted before only highlights its new lines.
pub fn highlight(code: &str, hint: &str, theme: &Theme) -> Option<Vec<Vec<Span<'static>>>> {
    highlight_lines(code, hint, theme, true)
}

/// Like [`highlight`], for code still being written: a last line without its newline is left plain (the caller
/// styles it), since it changes with every delta and highlighting it again each frame would be most of a
/// streaming frame's cost. It is highlighted once it is complete.
pub fn highlight_growing(code: &str, hint: &str, theme: &Theme) -> Option<Vec<Vec<Span<'static>>>> {
    highlight_lines(code, hint, theme, false)
}

fn highlight_lines(code: &str, hint: &str, theme: &Theme, last_line: bool) -> Option<Vec<Vec<Span<'static>>>> {
    if theme.depth == ColorDepth::None || code.len() > MAX_HIGHLIGHT_BYTES {
        return None;
    }
    let assets = assets();
    let syntax = find_syntax(&assets.syntaxes, hint)?;
    let memo = take_memo(code, syntax, theme.depth);
    let (mut lines, mut done, mut highlighter) = match memo {
        Some(memo) => (
            memo.lines,
            memo.code.len(),
            HighlightLines::from_state(&assets.theme, memo.highlight_state, memo.parse_state),
        ),
        None => (Vec::new(), 0, HighlightLines::new(syntax, &assets.theme)),
    };
    let rest = &code[done..];
    let complete = rest.rfind('\n').map_or(0, |newline| newline + 1);
    for line in syntect::util::LinesWithEndings::from(&rest[..complete]) {
        let ranges = highlighter.highlight_line(line, &assets.syntaxes).ok()?;
        lines.push(spans_of(ranges, theme));
    }
    done += complete;
    let (highlight_state, parse_state) = highlighter.state();
    let memo = Memo {
        syntax: syntax.name.clone(),
        depth: theme.depth,
        code: code[..done].to_owned(),
        lines: lines.clone(),
        highlight_state: highlight_state.clone(),
        parse_state: parse_state.clone(),
    };
    let in_progress = &code[done..];
    if !in_progress.is_empty() && !last_line {
        lines.push(vec![Span::raw(in_progress.to_owned())]);
    } else if !in_progress.is_empty() {
        let mut highlighter = HighlightLines::from_state(&assets.theme, highlight_state, parse_state);
        let ranges = highlighter.highlight_line(in_progress, &assets.syntaxes).ok()?;
        lines.push(spans_of(ranges, theme));
    }
    remember(memo);
    Some(lines)
}

fn spans_of(ranges: Vec<(syntect::highlighting::Style, &str)>, theme: &Theme) -> Vec<Span<'static>> {
    ranges
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
        .collect()
}

/// The highlighting of a block's complete lines and the highlighter's state after them.
struct Memo {
    syntax: String,
    depth: ColorDepth,
    code: String,
    lines: Vec<Vec<Span<'static>>>,
    highlight_state: HighlightState,
    parse_state: ParseState,
}

/// How many blocks are remembered: enough for every code block of a long answer, so the answer's final layout
/// and its copy printed to the scrollback on exit don't highlight them all again.
const MEMOS: usize = 256;
/// And at most this much code in all.
const MEMO_BYTES: usize = 4 * 1024 * 1024;

thread_local! {
    static MEMOS_CACHE: RefCell<Vec<Memo>> = const { RefCell::new(Vec::new()) };
}

/// Takes the remembered state of a block that `code` continues, if any.
fn take_memo(code: &str, syntax: &SyntaxReference, depth: ColorDepth) -> Option<Memo> {
    MEMOS_CACHE.with(|memos| {
        let mut memos = memos.borrow_mut();
        let found = memos
            .iter()
            .enumerate()
            .filter(|(_, memo)| {
                memo.syntax == syntax.name
                    && memo.depth == depth
                    && !memo.code.is_empty()
                    && code.starts_with(&memo.code)
            })
            .max_by_key(|(_, memo)| memo.code.len())
            .map(|(index, _)| index)?;
        Some(memos.remove(found))
    })
}

fn remember(memo: Memo) {
    if memo.code.is_empty() {
        return;
    }
    MEMOS_CACHE.with(|memos| {
        let mut memos = memos.borrow_mut();
        memos.push(memo);
        let mut bytes: usize = memos.iter().map(|memo| memo.code.len()).sum();
        while memos.len() > MEMOS || (bytes > MEMO_BYTES && memos.len() > 1) {
            bytes -= memos.remove(0).code.len();
        }
    });
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

    #[test]
    fn a_growing_block_is_highlighted_as_if_whole() {
        let theme = Theme::new(ColorDepth::TrueColor);
        let code = "/* a comment\n spanning lines */\nfn main() {\n    let s = \"text\";\n}\n";
        let whole = highlight(code, "rust", &theme).unwrap();
        MEMOS_CACHE.with(|memos| memos.borrow_mut().clear());
        let mut last = Vec::new();
        for end in 1..=code.len() {
            last = highlight(&code[..end], "rust", &theme).unwrap();
        }
        assert_eq!(last, whole);
        // A block that does not continue the remembered one starts over.
        assert_eq!(highlight("fn x() {}\n", "rust", &theme).unwrap().len(), 1);
        // While growing, the line in progress is left plain (one unstyled span) until it is complete.
        let growing = highlight_growing("fn main() {\n    let s", "rust", &theme).unwrap();
        assert_eq!(growing[1], vec![Span::raw("    let s")]);
        assert!(growing[0].iter().any(|span| span.style.fg.is_some()));
    }
}
