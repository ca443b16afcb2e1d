//! Which hosts are private, and the addresses a WebFetch may connect to.
//!
//! The permission check resolves a URL's host once and records the addresses it judged
//! ([`check_host`]); the fetch then connects only to those recorded addresses ([`pinned`]), so a name that
//! resolves to a public address for the check and to `127.0.0.1` a moment later (DNS rebinding) can't reach
//! what the check never saw.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// How long the permission check waits for a name to resolve before calling it unknown.
const RESOLVE_TIMEOUT: Duration = Duration::from_secs(5);

/// How long checked addresses are used before the host is resolved (and judged) again.
const CHECK_TTL: Duration = Duration::from_secs(300);

/// What the permission check found out about a host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HostCheck {
    /// Every address is public.
    Public,
    /// The host is, or resolves to, a private, loopback or link-local address; the text says which.
    Private(String),
    /// The name did not resolve (in time): nothing can be fetched from it.
    Unresolved(String),
}

struct Checked {
    addrs: Vec<SocketAddr>,
    at: Instant,
    /// Two checks while this entry was fresh found different addresses (a name that changes its answer between
    /// the checks of two calls, to get one allowed and the other fetched from where the first was not judged):
    /// nothing is fetched from the host until the entry expires.
    conflicted: bool,
}

fn checked() -> &'static Mutex<HashMap<(String, u16), Checked>> {
    static CHECKED: OnceLock<Mutex<HashMap<(String, u16), Checked>>> = OnceLock::new();
    CHECKED.get_or_init(Mutex::default)
}

/// Judges `host` (as a URL spells it: a name, an IPv4 address or a bracketed IPv6 one) for a connection to
/// `port`, and records the addresses judged for [`pinned`].
pub fn check_host(host: &str, port: u16) -> HostCheck {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    if let Ok(ip) = bare.parse::<IpAddr>() {
        record(host, port, vec![SocketAddr::new(ip, port)]);
        return match private_reason(ip) {
            Some(reason) => HostCheck::Private(format!("{host} is {reason}")),
            None => HostCheck::Public,
        };
    }
    if let Some(reason) = private_name(bare) {
        // Resolved all the same, so the fetch has addresses to connect to (localhost → 127.0.0.1).
        if let Ok(addrs) = resolve(bare, port) {
            record(host, port, addrs);
        }
        return HostCheck::Private(format!("{host} is {reason}"));
    }
    match resolve(bare, port) {
        Ok(addrs) if addrs.is_empty() => HostCheck::Unresolved(format!("{host} has no address")),
        Ok(addrs) => {
            let private = addrs.iter().find_map(|addr| private_reason(addr.ip()).map(|why| (addr.ip(), why)));
            record(host, port, addrs);
            match private {
                Some((ip, reason)) => HostCheck::Private(format!("{host} resolves to {ip}, {reason}")),
                None => HostCheck::Public,
            }
        }
        Err(problem) => HostCheck::Unresolved(format!("{host} could not be resolved: {problem}")),
    }
}

/// What the permission check recorded for a host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Pinned {
    /// Not checked recently.
    Unchecked,
    /// The addresses judged.
    Addresses(Vec<SocketAddr>),
    /// Checks found different addresses: not to be fetched.
    Conflicted,
}

/// The addresses the permission check judged for `host`, if it checked it recently.
pub fn pinned(host: &str, port: u16) -> Pinned {
    let map = checked().lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    match map.get(&(host.to_ascii_lowercase(), port)).filter(|entry| entry.at.elapsed() < CHECK_TTL) {
        None => Pinned::Unchecked,
        Some(entry) if entry.conflicted => Pinned::Conflicted,
        Some(entry) => Pinned::Addresses(entry.addrs.clone()),
    }
}

/// Records what a check found. A fresh entry is never replaced: the fetch connects to the addresses first
/// judged, and a later check that finds a private address where the first found none (or the other way round)
/// marks the entry (a CDN's rotating public addresses are no conflict).
fn record(host: &str, port: u16, addrs: Vec<SocketAddr>) {
    let mut map = checked().lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    map.retain(|_, entry| entry.at.elapsed() < CHECK_TTL);
    let key = (host.to_ascii_lowercase(), port);
    let private = |addrs: &[SocketAddr]| addrs.iter().any(|addr| private_reason(addr.ip()).is_some());
    if let Some(entry) = map.get_mut(&key) {
        if private(&entry.addrs) != private(&addrs) {
            entry.conflicted = true;
        }
        return;
    }
    map.insert(key, Checked { addrs, at: Instant::now(), conflicted: false });
}

/// Resolves off the calling thread, giving up after [`RESOLVE_TIMEOUT`] (the system resolver can't be
/// interrupted, so a stuck lookup is left to finish on its own thread).
fn resolve(host: &str, port: u16) -> Result<Vec<SocketAddr>, String> {
    let (tx, rx) = std::sync::mpsc::channel();
    let name = host.to_owned();
    std::thread::spawn(move || {
        let _ = tx.send((name.as_str(), port).to_socket_addrs().map(Iterator::collect::<Vec<_>>));
    });
    // The permission check is synchronous; on a multi-threaded runtime the wait moves off the worker so other
    // tasks (the UI's events, other tools) go on meanwhile.
    let wait = || rx.recv_timeout(RESOLVE_TIMEOUT);
    let answer = match tokio::runtime::Handle::try_current() {
        Ok(handle) if handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(wait)
        }
        _ => wait(),
    };
    match answer {
        Ok(Ok(addrs)) => Ok(addrs),
        Ok(Err(err)) => Err(err.to_string()),
        Err(_) => Err(format!("no answer within {} s", RESOLVE_TIMEOUT.as_secs())),
    }
}

/// Why a name is private without resolving it: `localhost`, names under `.localhost`, `.local`,
/// `.internal`, `.home.arpa`, and single-label names (an intranet's `wiki`).
pub fn private_name(host: &str) -> Option<&'static str> {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    if host == "localhost" || host.ends_with(".localhost") {
        return Some("the local machine");
    }
    if [".local", ".internal", ".home.arpa", ".lan"].iter().any(|suffix| host.ends_with(suffix)) {
        return Some("a local-network name");
    }
    if !host.contains('.') {
        return Some("a single-label (intranet) name");
    }
    None
}

/// Why an address is not on the public internet, or `None` when it is.
pub fn private_reason(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(ip) => v4_reason(ip),
        IpAddr::V6(ip) => {
            if let Some(v4) = ip.to_ipv4_mapped() {
                return v4_reason(v4);
            }
            let segments = ip.segments();
            // NAT64 (64:ff9b::/96) carries an IPv4 address in its last 32 bits.
            if segments[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
                let [a, b] = segments[6].to_be_bytes();
                let [c, d] = segments[7].to_be_bytes();
                return v4_reason(Ipv4Addr::new(a, b, c, d));
            }
            v6_reason(ip)
        }
    }
}

fn v4_reason(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, ..] = ip.octets();
    if ip.is_loopback() {
        Some("a loopback address")
    } else if ip.is_private() || (a == 100 && (64..128).contains(&b)) {
        Some("a private-network address")
    } else if ip.is_link_local() {
        Some("a link-local address (cloud metadata services live here)")
    } else if ip.is_unspecified() || a == 0 {
        Some("an unspecified address (it reaches the local machine)")
    } else if ip.is_broadcast() || ip.is_multicast() || a >= 240 {
        Some("not a unicast internet address")
    } else {
        None
    }
}

fn v6_reason(ip: Ipv6Addr) -> Option<&'static str> {
    let first = ip.segments()[0];
    if ip.is_loopback() {
        Some("a loopback address")
    } else if ip.is_unspecified() {
        Some("an unspecified address (it reaches the local machine)")
    } else if first & 0xfe00 == 0xfc00 {
        Some("a unique-local (private-network) address")
    } else if first & 0xffc0 == 0xfe80 {
        Some("a link-local address")
    } else if ip.is_multicast() {
        Some("not a unicast internet address")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_addresses_in_every_spelling() {
        for text in [
            "127.0.0.1",
            "127.8.9.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "::1",
            "::",
            "fd00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "64:ff9b::a9fe:a9fe",
        ] {
            assert!(private_reason(text.parse().unwrap()).is_some(), "{text} must be private");
        }
        for text in ["93.184.216.34", "1.1.1.1", "2606:4700::1111", "172.32.0.1", "100.128.0.1"] {
            assert_eq!(private_reason(text.parse().unwrap()), None, "{text} is public");
        }
    }

    #[test]
    fn names_that_are_private_without_asking_dns() {
        for name in
            ["localhost", "LOCALHOST.", "api.localhost", "printer.local", "db.internal", "wiki", "nas.home.arpa"]
        {
            assert!(private_name(name).is_some(), "{name}");
        }
        assert_eq!(private_name("docs.rs"), None);
    }

    #[test]
    fn a_checked_literal_is_pinned_to_itself() {
        assert_eq!(check_host("[::1]", 8080), HostCheck::Private("[::1] is a loopback address".into()));
        assert_eq!(pinned("[::1]", 8080), Pinned::Addresses(vec!["[::1]:8080".parse().unwrap()]));
        assert!(matches!(check_host("127.0.0.1", 9), HostCheck::Private(_)));
        assert_eq!(pinned("127.0.0.1", 10), Pinned::Unchecked, "another port was never checked");
    }

    #[test]
    fn a_host_whose_checks_disagree_is_not_fetched_from() {
        record("rebind.test", 443, vec!["93.184.216.34:443".parse().unwrap()]);
        record("rebind.test", 443, vec!["93.184.216.35:443".parse().unwrap()]);
        assert_eq!(pinned("rebind.test", 443), Pinned::Addresses(vec!["93.184.216.34:443".parse().unwrap()]));
        record("rebind.test", 443, vec!["127.0.0.1:443".parse().unwrap()]);
        assert_eq!(pinned("rebind.test", 443), Pinned::Conflicted);
    }
}
