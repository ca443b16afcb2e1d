//! Extended thinking and effort reach the request as each provider and model takes them, and what a model
//! doesn't take is said instead of sent.

// Test code: a panic is how a failure is reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;
use tandem_e2e::{FakeServer, Scenario, Workspace, execute};

fn thinking_then_text() -> Scenario {
    Scenario::from_json(
        &json!({"replies": [{"blocks": [
            {"type": "thinking", "thinking": "Let me think.", "signature": "sig_1"},
            {"type": "text", "text": "Thought it through."}
        ]}]})
        .to_string(),
    )
    .unwrap()
}

#[test]
fn a_thinking_budget_is_sent_with_room_for_the_answer_and_the_interleaved_beta() {
    let workspace = Workspace::new();
    let server = FakeServer::spawn(thinking_then_text()).unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "think", "--output-format", "stream-json", "--model", "claude-sonnet-4-5"]);
    command.args(["--max-thinking-tokens", "8000", "--betas", "my-beta-2026"]);
    let run = execute(command);
    assert_eq!(run.code, 0, "{run:?}");
    let request = &server.requests()[0];
    assert_eq!(request.body["thinking"], json!({"type": "enabled", "budget_tokens": 8000}));
    assert!(request.body["max_tokens"].as_u64().unwrap() > 8000);
    assert_eq!(request.headers["anthropic-beta"], "interleaved-thinking-2025-05-14,my-beta-2026");
    assert!(request.headers["user-agent"].starts_with("tandem/"), "{:?}", request.headers);
    // The thinking block comes back to the SDK as Claude Code sends it.
    let assistant = run.lines().into_iter().find(|line| line["type"] == "assistant").unwrap();
    assert_eq!(
        assistant["message"]["content"][0],
        json!({"type": "thinking", "thinking": "Let me think.", "signature": "sig_1"})
    );
}

#[test]
fn effort_and_adaptive_thinking_go_to_a_model_that_takes_them() {
    let workspace = Workspace::new();
    let server = FakeServer::spawn(thinking_then_text()).unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "think", "--model", "claude-opus-4-7", "--thinking", "adaptive", "--effort", "xhigh"]);
    command.args(["--thinking-display", "summarized"]);
    let run = execute(command);
    assert_eq!(run.code, 0, "{run:?}");
    let body = &server.requests()[0].body;
    assert_eq!(body["thinking"], json!({"type": "adaptive", "display": "summarized"}));
    assert_eq!(body["output_config"], json!({"effort": "xhigh"}));
}

#[test]
fn a_model_without_effort_is_told_nothing_and_the_user_is_told_why() {
    let workspace = Workspace::new();
    let server = FakeServer::spawn(thinking_then_text()).unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "think", "--model", "claude-sonnet-4-5", "--effort", "high"]);
    let run = execute(command);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(server.requests()[0].body.get("output_config").is_none());
    assert!(run.stderr.contains("does not take an effort level"), "{}", run.stderr);
}

#[test]
fn openai_reasoning_models_get_reasoning_effort() {
    let workspace = Workspace::new();
    let text = Scenario::from_json(
        r#"{"replies":[{"blocks":[{"type":"text","text":"ok"}]},{"blocks":[{"type":"text","text":"ok"}]}]}"#,
    );
    let server = FakeServer::spawn(text.unwrap()).unwrap();
    let mut command = workspace.tandem();
    command.env("OPENAI_API_KEY", tandem_e2e::TEST_KEY).env("OPENAI_BASE_URL", format!("{}/v1", server.url()));
    command.args(["--provider", "openai", "--model", "o3", "-p", "think", "--effort", "max"]);
    let run = execute(command);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(server.requests()[0].body["reasoning_effort"], "high");
    let mut command = workspace.openai(&server);
    command.args(["-p", "think", "--effort", "low"]);
    let run = execute(command);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(server.requests()[1].body.get("reasoning_effort").is_none());
    assert!(run.stderr.contains("does not take reasoning_effort"), "{}", run.stderr);
}

#[test]
fn effort_from_config_toml_and_slash_effort_change_it() {
    let workspace = Workspace::new();
    workspace.write_config("config.toml", "effort = \"low\"\n");
    let replies =
        r#"{"replies":[{"blocks":[{"type":"text","text":"one"}]},{"blocks":[{"type":"text","text":"two"}]}]}"#;
    let server = FakeServer::spawn(Scenario::from_json(replies).unwrap()).unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "hi", "--model", "claude-opus-4-5"]);
    assert_eq!(execute(command).code, 0);
    assert_eq!(server.requests()[0].body["output_config"], json!({"effort": "low"}));
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "/effort sideways", "--model", "claude-opus-4-5"]);
    let run = execute(command);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stderr.contains("use one of low, medium, high, xhigh, max"), "{}", run.stderr);
    let mut command = workspace.tandem();
    command.args(["-p", "hi", "--effort", "sideways"]);
    let run = execute(command);
    assert_eq!(run.code, 2, "{run:?}");
}
