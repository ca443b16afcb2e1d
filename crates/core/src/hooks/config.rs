//! Hook configuration, in Claude Code's format so a project's `.claude/settings.json` works unchanged:
//! `{"hooks": {"<Event>": [{"matcher": "<tool name or regex>", "hooks": [{"type": "command", "command": "…",
//! "timeout": 60}]}]}}`, plus tandem's `"onFailure": "block"` on a hook.
//!
//! Reading never fails: an entry that can't be understood is reported in [`HookSet::problems`] and left out,
//! and the rest of the file still counts.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value};

/// How long a hook may run when its entry sets no `timeout` (Claude Code's default).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// The events a hook can run at, by Claude Code's names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HookEvent {
    PreToolUse,
    PostToolUse,
    PostToolUseFailure,
    PermissionRequest,
    UserPromptSubmit,
    Stop,
    SubagentStart,
    SubagentStop,
    PreCompact,
    SessionStart,
    SessionEnd,
    Notification,
}

impl HookEvent {
    pub const ALL: [HookEvent; 12] = [
        HookEvent::PreToolUse,
        HookEvent::PostToolUse,
        HookEvent::PostToolUseFailure,
        HookEvent::PermissionRequest,
        HookEvent::UserPromptSubmit,
        HookEvent::Stop,
        HookEvent::SubagentStart,
        HookEvent::SubagentStop,
        HookEvent::PreCompact,
        HookEvent::SessionStart,
        HookEvent::SessionEnd,
        HookEvent::Notification,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            HookEvent::PreToolUse => "PreToolUse",
            HookEvent::PostToolUse => "PostToolUse",
            HookEvent::PostToolUseFailure => "PostToolUseFailure",
            HookEvent::PermissionRequest => "PermissionRequest",
            HookEvent::UserPromptSubmit => "UserPromptSubmit",
            HookEvent::Stop => "Stop",
            HookEvent::SubagentStart => "SubagentStart",
            HookEvent::SubagentStop => "SubagentStop",
            HookEvent::PreCompact => "PreCompact",
            HookEvent::SessionStart => "SessionStart",
            HookEvent::SessionEnd => "SessionEnd",
            HookEvent::Notification => "Notification",
        }
    }

    pub fn parse(name: &str) -> Option<HookEvent> {
        HookEvent::ALL.into_iter().find(|event| event.as_str() == name)
    }

    /// What the entry's `matcher` is matched against, for events that have one (Claude Code's): the tool's name,
    /// how the session started, what triggered a compaction, the notification's type, the subagent's type.
    pub fn matcher_subject(self) -> Option<&'static str> {
        match self {
            HookEvent::PreToolUse
            | HookEvent::PostToolUse
            | HookEvent::PostToolUseFailure
            | HookEvent::PermissionRequest => Some("tool name"),
            HookEvent::SessionStart => Some("source"),
            HookEvent::SessionEnd => Some("reason"),
            HookEvent::PreCompact => Some("trigger"),
            HookEvent::Notification => Some("notification type"),
            HookEvent::SubagentStart | HookEvent::SubagentStop => Some("agent type"),
            HookEvent::UserPromptSubmit | HookEvent::Stop => None,
        }
    }
}

/// Which subjects an entry applies to.
#[derive(Clone, Debug)]
pub enum Matcher {
    /// No matcher, `""` or `"*"`.
    All,
    /// Plain names (`Edit`, `Edit|Write`): exactly those.
    Names(Vec<String>),
    /// Anything else is a regular expression, searched in the subject as Claude Code does (`mcp__.*`).
    Pattern(regex::Regex),
}

impl Matcher {
    fn parse(text: &str) -> Result<Matcher, String> {
        let text = text.trim();
        if text.is_empty() || text == "*" {
            return Ok(Matcher::All);
        }
        if text.chars().all(|ch| ch.is_ascii_alphanumeric() || matches!(ch, '_' | '|' | '-' | ' ')) {
            return Ok(Matcher::Names(
                text.split('|').map(str::trim).filter(|name| !name.is_empty()).map(str::to_owned).collect(),
            ));
        }
        regex::Regex::new(text).map(Matcher::Pattern).map_err(|err| format!("not a valid regular expression: {err}"))
    }

    pub fn matches(&self, subject: &str) -> bool {
        match self {
            Matcher::All => true,
            Matcher::Names(names) => names.iter().any(|name| name == subject),
            Matcher::Pattern(pattern) => pattern.is_match(subject),
        }
    }
}

/// Where a hook was configured.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HookSource {
    pub file: PathBuf,
    /// From a file in the project (`.claude/`, `.tandem/`): it came with the repository, so the TUI runs it only
    /// once the user trusts the project's hooks.
    pub project: bool,
}

/// One command to run at an event.
#[derive(Clone, Debug)]
pub struct HookEntry {
    pub event: HookEvent,
    pub matcher: Matcher,
    /// The matcher as written (for listings).
    pub matcher_text: String,
    pub command: String,
    pub timeout: Duration,
    /// tandem's `"onFailure": "block"`: a crash, a timeout or a missing command blocks instead of being only
    /// reported (Claude Code's hooks always fail open).
    pub block_on_failure: bool,
    pub source: HookSource,
    /// Set for a hook an SDK host registered (`initialize`'s `hookCallbackIds`): the host runs it when asked
    /// with this id (a `hook_callback` control request); `command` is then only its name in listings.
    pub callback: Option<String>,
}

impl HookEntry {
    /// One line for `/hooks` and the start-up listing.
    pub fn describe(&self) -> String {
        let matcher =
            if self.matcher_text.trim().is_empty() { String::new() } else { format!(" [{}]", self.matcher_text) };
        let block = if self.block_on_failure { " (blocks on failure)" } else { "" };
        format!("{}{matcher}: {}{block}", self.event.as_str(), self.command)
    }
}

/// Every hook the settings files configure, and what in them could not be used.
#[derive(Clone, Debug, Default)]
pub struct HookSet {
    pub entries: Vec<HookEntry>,
    /// One line per problem, `path: what: why`; the offending entry was left out.
    pub problems: Vec<String>,
    /// A file said `"disableAllHooks": true`: nothing runs (a project file's only counts once the project's
    /// hooks are trusted: a repository can't turn off the user's own hooks). The file, and whether it is the
    /// project's.
    pub disabled_by: Option<(PathBuf, bool)>,
}

impl HookSet {
    /// Reads the `hooks` (and `disableAllHooks`) of one settings document.
    pub fn read_document(&mut self, file: &Path, document: &Map<String, Value>, project: bool) {
        if document.get("disableAllHooks").and_then(Value::as_bool) == Some(true)
            && self.disabled_by.as_ref().is_none_or(|(_, by_project)| *by_project)
        {
            self.disabled_by = Some((file.to_path_buf(), project));
        }
        let Some(hooks) = document.get("hooks") else { return };
        let Value::Object(hooks) = hooks else {
            self.problem(file, "\"hooks\" is not an object of events; no hook of this file runs");
            return;
        };
        let source = HookSource { file: file.to_path_buf(), project };
        for (name, groups) in hooks {
            let Some(event) = HookEvent::parse(name) else {
                let known: Vec<&str> = HookEvent::ALL.iter().map(|event| event.as_str()).collect();
                self.problem(
                    file,
                    format!("hook event {name:?} is not one tandem knows ({}); ignored", known.join(", ")),
                );
                continue;
            };
            let Value::Array(groups) = groups else {
                self.problem(file, format!("hooks.{name} is not a list of matcher groups; ignored"));
                continue;
            };
            for group in groups {
                self.read_group(file, event, group, &source);
            }
        }
    }

    fn read_group(&mut self, file: &Path, event: HookEvent, group: &Value, source: &HookSource) {
        let name = event.as_str();
        let Value::Object(group) = group else {
            self.problem(file, format!("hooks.{name}: an entry is not an object with \"hooks\"; ignored"));
            return;
        };
        let matcher_text = match group.get("matcher") {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(text)) => text.clone(),
            Some(other) => {
                self.problem(file, format!("hooks.{name}: matcher {other} is not a string; the entry is ignored"));
                return;
            }
        };
        if event.matcher_subject().is_none() && !matcher_text.trim().is_empty() && matcher_text.trim() != "*" {
            self.problem(
                file,
                format!("hooks.{name}: {name} has no matcher (matcher {matcher_text:?} ignored; the hooks run for every {name})"),
            );
        }
        let matcher = match Matcher::parse(&matcher_text) {
            Ok(matcher) => matcher,
            Err(why) => {
                self.problem(file, format!("hooks.{name}: matcher {matcher_text:?} is {why}; the entry is ignored"));
                return;
            }
        };
        let Some(Value::Array(hooks)) = group.get("hooks") else {
            self.problem(file, format!("hooks.{name}: an entry has no \"hooks\" list; ignored"));
            return;
        };
        for hook in hooks {
            match parse_hook(hook) {
                Ok((command, timeout, block_on_failure, problems)) => {
                    for problem in problems {
                        self.problem(file, format!("hooks.{name}: a hook's {problem}"));
                    }
                    self.entries.push(HookEntry {
                        event,
                        matcher: matcher.clone(),
                        matcher_text: matcher_text.clone(),
                        command,
                        timeout,
                        block_on_failure,
                        source: source.clone(),
                        callback: None,
                    });
                }
                Err(why) => self.problem(file, format!("hooks.{name}: a hook {why}; it is ignored")),
            }
        }
    }

    fn problem(&mut self, file: &Path, why: impl std::fmt::Display) {
        self.problems.push(format!("{}: {why}", file.display()));
    }

    /// Whether any hook comes from the project's files.
    pub fn has_project_hooks(&self) -> bool {
        self.entries.iter().any(|entry| entry.source.project)
    }

    /// The project's hooks, as a stable text: what trusting them covers (a change needs trusting again). JSON,
    /// so no field's text can pass for another's.
    pub fn project_fingerprint(&self) -> String {
        let entries: Vec<Value> = self
            .entries
            .iter()
            .filter(|entry| entry.source.project)
            .map(|entry| {
                serde_json::json!([
                    entry.event.as_str(),
                    entry.matcher_text,
                    entry.command,
                    entry.timeout.as_secs_f64(),
                    entry.block_on_failure,
                    entry.source.file.display().to_string(),
                ])
            })
            .collect();
        let disabled =
            self.disabled_by.as_ref().filter(|(_, project)| *project).map(|(file, _)| file.display().to_string());
        serde_json::json!({ "hooks": entries, "disableAllHooks": disabled }).to_string()
    }
}

/// Longest timeout a hook may have (a larger one is cut to this and reported).
const MAX_TIMEOUT: Duration = Duration::from_secs(24 * 60 * 60);

/// A parsed hook: command, timeout, whether it blocks on failure, and what in it had to be corrected.
type ParsedHook = (String, Duration, bool, Vec<String>);

/// A hook object: `{"type": "command", "command": "…", "timeout": seconds, "onFailure": "block"|"ignore"}`.
/// Only a hook that can't run at all (no command, another type) is an error; a field it gets wrong is reported
/// and corrected towards failing closed (a bad `onFailure` blocks, a bad `timeout` is the default).
fn parse_hook(hook: &Value) -> Result<ParsedHook, String> {
    let Value::Object(hook) = hook else { return Err("is not an object".into()) };
    match hook.get("type").and_then(Value::as_str) {
        Some("command") => {}
        Some(other) => return Err(format!("has type {other:?}, which tandem does not run (only \"command\" hooks)")),
        None => return Err("has no \"type\" (use \"command\")".into()),
    }
    let command = match hook.get("command").and_then(Value::as_str) {
        Some(command) if !command.trim().is_empty() => command.to_owned(),
        _ => return Err("has no \"command\"".into()),
    };
    let mut problems = Vec::new();
    let timeout = match hook.get("timeout") {
        None | Some(Value::Null) => DEFAULT_TIMEOUT,
        Some(value) => {
            let seconds = value.as_f64().or_else(|| value.as_str().and_then(|text| text.trim().parse().ok()));
            match seconds {
                Some(seconds) if seconds > 0.0 && seconds.is_finite() => {
                    let timeout = Duration::try_from_secs_f64(seconds).unwrap_or(MAX_TIMEOUT);
                    if timeout > MAX_TIMEOUT {
                        problems.push(format!("timeout {value} is cut to {}s", MAX_TIMEOUT.as_secs()));
                    }
                    timeout.min(MAX_TIMEOUT)
                }
                _ => {
                    problems.push(format!(
                        "timeout {value} is not a positive number of seconds; it gets the default {}s",
                        DEFAULT_TIMEOUT.as_secs()
                    ));
                    DEFAULT_TIMEOUT
                }
            }
        }
    };
    let block_on_failure = match hook.get("onFailure") {
        None | Some(Value::Null) => false,
        Some(value) => match value.as_str().map(str::to_ascii_lowercase).as_deref() {
            Some("block") => true,
            Some("ignore") => false,
            _ => {
                problems.push(format!("onFailure {value} is not \"block\" or \"ignore\"; it blocks on failure"));
                true
            }
        },
    };
    Ok((command, timeout, block_on_failure, problems))
}

/// Where hooks registered by an SDK host come from, for listings.
pub const SDK_HOOKS_SOURCE: &str = "the SDK host (initialize)";

/// The hooks an SDK host registers in its `initialize` request, in the SDK's shape: `{"<Event>": [{"matcher":
/// "…", "hookCallbackIds": ["hook_0", …], "timeout": seconds}]}`. Each id becomes one hook the host runs; what
/// can't be used is returned as problems, like a settings file's.
pub fn sdk_hooks(hooks: &Value) -> (Vec<HookEntry>, Vec<String>) {
    let mut set = HookSet::default();
    let file = Path::new(SDK_HOOKS_SOURCE);
    let Value::Object(hooks) = hooks else {
        if !hooks.is_null() {
            set.problem(file, "\"hooks\" is not an object of events; no hook of the host runs");
        }
        return (set.entries, set.problems);
    };
    let source = HookSource { file: file.to_path_buf(), project: false };
    for (name, groups) in hooks {
        let Some(event) = HookEvent::parse(name) else {
            set.problem(file, format!("hook event {name:?} is not one tandem knows; its callbacks never run"));
            continue;
        };
        for group in groups.as_array().into_iter().flatten() {
            let matcher_text = group.get("matcher").and_then(Value::as_str).unwrap_or_default().to_owned();
            let matcher = match Matcher::parse(&matcher_text) {
                Ok(matcher) => matcher,
                Err(why) => {
                    set.problem(file, format!("hooks.{name}: matcher {matcher_text:?} is {why}; the entry is ignored"));
                    continue;
                }
            };
            let timeout = group
                .get("timeout")
                .and_then(Value::as_f64)
                .filter(|seconds| *seconds > 0.0 && seconds.is_finite())
                .and_then(|seconds| Duration::try_from_secs_f64(seconds).ok())
                .unwrap_or(DEFAULT_TIMEOUT)
                .min(MAX_TIMEOUT);
            let block_on_failure = matches!(
                group.get("onFailure").or_else(|| group.get("on_failure")).and_then(Value::as_str),
                Some("block")
            );
            for id in group.get("hookCallbackIds").and_then(Value::as_array).into_iter().flatten() {
                let Some(id) = id.as_str() else { continue };
                set.entries.push(HookEntry {
                    event,
                    matcher: matcher.clone(),
                    matcher_text: matcher_text.clone(),
                    command: format!("SDK callback {id}"),
                    timeout,
                    block_on_failure,
                    source: source.clone(),
                    callback: Some(id.to_owned()),
                });
            }
        }
    }
    (set.entries, set.problems)
}
