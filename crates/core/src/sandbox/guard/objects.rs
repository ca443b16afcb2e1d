//! A repository's object store across a command that may not change the repository's history.
//!
//! Git trusts what it finds in `objects/`: an object is looked up by its name and never checked against it, and a
//! commit-graph says which tree a commit has. So a command whose refs, index and logs are put back afterwards
//! could still change what an existing commit or blob *contains* — a loose object or a pack under a name git
//! already knows, a commit-graph of its own — and your next `git checkout` or `git stash pop` would write the
//! planted `.claude/settings.json`. The store is too big to copy before every command, so what the command added
//! or changed is checked instead: a loose object must be what its name says, a pack must verify against its index
//! (`git verify-pack`), and anything else there (commit-graphs, multi-pack indexes, bitmaps, reverse indexes: caches
//! git rebuilds) goes. Nothing is deleted: what fails is moved to `.git/tandem-moved-aside-*`, which git never
//! reads, so a repository the command repacked loses nothing.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::super::mend::{Listing, list_dir};

/// Where what failed a check goes, directly in the repository directory: a name git never reads.
pub(super) const MOVED_ASIDE_PREFIX: &str = "tandem-moved-aside-";

/// How long `git verify-pack` may take on one pack (it hashes every object in it).
const VERIFY_TIMEOUT: Duration = Duration::from_secs(300);

/// Which file a path is and when it last changed: device, inode, size, ctime (which a command can't set back).
type Stamp = (u64, u64, u64, i64, i64);

/// The files of one object store, as they were before a command.
#[derive(Debug)]
pub(super) struct ObjectStore {
    /// The repository directory (`.git`, or a submodule's in `.git/modules`).
    git_dir: PathBuf,
    files: BTreeMap<PathBuf, Stamp>,
}

/// What kind of file of the store a path (relative to `objects/`) is.
enum Kind {
    Loose,
    /// A pack's data or index: `pack/pack-<hash>` without the extension.
    Pack(PathBuf),
    /// Kept with a verified pack: a `.keep` (don't repack) or a cruft pack's `.mtimes`.
    PackCompanion,
    /// Other repositories to read objects from: the guard's own entries look after them.
    Alternates,
    /// Anything else: a cache git rebuilds, a temp file, or something git should not find.
    Other,
}

impl ObjectStore {
    pub(super) fn take(git_dir: &Path) -> ObjectStore {
        let mut files = BTreeMap::new();
        walk(&git_dir.join("objects"), Path::new(""), Listing::AsItIs, &mut |relative, stamp| {
            if let Some(stamp) = stamp {
                files.insert(relative.to_path_buf(), stamp);
            }
        });
        ObjectStore { git_dir: git_dir.to_path_buf(), files }
    }

    /// Moves aside what the command added or changed that fails its check; what it did, one line each.
    pub(super) fn check(&self, roots: &[PathBuf]) -> Vec<String> {
        let objects = self.git_dir.join("objects");
        let mut failed: Vec<PathBuf> = Vec::new();
        let mut packs: BTreeSet<PathBuf> = BTreeSet::new();
        walk(&objects, Path::new(""), Listing::Mended, &mut |relative, stamp| {
            let Some(stamp) = stamp else {
                failed.push(relative.to_path_buf());
                return;
            };
            if self.files.get(relative) == Some(&stamp) {
                return;
            }
            match kind(relative) {
                Kind::Loose if is_what_its_name_says(&objects.join(relative), relative) => {}
                Kind::Pack(stem) => {
                    packs.insert(stem);
                }
                Kind::PackCompanion | Kind::Alternates => {}
                Kind::Loose | Kind::Other => failed.push(relative.to_path_buf()),
            }
        });
        let root = roots.iter().find(|root| self.git_dir.starts_with(root)).cloned().unwrap_or_default();
        for stem in packs {
            if !pack_verifies(&root, &self.git_dir, &objects.join(&stem)) {
                failed.extend(["pack", "idx"].map(|ext| stem.with_extension(ext)));
            }
        }
        failed.retain(|relative| std::fs::symlink_metadata(objects.join(relative)).is_ok());
        if failed.is_empty() {
            return Vec::new();
        }
        self.move_aside(roots, &failed)
    }

    fn move_aside(&self, roots: &[PathBuf], failed: &[PathBuf]) -> Vec<String> {
        let objects = self.git_dir.join("objects");
        let aside = super::Anchored::new(roots, &self.git_dir).and_then(|git_dir| {
            let made = tempfile::Builder::new().prefix(MOVED_ASIDE_PREFIX).tempdir_in(git_dir.path())?.keep();
            Ok(self.git_dir.join(made.file_name().unwrap_or_default()))
        });
        let Ok(aside) = aside else {
            return vec![format!("could not move aside what the command put in {}", objects.display())];
        };
        failed
            .iter()
            .map(|relative| {
                let path = objects.join(relative);
                let flat = relative.to_string_lossy().replace('/', "-");
                let moved = super::Anchored::new(roots, &path).and_then(|from| {
                    let to = super::Anchored::new(roots, &aside.join(&flat))?;
                    std::fs::rename(from.path(), to.path())
                });
                match moved {
                    Ok(()) => format!("moved {} aside to {} (git reads it unchecked)", path.display(), aside.display()),
                    Err(err) => format!("could not move {} aside: {err}", path.display()),
                }
            })
            .collect()
    }
}

/// Calls `found` with every entry below `dir` (relative to the store) that is not a directory, with its stamp when
/// it is a regular file (`None`: a link, a pipe, a device — nothing git should find there). Links are not
/// followed. After a command (`Listing::Mended`), a directory it made unlistable is listed anyway.
fn walk(dir: &Path, relative: &Path, listing: Listing, found: &mut dyn FnMut(&Path, Option<Stamp>)) {
    use std::os::unix::fs::MetadataExt;
    // The store's own directory is where mending starts: nothing above it is changed.
    let store = dir.ancestors().nth(relative.components().count()).unwrap_or(dir);
    // A list of what is left to look at, not recursion: a command can nest directories thousands deep there.
    let mut pending = vec![(dir.to_path_buf(), relative.to_path_buf())];
    while let Some((dir, relative)) = pending.pop() {
        let Ok(entries) = list_dir(&dir, listing, store) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            let inside = relative.join(entry.file_name());
            let Ok(meta) = std::fs::symlink_metadata(&path) else { continue };
            if meta.is_dir() {
                pending.push((path, inside));
            } else if meta.is_file() {
                found(&inside, Some((meta.dev(), meta.ino(), meta.len(), meta.ctime(), meta.ctime_nsec())));
            } else {
                found(&inside, None);
            }
        }
    }
}

fn kind(relative: &Path) -> Kind {
    let parts: Vec<&str> = relative.iter().filter_map(|part| part.to_str()).collect();
    let hex = |text: &str| text.bytes().all(|byte| matches!(byte, b'0'..=b'9' | b'a'..=b'f'));
    match parts.as_slice() {
        [dir, name] if dir.len() == 2 && hex(dir) && matches!(name.len(), 38 | 62) && hex(name) => Kind::Loose,
        ["info", "alternates" | "http-alternates"] => Kind::Alternates,
        ["pack", name] if name.starts_with("pack-") => match Path::new(name).extension().and_then(|ext| ext.to_str()) {
            Some("pack" | "idx") => Kind::Pack(relative.with_extension("")),
            Some("keep" | "mtimes") => Kind::PackCompanion,
            _ => Kind::Other,
        },
        _ => Kind::Other,
    }
}

/// Whether a loose object inflates to a valid object whose hash is its name (SHA-1 for a 40-digit name, SHA-256
/// for 64).
fn is_what_its_name_says(path: &Path, relative: &Path) -> bool {
    use sha1::Digest;
    let name: String = relative.iter().filter_map(|part| part.to_str()).collect();
    let Ok(file) = super::super::open_regular(path, false) else { return false };
    let mut inflated = flate2::read::ZlibDecoder::new(file);
    let mut sha1 = sha1::Sha1::new();
    let mut sha256 = sha2::Sha256::new();
    let mut buffer = vec![0; 64 * 1024];
    let mut header: Vec<u8> = Vec::new();
    let mut total: u64 = 0;
    loop {
        let read = match inflated.read(&mut buffer) {
            Ok(0) => break,
            Ok(read) => read,
            Err(_) => return false,
        };
        if header.len() < 64 && !header.contains(&0) {
            header.extend_from_slice(&buffer[..read.min(64)]);
        }
        total += read as u64;
        if name.len() == 40 {
            sha1.update(&buffer[..read]);
        } else {
            sha256.update(&buffer[..read]);
        }
    }
    let digest = if name.len() == 40 { hex(&sha1.finalize()) } else { hex(&sha256.finalize()) };
    digest == name && header_matches(&header, total)
}

/// `<type> <size>\0` with a type git knows and the size of what follows.
fn header_matches(header: &[u8], total: u64) -> bool {
    let Some(end) = header.iter().position(|byte| *byte == 0) else { return false };
    let text = String::from_utf8_lossy(&header[..end]);
    let Some((kind, size)) = text.split_once(' ') else { return false };
    matches!(kind, "blob" | "tree" | "commit" | "tag") && size.parse::<u64>().ok() == Some(total - end as u64 - 1)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// Whether `git verify-pack` finds the pack whole and every object in it what the index says.
fn pack_verifies(root: &Path, git_dir: &Path, stem: &Path) -> bool {
    let (git_dir, index) = (git_dir.to_string_lossy(), stem.with_extension("idx"));
    let args = ["--git-dir", &git_dir, "verify-pack", &index.to_string_lossy()];
    crate::safe_git::status(root, &args, VERIFY_TIMEOUT) == Some(0)
}
