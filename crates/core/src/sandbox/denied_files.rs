//! The files and directories found at a denied path, remembered by what they are (device, inode, birth time)
//! rather than by name, and followed wherever they go: a denial names a path, and a command that may write where
//! the denied file lies (a build a rule allows, in a workspace holding a `.env` a Read deny rule names) could
//! rename it — or the directory holding it — to a name nobody denied, and the next command's read grants, made
//! by names, granted it; the Read tool, judging names, read it.
//!
//! Each one is held open as a place (`O_PATH`, at most [`MAX_HELD`]) so that where it is now can be read back from
//! the kernel (`/proc/self/fd`): those paths are denied too ([`where_they_are`]). The Read tool refuses what it
//! opens when it is one of them ([`is_denied`]). Moving a denied file to a place where it could be read is
//! refused by Landlock itself (it would gain a right it lacked, see `linux.rs`).
//!
//! What is remembered is also written down ([`keep_in`], a file in tandem's data directory, which no sandboxed
//! command may write), with where it was last seen, so that a later session still follows the file a build
//! renamed in an earlier one (looked for near where it was last seen when it is not there any more).

use std::collections::BTreeSet;
use std::fs::Metadata;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

/// What a file is, whatever its name: a new file that reuses the inode number of a deleted one has another birth
/// time, where the file system records one.
type Identity = (u64, u64, Option<SystemTime>);

fn identity(meta: &Metadata) -> Identity {
    (meta.dev(), meta.ino(), meta.created().ok())
}

/// A denied file held open as a place, and where it was last written down.
struct Held {
    place: OwnedFd,
    identity: Identity,
    seen_at: PathBuf,
}

#[derive(Default)]
struct Remembered {
    denied: BTreeSet<Identity>,
    held: Vec<Held>,
    record: Option<PathBuf>,
}

static REMEMBERED: Mutex<Remembered> =
    Mutex::new(Remembered { denied: BTreeSet::new(), held: Vec::new(), record: None });

fn remembered() -> std::sync::MutexGuard<'static, Remembered> {
    REMEMBERED.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Identities written down at most: the oldest are forgotten beyond it.
const MAX_RECORDED: usize = 10_000;

/// Denied files held open at most (the oldest are let go, still known by what they are).
const MAX_HELD: usize = 256;

/// Remembers what the file `record` holds (following each file to where it was last seen) and writes there what
/// is remembered from now on.
pub fn keep_in(record: &Path) {
    let text = std::fs::read_to_string(record).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    let kept = &lines[lines.len().saturating_sub(MAX_RECORDED)..];
    let mut state = remembered();
    let mut last_seen: Vec<(Identity, PathBuf)> = Vec::new();
    for (identity, seen_at) in kept.iter().filter_map(|line| parse(line)) {
        state.denied.insert(identity);
        last_seen.retain(|(known, _)| *known != identity);
        last_seen.push((identity, seen_at));
    }
    state.record = Some(record.to_path_buf());
    for (identity, seen_at) in last_seen {
        let there = open_place(&seen_at).filter(|(_, meta)| self::identity(meta) == identity);
        let found = there.map(|(place, _)| (place, seen_at.clone())).or_else(|| find_near(&seen_at, &identity));
        if let Some((place, now)) = found {
            if now != seen_at {
                write_down(&state, &identity, &now);
            }
            state.held.push(Held { place, identity, seen_at: now });
        }
    }
    let excess = state.held.len().saturating_sub(MAX_HELD);
    state.held.drain(..excess);
    if kept.len() < lines.len() {
        let _ = crate::fs_util::write_atomic(record, format!("{}\n", kept.join("\n")).as_bytes());
    }
}

/// Entries looked at, at most, when looking for a denied file that is no longer where it was last seen.
const MAX_SEARCHED: usize = 100_000;

/// Looks for a denied file that is not where it was last seen (moved while no tandem watched, or after the last
/// command of the session that saw it): breadth first from the closest directory above that still exists, not
/// following links, within [`MAX_SEARCHED`] entries.
fn find_near(seen_at: &Path, identity: &Identity) -> Option<(OwnedFd, PathBuf)> {
    let start = seen_at.ancestors().skip(1).find(|dir| dir.is_dir())?;
    let mut budget = MAX_SEARCHED;
    let mut level = vec![start.to_path_buf()];
    while !level.is_empty() {
        let mut next = Vec::new();
        for dir in &level {
            let Ok(entries) = std::fs::read_dir(dir) else { continue };
            for entry in entries.flatten() {
                budget = budget.checked_sub(1)?;
                let Ok(meta) = entry.metadata() else { continue };
                if (meta.dev(), meta.ino()) == (identity.0, identity.1) && self::identity(&meta) == *identity {
                    let path = entry.path();
                    return open_place(&path).map(|(place, _)| (place, path));
                }
                if meta.is_dir() && meta.dev() == identity.0 {
                    next.push(entry.path());
                }
            }
        }
        level = next;
    }
    None
}

/// `path` opened as a place, not following a link, with what it is.
fn open_place(path: &Path) -> Option<(OwnedFd, Metadata)> {
    use rustix::fs::{Mode, OFlags};
    let flags = OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let place = rustix::fs::open(path, flags, Mode::empty()).ok()?;
    let meta = std::fs::File::from(place.try_clone().ok()?).metadata().ok()?;
    (!meta.file_type().is_symlink()).then_some((place, meta))
}

/// Remembers what is at `path` (not following a link), a path denied to reads, for the rest of the session and,
/// once [`keep_in`] named a record, for later ones.
pub(super) fn remember(path: &Path) {
    let Some((place, meta)) = open_place(path) else { return };
    let identity = identity(&meta);
    let mut state = remembered();
    if !state.denied.insert(identity) {
        return;
    }
    if state.held.len() >= MAX_HELD {
        state.held.remove(0);
    }
    state.held.push(Held { place, identity, seen_at: path.to_path_buf() });
    write_down(&state, &identity, path);
}

/// Where the denied files held are now (those deleted since are let go); a file found elsewhere than last seen
/// is written down there.
pub(super) fn where_they_are() -> Vec<PathBuf> {
    let mut state = remembered();
    let mut moved = Vec::new();
    state.held.retain_mut(|held| {
        let Ok(now) = current_path(&held.place) else { return false };
        if now != held.seen_at {
            held.seen_at.clone_from(&now);
            moved.push((held.identity, now));
        }
        true
    });
    for (identity, now) in &moved {
        write_down(&state, identity, now);
    }
    state.held.iter().map(|held| held.seen_at.clone()).collect()
}

/// Where a place is now, read back from the kernel; an error once it has no name left.
fn current_path(place: &OwnedFd) -> std::io::Result<PathBuf> {
    let links = std::fs::File::from(place.try_clone()?).metadata()?.nlink();
    if links == 0 {
        return Err(std::io::Error::from(std::io::ErrorKind::NotFound));
    }
    std::fs::read_link(format!("/proc/self/fd/{}", place.as_raw_fd()))
}

/// Whether a file (its metadata, not following a link) is one remembered at a denied path, under whatever name.
pub fn is_denied(meta: &Metadata) -> bool {
    let state = remembered();
    !state.denied.is_empty() && state.denied.contains(&identity(meta))
}

fn write_down(state: &Remembered, identity: &Identity, seen_at: &Path) {
    let Some(record) = state.record.as_deref() else { return };
    let appended =
        std::fs::OpenOptions::new().create(true).append(true).open(record).and_then(|mut file| {
            std::io::Write::write_all(&mut file, format!("{}\n", line(identity, seen_at)).as_bytes())
        });
    if let Err(err) = appended {
        tracing::warn!("could not write down a denied file in {}: {err}", record.display());
    }
}

fn line((device, inode, born): &Identity, seen_at: &Path) -> String {
    let born = born.and_then(|born| born.duration_since(SystemTime::UNIX_EPOCH).ok());
    let born = born.map_or_else(|| "-".to_owned(), |born| format!("{}.{:09}", born.as_secs(), born.subsec_nanos()));
    format!("{device} {inode} {born} {}", seen_at.display())
}

fn parse(line: &str) -> Option<(Identity, PathBuf)> {
    let mut fields = line.splitn(4, ' ');
    let (device, inode, born) = (fields.next()?.parse().ok()?, fields.next()?.parse().ok()?, fields.next()?);
    let seen_at = PathBuf::from(fields.next()?);
    let born = match born.split_once('.') {
        _ if born == "-" => None,
        Some((secs, nanos)) => Some(SystemTime::UNIX_EPOCH + Duration::new(secs.parse().ok()?, nanos.parse().ok()?)),
        None => return None,
    };
    Some(((device, inode, born), seen_at))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_denied_file_is_known_under_a_new_name_and_a_new_file_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let env = dir.path().join(".env");
        std::fs::write(&env, "SECRET").unwrap();
        remember(&env);
        std::fs::rename(&env, dir.path().join("notes.txt")).unwrap();
        assert!(is_denied(&std::fs::metadata(dir.path().join("notes.txt")).unwrap()));
        std::fs::write(&env, "new").unwrap();
        assert!(!is_denied(&std::fs::metadata(&env).unwrap()));
    }

    #[test]
    fn identities_read_back_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let meta = std::fs::metadata(dir.path()).unwrap();
        let place = Path::new("/a b/c");
        assert_eq!(parse(&line(&identity(&meta), place)), Some((identity(&meta), place.to_path_buf())));
        assert_eq!(parse("1 2 - /x"), Some(((1, 2, None), PathBuf::from("/x"))));
        assert_eq!(parse("1 x - /x"), None);
    }

    /// Found by the thirty-seventh red-team round: a build renamed a denied file after the last command of its
    /// session, the next session did not find it where it was written down, and read it under its new name.
    #[test]
    fn a_later_session_finds_a_denied_file_moved_after_it_was_written_down() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(root.join("sub/.env"), "x").unwrap();
        let meta = std::fs::metadata(root.join("sub/.env")).unwrap();
        std::fs::write(root.join("record"), format!("{}\n", line(&identity(&meta), &root.join("sub/.env")))).unwrap();
        std::fs::rename(root.join("sub"), root.join("moved")).unwrap();
        std::fs::rename(root.join("moved/.env"), root.join("moved/notes.txt")).unwrap();
        keep_in(&root.join("record"));
        assert!(where_they_are().contains(&root.join("moved/notes.txt")));
        let written = std::fs::read_to_string(root.join("record")).unwrap();
        assert!(written.ends_with(&format!("{}\n", root.join("moved/notes.txt").display())), "{written}");
        super::remembered().record = None;
    }

    #[test]
    fn a_denied_directory_is_followed_where_it_is_moved() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(root.join("sub/secrets")).unwrap();
        remember(&root.join("sub/secrets"));
        std::fs::rename(root.join("sub"), root.join("moved")).unwrap();
        assert!(where_they_are().contains(&root.join("moved/secrets")));
        std::fs::remove_dir_all(root.join("moved")).unwrap();
        assert!(!where_they_are().iter().any(|path| path.starts_with(&root)), "a deleted one is let go");
    }
}
