//! The files and directories found at a denied path, remembered by what they are (device, inode, birth time)
//! rather than by name, and followed wherever they go: a denial names a path, and a command that may write where
//! the denied file lies (a build a rule allows, in a workspace holding a `.env` a Read deny rule names) could
//! rename it — or the directory holding it — to a name nobody denied, and the next command's read grants, made
//! by names, granted it; the Read tool, judging names, read it.
//!
//! Each one is held open as a place (`O_PATH`, at most [`MAX_HELD`]; any more are kept where they are, see
//! [`followed`]) so that where it is now can be read back from the kernel (`/proc/self/fd`): those paths are
//! denied too ([`where_they_are`]). The Read tool refuses what it opens when it is one of them ([`origin_of`]).
//! Each keeps the denied path it was found at (its origin), and is
//! denied only while the rules of the moment still deny that path: removing a rule lifts it again, and a file
//! another project's rules denied is not denied here. Moving a denied file to a place where it could be read is
//! refused by Landlock itself (it would gain a right it lacked, see `linux.rs`).
//!
//! The session's search looks where every rule points, not only where reads are denied: what Read ask rules and
//! Edit deny or ask rules name, the secrets and profiles that may not be written (`find_denied_files`). A file found
//! only there is not denied to reads for it (each policy denies by its own paths); the file tools judge a call by
//! the place its file was found too ([`origin_of`]), so a rule covers the file under any other name. The search
//! runs when the session starts and again after every command ([`note_where_denied_files_are`]).
//!
//! What is remembered is also written down ([`keep_in`], a file in tandem's data directory, which no sandboxed
//! command may write), with where it was last seen, so that a later session still follows the file a build
//! renamed in an earlier one (looked for near where it was last seen when it is not there any more).

use std::collections::BTreeMap;
use std::fs::Metadata;
use std::os::fd::OwnedFd;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, SystemTime};

use super::walk::{Visit, Walked, breadth_first};

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
    origin: PathBuf,
    seen_at: PathBuf,
    /// Where it lies when its path can't be read back (nested past `PATH_MAX` by a command): the directories it
    /// may be in, denied whole instead.
    within: Vec<PathBuf>,
}

/// A denied file the record names that was not found at start, with the directories a search could not finish
/// (where it may be): denied whole, while the policy denies its origin.
struct Unfound {
    origin: PathBuf,
    within: Vec<PathBuf>,
}

#[derive(Default)]
struct Remembered {
    /// What was found at a denied path, and that path.
    denied: BTreeMap<Identity, PathBuf>,
    held: Vec<Held>,
    unfound: Vec<Unfound>,
    record: Option<PathBuf>,
}

static REMEMBERED: Mutex<Remembered> =
    Mutex::new(Remembered { denied: BTreeMap::new(), held: Vec::new(), unfound: Vec::new(), record: None });

fn remembered() -> std::sync::MutexGuard<'static, Remembered> {
    REMEMBERED.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Denied files held open (and written down) at most. Beyond, a denied file is not followed, and is kept where
/// it is instead ([`followed`]: the sandbox makes its directory unwritable), so that a build can't push the
/// user's files out by making hundreds of denied decoys.
const MAX_HELD: usize = 256;

/// Entries looked at, at most, at start, looking for every denied file not found where it was last seen.
const MAX_SEARCHED_AT_START: usize = 200_000;

/// Remembers what the file `record` holds (following each file to where it was last seen, first seen first) and
/// writes there, from now on, what is remembered; the record is rewritten with the files found.
pub fn keep_in(record: &Path) {
    let text = match std::fs::read_to_string(record) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(err) => {
            tracing::warn!("could not read the record of denied files {}: {err}", record.display());
            String::new()
        }
    };
    let mut last_seen: Vec<Sighting> = Vec::new();
    for line in text.lines() {
        let Ok(sighting) = serde_json::from_str::<Sighting>(line) else {
            tracing::warn!("a damaged line in the record of denied files {} was left out", record.display());
            continue;
        };
        match last_seen.iter_mut().find(|known| known.identity() == sighting.identity()) {
            Some(known) => *known = sighting,
            None => last_seen.push(sighting),
        }
    }
    let mut state = remembered();
    let mut budget = MAX_SEARCHED_AT_START;
    let mut kept_lines = String::new();
    for sighting in last_seen {
        let (identity, seen_at) = (sighting.identity(), sighting.seen_at.clone());
        if state.held.len() >= MAX_HELD || state.held.iter().any(|held| held.identity == identity) {
            continue;
        }
        let there = open_place(&seen_at).filter(|(_, meta)| self::identity(meta) == identity);
        let found = match there {
            Some((place, _)) => Ok((place, seen_at.clone())),
            None => find_near(&seen_at, &identity, &mut budget),
        };
        match found {
            Ok((place, now)) => {
                state.denied.insert(identity, sighting.origin.clone());
                let held = Held { place, identity, origin: sighting.origin, seen_at: now, within: Vec::new() };
                state.held.push(held);
            }
            // Maybe in a directory the search could not finish: kept in the record, looked for next time too.
            Err(within) if !within.is_empty() => {
                kept_lines.extend(serde_json::to_string(&sighting).ok().map(|line| format!("{line}\n")));
                state.unfound.push(Unfound { origin: sighting.origin, within });
            }
            Err(_) => {}
        }
    }
    let lines: String = state
        .held
        .iter()
        .filter_map(|held| serde_json::to_string(&Sighting::of(held)).ok())
        .map(|line| format!("{line}\n"))
        .chain(std::iter::once(kept_lines))
        .collect();
    if lines != text
        && let Err(err) = crate::fs_util::write_atomic(record, lines.as_bytes())
    {
        tracing::warn!("could not rewrite the record of denied files {}: {err}", record.display());
    }
    state.record = Some(record.to_path_buf());
}

/// Looks for a denied file that is not where it was last seen (moved while no tandem watched, or after the last
/// command of the session that saw it): breadth first from the closest directory above that still exists, not
/// following links, within what is left of `budget`. Not found: the directories the search could not finish,
/// where it may be (none: it is nowhere near).
fn find_near(seen_at: &Path, identity: &Identity, budget: &mut usize) -> Result<(OwnedFd, PathBuf), Vec<PathBuf>> {
    let Some(start) = nearest_directory(seen_at) else { return Err(Vec::new()) };
    let mut found = None;
    let walked = names_of(start, (identity.0, identity.1), budget, |path, meta| {
        if self::identity(meta) != *identity {
            return Visit::Pass;
        }
        found = Some(path);
        Visit::Stop
    });
    let path = found.ok_or(walked)?;
    open_place(&path).map(|(place, _)| (place, path.clone())).ok_or_else(|| vec![path])
}

/// The closest directory above `path` that still exists, where a search for what was there starts.
fn nearest_directory(path: &Path) -> Option<&Path> {
    path.ancestors().skip(1).find(|dir| dir.is_dir())
}

/// Walks below `start` (same device, not following links, within `budget`) for the names of the file `(device,
/// inode)`, telling `found` of each (it says whether to go on); returns the directories the walk could not
/// finish (none: it finished).
fn names_of(
    start: &Path,
    (device, inode): (u64, u64),
    budget: &mut usize,
    mut found: impl FnMut(PathBuf, &Metadata) -> Visit,
) -> Vec<PathBuf> {
    let walked = breadth_first(
        start,
        budget,
        |_| {},
        |entry| match entry.metadata() {
            Ok(meta) if (meta.dev(), meta.ino()) == (device, inode) => found(entry.path(), &meta),
            Ok(meta) if meta.is_dir() && meta.dev() == device => Visit::Enter,
            _ => Visit::Pass,
        },
    );
    match walked {
        Walked::Done => Vec::new(),
        Walked::Unfinished(dirs) => dirs,
    }
}

/// `path` opened as a place, not following a link, with what it is.
fn open_place(path: &Path) -> Option<(OwnedFd, Metadata)> {
    use rustix::fs::{Mode, OFlags};
    let flags = OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let place = rustix::fs::open(path, flags, Mode::empty()).ok()?;
    let meta = std::fs::File::from(place.try_clone().ok()?).metadata().ok()?;
    (!meta.file_type().is_symlink()).then_some((place, meta))
}

/// Remembers what is at `path` (not following a link), a path denied to reads as `origin` (the path itself, or
/// a link to it the policy names), for the rest of the session and, once [`keep_in`] named a record, for later
/// ones.
pub(super) fn remember(path: &Path, origin: &Path) {
    let Some((place, meta)) = open_place(path) else { return };
    let identity = identity(&meta);
    let mut state = remembered();
    if state.held.iter().any(|held| held.identity == identity) {
        return;
    }
    state.denied.insert(identity, origin.to_path_buf());
    if state.held.len() >= MAX_HELD {
        return;
    }
    let held = Held { place, identity, origin: origin.to_path_buf(), seen_at: path.to_path_buf(), within: Vec::new() };
    write_down(&state, &held);
    state.held.push(held);
}

/// Whether a file (its metadata, not following a link) is one followed wherever it goes; one that is not must
/// stay where it is.
pub(super) fn followed(meta: &Metadata) -> bool {
    let identity = identity(meta);
    remembered().held.iter().any(|held| held.identity == identity)
}

/// Writes down where each followed file is now (after a command: one that moved it is followed by the next
/// session from there, even if no other command runs in this one).
pub fn note_where_denied_files_are() {
    follow(&mut remembered());
    search_again();
}

/// Where the denied files held are now, those whose origin `denied` still denies (a file whose path can't be
/// read back: the directories it may be in), and the directories a denied file the record names may be in.
pub(super) fn where_they_are(denied: &dyn Fn(&Path) -> bool) -> Vec<PathBuf> {
    let mut state = remembered();
    follow(&mut state);
    let held = state.held.iter().filter(|held| denied(&held.origin)).flat_map(|held| {
        if held.within.is_empty() { std::slice::from_ref(&held.seen_at) } else { held.within.as_slice() }
    });
    let unfound = state.unfound.iter().filter(|unfound| denied(&unfound.origin)).flat_map(|u| u.within.as_slice());
    held.chain(unfound).cloned().collect()
}

/// Reads back where each held file is (those deleted since are let go) and writes down those found elsewhere
/// than last seen. One whose path can't be read back is looked for near where it was last seen; where that
/// can't finish, the directories it may be in are denied whole (`within`).
fn follow(state: &mut Remembered) {
    let mut moved = Vec::new();
    state.held.retain_mut(|held| {
        let now = match current_path(&held.place) {
            Now::At(now) => now,
            Now::Gone => return false,
            // Still where it was looked for: out of a directory denied whole it can't be moved (it would gain
            // the right to be read, which Landlock refuses).
            Now::Unnamed if !held.within.is_empty() => return true,
            Now::Unnamed => {
                let mut budget = MAX_SEARCHED_AT_START;
                match find_near(&held.seen_at, &held.identity, &mut budget) {
                    Ok((_, now)) => now,
                    // Not near (nor anywhere a search could not finish): the closest place above it is denied.
                    Err(within) if within.is_empty() => {
                        held.within = nearest_directory(&held.seen_at).map(Path::to_path_buf).into_iter().collect();
                        return true;
                    }
                    Err(within) => {
                        held.within = within;
                        return true;
                    }
                }
            }
        };
        held.within.clear();
        if now != held.seen_at {
            held.seen_at = now;
            moved.push(held.identity);
        }
        true
    });
    for held in state.held.iter().filter(|held| moved.contains(&held.identity)) {
        write_down(state, held);
    }
}

/// Where a held place is now.
enum Now {
    At(PathBuf),
    /// It has no name left (deleted).
    Gone,
    /// It has one, but it can't be read back (longer than `PATH_MAX`).
    Unnamed,
}

/// Where a place is now, read back from the kernel.
fn current_path(place: &OwnedFd) -> Now {
    let links = place.try_clone().and_then(|place| std::fs::File::from(place).metadata()).map(|meta| meta.nlink());
    match links {
        Ok(0) | Err(_) => Now::Gone,
        // A name of a file with several was removed: the kernel still names the removed one.
        Ok(_) => match crate::fs_util::opened_path(place) {
            Ok(path) if path.as_os_str().as_encoded_bytes().ends_with(b" (deleted)") => Now::Unnamed,
            Ok(path) => Now::At(path),
            Err(_) => Now::Unnamed,
        },
    }
}

/// Entries looked at, at most, per denied file with other names, looking for them.
const MAX_SEARCHED_FOR_LINKS: usize = 50_000;

/// The other names of each denied file that has several (hard links), with the denied path they are names of:
/// Landlock grants a file wherever a name of it is granted, and a command may have linked a file before any rule
/// denied it (`cp .env.example .env && ln .env cache/env.txt` in one build). Looked for in `roots`, the places a
/// command of this policy may write (and so link) in: the workspace, the session's temp dir, and the tool caches
/// its rule may write (searched last: they can hold hundreds of thousands of files); what the search could not
/// finish within its budget is returned whole, denied until the other names are gone.
pub(super) fn other_names(denied: &[PathBuf], roots: &[PathBuf]) -> Vec<(PathBuf, PathBuf)> {
    let mut budget = MAX_SEARCHED_FOR_LINKS;
    let mut out = Vec::new();
    let linked: Vec<_> = denied.iter().flat_map(|path| linked_files(path, roots, &mut budget)).collect();
    for (file, meta, origin) in linked {
        let mut left = meta.nlink() - 1;
        for root in roots {
            let unfinished = names_of(root, (meta.dev(), meta.ino()), &mut budget, |path, _| {
                if path == file {
                    return Visit::Pass;
                }
                out.push((path, origin.clone()));
                left -= 1;
                if left == 0 { Visit::Stop } else { Visit::Pass }
            });
            out.extend(unfinished.into_iter().map(|dir| (dir, origin.clone())));
            if left == 0 {
                break;
            }
        }
    }
    out
}

/// The files with other names at a denied path in `roots` (where a command could have linked it before anything
/// denied it): the file itself, or those in a denied directory (made there and linked out by the command that made
/// the directory), each with the denied path it is known by; canonical, with its metadata.
fn linked_files(path: &Path, roots: &[PathBuf], budget: &mut usize) -> Vec<(PathBuf, Metadata, PathBuf)> {
    let Ok(canonical) = std::fs::canonicalize(path) else { return Vec::new() };
    if !roots.iter().any(|root| canonical.starts_with(root)) {
        return Vec::new();
    }
    let Ok(meta) = std::fs::metadata(&canonical) else { return Vec::new() };
    if meta.is_file() {
        return if meta.nlink() > 1 { vec![(canonical, meta, path.to_path_buf())] } else { Vec::new() };
    }
    let mut out = Vec::new();
    if meta.is_dir() {
        breadth_first(
            &canonical,
            budget,
            |_| {},
            |entry| match entry.metadata() {
                Ok(found) if found.is_file() && found.nlink() > 1 => {
                    let origin =
                        entry.path().strip_prefix(&canonical).map_or(path.to_path_buf(), |rest| path.join(rest));
                    out.push((entry.path(), found, origin));
                    Visit::Pass
                }
                Ok(found) if found.is_dir() => Visit::Enter,
                _ => Visit::Pass,
            },
        );
    }
    out
}

/// The denied path a file (its metadata, not following a link) was found at, under whatever name it has now:
/// after the search the session started with ([`search_at_start`]), so that a file denied through a link that
/// was there before any command ran is known by the first Read.
pub fn origin_of(meta: &Metadata) -> Option<PathBuf> {
    let mut searching = SEARCHING.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    while *searching > 0 {
        searching = SEARCHED.wait(searching).unwrap_or_else(std::sync::PoisonError::into_inner);
    }
    drop(searching);
    known_origin(meta)
}

/// [`origin_of`] as far as is known now (the split itself, which the first search is).
pub(super) fn known_origin(meta: &Metadata) -> Option<PathBuf> {
    remembered().denied.get(&identity(meta)).cloned()
}

/// How many searches of what the session's policy denies are running ([`origin_of`] waits for none).
static SEARCHING: Mutex<usize> = Mutex::new(0);
static SEARCHED: Condvar = Condvar::new();

/// A search of what the session's policy denies, run again after each command.
pub(super) type SessionSearch = std::sync::Arc<dyn Fn() + Send + Sync>;

/// The session's search: kept so that it runs again after each command ([`note_where_denied_files_are`]).
static SESSION_SEARCH: Mutex<Option<SessionSearch>> = Mutex::new(None);

/// Runs `search` (which remembers what the policy denies now) on a thread of its own, now and after every command;
/// [`origin_of`] waits for it.
pub(super) fn search_at_start(search: SessionSearch) {
    *SESSION_SEARCH.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(search.clone());
    search_in_background(search);
}

/// After a command: what it made (a link to a denied place, the file a denied link leads to) is found before the
/// next tool call is judged, not only before the next sandboxed command.
fn search_again() {
    let search = SESSION_SEARCH.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone();
    if let Some(search) = search {
        search_in_background(search);
    }
}

fn search_in_background(search: SessionSearch) {
    /// Ends the wait however the search ends.
    struct Ended;
    impl Drop for Ended {
        fn drop(&mut self) {
            let mut searching = SEARCHING.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            *searching = searching.saturating_sub(1);
            SEARCHED.notify_all();
        }
    }
    *SEARCHING.lock().unwrap_or_else(std::sync::PoisonError::into_inner) += 1;
    let started = std::thread::Builder::new().name("denied-files".into()).spawn(move || {
        let _ended = Ended;
        search();
    });
    if started.is_err() {
        drop(Ended);
    }
}

fn write_down(state: &Remembered, held: &Held) {
    let Some(record) = state.record.as_deref() else { return };
    let Ok(line) = serde_json::to_string(&Sighting::of(held)) else { return };
    let appended = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(record)
        .and_then(|mut file| std::io::Write::write_all(&mut file, format!("{line}\n").as_bytes()));
    if let Err(err) = appended {
        tracing::warn!("could not write down a denied file in {}: {err}", record.display());
    }
}

/// One line of the record: what a denied file is, the denied path it was found at, and where it was last seen.
#[derive(serde::Serialize, serde::Deserialize)]
struct Sighting {
    device: u64,
    inode: u64,
    /// Seconds and nanoseconds since the epoch.
    born: Option<(u64, u32)>,
    origin: PathBuf,
    seen_at: PathBuf,
}

impl Sighting {
    fn of(held: &Held) -> Sighting {
        let (device, inode, born) = held.identity;
        let born = born.and_then(|born| born.duration_since(SystemTime::UNIX_EPOCH).ok());
        Sighting {
            device,
            inode,
            born: born.map(|born| (born.as_secs(), born.subsec_nanos())),
            origin: held.origin.clone(),
            seen_at: held.seen_at.clone(),
        }
    }

    fn identity(&self) -> Identity {
        let born = self.born.map(|(secs, nanos)| SystemTime::UNIX_EPOCH + Duration::new(secs, nanos));
        (self.device, self.inode, born)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn everything(_: &Path) -> bool {
        true
    }

    #[test]
    fn a_denied_file_is_known_under_a_new_name_and_a_new_file_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let env = dir.path().join(".env");
        std::fs::write(&env, "SECRET").unwrap();
        remember(&env, &env);
        std::fs::rename(&env, dir.path().join("notes.txt")).unwrap();
        assert_eq!(origin_of(&std::fs::metadata(dir.path().join("notes.txt")).unwrap()), Some(env.clone()));
        std::fs::write(&env, "new").unwrap();
        assert_eq!(origin_of(&std::fs::metadata(&env).unwrap()), None);
    }

    /// Found by the thirty-seventh red-team round: a build renamed a denied file after the last command of its
    /// session, the next session did not find it where it was written down, and read it under its new name.
    #[test]
    fn a_later_session_finds_a_denied_file_moved_after_it_was_written_down() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(root.join("sub/.env"), "x").unwrap();
        let (place, meta) = open_place(&root.join("sub/.env")).unwrap();
        let origin = root.join("sub/.env");
        let held = Held {
            place,
            identity: identity(&meta),
            origin: origin.clone(),
            seen_at: origin.clone(),
            within: Vec::new(),
        };
        let line = serde_json::to_string(&Sighting::of(&held)).unwrap();
        std::fs::write(root.join("record"), format!("{line}\n")).unwrap();
        std::fs::rename(root.join("sub"), root.join("moved")).unwrap();
        std::fs::rename(root.join("moved/.env"), root.join("moved/notes.txt")).unwrap();
        keep_in(&root.join("record"));
        super::remembered().record = None;
        assert!(where_they_are(&everything).contains(&root.join("moved/notes.txt")));
        assert!(!where_they_are(&|denied: &Path| denied != origin).contains(&root.join("moved/notes.txt")));
        let written = std::fs::read_to_string(root.join("record")).unwrap();
        assert!(written.contains(&format!("{}", root.join("moved/notes.txt").display())), "{written}");
    }

    #[test]
    fn a_denied_directory_is_followed_where_it_is_moved() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(root.join("sub/secrets")).unwrap();
        remember(&root.join("sub/secrets"), &root.join("sub/secrets"));
        std::fs::rename(root.join("sub"), root.join("moved")).unwrap();
        assert!(where_they_are(&everything).contains(&root.join("moved/secrets")));
        std::fs::remove_dir_all(root.join("moved")).unwrap();
        assert!(!where_they_are(&everything).iter().any(|path| path.starts_with(&root)), "a deleted one is let go");
    }
}
