//! End to end: WebFetch and WebSearch through the real `tandem -p`, against the fake LLM server and a scripted
//! web site on 127.0.0.1 (which is private, so every fetch here needs a rule naming it).

// Test code: a panic is how a failure is reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use tandem_e2e::{FakeServer, Scenario, WebPage, WebSite, Workspace, execute, tool_results};

const ARTICLE: &str = "<html><head><title>Tokio tutorial</title><script>track()</script></head><body>\
    <nav>Home | Docs</nav><main><h1>Spawning</h1><p>Call <code>tokio::spawn</code> to run a task.</p></main>\
    <footer>Footer links</footer></body></html>";

fn scenario(replies: Value) -> Scenario {
    Scenario::from_json(&json!({ "replies": replies }).to_string()).unwrap()
}

fn call(id: &str, name: &str, input: Value) -> Value {
    json!({"blocks": [{"type": "tool_use", "id": id, "name": name, "input": input}]})
}

fn answer(text: &str) -> Value {
    json!({"blocks": [{"type": "text", "text": text}]})
}

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"].as_array().into_iter().flatten().filter_map(|t| t["name"].as_str()).map(str::to_owned).collect()
}

fn site() -> WebSite {
    WebSite::spawn(vec![
        ("/article", WebPage::html(ARTICLE)),
        ("/old", WebPage::redirect(301, "/article")),
        ("/away", WebPage::redirect(302, "https://example.com/elsewhere")),
        (
            "/search",
            WebPage::json(&json!({"results": [
                {"url": "https://tokio.rs/tokio/tutorial/spawning", "title": "Spawning | Tokio", "content": "Call <b>tokio::spawn</b>."},
                {"url": "https://spam.example/x", "title": "Spam", "content": "buy"}
            ]})),
        ),
    ])
    .unwrap()
}

#[test]
fn a_page_reaches_the_model_as_markdown_and_redirects_follow_the_rules() {
    let workspace = Workspace::new();
    let site = site();
    let server = FakeServer::spawn(scenario(json!([
        call("f1", "WebFetch", json!({"url": site.url("/old"), "prompt": "How do I spawn?"})),
        call("f2", "WebFetch", json!({"url": site.url("/away"), "prompt": "p"})),
        answer("Use tokio::spawn."),
    ])))
    .unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "how?", "--output-format", "stream-json", "--verbose"]);
    command.args(["--allowedTools", "WebFetch(domain:127.0.0.1)"]);
    let run = execute(command);
    assert_eq!(run.code, 0, "{run:?}");
    let requests = server.requests();
    assert_eq!(requests.len(), 3, "no reader model on a custom endpoint: no side request");
    assert!(tool_names(&requests[0].body).contains(&"WebFetch".to_owned()));
    let results = tool_results(&requests[2].body);
    let page = results[0]["content"].as_str().unwrap();
    assert!(page.starts_with(&format!("URL: {}\nTitle: Tokio tutorial\n", site.url("/article"))), "{page}");
    assert!(page.contains("# Spawning\n\nCall `tokio::spawn` to run a task."), "{page}");
    assert!(!page.contains("track()") && !page.contains("Footer links"), "{page}");
    let redirect = results[1]["content"].as_str().unwrap();
    assert!(redirect.contains("Redirect URL: https://example.com/elsewhere"), "{redirect}");
    assert_eq!(site.hits(), vec!["/old", "/article", "/away"]);
    // Claude Code's tool_use_result for WebFetch.
    let frame = run.lines().into_iter().find(|line| line["type"] == "user" && line["tool_use_result"]["code"] == 200);
    let frame = frame.expect("a WebFetch user frame");
    assert_eq!(frame["tool_use_result"]["url"], site.url("/article"));
}

#[test]
fn a_private_address_is_not_fetched_without_a_rule_naming_it() {
    let workspace = Workspace::new();
    let site = site();
    let server = FakeServer::spawn(scenario(json!([
        call("f1", "WebFetch", json!({"url": site.url("/article"), "prompt": "p"})),
        answer("could not"),
    ])))
    .unwrap();
    let mut command = workspace.anthropic(&server);
    // A bare WebFetch rule covers public hosts only.
    command.args(["-p", "read it", "--output-format", "json", "--allowedTools", "WebFetch"]);
    let run = execute(command);
    assert_eq!(run.code, 0, "{run:?}");
    let results = tool_results(&server.requests()[1].body);
    let text = results[0]["content"].as_str().unwrap();
    assert_eq!(results[0]["is_error"], true, "{results:?}");
    assert!(text.contains("WebFetch(domain:127.0.0.1)"), "the denial names the rule that would allow it: {text}");
    assert!(site.hits().is_empty(), "nothing was fetched");
    assert_eq!(run.result()["permission_denials"][0]["tool_name"], "WebFetch");
}

#[test]
fn the_small_model_answers_over_the_page_and_its_cost_counts() {
    let workspace = Workspace::new();
    workspace.write_config("config.toml", "small_model = \"claude-haiku-4-5\"\n");
    let site = site();
    let server = FakeServer::spawn(scenario(json!([
        call("f1", "WebFetch", json!({"url": site.url("/article"), "prompt": "How do I spawn?"})),
        {"blocks": [{"type": "text", "text": "The page says: call tokio::spawn."}],
         "usage": {"input_tokens": 1000000, "output_tokens": 0}},
        answer("Use tokio::spawn."),
    ])))
    .unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "how?", "--output-format", "json", "--allowedTools", "WebFetch(domain:127.0.0.1)"]);
    let run = execute(command);
    assert_eq!(run.code, 0, "{run:?}");
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[1].body["model"], "claude-haiku-4-5");
    let asked = requests[1].body["messages"][0]["content"].to_string();
    assert!(asked.contains("# Spawning") && asked.contains("Request: How do I spawn?"), "{asked}");
    let text = tool_results(&requests[2].body)[0]["content"].as_str().unwrap().to_owned();
    assert!(text.ends_with("\nThe page says: call tokio::spawn."), "{text}");
    // A million input tokens of Haiku at $1 per million.
    let result = run.result();
    assert!(result["total_cost_usd"].as_f64().unwrap() >= 1.0, "{result}");
    assert!(result["usage"]["input_tokens"].as_u64().unwrap() >= 1_000_000, "{result}");
    // modelUsage lists the small model with what it used, apart from the conversation's model.
    let haiku = &result["modelUsage"]["claude-haiku-4-5"];
    assert_eq!(haiku["inputTokens"], 1_000_000, "{result}");
    assert!(haiku["costUSD"].as_f64().unwrap() >= 1.0, "{result}");
    let main = result["modelUsage"].as_object().unwrap().iter().find(|(model, _)| *model != "claude-haiku-4-5");
    let (_, main) = main.expect("the conversation's model");
    assert!(main["costUSD"].as_f64().unwrap() < 0.5, "the small model's cost is not the main model's: {result}");
    // The reader's request is in the inspector's record with the conversation's.
    assert!(inspect(&workspace, &result).contains("webfetch"), "{}", inspect(&workspace, &result));
}

/// `tandem inspect` of the run's session.
fn inspect(workspace: &Workspace, result: &Value) -> String {
    let mut command = workspace.tandem();
    command.args(["inspect", result["session_id"].as_str().unwrap()]);
    execute(command).stdout
}

#[test]
fn web_search_through_a_searxng_instance() {
    let workspace = Workspace::new();
    let site = site();
    workspace
        .write_config("config.toml", &format!("[web_search]\nbackend = \"searxng\"\nurl = \"{}\"\n", site.url("")));
    let server = FakeServer::spawn(scenario(json!([
        call("s1", "WebSearch", json!({"query": "tokio spawn", "blocked_domains": ["spam.example"]})),
        answer("See [Spawning](https://tokio.rs/tokio/tutorial/spawning)."),
    ])))
    .unwrap();
    let mut command = workspace.openai(&server);
    command.args(["-p", "search", "--output-format", "stream-json", "--verbose", "--allowedTools", "WebSearch"]);
    let run = execute(command);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(site.hits(), vec!["/search?q=tokio+spawn&format=json"]);
    let requests = server.requests();
    let names: Vec<String> = requests[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
        .collect();
    assert!(names.contains(&"WebSearch".to_owned()), "{names:?}");
    let messages = requests[1].body["messages"].as_array().unwrap();
    let result = messages.iter().find(|m| m["role"] == "tool").unwrap()["content"].as_str().unwrap().to_owned();
    assert!(result.starts_with("Web search results for query: \"tokio spawn\"\n\nLinks: [{\"title\":\"Spawning | Tokio\",\"url\":\"https://tokio.rs/tokio/tutorial/spawning\"}]"), "{result}");
    assert!(
        result.contains("1. [Spawning | Tokio](https://tokio.rs/tokio/tutorial/spawning)\n   Call tokio::spawn."),
        "{result}"
    );
    assert!(!result.contains("spam"), "{result}");
    let frame = run
        .lines()
        .into_iter()
        .find(|line| line["type"] == "user" && line["tool_use_result"]["query"] == "tokio spawn");
    assert!(frame.is_some(), "a WebSearch user frame with Claude Code's tool_use_result");
}

#[test]
fn web_search_on_anthropic_uses_the_server_tool_in_a_request_of_its_own() {
    let workspace = Workspace::new();
    let server = FakeServer::spawn(scenario(json!([
        call("s1", "WebSearch", json!({"query": "tokio spawn", "allowed_domains": ["tokio.rs"]})),
        {"blocks": [
            {"type": "raw", "block": {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "tokio spawn"}}},
            {"type": "raw", "block": {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": [
                {"type": "web_search_result", "title": "Spawning | Tokio", "url": "https://tokio.rs/tokio/tutorial/spawning", "encrypted_content": "e"}
            ]}},
            {"type": "text", "text": "tokio::spawn runs a task."}
        ]},
        answer("done"),
    ])))
    .unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "search", "--output-format", "json", "--allowedTools", "WebSearch"]);
    let run = execute(command);
    assert_eq!(run.code, 0, "{run:?}");
    let requests = server.requests();
    assert_eq!(requests.len(), 3, "{requests:?}");
    let side = &requests[1].body;
    assert_eq!(side["stream"], false);
    assert_eq!(side["tools"][0]["type"], "web_search_20250305");
    assert_eq!(side["tools"][0]["allowed_domains"], json!(["tokio.rs"]));
    assert!(tool_names(&requests[0].body).contains(&"WebSearch".to_owned()));
    let text = tool_results(&requests[2].body)[0]["content"].as_str().unwrap().to_owned();
    assert!(
        text.contains("Links: [{\"title\":\"Spawning | Tokio\",\"url\":\"https://tokio.rs/tokio/tutorial/spawning\"}]"),
        "{text}"
    );
    assert!(text.contains("tokio::spawn runs a task."), "{text}");
    let listed = inspect(&workspace, &run.result());
    assert!(listed.contains("websearch"), "{listed}");
}

#[test]
fn without_a_search_backend_web_search_is_not_offered_and_a_bad_one_is_an_error() {
    let workspace = Workspace::new();
    let server = FakeServer::spawn(scenario(json!([answer("hi"), answer("hi")]))).unwrap();
    let mut command = workspace.openai(&server);
    command.args(["-p", "hi"]);
    let run = execute(command);
    assert_eq!(run.code, 0, "{run:?}");
    let names: Vec<String> = server.requests()[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
        .collect();
    assert!(names.contains(&"WebFetch".to_owned()) && !names.contains(&"WebSearch".to_owned()), "{names:?}");

    workspace.write_config("config.toml", "[web_search]\nbackend = \"bing\"\n");
    let mut command = workspace.openai(&server);
    command.args(["-p", "hi"]);
    let run = execute(command);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("backend = \"bing\""), "{}", run.stderr);

    workspace.write_config("config.toml", "[web_search]\nbackend = \"brave\"\n");
    let mut command = workspace.openai(&server);
    command.args(["-p", "hi"]);
    let run = execute(command);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stderr.contains("needs its key in BRAVE_API_KEY"), "{}", run.stderr);
}
