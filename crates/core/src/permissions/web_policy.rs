//! The decision for WebFetch and WebSearch calls.
//!
//! WebFetch rules name hosts: `WebFetch(domain:docs.rs)` is that host, `WebFetch(domain:*.rust-lang.org)` the
//! names under it, a bare `WebFetch` every public host. Private hosts (loopback, private networks, link-local
//! metadata services, `localhost`, intranet names, and public names that resolve to such addresses) are never
//! covered by a bare rule: only a rule naming the host allows them, so a page can't steer the model into the
//! user's router or a cloud metadata endpoint. A deny or ask rule with a specifier WebFetch does not understand
//! applies to every fetch (the safe reading); an allow rule with one allows nothing.

use super::policy::source;
use super::settings::{RuleKind, SourcedRule};
use super::{Decision, PermissionMode, PermissionPolicy};
use crate::tools::web_fetch::WEB_FETCH_TOOL;
use crate::tools::web_search::WEB_SEARCH_TOOL;
use crate::web::address::{HostCheck, check_host};
use crate::web::{domain_matches, fetch_url, rule_domain, rule_host};

impl PermissionPolicy {
    pub(super) fn decide_web_fetch(&self, url: &str) -> Decision {
        let url = fetch_url(url).ok();
        let host = url.as_ref().map(rule_host).unwrap_or_default();
        // A specifier that names no host (`domain:*`, `domain:h:8080`, anything but `domain:`) is read the safe
        // way: a deny or ask rule with it covers every fetch, an allow rule with it allows none.
        let covers = |rule: &SourcedRule, allowing: bool| {
            rule.rule.tool == WEB_FETCH_TOOL
                && match rule.rule.specifier.as_deref() {
                    None => true,
                    Some(spec) if rule_domain(spec).is_some() => domain_matches(spec, &host),
                    Some(_) => !allowing,
                }
        };
        if let Some(rule) = self.rules_of(RuleKind::Deny).find(|rule| covers(rule, false)) {
            return Decision::Deny {
                reason: format!("Permission to fetch {host} was denied by the rule {}{}.", rule.text, source(rule)),
            };
        }
        // A URL WebFetch refuses fetches nothing: the tool says what is wrong with it.
        let Some(url) = url else { return Decision::Allow };
        let suggestion = format!("{WEB_FETCH_TOOL}(domain:{host})");
        if self.rules_of(RuleKind::Ask).any(|rule| covers(rule, false)) {
            return self.ask(WEB_FETCH_TOOL, suggestion, Some("an ask rule matches".into()));
        }
        let port = url.port_or_known_default().unwrap_or(443);
        let check = check_host(url.host_str().unwrap_or_default(), port);
        let named = self.rules_of(RuleKind::Allow).any(|rule| rule.rule.specifier.is_some() && covers(rule, true));
        let bare = self.rules_of(RuleKind::Allow).any(|rule| rule.rule.specifier.is_none() && covers(rule, true));
        if named || self.mode == PermissionMode::BypassPermissions || (bare && check == HostCheck::Public) {
            return Decision::Allow;
        }
        let reason = match check {
            HostCheck::Public => None,
            HostCheck::Private(why) => Some(format!("{why}; only a rule naming this host allows it")),
            HostCheck::Unresolved(why) => Some(why),
        };
        self.ask(WEB_FETCH_TOOL, suggestion, reason)
    }

    pub(super) fn decide_web_search(&self) -> Decision {
        let covers = |rule: &&SourcedRule| rule.rule.tool == WEB_SEARCH_TOOL;
        if let Some(rule) = self.rules_of(RuleKind::Deny).find(covers) {
            return Decision::Deny {
                reason: format!("Permission to use WebSearch was denied by the rule {}{}.", rule.text, source(rule)),
            };
        }
        if self.rules_of(RuleKind::Ask).any(|rule| covers(&rule)) {
            return self.ask(WEB_SEARCH_TOOL, WEB_SEARCH_TOOL.into(), Some("an ask rule matches".into()));
        }
        let allowed = self.rules_of(RuleKind::Allow).any(|rule| covers(&rule) && rule.rule.specifier.is_none());
        if allowed || self.mode == PermissionMode::BypassPermissions {
            return Decision::Allow;
        }
        self.ask(WEB_SEARCH_TOOL, WEB_SEARCH_TOOL.into(), Some("the query is sent to a search engine".into()))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::permissions::{Scope, Workspace};
    use crate::tools::web_fetch::WebFetchTool;

    fn decide(mode: PermissionMode, rules: &[(RuleKind, &str)], url: &str) -> String {
        let dir = tempfile::tempdir().unwrap();
        let workspace = Workspace::new(dir.path(), &[], None, None);
        let mut policy = PermissionPolicy::new(mode, workspace, dir.path().to_path_buf());
        for (kind, text) in rules {
            policy.add_rule(*kind, text, Scope::Flag).unwrap();
        }
        match policy.decide(&WebFetchTool::default(), &json!({"url": url, "prompt": "p"})) {
            Decision::Allow => "allow".into(),
            Decision::Deny { .. } => "deny".into(),
            Decision::Ask { suggested_rule, .. } => format!("ask {suggested_rule}"),
        }
    }

    #[test]
    fn private_hosts_ask_unless_a_rule_names_them() {
        use PermissionMode::*;
        use RuleKind::*;
        for url in
            ["http://127.0.0.1:8080/", "http://localhost:3000/x", "http://169.254.169.254/latest", "http://[::1]/"]
        {
            let host = rule_host(&fetch_url(url).unwrap());
            assert_eq!(decide(Default, &[], url), format!("ask WebFetch(domain:{host})"), "{url}");
            assert_eq!(decide(Plan, &[], url), format!("ask WebFetch(domain:{host})"), "{url}");
            assert_eq!(decide(Default, &[(Allow, "WebFetch")], url), format!("ask WebFetch(domain:{host})"), "{url}");
            assert_eq!(decide(Default, &[(Allow, &format!("WebFetch(domain:{host})"))], url), "allow", "{url}");
            assert_eq!(decide(DontAsk, &[(Allow, "WebFetch")], url), "deny", "{url}");
        }
        assert_eq!(decide(BypassPermissions, &[], "http://127.0.0.1/"), "allow");
    }

    #[test]
    fn every_spelling_of_a_private_host_is_private() {
        use RuleKind::*;
        // WHATWG URL parsing turns these into the addresses they reach; a bare rule must not cover any of them.
        for (url, host) in [
            ("http://0x7f000001/", "127.0.0.1"),
            ("http://2130706433/", "127.0.0.1"),
            ("http://127.1/", "127.0.0.1"),
            ("http://0177.0.0.1/", "127.0.0.1"),
            ("http://127.0.0.1./", "127.0.0.1"),
            ("http://LOCALHOST./", "localhost"),
            ("http://[::ffff:7f00:1]/", "127.0.0.1"),
            ("http://[::ffff:169.254.169.254]/", "169.254.169.254"),
            ("http://0.0.0.0:8080/", "0.0.0.0"),
            ("http://169.254.169.254/latest/meta-data/", "169.254.169.254"),
            ("http://metadata.google.internal/", "metadata.google.internal"),
            ("http://intranet/", "intranet"),
        ] {
            assert_eq!(
                decide(PermissionMode::Default, &[(Allow, "WebFetch")], url),
                format!("ask WebFetch(domain:{host})"),
                "{url}"
            );
        }
        // A rule for the public look-alike does not cover the private host.
        assert_eq!(
            decide(PermissionMode::Default, &[(Allow, "WebFetch(domain:*.localhost)")], "http://localhost/"),
            "ask WebFetch(domain:localhost)"
        );
    }

    #[test]
    fn domain_rules_allow_deny_and_ask_exactly_what_they_name() {
        use PermissionMode::*;
        use RuleKind::*;
        let url = "http://127.0.0.1:9/";
        assert_eq!(decide(Default, &[(Allow, "WebFetch(domain:127.0.0.2)")], url), "ask WebFetch(domain:127.0.0.1)");
        assert_eq!(decide(Default, &[(Allow, "WebFetch(127.0.0.1)")], url), "ask WebFetch(domain:127.0.0.1)");
        assert_eq!(decide(BypassPermissions, &[(Deny, "WebFetch")], url), "deny");
        assert_eq!(decide(BypassPermissions, &[(Deny, "WebFetch(domain:127.0.0.1)")], url), "deny");
        assert_eq!(
            decide(BypassPermissions, &[(Deny, "WebFetch(whatever)")], url),
            "deny",
            "unknown specifier: safe reading"
        );
        assert_eq!(decide(BypassPermissions, &[(Deny, "WebFetch(domain:example.com)")], url), "allow");
        // A deny rule covers every spelling of its host, and one that names no host covers everything.
        assert_eq!(
            decide(BypassPermissions, &[(Deny, "WebFetch(domain:127.0.0.1)")], "http://[::ffff:127.0.0.1]:9/"),
            "deny"
        );
        assert_eq!(decide(BypassPermissions, &[(Deny, "WebFetch(domain:*)")], url), "deny");
        assert_eq!(decide(BypassPermissions, &[(Deny, "WebFetch(domain:127.0.0.1:9)")], url), "deny");
        assert_eq!(decide(Default, &[(Allow, "WebFetch(domain:127.0.0.1:9)")], url), "ask WebFetch(domain:127.0.0.1)");
        let rules = [(Allow, "WebFetch(domain:127.0.0.1)"), (Ask, "WebFetch")];
        assert_eq!(decide(Default, &rules, url), "ask WebFetch(domain:127.0.0.1)");
        assert_eq!(decide(Default, &[(Allow, "Read")], url), "ask WebFetch(domain:127.0.0.1)", "other tools' rules");
        assert_eq!(decide(Default, &[], "ftp://x/"), "allow", "the tool refuses it itself");
        assert_eq!(decide(Default, &[(Deny, "WebFetch")], "ftp://x/"), "deny");
    }
}
