//! Permission settings files, in Claude Code's format and layout so a Claude Code project works unchanged.
//!
//! Files read, merged into one [`Settings`] (lowest `defaultMode` precedence first):
//! - user: `<config dir>/settings.json`
//! - `.claude/settings.json` and `.claude/settings.local.json` in the project root (Claude Code's files; only
//!   `permissions` is read from them)
//! - project: `.tandem/settings.json` (committed, shared with the team)
//! - local: `.tandem/settings.local.json` (git-ignored, personal; "always" answers land here)
//!
//! The format is `{"permissions": {"allow": [...], "ask": [...], "deny": [...], "defaultMode": "...",
//! "additionalDirectories": [...]}, ...}`. Other top-level keys belong to other tools and later features and
//! are ignored. A broken rule or key is reported in [`Settings::problems`] and contributes nothing, because
//! guessing what a broken rule meant could widen what it allows (or narrow what it denies). A file that exists
//! but cannot be read or parsed at all is different: running without it would drop its deny rules, so it is
//! listed in [`Settings::unreadable`] and the front ends refuse to start ([`Settings::check_readable`]).
//!
//! Allow/ask/deny rules from every file form one union (the policy applies deny > ask > allow over it), so
//! file order only matters for `defaultMode`: local > project > `.claude` local > `.claude` project > user.

mod held;
mod persist;
mod sandbox;
#[cfg(test)]
mod tests;

pub use held::HeldSettings;
pub use persist::{persist_rule, remove_rule, reset_mcp_choices};

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::{PermissionMode, Rule};
use crate::fs_util::normalize;

// Where settings files are and how one is read: in `config`, below the hooks, which read the same files.
pub use crate::config::{CLAUDE_DIR, LOCAL_SETTINGS_FILE, SETTINGS_FILE, TANDEM_DIR, read_settings_text};

/// The top-level keys of a settings file tandem reads (the hooks are read by [`crate::hooks`]).
const SUPPORTED_KEYS: &[&str] = &[
    "$schema",
    "permissions",
    "hooks",
    "disableAllHooks",
    "enableAllProjectMcpServers",
    "enabledMcpjsonServers",
    "disabledMcpjsonServers",
    "sandbox",
    "cleanupPeriodDays",
];

/// The keys under `permissions` tandem reads.
const SUPPORTED_PERMISSION_KEYS: &[&str] = &["allow", "ask", "deny", "defaultMode", "additionalDirectories"];

pub use tandem_protocol::permissions::{RuleKind, Scope};

/// A rule with what the policy needs to apply it and `/permissions` needs to show or remove it.
#[derive(Clone, Debug)]
pub struct SourcedRule {
    pub rule: Rule,
    /// The rule as written (trimmed), to show it and to remove it from its file.
    pub text: String,
    pub kind: RuleKind,
    pub scope: Scope,
    /// The settings file it was read from; `None` for flag and session rules.
    pub file: Option<PathBuf>,
    /// What a `/x` path specifier is relative to (see [`resolve_path_pattern`]): the project root for project,
    /// local and `.claude` files, the working directory for the user file.
    pub root: PathBuf,
}

/// Everything the settings files say about permissions.
#[derive(Clone, Debug, Default)]
pub struct Settings {
    /// The union of every file's rules, plus flag and session rules added with [`Settings::add`].
    pub rules: Vec<SourcedRule>,
    /// The highest-precedence valid `defaultMode`, if any file sets one.
    pub default_mode: Option<PermissionMode>,
    /// `additionalDirectories`, absolute and normalized, without duplicates.
    pub additional_directories: Vec<PathBuf>,
    /// One line per problem, `path: what: why`, for the user to see; the offending part was ignored.
    pub problems: Vec<String>,
    /// One line per settings file that exists but could not be read or parsed, `path: why`. Such a file may hold
    /// deny rules, so a session must not start without it (see [`Settings::check_readable`]).
    pub unreadable: Vec<String>,
    /// What tracked personal settings files would widen, waiting for the user's trust (see [`HeldSettings`]).
    pub held: Vec<HeldSettings>,
    /// The project root the project-level files were read from (see [`project_root`]).
    pub project_root: PathBuf,
    /// What the user decided about the project's `.mcp.json` servers (`enableAllProjectMcpServers`,
    /// `enabledMcpjsonServers`, `disabledMcpjsonServers`). The project's committed files can't decide it: a
    /// repository must not approve the commands it ships.
    pub mcp_choices: crate::mcp::config::ProjectChoices,
    /// The `sandbox` key, merged over every file (widening keys from the user's own files only).
    pub sandbox: crate::sandbox::SandboxSettings,
    /// `cleanupPeriodDays`, from the user's own files only: a committed project file must not decide when the
    /// user's sessions are deleted.
    pub cleanup_period_days: Option<u64>,
}

impl Settings {
    /// Adds a rule that comes from no file: `--allowedTools`/`--disallowedTools` values and session "always"
    /// answers. `root` is what `/x` path specifiers are relative to. Adding a rule already present with the same
    /// kind, scope and root does nothing, so answering "always" twice doesn't grow the list.
    pub fn add(&mut self, kind: RuleKind, text: &str, scope: Scope, root: &Path) -> Result<(), String> {
        let text = text.trim();
        let rule = parse_rule(text).map_err(|why| format!("rule {text:?}: {why}"))?;
        let present = self.rules.iter().any(|r| r.kind == kind && r.scope == scope && r.rule == rule && r.root == root);
        if !present {
            self.rules.push(SourcedRule {
                rule,
                text: text.to_owned(),
                kind,
                scope,
                file: None,
                root: root.to_path_buf(),
            });
        }
        Ok(())
    }

    /// An error naming every settings file that exists but could not be used, or `Ok` when there is none. The
    /// front ends stop on it: a deny rule the user wrote must never be dropped without them knowing.
    pub fn check_readable(&self) -> Result<(), String> {
        if self.unreadable.is_empty() {
            return Ok(());
        }
        Err(format!(
            "a settings file could not be used, and running without it could drop rules it holds (deny rules \
             included); fix or remove it:\n  {}",
            self.unreadable.join("\n  ")
        ))
    }

    fn read_cleanup_period(&mut self, scope: Scope, file: &Path, document: &Map<String, Value>) {
        let Some(value) = document.get("cleanupPeriodDays") else { return };
        if matches!(scope, Scope::Project | Scope::ClaudeProject) {
            self.problem(file, "\"cleanupPeriodDays\" is read from your own settings only, not a project's; ignored");
            return;
        }
        match value.as_u64() {
            Some(days) if days > 0 => self.cleanup_period_days = Some(days),
            _ => self.problem(file, "\"cleanupPeriodDays\" is not a positive whole number of days; it is ignored"),
        }
    }

    /// The rules of one kind, in load order.
    pub fn rules_of(&self, kind: RuleKind) -> impl Iterator<Item = &SourcedRule> {
        self.rules.iter().filter(move |rule| rule.kind == kind)
    }

    /// Reads one settings file into `self`, and says the digest of the text read. A missing file is silently
    /// nothing (every file is optional).
    fn read_file(&mut self, scope: Scope, file: &Path, root: &Path, home: Option<&Path>) -> Option<String> {
        let (document, fingerprint) = self.read_document(file)?;
        self.apply_document(scope, file, &document, root, home);
        Some(fingerprint)
    }

    /// Applies one settings document (a file's, or `--settings`' with `file` naming where it came from).
    pub fn apply_document(
        &mut self,
        scope: Scope,
        file: &Path,
        document: &Map<String, Value>,
        root: &Path,
        home: Option<&Path>,
    ) {
        // Nothing in a settings file is ignored without a word: what tandem does not do is said.
        for key in document.keys().filter(|key| !SUPPORTED_KEYS.contains(&key.as_str())) {
            self.problem(file, format!("\"{key}\" is not supported by tandem; it is ignored"));
        }
        self.read_mcp_choices(scope, file, document);
        self.read_sandbox(scope, file, document, root, home);
        self.read_cleanup_period(scope, file, document);
        let Some(permissions) = document.get("permissions") else { return };
        let Value::Object(permissions) = permissions else {
            self.problem(file, "\"permissions\" is not an object; it is ignored");
            return;
        };
        for key in permissions.keys().filter(|key| !SUPPORTED_PERMISSION_KEYS.contains(&key.as_str())) {
            self.problem(file, format!("permissions.{key} is not supported by tandem; it is ignored"));
        }
        for kind in RuleKind::ALL {
            let Some(list) = permissions.get(kind.key()) else { continue };
            let Value::Array(items) = list else {
                self.problem(file, format!("\"{}\" is not an array of rule strings; it is ignored", kind.key()));
                continue;
            };
            for item in items {
                let Some(text) = item.as_str() else {
                    self.problem(file, format!("rule {item}: not a string (in \"{}\", ignored)", kind.key()));
                    continue;
                };
                match parse_rule(text) {
                    Ok(rule) => self.rules.push(SourcedRule {
                        rule,
                        text: text.trim().to_owned(),
                        kind,
                        scope,
                        file: Some(file.to_path_buf()),
                        root: root.to_path_buf(),
                    }),
                    Err(why) => {
                        self.problem(file, format!("rule {:?}: {why} (in \"{}\", ignored)", text.trim(), kind.key()))
                    }
                }
            }
        }
        if let Some(mode) = permissions.get("defaultMode") {
            match mode.as_str().and_then(PermissionMode::parse) {
                Some(PermissionMode::BypassPermissions)
                    if matches!(scope, Scope::Project | Scope::ClaudeProject | Scope::Local | Scope::ClaudeLocal) =>
                {
                    self.problem(
                        file,
                        "defaultMode bypassPermissions is not taken from a file inside the project (a repository \
                         could commit it to switch every question off); set it in your user settings or pass \
                         --permission-mode bypassPermissions (ignored)",
                    );
                }
                Some(mode) => self.default_mode = Some(mode),
                None => {
                    let known: Vec<&str> = PermissionMode::ALL.iter().map(|m| m.as_str()).collect();
                    let known = known.join(", ");
                    self.problem(
                        file,
                        format!("defaultMode {mode}: not a permission mode (use one of {known}); ignored"),
                    );
                }
            }
        }
        match permissions.get("additionalDirectories") {
            None => {}
            Some(Value::Array(items)) => {
                for item in items {
                    match item.as_str().ok_or("not a string").and_then(|dir| resolve_directory(dir, root, home)) {
                        Ok(dir) if !self.additional_directories.contains(&dir) => self.additional_directories.push(dir),
                        Ok(_) => {}
                        Err(why) => self.problem(file, format!("additionalDirectories {item}: {why}; ignored")),
                    }
                }
            }
            Some(_) => self.problem(file, "\"additionalDirectories\" is not an array of paths; it is ignored"),
        }
    }

    fn read_mcp_choices(&mut self, scope: Scope, file: &Path, document: &Map<String, Value>) {
        const KEYS: [&str; 3] = ["enableAllProjectMcpServers", "enabledMcpjsonServers", "disabledMcpjsonServers"];
        if !KEYS.iter().any(|key| document.contains_key(*key)) {
            return;
        }
        if matches!(scope, Scope::Project | Scope::ClaudeProject) {
            self.problem(
                file,
                "the project's committed settings can't approve its own .mcp.json servers; approve them in the app \
                 (tandem asks once) or in your user settings (ignored)",
            );
            return;
        }
        if matches!(scope, Scope::Local | Scope::ClaudeLocal) {
            // Inside the repository too, and a repository can commit one: said when a server waits for approval.
            self.mcp_choices.ignored_files.push(file.to_path_buf());
            return;
        }
        match document.get("enableAllProjectMcpServers") {
            None => {}
            Some(Value::Bool(all)) => self.mcp_choices.enable_all = *all,
            Some(_) => self.problem(file, "\"enableAllProjectMcpServers\" is not true or false; it is ignored"),
        }
        for (key, disabled) in [("enabledMcpjsonServers", false), ("disabledMcpjsonServers", true)] {
            let Some(value) = document.get(key) else { continue };
            let Some(items) = value.as_array() else {
                self.problem(file, format!("\"{key}\" is not an array of server names; it is ignored"));
                continue;
            };
            for item in items {
                let Some(name) = item.as_str() else {
                    self.problem(file, format!("{key}: {item} is not a server name; ignored"));
                    continue;
                };
                let list = if disabled { &mut self.mcp_choices.disabled } else { &mut self.mcp_choices.enabled };
                if !list.iter().any(|n| n == name) {
                    list.push(name.to_owned());
                }
            }
        }
    }

    /// The file's top-level object and its text's digest, or `None`: the file is missing, or it is listed in
    /// [`Settings::unreadable`].
    fn read_document(&mut self, file: &Path) -> Option<ReadDocument> {
        match read_settings_object(file) {
            Ok(document) => document,
            Err(why) => {
                self.unreadable.push(format!("{}: {why}", file.display()));
                None
            }
        }
    }

    fn problem(&mut self, file: &Path, why: impl std::fmt::Display) {
        self.problems.push(format!("{}: {why}", file.display()));
    }
}

/// A settings file's top-level object, and the digest of the text it was read from.
type ReadDocument = (Map<String, Value>, String);

/// Reads a settings file's top-level object: `Ok(None)` when the file doesn't exist, an empty object for a file
/// with nothing but whitespace (a `touch`ed file means "no settings", not "broken"), and an error that says why
/// (with the JSON error's line and column) for anything else.
fn read_settings_object(file: &Path) -> Result<Option<ReadDocument>, String> {
    let text = match read_settings_text(file) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(format!("cannot be read: {err}")),
    };
    let fingerprint = held::fingerprint(&text);
    if text.trim().is_empty() {
        return Ok(Some((Map::new(), fingerprint)));
    }
    match serde_json::from_str(&text) {
        Ok(Value::Object(document)) => Ok(Some((document, fingerprint))),
        Ok(_) => Err("the top level is not a JSON object".to_owned()),
        Err(err) => Err(format!("not valid JSON: {err}")),
    }
}

/// Parses a rule from a settings file or a flag: [`Rule::parse`], plus the checks that keep a typo from meaning
/// "every call" — an empty text, and an empty specifier (`Bash()`), are errors rather than the bare tool. The
/// error says why, without repeating the rule.
pub fn parse_rule(text: &str) -> Result<Rule, String> {
    let text = text.trim();
    if text.is_empty() {
        return Err("is empty".to_owned());
    }
    let rule = Rule::parse(text).map_err(|err| {
        let prefix = format!("rule {text:?} ");
        err.strip_prefix(&prefix).map(str::to_owned).unwrap_or(err)
    })?;
    let empty_specifier =
        text.find('(').and_then(|open| text.get(open + 1..text.len() - 1)).is_some_and(|inner| inner.trim().is_empty());
    if empty_specifier {
        return Err(format!(
            "has an empty specifier: write {} to mean every call, or put a pattern inside the parentheses",
            rule.tool
        ));
    }
    Ok(rule)
}

/// The settings file a scope reads from and writes to; `None` for flag and session scopes, which have none.
pub fn settings_file(scope: Scope, config_dir: &Path, project_root: &Path) -> Option<PathBuf> {
    match scope {
        Scope::User => Some(config_dir.join(SETTINGS_FILE)),
        Scope::Project => Some(project_root.join(TANDEM_DIR).join(SETTINGS_FILE)),
        Scope::Local => Some(project_root.join(TANDEM_DIR).join(LOCAL_SETTINGS_FILE)),
        Scope::ClaudeProject => Some(project_root.join(CLAUDE_DIR).join(SETTINGS_FILE)),
        Scope::ClaudeLocal => Some(project_root.join(CLAUDE_DIR).join(LOCAL_SETTINGS_FILE)),
        Scope::ClaudeUser | Scope::Flag | Scope::Session | Scope::Command => None,
    }
}

pub use crate::fs_util::project_root;

/// Reads and merges every settings file for a session in `cwd`. Never fails: problems are in
/// [`Settings::problems`]. The home directory (for `~/` in `additionalDirectories`) is the platform's.
pub fn load(config_dir: &Path, cwd: &Path) -> Settings {
    let home = directories::BaseDirs::new().map(|dirs| dirs.home_dir().to_path_buf());
    load_with_home(config_dir, cwd, home.as_deref())
}

/// [`load`] with an explicit home directory (`None` when there is none: `~/` directories are then reported),
/// so tests never depend on the real one.
pub fn load_with_home(config_dir: &Path, cwd: &Path, home: Option<&Path>) -> Settings {
    load_sources(config_dir, None, cwd, home, SettingSources::ALL)
}

/// Which settings files a session reads (`--setting-sources user,project,local`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SettingSources {
    /// The user's own files.
    pub user: bool,
    /// The project's shared `settings.json` files.
    pub project: bool,
    /// The project's git-ignored `settings.local.json` files.
    pub local: bool,
}

impl SettingSources {
    pub const ALL: SettingSources = SettingSources { user: true, project: true, local: true };

    /// Parses `user,project,local` (any subset, `""` for none).
    pub fn parse(list: &str) -> Result<SettingSources, String> {
        let mut sources = SettingSources { user: false, project: false, local: false };
        for name in list.split(',').map(str::trim).filter(|name| !name.is_empty()) {
            match name {
                "user" => sources.user = true,
                "project" => sources.project = true,
                "local" => sources.local = true,
                other => return Err(format!("{other:?} is not a setting source (use user, project, local)")),
            }
        }
        Ok(sources)
    }

    /// Whether a settings file is read: `project` says it is the project's, its name says whether it is local.
    pub fn includes(&self, file: &Path, project: bool) -> bool {
        if !project {
            return self.user;
        }
        if file.file_name().and_then(|name| name.to_str()) == Some(LOCAL_SETTINGS_FILE) {
            self.local
        } else {
            self.project
        }
    }
}

/// [`load_with_home`], reading only the files of `sources`.
/// `claude_dir` is Claude Code's user directory: its `settings.json` is a user file read before tandem's own.
pub fn load_sources(
    config_dir: &Path,
    claude_dir: Option<&Path>,
    cwd: &Path,
    home: Option<&Path>,
    sources: SettingSources,
) -> Settings {
    let root = project_root(cwd);
    let mut settings = Settings { project_root: root.clone(), ..Settings::default() };
    if let Some(file) = claude_dir.map(|dir| dir.join(SETTINGS_FILE)).filter(|_| sources.user)
        && file != config_dir.join(SETTINGS_FILE)
    {
        // Claude Code semantics: `/x` in a user file is relative to wherever the session runs.
        settings.read_file(Scope::ClaudeUser, &file, cwd, home);
    }
    // Lowest `defaultMode` precedence first: each file's mode replaces the one before.
    for scope in [Scope::User, Scope::ClaudeProject, Scope::ClaudeLocal, Scope::Project, Scope::Local] {
        let included = match scope {
            Scope::User => sources.user,
            Scope::ClaudeLocal | Scope::Local => sources.local,
            _ => sources.project,
        };
        if !included {
            continue;
        }
        let Some(file) = settings_file(scope, config_dir, &root) else { continue };
        // Claude Code semantics: `/x` in the user file is relative to wherever the session runs.
        let rule_root = if scope == Scope::User { cwd } else { root.as_path() };
        let mark = settings.mark();
        let fingerprint = settings.read_file(scope, &file, rule_root, home);
        if let Some(fingerprint) = fingerprint.filter(|_| matches!(scope, Scope::Local | Scope::ClaudeLocal)) {
            settings.hold_if_tracked(config_dir, &file, fingerprint, mark);
        }
    }
    settings
}

/// Resolves an `additionalDirectories` entry: absolute as is, `~`/`~/x` in the home directory, anything else
/// relative to the file's root.
fn resolve_directory(dir: &str, root: &Path, home: Option<&Path>) -> Result<PathBuf, &'static str> {
    let dir = dir.trim();
    if dir.is_empty() {
        return Err("is empty");
    }
    let home_relative = if dir == "~" { Some("") } else { dir.strip_prefix("~/") };
    let joined = match home_relative {
        Some(rest) => home.ok_or("names the home directory, which is unknown")?.join(rest),
        None => root.join(dir),
    };
    Ok(normalize(&joined))
}

/// Resolves a path specifier of a `Read`/`Edit`-style rule to an absolute glob pattern, with Claude Code's
/// semantics: `//abs/path` is absolute, `~` and `~/x` are in `home`, `/x` is relative to `rule_root` (the
/// settings file's project root — [`SourcedRule::root`]), and `x` or `./x` relative to `cwd`. The result is
/// normalized lexically (`.` dropped, `..` applied); glob characters pass through untouched. Matching details
/// (a pattern without `/` matching at any depth, a trailing `/`) are the caller's: normalizing drops a trailing
/// `/`, so check for it before calling.
pub fn resolve_path_pattern(pattern: &str, rule_root: &Path, cwd: &Path, home: &Path) -> PathBuf {
    let joined = if let Some(rest) = pattern.strip_prefix("//") {
        Path::new("/").join(rest.trim_start_matches('/'))
    } else if pattern == "~" {
        home.to_path_buf()
    } else if let Some(rest) = pattern.strip_prefix("~/") {
        home.join(rest.trim_start_matches('/'))
    } else if let Some(rest) = pattern.strip_prefix('/') {
        rule_root.join(rest)
    } else {
        cwd.join(pattern)
    };
    normalize(&joined)
}
