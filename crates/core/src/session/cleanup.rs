//! Claude Code's `cleanupPeriodDays`: sessions not saved to for longer than that are deleted, with everything
//! that belongs to them (the transcript, and the session's directory: request recordings, rewind checkpoints,
//! saved outputs, subagents' transcripts). Never the session in use, nor one another tandem has open (its lock
//! is held, see [`super::SessionWriter`]).

use std::path::Path;
use std::time::{Duration, SystemTime};

use super::{EXTENSION, sessions_dir};

/// Claude Code's default.
pub const DEFAULT_PERIOD_DAYS: u64 = 30;

/// What a cleanup removed.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Cleaned {
    pub sessions: usize,
    pub bytes: u64,
}

/// Deletes the sessions in `data_dir` last saved more than `days` days ago, except `in_use`.
pub fn remove_old(data_dir: &Path, days: u64, in_use: &str) -> Cleaned {
    let cutoff = SystemTime::now().checked_sub(Duration::from_secs(days.saturating_mul(86_400)));
    let Some(cutoff) = cutoff else { return Cleaned::default() };
    let dir = sessions_dir(data_dir);
    let mut cleaned = Cleaned::default();
    let Ok(entries) = std::fs::read_dir(&dir) else { return cleaned };
    for entry in entries.flatten() {
        let path = entry.path();
        let Some(id) = session_id(&path) else { continue };
        if id == in_use || modified(&path).is_none_or(|at| at > cutoff) || open_elsewhere(&path) {
            continue;
        }
        let session_dir = dir.join(&id);
        if modified_within(&session_dir, cutoff) {
            continue;
        }
        let bytes = size_of(&path) + size_of(&session_dir);
        // The directory first: the transcript marks the session until all of it is gone, so a cleanup cut
        // short is finished by the next one.
        let dir_gone = std::fs::remove_dir_all(&session_dir).is_ok() || !session_dir.exists();
        if dir_gone && std::fs::remove_file(&path).is_ok() {
            cleaned.sessions += 1;
            cleaned.bytes += bytes;
        }
    }
    cleaned
}

/// The bytes a session takes on disk: its transcript and its directory.
pub fn disk_size(transcript: &Path) -> u64 {
    size_of(transcript) + size_of(&transcript.with_extension(""))
}

fn session_id(path: &Path) -> Option<String> {
    if path.extension().is_none_or(|ext| ext != EXTENSION) {
        return None;
    }
    let id = path.file_stem()?.to_str()?;
    (!id.starts_with('.')).then(|| id.to_owned())
}

fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::symlink_metadata(path).and_then(|meta| meta.modified()).ok()
}

/// Whether a file in `dir` was written after `cutoff` (a background task of a session can write there after its
/// transcript's last line).
fn modified_within(dir: &Path, cutoff: SystemTime) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else { return false };
    entries.flatten().any(|entry| {
        let path = entry.path();
        match entry.file_type() {
            Ok(kind) if kind.is_dir() => modified_within(&path, cutoff),
            _ => modified(&path).is_some_and(|at| at > cutoff),
        }
    })
}

/// Whether another process holds the session's writer lock.
fn open_elsewhere(transcript: &Path) -> bool {
    let Ok(file) = std::fs::File::open(transcript) else { return true };
    match rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockShared) {
        Ok(()) => false,
        Err(_) => true,
    }
}

fn size_of(path: &Path) -> u64 {
    let Ok(meta) = std::fs::symlink_metadata(path) else { return 0 };
    if !meta.is_dir() {
        return meta.len();
    }
    std::fs::read_dir(path).into_iter().flatten().flatten().map(|entry| size_of(&entry.path())).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn age(path: &Path, days: u64) {
        let at = SystemTime::now() - Duration::from_secs(days * 86_400);
        let file = std::fs::File::options().write(true).open(path).or_else(|_| std::fs::File::open(path)).unwrap();
        file.set_modified(at).unwrap();
    }

    #[test]
    fn old_sessions_go_with_their_directories_but_never_the_one_in_use_or_one_open_elsewhere() {
        let data = tempfile::tempdir().unwrap();
        let dir = sessions_dir(data.path());
        for id in ["old", "recent", "current", "held"] {
            std::fs::create_dir_all(dir.join(id)).unwrap();
            std::fs::write(dir.join(id).join("requests.jsonl"), "x".repeat(100)).unwrap();
            std::fs::write(dir.join(format!("{id}.jsonl")), "{}\n").unwrap();
            if id != "recent" {
                age(&dir.join(id).join("requests.jsonl"), 40);
                age(&dir.join(format!("{id}.jsonl")), 40);
            }
        }
        let held = std::fs::File::open(dir.join("held.jsonl")).unwrap();
        rustix::fs::flock(&held, rustix::fs::FlockOperation::LockExclusive).unwrap();

        let cleaned = remove_old(data.path(), 30, "current");
        assert_eq!(cleaned, Cleaned { sessions: 1, bytes: 103 });
        assert!(!dir.join("old.jsonl").exists() && !dir.join("old").exists());
        for kept in ["recent", "current", "held"] {
            assert!(dir.join(format!("{kept}.jsonl")).exists() && dir.join(kept).exists(), "{kept}");
        }
    }
}
