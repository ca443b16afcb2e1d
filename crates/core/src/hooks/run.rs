//! Running one hook command: `sh -c` in the session's directory, the event's JSON on stdin, in a session (and
//! process group) of its own with no controlling terminal, killed whole at its timeout or on an interrupt.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use rustix::process::{Pid, Signal, kill_process_group};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

/// Output kept per stream; the rest is read and dropped so the hook never blocks on a full pipe.
const OUTPUT_CAP: usize = 256 * 1024;

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
    crate::sandbox::own_session(&mut command);
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(err) => return failed(format!("could not start /bin/sh: {err}")),
    };
    let group = child.id().and_then(|id| Pid::from_raw(id as i32));
    let mut guard = GroupGuard(group);
    let stdin = child.stdin.take();
    let input = launch.stdin;
    // A hook that never reads its stdin must not block the write: it goes on beside the wait.
    let writer = tokio::spawn(async move {
        if let Some(mut stdin) = stdin {
            let _ = stdin.write_all(&input).await;
            let _ = stdin.shutdown().await;
        }
    });
    let stdout = tokio::spawn(read_capped(child.stdout.take()));
    let stderr = tokio::spawn(read_capped(child.stderr.take()));
    let never = CancellationToken::new();
    let cancel = launch.cancel.unwrap_or(&never);
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
    guard.0 = None;
    writer.abort();
    let collect = |handle: tokio::task::JoinHandle<Vec<u8>>| async move {
        match tokio::time::timeout(Duration::from_millis(500), handle).await {
            Ok(Ok(bytes)) => String::from_utf8_lossy(&bytes).into_owned(),
            _ => String::new(),
        }
    };
    let stdout = collect(stdout).await;
    let stderr = collect(stderr).await;
    Finished { exit, stdout, stderr }
}

async fn read_capped(pipe: Option<impl tokio::io::AsyncRead + Unpin>) -> Vec<u8> {
    let Some(mut pipe) = pipe else { return Vec::new() };
    let mut kept = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        match pipe.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let room = OUTPUT_CAP.saturating_sub(kept.len());
                kept.extend_from_slice(&buf[..n.min(room)]);
            }
        }
    }
    kept
}

/// Kills the hook's process group if its run is abandoned midway (the future dropped).
struct GroupGuard(Option<Pid>);

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if let Some(group) = self.0 {
            let _ = kill_process_group(group, Signal::KILL);
        }
    }
}
