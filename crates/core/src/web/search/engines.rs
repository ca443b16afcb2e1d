//! Search engines with a JSON API, for providers without a server-side search: a SearXNG instance (its
//! `format=json` output must be enabled in its settings) or the Brave Search API. Results outside the
//! request's domain filters are dropped here, since neither engine takes such filters as parameters.

use std::time::Duration;

use serde_json::Value;
use tokio_util::sync::CancellationToken;
use url::Url;

use crate::web::root_cause;

use super::{Link, SearchRequest, SearchResults, wanted};
use crate::provider::ApiKey;
use crate::provider::transport::USER_AGENT;

/// The Brave Search API's web search.
pub const BRAVE_URL: &str = "https://api.search.brave.com/res/v1/web/search";
/// Results asked for; more than are shown, so domain filters still leave some.
const ASK_FOR: usize = 20;
/// Results shown at most.
const SHOW: usize = 10;
const TIMEOUT: Duration = Duration::from_secs(30);

/// Which engine, and where.
#[derive(Clone, Debug)]
pub enum Engine {
    /// A SearXNG instance's base URL.
    Searxng { url: String },
    /// The Brave Search API (or another URL speaking it) and its key.
    Brave { url: String, key: ApiKey, key_env: String },
}

impl Engine {
    /// The engine's name for messages.
    pub fn name(&self) -> &'static str {
        match self {
            Engine::Searxng { .. } => "SearXNG",
            Engine::Brave { .. } => "Brave Search",
        }
    }

    pub async fn search(&self, request: &SearchRequest, cancel: &CancellationToken) -> Result<SearchResults, String> {
        // No redirects: a key in a header would follow one to another host.
        let client = reqwest::Client::builder()
            .user_agent(USER_AGENT)
            .timeout(TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|err| format!("can't set up the HTTP client: {err}"))?;
        let query = engine_query(request);
        let (url, builder) = match self {
            Engine::Searxng { url } => {
                let mut address = endpoint(url, "search")?;
                address.query_pairs_mut().append_pair("q", &query).append_pair("format", "json");
                (address.clone(), client.get(address))
            }
            Engine::Brave { url, key, .. } => {
                let mut address = endpoint(url, "")?;
                address.query_pairs_mut().append_pair("q", &query).append_pair("count", &ASK_FOR.to_string());
                let builder = client.get(address.clone()).header("x-subscription-token", key.expose());
                (address, builder)
            }
        };
        let exchange = async {
            let response = builder.header(reqwest::header::ACCEPT, "application/json").send().await.map_err(|err| {
                format!("{} at {} could not be reached: {}", self.name(), origin(&url), root_cause(&err))
            })?;
            let status = response.status();
            let bytes =
                read_capped(response).await.map_err(|err| format!("{}'s answer broke off: {err}", self.name()))?;
            if !status.is_success() {
                return Err(self.status_message(status.as_u16(), &bytes));
            }
            serde_json::from_slice::<Value>(&bytes).map_err(|err| {
                format!("{} answered something other than JSON ({err}); {}", self.name(), self.json_hint())
            })
        };
        let answer = tokio::select! {
            () = cancel.cancelled() => return Err("The search was interrupted.".into()),
            answer = exchange => answer?,
        };
        Ok(self.results(request, &answer))
    }

    fn status_message(&self, status: u16, body: &[u8]) -> String {
        let excerpt: String = String::from_utf8_lossy(body).chars().take(300).collect();
        let hint = match (self, status) {
            (Engine::Brave { key_env, .. }, 401 | 403 | 422) => format!(" Check the key in {key_env}."),
            (Engine::Searxng { .. }, 403) => format!(" {}", self.json_hint()),
            (_, 429) => " The engine's rate limit was reached; try again later.".to_owned(),
            _ => String::new(),
        };
        format!("{} answered HTTP {status}: {}.{hint}", self.name(), excerpt.trim())
    }

    fn json_hint(&self) -> &'static str {
        match self {
            Engine::Searxng { .. } => {
                "SearXNG serves JSON only when `json` is listed under search.formats in its settings.yml"
            }
            Engine::Brave { .. } => "is the URL the Brave Search API's?",
        }
    }

    fn results(&self, request: &SearchRequest, answer: &Value) -> SearchResults {
        let items = match self {
            Engine::Searxng { .. } => answer.get("results"),
            Engine::Brave { .. } => answer.pointer("/web/results"),
        };
        let snippet_field = match self {
            Engine::Searxng { .. } => "content",
            Engine::Brave { .. } => "description",
        };
        let mut links = Vec::new();
        let mut text = String::new();
        for item in items.and_then(Value::as_array).into_iter().flatten() {
            let Some(url) = item.get("url").and_then(Value::as_str).filter(|url| wanted(request, url)) else {
                continue;
            };
            if links.len() == SHOW {
                break;
            }
            let title = plain(item.get("title").and_then(Value::as_str).unwrap_or(url));
            let snippet = plain(item.get(snippet_field).and_then(Value::as_str).unwrap_or_default());
            text.push_str(&format!("{}. [{title}]({url})\n", links.len() + 1));
            if !snippet.is_empty() {
                text.push_str(&format!("   {snippet}\n"));
            }
            links.push(Link { title, url: url.to_owned() });
        }
        if links.is_empty() {
            text = format!("{} found no results for this query.", self.name());
        }
        SearchResults {
            searches: vec![(format!("{}_search", short_name(self)), links)],
            text: text.trim_end().to_owned(),
        }
    }
}

fn short_name(engine: &Engine) -> &'static str {
    match engine {
        Engine::Searxng { .. } => "searxng",
        Engine::Brave { .. } => "brave",
    }
}

/// The query as sent: one allowed domain becomes a `site:` filter, so the engine looks there at all.
fn engine_query(request: &SearchRequest) -> String {
    match request.allowed_domains.as_slice() {
        [domain] => format!("{} site:{}", request.query, domain.trim_start_matches("*.")),
        _ => request.query.clone(),
    }
}

/// `base` with `path` appended to its path (a SearXNG instance may live under a prefix).
fn endpoint(base: &str, path: &str) -> Result<Url, String> {
    let mut url = Url::parse(base.trim()).map_err(|err| format!("the search URL {base:?} is not valid: {err}"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!("the search URL {base:?} must be http or https"));
    }
    if !path.is_empty() {
        let joined = format!("{}/{path}", url.path().trim_end_matches('/'));
        url.set_path(&joined);
    }
    Ok(url)
}

/// Scheme, host and port: what a message may name (never the query string).
fn origin(url: &Url) -> String {
    url.origin().ascii_serialization()
}

/// Search snippets carry HTML highlighting (`<strong>`) and entities; the model reads plain text.
fn plain(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_tag = false;
    for ch in text.chars() {
        match ch {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            _ if !in_tag => out.push(ch),
            _ => {}
        }
    }
    let out = out
        .replace("&amp;", "&")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&#x27;", "'");
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A search answer is a few kilobytes; more than [`MAX_ANSWER_BYTES`] is not read.
const MAX_ANSWER_BYTES: usize = 4 * 1024 * 1024;

async fn read_capped(mut response: reqwest::Response) -> Result<Vec<u8>, String> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|err| err.to_string())? {
        body.extend_from_slice(&chunk);
        if body.len() > MAX_ANSWER_BYTES {
            return Err(format!("the answer is larger than {} MB", MAX_ANSWER_BYTES / (1024 * 1024)));
        }
    }
    Ok(body)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn engine_answers_become_links_and_snippets_within_the_filters() {
        let request =
            SearchRequest { query: "q".into(), blocked_domains: vec!["spam.com".into()], ..Default::default() };
        let searxng = Engine::Searxng { url: "http://127.0.0.1:1".into() };
        let answer = json!({"results": [
            {"url": "https://tokio.rs/tokio/tutorial", "title": "Tutorial | Tokio", "content": "Learn <strong>Tokio</strong> &amp; async."},
            {"url": "https://spam.com/x", "title": "Spam", "content": "buy"},
            {"title": "no url"}
        ]});
        let results = searxng.results(&request, &answer);
        assert_eq!(
            results.searches[0].1,
            vec![Link { title: "Tutorial | Tokio".into(), url: "https://tokio.rs/tokio/tutorial".into() }]
        );
        assert_eq!(results.text, "1. [Tutorial | Tokio](https://tokio.rs/tokio/tutorial)\n   Learn Tokio & async.");

        let brave = Engine::Brave { url: BRAVE_URL.into(), key: ApiKey::new("k"), key_env: "BRAVE_API_KEY".into() };
        let answer = json!({"web": {"results": [{"url": "https://docs.rs/x", "title": "x", "description": "d"}]}});
        assert_eq!(brave.results(&request, &answer).text, "1. [x](https://docs.rs/x)\n   d");
        assert_eq!(brave.results(&request, &json!({})).text, "Brave Search found no results for this query.");
    }

    #[test]
    fn queries_and_urls() {
        let one =
            SearchRequest { query: "spawn".into(), allowed_domains: vec!["docs.rs".into()], ..Default::default() };
        assert_eq!(engine_query(&one), "spawn site:docs.rs");
        assert_eq!(
            endpoint("http://127.0.0.1:8888/searx/", "search").unwrap().as_str(),
            "http://127.0.0.1:8888/searx/search"
        );
        assert_eq!(endpoint("http://127.0.0.1:8888", "search").unwrap().as_str(), "http://127.0.0.1:8888/search");
        assert!(endpoint("ftp://x", "search").is_err());
    }
}
