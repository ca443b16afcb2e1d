//! The tools the session offers the model: the built-in ones, the catalogs' (skills, subagents), the web's and
//! `--json-schema`'s, less those a deny rule without a specifier takes out and those `--tools` leaves out.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::{Places, SessionOptions, SetupError};
use crate::permissions::settings::Settings;
use crate::permissions::{PermissionPolicy, RuleKind, Scope, split_rule_list};
use crate::tools::save_memory::SaveMemoryTool;
use crate::tools::search_sessions::{SEARCH_SESSIONS, SearchSessionsTool};
use crate::tools::task::{AGENT_ALIAS, TASK_TOOL};
use crate::tools::{Tool, ToolRegistry};

/// Told to the model when its answer must match `--json-schema`.
const STRUCTURED_OUTPUT_PROMPT: &str = "The user needs your final answer as structured data: when you have it, \
call the StructuredOutput tool with JSON matching its input schema. That call is your final answer.";

/// The registry being filled, and the tools deny rules take out of the offer (a tool offered later is checked
/// against the same rules).
pub(super) struct Offer {
    registry: ToolRegistry,
    removed: Vec<String>,
}

/// The slash commands, skills and subagents of the session's directories.
pub(super) struct Catalogs {
    pub(super) commands: Arc<crate::commands::CommandCatalog>,
    pub(super) skills: Arc<crate::skills::SkillCatalog>,
    pub(super) agents: Arc<crate::agents::AgentCatalog>,
}

impl Offer {
    /// The built-in tools and the session's own (memory, checklist, background shells, questions, plan).
    pub(super) fn new(permissions: &PermissionPolicy, places: &Places<'_>) -> Offer {
        let removed = permissions
            .rules
            .iter()
            .filter(|rule| rule.kind == RuleKind::Deny && rule.rule.specifier.is_none())
            .map(|rule| rule.rule.tool.clone())
            .collect();
        let mut offer = Offer { registry: ToolRegistry::builtin(), removed };
        offer.registry.register(Arc::new(SaveMemoryTool::for_session(&places.paths.config_dir, places.cwd)));
        offer.registry.register(Arc::new(crate::tools::todo_write::TodoWriteTool));
        offer.registry.register(Arc::new(crate::tools::bash_output::BashOutputTool));
        offer.registry.register(Arc::new(crate::tools::bash_output::KillShellTool));
        offer.registry.register(Arc::new(crate::tools::ask_user::AskUserQuestionTool));
        offer.registry.register(Arc::new(crate::tools::ask_user::ExitPlanModeTool));
        let denied = offer.removed.clone();
        offer.registry.retain(move |name| !denied.iter().any(|rule| rule_removes(rule, name)));
        offer
    }

    fn offered(&self, name: &str) -> bool {
        !self.removed.iter().any(|rule| rule_removes(rule, name))
    }

    /// Registers `tool` unless a deny rule takes it out.
    fn offer(&mut self, tool: Arc<dyn Tool>) {
        if self.offered(tool.name()) {
            self.registry.register(tool);
        }
    }

    pub(super) fn offer_all(&mut self, tools: Vec<Arc<dyn Tool>>) {
        for tool in tools {
            self.offer(tool);
        }
    }

    /// The search over saved sessions, which leaves the current one out.
    pub(super) fn search_sessions(&mut self, data_dir: &Path, current_session: &str) {
        if self.offered(SEARCH_SESSIONS) {
            let current_session = Some(current_session.to_owned());
            self.registry.register(Arc::new(SearchSessionsTool { data_dir: data_dir.to_path_buf(), current_session }));
        }
    }

    /// Loads the commands, skills and subagents, and offers the Skill tool when there are skills (a user skill's
    /// own files may then be read where it lives, outside the workspace).
    pub(super) fn catalogs(
        &mut self,
        options: &SessionOptions,
        settings: &Settings,
        places: &Places<'_>,
        permissions: &mut PermissionPolicy,
        notices: &mut Vec<String>,
    ) -> Catalogs {
        let (root, claude_dir, config_dir) = (&settings.project_root, places.claude_dir, &places.paths.config_dir);
        // As Claude Code: the project's commands, skills and agents with the `project` setting source, the user's
        // with `user`.
        let sources = places.sources;
        let read = |mut dirs: Vec<(PathBuf, &'static str)>| {
            dirs.retain(|(_, scope)| match *scope {
                "project" => sources.project,
                "user" => sources.user,
                _ => true,
            });
            dirs
        };
        let commands = crate::commands::load(&read(crate::commands::directories(root, claude_dir, config_dir)));
        notices.extend(commands.problems.iter().map(|problem| format!("Commands: {problem}")));
        let skills = Arc::new(crate::skills::load(&read(crate::skills::directories(root, claude_dir, config_dir))));
        notices.extend(skills.problems.iter().map(|problem| format!("Skills: {problem}")));
        if !skills.skills.is_empty() && self.offered(crate::tools::skill::SKILL_TOOL) {
            self.registry.register(Arc::new(crate::tools::skill::SkillTool { catalog: skills.clone() }));
            for skill in skills.skills.iter().filter(|skill| skill.scope == "user") {
                let rule = format!("Read(/{}/**)", skill.dir.display());
                if let Err(problem) = permissions.add_rule(RuleKind::Allow, &rule, Scope::Session) {
                    notices.push(format!("Skills: {}: {problem}", skill.dir.display()));
                }
            }
        }
        let agents = Arc::new(crate::agents::load(
            &read(crate::agents::directories(root, claude_dir, config_dir)),
            options.agents.as_deref(),
        ));
        notices.extend(agents.problems.iter().map(|problem| format!("Agents: {problem}")));
        Catalogs { commands: Arc::new(commands), skills, agents }
    }

    /// The Task tool, and a notice for each subagent that lists a tool the session does not offer (it gets the
    /// others). Called once every built-in and web tool is in; MCP tools are left to their servers, which start
    /// later.
    pub(super) fn offer_task(&mut self, agents: &Arc<crate::agents::AgentCatalog>, notices: &mut Vec<String>) {
        self.offer(Arc::new(crate::tools::task::TaskTool { catalog: agents.clone() }));
        for agent in agents.agents.iter().filter(|agent| agent.scope != "built-in") {
            let unknown: Vec<&str> = agent
                .tools
                .iter()
                .flatten()
                .map(String::as_str)
                .filter(|name| !name.starts_with(crate::mcp::tool::PREFIX) && self.registry.get(name).is_none())
                .collect();
            if !unknown.is_empty() {
                notices.push(format!(
                    "Agents: {} lists tools tandem does not have here ({}); it gets the others",
                    agent.name,
                    unknown.join(", ")
                ));
            }
        }
    }

    /// `--tools`: only these built-in tools (`default` for all, `""` for none). A name tandem lacks is reported.
    pub(super) fn restrict(&mut self, list: &str, notices: &mut Vec<String>) {
        let list = list.trim();
        if list == "default" {
            return;
        }
        let wanted: Vec<String> = split_rule_list(list);
        for name in &wanted {
            if self.registry.get(name).is_none() && !(name == AGENT_ALIAS && self.registry.get(TASK_TOOL).is_some()) {
                notices.push(format!("--tools: tandem has no tool {name:?}; it is left out"));
            }
        }
        // MCP tools are not built-in ones: `--tools` leaves them alone (as in Claude Code).
        self.registry.retain(move |name| {
            name.starts_with(crate::mcp::tool::PREFIX)
                || name == crate::mcp::search::TOOL_SEARCH
                || wanted.iter().any(|wanted| wanted == name || (wanted == AGENT_ALIAS && name == TASK_TOOL))
        });
    }

    /// `--json-schema`: the StructuredOutput tool (whatever `--tools` said: it is how the answer comes back) and
    /// the sentence that asks for it; the place the accepted answer lands.
    pub(super) fn structured_output(
        &mut self,
        options: &SessionOptions,
        system: &mut Vec<crate::provider::SystemBlock>,
    ) -> Result<Option<Arc<Mutex<Option<serde_json::Value>>>>, SetupError> {
        let Some(text) = options.json_schema.as_deref() else { return Ok(None) };
        let schema: serde_json::Value =
            serde_json::from_str(text).map_err(|err| SetupError(format!("--json-schema: not valid JSON ({err})")))?;
        let tool = crate::tools::structured_output::StructuredOutputTool::new(schema)
            .map_err(|why| SetupError(format!("--json-schema: {why}")))?;
        let accepted = tool.accepted();
        self.registry.register(Arc::new(tool));
        system.push(crate::provider::SystemBlock { text: STRUCTURED_OUTPUT_PROMPT.to_owned(), cache: false });
        Ok(Some(accepted))
    }

    pub(super) fn into_registry(self) -> ToolRegistry {
        self.registry
    }
}

/// Whether a deny rule without a specifier takes the tool `name` out of the offer: the tool itself, or for
/// `mcp__server` and `mcp__server__*` every tool of that server (a name that only looks like it is taken out too,
/// which is the safe side).
fn rule_removes(rule: &str, name: &str) -> bool {
    // Claude Code's newer name for the Task tool takes it out too.
    if rule == name || (rule == AGENT_ALIAS && name == TASK_TOOL) {
        return true;
    }
    if !rule.starts_with(crate::mcp::tool::PREFIX) {
        return false;
    }
    let server = rule.strip_suffix("__*").unwrap_or(rule);
    name.strip_prefix(server).is_some_and(|rest| rest.starts_with("__"))
}

#[cfg(test)]
mod tests {
    use super::rule_removes;

    #[test]
    fn deny_rules_take_a_tool_or_a_whole_server_out_of_the_offer() {
        assert!(rule_removes("Bash", "Bash"));
        assert!(!rule_removes("Bash", "BashOutput"));
        assert!(rule_removes("Agent", "Task"), "--disallowedTools Agent takes the Task tool out");
        assert!(rule_removes("mcp__github", "mcp__github__create_issue"));
        assert!(rule_removes("mcp__github__*", "mcp__github__create_issue"));
        assert!(rule_removes("mcp__github__create_issue", "mcp__github__create_issue"));
        assert!(!rule_removes("mcp__github__create_issue", "mcp__github__list_issues"));
        assert!(!rule_removes("mcp__git", "mcp__github__create_issue"), "a server name is not a prefix");
    }
}
