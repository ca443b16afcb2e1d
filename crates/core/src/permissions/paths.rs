//! Path policy: what is inside the workspace, and what is protected everywhere.
//!
//! Paths are resolved as the kernel resolves them ([`resolve_like_kernel`]): component by component, each
//! symlink that exists at the time of the check followed before the next component (so `link/../x` is judged
//! where the kernel goes, not where the text points). A path that can't be resolved with certainty — a
//! dangling symlink, a loop, an unreadable directory, `/proc` — is `None` and counts as outside the workspace.

use std::path::{Component, Path, PathBuf};

/// The directories the session works in: the working directory plus `--add-dir` directories.
#[derive(Clone, Debug)]
pub struct Workspace {
    roots: Vec<PathBuf>,
    home: Option<PathBuf>,
    config_dir: Option<PathBuf>,
    /// tandem's data directory (every project's transcripts): reading it is denied, except `own_data`.
    data_dir: Option<PathBuf>,
    /// The current session's own files inside the data directory (saved command output), readable.
    own_data: Vec<PathBuf>,
    /// Repository directories that a root's `.git` *file* points to (worktrees, `--separate-git-dir`): as
    /// protected as a `.git` directory, whatever their name.
    git_dirs: Vec<PathBuf>,
    /// Claude Code's user directory (`$CLAUDE_CONFIG_DIR`, else `~/.claude`) and its `.claude.json`, which
    /// tandem reads at start (settings, MCP servers, guidelines, agents, skills, commands).
    claude_dir: Option<PathBuf>,
    claude_json: Option<PathBuf>,
    /// The account's home in the password database, where it is not `home`: ssh reads its `.ssh` whatever
    /// `$HOME` says, so its secrets and profiles are protected too.
    account_home: Option<PathBuf>,
    /// Credential stores and profiles that tandem's environment moved out of the home directory
    /// (`XDG_CONFIG_HOME`, `GH_CONFIG_DIR`, `GNUPGHOME`, …): the commands tandem starts see the same variables.
    relocated: Relocated,
    /// The homes' other names through this system's mounts (a bind mount of the home): guarded as the homes are.
    home_aliases: Vec<PathBuf>,
    /// [`Workspace::linked_home_entries`], resolved once: every path judgment looks at them, and a link at one of
    /// those names can't be made unasked (the name itself is guarded).
    linked_entries: std::sync::OnceLock<Vec<(PathBuf, Protection)>>,
}

/// Where the environment puts what [`HOME_SECRETS`] and [`HOME_PROFILES`] name at their usual places.
#[derive(Clone, Debug, Default)]
struct Relocated {
    secrets: Vec<PathBuf>,
    profiles: Vec<PathBuf>,
    /// `PATH`'s absolute directories: those in a home directory are guarded like profiles
    /// ([`Workspace::home_program_dirs`]).
    program_dirs: Vec<PathBuf>,
}

/// Variables that name a credential store (a directory or a file) by itself.
const SECRET_VARIABLES: &[&str] = &[
    "GH_CONFIG_DIR",
    "GNUPGHOME",
    "DOCKER_CONFIG",
    "AWS_SHARED_CREDENTIALS_FILE",
    "AWS_CONFIG_FILE",
    "CLOUDSDK_CONFIG",
    "AZURE_CONFIG_DIR",
    "PASSWORD_STORE_DIR",
    "PGPASSFILE",
    "NETRC",
    "NPM_CONFIG_USERCONFIG",
    "TF_CLI_CONFIG_FILE",
    "PYPIRC",
];
/// Variables that name a directory holding credential stores, and the stores in it.
const SECRET_HOMES: &[(&str, &[&str])] = &[
    ("XDG_CONFIG_HOME", &["gh", "gcloud", "hub", "git/credentials", "op", "tandem"]),
    ("CARGO_HOME", &["credentials", "credentials.toml"]),
];
/// Variables that name what shells and git read on their own.
const PROFILE_HOMES: &[(&str, &[&str])] = &[
    ("XDG_CONFIG_HOME", &["git", "fish"]),
    ("GIT_CONFIG_GLOBAL", &[""]),
    ("ZDOTDIR", &[".zshrc", ".zshenv", ".zprofile", ".zlogin", ".zlogout"]),
];

impl Relocated {
    /// Read from `variable` (tandem's environment, in use), each path resolved against `cwd` as a command would.
    fn from(variable: impl Fn(&str) -> Option<std::ffi::OsString>, cwd: &Path) -> Relocated {
        let set = |name: &str| variable(name).filter(|value| !value.is_empty());
        let below = |list: &[(&str, &[&str])]| -> Vec<PathBuf> {
            list.iter()
                .filter_map(|(name, entries)| Some((set(name)?, *entries)))
                .flat_map(|(dir, entries)| entries.iter().map(move |entry| PathBuf::from(&dir).join(entry)))
                .collect()
        };
        let mut secrets: Vec<PathBuf> =
            SECRET_VARIABLES.iter().filter_map(|name| set(name)).map(PathBuf::from).collect();
        // A list of files, as kubectl reads it.
        secrets.extend(set("KUBECONFIG").iter().flat_map(std::env::split_paths));
        secrets.extend(below(SECRET_HOMES));
        let resolve = |paths: Vec<PathBuf>| paths.iter().map(|path| resolved_against(cwd, path)).collect();
        // bash expands a `~` at the start of a PATH entry when it looks a command up (`export PATH="~/bin:…"`).
        let home = set("HOME").map(PathBuf::from);
        let program_dirs: Vec<PathBuf> = set("PATH")
            .iter()
            .flat_map(std::env::split_paths)
            .filter_map(|dir| match (dir.strip_prefix("~"), &home) {
                (Ok(rest), Some(home)) => Some(home.join(rest)),
                (Ok(_), None) => None,
                (Err(_), _) => Some(dir),
            })
            .filter(|dir| dir.is_absolute())
            .collect();
        Relocated {
            secrets: resolve(secrets),
            profiles: resolve(below(PROFILE_HOMES)),
            program_dirs: resolve(program_dirs),
        }
    }

    fn holds(paths: &[PathBuf], resolved: &Path) -> bool {
        paths.iter().any(|path| strip_prefix_ignore_case(resolved, path).is_ok())
    }
}

impl Workspace {
    /// `cwd` first. Every directory named here is resolved as the kernel will ([`resolved_against`]), whether
    /// it exists yet or not, so that the resolved paths the tools ask about can be compared with it.
    pub fn new(cwd: &Path, extra: &[PathBuf], home: Option<PathBuf>, config_dir: Option<PathBuf>) -> Workspace {
        let mut roots = vec![resolved_against(cwd, cwd)];
        roots.extend(extra.iter().map(|dir| resolved_against(cwd, dir)));
        let home = home.map(|home| resolved_against(cwd, &home));
        let account_home = crate::fs_util::account_home()
            .map(|dir| resolved_against(cwd, &dir))
            .filter(|dir| home.as_ref() != Some(dir));
        let config_dir = config_dir.map(|dir| resolved_against(cwd, &dir));
        // A root's `.git` file, and submodules' repositories kept in the work tree outside `.git`.
        let mut git_dirs: Vec<PathBuf> =
            roots.iter().filter_map(|root| crate::sandbox::pointed_git_dir(&root.join(".git"))).collect();
        git_dirs.extend(roots.iter().flat_map(|root| crate::sandbox::pointed_repositories(root)));
        Workspace {
            roots,
            home,
            config_dir,
            data_dir: None,
            own_data: Vec::new(),
            git_dirs,
            claude_dir: None,
            claude_json: None,
            account_home,
            relocated: Relocated::from(|name| std::env::var_os(name), cwd),
            home_aliases: Vec::new(),
            linked_entries: std::sync::OnceLock::new(),
        }
        .with_home_aliases()
    }

    fn with_home_aliases(mut self) -> Workspace {
        let homes: Vec<PathBuf> = self.home.iter().chain(&self.account_home).cloned().collect();
        self.home_aliases = crate::fs_util::mount_aliases(&homes);
        self
    }

    /// The directories `PATH` lists inside a home directory (`~/.cargo/bin`, `~/.local/bin`): a program written
    /// there runs in later sessions in place of the system's, so they are guarded like profiles.
    fn home_program_dirs(&self) -> impl Iterator<Item = &PathBuf> {
        self.relocated.program_dirs.iter().filter(|dir| self.homes().any(|home| dir.starts_with(home) && *dir != home))
    }

    /// Where the home's secrets, profiles and program directories really are when a link stands for them
    /// (`~/.bashrc -> dotfiles/bashrc`, `~/bin -> dotfiles/bin`, stow-style dotfiles): a path there is what the
    /// link's name is. Resolved as the kernel would (a dangling link's target too), once per workspace.
    fn linked_home_entries(&self) -> Vec<(PathBuf, Protection)> {
        let lists = [(HOME_SECRETS, Protection::Credentials), (HOME_PROFILES, Protection::ShellProfile)];
        let mut named: Vec<(PathBuf, Protection)> = self
            .homes()
            .flat_map(|home| {
                lists.iter().flat_map(move |(entries, protection)| {
                    entries.iter().map(move |entry| (home.join(entry), *protection))
                })
            })
            .collect();
        named.extend(self.home_program_dirs().map(|dir| (dir.clone(), Protection::ShellProfile)));
        named
            .into_iter()
            .filter_map(|(path, protection)| {
                let real = match std::fs::read_link(&path) {
                    // A dangling link (`~/.ssh -> dotfiles/ssh` not made yet) leads where its target will be.
                    Ok(target) => resolved_against(path.parent().unwrap_or(Path::new("/")), &target),
                    Err(_) => resolved_against(Path::new("/"), &path),
                };
                (real != path).then_some((real, protection))
            })
            .collect()
    }

    /// `$HOME` and, where it differs, the account's home, and their other names through the mounts: all guarded
    /// alike.
    fn homes(&self) -> impl Iterator<Item = &PathBuf> {
        self.home.iter().chain(&self.account_home).chain(&self.home_aliases)
    }

    /// Names tandem's data directory (denied to reads) and the current session's files in it (allowed).
    pub fn with_data_dir(mut self, data_dir: &Path, own: &[PathBuf]) -> Workspace {
        self.data_dir = Some(resolved_against(self.cwd(), data_dir));
        self.own_data = own.iter().map(|dir| resolved_against(self.cwd(), dir)).collect();
        self
    }

    /// Names Claude Code's user directory and `.claude.json` (wherever `$CLAUDE_CONFIG_DIR` puts them): their
    /// credentials and transcripts are secrets, the rest is configuration a later session obeys — planted, a
    /// user's `settings.json` allow rule or `.claude.json` MCP server would widen every later session.
    pub fn with_claude_dir(mut self, dir: Option<&Path>, claude_json: Option<&Path>) -> Workspace {
        self.claude_dir = dir.map(|dir| resolved_against(self.cwd(), dir));
        self.claude_json = claude_json.map(|file| resolved_against(self.cwd(), file));
        self
    }

    /// Why a path in Claude Code's user directory (or its `.claude.json`) is protected.
    fn claude_protection(&self, resolved: &Path) -> Option<Protection> {
        if self.claude_json.as_deref().is_some_and(|file| strip_prefix_ignore_case(resolved, file).is_ok()) {
            return Some(Protection::Credentials);
        }
        let rest = strip_prefix_ignore_case(resolved, self.claude_dir.as_deref()?).ok()?;
        let first = rest.components().next().map(|first| first.as_os_str().to_string_lossy().to_lowercase());
        Some(match first.as_deref() {
            Some(CLAUDE_CREDENTIALS | CLAUDE_TRANSCRIPTS) => Protection::Credentials,
            _ => Protection::Settings,
        })
    }

    pub fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    /// The working directory.
    pub fn cwd(&self) -> &Path {
        &self.roots[0]
    }

    /// `path` made absolute as the tools and the shell will use it (relative to the working directory, `~`
    /// expanded), before any symlink is followed.
    pub fn absolute(&self, path: &str) -> PathBuf {
        let expanded = match (path.strip_prefix("~/"), &self.home) {
            (Some(rest), Some(home)) => home.join(rest),
            _ if path == "~" => self.home.clone().unwrap_or_else(|| PathBuf::from(path)),
            _ => PathBuf::from(path),
        };
        if expanded.is_absolute() { expanded } else { self.cwd().join(expanded) }
    }

    /// Resolves a path as the kernel will ([`resolve_like_kernel`]); `None` when that can't be known for sure.
    pub fn resolve_strict(&self, path: &str) -> Option<PathBuf> {
        resolve_like_kernel(&self.absolute(path))
    }

    /// Resolves a path for display and rule matching: [`Workspace::resolve_strict`], or the lexically normalized
    /// path when it can't be resolved (such a path never counts as inside: see [`Workspace::is_inside`]).
    pub fn resolve(&self, path: &str) -> PathBuf {
        let absolute = self.absolute(path);
        resolve_like_kernel(&absolute).unwrap_or_else(|| normalize(&absolute))
    }

    /// Whether `path` (as written) certainly resolves inside one of the roots.
    pub fn is_inside(&self, path: &str) -> bool {
        self.resolve_strict(path).is_some_and(|resolved| self.contains(&resolved))
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
        if let Some(protection) = self.claude_protection(resolved) {
            return Some(protection);
        }
        if Relocated::holds(&self.relocated.secrets, resolved) {
            return Some(Protection::Credentials);
        }
        let home = self.homes().find_map(|home| home_protection(strip_prefix_ignore_case(resolved, home).ok()?));
        let home = home.or_else(|| {
            self.linked_entries
                .get_or_init(|| self.linked_home_entries())
                .iter()
                .find_map(|(real, protection)| strip_prefix_ignore_case(resolved, real).is_ok().then_some(*protection))
        });
        let home = home.or_else(|| {
            let profile = Relocated::holds(&self.relocated.profiles, resolved)
                || self.home_program_dirs().any(|dir| strip_prefix_ignore_case(resolved, dir).is_ok());
            profile.then_some(Protection::ShellProfile)
        });
        // Credentials first: `~/.claude/.credentials.json` is also below a `.claude`, which only guards writes.
        if home == Some(Protection::Credentials) {
            return home;
        }
        // Case-insensitive: on macOS `.GIT/config` is `.git/config`.
        if lower.iter().any(|name| name == ".git") || self.git_dirs.iter().any(|dir| resolved.starts_with(dir)) {
            return Some(Protection::GitInternals);
        }
        // Git takes a directory with `HEAD` (or `commondir`), `objects/` and `refs/` for a bare repository and obeys
        // its `config`: written by the model, the user's own git there would later run its pager or aliases.
        if lower.last().is_some_and(|name| name == "head" || name == "commondir") {
            return Some(Protection::RepositoryMarker);
        }
        for (index, name) in lower.iter().enumerate() {
            let next = lower.get(index + 1).map(String::as_str);
            let tail_len = lower.len() - index - 1;
            let project_config = match name.as_str() {
                // Project memory is written by SaveMemory and can't widen permissions.
                ".tandem" => next != Some("memory") || tail_len < 2,
                ".claude" => !(tail_len == 1 && next == Some("claude.md")),
                ".mcp.json" => true,
                _ => false,
            };
            if project_config {
                return Some(Protection::Settings);
            }
        }
        if let Some(data_dir) = &self.data_dir
            && strip_prefix_ignore_case(resolved, data_dir).is_ok()
        {
            let own = self.own_data.iter().any(|own| resolved.starts_with(own));
            return Some(if own { Protection::SessionRecord } else { Protection::TandemData });
        }
        if let Some(config_dir) = &self.config_dir
            && let Ok(rest) = strip_prefix_ignore_case(resolved, config_dir)
        {
            let in_memory = rest.components().next().is_some_and(|first| first.as_os_str() == "memory");
            return Some(if in_memory { Protection::UserMemory } else { Protection::TandemConfig });
        }
        home
    }
}

/// In Claude Code's user directory: its login, and every project's transcripts.
const CLAUDE_CREDENTIALS: &str = ".credentials.json";
const CLAUDE_TRANSCRIPTS: &str = "projects";

/// Credentials below the home directory: never readable by a sandboxed command, whatever allowed it.
const HOME_SECRETS: &[&str] = &[
    ".ssh",
    ".aws",
    ".gnupg",
    ".kube",
    ".docker",
    ".netrc",
    ".git-credentials",
    ".npmrc",
    ".pypirc",
    ".azure",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".config/gh",
    ".config/gcloud",
    ".config/hub",
    ".claude/.credentials.json",
    ".claude/projects",
    ".claude.json",
    ".config/git/credentials",
    ".pgpass",
    ".vault-token",
    ".password-store",
    ".gem/credentials",
    ".terraform.d/credentials.tfrc.json",
    ".config/op",
];
/// Files below the home directory that shells and git read on their own, and the directories of programs that
/// login profiles put first on `PATH` once they exist: never writable by a sandboxed command.
const HOME_PROFILES: &[&str] = &[
    ".local/bin",
    "bin",
    ".bashrc",
    ".bash_aliases",
    ".bash_env",
    ".zlogout",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zprofile",
    ".zshenv",
    ".zlogin",
    ".gitconfig",
    ".inputrc",
    ".config/git",
    ".config/fish",
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".claude/CLAUDE.md",
];

/// The system's own secrets, which a command run as root could read (it keeps `CAP_DAC_OVERRIDE` to work on its
/// files): password hashes, sudo's rules, the SSH host keys.
fn system_secrets() -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> =
        ["/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/sudoers", "/etc/sudoers.d"]
            .iter()
            .map(PathBuf::from)
            .collect();
    let host_keys = std::fs::read_dir("/etc/ssh").into_iter().flatten().flatten().map(|entry| entry.path());
    paths.extend(
        host_keys
            .filter(|path| path.file_name().and_then(|name| name.to_str()).is_some_and(|name| name.ends_with("_key"))),
    );
    paths
}

impl Workspace {
    /// What a sandboxed command may never read: credentials, tandem's configuration and every project's
    /// transcripts (the sandbox denies them by path, whether they exist now or not).
    pub fn secret_paths(&self) -> Vec<PathBuf> {
        let mut paths: Vec<PathBuf> = Vec::new();
        for home in self.homes() {
            paths.extend(HOME_SECRETS.iter().map(|rest| home.join(rest)));
            paths.push(home.join(".config/tandem"));
        }
        paths.extend(self.config_dir.iter().cloned());
        paths.extend(self.data_dir.iter().cloned());
        if let Some(dir) = &self.claude_dir {
            paths.extend([dir.join(CLAUDE_CREDENTIALS), dir.join(CLAUDE_TRANSCRIPTS)]);
        }
        paths.extend(self.claude_json.iter().cloned());
        paths.extend(self.relocated.secrets.iter().cloned());
        paths.extend(system_secrets());
        // The same files under another mount point are the same secrets, to the file tools' read guard too (the
        // sandbox gives every path it denies its mount aliases itself).
        let aliases = crate::fs_util::mount_aliases(&paths);
        paths.extend(aliases);
        paths
    }

    /// What a sandboxed command may never write, besides [`Workspace::secret_paths`]: shell and git profiles.
    pub fn profile_paths(&self) -> Vec<PathBuf> {
        let mut paths: Vec<PathBuf> =
            self.homes().flat_map(|home| HOME_PROFILES.iter().map(move |rest| home.join(rest))).collect();
        paths.extend(self.claude_dir.iter().chain(&self.claude_json).cloned());
        paths.extend(self.relocated.profiles.iter().cloned());
        paths.extend(self.home_program_dirs().cloned());
        paths
    }
}

/// What is protected below the home directory (`rest` is the path relative to it).
fn home_protection(rest: &Path) -> Option<Protection> {
    let rest: Vec<String> =
        rest.components().map(|component| component.as_os_str().to_string_lossy().to_lowercase()).collect();
    // One list each, shared with the sandbox (`secret_paths`, `profile_paths`): a second, shorter copy here let
    // Read show `~/.pgpass` and acceptEdits write `~/.claude.json` (whose MCP servers a later session starts).
    let under = |entry: &str| {
        let parts = || entry.split('/');
        parts().count() <= rest.len() && parts().zip(&rest).all(|(part, name)| part.eq_ignore_ascii_case(name))
    };
    if HOME_SECRETS.iter().any(|entry| under(entry)) {
        return Some(Protection::Credentials);
    }
    if HOME_PROFILES.iter().any(|entry| under(entry)) {
        return Some(Protection::ShellProfile);
    }
    let first = rest.first().map(String::as_str).unwrap_or_default();
    let second = rest.get(1).map(String::as_str);
    if first == ".config" && second == Some("tandem") {
        return Some(Protection::TandemConfig);
    }
    None
}

/// Why a path is protected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protection {
    GitInternals,
    /// `HEAD` or `commondir` anywhere: what makes a directory a git repository.
    RepositoryMarker,
    /// `.tandem/` (but project memory), `.claude/`, `.mcp.json`: what they say decides what later sessions may do.
    Settings,
    Credentials,
    ShellProfile,
    TandemConfig,
    /// Every project's transcripts: denied to reads, except the current session's own files.
    TandemData,
    /// The current session's own files (saved outputs, checkpoints): read freely, but what a rewind restores is
    /// read from them, so they are never written unasked.
    SessionRecord,
    /// The user's memory: read freely (its index is in every prompt), written only when the user agrees.
    UserMemory,
}

impl Protection {
    pub fn reason(self) -> &'static str {
        match self {
            Protection::GitInternals => "it is inside a .git directory (change repositories with git commands)",
            Protection::RepositoryMarker => {
                "a file of that name makes its directory a git repository, whose configuration git would obey"
            }
            Protection::Settings => {
                "it is project configuration that decides what tandem may do (.tandem, .claude, .mcp.json)"
            }
            Protection::Credentials => "it holds credentials",
            Protection::ShellProfile => {
                "it is a shell or git profile, or a directory of programs your PATH finds before the system's"
            }
            Protection::TandemConfig => "it is in tandem's configuration directory",
            Protection::TandemData => "it is tandem's data directory, with the transcripts of every project",
            Protection::SessionRecord => "it is this session's own record, from which a rewind restores files",
            Protection::UserMemory => "it is your memory, read by every session in every project",
        }
    }

    /// Reading it is sensitive too (secrets), not only writing: reads are denied unless a rule names the path.
    pub fn guards_reads(self) -> bool {
        matches!(self, Protection::Credentials | Protection::TandemConfig | Protection::TandemData)
    }
}

pub use crate::fs_util::{normalize, resolve_like_kernel};

/// `path` (relative ones against `cwd`, as the process opens them) resolved like the kernel: a directory that
/// does not exist yet is its existing ancestor resolved plus the rest, never the path as written (relative, or
/// through a symlink), which no resolved path would match. Unresolvable (a dangling link): normalized, and then
/// no path that resolves for sure falls under it, while the paths under it don't resolve for sure either.
fn resolved_against(cwd: &Path, path: &Path) -> PathBuf {
    let absolute = cwd.join(path);
    resolve_like_kernel(&absolute).unwrap_or_else(|| normalize(&absolute))
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
        // With `objects/` and `refs/` beside it, these make a directory a repository whose config git obeys.
        assert!(protected("HEAD"));
        assert!(protected("sub/commondir"));
        assert!(!protected("docs/head.md"));
    }

    #[test]
    fn very_long_paths_do_not_panic() {
        let (_work, _home, workspace) = setup();
        let long = "a/".repeat(5000) + "file";
        let resolved = workspace.resolve(&long);
        assert!(workspace.contains(&resolved));
    }

    #[test]
    fn dot_dot_after_a_symlink_leaves_its_target_as_the_kernel_does() {
        let (work, _home, workspace) = setup();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(outside.path().join("deep/er")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("deep/er"), work.path().join("link")).unwrap();
        // Lexically `link/../src` is `src`; the kernel goes to `<outside>/deep/src`.
        assert!(!workspace.is_inside("link/../src"));
        assert_eq!(workspace.resolve("link/../x"), outside.path().canonicalize().unwrap().join("deep/x"));
        assert!(!workspace.is_inside("link/../../../../etc/passwd"));
        // A relative link that climbs out.
        std::os::unix::fs::symlink("../..", work.path().join("src/up")).unwrap();
        assert!(!workspace.is_inside("src/up/x"));
    }

    fn outside_dir() -> PathBuf {
        let dir = tempfile::tempdir().unwrap().keep();
        dir.canonicalize().unwrap()
    }

    #[test]
    fn uncertain_paths_count_as_outside() {
        let (work, _home, workspace) = setup();
        std::os::unix::fs::symlink(work.path().join("nowhere/target"), work.path().join("dangling")).unwrap();
        assert!(!workspace.is_inside("dangling"), "a dangling link is outside");
        assert!(!workspace.is_inside("dangling/x"));
        std::os::unix::fs::symlink("loop2", work.path().join("loop1")).unwrap();
        std::os::unix::fs::symlink("loop1", work.path().join("loop2")).unwrap();
        assert!(!workspace.is_inside("loop1/x"), "a symlink loop");
        assert!(!workspace.is_inside("/proc/self/cwd/src"), "/proc links depend on who looks");
        assert!(!workspace.is_inside("/dev/fd/3"));
        std::fs::write(work.path().join("file"), "x").unwrap();
        assert!(!workspace.is_inside("file/x"), "a file is not a directory");
        assert!(workspace.is_inside("new/dir/file.rs"), "missing parts are applied as written");
        std::os::unix::fs::symlink(outside_dir(), work.path().join("sshlink")).unwrap();
        assert!(!workspace.is_inside("nope/../sshlink/id_rsa"), "`..` after a missing part is uncertain");
        assert!(!workspace.is_inside("new/dir/../file.rs"));
    }

    /// Found by the seventeenth red-team round: a command run as root keeps `CAP_DAC_OVERRIDE` (to work on its
    /// files), so the sandbox's reads had to leave out the system's own secrets too.
    #[test]
    fn the_systems_secrets_are_never_read() {
        let workspace = Workspace::new(Path::new("/tmp"), &[], None, None);
        let secrets = workspace.secret_paths();
        assert!(secrets.contains(&PathBuf::from("/etc/shadow")) && secrets.contains(&PathBuf::from("/etc/sudoers")));
    }

    /// Found by the 49th red-team round: with the home also mounted elsewhere (a bind mount, `/home` under
    /// `/mnt/data`), a rule-allowed `make` read `~/.ssh` through the other mount point, which the sandbox granted
    /// whole. The home's other names are guarded as the home is (the mount table is read by `mount_aliases`).
    #[test]
    fn a_home_mounted_twice_is_guarded_under_both_names() {
        let work = tempfile::tempdir().unwrap();
        let home = PathBuf::from("/home/alice");
        let mut workspace = Workspace::new(work.path(), &[], Some(home.clone()), None);
        workspace.home_aliases = vec![PathBuf::from("/mnt/data/alice")];
        assert_eq!(workspace.protected(Path::new("/mnt/data/alice/.ssh/id_rsa")), Some(Protection::Credentials));
        assert_eq!(workspace.protected(Path::new("/mnt/data/alice/.bashrc")), Some(Protection::ShellProfile));
        assert!(workspace.secret_paths().contains(&PathBuf::from("/mnt/data/alice/.ssh")));
        assert_eq!(workspace.protected(Path::new("/mnt/data/alice/notes.txt")), None);
    }

    /// A second look at round 49: with stow-style dotfiles (`~/.bashrc -> dotfiles/bashrc`, `~/bin ->
    /// dotfiles/bin`), the file tools wrote the profile and the program under the link's target, unasked.
    #[test]
    fn a_profile_or_secret_behind_a_link_is_guarded_where_it_is() {
        let home = tempfile::tempdir().unwrap();
        let home_path = home.path().canonicalize().unwrap();
        let dotfiles = home_path.join("dotfiles");
        std::fs::create_dir_all(dotfiles.join("bin")).unwrap();
        std::fs::write(dotfiles.join("bashrc"), "# rc\n").unwrap();
        std::os::unix::fs::symlink(dotfiles.join("bashrc"), home_path.join(".bashrc")).unwrap();
        std::os::unix::fs::symlink(dotfiles.join("bin"), home_path.join("bin")).unwrap();
        std::os::unix::fs::symlink(dotfiles.join("ssh"), home_path.join(".ssh")).unwrap();
        let workspace = Workspace::new(&home_path, &[], Some(home_path.clone()), None);
        assert_eq!(workspace.protected(&dotfiles.join("bashrc")), Some(Protection::ShellProfile));
        assert_eq!(workspace.protected(&dotfiles.join("bin/deploy")), Some(Protection::ShellProfile));
        assert_eq!(workspace.protected(&dotfiles.join("ssh/id_rsa")), Some(Protection::Credentials), "dangling too");
        assert_eq!(workspace.protected(&dotfiles.join("vimrc")), None);
    }

    /// Found by the 49th red-team round: a session whose workspace held the home wrote `~/.local/bin/bash`; the
    /// next login's PATH (profiles add `~/.local/bin` once it exists) put it before the system's, and a later
    /// session ran it unsandboxed to analyse every command. What PATH finds in the home is guarded like a profile.
    #[test]
    fn the_program_directories_in_the_home_are_profiles() {
        let home = tempfile::tempdir().unwrap();
        let home_path = home.path().canonicalize().unwrap();
        let mut workspace = Workspace::new(&home_path, &[], Some(home_path.clone()), None);
        let path = std::env::join_paths([
            home_path.join(".cargo/bin"),
            PathBuf::from("~/.npm-global/bin"),
            PathBuf::from("/usr/bin"),
        ])
        .unwrap();
        workspace.relocated = Relocated::from(
            |name| match name {
                "PATH" => Some(path.clone()),
                "HOME" => Some(home_path.clone().into()),
                _ => None,
            },
            &home_path,
        );
        for program in [".local/bin/bash", "bin/git", ".cargo/bin/ls", ".npm-global/bin/tsc"] {
            let at = home_path.join(program);
            assert_eq!(workspace.protected(&at), Some(Protection::ShellProfile), "{program}");
            assert!(workspace.profile_paths().iter().any(|path| at.starts_with(path)), "{program}");
        }
        for free in [".local/share/x", "binaries/x", "project/bin/x"] {
            assert_eq!(workspace.protected(&home_path.join(free)), None, "{free}");
        }
    }

    /// Found by the 48th red-team round: with `XDG_CONFIG_HOME`, `GH_CONFIG_DIR`, `GNUPGHOME`, `DOCKER_CONFIG`,
    /// `KUBECONFIG` or `CARGO_HOME` set, a rule-allowed `make` (and Read in bypass mode) read the gh token, git
    /// credentials, a GnuPG key, docker and kube credentials where those variables put them, since only the
    /// places below the home directory were secrets. The commands see the same variables.
    #[test]
    fn credential_stores_the_environment_moved_are_secrets_too() {
        let work = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        let at = |rest: &str| elsewhere.path().canonicalize().unwrap().join(rest);
        let env: std::collections::HashMap<&str, PathBuf> = [
            ("XDG_CONFIG_HOME", at("xdg")),
            ("GH_CONFIG_DIR", at("ghdir")),
            ("GNUPGHOME", at("gpg")),
            ("DOCKER_CONFIG", at("docker")),
            ("CARGO_HOME", at("cargo")),
            ("ZDOTDIR", at("zsh")),
        ]
        .into_iter()
        .collect();
        let kube = std::env::join_paths([at("kube/a"), at("kube/b")]).unwrap();
        let mut workspace = Workspace::new(work.path(), &[], None, None);
        workspace.relocated = Relocated::from(
            |name| {
                if name == "KUBECONFIG" { Some(kube.clone()) } else { env.get(name).map(|path| path.clone().into()) }
            },
            work.path(),
        );
        for secret in [
            "xdg/gh/hosts.yml",
            "xdg/git/credentials",
            "ghdir/hosts.yml",
            "gpg/private-keys-v1.d/k",
            "docker/config.json",
            "kube/b",
            "cargo/credentials.toml",
        ] {
            assert_eq!(workspace.protected(&at(secret)), Some(Protection::Credentials), "{secret}");
            assert!(workspace.secret_paths().iter().any(|path| at(secret).starts_with(path)), "{secret}");
        }
        for profile in ["xdg/git/config", "zsh/.zshrc"] {
            assert_eq!(workspace.protected(&at(profile)), Some(Protection::ShellProfile), "{profile}");
            assert!(workspace.profile_paths().iter().any(|path| at(profile).starts_with(path)), "{profile}");
        }
        for free in ["xdg/nvim/init.lua", "cargo/registry/x", "kube/c"] {
            assert_eq!(workspace.protected(&at(free)), None, "{free}");
        }
    }

    #[test]
    fn a_repository_a_git_file_points_to_is_protected() {
        let work = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(work.path().join(".gitstore")).unwrap();
        std::fs::write(work.path().join(".git"), "gitdir: .gitstore\n").unwrap();
        let workspace = Workspace::new(work.path(), &[], None, None);
        assert_eq!(workspace.protected(&workspace.resolve(".gitstore/config")), Some(Protection::GitInternals));
        assert_eq!(workspace.protected(&workspace.resolve(".gitstored")), None);
    }

    /// Found by the fifteenth red-team round: a submodule's repository kept in the work tree outside `.git`
    /// (`sub/.git` a file saying `gitdir: ../store`) could be written (Write, acceptEdits), and the user's next
    /// `git status` ran the `core.fsmonitor` put in its config.
    #[test]
    fn a_submodules_repository_outside_dot_git_is_protected() {
        let work = tempfile::tempdir().unwrap();
        let root = work.path().canonicalize().unwrap();
        let git = |dir: &Path, args: &[&str]| {
            std::process::Command::new("git")
                .current_dir(dir)
                .args(["-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"])
                .args(args)
                .output()
                .is_ok_and(|output| output.status.success())
        };
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(root.join("sub/f"), "x").unwrap();
        if !git(&root, &["init", "-q"]) || !git(&root.join("sub"), &["init", "-q"]) {
            return;
        }
        assert!(git(&root.join("sub"), &["add", "f"]) && git(&root.join("sub"), &["commit", "-q", "-m", "s"]));
        std::fs::rename(root.join("sub/.git"), root.join("store")).unwrap();
        std::fs::write(root.join("sub/.git"), "gitdir: ../store\n").unwrap();
        assert!(git(&root, &["add", "sub"]));
        let workspace = Workspace::new(&root, &[], None, None);
        assert_eq!(workspace.protected(&root.join("store/config")), Some(Protection::GitInternals));
        assert_eq!(workspace.protected(&root.join("storey")), None);
    }

    #[test]
    fn project_configuration_is_protected_wherever_it_is() {
        let (_work, home, workspace) = setup();
        let protected = |path: &str| workspace.protected(&workspace.resolve(path));
        for path in [
            ".tandem/settings.json",
            ".tandem/anything",
            ".claude/commands/x.md",
            ".claude/settings.local.json",
            "sub/.claude/agents/a.md",
            ".mcp.json",
            "nested/.MCP.json",
        ] {
            assert_eq!(protected(path), Some(Protection::Settings), "{path}");
        }
        assert_eq!(protected(".tandem/memory/MEMORY.md"), None);
        assert_eq!(protected(".claude/CLAUDE.md"), None);
        assert_eq!(protected("~/.gitconfig"), Some(Protection::ShellProfile));
        assert_eq!(protected("~/.config/gh/hosts.yml"), Some(Protection::Credentials));
        let data = home.path().join("data");
        let own = data.join("sessions/me");
        let workspace = workspace.with_data_dir(&data, std::slice::from_ref(&own));
        let protected = |path: &Path| workspace.protected(&workspace.resolve(path.to_str().unwrap()));
        assert_eq!(protected(&data.join("sessions/other.jsonl")), Some(Protection::TandemData));
        assert_eq!(protected(&own.join("bash-1-stdout.txt")), Some(Protection::SessionRecord));
        assert!(!Protection::SessionRecord.guards_reads());
    }

    /// Found by the twenty-eighth red-team round: with the data directory in the workspace (tandem started in
    /// the home directory, or `$XDG_DATA_HOME` inside it), the session's own folder was as writable as any
    /// workspace file, and acceptEdits edited its checkpoint log so that a later rewind wrote `~/.bashrc` and
    /// an executable outside the workspace. It stays readable (saved outputs), never written unasked.
    #[test]
    fn the_sessions_own_record_is_readable_but_never_written_unasked() {
        let home = tempfile::tempdir().unwrap();
        let home = home.path().canonicalize().unwrap();
        let own = home.join(".local/share/tandem/sessions/s1");
        let workspace = Workspace::new(&home, &[], Some(home.clone()), None)
            .with_data_dir(&home.join(".local/share/tandem"), std::slice::from_ref(&own));
        let protection = workspace.protected(&own.join("checkpoints/log.jsonl"));
        assert_eq!(protection, Some(Protection::SessionRecord));
    }

    /// Found by the twenty-second red-team round: with the home directory in the workspace, acceptEdits wrote
    /// the user's `~/.claude/CLAUDE.md` (whose imports are not limited: `@~/.ssh/id_rsa` went into every later
    /// session's prompt), and a `$CLAUDE_CONFIG_DIR` elsewhere was not protected at all (its credentials read,
    /// its `settings.json` and `.claude.json` planted for later sessions).
    #[test]
    fn claude_codes_user_directory_is_protected_wherever_it_is() {
        let home = tempfile::tempdir().unwrap();
        let home = home.path().canonicalize().unwrap();
        let custom = home.join(".config/claude");
        let json = custom.join(".claude.json");
        let workspace =
            Workspace::new(&home, &[], Some(home.clone()), None).with_claude_dir(Some(&custom), Some(&json));
        assert_eq!(workspace.protected(&home.join(".claude/CLAUDE.md")), Some(Protection::ShellProfile));
        assert_eq!(workspace.protected(&custom.join(".credentials.json")), Some(Protection::Credentials));
        assert_eq!(workspace.protected(&custom.join("projects/p/s.jsonl")), Some(Protection::Credentials));
        assert_eq!(workspace.protected(&json), Some(Protection::Credentials));
        for planted in ["settings.json", "CLAUDE.md", "agents/a.md", "skills/s/SKILL.md"] {
            assert_eq!(workspace.protected(&custom.join(planted)), Some(Protection::Settings), "{planted}");
        }
        assert!(workspace.secret_paths().contains(&json) && workspace.profile_paths().contains(&custom));
        assert_eq!(workspace.protected(&home.join("notes/CLAUDE.md")), None);
    }

    /// Found by the twenty-seventh red-team round: a configuration directory that did not exist yet was kept as
    /// written — relative (`TANDEM_CONFIG_DIR=cfg`), or through a symlink — so no resolved path ever matched it,
    /// and acceptEdits wrote its `settings.json` (a hook, an allow rule) for the next session to obey.
    #[test]
    fn missing_config_directories_are_protected_as_the_kernel_resolves_them() {
        let root = tempfile::tempdir().unwrap();
        let root = root.path().canonicalize().unwrap();
        let work = root.join("work");
        std::fs::create_dir(&work).unwrap();
        std::os::unix::fs::symlink(&work, root.join("alias")).unwrap();
        let settings = |dir: &str| work.join(dir).join("settings.json");

        let relative = Workspace::new(&work, &[], None, Some(PathBuf::from("cfg")));
        assert_eq!(relative.protected(&settings("cfg")), Some(Protection::TandemConfig));
        let linked = Workspace::new(&work, &[], None, Some(root.join("alias/cfg")));
        assert_eq!(linked.protected(&settings("cfg")), Some(Protection::TandemConfig));

        let claude = Workspace::new(&work, &[], None, None).with_claude_dir(Some(Path::new("ccfg")), None);
        assert_eq!(claude.protected(&settings("ccfg")), Some(Protection::Settings));
        let claude = Workspace::new(&work, &[], None, None).with_claude_dir(Some(&root.join("alias/ccfg")), None);
        assert_eq!(claude.protected(&settings("ccfg")), Some(Protection::Settings));
        let data = Workspace::new(&work, &[], None, None).with_data_dir(&root.join("alias/data"), &[]);
        assert_eq!(data.protected(&work.join("data/sessions/s.jsonl")), Some(Protection::TandemData));
    }

    /// Found by the twenty-eighth red-team round: with `$HOME` unset, tandem knew no home at all, while bash,
    /// git and ssh use the account's: started there, Read showed `.ssh/id_rsa` and acceptEdits wrote `.bashrc`.
    /// ssh reads the account's `.ssh` whatever `$HOME` says, so that home is guarded too.
    #[test]
    fn the_accounts_home_is_guarded_whatever_home_says() {
        let Some(account) = crate::fs_util::account_home() else { return };
        let account = resolve_like_kernel(&account).unwrap_or(account);
        let elsewhere = tempfile::tempdir().unwrap();
        for home in [None, Some(elsewhere.path().to_path_buf())] {
            let workspace = Workspace::new(elsewhere.path(), &[], home.clone(), None);
            let protected = |rest: &str| workspace.protected(&account.join(rest));
            assert_eq!(protected(".ssh/id_rsa"), Some(Protection::Credentials), "{home:?}");
            assert_eq!(protected(".bashrc"), Some(Protection::ShellProfile), "{home:?}");
            assert!(workspace.secret_paths().contains(&account.join(".ssh")), "{home:?}");
        }
    }
}
