//! The files and directories found at a denied path, remembered by what they are (device, inode, birth time)
//! rather than by name: a denial names a path, and a command that may write where the denied file lies (a build a
//! rule allows, in a workspace holding a `.env` a Read deny rule names) could rename it, in the same directory,
//! to a name nobody denied. The next command's read grants split that directory by names again and granted the
//! new one; the Read tool, judging names, read it. Both now also refuse what they find here.
//!
//! Moving a denied file to another directory is refused by Landlock itself (it would gain the right to be read,
//! see `linux.rs`); a rename within its directory is not, and that directory is always one the read grants split,
//! so looking at the entries of split directories is enough for the sandbox.

use std::collections::BTreeSet;
use std::fs::Metadata;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::Mutex;

/// What a file is, whatever its name: a new file that reuses the inode number of a deleted one has another birth
/// time, where the file system records one.
type Identity = (u64, u64, Option<std::time::SystemTime>);

fn identity(meta: &Metadata) -> Identity {
    (meta.dev(), meta.ino(), meta.created().ok())
}

static DENIED: Mutex<BTreeSet<Identity>> = Mutex::new(BTreeSet::new());

/// Remembers what is at `path` (not following a link), a path denied to reads, for the rest of the session.
pub(super) fn remember(path: &Path) {
    if let Ok(meta) = std::fs::symlink_metadata(path)
        && !meta.file_type().is_symlink()
    {
        DENIED.lock().unwrap_or_else(std::sync::PoisonError::into_inner).insert(identity(&meta));
    }
}

/// Whether a file (its metadata, not following a link) is one remembered at a denied path, under whatever name.
pub fn is_denied(meta: &Metadata) -> bool {
    let denied = DENIED.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    !denied.is_empty() && denied.contains(&identity(meta))
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
}
