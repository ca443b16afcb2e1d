//! Commands the model runs with `run_in_background: true`: started like any Bash call (same permission check,
//! sandbox, environment and session of their own), they outlive the call. `BashOutput` reads what each wrote
//! since the last read, `KillShell` ends one, and every one still running is killed with its process group
//! (and whatever left it) when the session ends.

use crate::events::EventSink;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use rustix::process::{Pid, Signal, kill_process_group};
use tokio::io::AsyncReadExt;

use super::running::{self, Registration, kill_marked};
use super::{Launch, Started, shell, spawn};
use crate::protocol::{BackgroundTask, Event};
use crate::sandbox::SandboxPolicy;

/// Output kept per stream of a background command; later output is dropped (and the drop reported).
const OUTPUT_CAP: usize = 4 * 1024 * 1024;

/// Most of a stream one BashOutput call returns; the rest waits for the next call.
const READ_CAP: usize = 30_000;

/// How a background command stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ShellStatus {
    Running,
    Exited(Option<i32>),
    Killed,
}

impl ShellStatus {
    fn describe(&self) -> String {
        match self {
            ShellStatus::Running => "running".into(),
            ShellStatus::Exited(Some(code)) => format!("completed (exit code {code})"),
            ShellStatus::Exited(None) => "completed (killed by a signal)".into(),
            ShellStatus::Killed => "killed".into(),
        }
    }
}

#[derive(Default)]
struct Stream {
    text: String,
    /// How much of `text` was already returned by BashOutput.
    read: usize,
    dropped: bool,
}

struct Shell {
    command: String,
    status: ShellStatus,
    stdout: Stream,
    stderr: Stream,
    group: Option<Pid>,
    mark: String,
    /// In the registry while its shell runs; dropped, it ends whatever the command left running: when the shell
    /// exits (so that later foreground commands can be granted the whole workspace again), and with tandem.
    registration: Option<Registration>,
}

/// The session's background commands, by id (`bash_1`, `bash_2`…).
pub struct BackgroundShells {
    shells: Mutex<BTreeMap<String, Shell>>,
    next: Mutex<u32>,
    /// Front ends hear when the list changes.
    events: Option<EventSink>,
}

impl Default for BackgroundShells {
    fn default() -> Self {
        BackgroundShells::new(None)
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl BackgroundShells {
    pub fn new(events: Option<EventSink>) -> Self {
        BackgroundShells { shells: Mutex::new(BTreeMap::new()), next: Mutex::new(1), events }
    }

    /// Starts `command` once no command granted the whole workspace runs (see [`running`]); its id, or why it
    /// could not start.
    pub(super) async fn start(
        self: &Arc<Self>,
        command: &str,
        cwd: &Path,
        launch: Launch<'_>,
        cancel: &tokio_util::sync::CancellationToken,
    ) -> Result<String, String> {
        let mark = format!("{:016x}{:016x}", fastrand::u64(..), fastrand::u64(..));
        // Nothing waits for its end to put protected entries back: they stay read-only for it.
        let sandbox = launch.sandbox.map(SandboxPolicy::for_background);
        let started = Started { temp: sandbox.as_ref().and_then(SandboxPolicy::temp_root), mark: &mark };
        let roots = sandbox.as_ref().map(|policy| policy.roots(Some(cwd))).unwrap_or_default();
        let nested = crate::sandbox::NestedSettings::scan(roots, super::history_for(command));
        let registration = running::register_apart(&mark, Some(cancel))
            .await
            .ok_or_else(|| "Interrupted before the command started.".to_owned())?;
        registration.remove_nested_at_end(nested);
        let spawning = running::spawning();
        let mut child = spawn(shell(), command, cwd, sandbox.as_ref(), launch.env, started)
            .map_err(|err| format!("Could not start bash: {err}"))?;
        let id = {
            let mut next = lock(&self.next);
            let id = format!("bash_{}", *next);
            *next += 1;
            id
        };
        let group = child.id().and_then(|pid| Pid::from_raw(pid as i32));
        if let Some(group) = group {
            registration.set_group(group);
        }
        drop(spawning);
        lock(&self.shells).insert(
            id.clone(),
            Shell {
                command: command.to_owned(),
                status: ShellStatus::Running,
                stdout: Stream::default(),
                stderr: Stream::default(),
                group,
                mark,
                registration: Some(registration),
            },
        );
        for (pipe, is_err) in [
            (child.stdout.take().map(|pipe| Box::new(pipe) as Box<dyn tokio::io::AsyncRead + Unpin + Send>), false),
            (child.stderr.take().map(|pipe| Box::new(pipe) as Box<dyn tokio::io::AsyncRead + Unpin + Send>), true),
        ] {
            let Some(mut pipe) = pipe else { continue };
            let shells = Arc::downgrade(self);
            let id = id.clone();
            tokio::spawn(async move {
                let mut buf = [0u8; 8192];
                loop {
                    let n = match pipe.read(&mut buf).await {
                        Ok(0) | Err(_) => break,
                        Ok(n) => n,
                    };
                    let Some(shells) = shells.upgrade() else { break };
                    let mut all = lock(&shells.shells);
                    let Some(shell) = all.get_mut(&id) else { break };
                    let stream = if is_err { &mut shell.stderr } else { &mut shell.stdout };
                    if stream.text.len() + n > OUTPUT_CAP {
                        stream.dropped = true;
                    } else {
                        stream.text.push_str(&String::from_utf8_lossy(&buf[..n]));
                    }
                }
            });
        }
        let shells = Arc::downgrade(self);
        let waited = id.clone();
        tokio::spawn(async move {
            let status = child.wait().await.ok().map(|status| status.code());
            let registration = shells
                .upgrade()
                .and_then(|shells| lock(&shells.shells).get_mut(&waited).and_then(|shell| shell.registration.take()));
            // Ends what the shell left running, before the nested settings it may have made are looked for (when the
            // session ended first, that end took them out).
            let scan = move || registration.map(running::Registration::end_with_nested).unwrap_or_default();
            let removed = tokio::task::spawn_blocking(scan).await.unwrap_or_default();
            if let Some(shells) = shells.upgrade() {
                if let Some(shell) = lock(&shells.shells).get_mut(&waited)
                    && shell.status == ShellStatus::Running
                {
                    shell.status = ShellStatus::Exited(status.flatten());
                }
                if !removed.is_empty()
                    && let Some(shell) = lock(&shells.shells).get_mut(&waited)
                {
                    shell.stderr.text.push_str(&format!(
                        "\n[tandem: settings this command created for tandem or Claude Code below the workspace \
                         were taken out: {}]\n",
                        removed.join(", ")
                    ));
                }
                shells.announce();
            }
        });
        self.announce();
        Ok(id)
    }

    /// What `id` wrote since the last read (only lines matching `filter`, when given; the others are
    /// consumed), with its status.
    pub fn read(&self, id: &str, filter: Option<&regex::Regex>) -> Result<String, String> {
        let mut shells = lock(&self.shells);
        let Some(shell) = shells.get_mut(id) else {
            let ids: Vec<&String> = lock_keys(&shells);
            return Err(format!("There is no background command {id:?} (running or finished: {ids:?})."));
        };
        let mut out = format!("<status>{}</status>", shell.status.describe());
        for (name, stream) in [("stdout", &mut shell.stdout), ("stderr", &mut shell.stderr)] {
            let mut end = stream.text.len().min(stream.read + READ_CAP);
            while !stream.text.is_char_boundary(end) {
                end -= 1;
            }
            let new = &stream.text[stream.read..end];
            let waiting = stream.text.len() - end;
            stream.read = end;
            let new: String = match filter {
                Some(filter) => new.lines().filter(|line| filter.is_match(line)).collect::<Vec<_>>().join("\n"),
                None => new.trim_end_matches('\n').to_owned(),
            };
            if !new.is_empty() {
                out.push_str(&format!("\n<{name}>\n{new}\n</{name}>"));
            }
            if waiting > 0 {
                out.push_str(&format!("\n({waiting} more bytes of {name} are waiting: call BashOutput again)"));
            }
            if stream.dropped {
                out.push_str(&format!("\n({name} beyond {} MB was dropped)", OUTPUT_CAP / (1024 * 1024)));
            }
        }
        Ok(out)
    }

    /// Ends `id` with its process group and whatever left it.
    pub fn kill(&self, id: &str) -> Result<String, String> {
        let group = {
            let mut shells = lock(&self.shells);
            let Some(shell) = shells.get_mut(id) else {
                return Err(format!("There is no background command {id:?}."));
            };
            let finished = (shell.status != ShellStatus::Running).then(|| shell.status.describe());
            if finished.is_none() {
                shell.status = ShellStatus::Killed;
            }
            (shell.group, shell.mark.clone(), finished)
        };
        // Also after the shell itself ended: what it left running (`cmd &`, setsid) goes now.
        let (group, mark, finished) = group;
        let leftovers =
            group.is_some_and(|group| kill_process_group(group, Signal::KILL).is_ok()) | kill_marked(&[&mark]);
        self.announce();
        Ok(match (finished, leftovers) {
            (None, _) => format!("Killed {id}."),
            (Some(how), true) => format!("{id} had already {how}; the processes it left running were killed."),
            (Some(how), false) => format!("{id} had already {how}."),
        })
    }

    /// The commands, for front ends.
    pub fn list(&self) -> Vec<BackgroundTask> {
        lock(&self.shells)
            .iter()
            .map(|(id, shell)| BackgroundTask {
                id: id.clone(),
                command: shell.command.clone(),
                running: shell.status == ShellStatus::Running,
            })
            .collect()
    }

    fn announce(&self) {
        if let Some(events) = &self.events {
            let _ = events.send(Event::BackgroundTasks(self.list()));
        }
    }
}

fn lock_keys(shells: &BTreeMap<String, Shell>) -> Vec<&String> {
    shells.keys().collect()
}
