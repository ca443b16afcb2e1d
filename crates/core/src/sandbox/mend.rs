//! After a command: the directories a command made unlistable or unsearchable (`chmod 311 .git/hooks`,
//! `chmod 000 a`, `chmod 600 .`; Landlock does not govern modes) are given the owner's rights back before the
//! guard, the nested-settings removal and the object check look, so that nothing planted behind them hides.
//! Before a command nothing is changed: the directories are the user's.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Component, Path};

use rustix::fs::{Mode, OFlags};

/// How a scan treats a directory it can't list.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Listing {
    /// Skipped: before a command, the directories are the user's.
    AsItIs,
    /// Given the owner's rights back and listed: after a command, which may have made a directory unlistable
    /// (`chmod 311`: searchable and writable, not readable) to hide what it planted in it.
    Mended,
}

/// Lists `dir` (below the workspace root `root`); with [`Listing::Mended`], a directory that can't be listed is
/// given the owner's rights back first, with the directories on its way.
pub(super) fn list_dir(dir: &Path, listing: Listing, root: &Path) -> io::Result<std::fs::ReadDir> {
    match std::fs::read_dir(dir) {
        Err(err) if listing == Listing::Mended && err.kind() == io::ErrorKind::PermissionDenied => {
            mend_down_to(root, dir);
            std::fs::read_dir(dir)
        }
        listed => listed,
    }
}

/// `path`'s metadata, not following a link; with [`Listing::Mended`], when a directory on its way was made
/// unsearchable (`chmod 000 a`, `chmod 600 .`), after giving the owner's rights back to the directories from the
/// workspace root `root` down to `path`'s parent.
pub(super) fn metadata(path: &Path, listing: Listing, root: &Path) -> io::Result<std::fs::Metadata> {
    match std::fs::symlink_metadata(path) {
        Err(err) if listing == Listing::Mended && err.kind() == io::ErrorKind::PermissionDenied => {
            if let Some(parent) = path.parent() {
                mend_down_to(root, parent);
            }
            std::fs::symlink_metadata(path)
        }
        found => found,
    }
}

/// Gives the owner's rights back to `root` and to each directory below it down to `dir`, reached one name at a
/// time from the one before without following a link: a link on the way (a `gitdir:` spelled through one) stops
/// it, so nothing outside the workspace is ever changed.
fn mend_down_to(root: &Path, dir: &Path) {
    let Ok(rest) = dir.strip_prefix(root) else { return };
    let Ok(mut current) = open_directory(root) else { return };
    let _ = mend_opened(&current);
    for component in rest.components() {
        let Component::Normal(name) = component else { return };
        let Ok(next) = open_below(&current, name) else { return };
        let _ = mend_opened(&next);
        current = next;
    }
}

/// How directories are opened to be walked from: for their path only (a descriptor to name what is below).
pub(super) const DIRECTORY: OFlags = OFlags::PATH.union(OFlags::DIRECTORY).union(OFlags::CLOEXEC);

/// Opens the directory `name` in the open directory `dir` for its path only, not following a link.
pub(super) fn open_below(dir: &OwnedFd, name: &std::ffi::OsStr) -> io::Result<OwnedFd> {
    Ok(rustix::fs::openat(dir, name, DIRECTORY | OFlags::NOFOLLOW, Mode::empty())?)
}

/// Opens the directory `dir` for its path only, without following a link as its last name, except an anchored
/// descriptor's `/proc/self/fd/N` name (the guard's `Anchored`), which is one to follow.
pub(super) fn open_directory(dir: &Path) -> io::Result<OwnedFd> {
    let follow = if dir.parent() == Some(Path::new("/proc/self/fd")) { OFlags::empty() } else { OFlags::NOFOLLOW };
    Ok(rustix::fs::open(dir, DIRECTORY | follow, Mode::empty())?)
}

/// Adds the owner's read, write and search rights to the open directory `dir` where a command took them away.
pub(super) fn mend_opened(dir: &OwnedFd) -> io::Result<()> {
    let mode = Mode::from_raw_mode(rustix::fs::fstat(dir)?.st_mode & 0o7777);
    let owner = Mode::RUSR | Mode::WUSR | Mode::XUSR;
    if !mode.contains(owner) {
        // A descriptor opened only for its path can't be changed itself; its `/proc` name reaches the same inode.
        rustix::fs::chmod(format!("/proc/self/fd/{}", dir.as_raw_fd()), mode | owner)?;
    }
    Ok(())
}
