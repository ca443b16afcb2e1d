//! The decision for an MCP tool call (`mcp__<server>__<tool>`). Rules name a tool (`mcp__github__create_issue`),
//! a whole server (`mcp__github`, or `mcp__github__*`), and nothing else: an MCP tool takes no specifier, so an
//! allow rule with one allows nothing, while a deny or ask rule with one applies to every call of the tool (the
//! safe reading). A tool is read-only only when its server annotates it so (`readOnlyHint`); every other call
//! asks in the default mode, and in `acceptEdits` too (an MCP tool is not a file edit).

use super::policy::source;
use super::rules::Rule;
use super::settings::RuleKind;
use super::{Decision, PermissionMode, PermissionPolicy};
use crate::tools::Tool;

/// Whether `rule` is about `tool` of `server`.
pub fn rule_names_mcp_tool(rule: &Rule, tool: &str, server: &str) -> bool {
    let server_rule = crate::mcp::tool::server_prefix(server);
    rule.tool == tool || rule.tool == server_rule || rule.tool == format!("{server_rule}__*")
}

impl PermissionPolicy {
    pub(super) fn decide_mcp(&self, tool: &dyn Tool, server: &str) -> Decision {
        let name = tool.name();
        let matches = |kind: RuleKind| {
            self.rules_of(kind).find(|rule| {
                rule_names_mcp_tool(&rule.rule, name, server)
                    && (kind != RuleKind::Allow || rule.rule.specifier.is_none())
            })
        };
        if let Some(rule) = matches(RuleKind::Deny) {
            return Decision::Deny {
                reason: format!("Permission to use {name} was denied by the rule {}{}.", rule.text, source(rule)),
            };
        }
        if matches(RuleKind::Ask).is_some() {
            return self.ask(name, name.to_owned(), Some("an ask rule matches".into()));
        }
        if self.mode == PermissionMode::BypassPermissions || tool.is_read_only() {
            return Decision::Allow;
        }
        // Plan mode refuses every change, whatever an allow rule says (Claude Code does the same).
        if self.mode == PermissionMode::Plan {
            return Decision::Deny {
                reason: format!(
                    "{name} is not allowed in plan mode: its server does not mark it read-only. Present your plan instead."
                ),
            };
        }
        if matches(RuleKind::Allow).is_some() {
            return Decision::Allow;
        }
        self.ask(name, name.to_owned(), Some(format!("a tool of the MCP server {server}")))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Weak;

    use serde_json::json;

    use super::*;
    use crate::mcp::client::RemoteTool;
    use crate::mcp::tool::McpTool;
    use crate::permissions::{Scope, Workspace};

    fn tool(server: &str, name: &str, read_only: bool) -> std::sync::Arc<McpTool> {
        let remote = RemoteTool {
            name: name.into(),
            description: String::new(),
            input_schema: json!({}),
            read_only,
            title: None,
        };
        McpTool::new(server, remote, Weak::new())
    }

    fn decide(mode: PermissionMode, rules: &[(RuleKind, &str)], tool: &McpTool) -> &'static str {
        let dir = tempfile::tempdir().unwrap();
        let workspace = Workspace::new(dir.path(), &[], None, None);
        let mut policy = PermissionPolicy::new(mode, workspace, dir.path().to_path_buf());
        for (kind, text) in rules {
            policy.add_rule(*kind, text, Scope::Flag).unwrap();
        }
        // A path in the input changes nothing: MCP tools are not file tools.
        match policy.decide(tool, &json!({"path": "/etc/passwd", "file_path": "src/x"})) {
            Decision::Allow => "allow",
            Decision::Deny { .. } => "deny",
            Decision::Ask { suggested_rule, .. } => {
                assert_eq!(suggested_rule, tool.name(), "the rule offered names exactly this tool");
                "ask"
            }
        }
    }

    #[test]
    fn rules_name_a_tool_or_a_whole_server_and_nothing_else() {
        use PermissionMode::*;
        use RuleKind::*;
        let create = tool("github", "create_issue", false);
        let list = tool("github", "list_issues", true);
        let other = tool("githubx", "create_issue", false);
        assert_eq!(decide(Default, &[], &create), "ask");
        assert_eq!(decide(AcceptEdits, &[], &create), "ask");
        assert_eq!(decide(Default, &[], &list), "allow", "annotated read-only");
        assert_eq!(decide(Plan, &[], &list), "allow");
        assert_eq!(decide(Plan, &[], &create), "deny");
        assert_eq!(decide(DontAsk, &[], &create), "deny");
        assert_eq!(decide(BypassPermissions, &[], &create), "allow");
        for rule in ["mcp__github__create_issue", "mcp__github", "mcp__github__*"] {
            assert_eq!(decide(Default, &[(Allow, rule)], &create), "allow", "{rule}");
            assert_eq!(decide(Default, &[(Allow, rule)], &other), "ask", "{rule} must not cover githubx");
            assert_eq!(decide(BypassPermissions, &[(Deny, rule)], &create), "deny", "{rule}");
            assert_eq!(decide(Default, &[(Allow, "mcp__github"), (Ask, rule)], &create), "ask", "{rule}");
        }
        for rule in ["mcp__github__list_issues", "mcp__github", "mcp__github__*"] {
            assert_eq!(decide(Default, &[(Deny, rule)], &list), "deny", "deny beats read-only: {rule}");
        }
        assert_eq!(decide(Default, &[(Allow, "mcp__github__list_issues")], &create), "ask");
        assert_eq!(decide(Default, &[(Allow, "mcp__git")], &create), "ask", "not a prefix match");
        assert_eq!(decide(Default, &[(Allow, "mcp__github__create_issue(x)")], &create), "ask");
        assert_eq!(decide(Default, &[(Deny, "mcp__github__create_issue(x)")], &create), "deny");
        assert_eq!(decide(Default, &[(Allow, "mcp__*")], &create), "ask", "no wildcard over servers");
    }
}
