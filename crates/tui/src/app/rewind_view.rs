//! `/rewind` (or Esc twice on an empty prompt): the session's earlier prompts, newest first; for the chosen
//! one, what going back would change in the files (a diff, conflicts marked) and the three ways to go back —
//! the conversation and the files, the conversation only, the files only.

use std::time::{Duration, Instant};

use ratatui::crossterm::event::{KeyCode, KeyEvent};
use tandem_core::protocol::{Op, RewindOutcome, RewindPointView};

use super::{App, Effect, NoticeKind};

/// How close two Esc presses on an empty prompt must be to open the rewind list.
pub const DOUBLE_ESC: Duration = Duration::from_millis(600);

/// The ways to go back, in the order they are offered.
pub const REWIND_CHOICES: [(bool, bool, &str); 3] = [
    (true, true, "Restore the conversation and the files"),
    (true, false, "Restore the conversation only"),
    (false, true, "Restore the files only"),
];

/// The open rewind list.
#[derive(Clone, Debug, Default)]
pub struct RewindView {
    /// Oldest first (drawn newest first).
    pub points: Vec<RewindPointView>,
    /// Index into `points`.
    pub selected: usize,
    /// The chosen prompt's preview is open, with this answer highlighted.
    pub choosing: Option<usize>,
    /// The preview's first line shown.
    pub scroll: usize,
}

impl App {
    /// `/rewind`: asks core for the prompts the session can go back to.
    pub(crate) fn open_rewind(&mut self) -> Vec<Effect> {
        if self.working {
            self.flash("still working: press esc to interrupt first");
            return Vec::new();
        }
        vec![Effect::Op(Op::ListRewindPoints)]
    }

    /// Esc on an empty, idle prompt: a second one soon after opens the rewind list.
    pub(crate) fn esc_on_empty_prompt(&mut self, now: Instant) -> Vec<Effect> {
        match self.last_empty_esc.take() {
            Some(first) if now.saturating_duration_since(first) <= DOUBLE_ESC => self.open_rewind(),
            _ => {
                self.last_empty_esc = Some(now);
                Vec::new()
            }
        }
    }

    pub(crate) fn show_rewind_points(&mut self, points: Vec<RewindPointView>) {
        if points.is_empty() {
            self.flash("nothing to rewind yet: no prompt of this session was checkpointed");
            return;
        }
        let selected = points.len() - 1;
        self.rewind = Some(RewindView { points, selected, choosing: None, scroll: 0 });
    }

    pub(crate) fn on_rewound(&mut self, outcome: RewindOutcome) {
        if let Some(messages) = &outcome.messages {
            self.transcript.clear();
            self.restore_conversation(messages);
            self.editor.set_text(&outcome.prompt);
        }
        let mut said = vec![match outcome.messages {
            Some(_) => "Rewound the conversation to just before this prompt (it is back in the input).".to_owned(),
            None => "Rewound.".to_owned(),
        }];
        if !outcome.restored.is_empty() {
            said.push(format!("Files put back: {}.", outcome.restored.join(", ")));
        }
        if !outcome.conflicts.is_empty() {
            said.push(format!("Changed outside tandem since, left as they are: {}.", outcome.conflicts.join(", ")));
        }
        said.extend(outcome.problems.iter().cloned());
        let kind = if outcome.problems.is_empty() { NoticeKind::Info } else { NoticeKind::Error };
        self.notice(kind, said.join(" "));
    }

    pub(crate) fn on_rewind_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        let page = (self.size.1 as usize).saturating_sub(10).max(1);
        let Some(view) = &mut self.rewind else { return Vec::new() };
        let count = view.points.len();
        match view.choosing {
            None => match key.code {
                KeyCode::Esc | KeyCode::Char('q') => self.rewind = None,
                // Drawn newest first: ↓ goes to older prompts.
                KeyCode::Down | KeyCode::Char('j') => view.selected = view.selected.saturating_sub(1),
                KeyCode::Up | KeyCode::Char('k') => view.selected = (view.selected + 1).min(count - 1),
                KeyCode::Enter => {
                    view.choosing = Some(0);
                    view.scroll = 0;
                }
                _ => {}
            },
            Some(choice) => match key.code {
                KeyCode::Esc => view.choosing = None,
                KeyCode::Up | KeyCode::Char('k') => view.choosing = Some(choice.saturating_sub(1)),
                KeyCode::Down | KeyCode::Char('j') => view.choosing = Some((choice + 1).min(REWIND_CHOICES.len() - 1)),
                KeyCode::PageDown | KeyCode::Char(' ') => view.scroll += page,
                KeyCode::PageUp => view.scroll = view.scroll.saturating_sub(page),
                KeyCode::Char(digit @ '1'..='3') => return self.rewind_to(digit as usize - '1' as usize),
                KeyCode::Enter => return self.rewind_to(choice),
                _ => {}
            },
        }
        Vec::new()
    }

    fn rewind_to(&mut self, choice: usize) -> Vec<Effect> {
        let Some(view) = self.rewind.take() else { return Vec::new() };
        let (conversation, files, _) = REWIND_CHOICES[choice];
        let seq = view.points[view.selected].seq;
        vec![Effect::Op(Op::Rewind { seq, conversation, files })]
    }
}
