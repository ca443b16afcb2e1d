//! Protected entries kept by restoring them: a repository's configuration and hooks, `.claude`, `.tandem` and
//! `.mcp.json`, put back as they were when a workspace-writing command ends.
//!
//! Landlock can't make a directory writable except some of its entries (a right on a directory covers all
//! beneath it), so a sandbox that keeps `.git` physically read-only can't let a command create anything at the
//! top of the workspace (`cp a b`, `echo $$ > pid.txt`, `git commit`'s `.git/index.lock`). For a command in the
//! foreground, tandem instead grants the workspace whole, takes a copy of every protected entry before the
//! command starts and, when the command and everything it started are gone, puts back what changed and removes
//! what appeared. Anything that can't be copied within the limits falls back to the physical split
//! ([`Guard::take`] says so).
//!
//! Git's own data (refs, the index, logs, objects) is the command's to change only when the command is git itself
//! ([`History::Writable`]): `git commit` under a rule works. Any other command ([`History::Protected`]) gets the
//! repository's history put back too — otherwise a build a rule allows could commit or stash a planted
//! `.claude/settings.json` that the guard removed from the work tree, and your next `git checkout .` or
//! `git stash pop` would bring it back for a later session to apply. Its objects are checked ([`objects`]).

use std::collections::{BTreeMap, BTreeSet};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use super::grants::READ_ONLY_ENTRIES;
use super::mend::{Listing, open_directory};

mod anchored;
mod objects;
mod removal;
mod repository;
#[cfg(test)]
mod tests;

use anchored::Anchored;
use objects::{MOVED_ASIDE_PREFIX, ObjectStore};
use removal::{let_change, remove_whole};
use repository::{
    adds_programs, git_data_name, inert_in_repository, is_repository_head, is_repository_store, is_step_file,
    programs_in, valid_head, watched_in_git_data,
};

/// At most this many protected entries are copied; a workspace with more is protected physically instead.
const MAX_ENTRIES: usize = 5_000;
/// At most this many bytes of protected files are copied (a repository's index and logs among them, for a command
/// that may not change its history).
const MAX_BYTES: u64 = 64 * 1024 * 1024;

/// Whether a command may change the history of the repositories in the workspace: their refs, index, logs and
/// objects (the state of a commit, a checkout, a stash or a fetch).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum History {
    /// The command is git itself, which a rule or the analysis allowed: it may commit, check out, fetch.
    Writable,
    /// Anything else (a build a rule allows): the refs, index and logs are put back, and what it added to the
    /// object stores is checked.
    #[default]
    Protected,
}

/// Device and inode: which file a path names. A protected file or directory swapped for another one with the
/// same content is not unchanged: a background command's Landlock rule follows the inode it was granted (a
/// workspace directory moved to `.claude`, a top-level file moved over a settings file), so it could write there
/// later.
type FileId = (u64, u64);

/// What one protected path was.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Entry {
    File {
        content: Vec<u8>,
        mode: u32,
        id: FileId,
    },
    Dir(FileId),
    Link(PathBuf),
    /// A repository's `HEAD`: git's to change (a checkout), but it must exist and say a ref or a commit — without
    /// it git stops taking the directory for a repository and may take its parent for a bare one, whose `config`
    /// the command wrote.
    Head(Vec<u8>),
    /// A repository's `refs` or `objects`: git's to fill, but it must stay a directory, for the same reason.
    GitDir,
    /// A step file of a rebase or cherry-pick in progress (`rebase-merge/git-rebase-todo` or `strategy`,
    /// `sequencer/todo` or `opts`): git's to change as it goes, but a step that runs a command (`exec`) or a
    /// strategy that is a program would run when you type `--continue`, so the command may not add one.
    Steps(Vec<u8>),
}

/// A copy of every protected entry of the workspace roots, to put back after a command.
#[derive(Debug, Default)]
pub struct Guard {
    roots: Vec<PathBuf>,
    entries: BTreeMap<PathBuf, Entry>,
    /// Device and inode of git's own data directly in each `.git` (`refs`, `objects`, `packed-refs`…): found
    /// again under a new name there, it was moved aside and holds the repository's data, so it stays.
    git_data_inodes: BTreeSet<(u64, u64)>,
    /// The repository directories among the protected entries (each `.git`, and a submodule's or worktree's
    /// directory in `.git/modules` or `.git/worktrees`: one with a `HEAD`), as they were before the command. Git's
    /// own data is only what is directly in one of these: `.git/modules/logs` is a submodule's directory, whose
    /// config and hooks are protected like any other, not a log.
    git_dirs: BTreeSet<PathBuf>,
    history: History,
    /// With [`History::Protected`]: each repository's object store as it was.
    stores: Vec<ObjectStore>,
}

impl Guard {
    /// Copies the protected entries of `roots` (and of the repositories and settings nested in them, as deep
    /// as [`super::grants`] looks), with the repositories' history as `history` says. `None` when they are too
    /// many or too big to copy.
    pub fn take(roots: &[PathBuf], history: History) -> Option<Guard> {
        let mut guard = Guard { roots: roots.to_vec(), history, ..Guard::default() };
        let mut bytes = 0;
        for path in protected_tops(roots, Listing::AsItIs) {
            // Copied only where it is reached without a link: a protected name found through one (`a/lnk/.ssh` by
            // a `gitdir:` spelling with `a/lnk` linked to the home directory) would be read by tandem itself and
            // put back as new files in the workspace once the link is a directory — a secret where reads see it.
            if Anchored::new(roots, &path).is_err() {
                continue;
            }
            guard.record(&path, &mut bytes)?;
        }
        Some(guard)
    }

    /// Puts every protected entry back as it was and removes the ones that appeared; what it did, one line each
    /// (empty when nothing had changed). The protected trees are walked whole, with no limit: a command that
    /// filled them first must not hide what it added after (only the copy taken before is bounded).
    ///
    /// Every path is reached from its root without following a link (see [`Anchored`]): a command that replaced a
    /// directory above a protected entry with a link (`mv sub sub.bak && ln -s ~ sub`) must not make tandem write
    /// the entry where the link points. Such an entry is left alone and said so.
    pub fn restore(&mut self) -> Vec<String> {
        let mut present = Vec::new();
        for top in protected_tops(&self.roots, Listing::Mended) {
            self.list(&top, &mut present);
        }
        present.sort();
        let mut done = Vec::new();
        // Removed first: a directory that replaced a file goes before the file comes back. A new directory goes
        // whole, with what is in it.
        let mut removed_tree: Option<&Path> = None;
        for path in &present {
            if self.entries.contains_key(path) || removed_tree.is_some_and(|tree| path.starts_with(tree)) {
                continue;
            }
            let Ok(anchored) = Anchored::new(&self.roots, path) else {
                done.push(format!(
                    "could not remove {}: a directory above it is no longer a directory",
                    path.display()
                ));
                continue;
            };
            let place = anchored.path();
            if is_step_file(path) && read(&place).is_ok_and(|text| programs_in(path, &text).is_empty()) {
                continue;
            }
            removed_tree = Some(path);
            match remove_whole(&place) {
                Ok(false) => {}
                Ok(true) => done.push(format!("removed {}", path.display())),
                Err(_) if std::fs::symlink_metadata(&place).is_err() => {
                    done.push(format!("removed {}", path.display()))
                }
                Err(err) => done.push(format!("could not remove {}: {err}", path.display())),
            }
        }
        let paths: Vec<PathBuf> = self.entries.keys().cloned().collect();
        for path in &paths {
            // What can't be seen is never put back (that removes what stands there, a whole `.git` when the
            // workspace was made unsearchable): it is said instead.
            match self.metadata_after(path) {
                Err(err) if err.kind() != std::io::ErrorKind::NotFound => {
                    done.push(format!("could not check {}: {err}", path.display()));
                    continue;
                }
                _ => {}
            }
            let Some(entry) = self.entries.get_mut(path) else { continue };
            let Ok(anchored) = Anchored::new(&self.roots, path) else {
                done.push(format!(
                    "could not restore {}: a directory above it is gone or no longer a directory",
                    path.display()
                ));
                continue;
            };
            let place = anchored.path();
            if unchanged(&place, entry) {
                continue;
            }
            let_change(&place);
            if put_back(&place, entry).is_ok() {
                entry.take_identity_of(&place);
                done.push(format!("restored {}", path.display()));
            } else {
                done.push(format!("could not restore {}", path.display()));
            }
        }
        for store in &self.stores {
            done.extend(store.check(&self.roots));
        }
        done
    }

    /// Copies `top` and what is below it; `None` when that is more than the limits, or can't be read whole (a
    /// path too long to name). A list of what is left to copy, not recursion: a tree can be thousands deep.
    fn record(&mut self, top: &Path, bytes: &mut u64) -> Option<()> {
        let mut pending = vec![top.to_path_buf()];
        while let Some(path) = pending.pop() {
            self.record_one(&path, bytes, &mut pending)?;
        }
        Some(())
    }

    /// Copies `path`; what is in a directory goes to `pending`.
    fn record_one(&mut self, path: &Path, bytes: &mut u64, pending: &mut Vec<PathBuf>) -> Option<()> {
        let meta = match std::fs::symlink_metadata(path) {
            Ok(meta) => meta,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Some(()),
            Err(_) => return None,
        };
        if self.entries.len() >= MAX_ENTRIES {
            return None;
        }
        if meta.file_type().is_symlink() {
            self.entries.insert(path.to_path_buf(), Entry::Link(std::fs::read_link(path).ok()?));
        } else if meta.is_dir() {
            self.entries.insert(path.to_path_buf(), Entry::Dir(identity(&meta)));
            if path.file_name().is_some_and(|name| name == ".git")
                || std::fs::symlink_metadata(path.join("HEAD")).is_ok_and(|head| head.is_file())
            {
                self.git_dirs.insert(path.to_path_buf());
            }
            for entry in std::fs::read_dir(path).ok()?.flatten() {
                let child = entry.path();
                if self.history == History::Protected {
                    self.record_with_history(&child, pending);
                    continue;
                }
                if is_repository_head(&child) {
                    let content = read(&child).ok()?;
                    self.entries.insert(child, Entry::Head(content));
                    continue;
                }
                if is_repository_store(&child) {
                    self.note_git_data(&child);
                    self.entries.insert(child.clone(), Entry::GitDir);
                } else if self.git_data(&child) {
                    self.note_git_data(&child);
                } else {
                    pending.push(child);
                    continue;
                }
                for inside in watched_in_git_data(&child) {
                    if is_step_file(&inside) {
                        let Ok(content) = read(&inside) else { continue };
                        self.entries.insert(inside, Entry::Steps(content));
                    } else {
                        pending.push(inside);
                    }
                }
            }
        } else if meta.is_file() {
            *bytes += meta.len();
            if *bytes > MAX_BYTES {
                return None;
            }
            use std::os::unix::fs::PermissionsExt;
            let content = super::read_regular_file(path, MAX_BYTES, false).ok()?;
            let (mode, id) = (meta.permissions().mode(), identity(&meta));
            self.entries.insert(path.to_path_buf(), Entry::File { content, mode, id });
        }
        Some(())
    }

    /// Records an entry when the history is protected: all of it is, but the object stores (too big to copy:
    /// checked instead) and what was moved aside from them.
    fn record_with_history(&mut self, child: &Path, pending: &mut Vec<PathBuf>) {
        match self.history_role(child) {
            HistoryRole::Objects => {
                self.note_git_data(child);
                self.entries.insert(child.to_path_buf(), Entry::GitDir);
                if let Some(git_dir) = child.parent() {
                    self.stores.push(ObjectStore::take(git_dir));
                }
                pending.extend(watched_in_git_data(child));
            }
            HistoryRole::Inert => {}
            HistoryRole::Guarded => pending.push(child.to_path_buf()),
        }
    }

    fn history_role(&self, path: &Path) -> HistoryRole {
        let in_repository = path.parent().is_some_and(|dir| self.git_dirs.contains(dir));
        let name = path.file_name().and_then(|name| name.to_str()).unwrap_or_default();
        match name {
            "objects" if in_repository => HistoryRole::Objects,
            _ if in_repository && name.starts_with(MOVED_ASIDE_PREFIX) => HistoryRole::Inert,
            _ if self.moved_git_data(path) => HistoryRole::Inert,
            _ => HistoryRole::Guarded,
        }
    }

    /// Git's own data directly inside a repository directory, which git commands write and which runs nothing:
    /// objects, refs, logs, the index, lock files, the state of operations in progress. Everything else in `.git`
    /// (config, hooks, info, a submodule's config and hooks) is protected.
    fn git_data(&self, path: &Path) -> bool {
        path.parent().is_some_and(|dir| self.git_dirs.contains(dir)) && git_data_name(path)
    }

    fn note_git_data(&mut self, path: &Path) {
        use std::os::unix::fs::MetadataExt;
        if path.parent().and_then(Path::file_name).is_some_and(|dir| dir == ".git")
            && let Ok(meta) = std::fs::symlink_metadata(path)
        {
            self.git_data_inodes.insert((meta.dev(), meta.ino()));
        }
    }

    /// `path`'s metadata after a command, with the directories on its way made searchable again
    /// ([`super::mend::metadata`]): what a command hid behind `chmod 600 .` or `chmod 000 a` is seen.
    fn metadata_after(&self, path: &Path) -> std::io::Result<std::fs::Metadata> {
        match anchored::root_holding(&self.roots, path) {
            Some(root) => super::mend::metadata(path, Listing::Mended, root),
            None => std::fs::symlink_metadata(path),
        }
    }

    /// Every path under `top` (itself included) that the guard looks after, without following links or entering
    /// git's own data (or what of it was moved aside). A list of what is left to look at, not recursion.
    fn list(&self, top: &Path, out: &mut Vec<PathBuf>) {
        let mut pending = vec![top.to_path_buf()];
        while let Some(path) = pending.pop() {
            self.list_one(&path, out, &mut pending);
        }
    }

    /// Adds `path` to `out` when it exists; what is in a directory goes to `pending`.
    fn list_one(&self, path: &Path, out: &mut Vec<PathBuf>, pending: &mut Vec<PathBuf>) {
        let Ok(meta) = self.metadata_after(path) else { return };
        out.push(path.to_path_buf());
        if !meta.is_dir() {
            return;
        }
        // What a command made unlistable (`chmod 311 .git/hooks`) is listed anyway: a new hook must not hide.
        for entry in super::mend::list_dir(
            path,
            Listing::Mended,
            anchored::root_holding(&self.roots, path).map_or(path, |root| root.as_path()),
        )
        .into_iter()
        .flatten()
        .flatten()
        {
            let child = entry.path();
            if self.history == History::Protected {
                match self.history_role(&child) {
                    HistoryRole::Guarded => pending.push(child),
                    HistoryRole::Inert => {}
                    HistoryRole::Objects => {
                        out.push(child.clone());
                        let watched = watched_in_git_data(&child);
                        out.extend(watched.into_iter().filter(|inside| std::fs::symlink_metadata(inside).is_ok()));
                    }
                }
                continue;
            }
            if is_repository_store(&child) {
                out.push(child.clone());
            } else if is_repository_head(&child) || !(self.git_data(&child) || self.moved_git_data(&child)) {
                pending.push(child);
                continue;
            }
            let watched = watched_in_git_data(&child);
            out.extend(watched.into_iter().filter(|inside| std::fs::symlink_metadata(inside).is_ok()));
            // Git's data is files, directories and links; a named pipe there (`mkfifo .git/index`) would block
            // your next git command for good, so it goes like anything new in a protected entry.
            if std::fs::symlink_metadata(&child).is_ok_and(|meta| {
                let kind = meta.file_type();
                !(kind.is_file() || kind.is_dir() || kind.is_symlink())
            }) {
                out.push(child);
            }
        }
    }

    /// A new entry directly in a `.git` directory, with a name git never reads (`refs.bak`), that is git's data
    /// moved there: left alone, since it holds the repository's own data and runs nothing. A new file there
    /// (`config~`, a backup `cp -b` made) is not and is removed.
    fn moved_git_data(&self, path: &Path) -> bool {
        use std::os::unix::fs::MetadataExt;
        inert_in_repository(path)
            && std::fs::symlink_metadata(path)
                .is_ok_and(|meta| self.git_data_inodes.contains(&(meta.dev(), meta.ino())))
    }
}

/// What an entry directly in a repository directory is to a guard that protects the history.
enum HistoryRole {
    /// The object store: must stay a directory; what is added to it is checked.
    Objects,
    /// What a check moved aside, or the object store moved aside by the command (`mv .git/objects
    /// .git/objects.bak`: the same inode, under a name git never reads): kept, it holds the repository's data.
    Inert,
    /// Everything else: copied and put back.
    Guarded,
}

/// The settings entries nested below the workspace's roots (`sub/.claude`, `sub/.tandem`, `sub/.mcp.json`) when
/// a command that keeps the protected entries read-only starts. Landlock can't forbid a new name below a writable
/// directory: one the command creates is removed when it ends ([`NestedSettings::remove_new`]), so that it
/// can't configure a session started there later. So is a new nested repository (`sub/.git`, whose
/// `core.fsmonitor` the user's own `git status` there — a shell prompt's — would run), unless the command is git
/// itself (`git clone`, `git init` under a rule: [`History::Writable`]), as the guard of a command granted the
/// workspace whole does.
pub struct NestedSettings {
    roots: Vec<PathBuf>,
    /// Each root held open since the scan, with its `/proc/self/fd` name: what lies below a root is looked at from
    /// there, so a command that made a directory above the workspace unsearchable (`chmod 000 ..`, a later
    /// command putting it back) can't hide its plants from the removal.
    held: Vec<Option<(OwnedFd, PathBuf)>>,
    before: std::collections::BTreeSet<PathBuf>,
    repositories: bool,
}

impl NestedSettings {
    pub fn scan(roots: Vec<PathBuf>, history: History) -> NestedSettings {
        let held = roots
            .iter()
            .map(|root| {
                let opened = open_directory(root).ok()?;
                let name = PathBuf::from(format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(&opened)));
                Some((opened, name))
            })
            .collect();
        let repositories = history == History::Protected;
        let mut nested = NestedSettings { roots, held, before: Default::default(), repositories };
        nested.before = nested.found(Listing::AsItIs);
        nested
    }

    /// Each root, and where what lies below it is looked at (its held descriptor's name, or the root itself).
    fn views(&self) -> impl Iterator<Item = (&Path, &Path)> {
        self.roots
            .iter()
            .zip(&self.held)
            .map(|(root, held)| (root.as_path(), held.as_ref().map_or(root.as_path(), |(_, name)| name.as_path())))
    }

    /// The nested settings and repositories there are, by their paths below the roots.
    fn found(&self, listing: Listing) -> std::collections::BTreeSet<PathBuf> {
        let mut found = std::collections::BTreeSet::new();
        for (root, look) in self.views() {
            let mut below = Vec::new();
            super::grants::nested_read_only(look, listing, &mut below);
            found.extend(
                below.into_iter().map(|path| path.strip_prefix(look).map_or(path.clone(), |rest| root.join(rest))),
            );
        }
        found.retain(|path| self.repositories || path.file_name().is_some_and(|name| name != ".git"));
        found
    }

    /// Removes the entries that were not there at the scan; what it removed, one line each.
    pub fn remove_new(self) -> Vec<String> {
        let mut done = Vec::new();
        let looks: Vec<PathBuf> = self.views().map(|(_, look)| look.to_path_buf()).collect();
        for path in self.found(Listing::Mended).difference(&self.before) {
            let look = self.views().find_map(|(root, look)| path.strip_prefix(root).ok().map(|rest| look.join(rest)));
            // Reached from its root without following a link, as the guard's restore does: a path the scan found
            // through a link (a `gitdir:` pointing through one, a submodule replaced by one, a directory swapped
            // for one while this runs) must not make tandem remove `~/.ssh` or another project's `.git`.
            let Some(anchored) = look.and_then(|look| Anchored::new(&looks, &look).ok()) else {
                done.push(format!("left {}: a directory on its way is a link or gone", path.display()));
                continue;
            };
            match remove_whole(&anchored.path()) {
                Ok(false) => {}
                Ok(true) => done.push(format!("removed {}", path.display())),
                Err(err) => done.push(format!("could not remove {}: {err}", path.display())),
            }
        }
        done
    }
}

impl Entry {
    /// After a put-back: the new file is what the next restore compares with.
    fn take_identity_of(&mut self, path: &Path) {
        if let (Entry::File { id, .. } | Entry::Dir(id), Ok(meta)) = (self, std::fs::symlink_metadata(path)) {
            *id = identity(&meta);
        }
    }
}

fn identity(meta: &std::fs::Metadata) -> FileId {
    use std::os::unix::fs::MetadataExt;
    (meta.dev(), meta.ino())
}

/// Whether `path` is as it was recorded. A protected file that gained a hard link is not: the other name could
/// write it later (from a background command), so it is given an inode of its own again.
fn unchanged(path: &Path, entry: &Entry) -> bool {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let Ok(meta) = std::fs::symlink_metadata(path) else { return false };
    match entry {
        Entry::Dir(id) => meta.is_dir() && identity(&meta) == *id,
        Entry::Link(target) => meta.file_type().is_symlink() && std::fs::read_link(path).ok().as_ref() == Some(target),
        Entry::Head(_) => meta.is_file() && meta.nlink() == 1 && read(path).is_ok_and(|text| valid_head(&text)),
        Entry::GitDir => meta.is_dir(),
        Entry::Steps(before) => read(path).is_ok_and(|now| !adds_programs(path, before, &now)),
        Entry::File { content, mode, id } => {
            meta.is_file()
                && identity(&meta) == *id
                && meta.nlink() == 1
                && meta.permissions().mode() == *mode
                && meta.len() == content.len() as u64
                && super::read_regular_file(path, MAX_BYTES, false).is_ok_and(|now| now == *content)
        }
    }
}

/// A small file of git's (`HEAD`, a step file), never waiting on a named pipe put in its place.
fn read(path: &Path) -> std::io::Result<Vec<u8>> {
    super::read_regular_file(path, 1 << 20, false)
}

/// The protected entries at the top of each root and those nested below it.
fn protected_tops(roots: &[PathBuf], listing: Listing) -> Vec<PathBuf> {
    let mut tops: Vec<PathBuf> =
        roots.iter().flat_map(|root| READ_ONLY_ENTRIES.iter().map(move |name| root.join(name))).collect();
    for root in roots {
        super::grants::nested_read_only(root, listing, &mut tops);
    }
    tops.sort();
    tops.dedup();
    tops
}

/// Writes one entry back (a file through a temp file and a rename, with its mode).
fn put_back(path: &Path, entry: &Entry) -> std::io::Result<()> {
    let new_file = |content: &[u8]| Entry::File { content: content.to_vec(), mode: 0o644, id: (0, 0) };
    if let Entry::Head(recorded) = entry {
        // A checkout's new `HEAD` stays, in a file of its own (a second name could break it later); a broken one
        // is put back.
        let now = read(path).ok().filter(|text| valid_head(text));
        return put_back(path, &new_file(now.as_deref().unwrap_or(recorded)));
    }
    // Whatever stands there now goes, a directory too: one that is not the recorded directory may be a workspace
    // directory a background command can write (its rule follows it).
    remove_whole(path)?;
    match entry {
        Entry::Dir(_) | Entry::GitDir => std::fs::create_dir(path),
        Entry::Link(target) => std::os::unix::fs::symlink(target, path),
        Entry::Head(content) | Entry::Steps(content) => put_back(path, &new_file(content)),
        Entry::File { content, mode, .. } => {
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)?;
            }
            let dir = path.parent().unwrap_or(Path::new("."));
            let temp = tempfile::NamedTempFile::new_in(dir)?;
            std::fs::write(temp.path(), content)?;
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(temp.path(), std::fs::Permissions::from_mode(*mode))?;
            temp.persist(path).map(drop).map_err(|err| err.error)
        }
    }
}
