//! Command-line interface: Claude Code's flags, so its users are at home.

use std::path::PathBuf;

use clap::{Parser, ValueEnum};

/// tandem — a terminal pair programmer.
#[derive(Clone, Debug, Parser)]
#[command(
    name = "tandem",
    version,
    about = "tandem — a terminal pair programmer",
    long_about = None,
    after_help = "Other commands:\n  tandem sessions    list saved sessions (id, time, directory, title, turns, cost)"
)]
pub struct Cli {
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

    /// Maximum spend in US dollars for the session.
    #[arg(long = "max-budget-usd")]
    pub max_budget_usd: Option<f64>,

    /// Tools or rules to allow without asking, e.g. "Bash(npm test) Edit" (comma or space separated).
    #[arg(long = "allowedTools", alias = "allowed-tools", num_args = 1.., action = clap::ArgAction::Append)]
    pub allowed_tools: Vec<String>,

    /// Tools or rules to deny, e.g. "Bash(git push:*),Write" (comma or space separated).
    #[arg(long = "disallowedTools", alias = "disallowed-tools", num_args = 1.., action = clap::ArgAction::Append)]
    pub disallowed_tools: Vec<String>,

    /// Subagents for the Task tool, as JSON: {"name": {"description": "…", "prompt": "…", "tools": […], "model": "…"}}.
    #[arg(long)]
    pub agents: Option<String>,

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
    #[arg(long = "system-prompt")]
    pub system_prompt: Option<String>,

    /// Append to the system prompt.
    #[arg(long = "append-system-prompt")]
    pub append_system_prompt: Option<String>,

    /// Don't capture the mouse, so the terminal's own text selection works (the wheel then scrolls the
    /// terminal, not the conversation). Also set by TANDEM_NO_MOUSE=1.
    #[arg(long = "no-mouse")]
    pub no_mouse: bool,

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
