//! Looking at directories: a breadth-first walk with a budget (the searches for what a deny pattern matches and
//! for a denied file moved away), and a directory as a listing saw it, to tell later whether a listing still holds.

use std::fs::DirEntry;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// How long before a split a directory it lists must have last changed for the answer to be kept.
const SETTLED: Duration = Duration::from_secs(2);

/// One directory as a listing of it saw it (the read split's, or a pattern search's).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Seen {
    path: PathBuf,
    device: u64,
    inode: u64,
    modified: (i64, i64),
    /// The change time: a command can set the modification time back after adding an entry, not this.
    changed: (i64, i64),
}

impl Seen {
    pub(crate) fn now(path: &Path) -> Option<Seen> {
        // A directory entered through a link is seen where it is.
        let meta = std::fs::metadata(path).ok()?;
        let modified = (meta.mtime(), meta.mtime_nsec());
        let changed = (meta.ctime(), meta.ctime_nsec());
        Some(Seen { path: path.to_path_buf(), device: meta.dev(), inode: meta.ino(), modified, changed })
    }

    pub(crate) fn unchanged(&self) -> bool {
        Seen::now(&self.path).is_some_and(|now| now == *self)
    }

    pub(crate) fn settled_before(&self, split: SystemTime) -> bool {
        let Ok(since_epoch) = split.duration_since(SystemTime::UNIX_EPOCH) else { return false };
        let settled = since_epoch.saturating_sub(SETTLED);
        let (secs, nanos) = self.modified;
        let modified = Duration::new(u64::try_from(secs).unwrap_or(0), u32::try_from(nanos).unwrap_or(0));
        secs >= 0 && modified < settled
    }
}

/// What a walk does with an entry.
pub(super) enum Visit {
    /// Lists it too (a directory), one level down.
    Enter,
    /// Goes on with the next entry.
    Pass,
    /// Ends the walk.
    Stop,
}

/// How a walk ended.
pub(super) enum Walked {
    /// Every directory was listed, or `visit` stopped it.
    Done,
    /// These directories were not listed to the end, or at all: the budget ran out, or one could not be listed
    /// (its path grown past `PATH_MAX` by a command nesting it deep, or its mode changed), though a command may
    /// still reach into it.
    Unfinished(Vec<PathBuf>),
}

/// Walks below `start` breadth first, not following links, telling `listing` of each directory before listing it
/// and asking `visit` about each entry, within `budget` entries.
pub(super) fn breadth_first(
    start: &Path,
    budget: &mut usize,
    mut listing: impl FnMut(&Path),
    mut visit: impl FnMut(&DirEntry) -> Visit,
) -> Walked {
    let mut level = vec![start.to_path_buf()];
    let mut unlisted = Vec::new();
    while !level.is_empty() {
        let mut next = Vec::new();
        for (at, dir) in level.iter().enumerate() {
            listing(dir);
            let entries = match std::fs::read_dir(dir) {
                Ok(entries) => entries,
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => continue,
                Err(_) => {
                    unlisted.push(dir.clone());
                    continue;
                }
            };
            for entry in entries.flatten() {
                let Some(left) = budget.checked_sub(1) else {
                    unlisted.extend(level[at..].iter().cloned().chain(next));
                    return Walked::Unfinished(unlisted);
                };
                *budget = left;
                match visit(&entry) {
                    Visit::Enter => next.push(entry.path()),
                    Visit::Pass => {}
                    Visit::Stop => return Walked::Done,
                }
            }
        }
        level = next;
    }
    if unlisted.is_empty() { Walked::Done } else { Walked::Unfinished(unlisted) }
}
