//! Tests of the Bash tool: exit codes, timeouts and interrupts that kill the whole process group, bounded output.

use super::*;
use crate::tools::Tool;
use serde_json::json;
use std::time::Instant as StdInstant;

fn ctx(dir: &Path) -> ToolContext {
    ToolContext::new(dir.to_path_buf())
}

async fn bash(ctx: &ToolContext, input: Value) -> ToolOutput {
    BashTool.run(input.into(), ctx).await
}

/// Whether a process is gone (a zombie nobody reaped yet counts as gone: it runs nothing).
fn process_gone(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat.rsplit(')').next().is_some_and(|rest| rest.trim_start().starts_with('Z')),
        Err(_) => true,
    }
}

async fn wait_gone(pid: i32) -> bool {
    for _ in 0..50 {
        if process_gone(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

fn read_pid(path: &Path) -> i32 {
    std::fs::read_to_string(path).unwrap().trim().parse().unwrap()
}

#[tokio::test]
async fn stdout_stderr_and_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(dir.path());
    let out = bash(&ctx, json!({"command": "echo out; echo err >&2; exit 3"})).await;
    assert!(out.is_error);
    assert_eq!(out.content, "out\n[stderr]\nerr\nExit code: 3");
    let out = bash(&ctx, json!({"command": "pwd; echo $PAGER $GIT_PAGER $GIT_TERMINAL_PROMPT; cat"})).await;
    assert!(!out.is_error, "{}", out.content);
    let cwd = std::fs::canonicalize(dir.path()).unwrap();
    assert_eq!(out.content, format!("{}\ncat cat 0", cwd.display()));
    let out = bash(&ctx, json!({"command": "true"})).await;
    assert_eq!(out, ToolOutput::ok("(no output)"));
    let out = bash(&ctx, json!({"command": "kill -9 $$"})).await;
    assert!(out.is_error && out.content.contains("Killed by signal 9"), "{}", out.content);
}

#[tokio::test]
async fn timeout_kills_the_whole_group_including_background_children() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(dir.path());
    let started = StdInstant::now();
    let out = bash(&ctx, json!({"command": "sleep 30 & echo $! > bg.pid; sleep 30", "timeout": 300})).await;
    assert!(started.elapsed() < Duration::from_secs(10), "hung for {:?}", started.elapsed());
    assert!(out.is_error);
    assert!(out.content.contains("Command timed out after 0.3s"), "{}", out.content);
    let pid = read_pid(&dir.path().join("bg.pid"));
    assert!(wait_gone(pid).await, "background sleep {pid} survived the timeout");
}

#[tokio::test]
async fn cancel_token_interrupts() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(dir.path());
    let cancel = ctx.cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        cancel.cancel();
    });
    let started = StdInstant::now();
    let out = bash(&ctx, json!({"command": "echo started; sleep 30 & echo $! > bg.pid; wait"})).await;
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(out.is_error);
    assert!(out.content.starts_with("started\n"), "{}", out.content);
    assert!(out.content.ends_with("Command was interrupted by the user and killed."), "{}", out.content);
    assert!(wait_gone(read_pid(&dir.path().join("bg.pid"))).await);
}

#[tokio::test]
async fn background_child_holding_pipes_does_not_hang() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(dir.path());
    let started = StdInstant::now();
    let out = bash(&ctx, json!({"command": "sleep 30 & echo $! > bg.pid; echo done"})).await;
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(!out.is_error, "{}", out.content);
    assert!(out.content.starts_with("done\nNote: background processes"), "{}", out.content);
    assert!(wait_gone(read_pid(&dir.path().join("bg.pid"))).await);
}

#[tokio::test]
async fn background_processes_end_with_the_call_and_temp_files_with_them() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(dir.path());
    let out = bash(
        &ctx,
        json!({"command": "sleep 30 > /dev/null 2>&1 & echo $! > bg.pid; setsid sleep 31 > /dev/null 2>&1 & echo $! > sid.pid; echo $TMPDIR > tmp.txt; touch $TMPDIR/scratch"}),
    )
    .await;
    assert!(!out.is_error, "{}", out.content);
    assert!(out.content.contains("background processes started by this command were killed"), "{}", out.content);
    assert!(wait_gone(read_pid(&dir.path().join("bg.pid"))).await, "a background process is killed");
    assert!(wait_gone(read_pid(&dir.path().join("sid.pid"))).await, "one that left the process group too");
    let temp = PathBuf::from(std::fs::read_to_string(dir.path().join("tmp.txt")).unwrap().trim());
    assert!(temp.file_name().unwrap().to_string_lossy().starts_with("tandem-cmd-"), "{}", temp.display());
    assert!(!temp.exists(), "the command's temp dir is removed");

    // Killed on timeout: its temp dir goes too.
    let out =
        bash(&ctx, json!({"command": "echo $TMPDIR > tmp2.txt; touch $TMPDIR/x; sleep 30", "timeout": 300})).await;
    assert!(out.is_error);
    let temp = PathBuf::from(std::fs::read_to_string(dir.path().join("tmp2.txt")).unwrap().trim());
    assert!(!temp.exists(), "a killed command leaves no temp files");
}

#[tokio::test]
async fn secrets_are_not_in_a_commands_environment() {
    let dir = tempfile::tempdir().unwrap();
    let mut ctx = ctx(dir.path());
    let mut policy = crate::shell_env::ShellEnvPolicy::default();
    policy.set.insert("VISIBLE".into(), "yes".into());
    ctx.shell_env = std::sync::Arc::new(policy);
    let out = bash(&ctx, json!({"command": "env | cut -d= -f1 | grep -iE 'key|token|secret' ; echo $VISIBLE; printenv PATH >/dev/null && echo path"})).await;
    assert_eq!(out.content, "yes\npath", "no secret-looking name is passed on");
}

#[tokio::test]
async fn ten_megabytes_of_output_is_truncated_with_counts() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(dir.path());
    let out = bash(&ctx, json!({"command": "head -c 10000000 /dev/zero | tr '\\0' a; echo; echo last line"})).await;
    assert!(!out.is_error);
    assert!(out.content.len() <= MAX_OUTPUT_CHARS + 300, "{}", out.content.len());
    assert!(out.content.starts_with("aaaa"));
    assert!(out.content.ends_with("aaaa\nlast line"), "{}", &out.content[out.content.len() - 50..]);
    assert!(out.content.contains("characters (0 lines) omitted from the middle; total 10000011 characters, 2 lines"));
}

#[tokio::test]
async fn live_output_is_forwarded() {
    let dir = tempfile::tempdir().unwrap();
    let mut ctx = ctx(dir.path());
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    ctx.live_output = Some(tx);
    let out = bash(&ctx, json!({"command": "echo one; echo two >&2"})).await;
    drop(ctx);
    let mut seen = String::new();
    while let Some(piece) = rx.recv().await {
        seen.push_str(&piece);
    }
    assert!(seen.contains("one\n") && seen.contains("two\n"), "{seen:?}");
    assert_eq!(out.content, "one\n[stderr]\ntwo");
}

#[tokio::test]
async fn timeout_clamped_and_background_started() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(dir.path());
    let out = bash(&ctx, json!({"command": "echo hi", "timeout": 700000})).await;
    assert_eq!(out.content, "(timeout 700000 ms is over the maximum; capped at 600000 ms)\nhi");
    let out = bash(&ctx, json!({"command": "echo hi", "run_in_background": true})).await;
    assert!(!out.is_error && out.content.contains("ID: bash_1"), "{}", out.content);
    assert_eq!(ctx.background.list()[0].command, "echo hi");
    let preview = Tool::preview(&BashTool, &json!({"command": "ls"}), &ctx).unwrap();
    assert_eq!(preview, Some(Preview::Command { command: "ls".into(), cwd: dir.path().to_path_buf() }));
}

#[tokio::test]
async fn big_output_is_saved_to_the_session_directory() {
    let dir = tempfile::tempdir().unwrap();
    let mut ctx = ToolContext::new(dir.path().to_path_buf());
    ctx.output_dir = Some(dir.path().join("session-outputs"));
    let out = BashTool.run(serde_json::json!({"command": "seq 1 100000"}).into(), &ctx).await;
    assert!(!out.is_error, "{}", out.content);
    let line = out.content.lines().find(|line| line.contains("was saved to")).expect("the saved file is named");
    let path = line.split("saved to ").nth(1).unwrap().split(':').next().unwrap();
    let saved = std::fs::read_to_string(path).unwrap();
    assert_eq!(saved.lines().count(), 100_000);
    assert!(saved.ends_with("100000\n"));
}
