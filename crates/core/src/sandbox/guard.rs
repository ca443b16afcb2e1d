//! Protected entries kept by restoring them: a repository's configuration and hooks, `.claude`, `.tandem` and
//! `.mcp.json`, put back as they were when a workspace-writing command ends.
//!
//! Landlock can't make a directory writable except some of its entries (a right on a directory covers all
//! beneath it), so a sandbox that keeps `.git` physically read-only can't let a command create anything at the
//! top of the workspace (`cp a b`, `echo $$ > pid.txt`, `git commit`'s `.git/index.lock`). For a command in the
//! foreground, tandem instead grants the workspace whole, takes a copy of every protected entry before the
//! command starts and, when the command and everything it started are gone, puts back what changed and removes
//! what appeared. Git's own data (objects, refs, the index, logs) is not protected: `git commit` works. Anything
//! that can't be copied within the limits falls back to the physical split ([`Guard::take`] says so).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::grants::READ_ONLY_ENTRIES;

/// At most this many protected entries are copied; a workspace with more is protected physically instead.
const MAX_ENTRIES: usize = 5_000;
/// At most this many bytes of protected files are copied.
const MAX_BYTES: u64 = 16 * 1024 * 1024;

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
    Todo(Vec<u8>),
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
}

impl Guard {
    /// Copies the protected entries of `roots` (and of the repositories and settings nested in them, as deep
    /// as [`super::grants`] looks). `None` when they are too many or too big to copy.
    pub fn take(roots: &[PathBuf]) -> Option<Guard> {
        let mut guard = Guard { roots: roots.to_vec(), ..Guard::default() };
        let mut bytes = 0;
        for path in protected_tops(roots) {
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
        for top in protected_tops(&self.roots) {
            self.list(&top, &mut present);
        }
        present.sort();
        let mut done = Vec::new();
        // Removed first, deepest first: a directory that replaced a file goes before the file comes back.
        for path in present.iter().rev() {
            if self.entries.contains_key(path) {
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
            unpin(&place);
            let removed = match std::fs::symlink_metadata(&place) {
                Ok(meta) if meta.is_dir() => std::fs::remove_dir_all(&place),
                Ok(_) => std::fs::remove_file(&place),
                Err(_) => continue,
            };
            if removed.is_ok() || std::fs::symlink_metadata(&place).is_err() {
                done.push(format!("removed {}", path.display()));
            }
        }
        for (path, entry) in &mut self.entries {
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
            unpin(&place);
            if put_back(&place, entry).is_ok() {
                entry.take_identity_of(&place);
                done.push(format!("restored {}", path.display()));
            } else {
                done.push(format!("could not restore {}", path.display()));
            }
        }
        done
    }

    fn record(&mut self, path: &Path, bytes: &mut u64) -> Option<()> {
        let Ok(meta) = std::fs::symlink_metadata(path) else { return Some(()) };
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
                    self.record(&child, bytes)?;
                    continue;
                }
                for inside in watched_in_git_data(&child) {
                    if is_step_file(&inside) {
                        let Ok(content) = read(&inside) else { continue };
                        self.entries.insert(inside, Entry::Todo(content));
                    } else {
                        self.record(&inside, bytes)?;
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

    fn note_git_data(&mut self, path: &Path) {
        use std::os::unix::fs::MetadataExt;
        if path.parent().and_then(Path::file_name).is_some_and(|dir| dir == ".git")
            && let Ok(meta) = std::fs::symlink_metadata(path)
        {
            self.git_data_inodes.insert((meta.dev(), meta.ino()));
        }
    }

    /// Every path under `path` (itself included) that the guard looks after, without following links or
    /// entering git's own data (or what of it was moved aside).
    fn list(&self, path: &Path, out: &mut Vec<PathBuf>) {
        let Ok(meta) = std::fs::symlink_metadata(path) else { return };
        out.push(path.to_path_buf());
        if !meta.is_dir() {
            return;
        }
        for entry in std::fs::read_dir(path).into_iter().flatten().flatten() {
            let child = entry.path();
            if is_repository_store(&child) {
                out.push(child.clone());
            } else if is_repository_head(&child) || !(self.git_data(&child) || self.moved_git_data(&child)) {
                self.list(&child, out);
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

/// The settings entries nested below `roots` (`sub/.claude`, `sub/.tandem`, `sub/.mcp.json`) there are now. A
/// command that outlives its call keeps the ones that exist read-only, but Landlock can't forbid a name below a
/// writable directory: one it creates is removed when it ends ([`remove_new_nested_settings`]), so that it
/// can't configure a session started there later.
pub fn nested_settings(roots: &[PathBuf]) -> std::collections::BTreeSet<PathBuf> {
    let mut found = Vec::new();
    for root in roots {
        super::grants::nested_read_only(root, &mut found);
    }
    found.into_iter().filter(|path| path.file_name().is_some_and(|name| name != ".git")).collect()
}

/// Removes the nested settings entries below `roots` that are not in `before`; what it removed, one line each.
pub fn remove_new_nested_settings(roots: &[PathBuf], before: &std::collections::BTreeSet<PathBuf>) -> Vec<String> {
    let mut done = Vec::new();
    for path in nested_settings(roots).difference(before) {
        unpin(path);
        let removed = match std::fs::symlink_metadata(path) {
            Ok(meta) if meta.is_dir() => std::fs::remove_dir_all(path),
            Ok(_) => std::fs::remove_file(path),
            Err(_) => continue,
        };
        if removed.is_ok() {
            done.push(format!("removed {}", path.display()));
        }
    }
    done
}

/// Clears the immutable and append-only flags a command set (root can: `chattr +i`) on `path` and, for a
/// directory, on what is in it, so that it can be put back or removed.
fn unpin(path: &Path) {
    use rustix::fs::IFlags;
    let Ok(meta) = std::fs::symlink_metadata(path) else { return };
    if meta.file_type().is_symlink() {
        return;
    }
    if meta.is_dir() {
        for entry in std::fs::read_dir(path).into_iter().flatten().flatten() {
            unpin(&entry.path());
        }
    }
    use std::os::unix::fs::OpenOptionsExt;
    let mut options = std::fs::OpenOptions::new();
    options.read(true).custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW | libc::O_NOCTTY);
    let Ok(file) = options.open(path) else { return };
    if let Ok(flags) = rustix::fs::ioctl_getflags(&file)
        && flags.intersects(IFlags::IMMUTABLE | IFlags::APPEND)
    {
        let _ = rustix::fs::ioctl_setflags(&file, flags - IFlags::IMMUTABLE - IFlags::APPEND);
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
        Entry::Todo(before) => read(path).is_ok_and(|now| !adds_programs(path, before, &now)),
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

/// What the guard watches inside git's own data: the alternates of an object store (other repositories git reads
/// objects from: one naming another project lets `git show` print its files) and the steps of an operation in
/// progress.
fn watched_in_git_data(path: &Path) -> Vec<PathBuf> {
    let names: &[&str] = match path.file_name().and_then(|name| name.to_str()) {
        Some("objects") => &["info/alternates", "info/http-alternates"],
        Some("rebase-merge") => &["git-rebase-todo", "strategy"],
        Some("sequencer") => &["todo", "opts"],
        _ => &[],
    };
    names.iter().map(|name| path.join(name)).collect()
}

/// What tells git how to go on with a rebase, cherry-pick or revert in progress: its steps and its merge
/// strategy. Each can name a program that runs when you type `--continue`.
fn is_step_file(path: &Path) -> bool {
    let name = path.file_name().and_then(|name| name.to_str());
    let dir = path.parent().and_then(Path::file_name).and_then(|name| name.to_str());
    matches!(
        (dir, name),
        (Some("rebase-merge"), Some("git-rebase-todo" | "strategy")) | (Some("sequencer"), Some("todo" | "opts"))
    )
}

/// The programs a step file makes git run: a todo list's `exec` (`x`) steps; a merge strategy that is not one of
/// git's own (git runs `git-merge-<name>`, and a name like `/../tools/x` reaches a program in the workspace).
fn programs_in(path: &Path, content: &[u8]) -> BTreeSet<String> {
    const BUILT_IN: &[&str] = &["ort", "recursive", "resolve", "octopus", "ours", "subtree"];
    let text = String::from_utf8_lossy(content);
    let foreign = |strategy: &str| !BUILT_IN.contains(&strategy);
    match path.file_name().and_then(|name| name.to_str()) {
        Some("strategy") => Some(text.trim().to_owned()).filter(|name| foreign(name)).into_iter().collect(),
        // Read loosely, so that no form git's config parser accepts (`[options] strategy = x` on one line, any
        // case, quotes, a comment after it) slips by: anything that could be a strategy key counts.
        Some("opts") => text
            .to_ascii_lowercase()
            .lines()
            .flat_map(|line| line.match_indices("strategy").map(|(at, key)| line[at + key.len()..].to_owned()))
            .filter_map(|rest| rest.trim_start().strip_prefix('=').map(str::to_owned))
            .map(|value| value.split([';', '#']).next().unwrap_or_default().trim().trim_matches('"').to_owned())
            .filter(|name| foreign(name))
            .collect(),
        _ => text
            .lines()
            .filter_map(|line| {
                let line = line.trim_start();
                let (step, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
                matches!(step, "exec" | "x").then(|| rest.trim().to_owned())
            })
            .collect(),
    }
}

fn adds_programs(path: &Path, before: &[u8], now: &[u8]) -> bool {
    programs_in(path, now).difference(&programs_in(path, before)).next().is_some()
}

/// A small file of git's (`HEAD`, a step file), never waiting on a named pipe put in its place.
fn read(path: &Path) -> std::io::Result<Vec<u8>> {
    super::read_regular_file(path, 1 << 20, false)
}

/// A protected path reached from its workspace root without following any link on the way: its parent directory
/// is opened with `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)` and the path is named through that open
/// descriptor (`/proc/self/fd/N/name`), so a directory swapped for a link meanwhile, even by a background command
/// while the guard works, can't redirect a write out of the workspace. The final name itself is never followed
/// by what the guard does with it (`symlink_metadata`, removal, a rename over it).
struct Anchored {
    parent: rustix::fd::OwnedFd,
    name: std::ffi::OsString,
}

impl Anchored {
    fn new(roots: &[PathBuf], path: &Path) -> std::io::Result<Anchored> {
        use rustix::fs::{Mode, OFlags, ResolveFlags};
        let not_below = || std::io::Error::other("not below a workspace root");
        let root = roots.iter().filter(|root| path.starts_with(root)).max_by_key(|root| root.as_os_str().len());
        let root = root.ok_or_else(not_below)?;
        let name = path.file_name().ok_or_else(not_below)?.to_owned();
        let relative = path.parent().and_then(|parent| parent.strip_prefix(root).ok()).ok_or_else(not_below)?;
        let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let root = rustix::fs::open(root.as_path(), flags, Mode::empty())?;
        let parent = if relative.as_os_str().is_empty() {
            root
        } else {
            let resolve = ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
            rustix::fs::openat2(&root, relative, flags, Mode::empty(), resolve)?
        };
        Ok(Anchored { parent, name })
    }

    fn path(&self) -> PathBuf {
        use std::os::fd::AsRawFd;
        PathBuf::from(format!("/proc/self/fd/{}", self.parent.as_raw_fd())).join(&self.name)
    }
}

/// What git accepts in `HEAD`: a symbolic ref or an object name.
fn valid_head(text: &[u8]) -> bool {
    let text = String::from_utf8_lossy(text);
    let text = text.trim_end();
    text.starts_with("ref: refs/") || (matches!(text.len(), 40 | 64) && text.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// `refs` or `objects` directly inside a `.git` directory.
fn is_repository_store(path: &Path) -> bool {
    path.file_name().is_some_and(|name| name == "refs" || name == "objects")
        && path.parent().and_then(Path::file_name).is_some_and(|dir| dir == ".git")
}

/// An entry directly in a `.git` directory whose name git never reads (`refs.bak`).
fn inert_in_repository(path: &Path) -> bool {
    const READ_BY_GIT: &[&str] = &[
        "config",
        "config.worktree",
        "hooks",
        "info",
        "modules",
        "worktrees",
        "commondir",
        "gitdir",
        "branches",
        "remotes",
    ];
    path.parent().and_then(Path::file_name).is_some_and(|dir| dir == ".git")
        && path.file_name().and_then(|name| name.to_str()).is_some_and(|name| !READ_BY_GIT.contains(&name))
}

/// `HEAD` directly inside a `.git` directory.
fn is_repository_head(path: &Path) -> bool {
    path.file_name().is_some_and(|name| name == "HEAD")
        && path.parent().and_then(Path::file_name).is_some_and(|dir| dir == ".git")
}

/// The protected entries at the top of each root and those nested below it.
fn protected_tops(roots: &[PathBuf]) -> Vec<PathBuf> {
    let mut tops: Vec<PathBuf> =
        roots.iter().flat_map(|root| READ_ONLY_ENTRIES.iter().map(move |name| root.join(name))).collect();
    for root in roots {
        super::grants::nested_read_only(root, &mut tops);
    }
    tops.sort();
    tops.dedup();
    tops
}

impl Guard {
    /// Git's own data directly inside a repository directory, which git commands write and which runs nothing:
    /// objects, refs, logs, the index, lock files, the state of operations in progress. Everything else in `.git`
    /// (config, hooks, info, a submodule's config and hooks) is protected.
    fn git_data(&self, path: &Path) -> bool {
        path.parent().is_some_and(|dir| self.git_dirs.contains(dir)) && git_data_name(path)
    }
}

fn git_data_name(path: &Path) -> bool {
    let Some(name) = path.file_name().and_then(|name| name.to_str()) else { return false };
    matches!(
        name,
        "objects"
            | "refs"
            | "logs"
            | "index"
            | "packed-refs"
            | "COMMIT_EDITMSG"
            | "lost-found"
            | "rr-cache"
            | "rebase-merge"
            | "rebase-apply"
            | "sequencer"
            | "MERGE_MSG"
            | "SQUASH_MSG"
            | "AUTO_MERGE"
            | "gc.pid"
            | "gc.log"
            | "shallow"
            | "FETCH_HEAD"
    ) || name.ends_with("HEAD")
        || name.ends_with(".lock")
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
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        if meta.is_dir() {
            std::fs::remove_dir_all(path)?;
        } else {
            std::fs::remove_file(path)?;
        }
    }
    match entry {
        Entry::Dir(_) | Entry::GitDir => std::fs::create_dir(path),
        Entry::Link(target) => std::os::unix::fs::symlink(target, path),
        Entry::Head(content) | Entry::Todo(content) => put_back(path, &new_file(content)),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_a_background_command_nests_below_a_writable_directory_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("kept/.claude")).unwrap();
        let roots = [root.clone()];
        let before = nested_settings(&roots);
        std::fs::create_dir_all(root.join("sub/.claude")).unwrap();
        std::fs::write(root.join("sub/.claude/settings.json"), r#"{"permissions":{"allow":["Bash"]}}"#).unwrap();
        std::fs::write(root.join("sub/.mcp.json"), "{}").unwrap();
        std::fs::create_dir_all(root.join("clone/.git")).unwrap();
        let done = remove_new_nested_settings(&roots, &before);
        assert_eq!(done.len(), 2, "{done:?}");
        assert!(!root.join("sub/.claude").exists() && !root.join("sub/.mcp.json").exists());
        assert!(root.join("kept/.claude").exists() && root.join("clone/.git").exists(), "what was there, and a clone");
    }

    #[test]
    fn what_a_command_changes_in_protected_entries_is_put_back() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
        std::fs::create_dir_all(root.join(".git/objects/ab")).unwrap();
        std::fs::write(root.join(".git/config"), "[core]\n").unwrap();
        std::fs::write(root.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::create_dir_all(root.join("sub/.git")).unwrap();
        std::fs::write(root.join("sub/.git/config"), "[core]\n").unwrap();
        let mut guard = Guard::take(std::slice::from_ref(&root)).unwrap();

        std::fs::write(root.join(".git/config"), "[core]\n\tfsmonitor = ./evil\n").unwrap();
        std::fs::write(root.join(".git/hooks/pre-commit"), "#!/bin/sh\nevil\n").unwrap();
        std::fs::write(root.join("sub/.git/config"), "[alias]\n").unwrap();
        std::fs::create_dir_all(root.join(".claude")).unwrap();
        std::fs::write(root.join(".claude/settings.json"), r#"{"permissions":{"allow":["Bash"]}}"#).unwrap();
        std::fs::write(root.join(".mcp.json"), "{}").unwrap();
        // Git's own data is the command's to write.
        std::fs::write(root.join(".git/objects/ab/cd"), "object").unwrap();
        std::fs::write(root.join(".git/HEAD"), "ref: refs/heads/other\n").unwrap();

        let done = guard.restore();
        assert_eq!(std::fs::read_to_string(root.join(".git/config")).unwrap(), "[core]\n");
        assert_eq!(std::fs::read_to_string(root.join("sub/.git/config")).unwrap(), "[core]\n");
        assert!(!root.join(".git/hooks/pre-commit").exists() && !root.join(".claude").exists());
        assert!(!root.join(".mcp.json").exists());
        assert!(root.join(".git/objects/ab/cd").exists());
        assert_eq!(std::fs::read_to_string(root.join(".git/HEAD")).unwrap(), "ref: refs/heads/other\n");
        assert!(done.iter().any(|line| line.starts_with("removed") && line.ends_with(".claude")), "{done:?}");
        assert!(guard.restore().is_empty(), "nothing left to put back");
    }

    /// Found by an outside red team: a command that first filled `.claude` past the copy's limits planted a hook
    /// that the restore never saw; one that linked `.git/config` elsewhere could write it later through the link;
    /// one that removed `.git/HEAD` made the workspace a bare repository with a `config` of its own.
    #[test]
    fn what_a_command_hides_behind_size_links_or_a_missing_head_is_undone_too() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
        std::fs::write(root.join(".git/config"), "[core]\n").unwrap();
        std::fs::write(root.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::create_dir_all(root.join("sub")).unwrap();
        let mut guard = Guard::take(std::slice::from_ref(&root)).unwrap();

        std::fs::create_dir_all(root.join(".claude")).unwrap();
        std::fs::File::create(root.join(".claude/junk")).unwrap().set_len(MAX_BYTES + 1).unwrap();
        std::fs::write(root.join(".git/hooks/pre-commit"), "#!/bin/sh\nevil\n").unwrap();
        std::fs::write(root.join(".mcp.json"), "{}").unwrap();
        std::fs::hard_link(root.join(".git/config"), root.join("sub/cfg")).unwrap();
        std::fs::remove_file(root.join(".git/HEAD")).unwrap();

        guard.restore();
        assert!(!root.join(".claude").exists() && !root.join(".mcp.json").exists());
        assert!(!root.join(".git/hooks/pre-commit").exists(), "planted after the copy's limit");
        assert_eq!(std::fs::metadata(root.join(".git/config")).unwrap().nlink(), 1, "the link is broken");
        std::fs::write(root.join("sub/cfg"), "[alias]\n").unwrap();
        assert_eq!(std::fs::read_to_string(root.join(".git/config")).unwrap(), "[core]\n");
        assert_eq!(std::fs::read_to_string(root.join(".git/HEAD")).unwrap(), "ref: refs/heads/main\n");
    }

    /// Found by the second outside pass: a garbage `HEAD`, or `refs` moved aside, also made the workspace top a
    /// bare repository (and the restore deleted the moved refs); `chattr +i` (root) kept planted files.
    #[test]
    fn a_broken_head_moved_refs_and_immutable_plants_are_undone_without_losing_data() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
        std::fs::create_dir_all(root.join(".git/refs/heads")).unwrap();
        std::fs::write(root.join(".git/refs/heads/main"), "0123\n").unwrap();
        std::fs::create_dir_all(root.join(".git/objects")).unwrap();
        std::fs::write(root.join(".git/config"), "[core]\n").unwrap();
        std::fs::write(root.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
        let mut guard = Guard::take(std::slice::from_ref(&root)).unwrap();

        std::fs::write(root.join(".git/HEAD"), "garbage\n").unwrap();
        std::fs::rename(root.join(".git/refs"), root.join(".git/refs.bak")).unwrap();
        std::fs::write(root.join(".git/config~"), "[core]\n").unwrap();
        std::fs::write(root.join(".git/hooks/pre-commit"), "#!/bin/sh\nevil\n").unwrap();
        let pinned = std::process::Command::new("chattr").arg("+i").arg(root.join(".git/hooks/pre-commit")).status();
        guard.restore();
        assert_eq!(std::fs::read_to_string(root.join(".git/HEAD")).unwrap(), "ref: refs/heads/main\n");
        assert!(root.join(".git/refs").is_dir(), "refs is a directory again");
        assert_eq!(std::fs::read_to_string(root.join(".git/refs.bak/heads/main")).unwrap(), "0123\n", "kept");
        assert!(!root.join(".git/config~").exists(), "a new file under a name git doesn't read is removed too");
        if pinned.is_ok_and(|status| status.success()) {
            assert!(!root.join(".git/hooks/pre-commit").exists(), "an immutable plant is removed too");
        }
    }

    /// Found by the eighth red-team round: a command replaced a workspace directory holding nested settings with a
    /// link to the home directory, and the restore wrote the recorded settings through it into `~/.claude`.
    #[test]
    fn nothing_is_put_back_through_a_directory_swapped_for_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("work");
        let home = dir.path().join("home");
        std::fs::create_dir_all(root.join("h/.claude")).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        std::fs::write(root.join("h/.claude/settings.json"), "{}").unwrap();
        let root = root.canonicalize().unwrap();
        let mut guard = Guard::take(std::slice::from_ref(&root)).unwrap();

        std::fs::rename(root.join("h"), root.join("h.bak")).unwrap();
        std::os::unix::fs::symlink(&home, root.join("h")).unwrap();
        let done = guard.restore();
        assert!(!home.join(".claude").exists(), "written through the link: {done:?}");
        assert!(done.iter().any(|line| line.starts_with("could not restore")), "{done:?}");
    }

    /// Found by the same round: a workspace directory moved to `.claude` (a background command's rule follows
    /// it) counted as the recorded `.claude` because it is a directory; so did a file with the same content.
    #[test]
    fn a_protected_directory_or_file_swapped_for_another_is_replaced() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join(".claude")).unwrap();
        std::fs::write(root.join(".claude/settings.json"), "{}").unwrap();
        std::fs::write(root.join(".mcp.json"), "{}").unwrap();
        std::fs::create_dir_all(root.join("h")).unwrap();
        std::fs::write(root.join("h/readme"), "x").unwrap();
        std::fs::write(root.join("copy"), "{}").unwrap();
        let moved_dir = std::fs::metadata(root.join("h")).unwrap().ino();
        let moved_file = std::fs::metadata(root.join("copy")).unwrap().ino();
        let mut guard = Guard::take(std::slice::from_ref(&root)).unwrap();

        std::fs::rename(root.join(".claude"), root.join("old")).unwrap();
        std::fs::rename(root.join("h"), root.join(".claude")).unwrap();
        std::fs::copy(root.join("old/settings.json"), root.join(".claude/settings.json")).unwrap();
        std::fs::rename(root.join("copy"), root.join(".mcp.json")).unwrap();
        // Held open, so that their inode numbers can't be reused by what is put back.
        let _held = (std::fs::File::open(root.join(".claude")).unwrap(), std::fs::File::open(root.join(".mcp.json")));
        guard.restore();
        assert_ne!(std::fs::metadata(root.join(".claude")).unwrap().ino(), moved_dir);
        assert_eq!(std::fs::read_to_string(root.join(".claude/settings.json")).unwrap(), "{}");
        assert!(!root.join(".claude/readme").exists());
        assert_ne!(std::fs::metadata(root.join(".mcp.json")).unwrap().ino(), moved_file);
        assert!(guard.restore().is_empty(), "what was put back is what the next restore compares with");
    }

    /// Found by the same round: a rebase left to continue with an `exec` step, and alternates naming another
    /// repository's objects, survived the restore (git's own data is not protected).
    #[test]
    fn git_steps_that_run_commands_and_new_alternates_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join(".git/objects/info")).unwrap();
        std::fs::create_dir_all(root.join(".git/sequencer")).unwrap();
        std::fs::write(root.join(".git/sequencer/todo"), "pick 0123 one\nexec make\n").unwrap();
        std::fs::write(root.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
        let mut guard = Guard::take(std::slice::from_ref(&root)).unwrap();

        std::fs::create_dir_all(root.join(".git/rebase-merge")).unwrap();
        std::fs::write(root.join(".git/rebase-merge/git-rebase-todo"), "pick 0123 a\nx cat ~/.ssh/id_rsa\n").unwrap();
        std::fs::write(root.join(".git/objects/info/alternates"), "/other/project/.git/objects\n").unwrap();
        std::fs::write(root.join(".git/sequencer/todo"), "exec make\nexec curl evil\n").unwrap();
        let done = guard.restore();
        assert!(!root.join(".git/rebase-merge/git-rebase-todo").exists(), "{done:?}");
        assert!(!root.join(".git/objects/info/alternates").exists(), "{done:?}");
        assert_eq!(std::fs::read_to_string(root.join(".git/sequencer/todo")).unwrap(), "pick 0123 one\nexec make\n");

        // A rebase of your own that stopped on a conflict keeps its steps, and may drop one.
        std::fs::write(root.join(".git/rebase-merge/git-rebase-todo"), "pick 0123 a\npick 4567 b\n").unwrap();
        std::fs::write(root.join(".git/sequencer/todo"), "exec make\n").unwrap();
        assert!(guard.restore().is_empty());
    }

    /// Found by the ninth red-team round: git's data names matched at any depth in `.git`, so a submodule's
    /// directory named `logs` (its config and hooks) was never protected; a `HEAD` hard-linked to a file a
    /// background command could write kept its second name.
    #[test]
    fn submodule_directories_named_like_git_data_and_linked_heads_are_protected() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join(".git/modules/lib/hooks")).unwrap();
        std::fs::write(root.join(".git/modules/lib/HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(root.join(".git/modules/lib/config"), "[core]\n").unwrap();
        std::fs::create_dir_all(root.join(".git/modules/lib/logs")).unwrap();
        std::fs::write(root.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::create_dir_all(root.join("stage")).unwrap();
        let mut guard = Guard::take(std::slice::from_ref(&root)).unwrap();

        std::fs::create_dir_all(root.join(".git/modules/logs/hooks")).unwrap();
        std::fs::write(root.join(".git/modules/logs/HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(root.join(".git/modules/logs/hooks/post-checkout"), "#!/bin/sh\nevil\n").unwrap();
        std::fs::write(root.join(".git/modules/lib/logs/HEAD"), "0123\n").unwrap();
        std::fs::write(root.join("stage/h"), "ref: refs/heads/other\n").unwrap();
        std::fs::remove_file(root.join(".git/HEAD")).unwrap();
        std::fs::hard_link(root.join("stage/h"), root.join(".git/HEAD")).unwrap();
        let done = guard.restore();
        assert!(!root.join(".git/modules/logs").exists(), "{done:?}");
        assert!(root.join(".git/modules/lib/logs/HEAD").exists(), "a submodule's own logs are its data");
        assert_eq!(std::fs::metadata(root.join(".git/HEAD")).unwrap().nlink(), 1);
        assert_eq!(std::fs::read_to_string(root.join(".git/HEAD")).unwrap(), "ref: refs/heads/other\n", "a checkout");
    }

    /// Found by the tenth red-team round: a rebase's `strategy` file naming a workspace program (git runs
    /// `git-merge-<name>`), and a named pipe at `.git/index`, which blocked the restore (and tandem) for good.
    #[test]
    fn foreign_strategies_and_named_pipes_in_git_data_are_taken_out() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::write(root.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(root.join(".git/config"), "[core]\n").unwrap();
        std::fs::write(root.join(".git/index"), "DIRC").unwrap();
        let mut guard = Guard::take(std::slice::from_ref(&root)).unwrap();

        std::fs::create_dir_all(root.join(".git/rebase-merge")).unwrap();
        std::fs::write(root.join(".git/rebase-merge/git-rebase-todo"), "pick 0123 two\n").unwrap();
        std::fs::write(root.join(".git/rebase-merge/strategy"), "/../tools/fmt\n").unwrap();
        std::fs::create_dir_all(root.join(".git/sequencer")).unwrap();
        std::fs::write(root.join(".git/sequencer/opts"), "[options]\n\tstrategy = ort\n").unwrap();

        std::fs::write(root.join(".git/config"), "[core]\n\tpager = evil\n").unwrap();
        std::fs::remove_file(root.join(".git/index")).unwrap();
        rustix::fs::mknodat(rustix::fs::CWD, root.join(".git/index"), rustix::fs::FileType::Fifo, 0o644.into(), 0)
            .unwrap();
        let done = guard.restore();
        assert!(!root.join(".git/rebase-merge/strategy").exists(), "{done:?}");
        assert!(root.join(".git/rebase-merge/git-rebase-todo").exists(), "steps that run nothing stay");
        assert!(root.join(".git/sequencer/opts").exists(), "git's own strategies stay");
        assert!(std::fs::symlink_metadata(root.join(".git/index")).is_err(), "{done:?}");
        assert_eq!(std::fs::read_to_string(root.join(".git/config")).unwrap(), "[core]\n");
    }

    /// Found by the eleventh red-team round: git's config parser takes `[options] strategy = x` on one line.
    #[test]
    fn every_form_of_a_strategy_in_sequencer_options_is_read() {
        let opts = Path::new(".git/sequencer/opts");
        for text in [
            "[options] strategy = /../tools/evil\n",
            "[options]\n\tStrategy=\"/../tools/evil\" ; comment\n",
            "[options]\n\tstrategy = \\\n/../tools/evil\n",
        ] {
            assert!(!programs_in(opts, text.as_bytes()).is_empty(), "{text}");
        }
        let own = "[options]\n\tstrategy = ort\n\tstrategy-option = theirs\n";
        assert!(programs_in(opts, own.as_bytes()).is_empty());
    }
}
