//! Prompt history, shared by every tandem session of a user and kept across sessions: the entries in memory
//! and the ones not saved yet. The file itself (`crate::tui::history_file`) is read and appended to by the
//! runtime, so the app stays free of I/O.

use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

/// How many entries are kept in memory. Older ones stay in the file but are not loaded.
pub const HISTORY_CAP: usize = 1_000;

/// One line of the history file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    pub prompt: String,
    /// Where the prompt was typed; recorded so a later version can prefer the current project's prompts.
    #[serde(default)]
    pub cwd: String,
    #[serde(default)]
    pub time: u64,
}

/// Prompts, oldest first.
#[derive(Clone, Debug, Default)]
pub struct History {
    entries: Vec<String>,
    /// Entries added since the runtime last saved (see [`History::take_unsaved`]).
    unsaved: Vec<Record>,
    /// Whether new entries are kept for saving; an in-memory history drops them.
    persistent: bool,
    /// Recorded with each entry; the process's working directory unless set.
    cwd: Option<String>,
    cap: usize,
}

impl History {
    /// A history that starts with `prompts` (oldest first, as read from the file) and keeps new entries for
    /// saving.
    pub fn from_prompts(prompts: impl IntoIterator<Item = String>) -> History {
        let mut history = History { persistent: true, ..History::in_memory() };
        for prompt in prompts {
            history.remember(prompt);
        }
        history
    }

    /// A history that is never saved anywhere (tests, `--no-history` style setups).
    pub fn in_memory() -> History {
        History { entries: Vec::new(), unsaved: Vec::new(), persistent: false, cwd: None, cap: HISTORY_CAP }
    }

    /// Keeps at most `cap` entries in memory (at least one).
    pub fn with_cap(mut self, cap: usize) -> History {
        self.cap = cap.max(1);
        self.trim();
        self
    }

    /// The directory recorded with new entries (defaults to the process's working directory).
    pub fn set_cwd(&mut self, cwd: impl Into<String>) {
        self.cwd = Some(cwd.into());
    }

    /// Adds a prompt (saved by the runtime right after). Blank prompts and a repeat of the newest entry are
    /// ignored, so walking back never shows the same prompt twice in a row.
    pub fn push(&mut self, entry: impl Into<String>) {
        let entry = entry.into();
        if self.remember(entry.clone()) && self.persistent {
            let record = self.record(entry);
            self.unsaved.push(record);
        }
    }

    /// The entries added since the last call, for the runtime to append to the file.
    pub fn take_unsaved(&mut self) -> Vec<Record> {
        std::mem::take(&mut self.unsaved)
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entry at `index` (0 is the oldest).
    pub fn get(&self, index: usize) -> Option<&str> {
        self.entries.get(index).map(String::as_str)
    }

    /// All entries, oldest first.
    pub fn entries(&self) -> impl DoubleEndedIterator<Item = &str> + ExactSizeIterator {
        self.entries.iter().map(String::as_str)
    }

    /// The newest entry older than `before_index` that contains `query`, for reverse incremental search.
    /// Pass `len()` to search from the newest. Matching is case-insensitive unless the query has an
    /// uppercase letter ("smart case", as in most editors). An empty query matches every entry.
    pub fn search(&self, query: &str, before_index: usize) -> Option<usize> {
        let end = before_index.min(self.entries.len());
        let case_sensitive = query.chars().any(char::is_uppercase);
        let needle = if case_sensitive { query.to_owned() } else { query.to_lowercase() };
        self.entries[..end].iter().rposition(|entry| {
            if case_sensitive { entry.contains(&needle) } else { entry.to_lowercase().contains(&needle) }
        })
    }

    /// Adds an entry in memory; false when it is blank or repeats the newest one.
    fn remember(&mut self, entry: String) -> bool {
        if entry.trim().is_empty() || self.entries.last() == Some(&entry) {
            return false;
        }
        self.entries.push(entry);
        self.trim();
        true
    }

    fn trim(&mut self) {
        if self.entries.len() > self.cap {
            let excess = self.entries.len() - self.cap;
            self.entries.drain(..excess);
        }
    }

    fn record(&self, prompt: String) -> Record {
        let cwd = self
            .cwd
            .clone()
            .unwrap_or_else(|| std::env::current_dir().map(|dir| dir.display().to_string()).unwrap_or_default());
        let time = SystemTime::now().duration_since(UNIX_EPOCH).map(|elapsed| elapsed.as_secs()).unwrap_or(0);
        Record { prompt, cwd, time }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deduplicates_consecutive_and_ignores_blank() {
        let mut history = History::in_memory();
        for entry in ["a", "a", "b", "a", "  ", ""] {
            history.push(entry);
        }
        assert_eq!(history.entries().collect::<Vec<_>>(), ["a", "b", "a"]);
        assert!(history.take_unsaved().is_empty(), "an in-memory history saves nothing");
    }

    #[test]
    fn search_is_newest_first_and_smart_case() {
        let mut history = History::in_memory();
        for entry in ["fix the build", "Run tests", "fix typo", "deploy"] {
            history.push(entry);
        }
        assert_eq!(history.search("fix", history.len()), Some(2));
        assert_eq!(history.search("fix", 2), Some(0));
        assert_eq!(history.search("fix", 0), None);
        assert_eq!(history.search("run", 10), Some(1));
        assert_eq!(history.search("RUN", 10), None);
        assert_eq!(history.search("", 4), Some(3));
        assert_eq!(history.search("nothing", 4), None);
    }

    #[test]
    fn caps_entries_in_memory() {
        let mut big = History::in_memory();
        for i in 0..HISTORY_CAP + 10 {
            big.push(format!("{i}"));
        }
        assert_eq!(big.len(), HISTORY_CAP);
        assert_eq!(big.get(0), Some("10"));
        let mut small = History::from_prompts((0..5).map(|i| format!("p{i}"))).with_cap(3);
        assert_eq!(small.entries().collect::<Vec<_>>(), ["p2", "p3", "p4"]);
        small.push("new");
        assert_eq!(small.take_unsaved().iter().map(|record| record.prompt.as_str()).collect::<Vec<_>>(), ["new"]);
        assert!(small.take_unsaved().is_empty(), "taken once");
    }
}
