//! Key bindings of the permission dialog.
//!
//! Answers: `y` allow once, `a` allow for the session (the suggested rule), `n`/`Esc` deny, `f` deny with
//! feedback (a one-line field: Enter sends, Esc goes back keeping the text, Backspace/Ctrl+W/Ctrl+U edit),
//! `e` edit the proposed content first (diff previews with full texts only), Enter allow (or apply the
//! per-hunk review), Ctrl+C deny. Moving: ↑/↓/`k`/`j` a line, PgUp/PgDn a page, Home/End. Review (two hunks
//! or more): Tab/Shift+Tab select a hunk, Space accept/reject it. Letters work in either case; keys with
//! Ctrl or Alt do nothing unless listed, so a stray chord never answers.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use tandem_core::protocol::{AlwaysScope, PermissionAnswer};
use unicode_segmentation::UnicodeSegmentation;

use super::{DialogAction, PermissionDialog};

pub(super) fn handle_key(dialog: &mut PermissionDialog, key: KeyEvent) -> DialogAction {
    if key.kind == KeyEventKind::Release {
        return DialogAction::None;
    }
    let control = key.modifiers.contains(KeyModifiers::CONTROL);
    if control && matches!(key.code, KeyCode::Char('c' | 'C')) {
        return deny(None);
    }
    if scroll_key(dialog, key) {
        return DialogAction::None;
    }
    if dialog.typing_feedback {
        return feedback_key(dialog, key);
    }
    if control || key.modifiers.contains(KeyModifiers::ALT) {
        return DialogAction::None;
    }
    match key.code {
        KeyCode::Char(ch) => match ch.to_ascii_lowercase() {
            'y' => DialogAction::Answer(PermissionAnswer::AllowOnce),
            'a' if !dialog.suggested_rule.is_empty() => always(dialog, AlwaysScope::Session),
            'p' if !dialog.suggested_rule.is_empty() => always(dialog, AlwaysScope::Project),
            'u' if !dialog.suggested_rule.is_empty() => always(dialog, AlwaysScope::User),
            'n' => deny(None),
            'f' => {
                dialog.typing_feedback = true;
                DialogAction::None
            }
            'e' => match dialog.editor_start() {
                Some((path, proposed)) => DialogAction::OpenEditor { path, proposed },
                None => DialogAction::None,
            },
            'j' => scroll_by(dialog, 1),
            'k' => scroll_by(dialog, -1),
            ' ' => {
                if let Some(review) = &mut dialog.review
                    && let Some(flag) = review.accepted.get_mut(review.current)
                {
                    *flag = !*flag;
                }
                DialogAction::None
            }
            _ => DialogAction::None,
        },
        KeyCode::Esc => deny(None),
        KeyCode::Enter => DialogAction::Answer(dialog.apply_review()),
        KeyCode::Tab => {
            dialog.move_hunk(true);
            DialogAction::None
        }
        KeyCode::BackTab => {
            dialog.move_hunk(false);
            DialogAction::None
        }
        _ => DialogAction::None,
    }
}

/// Keys typed while the feedback field is open.
fn feedback_key(dialog: &mut PermissionDialog, key: KeyEvent) -> DialogAction {
    let text = &mut dialog.feedback;
    let control = key.modifiers.contains(KeyModifiers::CONTROL);
    match key.code {
        KeyCode::Enter => {
            let message = text.trim().to_owned();
            return deny(if message.is_empty() { None } else { Some(message) });
        }
        // Leaving keeps the text: an accidental Esc should not throw away what was typed.
        KeyCode::Esc => dialog.typing_feedback = false,
        KeyCode::Backspace if control => delete_word(text),
        KeyCode::Backspace => {
            let keep = text.grapheme_indices(true).next_back().map_or(0, |(at, _)| at);
            text.truncate(keep);
        }
        KeyCode::Char('u' | 'U') if control => text.clear(),
        KeyCode::Char('w' | 'W') if control => delete_word(text),
        KeyCode::Char(ch) if !control && !key.modifiers.contains(KeyModifiers::ALT) => text.push(ch),
        _ => {}
    }
    DialogAction::None
}

/// Deletes the last word and the spaces after it.
fn delete_word(text: &mut String) {
    let trimmed = text.trim_end().len();
    let keep = text[..trimmed].rfind(char::is_whitespace).map_or(0, |at| at + 1);
    text.truncate(keep);
}

/// Scroll keys that work in both modes; returns whether the key was one.
fn scroll_key(dialog: &mut PermissionDialog, key: KeyEvent) -> bool {
    let page = dialog.body_size().1.saturating_sub(1).max(1) as isize;
    match key.code {
        KeyCode::Up => scroll_by(dialog, -1),
        KeyCode::Down => scroll_by(dialog, 1),
        KeyCode::PageUp => scroll_by(dialog, -page),
        KeyCode::PageDown => scroll_by(dialog, page),
        KeyCode::Home => {
            dialog.scroll = 0;
            DialogAction::None
        }
        KeyCode::End => {
            dialog.scroll = dialog.max_scroll();
            DialogAction::None
        }
        _ => return false,
    };
    true
}

fn scroll_by(dialog: &mut PermissionDialog, lines: isize) -> DialogAction {
    let target = dialog.scroll.saturating_add_signed(lines);
    dialog.scroll = target.min(dialog.max_scroll());
    DialogAction::None
}

fn always(dialog: &PermissionDialog, scope: AlwaysScope) -> DialogAction {
    DialogAction::Answer(PermissionAnswer::AllowAlways { rule: dialog.suggested_rule.clone(), scope })
}

fn deny(feedback: Option<String>) -> DialogAction {
    DialogAction::Answer(PermissionAnswer::Deny { feedback })
}
