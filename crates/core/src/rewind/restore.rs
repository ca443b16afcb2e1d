//! Putting one file back without following a link anywhere on its way.
//!
//! A rewind writes where tandem recorded the file to be — its real directory, as recorded — and nowhere else,
//! even if the workspace changed between the preview and now (a background process swapping a directory for a
//! link to `~/.ssh`, or the file for a link to `~/.bashrc`). So every step goes through directory handles opened
//! component by component with `O_NOFOLLOW` from `/`; the file as it is now is read through the handle (no link
//! followed, no FIFO waited on) and must still be what the preview showed; the new content is written to a
//! temporary file in that directory, given its mode with `fchmod`, and renamed over the name (a rename replaces a
//! link, never writes through it); a removal unlinks the name itself.

use std::ffi::OsStr;
use std::io::{Read as _, Write as _};
use std::path::{Component, Path};

/// The largest file a rewind reads or puts back.
pub(super) const MOST: u64 = 64 << 20;

/// A file's content through `dir` (a handle): `None` when there is none, an error when it is not a regular file
/// (a link, a FIFO, a device) or bigger than `most`.
#[cfg(unix)]
fn read_at(dir: &std::os::fd::OwnedFd, name: &OsStr, most: u64) -> std::io::Result<Option<(Vec<u8>, u32)>> {
    use rustix::fs::{Mode, OFlags};
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let fd = match rustix::fs::openat(dir, name, flags, Mode::empty()) {
        Ok(fd) => fd,
        Err(rustix::io::Errno::NOENT) => return Ok(None),
        Err(rustix::io::Errno::LOOP) => return Err(std::io::Error::other("it is a link now")),
        Err(err) => return Err(err.into()),
    };
    let stat = rustix::fs::fstat(&fd)?;
    if rustix::fs::FileType::from_raw_mode(stat.st_mode) != rustix::fs::FileType::RegularFile {
        return Err(std::io::Error::other("it is not a regular file now"));
    }
    if u64::try_from(stat.st_size).unwrap_or(u64::MAX) > most {
        return Err(std::io::Error::other("it is too big now"));
    }
    let mut bytes = Vec::new();
    std::fs::File::from(fd).take(most.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > most {
        return Err(std::io::Error::other("it is too big now"));
    }
    Ok(Some((bytes, stat.st_mode & 0o7777)))
}

/// The directory `dir` (absolute), opened component by component without following a link; missing ones are
/// made when `create` is set.
#[cfg(unix)]
fn open_dir(dir: &Path, create: bool) -> std::io::Result<std::os::fd::OwnedFd> {
    use rustix::fs::{Mode, OFlags};
    // On Linux a handle that only finds names (`O_PATH`) needs no read permission: a workspace under a
    // traverse-only directory (`/home` at 0711) can still be rewound.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let mut fd = rustix::fs::openat(rustix::fs::CWD, "/", flags, Mode::empty())?;
    for part in dir.components() {
        let name = match part {
            Component::RootDir => continue,
            Component::Normal(name) => name,
            _ => return Err(std::io::Error::other("its directory is not a plain path")),
        };
        fd = match rustix::fs::openat(&fd, name, flags, Mode::empty()) {
            Ok(next) => next,
            Err(rustix::io::Errno::NOENT) if create => {
                rustix::fs::mkdirat(&fd, name, Mode::from_raw_mode(0o755))?;
                rustix::fs::openat(&fd, name, flags, Mode::empty())?
            }
            Err(rustix::io::Errno::LOOP | rustix::io::Errno::NOTDIR) => {
                return Err(std::io::Error::other("a directory on its path is a link now"));
            }
            Err(err) => return Err(err.into()),
        };
    }
    Ok(fd)
}

/// The file `name` in the real directory `dir` as it is now, read without following a link (`None`: missing).
#[cfg(unix)]
pub(super) fn current(dir: &Path, name: &OsStr, most: u64) -> std::io::Result<Option<Vec<u8>>> {
    match open_dir(dir, false) {
        Ok(fd) => Ok(read_at(&fd, name, most)?.map(|(bytes, _)| bytes)),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(err) => Err(err),
    }
}

/// Puts `name` in the real directory `dir` back to `content` (`None`: removes it), if it is still
/// `expected` (`None`: missing). A file that exists keeps its mode; one made again gets `mode_if_new` without
/// special or group/other write bits.
#[cfg(unix)]
pub(super) fn put_back(
    dir: &Path,
    name: &OsStr,
    content: Option<&[u8]>,
    expected: Option<&[u8]>,
    mode_if_new: Option<u32>,
) -> std::io::Result<()> {
    use rustix::fs::{Mode, OFlags};
    let fd = open_dir(dir, content.is_some())?;
    let now = read_at(&fd, name, MOST)?;
    if now.as_ref().map(|(bytes, _)| bytes.as_slice()) != expected {
        return Err(std::io::Error::other("it changed since the preview; left as it is"));
    }
    let Some(content) = content else {
        return match now {
            Some(_) => rustix::fs::unlinkat(&fd, name, rustix::fs::AtFlags::empty()).map_err(Into::into),
            None => Ok(()),
        };
    };
    let mode = match &now {
        Some((_, mode)) => *mode,
        None => mode_if_new.map_or(0o644, |mode| mode & 0o755),
    };
    let temp = format!(".tandem-rewind-{:016x}", fastrand::u64(..));
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let file = rustix::fs::openat(&fd, temp.as_str(), flags, Mode::from_raw_mode(0o600))?;
    let written = (|| -> std::io::Result<()> {
        let mut file = std::fs::File::from(file);
        file.write_all(content)?;
        rustix::fs::fchmod(&file, Mode::from_raw_mode(mode))?;
        file.sync_all()?;
        rustix::fs::renameat(&fd, temp.as_str(), &fd, name)?;
        Ok(())
    })();
    if written.is_err() {
        let _ = rustix::fs::unlinkat(&fd, temp.as_str(), rustix::fs::AtFlags::empty());
    }
    written
}
