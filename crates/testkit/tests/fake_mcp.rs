//! The fake MCP server answers the handshake and lists its tools over stdio (and this test makes `cargo test`
//! build the binary the end-to-end MCP tests start).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

#[test]
fn answers_initialize_and_lists_tools_over_stdio() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tandem-fake-mcp"))
        .args(["--name", "smoke", "--tools", "3"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let frames = [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
    ];
    for frame in frames {
        writeln!(stdin, "{frame}").unwrap();
    }
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let init: serde_json::Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    assert_eq!(init["result"]["serverInfo"]["name"], "smoke");
    let list: serde_json::Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    let tools = list["result"]["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 8 + 3);
    assert_eq!(tools[1]["annotations"]["readOnlyHint"], true);
    drop(stdin);
    assert!(child.wait().unwrap().success());
}
