//! The permission vocabulary front ends show and set: modes, and where a rule came from.

use serde::{Deserialize, Serialize};

/// Claude Code's permission modes, with its names.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum PermissionMode {
    /// Read-only tools run; everything else asks.
    #[default]
    Default,
    /// Edits and writes run without asking; other tools follow the rules.
    AcceptEdits,
    /// Only read-only tools run.
    Plan,
    /// Everything runs, except what a deny rule stops.
    BypassPermissions,
    /// Never asks: what the rules allow runs, everything else is denied.
    DontAsk,
}

impl PermissionMode {
    pub const ALL: [PermissionMode; 5] = [
        PermissionMode::Default,
        PermissionMode::AcceptEdits,
        PermissionMode::Plan,
        PermissionMode::BypassPermissions,
        PermissionMode::DontAsk,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            PermissionMode::Default => "default",
            PermissionMode::AcceptEdits => "acceptEdits",
            PermissionMode::Plan => "plan",
            PermissionMode::BypassPermissions => "bypassPermissions",
            PermissionMode::DontAsk => "dontAsk",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        PermissionMode::ALL.into_iter().find(|mode| mode.as_str() == s)
    }
}

/// Where a rule came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// Claude Code's user file, `~/.claude/settings.json` (read, never written by tandem).
    ClaudeUser,
    /// `<config dir>/settings.json`.
    User,
    /// `.tandem/settings.json`, committed.
    Project,
    /// `.tandem/settings.local.json`, git-ignored.
    Local,
    /// `.claude/settings.json`.
    ClaudeProject,
    /// `.claude/settings.local.json`.
    ClaudeLocal,
    /// A command-line flag (`--allowedTools`, `--disallowedTools`).
    Flag,
    /// An "always" answer for this session only.
    Session,
    /// A custom slash command's `allowed-tools`, for the command's turn only.
    Command,
}

impl Scope {
    /// Whether a rule from here may lift a secret's read denial: only the user's own — their settings files, a
    /// flag, an answer this session. A project's files, committed or personal (a personal one may have come with
    /// an unpacked archive, or behind a link), and a custom command's `allowed-tools` never do.
    pub fn lifts_secrets(self) -> bool {
        matches!(self, Scope::ClaudeUser | Scope::User | Scope::Flag | Scope::Session)
    }

    /// A short name for `/permissions` listings and messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::ClaudeUser => "claude user",
            Scope::User => "user",
            Scope::Project => "project",
            Scope::Local => "local",
            Scope::ClaudeProject => "claude project",
            Scope::ClaudeLocal => "claude local",
            Scope::Flag => "flag",
            Scope::Session => "session",
            Scope::Command => "command",
        }
    }
}

/// Which list a rule is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RuleKind {
    Allow,
    Ask,
    Deny,
}

impl RuleKind {
    pub const ALL: [RuleKind; 3] = [RuleKind::Allow, RuleKind::Ask, RuleKind::Deny];

    /// The key of this list under `permissions` in a settings file.
    pub fn key(self) -> &'static str {
        match self {
            RuleKind::Allow => "allow",
            RuleKind::Ask => "ask",
            RuleKind::Deny => "deny",
        }
    }
}

/// Splits `--allowedTools` values: commas or spaces separate rules, except inside parentheses
/// (`Bash(npm test),Edit` → `Bash(npm test)`, `Edit`).
pub fn split_rule_list(value: &str) -> Vec<String> {
    let mut rules = Vec::new();
    let mut current = String::new();
    let mut depth = 0usize;
    for c in value.chars() {
        match c {
            '(' => {
                depth += 1;
                current.push(c);
            }
            ')' => {
                depth = depth.saturating_sub(1);
                current.push(c);
            }
            ',' | ' ' | '\t' | '\n' if depth == 0 => {
                if !current.trim().is_empty() {
                    rules.push(current.trim().to_owned());
                }
                current.clear();
            }
            _ => current.push(c),
        }
    }
    if !current.trim().is_empty() {
        rules.push(current.trim().to_owned());
    }
    rules
}

/// `rules` as the one text a dialog shows and an "always" answer saves, or `""` (no "always" offered) when that
/// text would not split back into exactly these rules: a rule holding a quoted `)` or `, ` (`Bash(rm '), Bash,
/// Bash(')`) would otherwise be saved as several, one of them a bare `Bash`.
pub fn join_rules(rules: &[String]) -> String {
    let joined = rules.join(", ");
    if split_rule_list(&joined) == rules { joined } else { String::new() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_rule_lists() {
        assert_eq!(split_rule_list("Bash(npm test),Edit Read"), vec!["Bash(npm test)", "Edit", "Read"]);
        assert_eq!(split_rule_list(" , "), Vec::<String>::new());
    }
}
