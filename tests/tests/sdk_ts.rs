//! The real Claude Agent SDK for TypeScript drives the real tandem binary (`pathToClaudeCodeExecutable`), against
//! the fake model server. The SDK comes from the npm registry into a directory made here once, without its
//! optional dependencies (they carry a copy of Claude Code's CLI, which must not be what runs); when node or the
//! registry is missing the tests say so and skip. The programs are in tests/sdk/cases.mjs.

// Test code: a panic is how a failure is reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::{Value, json};
use tandem_e2e::{FakeServer, Scenario, TEST_KEY, Workspace, fake_mcp_bin, tandem_bin};

/// The SDK version these cases were written against (its protocol: shared/sdk-protocol.md).
const SDK_VERSION: &str = "0.3.337";
const ZOD_VERSION: &str = "4.1.12";

/// The directory with the SDK installed, or why there is none (then every test here skips, saying why).
fn sdk_dir() -> Result<&'static Path, &'static str> {
    static DIR: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match DIR.get_or_init(install) {
        Ok(path) => Ok(path.as_path()),
        Err(why) => Err(why.as_str()),
    }
}

fn install() -> Result<PathBuf, String> {
    if Command::new("node").arg("--version").output().is_err() {
        return Err("node is not installed".into());
    }
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("claude-agent-sdk-ts-{SDK_VERSION}"));
    let ready = dir.join(".installed");
    if ready.exists() {
        return Ok(dir);
    }
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("make the SDK's directory");
    std::fs::write(dir.join("package.json"), r#"{"private": true, "type": "module"}"#).unwrap();
    let installed = Command::new("npm")
        .args(["install", "--omit=optional", "--no-audit", "--no-fund", "--loglevel=error"])
        .arg(format!("@anthropic-ai/claude-agent-sdk@{SDK_VERSION}"))
        .arg(format!("zod@{ZOD_VERSION}"))
        .current_dir(&dir)
        .output();
    let output = match installed {
        Ok(output) => output,
        Err(error) => return Err(format!("npm can't be run: {error}")),
    };
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let unreachable = ["ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "ETIMEDOUT", "ENETUNREACH", "network"];
        if unreachable.iter().any(|sign| stderr.contains(sign)) {
            return Err(format!("the npm registry is unreachable, so the Agent SDK can't be installed: {stderr}"));
        }
        panic!("npm install @anthropic-ai/claude-agent-sdk failed:\n{stderr}");
    }
    std::fs::write(&ready, SDK_VERSION).expect("mark the SDK installed");
    Ok(dir)
}

/// One case of cases.mjs against `scenario`: its report, the requests the model got, and the workspace.
struct Case {
    report: Value,
    server: FakeServer,
    #[allow(dead_code, reason = "kept alive for the case's files")]
    workspace: Workspace,
}

fn run_case(name: &str, scenario: Value) -> Option<Case> {
    let dir = match sdk_dir() {
        Ok(dir) => dir,
        Err(why) => {
            eprintln!("skipping the TypeScript Agent SDK case {name}: {why}");
            return None;
        }
    };
    // Beside node_modules, so that its imports resolve.
    let cases = dir.join("cases.mjs");
    std::fs::copy(Path::new(env!("CARGO_MANIFEST_DIR")).join("sdk/cases.mjs"), &cases).expect("copy cases.mjs");
    let workspace = Workspace::new();
    let server = FakeServer::spawn(Scenario::from_json(&scenario.to_string()).expect("scenario")).unwrap();
    let mut command = Command::new("node");
    command.arg(&cases).arg(name).current_dir(workspace.path());
    for var in ["ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL", "CLAUDECODE"] {
        command.env_remove(var);
    }
    command
        .env("TANDEM_BIN", tandem_bin())
        .env("FAKE_MCP_BIN", fake_mcp_bin())
        .env("SDK_WORK", workspace.path())
        .env("TANDEM_CONFIG_DIR", workspace.config.path())
        .env("CLAUDE_CONFIG_DIR", workspace.config.path().join("claude"))
        .env("TMPDIR", workspace.config.path())
        .env("TANDEM_RETRY_BASE_MS", "1")
        .env("ANTHROPIC_API_KEY", TEST_KEY)
        .env("ANTHROPIC_BASE_URL", server.url());
    let output = command.output().expect("run node");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "case {name} failed\nstdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(!stdout.contains(TEST_KEY) && !stderr.contains(TEST_KEY), "the key leaked");
    let last = stdout.lines().rev().find(|line| !line.trim().is_empty()).unwrap_or_default();
    let report = serde_json::from_str(last).unwrap_or_else(|_| panic!("no JSON report:\n{stdout}\n{stderr}"));
    Some(Case { report, server, workspace })
}

fn text_reply(text: &str) -> Value {
    json!({"blocks": [{"type": "text", "text": text, "chunks": 3}]})
}

fn tool_call(name: &str, input: Value) -> Value {
    json!({"blocks": [{"type": "tool_use", "id": "toolu_1", "name": name, "input": input}]})
}

fn make_file() -> Value {
    json!({"replies": [tool_call("Bash", json!({"command": "touch made.txt"})), text_reply("Done.")]})
}

fn messages(case: &Case) -> &Vec<Value> {
    case.report["messages"].as_array().expect("messages")
}

fn result_of(case: &Case) -> &Value {
    messages(case).iter().find(|message| message["kind"] == "result").expect("a result")
}

/// The first tool result the program saw.
fn first_tool_result(case: &Case) -> &Value {
    messages(case).iter().filter_map(|message| message["results"].as_array()).flatten().next().expect("a tool result")
}

fn system_text(body: &Value) -> String {
    body["system"].as_array().unwrap().iter().filter_map(|block| block["text"].as_str()).collect::<Vec<_>>().join("\n")
}

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"].as_array().unwrap().iter().map(|tool| tool["name"].as_str().unwrap().to_owned()).collect()
}

#[test]
fn one_shot_query() {
    let Some(case) = run_case("one_shot", json!({"replies": [text_reply("Hello from the fake model.")]})) else {
        return;
    };
    let kinds: Vec<&str> = messages(&case).iter().map(|message| message["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds.first(), Some(&"system"), "{kinds:?}");
    assert_eq!(kinds.last(), Some(&"result"), "{kinds:?}");
    assert_eq!(result_of(&case)["result"], "Hello from the fake model.");
    assert_eq!(case.server.requests().len(), 1);
}

/// The TS SDK sends the system prompt in `initialize` (a list), not as a flag.
#[test]
fn the_system_prompt_from_initialize_replaces_tandems() {
    let Some(case) = run_case("system_prompt", json!({"replies": [text_reply("Hi.")]})) else { return };
    let system = system_text(&case.server.requests()[0].body);
    assert!(system.starts_with("You are the TypeScript test's assistant."), "{system}");
    assert!(!system.contains("You are tandem"), "{system}");
}

#[test]
fn the_appended_system_prompt_from_initialize_keeps_tandems() {
    let Some(case) = run_case("append_system_prompt", json!({"replies": [text_reply("Hi.")]})) else { return };
    let system = system_text(&case.server.requests()[0].body);
    assert!(system.contains("You are tandem"), "{system}");
    assert!(system.ends_with("Always answer in haiku."), "{system}");
}

/// `createSdkMcpServer` + `tool()`: the model calls the program's own tool, through `mcp_message`.
#[test]
fn an_sdk_mcp_servers_tool_is_called_in_the_program() {
    let scenario = json!({"replies": [tool_call("mcp__calc__add", json!({"a": 2, "b": 3})), text_reply("5.")]});
    let Some(case) = run_case("sdk_mcp_tool", scenario) else { return };
    let requests = case.server.requests();
    assert!(tool_names(&requests[0].body).contains(&"mcp__calc__add".to_owned()), "offered from the first request");
    let result = first_tool_result(&case);
    assert!(result["content"].to_string().contains("sum=5"), "{result}");
    assert_eq!(result_of(&case)["is_error"], false);
}

/// An SDK server's tool takes the permission path of any MCP tool: without a rule, the program is asked.
#[test]
fn an_sdk_mcp_tool_without_a_rule_asks_the_program() {
    let scenario = json!({"replies": [tool_call("mcp__calc__add", json!({"a": 2, "b": 3})), text_reply("5.")]});
    let Some(case) = run_case("sdk_mcp_tool_asks_the_program", scenario) else { return };
    assert_eq!(case.report["asked"], json!([{"name": "mcp__calc__add", "input": {"a": 2, "b": 3}}]));
    assert!(first_tool_result(&case)["content"].to_string().contains("sum=5"));
}

/// Other MCP servers come in `initialize` too (`--await-initialize`), and the SDK wants `mcp_servers_applied`.
#[test]
fn a_stdio_mcp_server_from_initialize_is_started() {
    let scenario = json!({"replies": [tool_call("mcp__fake__echo", json!({"text": "hi"})), text_reply("Echoed.")]});
    let Some(case) = run_case("stdio_mcp_server_from_initialize", scenario) else { return };
    let result = first_tool_result(&case);
    assert!(result["content"].to_string().contains("echo: hi"), "{result}");
    assert!(!case.report["stderr"].as_str().unwrap().contains("unknown option"), "{}", case.report["stderr"]);
}

#[test]
fn can_use_tool_deny_reaches_the_model() {
    let Some(case) = run_case("can_use_tool_deny", make_file()) else { return };
    let result = first_tool_result(&case);
    assert!(result["content"].to_string().contains("The TS host says no."), "{result}");
    assert!(!case.workspace.path().join("made.txt").exists());
}

#[test]
fn a_pre_tool_use_hook_callback_denies() {
    let Some(case) = run_case("pre_tool_use_hook_denies", make_file()) else { return };
    assert_eq!(case.report["seen"], json!(["Bash"]));
    assert!(first_tool_result(&case)["content"].to_string().contains("hook said no"));
    assert!(!case.workspace.path().join("made.txt").exists());
}

#[test]
fn two_prompts_are_one_session() {
    let Some(case) =
        run_case("two_prompts_in_one_session", json!({"replies": [text_reply("One."), text_reply("Two.")]}))
    else {
        return;
    };
    let results: Vec<&Value> = messages(&case).iter().filter(|message| message["kind"] == "result").collect();
    assert_eq!(results.len(), 2, "{:?}", messages(&case));
    let second = &case.server.requests()[1].body;
    assert_eq!(second["messages"].as_array().unwrap().len(), 3, "the second request carries the first exchange");
}

#[test]
fn structured_output_is_the_results() {
    let scenario = json!({"replies": [tool_call("StructuredOutput", json!({"answer": 42})), text_reply("42.")]});
    let Some(case) = run_case("structured_output", scenario) else { return };
    assert_eq!(result_of(&case)["structured_output"], json!({"answer": 42}));
}

/// What tandem can't honour is refused, and the program hears it.
#[test]
fn an_initialize_option_tandem_cant_honour_is_an_error_the_program_sees() {
    let Some(case) = run_case("unsupported_initialize_option_is_an_error", json!({"replies": [text_reply("Hi.")]}))
    else {
        return;
    };
    let error = case.report["error"].as_str().unwrap_or_default();
    assert!(error.contains("managedSettings is not supported by tandem"), "{}", case.report);
}

/// The SDK's `agent` option (`--agent=NAME`, an agent from `initialize`): the main conversation is that agent.
#[test]
fn the_agent_option_makes_the_main_conversation_that_agent() {
    let Some(case) = run_case("main_agent", json!({"replies": [text_reply("Audited.")]})) else { return };
    let body = &case.server.requests()[0].body;
    assert!(system_text(body).contains("AUDITOR-PROMPT"), "{}", system_text(body));
    assert_eq!(tool_names(body), ["Read"]);
    assert!(!case.report["stderr"].as_str().unwrap().contains("unknown option"), "{}", case.report["stderr"]);
}

/// What a program asks the session about itself has the shapes the SDK's types promise.
#[test]
fn introspection_answers_have_the_sdks_shapes() {
    let Some(case) = run_case("introspection", json!({"replies": [text_reply("Hi.")]})) else { return };
    assert_eq!(case.report["account"]["apiProvider"], "firstParty");
    let usage = &case.report["usage"];
    for key in ["categories", "gridRows", "memoryFiles", "mcpTools", "agents", "isAutoCompactEnabled", "apiUsage"] {
        assert!(usage.get(key).is_some(), "getContextUsage lacks {key}: {usage}");
    }
}
