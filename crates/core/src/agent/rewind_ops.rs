//! Rewind in the session: the prompts it can go back to, what going back would change, and going back — the
//! conversation to just before the prompt, the files tandem's tools changed to what they were then
//! (`crate::rewind`, all of them or chosen hunks), or both. The model is told what was rewound with the next
//! prompt; the conversation's cut is logged, so it holds after `--resume`.

use std::path::Path;

use crate::conversation::{Message, Role};
use crate::protocol::{Event, RewindFileView, RewindHunks, RewindOutcome, RewindPointView, RewindTarget};
use crate::rewind::{FileRestore, HunkChoice};

use super::turn::Session;

/// An [`crate::protocol::Op::Rewind`], as the session runs it.
#[derive(Debug)]
pub(super) struct RewindRequest {
    pub to: RewindTarget,
    pub conversation: bool,
    pub files: bool,
    pub hunks: Option<Vec<RewindHunks>>,
    pub dry_run: bool,
}

impl Session {
    fn shown(&self, path: &Path) -> String {
        crate::tools::display_path(path, &self.config.cwd)
    }

    pub(super) fn list_rewind_points(&mut self) {
        let points = match &self.checkpoints {
            Some(checkpoints) => checkpoints
                .points()
                .into_iter()
                .map(|point| RewindPointView {
                    seq: point.seq,
                    files: point.files.iter().map(|path| self.shown(path)).collect(),
                    text: point.text,
                })
                .collect(),
            None => Vec::new(),
        };
        self.emit(Event::RewindPoints(points));
    }

    pub(super) fn preview_rewind(&mut self, seq: u64) {
        let plan = match &self.checkpoints {
            Some(checkpoints) => checkpoints.plan(seq),
            None => Ok(Vec::new()),
        };
        match plan {
            Ok(plan) => {
                let files = plan.iter().map(|restore| self.file_view(restore)).collect();
                self.emit(Event::RewindPreview { seq, files });
            }
            Err(err) => self.emit(Event::Error { message: format!("The checkpoints could not be read: {err}") }),
        }
    }

    fn file_view(&self, restore: &FileRestore) -> RewindFileView {
        let text = |bytes: &Option<Vec<u8>>| bytes.as_deref().map(|bytes| String::from_utf8_lossy(bytes).into_owned());
        let binary = restore.texts().is_none();
        RewindFileView {
            path: self.shown(&restore.path),
            now: if binary { None } else { text(&restore.current) },
            then: if binary { None } else { text(&restore.target) },
            now_hash: restore.now_hash(),
            conflict: restore.conflict,
            binary,
            removed: restore.target.is_none(),
            why: restore.why.clone(),
        }
    }

    pub(super) fn rewind(&mut self, request: RewindRequest) {
        let outcome = self.rewind_outcome(request);
        self.emit(Event::Rewound(outcome));
    }

    fn rewind_outcome(&mut self, request: RewindRequest) -> Result<RewindOutcome, String> {
        let checkpoints =
            self.checkpoints.clone().ok_or("This session keeps no checkpoints (it has no log).".to_owned())?;
        let points = checkpoints.points();
        let point = match &request.to {
            RewindTarget::Prompt(seq) => points.into_iter().find(|point| point.seq == *seq),
            // A host that sent the same uuid twice means its latest message.
            RewindTarget::Message(id) => {
                points.into_iter().rev().find(|point| point.id.as_deref() == Some(id.as_str()))
            }
        };
        let point = point.ok_or_else(|| match &request.to {
            RewindTarget::Prompt(seq) => format!("There is no prompt {seq} to go back to."),
            RewindTarget::Message(id) => format!("No file checkpoint was kept for user message {id}."),
        })?;
        let mut outcome = RewindOutcome {
            prompt: point.text.clone(),
            messages: None,
            restored: Vec::new(),
            partly: Vec::new(),
            changed: Vec::new(),
            insertions: 0,
            deletions: 0,
            conflicts: Vec::new(),
            problems: Vec::new(),
            dry_run: request.dry_run,
        };
        if request.files {
            let plan =
                checkpoints.plan(point.seq).map_err(|err| format!("The checkpoints could not be read: {err}"))?;
            let choices: Vec<HunkChoice> = request
                .hunks
                .iter()
                .flatten()
                .filter_map(|choice| {
                    let restore = plan.iter().find(|restore| self.shown(&restore.path) == choice.path)?;
                    Some(HunkChoice {
                        path: restore.path.clone(),
                        restore: choice.restore.clone(),
                        now_hash: choice.now_hash.clone(),
                        conflict: choice.conflict,
                    })
                })
                .collect();
            // A front end that showed a preview names every file of it; only those go back.
            let previewed = request.hunks.is_some().then_some(choices.as_slice());
            let (plan, problems) = crate::rewind::choose_hunks(plan, previewed);
            outcome.problems.extend(problems);
            for restore in &plan {
                if restore.conflict {
                    outcome.conflicts.push(self.shown(&restore.path));
                    continue;
                }
                let shown = self.shown(&restore.path);
                if choices.iter().any(|choice| choice.path == restore.path && choice.restore.contains(&false)) {
                    outcome.partly.push(shown.clone());
                }
                outcome.restored.push(shown);
                outcome.changed.push(restore.path.clone());
                let (added, removed) = crate::tools::diff::counts(&restore.hunks());
                outcome.insertions += added;
                outcome.deletions += removed;
            }
            if !request.dry_run {
                outcome.problems.extend(checkpoints.restore(&plan));
                // What tandem knew of the files is stale now: they must be read again before an edit.
                for restore in plan.iter().filter(|restore| !restore.conflict) {
                    self.files.forget(&restore.path);
                }
            }
        }
        if request.conversation {
            match prompt_index(&self.messages, &point.text) {
                Some(keep) if request.dry_run => outcome.messages = Some(self.messages[..keep].to_vec()),
                Some(keep) => {
                    self.messages.truncate(keep);
                    self.reported_len = self.reported_len.min(keep);
                    self.log(&crate::session::SessionLine::Rewind { keep, at: crate::session::now_secs() });
                    outcome.messages = Some(self.messages.clone());
                }
                None => outcome.problems.push(
                    "the conversation no longer holds that prompt (it was compacted): only files can go back to it"
                        .into(),
                ),
            }
        }
        if !request.dry_run {
            self.pending_notes.push(model_note(&outcome));
        }
        Ok(outcome)
    }
}

/// What the model is told with the next prompt.
fn model_note(outcome: &RewindOutcome) -> String {
    let mut note = format!("[The user rewound to just before their prompt {:?}.", short(&outcome.prompt));
    if outcome.messages.is_some() {
        note.push_str(" The conversation after it was taken back.");
    }
    if !outcome.restored.is_empty() {
        note.push_str(&format!(" These files were put back as they were then: {}.", outcome.restored.join(", ")));
    }
    if !outcome.partly.is_empty() {
        note.push_str(&format!(
            " Of these, only some changes went back (the user kept the rest as it was): {}.",
            outcome.partly.join(", ")
        ));
    }
    if !outcome.conflicts.is_empty() {
        note.push_str(&format!(
            " These changed outside tandem since and were left as they are: {}.",
            outcome.conflicts.join(", ")
        ));
    }
    note.push(']');
    note
}

/// The index of the user message that sent `prompt` (the last one, when sent twice): its text is the prompt,
/// possibly after notes tandem put in front of it.
fn prompt_index(messages: &[Message], prompt: &str) -> Option<usize> {
    messages.iter().rposition(|message| {
        message.role == Role::User
            && !message
                .content
                .iter()
                .any(|block| matches!(block, crate::conversation::ContentBlock::ToolResult { .. }))
            && (message.text() == prompt || message.text().ends_with(&format!("\n\n{prompt}")))
    })
}

fn short(text: &str) -> String {
    let first = text.lines().next().unwrap_or_default();
    match first.char_indices().nth(80) {
        Some((at, _)) => format!("{}…", &first[..at]),
        None => first.to_owned(),
    }
}
