//! Reaching a protected path without following a link on the way.

use std::path::{Path, PathBuf};

/// A protected path reached from its workspace root without following any link on the way: its parent directory
/// is opened with `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)` and the path is named through that open
/// descriptor (`/proc/self/fd/N/name`), so a directory swapped for a link meanwhile, even by a background command
/// while the guard works, can't redirect a write out of the workspace. The final name itself is never followed
/// by what the guard does with it (`symlink_metadata`, removal, a rename over it).
pub(super) struct Anchored {
    parent: rustix::fd::OwnedFd,
    name: std::ffi::OsString,
}

/// The workspace root `path` lies in (the deepest, where roots nest).
pub(super) fn root_holding<'a>(roots: &'a [PathBuf], path: &Path) -> Option<&'a PathBuf> {
    roots.iter().filter(|root| path.starts_with(root)).max_by_key(|root| root.as_os_str().len())
}

impl Anchored {
    pub(super) fn new(roots: &[PathBuf], path: &Path) -> std::io::Result<Anchored> {
        use rustix::fs::{Mode, OFlags, ResolveFlags};
        let not_below = || std::io::Error::other("not below a workspace root");
        let root = root_holding(roots, path).ok_or_else(not_below)?;
        let name = path.file_name().ok_or_else(not_below)?.to_owned();
        let relative = path.parent().and_then(|parent| parent.strip_prefix(root).ok()).ok_or_else(not_below)?;
        let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let root = rustix::fs::open(root.as_path(), flags, Mode::empty())?;
        let parent = if relative.as_os_str().is_empty() {
            root
        } else {
            let resolve = ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
            rustix::fs::openat2(&root, relative, flags, Mode::empty(), resolve)?
        };
        Ok(Anchored { parent, name })
    }

    pub(super) fn path(&self) -> PathBuf {
        use std::os::fd::AsRawFd;
        PathBuf::from(format!("/proc/self/fd/{}", self.parent.as_raw_fd())).join(&self.name)
    }
}
