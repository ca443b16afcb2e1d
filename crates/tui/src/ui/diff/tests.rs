//! Tests of the diff view: text, layout and styles.

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Line;

use super::{DiffView, HunkReview};
use crate::ui::theme::{ColorDepth, Theme};
use crate::ui::wrap::line_text;

/// 30 lines with a word changed on line 5 and another on line 26 (two hunks).
fn texts() -> (String, String) {
    let old: String = (1..=30)
        .map(|i| match i {
            5 => "    let total = price * count;\n".to_owned(),
            26 => "    println!(\"done\");\n".to_owned(),
            i => format!("    step({i});\n"),
        })
        .collect();
    let new = old
        .replace("price * count;", "price * amount;")
        .replace("    println!(\"done\");\n", "    println!(\"finished\");\n    flush();\n");
    (old, new)
}

fn texts_of(lines: &[Line<'_>]) -> Vec<String> {
    lines.iter().map(line_text).collect()
}

/// The style of the first character of `needle` on the first line from `from` on that contains it.
fn style_at(lines: &[Line<'_>], needle: &str, from: usize) -> Style {
    for line in &lines[from..] {
        let Some(at) = line_text(line).find(needle) else { continue };
        let mut end = 0;
        for span in &line.spans {
            end += span.content.len();
            if end > at {
                return span.style;
            }
        }
    }
    panic!("{needle:?} not found");
}

#[test]
fn renders_header_hunks_and_gutters() {
    let (old, new) = texts();
    let view = DiffView::new("src/lib.rs", Some(&old), &new);
    assert_eq!(view.hunks().len(), 2);
    let lines = view.render(80, &Theme::new(ColorDepth::TrueColor), None);
    let text = texts_of(&lines);
    assert_eq!(text[0], "src/lib.rs  +3 −2");
    assert_eq!(text[1], "@@ -2,7 +2,7 @@");
    let text: Vec<&str> = text.iter().map(|line| line.trim_end()).collect();
    assert!(text.contains(&" 5    -     let total = price * count;"), "{text:#?}");
    assert!(text.contains(&"    5 +     let total = price * amount;"), "{text:#?}");
    assert!(text.contains(&" 2  2       step(2);"), "{text:#?}");
    assert!(text.contains(&"27 28       step(27);"), "{text:#?}");
    assert_eq!(view.line_count(80), lines.len());
}

#[test]
fn colours_changed_lines_and_words() {
    let (old, new) = texts();
    let view = DiffView::new("notes.txt", Some(&old), &new);
    let theme = Theme::new(ColorDepth::TrueColor);
    let lines = view.render(80, &theme, None);
    let added = lines.iter().position(|line| line_text(line).contains("amount")).unwrap();
    assert_eq!(style_at(&lines, "amount", added).bg, theme.diff_add_word.bg);
    assert_eq!(style_at(&lines, "price", added).bg, theme.diff_add.bg);
    assert_eq!(style_at(&lines, "+ ", added).bg, theme.diff_add.bg);
    let removed = lines.iter().position(|line| line_text(line).contains("count")).unwrap();
    assert_eq!(style_at(&lines, "count", removed).bg, theme.diff_del_word.bg);
    assert_eq!(style_at(&lines, "price", removed).bg, theme.diff_del.bg);
    // The background runs to the edge of the view.
    assert_eq!(lines[added].width(), 80);
    assert_eq!(lines[added].spans.last().map(|span| span.style.bg), Some(theme.diff_add.bg));
    // A line added with no partner has no word highlights.
    let flush = lines.iter().position(|line| line_text(line).contains("flush")).unwrap();
    assert_eq!(style_at(&lines, "flush", flush).bg, theme.diff_add.bg);
    assert_eq!(style_at(&lines, " 5 ", 0).fg, theme.diff_line_number.fg);
}

#[test]
fn without_colours_signs_and_modifiers_carry_the_meaning() {
    let (old, new) = texts();
    let view = DiffView::new("src/lib.rs", Some(&old), &new);
    let theme = Theme::new(ColorDepth::None);
    let lines = view.render(80, &theme, None);
    let added = lines.iter().position(|line| line_text(line).contains("amount")).unwrap();
    let word = style_at(&lines, "amount", added);
    assert!(word.add_modifier.contains(Modifier::BOLD | Modifier::UNDERLINED));
    assert_eq!(word.fg, None);
    assert!(line_text(&lines[added]).contains("+     let total"));
    let uncoloured = |color: Option<Color>| matches!(color, None | Some(Color::Reset));
    assert!(
        lines.iter().flat_map(|line| &line.spans).all(|span| uncoloured(span.style.fg) && uncoloured(span.style.bg))
    );
}

#[test]
fn review_marks_hunks_and_greys_out_rejected_ones() {
    let (old, new) = texts();
    let view = DiffView::new("src/lib.rs", Some(&old), &new);
    let theme = Theme::new(ColorDepth::TrueColor);
    let review = HunkReview { accepted: vec![true, false], current: 1 };
    let lines = view.render(80, &theme, Some(&review));
    let offsets = view.hunk_line_offsets(80);
    assert_eq!(line_text(&lines[offsets[0]]), "  [✓] @@ -2,7 +2,7 @@  hunk 1/2");
    assert_eq!(line_text(&lines[offsets[1]]), "▶ [✗] @@ -23,7 +23,8 @@  hunk 2/2");
    let finished = lines.iter().position(|line| line_text(line).contains("finished")).unwrap();
    let style = style_at(&lines, "finished", finished);
    assert_eq!(style, theme.diff_rejected);
    assert!(style.add_modifier.contains(Modifier::CROSSED_OUT));
    // The accepted hunk keeps its colours.
    let amount = lines.iter().position(|line| line_text(line).contains("amount")).unwrap();
    assert_eq!(style_at(&lines, "amount", amount).bg, theme.diff_add_word.bg);
}

#[test]
fn offsets_and_counts_match_the_render_at_every_width() {
    let (old, mut new) = texts();
    new = new.replace("step(12);", &format!("step(12); // {}", "a long comment that has to wrap ".repeat(4)));
    new.push_str("    日本語のテキストも折り返す必要がある長い行です。日本語のテキストも折り返す。\n");
    let view = DiffView::new("src/lib.rs", Some(&old), &new);
    let theme = Theme::new(ColorDepth::Ansi256);
    for width in [1, 2, 5, 10, 20, 33, 40, 80, 200] {
        let lines = view.render(width, &theme, None);
        assert_eq!(lines.len(), view.line_count(width), "width {width}");
        if width >= 20 {
            for (index, offset) in view.hunk_line_offsets(width).into_iter().enumerate() {
                assert!(line_text(&lines[offset]).starts_with("@@"), "width {width}, hunk {index}");
            }
            let wide: Vec<_> = lines
                .iter()
                .filter(|line| crate::ui::wrap::width(line_text(line).trim_end()) > width)
                .map(line_text)
                .collect();
            assert!(wide.is_empty(), "width {width}: {wide:#?}");
        }
    }
}

#[test]
fn long_lines_wrap_under_a_blank_gutter_and_keep_every_character() {
    let old = "fn main() {}\n";
    let new = format!("fn main() {{ println!(\"{}\"); }}\n", "word ".repeat(20));
    let view = DiffView::new("main.rs", Some(old), &new);
    let lines = view.render(40, &Theme::new(ColorDepth::Ansi16), None);
    let text = texts_of(&lines);
    let first = text.iter().position(|line| line.starts_with("  1 +")).unwrap();
    assert!(text[first + 1].starts_with("      "), "{text:#?}");
    let code: String = text[first..].iter().map(|line| &line[6..]).collect::<Vec<_>>().concat();
    assert_eq!(code.trim_end(), new.trim_end());
}

#[test]
fn new_files_are_all_additions_and_crlf_is_hidden() {
    let view = DiffView::new("notes/todo.md", None, "one\r\ntwo\r\nthree");
    let lines = view.render(60, &Theme::new(ColorDepth::TrueColor), None);
    let text = texts_of(&lines);
    assert_eq!(text[0], "notes/todo.md  new file  +3");
    assert_eq!(text[1], "@@ -0,0 +1,3 @@");
    assert!(text[2].starts_with("  1 + one"));
    assert!(text.iter().all(|line| !line.contains('\r')));
    assert_eq!(text.last().map(|line| line.trim()), Some("\\ No newline at end of file"));
    assert!(DiffView::new("empty.txt", None, "").render(30, &Theme::new(ColorDepth::None), None).len() == 2);
}

#[test]
fn syntax_colours_keep_the_diff_background() {
    let old = "fn main() {\n    let x = 1;\n}\n";
    let new = "fn main() {\n    let x = 2;\n}\n";
    let view = DiffView::new("src/main.rs", Some(old), new);
    let theme = Theme::new(ColorDepth::TrueColor);
    let lines = view.render(60, &theme, None);
    let added = lines.iter().position(|line| line_text(line).contains("x = 2")).unwrap();
    let keyword = style_at(&lines, "let", added);
    assert!(matches!(keyword.fg, Some(Color::Rgb(..))), "{keyword:?}");
    assert_eq!(keyword.bg, theme.diff_add.bg);
    let context = style_at(&lines, "fn", 0);
    assert!(context.fg.is_some());
    // In 16 colours the +/- lines keep their own colour.
    let theme16 = Theme::new(ColorDepth::Ansi16);
    let lines = view.render(60, &theme16, None);
    let added = lines.iter().position(|line| line_text(line).contains("x = 2")).unwrap();
    assert_eq!(style_at(&lines, "let", added).fg, Some(Color::Green));
}

#[test]
fn parses_unified_text_when_texts_are_missing() {
    let (old, new) = texts();
    let hunks = tandem_core::diff::hunks(&old, &new, 3);
    let text = tandem_core::diff::render("src/lib.rs", &hunks, false);
    let view = DiffView::from_unified("src/lib.rs", &text, false);
    assert_eq!(view.hunks(), hunks.as_slice());
    assert_eq!(view.counts(), (3, 2));
}
