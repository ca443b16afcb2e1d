//! Tests of the dialog's key handling and answers, and of its drawing at any size.

use std::path::PathBuf;

use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use serde_json::json;
use tandem_core::diff::{apply_hunks, hunks};
use tandem_core::tools::{DiffTexts, Preview, Risk};
use tandem_protocol::{AlwaysScope, PermissionAnswer};

use super::{ALL_HUNKS_REJECTED, DialogAction, EDITOR_NOTE, PermissionDialog};
use crate::ui::theme::{ColorDepth, Theme};

/// A Rust file and an edit of it with word changes in two places far apart (two hunks).
pub(super) fn edit_texts() -> (String, String) {
    let mut old = String::from(
        "use std::collections::HashMap;\n\n/// Counts how often each word occurs.\npub fn count_words(text: &str) -> HashMap<String, usize> {\n    let mut counts = HashMap::new();\n    for word in text.split_whitespace() {\n        *counts.entry(word.to_string()).or_insert(0) += 1;\n    }\n    counts\n}\n",
    );
    for i in 1..=4 {
        old.push_str(&format!("\npub fn helper_{i}() -> usize {{\n    {i}\n}}\n"));
    }
    old.push_str("\npub fn total(counts: &HashMap<String, usize>) -> usize {\n    counts.values().sum()\n}\n");
    let new = old
        .replace("text.split_whitespace()", "text.split_ascii_whitespace()")
        .replace("word.to_string()", "word.to_lowercase()")
        .replace("    counts.values().sum()\n", "    let sum = counts.values().copied().sum();\n    sum\n");
    (old, new)
}

pub(super) fn cwd() -> PathBuf {
    PathBuf::from("/home/dev/project")
}

pub(super) fn edit_dialog() -> PermissionDialog {
    let (old, new) = edit_texts();
    let path = cwd().join("src/words.rs");
    let diff = tandem_core::diff::unified_diff("src/words.rs", &old, &new, 3);
    let preview = Preview::Diff { path, diff, new_file: false, texts: Some(DiffTexts { old: Some(old), new }) };
    let input = json!({"file_path": "/home/dev/project/src/words.rs", "old_string": "…", "new_string": "…"});
    PermissionDialog::new(
        "call_1".into(),
        "Edit".into(),
        Risk::Medium,
        input.into(),
        Some(preview),
        "Edit".into(),
        cwd(),
    )
}

pub(super) fn write_dialog() -> PermissionDialog {
    let new = "# Notes\n\n- one\n- two\n".to_owned();
    let path = cwd().join("NOTES.md");
    let diff = tandem_core::diff::new_file_diff("NOTES.md", &new);
    let preview = Preview::Diff { path, diff, new_file: true, texts: Some(DiffTexts { old: None, new }) };
    let input = json!({"file_path": "/home/dev/project/NOTES.md", "content": "…"});
    PermissionDialog::new(
        "call_2".into(),
        "Write".into(),
        Risk::Medium,
        input.into(),
        Some(preview),
        "Write".into(),
        cwd(),
    )
}

pub(super) fn bash_dialog() -> PermissionDialog {
    let command = "npm test -- --runInBand --coverage --reporters=default --reporters=jest-junit && rm -rf ./tmp/build-cache && echo \"all done\"";
    let preview = Preview::Command { command: command.into(), cwd: cwd() };
    PermissionDialog::new(
        "call_3".into(),
        "Bash".into(),
        Risk::High,
        json!({"command": command}).into(),
        Some(preview),
        "Bash(npm test:*)".into(),
        cwd(),
    )
}

pub(super) fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

pub(super) fn char_key(ch: char) -> KeyEvent {
    key(KeyCode::Char(ch))
}

fn answer(dialog: &mut PermissionDialog, event: KeyEvent) -> PermissionAnswer {
    match dialog.handle_key(event) {
        DialogAction::Answer(answer) => answer,
        other => panic!("expected an answer, got {other:?}"),
    }
}

/// Draws the dialog into a fresh buffer of `width`×`height`.
pub(super) fn draw(dialog: &PermissionDialog, width: u16, height: u16, theme: &Theme) -> Buffer {
    let area = Rect::new(0, 0, width, height);
    let mut buf = Buffer::empty(area);
    dialog.render(area, &mut buf, theme);
    buf
}

/// The buffer's text, one line per row, trailing spaces trimmed.
pub(super) fn screen(buf: &Buffer) -> String {
    let mut out = String::new();
    for y in 0..buf.area.height {
        let mut row = String::new();
        let mut skip = 0;
        for x in 0..buf.area.width {
            if skip > 0 {
                skip -= 1;
                continue;
            }
            let symbol = buf[(x, y)].symbol();
            skip = crate::ui::wrap::width(symbol).saturating_sub(1);
            row.push_str(symbol);
        }
        out.push_str(row.trim_end());
        out.push('\n');
    }
    out
}

/// Position of the first cell of `needle` on screen.
pub(super) fn find(buf: &Buffer, needle: &str) -> Option<(u16, u16)> {
    let text = screen(buf);
    text.lines().enumerate().find_map(|(y, line)| {
        let at = line.find(needle)?;
        Some((crate::ui::wrap::width(&line[..at]) as u16, y as u16))
    })
}

#[test]
fn the_dialog_can_live_in_any_app_state() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<PermissionDialog>();
    send_sync::<crate::ui::diff::DiffView>();
}

#[test]
fn answer_keys() {
    let mut dialog = bash_dialog();
    assert_eq!(dialog.call_id(), "call_3");
    assert_eq!(answer(&mut dialog, char_key('y')), PermissionAnswer::AllowOnce);
    assert_eq!(answer(&mut dialog, char_key('Y')), PermissionAnswer::AllowOnce);
    for (key, scope) in [('a', AlwaysScope::Session), ('p', AlwaysScope::Project), ('u', AlwaysScope::User)] {
        assert_eq!(
            answer(&mut dialog, char_key(key)),
            PermissionAnswer::AllowAlways { rule: "Bash(npm test:*)".into(), scope }
        );
    }
    assert_eq!(answer(&mut dialog, char_key('n')), PermissionAnswer::Deny { feedback: None });
    assert_eq!(answer(&mut dialog, key(KeyCode::Esc)), PermissionAnswer::Deny { feedback: None });
    assert_eq!(answer(&mut dialog, key(KeyCode::Enter)), PermissionAnswer::AllowOnce);
    let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
    assert_eq!(answer(&mut dialog, ctrl_c), PermissionAnswer::Deny { feedback: None });
    // Chords and key releases never answer; `e` does nothing without a diff.
    assert_eq!(dialog.handle_key(KeyEvent::new(KeyCode::Char('y'), KeyModifiers::CONTROL)), DialogAction::None);
    let release = KeyEvent::new_with_kind(KeyCode::Char('y'), KeyModifiers::NONE, KeyEventKind::Release);
    assert_eq!(dialog.handle_key(release), DialogAction::None);
    assert_eq!(dialog.handle_key(char_key('e')), DialogAction::None);
    assert_eq!(dialog.handle_key(key(KeyCode::Tab)), DialogAction::None);
}

#[test]
fn feedback_is_typed_edited_and_sent_with_the_denial() {
    let mut dialog = bash_dialog();
    assert_eq!(dialog.handle_key(char_key('f')), DialogAction::None);
    assert_eq!(dialog.feedback(), Some(""));
    for ch in "use yarnn".chars() {
        assert_eq!(dialog.handle_key(char_key(ch)), DialogAction::None);
    }
    dialog.handle_key(key(KeyCode::Backspace));
    assert_eq!(dialog.feedback(), Some("use yarn"));
    // Esc leaves the field but keeps the text; `f` comes back to it.
    dialog.handle_key(key(KeyCode::Esc));
    assert_eq!(dialog.feedback(), None);
    dialog.handle_key(char_key('f'));
    dialog.paste(" instead\nplease");
    assert_eq!(dialog.feedback(), Some("use yarn instead please"));
    dialog.handle_key(KeyEvent::new(KeyCode::Char('w'), KeyModifiers::CONTROL));
    assert_eq!(dialog.feedback(), Some("use yarn instead "));
    assert_eq!(
        answer(&mut dialog, key(KeyCode::Enter)),
        PermissionAnswer::Deny { feedback: Some("use yarn instead".into()) }
    );
    // Nothing typed: a plain denial.
    let mut dialog = bash_dialog();
    dialog.handle_key(char_key('f'));
    dialog.handle_key(char_key(' '));
    assert_eq!(answer(&mut dialog, key(KeyCode::Enter)), PermissionAnswer::Deny { feedback: None });
}

#[test]
fn editor_round_trip() {
    let (_, new) = edit_texts();
    let mut dialog = edit_dialog();
    let DialogAction::OpenEditor { path, proposed } = dialog.handle_key(char_key('e')) else { panic!("no editor") };
    assert_eq!(path, cwd().join("src/words.rs"));
    assert_eq!(proposed, new);
    assert_eq!(dialog.editor_result(new.clone()), DialogAction::Answer(PermissionAnswer::AllowOnce));
    let edited = new.replace("sum\n}", "sum // checked\n}");
    assert_eq!(
        dialog.editor_result(edited.clone()),
        DialogAction::Answer(PermissionAnswer::AllowModified { content: edited, note: EDITOR_NOTE.into() })
    );
    assert_eq!(EDITOR_NOTE, "The user edited your proposed content in their editor before it was written.");
    assert_eq!(bash_dialog().editor_result("x".into()), DialogAction::None);
    let mut write = write_dialog();
    assert!(
        matches!(write.handle_key(char_key('e')), DialogAction::OpenEditor { proposed, .. } if proposed.starts_with("# Notes"))
    );
}

#[test]
fn hunk_review_applies_exactly_the_accepted_hunks() {
    let (old, new) = edit_texts();
    let mut dialog = edit_dialog();
    assert_eq!(dialog.review().map(|review| review.accepted.clone()), Some(vec![true, true]));
    dialog.handle_key(key(KeyCode::Tab));
    assert_eq!(dialog.review().map(|review| review.current), Some(1));
    dialog.handle_key(char_key(' '));
    assert_eq!(dialog.review().map(|review| review.accepted.clone()), Some(vec![true, false]));
    let expected = apply_hunks(&old, &new, &hunks(&old, &new, 3), &[true, false]);
    let PermissionAnswer::AllowModified { content, note } = answer(&mut dialog, key(KeyCode::Enter)) else {
        panic!("expected AllowModified")
    };
    assert_eq!(content, expected);
    assert!(content.contains("split_ascii_whitespace") && !content.contains("copied()"));
    assert_eq!(
        note,
        "The user reviewed the change hunk by hunk: applied hunk 1 (@@ -3,8 +3,8 @@); rejected hunk 2 \
         (@@ -26,5 +26,6 @@), so that part of the file was not changed."
    );
}

#[test]
fn y_after_rejecting_a_hunk_writes_only_the_accepted_ones() {
    let (old, new) = edit_texts();
    for answer_key in ['y', 'a'] {
        let mut dialog = edit_dialog();
        dialog.handle_key(key(KeyCode::Tab));
        dialog.handle_key(char_key(' '));
        let PermissionAnswer::AllowModified { content, .. } = answer(&mut dialog, char_key(answer_key)) else {
            panic!("`{answer_key}` after rejecting a hunk must not write every hunk")
        };
        assert_eq!(content, apply_hunks(&old, &new, &hunks(&old, &new, 3), &[true, false]));
    }
}

#[test]
fn hunk_review_all_or_nothing() {
    let mut dialog = edit_dialog();
    assert_eq!(answer(&mut dialog, key(KeyCode::Enter)), PermissionAnswer::AllowOnce);
    dialog.handle_key(char_key(' '));
    dialog.handle_key(key(KeyCode::BackTab));
    assert_eq!(dialog.review().map(|review| review.current), Some(1));
    dialog.handle_key(char_key(' '));
    assert_eq!(
        answer(&mut dialog, key(KeyCode::Enter)),
        PermissionAnswer::Deny { feedback: Some(ALL_HUNKS_REJECTED.into()) }
    );
    // Toggling back accepts again; the editor then starts from the reviewed content.
    dialog.handle_key(char_key(' '));
    let (old, new) = edit_texts();
    let expected = apply_hunks(&old, &new, &hunks(&old, &new, 3), &[false, true]);
    assert_eq!(
        dialog.handle_key(char_key('e')),
        DialogAction::OpenEditor { path: cwd().join("src/words.rs"), proposed: expected.clone() }
    );
    // Saved as it was, that is the review's answer; changed, the editor's.
    let DialogAction::Answer(PermissionAnswer::AllowModified { content, note }) =
        dialog.editor_result(expected.clone())
    else {
        panic!("expected AllowModified")
    };
    assert_eq!(content, expected);
    assert!(note.starts_with("The user reviewed the change hunk by hunk: applied hunk 2"), "{note}");
    let edited = format!("{expected}// more\n");
    assert_eq!(
        dialog.editor_result(edited.clone()),
        DialogAction::Answer(PermissionAnswer::AllowModified { content: edited, note: EDITOR_NOTE.into() })
    );
}

#[test]
fn single_hunk_and_new_files_have_no_review() {
    let mut dialog = write_dialog();
    assert!(dialog.review().is_none());
    dialog.handle_key(char_key(' '));
    assert_eq!(answer(&mut dialog, key(KeyCode::Enter)), PermissionAnswer::AllowOnce);
    let preview = Preview::Diff {
        path: PathBuf::from("/elsewhere/a.txt"),
        diff: String::new(),
        new_file: false,
        texts: Some(DiffTexts { old: Some("a\nb\n".into()), new: "a\nc\n".into() }),
    };
    let dialog = PermissionDialog::new(
        "c".into(),
        "Edit".into(),
        Risk::Medium,
        json!({}).into(),
        Some(preview),
        "Edit".into(),
        cwd(),
    );
    assert!(dialog.review().is_none());
    let text = screen(&draw(&dialog, 60, 12, &Theme::new(ColorDepth::None)));
    assert!(text.contains("/elsewhere/a.txt"), "{text}");
}

#[test]
fn scrolling_stays_in_bounds_and_tab_brings_the_hunk_into_view() {
    let mut dialog = edit_dialog();
    let theme = Theme::new(ColorDepth::TrueColor);
    let _ = draw(&dialog, 60, 16, &theme);
    let max = dialog.max_scroll();
    assert!(max > 0);
    dialog.handle_key(key(KeyCode::Up));
    assert_eq!(dialog.scroll(), 0);
    dialog.handle_key(char_key('j'));
    dialog.handle_key(key(KeyCode::Down));
    assert_eq!(dialog.scroll(), 2);
    dialog.handle_key(char_key('k'));
    assert_eq!(dialog.scroll(), 1);
    for _ in 0..100 {
        dialog.handle_key(key(KeyCode::PageDown));
    }
    assert_eq!(dialog.scroll(), max);
    dialog.handle_key(key(KeyCode::Home));
    assert_eq!(dialog.scroll(), 0);
    dialog.handle_key(key(KeyCode::End));
    assert_eq!(dialog.scroll(), max);
    dialog.handle_key(key(KeyCode::PageUp));
    assert!(dialog.scroll() < max);
    dialog.handle_key(key(KeyCode::Home));
    dialog.handle_key(key(KeyCode::Tab));
    let buf = draw(&dialog, 60, 16, &theme);
    assert!(dialog.scroll() > 0);
    assert!(screen(&buf).contains("▶ [✓] @@ -26,5 +26,6 @@"), "{}", screen(&buf));
    // The position indicator shows while the body does not fit.
    assert!(screen(&buf).contains("↑↓"), "{}", screen(&buf));
}

/// Issue 28: in a short dialog Tab showed the hunk's header and leading context, and none of its change.
#[test]
fn tab_scrolls_the_hunks_first_change_into_view() {
    let mut dialog = edit_dialog();
    let theme = Theme::new(ColorDepth::TrueColor);
    let _ = draw(&dialog, 60, 8, &theme);
    dialog.handle_key(key(KeyCode::Tab));
    let shown = screen(&draw(&dialog, 60, 8, &theme));
    assert!(shown.contains("counts.values().sum()") && shown.contains(" - "), "the removed line:\n{shown}");
    dialog.handle_key(key(KeyCode::Tab));
    let shown = screen(&draw(&dialog, 60, 8, &theme));
    assert!(shown.contains("split_whitespace()"), "back at the first hunk's change:\n{shown}");
}

#[test]
fn shows_the_rule_that_a_remembers_and_colours_the_risk() {
    let theme = Theme::new(ColorDepth::TrueColor);
    let dialog = bash_dialog();
    let buf = draw(&dialog, 100, 30, &theme);
    let text = screen(&buf);
    assert!(text.contains("a always allow Bash(npm test:*) this session"), "{text}");
    let (x, y) = find(&buf, "high risk").unwrap_or_else(|| panic!("{text}"));
    assert_eq!(buf[(x, y)].fg, theme.risk_high.fg.unwrap_or_default());
    // The whole command is there, wrapped, never cut.
    let command: String = text.lines().filter(|line| line.contains('│')).collect::<Vec<_>>().join("\n");
    for word in ["--runInBand", "jest-junit", "./tmp/build-cache", "\"all", "done\""] {
        assert!(command.contains(word), "{word}: {text}");
    }
    let narrow = screen(&draw(&dialog, 40, 20, &theme));
    assert!(narrow.contains("Bash(npm test:*)"), "{narrow}");
    assert!(narrow.contains("build-cache"), "{narrow}");
}

#[test]
fn diff_cells_carry_the_theme_styles() {
    let theme = Theme::new(ColorDepth::TrueColor);
    let mut dialog = edit_dialog();
    let buf = draw(&dialog, 100, 30, &theme);
    let text = screen(&buf);
    // A + line: theme background; its changed word: the word background.
    let (x, y) = find(&buf, "text.split_ascii_whitespace").unwrap_or_else(|| panic!("{text}"));
    assert_eq!(buf[(x, y)].bg, theme.diff_add.bg.unwrap_or_default());
    let (x, y) = find(&buf, "split_ascii_whitespace").unwrap_or_else(|| panic!("{text}"));
    assert_eq!(buf[(x, y)].bg, theme.diff_add_word.bg.unwrap_or_default());
    let (x, y) = find(&buf, "split_whitespace").unwrap_or_else(|| panic!("{text}"));
    assert_eq!(buf[(x, y)].bg, theme.diff_del_word.bg.unwrap_or_default());
    // Reject hunk 2: its lines are drawn crossed out.
    dialog.handle_key(key(KeyCode::Tab));
    dialog.handle_key(char_key(' '));
    let buf = draw(&dialog, 100, 30, &theme);
    let (x, y) = find(&buf, "copied()").unwrap_or_else(|| panic!("{}", screen(&buf)));
    assert!(buf[(x, y)].modifier.contains(Modifier::CROSSED_OUT));
    assert_eq!(buf[(x, y)].fg, theme.diff_rejected.fg.unwrap_or_default());
}

#[test]
fn other_tools_show_their_input() {
    let input = json!({"url": "https://example.com/docs", "prompt": "summarise"});
    let dialog =
        PermissionDialog::new("c9".into(), "WebFetch".into(), Risk::Low, input.into(), None, "WebFetch".into(), cwd());
    let text = screen(&draw(&dialog, 80, 16, &Theme::new(ColorDepth::Ansi16)));
    assert!(text.contains("Allow WebFetch? low risk"), "{text}");
    assert!(text.contains("\"url\": \"https://example.com/docs\""), "{text}");
    assert!(!text.contains("edit first"), "{text}");
}

#[test]
fn any_size_draws_without_panicking() {
    let theme = Theme::new(ColorDepth::Ansi256);
    let mut feedback = bash_dialog();
    feedback.handle_key(char_key('f'));
    feedback.paste("a rather long piece of feedback that will not fit in a narrow field at all");
    let dialogs = [edit_dialog(), write_dialog(), bash_dialog(), feedback];
    for dialog in &dialogs {
        for (width, height) in [(0, 0), (1, 1), (2, 3), (5, 2), (20, 8), (40, 20), (33, 7), (100, 30), (250, 70)] {
            let _ = draw(dialog, width, height, &theme);
        }
    }
    // Drawing into a sub-area of a bigger buffer stays inside it.
    let mut buf = Buffer::empty(Rect::new(0, 0, 50, 20));
    dialogs[0].render(Rect::new(45, 15, 20, 10), &mut buf, &theme);
    let tiny = screen(&draw(&dialogs[2], 20, 8, &theme));
    assert!(tiny.lines().next().is_some_and(|line| line.starts_with('┌')), "{tiny}");
}
