//! Running the Task tool's subagents. A subagent is a session of its own — a fresh conversation with the agent's
//! system prompt (plus the environment and the project guidelines, as every request has), its own tool subset,
//! no Task tool — that shares the parent's permission policy, pending permission requests and hooks. Its
//! transcript is kept next to the parent's (`<session>/subagents/agent-<id>.jsonl`). Its cost counts toward the
//! parent's total and budget; an interrupt of the parent interrupts it.
//!
//! What it does reaches front ends as [`Event::Subagent`] (its messages, tagged with the parent call), its
//! permission requests as ordinary ones (answered through the parent), and its tool calls as live output lines
//! of the parent's Task card.

use crate::events::EventSink;
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use serde_json::{Map, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::turn::Session;
use super::{AgentConfig, Shared, lock};
use crate::agents::AgentDefinition;
use crate::conversation::Usage;
use crate::hooks::HookEvent;
use crate::protocol::{Event, RunOutcome, TurnSummary};
use crate::tools::task::SubagentLauncher;
use crate::tools::{ToolContext, ToolOutput, ToolRegistry};

/// Tools a subagent never has.
const SUBAGENT_EXCLUDED: &[&str] = &[
    crate::tools::structured_output::STRUCTURED_OUTPUT,
    crate::tools::task::TASK_TOOL,
    crate::tools::ask_user::ASK_USER_QUESTION,
    crate::tools::ask_user::EXIT_PLAN_MODE,
];

/// Who a session works for, when it is a subagent.
#[derive(Clone, Debug)]
pub(super) struct SubagentRole {
    pub agent_id: String,
    pub agent_type: String,
}

/// What a session's subagents are made from (the parent's configuration, shared).
pub(super) struct Launcher {
    provider: Arc<dyn crate::provider::Provider>,
    model: crate::models::ModelInfo,
    tools: ToolRegistry,
    cwd: std::path::PathBuf,
    retry: crate::provider::retry::RetryPolicy,
    sandbox: Option<Arc<crate::sandbox::Confinement>>,
    shell_env: Arc<crate::shell_env::ShellEnvPolicy>,
    config_dir: std::path::PathBuf,
    hooks: Arc<crate::hooks::HookEngine>,
    compaction: crate::context::compact::CompactionPolicy,
    max_turns: Option<u32>,
    /// The session tree's spend, when there is a budget: every response of the parent and of every subagent
    /// adds to it as it arrives, and a subagent stops once the whole tree reached the budget.
    budget: Option<Arc<SharedBudget>>,
    /// Where subagent transcripts go: the parent session's directory.
    session_dir: Option<std::path::PathBuf>,
    parent_session_id: String,
    pending:
        Arc<Mutex<std::collections::HashMap<String, tokio::sync::oneshot::Sender<crate::protocol::PermissionAnswer>>>>,
    policy: Arc<Mutex<crate::permissions::PermissionPolicy>>,
    events: EventSink,
    reasoning: crate::reasoning::Reasoning,
    betas: Vec<String>,
    claude_dir: Option<std::path::PathBuf>,
    guideline_sources: crate::context::guidelines::Sources,
    /// What subagents spent since the parent last took it (usage, cost; `None` once a price was unknown).
    spent: Mutex<(Usage, Option<f64>)>,
    /// Denials inside subagents, for the parent's result.
    denials: Mutex<Vec<crate::protocol::PermissionDenial>>,
}

/// `--max-budget-usd` across a session and its subagents (see [`Launcher`]).
#[derive(Debug)]
pub(super) struct SharedBudget {
    pub(super) max: f64,
    spent: Mutex<f64>,
}

impl SharedBudget {
    pub(super) fn add(&self, cost: f64) {
        *lock(&self.spent) += cost;
    }

    pub(super) fn exhausted(&self) -> Option<f64> {
        let spent = *lock(&self.spent);
        (spent >= self.max).then_some(spent)
    }
}

impl Launcher {
    pub(super) fn new(config: &AgentConfig, shared: &Shared, events: &EventSink) -> Launcher {
        Launcher {
            provider: config.provider.clone(),
            model: config.model.clone(),
            tools: config.tools.clone(),
            cwd: config.cwd.clone(),
            retry: config.retry.clone(),
            sandbox: config.sandbox.clone(),
            shell_env: config.shell_env.clone(),
            config_dir: config.config_dir.clone(),
            hooks: config.hooks.clone(),
            compaction: config.compaction,
            reasoning: config.reasoning.clone(),
            betas: config.betas.clone(),
            claude_dir: config.claude_dir.clone(),
            guideline_sources: config.guideline_sources,
            max_turns: config.max_turns,
            // This run's spending counts (not what a resumed session spent before), as in the session itself.
            budget: config.max_budget_usd.map(|max| Arc::new(SharedBudget { max, spent: Mutex::new(0.0) })),
            session_dir: config.session_log.as_ref().map(|log| log.path().with_extension("")),
            parent_session_id: config.session_id.clone(),
            pending: shared.pending.clone(),
            policy: shared.policy.clone(),
            events: events.clone(),
            spent: Mutex::new((Usage::default(), Some(0.0))),
            denials: Mutex::new(Vec::new()),
        }
    }

    /// The shared budget, for the parent's own responses to count in it.
    pub(super) fn budget(&self) -> Option<&Arc<SharedBudget>> {
        self.budget.as_ref()
    }

    /// The permission denials inside subagents since the last call.
    pub(super) fn take_denials(&self) -> Vec<crate::protocol::PermissionDenial> {
        std::mem::take(&mut *lock(&self.denials))
    }

    /// What subagents spent since the last call, for the parent's totals.
    pub(super) fn take_spent(&self) -> (Usage, Option<f64>) {
        std::mem::replace(&mut *lock(&self.spent), (Usage::default(), Some(0.0)))
    }

    fn config_for(&self, agent: &AgentDefinition, agent_id: &str) -> AgentConfig {
        let model = match &agent.model {
            Some(name) => {
                let mut info = crate::models::lookup(name);
                if self.model.prices == Some(crate::models::Prices::LOCAL) {
                    info.prices = Some(crate::models::Prices::LOCAL);
                }
                info
            }
            None => self.model.clone(),
        };
        let mut tools = self.tools.clone();
        // No Task (subagents don't nest) and nothing that needs the user: nobody answers a subagent's questions,
        // and only the session the user talks to can leave plan mode.
        let allowed = agent.tools.clone();
        tools.retain(move |name| {
            !SUBAGENT_EXCLUDED.contains(&name)
                && allowed.as_ref().is_none_or(|allowed| allowed.iter().any(|tool| tool == name))
        });
        let system = crate::prompt::system_blocks(
            &crate::prompt::PromptOptions { replace: Some(agent.prompt.clone()), append: None },
            &self.cwd,
            &crate::prompt::today_utc(),
        );
        let session_log = self.session_dir.as_ref().and_then(|dir| {
            let mut meta = crate::session::SessionMeta::new(&self.cwd, &self.provider.endpoint().name, &model.id);
            meta.id = agent_id.to_owned();
            let path = dir.join("subagents").join(format!("agent-{agent_id}.jsonl"));
            match crate::session::SessionWriter::create_at(&path, meta) {
                Ok(writer) => Some(writer),
                Err(err) => {
                    tracing::warn!("could not create the subagent transcript {}: {err}", path.display());
                    None
                }
            }
        });
        AgentConfig {
            session_id: self.parent_session_id.clone(),
            provider: self.provider.clone(),
            model,
            system,
            tools,
            permissions: lock(&self.policy).clone(),
            cwd: self.cwd.clone(),
            max_turns: self.max_turns,
            // The budget is checked against the whole tree's spend (`SharedBudget`), not per subagent.
            max_budget_usd: None,
            retry: self.retry.clone(),
            sandbox: self.sandbox.clone(),
            shell_env: self.shell_env.clone(),
            config_dir: self.config_dir.clone(),
            claude_dir: self.claude_dir.clone(),
            guideline_sources: self.guideline_sources,
            notices: Vec::new(),
            session_log,
            unsaved_dir: None,
            resume: None,
            compaction: self.compaction,
            hooks: self.hooks.clone(),
            commands: Arc::default(),
            skills: Arc::default(),
            agents: Arc::default(),
            raw_stream: false,
            reasoning: self.reasoning.clone(),
            betas: self.betas.clone(),
            structured_output: None,
            fallback_model: None,
            mcp: None,
        }
    }

    async fn run(&self, agent: &AgentDefinition, prompt: &str, ctx: &ToolContext) -> ToolOutput {
        let agent_id = crate::session::new_session_id();
        let config = self.config_for(agent, &agent_id);
        let transcript = config.session_log.as_ref().map(|log| log.path().to_path_buf());
        let (events_tx, events_rx) = EventSink::channel();
        let shared = Arc::new(Shared {
            cancel: Mutex::new(ctx.cancel.child_token()),
            pending: self.pending.clone(),
            policy: self.policy.clone(),
            recorder: super::recorder_for(config.session_log.as_ref()),
        });
        let mut session = Session::new(config, shared, events_tx);
        session.parent_cancel = Some(ctx.cancel.clone());
        session.role = Some(SubagentRole { agent_id: agent_id.clone(), agent_type: agent.name.clone() });
        session.subagent_transcript = transcript;
        session.shared_budget = self.budget.clone();

        let mut fields = Map::new();
        fields.insert("agent_id".into(), json!(agent_id));
        fields.insert("agent_type".into(), json!(agent.name));
        let start = session.fire_hooks(HookEvent::SubagentStart, Some(&agent.name), fields, Some(&ctx.cancel)).await;
        let mut turn_prompt = prompt.to_owned();
        for context in start.context {
            turn_prompt.push_str(&format!(
                "\n\n<system-reminder>\nSubagentStart hook additional context: {context}\n</system-reminder>"
            ));
        }

        let forward = tokio::spawn(forward(
            events_rx,
            self.events.clone(),
            ctx.call_id.clone().unwrap_or_default(),
            agent.name.clone(),
            ctx.live_output.clone(),
        ));
        session.run_turn(turn_prompt).await;
        drop(session);
        let summary = forward.await.ok().flatten();
        let Some((summary, tool_uses)) = summary else {
            return ToolOutput::error(format!("The {} subagent stopped without an answer.", agent.name));
        };
        {
            let mut spent = lock(&self.spent);
            spent.0.accumulate(&summary.usage);
            spent.1 = spent.1.zip(summary.total_cost_usd).map(|(total, cost)| total + cost);
        }
        lock(&self.denials).extend(summary.permission_denials.iter().cloned());
        let output = match (summary.outcome, summary.result_text.clone()) {
            (RunOutcome::Success, Some(text)) if !text.trim().is_empty() => ToolOutput::ok(text),
            (RunOutcome::Success, _) => {
                ToolOutput::ok(format!("(the {} subagent finished without a final message)", agent.name))
            }
            (_, _) => ToolOutput::error(format!(
                "The {} subagent did not finish: {}",
                agent.name,
                if summary.errors.is_empty() { "no reason given".to_owned() } else { summary.errors.join("; ") }
            )),
        };
        // Claude Code's Task result for SDK hosts: what the subagent answered and what it took.
        let structured = json!({
            "status": if output.is_error { "error" } else { "completed" },
            "prompt": prompt,
            "agentId": agent_id,
            "agentType": agent.name,
            "content": [{"type": "text", "text": output.content}],
            "totalDurationMs": summary.duration_ms,
            "totalTokens": summary.usage.total_input() + summary.usage.output_tokens,
            "totalToolUseCount": tool_uses,
            "usage": summary.usage,
        });
        output.with_structured(structured)
    }
}

impl SubagentLauncher for Launcher {
    fn launch<'a>(
        &'a self,
        agent: &'a AgentDefinition,
        _description: &'a str,
        prompt: &'a str,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, ToolOutput> {
        Box::pin(self.run(agent, prompt, ctx))
    }
}

/// Passes a subagent's events on to the parent's front end (see the module docs) until it ends; returns how its
/// turn ended.
async fn forward(
    mut events: mpsc::UnboundedReceiver<crate::protocol::EventMsg>,
    parent: EventSink,
    parent_call_id: String,
    agent_type: String,
    live: Option<mpsc::UnboundedSender<String>>,
) -> Option<(TurnSummary, u32)> {
    let mut finished = None;
    let mut tool_uses = 0u32;
    while let Some(crate::protocol::EventMsg { event, .. }) = events.recv().await {
        match event {
            Event::PermissionRequested { call_id, tool, risk, input, preview, suggested_rule, reason, .. } => {
                let agent = Some(agent_type.clone());
                let _ = parent.send(Event::PermissionRequested {
                    call_id,
                    tool,
                    risk,
                    input,
                    preview,
                    suggested_rule,
                    reason,
                    agent,
                });
            }
            Event::ToolCallStarted { ref name, ref display, .. } => {
                tool_uses += 1;
                if let Some(live) = &live {
                    let _ = live.send(format!("{name}({})\n", display.summary));
                }
                let _ = parent.send(Event::Subagent { parent_call_id: parent_call_id.clone(), event: Box::new(event) });
            }
            Event::AssistantMessage(_) | Event::ToolResults(_) | Event::ToolCallFinished { .. } => {
                let _ = parent.send(Event::Subagent { parent_call_id: parent_call_id.clone(), event: Box::new(event) });
            }
            Event::Error { message } => {
                let _ = parent.send(Event::Error { message: format!("{agent_type} subagent: {message}") });
            }
            Event::Info { message } => {
                let _ = parent.send(Event::Info { message: format!("{agent_type} subagent: {message}") });
            }
            Event::TurnFinished(summary) => finished = Some(summary),
            _ => {}
        }
    }
    finished.map(|summary| (summary, tool_uses))
}

/// A cancel token for a session's next turn: a child of its parent's for a subagent (an interrupt of the parent
/// reaches it), a fresh one otherwise.
pub(super) fn turn_cancel(parent: Option<&CancellationToken>) -> CancellationToken {
    parent.map_or_else(CancellationToken::new, CancellationToken::child_token)
}
