//! The real Claude Agent SDK for Python drives the real tandem binary (`cli_path`), against the fake model
//! server. The SDK comes from PyPI into a venv made here once (its source distribution: the binary wheel carries a
//! copy of Claude Code's CLI that must not be what runs); when PyPI can't be reached the tests say so and skip.
//! The programs are in tests/sdk/cases.py.

// Test code: a panic is how a failure is reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::{Value, json};
use tandem_e2e::{FakeServer, Scenario, TEST_KEY, Workspace, tandem_bin};

/// The SDK version whose protocol shared/sdk-protocol.md describes.
const SDK_VERSION: &str = "0.2.189";

/// The venv's python, or why there is none (then every test here skips, saying why).
fn python() -> Result<&'static Path, &'static str> {
    static PYTHON: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match PYTHON.get_or_init(make_venv) {
        Ok(path) => Ok(path.as_path()),
        Err(why) => Err(why.as_str()),
    }
}

fn make_venv() -> Result<PathBuf, String> {
    let venv = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("claude-agent-sdk-{SDK_VERSION}"));
    let python = venv.join("bin/python");
    let ready = venv.join(".installed");
    if ready.exists() {
        return Ok(python);
    }
    let _ = std::fs::remove_dir_all(&venv);
    let made = Command::new("python3").arg("-m").arg("venv").arg(&venv).output();
    match made {
        Ok(output) if output.status.success() => {}
        Ok(output) => panic!("python3 -m venv failed: {}", String::from_utf8_lossy(&output.stderr)),
        Err(error) => panic!("python3 is needed for the SDK tests: {error}"),
    }
    let install = Command::new(&python)
        .args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-binary", "claude-agent-sdk"])
        .arg(format!("claude-agent-sdk=={SDK_VERSION}"))
        .output()
        .expect("run pip");
    if !install.status.success() {
        let stderr = String::from_utf8_lossy(&install.stderr);
        let unreachable = [
            "Failed to establish a new connection",
            "Temporary failure in name resolution",
            "Network is unreachable",
            "No matching distribution found",
            "ConnectTimeoutError",
            "ProxyError",
        ];
        if unreachable.iter().any(|sign| stderr.contains(sign)) {
            return Err(format!("PyPI is unreachable, so the Agent SDK can't be installed: {}", last_line(&stderr)));
        }
        panic!("pip install claude-agent-sdk failed:\n{stderr}");
    }
    std::fs::write(&ready, SDK_VERSION).expect("mark the venv ready");
    Ok(python)
}

fn last_line(text: &str) -> &str {
    text.lines().rev().find(|line| !line.trim().is_empty()).unwrap_or_default()
}

/// Which provider tandem talks to in a case.
#[derive(Clone, Copy, PartialEq)]
enum Provider {
    Anthropic,
    Openai,
}

/// One case of cases.py against `scenario`: its report, the requests the model got, and the workspace.
struct Case {
    report: Value,
    server: FakeServer,
    workspace: Workspace,
}

fn run_case(name: &str, scenario: Value, provider: Provider, env: &[(&str, &str)]) -> Option<Case> {
    run_case_with(name, scenario, provider, env, |_| {})
}

/// [`run_case`] on Anthropic, with files put in the workspace first.
fn run_case_in(name: &str, scenario: Value, prepare: impl FnOnce(&Workspace)) -> Option<Case> {
    run_case_with(name, scenario, Provider::Anthropic, &[], prepare)
}

fn run_case_with(
    name: &str,
    scenario: Value,
    provider: Provider,
    env: &[(&str, &str)],
    prepare: impl FnOnce(&Workspace),
) -> Option<Case> {
    let python = match python() {
        Ok(python) => python,
        Err(why) => {
            eprintln!("skipping the Agent SDK case {name}: {why}");
            return None;
        }
    };
    let workspace = Workspace::new();
    prepare(&workspace);
    let server = FakeServer::spawn(Scenario::from_json(&scenario.to_string()).expect("scenario")).unwrap();
    let cases = Path::new(env!("CARGO_MANIFEST_DIR")).join("sdk/cases.py");
    let mut command = Command::new(python);
    command.arg(&cases).arg(name).current_dir(workspace.path());
    for var in ["ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL", "CLAUDECODE"] {
        command.env_remove(var);
    }
    command
        .env("TANDEM_BIN", tandem_bin())
        .env("SDK_WORK", workspace.path())
        .env("TANDEM_CONFIG_DIR", workspace.config.path())
        .env("CLAUDE_CONFIG_DIR", workspace.config.path().join("claude"))
        .env("TMPDIR", workspace.config.path())
        .env("TANDEM_RETRY_BASE_MS", "1")
        .env("CLAUDE_AGENT_SDK_SKIP_VERSION_CHECK", "1");
    match provider {
        Provider::Anthropic => {
            command.env("ANTHROPIC_API_KEY", TEST_KEY).env("ANTHROPIC_BASE_URL", server.url());
        }
        Provider::Openai => {
            command
                .env("OPENAI_API_KEY", TEST_KEY)
                .env("OPENAI_BASE_URL", format!("{}/v1", server.url()))
                .env("SDK_PROVIDER", "openai");
        }
    }
    for (key, value) in env {
        command.env(key, value);
    }
    let output = command.output().expect("run python");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "case {name} failed\nstdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(!stdout.contains(TEST_KEY) && !stderr.contains(TEST_KEY), "the key leaked");
    let report = serde_json::from_str(last_line(&stdout)).expect("the case's JSON report");
    Some(Case { report, server, workspace })
}

fn text_reply(text: &str) -> Value {
    json!({"blocks": [{"type": "text", "text": text, "chunks": 3}]})
}

fn make_file() -> Value {
    json!({"replies": [
        {"blocks": [{"type": "tool_use", "id": "toolu_make", "name": "Bash",
            "input": {"command": "touch made-by-tool.txt && echo hello-from-tool", "description": "Create a file"}}]},
        text_reply("All done: the tool said hello.")
    ]})
}

/// The system prompt of a request, as one text (Anthropic's blocks or OpenAI's first message).
fn system_text(body: &Value) -> String {
    if let Some(blocks) = body["system"].as_array() {
        return blocks.iter().filter_map(|block| block["text"].as_str()).collect::<Vec<_>>().join("\n");
    }
    if let Some(text) = body["system"].as_str() {
        return text.to_owned();
    }
    body["messages"][0]["content"].as_str().unwrap_or_default().to_owned()
}

fn kinds(messages: &Value) -> Vec<String> {
    messages.as_array().unwrap().iter().map(|message| message["kind"].as_str().unwrap().to_owned()).collect()
}

fn result_of(messages: &Value) -> &Value {
    messages.as_array().unwrap().iter().find(|message| message["kind"] == "result").expect("a result")
}

fn one_shot(provider: Provider) {
    let Some(case) =
        run_case("one_shot", json!({"replies": [text_reply("Hello from the fake model.")]}), provider, &[])
    else {
        return;
    };
    let kinds = kinds(&case.report);
    assert_eq!(kinds.first().map(String::as_str), Some("system"), "{kinds:?}");
    assert_eq!(kinds.last().map(String::as_str), Some("result"), "{kinds:?}");
    let result = result_of(&case.report);
    assert_eq!(result["num_turns"], 1);
    assert!(result["total_cost_usd"].is_number(), "{result}");
    assert!(result["model_usage"].as_object().is_some_and(|usage| !usage.is_empty()), "{result}");
    assert_eq!(result["terminal_reason"], "completed");
    assert_eq!(case.server.requests().len(), 1);
}

#[test]
fn one_shot_query_on_anthropic() {
    one_shot(Provider::Anthropic);
}

#[test]
fn one_shot_query_on_openai() {
    one_shot(Provider::Openai);
}

fn can_use_tool_allow(provider: Provider) {
    let Some(case) = run_case("can_use_tool_allow", make_file(), provider, &[]) else { return };
    let asked = &case.report["asked"][0];
    assert_eq!(asked["input"]["command"], "touch made-by-tool.txt && echo hello-from-tool");
    // The suggestion is the rule an "always" answer would save.
    let suggestion = &asked["suggestions"][0];
    assert_eq!(suggestion["type"], "addRules", "{asked}");
    assert_eq!(suggestion["destination"], "localSettings", "{asked}");
    let messages = &case.report["messages"];
    let user = messages.as_array().unwrap().iter().find(|message| message["kind"] == "user").unwrap();
    assert_eq!(user["results"][0]["content"], "hello-from-tool", "{user}");
    assert_eq!(case.server.requests().len(), 2);
}

#[test]
fn can_use_tool_allows_on_anthropic() {
    can_use_tool_allow(Provider::Anthropic);
}

#[test]
fn can_use_tool_allows_on_openai() {
    can_use_tool_allow(Provider::Openai);
}

#[test]
fn can_use_tool_deny_reaches_the_model_with_the_hosts_message() {
    let Some(case) = run_case("can_use_tool_deny", make_file(), Provider::Anthropic, &[]) else { return };
    let requests = case.server.requests();
    let results = tandem_e2e::tool_results(&requests[1].body);
    assert_eq!(results[0]["content"], "not allowed here", "{results:?}");
    assert_eq!(results[0]["is_error"], true);
    let result = result_of(&case.report);
    assert_eq!(result["permission_denials"][0]["tool_use_id"], "toolu_make");
}

#[test]
fn can_use_tool_updated_input_is_what_runs() {
    let Some(case) = run_case("can_use_tool_updated_input", make_file(), Provider::Anthropic, &[]) else { return };
    assert_eq!(case.workspace.read("rewritten.txt"), "rewritten\n");
}

#[test]
fn partial_messages_stream_anthropic_events() {
    let scenario = json!({"replies": [text_reply("Hello from the fake model.")]});
    let Some(case) = run_case("partial_messages", scenario, Provider::Anthropic, &[]) else { return };
    let kinds = kinds(&case.report);
    let assistant = kinds.iter().position(|kind| kind == "assistant").unwrap();
    let first_event = kinds.iter().position(|kind| kind == "stream_event").unwrap();
    assert!(first_event < assistant, "{kinds:?}");
}

#[test]
fn max_turns_ends_with_error_max_turns() {
    let Some(case) = run_case("max_turns", make_file(), Provider::Anthropic, &[]) else { return };
    let result = result_of(&case.report["messages"]);
    assert_eq!(result["terminal_reason"], "max_turns");
    assert_eq!(result["errors"][0], "Reached maximum number of turns (1)");
    assert_eq!(case.server.requests().len(), 1);
}

#[test]
fn a_client_asks_twice_in_one_session() {
    let scenario = json!({"replies": [text_reply("First answer."), text_reply("Second answer.")]});
    let Some(case) = run_case("client_two_queries", scenario, Provider::Anthropic, &[]) else { return };
    let requests = case.server.requests();
    assert_eq!(requests.len(), 2);
    // The second request carries the first exchange: one conversation.
    let messages = requests[1].body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3, "{messages:?}");
    assert!(messages[1].to_string().contains("First answer."));
}

#[test]
fn interrupt_stops_a_slow_reply_and_the_session_goes_on() {
    let slow =
        json!({"blocks": [{"type": "text", "text": "Once upon a time ".repeat(40), "chunks": 40}], "delay_ms": 100});
    let scenario = json!({"replies": [slow, text_reply("Still here.")]});
    let Some(case) = run_case("interrupt", scenario, Provider::Anthropic, &[]) else { return };
    let result = result_of(&case.report["messages"]);
    assert_eq!(result["terminal_reason"], "interrupted", "{result}");
    assert_eq!(case.server.requests().len(), 2);
}

#[test]
fn a_pre_tool_use_hook_callback_denies() {
    let Some(case) = run_case("hook_denies", make_file(), Provider::Anthropic, &[]) else { return };
    assert_eq!(case.report["seen"][0]["id"], "toolu_make");
    let requests = case.server.requests();
    let results = tandem_e2e::tool_results(&requests[1].body);
    assert!(results[0]["content"].as_str().unwrap().contains("bash is off in this test"), "{results:?}");
    assert_eq!(results[0]["is_error"], true);
}

#[test]
fn resume_by_session_id_continues_the_conversation() {
    let scenario = json!({"replies": [text_reply("Apple noted."), text_reply("The word was apple.")]});
    let Some(case) = run_case("resume", scenario, Provider::Anthropic, &[]) else { return };
    let requests = case.server.requests();
    let messages = requests[1].body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3, "{messages:?}");
    assert!(messages[0].to_string().contains("Remember the word apple"));
}

#[test]
fn set_permission_mode_applies_to_the_next_call() {
    let scenario = json!({"replies": [
        {"blocks": [{"type": "tool_use", "id": "toolu_write", "name": "Write",
            "input": {"file_path": "notes.txt", "content": "written in acceptEdits\n"}}]},
        text_reply("Written.")
    ]});
    let Some(case) = run_case("set_permission_mode", scenario, Provider::Anthropic, &[]) else { return };
    assert_eq!(case.workspace.read("notes.txt"), "written in acceptEdits\n");
}

#[test]
fn set_model_changes_the_next_requests_model() {
    let scenario = json!({"replies": [text_reply("First answer."), text_reply("Second answer.")]});
    let env = [("SDK_SECOND_MODEL", "claude-haiku-4-5")];
    let Some(case) = run_case("set_model", scenario, Provider::Anthropic, &env) else { return };
    let requests = case.server.requests();
    assert_ne!(requests[0].body["model"], "claude-haiku-4-5");
    assert_eq!(requests[1].body["model"], "claude-haiku-4-5");
    assert!(case.report["context"]["maxTokens"].as_u64().unwrap() > 0, "{}", case.report["context"]);
}

#[test]
fn system_prompt_replaces_tandems() {
    let scenario = json!({"replies": [text_reply("Hello from the fake model.")]});
    let Some(case) = run_case("system_prompt", scenario, Provider::Anthropic, &[]) else { return };
    let system = system_text(&case.server.requests()[0].body);
    assert!(system.starts_with("You are the SDK test's assistant."), "{system}");
}

#[test]
fn append_system_prompt_keeps_tandems_and_adds() {
    let scenario = json!({"replies": [text_reply("Hello from the fake model.")]});
    let Some(case) = run_case("append_system_prompt", scenario, Provider::Anthropic, &[]) else { return };
    let system = system_text(&case.server.requests()[0].body);
    assert!(system.contains("Always end with APPENDED-MARK."), "{system}");
    assert!(system.contains("tandem"), "{system}");
}

#[test]
fn output_format_gives_structured_output() {
    let scenario = json!({"replies": [{"blocks": [{"type": "tool_use", "id": "toolu_out", "name": "StructuredOutput",
        "input": {"answer": 42}}]}]});
    let Some(case) = run_case("structured_output", scenario, Provider::Anthropic, &[]) else { return };
    assert_eq!(case.server.requests().len(), 1);
}

#[test]
fn rewind_files_puts_back_what_changed_since_a_user_message() {
    let write = |id: &str, content: &str| {
        json!({"blocks": [{"type": "tool_use", "id": id, "name": "Write",
                           "input": {"file_path": "notes.txt", "content": content}}]})
    };
    let scenario = json!({"replies": [
        write("toolu_w1", "first\n"),
        text_reply("Written."),
        write("toolu_w2", "second\n"),
        {"blocks": [{"type": "tool_use", "id": "toolu_b1", "name": "Bash",
                     "input": {"command": "printf 'changed by a command\\n' > log.txt"}}]},
        text_reply("Changed."),
    ]});
    let Some(case) = run_case_in("rewind_files", scenario, |workspace| {
        workspace.write("log.txt", "the log\n");
    }) else {
        return;
    };
    let report = &case.report;
    let checkpoints = report["checkpoints"].as_array().unwrap();
    assert!(checkpoints.iter().all(Value::is_string) && checkpoints[0] != checkpoints[1], "{report}");
    assert_eq!(report["changed"], "second\n");
    assert_eq!(report["after"], "first\n", "the second prompt's Write went back: {report}");
    assert_eq!(report["log_after"], "the log\n", "the second prompt's command went back: {report}");
}

/// `create_sdk_mcp_server` + `@tool`: the model calls the program's own tool, through `mcp_message` (the Python SDK
/// names the server in `--mcp-config` as `{"type": "sdk"}`).
#[test]
fn an_sdk_mcp_servers_tool_is_called_in_the_program() {
    let scenario = json!({"replies": [
        {"blocks": [{"type": "tool_use", "id": "toolu_add", "name": "mcp__calc__add", "input": {"a": 2, "b": 3}}]},
        text_reply("5.")
    ]});
    let Some(case) = run_case("sdk_mcp_tool", scenario, Provider::Anthropic, &[]) else { return };
    let requests = case.server.requests();
    let tools: Vec<&str> =
        requests[0].body["tools"].as_array().unwrap().iter().filter_map(|t| t["name"].as_str()).collect();
    assert!(tools.contains(&"mcp__calc__add"), "{tools:?}");
    let results = tandem_e2e::tool_results(&requests[1].body);
    assert!(results[0]["content"].to_string().contains("sum=5"), "{results:?}");
}
