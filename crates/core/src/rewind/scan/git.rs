//! The git the scan runs, only to read: the index with its stat data, the untracked files, and blobs — with
//! nothing a repository configures able to run (see the module above).

use std::collections::HashMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use super::{Listing, MAX_FILE_BYTES, MAX_FILES, Tracked, too_big};

/// How long one git run may take.
const GIT_TIMEOUT: Duration = Duration::from_secs(10);

fn run_git(root: &Path, args: &[&str], input: Option<Vec<u8>>, most: u64) -> Option<Vec<u8>> {
    crate::safe_git::output(root, args, input, most, GIT_TIMEOUT)
}

/// Whether this git can be asked for blobs without fetching anything: `GIT_NO_LAZY_FETCH` came with git 2.44;
/// an older one is used only in a repository that names no promisor remote (a partial clone could otherwise be
/// made to fetch, running a configured command).
fn fetch_safe(root: &Path) -> bool {
    static VERSION: OnceLock<Option<(u32, u32)>> = OnceLock::new();
    let version = *VERSION.get_or_init(|| {
        let output = run_git(root, &["--version"], None, 4096)?;
        let text = String::from_utf8_lossy(&output);
        let mut numbers = text.split_whitespace().nth(2)?.split('.').map(|part| part.parse::<u32>().ok());
        Some((numbers.next()??, numbers.next()??))
    });
    if version.is_some_and(|version| version >= (2, 44)) {
        return true;
    }
    // `git config` only reads; exit status 1 means "no such key".
    let pattern = "^(remote\\..*\\.promisor|extensions\\.partialclone)$";
    crate::safe_git::status(root, &["config", "--get-regexp", pattern], GIT_TIMEOUT) == Some(1)
}

#[cfg(unix)]
fn path_of(bytes: &[u8]) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    PathBuf::from(OsStr::from_bytes(bytes))
}

#[cfg(not(unix))]
fn path_of(bytes: &[u8]) -> PathBuf {
    PathBuf::from(String::from_utf8_lossy(bytes).into_owned())
}

/// The work tree's files under `root` (tracked and untracked, not ignored), or `None` outside git.
pub(super) fn git_listing(root: &Path) -> Option<Listing> {
    const MOST: u64 = 1 << 30;
    if !fetch_safe(root) {
        return None;
    }
    let (index, untracked, git_dir) = std::thread::scope(|scope| {
        let index = scope.spawn(|| run_git(root, &["ls-files", "-z", "-s", "--debug"], None, MOST));
        let untracked = scope.spawn(|| run_git(root, &["ls-files", "-z", "-o", "--exclude-standard"], None, MOST));
        let git_dir = run_git(root, &["rev-parse", "--absolute-git-dir"], None, 4096);
        (index.join().ok().flatten(), untracked.join().ok().flatten(), git_dir)
    });
    let (index, untracked, git_dir) = (index?, untracked?, git_dir?);
    let git_dir = path_of(String::from_utf8_lossy(&git_dir).trim_end().as_bytes());
    let index_written_ns = std::fs::metadata(git_dir.join("index"))
        .ok()
        .and_then(|meta| meta.modified().ok())
        .and_then(|time| time.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |since| since.as_nanos() as i128);
    let mut files: Vec<(PathBuf, Option<Tracked>)> = Vec::new();
    let mut rest = index.as_slice();
    while !rest.is_empty() {
        // "<mode> <oid> <stage>\t<path>\0" and then five lines of the entry's stat, each starting with spaces.
        let Some(end) = rest.iter().position(|byte| *byte == 0) else { break };
        let header = &rest[..end];
        rest = &rest[end + 1..];
        let mut stat = HashMap::new();
        while rest.starts_with(b"  ") {
            let line_end = rest.iter().position(|byte| *byte == b'\n').unwrap_or(rest.len());
            for field in String::from_utf8_lossy(&rest[..line_end]).split('\t') {
                if let Some((name, value)) = field.trim().split_once(": ") {
                    stat.insert(name.to_owned(), value.to_owned());
                }
            }
            rest = rest.get(line_end + 1..).unwrap_or_default();
        }
        let Some(tab) = header.iter().position(|byte| *byte == b'\t') else { continue };
        let meta = String::from_utf8_lossy(&header[..tab]);
        let path = root.join(path_of(&header[tab + 1..]));
        let mut fields = meta.split(' ');
        let (Some(mode), Some(oid), Some(stage)) = (fields.next(), fields.next(), fields.next()) else { continue };
        // Regular files only (not links or submodules); a file in conflict (stages 1-3) is stored, not trusted.
        if !matches!(mode, "100644" | "100755") || files.last().is_some_and(|(last, _)| *last == path) {
            continue;
        }
        let number = |name: &str| stat.get(name).and_then(|value| value.parse::<u64>().ok());
        let time = |name: &str| {
            let (secs, nanos) = stat.get(name)?.split_once(':')?;
            Some(secs.parse::<i128>().ok()? * 1_000_000_000 + nanos.parse::<i128>().ok()?)
        };
        let tracked = match (stage, time("mtime"), time("ctime"), number("size"), number("ino")) {
            ("0", Some(modified_ns), Some(changed_ns), Some(len), Some(inode)) => {
                Some(Tracked { oid: oid.to_owned(), modified_ns, changed_ns, len, inode })
            }
            _ => None,
        };
        files.push((path, tracked));
        if files.len() > MAX_FILES {
            return Some(Listing { files, index_written_ns, truncated: true });
        }
    }
    for path in untracked.split(|byte| *byte == 0).filter(|part| !part.is_empty()) {
        files.push((root.join(path_of(path)), None));
        if files.len() > MAX_FILES {
            return Some(Listing { files, index_written_ns, truncated: true });
        }
    }
    Some(Listing { files, index_written_ns, truncated: false })
}

/// The contents of git blobs (no filters run, nothing fetched), each up to [`MAX_FILE_BYTES`]: sizes first
/// (`--batch-check`), then the blobs small enough, in one `--batch`.
pub(super) fn git_blobs(root: &Path, oids: &[&str]) -> HashMap<String, Result<Vec<u8>, String>> {
    let mut blobs = HashMap::new();
    let request: String = oids.iter().map(|oid| format!("{oid}\n")).collect();
    let Some(sizes) = run_git(root, &["cat-file", "--batch-check"], Some(request.into_bytes()), 64 << 20) else {
        return blobs;
    };
    let mut wanted = String::new();
    for line in String::from_utf8_lossy(&sizes).lines() {
        let mut fields = line.split(' ');
        let (Some(oid), Some("blob"), Some(size)) = (fields.next(), fields.next(), fields.next()) else { continue };
        match size.parse::<u64>() {
            Ok(size) if size <= MAX_FILE_BYTES => wanted.push_str(&format!("{oid}\n")),
            _ => {
                blobs.insert(oid.to_owned(), Err(too_big()));
            }
        }
    }
    if wanted.is_empty() {
        return blobs;
    }
    let most = (wanted.lines().count() as u64) * (MAX_FILE_BYTES + 128);
    let Some(output) = run_git(root, &["cat-file", "--batch"], Some(wanted.into_bytes()), most) else { return blobs };
    // "<oid> blob <size>\n<content>\n" per object.
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
        blobs.insert(oid.to_owned(), Ok(rest[..size].to_vec()));
        rest = rest.get(size + 1..).unwrap_or_default();
    }
    blobs
}
