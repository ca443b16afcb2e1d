//! Subagent definitions: the built-in `general-purpose` and `Explore` agents, Markdown files in Claude Code's
//! layout (`.claude/agents/*.md` of the project, `~/.claude/agents/*.md`, and tandem's `.tandem/agents/` and
//! `<config dir>/agents/`) with front matter `name`, `description`, `tools`, `model`, `effort` and the body as
//! the agent's system prompt, and `--agents <json>` (`{"name": {"description", "prompt", "tools"?, "model"?}}`).

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::front_matter::Document;

/// The tools an Explore agent has: it reads and searches, nothing else.
pub const EXPLORE_TOOLS: &[&str] = &["Read", "Grep", "Glob", "SearchSessions", "Skill"];

const GENERAL_PURPOSE_PROMPT: &str = "You are a subagent of tandem, a coding assistant: another agent gave you the \
task below. Do it completely and on your own, using your tools; nobody will answer questions. When you are done, \
reply with a final message that is the whole result for that agent: what you found or did, with the file paths, \
names and facts it needs, because only that message goes back to it.";

const EXPLORE_PROMPT: &str = "You are a read-only exploring subagent of tandem, a coding assistant. Search and read \
the code to answer the question below; you cannot change anything. Be thorough but quick: use Grep and Glob to \
find candidates, then Read what matters. Reply with a final message that answers the question with file paths \
and line numbers, because only that message goes back to the agent that asked.";

/// One kind of subagent.
#[derive(Clone, Debug)]
pub struct AgentDefinition {
    pub name: String,
    pub description: String,
    /// Its system prompt.
    pub prompt: String,
    /// The tools it may use (`None`: all of the parent's, except Task).
    pub tools: Option<Vec<String>>,
    /// Its model (`None` or `inherit`: the parent's).
    pub model: Option<String>,
    /// `built-in`, `project`, `user` or `flag`.
    pub scope: &'static str,
}

/// Every agent the Task tool can start, and what could not be used.
#[derive(Clone, Debug)]
pub struct AgentCatalog {
    pub agents: Vec<AgentDefinition>,
    pub problems: Vec<String>,
}

impl Default for AgentCatalog {
    fn default() -> Self {
        AgentCatalog { agents: builtin(), problems: Vec::new() }
    }
}

impl AgentCatalog {
    pub fn find(&self, name: &str) -> Option<&AgentDefinition> {
        self.agents.iter().find(|agent| agent.name == name)
    }

    /// Adds (or replaces, by name) an agent.
    fn put(&mut self, agent: AgentDefinition) {
        match self.agents.iter_mut().find(|existing| existing.name == agent.name) {
            Some(existing) => *existing = agent,
            None => self.agents.push(agent),
        }
    }
}

fn builtin() -> Vec<AgentDefinition> {
    vec![
        AgentDefinition {
            name: "general-purpose".into(),
            description: "For researching complex questions, searching for code and doing multi-step tasks on its own. Use it when a search may take several tries, or to keep a long investigation out of your context.".into(),
            prompt: GENERAL_PURPOSE_PROMPT.into(),
            tools: None,
            model: None,
            scope: "built-in",
        },
        AgentDefinition {
            name: "Explore".into(),
            description: "Fast read-only agent for exploring a codebase: finding files by pattern, searching code for keywords, answering questions about how the code works. It cannot change anything.".into(),
            prompt: EXPLORE_PROMPT.into(),
            tools: Some(EXPLORE_TOOLS.iter().map(|name| (*name).to_owned()).collect()),
            model: None,
            scope: "built-in",
        },
    ]
}

/// The directories agent files are read from, lowest precedence first (a later one replaces an agent of the
/// same name: project over user, as in Claude Code).
pub fn directories(
    project_root: &Path,
    claude_user_dir: Option<&Path>,
    config_dir: &Path,
) -> Vec<(PathBuf, &'static str)> {
    let mut dirs = crate::front_matter::extension_dirs("agents", project_root, claude_user_dir, config_dir);
    dirs.reverse();
    dirs
}

/// The built-in agents, then those of `dirs` and of `--agents` (`flag`, highest precedence).
pub fn load(dirs: &[(PathBuf, &'static str)], flag: Option<&str>) -> AgentCatalog {
    let mut catalog = AgentCatalog::default();
    for (dir, scope) in dirs {
        if !crate::front_matter::readable_dir(dir, scope, &mut catalog.problems) {
            continue;
        }
        let Ok(entries) = std::fs::read_dir(dir) else { continue };
        let mut files: Vec<PathBuf> = entries
            .flatten()
            .map(|entry| entry.path())
            .filter(|path| path.extension().and_then(|ext| ext.to_str()) == Some("md"))
            .collect();
        files.sort();
        for file in files {
            match read_agent(&file, scope) {
                Ok((agent, unused)) => {
                    if !unused.is_empty() {
                        catalog.problems.push(format!(
                            "{}: front matter {} not used by tandem",
                            file.display(),
                            unused.join(", ")
                        ));
                    }
                    catalog.put(agent);
                }
                Err(why) => catalog.problems.push(format!("{}: {why}; the agent is not available", file.display())),
            }
        }
    }
    if let Some(json) = flag {
        match parse_flag(json) {
            Ok(agents) => agents.into_iter().for_each(|agent| catalog.put(agent)),
            Err(why) => catalog.problems.push(format!("--agents: {why}")),
        }
    }
    catalog
}

/// Front matter an agent file may have that tandem reads, or that only colours Claude Code's own display.
const AGENT_FIELDS: &[&str] = &["name", "description", "tools", "model", "color"];

/// The agent, and the front matter fields it has that tandem does not apply (`effort`, …).
fn read_agent(file: &Path, scope: &'static str) -> Result<(AgentDefinition, Vec<String>), String> {
    let text = crate::front_matter::read_regular_file(file)?;
    let doc = Document::parse(&text)?;
    let unused: Vec<String> = doc.keys().filter(|key| !AGENT_FIELDS.contains(key)).map(str::to_owned).collect();
    let stem = file.file_stem().map(|stem| stem.to_string_lossy().into_owned()).unwrap_or_default();
    let name = doc.text("name").filter(|name| !name.trim().is_empty()).unwrap_or(stem);
    let description = doc
        .text("description")
        .filter(|text| !text.trim().is_empty())
        .ok_or("it has no description (front matter `description:`), which is how the model picks an agent")?;
    if doc.body.trim().is_empty() {
        return Err("its body (the agent's system prompt) is empty".into());
    }
    let agent = AgentDefinition {
        name,
        description,
        prompt: doc.body.trim().to_owned(),
        tools: doc.list("tools").filter(|tools| !tools.is_empty()),
        model: doc.text("model").filter(|model| !model.trim().is_empty() && model != "inherit"),
        scope,
    };
    Ok((agent, unused))
}

fn parse_flag(json: &str) -> Result<Vec<AgentDefinition>, String> {
    let value: Value = serde_json::from_str(json).map_err(|err| format!("not valid JSON ({err})"))?;
    let Value::Object(agents) = value else { return Err("not a JSON object of agents by name".into()) };
    let mut out = Vec::new();
    for (name, agent) in agents {
        let text = |key: &str| agent.get(key).and_then(Value::as_str).map(str::to_owned);
        let description = text("description").ok_or(format!("agent {name:?} has no \"description\""))?;
        let prompt = text("prompt").ok_or(format!("agent {name:?} has no \"prompt\""))?;
        let tools = match agent.get("tools") {
            None | Some(Value::Null) => None,
            Some(Value::Array(items)) => Some(items.iter().filter_map(Value::as_str).map(str::to_owned).collect()),
            Some(Value::String(list)) => Some(tandem_protocol::permissions::split_rule_list(list)),
            Some(_) => return Err(format!("agent {name:?}: \"tools\" is not a list of tool names")),
        };
        let model = text("model").filter(|model| model != "inherit");
        out.push(AgentDefinition { name, description, prompt, tools, model, scope: "flag" });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_and_the_flag_add_agents_and_problems_are_reported() {
        let dir = tempfile::tempdir().unwrap();
        let agents = dir.path().join(".claude/agents");
        std::fs::create_dir_all(&agents).unwrap();
        std::fs::write(
            agents.join("reviewer.md"),
            "---\nname: code-reviewer\ndescription: Reviews diffs.\ntools: Read, Grep\nmodel: haiku\n---\nYou review code.\n",
        )
        .unwrap();
        std::fs::write(agents.join("nameless.md"), "---\nname: x\n---\nbody").unwrap();
        let flag = r#"{"tester": {"description": "Runs tests", "prompt": "You run tests.", "tools": ["Bash"]}}"#;
        let catalog = load(&[(agents, "project")], Some(flag));
        let names: Vec<&str> = catalog.agents.iter().map(|agent| agent.name.as_str()).collect();
        assert_eq!(names, ["general-purpose", "Explore", "code-reviewer", "tester"]);
        let reviewer = catalog.find("code-reviewer").unwrap();
        assert_eq!(reviewer.tools.as_deref(), Some(&["Read".to_owned(), "Grep".to_owned()][..]));
        assert_eq!(reviewer.model.as_deref(), Some("haiku"));
        assert_eq!(reviewer.prompt, "You review code.");
        assert!(catalog.problems[0].contains("no description"), "{:?}", catalog.problems);
        assert!(load(&[], Some("[1]")).problems[0].contains("--agents"));
    }
}
