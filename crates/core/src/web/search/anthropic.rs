//! WebSearch on Anthropic: one request of its own (not streamed, not part of the conversation) to the session's
//! endpoint, offering the API's server-side `web_search` tool; the server searches, and the answer's
//! `web_search_tool_result` blocks carry the links, its text blocks the model's account of them. This is how
//! Claude Code's WebSearch works too, which keeps the permission check (and the user's say) in front of it.

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::{Link, SearchRequest, SearchResults};
use crate::conversation::Usage;
use crate::models::ModelInfo;
use crate::provider::Endpoint;
use crate::provider::transport::{self, USER_AGENT};
use crate::spend::ToolSpend;

/// The server tool's version.
const SERVER_TOOL: &str = "web_search_20250305";
/// Searches the server may run for one query.
const MAX_USES: u32 = 8;
/// What Anthropic charges per search (US dollars).
const PRICE_PER_SEARCH: f64 = 0.01;

const SYSTEM: &str = "You are an assistant for performing a web search tool use. Search for what the user asks, \
then sum up what the results say that answers it, briefly, naming the pages you draw on.";

/// The session's Anthropic endpoint and the model that runs the search.
pub struct AnthropicSearch {
    pub endpoint: Endpoint,
    pub model: ModelInfo,
}

impl AnthropicSearch {
    pub async fn search(
        &self,
        request: &SearchRequest,
        cancel: &CancellationToken,
        spend: &ToolSpend,
        recorder: Option<&crate::inspect::Recorder>,
    ) -> Result<SearchResults, String> {
        let url = transport::join_url(&self.endpoint.base_url, "/v1", "/messages");
        let headers = crate::provider::anthropic::request_headers(&self.endpoint, &url).map_err(|e| e.to_string())?;
        let body = request_body(&self.model.id, request);
        let mut record = recorder.map(|recorder| {
            let wire = crate::provider::WireRequest::post(&url, &headers, body.to_string().into_bytes());
            recorder.start("websearch", &self.model.id, 1, Some(wire))
        });
        let client = reqwest::Client::builder()
            .user_agent(USER_AGENT)
            .connect_timeout(transport::CONNECT_TIMEOUT)
            .timeout(std::time::Duration::from_secs(120))
            .build()
            .map_err(|err| format!("can't set up the HTTP client: {err}"))?;
        let exchange = async {
            let response = client
                .post(&url)
                .headers(headers)
                .body(body.to_string())
                .send()
                .await
                .map_err(|err| (transport::send_error(err, &url, &self.endpoint).to_string(), None))?;
            let status = response.status().as_u16();
            let response_headers = response.headers().clone();
            let bytes = response
                .bytes()
                .await
                .map_err(|err| (format!("the search's answer broke off: {err}"), Some(status)))?;
            if !(200..300).contains(&status) {
                let error = transport::http_error(status, &response_headers, &bytes, &self.endpoint).to_string();
                return Err((error, Some(status)));
            }
            serde_json::from_slice::<Value>(&bytes).map(|document| (status, document)).map_err(|err| {
                let text = transport::truncate(&String::from_utf8_lossy(&bytes));
                (format!("the search's answer is not JSON ({err}): {text}"), Some(status))
            })
        };
        let outcome = tokio::select! {
            () = cancel.cancelled() => Err(("The search was interrupted.".to_owned(), None)),
            answer = exchange => answer,
        };
        if let (Some(recorder), Some(mut record)) = (recorder, record.take()) {
            let mut usage = None;
            if let Ok((status, document)) = &outcome {
                usage = document.get("usage").and_then(|usage| serde_json::from_value(usage.clone()).ok());
                record.document(*status, document.clone());
            }
            record.end(outcome.as_ref().err().cloned(), usage);
            recorder.finish(record);
        }
        let (_, answer) = outcome.map_err(|(error, _)| error)?;
        if let Some(usage) = answer.get("usage") {
            let searches = usage.pointer("/server_tool_use/web_search_requests").and_then(Value::as_u64).unwrap_or(0);
            let usage: Usage = serde_json::from_value(usage.clone()).unwrap_or_default();
            spend.record(&self.model, &usage);
            spend.record_searches(&self.model, searches, self.model.prices.is_some().then_some(PRICE_PER_SEARCH));
        }
        read_answer(&answer)
    }
}

fn request_body(model: &str, request: &SearchRequest) -> Value {
    let mut tool = json!({"type": SERVER_TOOL, "name": "web_search", "max_uses": MAX_USES});
    if !request.allowed_domains.is_empty() {
        tool["allowed_domains"] = json!(request.allowed_domains);
    }
    if !request.blocked_domains.is_empty() {
        tool["blocked_domains"] = json!(request.blocked_domains);
    }
    json!({
        "model": model,
        "max_tokens": 4096,
        "system": [{"type": "text", "text": SYSTEM}],
        "messages": [{"role": "user", "content": format!("Perform a web search for the query: {}", request.query)}],
        "tools": [tool],
        "stream": false,
    })
}

/// The links of each search and the model's text, or the error a search ended in.
fn read_answer(answer: &Value) -> Result<SearchResults, String> {
    let mut results = SearchResults::default();
    let mut errors = Vec::new();
    for block in answer.get("content").and_then(Value::as_array).into_iter().flatten() {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => results.text.push_str(block.get("text").and_then(Value::as_str).unwrap_or_default()),
            Some("web_search_tool_result") => {
                let id = block.get("tool_use_id").and_then(Value::as_str).unwrap_or_default().to_owned();
                match block.get("content") {
                    Some(Value::Array(items)) => {
                        let links = items
                            .iter()
                            .filter_map(|item| {
                                let url = item.get("url").and_then(Value::as_str)?;
                                let title = item.get("title").and_then(Value::as_str).unwrap_or(url);
                                Some(Link { title: title.to_owned(), url: url.to_owned() })
                            })
                            .collect();
                        results.searches.push((id, links));
                    }
                    Some(error) => errors
                        .push(error.get("error_code").and_then(Value::as_str).unwrap_or("unknown_error").to_owned()),
                    None => {}
                }
            }
            _ => {}
        }
    }
    if results.searches.is_empty() && !errors.is_empty() {
        return Err(format!("The web search failed: {}.", errors.join(", ")));
    }
    if results.searches.is_empty() && answer.get("content").is_none() {
        return Err(format!("The search's answer has no content: {}", transport::truncate(&answer.to_string())));
    }
    results.text = results.text.trim().to_owned();
    Ok(results)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_server_tool_gets_the_domain_filters() {
        let request = SearchRequest {
            query: "tokio spawn".into(),
            allowed_domains: vec!["docs.rs".into()],
            blocked_domains: Vec::new(),
        };
        let body = request_body("claude-sonnet-4-5", &request);
        assert_eq!(
            body["tools"],
            json!([{"type": "web_search_20250305", "name": "web_search", "max_uses": 8, "allowed_domains": ["docs.rs"]}])
        );
        assert_eq!(body["messages"][0]["content"], "Perform a web search for the query: tokio spawn");
        assert_eq!(body["stream"], false);
    }

    #[test]
    fn links_text_and_errors_are_read_from_the_answer() {
        let answer = json!({"content": [
            {"type": "text", "text": "Searching. "},
            {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "q"}},
            {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": [
                {"type": "web_search_result", "title": "Tokio", "url": "https://tokio.rs", "encrypted_content": "x"},
                {"type": "web_search_result", "url": "https://docs.rs/tokio"}
            ]},
            {"type": "text", "text": "Tokio is an async runtime."}
        ]});
        let results = read_answer(&answer).unwrap();
        assert_eq!(results.searches.len(), 1);
        assert_eq!(results.searches[0].0, "srvtoolu_1");
        assert_eq!(
            results.searches[0].1[1],
            Link { title: "https://docs.rs/tokio".into(), url: "https://docs.rs/tokio".into() }
        );
        assert_eq!(results.text, "Searching. Tokio is an async runtime.");

        let failed = json!({"content": [{"type": "web_search_tool_result", "tool_use_id": "s",
            "content": {"type": "web_search_tool_result_error", "error_code": "max_uses_exceeded"}}]});
        assert_eq!(read_answer(&failed).unwrap_err(), "The web search failed: max_uses_exceeded.");
        assert!(read_answer(&json!({"type": "error"})).is_err());
    }
}
