//! Bad input and faults through the real binary: each ends with a clear message, no panic, no key shown.

// Test code: a panic is how a failure is reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;
use tandem_e2e::{FakeServer, Scenario, Workspace, execute, tool_results};

fn scenario(value: serde_json::Value) -> Scenario {
    Scenario::from_json(&value.to_string()).expect("scenario")
}

fn ok_reply() -> serde_json::Value {
    json!({"blocks": [{"type": "text", "text": "recovered", "chunks": 2}]})
}

#[test]
fn unauthorized_names_the_env_var_and_never_the_key() {
    let workspace = Workspace::new();
    let server = FakeServer::spawn(scenario(json!({"replies": [{"fault": {"kind": "http", "status": 401}}]}))).unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "hi"]);
    let run = execute(command);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stderr.contains("401") && run.stderr.contains("ANTHROPIC_API_KEY"), "{}", run.stderr);
    assert_eq!(server.requests().len(), 1, "401 is not retried");
}

#[test]
fn bad_request_shows_the_server_message() {
    let workspace = Workspace::new();
    let body = json!({"type": "error", "error": {"type": "invalid_request_error", "message": "messages.0: bad thing happened"}});
    let server =
        FakeServer::spawn(scenario(json!({"replies": [{"fault": {"kind": "http", "status": 400, "body": body}}]})))
            .unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "hi", "--output-format", "json"]);
    let run = execute(command);
    assert_eq!(run.code, 1);
    let result = run.result();
    assert_eq!(result["subtype"], "error_during_execution");
    assert!(result["errors"][0].as_str().unwrap().contains("messages.0: bad thing happened"), "{result}");
}

#[test]
fn rate_limit_with_retry_after_waits_and_retries() {
    let workspace = Workspace::new();
    let server = FakeServer::spawn(scenario(json!({"replies": [
        {"fault": {"kind": "http", "status": 429, "headers": {"retry-after": "0"}}},
        ok_reply()
    ]})))
    .unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "hi"]);
    let run = execute(command);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.stdout.trim(), "recovered");
    assert!(run.stderr.contains("429") && run.stderr.contains("retrying"), "{}", run.stderr);
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn overloaded_and_server_errors_back_off_then_fail_clearly() {
    let workspace = Workspace::new();
    let replies: Vec<_> = (0..3)
        .map(|i| json!({"fault": {"kind": "http", "status": if i % 2 == 0 { 529 } else { 500 }}}))
        .chain(std::iter::once(ok_reply()))
        .collect();
    let server = FakeServer::spawn(scenario(json!({ "replies": replies }))).unwrap();
    let mut command = workspace.openai(&server);
    command.args(["-p", "hi"]);
    let run = execute(command);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(server.requests().len(), 4);

    let replies: Vec<_> = (0..12).map(|_| json!({"fault": {"kind": "http", "status": 529}})).collect();
    let server = FakeServer::spawn(scenario(json!({ "replies": replies }))).unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "hi", "--output-format", "json"]);
    let run = execute(command);
    assert_eq!(run.code, 1);
    assert_eq!(server.requests().len(), 10, "bounded: 10 attempts");
    assert!(run.result()["errors"][0].as_str().unwrap().contains("529"), "{}", run.stdout);
}

#[test]
fn connection_refused_names_the_url() {
    let workspace = Workspace::new();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let url = format!("http://127.0.0.1:{port}");
    let mut command = workspace.tandem();
    command.env("ANTHROPIC_API_KEY", tandem_e2e::TEST_KEY).env("ANTHROPIC_BASE_URL", &url);
    command.args(["-p", "hi"]);
    let run = execute(command);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stderr.contains(&format!("127.0.0.1:{port}")), "{}", run.stderr);
}

#[test]
fn a_stream_dropped_mid_reply_is_retried_and_its_tool_call_never_runs() {
    let workspace = Workspace::new();
    let broken_tool = json!({"blocks": [
        {"type": "text", "text": "Creating the file.", "chunks": 2},
        {"type": "tool_use", "id": "toolu_broken", "name": "Write", "input": {"file_path": "broken.txt", "content": "x"}, "chunks": 4}
    ], "fault": {"kind": "drop_after", "events": 9}});
    let server = FakeServer::spawn(scenario(json!({"replies": [broken_tool, ok_reply()]}))).unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "hi", "--output-format", "stream-json", "--dangerously-skip-permissions"]);
    let run = execute(command);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(!workspace.path().join("broken.txt").exists());
    assert!(run.stderr.contains("partial output discarded"), "{}", run.stderr);
    assert_eq!(run.result()["result"], "recovered");
    assert!(!run.stdout.contains("toolu_broken"), "no assistant line from the broken stream");
}

#[test]
fn a_malformed_event_is_retried_like_a_dropped_stream() {
    let workspace = Workspace::new();
    let broken = json!({"blocks": [{"type": "text", "text": "hello there", "chunks": 3}], "fault": {"kind": "malformed_at", "event": 3}});
    let good = json!({"blocks": [{"type": "text", "text": "recovered"}]});
    let server = FakeServer::spawn(scenario(json!({"replies": [broken, good]}))).unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "hi", "--output-format", "stream-json"]);
    let run = execute(command);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.result()["result"], "recovered");
    assert!(run.stderr.contains("malformed"), "{}", run.stderr);
    // stream-json consumers hear that the attempt's partial events are void.
    assert!(run.kinds().iter().any(|kind| kind == "system/api_retry"), "{:?}", run.kinds());
}

#[test]
fn malformed_events_until_the_retries_are_spent_are_a_clear_error() {
    let workspace = Workspace::new();
    let broken = json!({"blocks": [{"type": "text", "text": "hello there", "chunks": 3}], "fault": {"kind": "malformed_at", "event": 3}});
    let replies: Vec<_> = (0..10).map(|_| broken.clone()).collect();
    let server = FakeServer::spawn(scenario(json!({"replies": replies}))).unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "hi"]);
    let run = execute(command);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stderr.contains("malformed"), "{}", run.stderr);
    assert_eq!(server.requests().len(), 10);
}

#[test]
fn a_stream_labelled_text_plain_or_not_at_all_is_still_read_on_both_providers() {
    let workspace = Workspace::new();
    for content_type in ["text/plain; charset=utf-8", ""] {
        let reply = json!({"blocks": [{"type": "text", "text": "streamed anyway", "chunks": 3}],
            "fault": {"kind": "content_type", "content_type": content_type}});
        for openai in [false, true] {
            let server = FakeServer::spawn(scenario(json!({"replies": [reply.clone()]}))).unwrap();
            let mut command = if openai { workspace.openai(&server) } else { workspace.anthropic(&server) };
            command.args(["-p", "hi"]);
            let run = execute(command);
            assert_eq!(
                (run.code, run.stdout.trim()),
                (0, "streamed anyway"),
                "{content_type:?} openai={openai}: {run:?}"
            );
        }
    }
}

#[test]
fn a_byte_order_mark_the_parser_chokes_on_is_a_retried_malformed_stream_not_a_crash() {
    let workspace = Workspace::new();
    let bom = json!({"blocks": [{"type": "text", "text": "never seen"}], "fault": {"kind": "byte_order_mark"}});
    let server = FakeServer::spawn(scenario(json!({"replies": [bom, ok_reply()]}))).unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "hi"]);
    let run = execute(command);
    assert_eq!((run.code, run.stdout.trim()), (0, "recovered"), "{run:?}");
    assert!(run.stderr.contains("malformed") && run.stderr.contains("retrying"), "{}", run.stderr);
    assert!(!run.stderr.contains("panicked"), "a caught panic is not printed: {}", run.stderr);
}

/// Found from the outside: a server or proxy that answered 200 with a JSON document instead of an event stream
/// ended the run at once. A whole message is the answer, an error document is that error (retried when it would
/// be in a stream), and garbage is retried as a malformed stream.
#[test]
fn a_json_document_where_a_stream_was_asked_for_is_an_answer_or_its_error() {
    let workspace = Workspace::new();
    let overloaded = json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}});
    let whole = json!({"blocks": [{"type": "text", "text": "a whole answer"}], "fault": {"kind": "not_streamed"}});
    for (name, provider) in [("anthropic", 0), ("openai", 1)] {
        let replies = json!([
            {"fault": {"kind": "http", "status": 200, "body": overloaded}},
            {"fault": {"kind": "http", "status": 200, "body": "<html>proxy page</html>",
                       "headers": {"content-type": "application/json"}}},
            whole
        ]);
        let server = FakeServer::spawn(scenario(json!({ "replies": replies }))).unwrap();
        let mut command = if provider == 0 { workspace.anthropic(&server) } else { workspace.openai(&server) };
        command.args(["-p", "hi", "--output-format", "json"]);
        let run = execute(command);
        assert_eq!(run.code, 0, "{name}: {run:?}");
        let result = run.result();
        assert_eq!(result["result"], "a whole answer", "{name}: {result}");
        assert!(result["usage"]["output_tokens"].as_u64().unwrap_or(0) > 0, "{name}: its usage counts: {result}");
        assert_eq!(server.requests().len(), 3, "{name}");
    }

    let body = json!({"error": {"type": "proxy_error", "message": "upstream said no"}});
    let reply = json!({"fault": {"kind": "http", "status": 200, "body": body}});
    let server = FakeServer::spawn(scenario(json!({"replies": [reply]}))).unwrap();
    let mut command = workspace.openai(&server);
    command.args(["-p", "hi"]);
    let run = execute(command);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stderr.contains("upstream said no"), "{}", run.stderr);
}

#[test]
fn invalid_tool_json_unknown_tools_and_missing_fields_are_results_the_model_sees() {
    let workspace = Workspace::new();
    let server = FakeServer::spawn(scenario(json!({"replies": [
        {"blocks": [
            {"type": "tool_use", "id": "toolu_bad_json", "name": "Read", "raw_input": "{\"file_path\": \"a.txt\""},
            {"type": "tool_use", "id": "toolu_unknown", "name": "Teleport", "input": {"to": "mars"}},
            {"type": "tool_use", "id": "toolu_missing", "name": "Read", "input": {"path": "a.txt"}}
        ]},
        {"blocks": [{"type": "text", "text": "I see."}]}
    ]})))
    .unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "hi", "--output-format", "json"]);
    let run = execute(command);
    assert_eq!(run.code, 0, "{run:?}");
    let results = tool_results(&server.requests()[1].body);
    assert_eq!(results.len(), 3);
    assert!(results.iter().all(|result| result["is_error"] == true), "{results:?}");
    assert!(results[0]["content"].as_str().unwrap().contains("not valid JSON"), "{results:?}");
    assert!(results[1]["content"].as_str().unwrap().contains("Read"), "lists the available tools: {results:?}");
    assert!(results[2]["content"].as_str().unwrap().contains("file_path"), "{results:?}");
    // The conversation sent back stays valid: the malformed call's input is an object.
    assert!(server.requests()[1].body["messages"][1]["content"][0]["input"].is_object());
}

#[test]
fn max_tokens_in_the_middle_of_a_tool_call_is_not_run() {
    let workspace = Workspace::new();
    let server = FakeServer::spawn(scenario(json!({"replies": [
        {"blocks": [{"type": "tool_use", "id": "toolu_cut", "name": "Write", "raw_input": "{\"file_path\": \"big.txt\", \"content\": \"aaaa"}],
         "stop_reason": "max_tokens"},
        {"blocks": [{"type": "text", "text": "I'll split it."}]}
    ]})))
    .unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "hi", "--output-format", "json", "--dangerously-skip-permissions"]);
    let run = execute(command);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(!workspace.path().join("big.txt").exists());
    let results = tool_results(&server.requests()[1].body);
    assert!(results[0]["content"].as_str().unwrap().contains("max_tokens"), "{results:?}");
}

#[test]
fn missing_configuration_exits_2_with_one_line() {
    let workspace = Workspace::new();
    let mut command = workspace.tandem();
    command.args(["-p", "hi"]);
    let run = execute(command);
    assert_eq!(run.code, 2, "{run:?}");
    assert_eq!(run.stderr.trim().lines().count(), 1, "{}", run.stderr);
    assert!(run.stderr.contains("ANTHROPIC_API_KEY"), "{}", run.stderr);

    let mut command = workspace.tandem();
    command.args(["-p", "hi", "--provider", "openai"]);
    let run = execute(command);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("OPENAI_API_KEY"), "{}", run.stderr);

    let mut command = workspace.tandem();
    command.env("ANTHROPIC_API_KEY", "x").args(["-p", "hi", "--permission-mode", "yolo"]);
    let run = execute(command);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("acceptEdits"), "{}", run.stderr);

    std::fs::write(workspace.config.path().join("config.toml"), "provider = [broken").unwrap();
    let mut command = workspace.tandem();
    command.args(["-p", "hi"]);
    let run = execute(command);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("config.toml"), "{}", run.stderr);
}

#[test]
fn a_provider_declared_in_config_toml_is_used() {
    let workspace = Workspace::new();
    let server = FakeServer::spawn(scenario(json!({"replies": [ok_reply()]}))).unwrap();
    std::fs::write(
        workspace.config.path().join("config.toml"),
        format!(
            "provider = \"local\"\n[providers.local]\nkind = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"my-model\"\n",
            server.url()
        ),
    )
    .unwrap();
    let mut command = workspace.tandem();
    command.args(["-p", "hi"]);
    let run = execute(command);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(server.requests()[0].body["model"], "my-model");
}

#[test]
fn an_overloaded_model_gives_way_to_the_fallback_model() {
    let workspace = Workspace::new();
    let mut replies: Vec<serde_json::Value> =
        (0..10).map(|_| json!({"fault": {"kind": "http", "status": 529}})).collect();
    replies.push(json!({"blocks": [{"type": "text", "text": "from the fallback"}]}));
    let server = FakeServer::spawn(scenario(json!({"replies": replies}))).unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "hi", "--output-format", "json", "--model", "claude-opus-4-5", "--fallback-model", "sonnet"]);
    let run = execute(command);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.result()["result"], "from the fallback");
    assert!(run.stderr.contains("switching to the fallback model"), "{}", run.stderr);
    let requests = server.requests();
    assert_eq!(requests[0].body["model"], "claude-opus-4-5");
    assert_eq!(requests.last().unwrap().body["model"], "claude-sonnet-4-5");
}

/// Found from the outside: a failed Read echoed its 1 MB path back to the model whole (and an Edit of a file with
/// one 20 MB line returned that line). Every result reaches the model within one bound, head and tail kept.
#[test]
fn a_huge_tool_result_reaches_the_model_cut_to_the_bound_with_a_note() {
    let workspace = Workspace::new();
    let path = format!("missing-{}.txt", "a/".repeat(300_000));
    let server = FakeServer::spawn(scenario(json!({"replies": [
        {"blocks": [{"type": "tool_use", "id": "toolu_read", "name": "Read", "input": {"file_path": path}}]},
        ok_reply()
    ]})))
    .unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "read it"]);
    let run = execute(command);
    assert_eq!(run.code, 0, "{run:?}");
    let results = tool_results(&server.requests()[1].body);
    assert_eq!(results[0]["is_error"], true);
    let content = results[0]["content"].as_str().unwrap_or_default();
    assert!(content.chars().count() < 101_000, "{} characters reached the model", content.chars().count());
    assert!(content.contains("characters left out here"), "{}", &content[..200.min(content.len())]);
}

/// Found from the outside: a Read of a named pipe in the workspace (no approval needed) hung for good.
#[test]
fn a_read_of_a_named_pipe_is_refused_at_once() {
    let workspace = Workspace::new();
    let made = std::process::Command::new("mkfifo").arg(workspace.path().join("pipe")).status().unwrap();
    assert!(made.success());
    let server = FakeServer::spawn(scenario(json!({"replies": [
        {"blocks": [{"type": "tool_use", "id": "toolu_read", "name": "Read", "input": {"file_path": "pipe"}}]},
        ok_reply()
    ]})))
    .unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "read the pipe"]);
    let run = execute(command);
    assert_eq!(run.code, 0, "{run:?}");
    let results = tool_results(&server.requests()[1].body);
    assert_eq!(results[0]["is_error"], true);
    assert!(results[0]["content"].as_str().unwrap_or_default().contains("named pipe"), "{results:?}");
}
