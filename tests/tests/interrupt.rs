//! Ctrl-C in headless mode: the stream is cancelled, the running command's whole process group is killed,
//! and the run ends with `error_during_execution`.

// Test code: a panic is how a failure is reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;
use tandem_e2e::process::{alive, wait_for_line};
use tandem_e2e::{FakeServer, Run, Scenario, Workspace};

fn interrupt(child: &Child) {
    let status = Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(status.success());
}

fn spawn(mut command: Command) -> Child {
    command.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap()
}

#[test]
fn ctrl_c_kills_the_running_command_and_its_background_children() {
    let workspace = Workspace::new();
    let command = "sleep 300 & echo $! > bg.pid; sleep 300";
    let server = FakeServer::spawn(
        Scenario::from_json(
            &json!({"replies": [
                {"blocks": [{"type": "tool_use", "id": "toolu_sleep", "name": "Bash", "input": {"command": command}}]},
                {"blocks": [{"type": "text", "text": "never asked"}]}
            ]})
            .to_string(),
        )
        .unwrap(),
    )
    .unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "sleep", "--output-format", "stream-json", "--dangerously-skip-permissions"]);
    let child = spawn(command);
    let background = wait_for_line(&workspace.path().join("bg.pid"));
    assert!(alive(&background));
    interrupt(&child);
    let run = Run::of(child.wait_with_output().unwrap());
    assert_eq!(run.code, 1, "{run:?}");
    let result = run.result();
    assert_eq!(result["subtype"], "error_during_execution", "{result}");
    let deadline = Instant::now() + Duration::from_secs(5);
    while alive(&background) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!alive(&background), "the background sleep survived the interrupt");
    let tool_result = run.lines().into_iter().find(|line| line["type"] == "user").expect("a tool result line");
    assert_eq!(tool_result["message"]["content"][0]["is_error"], true);
    assert_eq!(server.requests().len(), 1, "an interrupted run sends nothing more");
}

#[test]
fn ctrl_c_cancels_a_stalled_stream() {
    let workspace = Workspace::new();
    let server = FakeServer::spawn(
        Scenario::from_json(
            &json!({"replies": [
                {"blocks": [{"type": "text", "text": "I am thinking very slowly", "chunks": 5}], "fault": {"kind": "stall_after", "events": 4}}
            ]})
            .to_string(),
        )
        .unwrap(),
    )
    .unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "hi", "--output-format", "stream-json", "--include-partial-messages"]);
    let mut child = spawn(command);
    // Wait until the first streamed delta has been printed, then interrupt.
    use std::io::BufRead;
    let stdout = child.stdout.take().unwrap();
    let mut lines = std::io::BufReader::new(stdout).lines();
    let mut seen = Vec::new();
    for line in lines.by_ref() {
        let line = line.unwrap();
        let done = line.contains("text_delta");
        seen.push(line);
        if done {
            break;
        }
    }
    interrupt(&child);
    seen.extend(lines.map(Result::unwrap));
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(1));
    let result: serde_json::Value = serde_json::from_str(seen.last().unwrap()).unwrap();
    assert_eq!(result["subtype"], "error_during_execution", "{result}");
}
