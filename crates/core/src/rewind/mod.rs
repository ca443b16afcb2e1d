//! Rewind: the files tandem's tools changed, checkpointed before each change, and put back as they were before
//! an earlier prompt — with the conversation, or without it.
//!
//! The record lives in the session's directory (`checkpoints/`, so it survives a restart): `log.jsonl` has a
//! line for every prompt (its number and text) and for every file an Edit or Write changed (the prompt it
//! happened in, the path, the content before and after as hashes, the mode before). A content is stored as the
//! list of its chunks (`objects/<sha-256>`), cut at line ends its lines choose, and each chunk once
//! (`chunks/<sha-256>`; a content of one chunk is only that chunk): a 10 MB file edited 100 times costs the file once plus the chunks the edits touched,
//! not 100 copies (docs/benchmarks.md). Files a Bash command changes in the workspace are found by a before/after
//! scan ([`scan`]) and checkpointed the same way.

mod restore;
mod scan;

use std::collections::HashMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// One line of the checkpoint log.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Entry {
    /// A prompt was sent: later changes belong to it until the next. `id` is the id its host gave it (an SDK
    /// user message's uuid), for a rewind that names it.
    Prompt {
        seq: u64,
        text: String,
        at_ms: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
    },
    /// A file changed during prompt `seq`: its content before and after (`None`: it did not exist).
    /// `dir` is the real (canonical) directory the file was in, so that a rewind never writes through a
    /// directory that has since become a link to elsewhere.
    Change {
        seq: u64,
        path: PathBuf,
        before: Option<String>,
        after: Option<String>,
        mode: Option<u32>,
        at_ms: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        dir: Option<PathBuf>,
    },
}

/// A prompt one can go back to: before it, the files were as the log says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RewindPoint {
    pub seq: u64,
    pub text: String,
    /// The id the prompt's host gave it, if any.
    pub id: Option<String>,
    /// The files tools changed from this prompt on.
    pub files: Vec<PathBuf>,
}

/// What going back does to one file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileRestore {
    pub path: PathBuf,
    /// The content to put back (`None`: the file did not exist, so it is removed).
    pub target: Option<Vec<u8>>,
    pub mode: Option<u32>,
    /// The file as it is now (`None`: missing).
    pub current: Option<Vec<u8>>,
    /// It changed since tandem last wrote it (outside tandem), or is no longer where tandem wrote it: it is
    /// shown, never overwritten.
    pub conflict: bool,
    /// The real directory tandem wrote the file in: the only place a restore writes to.
    pub dir: Option<PathBuf>,
    /// Why it is a conflict, in the user's words.
    pub why: Option<String>,
}

/// A session's checkpoints.
#[derive(Debug)]
pub struct Checkpoints {
    dir: PathBuf,
    /// The prompt whose changes are being recorded.
    seq: AtomicU64,
    lock: Mutex<()>,
    /// Files the workspace scans stored, with the stat they had: one whose stat is the same is not read again.
    known: Mutex<HashMap<PathBuf, (scan::Stat, scan::Source)>>,
}

pub use scan::Scan;

fn now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |since| since.as_millis() as u64)
}

/// Chunks end after a line whose hash is 0 modulo this (about every 64 lines), or at [`MAX_CHUNK`].
const CHUNK_EVERY: u32 = 64;
const MAX_CHUNK: usize = 256 * 1024;

/// `bytes` cut into chunks at line ends picked by content (or at [`MAX_CHUNK`] for long lines and binaries).
fn chunks(bytes: &[u8]) -> Vec<&[u8]> {
    let mut chunks = Vec::new();
    let mut start = 0;
    let mut line_start = 0;
    for (at, byte) in bytes.iter().enumerate() {
        let end = at + 1;
        let line_end = *byte == b'\n';
        let cut = line_end && fnv(&bytes[line_start..end]).is_multiple_of(CHUNK_EVERY);
        if cut || end - start >= MAX_CHUNK {
            chunks.push(&bytes[start..end]);
            start = end;
        }
        if line_end {
            line_start = end;
        }
    }
    if start < bytes.len() {
        chunks.push(&bytes[start..]);
    }
    chunks
}

/// FNV-1a: a quick hash of a line, to decide where chunks end.
fn fnv(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5_u32, |hash, byte| (hash ^ u32::from(*byte)).wrapping_mul(0x0100_0193))
}

fn hash(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|byte| format!("{byte:02x}")).collect()
}

impl Checkpoints {
    /// The checkpoints of the session whose directory is `session_dir`; numbering goes on after a resumed
    /// session's prompts.
    pub fn new(session_dir: &Path) -> Checkpoints {
        let checkpoints = Checkpoints {
            dir: session_dir.join("checkpoints"),
            seq: AtomicU64::new(0),
            lock: Mutex::new(()),
            known: Mutex::default(),
        };
        let last = checkpoints
            .entries()
            .iter()
            .filter_map(|entry| match entry {
                Entry::Prompt { seq, .. } => Some(*seq),
                Entry::Change { .. } => None,
            })
            .max();
        checkpoints.seq.store(last.unwrap_or(0), Ordering::SeqCst);
        checkpoints
    }

    /// The checkpoints of the session whose directory is `dir`; a subagent's directory (`…/subagents/<id>`)
    /// gives its parent session's, so that what a subagent changes goes back with the parent's prompt.
    pub fn for_session_dir(dir: &Path) -> Checkpoints {
        let parent = dir.parent().filter(|parent| parent.file_name().is_some_and(|name| name == "subagents"));
        match parent.and_then(Path::parent) {
            Some(session) => Checkpoints::new(session),
            None => Checkpoints::new(dir),
        }
    }

    fn log(&self) -> PathBuf {
        self.dir.join("log.jsonl")
    }

    fn append(&self, entry: &Entry) -> std::io::Result<()> {
        std::fs::create_dir_all(&self.dir)?;
        let line = serde_json::to_string(entry).map_err(std::io::Error::other)?;
        let mut file = std::fs::OpenOptions::new().create(true).append(true).open(self.log())?;
        file.write_all(format!("{line}\n").as_bytes())
    }

    /// A new prompt starts: the changes that follow are its. `id` is what its host calls it (an SDK user
    /// message's uuid), so that a rewind can name it.
    pub fn begin_prompt(&self, text: &str, id: Option<&str>) -> u64 {
        let _guard = self.lock.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let seq = self.seq.fetch_add(1, Ordering::SeqCst) + 1;
        let text: String = text.chars().take(2_000).collect();
        let id = id.map(str::to_owned);
        if let Err(err) = self.append(&Entry::Prompt { seq, text, at_ms: now_ms(), id }) {
            tracing::warn!("the rewind checkpoint log could not be written: {err}");
        }
        seq
    }

    /// Records that `path` changed from `before` (`None`: it did not exist) to `after`. Called once the
    /// write is done; the contents are stored once each, by hash.
    pub fn record(&self, path: &Path, before: Option<&[u8]>, after: &[u8], mode: Option<u32>) {
        // Edit and Write have just written through `path`: its real directory is where the file is.
        if let Err(err) = self.record_change(path, before, Some(after), mode, real_dir(path)) {
            tracing::warn!(path = %path.display(), "a rewind checkpoint could not be written: {err}");
        }
    }

    /// Records a change whose result may be no file at all (a command or a rewind removed it); `dir` is the
    /// real directory the file is in, as tandem knows it (never read from a link a command may have made).
    fn record_change(
        &self,
        path: &Path,
        before: Option<&[u8]>,
        after: Option<&[u8]>,
        mode: Option<u32>,
        dir: Option<PathBuf>,
    ) -> std::io::Result<()> {
        let _guard = self.lock.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if path.to_str().is_none() {
            return Err(std::io::Error::other("its name is not UTF-8"));
        }
        let before = before.map(|bytes| self.store_content(bytes)).transpose()?;
        let after = after.map(|bytes| self.store_content(bytes)).transpose()?;
        let seq = self.seq.load(Ordering::SeqCst);
        self.append(&Entry::Change { seq, path: path.to_path_buf(), before, after, mode, at_ms: now_ms(), dir })
    }

    /// Stores `bytes` as a list of chunks cut at line ends chosen by the lines' own content (so an edit changes
    /// the chunks around it, not every chunk after it), each chunk once; the list is named by the hash of the
    /// whole content. A 10 MB file edited 100 times costs its chunks once plus the edited ones.
    fn store_content(&self, bytes: &[u8]) -> std::io::Result<String> {
        let name = hash(bytes);
        let manifest = self.dir.join("objects").join(&name);
        if manifest.exists() || self.dir.join("chunks").join(&name).exists() {
            return Ok(name);
        }
        let chunks = chunks(bytes);
        // A content of one chunk is that chunk: no list is written (half the files for small files).
        if chunks.len() == 1 {
            write_object(&self.dir.join("chunks").join(&name), bytes)?;
            return Ok(name);
        }
        let mut list = String::new();
        for chunk in chunks {
            let chunk_name = hash(chunk);
            let path = self.dir.join("chunks").join(&chunk_name);
            if !path.exists() {
                write_object(&path, chunk)?;
            }
            list.push_str(&chunk_name);
            list.push('\n');
        }
        write_object(&manifest, list.as_bytes())?;
        Ok(name)
    }

    /// A stored content, checked against its hash.
    pub fn content(&self, name: &str) -> std::io::Result<Vec<u8>> {
        let is_hash = |text: &str| text.len() == 64 && text.bytes().all(|b| b.is_ascii_hexdigit());
        if !is_hash(name) {
            return Err(std::io::Error::other("not a content hash"));
        }
        let content = match std::fs::read_to_string(self.dir.join("objects").join(name)) {
            Ok(list) => {
                let mut content = Vec::new();
                for chunk in list.lines() {
                    if !is_hash(chunk) {
                        return Err(std::io::Error::other("a damaged checkpoint"));
                    }
                    content.extend(std::fs::read(self.dir.join("chunks").join(chunk))?);
                }
                content
            }
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                std::fs::read(self.dir.join("chunks").join(name))?
            }
            Err(err) => return Err(err),
        };
        if hash(&content) != name {
            return Err(std::io::Error::other("a checkpoint whose content does not match its hash"));
        }
        Ok(content)
    }

    /// Every entry, in order (lines that don't parse are skipped).
    pub fn entries(&self) -> Vec<Entry> {
        let Ok(text) = std::fs::read_to_string(self.log()) else { return Vec::new() };
        text.lines().filter_map(|line| serde_json::from_str(line).ok()).collect()
    }

    /// The prompts one can go back to, oldest first.
    pub fn points(&self) -> Vec<RewindPoint> {
        let entries = self.entries();
        entries
            .iter()
            .filter_map(|entry| match entry {
                Entry::Prompt { seq, text, id, .. } => Some((*seq, text.clone(), id.clone())),
                Entry::Change { .. } => None,
            })
            .map(|(seq, text, id)| {
                let mut files: Vec<PathBuf> = Vec::new();
                for entry in &entries {
                    if let Entry::Change { seq: at, path, .. } = entry
                        && *at >= seq
                        && !files.contains(path)
                    {
                        files.push(path.clone());
                    }
                }
                RewindPoint { seq, text, id, files }
            })
            .collect()
    }

    /// What going back to before prompt `seq` does to each file changed since: the content it had then, and
    /// whether it changed outside tandem since tandem last wrote it.
    pub fn plan(&self, seq: u64) -> std::io::Result<Vec<FileRestore>> {
        let entries = self.entries();
        let mut restores: Vec<FileRestore> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        // What the files as they are now may take in memory, all together.
        let mut budget = MAX_PLAN_BYTES;
        for entry in &entries {
            let Entry::Change { seq: at, path, before, mode, .. } = entry else { continue };
            // The directory the file was last written in, by tandem.
            let last_dir = entries.iter().rev().find_map(|entry| match entry {
                Entry::Change { path: other, dir, .. } if other == path => Some(dir.clone()),
                _ => None,
            });
            // A file's first change since the prompt has what it was then.
            if *at < seq || !seen.insert(path) {
                continue;
            }
            let last_after = entries.iter().rev().find_map(|entry| match entry {
                Entry::Change { path: other, after, .. } if other == path => Some(after.clone()),
                _ => None,
            });
            // Changed since tandem last wrote it, or no longer where tandem wrote it (its directory resolves
            // elsewhere now, it is a link, a FIFO…): left as it is — a rewind never writes to a place nobody
            // looked at.
            let dir = last_dir.flatten().or_else(|| path.parent().map(Path::to_path_buf));
            let mut why = None;
            if dir.is_none() || real_dir(path) != dir {
                why = Some("it is no longer where tandem wrote it (a directory on its path moved or is a link)".into());
            }
            let current = match current_content(dir.as_deref(), path, &mut budget) {
                Ok(current) => current,
                Err(err) => {
                    why.get_or_insert(format!("it can't be read safely now: {err}"));
                    None
                }
            };
            if why.is_none() && last_after.is_some_and(|after| current.as_deref().map(hash) != after) {
                why = Some("changed outside tandem since".into());
            }
            // A damaged or missing checkpoint costs this file, not the whole rewind.
            let target = match before.as_deref().map(|hash| self.content(hash)).transpose() {
                Ok(target) => target,
                Err(err) => {
                    why.get_or_insert(format!("its checkpoint can't be read: {err}"));
                    None
                }
            };
            let conflict = why.is_some();
            if !conflict && current == target {
                // Already as it was then: nothing to do, nothing to show.
                continue;
            }
            restores.push(FileRestore { path: path.clone(), target, mode: *mode, current, conflict, dir, why });
        }
        Ok(restores)
    }
}

/// Of one file, which hunks of going back (the diff from the file now to then, [`crate::diff::hunks`]
/// with the default context) go back; the others stay as they are now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HunkChoice {
    pub path: PathBuf,
    pub restore: Vec<bool>,
    /// The preview showed it as a conflict: it stays as it is, even if the conflict cleared since.
    pub conflict: bool,
    /// The hash of the file's content the hunks were chosen from ([`FileRestore::now_hash`]).
    pub now_hash: Option<String>,
}

impl FileRestore {
    /// The diff of going back, from the file now to then, as text (`None`: not text, so whole or nothing).
    pub fn texts(&self) -> Option<(&str, &str)> {
        let now = std::str::from_utf8(self.current.as_deref().unwrap_or_default()).ok()?;
        let then = std::str::from_utf8(self.target.as_deref().unwrap_or_default()).ok()?;
        Some((now, then))
    }

    /// The hash of the file as it is now (`None`: missing), to tell that hunks were chosen from this version.
    pub fn now_hash(&self) -> Option<String> {
        self.current.as_deref().map(hash)
    }

    /// The hunks of going back.
    pub fn hunks(&self) -> Vec<crate::diff::Hunk> {
        match self.texts() {
            Some((now, then)) => crate::diff::hunks(now, then, crate::diff::DEFAULT_CONTEXT),
            None => Vec::new(),
        }
    }
}

/// Narrows `plan` to what was chosen in a preview (`None`: no preview, everything goes back): a file not in
/// it is left out, a file with no hunk chosen too, one with some gets the content with only those going back. A file whose hunks are not the ones chosen from (it changed since the preview,
/// or is not text) is left out with a problem.
pub fn choose_hunks(plan: Vec<FileRestore>, choices: Option<&[HunkChoice]>) -> (Vec<FileRestore>, Vec<String>) {
    let Some(choices) = choices else { return (plan, Vec::new()) };
    let mut problems = Vec::new();
    let mut kept = Vec::new();
    for mut restore in plan {
        let Some(choice) = choices.iter().find(|choice| choice.path == restore.path) else {
            // Only what the user saw goes back.
            problems.push(format!("{}: it was not in the preview; left as it is", restore.path.display()));
            continue;
        };
        // A conflict is left as it is whatever was chosen (and still reported as one), and so is a file the
        // preview showed as one.
        if restore.conflict || choice.conflict {
            restore.conflict = true;
            restore.why.get_or_insert_with(|| "it was a conflict in the preview".into());
            kept.push(restore);
            continue;
        }
        let hunks = restore.hunks();
        let same = choice.now_hash == restore.now_hash() && hunks.len() == choice.restore.len();
        if same && choice.restore.iter().all(|&yes| yes) {
            kept.push(restore);
            continue;
        }
        if same && choice.restore.iter().all(|&yes| !yes) {
            continue;
        }
        let Some((now, then)) = restore.texts().filter(|_| same) else {
            problems.push(format!(
                "{}: it changed since the preview, so its hunks could not be chosen; left as it is",
                restore.path.display()
            ));
            continue;
        };
        let content = crate::diff::apply_hunks(now, then, &hunks, &choice.restore);
        restore.target = Some(content.into_bytes());
        kept.push(restore);
    }
    (kept, problems)
}

impl Checkpoints {
    /// Puts the files of `restores` back (all but the conflicts) and records it, so that a later rewind knows
    /// what tandem last wrote; returns the problems, by file.
    pub fn restore(&self, restores: &[FileRestore]) -> Vec<String> {
        let mut problems = Vec::new();
        for restore in restores.iter().filter(|restore| !restore.conflict) {
            let result = apply_one(restore).and_then(|()| {
                self.record_change(
                    &restore.path,
                    restore.current.as_deref(),
                    restore.target.as_deref(),
                    restore.mode,
                    restore.dir.clone(),
                )
            });
            if let Err(err) = result {
                problems.push(format!("{}: {err}", restore.path.display()));
            }
        }
        problems
    }
}

/// Writes a store object whole or not at all (a temp file renamed), without waiting for the disk: an object is
/// checked against its hash whenever it is read, so one a crash cut short is found, never used. (Syncing each
/// of a first scan's thousands of objects took seconds.)
fn write_object(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().ok_or_else(|| std::io::Error::other("an object path has no directory"))?;
    std::fs::create_dir_all(dir)?;
    let mut temp = tempfile::Builder::new().prefix(".tmp-").tempfile_in(dir)?;
    temp.write_all(bytes)?;
    temp.persist(path).map_err(|err| err.error)?;
    Ok(())
}

/// Puts the files of `restores` back (all but the conflicts); returns the problems, by file.
pub fn apply(restores: &[FileRestore]) -> Vec<String> {
    restores
        .iter()
        .filter(|restore| !restore.conflict)
        .filter_map(|restore| apply_one(restore).err().map(|err| format!("{}: {err}", restore.path.display())))
        .collect()
}

/// Puts one file back in its recorded real directory, only if it is still what the plan saw, through handles
/// that follow no link ([`restore::put_back`]).
#[cfg(unix)]
fn apply_one(restore: &FileRestore) -> std::io::Result<()> {
    let (Some(dir), Some(name)) = (&restore.dir, restore.path.file_name()) else {
        return Err(std::io::Error::other("where it was written is not known"));
    };
    restore::put_back(dir, name, restore.target.as_deref(), restore.current.as_deref(), restore.mode)
}

#[cfg(not(unix))]
fn apply_one(restore: &FileRestore) -> std::io::Result<()> {
    match &restore.target {
        Some(bytes) => crate::fs_util::write_atomic_create_dirs(&restore.path, bytes),
        None => match std::fs::remove_file(&restore.path) {
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(()),
            other => other,
        },
    }
}

/// What one rewind plan may read of the files as they are now, all together.
const MAX_PLAN_BYTES: u64 = 512 << 20;

/// The file as it is now, read where tandem wrote it without following a link or waiting on a FIFO, taken
/// from `budget` (a file over [`restore::MOST`] or past the budget is not read).
#[cfg(unix)]
fn current_content(dir: Option<&Path>, path: &Path, budget: &mut u64) -> std::io::Result<Option<Vec<u8>>> {
    let (Some(dir), Some(name)) = (dir, path.file_name()) else {
        return Err(std::io::Error::other("where it was written is not known"));
    };
    let current = restore::current(dir, name, restore::MOST.min(*budget))?;
    *budget -= current.as_ref().map_or(0, |bytes| bytes.len() as u64);
    Ok(current)
}

#[cfg(not(unix))]
fn current_content(_dir: Option<&Path>, path: &Path, budget: &mut u64) -> std::io::Result<Option<Vec<u8>>> {
    match std::fs::read(path) {
        Ok(bytes) if bytes.len() as u64 > (*budget).min(restore::MOST) => Err(std::io::Error::other("too big")),
        Ok(bytes) => {
            *budget -= bytes.len() as u64;
            Ok(Some(bytes))
        }
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(err) => Err(err),
    }
}

/// The real directory `path` is in: its parent, canonical, as far as it exists (the missing rest appended).
fn real_dir(path: &Path) -> Option<PathBuf> {
    let mut missing = Vec::new();
    let mut at = path.parent()?;
    loop {
        match at.canonicalize() {
            Ok(mut real) => {
                real.extend(missing.iter().rev());
                return Some(real);
            }
            Err(_) => {
                missing.push(at.file_name()?.to_owned());
                at = at.parent()?;
            }
        }
    }
}

/// A file's mode, for its checkpoint.
pub fn mode_of(path: &Path) -> Option<u32> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(path).ok().map(|meta| meta.permissions().mode())
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        None
    }
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
