//! End to end: the real `tandem -p` binary against the fake LLM server, checked by its output, the files on
//! disk and the requests the "model" received.

// Test code: a panic is how a failure is reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;
use tandem_e2e::{FakeServer, Run, Scenario, TEST_KEY, Workspace, execute, tool_results};

/// Read → Edit → answer, the acceptance scenario.
fn read_edit_answer(path: &str) -> Scenario {
    Scenario::from_json(
        &json!({"replies": [
            {"blocks": [
                {"type": "text", "text": "Let me read the file first.", "chunks": 3},
                {"type": "tool_use", "id": "toolu_read", "name": "Read", "input": {"file_path": path}, "chunks": 3}
            ]},
            {"blocks": [
                {"type": "tool_use", "id": "toolu_edit", "name": "Edit",
                 "input": {"file_path": path, "old_string": "Hello, world", "new_string": "Hello, tandem"}, "chunks": 4}
            ]},
            {"blocks": [{"type": "text", "text": "I changed the greeting to say tandem.", "chunks": 4}]}
        ]})
        .to_string(),
    )
    .expect("scenario")
}

fn assert_edit_flow(run: &Run, workspace: &Workspace, server: &FakeServer) {
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(workspace.read("hello.txt"), "fn main() {\n    println!(\"Hello, tandem\");\n}\n");
    let kinds = run.kinds();
    assert_eq!(kinds.first().map(String::as_str), Some("system/init"), "{kinds:?}");
    assert_eq!(kinds.last().map(String::as_str), Some("result/success"), "{kinds:?}");
    assert!(kinds.iter().filter(|kind| *kind == "assistant").count() >= 3, "{kinds:?}");
    assert_eq!(kinds.iter().filter(|kind| *kind == "user").count(), 2, "{kinds:?}");
    let result = run.result();
    assert_eq!(result["result"], "I changed the greeting to say tandem.");
    assert_eq!(result["num_turns"], 3);
    assert_eq!(result["is_error"], false);
    assert_eq!(result["permission_denials"], json!([]));
    let init = &run.lines()[0];
    assert!(init["tools"].as_array().unwrap().iter().any(|tool| tool == "Edit"));
    assert_eq!(server.requests().len(), 3);
}

#[test]
fn anthropic_read_edit_answer_in_accept_edits_mode() {
    let workspace = Workspace::new();
    workspace.write("hello.txt", "fn main() {\n    println!(\"Hello, world\");\n}\n");
    let server = FakeServer::spawn(read_edit_answer("hello.txt")).unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "Change the greeting", "--output-format", "stream-json", "--permission-mode", "acceptEdits"]);
    let run = execute(command);
    assert_edit_flow(&run, &workspace, &server);

    assert_eq!(run.lines()[0]["apiKeySource"], "ANTHROPIC_API_KEY");
    let requests = server.requests();
    assert_eq!(requests[0].path, "/v1/messages");
    assert_eq!(requests[0].headers.get("x-api-key").map(String::as_str), Some("[redacted]"));
    // The Read result reached the model, numbered.
    let results = tool_results(&requests[1].body);
    assert!(results[0]["content"].as_str().unwrap().contains("Hello, world"), "{results:?}");
    // The edit result reached the model.
    let results = tool_results(&requests[2].body);
    assert_eq!(results.len(), 2);
    assert_ne!(results[1]["is_error"], true, "{results:?}");
}

#[test]
fn openai_read_edit_answer_in_accept_edits_mode() {
    let workspace = Workspace::new();
    workspace.write("hello.txt", "fn main() {\n    println!(\"Hello, world\");\n}\n");
    let server = FakeServer::spawn(read_edit_answer("hello.txt")).unwrap();
    let mut command = workspace.openai(&server);
    command.args(["-p", "Change the greeting", "--output-format", "stream-json", "--permission-mode", "acceptEdits"]);
    let run = execute(command);
    assert_edit_flow(&run, &workspace, &server);
    let requests = server.requests();
    assert_eq!(requests[0].path, "/v1/chat/completions");
    assert_eq!(requests[0].body["stream_options"]["include_usage"], true);
    let messages = requests[2].body["messages"].as_array().unwrap();
    assert!(messages.iter().any(|message| message["role"] == "tool" && message["tool_call_id"] == "toolu_edit"));
}

#[test]
fn without_accept_edits_the_edit_is_denied_and_the_file_untouched() {
    let workspace = Workspace::new();
    let original = "fn main() {\n    println!(\"Hello, world\");\n}\n";
    workspace.write("hello.txt", original);
    let server = FakeServer::spawn(read_edit_answer("hello.txt")).unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "Change the greeting", "--output-format", "stream-json"]);
    let run = execute(command);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(workspace.read("hello.txt"), original);
    let result = run.result();
    assert_eq!(result["subtype"], "success");
    let denials = result["permission_denials"].as_array().unwrap();
    assert_eq!(denials.len(), 1, "{result}");
    assert_eq!(denials[0]["tool_name"], "Edit");
    assert_eq!(denials[0]["tool_use_id"], "toolu_edit");
    assert_eq!(denials[0]["tool_input"]["new_string"], "Hello, tandem");
    let results = tool_results(&server.requests()[2].body);
    let denial = results.iter().find(|result| result["tool_use_id"] == "toolu_edit").unwrap();
    assert_eq!(denial["is_error"], true);
    // It says what happened and how to allow it, not that a user denied it.
    let content = denial["content"].as_str().unwrap();
    assert!(content.contains("not allowed by the permission rules"), "{denial}");
    assert!(content.contains("non-interactively") && content.contains("--allowedTools 'Edit"), "{denial}");
}

#[test]
fn allowed_tools_flag_allows_the_edit() {
    let workspace = Workspace::new();
    workspace.write("hello.txt", "fn main() {\n    println!(\"Hello, world\");\n}\n");
    let server = FakeServer::spawn(read_edit_answer("hello.txt")).unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "Change the greeting", "--output-format", "json", "--allowedTools", "Read,Edit"]);
    let run = execute(command);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.lines().len(), 1, "json prints only the result");
    assert!(workspace.read("hello.txt").contains("Hello, tandem"));
}

#[test]
fn text_output_prints_only_the_answer() {
    let workspace = Workspace::new();
    let server = FakeServer::spawn(
        Scenario::from_json(r#"{"replies":[{"blocks":[{"type":"text","text":"Forty-two.","chunks":3}]}]}"#).unwrap(),
    )
    .unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "What is the answer?"]);
    let run = execute(command);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.stdout, "Forty-two.\n");
    let body = &server.requests()[0].body;
    assert_eq!(body["messages"][0]["content"][0]["text"], "What is the answer?");
    assert_eq!(body["stream"], true);
}

#[test]
fn prompt_can_come_from_stdin() {
    use std::io::Write;
    let workspace = Workspace::new();
    let server =
        FakeServer::spawn(Scenario::from_json(r#"{"replies":[{"blocks":[{"type":"text","text":"ok"}]}]}"#).unwrap())
            .unwrap();
    let mut command = workspace.anthropic(&server);
    command
        .arg("-p")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = command.spawn().unwrap();
    child.stdin.take().unwrap().write_all(b"prompt from a pipe").unwrap();
    let run = Run::of(child.wait_with_output().unwrap());
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(server.requests()[0].body["messages"][0]["content"][0]["text"], "prompt from a pipe");
}

#[test]
fn partial_messages_stream_anthropic_events() {
    let workspace = Workspace::new();
    let server = FakeServer::spawn(
        Scenario::from_json(r#"{"replies":[{"blocks":[{"type":"text","text":"one two three","chunks":3}]}]}"#).unwrap(),
    )
    .unwrap();
    let mut command = workspace.openai(&server);
    command.args(["-p", "count", "--output-format", "stream-json", "--include-partial-messages", "--verbose"]);
    let run = execute(command);
    assert_eq!(run.code, 0, "{run:?}");
    let events: Vec<_> = run.lines().into_iter().filter(|line| line["type"] == "stream_event").collect();
    let types: Vec<&str> = events.iter().map(|event| event["event"]["type"].as_str().unwrap()).collect();
    assert_eq!(types.first(), Some(&"message_start"));
    assert_eq!(types.last(), Some(&"message_stop"));
    let text: String = events
        .iter()
        .filter(|event| event["event"]["delta"]["type"] == "text_delta")
        .map(|event| event["event"]["delta"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(text, "one two three");
}

#[test]
fn bash_runs_only_when_allowed() {
    let workspace = Workspace::new();
    let scenario = || {
        Scenario::from_json(
            r#"{"replies":[
                {"blocks":[{"type":"tool_use","id":"toolu_sh","name":"Bash","input":{"command":"sh -c 'echo made > made.txt'"}}]},
                {"blocks":[{"type":"text","text":"done"}]}
            ]}"#,
        )
        .unwrap()
    };
    // `sh -c` always asks: headless denies it even in acceptEdits.
    let server = FakeServer::spawn(scenario()).unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "make it", "--output-format", "json", "--permission-mode", "acceptEdits"]);
    let run = execute(command);
    assert_eq!(run.result()["permission_denials"][0]["tool_name"], "Bash", "{run:?}");
    assert!(!workspace.path().join("made.txt").exists());

    let server = FakeServer::spawn(scenario()).unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "make it", "--output-format", "json", "--dangerously-skip-permissions"]);
    let run = execute(command);
    assert_eq!(run.result()["permission_denials"], json!([]));
    assert_eq!(workspace.read("made.txt"), "made\n");
}

#[test]
fn plan_mode_allows_only_read_only_tools() {
    let workspace = Workspace::new();
    workspace.write("hello.txt", "fn main() {\n    println!(\"Hello, world\");\n}\n");
    let server = FakeServer::spawn(read_edit_answer("hello.txt")).unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "plan it", "--output-format", "json", "--permission-mode", "plan", "--allowedTools", "Edit"]);
    let run = execute(command);
    assert_eq!(run.code, 0);
    // An allow rule still allows; without it plan mode refuses. Check the refusal path too.
    let server = FakeServer::spawn(read_edit_answer("hello.txt")).unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "plan it", "--output-format", "json", "--permission-mode", "plan"]);
    let run = execute(command);
    assert_eq!(run.result()["permission_denials"][0]["tool_name"], "Edit");
    let results = tool_results(&server.requests()[2].body);
    assert!(results[1]["content"].as_str().unwrap().contains("plan mode"), "{results:?}");
}

#[test]
fn disallowed_tools_are_removed_from_the_model_view() {
    let workspace = Workspace::new();
    let server =
        FakeServer::spawn(Scenario::from_json(r#"{"replies":[{"blocks":[{"type":"text","text":"ok"}]}]}"#).unwrap())
            .unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "hi", "--disallowedTools", "Bash", "Write"]);
    let run = execute(command);
    assert_eq!(run.code, 0, "{run:?}");
    let tools: Vec<String> = server.requests()[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap().to_owned())
        .collect();
    assert!(
        tools.contains(&"Read".to_owned())
            && !tools.contains(&"Bash".to_owned())
            && !tools.contains(&"Write".to_owned()),
        "{tools:?}"
    );
}

#[test]
fn max_turns_ends_with_error_max_turns() {
    let workspace = Workspace::new();
    workspace.write("a.txt", "a\n");
    let server = FakeServer::spawn(read_edit_answer("a.txt")).unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "go", "--output-format", "json", "--max-turns", "1"]);
    let run = execute(command);
    assert_eq!(run.code, 1, "{run:?}");
    let result = run.result();
    assert_eq!(result["subtype"], "error_max_turns");
    assert_eq!(result["is_error"], true);
    // Claude Code's count: the round that would have come next is a turn too.
    assert_eq!(result["num_turns"], 2);
    assert_eq!(result["errors"][0], "Reached maximum number of turns (1)");
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn max_budget_ends_with_error_max_budget() {
    let workspace = Workspace::new();
    workspace.write("a.txt", "a\n");
    let scenario = Scenario::from_json(
        r#"{"replies":[
            {"blocks":[{"type":"tool_use","name":"Read","input":{"file_path":"a.txt"}}],"usage":{"input_tokens":1000000,"output_tokens":10}},
            {"blocks":[{"type":"text","text":"never"}]}
        ]}"#,
    )
    .unwrap();
    let server = FakeServer::spawn(scenario).unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "go", "--output-format", "json", "--max-budget-usd", "0.5"]);
    let run = execute(command);
    assert_eq!(run.code, 1, "{run:?}");
    let result = run.result();
    assert_eq!(result["subtype"], "error_max_budget_usd");
    assert!(result["total_cost_usd"].as_f64().unwrap() > 2.9);
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn unknown_models_report_unknown_cost_not_zero() {
    let workspace = Workspace::new();
    let server =
        FakeServer::spawn(Scenario::from_json(r#"{"replies":[{"blocks":[{"type":"text","text":"ok"}]}]}"#).unwrap())
            .unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "hi", "--output-format", "json", "--model", "mystery-model-1"]);
    let run = execute(command);
    let result = run.result();
    // The SDK types the cost as a number: 0, with the model flagged as unpriced.
    assert_eq!(result["total_cost_usd"], 0.0, "{result}");
    assert_eq!(result["modelUsage"]["mystery-model-1"]["costUnknown"], true, "{result}");
    assert!(result["usage"]["input_tokens"].as_u64().unwrap() > 0);
}

#[test]
fn system_prompt_flags_shape_the_request() {
    let workspace = Workspace::new();
    let server =
        FakeServer::spawn(Scenario::from_json(r#"{"replies":[{"blocks":[{"type":"text","text":"ok"}]}]}"#).unwrap())
            .unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "hi", "--system-prompt=You are terse.", "--append-system-prompt", "Answer in French."]);
    let run = execute(command);
    assert_eq!(run.code, 0, "{run:?}");
    let system = server.requests()[0].body["system"].clone();
    assert_eq!(system[0]["text"], "You are terse.");
    assert_eq!(system.as_array().unwrap().last().unwrap()["text"], "Answer in French.");
    assert!(!server.requests()[0].body.to_string().contains(TEST_KEY));
}

#[test]
fn a_budget_with_an_unpriced_model_is_refused_up_front() {
    let workspace = Workspace::new();
    let server =
        FakeServer::spawn(Scenario::from_json(r#"{"replies":[{"blocks":[{"type":"text","text":"ok"}]}]}"#).unwrap())
            .unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "hi", "--model", "mystery-model-1", "--max-budget-usd", "1"]);
    let run = execute(command);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("--max-budget-usd needs the model's prices"), "{}", run.stderr);
    assert!(server.requests().is_empty());
}

#[test]
fn a_resumed_session_s_budget_counts_this_run_only() {
    let workspace = Workspace::new();
    // The first run spends about $3 (a million input tokens of Sonnet); the second may spend $0.5 more.
    let scenario = Scenario::from_json(
        r#"{"replies":[
            {"blocks":[{"type":"text","text":"first"}],"usage":{"input_tokens":1000000,"output_tokens":10}},
            {"blocks":[{"type":"text","text":"second"}]}
        ]}"#,
    )
    .unwrap();
    let server = FakeServer::spawn(scenario).unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "one", "--output-format", "json"]);
    let first = execute(command);
    assert_eq!(first.code, 0, "{first:?}");
    let session = first.result()["session_id"].as_str().unwrap().to_owned();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "two", "--output-format", "json", "--resume", &session, "--max-budget-usd", "0.5"]);
    let second = execute(command);
    assert_eq!(second.code, 0, "{second:?}");
    assert_eq!(second.result()["result"], "second");
}

#[test]
fn a_local_servers_context_window_is_learned_from_the_server() {
    let workspace = Workspace::new();
    let scenario = Scenario::from_json(
        r#"{"replies":[{"blocks":[{"type":"text","text":"ok"}]}],
            "server_info":{"/props":{"default_generation_settings":{"n_ctx":6000}}}}"#,
    )
    .unwrap();
    let server = FakeServer::spawn(scenario).unwrap();
    let mut command = workspace.tandem();
    command.env("OPENAI_BASE_URL", format!("{}/v1", server.url())).env("OPENAI_API_KEY", "none");
    command.args(["--provider", "openai", "--model", "tiny-local-model", "-p", "hi", "--output-format", "json"]);
    let run = execute(command);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stderr.contains("llama.cpp reports a context window of 6000 tokens"), "{}", run.stderr);
    // The reply may only have what the window has left after the request (and never the table's 8192).
    let max_tokens = server.requests()[0].body["max_tokens"].as_u64().unwrap();
    assert!(max_tokens <= 3000, "{max_tokens}");
    assert_eq!(run.result()["modelUsage"]["tiny-local-model"]["contextWindow"], 6000);
}

/// A one-pixel PNG.
const PIXEL_PNG: [u8; 68] = [
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52, 0x00, 0x00, 0x00,
    0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x04, 0x00, 0x00, 0x00, 0xb5, 0x1c, 0x0c, 0x02, 0x00, 0x00, 0x00, 0x0b, 0x49,
    0x44, 0x41, 0x54, 0x78, 0xda, 0x63, 0x64, 0x60, 0x00, 0x00, 0x00, 0x06, 0x00, 0x02, 0x30, 0x81, 0xd0, 0x2f, 0x00,
    0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
];

/// Read shows the model a picture (issue 29): the result says what the image is, and the image follows the
/// results in the same message, on either provider; stream-json carries Claude Code's `image` result.
#[test]
fn read_of_an_image_shows_the_model_the_picture() {
    let workspace = Workspace::new();
    std::fs::write(workspace.path().join("pixel.png"), PIXEL_PNG).unwrap();
    let replies = json!({"replies": [
        {"blocks": [{"type": "tool_use", "id": "toolu_img", "name": "Read", "input": {"file_path": "pixel.png"}}]},
        {"blocks": [{"type": "text", "text": "A single pixel."}]}
    ]});
    for openai in [false, true] {
        let server = FakeServer::spawn(Scenario::from_json(&replies.to_string()).unwrap()).unwrap();
        let mut command = if openai { workspace.openai(&server) } else { workspace.anthropic(&server) };
        command.args(["-p", "what is in pixel.png?", "--output-format", "stream-json", "--verbose"]);
        let run = execute(command);
        assert_eq!(run.code, 0, "{run:?}");
        let body = &server.requests()[1].body;
        let sent = body.to_string();
        assert!(sent.contains("1×1 pixels"), "{sent}");
        assert!(sent.contains("iVBORw0KGgo"), "the picture itself is sent: {sent}");
        if !openai {
            let last = body["messages"].as_array().unwrap().last().unwrap()["content"].as_array().unwrap().clone();
            assert_eq!(last[0]["type"], "tool_result");
            assert_eq!(last[1]["type"], "image");
            assert_eq!(last[1]["source"]["media_type"], "image/png");
        }
        let structured = run.lines().into_iter().find_map(|line| line.get("tool_use_result").cloned()).unwrap();
        assert_eq!(structured["type"], "image", "{structured}");
        assert_eq!(structured["file"]["dimensions"]["originalWidth"], 1);
    }
}

/// Read shows a notebook's cells (not its JSON) and NotebookEdit changes one cell (issue 29); like Edit, it asks
/// outside acceptEdits.
#[test]
fn a_notebook_is_read_as_cells_and_edited_cell_by_cell() {
    let workspace = Workspace::new();
    let notebook = json!({"cells": [
        {"cell_type": "code", "execution_count": 1, "id": "calc", "metadata": {}, "outputs": [
            {"name": "stdout", "output_type": "stream", "text": ["2\n"]}], "source": ["print(1 + 1)"]}
    ], "metadata": {}, "nbformat": 4, "nbformat_minor": 5});
    std::fs::write(workspace.path().join("n.ipynb"), serde_json::to_string_pretty(&notebook).unwrap()).unwrap();
    let replies = json!({"replies": [
        {"blocks": [{"type": "tool_use", "id": "toolu_read", "name": "Read", "input": {"file_path": "n.ipynb"}}]},
        {"blocks": [{"type": "tool_use", "id": "toolu_nb", "name": "NotebookEdit",
                     "input": {"notebook_path": "n.ipynb", "cell_id": "calc", "new_source": "print(2 + 2)"}}]},
        {"blocks": [{"type": "text", "text": "Changed."}]}
    ]});
    for (mode, changed) in [("default", false), ("acceptEdits", true)] {
        let server = FakeServer::spawn(Scenario::from_json(&replies.to_string()).unwrap()).unwrap();
        let mut command = workspace.anthropic(&server);
        command.args(["-p", "double it", "--permission-mode", mode]);
        let run = execute(command);
        assert_eq!(run.code, 0, "{run:?}");
        let results = tool_results(&server.requests()[2].body);
        let read = results[0]["content"].as_str().unwrap();
        assert!(
            read.contains("<cell id=\"calc\" type=\"code\">\nprint(") && read.contains("<output cell=\"calc\">\n2\n")
        );
        let written = workspace.read("n.ipynb");
        assert_eq!(written.contains("print(2 + 2)"), changed, "{mode}: {}", results[1]["content"]);
    }
    assert!(workspace.read("n.ipynb").contains("\"outputs\": []"), "the old outputs are cleared");
}

/// Task and a background Bash give SDK hosts Claude Code's result objects, not plain text (issue 29).
#[test]
fn task_and_background_bash_results_are_objects() {
    let workspace = Workspace::new();
    let replies = json!({"replies": [
        {"blocks": [{"type": "tool_use", "id": "toolu_task", "name": "Task",
                     "input": {"description": "Look", "prompt": "Say hi", "subagent_type": "Explore"}}]},
        {"blocks": [{"type": "text", "text": "Hi from the subagent."}]},
        {"blocks": [{"type": "tool_use", "id": "toolu_bg", "name": "Bash",
                     "input": {"command": "sleep 0", "run_in_background": true}}]},
        {"blocks": [{"type": "text", "text": "Done."}]}
    ]});
    let server = FakeServer::spawn(Scenario::from_json(&replies.to_string()).unwrap()).unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "go", "--output-format", "stream-json", "--verbose", "--allowedTools", "Bash(sleep 0)"]);
    let run = execute(command);
    assert_eq!(run.code, 0, "{run:?}");
    let results: Vec<serde_json::Value> = run
        .lines()
        .into_iter()
        .filter(|line| line["type"] == "user" && line["parent_tool_use_id"].is_null())
        .filter_map(|line| line.get("tool_use_result").cloned())
        .collect();
    let task = &results[0];
    assert_eq!(task["status"], "completed", "{task}");
    assert_eq!(task["content"][0]["text"], "Hi from the subagent.");
    assert!(task["agentId"].as_str().is_some_and(|id| !id.is_empty()) && task["totalDurationMs"].is_number());
    let background = &results[1];
    assert!(background["backgroundTaskId"].as_str().is_some_and(|id| !id.is_empty()), "{background}");
}

/// Found while measuring: every headless run left its private temp directory (`tandem-session-*`, where sandboxed
/// commands write) in the system temp dir — the runtime is shut down without dropping the session — and 7,759 of
/// them made each start-up's scan of /tmp slower. Whatever way the session ends, the directory goes with it.
#[test]
fn a_run_leaves_no_private_directory_behind() {
    let workspace = Workspace::new();
    let tmp = tempfile::tempdir().unwrap();
    let replies = json!({"replies": [
        {"blocks": [{"type": "tool_use", "id": "toolu_ls", "name": "Bash", "input": {"command": "ls"}}]},
        {"blocks": [{"type": "text", "text": "Listed."}]}
    ]});
    let server = FakeServer::spawn(Scenario::from_json(&replies.to_string()).unwrap()).unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "list"]).env("TMPDIR", tmp.path());
    let run = execute(command);
    assert_eq!(run.code, 0, "{run:?}");
    let left: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().flatten().map(|entry| entry.file_name()).collect();
    assert!(left.is_empty(), "{left:?}");
}
