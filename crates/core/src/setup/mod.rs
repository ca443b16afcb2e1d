//! The composition root: turning what a front end asks for ([`SessionOptions`]), the config and settings files and
//! the environment into an [`AgentConfig`]. Every front end (the app, `-p`, the SDK protocol) builds its session
//! here, so none of them knows how tools, settings, MCP servers, hooks and the sandbox are put together.

mod hooks;
mod mcp;
mod options;
mod permissions;
mod sandbox;
mod session_log;
mod tools;
mod web;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::agent::AgentConfig;
use crate::config::{self, ConfigFile, Paths, ResolvedProvider};
use crate::context::compact::CompactionPolicy;
use crate::models::{self, ModelInfo, Prices};
use crate::permissions::settings;
use crate::prompt::{self, PromptOptions};
use crate::provider::ProviderKind;
use crate::provider::retry::RetryPolicy;

pub use mcp::claude_json;
pub use options::{FrontEnd, SessionChoice, SessionOptions};

/// Providers that run on the user's machine: their tokens cost nothing (as does a model the price table doesn't
/// know served by an OpenAI-compatible server on a loopback address: LM Studio, a local vLLM). A known model
/// behind a local proxy keeps its price: the proxy may forward to a paid API.
const LOCAL_PROVIDERS: &[&str] = &["ollama", "llamacpp"];

/// A usage or configuration problem, in one line that names the flag, setting or file: front ends exit with
/// code 2 and this message.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct SetupError(pub String);

impl From<config::ConfigError> for SetupError {
    fn from(error: config::ConfigError) -> Self {
        SetupError(error.to_string())
    }
}

fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// Whether the problem is only that no provider is configured (the app then shows its onboarding screen).
pub fn needs_onboarding(options: &SessionOptions) -> bool {
    let paths = Paths::discover(&process_env);
    let config_file = paths.config_file();
    let Ok(file) = config::load_config_file(&config_file) else { return false };
    matches!(
        config::resolve_provider(&options.provider, &file, &config_file, &process_env),
        Err(config::ConfigError::NoProvider { .. })
    )
}

/// The config file's path, shown on the onboarding screen.
pub fn config_file_path() -> PathBuf {
    Paths::discover(&process_env).config_file()
}

/// Builds the session's configuration; nothing is sent anywhere yet.
pub fn build(options: &SessionOptions, cwd: PathBuf) -> Result<AgentConfig, SetupError> {
    check_limits(options)?;
    let paths = Paths::discover(&process_env);
    let config_file = paths.config_file();
    let file = config::load_config_file(&config_file)?;
    let resolved = config::resolve_provider(&options.provider, &file, &config_file, &process_env)?;
    let model = session_model(&resolved, options)?;
    let home = crate::fs_util::user_home();
    let claude_dir = crate::hooks::claude_user_dir(&process_env, home.as_deref());
    let sources = setting_sources(options)?;
    let places = Places { paths: &paths, cwd: &cwd, home: home.as_deref(), claude_dir: claude_dir.as_deref(), sources };
    let (settings, flag_settings) = load_settings(options, &places)?;
    let mut notices: Vec<String> = settings.problems.iter().map(|problem| format!("Settings: {problem}")).collect();
    notices.extend(permissions::held_notices(&settings, options.front_end));
    notices.extend(unapplied_options(options));
    let mut permissions = permissions::policy(options, &settings, &places)?;
    let mut tools = tools::Offer::new(&permissions, &places);
    let session_log::OpenedLog { writer: session_log, resume, unsaved: unsaved_dir } =
        session_log::open(&options.session, &places, &resolved, &model, &mut notices)?;
    session_log::remove_old(&paths.data_dir, settings.cleanup_period_days, session_log.id());
    // Every project's transcripts are off limits to reads, except this session's own saved outputs.
    let own_outputs = session_log.path().with_extension("");
    permissions.workspace = permissions.workspace.clone().with_data_dir(&paths.data_dir, &[own_outputs]);
    crate::sandbox::keep_denied_files_in(&paths.data_dir.join("denied-files"));
    let sandbox = sandbox::confinement(options, &file, &settings, &mut permissions, &mut notices)?;
    if let Some(confinement) = &sandbox {
        crate::sandbox::find_denied_files(confinement, &cwd);
    }
    let shell_env = Arc::new(shell_environment(&file, &resolved));
    tools.search_sessions(&paths.data_dir, session_log.id());

    let catalogs = tools.catalogs(options, &settings, &places, &mut permissions, &mut notices);
    let main_agent = main_agent(options, &catalogs.agents)?;
    let model = agent_model(options, main_agent, &resolved)?.unwrap_or(model);
    let provider: Arc<dyn crate::provider::Provider> = Arc::from(crate::provider::connect(resolved.endpoint.clone()));
    let web = web::WebInputs {
        file: &file,
        endpoint: &resolved.endpoint,
        provider: &provider,
        model: &model,
        env: &process_env,
    };
    tools.offer_all(web::tools(&web, &mut notices)?);
    tools.offer_task(&catalogs.agents, &mut notices);
    let hooks = hooks::engine(options, &settings, sources, flag_settings.as_ref(), &places, &shell_env, &mut notices);
    let agent_tools = main_agent.and_then(|agent| agent.tools.as_ref()).map(|list| list.join(","));
    for list in [options.tools.as_ref(), agent_tools.as_ref()].into_iter().flatten() {
        tools.restrict(list, &mut notices);
    }
    let mcp = mcp::start(
        mcp::McpInputs {
            options,
            project_root: &settings.project_root,
            config_dir: &paths.config_dir,
            cwd: &cwd,
            home: home.as_deref(),
            choices: &settings.mcp_choices,
            shell_env: shell_env.clone(),
            context_window: model.context_window,
        },
        &mut notices,
    );
    let mut system = system_prompt(options, main_agent.map(|agent| agent.prompt.as_str()), &cwd)?;
    let structured_output = tools.structured_output(options, &mut system)?;
    let mut tools = tools.into_registry();
    if let Some(manager) = &mcp {
        tools.add_source(manager.clone());
    }

    Ok(AgentConfig {
        session_id: session_log.id().to_owned(),
        provider,
        system,
        tools,
        permissions,
        cwd,
        max_turns: options.max_turns,
        max_budget_usd: options.max_budget_usd,
        retry: RetryPolicy::from_env(),
        sandbox,
        shell_env,
        config_dir: paths.config_dir.clone(),
        claude_dir,
        guideline_sources: guideline_sources(sources),
        notices,
        session_log: Some(session_log),
        unsaved_dir,
        resume,
        compaction: compaction(&file)?,
        hooks,
        commands: catalogs.commands,
        skills: catalogs.skills,
        agents: catalogs.agents,
        raw_stream: false,
        reasoning: reasoning(options, &file)?,
        structured_output,
        fallback_model: options.fallback_model.clone(),
        mcp,
        betas: betas(options),
        model,
    })
}

/// Where the session's files are: the parts of the setup that load or guard files all need the same few places.
struct Places<'a> {
    paths: &'a Paths,
    cwd: &'a Path,
    home: Option<&'a Path>,
    /// Claude Code's user directory (`~/.claude`, `$CLAUDE_CONFIG_DIR`).
    claude_dir: Option<&'a Path>,
    /// Which of them the session reads (`--setting-sources`).
    sources: settings::SettingSources,
}

/// The settings files the options' sources name, then `--settings` over them; a file that exists but cannot be
/// read stops the setup (its deny rules would be lost).
fn load_settings(
    options: &SessionOptions,
    places: &Places<'_>,
) -> Result<(settings::Settings, Option<permissions::FlagSettings>), SetupError> {
    let (config_dir, cwd, home) = (&places.paths.config_dir, places.cwd, places.home);
    let mut settings = settings::load_sources(config_dir, places.claude_dir, cwd, home, places.sources);
    settings.check_readable().map_err(SetupError)?;
    let flag_settings = permissions::flag_settings(options)?;
    if let Some((label, document)) = &flag_settings {
        settings.apply_document(settings::Scope::Flag, label, document, cwd, home);
    }
    Ok((settings, flag_settings))
}

/// `--setting-sources`: which of the user's and the project's files the session reads (all by default).
/// The guideline files the setting sources read (Claude Code's `settingSources` decide both).
fn guideline_sources(sources: settings::SettingSources) -> crate::context::guidelines::Sources {
    crate::context::guidelines::Sources { user: sources.user, project: sources.project, local: sources.local }
}

fn setting_sources(options: &SessionOptions) -> Result<settings::SettingSources, SetupError> {
    match options.setting_sources.as_deref() {
        Some(list) => settings::SettingSources::parse(list)
            .map_err(|why| SetupError(format!("invalid --setting-sources {list:?}: {why}"))),
        None => Ok(settings::SettingSources::ALL),
    }
}

/// `--betas`: each value a comma list.
fn betas(options: &SessionOptions) -> Vec<String> {
    let names = options.betas.iter().flat_map(|list| list.split(','));
    names.map(str::trim).filter(|beta| !beta.is_empty()).map(str::to_owned).collect()
}

/// The limits a run was given, when they cannot mean anything.
fn check_limits(options: &SessionOptions) -> Result<(), SetupError> {
    if let Some(max) = options.max_budget_usd
        && !(max > 0.0 && max.is_finite())
    {
        return Err(SetupError(format!("invalid --max-budget-usd {max}: it must be a positive number")));
    }
    if options.max_turns == Some(0) {
        return Err(SetupError("invalid --max-turns 0: it must be at least 1".into()));
    }
    Ok(())
}

/// The session's model with its prices (none for a local server's), checked against the fallback model and the
/// budget that need them.
fn session_model(resolved: &ResolvedProvider, options: &SessionOptions) -> Result<ModelInfo, SetupError> {
    let mut model = models::lookup(&resolved.model);
    let local_model = resolved.endpoint.kind == ProviderKind::Openai
        && model.prices.is_none()
        && crate::provider::limits::is_local(&resolved.endpoint.base_url);
    if LOCAL_PROVIDERS.contains(&resolved.endpoint.name.as_str()) || local_model {
        model.prices = Some(Prices::LOCAL);
    }
    if let Some(fallback) = &options.fallback_model
        && models::lookup(fallback).id == model.id
    {
        return Err(SetupError(format!("--fallback-model {fallback} is the main model; name another one")));
    }
    if options.max_budget_usd.is_some() && model.prices.is_none() {
        return Err(SetupError(format!(
            "--max-budget-usd needs the model's prices, and {} has none in assets/models.toml: tandem could not tell when the budget is spent",
            model.id
        )));
    }
    Ok(model)
}

/// The environment of the commands the session starts: the policy of config.toml, with every provider's key
/// variable taken out.
fn shell_environment(file: &ConfigFile, resolved: &ResolvedProvider) -> crate::shell_env::ShellEnvPolicy {
    let mut shell_env = file.shell_environment_policy.clone().unwrap_or_default();
    shell_env.secrets.extend(resolved.endpoint.api_key_env.iter().cloned());
    shell_env.secrets.extend(file.providers.values().filter_map(|entry| entry.api_key_env.clone()));
    shell_env
}

/// The agent `--agent` makes the main conversation, if any: one of the session's agents.
fn main_agent<'a>(
    options: &SessionOptions,
    agents: &'a crate::agents::AgentCatalog,
) -> Result<Option<&'a crate::agents::AgentDefinition>, SetupError> {
    let Some(name) = options.agent.as_deref() else { return Ok(None) };
    match agents.find(name) {
        Some(agent) => Ok(Some(agent)),
        None => {
            let known: Vec<&str> = agents.agents.iter().map(|agent| agent.name.as_str()).collect();
            Err(SetupError(format!("--agent {name}: there is no such agent (there are: {})", known.join(", "))))
        }
    }
}

/// The main agent's model, when it names one and `--model` doesn't.
fn agent_model(
    options: &SessionOptions,
    agent: Option<&crate::agents::AgentDefinition>,
    resolved: &ResolvedProvider,
) -> Result<Option<ModelInfo>, SetupError> {
    let named = agent.and_then(|agent| agent.model.as_deref()).filter(|model| *model != "inherit");
    match named {
        Some(model) if options.provider.model.is_none() => {
            session_model(&ResolvedProvider { model: model.to_owned(), ..resolved.clone() }, options).map(Some)
        }
        _ => Ok(None),
    }
}

/// The system prompt: tandem's own, replaced (a text or a file's, else the main agent's prompt) or appended to
/// as asked.
fn system_prompt(
    options: &SessionOptions,
    agent_prompt: Option<&str>,
    cwd: &Path,
) -> Result<Vec<crate::provider::SystemBlock>, SetupError> {
    let replace = match &options.system_prompt_file {
        Some(file) => {
            if options.system_prompt.as_deref().is_some_and(|text| !text.is_empty()) {
                return Err(SetupError("use --system-prompt or --system-prompt-file, not both".into()));
            }
            Some(std::fs::read_to_string(cwd.join(file)).map_err(|err| {
                SetupError(format!("--system-prompt-file {}: cannot be read ({err})", file.display()))
            })?)
        }
        // An empty one (what an SDK sends when the program sets none) gives way to the main agent's.
        None => match (options.system_prompt.clone(), agent_prompt) {
            (Some(text), Some(agent)) if text.is_empty() => Some(agent.to_owned()),
            (None, Some(agent)) => Some(agent.to_owned()),
            (text, _) => text,
        },
    };
    let prompt_options = PromptOptions { replace, append: options.append_system_prompt.clone() };
    Ok(prompt::system_blocks(&prompt_options, cwd, &prompt::today_utc()))
}

/// When to compact: config.toml's threshold and reserve, checked.
fn compaction(file: &ConfigFile) -> Result<CompactionPolicy, SetupError> {
    let mut compaction = CompactionPolicy::default();
    if let Some(threshold) = file.compact_threshold {
        if !(0.1..=1.0).contains(&threshold) {
            return Err(SetupError(format!(
                "compact_threshold = {threshold} in config.toml: use a share between 0.1 and 1.0"
            )));
        }
        compaction.threshold = threshold;
    }
    if let Some(reserve) = file.compact_reserve_tokens {
        compaction.reserve_tokens = reserve;
    }
    Ok(compaction)
}

/// Thinking and effort: the options, else config.toml. A value that isn't one is an error, not a silent default.
fn reasoning(options: &SessionOptions, file: &ConfigFile) -> Result<crate::reasoning::Reasoning, SetupError> {
    use crate::reasoning::{Effort, Reasoning, ThinkingMode};
    let thinking = match options.thinking.as_deref().or(file.thinking.as_deref()) {
        None => None,
        Some(text) => Some(
            ThinkingMode::parse(text)
                .ok_or_else(|| SetupError(format!("invalid thinking {text:?}: use adaptive, enabled or disabled")))?,
        ),
    };
    let effort = match options.effort.as_deref().or(file.effort.as_deref()) {
        None => None,
        Some(text) => Some(
            Effort::parse(text)
                .ok_or_else(|| SetupError(format!("invalid effort {text:?}: use low, medium, high, xhigh or max")))?,
        ),
    };
    let display = match options.thinking_display.as_deref().or(file.thinking_display.as_deref()) {
        None => None,
        Some(text @ ("summarized" | "omitted")) => Some(text.to_owned()),
        Some(text) => {
            return Err(SetupError(format!("invalid thinking display {text:?}: use summarized or omitted")));
        }
    };
    let budget_tokens = options.max_thinking_tokens.or(file.max_thinking_tokens);
    Ok(Reasoning { thinking, budget_tokens, effort, display })
}

/// Options tandem accepts (the Agent SDK passes them) but cannot apply in this front end: each is said, never
/// silently dropped.
fn unapplied_options(options: &SessionOptions) -> Vec<String> {
    let mut notices = Vec::new();
    if options.permission_prompt_tool.is_some() && options.front_end != FrontEnd::Sdk {
        notices.push(
            "--permission-prompt-tool is accepted but not applied yet: it needs --input-format stream-json (an SDK \
             host to ask)"
                .to_owned(),
        );
    }
    notices
}
