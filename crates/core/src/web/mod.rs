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
    // The URL standard lets `(`, `)`, `,`, `*`… stand in a host name; no real host has them, and a host is
    // written into the rule an "always" answer saves, so it must not be able to add text to it.
    let plain_name = |host: &str| host.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'));
    if !matches!(url.host(), Some(url::Host::Ipv4(_) | url::Host::Ipv6(_))) && !plain_name(host) {
        return Err(format!("{raw:?} has a host name no server can have ({host:?})."));
    }
    if url.scheme() == "http" && !is_private_spelling(host) {
        url.set_scheme("https").map_err(|()| format!("{raw:?} can't be fetched over https"))?;
    }
    Ok(url)
}

/// The innermost cause of an error (reqwest's own text says little: "error sending request").
pub(crate) fn root_cause(err: &(dyn std::error::Error + 'static)) -> String {
    let mut cause = err;
    while let Some(next) = cause.source() {
        cause = next;
    }
    cause.to_string()
}

/// The host as rules name it: lower case, without a trailing dot, names in their ASCII (punycode) form, IPv4
/// addresses in dotted form also when spelled as IPv4-mapped IPv6 (`[::ffff:127.0.0.1]` is `127.0.0.1`), other
/// IPv6 addresses in brackets.
pub fn rule_host(url: &Url) -> String {
    url.host().map(|host| canonical(&host)).unwrap_or_default()
}

fn canonical(host: &url::Host<&str>) -> String {
    match host {
        url::Host::Domain(name) => name.trim_end_matches('.').to_ascii_lowercase(),
        url::Host::Ipv4(ip) => ip.to_string(),
        url::Host::Ipv6(ip) => match ip.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => format!("[{ip}]"),
        },
    }
}

/// What a rule's `domain:` names, made comparable with [`rule_host`]: `(wildcard, host)`, or `None` when it is
/// not a host at all (`domain:*`, `domain:host:8080`, `domain:a b`), which deny and ask rules read as covering
/// every fetch and allow rules as allowing none.
pub fn rule_domain(specifier: &str) -> Option<(bool, String)> {
    let domain = specifier.strip_prefix("domain:")?.trim();
    let (wildcard, name) = match domain.strip_prefix("*.") {
        Some(parent) => (true, parent),
        None => (false, domain),
    };
    let name = name.trim_end_matches('.');
    if name.is_empty() || name.contains(['*', ':', '/', ' ']) && !name.starts_with('[') {
        return None;
    }
    let host = url::Host::parse(name).ok()?;
    if wildcard && !matches!(host, url::Host::Domain(_)) {
        return None;
    }
    let host = match &host {
        url::Host::Domain(name) => url::Host::Domain(name.as_str()),
        url::Host::Ipv4(ip) => url::Host::Ipv4(*ip),
        url::Host::Ipv6(ip) => url::Host::Ipv6(*ip),
    };
    Some((wildcard, canonical(&host)))
}

/// Whether a `WebFetch(domain:…)` specifier covers `host` (as [`rule_host`] gives it): `domain:example.com` is
/// that host exactly, `domain:*.example.com` any name under it (not example.com itself). A specifier that names
/// no host covers nothing here (see [`rule_domain`] for how deny rules read it).
pub fn domain_matches(specifier: &str, host: &str) -> bool {
    match rule_domain(specifier) {
        Some((true, parent)) => host.strip_suffix(parent.as_str()).is_some_and(|rest| rest.ends_with('.')),
        Some((false, name)) => host == name,
        None => false,
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
        // Rules and hosts are compared in one spelling.
        let host = |url: &str| rule_host(&fetch_url(url).unwrap());
        assert_eq!(host("http://[::ffff:127.0.0.1]:9/"), "127.0.0.1");
        assert_eq!(host("https://Bücher.DE./"), "xn--bcher-kva.de");
        assert!(domain_matches("domain:bücher.de", &host("https://xn--bcher-kva.de/")));
        assert!(domain_matches("domain:[::ffff:7f00:1]", "127.0.0.1"));
        assert!(domain_matches("domain:2130706433", "127.0.0.1"));
        for not_a_host in ["domain:*", "domain:127.0.0.1:8080", "domain:a b", "domain:*.127.0.0.1", "domain:x/y"] {
            assert_eq!(rule_domain(not_a_host), None, "{not_a_host}");
        }
        // A host that could write into the saved rule is refused.
        assert!(fetch_url("https://a),mcp__github(*/x").unwrap_err().contains("no server can have"));
        let url = fetch_url("http://[::1]:9/").unwrap();
        assert!(domain_matches("domain:[::1]", &rule_host(&url)));
    }
}
