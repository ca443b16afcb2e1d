//! End to end in the full-screen app: a project's `.mcp.json` server is asked about once, a stray Enter does not
//! approve it, and the answer is remembered outside the repository for exactly the entry answered about.

// Test code: a panic is how a failure is reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use serde_json::json;
use tandem_e2e::app::{IDLE, scenario, submit};
use tandem_e2e::pty::{Pty, anthropic_command, keys};
use tandem_e2e::{FakeServer, Workspace, execute, fake_mcp_bin};

const DIALOG: &str = "New MCP server found in .mcp.json";

fn open(workspace: &Workspace, server: &FakeServer) -> Pty {
    Pty::spawn(anthropic_command(workspace, server), 24, 80)
}

/// Closes whatever is open (Esc: "not now" for the dialog) and quits.
fn quit(mut pty: Pty) {
    pty.send(keys::ESC);
    // An Esc directly followed by Ctrl+C reads as Alt+Ctrl+C: let it arrive alone.
    std::thread::sleep(Duration::from_millis(150));
    pty.expect("nothing open", |screen| !screen.contains(DIALOG) && !screen.contains("MCP servers ─"));
    pty.send(keys::CTRL_C);
    pty.send(keys::CTRL_C);
    assert!(pty.wait_exit(Duration::from_secs(10)).is_some(), "the app quits");
}

#[test]
fn a_project_server_is_asked_about_once_per_entry_and_enter_alone_does_not_approve_it() {
    let workspace = Workspace::new();
    let server = FakeServer::spawn(scenario(json!({"replies": []}))).unwrap();
    let entry =
        |greeting: &str| json!({"command": fake_mcp_bin(), "args": ["--name", "proj"], "env": {"GREETING": greeting}});
    workspace.write(".mcp.json", &json!({"mcpServers": {"proj": entry("hi")}}).to_string());

    // The dialog shows the whole entry; Enter on its highlighted answer turns the server down.
    let pty = open(&workspace, &server);
    let screen = pty.expect_text(DIALOG);
    assert!(screen.contains("env GREETING=hi"), "{screen}");
    pty.send(keys::ENTER);
    pty.expect("the dialog gone", |screen| !screen.contains(DIALOG) && screen.contains(IDLE));
    quit(pty);
    assert!(!workspace.path().join(".tandem").exists(), "nothing was written into the repository");

    // Remembered: not asked again, not started.
    let pty = open(&workspace, &server);
    let screen = pty.expect_text("servers you turned down are not started: proj");
    assert!(!screen.contains(DIALOG), "{screen}");
    quit(pty);

    // Forgotten on request; approved with `2`, it starts, and the next session neither asks nor waits.
    let reset = {
        let mut command = workspace.tandem();
        command.args(["mcp", "reset-project-choices"]);
        execute(command)
    };
    assert!(reset.stdout.contains("will ask for approval again"), "{reset:?}");
    let pty = open(&workspace, &server);
    pty.expect_text(DIALOG);
    pty.send("2");
    pty.expect("the dialog gone", |screen| !screen.contains(DIALOG));
    quit(pty);
    let pty = open(&workspace, &server);
    pty.expect_text(IDLE);
    submit(&pty, "/mcp");
    let screen = pty.expect_text("connected");
    assert!(!screen.contains(DIALOG), "{screen}");
    quit(pty);

    // The repository changed the approved entry: asked again.
    workspace.write(".mcp.json", &json!({"mcpServers": {"proj": entry("changed")}}).to_string());
    let pty = open(&workspace, &server);
    let screen = pty.expect_text(DIALOG);
    assert!(screen.contains("env GREETING=changed"), "{screen}");
    quit(pty);
}
