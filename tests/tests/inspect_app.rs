//! End to end in the app: `/inspect` shows a session's request, and `r` sends it again to the server — the same
//! body — showing the new answer beside the old one without running the tool it asks for.

// Test code: a panic is how a failure is reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use serde_json::json;
use tandem_e2e::app::{expect_idle_with, scenario, start, submit};
use tandem_e2e::pty::keys;
use tandem_e2e::{FakeServer, Workspace};

#[test]
fn a_replay_sends_the_recorded_body_again_and_runs_no_tool() {
    let workspace = Workspace::new();
    let server = FakeServer::spawn(scenario(json!({"replies": [
        {"blocks": [{"type": "text", "text": "First answer."}]},
        {"blocks": [{"type": "tool_use", "id": "w1", "name": "Write",
                     "input": {"file_path": "replayed.txt", "content": "should not exist"}}]}
    ]})))
    .unwrap();
    {
        let mut pty = start(&workspace, &server, 24, 80, &[]);
        submit(&pty, "hello");
        expect_idle_with(&pty, "First answer.");
        submit(&pty, "/inspect");
        pty.expect_text("API inspector · 1 requests");
        pty.send(keys::ENTER);
        pty.expect_text("POST http://127.0.0.1");
        pty.send("r");
        let screen = pty.expect_text("tool call (not run): Write");
        assert!(screen.contains("replay 1 (tools not run)"), "{screen}");
        let requests = server.requests();
        assert_eq!(requests.len(), 2);
        assert_eq!(requests[1].body, requests[0].body, "the recorded body, byte for byte as JSON");
        assert!(!workspace.path().join("replayed.txt").exists(), "a replay runs no tool");
        // The list now holds the replay too, as a request of its own.
        pty.send(keys::ESC);
        let list = pty.expect_text("API inspector · 2 requests");
        assert!(list.contains("replay 1"), "the replay says what it repeats: {list}");
        pty.send(keys::ESC);
        std::thread::sleep(Duration::from_millis(150));
        pty.send(keys::CTRL_C);
        pty.send(keys::CTRL_C);
        assert!(pty.wait_exit(Duration::from_secs(10)).is_some());
    }
}
