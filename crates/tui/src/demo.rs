//! `tandem --demo` (or `d` on the welcome screen): a scripted session in a scratch copy of a small example project,
//! against a model that runs inside the process. It shows a streamed answer, tool cards, an edit dialog with
//! per-hunk review and a command dialog, and ends by saying how to connect a real provider. Nothing is sent
//! anywhere; the scratch copy is removed when tandem exits.

mod project;
mod provider;
mod script;

use std::path::Path;
use std::sync::Arc;

use tandem_core::agent::AgentConfig;
use tandem_core::config::Paths;
use tandem_core::context::compact::CompactionPolicy;
use tandem_core::models::{ModelInfo, Prices};
use tandem_core::permissions::{PermissionMode, PermissionPolicy, Workspace};
use tandem_core::prompt::{self, PromptOptions};
use tandem_core::provider::retry::RetryPolicy;
use tandem_core::tools::ToolRegistry;

pub use project::scratch_copy;
pub use script::PROMPT;

/// The model name the demo shows.
pub const MODEL: &str = "scripted-demo-model";

/// The demo session in the example project at `dir` (see [`scratch_copy`]): default permission mode, so every
/// edit and command asks; no session log, so the user's saved sessions stay as they were.
pub fn config(dir: &Path) -> AgentConfig {
    let env = |name: &str| std::env::var(name).ok();
    let paths = Paths::discover(&env);
    let home = tandem_core::fs_util::user_home();
    let workspace = Workspace::new(dir, &[], home.clone(), Some(paths.config_dir.clone()));
    tandem_core::shell::keep_programs_outside(workspace.roots());
    let permissions = PermissionPolicy::new(
        PermissionMode::Default,
        workspace,
        home.unwrap_or_else(|| std::path::PathBuf::from("/")),
    );
    let model = ModelInfo {
        id: MODEL.into(),
        context_window: 200_000,
        max_output_tokens: 8192,
        prices: Some(Prices::LOCAL),
        known: true,
        thinking: tandem_core::models::ThinkingSupport::None,
        effort: false,
        reasoning_effort: false,
    };
    AgentConfig {
        session_id: tandem_core::session::new_session_id(),
        provider: Arc::new(provider::DemoProvider::new(dir.to_path_buf())),
        model,
        system: prompt::system_blocks(&PromptOptions::default(), dir, &prompt::today_utc()),
        tools: ToolRegistry::builtin(),
        permissions,
        cwd: dir.to_path_buf(),
        max_turns: None,
        max_budget_usd: None,
        retry: RetryPolicy::default(),
        sandbox: None,
        shell_env: Arc::default(),
        config_dir: paths.config_dir,
        claude_dir: None,
        guideline_sources: tandem_core::context::guidelines::Sources::ALL,
        notices: vec![format!(
            "DEMO — a scripted model, no network, no key. The project is a scratch copy in {} (removed on exit).",
            dir.display()
        )],
        session_log: None,
        unsaved_dir: None,
        resume: None,
        compaction: CompactionPolicy::default(),
        hooks: Default::default(),
        commands: Default::default(),
        skills: Default::default(),
        agents: Default::default(),
        raw_stream: false,
        reasoning: Default::default(),
        betas: Vec::new(),
        structured_output: None,
        fallback_model: None,
        mcp: None,
    }
}
