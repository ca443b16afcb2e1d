//! The prompt history's file: JSON lines (`{"prompt": ..., "cwd": ..., "time": unix_secs}`), read once at
//! start and then only appended to, one `write` per batch in append mode: two tandem processes running at once
//! each add their own lines without clobbering the other's, which a read-modify-rewrite scheme could not
//! promise. A line that does not parse (a torn write, a future format) is skipped, so a damaged file costs at
//! most those lines.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::app::history::{History, Record};

/// `history.jsonl` in tandem's data directory.
pub fn default_path(paths: &tandem_core::config::Paths) -> PathBuf {
    paths.data_dir.join("history.jsonl")
}

/// Reads the history file. A missing or unreadable file gives an empty history and a corrupt line is skipped:
/// history is a convenience and must never stop tandem from starting.
pub fn load(path: &Path) -> History {
    let contents = std::fs::read_to_string(path).unwrap_or_default();
    History::from_prompts(
        contents.lines().filter_map(|line| serde_json::from_str::<Record>(line).ok()).map(|record| record.prompt),
    )
}

/// Appends the records as one write, so concurrent writers' lines do not interleave. The file is private to
/// the user (prompts can hold secrets). A failed write is logged and otherwise ignored: the entries still work
/// for this session.
pub fn append(path: &Path, records: &[Record]) {
    if records.is_empty() {
        return;
    }
    if let Err(error) = try_append(path, records) {
        tracing::warn!("could not save prompt history to {}: {error}", path.display());
    }
}

fn try_append(path: &Path, records: &[Record]) -> std::io::Result<()> {
    if let Some(parent) = path.parent()
        && !parent.as_os_str().is_empty()
    {
        std::fs::create_dir_all(parent)?;
    }
    let mut lines = String::new();
    for record in records {
        lines.push_str(&serde_json::to_string(record).map_err(std::io::Error::other)?);
        lines.push('\n');
    }
    let mut options = OpenOptions::new();
    options.create(true).append(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)?.write_all(lines.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn push_and_save(history: &mut History, path: &Path, entry: &str) {
        history.push(entry);
        append(path, &history.take_unsaved());
    }

    #[test]
    fn pushes_persist_and_reload() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nested").join("history.jsonl");
        let mut history = load(&path);
        assert!(history.is_empty());
        history.set_cwd("/project");
        push_and_save(&mut history, &path, "first");
        push_and_save(&mut history, &path, "second\nwith a newline");
        assert_eq!(load(&path).entries().collect::<Vec<_>>(), ["first", "second\nwith a newline"]);
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
        let mut one = load(&path);
        let mut two = load(&path);
        push_and_save(&mut one, &path, "from one");
        push_and_save(&mut two, &path, "from two");
        push_and_save(&mut one, &path, "one again");
        assert_eq!(load(&path).entries().collect::<Vec<_>>(), ["from one", "from two", "one again"]);
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
        assert_eq!(load(&path).entries().collect::<Vec<_>>(), ["a", "b"]);
        // A line without cwd/time (older format) still loads.
        std::fs::write(&path, "{\"prompt\":\"bare\"}\n").unwrap();
        assert_eq!(load(&path).get(0), Some("bare"));
    }

    #[test]
    fn missing_or_unreadable_file_is_empty() {
        let dir = tempfile::tempdir().unwrap();
        assert!(load(&dir.path().join("absent.jsonl")).is_empty());
        // A directory where the file should be: loading and saving both carry on.
        let mut history = load(dir.path());
        push_and_save(&mut history, dir.path(), "kept in memory");
        assert_eq!(history.get(0), Some("kept in memory"));
    }

    #[test]
    fn default_path_is_in_the_data_dir() {
        let paths = tandem_core::config::Paths { config_dir: "/c".into(), data_dir: "/d".into() };
        assert_eq!(default_path(&paths), PathBuf::from("/d/history.jsonl"));
    }
}
