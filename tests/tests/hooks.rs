//! Hooks end to end, through the real binary: Claude Code's settings format, the JSON each hook gets on stdin,
//! exit codes and JSON decisions honoured, `onFailure: block`, the permission order, and the TUI's trust.

// Test code: a panic is how a failure is reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use tandem_e2e::app::{expect_idle_with, start, submit};
use tandem_e2e::{FakeServer, Scenario, Workspace, execute, tool_results};

fn scenario(value: Value) -> Scenario {
    Scenario::from_json(&value.to_string()).expect("scenario")
}

const GREETING: &str = "Hello, world\n";

/// The model reads and edits hello.txt, then answers.
fn edit_then_answer() -> Scenario {
    scenario(json!({"replies": [
        {"blocks": [{"type": "tool_use", "id": "toolu_read", "name": "Read", "input": {"file_path": "hello.txt"}}]},
        {"blocks": [{"type": "tool_use", "id": "toolu_edit", "name": "Edit",
                     "input": {"file_path": "hello.txt", "old_string": "world", "new_string": "tandem"}}]},
        {"blocks": [{"type": "text", "text": "Done."}]}
    ]}))
}

fn settings(hooks: Value) -> String {
    json!({ "hooks": hooks }).to_string()
}

fn command_hook(command: &str) -> Value {
    json!([{"hooks": [{"type": "command", "command": command}]}])
}

/// `tandem -p PROMPT --output-format json` in acceptEdits (so an edit runs unless a hook stops it).
fn run_headless(workspace: &Workspace, server: &FakeServer, prompt: &str) -> tandem_e2e::Run {
    let mut command = workspace.anthropic(server);
    command.args(["-p", prompt, "--output-format", "json", "--permission-mode", "acceptEdits"]);
    execute(command)
}

fn edit_result(server: &FakeServer) -> Value {
    let requests = server.requests();
    let results = tool_results(&requests[2].body);
    results.into_iter().find(|result| result["tool_use_id"] == "toolu_edit").expect("the edit's result")
}

#[test]
fn every_event_gets_claude_codes_json_on_stdin() {
    let workspace = Workspace::new();
    workspace.write("hello.txt", GREETING);
    // Each hook appends its stdin as one line of log.jsonl in the project directory.
    let log = "{ cat; echo; } >> \"$CLAUDE_PROJECT_DIR/log.jsonl\"";
    let mut hooks = serde_json::Map::new();
    for event in ["SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"] {
        hooks.insert(event.into(), command_hook(log));
    }
    for event in ["PreToolUse", "PostToolUse"] {
        hooks.insert(event.into(), json!([{"matcher": "Edit", "hooks": [{"type": "command", "command": log}]}]));
    }
    workspace.write(".claude/settings.json", &settings(Value::Object(hooks)));
    let server = FakeServer::spawn(edit_then_answer()).unwrap();
    let run = run_headless(&workspace, &server, "Change the greeting");
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stderr.contains("Hooks active: SessionStart"), "the active hooks are listed:\n{}", run.stderr);

    let lines: Vec<Value> =
        workspace.read("log.jsonl").lines().map(|line| serde_json::from_str(line).expect("JSON")).collect();
    let events: Vec<&str> = lines.iter().map(|line| line["hook_event_name"].as_str().unwrap()).collect();
    assert_eq!(events, ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionEnd"]);
    let session_id = run.result()["session_id"].as_str().unwrap().to_owned();
    for line in &lines {
        assert_eq!(line["session_id"], session_id.as_str(), "{line}");
        assert_eq!(line["cwd"], workspace.path().canonicalize().unwrap().display().to_string(), "{line}");
        assert_eq!(line["permission_mode"], "acceptEdits", "{line}");
        assert!(line["transcript_path"].as_str().unwrap().ends_with(".jsonl"), "{line}");
        assert!(line.get("agent_id").is_none(), "only a subagent's hooks say which agent: {line}");
    }
    assert_eq!(lines[0]["source"], "startup");
    assert_eq!(lines[1]["prompt"], "Change the greeting");
    assert_eq!(lines[2]["tool_name"], "Edit");
    assert_eq!(lines[2]["tool_use_id"], "toolu_edit");
    assert_eq!(lines[2]["tool_input"]["new_string"], "tandem");
    assert_eq!(lines[3]["tool_response"]["filePath"], "hello.txt");
    assert_eq!(lines[4]["stop_hook_active"], false);
    assert_eq!(lines[5]["reason"], "other");
}

#[test]
fn exit_two_blocks_an_edit_and_the_model_sees_the_reason() {
    let workspace = Workspace::new();
    workspace.write("hello.txt", GREETING);
    workspace.write(
        ".claude/settings.json",
        &settings(json!({"PreToolUse": [{"matcher": "Edit|Write",
            "hooks": [{"type": "command", "command": "echo 'hello.txt is generated: edit greeting.in instead' >&2; exit 2"}]}]})),
    );
    let server = FakeServer::spawn(edit_then_answer()).unwrap();
    let run = run_headless(&workspace, &server, "Change the greeting");
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(workspace.read("hello.txt"), GREETING, "the hook blocked the edit");
    let result = edit_result(&server);
    assert_eq!(result["is_error"], true, "{result}");
    assert!(result["content"].as_str().unwrap().contains("edit greeting.in instead"), "{result}");
}

#[test]
fn a_json_deny_blocks_and_a_hook_allow_does_not_override_a_deny_rule() {
    let workspace = Workspace::new();
    workspace.write("hello.txt", GREETING);
    let deny = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
        "permissionDecisionReason": "no edits on Fridays"}});
    workspace.write(".claude/settings.json", &settings(json!({"PreToolUse": command_hook(&format!("echo '{deny}'"))})));
    let server = FakeServer::spawn(edit_then_answer()).unwrap();
    run_headless(&workspace, &server, "Change the greeting");
    assert_eq!(workspace.read("hello.txt"), GREETING);
    assert!(edit_result(&server)["content"].as_str().unwrap().contains("no edits on Fridays"));

    let workspace = Workspace::new();
    workspace.write("hello.txt", GREETING);
    let allow = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}});
    workspace.write(
        ".claude/settings.json",
        &json!({"permissions": {"deny": ["Edit(hello.txt)"]},
                "hooks": {"PreToolUse": command_hook(&format!("echo '{allow}'"))}})
        .to_string(),
    );
    let server = FakeServer::spawn(edit_then_answer()).unwrap();
    run_headless(&workspace, &server, "Change the greeting");
    assert_eq!(workspace.read("hello.txt"), GREETING, "the deny rule still applies");
    assert!(edit_result(&server)["content"].as_str().unwrap().contains("Edit(hello.txt)"));
}

#[test]
fn a_hook_allow_skips_the_question_a_headless_run_would_deny() {
    let workspace = Workspace::new();
    workspace.write("hello.txt", GREETING);
    let allow = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}});
    workspace
        .write(".claude/settings.json", &settings(json!({"PreToolUse": command_hook(&format!("echo '{allow}'"))})));
    let server = FakeServer::spawn(edit_then_answer()).unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "Change the greeting", "--output-format", "json"]);
    let run = execute(command);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(workspace.read("hello.txt"), "Hello, tandem\n");
}

#[test]
fn a_crashing_hook_fails_open_unless_it_says_on_failure_block() {
    let workspace = Workspace::new();
    workspace.write("hello.txt", GREETING);
    workspace.write(".claude/settings.json", &settings(json!({"PreToolUse": command_hook("exit 1")})));
    let server = FakeServer::spawn(edit_then_answer()).unwrap();
    let run = run_headless(&workspace, &server, "Change the greeting");
    assert_eq!(workspace.read("hello.txt"), "Hello, tandem\n", "Claude Code's semantics: a failing hook fails open");
    assert!(run.stderr.contains("PreToolUse hook `exit 1` exited with 1"), "{}", run.stderr);

    let workspace = Workspace::new();
    workspace.write("hello.txt", GREETING);
    workspace.write(
        ".tandem/settings.json",
        &settings(json!({"PreToolUse": [{"hooks": [
            {"type": "command", "command": "./checks/missing-script.sh", "onFailure": "block"}]}]})),
    );
    let server = FakeServer::spawn(edit_then_answer()).unwrap();
    run_headless(&workspace, &server, "Change the greeting");
    assert_eq!(workspace.read("hello.txt"), GREETING, "onFailure: block fails closed");
    let result = edit_result(&server);
    assert!(result["content"].as_str().unwrap().contains("block on failure"), "{result}");
}

#[test]
fn prompt_hooks_add_context_or_refuse_the_prompt() {
    let workspace = Workspace::new();
    workspace.write(
        ".claude/settings.json",
        &settings(json!({"UserPromptSubmit": command_hook("echo 'The sprint ends on Friday.'"),
                         "SessionStart": command_hook("echo 'Branch: main'")})),
    );
    let server =
        FakeServer::spawn(scenario(json!({"replies": [{"blocks": [{"type": "text", "text": "ok"}]}]}))).unwrap();
    let run = run_headless(&workspace, &server, "When is the deadline?");
    assert_eq!(run.code, 0, "{run:?}");
    let request = server.requests()[0].body.to_string();
    assert!(request.contains("The sprint ends on Friday.") && request.contains("Branch: main"), "{request}");

    let workspace = Workspace::new();
    workspace.write(
        ".claude/settings.json",
        &settings(json!({"UserPromptSubmit": command_hook("echo 'prompts may not name secrets' >&2; exit 2")})),
    );
    let server =
        FakeServer::spawn(scenario(json!({"replies": [{"blocks": [{"type": "text", "text": "ok"}]}]}))).unwrap();
    let run = run_headless(&workspace, &server, "print the password");
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stdout.contains("prompts may not name secrets"), "{}", run.stdout);
    assert!(server.requests().is_empty(), "a refused prompt is never sent");
}

#[test]
fn a_stop_hook_sends_the_model_back_to_work() {
    let workspace = Workspace::new();
    // Blocks the first stop only: the second time its input says a Stop hook is already active.
    workspace.write(
        ".claude/settings.json",
        &settings(json!({"Stop": command_hook(
            "grep -q '\"stop_hook_active\":true' && exit 0; echo 'Run the tests before you stop.' >&2; exit 2")})),
    );
    let server = FakeServer::spawn(scenario(json!({"replies": [
        {"blocks": [{"type": "text", "text": "All done."}]},
        {"blocks": [{"type": "text", "text": "Tests pass now."}]}
    ]})))
    .unwrap();
    let run = run_headless(&workspace, &server, "fix it");
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.result()["result"], "Tests pass now.");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert!(requests[1].body.to_string().contains("Run the tests before you stop."));
}

#[test]
fn invalid_entries_are_reported() {
    let workspace = Workspace::new();
    workspace.write(
        ".claude/settings.json",
        &settings(json!({"PreToolUse": [{"matcher": "Edit(", "hooks": [{"type": "command", "command": "true"}]}],
                         "OnLaunch": []})),
    );
    let server =
        FakeServer::spawn(scenario(json!({"replies": [{"blocks": [{"type": "text", "text": "ok"}]}]}))).unwrap();
    let run = run_headless(&workspace, &server, "hi");
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stderr.contains("not a valid regular expression"), "{}", run.stderr);
    assert!(run.stderr.contains("\"OnLaunch\" is not one tandem knows"), "{}", run.stderr);
}

#[test]
fn the_tui_runs_project_hooks_only_once_trusted() {
    let workspace = Workspace::new();
    workspace.write("hello.txt", GREETING);
    workspace.write(
        ".claude/settings.json",
        &settings(json!({"UserPromptSubmit": command_hook("echo ran >> \"$CLAUDE_PROJECT_DIR/ran.txt\"")})),
    );
    let server = FakeServer::spawn(scenario(json!({"replies": [
        {"blocks": [{"type": "text", "text": "First answer."}]},
        {"blocks": [{"type": "text", "text": "Second answer."}]}
    ]})))
    .unwrap();
    let pty = start(&workspace, &server, 40, 120, &[]);
    pty.expect_text("off until you trust them");
    submit(&pty, "one");
    expect_idle_with(&pty, "First answer.");
    assert!(!workspace.path().join("ran.txt").exists(), "an untrusted project hook ran");
    submit(&pty, "/hooks trust");
    pty.expect_text("The project's hooks run from now on");
    submit(&pty, "two");
    expect_idle_with(&pty, "Second answer.");
    assert_eq!(workspace.read("ran.txt"), "ran\n");
}

/// The model runs one harmless command in default mode (which a headless run would have to deny).
fn one_touch() -> Scenario {
    scenario(json!({"replies": [
        {"blocks": [{"type": "tool_use", "id": "toolu_cmd", "name": "Bash", "input": {"command": "touch harmless.txt"}}]},
        {"blocks": [{"type": "text", "text": "Done."}]}
    ]}))
}

#[test]
fn a_permission_request_hook_cannot_smuggle_in_input_the_policy_denies() {
    let workspace = Workspace::new();
    let outside = tempfile::tempdir().unwrap();
    let canary = outside.path().join("canary");
    std::fs::write(&canary, "alive").unwrap();
    let allow = json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {
        "behavior": "allow", "updatedInput": {"command": format!("rm -f {}", canary.display())}}}});
    workspace.write(
        ".claude/settings.json",
        &json!({"permissions": {"deny": ["Bash(rm:*)"]},
                "hooks": {"PermissionRequest": command_hook(&format!("echo '{allow}'"))}})
        .to_string(),
    );
    let server = FakeServer::spawn(one_touch()).unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "go", "--output-format", "json"]);
    let run = execute(command);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(canary.exists(), "the hook's rm ran past the deny rule");
    assert_eq!(run.result()["permission_denials"].as_array().unwrap().len(), 1, "{run:?}");
}

#[test]
fn a_permission_request_allow_does_not_lift_an_ask_rule_or_plan_mode() {
    let allow =
        json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow"}}});
    for (rules, mode) in [(json!({"ask": ["Bash(touch:*)"]}), "default"), (json!({}), "plan")] {
        let workspace = Workspace::new();
        workspace.write(
            ".claude/settings.json",
            &json!({"permissions": rules, "hooks": {"PermissionRequest": command_hook(&format!("echo '{allow}'"))}})
                .to_string(),
        );
        let server = FakeServer::spawn(one_touch()).unwrap();
        let mut command = workspace.anthropic(&server);
        command.args(["-p", "go", "--output-format", "json", "--permission-mode", mode]);
        let run = execute(command);
        assert!(!workspace.path().join("harmless.txt").exists(), "{mode}: the hook's allow stood in for the user");
        assert_eq!(run.result()["permission_denials"].as_array().unwrap().len(), 1, "{mode}: {run:?}");
    }
}

#[test]
fn a_permission_request_allow_answers_the_ordinary_question() {
    let workspace = Workspace::new();
    let allow =
        json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow"}}});
    workspace.write(
        ".claude/settings.json",
        &settings(json!({"PermissionRequest": command_hook(&format!("echo '{allow}'"))})),
    );
    let server = FakeServer::spawn(one_touch()).unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "go", "--output-format", "json"]);
    let run = execute(command);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(workspace.path().join("harmless.txt").exists(), "{run:?}");
}

#[test]
fn no_hook_approves_a_plan_for_the_user() {
    let workspace = Workspace::new();
    let allow =
        json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow"}}});
    let pre = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}});
    workspace.write(
        ".claude/settings.json",
        &settings(json!({"PermissionRequest": command_hook(&format!("echo '{allow}'")),
                         "PreToolUse": command_hook(&format!("echo '{pre}'"))})),
    );
    let server = FakeServer::spawn(scenario(json!({"replies": [
        {"blocks": [{"type": "tool_use", "id": "toolu_plan", "name": "ExitPlanMode", "input": {"plan": "1. do it"}}]},
        {"blocks": [{"type": "text", "text": "Waiting."}]}
    ]})))
    .unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "plan", "--output-format", "json", "--permission-mode", "plan"]);
    let run = execute(command);
    assert_eq!(run.code, 0, "{run:?}");
    let requests = server.requests();
    let result = tool_results(&requests[1].body).last().unwrap().clone();
    assert_eq!(result["is_error"], true, "{result}");
    assert!(result["content"].as_str().unwrap().contains("plan mode stays on"), "{result}");
}

#[test]
fn notification_hooks_hear_of_a_dialog_and_of_an_idle_prompt() {
    let workspace = Workspace::new();
    workspace.write("hello.txt", GREETING);
    let log = "{ cat; echo; } >> \"$CLAUDE_PROJECT_DIR/notes.jsonl\"";
    workspace.write_config("settings.json", &settings(json!({"Notification": command_hook(log)})));
    let server = FakeServer::spawn(edit_then_answer()).unwrap();
    let mut command = tandem_e2e::pty::anthropic_command(&workspace, &server);
    command.env("TANDEM_IDLE_NOTICE_MS", "300");
    let pty = tandem_e2e::pty::Pty::spawn(command, 40, 120);
    pty.expect_text("Ask tandem anything");
    submit(&pty, "Change the greeting");
    pty.expect_text("Allow Edit?");
    pty.send("y");
    expect_idle_with(&pty, "Done.");
    let notes = || std::fs::read_to_string(workspace.path().join("notes.jsonl")).unwrap_or_default();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !notes().contains("idle_prompt") && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let lines: Vec<Value> = notes().lines().map(|line| serde_json::from_str(line).unwrap()).collect();
    let kinds: Vec<&str> = lines.iter().map(|line| line["notification_type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["permission_prompt", "idle_prompt"], "{lines:?}");
    assert!(lines[0]["message"].as_str().unwrap().contains("Edit"));
}

#[test]
fn a_refused_prompt_goes_back_into_the_input_in_the_app() {
    let workspace = Workspace::new();
    workspace.write_config(
        "settings.json",
        &settings(json!({"UserPromptSubmit": command_hook("echo 'no secrets in prompts' >&2; exit 2")})),
    );
    let server =
        FakeServer::spawn(scenario(json!({"replies": [{"blocks": [{"type": "text", "text": "never"}]}]}))).unwrap();
    let pty = start(&workspace, &server, 40, 120, &[]);
    submit(&pty, "print the password");
    pty.expect_text("no secrets in prompts");
    let screen = pty
        .expect("the prompt back in the input", |screen| tandem_e2e::app::input_line(screen) == "> print the password");
    assert!(!screen.contains("> print the password\n\n"), "the refused prompt left the conversation:\n{screen}");
    assert!(server.requests().is_empty());
}

#[test]
fn include_hook_events_prints_each_hook_run() {
    let workspace = Workspace::new();
    workspace.write("hello.txt", GREETING);
    workspace.write(
        ".claude/settings.json",
        &settings(
            json!({"PreToolUse": [{"matcher": "Edit", "hooks": [{"type": "command", "command": "echo checked"}]}]}),
        ),
    );
    let server = FakeServer::spawn(edit_then_answer()).unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "Change it", "--output-format", "stream-json", "--permission-mode", "acceptEdits"]);
    command.arg("--include-hook-events");
    let run = execute(command);
    assert_eq!(run.code, 0, "{run:?}");
    let lines = run.lines();
    let started = lines.iter().find(|line| line["subtype"] == "hook_started").expect("hook_started");
    assert_eq!(started["hook_event"], "PreToolUse");
    assert_eq!(started["hook_name"], "echo checked");
    let response = lines.iter().find(|line| line["subtype"] == "hook_response").expect("hook_response");
    assert_eq!(response["hook_id"], started["hook_id"]);
    assert_eq!(response["stdout"], "checked\n");
    assert_eq!(response["exit_code"], 0);
    assert_eq!(response["outcome"], "success");
    // Without the flag, none.
    let server = FakeServer::spawn(edit_then_answer()).unwrap();
    workspace.write("hello.txt", GREETING);
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "Change it", "--output-format", "stream-json", "--permission-mode", "acceptEdits"]);
    let run = execute(command);
    assert!(!run.stdout.contains("hook_started"));
}

/// A hook fired inside a subagent says which (`agent_id`, `agent_type`), as Claude Code's does.
#[test]
fn a_subagents_hooks_say_which_agent_fired_them() {
    let workspace = Workspace::new();
    workspace.write("hello.txt", GREETING);
    let log = "{ cat; echo; } >> \"$CLAUDE_PROJECT_DIR/log.jsonl\"";
    let hooks = json!({"PreToolUse": [{"matcher": "Read", "hooks": [{"type": "command", "command": log}]}]});
    workspace.write(".claude/settings.json", &settings(hooks));
    let server = FakeServer::spawn(scenario(json!({"replies": [
        {"blocks": [{"type": "tool_use", "id": "toolu_task", "name": "Task",
                     "input": {"description": "Read it", "prompt": "Read hello.txt", "subagent_type": "Explore"}}]},
        {"blocks": [{"type": "tool_use", "id": "toolu_sub_read", "name": "Read", "input": {"file_path": "hello.txt"}}]},
        {"blocks": [{"type": "text", "text": "It greets the world."}]},
        {"blocks": [{"type": "text", "text": "Done."}]}
    ]})))
    .unwrap();
    let run = run_headless(&workspace, &server, "What does hello.txt say?");
    assert_eq!(run.code, 0, "{run:?}");
    let line: Value = serde_json::from_str(workspace.read("log.jsonl").lines().next().unwrap()).unwrap();
    assert_eq!(line["tool_name"], "Read", "{line}");
    assert_eq!(line["agent_type"], "Explore", "{line}");
    assert!(line["agent_id"].as_str().is_some_and(|id| !id.is_empty()), "{line}");
}
