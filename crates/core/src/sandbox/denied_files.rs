//! The files and directories found at a denied path, remembered by what they are (device, inode, birth time)
//! rather than by name: a denial names a path, and a command that may write where the denied file lies (a build a
//! rule allows, in a workspace holding a `.env` a Read deny rule names) could rename it, in the same directory,
//! to a name nobody denied. The next command's read grants split that directory by names again and granted the
//! new one; the Read tool, judging names, read it. Both now also refuse what they find here.
//!
//! Moving a denied file to another directory is refused by Landlock itself (it would gain the right to be read,
//! see `linux.rs`); a rename within its directory is not, and that directory is always one the read grants split,
//! so looking at the entries of split directories is enough for the sandbox.
//!
//! What is remembered is also written down ([`keep_in`], a file in tandem's data directory, which no sandboxed
//! command may write), so that a later session still knows the file a build renamed in an earlier one.

use std::collections::BTreeSet;
use std::fs::Metadata;
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

static DENIED: Mutex<BTreeSet<Identity>> = Mutex::new(BTreeSet::new());

/// Where what is remembered is written down, once [`keep_in`] named it.
static RECORD: Mutex<Option<PathBuf>> = Mutex::new(None);

/// Identities written down at most: the oldest are forgotten beyond it.
const MAX_RECORDED: usize = 10_000;

/// Remembers what the file `record` holds and writes there what is remembered from now on.
pub fn keep_in(record: &Path) {
    let text = std::fs::read_to_string(record).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    let kept = &lines[lines.len().saturating_sub(MAX_RECORDED)..];
    let mut denied = DENIED.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    denied.extend(kept.iter().filter_map(|line| parse(line)));
    *RECORD.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(record.to_path_buf());
    if kept.len() < lines.len() {
        let _ = crate::fs_util::write_atomic(record, format!("{}\n", kept.join("\n")).as_bytes());
    }
}

/// Remembers what is at `path` (not following a link), a path denied to reads, for the rest of the session and,
/// once [`keep_in`] named a record, for later ones.
pub(super) fn remember(path: &Path) {
    let Ok(meta) = std::fs::symlink_metadata(path) else { return };
    if meta.file_type().is_symlink() {
        return;
    }
    let identity = identity(&meta);
    if !DENIED.lock().unwrap_or_else(std::sync::PoisonError::into_inner).insert(identity) {
        return;
    }
    let record = RECORD.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(record) = record.as_deref() {
        let appended = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(record)
            .and_then(|mut file| std::io::Write::write_all(&mut file, format!("{}\n", line(&identity)).as_bytes()));
        if let Err(err) = appended {
            tracing::warn!("could not write down a denied file in {}: {err}", record.display());
        }
    }
}

fn line((device, inode, born): &Identity) -> String {
    let born = born.and_then(|born| born.duration_since(SystemTime::UNIX_EPOCH).ok());
    match born {
        Some(born) => format!("{device} {inode} {}.{:09}", born.as_secs(), born.subsec_nanos()),
        None => format!("{device} {inode} -"),
    }
}

fn parse(line: &str) -> Option<Identity> {
    let mut fields = line.split(' ');
    let (device, inode, born) = (fields.next()?.parse().ok()?, fields.next()?.parse().ok()?, fields.next()?);
    let born = match born.split_once('.') {
        _ if born == "-" => None,
        Some((secs, nanos)) => Some(SystemTime::UNIX_EPOCH + Duration::new(secs.parse().ok()?, nanos.parse().ok()?)),
        None => return None,
    };
    Some((device, inode, born))
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

    #[test]
    fn identities_read_back_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let meta = std::fs::metadata(dir.path()).unwrap();
        assert_eq!(parse(&line(&identity(&meta))), Some(identity(&meta)));
        assert_eq!(parse("1 2 -"), Some((1, 2, None)));
        assert_eq!(parse("1 x -"), None);
    }
}
