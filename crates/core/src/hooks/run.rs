//! Running one hook command: `sh -c` in the session's directory, the event's JSON on stdin, in a session (and
//! process group) of its own with no controlling terminal, killed whole at its timeout or on an interrupt.

use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rustix::process::{Pid, Signal, kill_process_group};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

use crate::tools::bash::{ConfinedRun, Runs};

/// Output kept per stream; the rest is read and dropped so the hook never blocks on a full pipe.
const OUTPUT_CAP: usize = 2 * 1024 * 1024;

/// How long, once the hook is gone, its output may still take to arrive (a child that left the process group
/// may hold the pipe open: what was written by then is what counts).
const DRAIN: Duration = Duration::from_millis(200);

/// How a hook process ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Exit {
    Code(i32),
    /// Killed by a signal (a crash).
    Signal,
    TimedOut(Duration),
    /// The turn was interrupted while it ran.
    Interrupted,
    /// It could not be started at all.
    SpawnFailed(String),
}

/// What a hook process did.
#[derive(Clone, Debug)]
pub struct Finished {
    pub exit: Exit,
    pub stdout: String,
    pub stderr: String,
}

/// What a hook process is started with.
pub(crate) struct Launch<'a> {
    pub command: &'a str,
    pub cwd: &'a Path,
    pub project_dir: &'a Path,
    pub env: &'a crate::shell_env::ShellEnvPolicy,
    pub stdin: Vec<u8>,
    pub timeout: Duration,
    pub cancel: Option<&'a CancellationToken>,
    /// What the hook runs under: the grant of a command the user's own rule allows; `None` (the sandbox is off
    /// or the kernel can't enforce it): with tandem's rights.
    pub sandbox: Option<&'a crate::sandbox::SandboxPolicy>,
}

pub(crate) async fn run(launch: Launch<'_>) -> Finished {
    let failed = |why: String| Finished { exit: Exit::SpawnFailed(why), stdout: String::new(), stderr: String::new() };
    let mut command = tokio::process::Command::new("/bin/sh");
    launch.env.apply(&mut command);
    command
        .arg("-c")
        .arg(launch.command)
        .current_dir(launch.cwd)
        .env("CLAUDE_PROJECT_DIR", launch.project_dir)
        .env("TANDEM_PROJECT_DIR", launch.project_dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    // Every process of the hook carries this mark, so one that left the process group is found and ended too.
    let mark = format!("hook-{:016x}{:016x}", fastrand::u64(..), fastrand::u64(..));
    command.env(crate::tools::bash::CALL_MARK, &mark);
    crate::sandbox::own_session(&mut command);
    // The hook is the user's, but what it runs (a formatter in `.venv/bin`, a Makefile's recipe) the model may
    // have rewritten unasked: it runs confined as a command the user's own rule allows, and registered as one.
    let never = CancellationToken::new();
    let cancel = launch.cancel.unwrap_or(&never);
    let runs = Runs::Hook { command: launch.command, cwd: launch.cwd };
    let confine = ConfinedRun::begin(runs, launch.sandbox, &mark, cancel);
    let Some(confined) = confine.await else {
        return Finished { exit: Exit::Interrupted, stdout: String::new(), stderr: String::new() };
    };
    if let Some(policy) = &confined.policy {
        crate::tools::bash::refuse_implicit_bare_repositories(&mut command);
        if let Err(err) = crate::sandbox::apply(&mut command, policy) {
            return failed(format!("could not sandbox it: {err}"));
        }
    }
    let spawning = crate::tools::bash::running::spawning();
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(err) => return failed(format!("could not start /bin/sh: {err}")),
    };
    let group = child.id().and_then(|id| Pid::from_raw(id as i32));
    if let Some(group) = group {
        confined.registration.set_group(group);
    }
    drop(spawning);
    let stdin = child.stdin.take();
    let input = launch.stdin;
    // A hook that never reads its stdin must not block the write: it goes on beside the wait.
    let writer = tokio::spawn(async move {
        if let Some(mut stdin) = stdin {
            let _ = stdin.write_all(&input).await;
            let _ = stdin.shutdown().await;
        }
    });
    let stdout_buf = Arc::new(Mutex::new(Vec::new()));
    let stderr_buf = Arc::new(Mutex::new(Vec::new()));
    let stdout = tokio::spawn(read_capped(child.stdout.take(), stdout_buf.clone()));
    let stderr = tokio::spawn(read_capped(child.stderr.take(), stderr_buf.clone()));
    let exit = tokio::select! {
        status = child.wait() => match status {
            Ok(status) => match status.code() {
                Some(code) => Exit::Code(code),
                None => Exit::Signal,
            },
            Err(err) => Exit::SpawnFailed(format!("waiting for it failed: {err}")),
        },
        _ = tokio::time::sleep(launch.timeout) => Exit::TimedOut(launch.timeout),
        _ = cancel.cancelled() => Exit::Interrupted,
    };
    // Whatever it left running goes with it (also after a normal exit: a hook is not a way to start daemons).
    if let Some(group) = group {
        let _ = kill_process_group(group, Signal::KILL);
    }
    let _ = child.start_kill();
    let _ = child.wait().await;
    writer.abort();
    // Pipes still open after the group is gone: a process that left it (setsid) holds them. It goes too, and
    // what the hook wrote counts.
    if !wait_for(&[&stdout, &stderr], DRAIN / 4).await {
        crate::tools::bash::running::kill_marked(&[&mark]);
        wait_for(&[&stdout, &stderr], DRAIN).await;
    }
    let restored = confined.end();
    stdout.abort();
    stderr.abort();
    let text = |buf: &Arc<Mutex<Vec<u8>>>| {
        let bytes = buf.lock().map(|bytes| bytes.clone()).unwrap_or_default();
        String::from_utf8_lossy(&bytes).into_owned()
    };
    let (stdout, mut stderr) = (text(&stdout_buf), text(&stderr_buf));
    for note in restored {
        stderr.push_str(&format!("\ntandem: {note}"));
    }
    Finished { exit, stdout, stderr }
}

/// Waits until every task finished, up to `limit`; whether they all did.
async fn wait_for(tasks: &[&tokio::task::JoinHandle<()>], limit: Duration) -> bool {
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        if tasks.iter().all(|task| task.is_finished()) {
            return true;
        }
        if tokio::time::Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

/// Reads a pipe to its end into `kept` (up to [`OUTPUT_CAP`]), where it can be taken before the end comes.
async fn read_capped(pipe: Option<impl tokio::io::AsyncRead + Unpin>, kept: Arc<Mutex<Vec<u8>>>) {
    let Some(mut pipe) = pipe else { return };
    let mut buf = [0u8; 8192];
    loop {
        match pipe.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if let Ok(mut kept) = kept.lock() {
                    let room = OUTPUT_CAP.saturating_sub(kept.len());
                    kept.extend_from_slice(&buf[..n.min(room)]);
                }
            }
        }
    }
}
