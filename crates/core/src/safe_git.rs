//! The git tandem runs itself, to read a repository (rewind's scan) or to check what a command left in one (the
//! sandbox's guard): the `git` on `PATH` outside the workspace, with nothing a repository configures or the
//! environment sets able to change what it reads or make it run a program.

use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The `git` to run: the first on `PATH` outside the workspace `root` (a relative entry, or one like
/// `node_modules/.bin` or a direnv `$PWD/bin`, would run a `git` the repository brings).
fn program(root: &Path) -> Option<PathBuf> {
    crate::fs_util::program_outside("git", &std::env::var_os("PATH")?, &[root.to_path_buf()])
}

/// A git command in `root` that reads only: git's own variables cleared (no other repository, index or config
/// given from outside), no fsmonitor, no lazy fetching, no replace objects, and no bare repository found by
/// looking (a workspace shaped like one can name another project's repository in `commondir`).
pub(crate) fn command(root: &Path, args: &[&str]) -> Option<Command> {
    let mut command = Command::new(program(root)?);
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("GIT_") {
            command.env_remove(name);
        }
    }
    command
        .current_dir(root)
        .env("GIT_NO_LAZY_FETCH", "1")
        .env("GIT_NO_REPLACE_OBJECTS", "1")
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env("GIT_TERMINAL_PROMPT", "0")
        .args(["-c", "core.fsmonitor=false", "-c", "core.untrackedCache=false", "-c", "safe.bareRepository=explicit"])
        .args(args)
        .stderr(Stdio::null());
    Some(command)
}

/// Runs a git command, feeding it `input`, and returns its output if it succeeded within `timeout` (killed
/// otherwise) and gave at most `most` bytes.
pub(crate) fn output(
    root: &Path,
    args: &[&str],
    input: Option<Vec<u8>>,
    most: u64,
    timeout: Duration,
) -> Option<Vec<u8>> {
    let mut command = command(root, args)?;
    command.stdin(if input.is_some() { Stdio::piped() } else { Stdio::null() }).stdout(Stdio::piped());
    let mut child = command.spawn().ok()?;
    if let (Some(input), Some(mut stdin)) = (input, child.stdin.take()) {
        std::thread::spawn(move || {
            let _ = stdin.write_all(&input);
        });
    }
    let stdout = child.stdout.take()?;
    let (sender, received) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut output = Vec::new();
        let read = stdout.take(most.saturating_add(1)).read_to_end(&mut output);
        let _ = sender.send(read.ok().filter(|_| output.len() as u64 <= most).map(|_| output));
    });
    let deadline = Instant::now() + timeout;
    let status = wait_until(&mut child, deadline);
    // Not waited on past the deadline: a process git left behind could hold its output open.
    let left = deadline.saturating_duration_since(Instant::now()).max(Duration::from_millis(100));
    let output = received.recv_timeout(left).ok().flatten();
    if status.is_some_and(|status| status.success()) { output } else { None }
}

/// A git command's exit code, within `timeout` (`None` when it took longer and was killed).
pub(crate) fn status(root: &Path, args: &[&str], timeout: Duration) -> Option<i32> {
    let mut child = command(root, args)?.stdin(Stdio::null()).stdout(Stdio::null()).spawn().ok()?;
    wait_until(&mut child, Instant::now() + timeout)?.code()
}

/// The child's exit status, or `None` once `deadline` passed (it is killed then).
fn wait_until(child: &mut std::process::Child, deadline: Instant) -> Option<std::process::ExitStatus> {
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Some(status),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(2)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
}
