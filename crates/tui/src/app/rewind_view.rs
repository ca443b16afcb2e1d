//! `/rewind` (or Esc twice on an empty prompt): the session's earlier prompts, newest first; for the chosen
//! one, what going back would change in the files — a diff per file, reviewed hunk by hunk like an edit (a hunk
//! left unticked stays as it is now), conflicts marked — and the three ways to go back: the conversation and the
//! files, the conversation only, the files only.

use std::cell::Cell;
use std::time::{Duration, Instant};

use ratatui::crossterm::event::{KeyCode, KeyEvent};
use tandem_protocol::{Op, RewindFileView, RewindHunks, RewindOutcome, RewindPointView, RewindTarget};

use super::{App, Effect, NoticeKind};
use crate::ui::diff::{DiffView, HunkReview};

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
    /// The files going back, once core has sent them.
    pub preview: Option<Vec<FileGoingBack>>,
    /// The hunk Tab points at: (index into `preview`, hunk of that file).
    pub cursor: (usize, usize),
    /// The preview's first line shown (the drawing moves it to keep the cursor's hunk in view).
    pub scroll: Cell<usize>,
    /// The cursor moved: the next drawing scrolls its hunk into view.
    pub follow: Cell<bool>,
}

/// One file of the preview.
#[derive(Clone, Debug)]
pub struct FileGoingBack {
    pub path: String,
    /// From the file now to then (`None`: not text).
    pub diff: Option<DiffView>,
    /// Which hunks go back (all, until the user unticks some).
    pub review: HunkReview,
    pub conflict: bool,
    /// Why it is a conflict (core's words).
    pub why: Option<String>,
    /// It did not exist then: going back removes it.
    pub removed: bool,
    /// Core's hash of the file as previewed, sent back with the chosen hunks.
    pub now_hash: Option<String>,
}

impl FileGoingBack {
    fn new(file: RewindFileView) -> FileGoingBack {
        let diff =
            (!file.binary).then(|| DiffView::new(&file.path, file.now.as_deref(), file.then.as_deref().unwrap_or("")));
        let hunks = diff.as_ref().map_or(0, |diff| diff.hunks().len());
        FileGoingBack {
            path: file.path,
            diff,
            review: HunkReview::all_accepted(hunks),
            conflict: file.conflict,
            why: file.why,
            removed: file.removed,
            now_hash: file.now_hash,
        }
    }

    /// Whether its hunks can be chosen (text, not a conflict).
    pub fn reviewable(&self) -> bool {
        !self.conflict && self.diff.as_ref().is_some_and(|diff| !diff.hunks().is_empty())
    }
}

impl RewindView {
    /// Every hunk that can be ticked, in order: (file, hunk).
    fn hunks(&self) -> Vec<(usize, usize)> {
        let Some(files) = &self.preview else { return Vec::new() };
        files
            .iter()
            .enumerate()
            .filter(|(_, file)| file.reviewable())
            .flat_map(|(index, file)| (0..file.review.accepted.len()).map(move |hunk| (index, hunk)))
            .collect()
    }

    fn move_cursor(&mut self, forward: bool) {
        let hunks = self.hunks();
        if hunks.is_empty() {
            return;
        }
        let at = hunks.iter().position(|hunk| *hunk == self.cursor);
        let next = match (at, forward) {
            (None, _) => 0,
            (Some(at), true) => (at + 1) % hunks.len(),
            (Some(at), false) => (at + hunks.len() - 1) % hunks.len(),
        };
        self.cursor = hunks[next];
        self.follow.set(true);
    }

    fn toggle_cursor(&mut self) {
        if !self.hunks().contains(&self.cursor) {
            return;
        }
        let (file, hunk) = self.cursor;
        if let Some(files) = &mut self.preview
            && let Some(flag) = files[file].review.accepted.get_mut(hunk)
        {
            *flag = !*flag;
        }
    }

    /// Every file of the preview with the hunks that go back (all of a file that can't be split): core puts
    /// back only these, and only if each is still as previewed.
    fn chosen_hunks(&self) -> Option<Vec<RewindHunks>> {
        let files = self.preview.as_ref()?;
        let chosen = files
            .iter()
            .map(|file| RewindHunks {
                path: file.path.clone(),
                restore: if file.reviewable() { file.review.accepted.clone() } else { Vec::new() },
                now_hash: file.now_hash.clone(),
                conflict: file.conflict,
            })
            .collect();
        Some(chosen)
    }
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
        self.rewind = Some(RewindView { points, selected, ..RewindView::default() });
    }

    pub(crate) fn show_rewind_preview(&mut self, seq: u64, files: Vec<RewindFileView>) {
        let Some(view) = &mut self.rewind else { return };
        if view.choosing.is_none() || view.points.get(view.selected).map(|point| point.seq) != Some(seq) {
            return;
        }
        view.preview = Some(files.into_iter().map(FileGoingBack::new).collect());
        view.cursor = view.hunks().first().copied().unwrap_or_default();
    }

    pub(crate) fn on_rewound(&mut self, outcome: Result<RewindOutcome, String>) {
        let outcome = match outcome {
            Ok(outcome) => outcome,
            Err(why) => return self.notice(NoticeKind::Error, why),
        };
        if let Some(messages) = &outcome.messages {
            // Cut where the prompt was drawn, so what came before stays as it was shown (diffs, retries); a prompt
            // of a resumed session was not drawn live, and the conversation is drawn again from what is kept.
            match self.transcript.cells().iter().position(|cell| cell.prompt == Some(outcome.seq)) {
                Some(at) => {
                    self.transcript.truncate(at);
                    self.transcript.scroll_to_bottom();
                }
                None => {
                    self.transcript.clear();
                    self.restore_conversation(messages);
                }
            }
            self.editor.set_text(&outcome.prompt);
        }
        let mut said = vec![match outcome.messages {
            Some(_) => "Rewound the conversation to just before this prompt (it is back in the input).".to_owned(),
            None => "Rewound.".to_owned(),
        }];
        let put_back: Vec<&str> =
            outcome.restored.iter().filter(|path| !outcome.removed.contains(path)).map(String::as_str).collect();
        if !put_back.is_empty() {
            said.push(format!("Files put back: {}.", put_back.join(", ")));
        }
        if !outcome.removed.is_empty() {
            said.push(format!("Removed (created since): {}.", outcome.removed.join(", ")));
        }
        if !outcome.partly.is_empty() {
            said.push(format!("Only the ticked hunks of: {}.", outcome.partly.join(", ")));
        }
        if !outcome.conflicts.is_empty() {
            said.push(format!("Changed outside tandem since, left as they are: {}.", outcome.conflicts.join(", ")));
        }
        said.extend(outcome.problems.iter().cloned());
        let kind = if outcome.problems.is_empty() { NoticeKind::Info } else { NoticeKind::Error };
        self.notice(kind, said.join(" "));
    }

    pub(crate) fn on_rewind_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        let page = (self.size.1 as usize).saturating_sub(12).max(1);
        let Some(view) = &mut self.rewind else { return Vec::new() };
        let count = view.points.len();
        match view.choosing {
            None => match key.code {
                KeyCode::Esc | KeyCode::Char('q') => self.rewind = None,
                // Drawn newest first: ↓ goes to older prompts.
                KeyCode::Down | KeyCode::Char('j') => view.selected = view.selected.saturating_sub(1),
                KeyCode::Up | KeyCode::Char('k') => view.selected = (view.selected + 1).min(count - 1),
                KeyCode::Home => view.selected = count - 1,
                KeyCode::End => view.selected = 0,
                KeyCode::Enter => {
                    // Only the files can go back to a prompt no longer in the conversation.
                    let files_only = !view.points[view.selected].in_conversation;
                    view.choosing = Some(if files_only { REWIND_CHOICES.len() - 1 } else { 0 });
                    view.preview = None;
                    view.scroll.set(0);
                    return vec![Effect::Op(Op::PreviewRewind { seq: view.points[view.selected].seq })];
                }
                _ => {}
            },
            Some(choice) => match key.code {
                KeyCode::Esc => view.choosing = None,
                // A prompt no longer in the conversation has only its files to go back: the cursor stays there.
                KeyCode::Up | KeyCode::Char('k') if view.points[view.selected].in_conversation => {
                    view.choosing = Some(choice.saturating_sub(1))
                }
                KeyCode::Down | KeyCode::Char('j') => view.choosing = Some((choice + 1).min(REWIND_CHOICES.len() - 1)),
                KeyCode::Tab => view.move_cursor(true),
                KeyCode::BackTab => view.move_cursor(false),
                KeyCode::Char(' ') => view.toggle_cursor(),
                KeyCode::PageDown => view.scroll.set(view.scroll.get() + page),
                KeyCode::PageUp => view.scroll.set(view.scroll.get().saturating_sub(page)),
                KeyCode::Char(digit @ '1'..='3') => return self.rewind_to(digit as usize - '1' as usize),
                KeyCode::Enter => return self.rewind_to(choice),
                _ => {}
            },
        }
        Vec::new()
    }

    fn rewind_to(&mut self, choice: usize) -> Vec<Effect> {
        let (conversation, files, _) = REWIND_CHOICES[choice];
        // Files go back only as the user has seen them: not before the preview has come.
        if files && self.rewind.as_ref().is_some_and(|view| view.preview.is_none()) {
            self.flash("still reading the checkpoints: the files can go back once their preview is shown");
            return Vec::new();
        }
        if conversation && self.rewind.as_ref().is_some_and(|view| !view.points[view.selected].in_conversation) {
            self.flash("that prompt is no longer in the conversation: only its files can go back (3)");
            return Vec::new();
        }
        let Some(view) = self.rewind.take() else { return Vec::new() };
        let seq = view.points[view.selected].seq;
        let hunks = if files { view.chosen_hunks() } else { None };
        vec![Effect::Op(Op::Rewind { to: RewindTarget::Prompt(seq), conversation, files, hunks, dry_run: false })]
    }
}
