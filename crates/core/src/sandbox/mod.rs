//! Sandboxing of the commands the Bash tool runs, with Linux's Landlock.
//!
//! The model's shell commands run with tandem's own rights; the sandbox narrows what a command (and everything
//! it starts) may write, so a confused or prompt-injected command can't damage files outside the workspace or
//! rewrite the repository's history. Only the spawned child is restricted: [`apply`] builds the Landlock ruleset
//! in tandem's process and installs it in the child between `fork` and `exec`, so tandem itself keeps its
//! rights (its own Write/Edit tools go through the permission system instead).
//!
//! Modes:
//! - [`SandboxMode::ReadOnly`]: reads everywhere, writes nowhere except harmless devices (`/dev/null`, the
//!   terminal).
//! - [`SandboxMode::WorkspaceWrite`]: additionally writes inside the workspace (the command's working directory
//!   and [`SandboxPolicy::writable_roots`]) and the session's private temp dir (each command's `TMPDIR`), with
//!   each root's `.git`, `.tandem`, `.claude` and `.mcp.json` kept read-only. The system temp dirs are not
//!   writable: a workspace inside `/tmp` keeps its protection.
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

#[cfg(target_os = "linux")]
mod linux;
#[cfg(test)]
mod tests;

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
}

impl SandboxPolicy {
    /// A policy with a private temp dir for the session (under the system temp dir).
    pub fn with_private_temp(mode: SandboxMode, writable_roots: Vec<PathBuf>, network: bool) -> io::Result<Self> {
        let temp = tempfile::Builder::new().prefix("tandem-session-").tempdir()?;
        Ok(SandboxPolicy { mode, writable_roots, network, temp_dir: Some(std::sync::Arc::new(temp)) })
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
        SandboxMode::ReadOnly => "which blocks all file writes",
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

/// Devices a normal command writes to whatever the mode: discarding output, the terminal.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
/// Not the terminals (`/dev/tty`, `/dev/pts`): a command has none (its output is a pipe), and writing to the
/// user's could draw over tandem's screen.
const DEVICES: &[&str] = &["/dev/null", "/dev/zero", "/dev/full"];

/// The paths a policy makes writable, worked out (with the file system) before the fork.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
#[derive(Debug, Default, PartialEq, Eq)]
struct Grants {
    /// Files and directories writable, with everything beneath them.
    write: Vec<PathBuf>,
}

#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
impl Grants {
    fn for_policy(policy: &SandboxPolicy, cwd: Option<&Path>) -> Grants {
        let mut write: Vec<PathBuf> = DEVICES.iter().map(PathBuf::from).collect();
        if policy.mode == SandboxMode::WorkspaceWrite {
            let roots = canonical_unique(cwd.into_iter().chain(policy.writable_roots.iter().map(PathBuf::as_path)));
            write.extend(workspace_grants(&roots));
            // The session's own temp dir, never the system's: a workspace inside /tmp keeps its protection, and
            // nothing lands in other programs' temp files.
            write.extend(canonical_unique(policy.temp_root()));
        }
        Grants { write }
    }
}

/// The paths, canonical (so they compare with what `read_dir` lists), existing, without duplicates.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn canonical_unique<'a>(paths: impl IntoIterator<Item = &'a Path>) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for path in paths {
        if let Ok(path) = std::fs::canonicalize(path)
            && !out.contains(&path)
        {
            out.push(path);
        }
    }
    out
}

/// Entries of a workspace root that stay read-only in the sandbox, whether they exist or not: the repository and
/// the configuration that decides what tandem (or Claude Code) may do in later sessions.
const READ_ONLY_ENTRIES: &[&str] = &[".git", ".tandem", ".claude", ".mcp.json"];

/// What to grant so that the `roots` are writable except each root's [`READ_ONLY_ENTRIES`]: every root is split
/// around them (see the module docs for the trade-off).
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn workspace_grants(roots: &[PathBuf]) -> Vec<PathBuf> {
    let mut protected: Vec<PathBuf> =
        roots.iter().flat_map(|root| READ_ONLY_ENTRIES.iter().map(move |name| root.join(name))).collect();
    for root in roots {
        let mut budget = MAX_NESTED_SCAN;
        find_nested_read_only(root, 0, &mut budget, &mut protected);
    }
    let mut out = Vec::new();
    for root in roots {
        grant_around(root, &protected, &mut out);
    }
    out
}

/// Entries looked at, at most, per root when looking for nested read-only entries (`sub/.claude`, a
/// submodule's `.git`); deeper or bigger trees keep only the root's own protected.
const MAX_NESTED_SCAN: usize = 50_000;
/// How deep nested read-only entries are looked for.
const MAX_NESTED_DEPTH: usize = 6;

/// Adds the read-only entries found below `dir` (not following links, not entering `.git`, `node_modules` or
/// `target`) to `out`.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn find_nested_read_only(dir: &Path, depth: usize, budget: &mut usize, out: &mut Vec<PathBuf>) {
    if depth >= MAX_NESTED_DEPTH {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        if *budget == 0 {
            return;
        }
        *budget -= 1;
        let name = entry.file_name();
        let path = entry.path();
        if READ_ONLY_ENTRIES.iter().any(|read_only| name == *read_only) {
            if depth > 0 {
                out.push(path);
            }
            continue;
        }
        let skip = name == "node_modules" || name == "target";
        if !skip && entry.file_type().is_ok_and(|kind| kind.is_dir()) {
            find_nested_read_only(&path, depth + 1, budget, out);
        }
    }
}

/// Grants `path` whole when no protected path lies beneath it; otherwise its entries, recursively, leaving out the
/// protected ones and symlinks (a link may lead into a protected path or out of the workspace). Only directories
/// above a protected path are split, so this descends at most as deep as the protected paths are.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn grant_around(path: &Path, protected: &[PathBuf], out: &mut Vec<PathBuf>) {
    if protected.iter().any(|p| p == path) {
        return;
    }
    if !protected.iter().any(|p| p.starts_with(path)) {
        out.push(path.to_path_buf());
        return;
    }
    let Ok(entries) = std::fs::read_dir(path) else { return };
    for entry in entries.flatten() {
        // A file with another hard link would make that other name writable too (Landlock grants the inode).
        let shared_inode = {
            use std::os::unix::fs::MetadataExt;
            entry.metadata().is_ok_and(|meta| meta.is_file() && meta.nlink() > 1)
        };
        if entry.file_type().is_ok_and(|kind| !kind.is_symlink()) && !shared_inode {
            grant_around(&entry.path(), protected, out);
        }
    }
}
