//! Sandboxing of the commands the Bash tool runs, with Linux's Landlock.
//!
//! The permission analyser decides whether a command needs the user's approval; the sandbox makes its
//! assumptions true. A command that runs without a per-call approval runs confined to exactly what the decision
//! assumed ([`Grant`], turned into a policy by [`Confinement`]): judged read-only, it writes nowhere but its
//! temp dir; judged workspace-writing (`acceptEdits`), it writes only the workspace; allowed by the user's own
//! rule, it also writes the tool caches and keeps the network. In every case it can't read secrets, write
//! `.git`, `.tandem`, `.claude` or `.mcp.json`, signal processes outside its sandbox or connect to abstract Unix
//! sockets. Only the spawned child is restricted: [`apply`] builds the Landlock ruleset in tandem's process and
//! installs it in the child between `fork` and `exec`, so tandem itself keeps its rights (its own Write/Edit
//! tools go through the permission system instead).
//!
//! Modes of a [`SandboxPolicy`]:
//! - [`SandboxMode::ReadOnly`]: reads (but the denied paths), writes nowhere except harmless devices
//!   (`/dev/null`) and the session's private temp dir (each command's `TMPDIR`).
//! - [`SandboxMode::WorkspaceWrite`]: additionally writes inside the workspace (the command's working directory
//!   and [`SandboxPolicy::writable_roots`]) and [`SandboxPolicy::extra_write`], with each root's `.git`,
//!   `.tandem`, `.claude` and `.mcp.json` kept read-only. The system temp dirs are not writable: a workspace
//!   inside `/tmp` keeps its protection.
//!
//! With `network: false`, TCP `connect`/`bind` are denied too where the kernel can (Landlock ABI 4, Linux 6.7).
//!
//! # Read-only entries: the trade-off
//!
//! Landlock rules only ever add rights, and a right granted on a directory covers everything beneath it: there is
//! no "writable except `.git`". So a workspace root is never granted as a whole; instead every entry directly
//! inside it except the read-only ones (each file and directory, recursively writable) is. The price: the command
//! can't create, delete or rename entries *at the top level* of a root (`touch NEWFILE`, `mkdir target` when
//! `target/` doesn't exist yet, a first `Cargo.lock` or `node_modules`), nor rewrite a top-level file atomically
//! through a temp file next to it (`sed -i`, npm's `package.json` writes); everything inside existing top-level
//! directories, and existing top-level files written in place, stays writable. The list is taken each time a
//! command starts, so a top-level file created meanwhile (by the Write tool, or by the user) is writable from the
//! next command on. Top-level symlinks are not followed (a link to `.git` or to a path outside the workspace
//! must not become writable); writes through them to paths that are writable anyway still work.
//!
//! When the kernel has no Landlock, [`support`] says so and [`apply`] refuses (it never silently runs a command
//! unsandboxed); the front end decides whether the user allowed running without it.

// The one place with unsafe code (the workspace denies it elsewhere): `pre_exec` closures, which run in the
// child between fork and exec, for the Landlock restriction and the command's own session.
#![allow(unsafe_code)]

mod confinement;
mod denied_files;
#[cfg(test)]
mod denied_tests;
mod describe;
mod followed_reads;
mod gitlinks;
mod grants;
mod guard;
#[cfg(target_os = "linux")]
mod linux;
mod mend;
#[cfg(target_os = "linux")]
mod own_environment;
mod path_globs;
mod read_cache;
#[cfg(test)]
mod tests;
mod walk;

pub use confinement::{AskedPaths, Confinement, Grant, SandboxSettings, default_cache_paths};
pub use denied_files::{keep_in as keep_denied_files_in, note_where_denied_files_are, origin_of as denied_origin_of};
pub use describe::describe;
pub use followed_reads::{denied_directory_around, open_unasked, refuse_hidden_at, refuse_hidden_opened};
pub use gitlinks::{pointed_git_dir, pointed_repositories, submodule_repositories, submodules_of};
use grants::Grants;
#[cfg(test)]
use grants::{canonical_unique, workspace_grants};
pub use guard::{Guard, History, NestedSettings};
#[cfg(target_os = "linux")]
pub use own_environment::hide as hide_own_environment;
pub(crate) use path_globs::links_inside;
pub use path_globs::{PathGlob, is_pattern, split_literal};
pub(crate) use walk::Seen;

/// Finds the files the session's sandbox denies to reads before any command runs (in the background; the Read
/// tool waits for it), so that the tools refuse them as the sandbox does from the first call.
pub fn find_denied_files(confinement: &Confinement, cwd: &Path) {
    if confinement.enabled {
        // What ask rules name, and what may not be written, too: the file tools then know a file found there under
        // any name (a Write of `data/lock.txt` where `Edit(**/*.lock)` and `yarn.lock -> data/lock.txt`). A file
        // found only where writes are denied is not denied to reads for that: each policy denies by its own paths.
        let mut policy = confinement.base.clone();
        let asked = &confinement.asked;
        policy.deny_read.extend(asked.read.iter().chain(&asked.write).chain(&confinement.base.deny_write).cloned());
        let globs = asked.read_globs.iter().chain(&asked.write_globs).chain(&confinement.base.deny_write_globs);
        policy.deny_read_globs.extend(globs.cloned());
        grants::search_at_start(policy, cwd.to_path_buf());
    }
}

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// How much a sandboxed command may write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SandboxMode {
    /// No sandbox: commands run with tandem's rights.
    Off,
    /// Reads everywhere, no writes (except `/dev/null` and the terminal).
    ReadOnly,
    /// Writes in the workspace (not its `.git`) and the temp dirs.
    WorkspaceWrite,
}

impl SandboxMode {
    /// Parses the `--sandbox` / config spelling: `off`, `read-only` or `workspace-write`.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "off" => Some(SandboxMode::Off),
            "read-only" => Some(SandboxMode::ReadOnly),
            "workspace-write" => Some(SandboxMode::WorkspaceWrite),
            _ => None,
        }
    }

    /// The spelling [`SandboxMode::parse`] accepts.
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxMode::Off => "off",
            SandboxMode::ReadOnly => "read-only",
            SandboxMode::WorkspaceWrite => "workspace-write",
        }
    }
}

impl fmt::Display for SandboxMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a sandboxed command may do.
#[derive(Clone, Debug)]
pub struct SandboxPolicy {
    pub mode: SandboxMode,
    /// Directories writable in [`SandboxMode::WorkspaceWrite`] besides the command's working directory, which is
    /// always writable in that mode (listing it here too is harmless). Each root's own `.git` stays read-only.
    /// Ignored in the other modes.
    pub writable_roots: Vec<PathBuf>,
    /// Whether TCP connections and listening sockets are allowed. `false` cuts them off where the kernel
    /// supports it (Landlock ABI 4); see [`support`].
    pub network: bool,
    /// The session's private temp dir (removed when the last clone is dropped): in
    /// [`SandboxMode::WorkspaceWrite`] it is writable instead of the system temp dirs, and each command's
    /// `TMPDIR` is a fresh directory inside it.
    pub temp_dir: Option<std::sync::Arc<tempfile::TempDir>>,
    /// Paths the command may not read (nor list beneath them): secrets, tandem's own files, what deny rules and
    /// `sandbox.filesystem.denyRead` name. Empty: everything is readable.
    pub deny_read: Vec<PathBuf>,
    /// Patterns of paths the command may not read (deny rules with a wildcard, or a name at any depth): what they
    /// match when the command starts is denied like [`SandboxPolicy::deny_read`].
    pub deny_read_globs: Vec<PathGlob>,
    /// Paths readable again inside a denied one (an allow rule naming `~/.ssh/known_hosts`).
    pub allow_read: Vec<PathBuf>,
    /// Writable besides the workspace in [`SandboxMode::WorkspaceWrite`]: tool caches, `sandbox.filesystem.allowWrite`.
    pub extra_write: Vec<PathBuf>,
    /// Never writable, wherever they are: carved out of the workspace and the extra paths.
    pub deny_write: Vec<PathBuf>,
    /// Patterns of paths never writable: what they match when the command starts is carved out too.
    pub deny_write_globs: Vec<PathGlob>,
    /// In [`SandboxMode::WorkspaceWrite`]: the workspace is granted whole and its protected entries (`.git`
    /// configuration and hooks, `.claude`, `.tandem`, `.mcp.json`) are put back when the command ends
    /// ([`Guard`]), instead of being kept read-only by splitting the workspace (which forbids creating
    /// anything at its top). Only for a command whose end tandem waits for: never a background one.
    pub restore_protected: bool,
}

impl SandboxPolicy {
    /// A policy with a private temp dir for the session (under the system temp dir, mode 700), removed when the
    /// session is dropped or, since the front ends end without dropping it (and a signal runs no destructor),
    /// by the shutdown every front end runs on its way out.
    pub fn with_private_temp(mode: SandboxMode, writable_roots: Vec<PathBuf>, network: bool) -> io::Result<Self> {
        let mut builder = tempfile::Builder::new();
        builder.prefix("tandem-session-");
        #[cfg(unix)]
        builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700));
        let temp = builder.tempdir()?;
        crate::fs_util::removed_at_exit::remove_at_exit(temp.path().to_path_buf());
        Ok(SandboxPolicy {
            mode,
            writable_roots,
            network,
            temp_dir: Some(std::sync::Arc::new(temp)),
            deny_read: Vec::new(),
            deny_read_globs: Vec::new(),
            allow_read: Vec::new(),
            extra_write: Vec::new(),
            deny_write: Vec::new(),
            deny_write_globs: Vec::new(),
            restore_protected: false,
        })
    }

    /// The workspace roots a command in `cwd` may write, canonical: `cwd` and [`SandboxPolicy::writable_roots`].
    pub fn roots(&self, cwd: Option<&Path>) -> Vec<PathBuf> {
        grants::canonical_unique(cwd.into_iter().chain(self.writable_roots.iter().map(PathBuf::as_path)))
    }

    /// This policy for a command that outlives its call: protected entries kept read-only, since nothing
    /// waits for its end to put them back.
    pub fn for_background(&self) -> SandboxPolicy {
        SandboxPolicy { restore_protected: false, ..self.clone() }
    }

    /// Where the session's commands get their temp dirs: the private one, or the system's.
    pub fn temp_root(&self) -> Option<&Path> {
        self.temp_dir.as_deref().map(tempfile::TempDir::path)
    }
}

/// Whether the running kernel can enforce a [`SandboxPolicy`], for the notice a front end prints at start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Support {
    /// Everything the sandbox uses is enforced.
    Full { abi: u32 },
    /// Landlock works, but an older ABI: file writes are restricted, `missing` says what isn't.
    Partial { abi: u32, missing: String },
    /// No Landlock (the reason says why): commands can't be sandboxed.
    Unavailable(String),
}

/// What the running kernel supports (probed once, then cached: the kernel doesn't change under us).
pub fn support() -> Support {
    #[cfg(target_os = "linux")]
    {
        static SUPPORT: std::sync::OnceLock<Support> = std::sync::OnceLock::new();
        SUPPORT.get_or_init(linux::probe).clone()
    }
    #[cfg(not(target_os = "linux"))]
    {
        Support::Unavailable("the sandbox uses Landlock, which only Linux has".to_string())
    }
}

/// A file's content, only if it is a regular file of at most `most` bytes. The open never waits and, unless
/// `follow_links`, doesn't follow a link at the last component: a command can leave a named pipe where tandem
/// reads next (`.git/index`, a rebase's todo, a config), which would block tandem for good, or a link to
/// `/dev/zero`, which never ends.
pub(crate) fn read_regular_file(path: &Path, most: u64, follow_links: bool) -> io::Result<Vec<u8>> {
    use std::io::Read;
    let file = open_regular(path, follow_links)?;
    if file.metadata()?.len() > most {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "too big"));
    }
    let mut content = Vec::new();
    file.take(most).read_to_end(&mut content)?;
    Ok(content)
}

/// A file opened for reading only if it is a regular file, without waiting (see [`read_regular_file`]).
pub(crate) fn open_regular(path: &Path, follow_links: bool) -> io::Result<std::fs::File> {
    use rustix::fs::{Mode, OFlags};
    let mut flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
    if !follow_links {
        flags |= OFlags::NOFOLLOW;
    }
    let fd = rustix::fs::open(path, flags, Mode::empty())?;
    let stat = rustix::fs::fstat(&fd)?;
    if rustix::fs::FileType::from_raw_mode(stat.st_mode) != rustix::fs::FileType::RegularFile {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "not a regular file"));
    }
    Ok(std::fs::File::from(fd))
}

/// Closes tandem's own process to the commands it runs: not dumpable, so another process of the same user can't
/// read its memory or environment (where the API key is) through `/proc` or attach to it; and every descriptor
/// tandem inherited from whatever started it is closed on exec, so no command gets one (only stdin, stdout and
/// stderr are passed on). And a subreaper: a process that escapes a command (`setsid`, a double fork) becomes
/// tandem's child, not init's, so that it is found when the command ends (see `tools::bash::running`). Called
/// once, first thing, by the binary.
pub fn harden_self() {
    #[cfg(target_os = "linux")]
    let _ = rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::NotDumpable);
    #[cfg(target_os = "linux")]
    let _ = rustix::process::set_child_subreaper(Some(rustix::process::getpid()));
    #[cfg(unix)]
    close_inherited_descriptors_on_exec();
}

/// Marks every open descriptor above stderr close-on-exec. Descriptors tandem opens itself already are (Rust
/// opens everything with `O_CLOEXEC`); this is for those it inherited.
#[cfg(unix)]
fn close_inherited_descriptors_on_exec() {
    let Ok(entries) = std::fs::read_dir("/proc/self/fd").or_else(|_| std::fs::read_dir("/dev/fd")) else { return };
    let fds: Vec<i32> = entries.flatten().filter_map(|entry| entry.file_name().to_str()?.parse().ok()).collect();
    for fd in fds.into_iter().filter(|&fd| fd > 2) {
        // SAFETY: the descriptor is only looked at and flagged, never closed or taken over; one that closed
        // meanwhile (the listing's own) answers EBADF, which is ignored.
        let fd = unsafe { rustix::fd::BorrowedFd::borrow_raw(fd) };
        if let Ok(flags) = rustix::io::fcntl_getfd(fd) {
            let _ = rustix::io::fcntl_setfd(fd, flags | rustix::io::FdFlags::CLOEXEC);
        }
    }
}

/// Prepares the command so that, in the child, the policy is enforced before exec. The ruleset is built here,
/// in the parent (opening the paths it grants), so the child only makes two system calls and allocates nothing.
///
/// Makes the command the leader of a session of its own: a new process group (which a timeout or an interrupt
/// kills whole) and no controlling terminal, so it can't open /dev/tty to draw over tandem's screen, fake a
/// dialog or set the clipboard with escape sequences.
pub fn own_session(command: &mut tokio::process::Command) {
    #[cfg(unix)]
    // SAFETY: `setsid` is async-signal-safe and the closure allocates nothing, as `pre_exec` requires.
    unsafe {
        command.pre_exec(|| rustix::process::setsid().map(drop).map_err(io::Error::from));
    }
}

/// Errors when the policy can't be enforced (no Landlock, a ruleset the kernel rejects): the caller must not run
/// the command unsandboxed behind the user's back. [`SandboxMode::Off`] leaves the command untouched.
pub fn apply(command: &mut tokio::process::Command, policy: &SandboxPolicy) -> io::Result<()> {
    if policy.mode == SandboxMode::Off {
        return Ok(());
    }
    #[cfg(target_os = "linux")]
    {
        let cwd = match command.as_std().get_current_dir() {
            Some(dir) => Some(dir.to_path_buf()),
            None => std::env::current_dir().ok(),
        };
        let grants = Grants::for_policy(policy, cwd.as_deref());
        linux::apply(command, policy, &grants)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = command;
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            format!("sandbox {} needs Landlock, which only Linux has", policy.mode),
        ))
    }
}

/// The note appended to a failed sandboxed command's result when it looks blocked, so the model knows why and
/// asks the user instead of retrying other ways. Empty for [`SandboxMode::Off`].
pub fn blocked_note(policy: &SandboxPolicy) -> String {
    let what = match policy.mode {
        SandboxMode::Off => return String::new(),
        SandboxMode::ReadOnly => "which blocks all file writes but those in its private temp dir ($TMPDIR)",
        SandboxMode::WorkspaceWrite => {
            "which blocks writes outside the workspace and its private temp dir ($TMPDIR), and to .git, .tandem, \
             .claude and .mcp.json"
        }
    };
    let mut note = format!(
        "Note: this command ran in tandem's sandbox ({}), {what}; if the write is needed, run it again with \
         dangerouslyDisableSandbox: true, which asks the user to approve running it without the sandbox.",
        policy.mode
    );
    if policy.mode == SandboxMode::WorkspaceWrite {
        note.push_str(TOP_LEVEL_HINT);
    }
    if !policy.network {
        note.push_str(" Network connections (TCP) are blocked too.");
    }
    if !policy.deny_read.is_empty() {
        note.push_str(" Credentials and tandem's own files can't be read in the sandbox.");
    }
    note
}

/// Keeping `.git` read-only freezes the entries of a repository's top directory (see the module docs); saying so
/// points the model at the way around it that needs no approval.
const TOP_LEVEL_HINT: &str = " Files and directories directly in the workspace's top directory can't be created, \
     removed or renamed in the sandbox (that is what keeps .git and the settings read-only; it also breaks `sed -i` \
     there): use the Write and Edit tools for those.";

/// Error texts that denials by the sandbox produce (Landlock answers `EACCES`, and `EXDEV` for renames it can't
/// allow; tools print those their own ways).
const BLOCKED_MARKERS: &[&str] = &[
    "permission denied",
    "read-only file system",
    "operation not permitted",
    "invalid cross-device link",
    "eacces",
    "eperm",
    "erofs",
    "permissionerror",
    "access denied",
];

/// What a denied TCP connection looks like to tools that hide the `EACCES` (curl says only "Couldn't connect").
const OFFLINE_MARKERS: &[&str] =
    &["couldn't connect", "could not connect", "failed to connect", "network is unreachable"];

/// The [`blocked_note`] to append to a failed command's `output`, when the policy sandboxed it and the output
/// carries a permission error. `None` otherwise (the note on every failure would be noise).
pub fn note_for(policy: &SandboxPolicy, output: &str) -> Option<String> {
    if policy.mode == SandboxMode::Off {
        return None;
    }
    let lower = output.to_lowercase();
    let blocked = BLOCKED_MARKERS.iter().any(|marker| lower.contains(marker))
        || !policy.network && OFFLINE_MARKERS.iter().any(|marker| lower.contains(marker));
    blocked.then(|| blocked_note(policy))
}
