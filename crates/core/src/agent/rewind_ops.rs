//! Rewind in the session: the prompts it can go back to, and going back — the conversation to just before the
//! prompt, the files tandem's tools changed to what they were then (`crate::rewind`), or both. The model is told
//! what was rewound with the next prompt; the conversation's cut is logged, so it holds after `--resume`.

use crate::conversation::{Message, Role};
use crate::protocol::{Event, RewindOutcome, RewindPointView};
use crate::rewind::FileRestore;

use super::turn::Session;

impl Session {
    pub(super) fn list_rewind_points(&mut self) {
        let Some(checkpoints) = self.checkpoints.clone() else {
            self.emit(Event::RewindPoints(Vec::new()));
            return;
        };
        let cwd = self.config.cwd.clone();
        let shown = |path: &std::path::Path| crate::tools::display_path(path, &cwd);
        let points = checkpoints
            .points()
            .into_iter()
            .map(|point| {
                let plan = checkpoints.plan(point.seq).unwrap_or_default();
                RewindPointView {
                    seq: point.seq,
                    text: point.text,
                    files: point.files.iter().map(|path| shown(path)).collect(),
                    diff: plan.iter().map(|restore| restore_diff(restore, &shown(&restore.path))).collect(),
                    conflicts: plan
                        .iter()
                        .filter(|restore| restore.conflict)
                        .map(|restore| shown(&restore.path))
                        .collect(),
                }
            })
            .collect();
        self.emit(Event::RewindPoints(points));
    }

    pub(super) fn rewind(&mut self, seq: u64, conversation: bool, files: bool) {
        let Some(checkpoints) = self.checkpoints.clone() else {
            self.emit(Event::Error { message: "This session keeps no checkpoints (it has no log).".into() });
            return;
        };
        let Some(point) = checkpoints.points().into_iter().find(|point| point.seq == seq) else {
            self.emit(Event::Error { message: format!("There is no prompt {seq} to go back to.") });
            return;
        };
        let cwd = self.config.cwd.clone();
        let shown = |path: &std::path::Path| crate::tools::display_path(path, &cwd);
        let mut outcome = RewindOutcome {
            prompt: point.text.clone(),
            messages: None,
            restored: Vec::new(),
            conflicts: Vec::new(),
            problems: Vec::new(),
        };
        if files {
            match checkpoints.plan(seq) {
                Ok(plan) => {
                    outcome.problems = checkpoints.restore(&plan);
                    for restore in &plan {
                        let list = if restore.conflict { &mut outcome.conflicts } else { &mut outcome.restored };
                        list.push(shown(&restore.path));
                    }
                    // What tandem knew of the files is stale now: they must be read again before an edit.
                    for restore in plan.iter().filter(|restore| !restore.conflict) {
                        self.files.forget(&restore.path);
                    }
                }
                Err(err) => outcome.problems.push(format!("the checkpoints could not be read: {err}")),
            }
        }
        if conversation {
            match prompt_index(&self.messages, &point.text) {
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
        let mut note = format!("[The user rewound to just before their prompt {:?}.", short(&point.text));
        if outcome.messages.is_some() {
            note.push_str(" The conversation after it was taken back.");
        }
        if !outcome.restored.is_empty() {
            note.push_str(&format!(" These files were put back as they were then: {}.", outcome.restored.join(", ")));
        }
        if !outcome.conflicts.is_empty() {
            note.push_str(&format!(
                " These changed outside tandem since and were left as they are: {}.",
                outcome.conflicts.join(", ")
            ));
        }
        note.push(']');
        self.pending_notes.push(note);
        self.emit(Event::Rewound(outcome));
    }
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

/// What going back does to one file, as a unified diff from now to then.
fn restore_diff(restore: &FileRestore, shown: &str) -> String {
    let now = restore.current.as_deref().map(String::from_utf8_lossy).unwrap_or_default();
    let then = restore.target.as_deref().map(String::from_utf8_lossy).unwrap_or_default();
    let mut diff = crate::tools::diff::unified_diff(shown, &now, &then, 3);
    if restore.conflict {
        diff = format!("# {shown}: changed outside tandem since; left as it is\n{diff}");
    } else if restore.target.is_none() {
        diff = format!("# {shown}: created since; removed\n{diff}");
    }
    diff
}
