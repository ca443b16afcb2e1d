//! The conversation's keys as data: one table ([`KEYS`]) says which key does what. It drives the handling of the
//! keys the app itself answers ([`App::on_key`](super::App::on_key) looks the key up here), the `/help` box, and
//! README's key table (a test fails when they disagree). Rows whose keys another part answers (the prompt editor,
//! the permission dialog, the mouse) have no bindings: they are documented here and handled there.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// A key as the table names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Chord {
    /// Control and a letter (either case).
    Ctrl(char),
    /// A key, whatever the modifiers.
    Key(KeyCode),
}

impl Chord {
    fn matches(self, key: &KeyEvent) -> bool {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match (self, key.code) {
            (Chord::Ctrl(letter), KeyCode::Char(typed)) => ctrl && typed.eq_ignore_ascii_case(&letter),
            (Chord::Key(code), typed) => code == typed,
            (Chord::Ctrl(_), _) => false,
        }
    }
}

/// What a key of the table asks the app to do. Some only apply in a state (Esc, Home on an empty prompt); where
/// one does not apply, the key goes on to the editor or scroll mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Action {
    /// Suspend to the shell; in every state, dialogs and screens included.
    Suspend,
    /// Redraw the whole screen; in every state.
    Redraw,
    /// Take a queued message back, interrupt the model, close a mode, or (twice on an empty prompt) rewind.
    Escape,
    /// Clear the prompt, interrupt the model, or quit (twice).
    CtrlC,
    /// Quit from an empty prompt.
    QuitWhenEmpty,
    Search,
    ScrollMode,
    ToggleCard,
    CycleMode,
    PageUp,
    PageDown,
    /// To the conversation's top or bottom, from an empty prompt.
    Top,
    Bottom,
}

/// A row of the key table: as `/help` and README show it, and the keys the app answers for it.
pub(crate) struct KeyRow {
    pub(crate) keys: &'static str,
    pub(crate) what: &'static str,
    pub(crate) bindings: &'static [(Chord, Action)],
}

const fn row(keys: &'static str, what: &'static str, bindings: &'static [(Chord, Action)]) -> KeyRow {
    KeyRow { keys, what, bindings }
}

/// Every key of the conversation, in the order `/help` and README list them (kept to 78 columns with the key
/// column).
pub(crate) const KEYS: &[KeyRow] = &[
    row("enter", "send; while the model works it is queued (esc takes it back)", &[]),
    row("shift+enter", "new line (also alt+enter, ctrl+j, or \\ then enter)", &[]),
    row("esc", "interrupt the model while it works", &[(Chord::Key(KeyCode::Esc), Action::Escape)]),
    row("ctrl+c", "clear the prompt · interrupt the model · twice: quit", &[(Chord::Ctrl('c'), Action::CtrlC)]),
    row(
        "ctrl+d",
        "delete the character under the cursor · empty prompt: quit",
        &[(Chord::Ctrl('d'), Action::QuitWhenEmpty)],
    ),
    row("ctrl+z", "suspend to the shell (fg to return)", &[(Chord::Ctrl('z'), Action::Suspend)]),
    row("ctrl+l", "redraw the whole screen", &[(Chord::Ctrl('l'), Action::Redraw)]),
    row(
        "shift+tab",
        "cycle the permission mode: default, accept edits, plan",
        &[(Chord::Key(KeyCode::BackTab), Action::CycleMode)],
    ),
    row(
        "pgup/pgdn",
        "scroll (the wheel too) · home/end on an empty prompt",
        &[
            (Chord::Key(KeyCode::PageUp), Action::PageUp),
            (Chord::Key(KeyCode::PageDown), Action::PageDown),
            (Chord::Key(KeyCode::Home), Action::Top),
            (Chord::Key(KeyCode::End), Action::Bottom),
        ],
    ),
    row("ctrl+f", "search the conversation (n/N next/previous)", &[(Chord::Ctrl('f'), Action::Search)]),
    row(
        "ctrl+s",
        "scroll mode: j/k move · v select · y copy · c answer · b code",
        &[(Chord::Ctrl('s'), Action::ScrollMode)],
    ),
    row("ctrl+o", "expand/collapse the card in view or under the cursor", &[(Chord::Ctrl('o'), Action::ToggleCard)]),
    row("click", "expand/collapse a card", &[]),
    row("↑/↓  ctrl+r", "prompt history · search the history", &[]),
    row("dialog", "y once · a/p/u always · n/esc deny and stop · f deny, say why · e edit · ? keys", &[]),
    row("", "tab/space review hunks · shift+pgup/pgdn scroll behind it", &[]),
];

/// What the table binds `key` to, if anything.
pub(crate) fn action(key: &KeyEvent) -> Option<Action> {
    KEYS.iter().flat_map(|row| row.bindings).find(|(chord, _)| chord.matches(key)).map(|(_, action)| *action)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_key_is_bound_once_and_control_letters_in_either_case() {
        let chords: Vec<Chord> = KEYS.iter().flat_map(|row| row.bindings).map(|(chord, _)| *chord).collect();
        for (index, chord) in chords.iter().enumerate() {
            assert!(!chords[index + 1..].contains(chord), "{chord:?} is bound twice");
        }
        let ctrl = |c| KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL);
        assert_eq!(action(&ctrl('Z')), Some(Action::Suspend));
        assert_eq!(action(&ctrl('c')), Some(Action::CtrlC));
        assert_eq!(action(&KeyEvent::new(KeyCode::Char('c'), KeyModifiers::NONE)), None, "a plain c is typed");
    }
}
