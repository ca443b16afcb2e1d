//! Personal settings files (`settings.local.json`) that git tracks. They are meant to stay on one machine, so a
//! tracked one was committed — perhaps by someone else, perhaps by a repository written to attack its readers.
//! What in it narrows permissions (deny and ask rules, `plan`) applies at once; what widens them (allow rules,
//! `defaultMode: acceptEdits`, `additionalDirectories`) waits until the user trusts the file as it is (a digest
//! of its text, kept in the user's config directory by [`crate::trust`]).

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::{RuleKind, Settings, SourcedRule};
use crate::permissions::PermissionMode;
use crate::trust::{self, Store};

/// What a tracked personal settings file would widen, held until the user trusts it.
#[derive(Clone, Debug)]
pub struct HeldSettings {
    pub file: PathBuf,
    /// The digest of the file's text when it was read: trust covers exactly that text.
    pub fingerprint: String,
    pub allow: Vec<SourcedRule>,
    pub default_mode: Option<PermissionMode>,
    pub additional_directories: Vec<PathBuf>,
}

impl HeldSettings {
    fn is_empty(&self) -> bool {
        self.allow.is_empty() && self.default_mode.is_none() && self.additional_directories.is_empty()
    }

    /// What is held, for the user: `allow Bash(curl:*), Edit; defaultMode acceptEdits; additionalDirectories ..`.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if !self.allow.is_empty() {
            let rules: Vec<&str> = self.allow.iter().map(|rule| rule.text.as_str()).collect();
            parts.push(format!("allow {}", rules.join(", ")));
        }
        if let Some(mode) = self.default_mode {
            parts.push(format!("defaultMode {}", mode.as_str()));
        }
        if !self.additional_directories.is_empty() {
            let dirs: Vec<String> = self.additional_directories.iter().map(|dir| dir.display().to_string()).collect();
            parts.push(format!("additionalDirectories {}", dirs.join(", ")));
        }
        parts.join("; ")
    }

    /// Remembers that the user trusts this file as it is; the trust file written.
    pub fn trust(&self, config_dir: &Path) -> std::io::Result<PathBuf> {
        trust::trust(config_dir, Store::Settings, &self.file, &self.fingerprint)
    }
}

/// How much of [`Settings`] there was before a file was read, so what that file added can be taken back out.
pub(super) struct Mark {
    rules: usize,
    default_mode: Option<PermissionMode>,
    directories: usize,
}

impl Settings {
    pub(super) fn mark(&self) -> Mark {
        Mark {
            rules: self.rules.len(),
            default_mode: self.default_mode,
            directories: self.additional_directories.len(),
        }
    }

    /// Takes back what `file` (read since `mark`, with text digest `fingerprint`) widened, when git tracks it and
    /// the user has not trusted it as it is.
    pub(super) fn hold_if_tracked(&mut self, config_dir: &Path, file: &Path, fingerprint: String, mark: Mark) {
        let tracked = git_tracks(&self.project_root, file).unwrap_or_else(|why| {
            self.problem(file, format!("git could not say whether it tracks this file ({why}); treated as tracked"));
            true
        });
        if !tracked || trust::is_trusted(config_dir, Store::Settings, file, &fingerprint) {
            return;
        }
        let (allow, kept): (Vec<SourcedRule>, Vec<SourcedRule>) =
            self.rules.split_off(mark.rules).into_iter().partition(|rule| rule.kind == RuleKind::Allow);
        self.rules.extend(kept);
        let widening_mode = self.default_mode != mark.default_mode
            && matches!(self.default_mode, Some(PermissionMode::AcceptEdits | PermissionMode::BypassPermissions));
        let default_mode =
            if widening_mode { std::mem::replace(&mut self.default_mode, mark.default_mode) } else { None };
        let additional_directories = self.additional_directories.split_off(mark.directories);
        let held = HeldSettings { file: file.to_path_buf(), fingerprint, allow, default_mode, additional_directories };
        if !held.is_empty() {
            self.held.push(held);
        }
    }
}

/// The digest trust is keyed on.
pub(super) fn fingerprint(text: &str) -> String {
    Sha256::digest(text.as_bytes()).iter().map(|byte| format!("{byte:02x}")).collect()
}

/// Whether git tracks `file` in the repository at `root` (`false` outside a repository): in its index, or inside
/// one of its submodules (whose files came with the repository as surely, but which the superproject's
/// `ls-files` doesn't list). Asked of the git tandem runs itself (`safe_git`), which no repository configuration
/// makes run a program.
fn git_tracks(root: &Path, file: &Path) -> Result<bool, String> {
    if reached_through_a_link(root, file) {
        return Ok(true);
    }
    if !root.join(".git").exists() {
        return Ok(false);
    }
    let modules = crate::sandbox::submodule_repositories(root);
    if modules.iter().filter_map(|git| git.parent()).any(|module| file.starts_with(module)) {
        return Ok(true);
    }
    let relative = file.strip_prefix(root).map_err(|_| "it is outside the repository".to_owned())?;
    let relative = relative.to_string_lossy();
    let args = ["--literal-pathspecs", "ls-files", "-z", "--cached", "--", relative.as_ref()];
    let output = crate::safe_git::output(root, &args, None, 1 << 20, std::time::Duration::from_secs(10))
        .ok_or_else(|| "git failed or could not be run".to_owned())?;
    Ok(!output.is_empty())
}

/// Whether `file` lies behind a symlink below `root` (`.claude` → `cfg`, both committed): git's index holds the
/// link and `cfg/settings.local.json`, never the path asked about, so such a file counts as the repository's.
fn reached_through_a_link(root: &Path, file: &Path) -> bool {
    let Ok(relative) = file.strip_prefix(root) else { return false };
    let mut walked = root.to_path_buf();
    relative.components().any(|component| {
        walked.push(component);
        std::fs::symlink_metadata(&walked).is_ok_and(|meta| meta.file_type().is_symlink())
    })
}
