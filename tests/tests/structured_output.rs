//! `--json-schema` (the SDK's `output_format`): the final answer is validated against the schema, the model is
//! told what is wrong and tries again, and a run that never gets it right ends with
//! `error_max_structured_output_retries`.

// Test code: a panic is how a failure is reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use tandem_e2e::{FakeServer, Scenario, Workspace, execute, tool_results};

const SCHEMA: &str = r#"{"type":"object","properties":{"answer":{"type":"integer","minimum":0},"why":{"type":"string"}},"required":["answer"],"additionalProperties":false}"#;

fn output(id: &str, input: Value) -> Value {
    json!({"blocks": [{"type": "tool_use", "id": id, "name": "StructuredOutput", "input": input}]})
}

fn run(replies: Value) -> (tandem_e2e::Run, FakeServer) {
    let workspace = Workspace::new();
    let server = FakeServer::spawn(Scenario::from_json(&json!({"replies": replies}).to_string()).unwrap()).unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "What is 6 times 7?", "--output-format", "json", "--json-schema", SCHEMA]);
    (execute(command), server)
}

#[test]
fn a_valid_answer_is_the_structured_output() {
    let (run, server) = run(json!([output("toolu_1", json!({"answer": 42, "why": "arithmetic"}))]));
    assert_eq!(run.code, 0, "{run:?}");
    let result = run.result();
    assert_eq!(result["subtype"], "success");
    assert_eq!(result["structured_output"], json!({"answer": 42, "why": "arithmetic"}));
    // The tool carries the user's schema, and the call ends the turn.
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let tool = requests[0].body["tools"].as_array().unwrap().iter().find(|tool| tool["name"] == "StructuredOutput");
    assert_eq!(tool.unwrap()["input_schema"]["required"], json!(["answer"]));
}

#[test]
fn a_wrong_answer_goes_back_with_what_is_wrong_then_a_prose_answer_is_reminded() {
    let (run, server) = run(json!([
        output("toolu_1", json!({"answer": -1})),
        {"blocks": [{"type": "text", "text": "It is 42."}]},
        output("toolu_2", json!({"answer": 42}))
    ]));
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.result()["structured_output"], json!({"answer": 42}));
    let requests = server.requests();
    let results = tool_results(&requests[1].body);
    assert_eq!(results[0]["is_error"], true);
    let content = results[0]["content"].as_str().unwrap();
    assert!(content.contains("StructuredOutput") && content.contains("answer"), "{results:?}");
    let reminder = requests[2].body["messages"].as_array().unwrap().last().unwrap().to_string();
    assert!(reminder.contains("StructuredOutput"), "{reminder}");
}

#[test]
fn never_getting_it_right_is_error_max_structured_output_retries() {
    let replies: Vec<Value> = (0..6).map(|n| output(&format!("toolu_{n}"), json!({"answer": "forty-two"}))).collect();
    let (run, server) = run(Value::Array(replies));
    assert_eq!(run.code, 1, "{run:?}");
    let result = run.result();
    assert_eq!(result["subtype"], "error_max_structured_output_retries");
    assert_eq!(result["is_error"], true);
    assert!(result.get("structured_output").is_none());
    assert_eq!(server.requests().len(), 6);
}

#[test]
fn a_schema_that_is_not_one_is_refused() {
    let workspace = Workspace::new();
    let server = FakeServer::spawn(Scenario::from_json(r#"{"replies":[]}"#).unwrap()).unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "x", "--json-schema", r#"{"type":"object","properties":{"a":{"type":7}}}"#]);
    let run = execute(command);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("--json-schema"), "{}", run.stderr);
}
