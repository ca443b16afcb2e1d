//! The files a Bash command changes inside the workspace, found by a before/after scan, so rewind can put them
//! back like an Edit's.
//!
//! Before the command, every file of the workspace is listed with its stat (size, modification time, inode,
//! mode) and where its content can be had again: in a git work tree, a tracked file that matches the index is
//! in git's own object store (nothing is copied); a modified or untracked file — or every file, outside git — is
//! stored in the checkpoint store, once per session (a file whose stat has not changed since is not read again).
//! After the command, the files are listed and stat'ed again; those that appeared, went or whose stat moved are
//! compared by content, and each real change is checkpointed like an Edit's. Ignored files (`.gitignore`) are
//! not scanned: build outputs come back by building.
//!
//! Git runs without attributes (no clean filters) and without fsmonitor: a scan runs no command a repository
//! configured. Limits keep a huge or non-git directory from being copied: what is left out is said.

use std::collections::{BTreeSet, HashMap};
use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::Checkpoints;

/// Files listed at most; past it, the command's changes are not checkpointed (and that is said).
const MAX_FILES: usize = 100_000;
/// Outside git every file is stored before the first command: past this many, none is (a home directory is not
/// copied), and that is said.
const MAX_FILES_WITHOUT_GIT: usize = 5_000;
/// A file bigger than this is not stored before a command (its changes are said not to be checkpointed).
const MAX_FILE_BYTES: u64 = 16 << 20;
/// New bytes one scan stores at most (outside git, the first scan stores the whole workspace).
const MAX_SCAN_BYTES: u64 = 256 << 20;
/// Git's empty tree: attributes read from it are none, so no clean filter runs.
const EMPTY_TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

/// What identifies a file's content without reading it: when it is the same, the content is taken to be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Stat {
    len: u64,
    modified_ns: i128,
    inode: u64,
    mode: u32,
}

impl Stat {
    fn of(path: &Path) -> Option<Stat> {
        let meta = std::fs::symlink_metadata(path).ok().filter(std::fs::Metadata::is_file)?;
        let modified_ns = meta
            .modified()
            .ok()
            .and_then(|time| time.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |since| since.as_nanos() as i128);
        #[cfg(unix)]
        let (inode, mode) = {
            use std::os::unix::fs::MetadataExt;
            (meta.ino(), meta.mode())
        };
        #[cfg(not(unix))]
        let (inode, mode) = (0, 0);
        Some(Stat { len: meta.len(), modified_ns, inode, mode })
    }
}

/// Where a file's content before the command can be had.
#[derive(Clone, Debug)]
enum Source {
    /// Git's object store has it (a tracked file that matches the index).
    Git(String),
    /// The checkpoint store has it.
    Stored(String),
    /// Nowhere: too big, or over a limit.
    Unstored,
}

/// The workspace as a Bash command found it.
#[derive(Debug)]
pub struct Scan {
    root: PathBuf,
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
            None => (walk(root, MAX_FILES_WITHOUT_GIT), false),
        };
        let mut scan = Scan { root: root.to_path_buf(), git, files: HashMap::new(), limits: Vec::new() };
        if listing.truncated {
            scan.limits.push(match git {
                true => format!("the workspace has over {MAX_FILES} files"),
                false => format!("the workspace is not a git work tree and has over {MAX_FILES_WITHOUT_GIT} files"),
            });
            return scan;
        }
        let mut stored_bytes = 0u64;
        for (path, index_oid) in listing.files {
            let Some(stat) = Stat::of(&path) else { continue };
            let source = match index_oid {
                Some(oid) => Source::Git(oid),
                None => match self.known_content(&path, stat) {
                    Some(hash) => Source::Stored(hash),
                    None if stat.len > MAX_FILE_BYTES => Source::Unstored,
                    None if stored_bytes + stat.len > MAX_SCAN_BYTES => {
                        if !scan.limits.iter().any(|limit| limit.starts_with("over")) {
                            scan.limits.push(format!(
                                "over {} of untracked or modified files",
                                crate::tools::fs_util::human_size(MAX_SCAN_BYTES)
                            ));
                        }
                        Source::Unstored
                    }
                    None => match std::fs::read(&path).and_then(|bytes| self.store_known(&path, stat, &bytes)) {
                        Ok(hash) => {
                            stored_bytes += stat.len;
                            Source::Stored(hash)
                        }
                        Err(_) => Source::Unstored,
                    },
                },
            };
            scan.files.insert(path, (stat, source));
        }
        scan
    }

    /// After the command: checkpoints every file it created, changed or removed in the workspace (in the
    /// current prompt, like an Edit's), and returns what could not be checkpointed, for the tool's output.
    pub fn record_scan(&self, before: Scan) -> Vec<String> {
        if before.limits.iter().any(|limit| limit.starts_with("the workspace")) {
            return vec![format!("rewind: this command's file changes were not checkpointed ({})", before.limits[0])];
        }
        let after = match before.git {
            true => git_listing(&before.root).unwrap_or_else(|| walk(&before.root, MAX_FILES)),
            false => walk(&before.root, MAX_FILES),
        };
        let mut paths: BTreeSet<PathBuf> = after.files.into_iter().map(|(path, _)| path).collect();
        paths.extend(before.files.keys().cloned());
        let mut changed = Vec::new();
        for path in paths {
            let now = Stat::of(&path);
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
        let mut missed = Vec::new();
        for (path, then, now) in changed {
            let before_bytes = match &then {
                None => None,
                Some((_, Source::Stored(hash))) => match self.content(hash) {
                    Ok(bytes) => Some(bytes),
                    Err(_) => {
                        missed.push(path);
                        continue;
                    }
                },
                Some((_, Source::Git(oid))) => match from_git.get(oid) {
                    Some(bytes) => Some(bytes.clone()),
                    None => {
                        missed.push(path);
                        continue;
                    }
                },
                Some((_, Source::Unstored)) => {
                    missed.push(path);
                    continue;
                }
            };
            let after_bytes = match now {
                Some(stat) if stat.len > MAX_FILE_BYTES => {
                    missed.push(path);
                    continue;
                }
                Some(stat) => match std::fs::read(&path) {
                    Ok(bytes) => {
                        let _ = self.store_known(&path, stat, &bytes);
                        Some(bytes)
                    }
                    Err(_) => continue,
                },
                None => None,
            };
            if before_bytes == after_bytes {
                continue;
            }
            let mode = then.map(|(stat, _)| stat.mode).filter(|mode| *mode != 0);
            self.record_change(&path, before_bytes.as_deref(), after_bytes.as_deref(), mode);
        }
        let mut notes = Vec::new();
        if !missed.is_empty() {
            let shown: Vec<String> = missed
                .iter()
                .take(5)
                .map(|path| path.strip_prefix(&before.root).unwrap_or(path).display().to_string())
                .collect();
            let more = if missed.len() > 5 { format!(" and {} more", missed.len() - 5) } else { String::new() };
            let why = match before.limits.first() {
                Some(limit) => limit.clone(),
                None => format!("too big: over {}", crate::tools::fs_util::human_size(MAX_FILE_BYTES)),
            };
            notes.push(format!(
                "rewind: changes to {}{more} were not checkpointed ({why}); /rewind can't put them back",
                shown.join(", ")
            ));
        }
        notes
    }

    /// The stored content of `path` when the session stored it with this same stat.
    fn known_content(&self, path: &Path, stat: Stat) -> Option<String> {
        let known = self.known.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        known.get(path).filter(|(seen, _)| *seen == stat).map(|(_, hash)| hash.clone())
    }

    /// Stores `bytes` as the content of `path` with `stat`, so that an unchanged file is not read again.
    fn store_known(&self, path: &Path, stat: Stat, bytes: &[u8]) -> std::io::Result<String> {
        let hash = {
            let _guard = self.lock.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            self.store(bytes)?
        };
        let mut known = self.known.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        known.insert(path.to_path_buf(), (stat, hash.clone()));
        Ok(hash)
    }
}

/// The files of a workspace: each with its index blob when git knows it matches the index.
struct Listing {
    files: Vec<(PathBuf, Option<String>)>,
    truncated: bool,
}

/// A git command in `root`, with no attributes (so no clean filter) and no fsmonitor.
fn git(root: &Path, args: &[&str]) -> Command {
    let mut command = Command::new("git");
    command
        .current_dir(root)
        .env("GIT_ATTR_SOURCE", EMPTY_TREE)
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env("GIT_TERMINAL_PROMPT", "0")
        .args(["-c", "core.fsmonitor=false", "-c", "core.untrackedCache=false"])
        .args(args)
        .stdin(Stdio::null())
        .stderr(Stdio::null());
    command
}

/// Runs git commands side by side; each one's output when it succeeded.
fn git_outputs<const N: usize>(root: &Path, commands: [&[&str]; N]) -> [Option<Vec<u8>>; N] {
    let children = commands.map(|args| git(root, args).stdout(Stdio::piped()).spawn().ok());
    children.map(|child| {
        let output = child?.wait_with_output().ok()?;
        output.status.success().then_some(output.stdout)
    })
}

fn nul_separated(bytes: &[u8]) -> impl Iterator<Item = &str> {
    bytes.split(|byte| *byte == 0).filter(|part| !part.is_empty()).filter_map(|part| std::str::from_utf8(part).ok())
}

/// The work tree's files under `root` (tracked and untracked, not ignored), or `None` outside git.
fn git_listing(root: &Path) -> Option<Listing> {
    let [staged, untracked, modified] = git_outputs(
        root,
        [
            &["ls-files", "-z", "-s"],
            &["ls-files", "-z", "-o", "--exclude-standard"],
            &["diff-files", "--name-only", "-z", "--relative"],
        ],
    );
    let (staged, untracked, modified) = (staged?, untracked?, modified?);
    let modified: BTreeSet<&str> = nul_separated(&modified).collect();
    let mut files: Vec<(PathBuf, Option<String>)> = Vec::new();
    for entry in nul_separated(&staged) {
        // "<mode> <oid> <stage>\t<path>": regular files at stage 0 only (not links, submodules or conflicts).
        let Some((meta, path)) = entry.split_once('\t') else { continue };
        let mut fields = meta.split(' ');
        let (Some(mode), Some(oid), Some(stage)) = (fields.next(), fields.next(), fields.next()) else { continue };
        if !matches!(mode, "100644" | "100755") {
            continue;
        }
        let clean = stage == "0" && !modified.contains(path);
        if files.last().is_some_and(|(last, _)| last == &root.join(path)) {
            continue;
        }
        files.push((root.join(path), clean.then(|| oid.to_owned())));
        if files.len() > MAX_FILES {
            return Some(Listing { files, truncated: true });
        }
    }
    for path in nul_separated(&untracked) {
        files.push((root.join(path), None));
        if files.len() > MAX_FILES {
            return Some(Listing { files, truncated: true });
        }
    }
    Some(Listing { files, truncated: false })
}

/// Outside git: the files under `root`, minus what `.gitignore`-style files ignore (and `.git` itself).
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
                return Listing { files, truncated: true };
            }
        }
    }
    Listing { files, truncated: false }
}

/// The contents of git blobs, read in one `git cat-file --batch` (no filters run).
fn git_blobs(root: &Path, oids: &[&str]) -> HashMap<String, Vec<u8>> {
    let mut blobs = HashMap::new();
    let Ok(mut child) = git(root, &["cat-file", "--batch"]).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn() else {
        return blobs;
    };
    let (Some(mut stdin), Some(mut stdout)) = (child.stdin.take(), child.stdout.take()) else { return blobs };
    let request: String = oids.iter().map(|oid| format!("{oid}\n")).collect();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(request.as_bytes());
    });
    let mut output = Vec::new();
    let _ = stdout.read_to_end(&mut output);
    let _ = writer.join();
    let _ = child.wait();
    // "<oid> blob <size>\n<content>\n" per object ("<oid> missing\n" when git has none).
    let mut rest = output.as_slice();
    while let Some(end) = rest.iter().position(|byte| *byte == b'\n') {
        let header = String::from_utf8_lossy(&rest[..end]).into_owned();
        rest = &rest[end + 1..];
        let mut fields = header.split(' ');
        let (Some(oid), Some("blob"), Some(size)) = (fields.next(), fields.next(), fields.next()) else { continue };
        let Ok(size) = size.parse::<usize>() else { break };
        if rest.len() < size {
            break;
        }
        blobs.insert(oid.to_owned(), rest[..size].to_vec());
        rest = rest.get(size + 1..).unwrap_or_default();
    }
    blobs
}
