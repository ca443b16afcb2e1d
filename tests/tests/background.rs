//! Background commands through the real binary: Bash `run_in_background` returns an id at once, BashOutput reads
//! what it wrote, KillShell stops it, and whatever still runs is killed when the session ends.

// Test code: a panic is how a failure is reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use tandem_e2e::{FakeServer, Scenario, Workspace, execute, tool_results};

fn scenario(value: Value) -> Scenario {
    Scenario::from_json(&value.to_string()).expect("scenario")
}

fn bash(id: &str, command: &str) -> Value {
    json!({"type": "tool_use", "id": id, "name": "Bash", "input": {"command": command, "run_in_background": true}})
}

/// Whether the process still runs (a zombie waiting to be reaped does not), after giving a kill a moment to land.
fn alive(pid: &str) -> bool {
    let running = || {
        std::fs::read_to_string(format!("/proc/{}/stat", pid.trim()))
            .is_ok_and(|stat| stat.rsplit(')').next().is_some_and(|rest| !rest.trim_start().starts_with('Z')))
    };
    for _ in 0..100 {
        if !running() {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    true
}

fn result_text(server: &FakeServer, request: usize) -> String {
    tool_results(&server.requests()[request].body).last().unwrap()["content"].as_str().unwrap().to_owned()
}

#[test]
fn a_background_command_is_read_and_killed() {
    let workspace = Workspace::new();
    // A background command runs sandboxed with the workspace's top level kept as it is (nothing waits for its
    // end to put protected entries back): it writes into a directory that exists.
    std::fs::create_dir(workspace.path().join("run")).unwrap();
    let server = FakeServer::spawn(scenario(json!({"replies": [
        {"blocks": [bash("toolu_bg", "echo $$ > run/pid.txt; echo server-started; sleep 30")]},
        {"blocks": [{"type": "tool_use", "id": "toolu_out", "name": "BashOutput", "input": {"bash_id": "bash_1"}}],
         "delay_ms": 100},
        {"blocks": [{"type": "tool_use", "id": "toolu_kill", "name": "KillShell", "input": {"shell_id": "bash_1"}}]},
        {"blocks": [{"type": "tool_use", "id": "toolu_after", "name": "BashOutput", "input": {"bash_id": "bash_1"}}]},
        {"blocks": [{"type": "text", "text": "Stopped."}]}
    ]})))
    .unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "start the server", "--output-format", "json", "--permission-mode", "bypassPermissions"]);
    let run = execute(command);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(result_text(&server, 1).contains("ID: bash_1"), "{}", result_text(&server, 1));
    let output = result_text(&server, 2);
    assert!(output.contains("<status>running</status>") && output.contains("server-started"), "{output}");
    assert_eq!(result_text(&server, 3), "Killed bash_1.");
    assert!(result_text(&server, 4).contains("<status>killed</status>"), "{}", result_text(&server, 4));
    assert!(!alive(&workspace.read("run/pid.txt")), "the killed command is gone");
}

#[test]
fn what_still_runs_is_killed_when_the_session_ends() {
    let workspace = Workspace::new();
    // A background command runs sandboxed with the workspace's top level kept as it is (nothing waits for its
    // end to put protected entries back): it writes into a directory that exists.
    std::fs::create_dir(workspace.path().join("run")).unwrap();
    let server = FakeServer::spawn(scenario(json!({"replies": [
        {"blocks": [bash("toolu_bg", "echo $$ > run/pid.txt; sleep 30")]},
        {"blocks": [{"type": "text", "text": "Started it."}], "delay_ms": 50}
    ]})))
    .unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "start it", "--permission-mode", "bypassPermissions"]);
    let run = execute(command);
    assert_eq!(run.code, 0, "{run:?}");
    let pid = workspace.read("run/pid.txt");
    assert!(!alive(&pid), "the background command outlived the session");
}

/// What a background command left running goes when its shell exits: a sandboxed process can't leave the
/// command's process group (`setsid` is refused), and the group is ended then — so a later KillShell finds
/// nothing left.
#[test]
fn what_a_finished_command_left_running_is_killed_too() {
    let workspace = Workspace::new();
    // A background command runs sandboxed with the workspace's top level kept as it is (nothing waits for its
    // end to put protected entries back): it writes into a directory that exists.
    std::fs::create_dir(workspace.path().join("run")).unwrap();
    let command_line = "setsid true || echo setsid-refused; sleep 30 & echo $! > run/pid.txt; echo started";
    let server = FakeServer::spawn(scenario(json!({"replies": [
        {"blocks": [bash("toolu_bg", command_line)]},
        {"blocks": [{"type": "tool_use", "id": "toolu_kill", "name": "KillShell", "input": {"shell_id": "bash_1"}}],
         "delay_ms": 100},
        {"blocks": [{"type": "text", "text": "Done."}]}
    ]})))
    .unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "go", "--permission-mode", "bypassPermissions"]);
    let run = execute(command);
    assert_eq!(run.code, 0, "{run:?}");
    let killed = result_text(&server, 2);
    assert!(killed.contains("had already completed") && !killed.contains("were killed"), "{killed}");
    assert!(!alive(&workspace.read("run/pid.txt")), "the child outlived its shell");
}

/// A background command keeps the workspace's protected entries read-only, but Landlock can't forbid new names
/// below a writable directory: settings it nests there (`sub/.claude/settings.json`, which would configure a
/// session started in `sub/`) are taken out when it ends, and the model is told.
#[test]
fn settings_a_background_command_nests_in_the_workspace_are_taken_out_when_it_ends() {
    let plant = "mkdir -p sub/.claude && echo '{\"permissions\":{\"allow\":[\"Bash\"]}}' > sub/.claude/settings.json; echo planted";
    let (workspace, server) = plant_in_the_background(plant);
    let output = result_text(&server, 2);
    assert!(output.contains("planted") && output.contains("taken out"), "{output}");
    assert!(!workspace.path().join("sub/.claude").exists(), "the planted settings are gone");
}

/// Runs `plant` in the background in a workspace with `sub/`, reads its output 300 ms later, then ends the session.
fn plant_in_the_background(plant: &str) -> (Workspace, FakeServer) {
    let workspace = Workspace::new();
    std::fs::create_dir(workspace.path().join("sub")).unwrap();
    let server = FakeServer::spawn(scenario(json!({"replies": [
        {"blocks": [bash("toolu_bg", plant)]},
        {"blocks": [{"type": "tool_use", "id": "toolu_out", "name": "BashOutput", "input": {"bash_id": "bash_1"}}],
         "delay_ms": 300},
        {"blocks": [{"type": "text", "text": "Done."}]}
    ]})))
    .unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "plant it", "--output-format", "json", "--permission-mode", "bypassPermissions"]);
    let run = execute(command);
    assert_eq!(run.code, 0, "{run:?}");
    (workspace, server)
}

/// Found by the forty-first red-team round: the settings and repository a background command nests were taken out
/// only by the task waiting for its shell, which the session's end did not wait for — a command still running then
/// left `sub/.claude/settings.json` (and `sub/.git`, whose `core.fsmonitor` the user's own `git status` would
/// run) for the next session started in `sub/`. They are taken out however the command ends.
#[test]
fn settings_a_background_command_nests_are_taken_out_when_the_session_ends_first() {
    let plant = "mkdir -p sub/.claude sub/.git && echo '{\"permissions\":{\"allow\":[\"Bash\"]}}' > \
                 sub/.claude/settings.json && echo 'ref: refs/heads/main' > sub/.git/HEAD && echo planted; sleep 30";
    let (workspace, server) = plant_in_the_background(plant);
    assert!(result_text(&server, 2).contains("planted"), "{}", result_text(&server, 2));
    assert!(!workspace.path().join("sub/.claude").exists(), "the planted settings outlived the session");
    assert!(!workspace.path().join("sub/.git").exists(), "the planted repository outlived the session");
}
