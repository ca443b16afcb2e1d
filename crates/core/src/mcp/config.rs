//! Which MCP servers a session has: Claude Code's configuration files and flags, read into one list.
//!
//! Sources, lowest precedence first (a later one with the same server name wins, as in Claude Code):
//! - user: `~/.claude.json`'s `mcpServers` (Claude Code's, read only) and `<config dir>/mcp.json`'s (tandem's,
//!   written by `tandem mcp add -s user`);
//! - project: `<project root>/.mcp.json`, committed with the repository: a server there runs only after the user
//!   approved it (in the app's dialog, remembered in tandem's config directory with the entry approved, or
//!   `enabledMcpjsonServers`, `disabledMcpjsonServers`, `enableAllProjectMcpServers` in a settings file outside
//!   the project), because cloning a repository must not run its commands;
//! - local: `projects["<project root>"].mcpServers` of both user files (this project, this user);
//! - `--mcp-config` files or JSON, in order; with `--strict-mcp-config` they are the only source.
//!
//! `${VAR}` and `${VAR:-default}` are expanded from the environment in `command`, `args`, `env`, `url` and
//! `headers`, so tokens stay out of the files. A server whose configuration is wrong is kept in the list with
//! the reason, so it is reported (status `failed`) rather than silently missing.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

/// Where a server's configuration came from; Claude Code's scope names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum McpScope {
    User,
    Project,
    Local,
    /// `--mcp-config`.
    Dynamic,
}

impl McpScope {
    pub fn as_str(self) -> &'static str {
        match self {
            McpScope::User => "user",
            McpScope::Project => "project",
            McpScope::Local => "local",
            McpScope::Dynamic => "dynamic",
        }
    }
}

/// How to reach a server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Transport {
    /// A child process speaking JSON-RPC on stdin/stdout.
    Stdio { command: String, args: Vec<String>, env: BTreeMap<String, String>, cwd: Option<PathBuf> },
    /// Streamable HTTP.
    Http { url: String, headers: BTreeMap<String, String> },
    /// A server inside the program that started tandem through the Agent SDK, reached through its control
    /// protocol ([`super::relay`]).
    Sdk,
}

/// One configured server.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    pub name: String,
    /// The transport, or why the server can't be started (bad entry, unset variable, unsupported type).
    pub transport: Result<Transport, String>,
    pub scope: McpScope,
    /// The file (or `--mcp-config` argument) it was read from.
    pub origin: String,
    /// The entry as written (before expansion), for `tandem mcp get` and SDK hosts' `mcp_status`.
    pub raw: Value,
}

/// What the user decided about `.mcp.json` servers: by name in settings files outside the project (user
/// settings, `--settings`), and with the approved entry in tandem's own record ([`super::approvals`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProjectChoices {
    pub enable_all: bool,
    pub enabled: Vec<String>,
    pub disabled: Vec<String>,
    /// Servers approved in tandem's record, each with its entry as approved.
    pub approved_entries: BTreeMap<String, Value>,
    /// Settings files inside the project that approve or refuse servers, which are not used (a repository
    /// could have committed them).
    pub ignored_files: Vec<PathBuf>,
}

impl ProjectChoices {
    /// `Some(true)` approved, `Some(false)` refused, `None` not decided yet (or approved with another entry).
    pub fn decision(&self, name: &str, entry: &Value) -> Option<bool> {
        if self.disabled.iter().any(|n| n == name) {
            Some(false)
        } else if self.enable_all
            || self.enabled.iter().any(|n| n == name)
            || self.approved_entries.get(name) == Some(entry)
        {
            Some(true)
        } else {
            None
        }
    }

    /// These choices with tandem's record for the project added.
    pub fn with_stored(&self, stored: super::approvals::Stored) -> ProjectChoices {
        let mut choices = self.clone();
        choices.enable_all |= stored.enable_all;
        for name in stored.refused {
            if !choices.disabled.contains(&name) {
                choices.disabled.push(name);
            }
        }
        choices.approved_entries.extend(stored.approved);
        choices
    }
}

/// Everything needed to find a session's servers.
pub struct LoadInputs<'a> {
    pub project_root: &'a Path,
    /// tandem's configuration directory (its `mcp.json`).
    pub config_dir: &'a Path,
    /// Claude Code's `~/.claude.json`, when there is a home directory.
    pub claude_json: Option<PathBuf>,
    /// `--mcp-config` values: each a file path or a JSON document.
    pub flag_configs: &'a [String],
    pub strict: bool,
    pub choices: &'a ProjectChoices,
    /// The environment `${VAR}` reads.
    pub env: &'a dyn Fn(&str) -> Option<String>,
    /// The current directory: relative `--mcp-config` paths are resolved against it.
    pub cwd: &'a Path,
}

/// The servers of a session.
#[derive(Clone, Debug, Default)]
pub struct McpConfig {
    /// Servers to start, by name.
    pub servers: Vec<ServerConfig>,
    /// `.mcp.json` servers the user has not decided about yet (not started).
    pub awaiting_approval: Vec<ServerConfig>,
    /// `.mcp.json` servers the user refused.
    pub refused: Vec<String>,
    /// Problems with whole files (unreadable, not JSON), for the user to see.
    pub problems: Vec<String>,
    /// The project the `.mcp.json` came from.
    pub project_root: PathBuf,
    /// tandem's configuration directory, where answers about `.mcp.json` servers are remembered.
    pub config_dir: PathBuf,
}

/// tandem's own file of user and local servers.
pub const TANDEM_MCP_FILE: &str = "mcp.json";
/// The project's file.
pub const PROJECT_MCP_FILE: &str = ".mcp.json";
/// Largest configuration file read (`~/.claude.json` holds Claude Code's history too).
const MAX_CONFIG_BYTES: u64 = 64 * 1024 * 1024;

/// Reads every source into one list (see the module documentation for the order).
pub fn load(inputs: &LoadInputs<'_>) -> McpConfig {
    let mut config = McpConfig {
        project_root: inputs.project_root.to_path_buf(),
        config_dir: inputs.config_dir.to_path_buf(),
        ..McpConfig::default()
    };
    let choices = inputs.choices.with_stored(super::approvals::read(inputs.config_dir, inputs.project_root));
    let mut chosen: BTreeMap<String, ServerConfig> = BTreeMap::new();
    let add = |entries: Vec<ServerConfig>, chosen: &mut BTreeMap<String, ServerConfig>| {
        for entry in entries {
            chosen.insert(entry.name.clone(), entry);
        }
    };
    if !inputs.strict {
        let user_files: Vec<PathBuf> =
            inputs.claude_json.iter().cloned().chain([inputs.config_dir.join(TANDEM_MCP_FILE)]).collect();
        let documents: Vec<(PathBuf, Map<String, Value>)> = user_files
            .iter()
            .filter_map(|file| read_document(file, &mut config.problems).map(|doc| (file.clone(), doc)))
            .collect();
        for (file, document) in &documents {
            add(
                servers_of(document.get("mcpServers"), McpScope::User, file, inputs, &mut config.problems),
                &mut chosen,
            );
        }
        let project_file = inputs.project_root.join(PROJECT_MCP_FILE);
        if let Some(document) = read_document(&project_file, &mut config.problems) {
            let entries =
                servers_of(document.get("mcpServers"), McpScope::Project, &project_file, inputs, &mut config.problems);
            add(entries, &mut chosen);
        }
        // Claude Code keys a project by the directory it was started in; the root and the current directory
        // are both looked up (the current one wins).
        let mut keys = vec![inputs.project_root.to_string_lossy().into_owned()];
        let cwd = inputs.cwd.to_string_lossy().into_owned();
        if !keys.contains(&cwd) {
            keys.push(cwd);
        }
        for key in &keys {
            for (file, document) in &documents {
                let local =
                    document.get("projects").and_then(|projects| projects.get(key)).and_then(|p| p.get("mcpServers"));
                add(servers_of(local, McpScope::Local, file, inputs, &mut config.problems), &mut chosen);
            }
        }
    }
    for (index, value) in inputs.flag_configs.iter().enumerate() {
        let (label, document) = match flag_document(value, inputs.cwd) {
            Ok(found) => found,
            Err(why) => {
                config.problems.push(format!("--mcp-config #{}: {why}", index + 1));
                continue;
            }
        };
        let origin = PathBuf::from(label);
        add(
            servers_of(document.get("mcpServers"), McpScope::Dynamic, &origin, inputs, &mut config.problems),
            &mut chosen,
        );
    }
    for (_, server) in chosen {
        if server.scope != McpScope::Project {
            config.servers.push(server);
            continue;
        }
        match choices.decision(&server.name, &server.raw) {
            Some(true) => config.servers.push(server),
            Some(false) => config.refused.push(server.name),
            None => config.awaiting_approval.push(server),
        }
    }
    config
}

/// A `--mcp-config` value: JSON when it looks like an object, else a file.
fn flag_document(value: &str, cwd: &Path) -> Result<(String, Map<String, Value>), String> {
    let trimmed = value.trim_start();
    if trimmed.starts_with('{') {
        return match serde_json::from_str(trimmed) {
            Ok(Value::Object(document)) => Ok(("--mcp-config".to_owned(), document)),
            Ok(_) => Err("the JSON is not an object".to_owned()),
            Err(err) => Err(format!("not valid JSON: {err}")),
        };
    }
    let file = cwd.join(value);
    let mut problems = Vec::new();
    match read_document(&file, &mut problems) {
        Some(document) => Ok((file.display().to_string(), document)),
        None if problems.is_empty() => Err(format!("{}: no such file", file.display())),
        None => Err(problems.join("; ")),
    }
}

/// A configuration file's top-level object; `None` when it is missing (silently) or broken (with a problem).
fn read_document(file: &Path, problems: &mut Vec<String>) -> Option<Map<String, Value>> {
    let meta = match std::fs::metadata(file) {
        Ok(meta) => meta,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return None,
        Err(err) => {
            problems.push(format!("{}: cannot be read: {err}", file.display()));
            return None;
        }
    };
    if !meta.is_file() || meta.len() > MAX_CONFIG_BYTES {
        problems.push(format!("{}: not a regular file of at most 64 MB; ignored", file.display()));
        return None;
    }
    let text = match std::fs::read_to_string(file) {
        Ok(text) => text,
        Err(err) => {
            problems.push(format!("{}: cannot be read: {err}", file.display()));
            return None;
        }
    };
    if text.trim().is_empty() {
        return Some(Map::new());
    }
    match serde_json::from_str(&text) {
        Ok(Value::Object(document)) => Some(document),
        Ok(_) => {
            problems.push(format!("{}: the top level is not a JSON object; ignored", file.display()));
            None
        }
        Err(err) => {
            problems.push(format!("{}: not valid JSON ({err}); ignored", file.display()));
            None
        }
    }
}

fn servers_of(
    value: Option<&Value>,
    scope: McpScope,
    file: &Path,
    inputs: &LoadInputs<'_>,
    problems: &mut Vec<String>,
) -> Vec<ServerConfig> {
    let Some(value) = value else { return Vec::new() };
    let Value::Object(servers) = value else {
        problems.push(format!("{}: \"mcpServers\" is not an object; ignored", file.display()));
        return Vec::new();
    };
    servers
        .iter()
        .map(|(name, entry)| ServerConfig {
            name: name.clone(),
            transport: match scope {
                McpScope::Project => provider_secret_refused(entry)
                    .and_then(|()| parse_entry(name, entry, inputs.env).map_err(|error| error.to_string())),
                _ => parse_entry(name, entry, inputs.env).map_err(|error| error.to_string()),
            },
            scope,
            origin: file.display().to_string(),
            raw: entry.clone(),
        })
        .collect()
}

/// Why a server entry can't be used as it stands.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EntryError {
    /// A `${VAR}` without a default whose variable is not set here (it may be when a session starts).
    #[error("environment variable {0} is not set")]
    UnsetVariable(String),
    /// Anything else: the entry itself is wrong, said for the user.
    #[error("{0}")]
    Invalid(String),
}

impl From<String> for EntryError {
    fn from(problem: String) -> Self {
        EntryError::Invalid(problem)
    }
}

impl From<&str> for EntryError {
    fn from(problem: &str) -> Self {
        EntryError::Invalid(problem.to_owned())
    }
}

/// The keys of an entry tandem reads; anything else is reported rather than ignored.
const STDIO_KEYS: &[&str] = &["type", "command", "args", "env", "cwd"];
const HTTP_KEYS: &[&str] = &["type", "url", "headers"];
const SDK_KEYS: &[&str] = &["type", "name"];

fn parse_entry(name: &str, entry: &Value, env: &dyn Fn(&str) -> Option<String>) -> Result<Transport, EntryError> {
    if let Some(problem) = name_problem(name) {
        return Err(problem.into());
    }
    let Value::Object(entry) = entry else { return Err("the entry is not an object".into()) };
    let kind = match entry.get("type") {
        None => {
            if entry.contains_key("url") {
                return Err("an entry with a url needs \"type\": \"http\"".into());
            }
            "stdio"
        }
        Some(Value::String(kind)) => kind.as_str(),
        Some(_) => return Err("\"type\" is not a string".into()),
    };
    let known = match kind {
        "stdio" => STDIO_KEYS,
        "http" => HTTP_KEYS,
        "sse" => {
            return Err("the legacy SSE transport is not supported (the rmcp client speaks streamable HTTP): \
                        use the server's streamable HTTP endpoint with \"type\": \"http\""
                .into());
        }
        "sdk" => SDK_KEYS,
        "ws" => return Err("the WebSocket transport is not supported".into()),
        other => return Err(EntryError::Invalid(format!("unknown type {other:?} (use stdio or http)"))),
    };
    if let Some(key) = entry.keys().find(|key| !known.contains(&key.as_str())) {
        return Err(EntryError::Invalid(format!("\"{key}\" is not supported for a {kind} server")));
    }
    if kind == "sdk" {
        return Ok(Transport::Sdk);
    }
    let expand = |text: &str| expand_vars(text, env);
    if kind == "http" {
        let url = expand(string_field(entry, "url")?.ok_or("\"url\" is missing")?)?;
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(EntryError::Invalid(format!("the url {url:?} is not http:// or https://")));
        }
        let headers = string_map(entry, "headers")?
            .into_iter()
            .map(|(k, v)| Ok((k, expand(&v)?)))
            .collect::<Result<_, EntryError>>()?;
        return Ok(Transport::Http { url, headers });
    }
    let command = expand(string_field(entry, "command")?.ok_or("\"command\" is missing")?)?;
    if command.trim().is_empty() {
        return Err("\"command\" is empty".into());
    }
    let args = match entry.get("args") {
        None => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| item.as_str().ok_or_else(|| EntryError::from("\"args\" holds a non-string")).and_then(&expand))
            .collect::<Result<_, _>>()?,
        Some(_) => return Err("\"args\" is not an array of strings".into()),
    };
    let env_map =
        string_map(entry, "env")?.into_iter().map(|(k, v)| Ok((k, expand(&v)?))).collect::<Result<_, EntryError>>()?;
    let cwd = string_field(entry, "cwd")?.map(|dir| expand(dir).map(PathBuf::from)).transpose()?;
    Ok(Transport::Stdio { command, args, env: env_map, cwd })
}

/// A project's `.mcp.json` may not put tandem's own provider keys into a server's environment, arguments, URL or
/// headers (`${ANTHROPIC_API_KEY}`): a repository's server would receive the user's key.
fn provider_secret_refused(entry: &Value) -> Result<(), String> {
    let text = entry.to_string();
    match crate::shell_env::PROVIDER_SECRETS.iter().find(|name| {
        text.match_indices("${").any(|(at, _)| {
            let rest = &text[at + 2..];
            rest.strip_prefix(**name).is_some_and(|after| after.starts_with('}') || after.starts_with(":-"))
        })
    }) {
        Some(name) => Err(format!(
            "it refers to ${{{name}}}: tandem does not give its provider keys to a project's .mcp.json servers \
             (define the server in your user config to pass it a key)"
        )),
        None => Ok(()),
    }
}

/// Reads `entry` as a session would, with the process environment; for `tandem mcp add`'s checks.
pub fn parse_entry_for_check(name: &str, entry: &Value) -> Result<(), EntryError> {
    parse_entry(name, entry, &|var| std::env::var(var).ok()).map(|_| ())
}

fn string_field<'a>(entry: &'a Map<String, Value>, key: &str) -> Result<Option<&'a str>, String> {
    match entry.get(key) {
        None => Ok(None),
        Some(Value::String(text)) => Ok(Some(text)),
        Some(_) => Err(format!("\"{key}\" is not a string")),
    }
}

fn string_map(entry: &Map<String, Value>, key: &str) -> Result<BTreeMap<String, String>, String> {
    match entry.get(key) {
        None => Ok(BTreeMap::new()),
        Some(Value::Object(map)) => map
            .iter()
            .map(|(k, v)| {
                v.as_str().map(|v| (k.clone(), v.to_owned())).ok_or_else(|| format!("\"{key}.{k}\" is not a string"))
            })
            .collect(),
        Some(_) => Err(format!("\"{key}\" is not an object of strings")),
    }
}

/// Longest server name: with `mcp__` and `__` in front of the tool's name, a longer one would leave tools of
/// different servers only the 64 characters of the server's part when names are cut to the providers' limit.
pub const MAX_SERVER_NAME: usize = 48;

/// Server names become part of tool names (`mcp__<server>__<tool>`), which APIs restrict to these characters.
/// A name may not hold `__` nor end in `_`, so the first `__` after `mcp__` always ends the server's part:
/// `mcp__gh__a` can't be both tool `a` of server `gh` and a tool of a server `gh__a` (or `gh_`'s tool `_a`),
/// and a rule naming one can't cover the other.
pub fn valid_name(name: &str) -> bool {
    name_problem(name).is_none()
}

/// What is wrong with a server name, if anything (for messages).
pub fn name_problem(name: &str) -> Option<String> {
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
        return Some(format!("the name {name:?} may only hold letters, digits, '-' and '_'"));
    }
    if name.contains("__") || name.ends_with('_') {
        return Some(format!(
            "the name {name:?} may not hold \"__\" or end in '_' (tools are called mcp__<server>__<tool>, and the \
             server's part must be unambiguous)"
        ));
    }
    if name.len() > MAX_SERVER_NAME {
        return Some(format!("the name {name:?} is longer than {MAX_SERVER_NAME} characters"));
    }
    None
}

/// Expands `${VAR}` and `${VAR:-default}`; an unset variable without a default is an error naming it. A `$`
/// not followed by `{` is kept as written.
pub fn expand_vars(text: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<String, EntryError> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("${") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let Some(end) = after.find('}') else {
            return Err(EntryError::Invalid(format!("unclosed ${{ in {text:?}")));
        };
        let inner = &after[..end];
        let (name, default) = match inner.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (inner, None),
        };
        // As in a shell: `:-` also replaces an empty value; a plain reference to an empty variable is empty.
        match (env(name), default) {
            (Some(value), Some(default)) if value.is_empty() => out.push_str(default),
            (Some(value), _) => out.push_str(&value),
            (None, Some(default)) => out.push_str(default),
            (None, None) => return Err(EntryError::UnsetVariable(name.to_owned())),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
