//! The files a Bash command changes inside the workspace, found by a before/after scan, so rewind can put them
//! back like an Edit's.
//!
//! Before the command, every file of the workspace is listed with its stat (size, modification time, inode,
//! mode) and where its content can be had again: in a git work tree, a tracked file whose stat matches its index
//! entry (or whose content hashes to its index blob) is in git's own object store, so nothing is copied; a
//! modified or untracked file — or every file, outside git — is stored in the checkpoint store, once per session
//! (a file whose stat has not changed since is not read again). After the command, the files are listed and
//! stat'ed again; those that appeared, went or whose stat moved are compared by content, and each real change is
//! checkpointed like an Edit's. Ignored files (`.gitignore`) are not scanned: build outputs come back by
//! building.
//!
//! The workspace may be hostile (a repository's committed files, or what an approved command left), so:
//! - git only reads: the index (`ls-files --debug` gives its stat data, so git never hashes a work-tree file and
//!   no clean filter can run), the untracked list and blobs (`cat-file`, with lazy fetching and replace objects
//!   off); the `git` run is found on the absolute entries of `PATH`, with git's own environment variables
//!   cleared, and every run is time-limited;
//! - a path is used only when it lies inside the workspace with no link on the way (an index entry like
//!   `../x` or `/etc/x`, or a directory replaced by a link to `~/.ssh`, is left out), and files are opened
//!   without following a link and without blocking (a FIFO), their type checked on the open handle, and read up
//!   to a limit.
//!
//! Limits keep a huge or non-git directory from being copied: what is left out is said.

use std::collections::{BTreeSet, HashMap};
use std::ffi::OsStr;
use std::io::Read as _;
use std::path::{Component, Path, PathBuf};

mod git;

use super::Checkpoints;
use git::{git_blobs, git_listing};

/// Files listed at most; past it, the command's changes are not checkpointed (and that is said).
const MAX_FILES: usize = 100_000;
/// Outside git every file is stored before the first command: past this many, none is (a home directory is not
/// copied), and that is said.
const MAX_FILES_WITHOUT_GIT: usize = 5_000;
/// A file bigger than this is not checkpointed (said).
const MAX_FILE_BYTES: u64 = 16 << 20;
/// New bytes one scan stores at most (outside git, the first scan stores the whole workspace).
const MAX_SCAN_BYTES: u64 = 256 << 20;

/// What identifies a file's content without reading it: when it is the same, the content is taken to be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Stat {
    len: u64,
    modified_ns: i128,
    /// The inode's change time: a command can set a file's modification time back, not this.
    changed_ns: i128,
    inode: u64,
    pub(super) mode: u32,
}

impl Stat {
    fn from_meta(meta: &std::fs::Metadata) -> Stat {
        let modified_ns = meta
            .modified()
            .ok()
            .and_then(|time| time.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |since| since.as_nanos() as i128);
        #[cfg(unix)]
        let (inode, mode, changed_ns) = {
            use std::os::unix::fs::MetadataExt;
            (meta.ino(), meta.mode(), i128::from(meta.ctime()) * 1_000_000_000 + i128::from(meta.ctime_nsec()))
        };
        #[cfg(not(unix))]
        let (inode, mode, changed_ns) = (0, 0, 0);
        Stat { len: meta.len(), modified_ns, changed_ns, inode, mode }
    }

    /// The stat of a regular file (not a link, a FIFO or a device).
    fn of(path: &Path) -> Option<Stat> {
        let meta = std::fs::symlink_metadata(path).ok().filter(std::fs::Metadata::is_file)?;
        Some(Stat::from_meta(&meta))
    }
}

/// Where a file's content before the command can be had.
#[derive(Clone, Debug)]
pub(super) enum Source {
    /// Git's object store has it (a tracked file that matches its index entry).
    Git(String),
    /// The checkpoint store has it.
    Stored(String),
    /// Nowhere, and why.
    Unstored(String),
}

/// An index entry: its blob, and the stat git recorded for it.
struct Tracked {
    oid: String,
    modified_ns: i128,
    changed_ns: i128,
    len: u64,
    inode: u64,
}

/// The files of a workspace.
struct Listing {
    /// Tracked regular files with their index entry (none for untracked files, or outside git).
    files: Vec<(PathBuf, Option<Tracked>)>,
    /// When the index was written: an entry modified in the same instant or later is "racily clean" (its stat
    /// can't be trusted) and is checked by content.
    index_written_ns: i128,
    truncated: bool,
}

/// The workspace as a Bash command found it.
#[derive(Debug)]
pub struct Scan {
    root: PathBuf,
    /// `root` with its links resolved, when the scan started.
    real_root: Option<PathBuf>,
    git: bool,
    files: HashMap<PathBuf, (Stat, Source)>,
    /// Why the scan could not cover everything (said after the command, if it changed something).
    limits: Vec<String>,
}

impl Checkpoints {
    /// Before a Bash command runs in `root`: every file of the workspace, with where its content can be had
    /// again. Blocking (it lists and stats the workspace and may store files): run it off the async threads.
    pub fn scan_before(&self, root: &Path) -> Scan {
        let (listing, git) = match git_listing(root) {
            Some(listing) => (listing, true),
            // In a work tree git could not list (it failed, or took too long): not walked instead, which would
            // read what git could not.
            None if in_git_work_tree(root) => {
                let limit = "the workspace is a git work tree that git could not list".to_owned();
                return Scan {
                    root: root.to_path_buf(),
                    real_root: None,
                    git: true,
                    files: HashMap::new(),
                    limits: vec![limit],
                };
            }
            None => (walk(root, MAX_FILES_WITHOUT_GIT), false),
        };
        let real_root = root.canonicalize().ok();
        let mut scan = Scan { root: root.to_path_buf(), real_root, git, files: HashMap::new(), limits: Vec::new() };
        if listing.truncated {
            scan.limits.push(match git {
                true => format!("the workspace has over {MAX_FILES} files"),
                false => format!("the workspace is not a git work tree and has over {MAX_FILES_WITHOUT_GIT} files"),
            });
            return scan;
        }
        let mut stored_bytes = 0u64;
        let mut dirs = HashMap::new();
        for (path, tracked) in listing.files {
            if !beneath(root, &path, &mut dirs) {
                continue;
            }
            let Some(stat) = Stat::of(&path) else { continue };
            // The index keeps sizes and inode numbers in 32 bits.
            let clean_by_stat = tracked.as_ref().is_some_and(|entry| {
                entry.modified_ns == stat.modified_ns
                    && entry.changed_ns == stat.changed_ns
                    && entry.len == stat.len & 0xffff_ffff
                    && entry.inode == stat.inode & 0xffff_ffff
                    && stat.modified_ns < listing.index_written_ns
            });
            let source = match (&tracked, self.known_content(&path, stat)) {
                (Some(entry), _) if clean_by_stat => Source::Git(entry.oid.clone()),
                (_, Some(known)) => known,
                _ if stat.len > MAX_FILE_BYTES => Source::Unstored(too_big()),
                _ if stored_bytes + stat.len > MAX_SCAN_BYTES => {
                    let limit =
                        format!("over {} of untracked or modified files", crate::fs_util::human_size(MAX_SCAN_BYTES));
                    Source::Unstored(limit)
                }
                _ => match read_file(&path) {
                    Ok(bytes) => {
                        let matches_index =
                            tracked.as_ref().is_some_and(|entry| blob_id(&bytes, &entry.oid) == entry.oid);
                        let source = match &tracked {
                            Some(entry) if matches_index => Ok(Source::Git(entry.oid.clone())),
                            _ => self.store(&bytes).map(Source::Stored),
                        };
                        match source {
                            Ok(source) => {
                                if matches!(source, Source::Stored(_)) {
                                    stored_bytes += stat.len;
                                }
                                self.remember(&path, stat, &source);
                                source
                            }
                            Err(err) => Source::Unstored(format!("it could not be stored: {err}")),
                        }
                    }
                    Err(why) => Source::Unstored(why),
                },
            };
            scan.files.insert(path, (stat, source));
        }
        scan
    }

    /// After the command: checkpoints every file it created, changed or removed in the workspace (in the
    /// current prompt, like an Edit's), and returns what could not be checkpointed, for the tool's output.
    #[expect(
        clippy::too_many_lines,
        reason = "one pass over the before and after scans; its per-kind branches (created, changed, removed) are where to cut it"
    )]
    pub fn record_scan(&self, before: Scan) -> Vec<String> {
        if let Some(limit) = before.limits.iter().find(|limit| limit.starts_with("the workspace")) {
            return vec![format!("rewind: this command's file changes were not checkpointed ({limit})")];
        }
        let after = match before.git {
            true => match git_listing(&before.root) {
                Some(listing) => listing,
                None => return vec!["rewind: git could not list the workspace after this command; its file changes were not checkpointed".into()],
            },
            false => walk(&before.root, MAX_FILES),
        };
        let mut notes = Vec::new();
        if after.truncated {
            notes.push(format!(
                "rewind: the workspace has over {MAX_FILES} files after this command; files it created may not be checkpointed"
            ));
        }
        let mut paths: BTreeSet<PathBuf> = after.files.into_iter().map(|(path, _)| path).collect();
        paths.extend(before.files.keys().cloned());
        let mut dirs = HashMap::new();
        let mut changed = Vec::new();
        for path in paths {
            // A file behind a link (a directory the command replaced by one) is no longer the workspace's.
            let now = if beneath(&before.root, &path, &mut dirs) { Stat::of(&path) } else { None };
            let then = before.files.get(&path);
            if then.map(|(stat, _)| *stat) != now {
                changed.push((path, then.cloned(), now));
            }
        }
        let oids: Vec<&str> = changed
            .iter()
            .filter_map(|(_, then, _)| match then {
                Some((_, Source::Git(oid))) => Some(oid.as_str()),
                _ => None,
            })
            .collect();
        let from_git = if oids.is_empty() { HashMap::new() } else { git_blobs(&before.root, &oids) };
        let mut missed: Vec<(PathBuf, String)> = Vec::new();
        for (path, then, now) in changed {
            let before_bytes = match &then {
                None => None,
                Some((_, Source::Stored(hash))) => match self.content(hash) {
                    Ok(bytes) => Some(bytes),
                    Err(err) => {
                        missed.push((path, format!("its checkpoint could not be read: {err}")));
                        continue;
                    }
                },
                Some((_, Source::Git(oid))) => match from_git.get(oid) {
                    Some(Ok(bytes)) => Some(bytes.clone()),
                    Some(Err(why)) => {
                        missed.push((path, why.clone()));
                        continue;
                    }
                    None => {
                        missed.push((path, "git did not give its content back".into()));
                        continue;
                    }
                },
                Some((_, Source::Unstored(why))) => {
                    missed.push((path, why.clone()));
                    continue;
                }
            };
            let after_bytes = match now {
                Some(stat) => match read_file(&path) {
                    Ok(bytes) => {
                        if let Ok(hash) = self.store(&bytes) {
                            self.remember(&path, stat, &Source::Stored(hash));
                        }
                        Some(bytes)
                    }
                    Err(why) => {
                        missed.push((path, why));
                        continue;
                    }
                },
                None => None,
            };
            if before_bytes == after_bytes {
                continue;
            }
            let mode = then.map(|(stat, _)| stat.mode).filter(|mode| *mode != 0);
            // Where the file is, as the workspace's own directories say: the real root and the path under it
            // (checked to hold no link when it was seen), never what a link the command made points to.
            let dir = match (&before.real_root, path.strip_prefix(&before.root).ok().and_then(Path::parent)) {
                (Some(real_root), Some(relative)) => Some(real_root.join(relative)),
                _ => None,
            };
            if let Err(err) = self.record_change(&path, before_bytes.as_deref(), after_bytes.as_deref(), mode, dir) {
                missed.push((path, err.to_string()));
            }
        }
        if !missed.is_empty() {
            let mut reasons: Vec<&str> = missed.iter().map(|(_, why)| why.as_str()).collect();
            reasons.dedup();
            let shown: Vec<String> = missed
                .iter()
                .take(5)
                .map(|(path, _)| path.strip_prefix(&before.root).unwrap_or(path).display().to_string())
                .collect();
            let more = if missed.len() > 5 { format!(" and {} more", missed.len() - 5) } else { String::new() };
            notes.push(format!(
                "rewind: changes to {}{more} were not checkpointed ({}); /rewind can't put them back",
                shown.join(", "),
                reasons.join("; ")
            ));
        }
        notes
    }

    /// What the session knows of `path`'s content when it last saw it with this same stat.
    fn known_content(&self, path: &Path, stat: Stat) -> Option<Source> {
        let known = self.known.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        known.get(path).filter(|(seen, _)| *seen == stat).map(|(_, source)| source.clone())
    }

    /// Remembers where `path`'s content with `stat` can be had, so that an unchanged file is not read again.
    fn remember(&self, path: &Path, stat: Stat, source: &Source) {
        let mut known = self.known.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        known.insert(path.to_path_buf(), (stat, source.clone()));
    }

    fn store(&self, bytes: &[u8]) -> std::io::Result<String> {
        let _guard = self.lock.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        self.store_content(bytes)
    }
}

/// Whether `root` is in a git work tree (a `.git` in it or above it), without running git.
fn in_git_work_tree(root: &Path) -> bool {
    root.ancestors().any(|dir| dir.join(".git").exists())
}

fn too_big() -> String {
    format!("over {}", crate::fs_util::human_size(MAX_FILE_BYTES))
}

/// Whether `path` lies inside `root` with nothing but real directories on the way: no `..`, no absolute path
/// from an index, no link to elsewhere. `dirs` remembers the directories already checked.
pub(super) fn beneath(root: &Path, path: &Path, dirs: &mut HashMap<PathBuf, bool>) -> bool {
    let Ok(relative) = path.strip_prefix(root) else { return false };
    if !relative.components().all(|part| matches!(part, Component::Normal(_))) {
        return false;
    }
    let mut dir = root.to_path_buf();
    let parts: Vec<&OsStr> = relative.iter().collect();
    for part in parts.iter().take(parts.len().saturating_sub(1)) {
        dir.push(part);
        let real = *dirs.entry(dir.clone()).or_insert_with(|| {
            std::fs::symlink_metadata(&dir).is_ok_and(|meta| meta.is_dir() && !meta.file_type().is_symlink())
        });
        if !real {
            return false;
        }
    }
    true
}

/// A regular file's content, opened without following a link or waiting on a FIFO, up to [`MAX_FILE_BYTES`].
fn read_file(path: &Path) -> Result<Vec<u8>, String> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        let flags = rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK;
        options.custom_flags(flags.bits() as i32);
    }
    let file = options.open(path).map_err(|err| format!("it could not be read: {err}"))?;
    let meta = file.metadata().map_err(|err| format!("it could not be read: {err}"))?;
    if !meta.is_file() {
        return Err("it is not a regular file".into());
    }
    let mut bytes = Vec::with_capacity(meta.len().min(MAX_FILE_BYTES) as usize);
    file.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes).map_err(|err| format!("it could not be read: {err}"))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(too_big());
    }
    Ok(bytes)
}

/// Git's id of a blob with this content, in the hash of `like` (40 hex digits: SHA-1, 64: SHA-256).
fn blob_id(bytes: &[u8], like: &str) -> String {
    use sha2::Digest as _;
    let header = format!("blob {}\0", bytes.len());
    let digest: Vec<u8> = if like.len() == 64 {
        let mut hasher = sha2::Sha256::new();
        hasher.update(header.as_bytes());
        hasher.update(bytes);
        hasher.finalize().to_vec()
    } else {
        let mut hasher = sha1::Sha1::new();
        hasher.update(header.as_bytes());
        hasher.update(bytes);
        hasher.finalize().to_vec()
    };
    digest.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// Outside git: the files under `root`, minus what `.gitignore`-style files ignore (and `.git` itself); links
/// are not followed.
fn walk(root: &Path, most: usize) -> Listing {
    let mut files = Vec::new();
    let walker = ignore::WalkBuilder::new(root).hidden(false).git_global(false).require_git(false).build();
    for entry in walker.flatten() {
        if entry.file_type().is_some_and(|kind| kind.is_file()) {
            if entry.path().components().any(|part| part.as_os_str() == ".git") {
                continue;
            }
            files.push((entry.into_path(), None));
            if files.len() > most {
                return Listing { files, index_written_ns: 0, truncated: true };
            }
        }
    }
    Listing { files, index_written_ns: 0, truncated: false }
}
