//! What hooks decided, with Claude Code's meaning of exit codes and JSON output:
//! - exit 0: success; stdout is JSON (when it is an object) or plain text (context for UserPromptSubmit and
//!   SessionStart);
//! - exit 2: blocking, stderr is the reason;
//! - anything else (a crash, a timeout, a command that can't start): a non-blocking error the user sees, or
//!   blocking when the hook says `"onFailure": "block"`.

use std::path::PathBuf;

use serde_json::Value;

use super::config::{HookEntry, HookEvent};
use super::run::{Exit, Finished};

/// A hook's verdict on a permission (PreToolUse's `permissionDecision`, PermissionRequest's `behavior`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verdict {
    Allow,
    Ask,
    Deny,
}

/// The combined outcome of every hook that ran for one event.
#[derive(Clone, Debug, Default)]
pub struct HookOutcome {
    /// Blocking: exit 2, `decision: "block"`, a failure of an `onFailure: block` hook. The reasons, joined.
    pub blocked: Option<String>,
    /// The strongest permission verdict (deny > ask > allow) and its reason.
    pub verdict: Option<(Verdict, String)>,
    /// A replacement for the tool's input (the last hook's that gave one).
    pub updated_input: Option<Value>,
    /// Text for the model: `additionalContext`, and plain stdout where the event adds it to the context.
    pub context: Vec<String>,
    /// For the user: `systemMessage`s.
    pub notices: Vec<String>,
    /// For the user: hooks that failed without blocking.
    pub errors: Vec<String>,
    /// `"continue": false`: the turn stops, with this reason for the user.
    pub stop: Option<String>,
    /// PermissionRequest's deny asked to interrupt the turn too.
    pub interrupt: bool,
    /// How many hooks ran.
    pub ran: usize,
    /// Where a text cut for the model is kept whole (the session's output directory).
    keep_in: Option<PathBuf>,
}

impl HookOutcome {
    /// An outcome whose texts cut for the model are kept whole in `keep_in`.
    pub(crate) fn keeping_in(keep_in: Option<PathBuf>) -> HookOutcome {
        HookOutcome { keep_in, ..HookOutcome::default() }
    }

    /// Folds one hook's result in.
    pub fn add(&mut self, entry: &HookEntry, finished: Finished) {
        self.ran += 1;
        let name = entry.event.as_str();
        let label = format!("{name} hook `{}`", short(&entry.command));
        let failure = match &finished.exit {
            Exit::Code(0) => None,
            Exit::Code(2) => {
                let reason = finished.stderr.trim();
                let reason = if reason.is_empty() { format!("blocked by the {label}") } else { reason.to_owned() };
                self.block(reason);
                return;
            }
            Exit::Code(code) => Some(format!("exited with {code}")),
            Exit::Signal => Some("was killed by a signal".to_owned()),
            Exit::TimedOut(after) => Some(format!("timed out after {}s and was killed", after.as_secs_f64())),
            Exit::Interrupted => return,
            Exit::SpawnFailed(why) => Some(why.clone()),
        };
        if let Some(failure) = failure {
            let stderr = finished.stderr.trim();
            let detail = if stderr.is_empty() { String::new() } else { format!(": {}", short(stderr)) };
            self.fail(entry, format!("the {label} {failure}{detail}"));
            return;
        }
        let stdout = finished.stdout.trim_start_matches('\u{feff}').trim();
        if stdout.starts_with('{') {
            match serde_json::from_str::<Value>(stdout) {
                Ok(Value::Object(output)) => self.add_json(entry.event, &output),
                _ => self.fail(entry, format!("the {label} printed JSON that does not parse: {}", short(stdout))),
            }
        } else if !stdout.is_empty() && matches!(entry.event, HookEvent::UserPromptSubmit | HookEvent::SessionStart) {
            self.context.push(self.for_model(stdout.to_owned()));
        }
    }

    /// What a hook says to the model, within the bound every text to the model keeps (a Stop hook that printed
    /// 5 MB made every request of the turn that much larger).
    fn for_model(&self, text: String) -> String {
        let name = format!("hook-{:08x}", fastrand::u32(..));
        crate::context::bound::for_model(text, self.keep_in.as_deref(), &name)
    }

    fn fail(&mut self, entry: &HookEntry, message: String) {
        if entry.block_on_failure {
            self.block(format!("{message} (the hook is set to block on failure)"));
        } else {
            self.errors.push(message);
        }
    }

    fn block(&mut self, reason: String) {
        let reason = self.for_model(reason);
        self.blocked = Some(match self.blocked.take() {
            Some(earlier) => format!("{earlier}\n{reason}"),
            None => reason,
        });
    }

    fn verdict(&mut self, verdict: Verdict, reason: String) {
        let reason = self.for_model(reason);
        if self.verdict.as_ref().is_none_or(|(current, _)| verdict > *current) {
            self.verdict = Some((verdict, reason));
        }
    }

    fn add_json(&mut self, event: HookEvent, output: &serde_json::Map<String, Value>) {
        let text = |value: Option<&Value>| value.and_then(Value::as_str).map(str::to_owned);
        if output.get("continue").and_then(Value::as_bool) == Some(false) {
            self.stop =
                Some(text(output.get("stopReason")).unwrap_or_else(|| format!("stopped by a {} hook", event.as_str())));
        }
        if let Some(message) = text(output.get("systemMessage")) {
            self.notices.push(message);
        }
        let reason = text(output.get("reason")).unwrap_or_default();
        match output.get("decision").and_then(Value::as_str) {
            Some("block") => {
                let reason =
                    if reason.is_empty() { format!("blocked by a {} hook", event.as_str()) } else { reason.clone() };
                if event == HookEvent::PreToolUse {
                    self.verdict(Verdict::Deny, reason);
                } else {
                    self.block(reason);
                }
            }
            // Claude Code's older PreToolUse form.
            Some("approve") if event == HookEvent::PreToolUse => self.verdict(Verdict::Allow, reason.clone()),
            _ => {}
        }
        let Some(Value::Object(specific)) = output.get("hookSpecificOutput") else { return };
        if let Some(context) = text(specific.get("additionalContext")).filter(|context| !context.trim().is_empty()) {
            self.context.push(self.for_model(context));
        }
        if let Some(decision) = specific.get("permissionDecision").and_then(Value::as_str) {
            let reason = text(specific.get("permissionDecisionReason")).unwrap_or_default();
            match decision {
                "allow" => self.verdict(Verdict::Allow, reason),
                "ask" => self.verdict(Verdict::Ask, reason),
                "deny" => self.verdict(Verdict::Deny, reason),
                other => {
                    self.errors.push(format!("a {} hook gave permissionDecision {other:?}; ignored", event.as_str()))
                }
            }
        }
        if let Some(input) = specific.get("updatedInput").filter(|input| input.is_object()) {
            self.updated_input = Some(input.clone());
        }
        // PermissionRequest: {"decision": {"behavior": "allow"|"deny", "updatedInput", "message", "interrupt"}}.
        if let Some(Value::Object(decision)) = specific.get("decision") {
            let message = text(decision.get("message")).unwrap_or_default();
            match decision.get("behavior").and_then(Value::as_str) {
                Some("allow") => self.verdict(Verdict::Allow, message),
                Some("deny") => {
                    self.interrupt |= decision.get("interrupt").and_then(Value::as_bool) == Some(true);
                    self.verdict(Verdict::Deny, message);
                }
                _ => {}
            }
            if let Some(input) = decision.get("updatedInput").filter(|input| input.is_object()) {
                self.updated_input = Some(input.clone());
            }
        }
    }
}

/// A command or an output shortened for a one-line message.
fn short(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default();
    let mut out: String = line.chars().take(120).collect();
    if out.len() < line.len() || text.lines().nth(1).is_some() {
        out.push('…');
    }
    out
}
