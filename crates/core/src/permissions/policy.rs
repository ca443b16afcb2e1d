//! The decision for one tool call: allow, deny (with the reason the model sees) or ask (with the rule an
//! "always" answer would remember). Precedence: the hard blocklist and deny rules > ask rules > allow rules >
//! the mode. Paths are resolved (symlinks, `..`) before any rule or workspace check.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::paths::Workspace;
use super::rules::{Rule, path_matches};
use super::settings::{RuleKind, Scope, SourcedRule};
use super::{Decision, PermissionMode};
use crate::sandbox::Grant;
use crate::tools::{FileAccess, Subject, Tool};

/// What the `sandbox` settings change in decisions about Bash calls.
#[derive(Clone, Debug)]
pub struct SandboxDecisions {
    /// `sandbox.excludedCommands`: these never run sandboxed, so tandem never runs them on its own judgement.
    pub excluded_commands: Vec<String>,
    /// `sandbox.allowUnsandboxedCommands`: whether `dangerouslyDisableSandbox` may be asked for.
    pub allow_unsandboxed_commands: bool,
    /// `sandbox.autoAllowBashIfSandboxed`: commands the analyser would ask about run in the sandbox instead.
    pub auto_allow_bash_if_sandboxed: bool,
}

impl Default for SandboxDecisions {
    fn default() -> Self {
        SandboxDecisions {
            excluded_commands: Vec::new(),
            allow_unsandboxed_commands: true,
            auto_allow_bash_if_sandboxed: false,
        }
    }
}

/// Mode, rules and workspace: everything [`PermissionPolicy::decide`] needs.
#[derive(Clone, Debug)]
pub struct PermissionPolicy {
    pub mode: PermissionMode,
    pub rules: Vec<SourcedRule>,
    pub workspace: Workspace,
    /// Bash runs in a sandbox: leaving it (`dangerouslyDisableSandbox`) always asks.
    pub sandboxed: bool,
    /// What the `sandbox` settings say about deciding (excluded commands, leaving the sandbox, auto-allow).
    pub sandbox: SandboxDecisions,
    /// What tracked personal settings files would widen, applied only once the user trusts them
    /// (`/permissions trust`); see [`super::settings::HeldSettings`].
    pub held: Vec<super::settings::HeldSettings>,
    pub(super) home: PathBuf,
}

impl PermissionPolicy {
    pub fn new(mode: PermissionMode, workspace: Workspace, home: PathBuf) -> Self {
        PermissionPolicy {
            mode,
            rules: Vec::new(),
            workspace,
            sandboxed: false,
            sandbox: SandboxDecisions::default(),
            held: Vec::new(),
            home,
        }
    }

    /// A policy for a workspace that is just `cwd`, with the real home directory.
    pub fn for_cwd(mode: PermissionMode, cwd: &Path) -> Self {
        let home = crate::fs_util::user_home();
        let workspace = Workspace::new(cwd, &[], home.clone(), None);
        PermissionPolicy::new(mode, workspace, home.unwrap_or_else(|| PathBuf::from("/")))
    }

    /// Adds a rule from a flag or an answer ("always for this session").
    pub fn add_rule(&mut self, kind: RuleKind, text: &str, scope: Scope) -> Result<(), String> {
        let rule = Rule::parse(text)?;
        let root = self.workspace.cwd().to_path_buf();
        self.rules.push(SourcedRule { rule, text: text.to_owned(), kind, scope, file: None, root });
        Ok(())
    }

    pub(super) fn rules_of(&self, kind: RuleKind) -> impl Iterator<Item = &SourcedRule> {
        self.rules.iter().filter(move |rule| rule.kind == kind)
    }

    /// The paths Read deny rules hide, for directory searches (`None` when no rule denies reading).
    pub fn hidden_paths(&self) -> Option<crate::tools::HiddenPaths> {
        let denies = self.rules_of(RuleKind::Deny).any(names_read_paths);
        denies.then(|| std::sync::Arc::new(self.read_rule_matcher(&[RuleKind::Deny])) as crate::tools::HiddenPaths)
    }

    /// What directory searches (Grep, Glob) skip as they walk: every path a Read of it would not run unasked for —
    /// covered by a Read deny or ask rule (a walk can't stop to ask), or a secret (credentials, tandem's
    /// configuration, every project's transcripts, the system's secrets) that no allow rule names. Read judges the
    /// path a call names; a walk reaches paths no call named, so without this a search of the home directory
    /// printed `~/.ssh/id_rsa`.
    pub fn walk_hidden(&self) -> crate::tools::HiddenPaths {
        self.read_guard(&[RuleKind::Deny, RuleKind::Ask])
    }

    /// What no Read may return, whatever was approved: what a Read deny rule covers, and the secrets no rule of the
    /// user's names. Checked against the real place of the file a Read opened
    /// ([`crate::tools::refuse_hidden_opened`]): a link made after the call was judged leads elsewhere.
    pub fn never_readable(&self) -> crate::tools::HiddenPaths {
        self.read_guard(&[RuleKind::Deny])
    }

    /// The paths covered by a Read rule of `kinds`, and the secrets no allow rule of the user's names.
    fn read_guard(&self, kinds: &[RuleKind]) -> crate::tools::HiddenPaths {
        let kept = self.read_rule_matcher(kinds);
        let lifting: Vec<(String, PathBuf)> = self
            .rules_of(RuleKind::Allow)
            .filter(|rule| names_read_paths(rule) && rule.scope.lifts_secrets())
            .filter_map(|rule| Some((rule.rule.specifier.clone()?, rule.root.clone())))
            .collect();
        let home = self.home.clone();
        let workspace = self.workspace.clone();
        let secrets = workspace.secret_paths();
        std::sync::Arc::new(move |path: &Path| {
            let secret = || {
                workspace.protected(path).is_some_and(|protection| protection.guards_reads())
                    || secrets.iter().any(|secret| path.starts_with(secret))
            };
            // A secret is lifted only by a rule that spells where it is (`Read(~/.ssh/**)`, not `Read(~/**)`).
            let lifted = || lifting.iter().any(|(spec, root)| lifts_protection(spec, root, path, &workspace, &home));
            kept(path) || secret() && !lifted()
        })
    }

    /// Whether a path matches a Read rule of `kinds` that names paths (deny and ask rules read the wider way; an
    /// allow rule the repository brings lifts nothing: see `read_rule_names`).
    fn read_rule_matcher(&self, kinds: &[RuleKind]) -> impl Fn(&Path) -> bool + Send + Sync + 'static {
        let counts = |rule: &&SourcedRule| {
            kinds.contains(&rule.kind)
                && names_read_paths(rule)
                && (rule.kind != RuleKind::Allow || rule.scope.lifts_secrets())
        };
        let rules: Vec<SourcedRule> = self.rules.iter().filter(counts).cloned().collect();
        let (roots, home) = (self.workspace.roots().to_vec(), self.home.clone());
        let broad = !kinds.contains(&RuleKind::Allow);
        // Where the links deny and ask rules cover lead, found now (a matcher is made for each call).
        let targets: Vec<PathBuf> = match broad {
            true => rules.iter().flat_map(|rule| self.rule_link_targets(rule)).collect(),
            false => Vec::new(),
        };
        move |path: &Path| {
            targets.iter().any(|target| path.starts_with(target))
                || rules.iter().any(|rule| {
                    let spec = rule.rule.specifier.as_deref().unwrap_or_default();
                    path_matches(spec, path, &rule.root, &roots, &home, broad)
                })
        }
    }

    /// Decides whether `tool` may run with `input`.
    pub fn decide(&self, tool: &dyn Tool, input: &Value) -> Decision {
        self.decide_with_grant(tool, input).0
    }

    /// [`PermissionPolicy::decide`], and for an allowed Bash call the reason it may run ([`Grant`]), which the
    /// sandbox holds the command to. Other tools don't run in the sandbox: their grant is [`Grant::ReadOnly`].
    pub fn decide_with_grant(&self, tool: &dyn Tool, input: &Value) -> (Decision, Grant) {
        if let Some(server) = tool.mcp_server() {
            return (self.decide_mcp(tool, server), Grant::ReadOnly);
        }
        let decision = match tool.permission_subject(input, self.workspace.cwd()) {
            Subject::Command { command, unsandboxed } => return self.decide_bash(&command, unsandboxed),
            Subject::Fetch { url } => self.decide_web_fetch(&url),
            Subject::WebSearch => self.decide_web_search(),
            Subject::File(access) => self.decide_file_access(tool, &access),
            Subject::UserAnswer => self.decide_user_answer(tool.name()),
        };
        (decision, Grant::ReadOnly)
    }

    /// Only a deny rule naming the tool or a mode that never asks refuses it; nothing allows it: the answer is
    /// the user's, so the reason keeps a hook's allow from standing in for it.
    fn decide_user_answer(&self, name: &str) -> Decision {
        let denied = |rule: &&SourcedRule| rule.rule.covers_tool(name) && rule.rule.specifier.is_none();
        if let Some(rule) = self.rules_of(RuleKind::Deny).find(denied) {
            return Decision::Deny {
                reason: format!("Permission to use {name} was denied by the rule {}{}.", rule.text, source(rule)),
            };
        }
        if self.mode == PermissionMode::DontAsk {
            return Decision::Deny {
                reason: format!(
                    "{name} was not run: this session never asks the user. Decide yourself and say what you assumed."
                ),
            };
        }
        Decision::Ask { suggested_rule: String::new(), reason: Some("only the user can answer it".to_owned()) }
    }

    /// The decision on a file call's access as given (the re-check before a call runs passes its path resolved).
    pub fn decide_file_access(&self, tool: &dyn Tool, access: &FileAccess) -> Decision {
        if let Some(start) = &access.starts_at {
            let at_start = FileAccess { path: Some(start.clone()), starts_at: None, ..access.clone() };
            let decision = self.decide_file_access(tool, &at_start);
            if decision != Decision::Allow {
                return decision;
            }
        }
        let name = tool.name();
        let written = access.path.clone();
        // A path that can't be resolved for sure (a dangling link, /proc…) is never inside.
        let certain = written.as_deref().is_none_or(|path| self.workspace.resolve_strict(path).is_some());
        let path = written.as_deref().map(|path| self.workspace.resolve(path));
        // A deny or ask rule also covers the path as spelled (`conf/k`, a link under `Read(conf/**)`, resolves to
        // `private/k2`) and the file found where such a rule points (`a.key -> plain.txt` under `Read(**/*.key)`,
        // read as `plain.txt`): the same file, whichever name reaches it.
        let spelled = written.as_deref().map(|path| super::paths::normalize(&self.workspace.absolute(path)));
        let origin = path
            .as_deref()
            .and_then(|path| std::fs::metadata(path).ok())
            .and_then(|meta| crate::sandbox::denied_origin_of(&meta));
        let matches = |rule: &SourcedRule| {
            let narrow = rule.kind == RuleKind::Allow;
            self.file_rule_matches(rule, name, path.as_deref(), !narrow)
                || !narrow
                    && ([&spelled, &origin]
                        .into_iter()
                        .flatten()
                        .any(|other| self.file_rule_matches(rule, name, Some(other), true))
                        || rule.rule.covers_tool(name)
                            && path.as_deref().is_some_and(|path| self.rule_leads_to(rule, path)))
        };

        if let Some(rule) = self.rules_of(RuleKind::Deny).find(|rule| matches(rule)) {
            return Decision::Deny {
                reason: format!("Permission to use {name} was denied by the rule {}{}.", rule.text, source(rule)),
            };
        }
        // `/proc/self/cwd/../.ssh/id_rsa` is judged by its spelling, which no list of secrets matches, while the
        // kernel follows the process's links to wherever they lead: refused in every mode, whatever a rule says.
        if let Some(written) = written.as_deref()
            && let Some(link) = crate::fs_util::process_link(&self.workspace.absolute(written))
        {
            return Decision::Deny {
                reason: format!(
                    "{name} of {written} is refused: it goes through {}, a link of a process that leads wherever \
                     that process is, which can't be judged. Name the file by its real path.",
                    link.display()
                ),
            };
        }
        // Judged by its spelling alone, a path that can't be resolved for sure (a link dangling now and valid when
        // the call runs, links expanding past PATH_MAX) could reach anything: asked, whatever a rule says; refused
        // where nobody is asked. Under `/proc` the walk above already looked for the links that lead elsewhere.
        if let Some(written) = written.as_deref()
            && !certain
            && !super::paths::normalize(&self.workspace.absolute(written)).starts_with("/proc")
        {
            let reason = format!(
                "{written} can't be resolved for sure (a dangling link, too many links, a path too long, or a \
                 directory that can't be looked into), so what it reaches can't be judged"
            );
            if self.mode == PermissionMode::BypassPermissions {
                return Decision::Deny { reason: format!("{name} is refused: {reason}.") };
            }
            return self.ask(name, String::new(), Some(reason));
        }
        let inside = certain && path.as_deref().is_none_or(|path| self.workspace.contains(path));
        let protection = path.as_deref().and_then(|path| self.workspace.protected(path));
        let sensitive = if access.writes { protection } else { protection.filter(|p| p.guards_reads()) };
        // Secrets are denied to reads in every mode unless a rule names them.
        if let (false, Some(protection), Some(path)) = (access.writes, sensitive, path.as_deref())
            && !self.read_rule_names(path)
        {
            return Decision::Deny {
                reason: format!(
                    "{name} of {} is denied: {}. An allow rule naming the path (e.g. Read({}/**)) lets it through.",
                    path.display(),
                    protection.reason(),
                    path.display()
                ),
            };
        }
        // Plan mode refuses every change, whatever an allow rule says (Claude Code does the same).
        if self.mode == PermissionMode::Plan && access.writes {
            return Decision::Deny {
                reason: format!(
                    "{name} is not allowed in plan mode: only read-only tools may run. Present your plan instead."
                ),
            };
        }
        if self.rules_of(RuleKind::Ask).any(&matches) {
            return self.ask(
                name,
                self.suggest_file_rule(name, path.as_deref(), inside),
                Some("an ask rule matches".into()),
            );
        }
        // A protected place is allowed only by a rule that spells it: `Edit(*.json)` or `Edit(**)` matching
        // `.claude/settings.local.json` or `.git/config` is not the user asking for that.
        let explicit = self.rules_of(RuleKind::Allow).any(|rule| {
            rule.rule.specifier.is_some()
                && matches(rule)
                && (sensitive.is_none() || path.as_deref().is_some_and(|path| self.rule_spells(rule, path)))
        });
        let general = self.rules_of(RuleKind::Allow).any(|rule| rule.rule.specifier.is_none() && matches(rule));
        if explicit || (general && inside && sensitive.is_none()) {
            return Decision::Allow;
        }
        if self.mode == PermissionMode::BypassPermissions {
            return Decision::Allow;
        }
        let shown = path.as_deref().map(|path| path.display().to_string()).unwrap_or_default();
        let suggestion = self.suggest_file_rule(name, path.as_deref(), inside);
        if let Some(protection) = sensitive {
            return self.ask(name, suggestion, Some(format!("{shown} is protected: {}", protection.reason())));
        }
        if !inside {
            return self.ask(name, suggestion, Some(format!("{shown} is outside the workspace")));
        }
        if access.every_project {
            return self.ask(name, String::new(), Some("it searches the sessions of every project".into()));
        }
        if !access.writes {
            return Decision::Allow;
        }
        match self.mode {
            PermissionMode::Plan => Decision::Deny {
                reason: format!(
                    "{name} is not allowed in plan mode: only read-only tools may run. Present your plan instead."
                ),
            },
            PermissionMode::AcceptEdits if access.edits_files => Decision::Allow,
            _ => self.ask(name, suggestion, None),
        }
    }

    fn rule_spells(&self, rule: &SourcedRule, path: &Path) -> bool {
        rule.rule.specifier.as_deref().is_some_and(|spec| spells_protected_place(spec, path, &self.workspace))
    }

    pub(super) fn file_rule_matches(&self, rule: &SourcedRule, tool: &str, path: Option<&Path>, broad: bool) -> bool {
        if !rule.rule.covers_tool(tool) {
            return false;
        }
        match (&rule.rule.specifier, path) {
            (None, _) => true,
            (Some(spec), Some(path)) => path_matches(spec, path, &rule.root, self.workspace.roots(), &self.home, broad),
            (Some(_), None) => false,
        }
    }

    pub(super) fn ask_bash(&self, suggestion: String, reason: Option<String>) -> Decision {
        match self.mode {
            PermissionMode::Plan => Decision::Deny {
                reason: "Plan mode allows only read-only commands known to be safe; this one was not run. Present your plan instead.".into(),
            },
            _ => self.ask("Bash", suggestion, reason),
        }
    }

    /// Ask, or deny in `dontAsk` (which never asks).
    pub(super) fn ask(&self, tool: &str, suggested_rule: String, reason: Option<String>) -> Decision {
        if self.mode == PermissionMode::DontAsk {
            let why = reason.map(|reason| format!(" ({reason})")).unwrap_or_default();
            return Decision::Deny {
                reason: format!(
                    "Permission to use {tool} was denied{why}: no rule allows it and this session never asks."
                ),
            };
        }
        // An "always" answer saves the suggestion split back into rules: one that would not split back into
        // exactly what is shown (a `)` or `, ` in a path) is not offered, lest a piece such as a bare `Bash` become a
        // rule of its own. Other tools suggest one rule; a command's list is joined by `suggest_bash_rule`.
        let suggested_rule = match tool {
            "Bash" => suggested_rule,
            _ if suggested_rule.is_empty() => suggested_rule,
            _ => tandem_protocol::permissions::join_rules(&[suggested_rule]),
        };
        Decision::Ask { suggested_rule, reason }
    }

    fn suggest_file_rule(&self, tool: &str, path: Option<&Path>, inside: bool) -> String {
        let family = super::rules::rule_family(tool);
        match path {
            Some(path) if !inside => {
                let dir = if path.is_dir() { path } else { path.parent().unwrap_or(path) };
                format!("{family}(/{}/**)", dir.display())
            }
            _ => family.to_owned(),
        }
    }
}

/// Whether an allow rule (its specifier, and the project it came from) lifts the protection of `path`: it matches
/// the path and spells every protected place on the way ([`spells_protected_place`]).
pub(super) fn lifts_protection(spec: &str, root: &Path, path: &Path, workspace: &Workspace, home: &Path) -> bool {
    path_matches(spec, path, root, workspace.roots(), home, false) && spells_protected_place(spec, path, workspace)
}

/// Whether a path rule's specifier spells the protected places `path` is in (each directory or file on its way
/// where a protection starts: `.git`, `.claude`, `.mcp.json`, `~/.ssh`…) as components, without a wildcard:
/// `Edit(.git/hooks/**)`, `Edit(.mcp.json)` and `Read(~/.ssh/**)` do; `Edit(*.json)`, `Edit(**)`, `Edit(.*/**)`,
/// `Read(~/**)` and `Edit(src/**)` do not, whatever they match. Only such a rule lifts a protection.
pub(super) fn spells_protected_place(spec: &str, path: &Path, workspace: &Workspace) -> bool {
    // Every place on the way where a protection starts: `.claude` and the `.git` of a repository below it are
    // two, and a rule naming the first does not name the second.
    let mut places = Vec::new();
    let mut above = None;
    for dir in path.ancestors().collect::<Vec<_>>().into_iter().rev() {
        let here = workspace.protected(dir);
        if here.is_some() && here != above {
            places.push(dir);
        }
        above = here;
    }
    let spelled = |place: &&Path| {
        let Some(name) = place.file_name().and_then(|name| name.to_str()) else { return false };
        spec.split('/').any(|part| !part.contains(['*', '?', '[', '{']) && part.eq_ignore_ascii_case(name))
    };
    !places.is_empty() && places.iter().all(spelled)
}

/// A Read rule (or one of its family) with a path: the kind a path matches.
pub(super) fn names_read_paths(rule: &SourcedRule) -> bool {
    rule.rule.covers_tool("Read") && rule.rule.specifier.is_some()
}

pub(super) fn source(rule: &SourcedRule) -> String {
    match &rule.file {
        Some(file) => format!(" (from {})", file.display()),
        None => match rule.scope {
            Scope::Flag => " (from the command line)".into(),
            Scope::Session => " (allowed earlier in this session)".into(),
            _ => String::new(),
        },
    }
}

#[cfg(test)]
#[path = "policy_tests.rs"]
mod tests;
