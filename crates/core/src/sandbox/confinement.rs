//! Which sandbox one Bash call runs in: the session's sandbox settings, and why the call may run at all.
//!
//! The permission analyser decides whether a call needs the user; its reason for not asking is the call's
//! [`Grant`], and [`Confinement::policy_for`] turns it into exactly the rights that reason assumed. A call the
//! user approved in the dialog saw the exact command, so it runs as the settings say for approved commands
//! (unsandboxed unless `--sandbox` says otherwise).

use std::path::PathBuf;

use super::{SandboxMode, SandboxPolicy};

/// Why a Bash call runs without (or with) a per-call approval.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Grant {
    /// tandem judged every part of the line read-only: no writes but its temp dir, no network.
    ReadOnly,
    /// tandem judged its writes to stay inside the workspace (`acceptEdits`): no network.
    WorkspaceWrite,
    /// The user's own configuration allows it (an allow rule, an "always" answer, a hook, `bypassPermissions`,
    /// `autoAllowBashIfSandboxed`): workspace and cache writes, the network.
    UserRule,
    /// The user approved this exact call (the dialog, the SDK host's `canUseTool`).
    Approved,
    /// A command the user listed in `sandbox.excludedCommands` and allowed with a rule: outside the sandbox.
    Excluded,
}

/// The `sandbox` key of the settings files, merged. Keys that widen what a command may do are taken from the
/// user's own files only (a repository could commit the others); see `permissions::settings`.
#[derive(Clone, Debug)]
pub struct SandboxSettings {
    /// `sandbox.enabled`; `None` is tandem's default, on where the kernel can enforce it.
    pub enabled: Option<bool>,
    pub fail_if_unavailable: bool,
    pub auto_allow_bash_if_sandboxed: bool,
    /// Bash rule specifiers (`docker`, `docker compose:*`) of commands that never run sandboxed.
    pub excluded_commands: Vec<String>,
    /// Whether `dangerouslyDisableSandbox` may be asked for at all.
    pub allow_unsandboxed_commands: bool,
    pub allow_read: Vec<PathBuf>,
    pub deny_read: Vec<PathBuf>,
    pub allow_write: Vec<PathBuf>,
    pub deny_write: Vec<PathBuf>,
}

impl Default for SandboxSettings {
    fn default() -> Self {
        SandboxSettings {
            enabled: None,
            fail_if_unavailable: false,
            auto_allow_bash_if_sandboxed: false,
            excluded_commands: Vec::new(),
            allow_unsandboxed_commands: true,
            allow_read: Vec::new(),
            deny_read: Vec::new(),
            allow_write: Vec::new(),
            deny_write: Vec::new(),
        }
    }
}

/// The session's sandbox: what each [`Grant`] runs in.
#[derive(Clone, Debug)]
pub struct Confinement {
    /// Calls that run without a per-call approval are sandboxed (`sandbox.enabled`, the kernel permitting).
    pub enabled: bool,
    /// What an approved call runs in: `--sandbox` (default [`SandboxMode::Off`]). `ReadOnly` caps every grant.
    pub approved: SandboxMode,
    /// Whether approved calls under `--sandbox` keep the network (`sandbox_network` in config.toml).
    pub approved_network: bool,
    /// The parts every policy shares: workspace roots, temp dir, denied reads and writes. Its mode and network
    /// are set per grant.
    pub base: SandboxPolicy,
    /// Writable by commands the user's rules allow: tool caches and `sandbox.filesystem.allowWrite`.
    pub rule_write: Vec<PathBuf>,
    /// What the user's ask rules name: only a call the user approved may reach it.
    pub asked: AskedPaths,
}

/// The paths the user's `ask` rules name (`Read(secrets/**)`, `Edit(locked/**)`). Reading them needs the user's
/// yes, so every grant but [`Grant::Approved`] is denied the read ones: the analyser asks about a command that names
/// them, this holds one that reaches them without naming them (`grep -r .`, a build script). The write ones are
/// asked about when named, and known to the file tools by every name (see `find_denied_files`); the sandbox does
/// not hold them (see [`Confinement::policy_for`]).
#[derive(Clone, Debug, Default)]
pub struct AskedPaths {
    pub read: Vec<PathBuf>,
    pub read_globs: Vec<super::PathGlob>,
    pub write: Vec<PathBuf>,
    pub write_globs: Vec<super::PathGlob>,
}

impl Confinement {
    /// The policy a call with `grant` runs under; `None` runs it with tandem's rights.
    pub fn policy_for(&self, grant: Grant) -> Option<SandboxPolicy> {
        let approved = (self.approved != SandboxMode::Off).then(|| {
            let mut policy = self.with(self.approved, self.approved_network);
            policy.extra_write = self.rule_write.clone();
            policy
        });
        if !self.enabled {
            return approved;
        }
        let mut policy = match grant {
            Grant::Approved => return approved,
            Grant::Excluded => return None,
            Grant::ReadOnly => self.with(SandboxMode::ReadOnly, false),
            Grant::WorkspaceWrite => {
                SandboxPolicy { restore_protected: true, ..self.with(SandboxMode::WorkspaceWrite, false) }
            }
            Grant::UserRule => SandboxPolicy {
                restore_protected: true,
                extra_write: self.rule_write.clone(),
                ..self.with(SandboxMode::WorkspaceWrite, true)
            },
        };
        // Only reads: a write denied inside the workspace costs every directory above it the right to create
        // entries (Landlock grants by directory), so an ask rule for `Edit(Cargo.lock)` would stop acceptEdits'
        // `cp a b` at the top. Writes an Edit ask rule covers are asked about when a command names them.
        policy.deny_read.extend(self.asked.read.iter().cloned());
        policy.deny_read_globs.extend(self.asked.read_globs.iter().cloned());
        // `--sandbox read-only` holds every command to reading, whatever allowed it.
        Some(if self.approved == SandboxMode::ReadOnly {
            SandboxPolicy { mode: SandboxMode::ReadOnly, ..policy }
        } else {
            policy
        })
    }

    fn with(&self, mode: SandboxMode, network: bool) -> SandboxPolicy {
        let mut policy = self.base.clone();
        policy.mode = mode;
        policy.network = network;
        policy
    }
}

/// Where tools keep their caches: writable by commands the user's rules allow (`cargo test`, `npm test`), so an
/// allowed build works in the sandbox. Never their configuration or binaries (`~/.cargo/bin`, `~/.npmrc`).
pub fn default_cache_paths(home: &std::path::Path) -> Vec<PathBuf> {
    [
        ".cargo/registry",
        ".cargo/git",
        ".cargo/.package-cache",
        ".cargo/.package-cache-mutate",
        ".cargo/.global-cache",
        ".npm",
        ".cache",
        ".yarn/cache",
        ".local/share/pnpm/store",
        ".gradle/caches",
        ".m2/repository",
        "go/pkg/mod",
    ]
    .iter()
    .map(|rest| home.join(rest))
    .collect()
}
