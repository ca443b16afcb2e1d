//! What this session last saw of each file, so Edit and Write refuse to clobber changes the model never read.
//!
//! The model edits from its memory of a file. If the file changed since (the user saved it in their editor, a
//! formatter ran, a Bash command rewrote it), an edit built from that memory can silently undo someone's work.
//! So Read, Write and Edit record what they saw (size, modification time and a content hash), and Edit/Write
//! check the file still matches before touching it.

use std::collections::HashMap;
use std::fs::{self, Metadata};
use std::hash::{DefaultHasher, Hasher};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

/// One file as this session last saw it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Snapshot {
    pub len: u64,
    pub mtime: Option<SystemTime>,
    /// [`ContentHash`] of the whole content.
    pub hash: u64,
}

/// Why a file may not be overwritten.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Staleness {
    /// This session never read (or wrote) the file.
    NotRead,
    /// The file's content changed since this session last read or wrote it.
    ChangedOnDisk,
}

/// Per-session record of files read and written. Shared by all tool calls of a session (`Arc<FileState>` in the
/// [`ToolContext`](super::ToolContext)); the lock is only held for map operations, never during I/O.
#[derive(Debug, Default)]
pub struct FileState {
    seen: Mutex<HashMap<PathBuf, Snapshot>>,
    /// What Read last returned per file (content hash, first line, line limit), so an identical Read can answer
    /// "unchanged" instead of the same lines again. Cleared when the conversation is compacted.
    reads: Mutex<HashMap<PathBuf, (u64, usize, usize)>>,
}

impl FileState {
    pub fn new() -> Self {
        Self::default()
    }

    /// Records that the session now knows `path` has exactly `content` (after a full Read, a Write or an Edit).
    pub fn record_content(&self, path: &Path, content: &[u8]) {
        let mtime = fs::metadata(path).ok().and_then(|m| m.modified().ok());
        self.record(path, Snapshot { len: content.len() as u64, mtime, hash: content_hash(content) });
    }

    /// Whether this exact Read (same content, same window) already happened in the current context; records
    /// it otherwise.
    pub fn repeat_read(&self, path: &Path, hash: u64, start: usize, limit: usize) -> bool {
        let key = canonical_key(path);
        let mut reads = self.reads.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if reads.get(&key) == Some(&(hash, start, limit)) {
            return true;
        }
        reads.insert(key, (hash, start, limit));
        false
    }

    /// Forgets what Read returned (the conversation that held it was compacted away).
    pub fn forget_reads(&self) {
        self.reads.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clear();
    }

    /// Records a snapshot computed elsewhere (Read hashes while it streams a file it never holds whole).
    pub fn record(&self, path: &Path, snapshot: Snapshot) {
        let key = canonical_key(path);
        self.lock().insert(key, snapshot);
    }

    /// Records a file from its metadata alone, with the given content hash. Used when the content was hashed
    /// while streaming.
    pub fn record_metadata(&self, path: &Path, metadata: &Metadata, hash: u64) {
        self.record(path, Snapshot { len: metadata.len(), mtime: metadata.modified().ok(), hash });
    }

    /// Whether this session has read or written `path`.
    pub fn was_read(&self, path: &Path) -> bool {
        self.lock().contains_key(&canonical_key(path))
    }

    /// The snapshot recorded for `path`, if any.
    pub fn get(&self, path: &Path) -> Option<Snapshot> {
        self.lock().get(&canonical_key(path)).copied()
    }

    /// Forgets `path` (e.g. after it was deleted).
    pub fn forget(&self, path: &Path) {
        self.lock().remove(&canonical_key(path));
    }

    /// Checks that `path`, whose current content is `current`, is what this session last saw. Content is what
    /// counts: a file touched (new mtime) but byte-identical is unchanged, and a same-second rewrite with the
    /// same length (which an mtime check would miss) is a change.
    pub fn check_unchanged(&self, path: &Path, current: &[u8]) -> Result<(), Staleness> {
        let Some(seen) = self.get(path) else { return Err(Staleness::NotRead) };
        if seen.len == current.len() as u64 && seen.hash == content_hash(current) {
            Ok(())
        } else {
            Err(Staleness::ChangedOnDisk)
        }
    }

    /// Cheaper check from metadata alone (size and modification time), for callers that don't hold the content.
    pub fn check_unchanged_metadata(&self, path: &Path) -> Result<(), Staleness> {
        let Some(seen) = self.get(path) else { return Err(Staleness::NotRead) };
        match fs::metadata(path) {
            Ok(meta) if meta.len() == seen.len && meta.modified().ok() == seen.mtime => Ok(()),
            _ => Err(Staleness::ChangedOnDisk),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<PathBuf, Snapshot>> {
        // A panic while holding this lock cannot leave the map half-updated (single inserts/removes), so a
        // poisoned lock is still usable.
        self.seen.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// The key a path is recorded under: canonical, so `./a.rs`, `a.rs` and a symlink to it are one file. A file
/// that does not exist yet is keyed by its canonical parent and its name.
fn canonical_key(path: &Path) -> PathBuf {
    if let Ok(canonical) = fs::canonicalize(path) {
        return canonical;
    }
    match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) => {
            fs::canonicalize(parent).map(|p| p.join(name)).unwrap_or_else(|_| path.to_path_buf())
        }
        _ => path.to_path_buf(),
    }
}

/// Hash of a file's content (SipHash with fixed keys: stable within a process, which is all a session needs).
pub fn content_hash(content: &[u8]) -> u64 {
    let mut hasher = ContentHash::new();
    hasher.update(content);
    hasher.finish()
}

/// Incremental [`content_hash`]: feeding the content in pieces gives the same hash as all at once.
#[derive(Debug, Default)]
pub struct ContentHash(DefaultHasher);

impl ContentHash {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn update(&mut self, bytes: &[u8]) {
        self.0.write(bytes);
    }

    pub fn finish(&self) -> u64 {
        self.0.finish()
    }
}

/// Turns a staleness into the message the model reads, for `verb` ("editing", "writing").
pub fn staleness_message(staleness: Staleness, path: &Path, verb: &str) -> String {
    match staleness {
        Staleness::NotRead => {
            format!("File {} has not been read in this session. Read it first before {verb} it.", path.display())
        }
        Staleness::ChangedOnDisk => format!(
            "File {} has been modified since it was last read — Read it again before {verb} it.",
            path.display()
        ),
    }
}

/// Reads a whole file, turning "not found" into `Ok(None)`.
/// Only a regular file is read ([`crate::fs_util::open_regular`]): a pipe or a device is an error, never a wait.
pub fn read_if_exists(path: &Path) -> io::Result<Option<Vec<u8>>> {
    use std::io::Read;
    let read = |mut file: fs::File| {
        let mut bytes = Vec::with_capacity(file.metadata().map_or(0, |meta| meta.len() as usize));
        file.read_to_end(&mut bytes).map(|_| bytes)
    };
    match crate::fs_util::open_regular(path).and_then(read) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(err) => Err(err),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn incremental_hash_matches_whole() {
        let data = b"hello world, this is some content that spans pieces";
        let mut h = ContentHash::new();
        h.update(&data[..7]);
        h.update(&data[7..20]);
        h.update(&data[20..]);
        assert_eq!(h.finish(), content_hash(data));
        assert_ne!(content_hash(b"a"), content_hash(b"b"));
    }

    #[test]
    fn not_read_then_read_then_changed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.txt");
        fs::write(&path, "one").unwrap();
        let state = FileState::default();
        assert!(!state.was_read(&path));
        assert_eq!(state.check_unchanged(&path, b"one"), Err(Staleness::NotRead));
        state.record_content(&path, b"one");
        assert!(state.was_read(&path));
        assert_eq!(state.check_unchanged(&path, b"one"), Ok(()));
        assert_eq!(state.check_unchanged_metadata(&path), Ok(()));
        assert_eq!(state.check_unchanged(&path, b"two"), Err(Staleness::ChangedOnDisk));
        fs::write(&path, "three!").unwrap();
        assert_eq!(state.check_unchanged_metadata(&path), Err(Staleness::ChangedOnDisk));
        state.forget(&path);
        assert!(!state.was_read(&path));
    }

    #[test]
    fn keys_are_canonical() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.txt");
        fs::write(&path, "x").unwrap();
        let state = FileState::default();
        state.record_content(&dir.path().join(".").join("f.txt"), b"x");
        assert!(state.was_read(&path));
        // A file that does not exist yet is keyed by its canonical parent, and still found once it exists.
        let new = dir.path().join("new.txt");
        state.record_content(&new, b"");
        fs::write(&new, "").unwrap();
        assert!(state.was_read(&new));
    }

    #[test]
    fn messages_name_the_file_and_the_fix() {
        let msg = staleness_message(Staleness::ChangedOnDisk, Path::new("/a/b.rs"), "editing");
        assert_eq!(msg, "File /a/b.rs has been modified since it was last read — Read it again before editing it.");
        assert!(staleness_message(Staleness::NotRead, Path::new("/x"), "writing").contains("Read it first"));
    }
}
