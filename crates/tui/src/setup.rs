//! Turning flags, config files and the environment into an [`AgentConfig`]. Shared by every front end.

use std::path::PathBuf;
use std::sync::Arc;

use tandem_core::agent::{AgentConfig, new_session_id};
use tandem_core::config::{self, Paths, ProviderFlags};
use tandem_core::models::{self, Prices};
use tandem_core::permissions::{PermissionMode, PermissionPolicy, Rule, split_rule_list};
use tandem_core::prompt::{self, PromptOptions};
use tandem_core::provider::ProviderKind;
use tandem_core::provider::retry::RetryPolicy;
use tandem_core::tools::ToolRegistry;

use crate::cli::Cli;

/// Providers that run on the user's machine: their tokens cost nothing (as does a model the price table doesn't
/// know served by an OpenAI-compatible server on a loopback address: LM Studio, a local vLLM). A known model
/// behind a local proxy keeps its price: the proxy may forward to a paid API.
const LOCAL_PROVIDERS: &[&str] = &["ollama", "llamacpp"];

/// A usage or configuration problem: exit code 2 with this one-line message.
#[derive(Debug)]
pub struct SetupError(pub String);

impl From<config::ConfigError> for SetupError {
    fn from(error: config::ConfigError) -> Self {
        SetupError(error.to_string())
    }
}

/// Whether the problem is only that no provider is configured (the app then shows its onboarding screen).
pub fn needs_onboarding(cli: &Cli) -> bool {
    let env = |name: &str| std::env::var(name).ok();
    let paths = Paths::discover(&env);
    let config_file = paths.config_file();
    let Ok(file) = config::load_config_file(&config_file) else { return false };
    let flags =
        ProviderFlags { provider: cli.provider.clone(), model: cli.model.clone(), base_url: cli.base_url.clone() };
    matches!(config::resolve_provider(&flags, &file, &config_file, &env), Err(config::ConfigError::NoProvider { .. }))
}

/// The config file's path, shown on the onboarding screen.
pub fn config_file_path() -> PathBuf {
    let env = |name: &str| std::env::var(name).ok();
    Paths::discover(&env).config_file()
}

/// Builds the session's configuration; nothing is sent anywhere yet.
pub fn build(cli: &Cli, cwd: PathBuf) -> Result<AgentConfig, SetupError> {
    let env = |name: &str| std::env::var(name).ok();
    let paths = Paths::discover(&env);
    let config_file = paths.config_file();
    let file = config::load_config_file(&config_file)?;
    let flags =
        ProviderFlags { provider: cli.provider.clone(), model: cli.model.clone(), base_url: cli.base_url.clone() };
    let resolved = config::resolve_provider(&flags, &file, &config_file, &env)?;

    let mut model = models::lookup(&resolved.model);
    let local_model = resolved.endpoint.kind == ProviderKind::Openai
        && model.prices.is_none()
        && is_loopback(&resolved.endpoint.base_url);
    if LOCAL_PROVIDERS.contains(&resolved.endpoint.name.as_str()) || local_model {
        model.prices = Some(Prices::LOCAL);
    }

    let mode = if cli.dangerously_skip_permissions {
        PermissionMode::BypassPermissions
    } else {
        match cli.permission_mode.as_deref() {
            None => PermissionMode::Default,
            Some(text) => PermissionMode::parse(text).ok_or_else(|| {
                let names: Vec<&str> = PermissionMode::ALL.iter().map(|mode| mode.as_str()).collect();
                SetupError(format!("invalid --permission-mode {text:?}: use one of {}", names.join(", ")))
            })?,
        }
    };
    let mut permissions = PermissionPolicy::new(mode);
    permissions.allow = parse_rules("--allowedTools", &cli.allowed_tools)?;
    permissions.deny = parse_rules("--disallowedTools", &cli.disallowed_tools)?;

    let mut tools = ToolRegistry::builtin();
    // A tool denied outright is removed, so the model doesn't even try it.
    let removed: Vec<String> =
        permissions.deny.iter().filter(|rule| rule.specifier.is_none()).map(|rule| rule.tool.clone()).collect();
    tools.retain(|name| !removed.iter().any(|tool| tool == name));

    if let Some(max) = cli.max_budget_usd
        && !(max > 0.0 && max.is_finite())
    {
        return Err(SetupError(format!("invalid --max-budget-usd {max}: it must be a positive number")));
    }
    if cli.max_turns == Some(0) {
        return Err(SetupError("invalid --max-turns 0: it must be at least 1".into()));
    }

    let prompt_options = PromptOptions { replace: cli.system_prompt.clone(), append: cli.append_system_prompt.clone() };
    let system = prompt::system_blocks(&prompt_options, &cwd, &prompt::today_utc());

    Ok(AgentConfig {
        session_id: new_session_id(),
        provider: Arc::from(tandem_core::provider::connect(resolved.endpoint)),
        model,
        system,
        tools,
        permissions,
        cwd,
        max_turns: cli.max_turns,
        max_budget_usd: cli.max_budget_usd,
        retry: RetryPolicy::from_env(),
    })
}

/// A server on this machine (LM Studio, a local vLLM…): its tokens cost nothing.
fn is_loopback(base_url: &str) -> bool {
    let rest = base_url.split_once("://").map_or(base_url, |(_, rest)| rest);
    let host = rest.split(['/', ':']).next().unwrap_or_default();
    host == "localhost" || host.starts_with("127.") || rest.starts_with("[::1]")
}

fn parse_rules(flag: &str, values: &[String]) -> Result<Vec<Rule>, SetupError> {
    values
        .iter()
        .flat_map(|value| split_rule_list(value))
        .map(|text| Rule::parse(&text).map_err(|problem| SetupError(format!("invalid {flag} rule: {problem}"))))
        .collect()
}
