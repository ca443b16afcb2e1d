use std::path::PathBuf;
use std::time::{Duration, Instant};

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::widgets::Paragraph;
use serde_json::json;

use super::*;
use crate::ui::theme::ColorDepth;
use crate::ui::wrap::line_text;
use tandem_core::tools::DiffTexts;

/// Snapshots go next to the other UI snapshots (`ui/snapshots`).
macro_rules! snapshot {
    ($name:expr, $value:expr) => {
        insta::with_settings!({ snapshot_path => "../snapshots" }, { insta::assert_snapshot!($name, $value) })
    };
}

fn theme() -> Theme {
    Theme::new(ColorDepth::TrueColor)
}

/// A card as the app holds it once core described the call (kind, summary), as for a live call.
fn card(name: &str, input: serde_json::Value, state: ToolState) -> ToolCard {
    let mut card = ToolCard::new("call_1".into(), name.into(), input.into());
    card.state = state;
    let context = tandem_core::tools::ToolContext::new(PathBuf::from("/work/project"));
    card.kind = tandem_core::tools::ToolRegistry::builtin().describe(name, &card.input, &context).kind;
    card
}

/// A finished card with core's view of its result, as `ToolCallFinished` brings it.
fn done(name: &str, input: serde_json::Value, output: &str, ms: u64) -> ToolCard {
    let mut card = card(name, input, ToolState::Finished(ToolCallStatus::Completed));
    card.output = output.into();
    card.duration_ms = Some(ms);
    card.view = tandem_core::tools::ToolRegistry::builtin().result_view(name, &card.input, output);
    card
}

/// Draws lines through a real terminal backend (as the transcript would) and returns its text.
fn draw(lines: Vec<Line<'static>>, width: usize) -> String {
    let height = lines.len().max(1) as u16;
    let mut terminal = Terminal::new(TestBackend::new(width as u16, height)).expect("test backend");
    terminal.draw(|frame| frame.render_widget(Paragraph::new(lines), frame.area())).expect("draw");
    terminal.backend().to_string()
}

fn render(card: &ToolCard, expanded: bool, width: usize, now: Instant) -> String {
    let lines = render_tool_card(card, expanded, width, &theme(), now);
    assert!(lines.iter().all(|line| line.width() <= width), "{:?}", lines.iter().map(line_text).collect::<Vec<_>>());
    draw(lines, width)
}

fn numbered(count: usize) -> String {
    (1..=count).map(|n| format!("{n:>6}\tline {n}")).collect::<Vec<_>>().join("\n")
}

#[test]
fn streaming_and_awaiting_approval() {
    let now = Instant::now();
    let streaming = card("Write", json!({"file_path": "src/lib.rs"}), ToolState::Streaming);
    snapshot!("tool_card_streaming", render(&streaming, false, 80, now));
    let awaiting = card("Bash", json!({"command": "cargo test --all"}), ToolState::AwaitingApproval);
    let text = render(&awaiting, false, 80, now);
    assert!(text.contains("? Bash(cargo test --all) · waiting for approval"), "{text}");
    snapshot!("tool_card_awaiting_approval", text);
}

#[test]
fn running_spinner_and_elapsed_follow_the_clock() {
    let now = Instant::now();
    let mut running =
        card("Bash", json!({"command": "cargo build"}), ToolState::Running { since: now - Duration::from_secs(3) });
    running.output = "   Compiling a v0.1.0\n   Compiling b v0.1.0\n".into();
    let text = render(&running, false, 80, now);
    assert!(text.contains("⠋ Bash(cargo build) · 3s"), "{text}");
    snapshot!("tool_card_running", text);
    let later = render(&running, false, 80, now + Duration::from_millis(250));
    assert!(later.contains("⠹ Bash"), "{later}");
}

#[test]
fn done_with_duration() {
    let now = Instant::now();
    let read = done("Read", json!({"file_path": "src/main.rs"}), &numbered(120), 42);
    let text = render(&read, false, 80, now);
    assert!(text.contains("Read 120 lines (ctrl+o to expand)"), "{text}");
    snapshot!("tool_card_done_read", text);

    let partial = format!("{}\n\n[Showing lines 1-3 of 500. Use offset=4 to read more.]", numbered(3));
    let read = done("Read", json!({"file_path": "big.rs"}), &partial, 42);
    assert!(render(&read, false, 80, now).contains("Read 3 lines of 500"));
    let empty = done("Read", json!({"file_path": "e.rs"}), "The file e.rs exists but is empty (0 lines).", 1);
    assert!(render(&empty, false, 80, now).contains("Read 0 lines (empty file)"));
}

#[test]
fn searches_summarize() {
    let now = Instant::now();
    let grep = done(
        "Grep",
        json!({"pattern": "fn main", "path": "crates"}),
        "Found 5 files\ncrates/a.rs\ncrates/b.rs\ncrates/c.rs\ncrates/d.rs\ncrates/e.rs",
        15,
    );
    snapshot!("tool_card_grep", render(&grep, false, 80, now));
    let glob = done("Glob", json!({"pattern": "**/*.toml"}), "Cargo.toml\ncrates/a/Cargo.toml", 3);
    let text = render(&glob, false, 80, now);
    assert!(text.contains("Found 2 files"), "{text}");
    let none = done("Glob", json!({"pattern": "*.zig"}), "No files found", 3);
    assert!(render(&none, false, 80, now).contains("No files found"));
    let many = done(
        "Glob",
        json!({"pattern": "*"}),
        "a\nb\n(98 more not shown: 100 files matched. Use a more specific pattern or path.)",
        3,
    );
    assert!(render(&many, false, 80, now).contains("Found 100 files"));
}

#[test]
fn failed_denied_interrupted() {
    let now = Instant::now();
    let mut failed =
        done("Bash", json!({"command": "cargo test"}), "error[E0425]: cannot find value `x`\nExit code: 101", 5_400);
    failed.state = ToolState::Finished(ToolCallStatus::Failed);
    failed.is_error = true;
    snapshot!("tool_card_failed", render(&failed, false, 80, now));
    let lines = render_tool_card(&failed, false, 80, &theme(), now);
    assert_eq!(lines[0].spans[0].content, "✗");
    assert_eq!(lines[0].spans[0].style, theme().error);
    assert_eq!(lines[1].spans[1].style, theme().error);

    let mut denied = card("Edit", json!({"file_path": "src/lib.rs"}), ToolState::Finished(ToolCallStatus::Denied));
    denied.output = "The user denied permission to use Edit; it was not run.\nReason: not now".into();
    denied.is_error = true;
    let text = render(&denied, false, 80, now);
    assert!(text.contains("⊘ Edit(src/lib.rs) · denied") && !text.contains("Reason"), "{text}");
    snapshot!("tool_card_denied", text);
    assert_eq!(render_tool_card(&denied, false, 80, &theme(), now)[0].spans[0].style, theme().warning);

    let mut interrupted =
        done("Bash", json!({"command": "sleep 100"}), "Command was interrupted by the user and killed.", 2_000);
    interrupted.state = ToolState::Finished(ToolCallStatus::Interrupted);
    snapshot!("tool_card_interrupted", render(&interrupted, false, 80, now));
}

#[test]
fn bash_long_output_collapsed_and_expanded() {
    let now = Instant::now();
    let output: String = (1..=12).map(|n| format!("\u{1b}[32mok\u{1b}[0m test_{n}\n")).collect();
    let bash = done("Bash", json!({"command": "cargo test\necho done"}), &output, 12_345);
    let collapsed = render(&bash, false, 60, now);
    assert!(collapsed.contains("Bash(cargo test …) · 12.3s"), "{collapsed}");
    // The verdict is at the end: the last lines show.
    assert!(collapsed.contains("… +8 lines above (ctrl+o to expand)") && !collapsed.contains('\u{1b}'), "{collapsed}");
    assert!(collapsed.contains("test_12") && !collapsed.contains("test_1 "), "{collapsed}");
    snapshot!("tool_card_bash_collapsed", collapsed);
    let expanded = render(&bash, true, 60, now);
    assert!(expanded.contains("test_12") && !expanded.contains("ctrl+o"), "{expanded}");
    snapshot!("tool_card_bash_expanded", expanded);

    // While running, the newest lines show.
    let mut running = bash.clone();
    running.state = ToolState::Running { since: now - Duration::from_secs(12) };
    let text = render(&running, false, 60, now);
    assert!(text.contains("test_12") && !text.contains("test_1 ") && text.contains("… +8 lines"), "{text}");
    let progress = done("Bash", json!({"command": "dl"}), "10%\r50%\r100%\n", 1);
    assert!(render(&progress, false, 60, now).contains("⎿ 100%"));
}

#[test]
fn an_edit_card_keeps_the_applied_diff() {
    let now = Instant::now();
    let output = "The file src/lib.rs has been updated. Here's the result of running `cat -n` on a snippet of the edited file:\n     1\tfn a() {}\n     2\tfn b() {}";
    let mut edit = done("Edit", json!({"file_path": "src/lib.rs", "old_string": "x", "new_string": "y"}), output, 8);
    edit.preview = Some(Preview::Diff {
        path: PathBuf::from("src/lib.rs"),
        diff: "--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1,3 +1,4 @@\n fn a() {}\n-fn x() {}\n+fn b() {}\n+fn c() {}\n+++counter\n".into(),
        new_file: false,
        texts: None,
    });
    let text = render(&edit, false, 80, now);
    assert!(text.contains("src/lib.rs  +3 −1") && text.contains("- fn x() {}"), "{text}");
    assert!(!text.contains("cat -n"), "{text}");
    snapshot!("tool_card_edit_diff", text);
    let lines = render_tool_card(&edit, false, 80, &theme(), now);
    let added = lines.iter().find(|line| crate::ui::wrap::line_text(line).contains("+ fn b() {}")).unwrap();
    assert!(added.spans.iter().any(|span| span.style.bg.is_some()), "added lines are coloured: {added:?}");
    snapshot!("tool_card_edit_expanded", render(&edit, true, 80, now));
    // A long diff is collapsed to its first lines, and ctrl+o shows the rest.
    let new: String = (0..40).map(|n| format!("line {n}\n")).collect();
    let mut long = done("Write", json!({"file_path": "/work/project/notes.txt", "content": new}), "Wrote it", 3)
        .in_dir(std::path::Path::new("/work/project"));
    long.preview = Some(Preview::Diff {
        path: PathBuf::from("/work/project/notes.txt"),
        diff: String::new(),
        new_file: true,
        texts: Some(DiffTexts { old: None, new }),
    });
    let collapsed = render(&long, false, 80, now);
    assert!(collapsed.contains("Write(notes.txt)") && collapsed.contains("notes.txt  new file  +40"), "{collapsed}");
    assert!(collapsed.contains("(ctrl+o to expand)") && !collapsed.contains("line 39"), "{collapsed}");
    assert!(render(&long, true, 80, now).contains("line 39"));
}

#[test]
fn grouped_read_only_calls() {
    let now = Instant::now();
    let cards = [
        done("Read", json!({"file_path": "src/main.rs"}), &numbered(10), 3),
        done("Read", json!({"file_path": "src/lib.rs"}), &numbered(10), 3),
        done("Grep", json!({"pattern": "TODO"}), "Found 1 file\nsrc/a.rs", 3),
        done("Read", json!({"file_path": "Cargo.toml"}), &numbered(10), 3),
        done("Glob", json!({"pattern": "**/*.md"}), "README.md", 3),
        done("Read", json!({"file_path": "README.md"}), &numbered(10), 3),
    ];
    let refs: Vec<&ToolCard> = cards.iter().collect();
    let lines = render_tool_group(&refs, 80, &theme(), now);
    assert_eq!(line_text(&lines[0]), "● Read 4 files, searched 2 patterns");
    assert_eq!(lines[1].spans.last().map(|span| span.style), Some(theme().dim));
    snapshot!("tool_card_group", draw(lines, 80));
    let one = [&cards[2]];
    assert_eq!(line_text(&render_tool_group(&one, 80, &theme(), now)[0]), "● Searched 1 pattern");
}

#[test]
fn narrow_width() {
    let now = Instant::now();
    let path = "crates/tui/src/ui/some/deeply/nested/module/file_name.rs";
    let read = done("Read", json!({"file_path": path}), &numbered(7), 1_500);
    let text = render(&read, false, 40, now);
    assert!(text.contains("…) · 1.5s"), "{text}");
    snapshot!("tool_card_narrow_40", text);
    let bash = done("Bash", json!({"command": "echo a very long line of output"}), &"word ".repeat(40), 1);
    snapshot!("tool_card_narrow_40_bash_expanded", render(&bash, true, 40, now));
    for width in [1, 3, 8, 12] {
        render(&bash, false, width, now);
        render_tool_group(&[&read], width, &theme(), now);
    }
}

#[test]
fn cleans_control_sequences_and_tabs() {
    assert_eq!(clean("\u{1b}[1;31mred\u{1b}[0m"), "red");
    assert_eq!(clean("\u{1b}]0;title\u{7}x"), "x");
    assert_eq!(clean("a\tb"), "a   b");
    assert_eq!(clean("     1\tx"), "     1  x");
    assert_eq!(clean("bell\u{7}"), "bell");
}

/// Issue 28: a collapsed Edit card showed the hunk's leading context and the removed line, and hid what was
/// written behind "… +4 lines". Collapsed, a card keeps one line of context around each change, so an edit of a
/// few lines shows all of its new code.
#[test]
fn a_collapsed_edit_card_shows_what_was_written() {
    let old: String = (1..=20).map(|n| format!("fn f{n}() {{}}\n")).collect();
    let written = "fn g1() {}\nfn g2() {}\nfn g3() {}\nfn g4() {}\nfn g5() {}\n";
    let new = old.replace("fn f10() {}\n", written);
    let mut edit = done("Edit", json!({"file_path": "src/lib.rs", "old_string": "x", "new_string": "y"}), "ok", 8);
    edit.preview = Some(Preview::Diff {
        path: PathBuf::from("src/lib.rs"),
        diff: tandem_core::diff::unified_diff("src/lib.rs", &old, &new, 3),
        new_file: false,
        texts: Some(DiffTexts { old: Some(old.clone()), new: new.clone() }),
    });
    let text = render(&edit, false, 80, Instant::now());
    for n in 1..=5 {
        assert!(text.contains(&format!("+ fn g{n}() {{}}")), "g{n} written:\n{text}");
    }
    assert!(!text.contains("fn f7()") && !text.contains("ctrl+o"), "one line of context, nothing hidden:\n{text}");
    assert!(text.contains("@@ -9,3 +9,7 @@") && text.contains(" 9  9   fn f9()"), "numbered as in the file:\n{text}");
    assert!(render(&edit, true, 80, Instant::now()).contains("fn f7()"), "expanded: the whole hunk");
}
