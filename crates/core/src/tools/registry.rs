//! The set of tools a session offers the model, in a stable order (the tool list is part of the cached prompt
//! prefix, so its order must not change between requests).
//!
//! Besides its own tools, a registry can draw on [`ToolSource`]s whose tools come and go while the session runs
//! (MCP servers connecting, failing, being searched): they are listed after the built-in ones, in the order the
//! source gives, and the registry's filters ([`ToolRegistry::retain`]) apply to them as they appear.

use std::sync::Arc;

use serde_json::Value;

use super::bash::BashTool;
use super::edit::EditTool;
use super::glob::GlobTool;
use super::grep::GrepTool;
use super::notebook_edit::NotebookEditTool;
use super::read::ReadTool;
use super::write::WriteTool;
use super::{Tool, ToolOutput, schema};
use crate::provider::ToolSpec;

/// Tools that appear while a session runs.
pub trait ToolSource: Send + Sync {
    /// The tools to offer the model now, in a stable order.
    fn offered(&self) -> Vec<Arc<dyn Tool>>;

    /// The tool called `name`, offered or not (a tool found by a search is callable before it is offered).
    fn get(&self, name: &str) -> Option<Arc<dyn Tool>>;

    /// Waits, at most `wait`, for tools that are about to appear (servers still starting).
    fn settle(&self, wait: std::time::Duration) -> futures::future::BoxFuture<'_, ()> {
        let _ = wait;
        Box::pin(async {})
    }
}

/// A predicate on tool names kept by [`ToolRegistry::retain`].
type NameFilter = Arc<dyn Fn(&str) -> bool + Send + Sync>;

/// Tools by name, in registration order.
#[derive(Clone)]
pub struct ToolRegistry {
    tools: Vec<Arc<dyn Tool>>,
    sources: Vec<Arc<dyn ToolSource>>,
    filters: Vec<NameFilter>,
}

impl Default for ToolRegistry {
    fn default() -> Self {
        Self::builtin()
    }
}

impl std::fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}

impl ToolRegistry {
    /// The built-in tools, in Claude Code's order: Bash, Glob, Grep, Read, Edit, Write, NotebookEdit.
    pub fn builtin() -> Self {
        let mut registry = ToolRegistry::empty();
        registry.tools = vec![
            Arc::new(BashTool),
            Arc::new(GlobTool),
            Arc::new(GrepTool),
            Arc::new(ReadTool),
            Arc::new(EditTool),
            Arc::new(WriteTool),
            Arc::new(NotebookEditTool),
        ];
        registry
    }

    /// No tools (e.g. to build a custom set with [`ToolRegistry::register`]).
    pub fn empty() -> Self {
        ToolRegistry { tools: Vec::new(), sources: Vec::new(), filters: Vec::new() }
    }

    /// Adds a source of tools that appear while the session runs (MCP servers).
    pub fn add_source(&mut self, source: Arc<dyn ToolSource>) {
        self.sources.push(source);
    }

    fn kept(&self, name: &str) -> bool {
        self.filters.iter().all(|keep| keep(name))
    }

    /// Every tool offered now: the registry's own, then the sources', filtered.
    fn all(&self) -> Vec<Arc<dyn Tool>> {
        let mut all = self.tools.clone();
        for source in &self.sources {
            for tool in source.offered() {
                if self.kept(tool.name()) && !all.iter().any(|t| t.name() == tool.name()) {
                    all.push(tool);
                }
            }
        }
        all
    }

    /// Adds a tool at the end, or replaces the tool of the same name in place.
    pub fn register(&mut self, tool: Arc<dyn Tool>) {
        match self.tools.iter_mut().find(|t| t.name() == tool.name()) {
            Some(slot) => *slot = tool,
            None => self.tools.push(tool),
        }
    }

    /// The tool called `name` (`Agent` is the Task tool, as in Claude Code).
    pub fn get(&self, name: &str) -> Option<Arc<dyn Tool>> {
        let name = if name == super::task::AGENT_ALIAS { super::task::TASK_TOOL } else { name };
        if let Some(tool) = self.tools.iter().find(|t| t.name() == name) {
            return Some(tool.clone());
        }
        if !self.kept(name) {
            return None;
        }
        self.sources.iter().find_map(|source| source.get(name))
    }

    /// How front ends show a call of `name` with `input` (what [`tandem_protocol::Event::ToolCallStarted`]
    /// carries); a tool the registry doesn't have shows as an unknown, high-risk one with the default summary.
    pub fn describe(&self, name: &str, input: &serde_json::Value, ctx: &super::ToolContext) -> super::CallDisplay {
        match self.get(name) {
            Some(tool) => super::CallDisplay {
                kind: tool.kind(),
                lookup: tool.is_lookup(),
                // The tool's class only: judging this call (for Bash, a bash process) is left to the dialog.
                risk: tool.risk(),
                summary: tool.summary(input, ctx),
            },
            None => super::CallDisplay {
                kind: super::ToolKind::Other,
                lookup: false,
                risk: super::Risk::High,
                summary: super::display_summary(input, ctx),
            },
        }
    }

    /// A successful result of `name` as people read it ([`Tool::result_view`]): the same for a live call and for
    /// one a resumed session shows.
    pub fn result_view(&self, name: &str, input: &serde_json::Value, content: &str) -> Option<super::ResultView> {
        self.get(name)?.result_view(input, content)
    }

    pub fn names(&self) -> Vec<String> {
        self.all().iter().map(|t| t.name().to_owned()).collect()
    }

    pub fn len(&self) -> usize {
        self.all().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The tools offered now (a snapshot: sources' tools may change after).
    pub fn iter(&self) -> impl Iterator<Item = Arc<dyn Tool>> {
        self.all().into_iter()
    }

    /// The tools as the model sees them, in registration order.
    pub fn specs(&self) -> Vec<ToolSpec> {
        self.all()
            .iter()
            .map(|t| ToolSpec {
                name: t.name().to_string(),
                description: t.description().to_string(),
                input_schema: t.input_schema(),
            })
            .collect()
    }

    /// Waits, at most `wait`, for the sources' tools that are about to appear.
    pub async fn settle(&self, wait: std::time::Duration) {
        futures::future::join_all(self.sources.iter().map(|source| source.settle(wait))).await;
    }

    /// Keeps only the tools for which `keep(name)` is true (e.g. to apply `--disallowedTools`), now and for the
    /// tools sources offer later.
    pub fn retain(&mut self, keep: impl Fn(&str) -> bool + Send + Sync + 'static) {
        self.tools.retain(|t| keep(t.name()));
        self.filters.push(Arc::new(keep));
    }

    /// The error result for a call to a tool that is not offered.
    pub fn unknown_tool_message(&self, name: &str) -> String {
        let names = self.names();
        let available = names.join(", ");
        let near = names.iter().find(|n| n.eq_ignore_ascii_case(name));
        match near {
            Some(near) => format!("No such tool: {name}. Did you mean {near}? Available tools: {available}."),
            None if self.is_empty() => format!("No such tool: {name}. No tools are available."),
            None => format!("No such tool: {name}. Available tools: {available}."),
        }
    }

    /// Looks a tool up and validates `input` against its schema: the tool ready to run, or the error result the
    /// model should see (unknown tool, or what is wrong with the input).
    pub fn prepare(&self, name: &str, input: &Value) -> Result<Arc<dyn Tool>, ToolOutput> {
        let tool = self.get(name).ok_or_else(|| ToolOutput::error(self.unknown_tool_message(name)))?;
        schema::validate(&tool.input_schema(), input)
            .map_err(|err| ToolOutput::error(format!("Invalid input for {name}: {err}")))?;
        Ok(tool)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn builtin_order_and_specs() {
        let registry = ToolRegistry::builtin();
        assert_eq!(registry.names(), vec!["Bash", "Glob", "Grep", "Read", "Edit", "Write", "NotebookEdit"]);
        let specs = registry.specs();
        assert_eq!(specs.len(), 7);
        for spec in &specs {
            assert!(!spec.description.is_empty());
            assert_eq!(spec.input_schema["type"], "object", "{}", spec.name);
            assert_eq!(spec.input_schema["additionalProperties"], false, "{}", spec.name);
            // Every required field is a declared property.
            for field in spec.input_schema["required"].as_array().unwrap() {
                assert!(spec.input_schema["properties"].get(field.as_str().unwrap()).is_some());
            }
        }
        assert_eq!(specs, ToolRegistry::builtin().specs(), "specs are stable");
    }

    #[test]
    fn read_only_and_risk() {
        let registry = ToolRegistry::builtin();
        let read_only: Vec<_> = registry.iter().filter(|t| t.is_read_only()).map(|t| t.name().to_owned()).collect();
        assert_eq!(read_only, vec!["Glob", "Grep", "Read"]);
        assert_eq!(registry.get("Bash").unwrap().risk(), super::super::Risk::High);
        assert_eq!(registry.get("Edit").unwrap().risk(), super::super::Risk::Medium);
    }

    #[test]
    fn retain_unknown_and_prepare() {
        let mut registry = ToolRegistry::builtin();
        registry.retain(|name| name != "Bash");
        assert!(registry.get("Bash").is_none());
        assert_eq!(
            registry.unknown_tool_message("Bash"),
            "No such tool: Bash. Available tools: Glob, Grep, Read, Edit, Write, NotebookEdit."
        );
        assert!(registry.unknown_tool_message("read").contains("Did you mean Read?"));
        let err = registry.prepare("Read", &json!({})).err().unwrap();
        assert_eq!(err, ToolOutput::error("Invalid input for Read: missing required field \"file_path\""));
        let err = registry.prepare("Read", &json!({"file_path": "x", "limit": "ten"})).err().unwrap();
        assert_eq!(err.content, "Invalid input for Read: field \"limit\" must be an integer, got string \"ten\"");
        assert!(registry.prepare("Read", &json!({"file_path": "x"})).is_ok());
        assert!(registry.prepare("Nope", &json!({})).is_err());
        let mut custom = ToolRegistry::empty();
        custom.register(Arc::new(ReadTool));
        custom.register(Arc::new(ReadTool));
        assert_eq!(custom.names(), vec!["Read"]);
    }
}
