//! The submodules a repository's index names, wherever they are: git's `status`, `diff` and `submodule update`
//! go into each one that has a `.git` and obey its configuration (`core.fsmonitor`, hooks). The scan for nested
//! repositories stops at a depth and skips `target` and `node_modules`; a command that made a repository there
//! and added it to the index as a submodule would otherwise plant a configuration that your next `git status`
//! runs.

use std::path::{Path, PathBuf};

/// The `.git` of every submodule in the index of `root`'s repository that has one.
pub fn submodule_repositories(root: &Path) -> Vec<PathBuf> {
    submodules_of(&git_dir_of(root), root).into_iter().map(|work_tree| work_tree.join(".git")).collect()
}

/// The repository of a work tree: its `.git` directory, or the one its `.git` file names.
fn git_dir_of(work_tree: &Path) -> PathBuf {
    let dot_git = work_tree.join(".git");
    pointed_git_dir(&dot_git).unwrap_or(dot_git)
}

/// The work trees of the submodules that the index in `git_dir` names and that have a `.git` (a directory, or a
/// file pointing to their repository elsewhere), below `work_tree`.
pub fn submodules_of(git_dir: &Path, work_tree: &Path) -> Vec<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    let read = |name: &str, most| super::read_regular_file(&git_dir.join(name), most, false).unwrap_or_default();
    let index = read("index", MOST_INDEX);
    // Read with both lengths of object names (SHA-1's and SHA-256's) rather than with the one the configuration
    // seems to say: a hand reading of git's configuration was fooled twice (a word "sha256" in a remote's URL,
    // `[extensions "x"]`), and a wrong length hides every entry. A reading with the wrong length finds names
    // that are no submodules with a `.git`, which the filter below drops.
    let mut paths = Vec::new();
    for hash_len in [20, 32] {
        let (found, shared) = gitlinks(&index, hash_len);
        paths.extend(found);
        // A split index (`git update-index --split-index`) keeps most entries in a shared index it names.
        if let Some(shared) = shared {
            paths.extend(gitlinks(&read(&format!("sharedindex.{shared}"), MOST_INDEX), hash_len).0);
        }
    }
    paths.sort();
    paths.dedup();
    paths
        .into_iter()
        .filter(|path| !path.is_empty())
        .map(|path| work_tree.join(std::ffi::OsStr::from_bytes(&path)))
        .filter(|work_tree| std::fs::symlink_metadata(work_tree.join(".git")).is_ok())
        .collect()
}

/// Repository directories that lie in the work tree but outside `.git`: the root's own when its `.git` is a file
/// (`gitdir: store`), and submodules' (a submodule whose `.git` file says `gitdir: ../store`), found through every
/// index, nested submodules too. Git obeys their configuration as it does `.git`'s, so they are protected like it.
/// Those under a root's own `.git` are left out (protected with it).
pub fn pointed_repositories(root: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let own = root.join(".git");
    if let Some(pointed) = pointed_git_dir(&own).filter(|pointed| pointed.starts_with(root)) {
        found.push(pointed);
    }
    let mut queue = vec![(git_dir_of(root), root.to_path_buf())];
    let mut seen = 0;
    while let Some((git_dir, work_tree)) = queue.pop() {
        seen += 1;
        if seen > MAX_REPOSITORIES {
            break;
        }
        for submodule in submodules_of(&git_dir, &work_tree) {
            let dot_git = submodule.join(".git");
            let Some(pointed) = pointed_git_dir(&dot_git) else {
                queue.push((dot_git, submodule));
                continue;
            };
            if pointed.starts_with(root) && !pointed.starts_with(root.join(".git")) && !found.contains(&pointed) {
                found.push(pointed.clone());
            }
            queue.push((pointed, submodule));
        }
    }
    found
}

/// How many repositories [`pointed_repositories`] looks into, at most.
const MAX_REPOSITORIES: usize = 256;

/// The directory a `.git` file names (`gitdir: …`, relative to the file's directory), resolved as the kernel
/// resolves it (lexically where that can't be known for sure); `None` for a `.git` directory or anything else. Read
/// without waiting: a named pipe there must not block tandem.
pub fn pointed_git_dir(dot_git: &Path) -> Option<PathBuf> {
    let text = super::read_regular_file(dot_git, 4096, false).ok()?;
    let text = String::from_utf8_lossy(&text);
    let target = dot_git.parent()?.join(text.trim().strip_prefix("gitdir:")?.trim());
    Some(crate::fs_util::resolve_like_kernel(&target).unwrap_or_else(|| crate::fs_util::normalize(&target)))
}

const GITLINK: u32 = 0o160000;
/// The largest index read (a repository of a million files has one of about 100 MB).
const MOST_INDEX: u64 = 512 << 20;

/// The paths of the index's gitlink entries (mode 160000), read as git's index format 2, 3 or 4 says (as many as
/// could be read from a damaged one), and the shared index a split index names (its `link` extension), as hex.
fn gitlinks(index: &[u8], hash_len: usize) -> (Vec<Vec<u8>>, Option<String>) {
    let word = |at: usize| index.get(at..at + 4).map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]));
    if index.get(..4) != Some(b"DIRC") {
        return (Vec::new(), None);
    }
    let (Some(version), Some(count)) = (word(4), word(8)) else { return (Vec::new(), None) };
    let mut found = Vec::new();
    let mut at = 12;
    let mut previous: Vec<u8> = Vec::new();
    for _ in 0..count {
        let start = at;
        let Some(mode) = word(start + 24) else { break };
        let flags_at = start + 40 + hash_len;
        let Some(flags) = index.get(flags_at..flags_at + 2).map(|b| u16::from_be_bytes([b[0], b[1]])) else { break };
        at = flags_at + 2 + if version >= 3 && flags & 0x4000 != 0 { 2 } else { 0 };
        let path = if version == 4 {
            let Some((strip, read)) = varint(&index[at.min(index.len())..]) else { break };
            at += read;
            let Some(end) = index[at.min(index.len())..].iter().position(|&b| b == 0) else { break };
            let keep = previous.len().saturating_sub(strip);
            let mut path = previous[..keep].to_vec();
            path.extend_from_slice(&index[at..at + end]);
            at += end + 1;
            path
        } else {
            let Some(end) = index[at.min(index.len())..].iter().position(|&b| b == 0) else { break };
            let path = index[at..at + end].to_vec();
            // Entries are padded with 1 to 8 NULs to a multiple of 8 bytes.
            at = start + (at + end - start + 8) / 8 * 8;
            path
        };
        if mode & 0o170000 == GITLINK {
            found.push(path.clone());
        }
        previous = path;
    }
    (found, shared_index(index, at, hash_len))
}

/// The shared index a split index names: its `link` extension, among the extensions after the entries (each a
/// signature and a size), starts with the shared index's name.
fn shared_index(index: &[u8], mut at: usize, hash_len: usize) -> Option<String> {
    while at + 8 <= index.len().saturating_sub(hash_len) {
        let size = u32::from_be_bytes(index[at + 4..at + 8].try_into().ok()?) as usize;
        if &index[at..at + 4] == b"link" {
            let name = index.get(at + 8..at + 8 + hash_len)?;
            return Some(name.iter().map(|byte| format!("{byte:02x}")).collect());
        }
        at = at.checked_add(8 + size)?;
    }
    None
}

/// Git's offset varint (index format 4): each more byte adds one before shifting.
fn varint(bytes: &[u8]) -> Option<(usize, usize)> {
    let mut value = 0usize;
    for (read, &byte) in bytes.iter().enumerate().take(9) {
        if read > 0 {
            value = value.checked_add(1)?.checked_shl(7)?;
        }
        value |= usize::from(byte & 0x7f);
        if byte & 0x80 == 0 {
            return Some((value, read + 1));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::ffi::OsStrExt;

    fn git(dir: &Path, args: &[&str]) -> bool {
        std::process::Command::new("git")
            .args(["-c", "user.email=t@t", "-c", "user.name=t", "-c", "init.defaultBranch=main"])
            .args(args)
            .current_dir(dir)
            .output()
            .is_ok_and(|out| out.status.success())
    }

    #[test]
    fn submodules_anywhere_in_the_index_are_found_in_every_index_version() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        if !git(root, &["init", "-q"]) {
            eprintln!("skipped: no git");
            return;
        }
        std::fs::write(root.join("a.txt"), "a").unwrap();
        std::fs::create_dir_all(root.join("target/deep")).unwrap();
        std::fs::write(root.join("target/deep/file"), "f").unwrap();
        // Not UTF-8, as a path may be.
        let nested = root.join(std::ffi::OsStr::from_bytes(b"target/deep/\xffer/repo"));
        std::fs::create_dir_all(&nested).unwrap();
        assert!(git(&nested, &["init", "-q"]) && git(&nested, &["commit", "-q", "--allow-empty", "-m", "x"]));
        let head = std::process::Command::new("git").args(["rev-parse", "HEAD"]).current_dir(&nested).output();
        let head = String::from_utf8(head.unwrap().stdout).unwrap();
        let mut entry = format!("160000,{},", head.trim()).into_bytes();
        entry.extend_from_slice(b"target/deep/\xffer/repo");
        assert!(git(root, &["add", "a.txt", "target/deep/file"]));
        let added = std::process::Command::new("git")
            .args(["update-index", "--add", "--cacheinfo"])
            .arg(std::ffi::OsStr::from_bytes(&entry))
            .current_dir(root)
            .status();
        assert!(added.is_ok_and(|status| status.success()));
        for version in ["2", "3", "4"] {
            assert!(git(root, &["update-index", "--index-version", version]));
            assert_eq!(submodule_repositories(root), vec![nested.join(".git")], "index version {version}");
        }
        // Found by the twenty-fourth red-team round: a remote's URL with "sha256" in it (the index was read with
        // 32-byte names), and a split index (the entry kept in the shared index), each hid the submodule from the
        // check of the repositories `git status` enters.
        assert!(git(root, &["config", "remote.origin.url", "https://example.com/sha256-tools.git"]));
        assert_eq!(submodule_repositories(root), vec![nested.join(".git")], "a word in the configuration");
        assert!(git(root, &["update-index", "--index-version", "2"]) && git(root, &["update-index", "--split-index"]));
        let names = std::fs::read_dir(root.join(".git")).unwrap().flatten().map(|entry| entry.file_name());
        assert!(names.into_iter().any(|name| name.to_string_lossy().starts_with("sharedindex.")));
        assert_eq!(submodule_repositories(root), vec![nested.join(".git")], "a split index");
    }

    #[test]
    fn damaged_indexes_give_what_could_be_read() {
        assert!(gitlinks(b"", 20).0.is_empty());
        assert!(gitlinks(b"DIRC\0\0\0\x02\xff\xff\xff\xff", 20).0.is_empty());
        assert_eq!(varint(&[0x80, 0x00]), Some((128, 2)));
        assert_eq!(varint(&[0x05]), Some((5, 1)));
    }
}
