//! `WebSearch`: searches the web and returns the results' titles and links with what the backend says about
//! them, in Claude Code's format. Where it searches is the session's choice ([`SearchBackend`]): the Anthropic
//! API's server-side search, or a search engine named in `config.toml`; with neither, the tool is not offered.

use std::time::Instant;

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::typed::TypedTool;
use super::{Risk, ToolContext, ToolOutput};
use crate::web::search::anthropic::AnthropicSearch;
use crate::web::search::engines::Engine;
use crate::web::search::{SearchRequest, SearchResults};

pub const WEB_SEARCH_TOOL: &str = "WebSearch";

const DESCRIPTION: &str = "Searches the web and returns the results' titles and links, with a summary of what they \
say.\n\
\n\
- Use it for information past your knowledge cutoff: current documentation, releases, error messages, news.\n\
- allowed_domains limits the results to those domains, blocked_domains leaves those out (not both at once).\n\
- After answering from the results, you MUST list the sources you used, as markdown links.";

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// The search query to use
    #[schemars(length(min = 2))]
    query: String,
    /// Only include search results from these domains
    #[serde(default)]
    allowed_domains: Option<Vec<String>>,
    /// Never include search results from these domains
    #[serde(default)]
    blocked_domains: Option<Vec<String>>,
}

/// Where WebSearch searches.
pub enum SearchBackend {
    /// The Anthropic API's server-side web search.
    Anthropic(AnthropicSearch),
    /// A search engine's JSON API.
    Engine(Engine),
}

/// The WebSearch tool with its backend.
pub struct WebSearchTool {
    pub backend: SearchBackend,
}

impl TypedTool for WebSearchTool {
    type Input = Input;
    const NAME: &'static str = WEB_SEARCH_TOOL;

    fn description(&self) -> std::borrow::Cow<'static, str> {
        DESCRIPTION.into()
    }

    fn is_read_only(&self) -> bool {
        true
    }

    fn permission_subject(&self, _input: &serde_json::Value, _cwd: &std::path::Path) -> super::Subject {
        super::Subject::WebSearch
    }

    fn kind(&self) -> super::ToolKind {
        super::ToolKind::Web
    }

    fn risk(&self) -> Risk {
        Risk::Low
    }

    fn call<'a>(&'a self, input: Input, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move {
            let clean = |list: Option<Vec<String>>| -> Vec<String> {
                list.into_iter().flatten().map(|d| d.trim().to_owned()).filter(|d| !d.is_empty()).collect()
            };
            let request = SearchRequest {
                query: input.query.trim().to_owned(),
                allowed_domains: clean(input.allowed_domains),
                blocked_domains: clean(input.blocked_domains),
            };
            if request.query.chars().count() < 2 {
                return ToolOutput::error("The query must have at least 2 characters.");
            }
            if !request.allowed_domains.is_empty() && !request.blocked_domains.is_empty() {
                return ToolOutput::error("Give allowed_domains or blocked_domains, not both in the same search.");
            }
            let started = Instant::now();
            let found = match &self.backend {
                SearchBackend::Anthropic(search) => {
                    search.search(&request, &ctx.cancel, &ctx.spend, ctx.recorder.as_deref()).await
                }
                SearchBackend::Engine(engine) => engine.search(&request, &ctx.cancel).await,
            };
            match found {
                Ok(results) => output(&request.query, &results, started.elapsed().as_secs_f64()),
                Err(message) => ToolOutput::error(message),
            }
        })
    }
}

/// Claude Code's WebSearch result: the query, each search's links as JSON, the text, and the reminder to cite.
fn output(query: &str, results: &SearchResults, seconds: f64) -> ToolOutput {
    let mut content = format!("Web search results for query: \"{query}\"\n\n");
    for (_, links) in &results.searches {
        content.push_str(&format!("Links: {}\n\n", serde_json::to_string(links).unwrap_or_default()));
    }
    if results.searches.iter().all(|(_, links)| links.is_empty()) {
        content.push_str("No links were found.\n\n");
    }
    if !results.text.is_empty() {
        content.push_str(&results.text);
        content.push_str("\n\n");
    }
    content.push_str(
        "REMINDER: You MUST include the sources above in your response to the user using markdown hyperlinks.",
    );
    let mut structured: Vec<serde_json::Value> =
        results.searches.iter().map(|(id, links)| json!({"tool_use_id": id, "content": links})).collect();
    if !results.text.is_empty() {
        structured.push(json!(results.text));
    }
    ToolOutput::ok(content).with_structured(json!({
        "query": query,
        "results": structured,
        "durationSeconds": seconds,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::web::search::Link;

    #[test]
    fn results_read_like_claude_codes() {
        let results = SearchResults {
            searches: vec![("srvtoolu_1".into(), vec![Link { title: "Tokio".into(), url: "https://tokio.rs".into() }])],
            text: "Tokio is a runtime.".into(),
        };
        let output = output("tokio", &results, 1.5);
        assert_eq!(
            output.content,
            "Web search results for query: \"tokio\"\n\nLinks: [{\"title\":\"Tokio\",\"url\":\"https://tokio.rs\"}]\n\n\
             Tokio is a runtime.\n\nREMINDER: You MUST include the sources above in your response to the user using markdown hyperlinks."
        );
        let structured = output.structured.unwrap();
        assert_eq!(structured["results"][0]["tool_use_id"], "srvtoolu_1");
        assert_eq!(structured["results"][1], "Tokio is a runtime.");
    }

    #[tokio::test]
    async fn both_filters_at_once_and_short_queries_are_refused_before_searching() {
        let tool =
            WebSearchTool { backend: SearchBackend::Engine(Engine::Searxng { url: "http://127.0.0.1:1".into() }) };
        let ctx = ToolContext::new(std::env::temp_dir());
        let both = json!({"query": "rust", "allowed_domains": ["a.com"], "blocked_domains": ["b.com"]});
        let output = super::super::Tool::run(&tool, both.into(), &ctx).await;
        assert!(output.is_error && output.content.contains("not both"), "{}", output.content);
        let output = super::super::Tool::run(&tool, json!({"query": " x "}).into(), &ctx).await;
        assert!(output.is_error && output.content.contains("at least 2"), "{}", output.content);
    }
}
