//! What the user's hooks make of the policy's decision, in one place for both events that can decide: a
//! PreToolUse hook's `permissionDecision` before the policy's answer is used, and a PermissionRequest hook's
//! `allow` in place of the dialog. A hook is the user's own configuration, so it may stand in for the user's
//! answer — but only where the user would be asked the ordinary question, and never wider than a rule of theirs.

use super::{Decision, PermissionMode};
use crate::hooks::Verdict;
use crate::sandbox::Grant;

/// The policy's `decision` and `grant` for a `tool` call once its PreToolUse hooks said `verdict` (with a
/// reason): a hook's deny always wins and its ask turns an allow into a question, while its allow counts only
/// where [`hook_may_allow`] says so.
pub fn after_pre_tool_use(
    tool: &str,
    (decision, grant): (Decision, Grant),
    verdict: Option<(Verdict, String)>,
    mode: PermissionMode,
) -> (Decision, Grant) {
    match (decision, verdict) {
        (decision @ Decision::Deny { .. }, _) => (decision, grant),
        (_, Some((Verdict::Deny, reason))) => {
            let reason = if reason.is_empty() { "no reason given".to_owned() } else { reason };
            (Decision::Deny { reason: format!("A PreToolUse hook denied this {tool} call: {reason}") }, grant)
        }
        (decision, Some((Verdict::Allow, _))) if hook_may_allow(&decision, mode) => {
            (Decision::Allow, hook_grant(grant))
        }
        (Decision::Allow, Some((Verdict::Ask, _))) if mode == PermissionMode::DontAsk => {
            let reason = format!("A PreToolUse hook asks for {tool}, and this session never asks; it was not run.");
            (Decision::Deny { reason }, grant)
        }
        (Decision::Allow, Some((Verdict::Ask, reason))) => {
            let reason = Some(if reason.is_empty() { "a PreToolUse hook asks".to_owned() } else { reason });
            (Decision::Ask { suggested_rule: String::new(), reason }, grant)
        }
        (decision, _) => (decision, grant),
    }
}

/// The policy's `decision` and `grant` for the input a PermissionRequest hook allowed (judged again, like the
/// model's): it runs if the policy allows it or would let a hook allow it, and otherwise comes to the dialog
/// (or is denied).
pub fn after_permission_request_allow((decision, grant): (Decision, Grant), mode: PermissionMode) -> (Decision, Grant) {
    match decision {
        Decision::Allow => (Decision::Allow, grant),
        decision if hook_may_allow(&decision, mode) => (Decision::Allow, hook_grant(grant)),
        decision => (decision, grant),
    }
}

/// Whether a hook's `allow` may stand in for the user's answer: only for the ordinary question (no ask rule, no
/// path outside the workspace or protected, nothing the analyser doesn't fully understand — those asks carry a
/// reason), and never in plan mode, which allows only what the policy itself allows.
fn hook_may_allow(decision: &Decision, mode: PermissionMode) -> bool {
    matches!(decision, Decision::Ask { reason: None, .. }) && mode != PermissionMode::Plan
}

/// The grant of a call a hook allowed: what a rule of the user's would get (an excluded command stays outside
/// the sandbox, as with a rule).
fn hook_grant(grant: Grant) -> Grant {
    if grant == Grant::Excluded { grant } else { Grant::UserRule }
}

#[cfg(test)]
mod tests {
    use super::*;
    use PermissionMode::{AcceptEdits, DontAsk, Plan};

    fn ordinary_ask() -> Decision {
        Decision::Ask { suggested_rule: "Bash(make:*)".to_owned(), reason: None }
    }

    #[test]
    fn a_hooks_allow_answers_only_the_ordinary_question_and_never_in_plan_mode() {
        let allow = || Some((Verdict::Allow, String::new()));
        let judged = after_pre_tool_use("Bash", (ordinary_ask(), Grant::ReadOnly), allow(), AcceptEdits);
        assert_eq!(judged, (Decision::Allow, Grant::UserRule));
        let outside = Decision::Ask { suggested_rule: String::new(), reason: Some("outside".to_owned()) };
        let judged = after_pre_tool_use("Bash", (outside.clone(), Grant::ReadOnly), allow(), AcceptEdits);
        assert_eq!(judged.0, outside);
        assert_eq!(after_pre_tool_use("Bash", (ordinary_ask(), Grant::ReadOnly), allow(), Plan).0, ordinary_ask());
        let denied = Decision::Deny { reason: "a deny rule".to_owned() };
        assert_eq!(after_pre_tool_use("Bash", (denied.clone(), Grant::ReadOnly), allow(), AcceptEdits).0, denied);
        assert_eq!(after_permission_request_allow((ordinary_ask(), Grant::Excluded), AcceptEdits).1, Grant::Excluded);
        assert_eq!(after_permission_request_allow((ordinary_ask(), Grant::ReadOnly), Plan).0, ordinary_ask());
    }

    #[test]
    fn a_hooks_deny_always_wins_and_its_ask_never_asks_where_nobody_can_answer() {
        let judged =
            after_pre_tool_use("Bash", (Decision::Allow, Grant::ReadOnly), Some((Verdict::Deny, String::new())), Plan);
        assert!(matches!(judged.0, Decision::Deny { reason } if reason.ends_with("no reason given")));
        let ask = || Some((Verdict::Ask, String::new()));
        let judged = after_pre_tool_use("Bash", (Decision::Allow, Grant::ReadOnly), ask(), AcceptEdits);
        assert!(matches!(judged.0, Decision::Ask { reason: Some(reason), .. } if reason == "a PreToolUse hook asks"));
        let judged = after_pre_tool_use("Bash", (Decision::Allow, Grant::ReadOnly), ask(), DontAsk);
        assert!(matches!(judged.0, Decision::Deny { .. }));
    }
}
