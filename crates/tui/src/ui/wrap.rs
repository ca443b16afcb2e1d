//! Wrapping styled lines to a width, by display columns (wide characters count two).
//!
//! Renderers produce lines already wrapped to the width they are given, so a transcript item's height is
//! simply its number of lines, and layout can be cached per width.

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_segmentation::UnicodeSegmentation;
use unicode_width::UnicodeWidthStr;

/// Display width of a string in columns.
pub fn width(text: &str) -> usize {
    UnicodeWidthStr::width(text)
}

/// A run of text without (or of only) whitespace, possibly spanning several styles ("**bold**," is one word).
#[derive(Default)]
struct Token {
    segments: Vec<(String, Style)>,
    width: usize,
    is_space: bool,
}

/// Hands `line`'s tokens to `each`, one at a time, in one buffer: a 20 MB paragraph must not become millions of
/// tokens held at once (it took 600 MB at its peak).
fn each_token(line: &Line<'_>, mut each: impl FnMut(&Token)) {
    let mut token = Token::default();
    for span in &line.spans {
        for c in span.content.chars() {
            let is_space = c.is_whitespace();
            if !token.segments.is_empty() && token.is_space != is_space {
                each(&token);
                token.segments.clear();
                token.width = 0;
            }
            token.is_space = is_space;
            match token.segments.last_mut() {
                Some((text, style)) if *style == span.style => text.push(c),
                _ => token.segments.push((c.to_string(), span.style)),
            }
            token.width += self::width(c.encode_utf8(&mut [0; 4]));
        }
    }
    if !token.segments.is_empty() {
        each(&token);
    }
}

/// Wraps a styled line at whitespace to at most `width` columns; a word longer than a whole line is broken.
/// `indent` (e.g. a list bullet's hanging indent) is prepended to every continuation line.
pub fn wrap_line(line: &Line<'_>, width: usize, indent: &[Span<'static>]) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    wrap_line_into(line, width, indent, &mut |wrapped| out.push(wrapped));
    out
}

/// [`wrap_line`], handing each line to `out` as it is complete, so a long paragraph is never held twice.
pub fn wrap_line_into(line: &Line<'_>, width: usize, indent: &[Span<'static>], out: &mut dyn FnMut(Line<'static>)) {
    let width = width.max(1);
    let indent_width: usize = indent.iter().map(|span| self::width(&span.content)).sum();
    let indent_width = if indent_width >= width { 0 } else { indent_width };
    let line_style = line.style;
    let mut emitted = false;
    let mut current: Vec<Span<'static>> = Vec::new();
    let mut current_width = 0usize;

    let mut flush = |current: &mut Vec<Span<'static>>| {
        // Spaces at a wrap point are dropped.
        while let Some(last) = current.last_mut() {
            let trimmed = last.content.trim_end();
            if trimmed.is_empty() {
                current.pop();
            } else {
                if trimmed.len() != last.content.len() {
                    last.content = trimmed.to_owned().into();
                }
                break;
            }
        }
        emitted = true;
        out(Line::from(std::mem::take(current)).style(line_style));
    };

    each_token(line, |token| {
        if current_width + token.width <= width {
            for (text, style) in &token.segments {
                push_span(&mut current, text, *style);
            }
            current_width += token.width;
            return;
        }
        if token.is_space {
            flush(&mut current);
            current.extend(indent.iter().cloned());
            current_width = indent_width;
            return;
        }
        if current_width > indent_width {
            flush(&mut current);
            current.extend(indent.iter().cloned());
            current_width = indent_width;
        }
        if current_width + token.width <= width {
            for (text, style) in &token.segments {
                push_span(&mut current, text, *style);
            }
            current_width += token.width;
            return;
        }
        // A word longer than a whole line: break it by grapheme.
        for (text, style) in &token.segments {
            for grapheme in text.graphemes(true) {
                let grapheme_width = self::width(grapheme);
                if current_width + grapheme_width > width && current_width > indent_width {
                    flush(&mut current);
                    current.extend(indent.iter().cloned());
                    current_width = indent_width;
                }
                push_span(&mut current, grapheme, *style);
                current_width += grapheme_width;
            }
        }
    });
    if !current.is_empty() || !emitted {
        out(Line::from(current).style(line_style));
    }
}

/// Wraps many lines.
pub fn wrap_lines<'a>(lines: impl IntoIterator<Item = Line<'a>>, width: usize) -> Vec<Line<'static>> {
    lines.into_iter().flat_map(|line| wrap_line(&line, width, &[])).collect()
}

/// Cuts a string to at most `width` columns, ending with `…` when cut.
pub fn truncate(text: &str, width: usize) -> String {
    if self::width(text) <= width {
        return text.to_owned();
    }
    let mut out = String::new();
    let mut used = 0;
    for grapheme in text.graphemes(true) {
        let grapheme_width = self::width(grapheme);
        if used + grapheme_width + 1 > width {
            break;
        }
        out.push_str(grapheme);
        used += grapheme_width;
    }
    out.push('…');
    out
}

fn push_span(spans: &mut Vec<Span<'static>>, text: &str, style: Style) {
    match spans.last_mut() {
        Some(last) if last.style == style => last.content.to_mut().push_str(text),
        _ => spans.push(Span::styled(text.to_owned(), style)),
    }
}

/// The plain text of a line.
pub fn line_text(line: &Line<'_>) -> String {
    line.spans.iter().map(|span| span.content.as_ref()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(lines: &[Line<'_>]) -> Vec<String> {
        lines.iter().map(line_text).collect()
    }

    #[test]
    fn keeps_urls_and_punctuation_with_their_word() {
        let line = Line::from("see (https://example.com/docs) now.");
        assert_eq!(texts(&wrap_line(&line, 31, &[])), ["see (https://example.com/docs)", "now."]);
    }

    #[test]
    fn wraps_at_words() {
        let line = Line::from("the quick brown fox jumps over the lazy dog");
        assert_eq!(texts(&wrap_line(&line, 10, &[])), ["the quick", "brown fox", "jumps over", "the lazy", "dog"]);
    }

    #[test]
    fn breaks_long_words_and_keeps_styles() {
        let line = Line::from(vec![Span::raw("ab "), Span::styled("cdefghij", Style::new().bold())]);
        let wrapped = wrap_line(&line, 4, &[]);
        assert_eq!(texts(&wrapped), ["ab", "cdef", "ghij"]);
        assert!(wrapped[1].spans[0].style.add_modifier.contains(ratatui::style::Modifier::BOLD));
    }

    #[test]
    fn hanging_indent_and_wide_characters() {
        let line = Line::from("- one two three");
        let wrapped = wrap_line(&line, 8, &[Span::raw("  ")]);
        assert_eq!(texts(&wrapped), ["- one", "  two", "  three"]);
        let wide = Line::from("日本語のテキスト");
        assert!(wrap_line(&wide, 6, &[]).iter().all(|line| width(&line_text(line)) <= 6));
        assert_eq!(texts(&wrap_line(&Line::from(""), 5, &[])), [""]);
    }

    #[test]
    fn truncates_with_an_ellipsis() {
        assert_eq!(truncate("hello world", 6), "hello…");
        assert_eq!(truncate("hi", 6), "hi");
    }
}
