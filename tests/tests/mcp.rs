//! End to end: MCP servers (the rmcp-built fake in testkit, over stdio and HTTP) configured as a Claude Code user
//! would, used by the real `tandem -p` against the fake LLM server.

// Test code: a panic is how a failure is reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::BufRead;

use serde_json::{Value, json};
use tandem_e2e::process::{alive, wait_for_line};
use tandem_e2e::{FakeServer, Scenario, Workspace, execute, fake_mcp_bin, tool_results};

fn scenario(replies: Value) -> Scenario {
    Scenario::from_json(&json!({ "replies": replies }).to_string()).unwrap()
}

fn call(id: &str, name: &str, input: Value) -> Value {
    json!({"blocks": [{"type": "tool_use", "id": id, "name": name, "input": input}]})
}

fn answer(text: &str) -> Value {
    json!({"blocks": [{"type": "text", "text": text}]})
}

/// `--mcp-config` JSON for one stdio server `name` with these extra arguments.
fn stdio_config(name: &str, args: &[&str]) -> String {
    let mut all = vec!["--name".to_owned(), name.to_owned()];
    all.extend(args.iter().map(|arg| (*arg).to_owned()));
    json!({"mcpServers": {name: {"command": fake_mcp_bin(), "args": all}}}).to_string()
}

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"].as_array().into_iter().flatten().filter_map(|t| t["name"].as_str()).map(str::to_owned).collect()
}

#[test]
fn stdio_tools_reach_the_model_with_results_and_permissions() {
    let workspace = Workspace::new();
    let server = FakeServer::spawn(scenario(json!([
        call("t1", "mcp__fake__echo", json!({"text": "hi"})),
        call("t2", "mcp__fake__lookup", json!({"key": "k"})),
        call("t3", "mcp__fake__env", json!({"name": "HOME"})),
        call("t4", "mcp__fake__image", json!({})),
        answer("done"),
    ])))
    .unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "go", "--output-format", "stream-json", "--mcp-config", &stdio_config("fake", &[])]);
    command.args(["--allowedTools", "mcp__fake__echo,mcp__fake__image"]);
    let run = execute(command);
    assert_eq!(run.code, 0, "{run:?}");
    let init = &run.lines()[0];
    assert_eq!(init["mcp_servers"][0]["name"], "fake", "{init}");
    let requests = server.requests();
    assert_eq!(requests.len(), 5);
    let names = tool_names(&requests[1].body);
    for tool in ["mcp__fake__echo", "mcp__fake__lookup", "mcp__fake__crash"] {
        assert!(names.iter().any(|name| name == tool), "{tool} missing from {names:?}");
    }
    let echo = requests[1].body["tools"].as_array().unwrap().iter().find(|t| t["name"] == "mcp__fake__echo").unwrap();
    assert_eq!(echo["input_schema"]["required"], json!(["text"]));
    let results = tool_results(&requests[4].body);
    assert_eq!(results[0]["content"], "echo: hi");
    // Read-only by the server's annotation: allowed without a rule.
    assert_eq!(results[1]["content"], "k = value-of-k");
    // Not read-only, no rule: denied in non-interactive mode, and said so.
    assert_eq!(results[2]["is_error"], true, "{results:?}");
    assert!(results[2]["content"].as_str().unwrap().contains("mcp__fake__env"), "{results:?}");
    // The image is attached after the results.
    assert!(results[3]["content"].as_str().unwrap().contains("[image 1: image/png, attached]"), "{results:?}");
    let last_user =
        requests[4].body["messages"].as_array().unwrap().iter().rev().find(|m| m["role"] == "user").unwrap();
    assert!(last_user["content"].as_array().unwrap().iter().any(|b| b["type"] == "image"), "{last_user}");
    let denials = &run.result()["permission_denials"];
    assert_eq!(denials[0]["tool_name"], "mcp__fake__env", "{denials}");
}

#[test]
fn a_server_that_crashes_mid_call_is_an_error_result_and_is_restarted_on_next_use() {
    let workspace = Workspace::new();
    let record = workspace.path().join("calls.jsonl");
    let server = FakeServer::spawn(scenario(json!([
        call("t1", "mcp__fake__crash", json!({})),
        call("t2", "mcp__fake__echo", json!({"text": "again"})),
        answer("done"),
    ])))
    .unwrap();
    let config = stdio_config("fake", &["--record", record.to_str().unwrap()]);
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "go", "--output-format", "stream-json", "--mcp-config", &config]);
    command.args(["--allowedTools", "mcp__fake"]);
    let run = execute(command);
    assert_eq!(run.code, 0, "{run:?}");
    let requests = server.requests();
    let results = tool_results(&requests[2].body);
    assert_eq!(results[0]["is_error"], true);
    let crash = results[0]["content"].as_str().unwrap();
    assert!(crash.contains("stopped during the call of crash"), "{crash}");
    assert!(crash.contains("crashing as asked"), "the server's stderr explains it: {crash}");
    assert_eq!(results[1]["content"], "echo: again", "restarted on the next call: {results:?}");
    let calls = std::fs::read_to_string(&record).unwrap();
    assert_eq!(calls.lines().count(), 2, "{calls}");
}

/// Found from the outside: `-p` sent its first request before the servers had connected (init said
/// `pending`), so the model answered without their tools; Claude Code waits for them. Servers start all at once
/// and the wait ends at `MCP_TIMEOUT`, naming the one that never answered.
#[test]
fn slow_servers_are_ready_on_turn_one_and_one_that_never_starts_is_named() {
    let workspace = Workspace::new();
    let server = FakeServer::spawn(scenario(json!([answer("hello")]))).unwrap();
    let config = json!({"mcpServers": {
        "quick": {"command": fake_mcp_bin(), "args": ["--name", "quick", "--slow-start", "500"]},
        "slow": {"command": fake_mcp_bin(), "args": ["--name", "slow", "--slow-start", "1500"]},
        "mute": {"command": "sleep", "args": ["60"]}}});
    let mut command = workspace.anthropic(&server);
    command.env("MCP_TIMEOUT", "2500");
    command.args(["-p", "go", "--output-format", "stream-json", "--mcp-config", &config.to_string()]);
    let started = std::time::Instant::now();
    let run = execute(command);
    assert_eq!(run.code, 0, "{run:?}");
    let mut statuses = run.lines()[0]["mcp_servers"].as_array().cloned().unwrap_or_default();
    statuses.sort_by_key(|server| server["name"].as_str().unwrap_or_default().to_owned());
    assert_eq!(
        statuses,
        [
            json!({"name": "mute", "status": "failed"}),
            json!({"name": "quick", "status": "connected"}),
            json!({"name": "slow", "status": "connected"})
        ]
    );
    let names = tool_names(&server.requests()[0].body);
    assert!(
        names.contains(&"mcp__quick__echo".to_owned()) && names.contains(&"mcp__slow__echo".to_owned()),
        "{names:?}"
    );
    assert!(run.stderr.contains("MCP server mute"), "{}", run.stderr);
    assert!(started.elapsed() < std::time::Duration::from_secs(20), "the servers were waited for together");
    assert_eq!(run.result()["result"], "hello");
}

#[test]
fn a_server_that_cannot_start_is_reported_and_the_session_goes_on() {
    let workspace = Workspace::new();
    let server = FakeServer::spawn(scenario(json!([call("t1", "mcp__gone__echo", json!({})), answer("ok")]))).unwrap();
    let config =
        json!({"mcpServers": {"gone": {"command": "/nonexistent/mcp-server"}, "bad": {"type": "ws", "url": "x"}}});
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "go", "--output-format", "stream-json", "--mcp-config", &config.to_string()]);
    let run = execute(command);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stderr.contains("bad"), "the unsupported entry is reported: {}", run.stderr);
    let results = tool_results(&server.requests()[1].body);
    assert_eq!(results[0]["is_error"], true);
    assert!(results[0]["content"].as_str().unwrap().contains("mcp__gone__echo"), "{results:?}");
}

#[test]
fn tool_search_keeps_two_hundred_schemas_out_of_the_requests_until_searched_and_declares_what_it_found() {
    let workspace = Workspace::new();
    let server = FakeServer::spawn(scenario(json!([
        call("t0", "mcp__big__echo", json!({"text": "warm"})),
        call("t1", "ToolSearch", json!({"query": "select:tool_7"})),
        call("t2", "mcp__big__tool_7", json!({"input": "x"})),
        answer("done"),
    ])))
    .unwrap();
    let mut command = workspace.anthropic(&server);
    command.args([
        "-p",
        "go",
        "--output-format",
        "stream-json",
        "--mcp-config",
        &stdio_config("big", &["--tools", "200"]),
    ]);
    command.args(["--allowedTools", "mcp__big"]);
    let run = execute(command);
    assert_eq!(run.code, 0, "{run:?}");
    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    let names = tool_names(&requests[1].body);
    assert!(names.iter().any(|name| name == "ToolSearch"), "{names:?}");
    assert!(!names.iter().any(|name| name.starts_with("mcp__")), "no MCP schema is sent: {names:?}");
    // What the search found is declared from then on, at the end (issue 29: a provider that only lets the model
    // call declared tools could not call it); the list then stays byte-identical.
    let names = tool_names(&requests[2].body);
    assert_eq!(names.iter().filter(|name| name.starts_with("mcp__")).collect::<Vec<_>>(), ["mcp__big__tool_7"]);
    assert_eq!(names.last().map(String::as_str), Some("mcp__big__tool_7"));
    assert_eq!(requests[2].body["tools"], requests[3].body["tools"], "the tool list stays byte-identical");
    let results = tool_results(&requests[3].body);
    assert_eq!(results[0]["content"], "echo: warm", "a deferred tool is callable by name");
    let found = results[1]["content"].as_str().unwrap();
    assert!(found.contains("mcp__big__tool_7") && found.contains("\"required\":[\"input\"]"), "{found}");
    assert!(results[2]["content"].as_str().unwrap().starts_with("tool_7 got"), "{results:?}");
}

/// The fake MCP server named "web" on streamable HTTP, and its URL.
fn http_server(args: &[&str]) -> (std::process::Child, String) {
    let mut child = std::process::Command::new(fake_mcp_bin())
        .args(["--name", "web", "--http", "127.0.0.1:0"])
        .args(args)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    (child, line.trim().strip_prefix("listening on ").unwrap().to_owned())
}

#[test]
fn streamable_http_with_headers_from_the_environment() {
    let (mut child, url) = http_server(&["--require-header", "x-token=s3cret"]);

    let workspace = Workspace::new();
    let server =
        FakeServer::spawn(scenario(json!([call("t1", "mcp__web__echo", json!({"text": "over http"})), answer("ok")])))
            .unwrap();
    let config =
        json!({"mcpServers": {"web": {"type": "http", "url": url, "headers": {"X-Token": "${MCP_TEST_TOKEN}"}}}});
    let mut command = workspace.anthropic(&server);
    command.env("MCP_TEST_TOKEN", "s3cret");
    command.args(["-p", "go", "--output-format", "stream-json", "--mcp-config", &config.to_string()]);
    command.args(["--allowedTools", "mcp__web__echo"]);
    let run = execute(command);
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(run.code, 0, "{run:?}");
    let results = tool_results(&server.requests()[1].body);
    assert_eq!(results[0]["content"], "echo: over http", "{results:?}");
}

#[test]
fn project_servers_start_only_once_approved() {
    let workspace = Workspace::new();
    let record = workspace.path().join("calls.jsonl");
    let entry = json!({"command": fake_mcp_bin(), "args": ["--name", "proj", "--record", record]});
    workspace.write(".mcp.json", &json!({"mcpServers": {"proj": entry}}).to_string());
    // A repository can't approve its own servers.
    workspace.write(".claude/settings.json", r#"{"enableAllProjectMcpServers": true}"#);
    let replies = || json!([call("t1", "mcp__proj__echo", json!({"text": "p"})), answer("ok")]);

    let server = FakeServer::spawn(scenario(replies())).unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "go", "--output-format", "stream-json", "--allowedTools", "mcp__proj"]);
    let run = execute(command);
    assert_eq!(run.lines()[0]["mcp_servers"], json!([{"name": "proj", "status": "disabled"}]), "{run:?}");
    assert!(run.stderr.contains("not approved yet"), "{}", run.stderr);
    assert!(run.stderr.contains("can't approve its own"), "{}", run.stderr);
    assert!(!record.exists(), "the project's command never ran");

    // Nor can "local" settings files: they are inside the repository too, which may have committed them.
    workspace.write(".claude/settings.local.json", r#"{"enableAllProjectMcpServers": true}"#);
    workspace.write(".tandem/settings.local.json", r#"{"enabledMcpjsonServers": ["proj"]}"#);
    let server = FakeServer::spawn(scenario(replies())).unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "go", "--output-format", "stream-json", "--allowedTools", "mcp__proj"]);
    let run = execute(command);
    assert_eq!(run.lines()[0]["mcp_servers"], json!([{"name": "proj", "status": "disabled"}]), "{run:?}");
    assert!(run.stderr.contains("are not used: that file is inside the repository"), "{}", run.stderr);
    assert!(!record.exists(), "the project's command never ran");

    let server = FakeServer::spawn(scenario(replies())).unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "go", "--output-format", "stream-json", "--allowedTools", "mcp__proj"]);
    command.args(["--settings", r#"{"enabledMcpjsonServers": ["proj"]}"#]);
    let run = execute(command);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(tool_results(&server.requests()[1].body)[0]["content"], "echo: p");
}

#[test]
fn tandem_mcp_add_list_get_remove_like_claude_mcp() {
    let workspace = Workspace::new();
    let mcp = |args: &[&str]| {
        let mut command = workspace.tandem();
        command.arg("mcp").args(args);
        execute(command)
    };
    let bin = fake_mcp_bin();
    let bin = bin.to_str().unwrap();
    let added = mcp(&["add", "-e", "GREETING=hello", "helper", "--", bin, "--name", "helper"]);
    assert_eq!(added.code, 0, "{added:?}");
    assert!(added.stdout.contains("Added stdio MCP server helper to local config"), "{added:?}");
    let shared = mcp(&["add-json", "-s", "project", "shared", &json!({"command": bin}).to_string()]);
    assert_eq!(shared.code, 0, "{shared:?}");
    let project: Value = serde_json::from_str(&workspace.read(".mcp.json")).unwrap();
    assert_eq!(project["mcpServers"]["shared"]["command"], bin);
    let duplicate = mcp(&["add", "helper", bin]);
    assert_eq!(duplicate.code, 1);
    assert!(duplicate.stderr.contains("already exists in local config"), "{duplicate:?}");
    let sse = mcp(&["add", "-t", "sse", "old", "https://example.com/sse"]);
    assert!(sse.code == 1 && sse.stderr.contains("not supported"), "{sse:?}");

    let list = mcp(&["list"]);
    assert_eq!(list.code, 0, "{list:?}");
    assert!(list.stdout.contains(&format!("helper: {bin} --name helper - ✓ Connected")), "{}", list.stdout);
    assert!(list.stdout.contains("shared: ") && list.stdout.contains("Needs approval"), "{}", list.stdout);
    let get = mcp(&["get", "helper"]);
    assert!(get.stdout.contains("Scope: Local config") && get.stdout.contains("GREETING=hello"), "{}", get.stdout);

    // The added server is the session's.
    let server =
        FakeServer::spawn(scenario(json!([call("t1", "mcp__helper__env", json!({"name": "GREETING"})), answer("ok")])))
            .unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "go", "--allowedTools", "mcp__helper"]);
    let run = execute(command);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(tool_results(&server.requests()[1].body)[0]["content"], "hello");

    let removed = mcp(&["remove", "helper"]);
    assert!(removed.stdout.contains("Removed MCP server helper from local config"), "{removed:?}");
    assert!(mcp(&["get", "helper"]).stderr.contains("no MCP server named"));
    assert_eq!(mcp(&["serve"]).code, 1);
}

#[test]
fn server_prompts_run_as_slash_commands_and_mentions_attach_resources() {
    let workspace = Workspace::new();
    // Started with the session: the command is known once the server is up, not sent to the model as text.
    let server = FakeServer::spawn(scenario(json!([answer("reviewed")]))).unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "/mcp__fake__review error handling", "--mcp-config", &stdio_config("fake", &[])]);
    let run = execute(command);
    assert_eq!(run.code, 0, "{run:?}");
    let body = &server.requests()[0].body;
    let sent = body["messages"].to_string();
    assert!(sent.contains("Please review error handling carefully."), "{sent}");
    assert!(!sent.contains("/mcp__fake__review"), "{sent}");

    let server = FakeServer::spawn(scenario(json!([answer("read it")]))).unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "summarize @fake:note://readme please", "--mcp-config", &stdio_config("fake", &[])]);
    let run = execute(command);
    assert_eq!(run.code, 0, "{run:?}");
    let sent = server.requests()[0].body["messages"].to_string();
    assert!(sent.contains(r#"<mcp-resource server=\"fake\" uri=\"note://readme\">"#), "{sent}");

    // An unknown resource is reported; the message still goes, as typed.
    let server = FakeServer::spawn(scenario(json!([answer("hm")]))).unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "see @fake:note://missing", "--mcp-config", &stdio_config("fake", &[])]);
    let run = execute(command);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stderr.contains("@fake:note://missing"), "{}", run.stderr);
    assert!(server.requests()[0].body["messages"].to_string().contains("see @fake:note://missing"));
}

/// Found from the outside: a server busy in a call was left running after tandem exited, and an answer of
/// 16 MB or more was dropped by the transport while the call waited its whole timeout (600 s by default).
#[test]
fn a_busy_server_is_stopped_when_tandem_ends_and_a_huge_answer_fails_at_once() {
    let workspace = Workspace::new();
    let server =
        FakeServer::spawn(scenario(json!([call("t1", "mcp__fake__big", json!({"chars": 17_500_000})), answer("ok")])))
            .unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "go", "--allowedTools", "mcp__fake__big", "--mcp-config", &stdio_config("fake", &[])]);
    let run = execute(command);
    assert_eq!(run.code, 0, "{run:?}");
    let results = tool_results(&server.requests()[1].body);
    assert_eq!(results[0]["is_error"], true, "{results:?}");
    let message = results[0]["content"].as_str().unwrap_or_default();
    assert!(message.contains("16.7 MB") && message.contains("over the 16.0 MB limit"), "{message}");

    let name = format!("busy{}", std::process::id());
    let record = workspace.path().join("busy.jsonl");
    let server = FakeServer::spawn(scenario(json!([
        call("t1", &format!("mcp__{name}__slow"), json!({"ms": 60_000})),
        answer("never")
    ])))
    .unwrap();
    let mut command = workspace.anthropic(&server);
    let config = stdio_config(&name, &["--record", record.to_str().unwrap()]);
    command.args(["-p", "go", "--dangerously-skip-permissions", "--mcp-config", &config]);
    let child = command.stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null()).spawn().unwrap();
    wait_for_line(&record);
    let found = std::process::Command::new("pgrep").args(["-f", "--", &format!("--name {name}")]).output().unwrap();
    let pid = String::from_utf8_lossy(&found.stdout).trim().to_owned();
    assert!(!pid.is_empty() && alive(&pid), "the server is busy in the call");
    assert!(std::process::Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap().success());
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(143));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while alive(&pid) && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(!alive(&pid), "the server outlived tandem");
}

/// The HTTP transport has the same 16 MB limit on an answer: the call fails at once and says so, instead of
/// waiting out its timeout.
#[test]
fn a_huge_answer_over_http_fails_at_once() {
    let (mut child, url) = http_server(&[]);

    let workspace = Workspace::new();
    let server =
        FakeServer::spawn(scenario(json!([call("t1", "mcp__web__big", json!({"chars": 17_500_000})), answer("ok")])))
            .unwrap();
    let config = json!({"mcpServers": {"web": {"type": "http", "url": url}}});
    let mut command = workspace.anthropic(&server);
    command.env("MCP_TOOL_TIMEOUT", "60000");
    command.args(["-p", "go", "--mcp-config", &config.to_string(), "--allowedTools", "mcp__web__big"]);
    let started = std::time::Instant::now();
    let run = execute(command);
    let took = started.elapsed();
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(run.code, 0, "{run:?}");
    let results = tool_results(&server.requests()[1].body);
    assert_eq!(results[0]["is_error"], true, "{results:?}");
    let message = results[0]["content"].as_str().unwrap_or_default();
    assert!(message.contains("over the 16.0 MB limit of one MCP message"), "{message} (after {took:?})");
}
