//! File-system helpers at the bottom of core, shared by tools, permissions, sessions, rewind and MCP: path
//! resolution (lexical, and as the kernel resolves it), atomic writes, binary detection, sizes for people.

mod mounts;
pub mod removed_at_exit;
pub use mounts::mount_aliases;

use std::collections::VecDeque;
use std::ffi::OsString;
use std::fs;
use std::io::{self, Write};
use std::path::{Component, Path, PathBuf};

/// Resolves a path from a tool input: absolute paths as they are, `~` and `~/…` against `$HOME`, anything else
/// against `cwd`. The result is resolved as the kernel resolves it ([`resolve_like_kernel`]): the missing part
/// of a path (a file Write creates) is appended as written, so it resolves the same way as an existing one, and
/// permission rules see the same path the tool will open.
pub fn resolve_path(cwd: &Path, path: &str) -> PathBuf {
    let home = user_home;
    let joined = if path == "~" {
        home().unwrap_or_else(|| cwd.to_path_buf())
    } else if let Some(rest) = path.strip_prefix("~/") {
        match home() {
            Some(home) => home.join(rest),
            None => cwd.join(path),
        }
    } else {
        cwd.join(path)
    };
    // As the kernel resolves it (symlinks before `..`), which is what the permission policy judged; a path it
    // can't resolve for sure is left for the kernel as it is, never normalized lexically into another one.
    match resolve_like_kernel(&joined) {
        Some(resolved) => resolved,
        None if joined.components().any(|c| matches!(c, std::path::Component::ParentDir)) => joined,
        None => normalize(&joined),
    }
}

/// Lexical normalization: removes `.` components and resolves `..` against the preceding component (never
/// above the root).
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() && !path.is_absolute() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    if out.as_os_str().is_empty() { PathBuf::from(".") } else { out }
}

/// Writes `bytes` to `path` atomically: a temporary file in the same directory is written, synced, given the
/// existing file's permissions (or the usual defaults for a new file), then renamed over the target. A crash or a
/// full disk leaves either the old content or the new one, never half a file. The parent directory must exist;
/// see [`write_atomic_create_dirs`].
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    // Follow a symlink so the link keeps pointing at the (updated) file instead of being replaced by a file.
    let target = match fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => fs::canonicalize(path)?,
        _ => path.to_path_buf(),
    };
    let target_dir = match target.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let existing = fs::metadata(&target).ok();

    let mut builder = tempfile::Builder::new();
    builder.prefix(".tandem-").suffix(".tmp");
    // A new file gets what `open(O_CREAT, 0666)` gives under the process umask (the kernel applies it), like an
    // editor or `echo >` would; temp files are otherwise created 0600.
    #[cfg(unix)]
    if existing.is_none() {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(fs::Permissions::from_mode(0o666));
    }
    let mut temp = builder.tempfile_in(target_dir)?;
    temp.write_all(bytes)?;
    temp.as_file().sync_all()?;
    if let Some(meta) = existing {
        fs::set_permissions(temp.path(), meta.permissions())?;
    }
    temp.persist(&target).map_err(|err| err.error)?;
    Ok(())
}

/// [`write_atomic`], creating missing parent directories first.
pub fn write_atomic_create_dirs(path: &Path, bytes: &[u8]) -> io::Result<()> {
    if let Some(parent) = path.parent()
        && !parent.as_os_str().is_empty()
    {
        fs::create_dir_all(parent)?;
    }
    write_atomic(path, bytes)
}

/// Writes a JSON object file the way every settings-like file tandem keeps is written: pretty-printed with a
/// trailing newline, atomically, keeping the file's mode, its directory made when missing.
pub fn write_json_object(path: &Path, object: &serde_json::Map<String, serde_json::Value>) -> io::Result<()> {
    let mut text = serde_json::to_string_pretty(object).map_err(io::Error::other)?;
    text.push('\n');
    write_atomic_create_dirs(path, text.as_bytes())
}

/// [`write_atomic_create_dirs`] for a path the permission check resolved ([`resolve_path`]: no symlink in its
/// existing part), as the file tools write: every directory on the way is opened (or made) without following a
/// symlink, and the temporary file is written and renamed inside the directory so opened. A link put in the way
/// after the check (a directory swapped for a link to elsewhere while a large file was read) fails the write
/// instead of redirecting it. Where the kernel has no `openat2` (before Linux 5.6), [`write_atomic_create_dirs`].
#[cfg(target_os = "linux")]
pub fn write_atomic_resolved(path: &Path, bytes: &[u8]) -> io::Result<()> {
    use rustix::fs::{AtFlags, FileType, Mode, OFlags, ResolveFlags};
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "not a file path"));
    };
    let beneath = |dir: &rustix::fd::OwnedFd, name: &std::ffi::OsStr| {
        let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
        rustix::fs::openat2(dir, name, flags, Mode::empty(), ResolveFlags::NO_SYMLINKS)
    };
    let root = rustix::fs::openat2(
        rustix::fs::CWD,
        "/",
        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
        ResolveFlags::NO_SYMLINKS,
    );
    let mut dir = match root {
        Err(rustix::io::Errno::NOSYS) => return write_atomic_create_dirs(path, bytes),
        opened => opened?,
    };
    for component in parent.components() {
        let Component::Normal(name) = component else { continue };
        dir = match beneath(&dir, name) {
            Err(rustix::io::Errno::NOENT) => {
                rustix::fs::mkdirat(&dir, name, Mode::from_raw_mode(0o777))?;
                beneath(&dir, name)?
            }
            opened => opened?,
        };
    }
    let existing = match rustix::fs::statat(&dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(stat) if FileType::from_raw_mode(stat.st_mode) == FileType::Symlink => {
            return Err(io::Error::other("a symbolic link was put in its place since it was checked"));
        }
        Ok(stat) => Some(Mode::from_raw_mode(stat.st_mode & 0o7777)),
        Err(rustix::io::Errno::NOENT) => None,
        Err(error) => return Err(error.into()),
    };
    let temp = format!(".tandem-{:016x}.tmp", fastrand::u64(..));
    let created = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let file = rustix::fs::openat(&dir, temp.as_str(), created, Mode::from_raw_mode(0o666))?;
    let written = (|| -> io::Result<()> {
        let mut file = fs::File::from(file);
        file.write_all(bytes)?;
        file.sync_all()?;
        if let Some(mode) = existing {
            rustix::fs::fchmod(&file, mode)?;
        }
        rustix::fs::renameat(&dir, temp.as_str(), &dir, name)?;
        Ok(())
    })();
    if written.is_err() {
        let _ = rustix::fs::unlinkat(&dir, temp.as_str(), AtFlags::empty());
    }
    written
}

#[cfg(not(target_os = "linux"))]
pub fn write_atomic_resolved(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_atomic_create_dirs(path, bytes)
}

/// Where the file or directory an open descriptor refers to is now, as the kernel names it (`/proc/self/fd`): a name
/// looked at before may have been swapped for a link, or the file renamed, since it was opened.
pub fn opened_path(descriptor: &impl std::os::fd::AsRawFd) -> io::Result<PathBuf> {
    fs::read_link(format!("/proc/self/fd/{}", descriptor.as_raw_fd()))
}

/// How many leading bytes [`looks_binary`] inspects, like git and ripgrep do.
pub const BINARY_SNIFF_LEN: usize = 8192;

/// File extensions that are binary whatever their first bytes say (compressed data can go on for kilobytes
/// before its first NUL byte).
const BINARY_EXTENSIONS: &[&str] = &[
    "png", "jpg", "jpeg", "gif", "bmp", "ico", "webp", "tiff", "psd", "pdf", "zip", "gz", "tgz", "bz2", "xz", "zst",
    "7z", "rar", "tar", "jar", "war", "class", "exe", "dll", "so", "dylib", "o", "a", "lib", "obj", "bin", "wasm",
    "pyc", "pyo", "mp3", "mp4", "mov", "avi", "mkv", "wav", "flac", "ogg", "webm", "ttf", "otf", "woff", "woff2",
    "eot", "sqlite", "db", "rlib", "rmeta", "dat", "iso", "dmg", "deb", "rpm", "npy", "pkl", "parquet",
];

/// Whether a path's extension marks it as binary.
pub fn has_binary_extension(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|ext| BINARY_EXTENSIONS.iter().any(|b| b.eq_ignore_ascii_case(ext)))
}

/// Whether content is binary: a NUL byte in its first [`BINARY_SNIFF_LEN`] bytes (the heuristic git uses).
pub fn is_binary_content(head: &[u8]) -> bool {
    head[..head.len().min(BINARY_SNIFF_LEN)].contains(&0)
}

/// Whether a file is binary by its extension or its first bytes. `head` is the start of the file (any length;
/// only the first [`BINARY_SNIFF_LEN`] bytes are looked at).
pub fn looks_binary(path: &Path, head: &[u8]) -> bool {
    has_binary_extension(path) || is_binary_content(head)
}

/// [`open_regular`] for a path the permission check resolved just before (free of links then): opened without
/// following any link (`openat2` with `RESOLVE_NO_SYMLINKS`), so a link put in its way since fails the open instead
/// of leading elsewhere. Where the kernel has no `openat2`, [`open_regular`].
#[cfg(target_os = "linux")]
pub fn open_regular_resolved(path: &Path) -> io::Result<fs::File> {
    use rustix::fs::{Mode, OFlags, ResolveFlags};
    let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
    let file = match rustix::fs::openat2(rustix::fs::CWD, path, flags, Mode::empty(), ResolveFlags::NO_SYMLINKS) {
        Err(rustix::io::Errno::NOSYS) => return open_regular(path),
        opened => fs::File::from(opened?),
    };
    regular_and_blocking(file)
}

#[cfg(not(target_os = "linux"))]
pub fn open_regular_resolved(path: &Path) -> io::Result<fs::File> {
    open_regular(path)
}

/// Opens `path` for reading only if it is a regular file. A named pipe, a socket or a device (`/dev/tty`,
/// `/dev/zero`) would block the tool forever or never end, so it is refused with an error saying what it is.
/// The open itself can't block: it is non-blocking until the file is known to be regular.
pub fn open_regular(path: &Path) -> io::Result<fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY).open(path)?;
    regular_and_blocking(file)
}

/// A file opened non-blocking, kept only if it is a regular file, then made blocking for reading.
fn regular_and_blocking(file: fs::File) -> io::Result<fs::File> {
    let kind = file.metadata()?.file_type();
    if !kind.is_file() {
        let what = special_file_kind(&kind);
        return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("it is {what}, not a regular file")));
    }
    let flags = rustix::fs::fcntl_getfl(&file)?;
    rustix::fs::fcntl_setfl(&file, flags - rustix::fs::OFlags::NONBLOCK)?;
    Ok(file)
}

/// What a file that is not a regular file is, in words.
fn special_file_kind(kind: &fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if kind.is_dir() {
        "a directory"
    } else if kind.is_fifo() {
        "a named pipe (FIFO), which could wait forever for a writer"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_char_device() {
        "a character device (a terminal or a stream that may never end)"
    } else if kind.is_block_device() {
        "a block device"
    } else {
        "a special file"
    }
}

/// Human-readable byte size (`512 bytes`, `12.3 KB`, `4.0 MB`).
pub fn human_size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KB", "MB", "GB", "TB"];
    if bytes < 1024 {
        return format!("{bytes} bytes");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

/// Up to `n` names in `path`'s directory that look like `path`'s file name, for "did you mean" hints after a
/// file was not found. Cheap by construction: one directory listing, capped.
pub fn similar_names(path: &Path, n: usize) -> Vec<PathBuf> {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name().and_then(|n| n.to_str())) else {
        return Vec::new();
    };
    let Ok(entries) = fs::read_dir(dir) else { return Vec::new() };
    let names: Vec<String> =
        entries.take(2000).filter_map(|e| e.ok()).filter_map(|e| e.file_name().into_string().ok()).collect();
    let lower = name.to_lowercase();
    let stem = lower.split('.').next().unwrap_or("");
    // Same name in another case, or the same stem with another extension, first; then close spellings.
    let mut picks: Vec<&str> = names
        .iter()
        .filter(|c| {
            let c = c.to_lowercase();
            c == lower || (!stem.is_empty() && c.split('.').next() == Some(stem))
        })
        .map(String::as_str)
        .collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    for close in similar::get_close_matches(name, &refs, n, 0.6) {
        if !picks.contains(&close) {
            picks.push(close);
        }
    }
    picks.into_iter().take(n).map(|p| dir.join(p)).collect()
}

/// A JSON file's top-level object; empty when the file is missing, unreadable or not an object (tandem's own
/// small records: trusted hooks, `.mcp.json` approvals).
pub fn read_json_object(path: &Path) -> serde_json::Map<String, serde_json::Value> {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        .and_then(|value| match value {
            serde_json::Value::Object(map) => Some(map),
            _ => None,
        })
        .unwrap_or_default()
}

/// The project root: the nearest ancestor of `cwd` (itself included) holding `.git` — a directory, or a file in
/// worktrees and submodules — else `cwd`. Project settings and memory live there so they apply in every subdirectory.
pub fn project_root(cwd: &Path) -> PathBuf {
    cwd.ancestors().find(|dir| dir.join(".git").exists()).unwrap_or(cwd).to_path_buf()
}

/// The user's home directory: `$HOME`, or where that is unset or empty the account's ([`account_home`]), as
/// bash expands `~` and git and ssh find their files.
pub fn user_home() -> Option<PathBuf> {
    std::env::var_os("HOME").filter(|home| !home.is_empty()).map(PathBuf::from).or_else(account_home)
}

/// The home directory of the account tandem runs as, from the password database: where bash's `~`, git and
/// ssh look when `$HOME` is unset — and where ssh looks whatever `$HOME` says.
pub fn account_home() -> Option<PathBuf> {
    #[cfg(unix)]
    let home = nix::unistd::User::from_uid(nix::unistd::Uid::current()).ok().flatten().map(|user| user.dir);
    #[cfg(not(unix))]
    let home = None;
    home.filter(|dir| dir.is_absolute())
}

/// The program `name` as found on `path` (a `PATH` value), skipping every entry that is relative or lies in
/// one of `roots` (as written or resolved), and a candidate that resolves into one: a `node_modules/.bin`, a
/// virtualenv's `bin` or a direnv `PATH_add bin` would otherwise have tandem run a program the repository
/// brings, with all of its rights.
pub fn program_outside(name: &str, path: &std::ffi::OsStr, roots: &[PathBuf]) -> Option<PathBuf> {
    let real_roots: Vec<PathBuf> =
        roots.iter().map(|root| root.canonicalize().unwrap_or_else(|_| root.clone())).collect();
    let inside = |path: &Path| roots.iter().chain(&real_roots).any(|root| path.starts_with(root));
    std::env::split_paths(path)
        .filter(|dir| dir.is_absolute() && !inside(dir))
        .map(|dir| dir.join(name))
        .filter(|candidate| candidate.is_file())
        .find(|candidate| candidate.canonicalize().is_ok_and(|real| !inside(&real)))
}

/// The link of a process that `path` goes through on its way, as the kernel walks it (`/proc/self/cwd`,
/// `/proc/1/root`, `/proc/thread-self/fd/3`, also reached through `/dev/fd`, `/dev/stdin`, `/proc/self/../self`,
/// `/proc/net/..` or a symlink of the workspace): it leads wherever that process is, so no resolution of the path
/// can be vouched for. The walk follows every ordinary link (`/proc/self` is one) and applies `..` as it goes, and
/// stops at the first process link, never following it.
pub fn process_link(path: &Path) -> Option<PathBuf> {
    if !path.is_absolute() {
        return None;
    }
    let mut out = PathBuf::from("/");
    let mut parts = components(path);
    let mut hops = 0;
    while let Some(name) = parts.pop_front() {
        if name == "." {
            continue;
        }
        if name == ".." {
            out.pop();
            continue;
        }
        out.push(&name);
        if is_process_link(&out) {
            return Some(out);
        }
        let meta = match std::fs::symlink_metadata(&out) {
            Ok(meta) => meta,
            // Inside `/proc`, what can't be looked at is not known to be no link.
            Err(_) if out.starts_with("/proc") => return Some(out),
            Err(_) => return None,
        };
        if meta.file_type().is_symlink() {
            hops += 1;
            if hops > MAX_SYMLINK_HOPS {
                return None;
            }
            let target = std::fs::read_link(&out).ok()?;
            out.pop();
            if target.is_absolute() {
                out = PathBuf::from("/");
            }
            for (index, part) in components(&target).into_iter().enumerate() {
                parts.insert(index, part);
            }
        }
    }
    None
}

/// `/proc/<process>/{cwd,root,fd,map_files,exe}`, also below `task/<thread>`.
fn is_process_link(path: &Path) -> bool {
    const LINKS: [&str; 5] = ["cwd", "root", "fd", "map_files", "exe"];
    let names: Vec<&std::ffi::OsStr> = path.iter().skip(1).collect();
    let is_process = |name: &std::ffi::OsStr| {
        name == "self"
            || name == "thread-self"
            || name.to_str().is_some_and(|name| name.bytes().all(|b| b.is_ascii_digit()))
    };
    let link = |name: &std::ffi::OsStr| LINKS.iter().any(|link| name == *link);
    match names.as_slice() {
        [proc, process, name] => *proc == "proc" && is_process(process) && link(name),
        [proc, process, task, thread, name] => {
            *proc == "proc" && is_process(process) && *task == "task" && is_process(thread) && link(name)
        }
        _ => false,
    }
}

/// The most symlinks followed while resolving one path (the kernel's limit is 40, then `ELOOP`).
const MAX_SYMLINK_HOPS: usize = 40;

/// Resolves an absolute path as the kernel does: component by component from `/`, following every symlink that
/// exists now before the next component is applied (so `..` after a symlink leaves the link's target). Components
/// that don't exist yet are appended as written. `None` when the result can't be known for sure: a relative
/// path, a symlink whose target doesn't exist (a dangling link), more than 40 links, a component that can't be
/// inspected (permissions, not a directory), or anything under `/proc` (its links depend on which process looks).
pub fn resolve_like_kernel(path: &Path) -> Option<PathBuf> {
    if !path.is_absolute() {
        return None;
    }
    let mut hops = 0;
    walk(PathBuf::from("/"), components(path), &mut hops, false)
}

/// Applies `parts` to `out` (an existing, resolved directory). With `must_exist` (a symlink's target), a missing
/// component makes the whole resolution uncertain.
fn walk(mut out: PathBuf, parts: VecDeque<OsString>, hops: &mut usize, must_exist: bool) -> Option<PathBuf> {
    let mut parts = parts;
    let mut missing = false;
    while let Some(name) = parts.pop_front() {
        if name == "." {
            continue;
        }
        if name == ".." {
            // After a component that doesn't exist, the kernel fails here, while a directory made there by then
            // (or a lexical normalizer) would climb back into real, unresolved territory: uncertain.
            if missing {
                return None;
            }
            out.pop();
            continue;
        }
        // Pushed in place: a path of many components (a model can send one of a megabyte) costs linear time.
        out.push(&name);
        if missing {
            continue;
        }
        match std::fs::symlink_metadata(&out) {
            Ok(meta) if meta.file_type().is_symlink() => {
                *hops += 1;
                if *hops > MAX_SYMLINK_HOPS {
                    return None;
                }
                let target = std::fs::read_link(&out).ok()?;
                out.pop();
                let base = if target.is_absolute() { PathBuf::from("/") } else { out.clone() };
                // A dangling link (its target missing) is never vouched for.
                out = walk(base, components(&target), hops, true)?;
            }
            Ok(_) => {}
            Err(error) if error.kind() == std::io::ErrorKind::NotFound && !must_exist => missing = true,
            Err(_) => return None,
        }
        if out.starts_with("/proc") {
            return None;
        }
    }
    Some(out)
}

/// The components of a path as names (`/` dropped; `.` and `..` kept for [`walk`]).
fn components(path: &Path) -> VecDeque<OsString> {
    path.components()
        .filter_map(|component| match component {
            Component::Normal(name) => Some(name.to_os_string()),
            Component::CurDir => Some(OsString::from(".")),
            Component::ParentDir => Some(OsString::from("..")),
            Component::RootDir | Component::Prefix(_) => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_relative_absolute_and_home() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = &dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(cwd.join("a")).unwrap();
        std::fs::create_dir_all(cwd.join("b")).unwrap();
        assert_eq!(resolve_path(cwd, "src/main.rs"), cwd.join("src/main.rs"));
        assert_eq!(resolve_path(cwd, "/etc/hosts"), PathBuf::from("/etc/hosts"));
        assert_eq!(resolve_path(cwd, "./a/../b/./c"), cwd.join("b/c"));
        assert_eq!(resolve_path(cwd, &"../".repeat(40)), PathBuf::from("/"));
        assert_eq!(resolve_path(cwd, "."), *cwd);
        if let Some(home) = std::env::var_os("HOME") {
            let home = PathBuf::from(&home);
            assert_eq!(resolve_path(cwd, "~/x"), resolve_like_kernel(&home.join("x")).unwrap());
            assert_eq!(resolve_path(cwd, "~"), resolve_like_kernel(&home).unwrap());
        }
        // `~user` is not expanded: it is a relative name like any other.
        assert_eq!(resolve_path(cwd, "~bob"), cwd.join("~bob"));
        // Symlinks before `..`, as the kernel goes (and as the permission policy judged).
        std::os::unix::fs::symlink(cwd.join("a"), cwd.join("b/link")).unwrap();
        assert_eq!(resolve_path(cwd, "b/link/../x"), cwd.join("x"));
        // `..` after a missing part is left to the kernel, never normalized into another path.
        assert_eq!(resolve_path(cwd, "nope/../a"), cwd.join("nope/../a"));
    }

    #[cfg(unix)]
    #[test]
    fn atomic_write_keeps_mode_and_leaves_no_temp_files() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("script.sh");
        fs::write(&path, "old").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
        write_atomic(&path, b"new").unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "new");
        assert_eq!(fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o755);
        let names: Vec<_> = fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }

    #[cfg(unix)]
    #[test]
    fn new_file_gets_umask_default_mode_and_parents() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a/b/new.txt");
        assert!(write_atomic(&path, b"x").is_err(), "parents are only created when asked");
        write_atomic_create_dirs(&path, b"x").unwrap();
        let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        let status = fs::read_to_string("/proc/self/status").unwrap_or_default();
        let umask = status
            .lines()
            .find_map(|l| l.strip_prefix("Umask:"))
            .and_then(|v| u32::from_str_radix(v.trim(), 8).ok())
            .unwrap_or(0o022);
        assert_eq!(mode, 0o666 & !umask);
    }

    #[cfg(unix)]
    #[test]
    fn write_through_symlink_updates_target() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.txt");
        let link = dir.path().join("link.txt");
        fs::write(&real, "old").unwrap();
        std::os::unix::fs::symlink(&real, &link).unwrap();
        write_atomic(&link, b"new").unwrap();
        assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(fs::read_to_string(&real).unwrap(), "new");
    }

    #[test]
    fn binary_detection() {
        assert!(looks_binary(Path::new("a.png"), b"text"));
        assert!(looks_binary(Path::new("a.txt"), b"ab\0cd"));
        assert!(!looks_binary(Path::new("a.txt"), b"plain text"));
        let mut late_nul = vec![b'a'; BINARY_SNIFF_LEN];
        late_nul.push(0);
        assert!(!is_binary_content(&late_nul));
    }

    #[test]
    fn sizes_and_similar_names() {
        assert_eq!(human_size(10), "10 bytes");
        assert_eq!(human_size(2048), "2.0 KB");
        assert_eq!(human_size(5 * 1024 * 1024), "5.0 MB");
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("config.toml"), "").unwrap();
        fs::write(dir.path().join("main.rs"), "").unwrap();
        let hits = similar_names(&dir.path().join("config.yaml"), 3);
        assert_eq!(hits, vec![dir.path().join("config.toml")]);
        let hits = similar_names(&dir.path().join("mian.rs"), 3);
        assert_eq!(hits, vec![dir.path().join("main.rs")]);
    }

    #[test]
    fn programs_are_never_taken_from_the_workspace() {
        let root = tempfile::tempdir().unwrap();
        let root = root.path().canonicalize().unwrap();
        let (work, system, linked) = (root.join("work"), root.join("system"), root.join("linked"));
        for dir in [work.join("bin"), system.clone(), linked.clone()] {
            fs::create_dir_all(&dir).unwrap();
        }
        fs::write(work.join("bin/tool"), "").unwrap();
        fs::write(system.join("tool"), "").unwrap();
        std::os::unix::fs::symlink(work.join("bin/tool"), linked.join("tool")).unwrap();
        std::os::unix::fs::symlink(work.join("bin"), root.join("alias")).unwrap();
        let roots = [work.clone()];
        let path = |entries: &[&Path]| std::env::join_paths(entries).unwrap();
        for before in [work.join("bin"), root.join("alias"), linked.clone(), PathBuf::from("work/bin")] {
            let found = program_outside("tool", &path(&[&before, &system]), &roots);
            assert_eq!(found, Some(system.join("tool")), "{}", before.display());
        }
        assert_eq!(program_outside("tool", &path(&[&work.join("bin")]), &roots), None);
    }

    /// Found by the thirty-first red-team round: `/proc/self/cwd/../.ssh/id_rsa` was judged by its spelling
    /// (nothing under `/proc` resolves for sure, so it was normalized to `/proc/self/.ssh/id_rsa`), and the
    /// kernel followed the process's link to the real key.
    #[test]
    fn paths_through_a_process_link_are_found_however_they_get_there() {
        let dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink("/proc/self/cwd/..", dir.path().join("up")).unwrap();
        for path in ["/proc/self/cwd/../h/.ssh/id_rsa", "/proc/1/root/etc", "/proc/thread-self/fd/3", "/dev/fd/0"] {
            assert!(process_link(Path::new(path)).is_some(), "{path}");
        }
        assert!(process_link(&dir.path().join("up/h/.ssh/id_rsa")).is_some());
        let pid = std::process::id();
        let task = format!("/proc/{pid}/task/{pid}/cwd/x");
        assert_eq!(process_link(Path::new(&task)), Some(PathBuf::from(format!("/proc/{pid}/task/{pid}/cwd"))));
        // Found by the thirty-second red-team round: `..` and `/proc`'s own links were read literally.
        for path in
            ["/proc/self/../self/cwd/x", "/proc/../proc/self/cwd/x", "/proc/self/task/../cwd/x", "/proc/net/../root/x"]
        {
            assert!(process_link(Path::new(path)).is_some(), "{path}");
        }
        for path in ["/proc/cpuinfo", "/proc/self/status", "/etc/hostname"] {
            assert_eq!(process_link(Path::new(path)), None, "{path}");
        }
    }

    /// Found by the thirty-first red-team round (as a hardening): Write and Edit re-opened the checked path by
    /// name, long after the check on a large file; a directory swapped for a link meanwhile redirected the write.
    #[test]
    fn a_resolved_write_never_follows_a_link_put_in_its_way() {
        let root = tempfile::tempdir().unwrap();
        let root = root.path().canonicalize().unwrap();
        let (work, outside) = (root.join("work"), root.join("outside"));
        fs::create_dir_all(work.join("src")).unwrap();
        fs::create_dir_all(&outside).unwrap();
        write_atomic_resolved(&work.join("src/new/deep.txt"), b"made").unwrap();
        assert_eq!(fs::read(work.join("src/new/deep.txt")).unwrap(), b"made");
        fs::write(work.join("src/run.sh"), "old").unwrap();
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(work.join("src/run.sh"), fs::Permissions::from_mode(0o751)).unwrap();
        write_atomic_resolved(&work.join("src/run.sh"), b"new").unwrap();
        assert_eq!(fs::metadata(work.join("src/run.sh")).unwrap().permissions().mode() & 0o7777, 0o751);

        let checked = work.join("src/run.sh");
        fs::rename(work.join("src"), work.join("src.old")).unwrap();
        std::os::unix::fs::symlink(&outside, work.join("src")).unwrap();
        assert!(write_atomic_resolved(&checked, b"redirected").is_err());
        assert!(fs::read_dir(&outside).unwrap().next().is_none(), "nothing was written outside");
        fs::remove_file(work.join("src")).unwrap();
        fs::create_dir(work.join("src")).unwrap();
        std::os::unix::fs::symlink(outside.join("target"), work.join("src/run.sh")).unwrap();
        assert!(write_atomic_resolved(&checked, b"redirected").is_err());
        assert!(!outside.join("target").exists());
    }
}
