//! What a front end asks of a session, in plain values: the binary fills it from its flags (Claude Code's), an
//! SDK host or a test can fill it directly. Nothing here is parsed yet: [`super::build`] judges every value and
//! says which one is wrong.

use std::path::PathBuf;

use crate::config::ProviderFlags;

/// Which front end the session is for: it decides what can be asked of the user (headless runs cannot show a
/// dialog, so they say how to approve instead) and which project files are trusted as `claude -p` trusts them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FrontEnd {
    /// The full-screen app.
    #[default]
    App,
    /// `-p`: one prompt, printed.
    Headless,
    /// NDJSON frames on stdin: the Agent SDK's control protocol.
    Sdk,
}

impl FrontEnd {
    /// No user at a keyboard to approve a hook, a server or a settings file.
    pub fn headless(self) -> bool {
        self != FrontEnd::App
    }
}

/// Which saved conversation the session continues, if any.
#[derive(Clone, Debug, Default)]
pub struct SessionChoice {
    /// Resume this session (an id or an id's prefix); `Some("")` is a mistake reported as one (the app picks
    /// before it builds).
    pub resume: Option<String>,
    /// Continue the latest session in the working directory.
    pub continue_latest: bool,
    /// Continue in a copy, leaving the original as it was.
    pub fork: bool,
    /// The new session's id (a UUID).
    pub id: Option<String>,
    /// `--no-session-persistence`: nothing of the session is saved; it can't be resumed.
    pub no_persistence: bool,
}

/// Everything a front end may choose about a session. Empty (`Default`) means: what the settings and
/// config.toml say.
#[derive(Clone, Debug, Default)]
pub struct SessionOptions {
    pub front_end: FrontEnd,
    pub provider: ProviderFlags,
    pub session: SessionChoice,
    /// `default`, `acceptEdits`, `plan`, `bypassPermissions` or `dontAsk`.
    pub permission_mode: Option<String>,
    /// Every tool without asking (bypassPermissions); deny rules still hold.
    pub skip_permissions: bool,
    /// Rules to allow and to deny, each value a comma or space separated list.
    pub allowed_tools: Vec<String>,
    pub disallowed_tools: Vec<String>,
    /// Only these built-in tools (`default` for all, `""` for none).
    pub tools: Option<String>,
    /// More directories to work in, relative to the working directory.
    pub add_dirs: Vec<PathBuf>,
    /// A settings document (JSON object) or a settings file's path, read after every other settings file.
    pub settings: Option<String>,
    /// Which settings files are read: a comma list of user, project, local.
    pub setting_sources: Option<String>,
    /// `off`, `read-only` or `workspace-write` (what approved commands run in).
    pub sandbox: Option<String>,
    pub system_prompt: Option<String>,
    pub system_prompt_file: Option<PathBuf>,
    pub append_system_prompt: Option<String>,
    pub max_turns: Option<u32>,
    pub max_budget_usd: Option<f64>,
    pub fallback_model: Option<String>,
    /// `adaptive`, `enabled` or `disabled`.
    pub thinking: Option<String>,
    pub max_thinking_tokens: Option<u32>,
    /// `summarized` or `omitted`.
    pub thinking_display: Option<String>,
    /// `low` … `max`.
    pub effort: Option<String>,
    /// The final answer must be JSON valid against this schema (its text).
    pub json_schema: Option<String>,
    /// Subagents as JSON (`{"name": {"description", "prompt", …}}`).
    pub agents: Option<String>,
    /// The agent the main conversation is (`--agent`): its prompt, tools and model are the session's.
    pub agent: Option<String>,
    /// MCP server configurations (files or JSON), and whether only they are used.
    pub mcp_configs: Vec<String>,
    pub strict_mcp_config: bool,
    /// How the Agent SDK host's own servers (type `"sdk"`) are reached, when an SDK host started tandem.
    pub sdk_mcp_relay: Option<crate::mcp::relay::SdkRelay>,
    /// Anthropic beta headers, each value a comma list.
    pub betas: Vec<String>,
    /// Who answers permission requests headless (`stdio`: the SDK host).
    pub permission_prompt_tool: Option<String>,
}
