//! Subagents through the real binary: the Task tool starts a `.claude/agents` (or built-in, or `--agents`)
//! agent in a fresh conversation with its own system prompt and tools, only its answer comes back, several run
//! at once, and their hooks and frames are Claude Code's.

// Test code: a panic is how a failure is reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use tandem_e2e::{FakeServer, Scenario, Workspace, execute, tool_results};

fn scenario(value: Value) -> Scenario {
    Scenario::from_json(&value.to_string()).expect("scenario")
}

const REVIEWER: &str = "---\nname: reviewer\ndescription: Reviews a change for bugs.\ntools: Read, Grep\n---\nYou are a strict code reviewer. Report bugs only.\n";

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"].as_array().unwrap().iter().map(|tool| tool["name"].as_str().unwrap().to_owned()).collect()
}

#[test]
fn a_project_agent_starts_fresh_with_its_prompt_and_tools_and_only_its_answer_returns() {
    let workspace = Workspace::new();
    workspace.write(".claude/agents/reviewer.md", REVIEWER);
    workspace.write("CLAUDE.md", "Project rule: tabs, not spaces.\n");
    let server = FakeServer::spawn(scenario(json!({"replies": [
        {"blocks": [{"type": "tool_use", "id": "toolu_task", "name": "Task", "input": {
            "description": "Review the diff", "prompt": "Review src/lib.rs for bugs.", "subagent_type": "reviewer"}}]},
        {"blocks": [{"type": "text", "text": "No bugs in src/lib.rs."}]},
        {"blocks": [{"type": "text", "text": "The reviewer found no bugs."}]}
    ]})))
    .unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "SECRET-PARENT-PROMPT: get a review", "--output-format", "stream-json", "--verbose"]);
    let run = execute(command);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.result()["result"], "The reviewer found no bugs.");

    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let parent_tools = tool_names(&requests[0].body);
    assert!(parent_tools.contains(&"Task".to_owned()), "{parent_tools:?}");
    let task = requests[0].body["tools"].as_array().unwrap().iter().find(|tool| tool["name"] == "Task").unwrap();
    assert!(task["description"].as_str().unwrap().contains("- reviewer: Reviews a change for bugs."));

    let sub = &requests[1].body;
    assert_eq!(tool_names(sub), ["Grep", "Read"], "its tools only, in the registry's order, no Task");
    let system = sub["system"].to_string();
    assert!(system.contains("You are a strict code reviewer."), "{system}");
    assert!(system.contains("tabs, not spaces"), "the project guidelines are there too: {system}");
    let messages = sub["messages"].to_string();
    assert!(!messages.contains("SECRET-PARENT-PROMPT"), "none of the parent's history: {messages}");
    assert!(messages.contains("Review src/lib.rs for bugs."), "{messages}");

    let results = tool_results(&requests[2].body);
    assert_eq!(results[0]["content"], "No bugs in src/lib.rs.", "{}", results[0]);

    let tagged: Vec<Value> =
        run.lines().into_iter().filter(|line| line["parent_tool_use_id"] == "toolu_task").collect();
    assert!(tagged.iter().any(|line| line["type"] == "assistant"), "the subagent's frames are tagged: {tagged:?}");
}

#[test]
fn two_task_calls_run_at_the_same_time() {
    let workspace = Workspace::new();
    let task = |id: &str, what: &str| {
        json!({"type": "tool_use", "id": id, "name": "Task", "input": {
            "description": what, "prompt": what, "subagent_type": "Explore"}})
    };
    // Each subagent's reply is held until both subagents' requests have arrived (3 requests in all): one after
    // the other, the first would never get its answer.
    let server = FakeServer::spawn(scenario(json!({"replies": [
        {"blocks": [task("toolu_a", "find the parser"), task("toolu_b", "find the printer")]},
        {"blocks": [{"type": "text", "text": "answer one"}], "wait_for_requests": 3},
        {"blocks": [{"type": "text", "text": "answer two"}], "wait_for_requests": 3},
        {"blocks": [{"type": "text", "text": "Both found."}]}
    ]})))
    .unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "explore", "--output-format", "json"]);
    let run = execute(command);
    assert_eq!(run.code, 0, "{run:?}");
    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    assert_eq!(tool_names(&requests[1].body), ["Glob", "Grep", "Read", "SearchSessions"], "Explore only reads");
    let results = tool_results(&requests[3].body);
    let answers: Vec<&str> = results.iter().map(|result| result["content"].as_str().unwrap()).collect();
    assert!(answers.contains(&"answer one") && answers.contains(&"answer two"), "{answers:?}");
    // Three responses' usage: the parent's first, and the two subagents' (the last is reported separately).
    assert!(run.result()["usage"]["output_tokens"].as_u64().unwrap() > 0);
}

#[test]
fn agents_from_the_flag_and_the_agent_alias_with_subagent_hooks() {
    let workspace = Workspace::new();
    let log = "{ cat; echo; } >> \"$CLAUDE_PROJECT_DIR/hooks.jsonl\"";
    workspace.write(
        ".claude/settings.json",
        &json!({"hooks": {
            "SubagentStart": [{"hooks": [{"type": "command", "command": log}]}],
            "SubagentStop": [{"matcher": "tester", "hooks": [{"type": "command", "command": log}]}],
            "Stop": [{"hooks": [{"type": "command", "command": log}]}]
        }})
        .to_string(),
    );
    let server = FakeServer::spawn(scenario(json!({"replies": [
        {"blocks": [{"type": "tool_use", "id": "toolu_t", "name": "Agent", "input": {
            "description": "Run tests", "prompt": "Run the tests.", "subagent_type": "tester"}}]},
        {"blocks": [{"type": "text", "text": "12 passed."}]},
        {"blocks": [{"type": "text", "text": "Tests pass."}]}
    ]})))
    .unwrap();
    let agents = json!({"tester": {"description": "Runs the tests", "prompt": "You run tests.", "tools": ["Bash"]}});
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "test it", "--output-format", "json", "--agents", &agents.to_string()]);
    let run = execute(command);
    assert_eq!(run.code, 0, "{run:?}");
    let requests = server.requests();
    assert_eq!(tool_names(&requests[1].body), ["Bash"]);
    assert!(requests[1].body["system"].to_string().contains("You run tests."));
    let lines: Vec<Value> =
        workspace.read("hooks.jsonl").lines().map(|line| serde_json::from_str(line).unwrap()).collect();
    let events: Vec<&str> = lines.iter().map(|line| line["hook_event_name"].as_str().unwrap()).collect();
    assert_eq!(events, ["SubagentStart", "SubagentStop", "Stop"], "{lines:?}");
    assert_eq!(lines[0]["agent_type"], "tester");
    assert_eq!(lines[1]["agent_id"], lines[0]["agent_id"]);
    let transcript = lines[1]["agent_transcript_path"].as_str().unwrap();
    assert!(std::fs::read_to_string(transcript).unwrap().contains("12 passed."), "the subagent's transcript is kept");
}

#[test]
fn an_agents_tools_are_checked_against_every_tool_offered() {
    let workspace = Workspace::new();
    let server =
        FakeServer::spawn(scenario(json!({"replies": [{"blocks": [{"type": "text", "text": "ok"}]}]}))).unwrap();
    let agents =
        json!({"reader": {"description": "Reads pages", "prompt": "You read.", "tools": ["WebFetch", "Nope"]}});
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "hi", "--agents", &agents.to_string(), "--tools", "Agent,Read,WebFetch"]);
    let run = execute(command);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stderr.contains("reader lists tools tandem does not have here (Nope)"), "{}", run.stderr);
    assert!(!run.stderr.contains("has no tool \"Agent\""), "Agent is the Task tool's other name: {}", run.stderr);
    assert_eq!(tool_names(&server.requests()[0].body), ["Read", "WebFetch", "Task"]);
}

/// Issue 29: as in Claude Code, a Task call without `subagent_type` starts the general-purpose agent, and its
/// `model` chooses the subagent's model (an alias too).
#[test]
fn task_defaults_to_the_general_purpose_agent_and_takes_a_model() {
    let workspace = Workspace::new();
    let server = FakeServer::spawn(scenario(json!({"replies": [
        {"blocks": [{"type": "tool_use", "id": "toolu_t", "name": "Task", "input": {
            "description": "Count files", "prompt": "Count the files.", "model": "haiku"}}]},
        {"blocks": [{"type": "text", "text": "3 files."}]},
        {"blocks": [{"type": "text", "text": "There are 3."}]}
    ]})))
    .unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "count", "--output-format", "json"]);
    let run = execute(command);
    assert_eq!(run.code, 0, "{run:?}");
    let requests = server.requests();
    assert_eq!(requests.len(), 3, "the subagent ran");
    let model = requests[1].body["model"].as_str().unwrap();
    assert!(model.contains("haiku"), "the call's model: {model}");
    assert!(tool_results(&requests[2].body)[0]["content"].to_string().contains("3 files."));
}

/// `--agent NAME` (the SDK's `agent` option) makes the main conversation that agent: its prompt is the system
/// prompt, its tools the tools, its model the model; a name no agent has is an error, not ignored.
#[test]
fn the_main_conversation_can_be_an_agent() {
    let workspace = Workspace::new();
    let agents = json!({"auditor": {"description": "Audits", "prompt": "AUDITOR-PROMPT: only read.",
        "tools": ["Read", "Grep"], "model": "claude-haiku-4-5"}});
    let server =
        FakeServer::spawn(scenario(json!({"replies": [{"blocks": [{"type": "text", "text": "ok"}]}]}))).unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "audit", "--agents", &agents.to_string(), "--agent", "auditor"]);
    let run = execute(command);
    assert_eq!(run.code, 0, "{run:?}");
    let body = &server.requests()[0].body;
    assert!(body["system"].to_string().contains("AUDITOR-PROMPT"), "{}", body["system"]);
    assert!(!body["system"].to_string().contains("You are tandem"));
    assert_eq!(tool_names(body), ["Grep", "Read"]);
    assert_eq!(body["model"], "claude-haiku-4-5");

    let server = FakeServer::spawn(scenario(json!({"replies": []}))).unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "audit", "--agent", "nobody"]);
    let run = execute(command);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("--agent nobody: there is no such agent"), "{}", run.stderr);
}
