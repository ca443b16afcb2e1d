//! End to end: every model request of a session is recorded in its directory with the key redacted, retries as
//! attempts of their own, and `tandem inspect` lists them, shows one as JSON, and exports it as a curl command
//! that gets the same answer from the server again.

// Test code: a panic is how a failure is reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use tandem_e2e::{FakeServer, Scenario, TEST_KEY, Workspace, execute};

fn scenario(replies: Value) -> Scenario {
    Scenario::from_json(&json!({ "replies": replies }).to_string()).unwrap()
}

#[test]
fn requests_are_recorded_redacted_listed_shown_and_replayable_with_curl() {
    let workspace = Workspace::new();
    workspace.write("notes.txt", "remember the milk\n");
    let server = FakeServer::spawn(scenario(json!([
        {"fault": {"kind": "http", "status": 529, "headers": {"request-id": "req_529", "set-cookie": "session=s3cret", "retry-after": "0"}}},
        {"blocks": [{"type": "tool_use", "id": "r1", "name": "Read", "input": {"file_path": "notes.txt"}}]},
        {"blocks": [{"type": "text", "text": "It says: remember the milk."}]},
        {"blocks": [{"type": "text", "text": "Replayed answer."}]},
    ])))
    .unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "read notes.txt", "--output-format", "json"]);
    let run = execute(command);
    assert_eq!(run.code, 0, "{run:?}");
    let session = run.result()["session_id"].as_str().unwrap().to_owned();

    let inspect = |args: &[&str]| {
        let mut command = workspace.tandem();
        command.arg("inspect").arg(&session).args(args);
        execute(command)
    };
    let listed = inspect(&[]);
    assert_eq!(listed.code, 0, "{listed:?}");
    let rows: Vec<&str> =
        listed.stdout.lines().filter(|line| line.trim_start().starts_with(char::is_numeric)).collect();
    assert_eq!(rows.len(), 3, "{}", listed.stdout);
    assert!(rows[0].contains("turn") && rows[0].contains("529!"), "the failed attempt: {}", listed.stdout);
    assert!(rows[1].contains("  2  ") && rows[1].contains("200"), "its retry, attempt 2: {}", listed.stdout);
    assert!(listed.stdout.contains("overloaded"), "the failure's reason: {}", listed.stdout);
    let rows: Value = serde_json::from_str(&inspect(&["--json"]).stdout).unwrap();
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 3, "{rows:?}");
    assert_eq!((rows[0]["status"].as_u64(), rows[0]["cost_usd"].is_null()), (Some(529), true), "{rows:?}");
    assert_eq!((rows[1]["attempt"].as_u64(), rows[1]["usage"].is_object()), (Some(2), true), "{rows:?}");

    // The record holds exactly what was sent, and never the key.
    let record = workspace.config.path().join("data");
    let files = walk(&record, "requests.jsonl");
    assert_eq!(files.len(), 1, "{files:?}");
    let stored = std::fs::read_to_string(&files[0]).unwrap();
    assert!(!stored.contains(TEST_KEY), "the key is not in the record");
    assert!(stored.contains("\"x-api-key\",\"[redacted]\""), "{stored}");
    assert!(!stored.contains("s3cret"), "a cookie the response set is not in the record");
    let failed: Value = serde_json::from_str(&inspect(&["1", "--json"]).stdout).unwrap();
    let headers = failed["response_headers"].as_array().unwrap_or_else(|| panic!("{failed}"));
    assert!(headers.contains(&json!(["request-id", "req_529"])), "the failure's headers: {headers:?}");
    assert!(headers.contains(&json!(["set-cookie", "[redacted]"])), "{headers:?}");
    let shown = inspect(&["3", "--json"]);
    let exchange: Value = serde_json::from_str(&shown.stdout).unwrap();
    let requests = server.requests();
    assert_eq!(exchange["request_body"], requests[2].body, "the body as the server received it");
    assert_eq!(exchange["usage"]["output_tokens"], 5);
    assert_eq!(exchange["turn"], 1, "made for the session's first prompt");
    let text: String =
        exchange["events"].as_array().unwrap().iter().filter_map(|event| event["delta"]["text"].as_str()).collect();
    assert_eq!(text, "It says: remember the milk.");

    // curl, with the key from the environment, sends the same request and gets the server's next answer.
    let exported = inspect(&["3", "--curl"]);
    assert_eq!(exported.code, 0, "{exported:?}");
    assert!(
        !exported.stdout.contains(TEST_KEY) && exported.stdout.contains("$ANTHROPIC_API_KEY"),
        "{}",
        exported.stdout
    );
    if std::process::Command::new("curl").arg("--version").output().is_err() {
        eprintln!("skipped running the curl export: curl is not installed");
        return;
    }
    let replay = std::process::Command::new("sh")
        .arg("-c")
        .arg(&exported.stdout)
        .env("ANTHROPIC_API_KEY", TEST_KEY)
        .output()
        .unwrap();
    let answer = String::from_utf8_lossy(&replay.stdout);
    assert!(answer.contains("Replayed answer."), "{answer}");
    let again = &server.requests()[3];
    assert_eq!(again.body, requests[2].body, "the same body");
    assert!(again.headers.contains_key("x-api-key"), "the key went with it, from the environment");
}

/// Issue 29 found `tandem inspect … | head` panicking ("failed printing to stdout: Broken pipe"): a reader that
/// closes the pipe early ends a listing quietly, as it does for other Unix tools.
#[test]
fn a_listing_whose_reader_goes_away_ends_quietly() {
    let workspace = Workspace::new();
    let server = FakeServer::spawn(scenario(json!([{"blocks": [{"type": "text", "text": "Hi."}]}]))).unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "hi", "--output-format", "json"]);
    let run = execute(command);
    assert_eq!(run.code, 0, "{run:?}");
    let session = run.result()["session_id"].as_str().unwrap().to_owned();
    for args in [vec!["inspect", session.as_str(), "1"], vec!["sessions"]] {
        let mut command = workspace.tandem();
        command.args(&args).stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped());
        let mut child = command.spawn().unwrap();
        // The reader is gone before tandem writes a byte.
        drop(child.stdout.take());
        let output = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert_eq!(output.status.code(), Some(0), "{args:?}: {stderr}");
    }
}

fn walk(dir: &std::path::Path, name: &str) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(walk(&path, name));
        } else if path.file_name().is_some_and(|file| file == name) {
            found.push(path);
        }
    }
    found
}
