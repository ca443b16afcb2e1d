use ratatui::style::{Color, Modifier};

use super::*;
use crate::ui::theme::ColorDepth;
use crate::ui::wrap::line_text;

fn theme() -> Theme {
    Theme::new(ColorDepth::TrueColor)
}

fn texts(lines: &[Line<'_>]) -> Vec<String> {
    lines.iter().map(line_text).collect()
}

fn render(text: &str, width: usize) -> Vec<String> {
    texts(&render_markdown(text, width, &theme()))
}

/// The first span containing `needle`, across all lines.
fn span_with<'a>(lines: &'a [Line<'static>], needle: &str) -> &'a Span<'static> {
    lines.iter().flat_map(|line| &line.spans).find(|span| span.content.contains(needle)).expect("span not found")
}

fn assert_fits(lines: &[Line<'_>], width: usize) {
    for line in lines {
        let text = line_text(line);
        assert!(text_width(&text) <= width.max(1), "{text:?} is wider than {width}");
    }
}

const ANSWER: &str = "# Fixing the build

The linker fails because `libfoo` is *missing*. See [the docs](https://example.com/docs) or <https://example.com>.

## Steps

1. Install the package:
   ```sh
   sudo apt-get install libfoo-dev
   ```
2. Rebuild with **all** features, then run the whole test suite to be sure nothing else regressed.
   - unit tests
   - integration tests
     - the slow ones
3. Done.

- [x] reproduce
- [ ] fix

> Note: this only affects Linux builds, and only with ~~old~~ outdated toolchains.

| Platform | Status | Notes |
|----------|:------:|------:|
| Linux | broken | needs libfoo from the distribution packages |
| macOS | ok | — |

---

```rust
fn main() {
    println!(\"a very long line of code that certainly does not fit in forty columns of terminal\");
}
```
";

#[test]
fn headings_drop_marks_and_use_the_heading_style() {
    let lines = render_markdown("# Title\n\nBody text\n\n### Third", 40, &theme());
    assert_eq!(texts(&lines), ["Title", "", "Body text", "", "Third"]);
    let heading = span_with(&lines, "Title");
    assert!(heading.style.add_modifier.contains(Modifier::BOLD));
    assert_eq!(heading.style.fg, theme().heading.fg);
    assert!(heading.style.fg.is_some());
    assert_eq!(span_with(&lines, "Body").style.fg, None);
}

#[test]
fn paragraphs_soft_and_hard_breaks() {
    assert_eq!(render("one\ntwo", 40), ["one two"]);
    assert_eq!(render("one  \ntwo\\\nthree", 40), ["one", "two", "three"]);
    assert_eq!(render("first\n\n\n\nsecond", 40), ["first", "", "second"]);
    assert_eq!(render("the quick brown fox jumps", 10), ["the quick", "brown fox", "jumps"]);
}

#[test]
fn emphasis_strong_strikethrough() {
    let lines = render_markdown("*it* **bold** ~~gone~~ ***both***", 40, &theme());
    assert_eq!(texts(&lines), ["it bold gone both"]);
    assert!(span_with(&lines, "it").style.add_modifier.contains(Modifier::ITALIC));
    assert!(span_with(&lines, "bold").style.add_modifier.contains(Modifier::BOLD));
    assert!(span_with(&lines, "gone").style.add_modifier.contains(Modifier::CROSSED_OUT));
    assert!(span_with(&lines, "both").style.add_modifier.contains(Modifier::BOLD | Modifier::ITALIC));
}

#[test]
fn inline_code_is_styled_without_backticks() {
    let lines = render_markdown("run `cargo test` now", 40, &theme());
    assert_eq!(texts(&lines), ["run cargo test now"]);
    assert_eq!(span_with(&lines, "cargo test").style.fg, theme().inline_code.fg);
    // Without colours the backticks are all that sets code apart.
    let plain = render_markdown("run `cargo test` now", 40, &Theme::new(ColorDepth::None));
    assert_eq!(texts(&plain), ["run `cargo test` now"]);
}

#[test]
fn links_show_their_address_when_it_differs() {
    let lines = render_markdown("see [the docs](https://x.dev/docs) and <https://x.dev>", 80, &theme());
    assert_eq!(texts(&lines), ["see the docs (https://x.dev/docs) and https://x.dev"]);
    let link = span_with(&lines, "the docs");
    assert_eq!(link.style.fg, theme().link.fg);
    assert!(link.style.add_modifier.contains(Modifier::UNDERLINED));
    assert_eq!(span_with(&lines, "(https://x.dev/docs)").style.fg, theme().dim.fg);
    assert_eq!(render("mail <a@b.co>, ![logo](logo.png)", 80), ["mail a@b.co, logo (logo.png)"]);
}

#[test]
fn lists_have_markers_and_hanging_indents() {
    assert_eq!(render("- the quick brown fox jumps\n- lazy", 12), ["• the quick", "  brown fox", "  jumps", "• lazy"]);
    assert_eq!(render("3. three\n4. four is longer", 10), ["3. three", "4. four is", "   longer"]);
    assert_eq!(render("para\n- a\n- b\n\nafter", 20), ["para", "", "• a", "• b", "", "after"]);
    // Loose lists keep their gaps.
    assert_eq!(render("- a\n\n- b", 20), ["• a", "", "• b"]);
}

#[test]
fn nested_lists() {
    assert_eq!(
        render("- a\n  - b\n    - c\n      - d\n- e\n\n1. one\n   - sub\n2. two", 40),
        ["• a", "  ◦ b", "    ▪ c", "      • d", "• e", "", "1. one", "   ◦ sub", "2. two"]
    );
    assert_eq!(render("- a\n  - bbb ccc", 7), ["• a", "  ◦ bbb", "    ccc"]);
}

#[test]
fn task_lists() {
    let lines = render_markdown("- [x] done\n- [ ] todo item here", 12, &theme());
    assert_eq!(texts(&lines), ["[x] done", "[ ] todo", "    item", "    here"]);
    assert_eq!(render("1. [ ] first\n2. [x] second", 40), ["1. [ ] first", "2. [x] second"]);
    assert_eq!(span_with(&lines, "[x]").style.fg, theme().success.fg);
}

#[test]
fn block_quotes() {
    let lines = render_markdown("> quoted *text* that wraps\n>\n> second\n\nafter", 14, &theme());
    assert_eq!(texts(&lines), ["│ quoted text", "│ that wraps", "│", "│ second", "", "after"]);
    assert!(span_with(&lines, "quoted").style.add_modifier.contains(Modifier::ITALIC));
    assert_eq!(render("> - a\n> - b", 20), ["│ • a", "│ • b"]);
    assert_eq!(render("> > deep", 20), ["│ │ deep"]);
}

#[test]
fn horizontal_rule_spans_the_width() {
    let lines = render_markdown("a\n\n---\n\nb", 10, &theme());
    assert_eq!(texts(&lines), ["a", "", "──────────", "", "b"]);
    assert_eq!(lines[2].spans[0].style, theme().dim);
}

#[test]
fn code_is_highlighted_and_hard_broken_with_a_marker() {
    let text = "```rust\nfn main() { let value = compute(1, 2); }\n\n    indented();\n```";
    let lines = render_markdown(text, 24, &theme());
    assert_eq!(texts(&lines), ["  fn main() { let value ", "↪ = compute(1, 2); }", "  ", "      indented();"]);
    assert!(lines[0].spans.iter().filter(|span| !span.content.trim().is_empty()).all(|span| span.style.fg.is_some()));
    assert_fits(&lines, 24);
    // Unknown language, indented block: plain code style.
    let plain = render_markdown("text\n\n    x = 1\n\nafter", 40, &theme());
    assert_eq!(texts(&plain), ["text", "", "  x = 1", "", "after"]);
    assert_eq!(span_with(&plain, "x = 1").style, theme().code_block);
}

#[test]
fn streaming_prefixes_render_reasonably() {
    assert_eq!(render("Intro\n\n```python\ndef f():\n    ret", 40), ["Intro", "", "  def f():", "      ret"]);
    assert_eq!(render("- one\n- tw", 40), ["• one", "• tw"]);
    assert_eq!(render("- one\n-", 40), ["• one", "•"]);
    assert_eq!(render("| a | b |\n|---|", 40), ["| a | b | |---|"]);
    assert_eq!(render("| a | b |\n|---|---|\n| 1", 40), ["a │ b", "──┼──", "1 │"]);
    assert_eq!(render("**bold and `code", 40), ["**bold and `code"]);
    // Every prefix of a real answer renders within the width.
    let mut end = 0;
    while end < ANSWER.len() {
        end += 1;
        while !ANSWER.is_char_boundary(end) {
            end += 1;
        }
        assert_fits(&render_markdown(&ANSWER[..end], 30, &theme()), 30);
    }
}

#[test]
fn tables_pad_wrap_and_fall_back() {
    let text = "| Name | Value |\n|---|---:|\n| a | 1 |\n| bbb | 22 |";
    let lines = render_markdown(text, 40, &theme());
    assert_eq!(texts(&lines), ["Name │ Value", "─────┼──────", "a    │     1", "bbb  │    22"]);
    assert!(span_with(&lines, "Name").style.add_modifier.contains(Modifier::BOLD));

    // Too wide: the widest column wraps its cells, words whole, nothing cut.
    let wide = "| Key | Description |\n|---|---|\n| x | a rather long description of the key |";
    let lines = render(wide, 24);
    assert_eq!(
        lines,
        [
            "Key │ Description",
            "────┼───────────────────",
            "x   │ a rather long",
            "    │ description of the",
            "    │ key"
        ]
    );

    // Once a row takes several lines, a rule separates the rows.
    let two = "| K | Text |\n|---|---|\n| a | one two three four |\n| b | five |";
    assert_eq!(
        render(two, 14),
        ["K │ Text", "──┼───────────", "a │ one two", "  │ three four", "──┼───────────", "b │ five"]
    );

    // Too many columns for the width: each row a block of "header: value" lines.
    let many = "| a | b | c | d | e |\n|-|-|-|-|-|\n| 1 | 2 | 3 | 4 | 5 |\n| 6 | 7 | 8 | 9 | 10 |";
    assert_eq!(render(many, 12), ["a: 1", "b: 2", "c: 3", "d: 4", "e: 5", "", "a: 6", "b: 7", "c: 8", "d: 9", "e: 10"]);
    let lines = render_markdown(many, 12, &theme());
    assert!(span_with(&lines, "a").style.add_modifier.contains(Modifier::BOLD));
    let long = "| Option | Meaning |\n|-|-|\n| --verbose | prints every step it takes |";
    assert_eq!(render(long, 14), ["Option:", "  --verbose", "Meaning:", "  prints every", "  step it", "  takes"]);
}

#[test]
fn tiny_widths_do_not_panic_and_fit() {
    for width in 0..=12 {
        let lines = render_markdown(ANSWER, width, &theme());
        assert!(!lines.is_empty());
        assert_fits(&lines, width);
    }
    assert_eq!(render("hello", 0), ["h", "e", "l", "l", "o"]);
}

#[test]
fn no_color_is_still_readable() {
    let lines = render_markdown(ANSWER, 80, &Theme::new(ColorDepth::None));
    for span in lines.iter().flat_map(|line| &line.spans) {
        assert!(matches!(span.style.fg, None | Some(Color::Reset)), "{span:?} has a colour");
    }
    let text = texts(&lines).join("\n");
    for needle in ["Fixing the build", "`libfoo`", "1. Install", "◦ unit tests", "[x] reproduce", "│ Note", "  fn main"]
    {
        assert!(text.contains(needle), "{needle:?} missing from\n{text}");
    }
    assert!(span_with(&lines, "Fixing").style.add_modifier.contains(Modifier::BOLD));
}

#[test]
fn blank_lines_only_between_blocks() {
    let lines = render("\n\n# A\n\ntext\n\n```\ncode\n```\n\n\n", 40);
    assert_eq!(lines, ["A", "", "text", "", "  code"]);
    assert!(render("", 40).is_empty());
}

#[test]
fn html_is_shown_raw() {
    assert_eq!(
        render("<details>\n<summary>x</summary>\n</details>", 40),
        ["<details>", "<summary>x</summary>", "</details>"]
    );
    assert_eq!(render("a <br> b", 40), ["a <br> b"]);
}

#[test]
fn control_characters_are_shown_not_sent() {
    assert_eq!(render("red \x1b[31mtext\x07", 40), ["red \u{241b}[31mtext\u{2407}"]);
    assert_eq!(render("```\nx\x1b[2J\n```", 40), ["  x\u{241b}[2J"]);
    assert_eq!(render("a\tb", 40), ["a b"]);
}

#[test]
fn extracts_fenced_code_blocks() {
    let text = "x\n\n```rust,ignore\nfn a() {}\n```\n\n    indented\n\n~~~\nplain\n~~~\n\n```py\nunclosed";
    assert_eq!(
        code_blocks(text),
        [
            CodeBlock { lang: Some("rust".into()), code: "fn a() {}".into() },
            CodeBlock { lang: None, code: "plain".into() },
            CodeBlock { lang: Some("py".into()), code: "unclosed".into() },
        ]
    );
    assert!(code_blocks("no code").is_empty());
}

#[test]
fn long_answers_render_in_linear_time() {
    let chunk = "## Part\n\nSome *text* with `code` and a [link](https://x.dev).\n\n- item one\n- item two\n\n```rust\nlet x = 1;\n```\n\n";
    let text = chunk.repeat(2000 / chunk.lines().count());
    let start = std::time::Instant::now();
    let lines = render_markdown(&text, 80, &theme());
    assert!(lines.len() > 1000);
    eprintln!("{} lines in {:?}", lines.len(), start.elapsed());
    assert!(start.elapsed() < std::time::Duration::from_secs(10), "took {:?}", start.elapsed());
}

#[test]
fn snapshot_answer_at_40_and_80() {
    insta::with_settings!({ snapshot_path => "../snapshots" }, {
        insta::assert_snapshot!("answer_width_40", render(ANSWER, 40).join("\n"));
        insta::assert_snapshot!("answer_width_80", render(ANSWER, 80).join("\n"));
    });
}
