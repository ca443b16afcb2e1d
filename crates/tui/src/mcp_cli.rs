//! `tandem mcp …`: Claude Code's `claude mcp` commands (list, get, add, add-json, remove,
//! reset-project-choices) over the same files a session reads.

use std::path::PathBuf;
use std::sync::Arc;

use clap::Subcommand;
use serde_json::Value;

use tandem_core::config::{self, Paths};
use tandem_core::hooks;
use tandem_core::mcp::config::{self as mcp_config, LoadInputs, McpConfig, McpScope, ServerConfig};
use tandem_core::mcp::edit::{self, Files, NewServer};
use tandem_core::mcp::{ManagerOptions, McpManager, ServerStatus, Status};
use tandem_core::permissions::settings;

use crate::pipe::say;

/// `tandem mcp`: configure and check MCP servers.
#[derive(Clone, Debug, clap::Args)]
pub struct McpArgs {
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Debug, Subcommand)]
enum Command {
    /// List the configured servers and check that they connect.
    List,
    /// Show one server's configuration and status.
    Get { name: String },
    /// Add a server: `tandem mcp add [options] <name> <command-or-url> [args...]` (put `--` before a command's
    /// own options).
    Add {
        /// local (this project, only you; the default), project (.mcp.json, shared), or user (every project).
        #[arg(short, long, default_value = "local")]
        scope: String,
        /// stdio (a command) or http (a url).
        #[arg(short, long, default_value = "stdio")]
        transport: String,
        /// An environment variable for a stdio server: KEY=value (repeat the flag for more).
        #[arg(short, long = "env")]
        env: Vec<String>,
        /// A header for an http server: "Name: value" (repeat the flag for more).
        #[arg(short = 'H', long = "header")]
        header: Vec<String>,
        name: String,
        command_or_url: String,
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Add a server from a JSON entry, e.g. '{"type":"http","url":"https://…"}'.
    AddJson {
        #[arg(short, long, default_value = "local")]
        scope: String,
        name: String,
        json: String,
    },
    /// Remove a server (from the one scope that has it, or from --scope).
    Remove {
        #[arg(short, long)]
        scope: Option<String>,
        name: String,
    },
    /// Forget which of the project's .mcp.json servers you approved or refused.
    ResetProjectChoices,
    /// Not supported by tandem.
    #[command(hide = true, external_subcommand)]
    Other(Vec<String>),
}

/// Runs `tandem mcp …`; the exit code.
pub fn run(cli: McpArgs) -> u8 {
    let context = match Context::discover() {
        Ok(context) => context,
        Err(why) => {
            eprintln!("tandem mcp: {why}");
            return 1;
        }
    };
    let result = match cli.command {
        Command::List => context.list(),
        Command::Get { name } => context.get(&name),
        Command::Add { scope, transport, env, header, name, command_or_url, args } => {
            let server = NewServer { transport, command_or_url, args, env, headers: header };
            server.entry().and_then(|entry| context.add(&scope, &name, entry))
        }
        Command::AddJson { scope, name, json } => match serde_json::from_str::<Value>(&json) {
            Ok(entry @ Value::Object(_)) => context.add(&scope, &name, entry),
            Ok(_) => Err("the JSON is not an object".into()),
            Err(err) => Err(format!("not valid JSON: {err}")),
        },
        Command::Remove { scope, name } => context.remove(scope.as_deref(), &name),
        Command::ResetProjectChoices => context.reset_choices(),
        Command::Other(words) => Err(format!(
            "`tandem mcp {}` is not supported (tandem has list, get, add, add-json, remove, reset-project-choices)",
            words.first().map(String::as_str).unwrap_or("")
        )),
    };
    match result {
        Ok(()) => 0,
        Err(why) => {
            eprintln!("tandem mcp: {why}");
            1
        }
    }
}

/// Where the files are for the current directory.
struct Context {
    paths: Paths,
    cwd: PathBuf,
    project_root: PathBuf,
    home: Option<PathBuf>,
    choices: mcp_config::ProjectChoices,
}

impl Context {
    fn discover() -> Result<Context, String> {
        let env = |name: &str| std::env::var(name).ok();
        let paths = Paths::discover(&env);
        let cwd = std::env::current_dir().map_err(|err| format!("cannot read the working directory: {err}"))?;
        let home = tandem_core::fs_util::user_home();
        let claude_dir = hooks::claude_user_dir(&env, home.as_deref());
        let loaded = settings::load_sources(
            &paths.config_dir,
            claude_dir.as_deref(),
            &cwd,
            home.as_deref(),
            settings::SettingSources::ALL,
        );
        loaded.check_readable()?;
        Ok(Context { paths, cwd, project_root: loaded.project_root, home, choices: loaded.mcp_choices })
    }

    fn files(&self) -> Files<'_> {
        Files { config_dir: &self.paths.config_dir, project_root: &self.project_root }
    }

    fn load(&self) -> McpConfig {
        let env = |name: &str| std::env::var(name).ok();
        mcp_config::load(&LoadInputs {
            project_root: &self.project_root,
            config_dir: &self.paths.config_dir,
            claude_json: tandem_core::setup::claude_json(&env, self.home.as_deref()),
            flag_configs: &[],
            strict: false,
            choices: &self.choices,
            env: &env,
            cwd: &self.cwd,
        })
    }

    /// Starts the servers that would start in a session here and waits for them (at most the start-up timeout).
    fn check(&self, config: McpConfig) -> Vec<ServerStatus> {
        let env = |name: &str| std::env::var(name).ok();
        let policy = config::load_config_file(&self.paths.config_file())
            .ok()
            .and_then(|file| file.shell_environment_policy)
            .unwrap_or_default();
        let mut problems = Vec::new();
        let options = ManagerOptions::from_env(&env, Arc::new(policy), 200_000, &mut problems);
        for problem in problems {
            eprintln!("tandem mcp: warning: {problem}");
        }
        let wait = options.startup_timeout;
        let runtime = match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
            Ok(runtime) => runtime,
            Err(err) => {
                eprintln!("tandem mcp: cannot start the async runtime: {err}");
                std::process::exit(1);
            }
        };
        // Read before the runtime goes: stopping it ends the servers' connections.
        let statuses = runtime.block_on(async {
            let manager = McpManager::new(config, options);
            manager.start();
            manager.settle(wait).await;
            manager.statuses()
        });
        runtime.shutdown_background();
        statuses
    }

    fn list(&self) -> Result<(), String> {
        let config = self.load();
        for problem in &config.problems {
            eprintln!("tandem mcp: warning: {problem}");
        }
        if config.servers.is_empty() && config.awaiting_approval.is_empty() && config.refused.is_empty() {
            say!("No MCP servers configured. Use `tandem mcp add` to add a server (or a .mcp.json in the project).");
            return Ok(());
        }
        let refused = config.refused.clone();
        say!("Checking MCP server health...\n");
        for status in self.check(config) {
            let target = describe_target(&status.config);
            say!("{}: {target} - {}", status.name, health(&status.status, status.needs_approval));
        }
        for name in refused {
            say!("{name}: (.mcp.json) - ✗ Refused (tandem mcp reset-project-choices asks again)");
        }
        Ok(())
    }

    fn get(&self, name: &str) -> Result<(), String> {
        let mut config = self.load();
        let refused = config.refused.contains(&name.to_owned());
        let found = config.servers.iter().chain(&config.awaiting_approval).find(|server| server.name == name).cloned();
        let Some(server) = found else {
            if refused {
                return Err(format!(
                    "{name} is a .mcp.json server you refused (tandem mcp reset-project-choices asks again)"
                ));
            }
            return Err(format!("no MCP server named {name:?} (tandem mcp list shows them)"));
        };
        config.servers.retain(|s| s.name == name);
        config.awaiting_approval.retain(|s| s.name == name);
        let status = self.check(config).into_iter().find(|s| s.name == name);
        say!("{name}:");
        say!("  Scope: {}", scope_label(&server));
        say!("  File: {}", server.origin);
        if let Some(status) = &status {
            say!("  Status: {}", health(&status.status, status.needs_approval));
            if !status.tools.is_empty() {
                say!("  Tools: {}", status.tools.len());
            }
        }
        print_entry(&server.raw);
        let scope_flag = match server.scope {
            McpScope::Local | McpScope::User | McpScope::Project if server.origin.ends_with(".claude.json") => None,
            scope => Some(scope.as_str()),
        };
        match scope_flag {
            Some(scope) => say!("\nTo remove this server, run: tandem mcp remove \"{name}\" -s {scope}"),
            None => say!("\nThis server is in Claude Code's ~/.claude.json, which tandem does not change."),
        }
        Ok(())
    }

    fn add(&self, scope: &str, name: &str, entry: Value) -> Result<(), String> {
        let scope = parse_scope(scope)?;
        if let Some(warning) = edit::check_entry(name, &entry)? {
            eprintln!("tandem mcp: warning: {warning} (it must be set when a session starts)");
        }
        let transport = if entry.get("url").is_some() { "http" } else { "stdio" };
        let file = self.files().add(scope, name, entry)?;
        say!("Added {transport} MCP server {name} to {} config", scope.as_str());
        say!("File modified: {}", file.display());
        if scope == McpScope::Project {
            say!("Sessions in this project ask once before starting it (as every .mcp.json server).");
        }
        Ok(())
    }

    fn remove(&self, scope: Option<&str>, name: &str) -> Result<(), String> {
        let files = self.files();
        if let Some(scope) = scope {
            let scope = parse_scope(scope)?;
            return match files.remove(scope, name)? {
                Some(file) => {
                    say!("Removed MCP server {name} from {} config\nFile modified: {}", scope.as_str(), file.display());
                    Ok(())
                }
                None => Err(format!("no MCP server {name:?} in {} config", scope.as_str())),
            };
        }
        let config = self.load();
        let scopes: Vec<McpScope> = [McpScope::Local, McpScope::Project, McpScope::User]
            .into_iter()
            .filter(|scope| in_file(&files, *scope, name))
            .collect();
        match scopes.as_slice() {
            [scope] => self.remove(Some(scope.as_str()), name),
            [] => {
                let elsewhere = config
                    .servers
                    .iter()
                    .chain(&config.awaiting_approval)
                    .find(|server| server.name == name)
                    .map(|server| server.origin.clone());
                Err(match elsewhere {
                    Some(origin) => format!("{name} is defined in {origin}, which tandem does not change"),
                    None => format!("no MCP server named {name:?}"),
                })
            }
            many => {
                let names: Vec<&str> = many.iter().map(|scope| scope.as_str()).collect();
                Err(format!("{name} exists in several scopes ({}): say which with -s", names.join(", ")))
            }
        }
    }

    fn reset_choices(&self) -> Result<(), String> {
        let stored = tandem_core::mcp::approvals::forget(&self.paths.config_dir, &self.project_root)?;
        let legacy = settings::reset_mcp_choices(&self.project_root)?;
        let files: Vec<String> = stored.iter().chain(legacy.iter()).map(|file| file.display().to_string()).collect();
        if files.is_empty() {
            say!("No .mcp.json choices were recorded for this project.");
        } else {
            say!("The project's .mcp.json servers will ask for approval again.\nFile modified: {}", files.join(", "));
        }
        Ok(())
    }
}

fn parse_scope(text: &str) -> Result<McpScope, String> {
    match text {
        "local" => Ok(McpScope::Local),
        "project" => Ok(McpScope::Project),
        "user" => Ok(McpScope::User),
        other => Err(format!("invalid scope {other:?}: use local, project or user")),
    }
}

/// Whether `scope`'s own file (not `~/.claude.json`) holds `name`.
fn in_file(files: &Files<'_>, scope: McpScope, name: &str) -> bool {
    let Ok(file) = files.file(scope) else { return false };
    let Ok(text) = std::fs::read_to_string(&file) else { return false };
    let Ok(document) = serde_json::from_str::<Value>(&text) else { return false };
    let servers = if scope == McpScope::Local {
        document.get("projects").and_then(|p| p.get(files.project_root.to_string_lossy().as_ref()))
    } else {
        Some(&document)
    };
    servers.and_then(|holder| holder.get("mcpServers")).and_then(|servers| servers.get(name)).is_some()
}

fn scope_label(server: &ServerConfig) -> String {
    match server.scope {
        McpScope::Local => "Local config (private to you in this project)".into(),
        McpScope::Project => "Project config (shared via .mcp.json)".into(),
        McpScope::User => "User config (available in all your projects)".into(),
        McpScope::Dynamic => "--mcp-config".into(),
    }
}

fn health(status: &Status, needs_approval: bool) -> String {
    if needs_approval {
        return "⚠ Needs approval (start tandem here to approve it)".into();
    }
    match status {
        Status::Connected => "✓ Connected".into(),
        Status::Pending => "… Still starting (MCP_TIMEOUT sets how long to wait)".into(),
        Status::Failed(reason) => format!("✗ Failed to connect: {}", first_line(reason)),
        Status::Disabled(reason) => format!("○ Disabled: {}", first_line(reason)),
    }
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("")
}

/// `command args` or `url (HTTP)`, as `claude mcp list` writes it.
fn describe_target(entry: &Value) -> String {
    if let Some(url) = entry.get("url").and_then(Value::as_str) {
        return format!("{url} (HTTP)");
    }
    let command = entry.get("command").and_then(Value::as_str).unwrap_or("?");
    let args: Vec<&str> =
        entry.get("args").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
    if args.is_empty() { command.to_owned() } else { format!("{command} {}", args.join(" ")) }
}

fn print_entry(entry: &Value) {
    if let Some(url) = entry.get("url").and_then(Value::as_str) {
        say!("  Type: http\n  URL: {url}");
        if let Some(Value::Object(headers)) = entry.get("headers") {
            say!("  Headers:");
            for (key, value) in headers {
                say!("    {key}: {}", value.as_str().unwrap_or("?"));
            }
        }
        return;
    }
    say!("  Type: stdio");
    say!("  Command: {}", entry.get("command").and_then(Value::as_str).unwrap_or("?"));
    let args: Vec<&str> =
        entry.get("args").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
    say!("  Args: {}", args.join(" "));
    say!("  Environment:");
    if let Some(Value::Object(env)) = entry.get("env") {
        for (key, value) in env {
            say!("    {key}={}", value.as_str().unwrap_or("?"));
        }
    }
}
