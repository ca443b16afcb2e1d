//! `--input-format stream-json`: tandem driven frame by frame over stdin, as the Agent SDK drives it, with every
//! frame's shape compared field by field with Claude Code's (shared/protocols.md, shared/sdk-protocol.md).

// Test code: a panic is how a failure is reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};
use tandem_e2e::{FakeServer, Scenario, TEST_KEY, Workspace};

/// A running `tandem --input-format stream-json` and the frames it printed so far.
struct Host {
    child: Child,
    stdin: Option<ChildStdin>,
    frames: mpsc::Receiver<Value>,
    seen: Vec<Value>,
}

impl Host {
    fn start(workspace: &Workspace, server: &FakeServer, args: &[&str]) -> Host {
        let mut command = workspace.anthropic(server);
        command
            .args(["--output-format", "stream-json", "--verbose", "--input-format", "stream-json"])
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command.spawn().expect("start tandem");
        let stdout = child.stdout.take().unwrap();
        let (tx, frames) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let line = line.expect("stdout line");
                assert!(!line.contains(TEST_KEY), "the key leaked: {line}");
                let value: Value = serde_json::from_str(&line).unwrap_or_else(|_| panic!("not JSON: {line}"));
                if tx.send(value).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        Host { child, stdin, frames, seen: Vec::new() }
    }

    fn send(&mut self, frame: Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{frame}").unwrap();
        stdin.flush().unwrap();
    }

    fn user(&mut self, content: Value) {
        self.send(json!({"type": "user", "session_id": "", "message": {"role": "user", "content": content}, "parent_tool_use_id": null}));
    }

    /// The next frame that `wanted` accepts (every frame is kept in `seen`).
    fn until(&mut self, wanted: impl Fn(&Value) -> bool) -> Value {
        loop {
            let Ok(frame) = self.frames.recv_timeout(Duration::from_secs(30)) else {
                panic!("no frame within 30 s; seen: {:?}", self.seen.iter().map(kind).collect::<Vec<_>>());
            };
            self.seen.push(frame.clone());
            if wanted(&frame) {
                return frame;
            }
        }
    }

    fn response_to(&mut self, id: &str) -> Value {
        self.until(|frame| frame["type"] == "control_response" && frame["response"]["request_id"] == id)
    }

    /// Closes stdin and waits for the exit code (the rest of stdout is collected into `seen`).
    fn finish(mut self) -> (i32, Vec<Value>) {
        drop(self.stdin.take());
        let status = self.child.wait().expect("wait");
        while let Ok(frame) = self.frames.recv_timeout(Duration::from_secs(5)) {
            self.seen.push(frame);
        }
        (status.code().unwrap_or(-1), self.seen)
    }
}

fn kind(frame: &Value) -> String {
    match frame["subtype"].as_str() {
        Some(subtype) if frame["type"] != "control_response" => {
            format!("{}/{subtype}", frame["type"].as_str().unwrap())
        }
        _ => frame["type"].as_str().unwrap().to_owned(),
    }
}

fn has_keys(frame: &Value, keys: &[&str]) {
    for key in keys {
        assert!(frame.get(key).is_some(), "{} lacks {key}: {frame}", kind(frame));
    }
}

fn text_reply(text: &str) -> Value {
    json!({"blocks": [{"type": "text", "text": text, "chunks": 2}]})
}

fn scenario(replies: Value) -> FakeServer {
    FakeServer::spawn(Scenario::from_json(&json!({"replies": replies}).to_string()).unwrap()).unwrap()
}

#[test]
fn a_session_of_several_user_frames_until_stdin_closes() {
    let workspace = Workspace::new();
    let server = scenario(json!([text_reply("First answer."), text_reply("Second answer.")]));
    let mut host = Host::start(&workspace, &server, &[]);
    host.send(json!({"type": "control_request", "request_id": "req_1_abcd", "request": {"subtype": "initialize", "hooks": null}}));
    let init = host.response_to("req_1_abcd");
    let response = &init["response"]["response"];
    has_keys(response, &["commands", "agents", "models", "claude_code_version", "current_permission_mode", "pid"]);
    assert_eq!(init["response"]["subtype"], "success");

    host.user(json!("First question"));
    let first = host.until(|frame| frame["type"] == "result");
    host.user(json!([{"type": "text", "text": "Second"}, {"type": "text", "text": "question"}]));
    let second = host.until(|frame| frame["type"] == "result");
    let (code, frames) = host.finish();
    assert_eq!(code, 0);
    assert_eq!(first["session_id"], second["session_id"]);
    assert_eq!(first["result"], "First answer.");
    assert_eq!(second["result"], "Second answer.");
    // One conversation: the second request carries the first exchange; block content was joined.
    let requests = server.requests();
    let messages = requests[1].body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3);
    assert!(messages[2].to_string().contains("Second\\n\\nquestion"), "{}", messages[2]);

    let kinds: Vec<String> = frames.iter().map(kind).collect();
    let states: Vec<&str> = frames
        .iter()
        .filter(|frame| frame["subtype"] == "session_state_changed")
        .map(|frame| frame["state"].as_str().unwrap())
        .collect();
    assert_eq!(states, ["running", "idle", "running", "idle"], "{kinds:?}");
    assert_eq!(kinds.iter().filter(|kind| *kind == "system/init").count(), 2, "{kinds:?}");
    let idle = frames.iter().rposition(|frame| frame["state"] == "idle").unwrap();
    let result = frames.iter().rposition(|frame| frame["type"] == "result").unwrap();
    assert!(result < idle, "idle comes after the result: {kinds:?}");
}

#[test]
fn frames_have_claude_codes_shapes() {
    let workspace = Workspace::new();
    workspace.write("notes.txt", "one\ntwo\n");
    let server = scenario(json!([
        {"blocks": [{"type": "tool_use", "id": "toolu_read", "name": "Read", "input": {"file_path": "notes.txt"}}]},
        text_reply("It has two lines.")
    ]));
    let mut host = Host::start(&workspace, &server, &[]);
    host.user(json!("Read notes.txt"));
    host.until(|frame| frame["type"] == "result");
    let (code, frames) = host.finish();
    assert_eq!(code, 0);
    let find =
        |wanted: &str| frames.iter().find(|frame| kind(frame) == wanted).unwrap_or_else(|| panic!("no {wanted}"));
    let init = find("system/init");
    has_keys(
        init,
        &[
            "cwd",
            "session_id",
            "tools",
            "mcp_servers",
            "model",
            "permissionMode",
            "slash_commands",
            "apiKeySource",
            "claude_code_version",
            "output_style",
            "agents",
            "skills",
            "plugins",
            "uuid",
        ],
    );
    let assistant = find("assistant");
    has_keys(assistant, &["message", "parent_tool_use_id", "session_id", "uuid", "timestamp"]);
    has_keys(
        &assistant["message"],
        &["id", "type", "role", "model", "content", "stop_reason", "stop_sequence", "usage"],
    );
    let user = find("user");
    has_keys(user, &["message", "parent_tool_use_id", "session_id", "uuid", "timestamp"]);
    let block = &user["message"]["content"][0];
    assert_eq!(block["type"], "tool_result");
    assert_eq!(block["tool_use_id"], "toolu_read");
    let result = find("result/success");
    has_keys(
        result,
        &[
            "subtype",
            "is_error",
            "duration_ms",
            "duration_api_ms",
            "num_turns",
            "session_id",
            "result",
            "stop_reason",
            "total_cost_usd",
            "usage",
            "modelUsage",
            "permission_denials",
            "terminal_reason",
            "api_error_status",
            "uuid",
        ],
    );
    assert!(result["total_cost_usd"].is_number());
    assert_eq!(result["num_turns"], 2);
    let model_usage = result["modelUsage"].as_object().unwrap().values().next().unwrap();
    has_keys(
        model_usage,
        &[
            "inputTokens",
            "outputTokens",
            "cacheReadInputTokens",
            "cacheCreationInputTokens",
            "costUSD",
            "contextWindow",
            "maxOutputTokens",
        ],
    );
}

#[test]
fn control_requests_are_answered_and_unknown_ones_get_an_error() {
    let workspace = Workspace::new();
    let server = scenario(json!([text_reply("Hi.")]));
    let mut host = Host::start(&workspace, &server, &[]);
    host.send(json!({"type": "control_request", "request_id": "r1", "request": {"subtype": "initialize"}}));
    host.response_to("r1");
    host.send(json!({"type": "control_request", "request_id": "r2", "request": {"subtype": "no_such_thing"}}));
    let unknown = host.response_to("r2");
    assert_eq!(unknown["response"]["subtype"], "error");
    assert!(unknown["response"]["error"].as_str().unwrap().contains("no_such_thing"));
    host.send(json!({"type": "control_request", "request_id": "r3", "request": {"subtype": "set_permission_mode", "mode": "plan"}}));
    assert_eq!(host.response_to("r3")["response"]["subtype"], "success");
    host.send(json!({"type": "control_request", "request_id": "r4", "request": {"subtype": "set_permission_mode", "mode": "sideways"}}));
    assert_eq!(host.response_to("r4")["response"]["subtype"], "error");
    host.send(json!({"type": "control_request", "request_id": "r5", "request": {"subtype": "mcp_status"}}));
    assert_eq!(host.response_to("r5")["response"]["response"], json!({"mcpServers": []}));
    host.send(json!({"type": "control_request", "request_id": "r6", "request": {"subtype": "interrupt"}}));
    assert_eq!(host.response_to("r6")["response"]["subtype"], "success");
    // Garbage between frames is skipped, as the SDK's own reader does.
    host.send(json!("not an object"));
    host.user(json!("Hello"));
    let result = host.until(|frame| frame["type"] == "result");
    let init = host.seen.iter().find(|frame| kind(frame) == "system/init").unwrap().clone();
    assert_eq!(init["permissionMode"], "plan");
    assert_eq!(result["subtype"], "success");
    let (code, _) = host.finish();
    assert_eq!(code, 0);
}

#[test]
fn can_use_tool_waits_while_other_frames_are_handled() {
    let workspace = Workspace::new();
    let server = scenario(json!([
        {"blocks": [{"type": "tool_use", "id": "toolu_touch", "name": "Bash", "input": {"command": "touch made.txt"}}]},
        text_reply("Made it.")
    ]));
    let mut host = Host::start(&workspace, &server, &["--permission-prompt-tool", "stdio"]);
    host.user(json!("Make a file"));
    let ask = host.until(|frame| frame["type"] == "control_request");
    let request = &ask["request"];
    assert_eq!(request["subtype"], "can_use_tool");
    assert_eq!(request["tool_name"], "Bash");
    assert_eq!(request["tool_use_id"], "toolu_touch");
    assert_eq!(request["input"], json!({"command": "touch made.txt"}));
    assert_eq!(
        request["permission_suggestions"][0]["rules"][0],
        json!({"toolName": "Bash", "ruleContent": "touch made.txt"})
    );
    let states: Vec<&Value> = host.seen.iter().filter(|frame| frame["subtype"] == "session_state_changed").collect();
    assert_eq!(states.last().unwrap()["state"], "requires_action");
    // While the call waits, another control request is answered.
    host.send(json!({"type": "control_request", "request_id": "ctx", "request": {"subtype": "get_context_usage"}}));
    let usage = host.response_to("ctx");
    assert!(usage["response"]["response"]["maxTokens"].as_u64().unwrap() > 0);
    assert!(!workspace.path().join("made.txt").exists());
    let id = ask["request_id"].as_str().unwrap();
    host.send(json!({"type": "control_response", "response": {"subtype": "success", "request_id": id,
        "response": {"behavior": "allow", "updatedInput": {"command": "touch made.txt"}}}}));
    let result = host.until(|frame| frame["type"] == "result");
    assert_eq!(result["result"], "Made it.");
    assert!(workspace.path().join("made.txt").exists());
    let (code, _) = host.finish();
    assert_eq!(code, 0);
}

#[test]
fn an_error_answer_denies_and_a_failed_request_is_a_synthetic_api_error() {
    let workspace = Workspace::new();
    let server = scenario(json!([
        {"blocks": [{"type": "tool_use", "id": "toolu_touch", "name": "Bash", "input": {"command": "touch made.txt"}}]},
        {"fault": {"kind": "http", "status": 400}}
    ]));
    let mut host = Host::start(&workspace, &server, &["--permission-prompt-tool", "stdio"]);
    host.user(json!("Make a file"));
    let ask = host.until(|frame| frame["type"] == "control_request");
    let id = ask["request_id"].as_str().unwrap();
    host.send(json!({"type": "control_response", "response": {"subtype": "error", "request_id": id, "error": "callback raised"}}));
    let result = host.until(|frame| frame["type"] == "result");
    let (code, frames) = host.finish();
    assert_eq!(code, 1);
    assert!(!workspace.path().join("made.txt").exists());
    let results = tandem_e2e::tool_results(&server.requests()[1].body);
    assert!(results[0]["content"].as_str().unwrap().contains("callback raised"), "{results:?}");
    assert_eq!(result["is_error"], true);
    assert_eq!(result["api_error_status"], 400);
    assert_eq!(result["terminal_reason"], "api_error");
    let synthetic = frames
        .iter()
        .chain(std::iter::once(&result))
        .find(|frame| frame["type"] == "assistant" && frame["message"]["model"] == "<synthetic>");
    let synthetic = synthetic.expect("the synthetic API error message");
    assert_eq!(synthetic["is_api_error_message"], true);
    assert!(synthetic["message"]["content"][0]["text"].as_str().unwrap().starts_with("API Error: "));
}

#[test]
fn tool_results_carry_claude_codes_per_tool_shapes() {
    let workspace = Workspace::new();
    workspace.write("notes.txt", "one\ntwo\nthree\n");
    let server = scenario(json!([
        {"blocks": [
            {"type": "tool_use", "id": "toolu_read", "name": "Read", "input": {"file_path": "notes.txt", "offset": 2}},
            {"type": "tool_use", "id": "toolu_missing", "name": "Read", "input": {"file_path": "nope.txt"}}
        ]},
        {"blocks": [{"type": "tool_use", "id": "toolu_edit", "name": "Edit",
            "input": {"file_path": "notes.txt", "old_string": "two", "new_string": "TWO"}}]},
        {"blocks": [{"type": "tool_use", "id": "toolu_bash", "name": "Bash", "input": {"command": "echo out; echo err >&2"}}]},
        text_reply("Done.")
    ]));
    let mut host = Host::start(&workspace, &server, &["--permission-mode", "bypassPermissions"]);
    host.user(json!("Go"));
    host.until(|frame| frame["type"] == "result");
    let (code, frames) = host.finish();
    assert_eq!(code, 0);
    let result_of = |id: &str| {
        frames
            .iter()
            .find(|frame| frame["type"] == "user" && frame["message"]["content"][0]["tool_use_id"] == id)
            .unwrap_or_else(|| panic!("no user frame for {id}"))["tool_use_result"]
            .clone()
    };
    let read = result_of("toolu_read");
    assert_eq!(read["type"], "text");
    let file = &read["file"];
    assert!(file["filePath"].as_str().unwrap().ends_with("notes.txt"));
    assert_eq!(file["content"], "two\nthree");
    assert_eq!(file["numLines"], 2);
    assert_eq!(file["startLine"], 2);
    assert_eq!(file["totalLines"], 3);
    assert!(result_of("toolu_missing").as_str().unwrap().starts_with("Error: File does not exist"));
    let edit = result_of("toolu_edit");
    assert_eq!(edit["oldString"], "two");
    assert_eq!(edit["newString"], "TWO");
    assert_eq!(edit["originalFile"], "one\ntwo\nthree\n");
    let hunk = &edit["structuredPatch"][0];
    assert_eq!(hunk["oldStart"], 1);
    assert_eq!(hunk["lines"], json!([" one", "-two", "+TWO", " three"]));
    let bash = result_of("toolu_bash");
    assert_eq!(bash["stdout"], "out");
    assert_eq!(bash["stderr"], "err");
    assert_eq!(bash["interrupted"], false);
}

#[test]
fn an_image_block_reaches_either_provider() {
    let image = json!({"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="});
    let content = json!([{"type": "text", "text": "What is in this picture?"}, {"type": "image", "source": image}]);
    // Anthropic: the block as the SDK sent it.
    let workspace = Workspace::new();
    let server = scenario(json!([text_reply("A cat.")]));
    let mut host = Host::start(&workspace, &server, &[]);
    host.user(content.clone());
    assert_eq!(host.until(|frame| frame["type"] == "result")["result"], "A cat.");
    assert_eq!(host.finish().0, 0);
    let sent = &server.requests()[0].body["messages"][0]["content"];
    assert_eq!(sent[0]["text"], "What is in this picture?");
    assert_eq!(sent[1]["type"], "image");
    assert_eq!(sent[1]["source"], image);
    // OpenAI-compatible: a data URL part.
    let server = scenario(json!([text_reply("A cat.")]));
    let mut command = workspace.openai(&server);
    command
        .args(["--output-format", "stream-json", "--verbose", "--input-format", "stream-json"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped());
    let mut child = command.spawn().unwrap();
    let frame = json!({"type": "user", "message": {"role": "user", "content": content}});
    writeln!(child.stdin.take().unwrap(), "{frame}").unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let user = &server.requests()[0].body["messages"][1];
    assert_eq!(user["role"], "user");
    assert_eq!(user["content"][0], json!({"type": "text", "text": "What is in this picture?"}));
    assert_eq!(
        user["content"][1],
        json!({"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}})
    );
}

#[test]
fn agents_and_hooks_from_initialize_are_the_sessions() {
    let workspace = Workspace::new();
    let server = scenario(json!([
        {"blocks": [{"type": "tool_use", "id": "toolu_task", "name": "Task", "input": {
            "description": "Check it", "prompt": "Check the thing.", "subagent_type": "checker"}}]},
        text_reply("Checked: fine."),
        text_reply("The checker says fine.")
    ]));
    let mut host = Host::start(&workspace, &server, &[]);
    let agents = json!({"checker": {"description": "Checks things", "prompt": "You are the CHECKER-PROMPT.", "tools": ["Read"]}});
    let hooks = json!({"UserPromptSubmit": [{"matcher": null, "hookCallbackIds": ["hook_0"]}]});
    host.send(json!({"type": "control_request", "request_id": "init", "request": {"subtype": "initialize", "hooks": hooks, "agents": agents}}));
    let init = host.response_to("init");
    let names: Vec<&str> = init["response"]["response"]["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|agent| agent["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"checker"), "{names:?}");
    host.user(json!("Run the checker"));
    // The host's UserPromptSubmit callback is asked first; its context reaches the model.
    let callback = host.until(|frame| frame["type"] == "control_request");
    assert_eq!(callback["request"]["subtype"], "hook_callback");
    assert_eq!(callback["request"]["callback_id"], "hook_0");
    assert_eq!(callback["request"]["input"]["prompt"], "Run the checker");
    let id = callback["request_id"].as_str().unwrap();
    host.send(json!({"type": "control_response", "response": {"subtype": "success", "request_id": id, "response":
        {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "HOST-CONTEXT"}}}}));
    let result = host.until(|frame| frame["type"] == "result");
    assert_eq!(result["result"], "The checker says fine.");
    assert_eq!(host.finish().0, 0);
    let requests = server.requests();
    assert!(requests[0].body["messages"].to_string().contains("HOST-CONTEXT"));
    let subagent_system = requests[1].body["system"].to_string();
    assert!(subagent_system.contains("CHECKER-PROMPT"), "{subagent_system}");
}

/// A host's own uuid names the prompt: `--replay-user-messages` prints it back, a dry `rewind_files` says what
/// would change without changing it, the real one puts the file back, and an unknown uuid is a clear error.
#[test]
fn rewind_files_by_the_hosts_uuid_dry_and_for_real() {
    let workspace = Workspace::new();
    let notes = workspace.write("notes.txt", "before\n");
    let server = FakeServer::spawn(
        Scenario::from_json(
            &json!({"replies": [
                {"blocks": [{"type": "tool_use", "id": "r1", "name": "Read", "input": {"file_path": "notes.txt"}}]},
                {"blocks": [{"type": "tool_use", "id": "w1", "name": "Write",
                             "input": {"file_path": "notes.txt", "content": "after\nand more\n"}}]},
                {"blocks": [{"type": "text", "text": "Written."}]},
            ]})
            .to_string(),
        )
        .unwrap(),
    )
    .unwrap();
    let mut host = Host::start(&workspace, &server, &["--permission-mode", "acceptEdits", "--replay-user-messages"]);
    host.send(json!({"type": "user", "uuid": "host-uuid-1", "session_id": "", "parent_tool_use_id": null,
                     "message": {"role": "user", "content": "write the notes"}}));
    let replay = host.until(|frame| frame["type"] == "user" && frame["isReplay"] == true);
    assert_eq!(replay["uuid"], "host-uuid-1");
    assert_eq!(replay["message"]["content"], "write the notes");
    host.until(|frame| frame["type"] == "result");
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "after\nand more\n");

    let dry = json!({"subtype": "rewind_files", "user_message_id": "host-uuid-1", "dry_run": true});
    host.send(json!({"type": "control_request", "request_id": "r1", "request": dry}));
    let answer = host.response_to("r1");
    let response = &answer["response"]["response"];
    assert_eq!(response["canRewind"], true, "{answer}");
    assert_eq!(response["filesChanged"], json!([notes.display().to_string()]), "{answer}");
    assert_eq!((response["insertions"].as_u64(), response["deletions"].as_u64()), (Some(1), Some(2)), "{answer}");
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "after\nand more\n", "a dry run changes nothing");

    host.send(json!({"type": "control_request", "request_id": "r2",
                     "request": {"subtype": "rewind_files", "user_message_id": "host-uuid-1"}}));
    let answer = host.response_to("r2");
    assert_eq!(answer["response"]["subtype"], "success", "{answer}");
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "before\n");

    host.send(json!({"type": "control_request", "request_id": "r3",
                     "request": {"subtype": "rewind_files", "user_message_id": "nobody"}}));
    let answer = host.response_to("r3");
    assert_eq!(answer["response"]["subtype"], "error", "{answer}");
    assert!(answer["response"]["error"].as_str().unwrap().contains("No file checkpoint"), "{answer}");
    let (code, _) = host.finish();
    assert_eq!(code, 0);
}

/// Issue 29: Grep's `tool_use_result` is Claude Code's object (it was the plain text).
#[test]
fn grep_results_carry_claude_codes_object() {
    let workspace = Workspace::new();
    workspace.write("notes.txt", "needle\nhay\n");
    let server = scenario(json!([
        {"blocks": [{"type": "tool_use", "id": "toolu_grep", "name": "Grep", "input": {"pattern": "needle"}}]},
        text_reply("Done.")
    ]));
    let mut host = Host::start(&workspace, &server, &[]);
    host.user(json!("Go"));
    host.until(|frame| frame["type"] == "result");
    let (code, frames) = host.finish();
    assert_eq!(code, 0);
    let frame = frames
        .iter()
        .find(|frame| frame["type"] == "user" && frame["message"]["content"][0]["tool_use_id"] == "toolu_grep")
        .expect("the Grep result's frame");
    let result = &frame["tool_use_result"];
    assert_eq!(result["mode"], "files_with_matches", "{result}");
    assert_eq!(result["numFiles"], 1);
    assert!(result["filenames"][0].as_str().unwrap().ends_with("notes.txt"), "{result}");
}

/// Found by the fifty-second red-team round: answers were matched to calls by the model's tool_use id, so the
/// host's late answer to a prompt of an interrupted turn approved the next turn's call that reused the id (and ran
/// it unsandboxed). A prompt the session gave up is cancelled, and an answer counts only for the request it
/// answers.
#[test]
fn a_late_answer_to_a_cancelled_prompt_approves_nothing() {
    let workspace = Workspace::new();
    let server = scenario(json!([
        {"blocks": [{"type": "tool_use", "id": "toolu_same", "name": "Bash", "input": {"command": "touch first.txt"}}]},
        {"blocks": [{"type": "tool_use", "id": "toolu_same", "name": "Bash", "input": {"command": "touch second.txt"}}]},
        text_reply("Done.")
    ]));
    let mut host = Host::start(&workspace, &server, &["--permission-prompt-tool", "stdio"]);
    host.user(json!("one"));
    let first = host.until(|frame| frame["type"] == "control_request");
    let first_id = first["request_id"].as_str().unwrap().to_owned();
    host.send(json!({"type": "control_request", "request_id": "stop", "request": {"subtype": "interrupt"}}));
    host.until(|frame| frame["type"] == "result");
    let cancelled =
        host.seen.iter().any(|frame| frame["type"] == "control_cancel_request" && frame["request_id"] == first_id);
    assert!(cancelled, "the host is told the prompt is gone: {:?}", host.seen.iter().map(kind).collect::<Vec<_>>());
    host.user(json!("two"));
    let second =
        host.until(|frame| frame["type"] == "control_request" && frame["request"]["subtype"] == "can_use_tool");
    assert_ne!(second["request_id"], first_id);
    host.send(json!({"type": "control_response", "response": {"subtype": "success", "request_id": first_id,
        "response": {"behavior": "allow", "updatedInput": {"command": "touch first.txt"}}}}));
    host.send(
        json!({"type": "control_response", "response": {"subtype": "success", "request_id": second["request_id"],
        "response": {"behavior": "deny", "message": "no"}}}),
    );
    host.until(|frame| frame["type"] == "result");
    host.finish();
    assert!(!workspace.path().join("second.txt").exists(), "the late answer approved the next turn's call");
    assert!(!workspace.path().join("first.txt").exists());
}

/// An empty prompt (the SDK's documented `query({prompt: "", options: {resume}})` before a rewind) asks the model
/// nothing — the API refuses an empty message — and the turn ends with a plain result at once.
#[test]
fn an_empty_prompt_asks_the_model_nothing() {
    let workspace = Workspace::new();
    let server = scenario(json!([text_reply("never")]));
    let mut host = Host::start(&workspace, &server, &[]);
    host.user(json!(""));
    let result = host.until(|frame| frame["type"] == "result");
    assert_eq!(result["subtype"], "success", "{result}");
    assert_eq!(result["num_turns"], 0);
    let (code, _) = host.finish();
    assert_eq!(code, 0);
    assert!(server.requests().is_empty());
}
