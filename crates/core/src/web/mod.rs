//! The web for WebFetch and WebSearch: which URL a fetch really asks for, whose host it is, whether that host
//! is private ([`address`]), how a page becomes Markdown ([`html`]), and the search backends ([`search`]).

pub mod address;
pub mod fetch;
pub mod html;
pub mod reader;
pub mod search;

use url::Url;

/// The URL a WebFetch of `raw` fetches: `http` is upgraded to `https` except for private hosts (a dev server
/// on localhost rarely has a certificate, and a private host asks the user anyway). URLs with credentials,
/// other schemes or no host are refused, with a message for the model.
pub fn fetch_url(raw: &str) -> Result<Url, String> {
    let mut url = Url::parse(raw.trim()).map_err(|err| format!("{raw:?} is not a valid URL: {err}"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!("WebFetch fetches http and https URLs, not {}: URLs.", url.scheme()));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err("WebFetch does not send credentials: remove the user name and password from the URL.".into());
    }
    let Some(host) = url.host_str().filter(|host| !host.is_empty()) else {
        return Err(format!("{raw:?} has no host."));
    };
    if url.scheme() == "http" && !is_private_spelling(host) {
        url.set_scheme("https").map_err(|()| format!("{raw:?} can't be fetched over https"))?;
    }
    Ok(url)
}

/// The host as rules name it: lower case, without a trailing dot (IPv6 addresses keep their brackets).
pub fn rule_host(url: &Url) -> String {
    url.host_str().unwrap_or_default().trim_end_matches('.').to_ascii_lowercase()
}

/// Whether a `WebFetch(domain:…)` specifier covers `host`: `domain:example.com` is that host exactly,
/// `domain:*.example.com` any name under it (not example.com itself). Anything else covers nothing.
pub fn domain_matches(specifier: &str, host: &str) -> bool {
    let Some(domain) = specifier.strip_prefix("domain:") else {
        return false;
    };
    let domain = domain.trim().trim_end_matches('.').to_ascii_lowercase();
    match domain.strip_prefix("*.") {
        Some(parent) => !parent.is_empty() && host.strip_suffix(parent).is_some_and(|rest| rest.ends_with('.')),
        None => !domain.is_empty() && host == domain,
    }
}

/// Whether the host as written is private without a lookup (a private IP literal, `localhost`, `.local`…).
fn is_private_spelling(host: &str) -> bool {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    match bare.parse() {
        Ok(ip) => address::private_reason(ip).is_some(),
        Err(_) => address::private_name(bare).is_some(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_is_upgraded_except_for_private_hosts() {
        assert_eq!(fetch_url("http://docs.rs/x?y=1").unwrap().as_str(), "https://docs.rs/x?y=1");
        assert_eq!(fetch_url("https://docs.rs").unwrap().as_str(), "https://docs.rs/");
        assert_eq!(fetch_url("http://127.0.0.1:8080/a").unwrap().as_str(), "http://127.0.0.1:8080/a");
        assert_eq!(fetch_url("http://localhost:3000/").unwrap().scheme(), "http");
        assert_eq!(fetch_url("http://[::1]:3000/").unwrap().scheme(), "http");
        assert!(fetch_url("file:///etc/passwd").unwrap_err().contains("not file"));
        assert!(fetch_url("https://user:pw@example.com/").unwrap_err().contains("credentials"));
        assert!(fetch_url("not a url").is_err());
    }

    #[test]
    fn domain_rules_name_a_host_or_the_names_under_one() {
        assert!(domain_matches("domain:example.com", "example.com"));
        assert!(domain_matches("domain:Example.COM.", "example.com"));
        assert!(!domain_matches("domain:example.com", "www.example.com"));
        assert!(!domain_matches("domain:example.com", "example.com.evil.net"));
        assert!(!domain_matches("domain:example.com", "notexample.com"));
        assert!(domain_matches("domain:*.example.com", "docs.example.com"));
        assert!(domain_matches("domain:*.example.com", "a.b.example.com"));
        assert!(!domain_matches("domain:*.example.com", "example.com"));
        assert!(!domain_matches("domain:*.example.com", "badexample.com"));
        assert!(!domain_matches("example.com", "example.com"), "a specifier without domain: covers nothing");
        assert!(!domain_matches("domain:", ""));
        assert!(!domain_matches("domain:*.", "x."));
        let url = fetch_url("http://[::1]:9/").unwrap();
        assert!(domain_matches("domain:[::1]", &rule_host(&url)));
    }
}
