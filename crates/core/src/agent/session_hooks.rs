//! Where the session runs its hooks: at its start and end, on a submitted prompt, before the model stops, and
//! before a compaction. Tool hooks run with the calls, in `tool_calls`.

use crate::events::EventSink;
use serde_json::{Map, Value, json};

use super::lock;
use super::turn::Session;
use crate::hooks::{HookBase, HookEvent, HookOutcome};
use crate::protocol::Event;

/// How many times in one turn Stop hooks may send the model back to work (a hook that always blocks must not
/// spend the budget in a loop the user can't see the end of).
pub(super) const MAX_STOP_CONTINUATIONS: u32 = 8;

/// How long tandem waits for the next prompt before Notification hooks hear `idle_prompt`: Claude Code's 60 s,
/// or `TANDEM_IDLE_NOTICE_MS` (for tests and impatient users).
pub(super) fn idle_notice_after() -> std::time::Duration {
    let ms = std::env::var("TANDEM_IDLE_NOTICE_MS").ok().and_then(|ms| ms.parse().ok()).unwrap_or(60_000);
    std::time::Duration::from_millis(ms)
}

/// What a UserPromptSubmit hook decided about a prompt.
pub(super) enum PromptVerdict {
    /// Send it, with this context from the hooks.
    Send(Vec<String>),
    /// Don't: this is why (the user is told).
    Refused(String),
}

impl Session {
    pub(super) fn hook_base(&self) -> HookBase {
        HookBase {
            session_id: self.config.session_id.clone(),
            transcript_path: self.config.session_log.as_ref().map(|log| log.path().to_path_buf()),
            cwd: self.config.cwd.clone(),
            permission_mode: lock(&self.shared.policy).mode,
            sandbox: self
                .config
                .sandbox
                .as_ref()
                .and_then(|sandbox| sandbox.policy_for(crate::sandbox::Grant::UserRule)),
            agent: self.role.as_ref().map(|role| (role.agent_id.clone(), role.agent_type.clone())),
        }
    }

    /// Runs the hooks of `event` and tells the user what they said.
    pub(super) async fn fire_hooks(
        &self,
        event: HookEvent,
        subject: Option<&str>,
        fields: Map<String, Value>,
        cancel: Option<&tokio_util::sync::CancellationToken>,
    ) -> HookOutcome {
        if !self.config.hooks.has(event) {
            return HookOutcome::default();
        }
        let outcome = self.config.hooks.fire(event, subject, &self.hook_base(), fields, cancel).await;
        report(&self.events, &outcome);
        outcome
    }

    /// SessionStart, when the session starts (`startup`, or `resume` for a resumed conversation): what the hooks
    /// print goes to the model with the first prompt.
    pub(super) async fn session_start_hooks(&mut self) {
        let source = if self.messages.is_empty() { "startup" } else { "resume" };
        self.session_start(source).await;
    }

    pub(super) async fn session_start(&mut self, source: &str) {
        let mut fields = Map::new();
        fields.insert("source".into(), json!(source));
        fields.insert("model".into(), json!(self.config.model.id));
        let outcome = self.fire_hooks(HookEvent::SessionStart, Some(source), fields, None).await;
        self.hook_context.extend(outcome.context.into_iter().map(|text| ("SessionStart", text)));
    }

    /// SessionEnd (`clear`, or `other` when the front end closes the session). It can't block anything.
    pub(super) async fn session_end_hooks(&self, reason: &str) {
        let mut fields = Map::new();
        fields.insert("reason".into(), json!(reason));
        self.fire_hooks(HookEvent::SessionEnd, Some(reason), fields, None).await;
    }

    pub(super) fn has_idle_hooks(&self) -> bool {
        self.config.hooks.has(HookEvent::Notification)
    }

    /// Notification `idle_prompt`: the answer is there and the user has not come back to it.
    pub(super) async fn idle_notification(&self) {
        let mut fields = Map::new();
        fields.insert("message".into(), json!("tandem is waiting for your input"));
        fields.insert("notification_type".into(), json!("idle_prompt"));
        self.fire_hooks(HookEvent::Notification, Some("idle_prompt"), fields, None).await;
    }

    /// `/clear` with its hooks: the old session ends, a new one starts.
    pub(super) async fn clear_with_hooks(&mut self) {
        self.session_end_hooks("clear").await;
        self.clear();
        self.hook_context.clear();
        self.session_start("clear").await;
    }

    /// UserPromptSubmit: may refuse the prompt or add context to it.
    pub(super) async fn prompt_hooks(
        &self,
        prompt: &str,
        cancel: &tokio_util::sync::CancellationToken,
    ) -> PromptVerdict {
        // A subagent's task is the model's words, not the user's: SubagentStart is its hook, not this one.
        if self.role.is_some() {
            return PromptVerdict::Send(Vec::new());
        }
        let mut fields = Map::new();
        fields.insert("prompt".into(), json!(prompt));
        let outcome = self.fire_hooks(HookEvent::UserPromptSubmit, None, fields, Some(cancel)).await;
        if let Some(reason) = outcome.blocked.or(outcome.stop) {
            return PromptVerdict::Refused(reason);
        }
        PromptVerdict::Send(outcome.context)
    }

    /// Stop: `Some(instruction)` when a hook sends the model back to work.
    pub(super) async fn stop_hooks(
        &self,
        continued: u32,
        cancel: &tokio_util::sync::CancellationToken,
    ) -> Option<String> {
        let mut fields = Map::new();
        fields.insert("stop_hook_active".into(), json!(continued > 0));
        // A subagent's end is SubagentStop, matched on its type.
        let (event, subject) = match &self.role {
            Some(role) => {
                fields.insert("agent_id".into(), json!(role.agent_id));
                fields.insert("agent_type".into(), json!(role.agent_type));
                let transcript = self.subagent_transcript.as_ref().map(|path| path.display().to_string());
                fields.insert("agent_transcript_path".into(), json!(transcript.unwrap_or_default()));
                (HookEvent::SubagentStop, Some(role.agent_type.as_str()))
            }
            None => (HookEvent::Stop, None),
        };
        let outcome = self.fire_hooks(event, subject, fields, Some(cancel)).await;
        if outcome.stop.is_some() {
            return None;
        }
        let reason = outcome.blocked?;
        if continued >= MAX_STOP_CONTINUATIONS {
            self.emit(Event::Error {
                message: format!(
                    "A Stop hook asked the model to go on a {}th time in this turn; tandem stopped there. The hook said: {reason}",
                    continued + 1
                ),
            });
            return None;
        }
        Some(reason)
    }

    /// PreCompact, before a compaction (`manual` or `auto`).
    pub(super) async fn pre_compact_hooks(&self, trigger: crate::session::CompactTrigger, instructions: Option<&str>) {
        let trigger = match trigger {
            crate::session::CompactTrigger::Manual => "manual",
            crate::session::CompactTrigger::Auto => "auto",
        };
        let mut fields = Map::new();
        fields.insert("trigger".into(), json!(trigger));
        fields.insert("custom_instructions".into(), json!(instructions.unwrap_or_default()));
        let outcome = self.fire_hooks(HookEvent::PreCompact, Some(trigger), fields, None).await;
        if let Some(reason) = outcome.blocked {
            self.emit(Event::Info { message: format!("PreCompact hook: {reason}") });
        }
    }

    /// The context hooks gave since the last prompt, as text blocks for the next user message.
    pub(super) fn take_hook_context(&mut self, from_prompt: Vec<String>) -> Vec<crate::conversation::ContentBlock> {
        let mut all = std::mem::take(&mut self.hook_context);
        all.extend(from_prompt.into_iter().map(|text| ("UserPromptSubmit", text)));
        all.into_iter()
            .map(|(event, text)| {
                crate::conversation::ContentBlock::text(format!(
                    "<system-reminder>\n{event} hook additional context: {text}\n</system-reminder>"
                ))
            })
            .collect()
    }
}

impl Session {
    /// `/hooks`: every configured hook, whether it runs, and what in the settings could not be used.
    pub(super) fn list_hooks(&self) {
        self.emit(Event::Info { message: self.hooks_listing() });
    }

    /// What `/hooks` says.
    pub(super) fn hooks_listing(&self) -> String {
        let hooks = &self.config.hooks;
        let mut lines = hooks.describe();
        if lines.is_empty() {
            lines.push(
                "No hooks. Add them under \"hooks\" in .claude/settings.json (Claude Code's format) or .tandem/settings.json."
                    .to_owned(),
            );
        }
        if hooks.set().has_project_hooks() && !hooks.project_trusted() {
            lines.push("The project's hooks are off: /hooks trust lets them run (until they change).".to_owned());
        }
        lines.extend(hooks.set().problems.iter().map(|problem| format!("Problem: {problem}")));
        format!("Hooks:\n{}", lines.join("\n"))
    }

    /// `/hooks trust`: the project's hooks run from now on, and in later sessions while they stay the same.
    pub(super) fn trust_project_hooks(&self) {
        let hooks = &self.config.hooks;
        if !hooks.set().has_project_hooks() {
            self.emit(Event::Info { message: "This project defines no hooks.".to_owned() });
            return;
        }
        hooks.set_project_trusted(true);
        let fingerprint = hooks.set().project_fingerprint();
        match crate::trust::trust(
            &self.config.config_dir,
            crate::trust::Store::Hooks,
            hooks.project_dir(),
            &fingerprint,
        ) {
            Ok(file) => self.emit(Event::Info {
                message: format!("The project's hooks run from now on (trust saved in {}).", file.display()),
            }),
            Err(err) => self.emit(Event::Error {
                message: format!("The project's hooks run in this session, but the trust could not be saved: {err}"),
            }),
        }
    }
}

/// Tells the user what hooks said for them (`systemMessage`) and which failed without blocking.
pub(super) fn report(events: &EventSink, outcome: &HookOutcome) {
    for notice in &outcome.notices {
        let _ = events.send(Event::Info { message: notice.clone() });
    }
    for error in &outcome.errors {
        let _ = events.send(Event::Error { message: error.clone() });
    }
}
