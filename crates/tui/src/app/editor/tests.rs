use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use super::*;

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn ctrl(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
}

fn alt(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::ALT)
}

fn with(code: KeyCode, modifiers: KeyModifiers) -> KeyEvent {
    KeyEvent::new(code, modifiers)
}

fn typed(text: &str) -> Editor {
    let mut editor = Editor::default();
    type_str(&mut editor, text);
    editor
}

fn type_str(editor: &mut Editor, text: &str) {
    for c in text.chars() {
        let code = if c == '\n' { KeyCode::Enter } else { KeyCode::Char(c) };
        let modifiers = if c == '\n' { KeyModifiers::SHIFT } else { KeyModifiers::NONE };
        editor.handle_key(with(code, modifiers));
    }
}

fn press(editor: &mut Editor, keys: &[KeyEvent]) {
    for key in keys {
        editor.handle_key(*key);
    }
}

/// The text with `|` at the cursor.
fn shown(editor: &Editor) -> String {
    let mut text = editor.display_text().to_owned();
    text.insert(editor.cursor(), '|');
    text
}

fn history(entries: &[&str]) -> History {
    let mut history = History::in_memory();
    for entry in entries {
        history.push(*entry);
    }
    history
}

#[test]
fn typing_and_submitting() {
    let mut editor = typed("hello");
    assert_eq!(shown(&editor), "hello|");
    assert_eq!(editor.handle_key(key(KeyCode::Enter)), EditorAction::Submit("hello".into()));
    assert!(editor.is_empty());
    assert_eq!(editor.history().get(0), Some("hello"));
    // Blank input does not submit and stays.
    type_str(&mut editor, "  \n ");
    assert_eq!(editor.handle_key(key(KeyCode::Enter)), EditorAction::None);
    assert_eq!(editor.display_text(), "  \n ");
    // Key releases are ignored.
    let release = KeyEvent { kind: KeyEventKind::Release, ..key(KeyCode::Char('x')) };
    assert_eq!(editor.handle_key(release), EditorAction::None);
    assert_eq!(editor.handle_key(key(KeyCode::Char('x'))), EditorAction::Changed);
}

#[test]
fn newline_keys() {
    let mut editor = typed("a");
    assert_eq!(editor.handle_key(with(KeyCode::Enter, KeyModifiers::SHIFT)), EditorAction::Changed);
    editor.handle_key(with(KeyCode::Enter, KeyModifiers::ALT));
    editor.handle_key(ctrl('j'));
    type_str(&mut editor, "b\\");
    assert_eq!(editor.handle_key(key(KeyCode::Enter)), EditorAction::Changed);
    assert_eq!(shown(&editor), "a\n\n\nb\n|");
    // A backslash elsewhere is just text.
    let mut editor = typed("a\\b");
    assert_eq!(editor.handle_key(key(KeyCode::Enter)), EditorAction::Submit("a\\b".into()));
}

#[test]
fn wide_and_emoji_graphemes() {
    // Typed as separate code points: `e` then a combining accent make one grapheme.
    let mut editor = typed("日本👍🏽e\u{301}");
    editor.handle_key(key(KeyCode::Left));
    assert_eq!(shown(&editor), "日本👍🏽|e\u{301}");
    editor.handle_key(key(KeyCode::Left));
    assert_eq!(shown(&editor), "日本|👍🏽e\u{301}");
    editor.handle_key(key(KeyCode::Backspace));
    assert_eq!(shown(&editor), "日|👍🏽e\u{301}");
    editor.handle_key(key(KeyCode::Delete));
    assert_eq!(shown(&editor), "日|e\u{301}");
    editor.handle_key(key(KeyCode::Right));
    editor.handle_key(key(KeyCode::Right));
    assert_eq!(shown(&editor), "日e\u{301}|");
    assert_eq!(editor.cursor_position(40), (0, 3));
    // A family emoji typed as its separate code points ends as one grapheme.
    let mut editor = typed("👨\u{200d}👩\u{200d}👧");
    editor.handle_key(key(KeyCode::Backspace));
    assert!(editor.is_empty());
}

#[test]
fn line_motions() {
    let mut editor = typed("one\ntwo three");
    press(&mut editor, &[key(KeyCode::Home)]);
    assert_eq!(shown(&editor), "one\n|two three");
    press(&mut editor, &[key(KeyCode::End)]);
    assert_eq!(shown(&editor), "one\ntwo three|");
    press(&mut editor, &[ctrl('a')]);
    assert_eq!(shown(&editor), "one\n|two three");
    press(&mut editor, &[ctrl('e')]);
    assert_eq!(shown(&editor), "one\ntwo three|");
    press(&mut editor, &[with(KeyCode::Home, KeyModifiers::CONTROL)]);
    assert_eq!(shown(&editor), "|one\ntwo three");
    press(&mut editor, &[with(KeyCode::End, KeyModifiers::CONTROL)]);
    assert_eq!(shown(&editor), "one\ntwo three|");
    // Nothing to do is reported as no change.
    assert_eq!(editor.handle_key(key(KeyCode::Right)), EditorAction::None);
}

#[test]
fn word_motions_over_unicode() {
    let mut editor = typed("héllo wörld, 日本語 ok");
    press(&mut editor, &[alt('b')]);
    assert_eq!(shown(&editor), "héllo wörld, 日本語 |ok");
    press(&mut editor, &[with(KeyCode::Left, KeyModifiers::CONTROL)]);
    assert_eq!(shown(&editor), "héllo wörld, |日本語 ok");
    press(&mut editor, &[alt('b')]);
    assert_eq!(shown(&editor), "héllo wörld|, 日本語 ok");
    press(&mut editor, &[alt('b'), alt('b')]);
    assert_eq!(shown(&editor), "|héllo wörld, 日本語 ok");
    press(&mut editor, &[alt('f')]);
    assert_eq!(shown(&editor), "héllo| wörld, 日本語 ok");
    press(&mut editor, &[with(KeyCode::Right, KeyModifiers::CONTROL), with(KeyCode::Right, KeyModifiers::ALT)]);
    assert_eq!(shown(&editor), "héllo wörld,| 日本語 ok");
}

#[test]
fn word_deletion() {
    let mut editor = typed("git commit -m foo/bar.baz");
    press(&mut editor, &[with(KeyCode::Backspace, KeyModifiers::ALT)]);
    assert_eq!(shown(&editor), "git commit -m foo/bar.|");
    press(&mut editor, &[ctrl('w')]);
    assert_eq!(shown(&editor), "git commit -m |");
    press(&mut editor, &[ctrl('w'), ctrl('w')]);
    assert_eq!(shown(&editor), "git |");
    press(&mut editor, &[ctrl('a'), alt('d')]);
    assert_eq!(shown(&editor), "| ");
    let mut editor = typed("one two");
    press(&mut editor, &[key(KeyCode::Home), with(KeyCode::Delete, KeyModifiers::CONTROL)]);
    assert_eq!(shown(&editor), "| two");
}

#[test]
fn kill_and_yank() {
    let mut editor = typed("hello world");
    press(&mut editor, &[alt('b'), ctrl('k')]);
    assert_eq!(shown(&editor), "hello |");
    press(&mut editor, &[ctrl('a'), ctrl('y')]);
    assert_eq!(shown(&editor), "world|hello ");
    press(&mut editor, &[ctrl('e'), ctrl('u')]);
    assert!(editor.is_empty());
    press(&mut editor, &[ctrl('y')]);
    assert_eq!(shown(&editor), "worldhello |");
    // Consecutive kills add up, in text order.
    let mut editor = typed("one two three");
    press(&mut editor, &[ctrl('w'), ctrl('w')]);
    assert_eq!(shown(&editor), "one |");
    press(&mut editor, &[ctrl('y')]);
    assert_eq!(shown(&editor), "one two three|");
    // A motion in between starts a new kill.
    let mut editor = typed("ab cd");
    press(&mut editor, &[ctrl('w'), key(KeyCode::Left), ctrl('w'), ctrl('y')]);
    assert_eq!(shown(&editor), "ab| ");
    // Ctrl+K at the end of a line joins the next; Ctrl+U at a line start joins the previous.
    let mut editor = typed("a\nb");
    press(&mut editor, &[key(KeyCode::Up), ctrl('e'), ctrl('k')]);
    assert_eq!(shown(&editor), "a|b");
    let mut editor = typed("a\nb");
    press(&mut editor, &[ctrl('a'), ctrl('u')]);
    assert_eq!(shown(&editor), "a|b");
    // Yank with nothing killed does nothing.
    assert_eq!(Editor::default().handle_key(ctrl('y')), EditorAction::None);
}

#[test]
fn up_down_move_between_lines_keeping_the_column() {
    let mut editor = typed("long line here\nab\nanother long one");
    press(&mut editor, &[ctrl('a'), key(KeyCode::Right), key(KeyCode::Right), key(KeyCode::Right)]);
    assert_eq!(shown(&editor), "long line here\nab\nano|ther long one");
    press(&mut editor, &[key(KeyCode::Up)]);
    assert_eq!(shown(&editor), "long line here\nab|\nanother long one");
    press(&mut editor, &[key(KeyCode::Up)]);
    assert_eq!(shown(&editor), "lon|g line here\nab\nanother long one");
    press(&mut editor, &[key(KeyCode::Down), key(KeyCode::Down)]);
    assert_eq!(shown(&editor), "long line here\nab\nano|ther long one");
}

#[test]
fn up_down_move_by_screen_rows_when_wrapped() {
    let mut editor = typed("aaaa bbbb cccc");
    editor.set_wrap_width(5);
    assert_eq!(editor.cursor_position(5), (2, 4));
    press(&mut editor, &[key(KeyCode::Up)]);
    assert_eq!(shown(&editor), "aaaa bbbb| cccc");
    assert_eq!(editor.cursor_position(5), (1, 4));
    press(&mut editor, &[key(KeyCode::Up)]);
    assert_eq!(shown(&editor), "aaaa| bbbb cccc");
    // On a wrapped row the cursor cannot sit past the row's last character (that is the next row's start).
    let mut editor = typed("ab cdefg");
    editor.set_wrap_width(6);
    assert_eq!(editor.display_lines(6).iter().map(DisplayLine::text).collect::<Vec<_>>(), ["ab ", "cdefg"]);
    press(&mut editor, &[key(KeyCode::Up)]);
    assert_eq!(shown(&editor), "ab| cdefg");
    // The goal column survives the short row.
    press(&mut editor, &[key(KeyCode::Down)]);
    assert_eq!(shown(&editor), "ab cdefg|");
}

#[test]
fn history_walk_preserves_the_draft() {
    let mut editor = Editor::new(history(&["first", "second\nline"]));
    type_str(&mut editor, "draft");
    press(&mut editor, &[key(KeyCode::Left)]);
    press(&mut editor, &[key(KeyCode::Up)]);
    assert_eq!(shown(&editor), "second\nline|");
    // Up inside a multi-line entry moves up a line first.
    press(&mut editor, &[key(KeyCode::Up)]);
    assert_eq!(shown(&editor), "seco|nd\nline");
    press(&mut editor, &[key(KeyCode::Up)]);
    assert_eq!(shown(&editor), "first|");
    assert_eq!(editor.handle_key(key(KeyCode::Up)), EditorAction::None);
    press(&mut editor, &[key(KeyCode::Down)]);
    assert_eq!(shown(&editor), "second\nline|");
    press(&mut editor, &[key(KeyCode::Down)]);
    assert_eq!(shown(&editor), "draf|t");
    assert_eq!(editor.handle_key(key(KeyCode::Down)), EditorAction::None);
    // Submitting a recalled entry records it again and ends the walk.
    press(&mut editor, &[key(KeyCode::Up), key(KeyCode::Up), key(KeyCode::Up)]);
    assert_eq!(editor.handle_key(key(KeyCode::Enter)), EditorAction::Submit("first".into()));
    assert_eq!(editor.history().entries().collect::<Vec<_>>(), ["first", "second\nline", "first"]);
    assert_eq!(editor.handle_key(key(KeyCode::Down)), EditorAction::None);
}

#[test]
fn history_walk_passes_recalled_commands() {
    let mut editor = Editor::new(history(&["older", "/help", "newer"]));
    type_str(&mut editor, "/");
    assert!(!editor.completions().is_empty());
    // The popup is open for the typed `/`, so Up moves its selection…
    press(&mut editor, &[key(KeyCode::Esc), key(KeyCode::Up), key(KeyCode::Up)]);
    // …but once dismissed, Up walks, and a recalled `/help` does not open it again.
    assert_eq!(shown(&editor), "/help|");
    assert!(editor.completions().is_empty());
    press(&mut editor, &[key(KeyCode::Up)]);
    assert_eq!(shown(&editor), "older|");
    press(&mut editor, &[key(KeyCode::Down), key(KeyCode::Down), key(KeyCode::Down)]);
    assert_eq!(shown(&editor), "/|");
    assert!(!editor.completions().is_empty(), "the draft's popup comes back");
    // Editing a recalled command opens it.
    press(&mut editor, &[key(KeyCode::Backspace), key(KeyCode::Esc), key(KeyCode::Up), key(KeyCode::Up)]);
    press(&mut editor, &[key(KeyCode::Backspace)]);
    assert_eq!(editor.completions().iter().map(|command| command.name.as_ref()).collect::<Vec<_>>(), ["/help"]);
}

#[test]
fn reverse_search() {
    let mut editor = Editor::new(history(&["cargo build", "git status", "cargo test", "cargo build", "ls"]));
    type_str(&mut editor, "draft");
    press(&mut editor, &[ctrl('r')]);
    assert!(editor.is_searching() && editor.handles_esc());
    assert_eq!(editor.search_query(), Some(""));
    assert_eq!(editor.search_match(), Some("ls"));
    type_str(&mut editor, "cargo");
    assert_eq!(editor.search_match(), Some("cargo build"));
    // Ctrl+R again: older matches, skipping repeats of the one shown.
    press(&mut editor, &[ctrl('r')]);
    assert_eq!(editor.search_match(), Some("cargo test"));
    press(&mut editor, &[ctrl('r')]);
    assert_eq!(editor.search_match(), Some("cargo build"));
    assert!(!editor.search_failed());
    press(&mut editor, &[ctrl('r')]);
    assert!(editor.search_failed());
    assert_eq!(editor.search_match(), Some("cargo build"));
    // The draft is untouched while searching; Esc goes back to it.
    assert_eq!(editor.display_text(), "draft");
    press(&mut editor, &[key(KeyCode::Esc)]);
    assert!(!editor.is_searching());
    assert_eq!(shown(&editor), "draft|");

    // Enter accepts without submitting; Down then returns to the draft.
    press(&mut editor, &[ctrl('r')]);
    type_str(&mut editor, "tesx");
    assert!(editor.search_failed());
    assert_eq!(editor.search_match(), None);
    press(&mut editor, &[key(KeyCode::Backspace)]);
    assert_eq!(editor.search_match(), Some("cargo test"));
    assert_eq!(editor.handle_key(key(KeyCode::Enter)), EditorAction::Changed);
    assert_eq!(shown(&editor), "cargo test|");
    press(&mut editor, &[key(KeyCode::Down)]);
    assert_eq!(shown(&editor), "cargo build|");
    press(&mut editor, &[key(KeyCode::Down), key(KeyCode::Down)]);
    assert_eq!(shown(&editor), "draft|");

    // Another editing key accepts the match and then acts.
    press(&mut editor, &[ctrl('r')]);
    type_str(&mut editor, "git");
    press(&mut editor, &[ctrl('a')]);
    assert!(!editor.is_searching());
    assert_eq!(shown(&editor), "|git status");
    // Ctrl+G cancels too.
    press(&mut editor, &[ctrl('r'), ctrl('g')]);
    assert_eq!(shown(&editor), "|git status");
}

#[test]
fn paste_small_is_inserted_intact() {
    let mut editor = typed("ab");
    press(&mut editor, &[key(KeyCode::Left)]);
    editor.paste("x\r\ny\rz");
    assert_eq!(shown(&editor), "ax\ny\nz|b");
    assert_eq!(editor.handle_key(key(KeyCode::Enter)), EditorAction::Submit("ax\ny\nzb".into()));
}

#[test]
fn paste_large_collapses_and_submits_in_full() {
    let big: String = (1..=12).map(|i| format!("line {i}\n")).collect();
    let mut editor = typed("see ");
    editor.paste(&big);
    type_str(&mut editor, " please");
    assert_eq!(editor.display_text(), "see [pasted 12 lines] please");
    assert_eq!(editor.text(), format!("see {big} please"));
    let lines = editor.display_lines(40);
    assert_eq!(lines.len(), 1);
    assert_eq!(
        lines[0].segments.iter().map(|segment| segment.kind).collect::<Vec<_>>(),
        [SegmentKind::Text, SegmentKind::Paste, SegmentKind::Text]
    );
    // The cursor steps over the token whole.
    press(&mut editor, &[alt('b'), key(KeyCode::Left), key(KeyCode::Left)]);
    assert_eq!(shown(&editor), "see |[pasted 12 lines] please");
    press(&mut editor, &[key(KeyCode::Right)]);
    assert_eq!(shown(&editor), "see [pasted 12 lines]| please");
    assert_eq!(editor.handle_key(key(KeyCode::Enter)), EditorAction::Submit(format!("see {big} please")));
    assert_eq!(editor.history().get(0), Some(format!("see {big} please").as_str()));
}

#[test]
fn deleting_a_token_drops_its_paste() {
    let long = "x".repeat(1_500);
    let mut editor = Editor::default();
    editor.paste(&long);
    editor.paste(&long);
    assert_eq!(editor.display_text(), "[pasted 1500 chars][pasted 1500 chars #2]");
    press(&mut editor, &[key(KeyCode::Backspace)]);
    assert_eq!(editor.display_text(), "[pasted 1500 chars]");
    assert_eq!(editor.text(), long);
    // Word kills take the token whole, and yanking it back brings the paste back.
    press(&mut editor, &[ctrl('w')]);
    assert!(editor.is_empty() && editor.text().is_empty());
    press(&mut editor, &[ctrl('y')]);
    assert_eq!(editor.text(), long);
    press(&mut editor, &[key(KeyCode::Home), key(KeyCode::Delete)]);
    assert!(editor.is_empty());
    // A hand-typed token is just text.
    type_str(&mut editor, "[pasted 3 lines]");
    assert_eq!(editor.text(), "[pasted 3 lines]");
}

#[test]
fn set_text_clear_and_positions() {
    let mut editor = Editor::default();
    editor.set_text("a\r\nbb");
    assert_eq!(shown(&editor), "a\nbb|");
    assert_eq!(editor.cursor_position(10), (1, 2));
    assert_eq!(editor.display_lines(10).iter().map(DisplayLine::text).collect::<Vec<_>>(), ["a", "bb"]);
    editor.set_text("abcd");
    // At the end of a full row the cursor shows on the next one.
    assert_eq!(editor.cursor_position(4), (1, 0));
    assert_eq!(editor.display_lines(4).len(), 2);
    editor.set_text("a\tb\u{7}");
    assert_eq!(editor.display_lines(20)[0].text(), "a    b\u{FFFD}");
    assert_eq!(editor.cursor_position(20), (0, 7));
    editor.clear();
    assert!(editor.is_empty());
    assert_eq!(editor.cursor_position(10), (0, 0));
    assert_eq!(editor.display_lines(10), [DisplayLine::default()]);
}

#[test]
fn completions_filter_by_prefix() {
    let names =
        |editor: &Editor| editor.completions().iter().map(|command| command.name.to_string()).collect::<Vec<_>>();
    let mut editor = typed("/");
    assert_eq!(names(&editor).len(), SLASH_COMMANDS.len());
    type_str(&mut editor, "mo");
    assert_eq!(names(&editor), ["/model", "/mode"]);
    type_str(&mut editor, "x");
    assert!(names(&editor).is_empty());
    assert!(names(&typed("/model gpt")).is_empty());
    assert!(names(&typed("help")).is_empty());
    // Esc closes the popup until the text changes.
    let mut editor = typed("/c");
    assert!(editor.handles_esc());
    press(&mut editor, &[key(KeyCode::Esc)]);
    assert!(names(&editor).is_empty() && !editor.handles_esc());
    type_str(&mut editor, "l");
    assert_eq!(names(&editor), ["/clear"]);
}

#[test]
fn tab_and_enter_complete() {
    let mut editor = typed("/mo");
    assert_eq!(editor.completion_selected(), 0);
    press(&mut editor, &[key(KeyCode::Down)]);
    assert_eq!(editor.completion_selected(), 1);
    press(&mut editor, &[key(KeyCode::Down)]);
    assert_eq!(editor.completion_selected(), 0);
    press(&mut editor, &[key(KeyCode::Up)]);
    assert_eq!(editor.completion_selected(), 1);
    press(&mut editor, &[key(KeyCode::Tab)]);
    assert_eq!(shown(&editor), "/mode |");
    assert!(editor.completions().is_empty());
    type_str(&mut editor, "plan");
    assert_eq!(editor.handle_key(key(KeyCode::Enter)), EditorAction::Submit("/mode plan".into()));

    // Enter on a unique prefix completes instead of submitting; then Enter submits, trimmed.
    let mut editor = typed("/he");
    assert_eq!(editor.handle_key(key(KeyCode::Enter)), EditorAction::Changed);
    assert_eq!(shown(&editor), "/help |");
    assert_eq!(editor.handle_key(key(KeyCode::Enter)), EditorAction::Submit("/help".into()));
    // A complete name submits even when a longer command shares it as a prefix…
    let mut editor = typed("/mode");
    assert_eq!(editor.handle_key(key(KeyCode::Enter)), EditorAction::Submit("/mode".into()));
    // …unless the user picked another row.
    let mut editor = typed("/mode");
    press(&mut editor, &[key(KeyCode::Down), key(KeyCode::Up)]);
    assert_eq!(editor.completion_selected(), 0);
    assert_eq!(editor.handle_key(key(KeyCode::Enter)), EditorAction::Changed);
    assert_eq!(shown(&editor), "/model |");
    // Arguments are the app's business.
    let mut editor = typed("/model gpt-4o");
    assert_eq!(editor.handle_key(key(KeyCode::Enter)), EditorAction::Submit("/model gpt-4o".into()));
    // Unknown commands submit as typed; Tab without a popup is not the editor's.
    let mut editor = typed("/nope");
    assert_eq!(editor.handle_key(key(KeyCode::Tab)), EditorAction::None);
    assert_eq!(editor.handle_key(key(KeyCode::Enter)), EditorAction::Submit("/nope".into()));
}

#[test]
fn unbound_keys_are_left_to_the_app() {
    let mut editor = typed("x");
    let unbound = [
        ctrl('c'),
        ctrl('d'),
        key(KeyCode::Esc),
        with(KeyCode::BackTab, KeyModifiers::SHIFT),
        alt('z'),
        with(KeyCode::Char('v'), KeyModifiers::SUPER),
        key(KeyCode::PageUp),
        key(KeyCode::F(1)),
    ];
    for key in unbound {
        assert_eq!(editor.handle_key(key), EditorAction::None);
    }
    assert_eq!(editor.display_text(), "x");
    // AltGr (Ctrl+Alt) characters are typed.
    editor.handle_key(with(KeyCode::Char('@'), KeyModifiers::CONTROL | KeyModifiers::ALT));
    assert_eq!(editor.display_text(), "x@");
}
