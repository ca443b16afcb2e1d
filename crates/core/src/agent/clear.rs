//! `/clear`: a new conversation in a new session of its own.

use std::sync::Arc;

use super::lock;
use super::turn::Session;
use crate::conversation::Usage;
use crate::protocol::Event;
use crate::tools::FileState;

impl Session {
    /// Forgets the conversation (and what was read in it); totals and settings stay.
    /// `/clear`: a new conversation in a new session (its own id and log file); the old session stays saved and
    /// listed, and `--continue` resumes the new one from now on.
    pub(super) fn clear(&mut self) {
        self.replace_conversation(Vec::new());
        self.live_prompts.clear();
        self.untracked_prompts = false;
        self.pending_notes.clear();
        self.compaction_floor = 0;
        self.files = Arc::new(FileState::default());
        self.interrupted = false;
        self.titled = false;
        self.total_usage = Usage::default();
        self.total_cost = Some(0.0);
        self.flush_log();
        if let Some(old) = self.config.session_log.take() {
            match self.start_new_log(&old) {
                Ok(new) => {
                    self.config.session_id = new.id().to_owned();
                    // Requests and rewind points are the new session's, in its own directory.
                    let dir = new.path().with_extension("");
                    if let Some(recorder) = &self.recorder {
                        recorder.move_to(&dir);
                    }
                    if self.checkpoints.is_some() {
                        self.checkpoints = Some(Arc::new(crate::rewind::Checkpoints::for_session_dir(&dir)));
                    }
                    self.config.session_log = Some(new);
                }
                Err(err) => {
                    // Keep recording somewhere: in the old file, after a boundary with an empty history.
                    self.emit(Event::Error { message: format!("Could not start a new session file: {err}") });
                    let mut old = old;
                    let _ = old.append_compaction(crate::session::CompactTrigger::Manual, 0, &[]);
                    self.config.session_log = Some(old);
                    self.flush_log();
                }
            }
        }
        self.emit(Event::ConversationCleared);
        if !self.todos.is_empty() {
            self.todos.clear();
            self.emit(Event::Todos(Vec::new()));
        }
        self.announce_session();
        self.emit(Event::Usage {
            total: Usage::default(),
            last: Usage::default(),
            cost_usd: self.total_cost,
            context_window: self.config.model.context_window,
        });
    }

    /// Creates the log of the session that follows `old` (same data directory), and lets the tools read its
    /// saved outputs instead of the old one's.
    fn start_new_log(&mut self, old: &crate::session::SessionWriter) -> std::io::Result<crate::session::SessionWriter> {
        let sessions = old.path().parent().ok_or_else(|| std::io::Error::other("the session file has no directory"))?;
        let data_dir =
            sessions.parent().ok_or_else(|| std::io::Error::other("the sessions directory has no parent"))?;
        let meta = crate::session::SessionMeta::new(
            self.config.cwd.clone(),
            self.config.provider.endpoint().name.clone(),
            self.config.model.id.clone(),
        );
        let new = crate::session::SessionWriter::create(data_dir, meta)?;
        let mut policy = lock(&self.shared.policy);
        policy.workspace = policy.workspace.clone().with_data_dir(data_dir, &[new.path().with_extension("")]);
        Ok(new)
    }
}
