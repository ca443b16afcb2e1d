//! Command-line interface: Claude Code's flags, so its users are at home.

use std::path::PathBuf;

use clap::{CommandFactory, Parser, ValueEnum};
use tandem_core::config::ProviderFlags;
use tandem_core::setup::{FrontEnd, SessionChoice, SessionOptions};

/// The commands that are not a session: a first argument that names one is that command, as with `claude`, so
/// `tandem sessions` lists them instead of asking the model about sessions.
#[derive(Clone, Debug, clap::Subcommand)]
pub enum Command {
    /// List saved sessions (id, time, directory, title, turns, cost).
    Sessions,
    /// List a session's model requests, or show one (as JSON or curl).
    Inspect(crate::inspect_cli::InspectArgs),
    /// Configure and check MCP servers (as `claude mcp` does).
    Mcp(crate::mcp_cli::McpArgs),
}

/// tandem — a terminal pair programmer.
#[derive(Clone, Debug, Parser)]
#[command(
    name = "tandem",
    version,
    about = "tandem — a terminal pair programmer",
    long_about = None,
    args_conflicts_with_subcommands = true,
    disable_help_subcommand = true
)]
pub struct Cli {
    /// A command other than a session (`tandem sessions`, `tandem inspect`, `tandem mcp`).
    #[command(subcommand)]
    pub command: Option<Command>,

    /// The prompt. With -p it is run headless; otherwise the app opens with it submitted.
    pub prompt: Option<String>,

    /// Print the response and exit (headless mode). The prompt comes from the argument or from stdin.
    #[arg(short = 'p', long = "print")]
    pub print: bool,

    /// Output format for -p.
    #[arg(long = "output-format", value_enum, default_value_t = OutputFormat::Text)]
    pub output_format: OutputFormat,

    /// With stream-json: also print the raw streaming events as they arrive.
    #[arg(long = "include-partial-messages")]
    pub include_partial_messages: bool,

    /// Verbose output (accepted for compatibility; stream-json is always complete).
    #[arg(long)]
    pub verbose: bool,

    /// Model to use (id or alias from assets/models.toml).
    #[arg(long)]
    pub model: Option<String>,

    /// Provider: anthropic, openai, openrouter, ollama, llamacpp, or one declared in config.toml.
    #[arg(long)]
    pub provider: Option<String>,

    /// Base URL of the provider's API (e.g. http://127.0.0.1:1234/v1 for LM Studio).
    #[arg(long = "base-url")]
    pub base_url: Option<String>,

    /// Maximum model round trips for the prompt.
    #[arg(long = "max-turns")]
    pub max_turns: Option<u32>,

    /// Maximum spend in US dollars for this run (with --resume or --continue, what the session spent before does
    /// not count); subagents' spending counts too. Needs a model with known prices.
    #[arg(long = "max-budget-usd")]
    pub max_budget_usd: Option<f64>,

    /// Tools or rules to allow without asking, e.g. "Bash(npm test) Edit" (comma or space separated).
    #[arg(long = "allowedTools", alias = "allowed-tools", num_args = 1.., action = clap::ArgAction::Append)]
    pub allowed_tools: Vec<String>,

    /// Tools or rules to deny, e.g. "Bash(git push:*),Write" (comma or space separated).
    #[arg(long = "disallowedTools", alias = "disallowed-tools", num_args = 1.., action = clap::ArgAction::Append)]
    pub disallowed_tools: Vec<String>,

    /// Subagents for the Task tool, as JSON: {"name": {"description": "…", "prompt": "…", "tools": […], "model": "…"}}.
    #[arg(long, allow_hyphen_values = true)]
    pub agents: Option<String>,

    /// Run the main conversation as this agent (one of `--agents`, `.claude/agents/`, …): its prompt, tools and
    /// model are the session's.
    #[arg(long)]
    pub agent: Option<String>,

    /// More directories the session may work in (besides the current one).
    #[arg(long = "add-dir", num_args = 1.., action = clap::ArgAction::Append)]
    pub add_dir: Vec<PathBuf>,

    /// Run Bash commands in a Landlock sandbox: off, read-only, workspace-write (Linux).
    #[arg(long)]
    pub sandbox: Option<String>,

    /// Continue the most recent session in this directory.
    #[arg(short = 'c', long = "continue")]
    pub continue_session: bool,

    /// Resume a session by id (or id prefix); without an id the app lets you pick one.
    #[arg(short = 'r', long = "resume", num_args = 0..=1, default_missing_value = "")]
    pub resume: Option<String>,

    /// With --continue or --resume: continue in a new session, leaving the original unchanged.
    #[arg(long = "fork-session")]
    pub fork_session: bool,

    /// Permission mode: default, acceptEdits, plan, bypassPermissions, dontAsk.
    #[arg(long = "permission-mode")]
    pub permission_mode: Option<String>,

    /// Run every tool without asking (permission mode bypassPermissions). Deny rules still apply.
    #[arg(long = "dangerously-skip-permissions")]
    pub dangerously_skip_permissions: bool,

    /// Replace the system prompt.
    #[arg(long = "system-prompt", allow_hyphen_values = true)]
    pub system_prompt: Option<String>,

    /// Append to the system prompt.
    #[arg(long = "append-system-prompt", allow_hyphen_values = true)]
    pub append_system_prompt: Option<String>,

    /// Don't capture the mouse, so the terminal's own text selection works (the wheel then scrolls the
    /// terminal, not the conversation). Also set by TANDEM_NO_MOUSE=1.
    #[arg(long = "no-mouse")]
    pub no_mouse: bool,

    /// Input format with -p or stream-json output: `text` (the prompt) or `stream-json` (NDJSON user messages and
    /// control requests on stdin, as the Claude Agent SDK sends them; runs headless until stdin closes).
    #[arg(long = "input-format", value_enum)]
    pub input_format: Option<InputFormat>,

    /// Who answers permission requests headless: `stdio` asks the SDK host over the control protocol.
    #[arg(long = "permission-prompt-tool")]
    pub permission_prompt_tool: Option<String>,

    /// The built-in tools the model gets: a comma list (`Read,Edit`), `""` for none, or `default`.
    #[arg(long = "tools")]
    pub tools: Option<String>,

    /// Replace the system prompt with this file's text.
    #[arg(long = "system-prompt-file")]
    pub system_prompt_file: Option<PathBuf>,

    /// More settings: a JSON object or a settings file's path, read after every other settings file.
    #[arg(long = "settings", allow_hyphen_values = true)]
    pub settings: Option<String>,

    /// Which settings files are read: a comma list of user, project, local (default: all).
    #[arg(long = "setting-sources")]
    pub setting_sources: Option<String>,

    /// Use this id (a UUID) for the new session.
    #[arg(long = "session-id")]
    pub session_id: Option<String>,

    /// The model to switch to when the main one is overloaded or unavailable.
    #[arg(long = "fallback-model")]
    pub fallback_model: Option<String>,

    /// How hard the model thinks: low, medium, high, xhigh, max.
    #[arg(long = "effort")]
    pub effort: Option<String>,

    /// Extended thinking: adaptive, enabled or disabled.
    #[arg(long = "thinking")]
    pub thinking: Option<String>,

    /// Extended thinking with this token budget.
    #[arg(long = "max-thinking-tokens")]
    pub max_thinking_tokens: Option<u32>,

    /// How thinking is shown: summarized or omitted.
    #[arg(long = "thinking-display")]
    pub thinking_display: Option<String>,

    /// Structured output: the final answer must be JSON valid against this JSON schema.
    #[arg(long = "json-schema", allow_hyphen_values = true)]
    pub json_schema: Option<String>,

    /// With stream-json: also print hook events (hook_started, hook_response).
    #[arg(long = "include-hook-events")]
    pub include_hook_events: bool,

    /// Anthropic beta headers to send (comma separated).
    #[arg(long = "betas", num_args = 1.., action = clap::ArgAction::Append)]
    pub betas: Vec<String>,

    /// MCP servers (a file or JSON); repeatable.
    #[arg(long = "mcp-config", num_args = 1.., action = clap::ArgAction::Append)]
    pub mcp_config: Vec<String>,

    /// Use only the MCP servers of --mcp-config.
    #[arg(long = "strict-mcp-config")]
    pub strict_mcp_config: bool,

    /// Save nothing of the session: it can't be resumed (its log lives in a private directory removed at the end).
    #[arg(long = "no-session-persistence")]
    pub no_session_persistence: bool,

    /// With stream-json input: build the session only once the SDK's `initialize` request is read, since it may
    /// carry the system prompt and MCP servers (tandem always waits for a first frame that is one).
    #[arg(long = "await-initialize")]
    pub await_initialize: bool,

    /// With stream-json input: print each user message back, with the `uuid` that names it (for rewind_files).
    #[arg(long = "replay-user-messages")]
    pub replay_user_messages: bool,

    /// A scripted demo: a built-in model (no network, no key) works on a scratch copy of a small example
    /// project, showing a streamed answer, tool cards, an edit dialog and a command dialog.
    #[arg(long = "demo")]
    pub demo: bool,
}

/// What `-p` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// The final answer's text.
    Text,
    /// One JSON result object.
    Json,
    /// One JSON object per line as the run happens.
    #[value(name = "stream-json")]
    StreamJson,
}

/// What stdin carries in headless mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum InputFormat {
    /// The prompt, as text.
    Text,
    /// NDJSON frames: user messages and control requests (the Claude Agent SDK's protocol).
    #[value(name = "stream-json")]
    StreamJson,
}

impl Cli {
    /// Headless with NDJSON on stdin: the Agent SDK's mode (it passes no `-p`).
    pub fn streaming_input(&self) -> bool {
        self.input_format == Some(InputFormat::StreamJson)
    }

    /// Runs without the app: `-p`, or stream-json input.
    pub fn headless(&self) -> bool {
        self.print || self.streaming_input()
    }

    /// The front end these flags pick.
    pub fn front_end(&self) -> FrontEnd {
        match (self.streaming_input(), self.print) {
            (true, _) => FrontEnd::Sdk,
            (false, true) => FrontEnd::Headless,
            (false, false) => FrontEnd::App,
        }
    }

    /// What the flags ask of the session, for core's composition root (which judges each value).
    pub fn session_options(&self) -> SessionOptions {
        SessionOptions {
            front_end: self.front_end(),
            provider: ProviderFlags {
                provider: self.provider.clone(),
                model: self.model.clone(),
                base_url: self.base_url.clone(),
            },
            session: SessionChoice {
                resume: self.resume.clone(),
                continue_latest: self.continue_session,
                fork: self.fork_session,
                id: self.session_id.clone(),
                no_persistence: self.no_session_persistence,
            },
            permission_mode: self.permission_mode.clone(),
            skip_permissions: self.dangerously_skip_permissions,
            allowed_tools: self.allowed_tools.clone(),
            disallowed_tools: self.disallowed_tools.clone(),
            tools: self.tools.clone(),
            add_dirs: self.add_dir.clone(),
            settings: self.settings.clone(),
            setting_sources: self.setting_sources.clone(),
            sandbox: self.sandbox.clone(),
            system_prompt: self.system_prompt.clone(),
            system_prompt_file: self.system_prompt_file.clone(),
            append_system_prompt: self.append_system_prompt.clone(),
            max_turns: self.max_turns,
            max_budget_usd: self.max_budget_usd,
            fallback_model: self.fallback_model.clone(),
            thinking: self.thinking.clone(),
            max_thinking_tokens: self.max_thinking_tokens,
            thinking_display: self.thinking_display.clone(),
            effort: self.effort.clone(),
            json_schema: self.json_schema.clone(),
            agents: self.agents.clone(),
            agent: self.agent.clone(),
            mcp_configs: self.mcp_config.clone(),
            strict_mcp_config: self.strict_mcp_config,
            sdk_mcp_relay: None,
            betas: self.betas.clone(),
            permission_prompt_tool: self.permission_prompt_tool.clone(),
        }
    }
}

/// Parses argv like [`Cli::parse`], except that a flag this version does not know is dropped with a warning
/// instead of failing: the Agent SDK passes options as flags, and a newer SDK knows flags this tandem does not.
/// Returns the warnings (one per dropped flag) with the result.
pub fn parse_tolerant(mut args: Vec<std::ffi::OsString>) -> (Result<Cli, clap::Error>, Vec<String>) {
    let mut warnings = Vec::new();
    if names_a_command(&args) {
        return (Cli::try_parse_from(&args), warnings);
    }
    let sdk_mode = args.iter().any(|arg| arg == "--input-format" || arg == "--input-format=stream-json");
    let mut last_dropped: Option<usize> = None;
    loop {
        let error = match Cli::try_parse_from(&args) {
            Ok(cli) => return (Ok(cli), warnings),
            Err(error) => error,
        };
        let unknown = match error.kind() {
            clap::error::ErrorKind::UnknownArgument => error.get(clap::error::ContextKind::InvalidArg),
            // A word after the prompt: clap takes it for a command that can't follow arguments.
            clap::error::ErrorKind::ArgumentConflict => error.get(clap::error::ContextKind::InvalidSubcommand),
            _ => None,
        };
        let Some(clap::error::ContextValue::String(flag)) = unknown else { return (Err(error), warnings) };
        let flag = flag.clone();
        // `--flag=value` (the TS SDK's spelling): clap names the flag alone.
        let with_value = format!("{flag}=");
        let spelled = |arg: &std::ffi::OsString| {
            arg.to_str().is_some_and(|arg| arg == flag || flag.starts_with("--") && arg.starts_with(&with_value))
        };
        let Some(position) = args.iter().position(spelled) else {
            return (Err(error), warnings);
        };
        let flag = args[position].to_string_lossy().into_owned();
        // The value of an unknown flag dropped just before (`--flag value` where a prompt was given too).
        if !flag.starts_with('-') {
            if last_dropped == Some(position)
                && let Some(warning) = warnings.last_mut()
            {
                args.remove(position);
                warning.push(' ');
                warning.push_str(&flag);
                last_dropped = None;
                continue;
            }
            let error = clap::Error::raw(
                clap::error::ErrorKind::UnknownArgument,
                format!("unexpected argument '{flag}' found: put a prompt of several words in quotes"),
            );
            return (Err(error), warnings);
        }
        if !flag.starts_with("--") {
            return (Err(error), warnings);
        }
        args.remove(position);
        last_dropped = Some(position);
        // `--flag value`: in the SDK's argv (no positional prompt there) the value goes with the flag.
        let takes_value = !flag.contains('=')
            && sdk_mode
            && args.get(position).and_then(|arg| arg.to_str()).is_some_and(|next| !next.starts_with("--"));
        if takes_value {
            let value = args.remove(position);
            last_dropped = None;
            warnings.push(format!("ignoring unknown option {flag} {}", value.to_string_lossy()));
        } else {
            warnings.push(format!("ignoring unknown option {flag}"));
        }
    }
}

/// Whether the first argument is one of the commands, whose unknown options are errors (only a session's are
/// tolerated, for the SDKs that pass newer flags).
pub fn names_a_command(args: &[std::ffi::OsString]) -> bool {
    let Some(first) = args.get(1).and_then(|arg| arg.to_str()) else { return false };
    Cli::command().get_subcommands().any(|command| command.get_name() == first)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> (Result<Cli, clap::Error>, Vec<String>) {
        parse_tolerant(std::iter::once("tandem").chain(args.iter().copied()).map(Into::into).collect())
    }

    #[test]
    fn a_first_word_that_names_a_command_is_that_command_and_its_options_are_checked() {
        let (cli, _) = parse(&["sessions"]);
        assert!(matches!(cli.map(|cli| cli.command), Ok(Some(Command::Sessions))));
        let (cli, _) = parse(&["-p", "sessions please"]);
        let cli = cli.unwrap_or_else(|error| panic!("{error}"));
        assert!(cli.command.is_none());
        assert_eq!(cli.prompt.as_deref(), Some("sessions please"));
        let (cli, warnings) = parse(&["mcp", "list", "--no-such-option"]);
        assert_eq!(cli.map(|_| ()).map_err(|error| error.kind()), Err(clap::error::ErrorKind::UnknownArgument));
        assert!(warnings.is_empty());
        let (cli, _) = parse(&["inspect", "abc", "3", "--curl"]);
        assert!(matches!(cli.map(|cli| cli.command), Ok(Some(Command::Inspect(_)))));
    }

    #[test]
    fn the_sdks_argv_parses() {
        let (cli, warnings) = parse(&[
            "--output-format",
            "stream-json",
            "--verbose",
            "--system-prompt",
            "",
            "--allowedTools",
            "Read",
            "--max-turns",
            "3",
            "--permission-prompt-tool",
            "stdio",
            "--permission-mode",
            "default",
            "--resume=abc",
            "--setting-sources=user,project",
            "--input-format",
            "stream-json",
        ]);
        let cli = cli.unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        assert!(cli.streaming_input() && cli.headless());
        assert_eq!(cli.system_prompt.as_deref(), Some(""));
        assert_eq!(cli.resume.as_deref(), Some("abc"));
        assert_eq!(cli.setting_sources.as_deref(), Some("user,project"));
    }

    #[test]
    fn unknown_flags_warn_and_lose_nothing_else() {
        let (cli, warnings) = parse(&[
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
            "--future-flag",
            "value",
            "--other-future",
            "--max-turns",
            "2",
        ]);
        let cli = cli.unwrap();
        assert_eq!(cli.max_turns, Some(2));
        assert_eq!(warnings, ["ignoring unknown option --future-flag value", "ignoring unknown option --other-future"]);
        let (cli, warnings) = parse(&["-p", "hi", "--frobnicate", "3"]);
        assert_eq!(cli.unwrap().prompt.as_deref(), Some("hi"));
        assert_eq!(warnings, ["ignoring unknown option --frobnicate 3"]);
        let (cli, warnings) =
            parse(&["--output-format=stream-json", "--future=auditor", "--task-budget=5", "-p", "hi"]);
        assert_eq!(cli.unwrap().prompt.as_deref(), Some("hi"), "the TS SDK writes --flag=value");
        assert_eq!(warnings, ["ignoring unknown option --future=auditor", "ignoring unknown option --task-budget=5"]);
        let (cli, _) = parse(&["-p", "--system-prompt", "-starts with a dash", "hi"]);
        assert_eq!(cli.unwrap().system_prompt.as_deref(), Some("-starts with a dash"));
    }
}
