//! Restoring a session from its transcript.

use std::path::{Path, PathBuf};

use super::{LineReader, RawLine, SessionError, SessionLine, SessionMeta, read_header};
use crate::conversation::{Message, Usage};

/// A transcript read back: the current context and the session-wide totals.
#[derive(Clone, Debug, PartialEq)]
pub struct LoadedSession {
    pub meta: SessionMeta,
    /// The file it came from (where a resumed session keeps appending, see [`super::SessionWriter::reopen`]).
    pub path: PathBuf,
    /// The current context: the messages after the last compact boundary (all of them when there is none).
    pub messages: Vec<Message>,
    /// Every message line in the file, before and after compactions (replayed history included).
    pub all_messages_count: usize,
    /// The sum of every response's usage.
    pub usage_total: Usage,
    /// The sum of every response's cost; `None` when any response's cost is unknown.
    pub cost_total: Option<f64>,
    /// The latest title line.
    pub title: Option<String>,
    /// The current model: the latest `/model` change, or the header's.
    pub model: String,
    /// Whether the last line was unreadable (cut off by a crash mid-write) and ignored.
    pub torn_tail: bool,
    /// The prompts of the current context, oldest first: each one's number (its rewind checkpoint) and where its
    /// message lines start in `messages` (before the compaction's `repair_history` merges them).
    pub prompts: Vec<(u64, usize)>,
    /// The file has `prompt` lines at all (a session saved before them finds its prompts by their text).
    pub prompts_logged: bool,
    /// Every prompt with a line in the file that no rewind took back, also those compacted away since: the
    /// conversation as it stood before each can be read back ([`load_before_prompt`]).
    pub logged_prompts: Vec<u64>,
    /// What each file-changing call applied, by call id ([`SessionLine::Applied`]): its diff, shown again.
    pub applied: std::collections::HashMap<String, serde_json::Value>,
    /// What the model was to be told with the next prompt, which never came (a rewind's note).
    pub pending_notes: Vec<String>,
    /// Unreadable lines that were ignored, the torn tail included. Besides a crash, this happens when a session
    /// torn by a crash was resumed: its torn line then sits in the middle.
    pub skipped_lines: usize,
    /// The numbers (1-based) of the first unreadable lines, for saying where the damage is.
    pub damaged_lines: Vec<usize>,
}

/// Reads a transcript in one streaming pass: each line is parsed once, straight into its final types, and the
/// context is cleared at every compact boundary, so the work is linear in the file size (a 50 MB transcript
/// loads in well under a second; `cargo bench -p tandem-core --bench session`).
///
/// Only a file whose first line is not a session header (or is from a newer format) is an error; unreadable
/// later lines are skipped and counted, and lines of kinds this build does not know are ignored.
pub fn load(path: &Path) -> Result<LoadedSession, SessionError> {
    Ok(replay(path, None)?.0)
}

/// The session as it stood just before prompt `seq` was sent (its history then, and that history's prompts),
/// read from the file; `None` when the file has no line for that prompt. This is how a rewind goes back to a
/// prompt that a compaction (or an earlier rewind) took out of the conversation.
pub fn load_before_prompt(path: &Path, seq: u64) -> Result<Option<LoadedSession>, SessionError> {
    let (session, found) = replay(path, Some(seq))?;
    Ok(found.then_some(session))
}

/// Applies the file's lines in order, stopping before the prompt line of `until` (then `true`) when given.
fn replay(path: &Path, until: Option<u64>) -> Result<(LoadedSession, bool), SessionError> {
    let mut reader = LineReader::open(path).map_err(|e| SessionError::io(path, e))?;
    let meta = read_header(&mut reader, path)?;
    let mut session = LoadedSession {
        model: meta.model.clone(),
        meta,
        path: path.to_path_buf(),
        messages: Vec::new(),
        all_messages_count: 0,
        usage_total: Usage::default(),
        cost_total: Some(0.0),
        title: None,
        torn_tail: false,
        prompts: Vec::new(),
        prompts_logged: false,
        logged_prompts: Vec::new(),
        applied: std::collections::HashMap::new(),
        pending_notes: Vec::new(),
        skipped_lines: 0,
        damaged_lines: Vec::new(),
    };
    while let Some(line) = reader.next_line().map_err(|e| SessionError::io(path, e))? {
        let number = line.number;
        let parsed = line.text.and_then(|text| serde_json::from_str::<RawLine>(text).ok()).map(RawLine::into_line);
        match parsed {
            Some(Ok(Some(line))) => {
                if matches!((&line, until), (SessionLine::Prompt { seq }, Some(until)) if *seq == until) {
                    return Ok((session, true));
                }
                session.torn_tail = false;
                session.apply(line);
            }
            // A kind from a newer tandem: nothing to restore from it.
            Some(Ok(None)) => session.torn_tail = false,
            Some(Err(_)) | None => {
                session.torn_tail = true;
                session.skipped_lines += 1;
                if session.damaged_lines.len() < MAX_DAMAGED_LINES_NAMED {
                    session.damaged_lines.push(number);
                }
            }
        }
    }
    Ok((session, false))
}

/// How many damaged lines a note names.
const MAX_DAMAGED_LINES_NAMED: usize = 5;

impl LoadedSession {
    /// What to tell the user about unreadable lines that were skipped when it was loaded, naming them; `None`
    /// when there were none.
    pub fn damage_note(&self) -> Option<String> {
        if self.skipped_lines == 0 {
            return None;
        }
        let path = self.path.display();
        if self.skipped_lines == 1 && self.torn_tail {
            let line = self.damaged_lines.first().copied().unwrap_or_default();
            return Some(format!(
                "Session {}: its last line ({path}:{line}) was cut off (tandem stopped while writing it) and was \
                 left out; everything before it is restored.",
                self.meta.id
            ));
        }
        let mut lines: Vec<String> = self.damaged_lines.iter().map(usize::to_string).collect();
        if self.skipped_lines > self.damaged_lines.len() {
            lines.push(format!("{} more", self.skipped_lines - self.damaged_lines.len()));
        }
        let (them, are) = if self.skipped_lines == 1 { ("line", "is") } else { ("lines", "are") };
        Some(format!(
            "Session {} is damaged: {them} {} of {path} {are} not readable and {are} left out; the rest is \
             restored, but what those lines held is missing from the conversation.",
            self.meta.id,
            lines.join(", ")
        ))
    }

    fn apply(&mut self, line: SessionLine) {
        match line {
            // Only the first line is the header; a later one (concatenated files) carries nothing to restore.
            SessionLine::Session(_) => {}
            SessionLine::Message { message, .. } => {
                self.all_messages_count += 1;
                self.messages.push(message);
            }
            SessionLine::Usage { usage, cost_usd, .. } => {
                self.usage_total.accumulate(&usage);
                self.cost_total = self.cost_total.zip(cost_usd).map(|(total, cost)| total + cost);
            }
            SessionLine::CompactBoundary { .. } => {
                self.messages.clear();
                self.prompts.clear();
            }
            SessionLine::Restore { to_seq, .. } => {
                self.messages.clear();
                self.prompts.clear();
                self.logged_prompts.retain(|prompt| *prompt < to_seq);
            }
            SessionLine::Title { title } => self.title = Some(title),
            SessionLine::Model { model } => self.model = model,
            SessionLine::Rewind { keep, to_seq, .. } => {
                let keep = match to_seq.and_then(|seq| self.prompts.iter().find(|(at, _)| *at == seq)) {
                    Some((_, start)) => *start,
                    None => keep,
                };
                self.messages.truncate(keep);
                let taken_back = self.prompts.iter().filter(|(_, start)| *start >= keep).map(|(seq, _)| *seq);
                let first_taken_back = to_seq.into_iter().chain(taken_back).min();
                if let Some(first) = first_taken_back {
                    self.logged_prompts.retain(|prompt| *prompt < first);
                }
                self.prompts.retain(|(_, start)| *start < keep);
            }
            SessionLine::Prompt { seq } => {
                self.prompts_logged = true;
                if !self.logged_prompts.contains(&seq) {
                    self.logged_prompts.push(seq);
                }
                self.prompts.push((seq, self.messages.len()));
                self.pending_notes.clear();
            }
            SessionLine::Note { text } => self.pending_notes.push(text),
            SessionLine::Applied { call_id, change } => {
                self.applied.insert(call_id, change);
            }
        }
    }
}
