//! Whatever ends tandem ends everything it started: SIGTERM and SIGHUP in every front end (the app, `-p`, the SDK
//! mode; SIGINT and SIGQUIT too in the app) kill the running command's process group, what left it (`setsid`), and every background shell; the
//! app gives the terminal back; protected entries a command changed are put back; and an SDK session ending because stdin closed leaves no background shell behind.

// Test code: a panic is how a failure is reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;
use tandem_e2e::process::{alive, wait_for_line};
use tandem_e2e::pty::{Pty, anthropic_command};
use tandem_e2e::{FakeServer, Scenario, Workspace};

/// Leaves the command's process group where it can (`setsid`), else starts the program in it: a sandboxed
/// command can't leave its group (`setsid` is refused), so what these tests start escapes as far as it can.
const ESCAPE: &str = "escape() { setsid \"$@\" 2>/dev/null || \"$@\"; }; ";

/// A background shell (unless `background` is false), then a foreground command that tries to plant a git hook (they write their pids in `run/`: a background command may not
/// create entries at the workspace's top, see docs/permissions.md) that starts a child in its group and one that left it; the
/// foreground command never ends by itself.
fn scenario(background: bool) -> Scenario {
    let background_command = "sleep 300 & echo $! > run/bg.pid; wait";
    let foreground = format!(
        "{ESCAPE}echo planted > .git/hooks/pre-commit; cp .git/hooks/pre-commit run/; escape sleep 301 & echo $! > \
         run/escaped.pid; sleep 302 & echo $! > run/child.pid; wait"
    );
    let mut replies = vec![
        json!({"blocks": [{"type": "tool_use", "id": "toolu_fg", "name": "Bash", "input": {"command": foreground}}]}),
        json!({"blocks": [{"type": "text", "text": "never asked"}]}),
    ];
    if background {
        replies.insert(
            0,
            json!({"blocks": [{"type": "tool_use", "id": "toolu_bg", "name": "Bash",
                               "input": {"command": background_command, "run_in_background": true}}]}),
        );
    }
    Scenario::from_json(&json!({ "replies": replies }).to_string()).unwrap()
}

fn workspace() -> Workspace {
    let workspace = Workspace::new();
    std::fs::create_dir(workspace.path().join("run")).unwrap();
    std::fs::create_dir_all(workspace.path().join(".git/hooks")).unwrap();
    workspace
}

/// The pids of the processes (background, escaped, child), once all are running.
fn started(workspace: &Workspace, background: bool) -> Vec<String> {
    let names: &[&str] = if background {
        &["run/bg.pid", "run/escaped.pid", "run/child.pid"]
    } else {
        &["run/escaped.pid", "run/child.pid"]
    };
    let pids: Vec<String> = names.iter().map(|name| wait_for_line(&workspace.path().join(name))).collect();
    for pid in &pids {
        assert!(alive(pid), "{pid} is not running");
    }
    pids
}

fn assert_all_ended(pids: &[String], how: &str) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while pids.iter().any(|pid| alive(pid)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let survivors: Vec<&String> = pids.iter().filter(|pid| alive(pid)).collect();
    for pid in &survivors {
        let _ = Command::new("kill").args(["-KILL", pid]).status();
    }
    assert!(survivors.is_empty(), "{how}: {survivors:?} of [background, escaped, child] {pids:?} survived");
}

fn signal(pid: u32, name: &str) {
    assert!(Command::new("kill").args([&format!("-{name}"), &pid.to_string()]).status().unwrap().success());
}

const SIGNALS: [(&str, i32); 2] = [("TERM", 143), ("HUP", 129)];
/// The app also ends on SIGINT and SIGQUIT sent from outside (at its keyboard Ctrl+C is a key): found from the
/// outside, they left the terminal raw, on the alternate screen, with mouse reporting on.
const APP_SIGNALS: [(&str, i32); 4] = [("TERM", 143), ("HUP", 129), ("INT", 130), ("QUIT", 131)];

fn headless_child(workspace: &Workspace, server: &FakeServer, sdk: bool) -> Child {
    let mut command = workspace.anthropic(server);
    command.args(["--dangerously-skip-permissions", "--output-format", "stream-json", "--verbose"]);
    if sdk {
        command.args(["--input-format", "stream-json"]).stdin(Stdio::piped());
    } else {
        command.args(["-p", "go"]);
    }
    let mut child = command.stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    if sdk {
        let frame = json!({"type": "user", "session_id": "", "message": {"role": "user", "content": "go"},
                           "parent_tool_use_id": null});
        writeln!(child.stdin.as_mut().unwrap(), "{frame}").unwrap();
    }
    child
}

#[test]
fn sigterm_and_sighup_end_every_command_headless_and_in_the_sdk_mode() {
    for sdk in [false, true] {
        for (name, code) in SIGNALS {
            let how = format!("{} {name}", if sdk { "SDK mode" } else { "-p" });
            let workspace = workspace();
            let server = FakeServer::spawn(scenario(true)).unwrap();
            let child = headless_child(&workspace, &server, sdk);
            let pids = started(&workspace, true);
            signal(child.id(), name);
            let output = child.wait_with_output().unwrap();
            assert_eq!(output.status.code(), Some(code), "{how}: {}", String::from_utf8_lossy(&output.stderr));
            assert_all_ended(&pids, &how);
            // While a background command runs, protected entries are read-only to the foreground one too.
            assert!(!workspace.path().join("run/pre-commit").exists(), "{how}: the command planted the hook");
        }
    }
    // Without one, the command may write them while it runs; what it planted is taken out when tandem ends.
    let workspace = workspace();
    let server = FakeServer::spawn(scenario(false)).unwrap();
    let child = headless_child(&workspace, &server, false);
    let pids = started(&workspace, false);
    signal(child.id(), "TERM");
    assert_eq!(child.wait_with_output().unwrap().status.code(), Some(143));
    assert_all_ended(&pids, "-p TERM, no background command");
    let planted = std::fs::read_to_string(workspace.path().join("run/pre-commit")).unwrap_or_default();
    assert_eq!(planted, "planted\n", "the command could plant the hook");
    assert!(!workspace.path().join(".git/hooks/pre-commit").exists(), "the hook the command planted was not taken out");
}

#[test]
fn every_ending_signal_ends_every_command_in_the_app_and_gives_the_terminal_back() {
    for (name, code) in APP_SIGNALS {
        let workspace = workspace();
        let server = FakeServer::spawn(scenario(true)).unwrap();
        let mut command = anthropic_command(&workspace, &server);
        command.args(["--dangerously-skip-permissions", "go"]);
        let mut pty = Pty::spawn(command, 30, 100);
        let pids = started(&workspace, true);
        assert!(pty.alternate_screen());
        signal(pty.pid().expect("the app's pid"), name);
        let status = pty.wait_exit(Duration::from_secs(20)).expect("the app ends");
        assert_eq!(status.exit_code(), code as u32, "app {name}");
        assert!(!pty.alternate_screen(), "app {name}: the terminal is still on the alternate screen");
        let raw = pty.raw_output();
        let mouse_on = tandem_e2e::pty::rfind(&raw, b"\x1b[?1000h").expect("mouse reporting was on");
        let mouse_off = tandem_e2e::pty::rfind(&raw, b"\x1b[?1000l");
        assert!(mouse_off.is_some_and(|off| off > mouse_on), "app {name}: mouse reporting is still on");
        assert_all_ended(&pids, &format!("app {name}"));
    }
}

#[test]
fn an_sdk_session_ended_by_closing_stdin_leaves_no_background_shell() {
    let workspace = workspace();
    let background = "sleep 303 & echo $! > run/bg.pid; wait";
    let server = FakeServer::spawn(
        Scenario::from_json(
            &json!({"replies": [
                {"blocks": [{"type": "tool_use", "id": "toolu_bg", "name": "Bash",
                             "input": {"command": background, "run_in_background": true}}]},
                {"blocks": [{"type": "text", "text": "Started it."}]}
            ]})
            .to_string(),
        )
        .unwrap(),
    )
    .unwrap();
    let mut child = headless_child(&workspace, &server, true);
    let pid = wait_for_line(&workspace.path().join("run/bg.pid"));
    drop(child.stdin.take());
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    assert_all_ended(&[pid], "stdin closed");
}

/// Found by an outside red team: a process that leaves the command's group and clears its environment (so it
/// carries no mark) kept the command's grant and wrote `.git/config` after it was put back. tandem is a
/// subreaper, so it becomes tandem's child, and it is ended with the call.
#[test]
fn a_process_that_left_the_group_and_cleared_its_environment_ends_with_the_call() {
    let workspace = workspace();
    let survivor = format!(
        "{ESCAPE}escape env -i /bin/bash -c 'echo $$ > run/survivor.pid; grep NoNewPrivs /proc/self/status \
         > run/nnp; exec sleep 300' </dev/null >/dev/null 2>&1 & sleep 1"
    );
    let server = FakeServer::spawn(
        Scenario::from_json(
            &json!({"replies": [
                {"blocks": [{"type": "tool_use", "id": "toolu_s", "name": "Bash", "input": {"command": survivor}}]},
                {"blocks": [{"type": "text", "text": "Done."}]}
            ]})
            .to_string(),
        )
        .unwrap(),
    )
    .unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "go", "--dangerously-skip-permissions"]);
    let mut child = command.stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    let pid = wait_for_line(&workspace.path().join("run/survivor.pid"));
    // The call is over once the model was asked again; the survivor must be gone by then.
    let deadline = Instant::now() + Duration::from_secs(30);
    while server.requests().len() < 2 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let nnp = std::fs::read_to_string(workspace.path().join("run/nnp")).unwrap_or_default();
    assert!(nnp.contains('1'), "the sandboxed command runs with no_new_privs: {nnp:?}");
    let alive_after_call = alive(&pid);
    let _ = child.wait();
    assert_all_ended(std::slice::from_ref(&pid), "env-cleared survivor");
    assert!(!alive_after_call, "the survivor outlived its call (ended only with tandem)");
}

/// Runs `steps` (Bash calls, `(command, background)`) in bypass mode and waits until the model was asked again
/// after the last one, so that every call is over; tandem is still running.
fn run_calls(workspace: &Workspace, steps: &[(&str, bool)]) -> (Child, FakeServer) {
    let mut replies: Vec<serde_json::Value> = steps
        .iter()
        .enumerate()
        .map(|(i, (command, background))| {
            json!({"blocks": [{"type": "tool_use", "id": format!("toolu_{i}"), "name": "Bash",
                               "input": {"command": command, "run_in_background": background}}]})
        })
        .collect();
    replies.push(json!({"blocks": [{"type": "text", "text": "Done."}], "delay_ms": 1500}));
    let server = FakeServer::spawn(Scenario::from_json(&json!({ "replies": replies }).to_string()).unwrap()).unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "go", "--dangerously-skip-permissions"]);
    let child = command.stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while server.requests().len() <= steps.len() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    (child, server)
}

/// Found by the second outside pass: a survivor that copied a live background command's mark was spared, and
/// one that forks and exits in a loop outlasted a sweep of fixed rounds.
#[test]
fn a_borrowed_mark_or_a_fork_loop_does_not_outlive_the_call() {
    let workspace = workspace();
    let borrow = format!(
        "{ESCAPE}M=$(tr '\\0' '\\n' < /proc/$(cat run/bg.pid)/environ | grep ^TANDEM_CALL=); \
         escape env -i $M /bin/bash -c 'echo $$ > run/borrow.pid; exec sleep 300' </dev/null >/dev/null 2>&1 & \
         until [ -s run/borrow.pid ]; do sleep 0.01; done"
    );
    // Each generation writes its pid through a rename, so that a kill at any moment leaves a whole line there.
    let hop_script = "echo $$ > run/hop.$$ && mv run/hop.$$ run/hop.pid; sleep 0.005; bash run/hop.sh &\n";
    std::fs::write(workspace.path().join("run/hop.sh"), hop_script).unwrap();
    // Each call waits until what it started has started: on a loaded machine a fixed second was not enough, and
    // the sweep ended the loop before it wrote its first pid.
    let hop = format!(
        "{ESCAPE}escape bash run/hop.sh </dev/null >/dev/null 2>&1 & until [ -s run/hop.pid ]; do sleep 0.01; done; \
         sleep 0.2"
    );
    let (mut child, _server) =
        run_calls(&workspace, &[("sleep 61 & echo $! > run/bg.pid; wait", true), (&borrow, false), (&hop, false)]);
    let borrowed = wait_for_line(&workspace.path().join("run/borrow.pid"));
    assert!(!alive(&borrowed), "the survivor with a borrowed mark outlived its call");
    let last = wait_for_line(&workspace.path().join("run/hop.pid"));
    std::thread::sleep(Duration::from_millis(100));
    let later = wait_for_line(&workspace.path().join("run/hop.pid"));
    assert_eq!(last, later, "the fork loop goes on after its call");
    assert!(!alive(&later), "the fork loop's last process runs");
    let _ = child.kill();
    let _ = child.wait();
}

/// Found by the fifty-fourth red-team round: `--no-session-persistence` kept its log (and the request records, with
/// the files read) in a private directory that only a destructor removed, so SIGTERM or SIGHUP — how the SDK stops
/// its CLI — left the whole transcript in the temporary directory.
#[test]
fn an_unsaved_session_leaves_nothing_behind_whatever_signal_ends_it() {
    for (name, code) in SIGNALS {
        let workspace = workspace();
        let tmp = tempfile::tempdir().unwrap();
        let server = FakeServer::spawn(scenario(false)).unwrap();
        let mut command = workspace.anthropic(&server);
        command.args(["--dangerously-skip-permissions", "-p", "go", "--no-session-persistence"]);
        let child = command.env("TMPDIR", tmp.path()).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
        let pids = started(&workspace, false);
        let made: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().flatten().map(|entry| entry.file_name()).collect();
        assert!(made.iter().any(|name| name.to_string_lossy().starts_with("tandem-unsaved-")), "{made:?}");
        signal(child.id(), name);
        assert_eq!(child.wait_with_output().unwrap().status.code(), Some(code));
        assert_all_ended(&pids, name);
        let left: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().flatten().map(|entry| entry.file_name()).collect();
        assert!(!left.iter().any(|name| name.to_string_lossy().starts_with("tandem-unsaved-")), "{name}: {left:?}");
    }
}
