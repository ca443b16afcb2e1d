//! Permissions: the one place that decides whether a tool call may run.
//!
//! [`PermissionPolicy::decide`] returns allow, deny (with the reason the model will see) or ask (with the
//! rule an "always" answer would remember). Front ends answer "ask": the TUI asks the user, headless mode
//! denies. Rules come from settings files ([`settings`]), flags and answers; shell commands are parsed
//! ([`bash`]) and every simple command must be allowed; paths are resolved before any decision ([`paths`]).

mod bash_policy;
mod command_paths;
pub mod confine;
mod git_config;
pub mod hook_verdicts;
mod link_targets;
pub mod mcp_policy;
pub mod paths;
pub mod policy;
pub mod rules;
pub mod settings;
pub mod web_policy;

pub use paths::Workspace;
pub use policy::{PermissionPolicy, SandboxDecisions};
pub use rules::Rule;
pub use settings::{RuleKind, Scope};
pub use tandem_protocol::permissions::PermissionMode;
pub use tandem_protocol::permissions::split_rule_list;

/// The decision for one tool call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    Allow,
    /// The call must not run; the reason is shown to the model.
    Deny {
        reason: String,
    },
    /// A person must decide. `suggested_rule` is what an "always" answer would remember (possibly several
    /// rules separated by ", "; empty when no rule could ever allow this call); `reason` says why it asks when
    /// that is not obvious (outside the workspace, protected path, command substitution…).
    Ask {
        suggested_rule: String,
        reason: Option<String>,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_parse_by_claude_code_names() {
        for mode in PermissionMode::ALL {
            assert_eq!(PermissionMode::parse(mode.as_str()), Some(mode));
        }
        assert_eq!(PermissionMode::parse("yolo"), None);
    }
}
