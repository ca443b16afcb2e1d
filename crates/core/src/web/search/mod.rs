//! WebSearch's backends: Anthropic's server-side web search (a request of its own to the session's Anthropic
//! endpoint, [`anthropic`]), or a search engine's JSON API named in `config.toml` (SearXNG, Brave: [`engines`]).
//! Each gives the same [`SearchResults`], which the tool formats as Claude Code's WebSearch does.

pub mod anthropic;
pub mod engines;

use serde::Serialize;
use url::Url;

/// One search as the model asked for it.
#[derive(Clone, Debug, Default)]
pub struct SearchRequest {
    pub query: String,
    /// Only results from these domains (and their subdomains).
    pub allowed_domains: Vec<String>,
    /// Never results from these domains (and their subdomains).
    pub blocked_domains: Vec<String>,
}

/// A result's title and address.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Link {
    pub title: String,
    pub url: String,
}

/// One search's findings.
#[derive(Clone, Debug, Default)]
pub struct SearchResults {
    /// Each search that ran (Anthropic's model may run several for one query): its id and links.
    pub searches: Vec<(String, Vec<Link>)>,
    /// What the backend wrote about the results: the model's summary, or the engine's snippets.
    pub text: String,
}

/// Whether `url`'s host is `domain` or a name under it (`docs.rs` covers `docs.rs` and `www.docs.rs`).
pub fn in_domain(url: &str, domain: &str) -> bool {
    let Some(host) = Url::parse(url).ok().and_then(|url| url.host_str().map(str::to_ascii_lowercase)) else {
        return false;
    };
    let domain = domain.trim().trim_start_matches("*.").trim_end_matches('.').to_ascii_lowercase();
    !domain.is_empty() && (host == domain || host.strip_suffix(&domain).is_some_and(|rest| rest.ends_with('.')))
}

/// Whether a result at `url` passes the request's domain filters.
pub fn wanted(request: &SearchRequest, url: &str) -> bool {
    (request.allowed_domains.is_empty() || request.allowed_domains.iter().any(|domain| in_domain(url, domain)))
        && !request.blocked_domains.iter().any(|domain| in_domain(url, domain))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn domains_cover_their_subdomains_only() {
        assert!(in_domain("https://docs.rs/serde", "docs.rs"));
        assert!(in_domain("https://www.docs.rs/serde", "docs.rs"));
        assert!(in_domain("https://WWW.Docs.RS/serde", "*.docs.rs"));
        assert!(!in_domain("https://notdocs.rs/", "docs.rs"));
        assert!(!in_domain("https://docs.rs.evil.net/", "docs.rs"));
        assert!(!in_domain("not a url", "docs.rs"));
        assert!(!in_domain("https://docs.rs/", ""));
        let request = SearchRequest {
            query: "q".into(),
            allowed_domains: vec!["docs.rs".into(), "rust-lang.org".into()],
            blocked_domains: vec!["blog.rust-lang.org".into()],
        };
        assert!(wanted(&request, "https://doc.rust-lang.org/std"));
        assert!(!wanted(&request, "https://blog.rust-lang.org/x"));
        assert!(!wanted(&request, "https://stackoverflow.com/x"));
    }
}
