//! `Bash`: runs a shell command in the working directory.
//!
//! The command runs as `bash -c` in its own process group, so a timeout or an interrupt can kill everything it
//! started (pipelines, `cmd &` children), not just the shell. Output is captured with bounded memory
//! ([`capture`]), and the tool never waits forever on a background process that keeps the output pipes open
//! after the shell itself exited.

pub mod background;
pub mod capture;
pub mod running;

use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use futures::future::BoxFuture;
use rustix::process::{Pid, Signal, kill_process_group};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::{Child, Command};
use tokio::sync::mpsc::UnboundedSender;
use tokio::task::JoinHandle;
use tokio::time::{Instant, timeout_at};
use tokio_util::sync::CancellationToken;

use self::capture::{Capture, Utf8Stream};
use super::typed::TypedTool;
use super::{Preview, Risk, ToolContext, ToolOutput};
use crate::sandbox::{self, SandboxPolicy};

/// Timeout when the model gives none.
pub const DEFAULT_TIMEOUT_MS: u64 = 120_000;
/// The longest a command may run.
pub const MAX_TIMEOUT_MS: u64 = 600_000;
/// Characters of output the model sees; beyond it the middle is left out.
pub const MAX_OUTPUT_CHARS: usize = 30_000;
/// At most this much of the output budget goes to stderr when both streams are long.
const STDERR_SHARE: usize = 10_000;
/// After SIGTERM, how long the command gets to exit before SIGKILL.
const TERM_GRACE: Duration = Duration::from_millis(200);
/// After the shell exited, how long its output may keep flowing before background processes still holding the
/// pipes are killed.
const DRAIN_GRACE: Duration = Duration::from_millis(250);
/// After SIGKILL, how long to wait for the pipes to close before giving up on them.
const KILL_DRAIN: Duration = Duration::from_secs(1);

const DESCRIPTION: &str = "Executes a bash command and returns its output.\n\
\n\
- The command runs with `bash -c` in the working directory, with no input (stdin is /dev/null) and no \
terminal: interactive programs and prompts won't work (git's pager and credential prompts are disabled).\n\
- Each call is a fresh shell: `cd` and exported variables do not carry over to the next call. Use absolute \
paths or `cd dir && cmd`.\n\
- timeout is in milliseconds: default 120000 (2 minutes), at most 600000 (10 minutes). On timeout the command \
and everything it started is killed.\n\
- Output is stdout, then stderr (labelled), then the exit code when it is not 0. Over 30000 characters, the \
middle is left out: filter long outputs (grep, head, tail) instead.\n\
- Processes the command leaves running in the background are killed when it ends; each command has a temp dir \
of its own ($TMPDIR), removed when it ends.\n\
- run_in_background: true starts a long-running command (a dev server, a watcher) and returns its id at once; read its output with BashOutput and stop it with KillShell. Don't use & to background a command: it is killed when the call ends.\n\
- Prefer the dedicated tools over shell equivalents: Read instead of cat/head/tail, Edit/Write instead of \
sed/echo redirection, Grep instead of grep/rg, Glob instead of find/ls for finding files.\n\
- Quote paths that contain spaces. Chain dependent commands with &&; make independent calls in parallel.\n\
- description: a short (5-10 words) description of what the command does, shown to the user.";

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// The command to execute
    command: String,
    /// Optional timeout in milliseconds (max 600000, default 120000)
    #[schemars(range(min = 1))]
    timeout: Option<u64>,
    /// Clear, concise description of what this command does in 5-10 words
    #[allow(dead_code)] // Shown by front ends from the raw input; the tool itself has no use for it.
    description: Option<String>,
    /// Set to true to run this command in the background; read its output with BashOutput and stop it with KillShell
    run_in_background: Option<bool>,
    /// Run outside tandem's sandbox. Only after a command failed because of the sandbox and the write is really needed: the user is always asked first.
    // The policy always asks the user first, and only an approved call gets here.
    #[serde(rename = "dangerouslyDisableSandbox")]
    disable_sandbox: Option<bool>,
}

pub struct BashTool;

impl TypedTool for BashTool {
    type Input = Input;
    const NAME: &'static str = "Bash";

    fn description(&self) -> std::borrow::Cow<'static, str> {
        DESCRIPTION.into()
    }

    fn is_read_only(&self) -> bool {
        false
    }

    fn permission_subject(&self, input: &Value, _cwd: &std::path::Path) -> super::Subject {
        let command = input.get("command").and_then(Value::as_str).unwrap_or_default().to_owned();
        let unsandboxed = input.get("dangerouslyDisableSandbox").and_then(Value::as_bool).unwrap_or(false);
        super::Subject::Command { command, unsandboxed }
    }

    fn kind(&self) -> super::ToolKind {
        super::ToolKind::Exec
    }

    fn risk(&self) -> Risk {
        Risk::High
    }

    fn risk_for(&self, input: &Value) -> Risk {
        let command = input.get("command").and_then(Value::as_str).unwrap_or_default();
        crate::shell::risk_of(command)
    }

    fn preview(&self, input: &Value, ctx: &ToolContext) -> Result<Option<Preview>, String> {
        let command = input.get("command").and_then(Value::as_str).unwrap_or_default().to_string();
        Ok(Some(Preview::Command { command, cwd: ctx.cwd.clone() }))
    }

    fn call<'a>(&'a self, input: Input, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move {
            if input.run_in_background == Some(true) {
                let launch = Launch {
                    sandbox: if input.disable_sandbox == Some(true) { None } else { ctx.sandbox.as_ref() },
                    spill_dir: None,
                    env: &ctx.shell_env,
                };
                return match ctx.background.start(&input.command, &ctx.cwd, launch, &ctx.cancel).await {
                    Ok(id) => ToolOutput::ok(format!(
                        "Command running in the background with ID: {id}. Read its output with BashOutput (bash_id \"{id}\") and stop it with KillShell; it is killed when the session ends."
                    ))
                    .with_structured(serde_json::json!({
                        "stdout": "", "stderr": "", "interrupted": false, "isImage": false, "backgroundTaskId": id,
                    })),
                    Err(why) => ToolOutput::error(why),
                };
            }
            let requested = input.timeout.unwrap_or(DEFAULT_TIMEOUT_MS);
            let timeout_ms = requested.min(MAX_TIMEOUT_MS);
            // Around a command that may change files, a scan finds what it changed, for rewind (one the
            // analyser knows only reads is not scanned).
            let may_write = crate::shell::risk_of(&input.command) != crate::tools::Risk::Low;
            let mut rewind_notes = Vec::new();
            let scan = match ctx.checkpoints.clone().filter(|_| may_write) {
                Some(checkpoints) => {
                    let root = ctx.cwd.clone();
                    let scan =
                        bounded(tokio::task::spawn_blocking(move || checkpoints.scan_before(&root)), Some(&ctx.cancel))
                            .await;
                    if scan.is_none() {
                        rewind_notes.push(SCAN_ABANDONED.to_owned());
                    }
                    scan
                }
                None => None,
            };
            let result = run_command(
                &input.command,
                &ctx.cwd,
                Duration::from_millis(timeout_ms),
                &ctx.cancel,
                ctx.live_output.as_ref(),
                Launch {
                    sandbox: if input.disable_sandbox == Some(true) { None } else { ctx.sandbox.as_ref() },
                    spill_dir: ctx.output_dir.as_deref(),
                    env: &ctx.shell_env,
                },
            )
            .await;
            let mut output = result.format(timeout_ms);
            // Sandbox: tell the model a failure may be the sandbox's doing, so it asks instead of working around it.
            if output.is_error
                && let Some(note) = ctx.sandbox.as_ref().and_then(|policy| sandbox::note_for(policy, &output.content))
            {
                output.content = format!("{}\n{note}", output.content);
            }
            if let (Some(checkpoints), Some(scan)) = (ctx.checkpoints.clone(), scan) {
                // Not given up on an interrupt: what an interrupted command changed is checkpointed too.
                match bounded(tokio::task::spawn_blocking(move || checkpoints.record_scan(scan)), None).await {
                    Some(notes) => rewind_notes.extend(notes),
                    None => rewind_notes.push(SCAN_ABANDONED.to_owned()),
                }
            }
            for note in rewind_notes {
                output.content = format!("{}\n({note})", output.content);
            }
            if requested > MAX_TIMEOUT_MS {
                output.content = format!(
                    "(timeout {requested} ms is over the maximum; capped at {MAX_TIMEOUT_MS} ms)\n{}",
                    output.content
                );
            }
            output
        })
    }
}

/// How a command ended.
#[derive(Debug)]
pub enum Outcome {
    Exited(ExitStatus),
    TimedOut,
    Interrupted,
    /// The shell could not be started (the message says why).
    SpawnFailed(String),
}

/// A finished command: its captured output and how it ended.
#[derive(Debug)]
pub struct CommandResult {
    pub stdout: Capture,
    pub stderr: Capture,
    pub outcome: Outcome,
    /// Background processes kept the output pipes open after the shell exited, and were killed.
    pub killed_leftovers: bool,
    /// Protected entries (repository configuration, settings) the command changed, put back by the sandbox.
    pub restored: Vec<String>,
}

impl CommandResult {
    /// The tool result the model sees.
    fn format(&self, timeout_ms: u64) -> ToolOutput {
        let stderr_budget = if self.stdout.is_empty() { MAX_OUTPUT_CHARS } else { STDERR_SHARE };
        let stderr_len = usize::try_from(self.stderr.len()).unwrap_or(usize::MAX).min(stderr_budget);
        let stdout_budget = MAX_OUTPUT_CHARS - stderr_len;
        let mut parts = Vec::new();
        if !self.stdout.is_empty() {
            parts.push(self.stdout.render(stdout_budget));
        }
        if !self.stderr.is_empty() {
            parts.push(format!("[stderr]\n{}", self.stderr.render(stderr_budget)));
        }
        let mut is_error = true;
        match &self.outcome {
            Outcome::Exited(status) => match status.code() {
                Some(0) => is_error = false,
                Some(code) => parts.push(format!("Exit code: {code}")),
                None => parts.push(describe_signal(status)),
            },
            Outcome::TimedOut => parts.push(format!(
                "Command timed out after {}; it and the processes it started were killed.",
                format_ms(timeout_ms)
            )),
            Outcome::Interrupted => parts.push(super::COMMAND_INTERRUPTED.to_string()),
            Outcome::SpawnFailed(message) => parts.push(message.clone()),
        }
        for (name, capture) in [("output", &self.stdout), ("stderr", &self.stderr)] {
            if let Some(path) = capture.spilled_path() {
                let saved = if capture.spill_truncated() {
                    format!("The first {} MiB of the {name}", capture::MAX_SPILL_BYTES / (1024 * 1024))
                } else {
                    format!("The full {name}")
                };
                parts.push(format!(
                    "{saved} ({} lines) was saved to {}: Read or Grep it for the part left out above.",
                    capture.lines(),
                    path.display()
                ));
            }
        }
        if !self.restored.is_empty() {
            const SHOWN: usize = 20;
            let more = self.restored.len().saturating_sub(SHOWN);
            let more = if more > 0 { format!("; and {more} more") } else { String::new() };
            parts.push(format!(
                "Note: the sandbox put back protected files this command changed (repository configuration and \
                 hooks, .claude, .tandem and .mcp.json are never the command's to change, nor a repository's \
                 history — refs, index, logs, objects — unless the command is git itself): {}{more}.",
                self.restored.iter().take(SHOWN).cloned().collect::<Vec<_>>().join("; ")
            ));
        }
        if self.killed_leftovers {
            parts.push(
                "Note: background processes started by this command were killed when it ended (commands can't \
                 leave processes running)."
                    .to_string(),
            );
        }
        if parts.is_empty() {
            parts.push("(no output)".to_string());
        }
        let structured = serde_json::json!({
            "stdout": self.stdout.render(MAX_OUTPUT_CHARS),
            "stderr": self.stderr.render(MAX_OUTPUT_CHARS),
            "interrupted": matches!(self.outcome, Outcome::Interrupted | Outcome::TimedOut),
            "isImage": false,
        });
        ToolOutput { content: parts.join("\n"), is_error, structured: Some(structured), images: None }
    }
}

/// How long the rewind scan around a command may take (git's own runs are limited to 10 s each).
const SCAN_WAIT: Duration = Duration::from_secs(60);

const SCAN_ABANDONED: &str = "rewind: the workspace scan did not finish (interrupted, or over 60 s); this command's file changes were not checkpointed";

/// A scan's result, unless `cancel` fires or it takes over [`SCAN_WAIT`] (then it is left to finish on its own,
/// and not waited for).
async fn bounded<T>(task: tokio::task::JoinHandle<T>, cancel: Option<&CancellationToken>) -> Option<T> {
    let cancelled = async {
        match cancel {
            Some(cancel) => cancel.cancelled().await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        done = tokio::time::timeout(SCAN_WAIT, task) => done.ok().and_then(Result::ok),
        () = cancelled => None,
    }
}

fn describe_signal(status: &ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            let name = match signal {
                9 => " (SIGKILL)",
                15 => " (SIGTERM)",
                11 => " (SIGSEGV)",
                6 => " (SIGABRT)",
                2 => " (SIGINT)",
                _ => "",
            };
            return format!("Killed by signal {signal}{name}");
        }
    }
    format!("Command ended abnormally: {status}")
}

fn format_ms(ms: u64) -> String {
    if ms.is_multiple_of(1000) { format!("{}s", ms / 1000) } else { format!("{:.1}s", ms as f64 / 1000.0) }
}

/// Where and how a command is started.
pub struct Launch<'a> {
    /// Run under this sandbox ([`sandbox::apply`]).
    pub sandbox: Option<&'a SandboxPolicy>,
    /// Where output too big for the result is saved whole.
    pub spill_dir: Option<&'a Path>,
    /// The environment the command gets.
    pub env: &'a crate::shell_env::ShellEnvPolicy,
}

/// Runs `command` with `bash -c` in `cwd` until it exits, `timeout` passes or `cancel` fires. Output chunks are
/// also sent to `live` as they arrive. With a `sandbox`, the command runs under it ([`sandbox::apply`]).
pub async fn run_command(
    command: &str,
    cwd: &Path,
    timeout: Duration,
    cancel: &CancellationToken,
    live: Option<&UnboundedSender<String>>,
    launch: Launch<'_>,
) -> CommandResult {
    let Launch { sandbox, spill_dir, env } = launch;
    let failed = |message: String| CommandResult {
        stdout: Capture::new(),
        stderr: Capture::new(),
        outcome: Outcome::SpawnFailed(message),
        killed_leftovers: false,
        restored: Vec::new(),
    };
    if !cwd.is_dir() {
        return failed(format!("Working directory {} does not exist.", cwd.display()));
    }
    // Each command gets a temp dir of its own (inside the sandbox's private one), removed when the call ends,
    // killed or not.
    let temp_base =
        sandbox.and_then(SandboxPolicy::temp_root).map(Path::to_path_buf).unwrap_or_else(std::env::temp_dir);
    let call_temp = tempfile::Builder::new().prefix("tandem-cmd-").tempdir_in(&temp_base).ok();
    // Every process of the call carries this mark in its environment, so those that left its process group
    // (`setsid`, a daemon's double fork) are found and ended with it too.
    let mark = format!("{:016x}{:016x}", fastrand::u64(..), fastrand::u64(..));
    let started = Started { temp: call_temp.as_ref().map(tempfile::TempDir::path), mark: &mark };
    // A workspace-writing sandbox that grants the workspace whole puts its protected entries back at the end;
    // where they can't be copied, or while another command runs, they are kept read-only instead.
    let Some(confined) = ConfinedRun::begin(Runs::Command { command, cwd }, sandbox, &mark, cancel).await else {
        return CommandResult { outcome: Outcome::Interrupted, ..failed(String::new()) };
    };
    let sandbox = confined.policy.as_ref();
    let spawning = running::spawning();
    let mut child = match spawn(shell(), command, cwd, sandbox, env, started) {
        Ok(child) => child,
        Err(err) => return failed(format!("Could not start bash: {err}")),
    };
    let Some(group) = child.id().and_then(|id| Pid::from_raw(id as i32)) else {
        return failed("Could not start bash: no process id".to_string());
    };
    confined.registration.set_group(group);
    drop(spawning);
    let stop = CancellationToken::new();
    // Output too big for the result is saved whole in the session's directory, under a name unique to the run.
    let spill = |stream: &str| {
        spill_dir
            .map(|dir| dir.join(format!("bash-{}-{:08x}-{stream}.txt", crate::session::now_secs(), fastrand::u32(..))))
    };
    let mut stdout = spawn_reader(child.stdout.take(), live.cloned(), stop.clone(), spill("stdout"));
    let mut stderr = spawn_reader(child.stderr.take(), live.cloned(), stop.clone(), spill("stderr"));

    let outcome = tokio::select! {
        status = child.wait() => match status {
            Ok(status) => Outcome::Exited(status),
            Err(err) => Outcome::SpawnFailed(format!("Waiting for the command failed: {err}")),
        },
        _ = tokio::time::sleep(timeout) => Outcome::TimedOut,
        _ = cancel.cancelled() => Outcome::Interrupted,
    };
    if matches!(outcome, Outcome::TimedOut | Outcome::Interrupted) {
        terminate(group, &mut child).await;
        running::kill_marked(&[&mark]);
    }

    // Output still flowing after the shell exited comes from background processes holding the pipes.
    let grace = Instant::now() + DRAIN_GRACE;
    let mut out = finish_reader(&mut stdout, grace).await;
    let mut err = finish_reader(&mut stderr, grace).await;
    let mut killed_leftovers = false;
    if out.is_none() || err.is_none() {
        killed_leftovers = matches!(outcome, Outcome::Exited(_));
        let _ = kill_process_group(group, Signal::KILL);
        let deadline = Instant::now() + KILL_DRAIN;
        if out.is_none() {
            out = finish_reader(&mut stdout, deadline).await;
        }
        if err.is_none() {
            err = finish_reader(&mut stderr, deadline).await;
        }
        // A process outside the group (one that called setsid) may still hold a pipe: stop reading.
        stop.cancel();
        let deadline = Instant::now() + KILL_DRAIN;
        if out.is_none() {
            out = finish_reader(&mut stdout, deadline).await;
        }
        if err.is_none() {
            err = finish_reader(&mut stderr, deadline).await;
        }
    }
    // Whatever the command left running in the background goes with the call (only `run_in_background`
    // commands may outlive it, and those are not supported yet). The shell itself is reaped, so a signal that
    // reaches anyone reached a leftover.
    let leftovers = kill_process_group(group, Signal::KILL).is_ok() | running::kill_marked(&[&mark]);
    // Not counted as this command's leftovers: an orphan can't be told apart from another command's.
    running::sweep_orphans();
    if leftovers {
        killed_leftovers |= matches!(outcome, Outcome::Exited(_));
    }
    // Everything the command started is gone: nothing can change the protected entries after this.
    let restored = confined.end();
    drop(call_temp);
    CommandResult {
        stdout: out.unwrap_or_default(),
        stderr: err.unwrap_or_default(),
        outcome,
        killed_leftovers,
        restored,
    }
}

/// What a [`ConfinedRun`] runs: a Bash command of the model's, or a hook of the user's, in `cwd`.
#[derive(Clone, Copy)]
pub(crate) enum Runs<'a> {
    Command { command: &'a str, cwd: &'a Path },
    Hook { command: &'a str, cwd: &'a Path },
}

impl<'a> Runs<'a> {
    fn command(self) -> &'a str {
        match self {
            Runs::Command { command, .. } | Runs::Hook { command, .. } => command,
        }
    }

    fn cwd(self) -> &'a Path {
        match self {
            Runs::Command { cwd, .. } | Runs::Hook { cwd, .. } => cwd,
        }
    }
}

/// A command confined and registered as every foreground command that may run without a per-call approval is
/// — the Bash tool's and the user's hooks alike: granted the workspace whole only when its policy says so, no
/// other command runs and the protected entries could be copied (its guard puts them back); otherwise with them
/// kept read-only; unsandboxed only once no command granted the workspace whole runs (see [`running`]).
pub(crate) struct ConfinedRun {
    /// What it runs under; `None`: unsandboxed.
    pub policy: Option<SandboxPolicy>,
    pub registration: running::Registration,
    /// Settings nested below the workspace before it ran, where it may write and nothing puts them back.
    nested: Option<sandbox::NestedSettings>,
}

impl ConfinedRun {
    /// Registers `command` under `mark` (waiting, for an unsandboxed one, until no command granted the workspace
    /// whole runs; `None` when `cancel` fires first). Processes a finished background command left behind are
    /// ended first: they hold grants too. A hook never starts beside a command granted the workspace whole (what
    /// it runs is the user's own, and must not obey that command's changes before their restore); it waits, and
    /// is itself granted the workspace whole when nothing else runs.
    pub(crate) async fn begin(
        runs: Runs<'_>,
        sandbox: Option<&SandboxPolicy>,
        mark: &str,
        cancel: &CancellationToken,
    ) -> Option<ConfinedRun> {
        let (command, cwd) = (runs.command(), runs.cwd());
        let (policy, registration) = match sandbox {
            None => (None, running::register_apart(mark, Some(cancel)).await?),
            Some(policy) if !policy.restore_protected => (Some(policy.clone()), running::register(mark)),
            Some(policy) => {
                running::sweep_orphans();
                let registered = match runs {
                    Runs::Command { .. } => running::register_exclusive(mark)
                        .map_or_else(|| (running::register(mark), false), |registration| (registration, true)),
                    Runs::Hook { .. } => running::register_after_exclusive(mark, Some(cancel)).await?,
                };
                match registered {
                    (registration, true) => Self::granted_whole(command, cwd, policy, registration),
                    (registration, false) => (Some(policy.for_background()), registration),
                }
            }
        };
        Some(Self::with_nested(command, cwd, policy, registration))
    }

    /// An exclusive registration's policy: the workspace whole, its protected entries copied to be put back; kept
    /// read-only where they can't be copied.
    fn granted_whole(
        command: &str,
        cwd: &Path,
        policy: &SandboxPolicy,
        registration: running::Registration,
    ) -> (Option<SandboxPolicy>, running::Registration) {
        let guard = sandbox::Guard::take(&policy.roots(Some(cwd)), history_for(command));
        let whole = guard.is_some();
        registration.protect(guard);
        (Some(if whole { policy.clone() } else { policy.for_background() }), registration)
    }

    fn with_nested(
        command: &str,
        cwd: &Path,
        policy: Option<SandboxPolicy>,
        registration: running::Registration,
    ) -> ConfinedRun {
        // Kept read-only, the protected entries that exist can't be written, but Landlock can't forbid a new
        // name below a writable directory: settings nested there (`sub/.claude`) are taken out when it ends.
        // (One granted the workspace whole has them put back by its guard.)
        let nested = policy
            .as_ref()
            .filter(|policy| policy.mode == sandbox::SandboxMode::WorkspaceWrite && !registration.is_protected())
            .map(|policy| sandbox::NestedSettings::scan(policy.roots(Some(cwd)), history_for(command)));
        ConfinedRun { policy, registration, nested }
    }

    /// Once everything it started is gone: puts back what its guard protected and takes out nested settings it
    /// made; what was restored, for the model and the user.
    pub(crate) fn end(self) -> Vec<String> {
        let mut restored = self.registration.finish();
        if let Some(nested) = self.nested {
            restored.extend(nested.remove_new());
        }
        restored
    }
}

/// Whether a command that runs without a per-call approval may change the repositories' history: only when every
/// part of the line runs git itself (`git add`, `git commit` under a rule). A build a rule allows may run git
/// inside it, but what it commits or stashes is not what the rule named (see [`sandbox::History`]).
pub fn history_for(command: &str) -> sandbox::History {
    let analysis = crate::shell::analyze(command);
    let only_git = analysis.always_ask.is_none()
        && !analysis.commands.is_empty()
        && analysis.commands.iter().all(|cmd| cmd.argv.first().is_some_and(|program| program == "git"));
    if only_git { sandbox::History::Writable } else { sandbox::History::Protected }
}

/// bash (the analyser's: [`crate::shell::bash`]), or `/bin/sh` where there is none outside the workspace.
fn shell() -> &'static Path {
    crate::shell::bash().unwrap_or(Path::new("/bin/sh"))
}

fn spawn(
    shell: &Path,
    command: &str,
    cwd: &Path,
    sandbox: Option<&SandboxPolicy>,
    env: &crate::shell_env::ShellEnvPolicy,
    started: Started<'_>,
) -> std::io::Result<Child> {
    let mut cmd = Command::new(shell);
    env.apply(&mut cmd);
    if let Some(temp) = started.temp {
        cmd.env("TMPDIR", temp).env("TMP", temp).env("TEMP", temp);
    }
    cmd.env(CALL_MARK, started.mark);
    cmd.arg("-c")
        .arg(command)
        .current_dir(PathBuf::from(cwd))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env("PAGER", "cat")
        .env("GIT_PAGER", "cat")
        .env("GIT_TERMINAL_PROMPT", "0")
        .kill_on_drop(true);
    sandbox::own_session(&mut cmd);
    if let Some(policy) = sandbox {
        refuse_implicit_bare_repositories(&mut cmd);
        sandbox::apply(&mut cmd, policy)?;
    }
    cmd.spawn()
}

/// Git run without the user's approval uses no bare repository it was not pointed at: a workspace holding
/// `HEAD`, `objects/`, `refs/` and a `commondir` naming another project's repository is otherwise a repository
/// to git, and a "read-only" `git show` printed that project's files. Given as command-line configuration
/// (`GIT_CONFIG_COUNT`), the only kind git takes this setting from besides the user's own files; appended after
/// any the user's environment already gives.
pub(crate) fn refuse_implicit_bare_repositories(cmd: &mut Command) {
    let count: usize = std::env::var("GIT_CONFIG_COUNT").ok().and_then(|count| count.parse().ok()).unwrap_or(0);
    cmd.env(format!("GIT_CONFIG_KEY_{count}"), "safe.bareRepository")
        .env(format!("GIT_CONFIG_VALUE_{count}"), "explicit")
        .env("GIT_CONFIG_COUNT", (count + 1).to_string());
}

/// The environment variable that marks the processes of one call.
pub(crate) const CALL_MARK: &str = "TANDEM_CALL";

/// What a call's processes are started with: their temp dir and their mark.
struct Started<'a> {
    temp: Option<&'a Path>,
    mark: &'a str,
}

/// SIGTERM to the whole group, a moment to exit, then SIGKILL to whatever is left of the group (background
/// children included), and reap the shell.
async fn terminate(group: Pid, child: &mut Child) {
    let _ = kill_process_group(group, Signal::TERM);
    let _ = tokio::time::timeout(TERM_GRACE, child.wait()).await;
    let _ = kill_process_group(group, Signal::KILL);
    if tokio::time::timeout(KILL_DRAIN, child.wait()).await.is_err() {
        let _ = child.start_kill();
    }
}

fn spawn_reader<R>(
    reader: Option<R>,
    live: Option<UnboundedSender<String>>,
    stop: CancellationToken,
    spill: Option<std::path::PathBuf>,
) -> JoinHandle<Capture>
where
    R: AsyncRead + Unpin + Send + 'static,
{
    tokio::spawn(async move {
        let mut capture = spill.map_or_else(Capture::new, Capture::spilling_to);
        let Some(mut reader) = reader else { return capture };
        let mut buf = vec![0u8; 64 * 1024];
        let mut utf8 = Utf8Stream::default();
        loop {
            let n = tokio::select! {
                biased;
                _ = stop.cancelled() => break,
                read = reader.read(&mut buf) => match read {
                    Ok(0) | Err(_) => break,
                    Ok(n) => n,
                },
            };
            capture.push(&buf[..n]);
            if let Some(live) = &live {
                let text = utf8.push(&buf[..n]);
                if !text.is_empty() {
                    let _ = live.send(text);
                }
            }
        }
        capture
    })
}

/// The reader's capture once its stream ended, or `None` if it is still open at `deadline`.
async fn finish_reader(handle: &mut JoinHandle<Capture>, deadline: Instant) -> Option<Capture> {
    match timeout_at(deadline, handle).await {
        Ok(Ok(capture)) => Some(capture),
        Ok(Err(_)) => Some(Capture::new()),
        Err(_) => None,
    }
}

#[cfg(test)]
mod tests;
