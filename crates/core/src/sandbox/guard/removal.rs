//! Taking out what a command planted, however it was made: unwritable or unlistable (`chmod 000`), or a chain of
//! directories thousands deep (past what a path can name, and past a stack that recursed once per level: red-team
//! round 45 aborted tandem that way before anything was put back).
//!
//! Immutable and append-only flags are never cleared: a sandboxed command can't set them (even as root it keeps
//! no `CAP_LINUX_IMMUTABLE`), so one found here was the user's, on a file the command moved in with its directory
//! (red-team round 46: `mv data .claude` took a user's `chattr +i` ledger along to be deleted). Such an entry stays,
//! and the removal says it could not finish.
//!
//! Nothing here recurses or keeps a descriptor per level. A directory is emptied by moving the entries of each
//! directory in it up into it, under names of their own, and removing that directory once it is empty: every
//! level comes up to the top in turn, with at most five descriptors open.

use std::ffi::{OsStr, OsString};
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use rustix::fs::{AtFlags, FileType, Mode, OFlags, RenameFlags};

use super::super::mend::{mend_opened, open_below, open_directory};

/// Entries taken out of one tree at most: a tree still growing (a command that did not end) is not chased forever.
const MAX_ENTRIES: usize = 4_000_000;

/// Removes `path`, a directory with everything in it, or any other kind of entry, not following a link;
/// `Ok(false)` when nothing stood there.
pub(super) fn remove_whole(path: &Path) -> io::Result<bool> {
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(io::Error::other("no directory holds it"));
    };
    let parent = open_directory(parent)?;
    let _ = mend_opened(&parent);
    let stat = match rustix::fs::statat(&parent, name, AtFlags::SYMLINK_NOFOLLOW) {
        Err(rustix::io::Errno::NOENT) => return Ok(false),
        stat => stat?,
    };
    if FileType::from_raw_mode(stat.st_mode) == FileType::Directory {
        empty_out(&open_mended_directory(&parent, name)?)?;
        rustix::fs::unlinkat(&parent, name, AtFlags::REMOVEDIR)?;
    } else {
        rustix::fs::unlinkat(&parent, name, AtFlags::empty())?;
    }
    Ok(true)
}

/// Lets `path` be put back or removed: the directory holding it gets the owner's rights back (a command may have
/// taken them away with `chmod`, which Landlock does not govern).
pub(super) fn let_change(path: &Path) {
    let Some(parent) = path.parent() else { return };
    if let Ok(directory) = open_directory(parent) {
        let _ = mend_opened(&directory);
    }
}

/// Removes everything in the open directory `top`.
fn empty_out(top: &OwnedFd) -> io::Result<()> {
    let mut handled = 0usize;
    let mut aside = 0u64;
    loop {
        let names = names_in(top)?;
        if names.is_empty() {
            return Ok(());
        }
        let mut progress = false;
        let mut last_error = None;
        for name in names {
            handled += 1;
            if handled > MAX_ENTRIES {
                return Err(io::Error::other(format!("more than {MAX_ENTRIES} entries")));
            }
            match take_out(top, &name, &mut aside) {
                Ok(()) => progress = true,
                Err(err) => last_error = Some(err),
            }
        }
        if let (false, Some(err)) = (progress, last_error) {
            return Err(err);
        }
    }
}

/// Removes `name` from `top` if it is not a directory or an empty one; else moves what it holds up into `top`
/// and removes it.
fn take_out(top: &OwnedFd, name: &OsStr, aside: &mut u64) -> io::Result<()> {
    let stat = rustix::fs::statat(top, name, AtFlags::SYMLINK_NOFOLLOW)?;
    if FileType::from_raw_mode(stat.st_mode) != FileType::Directory {
        return Ok(rustix::fs::unlinkat(top, name, AtFlags::empty())?);
    }
    let inner = open_mended_directory(top, name)?;
    for child in names_in(&inner)? {
        loop {
            *aside += 1;
            let new_name = format!(".tandem-removing-{aside}");
            match rustix::fs::renameat_with(&inner, &child, top, new_name.as_str(), RenameFlags::NOREPLACE) {
                Err(rustix::io::Errno::EXIST) => continue,
                moved => break moved?,
            }
        }
    }
    Ok(rustix::fs::unlinkat(top, name, AtFlags::REMOVEDIR)?)
}

/// The names in the open directory `dir`, `.` and `..` left out.
fn names_in(dir: &OwnedFd) -> io::Result<Vec<OsString>> {
    let listed = rustix::fs::openat(dir, ".", OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty())?;
    let mut names = Vec::new();
    for entry in rustix::fs::Dir::read_from(listed)? {
        let name = entry?.file_name().to_bytes().to_vec();
        if name != b"." && name != b".." {
            names.push(OsStr::from_bytes(&name).to_owned());
        }
    }
    Ok(names)
}

/// Opens the directory `name` in `dir` for listing, not following a link, after giving the owner's rights back
/// to it.
fn open_mended_directory(dir: &OwnedFd, name: &OsStr) -> io::Result<OwnedFd> {
    let place = open_below(dir, name)?;
    let _ = mend_opened(&place);
    Ok(rustix::fs::openat(&place, ".", OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty())?)
}
