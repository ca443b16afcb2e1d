//! Tool search: when the MCP tools' schemas would take too much of the context window, they are not sent with
//! every request. The model gets one `ToolSearch` tool instead; it returns the matching tools' names,
//! descriptions and input schemas, and those tools can be called from then on.
//!
//! Found tools are declared from the next request on, after the others in the order found, so a provider that
//! only lets the model call declared tools can call them; the list (the start of the cached prompt) changes once
//! per tool found.

use std::borrow::Cow;
use std::sync::{Arc, Weak};

use futures::future::BoxFuture;
use serde_json::{Value, json};

use super::manager::McpManager;
use super::tool::McpTool;
use crate::tools::{Risk, Tool, ToolContext, ToolOutput};

/// The search tool's name (Claude Code's).
pub const TOOL_SEARCH: &str = "ToolSearch";
/// The share of the context window MCP tool schemas may take before they are deferred (`ENABLE_TOOL_SEARCH=auto`).
pub const DEFAULT_BUDGET_PERCENT: u64 = 10;
/// Tools a search returns unless it asks for another number.
const DEFAULT_RESULTS: usize = 5;
const MAX_RESULTS: usize = 20;

/// When the tools are deferred (`ENABLE_TOOL_SEARCH`: `true`, `false`, `auto`, `auto:N` for N percent).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ToolSearchMode {
    Never,
    Always,
    /// When the schemas are estimated at more than this many tokens.
    Auto {
        budget_tokens: u64,
    },
}

impl ToolSearchMode {
    pub fn parse(value: Option<&str>, context_window: u64) -> Result<ToolSearchMode, String> {
        let auto = |percent: u64| ToolSearchMode::Auto { budget_tokens: context_window * percent / 100 };
        let Some(value) = value.map(str::trim).filter(|v| !v.is_empty()) else {
            return Ok(auto(DEFAULT_BUDGET_PERCENT));
        };
        match value.to_ascii_lowercase().as_str() {
            "true" | "1" | "yes" | "on" => Ok(ToolSearchMode::Always),
            "false" | "0" | "no" | "off" => Ok(ToolSearchMode::Never),
            "auto" => Ok(auto(DEFAULT_BUDGET_PERCENT)),
            other => match other.strip_prefix("auto:").map(|n| n.trim().parse::<u64>()) {
                Some(Ok(percent)) if percent <= 100 => Ok(auto(percent)),
                _ => Err(format!(
                    "ENABLE_TOOL_SEARCH={value:?} is not true, false, auto or auto:N (a percentage); auto is used"
                )),
            },
        }
    }

    /// Whether `tools` are to be found by search rather than sent.
    pub fn defers(&self, tools: &[Arc<McpTool>]) -> bool {
        if tools.is_empty() {
            return false;
        }
        match self {
            ToolSearchMode::Never => false,
            ToolSearchMode::Always => true,
            ToolSearchMode::Auto { budget_tokens } => schema_tokens(tools) > *budget_tokens,
        }
    }
}

/// The estimated tokens the tools' definitions take in a request (about four characters a token).
pub fn schema_tokens(tools: &[Arc<McpTool>]) -> u64 {
    tools.iter().map(|tool| tool.schema_tokens).sum()
}

/// The `ToolSearch` tool.
pub struct ToolSearchTool {
    pub(super) manager: Weak<McpManager>,
}

impl Tool for ToolSearchTool {
    fn name(&self) -> &str {
        TOOL_SEARCH
    }

    fn description(&self) -> Cow<'static, str> {
        let listing = self.manager.upgrade().map(|manager| servers_line(&manager.all_tools())).unwrap_or_default();
        Cow::Owned(format!(
            "Finds the tools of the connected MCP servers, whose definitions are not loaded up front because there are \
             many. Search before saying a capability is missing. The result gives each matching tool's name, \
             description and input schema; call a found tool directly by its name (mcp__server__tool) with input \
             that fits its schema.\n\nQuery forms: keywords (matched against names and descriptions, best first; \
             +word makes a word required), or \"select:name1,name2\" for tools whose names you know.{listing}"
        ))
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "Keywords, or select:name1,name2"},
                "max_results": {"type": "integer", "minimum": 1, "maximum": MAX_RESULTS, "description": "How many tools to return (default 5)"}
            },
            "required": ["query"],
            "additionalProperties": false
        })
    }

    fn is_read_only(&self) -> bool {
        true
    }

    fn kind(&self) -> crate::tools::ToolKind {
        crate::tools::ToolKind::Search
    }

    fn risk(&self) -> Risk {
        Risk::Low
    }

    fn run<'a>(&'a self, input: crate::conversation::ToolInput, _ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move {
            let Some(manager) = self.manager.upgrade() else { return ToolOutput::error("No MCP server is running.") };
            let query = input.get("query").and_then(Value::as_str).unwrap_or_default();
            let max = input.get("max_results").and_then(Value::as_u64).map_or(DEFAULT_RESULTS, |n| n as usize);
            let found = search(&manager.all_tools(), query, max.clamp(1, MAX_RESULTS));
            if found.is_empty() {
                return ToolOutput::ok(format!("No MCP tool matches {query:?}.{}", servers_line(&manager.all_tools())));
            }
            let mut text = format!("{} tool(s) found; call them by name:\n", found.len());
            for tool in &found {
                text.push_str(&format!(
                    "\n<tool name=\"{}\">\n{}\nInput schema: {}\n</tool>\n",
                    tool.name(),
                    tool.description_text(),
                    tool.input_schema()
                ));
            }
            manager.declare(&found);
            let names: Vec<&str> = found.iter().map(|tool| tool.name()).collect();
            ToolOutput::ok(text).with_structured(json!({"matches": names, "query": query}))
        })
    }
}

/// "Servers: a (3 tools), b (200 tools)", so the model knows what exists before searching.
fn servers_line(tools: &[Arc<McpTool>]) -> String {
    let mut counts: Vec<(String, usize)> = Vec::new();
    for tool in tools {
        match counts.iter_mut().find(|(server, _)| server == &tool.server) {
            Some((_, n)) => *n += 1,
            None => counts.push((tool.server.clone(), 1)),
        }
    }
    if counts.is_empty() {
        return String::new();
    }
    let list: Vec<String> = counts.iter().map(|(server, n)| format!("{server} ({n} tools)")).collect();
    format!("\n\nConnected MCP servers: {}.", list.join(", "))
}

/// The tools matching `query`, best first.
pub fn search(tools: &[Arc<McpTool>], query: &str, max: usize) -> Vec<Arc<McpTool>> {
    let query = query.trim();
    if let Some(names) = query.strip_prefix("select:") {
        return names
            .split(',')
            .map(str::trim)
            .filter_map(|name| tools.iter().find(|tool| tool.name() == name || tool.remote_name() == name).cloned())
            .take(MAX_RESULTS)
            .collect();
    }
    let words: Vec<String> = query.split_whitespace().map(str::to_lowercase).collect();
    let required: Vec<&str> =
        words.iter().filter_map(|word| word.strip_prefix('+')).filter(|w| !w.is_empty()).collect();
    let optional: Vec<&str> = words.iter().filter(|word| !word.starts_with('+')).map(String::as_str).collect();
    let mut scored: Vec<(usize, usize, &Arc<McpTool>)> = tools
        .iter()
        .enumerate()
        .filter_map(|(index, tool)| {
            let name = tool.name().to_lowercase();
            let description = tool.description_text().to_lowercase();
            if !required.iter().all(|word| name.contains(word) || description.contains(word)) {
                return None;
            }
            let score: usize = required
                .iter()
                .chain(optional.iter())
                .map(|word| {
                    if name.contains(word) {
                        3
                    } else if description.contains(word) {
                        1
                    } else {
                        0
                    }
                })
                .sum();
            (score > 0).then_some((score, index, tool))
        })
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    scored.into_iter().take(max).map(|(_, _, tool)| tool.clone()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::client::RemoteTool;

    fn tool(server: &str, name: &str, description: &str) -> Arc<McpTool> {
        let remote = RemoteTool {
            name: name.into(),
            description: description.into(),
            input_schema: json!({"type": "object"}),
            read_only: false,
            title: None,
        };
        McpTool::new(server, remote, Weak::new())
    }

    #[test]
    fn modes_parse_like_claude_codes_variable() {
        assert_eq!(ToolSearchMode::parse(None, 200_000), Ok(ToolSearchMode::Auto { budget_tokens: 20_000 }));
        assert_eq!(ToolSearchMode::parse(Some("auto:5"), 200_000), Ok(ToolSearchMode::Auto { budget_tokens: 10_000 }));
        assert_eq!(ToolSearchMode::parse(Some("true"), 1), Ok(ToolSearchMode::Always));
        assert_eq!(ToolSearchMode::parse(Some("false"), 1), Ok(ToolSearchMode::Never));
        assert!(ToolSearchMode::parse(Some("sometimes"), 1).is_err());
    }

    #[test]
    fn keywords_rank_names_over_descriptions_and_select_picks_by_name() {
        let tools = vec![
            tool("gh", "list_issues", "List the issues of a repository"),
            tool("gh", "create_issue", "Open an issue"),
            tool("db", "query", "Run SQL; returns issues rows too"),
        ];
        let names = |found: Vec<Arc<McpTool>>| found.iter().map(|t| t.name().to_owned()).collect::<Vec<_>>();
        assert_eq!(
            names(search(&tools, "issue", 5)),
            ["mcp__gh__list_issues", "mcp__gh__create_issue", "mcp__db__query"]
        );
        assert_eq!(names(search(&tools, "+sql issue", 5)), ["mcp__db__query"]);
        assert_eq!(
            names(search(&tools, "select:create_issue, mcp__db__query", 5)),
            ["mcp__gh__create_issue", "mcp__db__query"]
        );
        assert!(search(&tools, "weather", 5).is_empty());
    }

    #[test]
    fn auto_defers_only_over_the_budget() {
        let tools: Vec<_> = (0..200).map(|i| tool("big", &format!("tool_{i}"), &"x".repeat(400))).collect();
        assert!(ToolSearchMode::Auto { budget_tokens: 20_000 }.defers(&tools));
        assert!(!ToolSearchMode::Auto { budget_tokens: 20_000 }.defers(&tools[..10]));
        assert!(!ToolSearchMode::Always.defers(&[]));
    }
}
