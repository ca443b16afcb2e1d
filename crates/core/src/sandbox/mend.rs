//! After a command: the directories a command made unlistable or unsearchable (`chmod 311 .git/hooks`,
//! `chmod 000 a`, `chmod 600 .`; Landlock does not govern modes) are given the owner's rights back before the
//! guard, the nested-settings removal and the object check look, so that nothing planted behind them hides.
//! Before a command nothing is changed: the directories are the user's.

use std::path::Path;

/// How a scan treats a directory it can't list.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Listing {
    /// Skipped: before a command, the directories are the user's.
    AsItIs,
    /// Given the owner's rights back and listed: after a command, which may have made a directory unlistable
    /// (`chmod 311`: searchable and writable, not readable) to hide what it planted in it.
    Mended,
}

/// Lists `dir`; with [`Listing::Mended`], a directory that can't be listed is given the owner's rights back first.
pub(super) fn list_dir(dir: &Path, listing: Listing) -> std::io::Result<std::fs::ReadDir> {
    match std::fs::read_dir(dir) {
        Err(err) if listing == Listing::Mended && err.kind() == std::io::ErrorKind::PermissionDenied => {
            let_owner_change(dir).map_err(std::io::Error::from)?;
            std::fs::read_dir(dir)
        }
        listed => listed,
    }
}

/// `path`'s metadata, not following a link; with [`Listing::Mended`], when a directory on its way was made
/// unsearchable (`chmod 000 a`, `chmod 600 .`), after giving the owner's rights back to the directories from the
/// workspace root `root` down to `path`'s parent.
pub(super) fn metadata(path: &Path, listing: Listing, root: &Path) -> std::io::Result<std::fs::Metadata> {
    match std::fs::symlink_metadata(path) {
        Err(err) if listing == Listing::Mended && err.kind() == std::io::ErrorKind::PermissionDenied => {
            mend_way_to(path, root);
            std::fs::symlink_metadata(path)
        }
        found => found,
    }
}

/// Gives the owner's rights back to each directory from `root` down to `path`'s parent; nothing above `root`.
fn mend_way_to(path: &Path, root: &Path) {
    let Some(parent) = path.parent() else { return };
    let ancestors: Vec<&Path> = parent.ancestors().take_while(|dir| dir.starts_with(root)).collect();
    for dir in ancestors.into_iter().rev() {
        let _ = let_owner_change(dir);
    }
}

/// Adds the owner's read, write and search rights to the directory `dir` where a command took them away; opened
/// without following a link (but an anchored descriptor's name), so a link put there changes nothing elsewhere.
pub(super) fn let_owner_change(dir: &Path) -> rustix::io::Result<()> {
    use rustix::fs::{Mode, OFlags};
    use std::os::fd::AsRawFd;
    // A protected path's parent is reached through its anchored descriptor's `/proc` name (the guard's `Anchored`), which
    // is a link to follow; any other is not followed.
    let follow = if dir.starts_with("/proc/self/fd") { OFlags::empty() } else { OFlags::NOFOLLOW };
    let opened = rustix::fs::open(dir, OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC | follow, Mode::empty())?;
    let mode = Mode::from_raw_mode(rustix::fs::fstat(&opened)?.st_mode & 0o7777);
    let owner = Mode::RUSR | Mode::WUSR | Mode::XUSR;
    if !mode.contains(owner) {
        // A descriptor opened only for its path can't be changed itself; its `/proc` name reaches the same inode.
        rustix::fs::chmod(format!("/proc/self/fd/{}", opened.as_raw_fd()), mode | owner)?;
    }
    Ok(())
}
