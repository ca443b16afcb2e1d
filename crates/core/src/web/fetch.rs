//! One WebFetch download: connections only to the addresses the permission check judged, redirects followed
//! only within the same host (its `www.` name is another host), the body capped in size and the whole in time.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;
use url::Url;

use super::root_cause;

use super::address::{self, HostCheck, Pinned};

/// Bounds of one fetch.
#[derive(Clone, Copy, Debug)]
pub struct FetchLimits {
    /// Bytes of body read at most; the rest of a bigger page is left unread.
    pub max_bytes: usize,
    /// The whole fetch, redirects included.
    pub timeout: Duration,
    pub max_redirects: usize,
}

impl Default for FetchLimits {
    fn default() -> Self {
        FetchLimits { max_bytes: 10 * 1024 * 1024, timeout: Duration::from_secs(30), max_redirects: 10 }
    }
}

/// A downloaded page.
#[derive(Debug)]
pub struct Fetched {
    /// Where the body came from (after same-host redirects).
    pub url: Url,
    pub status: u16,
    pub status_text: String,
    /// `Content-Type` without parameters, lower case (empty when the server sent none).
    pub content_type: String,
    pub body: Vec<u8>,
    /// The body was cut at [`FetchLimits::max_bytes`]; the server announced this many bytes, if it did.
    pub truncated: Option<Option<u64>>,
    pub elapsed: Duration,
}

/// What a fetch came to.
#[derive(Debug)]
pub enum FetchOutcome {
    Page(Fetched),
    /// The server redirected to another host: not followed, reported to the model.
    Redirected {
        from: Url,
        to: String,
        status: u16,
    },
}

/// Fetches `url`, which the permission check has judged (its host's addresses are pinned).
pub async fn fetch(url: Url, limits: FetchLimits, cancel: &CancellationToken) -> Result<FetchOutcome, String> {
    let started = Instant::now();
    let mut current = url;
    for _ in 0..=limits.max_redirects {
        let remaining = limits.timeout.checked_sub(started.elapsed()).ok_or_else(|| timeout_message(&limits))?;
        let response = tokio::select! {
            () = cancel.cancelled() => return Err("The fetch was interrupted.".into()),
            response = request(&current, remaining) => response?,
        };
        let status = response.status();
        if status.is_redirection()
            && let Some(location) = response.headers().get(reqwest::header::LOCATION)
        {
            let location = location.to_str().unwrap_or_default().to_owned();
            let next = current.join(&location).map_err(|err| format!("bad redirect to {location:?}: {err}"))?;
            if !same_site(&current, &next) {
                return Ok(FetchOutcome::Redirected { from: current, to: next.to_string(), status: status.as_u16() });
            }
            current = next;
            continue;
        }
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .map(|value| value.split(';').next().unwrap_or_default().trim().to_ascii_lowercase())
            .unwrap_or_default();
        let announced = response.content_length();
        let (body, truncated) = tokio::select! {
            () = cancel.cancelled() => return Err("The fetch was interrupted.".into()),
            () = tokio::time::sleep(remaining) => return Err(timeout_message(&limits)),
            body = read_body(response, limits.max_bytes) => body?,
        };
        return Ok(FetchOutcome::Page(Fetched {
            url: current,
            status: status.as_u16(),
            status_text: status.canonical_reason().unwrap_or_default().to_owned(),
            content_type,
            body,
            truncated: truncated.then_some(announced),
            elapsed: started.elapsed(),
        }));
    }
    Err(format!("more than {} redirects; stopped at {current}", limits.max_redirects))
}

fn timeout_message(limits: &FetchLimits) -> String {
    format!("The page did not arrive within {} s.", limits.timeout.as_secs())
}

async fn request(url: &Url, remaining: Duration) -> Result<reqwest::Response, String> {
    let host = url.host_str().unwrap_or_default();
    let port = url.port_or_known_default().unwrap_or(443);
    let addrs = addresses(host, port)?;
    let mut builder = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(remaining)
        .connect_timeout(remaining.min(Duration::from_secs(10)))
        .user_agent(concat!("tandem/", env!("CARGO_PKG_VERSION"), " (WebFetch)"));
    if !host.starts_with('[') && host.parse::<std::net::IpAddr>().is_err() {
        builder = builder.resolve_to_addrs(host, &addrs);
    }
    // Never through a proxy from the environment: a proxy resolves names itself, so the addresses the permission
    // check judged would not be the ones reached (and a local proxy reaches the intranet).
    builder = builder.no_proxy();
    let client = builder.build().map_err(|err| format!("can't set up the HTTP client: {err}"))?;
    client
        .get(url.clone())
        .header(reqwest::header::ACCEPT, "text/markdown, text/html;q=0.9, text/plain;q=0.8, */*;q=0.5")
        .send()
        .await
        .map_err(|err| describe(url, &err))
}

/// The addresses to connect to for `host`: those the permission check judged, or, for a check more than five
/// minutes old, those of a new check when the host is public.
fn addresses(host: &str, port: u16) -> Result<Vec<SocketAddr>, String> {
    let conflicted = || {
        format!(
            "{host} resolved to different addresses on two checks (a name changing its answer, as in DNS rebinding); \
             nothing was fetched from it. Try again in a few minutes."
        )
    };
    match address::pinned(host, port) {
        Pinned::Addresses(addrs) => return Ok(addrs),
        Pinned::Conflicted => return Err(conflicted()),
        Pinned::Unchecked => {}
    }
    match address::check_host(host, port) {
        HostCheck::Public => match address::pinned(host, port) {
            Pinned::Addresses(addrs) => Ok(addrs),
            _ => Err(conflicted()),
        },
        HostCheck::Private(reason) => Err(format!(
            "{reason}, and its permission check is more than five minutes old: call WebFetch again to have it judged anew."
        )),
        HostCheck::Unresolved(reason) => Err(reason),
    }
}

/// The same host, scheme (or an upgrade to https) and port, and no credentials. Any other host — its `www.` name
/// too — goes back to the model, whose next call is checked against the rules for that host.
fn same_site(from: &Url, to: &Url) -> bool {
    let strip = super::rule_host;
    let scheme_ok = from.scheme() == to.scheme() || (from.scheme() == "http" && to.scheme() == "https");
    let upgrade_on_default_ports =
        from.scheme() == "http" && to.scheme() == "https" && from.port().is_none() && to.port().is_none();
    let port_ok = from.port_or_known_default() == to.port_or_known_default() || upgrade_on_default_ports;
    scheme_ok && port_ok && strip(from) == strip(to) && to.username().is_empty() && to.password().is_none()
}

async fn read_body(mut response: reqwest::Response, max: usize) -> Result<(Vec<u8>, bool), String> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|err| format!("the connection broke: {err}"))? {
        let room = max - body.len();
        if chunk.len() > room {
            body.extend_from_slice(&chunk[..room]);
            return Ok((body, true));
        }
        body.extend_from_slice(&chunk);
    }
    Ok((body, false))
}

fn describe(url: &Url, err: &reqwest::Error) -> String {
    let what = if err.is_timeout() {
        "timed out".to_owned()
    } else if err.is_connect() {
        format!("could not connect ({})", root_cause(err))
    } else {
        root_cause(err)
    };
    format!("Fetching {url} failed: {what}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(text: &str) -> Url {
        Url::parse(text).unwrap()
    }

    #[test]
    fn redirects_stay_on_the_same_site() {
        let from = url("https://example.com/a");
        assert!(same_site(&from, &url("https://example.com/b")));
        assert!(!same_site(&from, &url("https://www.example.com/b")), "another host, checked by a new call");
        assert!(!same_site(&url("https://x.com/"), &url("https://www.www.x.com/")));
        assert!(same_site(&url("http://example.com/"), &url("https://example.com/")));
        assert!(!same_site(&from, &url("https://evil.com/")));
        assert!(!same_site(&from, &url("https://example.com.evil.com/")));
        assert!(!same_site(&from, &url("http://example.com/")), "no downgrade");
        assert!(!same_site(&from, &url("https://example.com:8443/")));
        assert!(!same_site(&from, &url("https://u:p@example.com/")));
        assert!(!same_site(&url("http://127.0.0.1:8080/"), &url("http://127.0.0.1:9090/")));
    }
}
