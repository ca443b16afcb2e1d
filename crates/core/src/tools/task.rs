//! `Task` (Claude Code's; the model may call it `Agent` too): starts a subagent — a fresh conversation with its
//! own system prompt and tools — on a task, and returns only its final answer. The session behind the call
//! ([`SubagentLauncher`], in the tool context) runs it; several Task calls of one message run at once.

use std::borrow::Cow;
use std::sync::Arc;

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;

use super::typed::TypedTool;
use super::{Risk, ToolContext, ToolOutput};
use crate::agents::{AgentCatalog, AgentDefinition};

/// The tool's name; the model may also call it [`AGENT_ALIAS`].
pub const TASK_TOOL: &str = "Task";
/// Claude Code's newer name for the tool.
pub const AGENT_ALIAS: &str = "Agent";

const DESCRIPTION: &str = "Starts a subagent on a task. The subagent works on its own, with a fresh context (none of \
this conversation: put everything it needs in the prompt) and its own tools, and only its final message comes \
back as this tool's result. Use it for searches that may take many tries, or for independent parts of a larger \
task; several Task calls in one message run at the same time. Say in the prompt exactly what the subagent should \
return. The kinds of agent (subagent_type):";

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// A short (3-5 word) description of the task
    pub description: String,
    /// The task for the agent to perform
    pub prompt: String,
    /// The type of specialized agent to use for this task (general-purpose when not given)
    #[serde(default)]
    pub subagent_type: Option<String>,
    /// The model for this agent (sonnet, opus, haiku, or a model id); without it, the agent's own or this session's
    #[serde(default)]
    pub model: Option<String>,
}

/// The agent a Task call without `subagent_type` starts (Claude Code's default).
const DEFAULT_AGENT: &str = "general-purpose";

/// What runs subagents: the session the Task call belongs to.
pub trait SubagentLauncher: Send + Sync {
    /// Runs `agent` on `prompt` to its end; the result is its final answer (or why there is none).
    fn launch<'a>(
        &'a self,
        agent: &'a AgentDefinition,
        description: &'a str,
        prompt: &'a str,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, ToolOutput>;
}

/// Offers the agents of `catalog`.
pub struct TaskTool {
    pub catalog: Arc<AgentCatalog>,
}

impl TypedTool for TaskTool {
    type Input = Input;
    const NAME: &'static str = TASK_TOOL;

    fn description(&self) -> Cow<'static, str> {
        let list: Vec<String> = self
            .catalog
            .agents
            .iter()
            .map(|agent| {
                let tools = match &agent.tools {
                    Some(tools) => tools.join(", "),
                    None => "all tools".to_owned(),
                };
                format!("- {}: {} (Tools: {tools})", agent.name, agent.description)
            })
            .collect();
        format!("{DESCRIPTION}\n{}", list.join("\n")).into()
    }

    /// The call itself changes nothing; what the subagent's tools do is checked call by call.
    fn is_read_only(&self) -> bool {
        true
    }

    fn is_lookup(&self) -> bool {
        false
    }

    fn kind(&self) -> super::ToolKind {
        super::ToolKind::Task
    }

    fn risk(&self) -> Risk {
        Risk::Low
    }

    fn summary(&self, input: &serde_json::Value, _ctx: &ToolContext) -> String {
        let kind = input.get("subagent_type").and_then(serde_json::Value::as_str).unwrap_or(DEFAULT_AGENT);
        let description = input.get("description").and_then(serde_json::Value::as_str).unwrap_or_default();
        format!("{kind}: {description}")
    }

    fn call<'a>(&'a self, input: Input, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move {
            let kind = input.subagent_type.as_deref().map(str::trim).filter(|kind| !kind.is_empty());
            let kind = kind.unwrap_or(DEFAULT_AGENT);
            let Some(agent) = self.catalog.find(kind) else {
                let names: Vec<&str> = self.catalog.agents.iter().map(|agent| agent.name.as_str()).collect();
                return ToolOutput::error(format!(
                    "There is no agent type {kind:?}. Use one of: {}.",
                    names.join(", ")
                ));
            };
            // The call's model stands in for the agent's (resolved like the agent's, aliases included).
            let model = input.model.as_deref().map(str::trim).filter(|model| !model.is_empty() && *model != "inherit");
            let agent = match model {
                Some(model) => Cow::Owned(AgentDefinition { model: Some(model.to_owned()), ..agent.clone() }),
                None => Cow::Borrowed(agent),
            };
            if input.prompt.trim().is_empty() {
                return ToolOutput::error("prompt is empty: say what the subagent should do and return.");
            }
            match &ctx.subagents {
                Some(launcher) => launcher.launch(&agent, &input.description, &input.prompt, ctx).await,
                None => ToolOutput::error("Subagents can't start here (a subagent can't start another)."),
            }
        })
    }
}
