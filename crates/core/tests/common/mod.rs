//! What the agent's integration tests share: a session in `cwd` against the fake server, with the built-in
//! tools, default permissions and quick retries; each test changes what it is about with struct update syntax.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use tandem_core::agent::{self, AgentConfig};
use tandem_core::models;
use tandem_core::permissions::{PermissionMode, PermissionPolicy};
use tandem_core::provider::retry::RetryPolicy;
use tandem_core::provider::{ApiKey, Endpoint, ProviderKind, SystemBlock};
use tandem_core::tools::ToolRegistry;
use tandem_testkit::FakeServer;

pub(crate) fn agent_config(server: &FakeServer, cwd: &Path) -> AgentConfig {
    let endpoint = Endpoint {
        name: "anthropic".into(),
        kind: ProviderKind::Anthropic,
        base_url: server.url(),
        api_key: Some(ApiKey::new("test")),
        api_key_env: Some("ANTHROPIC_API_KEY".into()),
    };
    AgentConfig {
        session_id: agent::new_session_id(),
        provider: Arc::from(tandem_core::provider::connect(endpoint)),
        model: models::lookup("claude-sonnet-4-5"),
        system: vec![SystemBlock { text: "test".into(), cache: true }],
        tools: ToolRegistry::builtin(),
        permissions: PermissionPolicy::for_cwd(PermissionMode::Default, cwd),
        cwd: cwd.to_path_buf(),
        max_turns: None,
        max_budget_usd: None,
        retry: RetryPolicy {
            base_delay: Duration::from_millis(1),
            max_delay: Duration::from_millis(2),
            ..Default::default()
        },
        sandbox: None,
        shell_env: Default::default(),
        config_dir: cwd.join(".tandem-test-config"),
        claude_dir: None,
        guideline_sources: tandem_core::context::guidelines::Sources::ALL,
        notices: Vec::new(),
        session_log: None,
        unsaved_dir: None,
        resume: None,
        compaction: Default::default(),
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
