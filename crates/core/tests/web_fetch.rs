//! WebFetch against a scripted site on 127.0.0.1: pages become Markdown, sizes and times are capped,
//! redirects leave the host only with the model's next call, and nothing private is reached without the
//! permission check having seen (and allowed) it.

// Test code: a panic is how a failure is reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tandem_core::permissions::{Decision, PermissionMode, PermissionPolicy, RuleKind, Scope};
use tandem_core::provider::{ApiKey, Endpoint, ProviderKind};
use tandem_core::tools::web_fetch::WebFetchTool;
use tandem_core::tools::{Tool, ToolContext, ToolOutput};
use tandem_core::web::fetch::FetchLimits;
use tandem_core::web::reader::PageReader;
use tandem_testkit::{FakeServer, Reply, Scenario, WebPage, WebSite};

const ARTICLE: &str = "<html><head><title>Tokio tutorial</title><script>track()</script></head><body>\
    <nav>Home | Docs</nav><main><h1>Spawning</h1><p>Call <code>tokio::spawn</code> to run a task.</p></main>\
    <footer>Footer links</footer></body></html>";

fn site() -> WebSite {
    let port_of_other = "http://localhost:1/elsewhere";
    WebSite::spawn(vec![
        ("/article", WebPage::html(ARTICLE)),
        ("/old", WebPage::redirect(301, "/article")),
        ("/away", WebPage::redirect(302, port_of_other)),
        ("/huge", WebPage::typed("text/plain", "x".repeat(4_000).into_bytes())),
        ("/long", WebPage::typed("text/plain", "word ".repeat(30_000).into_bytes())),
        ("/logo.png", WebPage::typed("image/png", vec![0x89, b'P', b'N', b'G', 0, 0, 0, 13])),
        ("/missing", WebPage::html("<h1>Gone</h1><p>No such page</p>").with_status(404)),
        ("/slow", WebPage::html("<p>late</p>").delayed(Duration::from_secs(3))),
    ])
    .unwrap()
}

/// The permission decision for fetching `url` with `rules`, as the agent makes it before running the tool.
fn decide(url: &str, rules: &[&str]) -> Decision {
    let dir = tempfile::tempdir().unwrap();
    let mut policy = PermissionPolicy::for_cwd(PermissionMode::Default, dir.path());
    for rule in rules {
        policy.add_rule(RuleKind::Allow, rule, Scope::Flag).unwrap();
    }
    policy.decide(&WebFetchTool::default(), &json!({"url": url, "prompt": "p"}))
}

async fn fetch_with(tool: &WebFetchTool, url: &str, ctx: &ToolContext) -> ToolOutput {
    assert_eq!(decide(url, &["WebFetch(domain:127.0.0.1)"]), Decision::Allow, "{url}");
    tool.run(json!({"url": url, "prompt": "What does it say?"}).into(), ctx).await
}

async fn fetch(tool: &WebFetchTool, url: &str) -> ToolOutput {
    fetch_with(tool, url, &ToolContext::new(std::env::temp_dir())).await
}

#[tokio::test]
async fn an_html_page_becomes_its_main_content_in_markdown() {
    let site = site();
    let output = fetch(&WebFetchTool::default(), &site.url("/article")).await;
    assert!(!output.is_error, "{}", output.content);
    let text = &output.content;
    assert!(text.starts_with(&format!("URL: {}\nTitle: Tokio tutorial\n", site.url("/article"))), "{text}");
    assert!(text.contains("# Spawning\n\nCall `tokio::spawn` to run a task."), "{text}");
    for dropped in ["track()", "Home | Docs", "Footer links"] {
        assert!(!text.contains(dropped), "{dropped}: {text}");
    }
    let structured = output.structured.unwrap();
    assert_eq!((structured["code"].clone(), structured["codeText"].clone()), (json!(200), json!("OK")));
    assert_eq!(structured["bytes"], json!(ARTICLE.len()));
}

#[tokio::test]
async fn same_host_redirects_are_followed_and_others_reported() {
    let site = site();
    let output = fetch(&WebFetchTool::default(), &site.url("/old")).await;
    assert!(output.content.starts_with(&format!("URL: {}\n", site.url("/article"))), "{}", output.content);
    assert_eq!(site.hits(), vec!["/old", "/article"]);

    let output = fetch(&WebFetchTool::default(), &site.url("/away")).await;
    assert!(!output.is_error);
    assert!(output.content.starts_with("REDIRECT DETECTED"), "{}", output.content);
    assert!(output.content.contains("Redirect URL: http://localhost:1/elsewhere"), "{}", output.content);
    assert_eq!(site.hits().len(), 3, "the other host was not contacted");
}

#[tokio::test]
async fn sizes_are_capped_with_what_was_left_out_stated() {
    let site = site();
    let small =
        WebFetchTool { limits: FetchLimits { max_bytes: 1_000, ..FetchLimits::default() }, ..Default::default() };
    let output = fetch(&small, &site.url("/huge")).await;
    assert!(
        output.content.contains("[Only the first 1000 bytes of 3.9 KB of the page were read.]"),
        "{}",
        output.content
    );
    assert_eq!(output.content.matches('x').count(), 1_000);

    let dir = tempfile::tempdir().unwrap();
    let mut ctx = ToolContext::new(dir.path().to_path_buf());
    ctx.output_dir = Some(dir.path().join("outputs"));
    ctx.call_id = Some("call7".into());
    let output = fetch_with(&WebFetchTool::default(), &site.url("/long"), &ctx).await;
    let saved = dir.path().join("outputs/webfetch-call7.md");
    assert!(
        output.content.contains("[… 50000 more characters (about 12500 tokens) of the page were cut"),
        "{}",
        &output.content[output.content.len() - 300..]
    );
    assert!(output.content.contains(&saved.display().to_string()));
    assert_eq!(std::fs::read_to_string(saved).unwrap().len(), 150_000);
}

#[tokio::test]
async fn binary_pages_errors_and_slow_servers_are_clear_errors() {
    let site = site();
    let output = fetch(&WebFetchTool::default(), &site.url("/logo.png")).await;
    assert!(output.is_error && output.content.contains("is image/png (8 bytes)"), "{}", output.content);

    let output = fetch(&WebFetchTool::default(), &site.url("/missing")).await;
    assert!(output.is_error && output.content.contains("HTTP 404 Not Found"), "{}", output.content);
    assert!(output.content.contains("No such page"), "{}", output.content);

    let quick = WebFetchTool {
        limits: FetchLimits { timeout: Duration::from_millis(300), ..FetchLimits::default() },
        ..Default::default()
    };
    let started = std::time::Instant::now();
    let output = fetch(&quick, &site.url("/slow")).await;
    assert!(output.is_error, "{}", output.content);
    assert!(started.elapsed() < Duration::from_secs(2), "gave up in time");
}

#[tokio::test]
async fn a_private_host_the_permission_check_never_saw_is_not_fetched() {
    let site = site();
    // 127.0.0.2 is loopback too, but nothing judged it: the tool refuses rather than connect.
    let url = format!("http://127.0.0.2:{}/article", site.addr().port());
    let output = WebFetchTool::default()
        .run(json!({"url": url, "prompt": "p"}).into(), &ToolContext::new(std::env::temp_dir()))
        .await;
    assert!(output.is_error, "{}", output.content);
    assert!(output.content.contains("127.0.0.2 is a loopback address"), "{}", output.content);
    assert!(site.hits().is_empty());
    // And with no rule, fetching the test site itself asks.
    assert!(matches!(decide(&site.url("/article"), &[]), Decision::Ask { .. }));
    assert!(matches!(decide(&site.url("/article"), &["WebFetch"]), Decision::Ask { .. }));
}

#[tokio::test]
async fn the_small_model_answers_the_prompt_over_the_page() {
    let site = site();
    let llm = FakeServer::start(Scenario::new(vec![Reply::text("It says: call tokio::spawn.")])).await.unwrap();
    let endpoint = Endpoint {
        name: "test".into(),
        kind: ProviderKind::Anthropic,
        base_url: llm.url(),
        api_key: Some(ApiKey::new("sk-test")),
        api_key_env: None,
    };
    let reader = PageReader {
        provider: Arc::from(tandem_core::provider::connect(endpoint)),
        model: tandem_core::models::lookup("small-model"),
    };
    let tool = WebFetchTool { reader: Some(Arc::new(reader)), ..Default::default() };
    let output = fetch(&tool, &site.url("/article")).await;
    assert!(output.content.ends_with("\nIt says: call tokio::spawn."), "{}", output.content);
    let request = &llm.requests()[0].body;
    assert_eq!(request["model"], json!("small-model"));
    let asked = request["messages"][0]["content"][0]["text"].as_str().unwrap();
    assert!(asked.contains("# Spawning") && asked.contains("Request: What does it say?"), "{asked}");
    assert!(request.get("tools").is_none_or(|tools: &Value| tools.as_array().is_some_and(Vec::is_empty)));
}
