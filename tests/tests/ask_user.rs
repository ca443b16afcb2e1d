//! The tools that ask the user, through the real binary: AskUserQuestion as a picker in the TUI (denied with a
//! clear reason headless), and plan mode's ExitPlanMode as a plan to approve.

// Test code: a panic is how a failure is reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use tandem_e2e::app::{expect_idle_with, start, status_line, submit};
use tandem_e2e::pty::keys;
use tandem_e2e::{FakeServer, Scenario, Workspace, execute, tool_results};

fn scenario(value: Value) -> Scenario {
    Scenario::from_json(&value.to_string()).expect("scenario")
}

fn questions() -> Value {
    json!({"type": "tool_use", "id": "toolu_q", "name": "AskUserQuestion", "input": {"questions": [
        {"question": "Which database should the cache use?", "header": "Database", "multiSelect": false,
         "options": [{"label": "SQLite", "description": "One file"}, {"label": "Postgres", "description": "A server"}]},
        {"question": "Which platforms?", "header": "Platforms", "multiSelect": true,
         "options": [{"label": "Linux", "description": ""}, {"label": "macOS", "description": ""},
                     {"label": "Windows", "description": ""}]}
    ]}})
}

fn last_result(server: &FakeServer) -> Value {
    let requests = server.requests();
    tool_results(&requests.last().unwrap().body).last().unwrap().clone()
}

#[test]
fn questions_are_answered_in_a_picker() {
    let workspace = Workspace::new();
    let server = FakeServer::spawn(scenario(json!({"replies": [
        {"blocks": [questions()]},
        {"blocks": [{"type": "text", "text": "Postgres it is."}]}
    ]})))
    .unwrap();
    let pty = start(&workspace, &server, 40, 100, &[]);
    submit(&pty, "add a cache");
    let screen = pty.expect_text("The model asks 1/2");
    assert!(screen.contains("Which database should the cache use?") && screen.contains("2. Postgres"), "{screen}");
    pty.send(keys::DOWN);
    pty.send(keys::ENTER);
    pty.expect_text("Which platforms?");
    pty.send(" ");
    pty.send(keys::DOWN);
    pty.send(" ");
    pty.send(keys::ENTER);
    expect_idle_with(&pty, "Postgres it is.");
    let result = last_result(&server);
    let text = result["content"].as_str().unwrap();
    assert!(text.contains("\"Which database should the cache use?\" = \"Postgres\""), "{text}");
    assert!(text.contains("\"Which platforms?\" = \"Linux, macOS\""), "{text}");
}

#[test]
fn an_answer_of_ones_own_is_typed() {
    let workspace = Workspace::new();
    let server = FakeServer::spawn(scenario(json!({"replies": [
        {"blocks": [questions()]},
        {"blocks": [{"type": "text", "text": "Understood."}]}
    ]})))
    .unwrap();
    let pty = start(&workspace, &server, 40, 100, &[]);
    submit(&pty, "add a cache");
    pty.expect_text("The model asks 1/2");
    pty.send("3");
    pty.expect_text("Your answer");
    pty.send("Redis");
    pty.send(keys::ENTER);
    pty.expect_text("Which platforms?");
    pty.send("1");
    pty.send(keys::ENTER);
    expect_idle_with(&pty, "Understood.");
    let text = last_result(&server)["content"].as_str().unwrap().to_owned();
    assert!(text.contains("= \"Redis\"") && text.contains("= \"Linux\""), "{text}");
}

#[test]
fn headless_the_question_is_denied_with_a_reason() {
    let workspace = Workspace::new();
    let server = FakeServer::spawn(scenario(json!({"replies": [
        {"blocks": [questions()]},
        {"blocks": [{"type": "text", "text": "I'll pick SQLite."}]}
    ]})))
    .unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "add a cache", "--output-format", "json"]);
    let run = execute(command);
    assert_eq!(run.code, 0, "{run:?}");
    let result = last_result(&server);
    assert_eq!(result["is_error"], true);
    assert!(result["content"].as_str().unwrap().contains("nobody can answer"), "{result}");
}

#[test]
fn an_approved_plan_ends_plan_mode_and_a_rejected_one_keeps_it() {
    let workspace = Workspace::new();
    let plan = |id: &str| json!({"type": "tool_use", "id": id, "name": "ExitPlanMode", "input": {"plan": "## Plan\n1. Add the **cache**\n2. Test it"}});
    let server = FakeServer::spawn(scenario(json!({"replies": [
        {"blocks": [plan("toolu_p1")]},
        {"blocks": [{"type": "text", "text": "I'll revise it."}]},
        {"blocks": [plan("toolu_p2")]},
        {"blocks": [{"type": "text", "text": "Implementing."}]}
    ]})))
    .unwrap();
    let pty = start(&workspace, &server, 40, 100, &["--permission-mode", "plan"]);
    submit(&pty, "plan a cache");
    let screen = pty.expect_text("Approve the plan?");
    assert!(screen.contains("Add the cache") && screen.contains("approve and accept edits"), "{screen}");
    pty.send("f");
    pty.send("use Redis");
    pty.send(keys::ENTER);
    let screen = expect_idle_with(&pty, "I'll revise it.");
    assert!(status_line(&screen).contains("plan mode"), "{screen}");
    let rejected = last_result(&server)["content"].as_str().unwrap().to_owned();
    assert!(rejected.contains("plan mode stays on") && rejected.contains("use Redis"), "{rejected}");

    submit(&pty, "again");
    pty.expect_text("Approve the plan?");
    pty.send("a");
    let screen = expect_idle_with(&pty, "Implementing.");
    assert!(status_line(&screen).contains("accept edits"), "{screen}");
    assert!(last_result(&server)["content"].as_str().unwrap().contains("plan mode is off"));
}

#[test]
fn the_picker_keeps_its_place_after_a_resize_and_a_suspend() {
    let workspace = Workspace::new();
    let server = FakeServer::spawn(scenario(json!({"replies": [
        {"blocks": [questions()]},
        {"blocks": [{"type": "text", "text": "Postgres on macOS."}]}
    ]})))
    .unwrap();
    let pty = start(&workspace, &server, 40, 100, &[]);
    submit(&pty, "add a cache");
    pty.expect_text("The model asks 1/2");
    pty.send(keys::DOWN);
    pty.resize(24, 80);
    pty.expect("the picker at 80 columns", |screen| {
        screen.contains("❯ 2. Postgres") && screen.contains("The model asks 1/2")
    });
    tandem_e2e::app::suspend_and_continue(&pty);
    pty.expect("the picker back after fg", |screen| screen.contains("❯ 2. Postgres"));
    pty.send(keys::ENTER);
    pty.expect_text("Which platforms?");
    pty.send("2");
    pty.send(keys::ENTER);
    expect_idle_with(&pty, "Postgres on macOS.");
    let text = last_result(&server)["content"].as_str().unwrap().to_owned();
    assert!(text.contains("= \"Postgres\"") && text.contains("= \"macOS\""), "{text}");
}
