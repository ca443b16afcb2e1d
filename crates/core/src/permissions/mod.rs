//! The one place that decides whether a tool call may run.
//!
//! [`PermissionPolicy::decide`] returns allow, deny (with the reason the model will see) or ask (with the
//! rule an "always allow" answer would remember). Front ends answer "ask": the TUI asks the user, headless
//! mode denies. Precedence: deny rules > allow rules > the mode.
//!
//! Bash rules are deliberately conservative until the command analyser lands: a `Bash(...)` rule never
//! prefix rule matches a command that contains shell control characters (`;`, `&`, `|`, `$`, backticks, redirections,
//! newlines…), so `Bash(npm test:*)` can't be stretched to `npm test && rm -rf ~`.

pub mod bash;
pub mod settings;

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::tools::Tool;

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

/// A permission rule: `Tool` or `Tool(specifier)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    pub tool: String,
    pub specifier: Option<String>,
}

impl Rule {
    /// Parses `Edit`, `Bash(npm test)`, `Bash(npm run test:*)`, `Edit(src/**)`.
    pub fn parse(text: &str) -> Result<Rule, String> {
        let text = text.trim();
        let (tool, specifier) = match text.find('(') {
            Some(open) => {
                let Some(inner) = text[open + 1..].strip_suffix(')') else {
                    return Err(format!("rule {text:?} has an opening '(' without a closing ')' at the end"));
                };
                (&text[..open], Some(inner.trim().to_owned()))
            }
            None => (text, None),
        };
        if tool.is_empty() || !tool.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
            return Err(format!("rule {text:?} does not start with a tool name"));
        }
        let specifier = specifier.filter(|s| !s.is_empty() && s != "*");
        Ok(Rule { tool: tool.to_owned(), specifier })
    }

    fn matches(&self, tool: &str, input: &Value, cwd: &Path) -> bool {
        if self.tool != tool {
            return false;
        }
        let Some(specifier) = &self.specifier else { return true };
        if tool == "Bash" {
            let command = input.get("command").and_then(Value::as_str).unwrap_or_default();
            return bash_rule_matches(specifier, command);
        }
        match input.get("file_path").or_else(|| input.get("path")).and_then(Value::as_str) {
            Some(path) => path_rule_matches(specifier, path, cwd),
            None => false,
        }
    }
}

impl std::fmt::Display for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.specifier {
            Some(spec) => write!(f, "{}({spec})", self.tool),
            None => f.write_str(&self.tool),
        }
    }
}

/// Characters that let one command line run more than one command, or write somewhere.
const SHELL_CONTROL: &[char] = &[';', '&', '|', '$', '`', '>', '<', '\n', '\r', '(', ')', '{', '}', '\\'];

fn bash_rule_matches(specifier: &str, command: &str) -> bool {
    let command = command.trim();
    if command == specifier {
        return true;
    }
    if command.contains(SHELL_CONTROL) {
        return false;
    }
    specifier.strip_suffix(":*").is_some_and(|prefix| {
        command == prefix || command.strip_prefix(prefix).is_some_and(|rest| rest.starts_with(' '))
    })
}

fn path_rule_matches(specifier: &str, path: &str, cwd: &Path) -> bool {
    let resolved = crate::tools::fs_util::resolve_path(cwd, path);
    let pattern = crate::tools::fs_util::resolve_path(cwd, specifier);
    globset::GlobBuilder::new(&pattern.to_string_lossy())
        .literal_separator(true)
        .build()
        .map(|glob| glob.compile_matcher().is_match(&resolved))
        .unwrap_or(false)
}

/// The decision for one tool call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    Allow,
    /// The call must not run; the reason is shown to the model.
    Deny {
        reason: String,
    },
    /// A person must decide. `suggested_rule` is what "always allow" would remember for the session.
    Ask {
        suggested_rule: String,
    },
}

/// Mode plus rules: everything [`PermissionPolicy::decide`] needs.
#[derive(Clone, Debug, Default)]
pub struct PermissionPolicy {
    pub mode: PermissionMode,
    pub allow: Vec<Rule>,
    pub deny: Vec<Rule>,
}

impl PermissionPolicy {
    pub fn new(mode: PermissionMode) -> Self {
        PermissionPolicy { mode, ..Default::default() }
    }

    /// Decides whether `tool` may run with `input`.
    pub fn decide(&self, tool: &dyn Tool, input: &Value, cwd: &Path) -> Decision {
        let name = tool.name();
        if let Some(rule) = self.deny.iter().find(|rule| rule.matches(name, input, cwd)) {
            return Decision::Deny { reason: format!("Permission to use {name} was denied by the rule {rule}.") };
        }
        if self.allow.iter().any(|rule| rule.matches(name, input, cwd)) {
            return Decision::Allow;
        }
        if tool.is_read_only() {
            return Decision::Allow;
        }
        let is_file_edit = matches!(name, "Edit" | "Write");
        match self.mode {
            PermissionMode::BypassPermissions => Decision::Allow,
            PermissionMode::AcceptEdits if is_file_edit => Decision::Allow,
            PermissionMode::Plan => Decision::Deny {
                reason: format!(
                    "{name} is not allowed in plan mode: only read-only tools may run. Present your plan instead."
                ),
            },
            PermissionMode::DontAsk => Decision::Deny {
                reason: format!("Permission to use {name} was denied: no rule allows it and this session never asks."),
            },
            PermissionMode::Default | PermissionMode::AcceptEdits => {
                Decision::Ask { suggested_rule: suggested_rule(name, input) }
            }
        }
    }
}

/// The rule an "always allow" answer remembers: the command's first word as a prefix for Bash (when the
/// command is a single simple command), the tool for everything else.
pub fn suggested_rule(tool: &str, input: &Value) -> String {
    if tool == "Bash" {
        let command = input.get("command").and_then(Value::as_str).unwrap_or_default().trim();
        if !command.is_empty() && !command.contains(SHELL_CONTROL) {
            let words: Vec<&str> = command.split_whitespace().collect();
            let prefix =
                if words.len() >= 2 && !words[1].starts_with('-') { words[..2].join(" ") } else { words[0].to_owned() };
            return format!("Bash({prefix}:*)");
        }
        return format!("Bash({command})");
    }
    tool.to_owned()
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_rules() {
        assert_eq!(Rule::parse("Edit").unwrap(), Rule { tool: "Edit".into(), specifier: None });
        assert_eq!(Rule::parse("Bash(npm test)").unwrap().specifier.as_deref(), Some("npm test"));
        assert!(Rule::parse("Bash(npm test").is_err());
        assert!(Rule::parse("(x)").is_err());
        assert_eq!(Rule::parse("Bash(*)").unwrap().specifier, None);
    }

    #[test]
    fn bash_rules_never_stretch_across_control_characters() {
        assert!(bash_rule_matches("npm test", "npm test"));
        assert!(!bash_rule_matches("npm test", "npm test --watch"));
        assert!(bash_rule_matches("a && b", "a && b"));
        assert!(bash_rule_matches("npm run test:*", "npm run test -- --watch"));
        assert!(!bash_rule_matches("npm run test:*", "npm run test:unit"), "prefixes end at a word boundary");
        assert!(bash_rule_matches("git:*", "git status"));
        assert!(!bash_rule_matches("git:*", "gitk"));
        for evil in [
            "npm test && rm -rf ~",
            "npm test; rm x",
            "npm test | sh",
            "npm test $(rm x)",
            "npm test > f",
            "npm test\nrm x",
        ] {
            assert!(!bash_rule_matches("npm test:*", evil), "{evil}");
        }
    }

    #[test]
    fn splits_rule_lists() {
        assert_eq!(split_rule_list("Bash(npm test),Edit Read"), vec!["Bash(npm test)", "Edit", "Read"]);
        assert_eq!(split_rule_list(" , "), Vec::<String>::new());
    }

    #[test]
    fn suggests_prefix_rules() {
        assert_eq!(suggested_rule("Bash", &json!({"command":"npm test -- --watch"})), "Bash(npm test:*)");
        assert_eq!(suggested_rule("Bash", &json!({"command":"ls -la"})), "Bash(ls:*)");
        assert_eq!(suggested_rule("Bash", &json!({"command":"a && b"})), "Bash(a && b)");
        assert_eq!(suggested_rule("Edit", &json!({})), "Edit");
    }

    #[test]
    fn modes_parse_by_claude_code_names() {
        for mode in PermissionMode::ALL {
            assert_eq!(PermissionMode::parse(mode.as_str()), Some(mode));
        }
        assert_eq!(PermissionMode::parse("yolo"), None);
    }
}
