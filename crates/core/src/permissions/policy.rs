//! The decision for one tool call: allow, deny (with the reason the model sees) or ask (with the rule an
//! "always" answer would remember). Precedence: the hard blocklist and deny rules > ask rules > allow rules >
//! the mode. Paths are resolved (symlinks, `..`) before any rule or workspace check.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::bash::{self, Analysis, SimpleCommand};
use super::paths::Workspace;
use super::rules::{Rule, path_matches};
use super::settings::{RuleKind, Scope, SourcedRule};
use super::{Decision, PermissionMode};
use crate::tools::Tool;

/// Plain filesystem commands that `acceptEdits` runs without asking when every path they name is inside the
/// workspace.
const FILESYSTEM_COMMANDS: &[&str] = &["mkdir", "touch", "mv", "cp"];

/// Mode, rules and workspace: everything [`PermissionPolicy::decide`] needs.
#[derive(Clone, Debug)]
pub struct PermissionPolicy {
    pub mode: PermissionMode,
    pub rules: Vec<SourcedRule>,
    pub workspace: Workspace,
    /// Bash runs in a sandbox: leaving it (`dangerouslyDisableSandbox`) always asks.
    pub sandboxed: bool,
    home: PathBuf,
}

impl PermissionPolicy {
    pub fn new(mode: PermissionMode, workspace: Workspace, home: PathBuf) -> Self {
        PermissionPolicy { mode, rules: Vec::new(), workspace, sandboxed: false, home }
    }

    /// A policy for a workspace that is just `cwd`, with the real home directory.
    pub fn for_cwd(mode: PermissionMode, cwd: &Path) -> Self {
        let home = std::env::var_os("HOME").map(PathBuf::from);
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

    fn rules_of(&self, kind: RuleKind) -> impl Iterator<Item = &SourcedRule> {
        self.rules.iter().filter(move |rule| rule.kind == kind)
    }

    /// The paths Read deny rules hide, for directory searches (`None` when no rule denies reading).
    pub fn hidden_paths(&self) -> Option<crate::tools::HiddenPaths> {
        let rules: Vec<SourcedRule> = self
            .rules_of(RuleKind::Deny)
            .filter(|rule| rule.rule.covers_tool("Read") && rule.rule.specifier.is_some())
            .cloned()
            .collect();
        if rules.is_empty() {
            return None;
        }
        let cwd = self.workspace.cwd().to_path_buf();
        let home = self.home.clone();
        Some(std::sync::Arc::new(move |path: &Path| {
            rules.iter().any(|rule| {
                rule.rule
                    .specifier
                    .as_deref()
                    .is_some_and(|spec| path_matches(spec, path, &rule.root, &cwd, &home, true))
            })
        }))
    }

    /// A Read deny rule that a read-only command's file argument falls under (`cat .env` with `Read(.env)`).
    fn denied_read_argument(&self, analysis: &Analysis) -> Option<String> {
        let hidden = self.hidden_paths()?;
        for cmd in analysis.commands.iter().filter(|cmd| cmd.is_read_only()) {
            for arg in cmd.argv.iter().skip(1).filter(|arg| !arg.starts_with('-')) {
                let path = self.workspace.resolve(arg);
                if hidden(&path) {
                    return Some(format!(
                        "Reading {} is denied by a Read rule, also through {}.",
                        path.display(),
                        cmd.argv[0]
                    ));
                }
            }
        }
        None
    }

    /// Decides whether `tool` may run with `input`.
    pub fn decide(&self, tool: &dyn Tool, input: &Value) -> Decision {
        if tool.name() == "Bash" {
            let command = input.get("command").and_then(Value::as_str).unwrap_or_default();
            let unsandboxed = input.get("dangerouslyDisableSandbox").and_then(Value::as_bool).unwrap_or(false);
            return self.decide_bash(command, unsandboxed);
        }
        self.decide_file_tool(tool, input)
    }

    fn decide_file_tool(&self, tool: &dyn Tool, input: &Value) -> Decision {
        let name = tool.name();
        let path = input
            .get("file_path")
            .or_else(|| input.get("path"))
            .or_else(|| input.get("notebook_path"))
            .and_then(Value::as_str)
            .map(|path| self.workspace.resolve(path))
            .or_else(|| {
                // Tools whose input names no path field say where they write (SaveMemory's topic file).
                let context = crate::tools::ToolContext::new(self.workspace.cwd().to_path_buf());
                tool.target_path(input, &context).map(|path| self.workspace.resolve(&path.to_string_lossy()))
            })
            .or_else(|| tool.is_read_only().then(|| self.workspace.cwd().to_path_buf()));
        let matches =
            |rule: &SourcedRule| self.file_rule_matches(rule, name, path.as_deref(), rule.kind != RuleKind::Allow);

        if let Some(rule) = self.rules_of(RuleKind::Deny).find(|rule| matches(rule)) {
            return Decision::Deny {
                reason: format!("Permission to use {name} was denied by the rule {}{}.", rule.text, source(rule)),
            };
        }
        let inside = path.as_deref().is_none_or(|path| self.workspace.contains(path));
        let protection = path.as_deref().and_then(|path| self.workspace.protected(path));
        let sensitive = if tool.is_read_only() { protection.filter(|p| p.guards_reads()) } else { protection };
        if self.rules_of(RuleKind::Ask).any(&matches) {
            return self.ask(
                name,
                self.suggest_file_rule(name, path.as_deref(), inside),
                Some("an ask rule matches".into()),
            );
        }
        let explicit = self.rules_of(RuleKind::Allow).any(|rule| rule.rule.specifier.is_some() && matches(rule));
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
        if tool.is_read_only() {
            return Decision::Allow;
        }
        match self.mode {
            PermissionMode::Plan => Decision::Deny {
                reason: format!(
                    "{name} is not allowed in plan mode: only read-only tools may run. Present your plan instead."
                ),
            },
            PermissionMode::AcceptEdits if matches!(name, "Edit" | "Write" | "SaveMemory") => Decision::Allow,
            _ => self.ask(name, suggestion, None),
        }
    }

    fn file_rule_matches(&self, rule: &SourcedRule, tool: &str, path: Option<&Path>, broad: bool) -> bool {
        if !rule.rule.covers_tool(tool) {
            return false;
        }
        match (&rule.rule.specifier, path) {
            (None, _) => true,
            (Some(spec), Some(path)) => path_matches(spec, path, &rule.root, self.workspace.cwd(), &self.home, broad),
            (Some(_), None) => false,
        }
    }

    fn decide_bash(&self, command: &str, unsandboxed: bool) -> Decision {
        let analysis = bash::analyze(command);
        if let Some(reason) = &analysis.blocked {
            return Decision::Deny {
                reason: format!("Refused: {reason}. tandem never runs this command, in any mode."),
            };
        }
        let bash_rules = |kind: RuleKind| self.rules_of(kind).filter(|rule| rule.rule.covers_tool("Bash"));
        for rule in bash_rules(RuleKind::Deny) {
            let hit = match &rule.rule.specifier {
                None => true,
                Some(spec) => analysis.commands.iter().any(|cmd| cmd.matches_for_deny(spec)),
            };
            if hit {
                return Decision::Deny {
                    reason: format!(
                        "Permission to run this command was denied by the rule {}{}.",
                        rule.text,
                        source(rule)
                    ),
                };
            }
        }
        if let Some(reason) = self.denied_read_argument(&analysis) {
            return Decision::Deny { reason };
        }
        let suggestion = suggest_bash_rule(&analysis, |cmd| self.bash_command_covered(cmd));
        let asked = bash_rules(RuleKind::Ask).any(|rule| match &rule.rule.specifier {
            None => true,
            Some(spec) => analysis.commands.iter().any(|cmd| cmd.matches(spec)),
        });
        if asked {
            return self.ask("Bash", suggestion, Some("an ask rule matches".into()));
        }
        if self.mode == PermissionMode::BypassPermissions {
            return Decision::Allow;
        }
        if unsandboxed && self.sandboxed {
            // Leaving the sandbox is always the user's call, whatever the rules say.
            return self.ask_bash(String::new(), Some("it asks to run outside the sandbox".into()));
        }
        if bash_rules(RuleKind::Allow).any(|rule| rule.rule.specifier.is_none()) {
            return Decision::Allow;
        }
        if let Some(reason) = &analysis.always_ask {
            return self.ask_bash(String::new(), Some(format!("it contains {reason}, which a rule can never allow")));
        }
        for write in &analysis.writes {
            let target = self.workspace.resolve(write);
            if let Some(protection) = self.workspace.protected(&target) {
                return self.ask_bash(
                    suggestion,
                    Some(format!("it writes to {}, which is protected: {}", target.display(), protection.reason())),
                );
            }
            if !self.workspace.contains(&target) {
                return self
                    .ask_bash(suggestion, Some(format!("it writes to {}, outside the workspace", target.display())));
            }
        }
        let writes_allowed = analysis.writes.is_empty() || self.mode == PermissionMode::AcceptEdits;
        let all_covered = analysis.commands.iter().all(|cmd| self.bash_command_covered(cmd));
        if all_covered && writes_allowed {
            return Decision::Allow;
        }
        self.ask_bash(suggestion, None)
    }

    /// Whether one simple command may run: an allow rule names it, it is read-only, or it is a plain filesystem
    /// command inside the workspace in `acceptEdits`.
    fn bash_command_covered(&self, cmd: &SimpleCommand) -> bool {
        let by_rule = self
            .rules_of(RuleKind::Allow)
            .filter(|rule| rule.rule.covers_tool("Bash"))
            .any(|rule| rule.rule.specifier.as_deref().is_some_and(|spec| cmd.matches(spec)));
        if by_rule {
            return true;
        }
        match self.mode {
            PermissionMode::DontAsk => false,
            PermissionMode::AcceptEdits if self.is_workspace_filesystem_command(cmd) => true,
            _ => cmd.is_read_only(),
        }
    }

    fn is_workspace_filesystem_command(&self, cmd: &SimpleCommand) -> bool {
        let Some(program) = cmd.argv.first() else { return false };
        // A word with an expansion (`$HOME/x`) names a path only known at run time.
        if !cmd.is_plain() || !FILESYSTEM_COMMANDS.contains(&program.as_str()) || !cmd.assignments.is_empty() {
            return false;
        }
        let paths: Vec<&String> = cmd.argv[1..].iter().filter(|arg| !arg.starts_with('-')).collect();
        !paths.is_empty()
            && paths.iter().all(|arg| {
                let target = self.workspace.resolve(arg);
                self.workspace.contains(&target) && self.workspace.protected(&target).is_none()
            })
    }

    fn ask_bash(&self, suggestion: String, reason: Option<String>) -> Decision {
        match self.mode {
            PermissionMode::Plan => Decision::Deny {
                reason: "Plan mode allows only read-only commands known to be safe; this one was not run. Present your plan instead.".into(),
            },
            _ => self.ask("Bash", suggestion, reason),
        }
    }

    /// Ask, or deny in `dontAsk` (which never asks).
    fn ask(&self, tool: &str, suggested_rule: String, reason: Option<String>) -> Decision {
        if self.mode == PermissionMode::DontAsk {
            let why = reason.map(|reason| format!(" ({reason})")).unwrap_or_default();
            return Decision::Deny {
                reason: format!(
                    "Permission to use {tool} was denied{why}: no rule allows it and this session never asks."
                ),
            };
        }
        Decision::Ask { suggested_rule, reason }
    }

    fn suggest_file_rule(&self, tool: &str, path: Option<&Path>, inside: bool) -> String {
        let family = if matches!(tool, "Edit" | "Write") {
            "Edit"
        } else if matches!(tool, "Read" | "Grep" | "Glob") {
            "Read"
        } else {
            tool
        };
        match path {
            Some(path) if !inside => {
                let dir = if path.is_dir() { path } else { path.parent().unwrap_or(path) };
                format!("{family}(/{}/**)", dir.display())
            }
            _ => family.to_owned(),
        }
    }
}

/// The rules an "always" answer remembers for a command: a prefix rule for each simple command that is not
/// covered yet (`npm test -- --watch` → `Bash(npm test:*)`). Empty when no rule could ever allow it.
fn suggest_bash_rule(analysis: &Analysis, covered: impl Fn(&SimpleCommand) -> bool) -> String {
    if analysis.always_ask.is_some() || analysis.blocked.is_some() {
        return String::new();
    }
    let mut rules: Vec<String> = Vec::new();
    for cmd in analysis.commands.iter().filter(|cmd| !covered(cmd)) {
        let Some(program) = cmd.argv.first() else { continue };
        let prefix = match cmd.argv.get(1) {
            Some(second)
                if !second.starts_with('-')
                    && second.chars().all(|c| c.is_ascii_alphanumeric() || "-_:.".contains(c)) =>
            {
                format!("{program} {second}")
            }
            _ => program.clone(),
        };
        let rule = format!("Bash({prefix}:*)");
        if !rules.contains(&rule) {
            rules.push(rule);
        }
    }
    rules.join(", ")
}

fn source(rule: &SourcedRule) -> String {
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
