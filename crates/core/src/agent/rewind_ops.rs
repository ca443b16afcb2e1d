//! Rewind in the session: the prompts it can go back to, what going back would change, and going back — the
//! conversation to just before the prompt, the files tandem's tools changed to what they were then
//! (`crate::rewind`, all of them or chosen hunks), or both. The model is told what was rewound with the next
//! prompt; the conversation's cut is logged, so it holds after `--resume`.

use std::path::Path;

use crate::conversation::{Message, Role};
use crate::protocol::{Event, RewindFileView, RewindHunks, RewindOutcome, RewindPointView, RewindTarget};
use crate::rewind::{FileRestore, HunkChoice, RewindPoint};

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
            Some(checkpoints) => {
                let points = checkpoints.points();
                // One pass over the conversation for every prompt (a long session has hundreds).
                let positions = PromptPositions::of(self, &points);
                points
                    .iter()
                    .map(|point| RewindPointView {
                        seq: point.seq,
                        files: point.files.iter().map(|path| self.shown(path)).collect(),
                        text: point.text.clone(),
                        in_conversation: positions.of_prompt(point.seq).is_some()
                            || self.logged_prompts.contains(&point.seq),
                    })
                    .collect()
            }
            None => Vec::new(),
        };
        self.emit(Event::RewindPoints(points));
    }

    /// Where prompt `seq` starts in the conversation now — (message, block): a prompt sent after an interrupt
    /// shares the message of the tool results before it — or `None` when it is no longer there (rewound,
    /// compacted away). The prompts still in it are matched by their texts from the newest back, so a prompt
    /// sent twice is told apart by its place.
    fn prompt_position(&self, points: &[RewindPoint], seq: u64) -> Option<(usize, usize)> {
        PromptPositions::of(self, points).of_prompt(seq)
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
        let dry_run = request.dry_run;
        let outcome = self.rewind_outcome(request);
        if !dry_run {
            // The cut and the model's note hold even if the process is killed before the next turn.
            self.flush_log();
            if outcome.as_ref().is_ok_and(|outcome| outcome.messages.is_some()) {
                // The context shown is the shorter conversation's.
                let used = self.request_tokens(&self.request());
                self.emit(Event::Context { used, window: self.config.model.context_window });
            }
        }
        self.emit(Event::Rewound(outcome));
    }

    fn rewind_outcome(&mut self, request: RewindRequest) -> Result<RewindOutcome, String> {
        let checkpoints =
            self.checkpoints.clone().ok_or("This session keeps no checkpoints (it has no log).".to_owned())?;
        let points = checkpoints.points();
        let point = match &request.to {
            RewindTarget::Prompt(seq) => points.iter().find(|point| point.seq == *seq).cloned(),
            // A host that sent the same uuid twice means its latest message.
            RewindTarget::Message(id) => {
                points.iter().rev().find(|point| point.id.as_deref() == Some(id.as_str())).cloned()
            }
        };
        let point = point.ok_or_else(|| match &request.to {
            RewindTarget::Prompt(seq) => format!("There is no prompt {seq} to go back to."),
            RewindTarget::Message(id) => format!("No file checkpoint was kept for user message {id}."),
        })?;
        let mut outcome = RewindOutcome {
            prompt: point.text.clone(),
            seq: point.seq,
            dry_run: request.dry_run,
            ..Default::default()
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
                if restore.target.is_none() {
                    outcome.removed.push(shown.clone());
                }
                outcome.restored.push(shown);
                outcome.changed.push(restore.path.clone());
                let (added, removed) = crate::diff::counts(&restore.hunks());
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
            match self.prompt_position(&points, point.seq) {
                Some(at) => {
                    let kept = cut(&self.messages, at);
                    if !request.dry_run {
                        self.take_back_conversation(at, kept.clone(), point.seq);
                    }
                    outcome.messages = Some(kept);
                }
                None => match self.conversation_from_log(point.seq) {
                    Ok(Some(then)) => {
                        let kept = crate::context::compact::repair_history(then.messages.clone());
                        if !request.dry_run {
                            self.take_back_from_log(then, kept.clone(), point.seq);
                        }
                        outcome.messages = Some(kept);
                    }
                    Ok(None) => outcome.problems.push(
                        "that prompt is no longer in the conversation (a rewind took it back, or it was compacted in \
                         a session without a log): only files can go back to it"
                            .into(),
                    ),
                    Err(err) => outcome.problems.push(format!(
                        "that prompt is no longer in the conversation and the session log could not be read back \
                         ({err}): only files can go back to it"
                    )),
                },
            }
        }
        // The model hears of a rewind that changed something (not of one that found nothing to put back).
        if !request.dry_run && (outcome.messages.is_some() || !outcome.restored.is_empty()) {
            let note = model_note(&outcome);
            // Logged, so that a restart before the next prompt does not lose it.
            self.log(&crate::session::SessionLine::Note { text: note.clone() });
            self.pending_notes.push(note);
        }
        Ok(outcome)
    }

    /// The conversation goes back to `kept`, just before prompt `seq` (which started at `at`), and so does what
    /// the session knows of it.
    fn take_back_conversation(&mut self, at: (usize, usize), kept: Vec<Message>, seq: u64) {
        // The chosen prompt told the model its previous answer was interrupted: the next one must too.
        let interrupted = matches!(
            self.messages.get(at.0).and_then(|message| message.content.get(at.1)),
            Some(crate::conversation::ContentBlock::Text { text }) if text.contains(super::INTERRUPTED_NOTE)
        );
        let mut live = std::mem::take(&mut self.live_prompts);
        if let Some(chosen) = live.iter().position(|prompt| *prompt == seq) {
            live.truncate(chosen);
        }
        self.become_conversation(kept, live, interrupted, seq);
        let keep = self.messages.len();
        self.log(&crate::session::SessionLine::Rewind { keep, at: crate::session::now_secs(), to_seq: Some(seq) });
    }

    /// The conversation is `kept` now, with `live` its prompts, as it was just before prompt `seq`; what the
    /// session knows of it follows.
    fn become_conversation(&mut self, kept: Vec<Message>, live: Vec<u64>, interrupted: bool, seq: u64) {
        self.interrupted = interrupted;
        self.replace_conversation(kept);
        // What the model read in the part taken back is not in its context any more: a Read must return the
        // file, not "unchanged since you last read it", and an edit needs a Read first again.
        self.files = std::sync::Arc::new(crate::tools::FileState::default());
        // The checklist is the one the kept conversation last wrote.
        self.set_todos(crate::tools::todo_write::current_todos(&self.messages).unwrap_or_default());
        self.live_prompts = live;
        // The prompts taken back are a branch the user left: not a place to go back to.
        self.logged_prompts.retain(|prompt| *prompt < seq);
    }

    /// The conversation as it stood just before prompt `seq`, read back from the session log (for a prompt a
    /// compaction or a rewind took out of the conversation); `None` when the log does not have it.
    fn conversation_from_log(&mut self, seq: u64) -> Result<Option<crate::session::LoadedSession>, String> {
        if !self.logged_prompts.contains(&seq) {
            return Ok(None);
        }
        let Some(log) = &mut self.config.session_log else { return Ok(None) };
        // What is still queued must be in the file before it is read.
        log.write_through().map_err(|err| err.to_string())?;
        crate::session::load_before_prompt(log.path(), seq).map_err(|err| err.to_string())
    }

    /// The conversation becomes `kept` (`then`'s history, repaired), as it was before prompt `seq`, and so does
    /// what the session knows of it; the log records the restored history, so it holds after `--resume`.
    fn take_back_from_log(&mut self, then: crate::session::LoadedSession, kept: Vec<Message>, seq: u64) {
        let interrupted = super::user_message::ends_interrupted(&kept);
        let live = then.prompts.iter().map(|(prompt, _)| *prompt).collect();
        self.become_conversation(kept, live, interrupted, seq);
        self.untracked_prompts = false;
        let failed = match &mut self.config.session_log {
            Some(log) => log
                .append_restore(seq, &then.messages, &then.prompts)
                .err()
                .map(|err| super::turn::save_failure(log, &err)),
            None => None,
        };
        if let Some(message) = failed {
            self.report_save_failure(message);
        }
    }
}

/// The start of what the model is told after a rewind (front ends showing a saved conversation show such a
/// note as what it is, not as something the user typed).
pub const REWIND_NOTE_START: &str = "<system-reminder>The user rewound";

/// Where the prompts still in the conversation start, found in one pass from the newest back.
struct PromptPositions<'a> {
    messages: &'a [Message],
    texts: std::collections::HashMap<u64, &'a str>,
    /// (prompt, (message, block)), newest first.
    found: Vec<(u64, (usize, usize))>,
    /// Where the oldest found prompt starts: older prompts are before it.
    before: (usize, usize),
    /// The session was saved before prompts were logged: prompts older than every logged one are found by text.
    untracked_before: Option<u64>,
}

impl<'a> PromptPositions<'a> {
    fn of(session: &'a Session, points: &'a [RewindPoint]) -> PromptPositions<'a> {
        let texts: std::collections::HashMap<u64, &str> =
            points.iter().map(|point| (point.seq, point.text.as_str())).collect();
        let mut found = Vec::new();
        let mut before = (session.messages.len(), 0);
        for live in session.live_prompts.iter().rev() {
            let Some(at) = texts.get(live).and_then(|text| last_prompt_block(&session.messages, text, before)) else {
                break;
            };
            found.push((*live, at));
            before = at;
        }
        let untracked_before = session
            .untracked_prompts
            .then(|| session.live_prompts.first().copied().unwrap_or(u64::MAX))
            .filter(|_| found.len() == session.live_prompts.len());
        PromptPositions { messages: &session.messages, texts, found, before, untracked_before }
    }

    /// Where prompt `seq` starts, if it is still in the conversation.
    fn of_prompt(&self, seq: u64) -> Option<(usize, usize)> {
        if let Some((_, at)) = self.found.iter().find(|(found, _)| *found == seq) {
            return Some(*at);
        }
        match self.untracked_before {
            Some(first_logged) if seq < first_logged => {
                last_prompt_block(self.messages, self.texts.get(&seq)?, self.before)
            }
            _ => None,
        }
    }
}

/// What the model is told with the next prompt.
fn model_note(outcome: &RewindOutcome) -> String {
    let mut note = format!("{REWIND_NOTE_START} to just before their prompt {:?}.", short(&outcome.prompt));
    if outcome.messages.is_some() {
        note.push_str(" The conversation after it was taken back.");
    }
    if !outcome.restored.is_empty() {
        note.push_str(&format!(" These files were put back as they were then: {}.", outcome.restored.join(", ")));
    }
    if !outcome.removed.is_empty() {
        note.push_str(&format!(
            " Of these, these did not exist then and were removed: {}.",
            outcome.removed.join(", ")
        ));
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
    note.push_str("</system-reminder>");
    note
}

/// The rewind notes a prompt's text carries ([`model_note`]), worded for the user: a front end showing a saved
/// conversation shows them as notices, not as something the user typed.
pub fn rewind_notes_for_user(text: &str) -> Vec<String> {
    const END: &str = "</system-reminder>";
    let mut notes = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find(REWIND_NOTE_START) {
        let note = &rest[start + "<system-reminder>".len()..];
        let end = note.find(END).unwrap_or(note.len());
        // Told to the model about the user; shown to the user about what they did.
        let said = note[..end]
            .trim()
            .replacen("The user rewound", "Rewound", 1)
            .replace("their prompt", "your prompt")
            .replace("the user kept", "you kept");
        notes.push(format!("↺ {said}"));
        rest = &note[end..];
    }
    notes
}

/// The last text block of a user message before `before` — (message, block) — that sent `prompt`: its text is
/// the prompt, possibly after notes tandem put in front of it.
fn last_prompt_block(messages: &[Message], prompt: &str, before: (usize, usize)) -> Option<(usize, usize)> {
    let sent = |text: &str| text == prompt || text.strip_suffix(prompt).is_some_and(|notes| notes.ends_with("\n\n"));
    (0..before.0.saturating_add(1).min(messages.len())).rev().find_map(|index| {
        let message = &messages[index];
        let end = if index == before.0 { before.1 } else { message.content.len() };
        if message.role != Role::User {
            return None;
        }
        message.content[..end.min(message.content.len())]
            .iter()
            .rposition(|block| matches!(block, crate::conversation::ContentBlock::Text { text } if sent(text)))
            .map(|block| (index, block))
    })
}

/// The conversation up to (not including) the prompt at `at`.
fn cut(messages: &[Message], (message, block): (usize, usize)) -> Vec<Message> {
    let mut kept = messages[..message.min(messages.len())].to_vec();
    if block > 0 {
        let mut shared = messages[message].clone();
        shared.content.truncate(block);
        kept.push(shared);
    }
    kept
}

fn short(text: &str) -> String {
    let first = text.lines().next().unwrap_or_default();
    match first.char_indices().nth(80) {
        Some((at, _)) => format!("{}…", &first[..at]),
        None => first.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::ContentBlock;

    fn user(blocks: Vec<ContentBlock>) -> Message {
        Message { role: Role::User, content: blocks }
    }

    fn answer(text: &str) -> Message {
        Message { role: Role::Assistant, content: vec![ContentBlock::text(text)] }
    }

    #[test]
    fn a_prompt_is_found_after_notes_and_before_a_bound_and_cut_inside_a_shared_message() {
        let result = ContentBlock::ToolResult { tool_use_id: "t".into(), content: "not run".into(), is_error: true };
        let messages = vec![
            user(vec![ContentBlock::text("again")]),
            answer("one"),
            user(vec![result.clone(), ContentBlock::text("<system-reminder>note</system-reminder>\n\nagain")]),
            answer("two"),
        ];
        // The newest "again" is inside the message it shares with a tool result.
        let newest = last_prompt_block(&messages, "again", (messages.len(), 0)).unwrap();
        assert_eq!(newest, (2, 1));
        // Before it, the older one.
        assert_eq!(last_prompt_block(&messages, "again", newest), Some((0, 0)));
        assert_eq!(last_prompt_block(&messages, "gain", (messages.len(), 0)), None, "a whole prompt, not a tail");
        let kept = cut(&messages, newest);
        assert_eq!(kept.len(), 3);
        assert_eq!(kept[2].content, vec![result]);
        assert_eq!(cut(&messages, (0, 0)), Vec::<Message>::new());
    }

    #[test]
    fn the_models_note_reads_to_the_user_as_what_they_did() {
        let outcome = RewindOutcome {
            prompt: "write notes".into(),
            messages: Some(Vec::new()),
            restored: vec!["notes.md".into()],
            partly: vec!["notes.md".into()],
            ..RewindOutcome::default()
        };
        let note = model_note(&outcome);
        let text = format!("{note}\n{note}\n\nwhat changed?");
        let shown = rewind_notes_for_user(&text);
        assert_eq!(shown.len(), 2);
        assert_eq!(
            shown[0],
            "↺ Rewound to just before your prompt \"write notes\". The conversation after it was taken back. These \
             files were put back as they were then: notes.md. Of these, only some changes went back (you kept the \
             rest as it was): notes.md."
        );
    }
}
