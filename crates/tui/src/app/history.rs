//! Prompt history, shared by every tandem session of a user and kept across sessions.
//!
//! The file is JSON lines (`{"prompt": ..., "cwd": ..., "time": unix_secs}`), read once at start and then only
//! appended to, one `write` per entry in append mode: two tandem processes running at once each add their own
//! lines without clobbering the other's, which a read-modify-rewrite scheme could not promise. A line that
//! does not parse (a torn write, a future format) is skipped, so a damaged file costs at most those lines.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

/// How many entries are kept in memory. Older ones stay in the file but are not loaded.
pub const HISTORY_CAP: usize = 1_000;

/// One line of the history file.
#[derive(Debug, Serialize, Deserialize)]
struct Record {
    prompt: String,
    /// Where the prompt was typed; recorded so a later version can prefer the current project's prompts.
    #[serde(default)]
    cwd: String,
    #[serde(default)]
    time: u64,
}

/// Prompts, oldest first.
#[derive(Clone, Debug, Default)]
pub struct History {
    entries: Vec<String>,
    /// Where new entries are appended; `None` keeps them in memory only.
    path: Option<PathBuf>,
    /// Recorded with each entry; the process's working directory unless set.
    cwd: Option<String>,
    cap: usize,
}

impl History {
    /// Reads the history file. A missing or unreadable file gives an empty history and a corrupt line is
    /// skipped: history is a convenience and must never stop tandem from starting.
    pub fn load(path: impl Into<PathBuf>) -> History {
        let path = path.into();
        let mut history = History { path: Some(path.clone()), ..History::in_memory() };
        let Ok(contents) = std::fs::read_to_string(&path) else {
            return history;
        };
        for line in contents.lines() {
            if let Ok(record) = serde_json::from_str::<Record>(line) {
                history.remember(record.prompt);
            }
        }
        history
    }

    /// A history that is never written anywhere (tests, `--no-history` style setups).
    pub fn in_memory() -> History {
        History { entries: Vec::new(), path: None, cwd: None, cap: HISTORY_CAP }
    }

    /// `history.jsonl` in tandem's data directory.
    pub fn default_path(paths: &tandem_core::config::Paths) -> PathBuf {
        paths.data_dir.join("history.jsonl")
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

    /// Adds a prompt and appends it to the file at once. Blank prompts and a repeat of the newest entry are
    /// ignored, so walking back never shows the same prompt twice in a row. A failed write is logged and
    /// otherwise ignored: the entry still works for this session.
    pub fn push(&mut self, entry: impl Into<String>) {
        let entry = entry.into();
        if !self.remember(entry.clone()) {
            return;
        }
        if let Some(path) = &self.path
            && let Err(error) = append(path, &self.record(entry))
        {
            tracing::warn!("could not save prompt history to {}: {error}", path.display());
        }
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

    /// The file new entries go to, if any.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
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

/// Appends one record as a single write, so concurrent writers' lines do not interleave. The file is
/// private to the user (prompts can hold secrets).
fn append(path: &Path, record: &Record) -> std::io::Result<()> {
    if let Some(parent) = path.parent()
        && !parent.as_os_str().is_empty()
    {
        std::fs::create_dir_all(parent)?;
    }
    let mut line = serde_json::to_string(record).map_err(std::io::Error::other)?;
    line.push('\n');
    let mut options = OpenOptions::new();
    options.create(true).append(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)?.write_all(line.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_persists_and_reloads() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nested").join("history.jsonl");
        let mut history = History::load(&path);
        assert!(history.is_empty());
        history.set_cwd("/project");
        history.push("first");
        history.push("second\nwith a newline");
        let reloaded = History::load(&path);
        assert_eq!(reloaded.entries().collect::<Vec<_>>(), ["first", "second\nwith a newline"]);
        let contents = std::fs::read_to_string(&path).unwrap();
        let record: serde_json::Value = serde_json::from_str(contents.lines().next().unwrap()).unwrap();
        assert_eq!(record["prompt"], "first");
        assert_eq!(record["cwd"], "/project");
        assert!(record["time"].as_u64().unwrap() > 1_600_000_000);
    }

    #[test]
    fn two_writers_append_without_clobbering() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history.jsonl");
        let mut one = History::load(&path);
        let mut two = History::load(&path);
        one.push("from one");
        two.push("from two");
        one.push("one again");
        assert_eq!(History::load(&path).entries().collect::<Vec<_>>(), ["from one", "from two", "one again"]);
        // Each process only knows its own pushes plus what was on disk at start.
        assert_eq!(one.len(), 2);
    }

    #[test]
    fn corrupt_lines_are_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history.jsonl");
        let good = |prompt: &str| format!("{{\"prompt\":{prompt:?},\"cwd\":\"/\",\"time\":1}}\n");
        let contents = format!("{}not json\n{{\"prompt\": 5}}\n{}{{\"prompt\":\"tor", good("a"), good("b"));
        std::fs::write(&path, contents).unwrap();
        assert_eq!(History::load(&path).entries().collect::<Vec<_>>(), ["a", "b"]);
        // A line without cwd/time (older format) still loads.
        std::fs::write(&path, "{\"prompt\":\"bare\"}\n").unwrap();
        assert_eq!(History::load(&path).get(0), Some("bare"));
    }

    #[test]
    fn missing_or_unreadable_file_is_empty() {
        let dir = tempfile::tempdir().unwrap();
        assert!(History::load(dir.path().join("absent.jsonl")).is_empty());
        // A directory where the file should be: loading and pushing both carry on.
        let mut history = History::load(dir.path());
        history.push("kept in memory");
        assert_eq!(history.get(0), Some("kept in memory"));
    }

    #[test]
    fn deduplicates_consecutive_and_ignores_blank() {
        let mut history = History::in_memory();
        for entry in ["a", "a", "b", "a", "  ", ""] {
            history.push(entry);
        }
        assert_eq!(history.entries().collect::<Vec<_>>(), ["a", "b", "a"]);
        assert!(history.path().is_none());
    }

    #[test]
    fn caps_entries_in_memory_and_on_load() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history.jsonl");
        let mut history = History::load(&path).with_cap(3);
        for i in 0..5 {
            history.push(format!("p{i}"));
        }
        assert_eq!(history.entries().collect::<Vec<_>>(), ["p2", "p3", "p4"]);
        assert_eq!(History::load(&path).len(), 5);
        assert_eq!(History::load(&path).with_cap(2).entries().collect::<Vec<_>>(), ["p3", "p4"]);

        let mut big = History::in_memory();
        for i in 0..HISTORY_CAP + 10 {
            big.push(format!("{i}"));
        }
        assert_eq!(big.len(), HISTORY_CAP);
        assert_eq!(big.get(0), Some("10"));
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
    fn default_path_is_in_the_data_dir() {
        let paths = tandem_core::config::Paths { config_dir: "/c".into(), data_dir: "/d".into() };
        assert_eq!(History::default_path(&paths), PathBuf::from("/d/history.jsonl"));
    }
}
