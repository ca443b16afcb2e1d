//! Hooks: commands the user's settings run at points of a session (before a tool runs, after it ran, when a
//! prompt is submitted, before the model stops…), in Claude Code's format and with its semantics, so a
//! project's `.claude/settings.json` hooks work unchanged. See [`config`] for the format and [`outcome`] for
//! what exit codes and JSON output mean.
//!
//! Read from, in this order: Claude Code's user file `~/.claude/settings.json` (`$CLAUDE_CONFIG_DIR`), tandem's user
//! `<config dir>/settings.json`, the project's `.claude/settings.json`, `.claude/settings.local.json`,
//! `.tandem/settings.json` and `.tandem/settings.local.json`. Every matching hook of every file runs (in
//! parallel; the same command configured twice runs once).
//!
//! Project files came with the repository: their hooks run only once the project is trusted (headless runs,
//! like `claude -p`, trust it; the TUI asks). See [`HookEngine::set_project_trusted`].

pub mod config;
pub mod outcome;
pub mod run;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

pub use config::{HookEntry, HookEvent, HookSet};
pub use outcome::{HookOutcome, Verdict};

use crate::config::{CLAUDE_DIR, LOCAL_SETTINGS_FILE, SETTINGS_FILE, TANDEM_DIR};

/// Claude Code's user directory: `$CLAUDE_CONFIG_DIR` (Claude Code's own override), else `~/.claude`.
pub fn claude_user_dir(env: &dyn Fn(&str) -> Option<String>, home: Option<&Path>) -> Option<PathBuf> {
    match env("CLAUDE_CONFIG_DIR").filter(|dir| !dir.is_empty()) {
        Some(dir) => Some(PathBuf::from(dir)),
        None => home.map(|home| home.join(CLAUDE_DIR)),
    }
}

/// The settings files hooks are read from, with whether each belongs to the project.
pub fn settings_files(config_dir: &Path, claude_user_dir: Option<&Path>, project_root: &Path) -> Vec<(PathBuf, bool)> {
    let mut files = Vec::new();
    if let Some(dir) = claude_user_dir {
        files.push((dir.join(SETTINGS_FILE), false));
    }
    files.push((config_dir.join(SETTINGS_FILE), false));
    for dir in [CLAUDE_DIR, TANDEM_DIR] {
        files.push((project_root.join(dir).join(SETTINGS_FILE), true));
        files.push((project_root.join(dir).join(LOCAL_SETTINGS_FILE), true));
    }
    files.dedup_by(|a, b| a.0 == b.0);
    files
}

/// Reads the hooks of every settings file (see the module docs). Never fails: problems are in the set.
pub fn load(config_dir: &Path, claude_user_dir: Option<&Path>, project_root: &Path) -> HookSet {
    load_files(settings_files(config_dir, claude_user_dir, project_root))
}

/// Reads the hooks of these settings files (with whether each is the project's).
pub fn load_files(files: Vec<(PathBuf, bool)>) -> HookSet {
    let mut set = HookSet::default();
    for (file, project) in files {
        let text = match crate::config::read_settings_text(&file) {
            Ok(text) => text,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => continue,
            Err(err) => {
                set.problems.push(format!("{}: cannot be read ({err}); its hooks do not run", file.display()));
                continue;
            }
        };
        if text.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(document)) => set.read_document(&file, &document, project),
            Ok(_) => set
                .problems
                .push(format!("{}: the top level is not a JSON object; its hooks do not run", file.display())),
            Err(err) => set.problems.push(format!("{}: not valid JSON ({err}); its hooks do not run", file.display())),
        }
    }
    set
}

/// What every hook's input carries, from the session at the moment the hook runs.
#[derive(Clone, Debug)]
pub struct HookBase {
    pub session_id: String,
    pub transcript_path: Option<PathBuf>,
    pub cwd: PathBuf,
    pub permission_mode: tandem_protocol::permissions::PermissionMode,
    /// What command hooks run under: the grant of a command the user's own rule allows (`None`: unsandboxed).
    pub sandbox: Option<crate::sandbox::SandboxPolicy>,
    /// A hook fired inside a subagent says which (`agent_id`, `agent_type`), as in Claude Code.
    pub agent: Option<(String, String)>,
}

/// A host that runs some hooks itself: the Agent SDK registers Python or TypeScript functions as hooks, and
/// tandem asks it to run one with a `hook_callback` control request. The answer is the hook's JSON output (the
/// same object a command hook prints), or why it failed.
pub trait HookHost: Send + Sync {
    fn run_callback(
        &self,
        callback_id: &str,
        input: Value,
        tool_use_id: Option<String>,
    ) -> futures::future::BoxFuture<'static, Result<Value, String>>;
}

/// The session's hooks and what they run with.
pub struct HookEngine {
    set: HookSet,
    project_dir: PathBuf,
    env: Arc<crate::shell_env::ShellEnvPolicy>,
    /// Whether the project's own hooks may run (see the module docs).
    project_trusted: AtomicBool,
    /// Runs the hooks an SDK host registered, when there is one.
    host: Option<Arc<dyn HookHost>>,
    /// Hears every hook start and end ([`crate::protocol::Event::HookStarted`], `HookFinished`): the session's
    /// event channel, for stream-json's `--include-hook-events`.
    observer: std::sync::OnceLock<crate::events::EventSink>,
}

impl std::fmt::Debug for HookEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HookEngine").field("hooks", &self.set.entries.len()).finish()
    }
}

impl Default for HookEngine {
    fn default() -> Self {
        HookEngine::new(HookSet::default(), PathBuf::from("."), Arc::default(), false)
    }
}

impl HookEngine {
    pub fn new(
        set: HookSet,
        project_dir: PathBuf,
        env: Arc<crate::shell_env::ShellEnvPolicy>,
        project_trusted: bool,
    ) -> Self {
        HookEngine {
            set,
            project_dir,
            env,
            project_trusted: AtomicBool::new(project_trusted),
            host: None,
            observer: Default::default(),
        }
    }

    /// This engine plus the hooks an SDK host registered (see [`config::sdk_hooks`]), run by `host`.
    pub fn with_host(&self, entries: Vec<HookEntry>, host: Arc<dyn HookHost>) -> HookEngine {
        let mut set = self.set.clone();
        set.entries.extend(entries);
        HookEngine {
            set,
            project_dir: self.project_dir.clone(),
            env: self.env.clone(),
            project_trusted: AtomicBool::new(self.project_trusted()),
            host: Some(host),
            observer: Default::default(),
        }
    }

    pub fn set(&self) -> &HookSet {
        &self.set
    }

    /// Sends hook starts and ends to `events` (the first session to ask gets them; its subagents share it).
    pub fn observe(&self, events: crate::events::EventSink) {
        let _ = self.observer.set(events);
    }

    pub fn project_dir(&self) -> &Path {
        &self.project_dir
    }

    pub fn project_trusted(&self) -> bool {
        self.project_trusted.load(Ordering::Relaxed)
    }

    /// Lets the project's hooks run from now on (the user trusted them).
    pub fn set_project_trusted(&self, trusted: bool) {
        self.project_trusted.store(trusted, Ordering::Relaxed);
    }

    /// The hooks that run now (the project's only when trusted; none when `disableAllHooks` is set).
    pub fn active(&self) -> impl Iterator<Item = &HookEntry> {
        let trusted = self.project_trusted();
        let disabled = self.set.disabled_by.as_ref().is_some_and(|(_, by_project)| trusted || !by_project);
        self.set.entries.iter().filter(move |entry| !disabled && (trusted || !entry.source.project))
    }

    /// Whether any hook would run for `event` (so callers can skip building its input).
    pub fn has(&self, event: HookEvent) -> bool {
        self.active().any(|entry| entry.event == event)
    }

    /// Lines describing the hooks, for the start-up listing and `/hooks`.
    pub fn describe(&self) -> Vec<String> {
        let mut lines = Vec::new();
        let trusted = self.project_trusted();
        match &self.set.disabled_by {
            Some((file, by_project)) if trusted || !by_project => {
                lines.push(format!("All hooks are off: disableAllHooks is set in {}.", file.display()));
            }
            Some((file, _)) => lines.push(format!(
                "{} sets disableAllHooks; it applies once the project's hooks are trusted.",
                file.display()
            )),
            None => {}
        }
        for entry in &self.set.entries {
            let state =
                if entry.source.project && !trusted { " — off until the project's hooks are trusted" } else { "" };
            lines.push(format!("{} (from {}){state}", entry.describe(), entry.source.file.display()));
        }
        lines
    }

    /// Runs every active hook of `event` whose matcher matches `subject`, with Claude Code's input: the common
    /// fields of `base`, `hook_event_name`, and `fields`. Hooks run in parallel; the same command runs once.
    pub async fn fire(
        &self,
        event: HookEvent,
        subject: Option<&str>,
        base: &HookBase,
        fields: Map<String, Value>,
        cancel: Option<&CancellationToken>,
    ) -> HookOutcome {
        // The same hook configured twice runs once; the same command with another timeout or onFailure is another
        // hook (running both keeps the strictest's effect).
        let mut seen: Vec<(&str, std::time::Duration, bool)> = Vec::new();
        let entries: Vec<&HookEntry> = self
            .active()
            .filter(|entry| entry.event == event)
            .filter(|entry| match (subject, event.matcher_subject()) {
                (Some(subject), Some(_)) => entry.matcher.matches(subject),
                _ => true,
            })
            .filter(|entry| {
                let key = (entry.command.as_str(), entry.timeout, entry.block_on_failure);
                let first = !seen.contains(&key);
                seen.push(key);
                first
            })
            .collect();
        // Beside the transcript, where tool outputs cut for the model are kept too.
        let mut outcome = HookOutcome::keeping_in(base.transcript_path.as_ref().map(|path| path.with_extension("")));
        if entries.is_empty() {
            return outcome;
        }
        let mut input = Map::new();
        input.insert("session_id".into(), json!(base.session_id));
        input.insert(
            "transcript_path".into(),
            json!(base.transcript_path.as_ref().map(|path| path.display().to_string()).unwrap_or_default()),
        );
        input.insert("cwd".into(), json!(base.cwd.display().to_string()));
        input.insert("permission_mode".into(), json!(base.permission_mode.as_str()));
        input.insert("hook_event_name".into(), json!(event.as_str()));
        if let Some((id, kind)) = &base.agent {
            input.insert("agent_id".into(), json!(id));
            input.insert("agent_type".into(), json!(kind));
        }
        input.extend(fields);
        let input = Value::Object(input);
        let stdin = serde_json::to_vec(&input).unwrap_or_default();
        let runs = entries.iter().map(|entry| {
            let input = input.clone();
            let stdin = stdin.clone();
            let hook_id = format!("hook-{:016x}", fastrand::u64(..));
            async move {
                if let Some(observer) = self.observer.get() {
                    let _ = observer.send(crate::protocol::Event::HookStarted {
                        hook_id: hook_id.clone(),
                        hook_name: entry.command.clone(),
                        hook_event: event.as_str().to_owned(),
                    });
                }
                let finished = match &entry.callback {
                    Some(id) => self.run_host_callback(id, input, entry.timeout, cancel).await,
                    None => {
                        run::run(run::Launch {
                            command: &entry.command,
                            cwd: &base.cwd,
                            project_dir: &self.project_dir,
                            env: &self.env,
                            stdin,
                            timeout: entry.timeout,
                            cancel,
                            sandbox: base.sandbox.as_ref(),
                        })
                        .await
                    }
                };
                if let Some(observer) = self.observer.get() {
                    let (exit_code, outcome) = match &finished.exit {
                        run::Exit::Code(0) => (Some(0), "success"),
                        run::Exit::Code(code) => (Some(*code), "error"),
                        run::Exit::Interrupted => (None, "cancelled"),
                        _ => (None, "error"),
                    };
                    let _ = observer.send(crate::protocol::Event::HookFinished {
                        hook_id,
                        hook_name: entry.command.clone(),
                        hook_event: event.as_str().to_owned(),
                        stdout: finished.stdout.clone(),
                        stderr: finished.stderr.clone(),
                        exit_code,
                        outcome: outcome.to_owned(),
                    });
                }
                finished
            }
        });
        let finished = futures::future::join_all(runs).await;
        for (entry, finished) in entries.into_iter().zip(finished) {
            outcome.add(entry, finished);
        }
        outcome
    }

    /// Asks the SDK host to run one of its hooks; its answer counts like a command hook's JSON output.
    async fn run_host_callback(
        &self,
        id: &str,
        input: Value,
        timeout: std::time::Duration,
        cancel: Option<&CancellationToken>,
    ) -> run::Finished {
        let finished = |exit: run::Exit, stdout: String| run::Finished { exit, stdout, stderr: String::new() };
        let Some(host) = &self.host else {
            return finished(run::Exit::SpawnFailed("no SDK host is connected to run it".into()), String::new());
        };
        let tool_use_id = input.get("tool_use_id").and_then(Value::as_str).map(str::to_owned);
        let call = host.run_callback(id, input, tool_use_id);
        let never = CancellationToken::new();
        let cancel = cancel.unwrap_or(&never);
        tokio::select! {
            _ = cancel.cancelled() => finished(run::Exit::Interrupted, String::new()),
            answer = tokio::time::timeout(timeout, call) => match answer {
                Err(_) => finished(run::Exit::TimedOut(timeout), String::new()),
                Ok(Ok(output)) => finished(run::Exit::Code(0), output.to_string()),
                Ok(Err(why)) => finished(run::Exit::SpawnFailed(format!("failed in the SDK host: {why}")), String::new()),
            },
        }
    }
}
