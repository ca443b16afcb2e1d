//! Draws the prompt editor: a dim rule on top, then the text after a `> ` prompt (continuation rows
//! indented to match), or the Ctrl+R search line while searching.
//!
//! Drawing is a pure function of the editor; the pane scrolls to keep the cursor's row visible without any
//! stored offset (the cursor's row is the last visible one when the text is taller than the pane).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::widgets::{Clear, Widget};
use unicode_segmentation::UnicodeSegmentation;

use crate::app::editor::{Editor, SegmentKind};
use crate::ui::theme::Theme;
use crate::ui::wrap;

/// The prompt before the first row.
pub const PROMPT: &str = "> ";
/// Columns the prompt (and the continuation indent) takes.
pub const PROMPT_WIDTH: u16 = 2;

/// The columns left for text in an input pane `area_width` wide; what [`Editor::set_wrap_width`] wants.
pub fn text_width(area_width: u16) -> u16 {
    area_width.saturating_sub(PROMPT_WIDTH).max(1)
}

/// The height the input pane wants at `width` columns: the rule plus one row per text row, at most `max`
/// (beyond that the pane scrolls).
pub fn input_height(editor: &Editor, width: u16, max: u16) -> u16 {
    let rows = if editor.is_searching() {
        search_rows(editor, width).rows.len()
    } else {
        editor.display_lines(text_width(width)).len()
    };
    let wanted = u16::try_from(rows).unwrap_or(u16::MAX).saturating_add(1);
    wanted.min(max)
}

/// Draws the editor into `area` and returns where the terminal cursor goes (None when the area is too small
/// to show it). `placeholder` is shown dim while the editor is empty.
pub fn render_input(
    editor: &Editor,
    area: Rect,
    buf: &mut Buffer,
    theme: &Theme,
    placeholder: &str,
) -> Option<(u16, u16)> {
    let area = area.intersection(buf.area);
    if area.is_empty() {
        return None;
    }
    Clear.render(area, buf);
    buf.set_string(area.x, area.y, "─".repeat(usize::from(area.width)), theme.dim);
    let body = Rect { y: area.y + 1, height: area.height - 1, ..area };
    if body.is_empty() {
        return None;
    }
    if editor.is_searching() {
        return render_search(editor, body, buf, theme);
    }
    let text_x = body.x + PROMPT_WIDTH.min(body.width);
    let room = usize::from(body.right().saturating_sub(text_x));
    if editor.is_empty() {
        buf.set_string(body.x, body.y, PROMPT, theme.user_prefix);
        buf.set_stringn(text_x, body.y, wrap::truncate(placeholder, room), room, theme.dim);
        return Some((text_x.min(body.right() - 1), body.y));
    }

    let width = text_width(area.width);
    let lines = editor.display_lines(width);
    let (row, col) = editor.cursor_position(width);
    let height = usize::from(body.height);
    let scroll = (row + 1).saturating_sub(height);
    for (index, line) in lines.iter().enumerate().skip(scroll).take(height) {
        let y = body.y + (index - scroll) as u16;
        let hidden_above = index == scroll && scroll > 0;
        let hidden_below = index + 1 == scroll + height && index + 1 < lines.len();
        let (prompt, style) = match index {
            0 => (PROMPT, theme.user_prefix),
            _ if hidden_above => ("↑ ", theme.dim),
            _ if hidden_below => ("↓ ", theme.dim),
            _ => ("  ", theme.text),
        };
        buf.set_stringn(body.x, y, prompt, usize::from(body.width), style);
        let mut x = text_x;
        for segment in &line.segments {
            let style = match segment.kind {
                SegmentKind::Text => theme.text,
                SegmentKind::Paste => theme.accent.add_modifier(Modifier::ITALIC),
            };
            let left = usize::from(body.right().saturating_sub(x));
            x = buf.set_stringn(x, y, &segment.text, left, style).0;
        }
    }
    let x = (usize::from(text_x) + col).min(usize::from(body.right() - 1));
    Some((x as u16, body.y + (row - scroll) as u16))
}

/// What a piece of the search line is, for styling.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Part {
    Label,
    Query,
    Text,
    Hit,
}

/// The search line laid out by grapheme at a width, and where the cursor (after the query) is.
struct SearchRows {
    rows: Vec<Vec<(String, Part)>>,
    cursor: (usize, usize),
}

/// `(reverse-i-search)'query': match`, the match's lines on rows of their own, broken at `width`; the
/// query's first occurrence in the match is marked.
fn search_rows(editor: &Editor, width: u16) -> SearchRows {
    let width = usize::from(width.max(1));
    let query = editor.search_query().unwrap_or_default();
    let found = editor.search_match().unwrap_or_default();
    let label = if editor.search_failed() { "(failed reverse-i-search)'" } else { "(reverse-i-search)'" };
    let hit = find(found, query);

    let mut pieces: Vec<(&str, Part)> = Vec::new();
    pieces.extend(label.graphemes(true).map(|g| (g, Part::Label)));
    pieces.extend(query.graphemes(true).map(|g| (g, Part::Query)));
    let cursor_piece = pieces.len();
    pieces.extend("': ".graphemes(true).map(|g| (g, Part::Label)));
    pieces.extend(found.grapheme_indices(true).map(|(at, g)| {
        let part = if hit.as_ref().is_some_and(|hit| hit.contains(&at)) { Part::Hit } else { Part::Text };
        (g, part)
    }));

    let mut rows: Vec<Vec<(String, Part)>> = vec![Vec::new()];
    let mut col = 0;
    // Set when the closing quote (which always follows the query) is placed.
    let mut cursor = (0, 0);
    for (index, (grapheme, part)) in pieces.into_iter().enumerate() {
        if grapheme == "\n" || grapheme == "\r\n" {
            rows.push(Vec::new());
            col = 0;
            continue;
        }
        let shown = if grapheme == "\t" { " " } else { grapheme };
        let shown = if shown.contains(char::is_control) { "\u{FFFD}" } else { shown };
        let grapheme_width = wrap::width(shown);
        if col + grapheme_width > width && col > 0 {
            rows.push(Vec::new());
            col = 0;
        }
        if index == cursor_piece {
            cursor = (rows.len() - 1, col);
        }
        if let Some(row) = rows.last_mut() {
            match row.last_mut() {
                Some((text, last)) if *last == part => text.push_str(shown),
                _ => row.push((shown.to_owned(), part)),
            }
        }
        col += grapheme_width;
    }
    SearchRows { rows, cursor }
}

/// The byte range of the query's first occurrence in `text`, with the history search's smart case.
fn find(text: &str, query: &str) -> Option<std::ops::Range<usize>> {
    if query.is_empty() {
        return None;
    }
    if query.chars().any(char::is_uppercase) {
        return text.find(query).map(|at| at..at + query.len());
    }
    let lower = text.to_lowercase();
    // Offsets carry over only when lowercasing kept every byte length (true for nearly all text).
    if lower.len() != text.len() {
        return None;
    }
    let needle = query.to_lowercase();
    lower.find(&needle).map(|at| at..at + needle.len())
}

fn render_search(editor: &Editor, body: Rect, buf: &mut Buffer, theme: &Theme) -> Option<(u16, u16)> {
    let layout = search_rows(editor, body.width);
    let style = |part: Part| -> Style {
        match part {
            Part::Label => theme.dim,
            Part::Query => theme.bold,
            Part::Text => theme.text,
            Part::Hit => theme.search_match,
        }
    };
    for (offset, row) in layout.rows.iter().take(usize::from(body.height)).enumerate() {
        let y = body.y + offset as u16;
        let mut x = body.x;
        for (text, part) in row {
            let left = usize::from(body.right().saturating_sub(x));
            x = buf.set_stringn(x, y, text, left, style(*part)).0;
        }
    }
    let (row, col) = layout.cursor;
    let x = (usize::from(body.x) + col).min(usize::from(body.right() - 1));
    (row < usize::from(body.height)).then_some((x as u16, body.y + row as u16))
}

#[cfg(test)]
mod tests {
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

    use super::*;
    use crate::app::history::History;
    use crate::ui::theme::ColorDepth;

    /// Draws the editor into a `width`×`height` terminal; also returns where the cursor went.
    fn draw(
        editor: &Editor,
        width: u16,
        height: u16,
        placeholder: &str,
    ) -> (Terminal<TestBackend>, Option<(u16, u16)>) {
        let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
        let theme = Theme::new(ColorDepth::None);
        let mut cursor = None;
        terminal
            .draw(|frame| {
                let area = frame.area();
                cursor = render_input(editor, area, frame.buffer_mut(), &theme, placeholder);
            })
            .unwrap();
        (terminal, cursor)
    }

    fn typed(text: &str) -> Editor {
        let mut editor = Editor::default();
        editor.set_text(text);
        editor
    }

    fn key(editor: &mut Editor, code: KeyCode, modifiers: KeyModifiers) {
        editor.handle_key(KeyEvent::new(code, modifiers));
    }

    #[test]
    fn empty_with_placeholder() {
        let editor = Editor::default();
        assert_eq!(input_height(&editor, 40, 10), 2);
        let (terminal, cursor) = draw(&editor, 40, 2, "Ask anything, / for commands");
        insta::assert_snapshot!(terminal.backend());
        assert_eq!(cursor, Some((2, 1)));
        let buffer = terminal.backend().buffer();
        assert!(buffer[(2, 1)].modifier.contains(Modifier::DIM));
        assert!(buffer[(0, 1)].modifier.contains(Modifier::BOLD));
    }

    #[test]
    fn multi_line_wrapped_at_40_columns() {
        let editor = typed(
            "Refactor the parser so that errors carry spans, then update every caller.\nKeep the public API.\n\n日本語のテキストも折り返す必要があります、全角で。",
        );
        let height = input_height(&editor, 40, 20);
        assert_eq!(height, 7);
        let (terminal, cursor) = draw(&editor, 40, height, "");
        insta::assert_snapshot!(terminal.backend());
        assert_eq!(cursor, Some((2 + 12, 6)));
    }

    #[test]
    fn grows_to_max_then_scrolls_to_the_cursor() {
        let mut editor = typed("1\n2\n3\n4\n5\n6");
        assert_eq!(input_height(&editor, 20, 4), 4);
        let (terminal, cursor) = draw(&editor, 20, 4, "");
        insta::assert_snapshot!(terminal.backend());
        assert_eq!(cursor, Some((3, 3)));
        key(&mut editor, KeyCode::Home, KeyModifiers::CONTROL);
        let (terminal, cursor) = draw(&editor, 20, 4, "");
        let rows: Vec<String> = (0..4)
            .map(|y| (0..20).map(|x| terminal.backend().buffer()[(x, y)].symbol().to_owned()).collect::<String>())
            .collect();
        assert_eq!(rows[1].trim_end(), "> 1");
        assert_eq!(rows[3].trim_end(), "↓ 3");
        assert_eq!(cursor, Some((2, 1)));
    }

    #[test]
    fn cursor_after_a_full_row_goes_to_the_next() {
        let editor = typed("abcdefgh");
        assert_eq!(input_height(&editor, 10, 10), 3);
        let (_, cursor) = draw(&editor, 10, 3, "");
        assert_eq!(cursor, Some((2, 2)));
        assert_eq!(text_width(10), 8);
        assert_eq!(text_width(1), 1);
    }

    #[test]
    fn collapsed_paste() {
        let mut editor = typed("Why does this fail? ");
        let log: String = (0..40).map(|i| format!("error[E0{i:03}]: something\n")).collect();
        editor.paste(&log);
        editor.paste(" thanks");
        let (terminal, cursor) = draw(&editor, 40, input_height(&editor, 40, 10), "");
        insta::assert_snapshot!(terminal.backend());
        assert_eq!(cursor, Some((8, 2)));
        let buffer = terminal.backend().buffer();
        // The token is drawn in the accent style; with no colours that is plain, so check the text instead.
        assert_eq!(buffer[(22, 1)].symbol(), "[");
    }

    #[test]
    fn reverse_search() {
        let mut history = History::in_memory();
        for entry in ["cargo build --release", "run the tests\nand fix failures", "git status"] {
            history.push(entry);
        }
        let mut editor = Editor::new(history);
        key(&mut editor, KeyCode::Char('r'), KeyModifiers::CONTROL);
        for c in "tests".chars() {
            key(&mut editor, KeyCode::Char(c), KeyModifiers::NONE);
        }
        let height = input_height(&editor, 40, 10);
        assert_eq!(height, 3);
        let (terminal, cursor) = draw(&editor, 40, height, "");
        insta::assert_snapshot!(terminal.backend());
        assert_eq!(cursor, Some((24, 1)));
        let buffer = terminal.backend().buffer();
        assert!(buffer[(35, 1)].modifier.contains(Modifier::UNDERLINED), "the hit is marked");

        for c in "zz".chars() {
            key(&mut editor, KeyCode::Char(c), KeyModifiers::NONE);
        }
        let (terminal, _) = draw(&editor, 40, 2, "");
        insta::assert_snapshot!("reverse_search_failing", terminal.backend());
    }

    #[test]
    fn tiny_areas_do_not_panic() {
        let editor = typed("hello\nworld");
        for (width, height) in [(1, 1), (1, 3), (2, 2), (3, 1), (0, 0)] {
            let area = Rect::new(0, 0, width, height);
            let mut buffer = Buffer::empty(Rect::new(0, 0, 4, 4));
            let theme = Theme::new(ColorDepth::TrueColor);
            let cursor = render_input(&editor, area, &mut buffer, &theme, "placeholder");
            if let Some((x, y)) = cursor {
                assert!(x < width.max(1) && y < height);
            }
        }
        assert_eq!(input_height(&editor, 0, 0), 0);
    }
}
