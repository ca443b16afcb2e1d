//! What a Read may see of the files and directories the sandbox follows ([`super::denied_origin_of`]): the checks
//! every reader of files for the model makes on the file it opened (the Read tool, Grep, and what tandem reads
//! unasked: guideline files, a command's `@file`, what compaction brings back).

use std::os::fd::AsFd;
use std::path::{Path, PathBuf};

use rustix::fs::{Mode, OFlags};

use super::mend::DIRECTORY;

/// The denied place a directory at or above `real` was found at, when that place (or `real` there) is hidden: a
/// denied directory renamed since (by a command in place: the sandbox follows it) still hides what it holds. For a
/// path with no descriptor yet (a search's root); an opened file is judged by [`denied_directory_holding`].
pub fn denied_directory_around(real: &Path, hidden: &(impl Fn(&Path) -> bool + ?Sized)) -> Option<PathBuf> {
    let (start, below) = if std::fs::symlink_metadata(real).is_ok_and(|meta| meta.is_dir()) {
        (real, PathBuf::new())
    } else {
        (real.parent()?, PathBuf::from(real.file_name()?))
    };
    let directory = rustix::fs::open(start, DIRECTORY | OFlags::NOFOLLOW, Mode::empty()).ok()?;
    denied_directory_from(directory, start, below, hidden)
}

/// Refuses a file just opened whose real place, read back from its descriptor, is one a Read may not see unasked
/// (`hidden`), or that is a file found at such a place, known here by another name
/// ([`super::denied_origin_of`]). The path was judged before the call ran; a link made since (by a command
/// in the background) may lead elsewhere now, and only the descriptor says where the kernel really went.
pub fn refuse_hidden_opened(
    file: &std::fs::File,
    shown: &str,
    hidden: Option<&(impl Fn(&Path) -> bool + ?Sized)>,
) -> Result<(), String> {
    let Some(hidden) = hidden else { return Ok(()) };
    let real = crate::fs_util::opened_path(file).ok();
    refuse_hidden_at(file, real.as_deref(), shown, hidden)
}

/// [`refuse_hidden_opened`] for a file whose real place (`real`) was read back already.
pub fn refuse_hidden_at(
    file: &std::fs::File,
    real: Option<&Path>,
    shown: &str,
    hidden: &(impl Fn(&Path) -> bool + ?Sized),
) -> Result<(), String> {
    if let Some(origin) = real.and_then(|real| denied_directory_holding(file, real, hidden)) {
        return Err(format!(
            "Read of {shown} is refused: it lies in the directory found at {}, which a Read may not see unasked \
             (renamed since).",
            origin.display()
        ));
    }
    if let Some(origin) = file.metadata().ok().and_then(|meta| super::denied_origin_of(&meta))
        && hidden(&origin)
    {
        return Err(format!(
            "Read of {shown} is refused: it is the file found at {}, which a Read may not see unasked (under another \
             name here: renamed, linked, or a link's target).",
            origin.display()
        ));
    }
    if let Some(real) = real.filter(|real| hidden(real)) {
        return Err(format!(
            "Read of {shown} is refused: it now leads to {}, which a Read may not see unasked (a link changed since \
             the call was judged).",
            real.display()
        ));
    }
    Ok(())
}

/// Opens a file whose content goes to the model without anyone asked about it (a guideline file's import, a file
/// compaction brings back, a custom command's `@file`) as an unasked Read does, after its path was judged: by its
/// real place without following a link (one put in its way since fails the open), only a regular file, and refused
/// when the file opened is one `hidden` covers under another name (renamed, linked) or in a denied directory
/// renamed since.
pub fn open_unasked(path: &Path, hidden: &(impl Fn(&Path) -> bool + ?Sized)) -> Result<std::fs::File, String> {
    let shown = path.display().to_string();
    let real = path.canonicalize().map_err(|err| format!("{shown}: {err}"))?;
    let file = crate::fs_util::open_regular_resolved(&real).map_err(|err| format!("{shown}: {err}"))?;
    refuse_hidden_opened(&file, &shown, Some(hidden))?;
    Ok(file)
}

/// The denied place of a directory holding the opened `file` (found at `real`), judged by the directories'
/// identities, not their names: a command swapping a denied directory's name with another's (`RENAME_EXCHANGE`,
/// in a loop) can make every name-based look at the moment of the check see the harmless one. The directory the
/// file's name is in is opened and must hold this very file (else it is refused: it moved under the check), and
/// its parents are reached through `..` from it.
fn denied_directory_holding(
    file: &std::fs::File,
    real: &Path,
    hidden: &(impl Fn(&Path) -> bool + ?Sized),
) -> Option<PathBuf> {
    use rustix::fs::AtFlags;
    let (Some(parent), Some(name)) = (real.parent(), real.file_name()) else { return None };
    let moved = || Some(parent.to_path_buf());
    let Ok(directory) = rustix::fs::open(parent, DIRECTORY | OFlags::NOFOLLOW, Mode::empty()) else {
        return moved();
    };
    let (Ok(entry), Ok(opened)) =
        (rustix::fs::statat(&directory, name, AtFlags::SYMLINK_NOFOLLOW), rustix::fs::fstat(file.as_fd()))
    else {
        return moved();
    };
    if (entry.st_dev, entry.st_ino) != (opened.st_dev, opened.st_ino) {
        return moved();
    }
    denied_directory_from(directory, parent, PathBuf::from(name), hidden)
}

/// Walks up from the open `directory` (found at `at`, holding `below`) through `..`, judging each directory by its
/// identity ([`super::denied_origin_of`]), not by the names on the way.
fn denied_directory_from(
    mut directory: rustix::fd::OwnedFd,
    at: &Path,
    mut below: PathBuf,
    hidden: &(impl Fn(&Path) -> bool + ?Sized),
) -> Option<PathBuf> {
    for above in at.ancestors() {
        let meta = std::fs::File::from(directory.try_clone().ok()?).metadata().ok()?;
        if let Some(origin) = super::denied_origin_of(&meta) {
            let there = origin.join(&below);
            if hidden(&origin) || hidden(&there) {
                return Some(origin);
            }
        }
        let Some(step) = above.file_name() else { break };
        below = Path::new(step).join(below);
        directory = rustix::fs::openat(&directory, "..", DIRECTORY, Mode::empty()).ok()?;
    }
    None
}
