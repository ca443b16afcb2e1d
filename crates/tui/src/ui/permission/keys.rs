//! Key bindings of the permission dialog.
//!
//! Answers: `y` allow once, `a` allow for the session (the suggested rule), `n`/`Esc` deny, `f` deny with
//! feedback (a one-line field: Enter sends, Esc goes back keeping the text, Backspace/Ctrl+W/Ctrl+U edit),
//! `e` edit the proposed content first (diff previews with full texts only), Enter allow (or apply the
//! per-hunk review), Ctrl+C deny. Moving: ↑/↓/`k`/`j` a line, PgUp/PgDn a page, Home/End. Review (two hunks
//! or more): Tab/Shift+Tab select a hunk, Space accept/reject it. `?` shows every key hint (one line of the
//! commonest is shown where more would take the diff's rows). Letters work in either case; keys with
//! Ctrl or Alt do nothing unless listed, so a stray chord never answers.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use tandem_protocol::{AlwaysScope, PermissionAnswer};
use unicode_segmentation::UnicodeSegmentation;

use tandem_core::permissions::PermissionMode;

use super::{Body, DialogAction, PermissionDialog, Questions};

pub(super) fn handle_key(dialog: &mut PermissionDialog, key: KeyEvent) -> DialogAction {
    if key.kind == KeyEventKind::Release {
        return DialogAction::None;
    }
    let control = key.modifiers.contains(KeyModifiers::CONTROL);
    if control && matches!(key.code, KeyCode::Char('c' | 'C')) {
        return deny(None);
    }
    if dialog.typing_feedback {
        if matches!(dialog.body, Body::Questions(_)) {
            return own_answer_key(dialog, key);
        }
        if !matches!(
            key.code,
            KeyCode::Up | KeyCode::Down | KeyCode::PageUp | KeyCode::PageDown | KeyCode::Home | KeyCode::End
        ) {
            return feedback_key(dialog, key);
        }
    }
    if key.code == KeyCode::Char('?') && !dialog.typing_feedback {
        dialog.all_keys = !dialog.all_keys;
        return DialogAction::None;
    }
    if let Body::Questions(questions) = &mut dialog.body {
        if matches!(key.code, KeyCode::PageUp | KeyCode::PageDown | KeyCode::Home | KeyCode::End) {
            scroll_key(dialog, key);
            return DialogAction::None;
        }
        let action = question_key(questions, key, &mut dialog.typing_feedback);
        dialog.follow_question_cursor();
        return action;
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
            // With hunks rejected, every "allow" answer writes the review (the accepted hunks only).
            'y' => DialogAction::Answer(dialog.apply_review()),
            'a' | 'p' | 'u' if dialog.review_is_partial() => DialogAction::Answer(dialog.apply_review()),
            'a' if matches!(dialog.body, Body::Plan(_)) => {
                DialogAction::Answer(PermissionAnswer::AllowWithMode(PermissionMode::AcceptEdits))
            }
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
        // A plan is approved with y or a only: a stray Enter (typed ahead) must not approve it.
        KeyCode::Enter if matches!(dialog.body, Body::Plan(_)) => DialogAction::None,
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

/// Keys of a question: move, tick, answer; Enter on the last row opens a field for an answer of one's own.
fn question_key(questions: &mut Questions, key: KeyEvent, typing: &mut bool) -> DialogAction {
    if key.modifiers.contains(KeyModifiers::CONTROL) || key.modifiers.contains(KeyModifiers::ALT) {
        return DialogAction::None;
    }
    let Some(question) = questions.question() else { return DialogAction::None };
    let rows = question.options.len() + 1;
    let multi = question.multi_select;
    match key.code {
        KeyCode::Up | KeyCode::Char('k') => questions.cursor = (questions.cursor + rows - 1) % rows,
        KeyCode::Down | KeyCode::Char('j') | KeyCode::Tab => questions.cursor = (questions.cursor + 1) % rows,
        KeyCode::Char(digit @ '1'..='9') => {
            let row = usize::from(digit as u8 - b'1');
            if row < rows {
                questions.cursor = row;
                if multi && row < rows - 1 {
                    questions.ticked[row] = !questions.ticked[row];
                } else {
                    return choose(questions, typing);
                }
            }
        }
        KeyCode::Char(' ') if multi && questions.cursor < rows - 1 => {
            let row = questions.cursor;
            questions.ticked[row] = !questions.ticked[row];
        }
        KeyCode::Enter => return choose(questions, typing),
        KeyCode::Esc => return deny(Some("The user declined to answer the questions.".to_owned())),
        _ => {}
    }
    DialogAction::None
}

/// Takes the highlighted answer (or the ticked ones) for the current question.
fn choose(questions: &mut Questions, typing: &mut bool) -> DialogAction {
    let Some(question) = questions.question() else { return DialogAction::None };
    if questions.cursor == questions.other_row() {
        *typing = true;
        return DialogAction::None;
    }
    let answer = if question.multi_select {
        let ticked: Vec<&str> = question
            .options
            .iter()
            .zip(&questions.ticked)
            .filter(|(_, ticked)| **ticked)
            .map(|(option, _)| option.label.as_str())
            .collect();
        if ticked.is_empty() { question.options[questions.cursor].label.clone() } else { ticked.join(", ") }
    } else {
        question.options[questions.cursor].label.clone()
    };
    next_question(questions, answer)
}

fn next_question(questions: &mut Questions, answer: String) -> DialogAction {
    questions.answers.push(answer);
    questions.current += 1;
    questions.cursor = 0;
    match questions.question() {
        Some(next) => {
            questions.ticked = vec![false; next.options.len()];
            DialogAction::None
        }
        None => DialogAction::Answer(PermissionAnswer::Answered { answers: std::mem::take(&mut questions.answers) }),
    }
}

/// Keys typed into the field for an answer of the user's own: Enter takes it, Esc goes back to the options.
fn own_answer_key(dialog: &mut PermissionDialog, key: KeyEvent) -> DialogAction {
    match key.code {
        KeyCode::Enter => {
            let answer = dialog.feedback.trim().to_owned();
            if answer.is_empty() {
                return DialogAction::None;
            }
            dialog.feedback.clear();
            dialog.typing_feedback = false;
            match &mut dialog.body {
                Body::Questions(questions) => next_question(questions, answer),
                _ => DialogAction::None,
            }
        }
        KeyCode::Esc => {
            dialog.typing_feedback = false;
            DialogAction::None
        }
        _ => feedback_key(dialog, key),
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
