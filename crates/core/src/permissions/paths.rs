//! Path policy: what is inside the workspace, and what is protected everywhere.
//!
//! Paths are resolved before any decision: made absolute, `..` removed, and symlinks followed for the part of
//! the path that exists, so a symlink inside the workspace that points outside counts as outside, and
//! `src/../../etc/passwd` is `/etc/passwd`.

use std::path::{Component, Path, PathBuf};

/// The directories the session works in: the working directory plus `--add-dir` directories.
#[derive(Clone, Debug)]
pub struct Workspace {
    roots: Vec<PathBuf>,
    home: Option<PathBuf>,
    config_dir: Option<PathBuf>,
}

impl Workspace {
    /// `cwd` first; roots are canonicalized when they exist.
    pub fn new(cwd: &Path, extra: &[PathBuf], home: Option<PathBuf>, config_dir: Option<PathBuf>) -> Workspace {
        let mut roots = vec![canonical_or_normalized(cwd)];
        for dir in extra {
            let dir = if dir.is_absolute() { dir.clone() } else { cwd.join(dir) };
            roots.push(canonical_or_normalized(&dir));
        }
        let home = home.map(|home| canonical_or_normalized(&home));
        let config_dir = config_dir.map(|dir| canonical_or_normalized(&dir));
        Workspace { roots, home, config_dir }
    }

    pub fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    /// The working directory.
    pub fn cwd(&self) -> &Path {
        &self.roots[0]
    }

    /// Resolves a path as the tools will use it (relative to the working directory, `~` expanded), following
    /// symlinks of the existing part.
    pub fn resolve(&self, path: &str) -> PathBuf {
        let expanded = match (path.strip_prefix("~/"), &self.home) {
            (Some(rest), Some(home)) => home.join(rest),
            _ if path == "~" => self.home.clone().unwrap_or_else(|| PathBuf::from(path)),
            _ => PathBuf::from(path),
        };
        let absolute = if expanded.is_absolute() { expanded } else { self.cwd().join(expanded) };
        resolve_existing_prefix(&normalize(&absolute))
    }

    /// Whether a resolved path is inside one of the roots.
    pub fn contains(&self, resolved: &Path) -> bool {
        self.roots.iter().any(|root| resolved.starts_with(root))
    }

    /// Why a resolved path is protected (writes always ask, unless a rule names it), or `None`.
    pub fn protected(&self, resolved: &Path) -> Option<Protection> {
        let lower: Vec<String> = resolved
            .components()
            .filter_map(|component| match component {
                Component::Normal(name) => Some(name.to_string_lossy().to_lowercase()),
                _ => None,
            })
            .collect();
        // Case-insensitive: on macOS `.GIT/config` is `.git/config`.
        if lower.iter().any(|name| name == ".git") {
            return Some(Protection::GitInternals);
        }
        let file = lower.last().map(String::as_str).unwrap_or_default();
        let parent = lower.len().checked_sub(2).and_then(|index| lower.get(index)).map(String::as_str);
        if matches!(parent, Some(".tandem") | Some(".claude")) && file.starts_with("settings") {
            return Some(Protection::Settings);
        }
        if let Some(config_dir) = &self.config_dir
            && let Ok(rest) = strip_prefix_ignore_case(resolved, config_dir)
        {
            let in_memory = rest.components().next().is_some_and(|first| first.as_os_str() == "memory");
            return Some(if in_memory { Protection::UserMemory } else { Protection::TandemConfig });
        }
        if let Some(home) = &self.home
            && let Ok(rest) = strip_prefix_ignore_case(resolved, home)
        {
            let rest: Vec<String> =
                rest.components().map(|component| component.as_os_str().to_string_lossy().to_lowercase()).collect();
            let first = rest.first().map(String::as_str).unwrap_or_default();
            let credentials =
                [".ssh", ".aws", ".gnupg", ".kube", ".docker", ".netrc", ".git-credentials", ".npmrc", ".pypirc"];
            if credentials.contains(&first) {
                return Some(Protection::Credentials);
            }
            let profiles =
                [".bashrc", ".bash_profile", ".bash_login", ".profile", ".zshrc", ".zprofile", ".zshenv", ".zlogin"];
            if rest.len() == 1 && profiles.contains(&first) {
                return Some(Protection::ShellProfile);
            }
            if rest.len() >= 3 && first == ".config" && rest[1] == "fish" {
                return Some(Protection::ShellProfile);
            }
            if first == ".config" && rest.get(1).map(String::as_str) == Some("tandem") {
                return Some(Protection::TandemConfig);
            }
        }
        None
    }
}

/// Why a path is protected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protection {
    GitInternals,
    Settings,
    Credentials,
    ShellProfile,
    TandemConfig,
    /// The user's memory: read freely (its index is in every prompt), written only when the user agrees.
    UserMemory,
}

impl Protection {
    pub fn reason(self) -> &'static str {
        match self {
            Protection::GitInternals => "it is inside a .git directory (change repositories with git commands)",
            Protection::Settings => "it is a permission settings file",
            Protection::Credentials => "it holds credentials",
            Protection::ShellProfile => "it is a shell profile",
            Protection::TandemConfig => "it is in tandem's configuration directory",
            Protection::UserMemory => "it is your memory, read by every session in every project",
        }
    }

    /// Reading it is sensitive too (secrets), not only writing.
    pub fn guards_reads(self) -> bool {
        matches!(self, Protection::Credentials | Protection::TandemConfig)
    }
}

/// Removes `.` and `..` lexically (the path is already absolute here).
pub fn normalize(path: &Path) -> PathBuf {
    crate::tools::fs_util::normalize(path)
}

/// Canonicalizes the longest existing ancestor (following symlinks) and appends the rest.
fn resolve_existing_prefix(path: &Path) -> PathBuf {
    let mut existing = path.to_path_buf();
    let mut rest: Vec<std::ffi::OsString> = Vec::new();
    loop {
        if let Ok(canonical) = existing.canonicalize() {
            let mut out = canonical;
            for part in rest.iter().rev() {
                out.push(part);
            }
            return out;
        }
        match (existing.file_name().map(|name| name.to_os_string()), existing.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                existing = parent.to_path_buf();
            }
            _ => return path.to_path_buf(),
        }
    }
}

fn canonical_or_normalized(path: &Path) -> PathBuf {
    path.canonicalize().unwrap_or_else(|_| normalize(path))
}

fn strip_prefix_ignore_case<'a>(path: &'a Path, prefix: &Path) -> Result<&'a Path, ()> {
    if let Ok(rest) = path.strip_prefix(prefix) {
        return Ok(rest);
    }
    let mut components = path.components();
    for expected in prefix.components() {
        match components.next() {
            Some(actual)
                if actual.as_os_str().to_string_lossy().to_lowercase()
                    == expected.as_os_str().to_string_lossy().to_lowercase() => {}
            _ => return Err(()),
        }
    }
    Ok(components.as_path())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup() -> (tempfile::TempDir, tempfile::TempDir, Workspace) {
        let work = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(work.path().join("src")).unwrap();
        let workspace = Workspace::new(work.path(), &[], Some(home.path().to_path_buf()), None);
        (work, home, workspace)
    }

    #[test]
    fn dot_dot_escapes_are_outside() {
        let (work, _home, workspace) = setup();
        assert!(workspace.contains(&workspace.resolve("src/main.rs")));
        assert!(workspace.contains(&workspace.resolve("./src/../README.md")));
        assert!(!workspace.contains(&workspace.resolve("src/../../etc/passwd")));
        assert!(!workspace.contains(&workspace.resolve("/etc/passwd")));
        let inside_absolute = work.path().join("src/new/deep/file.rs");
        assert!(workspace.contains(&workspace.resolve(inside_absolute.to_str().unwrap())));
    }

    #[test]
    fn symlinks_pointing_outside_are_outside() {
        let (work, _home, workspace) = setup();
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), work.path().join("link")).unwrap();
        assert!(!workspace.contains(&workspace.resolve("link/secret.txt")));
        std::os::unix::fs::symlink("/etc/hosts", work.path().join("hosts")).unwrap();
        assert!(!workspace.contains(&workspace.resolve("hosts")));
    }

    #[test]
    fn home_and_extra_roots() {
        let (work, home, _) = setup();
        let extra = tempfile::tempdir().unwrap();
        let workspace =
            Workspace::new(work.path(), &[extra.path().to_path_buf()], Some(home.path().to_path_buf()), None);
        assert!(workspace.contains(&workspace.resolve(extra.path().join("x").to_str().unwrap())));
        assert!(!workspace.contains(&workspace.resolve("~/notes.txt")));
        assert!(workspace.resolve("~/notes.txt").starts_with(home.path().canonicalize().unwrap()));
    }

    #[test]
    fn protected_paths() {
        let (_work, _home, workspace) = setup();
        let protected = |path: &str| workspace.protected(&workspace.resolve(path)).is_some();
        assert!(protected(".git/config"));
        assert!(protected(".GIT/hooks/pre-commit"), "case tricks");
        assert!(protected("sub/.git/HEAD"));
        assert!(protected(".tandem/settings.json"));
        assert!(protected(".tandem/settings.local.json"));
        assert!(protected(".claude/settings.json"));
        assert!(protected("~/.ssh/id_ed25519"));
        assert!(protected("~/.aws/credentials"));
        assert!(protected("~/.bashrc"));
        assert!(protected("~/.zshrc"));
        assert!(protected("~/.config/fish/config.fish"));
        assert!(protected("~/.config/tandem/config.toml"));
        assert!(!protected("src/main.rs"));
        assert!(!protected(".gitignore"));
        assert!(!protected(".tandem/memory/notes.md"));
    }

    #[test]
    fn very_long_paths_do_not_panic() {
        let (_work, _home, workspace) = setup();
        let long = "a/".repeat(5000) + "file";
        let resolved = workspace.resolve(&long);
        assert!(workspace.contains(&resolved));
    }
}
