//! The permission dialog of a tool call: what it shows (the preview, the risk), and what each of the user's
//! answers makes of the call — run as asked, as edited, answered (AskUserQuestion), denied — and the rules an
//! "always" answer adds.

use std::sync::Arc;

use serde_json::Value;
use tokio::sync::oneshot;

use super::super::lock;
use super::{Call, Prepared, ToolRunner, TurnStop, deny, failed, not_run};
use crate::conversation::ToolInput;
use crate::permissions::PermissionMode;
use crate::permissions::{RuleKind, Scope, settings, split_rule_list};
use crate::protocol::{AlwaysScope, Event, PermissionAnswer, PermissionDenial, ToolCallStatus};
use crate::sandbox::Grant;
use crate::tools::ask_user::{ASK_USER_QUESTION, EXIT_PLAN_MODE};
use crate::tools::{Tool, ToolOutput};

impl ToolRunner<'_> {
    /// Whether the model could read what the call targets without asking. Only then may a preview's failure go
    /// back to the model before anyone approved the call: "does not exist … did you mean id_rsa?" lists a
    /// directory, and "old_string not found" says what a file holds.
    fn model_may_read_target(&self, tool: &dyn Tool, input: &Value) -> bool {
        let Some(path) = tool.target_path(input, &self.context) else { return true };
        let read = serde_json::json!({ "file_path": path });
        lock(&self.shared.policy).decide(&crate::tools::read::ReadTool, &read) == crate::permissions::Decision::Allow
    }

    /// Shows the permission dialog and waits for the user's answer.
    #[allow(clippy::too_many_arguments)]
    #[expect(
        clippy::too_many_lines,
        reason = "the dialog round trip with its hooks and answers; the answer's application is where to cut it"
    )]
    pub(super) async fn ask(
        &self,
        call: &Call,
        tool: Arc<dyn Tool>,
        input: ToolInput,
        notes: Vec<String>,
        suggested_rule: String,
        reason: Option<String>,
        denials: &mut Vec<PermissionDenial>,
    ) -> Prepared {
        let mut reason = reason;
        let preview = match tool.preview(&input, &self.context) {
            Ok(preview) => preview,
            Err(message) if self.model_may_read_target(tool.as_ref(), &input) => return failed(message),
            // Why the change can't be shown says whether the file exists and what it holds: only the user hears it.
            Err(message) => {
                reason = Some(format!("tandem could not prepare the change: {message}"));
                None
            }
        };
        let risk = {
            let policy = lock(&self.shared.policy);
            dialog_risk(tool.as_ref(), &input, &self.context, &policy.workspace)
        };
        let (answer_tx, answer_rx) = oneshot::channel();
        {
            // Answers name the call by its id, which is the model's: a second call with an id already waiting
            // (two subagents' calls) would take the other's answer, so it is refused.
            let mut pending = lock(&self.shared.pending);
            if pending.contains_key(&call.id) {
                let reason = format!(
                    "{} was not run: another call with the same id ({}) is waiting for the user's answer. Give each \
                     tool call its own id.",
                    call.name, call.id
                );
                return deny(call, reason, denials);
            }
            pending.insert(call.id.clone(), answer_tx);
        }
        let _ = self.events.send(Event::PermissionRequested {
            call_id: call.id.clone(),
            tool: call.name.clone(),
            risk,
            input: input.clone(),
            preview,
            suggested_rule,
            reason,
            agent: None,
        });
        let answer = tokio::select! {
            _ = self.context.cancel.cancelled() => {
                lock(&self.shared.pending).remove(&call.id);
                return not_run();
            }
            answer = answer_rx => answer,
        };
        let exit_plan = call.name == EXIT_PLAN_MODE;
        match answer {
            Ok(PermissionAnswer::AllowOnce) => {
                if exit_plan {
                    lock(&self.shared.policy).mode = PermissionMode::Default;
                }
                Prepared::Ready { tool, input, notes, grant: Grant::Approved }
            }
            Ok(PermissionAnswer::AllowWithMode(mode)) => {
                if exit_plan {
                    lock(&self.shared.policy).mode =
                        if mode == PermissionMode::AcceptEdits { mode } else { PermissionMode::Default };
                }
                Prepared::Ready { tool, input, notes, grant: Grant::Approved }
            }
            Ok(PermissionAnswer::Answered { answers }) if call.name == ASK_USER_QUESTION => {
                let questions: Vec<crate::tools::ask_user::Question> = input
                    .get("questions")
                    .and_then(|questions| serde_json::from_value(questions.clone()).ok())
                    .unwrap_or_default();
                Prepared::Finished {
                    output: ToolOutput::ok(crate::tools::ask_user::answers_result(&questions, &answers)),
                    status: ToolCallStatus::Completed,
                }
            }
            Ok(PermissionAnswer::Answered { .. }) => {
                deny(call, format!("{} was not run: the answer did not fit the call.", call.name), denials)
            }
            Ok(PermissionAnswer::Deny { feedback }) if exit_plan => {
                let mut reason = "The user did not approve the plan, so plan mode stays on.".to_owned();
                match feedback.filter(|text| !text.trim().is_empty()) {
                    Some(feedback) => reason.push_str(&format!(" The user said: {feedback}")),
                    None => reason.push_str(&self.decline()),
                }
                deny(call, reason, denials)
            }
            Ok(PermissionAnswer::AllowModified { content, note }) => Prepared::Modified { input, content, note },
            Ok(PermissionAnswer::AllowUpdated { input: updated }) if call.name == ASK_USER_QUESTION => {
                let questions: Vec<crate::tools::ask_user::Question> = updated
                    .get("questions")
                    .or_else(|| input.get("questions"))
                    .and_then(|questions| serde_json::from_value(questions.clone()).ok())
                    .unwrap_or_default();
                let Some(answers) = updated.get("answers").and_then(Value::as_object) else {
                    return deny(call, format!("{} was not answered: the host sent no answers.", call.name), denials);
                };
                let answers: Vec<String> = questions
                    .iter()
                    .map(|question| answers.get(&question.question).map(answer_text).unwrap_or_default())
                    .collect();
                Prepared::Finished {
                    output: ToolOutput::ok(crate::tools::ask_user::answers_result(&questions, &answers)),
                    status: ToolCallStatus::Completed,
                }
            }
            Ok(PermissionAnswer::AllowUpdated { input: updated }) => {
                if exit_plan {
                    lock(&self.shared.policy).mode = PermissionMode::Default;
                }
                match self.tools.prepare(&call.name, &updated) {
                    Ok(tool) => Prepared::Ready { tool, input: updated.into(), notes, grant: Grant::Approved },
                    Err(output) => Prepared::Finished { output, status: ToolCallStatus::Failed },
                }
            }
            Ok(PermissionAnswer::Reject { message }) => deny(call, message, denials),
            Ok(PermissionAnswer::AllowAlways { rule, scope }) => {
                self.remember(&rule, scope);
                Prepared::Ready { tool, input, notes, grant: Grant::Approved }
            }
            Ok(PermissionAnswer::Deny { feedback }) => {
                let mut reason = format!("The user denied permission to use {}; it was not run.", call.name);
                match feedback.filter(|text| !text.trim().is_empty()) {
                    Some(feedback) => reason.push_str(&format!(" The user said: {feedback}")),
                    None => reason.push_str(&self.decline()),
                }
                deny(call, reason, denials)
            }
            Err(_) => {
                deny(call, format!("{} was not run: the permission request was never answered.", call.name), denials)
            }
        }
    }

    /// A "no" without a reason ends the turn (as in Claude Code and Codex): the rest of the reply is not run, and
    /// the model is told to wait for the user.
    fn decline(&self) -> String {
        *lock(&self.stopped) = Some(TurnStop::Declined);
        " The user declined and stopped the turn: do not carry on; wait for them to say how to go on.".to_owned()
    }

    /// Adds the rules of an "always" answer to the session, and saves them for the project or the user.
    fn remember(&self, rules: &str, scope: AlwaysScope) {
        for text in split_rule_list(rules) {
            let added = lock(&self.shared.policy).add_rule(RuleKind::Allow, &text, Scope::Session);
            if let Err(problem) = added {
                tracing::warn!("ignoring a rule that does not parse: {problem}");
                continue;
            }
            let file_scope = match scope {
                AlwaysScope::Session => continue,
                AlwaysScope::Project => Scope::Project,
                AlwaysScope::User => Scope::User,
            };
            let project_root = settings::project_root(lock(&self.shared.policy).workspace.cwd());
            match settings::persist_rule(file_scope, RuleKind::Allow, &text, self.config_dir, &project_root) {
                Ok(file) => {
                    // The rule is now the file's: `/permissions` lists (and removes) it there, as after a restart.
                    if let Some(rule) =
                        lock(&self.shared.policy).rules.iter_mut().rev().find(|rule| {
                            rule.text == text && rule.kind == RuleKind::Allow && rule.scope == Scope::Session
                        })
                    {
                        rule.scope = file_scope;
                        rule.file = Some(file.clone());
                    }
                    let _ = self.events.send(Event::Info { message: format!("Saved {text} to {}", file.display()) });
                }
                Err(problem) => {
                    let _ = self.events.send(Event::Error { message: format!("Could not save {text}: {problem}") });
                }
            }
        }
    }
}

/// An answer in an SDK host's `answers` object: a string, or a list of choices joined like the dialog's.
fn answer_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Array(items) => items.iter().map(answer_text).collect::<Vec<_>>().join(", "),
        other => other.to_string(),
    }
}

/// The risk the dialog shows: the tool's own judgement of this call (read-only → low, a file write → medium, a
/// command → high unless it only reads), raised to high for a write outside the workspace.
fn dialog_risk(
    tool: &dyn crate::tools::Tool,
    input: &serde_json::Value,
    context: &crate::tools::ToolContext,
    workspace: &crate::permissions::Workspace,
) -> crate::tools::Risk {
    use crate::tools::Risk;
    match tool.risk_for(input) {
        Risk::Medium => match tool.target_path(input, context) {
            Some(path) if !workspace.is_inside(&path.to_string_lossy()) => Risk::High,
            _ => Risk::Medium,
        },
        risk => risk,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::dialog_risk;
    use crate::permissions::Workspace;
    use crate::tools::{Risk, ToolContext};

    #[test]
    fn a_write_outside_the_workspace_is_high_risk_and_a_read_only_command_low() {
        let dir = tempfile::tempdir().unwrap();
        let workspace = Workspace::new(dir.path(), &[], None, None);
        let context = ToolContext::new(dir.path().to_path_buf());
        let edit = crate::tools::edit::EditTool;
        let inside = json!({"file_path": "src/main.rs", "old_string": "a", "new_string": "b"});
        let outside = json!({"file_path": "/etc/hosts", "old_string": "a", "new_string": "b"});
        assert_eq!(dialog_risk(&edit, &inside, &context, &workspace), Risk::Medium);
        assert_eq!(dialog_risk(&edit, &outside, &context, &workspace), Risk::High);
        let bash = crate::tools::bash::BashTool;
        assert_eq!(dialog_risk(&bash, &json!({"command": "ls -la"}), &context, &workspace), Risk::Low);
        assert_eq!(dialog_risk(&bash, &json!({"command": "touch x"}), &context, &workspace), Risk::High);
    }
}
