//! Turning flags, config files and the environment into an [`AgentConfig`]. Shared by every front end.

use std::path::PathBuf;
use std::sync::Arc;

use tandem_core::agent::{AgentConfig, Resume};
use tandem_core::config::{self, Paths, ProviderFlags};
use tandem_core::context::compact::CompactionPolicy;
use tandem_core::hooks::{self, HookEngine};
use tandem_core::models::{self, Prices};
use tandem_core::permissions::{
    PermissionMode, PermissionPolicy, RuleKind, Scope, Workspace, settings, split_rule_list,
};
use tandem_core::prompt::{self, PromptOptions};
use tandem_core::provider::ProviderKind;
use tandem_core::provider::retry::RetryPolicy;
use tandem_core::session::{self, SessionMeta, SessionWriter};
use tandem_core::tools::ToolRegistry;
use tandem_core::tools::save_memory::SaveMemoryTool;
use tandem_core::tools::search_sessions::SearchSessionsTool;
use tandem_core::trust::Store;

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
        && tandem_core::provider::limits::is_local(&resolved.endpoint.base_url);
    if LOCAL_PROVIDERS.contains(&resolved.endpoint.name.as_str()) || local_model {
        model.prices = Some(Prices::LOCAL);
    }

    let home = tandem_core::fs_util::user_home();
    let home_dir = home.clone();
    let sources = match cli.setting_sources.as_deref() {
        Some(list) => settings::SettingSources::parse(list)
            .map_err(|why| SetupError(format!("invalid --setting-sources {list:?}: {why}")))?,
        None => settings::SettingSources::ALL,
    };
    let claude_settings_dir = hooks::claude_user_dir(&env, home.as_deref());
    let mut settings =
        settings::load_sources(&paths.config_dir, claude_settings_dir.as_deref(), &cwd, home.as_deref(), sources);
    settings.check_readable().map_err(SetupError)?;
    let flag_settings = flag_settings(cli)?;
    if let Some((label, document)) = &flag_settings {
        settings.apply_document(Scope::Flag, label, document, &cwd, home.as_deref());
    }
    let mut notices: Vec<String> = settings.problems.iter().map(|problem| format!("Settings: {problem}")).collect();
    notices.extend(settings.held.iter().map(|held| held_notice(held, cli.headless())));
    notices.extend(unapplied_flags(cli));

    let mode = if cli.dangerously_skip_permissions {
        PermissionMode::BypassPermissions
    } else {
        match cli.permission_mode.as_deref() {
            None => settings.default_mode.unwrap_or_default(),
            Some(text) => PermissionMode::parse(text).ok_or_else(|| {
                let names: Vec<&str> = PermissionMode::ALL.iter().map(|mode| mode.as_str()).collect();
                SetupError(format!("invalid --permission-mode {text:?}: use one of {}", names.join(", ")))
            })?,
        }
    };
    let mut extra_dirs: Vec<PathBuf> = cli.add_dir.iter().map(|dir| cwd.join(dir)).collect();
    for dir in &extra_dirs {
        if !dir.is_dir() {
            return Err(SetupError(format!("--add-dir {}: not a directory", dir.display())));
        }
    }
    extra_dirs.extend(settings.additional_directories.iter().cloned());
    let claude_json = crate::setup_mcp::claude_json(&env, home.as_deref());
    let workspace = Workspace::new(&cwd, &extra_dirs, home.clone(), Some(paths.config_dir.clone()))
        .with_claude_dir(claude_settings_dir.as_deref(), claude_json.as_deref());
    tandem_core::shell::keep_programs_outside(workspace.roots());
    let mut permissions = PermissionPolicy::new(mode, workspace, home.unwrap_or_else(|| PathBuf::from("/")));
    permissions.rules = settings.rules.clone();
    permissions.held = settings.held.clone();
    for (flag, kind, values) in [
        ("--allowedTools", RuleKind::Allow, &cli.allowed_tools),
        ("--disallowedTools", RuleKind::Deny, &cli.disallowed_tools),
    ] {
        for text in values.iter().flat_map(|value| split_rule_list(value)) {
            permissions
                .add_rule(kind, &text, Scope::Flag)
                .map_err(|problem| SetupError(format!("invalid {flag} rule: {problem}")))?;
        }
    }

    let mut tools = ToolRegistry::builtin();
    // A tool denied outright is removed, so the model doesn't even try it.
    let removed: Vec<String> = permissions
        .rules
        .iter()
        .filter(|rule| rule.kind == RuleKind::Deny && rule.rule.specifier.is_none())
        .map(|rule| rule.rule.tool.clone())
        .collect();
    tools.register(Arc::new(SaveMemoryTool::for_session(&paths.config_dir, &cwd)));
    tools.register(Arc::new(tandem_core::tools::todo_write::TodoWriteTool));
    tools.register(Arc::new(tandem_core::tools::bash_output::BashOutputTool));
    tools.register(Arc::new(tandem_core::tools::bash_output::KillShellTool));
    tools.register(Arc::new(tandem_core::tools::ask_user::AskUserQuestionTool));
    tools.register(Arc::new(tandem_core::tools::ask_user::ExitPlanModeTool));
    let denied = removed.clone();
    tools.retain(move |name| !denied.iter().any(|rule| rule_removes(rule, name)));
    // Tools registered after this filter are checked by the same rule.
    let offered = |name: &str| !removed.iter().any(|rule| rule_removes(rule, name));

    if let Some(max) = cli.max_budget_usd
        && !(max > 0.0 && max.is_finite())
    {
        return Err(SetupError(format!("invalid --max-budget-usd {max}: it must be a positive number")));
    }
    if cli.max_turns == Some(0) {
        return Err(SetupError("invalid --max-turns 0: it must be at least 1".into()));
    }

    let replace = match &cli.system_prompt_file {
        Some(file) => {
            if cli.system_prompt.as_deref().is_some_and(|text| !text.is_empty()) {
                return Err(SetupError("use --system-prompt or --system-prompt-file, not both".into()));
            }
            Some(std::fs::read_to_string(cwd.join(file)).map_err(|err| {
                SetupError(format!("--system-prompt-file {}: cannot be read ({err})", file.display()))
            })?)
        }
        None => cli.system_prompt.clone(),
    };
    let prompt_options = PromptOptions { replace, append: cli.append_system_prompt.clone() };
    let system = prompt::system_blocks(&prompt_options, &cwd, &prompt::today_utc());

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

    if let Some(fallback) = &cli.fallback_model
        && models::lookup(fallback).id == model.id
    {
        return Err(SetupError(format!("--fallback-model {fallback} is the main model; name another one")));
    }
    if cli.max_budget_usd.is_some() && model.prices.is_none() {
        return Err(SetupError(format!(
            "--max-budget-usd needs the model's prices, and {} has none in assets/models.toml: tandem could not tell when the budget is spent",
            model.id
        )));
    }
    let (session_log, resume) = open_session(cli, &paths, &cwd, &resolved.endpoint.name, &model.id, &mut notices)?;
    remove_old_sessions(&paths.data_dir, settings.cleanup_period_days, session_log.id());
    // Every project's transcripts are off limits to reads, except this session's own saved outputs.
    let own_outputs = session_log.path().with_extension("");
    permissions.workspace = permissions.workspace.clone().with_data_dir(&paths.data_dir, &[own_outputs]);
    tandem_core::sandbox::keep_denied_files_in(&paths.data_dir.join("denied-files"));
    let sandbox = crate::setup_sandbox::confinement(cli, &file, &settings, &mut permissions, &mut notices)?;
    if let Some(confinement) = &sandbox {
        tandem_core::sandbox::find_denied_files(confinement, &cwd);
    }
    let mut shell_env = file.shell_environment_policy.clone().unwrap_or_default();
    shell_env.secrets.extend(resolved.endpoint.api_key_env.iter().cloned());
    shell_env.secrets.extend(file.providers.values().filter_map(|entry| entry.api_key_env.clone()));
    if offered(tandem_core::tools::search_sessions::SEARCH_SESSIONS) {
        let current_session = Some(session_log.id().to_owned());
        tools.register(Arc::new(SearchSessionsTool { data_dir: paths.data_dir.clone(), current_session }));
    }

    let shell_env = Arc::new(shell_env);
    let claude_dir = hooks::claude_user_dir(&env, home_dir.as_deref());
    let commands = tandem_core::commands::load(&tandem_core::commands::directories(
        &settings.project_root,
        claude_dir.as_deref(),
        &paths.config_dir,
    ));
    notices.extend(commands.problems.iter().map(|problem| format!("Commands: {problem}")));
    let skills = Arc::new(tandem_core::skills::load(&tandem_core::skills::directories(
        &settings.project_root,
        claude_dir.as_deref(),
        &paths.config_dir,
    )));
    notices.extend(skills.problems.iter().map(|problem| format!("Skills: {problem}")));
    if !skills.skills.is_empty() && offered(tandem_core::tools::skill::SKILL_TOOL) {
        tools.register(Arc::new(tandem_core::tools::skill::SkillTool { catalog: skills.clone() }));
        // A skill's own files may be read wherever the skill lives (a user skill is outside the workspace).
        for skill in skills.skills.iter().filter(|skill| skill.scope == "user") {
            let rule = format!("Read(/{}/**)", skill.dir.display());
            if let Err(problem) = permissions.add_rule(RuleKind::Allow, &rule, Scope::Session) {
                notices.push(format!("Skills: {}: {problem}", skill.dir.display()));
            }
        }
    }
    let agents = Arc::new(tandem_core::agents::load(
        &tandem_core::agents::directories(&settings.project_root, claude_dir.as_deref(), &paths.config_dir),
        cli.agents.as_deref(),
    ));
    notices.extend(agents.problems.iter().map(|problem| format!("Agents: {problem}")));
    for agent in agents.agents.iter().filter(|agent| agent.scope != "built-in") {
        let unknown: Vec<&str> =
            agent.tools.iter().flatten().map(String::as_str).filter(|name| tools.get(name).is_none()).collect();
        if !unknown.is_empty() {
            notices.push(format!(
                "Agents: {} lists tools tandem does not have here ({}); it gets the others",
                agent.name,
                unknown.join(", ")
            ));
        }
    }
    if offered(tandem_core::tools::task::TASK_TOOL) {
        tools.register(Arc::new(tandem_core::tools::task::TaskTool { catalog: agents.clone() }));
    }
    let provider: Arc<dyn tandem_core::provider::Provider> =
        Arc::from(tandem_core::provider::connect(resolved.endpoint.clone()));
    let web = crate::setup_web::WebInputs {
        file: &file,
        endpoint: &resolved.endpoint,
        provider: &provider,
        model: &model,
        env: &env,
    };
    for tool in crate::setup_web::tools(&web, &mut notices)? {
        if offered(tool.name()) {
            tools.register(tool);
        }
    }
    let hook_files: Vec<(PathBuf, bool)> =
        hooks::settings_files(&paths.config_dir, claude_dir.as_deref(), &settings.project_root)
            .into_iter()
            .filter(|(file, project)| sources.includes(file, *project))
            .collect();
    let mut hook_set = hooks::load_files(hook_files);
    if let Some((label, document)) = &flag_settings {
        hook_set.read_document(label, document, false);
    }
    let hooks = hook_engine(cli, hook_set, &paths.config_dir, &settings.project_root, &shell_env, &mut notices);
    if let Some(list) = &cli.tools {
        restrict_tools(&mut tools, list, &mut notices);
    }
    let mcp = crate::setup_mcp::start(
        crate::setup_mcp::McpInputs {
            cli,
            project_root: &settings.project_root,
            config_dir: &paths.config_dir,
            cwd: &cwd,
            home: home_dir.as_deref(),
            choices: &settings.mcp_choices,
            shell_env: shell_env.clone(),
            context_window: model.context_window,
        },
        &mut notices,
    );
    if let Some(manager) = &mcp {
        tools.add_source(manager.clone());
    }
    let mut system = system;
    let structured_output = match cli.json_schema.as_deref() {
        Some(text) => {
            let schema: serde_json::Value = serde_json::from_str(text)
                .map_err(|err| SetupError(format!("--json-schema: not valid JSON ({err})")))?;
            let tool = tandem_core::tools::structured_output::StructuredOutputTool::new(schema)
                .map_err(|why| SetupError(format!("--json-schema: {why}")))?;
            let accepted = tool.accepted();
            tools.register(Arc::new(tool));
            system.push(tandem_core::provider::SystemBlock { text: STRUCTURED_OUTPUT_PROMPT.to_owned(), cache: false });
            Some(accepted)
        }
        None => None,
    };

    Ok(AgentConfig {
        session_id: session_log.id().to_owned(),
        provider,
        model,
        system,
        tools,
        permissions,
        cwd,
        max_turns: cli.max_turns,
        max_budget_usd: cli.max_budget_usd,
        retry: RetryPolicy::from_env(),
        sandbox,
        shell_env,
        config_dir: paths.config_dir.clone(),
        claude_dir: claude_dir.clone(),
        notices,
        session_log: Some(session_log),
        resume,
        compaction,
        hooks,
        commands: Arc::new(commands),
        skills,
        agents,
        raw_stream: false,
        reasoning: reasoning(cli, &file)?,
        structured_output,
        fallback_model: cli.fallback_model.clone(),
        mcp,
        betas: cli
            .betas
            .iter()
            .flat_map(|list| list.split(','))
            .map(|beta| beta.trim().to_owned())
            .filter(|beta| !beta.is_empty())
            .collect(),
    })
}

/// Says what a tracked personal settings file would widen, and how to apply it.
fn held_notice(held: &settings::HeldSettings, headless: bool) -> String {
    let how = if headless { "start tandem here and type /permissions trust" } else { "/permissions trust applies it" };
    format!(
        "Settings: {} is tracked by git, so it may have been committed by someone else; what it widens is off until \
         you trust it ({how}): {}",
        held.file.display(),
        held.describe()
    )
}

/// The session's hooks. Those from the project's own files run in the TUI only once the user trusted them
/// (`/hooks trust`, remembered while they stay the same); headless runs trust the project, as `claude -p` does.
/// Which hooks are active is said at the start, and so is every entry that could not be used.
fn hook_engine(
    cli: &Cli,
    set: hooks::HookSet,
    config_dir: &std::path::Path,
    project_root: &std::path::Path,
    shell_env: &Arc<tandem_core::shell_env::ShellEnvPolicy>,
    notices: &mut Vec<String>,
) -> Arc<HookEngine> {
    notices.extend(set.problems.iter().map(|problem| format!("Hooks: {problem}")));
    let trusted = cli.headless()
        || tandem_core::trust::is_trusted(config_dir, Store::Hooks, project_root, &set.project_fingerprint());
    let engine = HookEngine::new(set, project_root.to_path_buf(), shell_env.clone(), trusted);
    let active: Vec<String> = engine.active().map(|entry| entry.describe()).collect();
    if !active.is_empty() {
        notices.push(format!("Hooks active: {}", active.join("; ")));
    }
    if let Some((file, by_project)) = &engine.set().disabled_by
        && (trusted || !by_project)
    {
        notices.push(format!("Hooks: all hooks are off (disableAllHooks in {}).", file.display()));
    } else if engine.set().has_project_hooks() && !trusted {
        let count = engine.set().entries.iter().filter(|entry| entry.source.project).count();
        notices.push(format!(
            "This project's settings define {count} hook{} that run commands on your machine; they are off until you trust them: /hooks lists them, /hooks trust turns them on.",
            if count == 1 { "" } else { "s" }
        ));
    }
    Arc::new(engine)
}

/// `--settings`' document, with the name its problems are reported under.
type FlagSettings = (PathBuf, serde_json::Map<String, serde_json::Value>);

/// `--settings`: a JSON object, or the path of a settings file; with the name its problems are reported under.
fn flag_settings(cli: &Cli) -> Result<Option<FlagSettings>, SetupError> {
    let Some(value) = cli.settings.as_deref().map(str::trim).filter(|value| !value.is_empty()) else {
        return Ok(None);
    };
    let (label, text) = if value.starts_with('{') {
        (PathBuf::from("--settings"), value.to_owned())
    } else {
        let path = PathBuf::from(value);
        let text = settings::read_settings_text(&path)
            .map_err(|err| SetupError(format!("--settings {value}: cannot be read ({err})")))?;
        (path, text)
    };
    match serde_json::from_str(&text) {
        Ok(serde_json::Value::Object(document)) => Ok(Some((label, document))),
        Ok(_) => Err(SetupError(format!("--settings {}: not a JSON object", label.display()))),
        Err(err) => Err(SetupError(format!("--settings {}: not valid JSON ({err})", label.display()))),
    }
}

/// Told to the model when its answer must match `--json-schema`.
const STRUCTURED_OUTPUT_PROMPT: &str = "The user needs your final answer as structured data: when you have it, \
call the StructuredOutput tool with JSON matching its input schema. That call is your final answer.";

/// Thinking and effort: the flags, else config.toml. A value that isn't one is an error, not a silent default.
fn reasoning(cli: &Cli, file: &config::ConfigFile) -> Result<tandem_core::reasoning::Reasoning, SetupError> {
    use tandem_core::reasoning::{Effort, Reasoning, ThinkingMode};
    let thinking = match cli.thinking.as_deref().or(file.thinking.as_deref()) {
        None => None,
        Some(text) => Some(
            ThinkingMode::parse(text)
                .ok_or_else(|| SetupError(format!("invalid thinking {text:?}: use adaptive, enabled or disabled")))?,
        ),
    };
    let effort = match cli.effort.as_deref().or(file.effort.as_deref()) {
        None => None,
        Some(text) => Some(
            Effort::parse(text)
                .ok_or_else(|| SetupError(format!("invalid effort {text:?}: use low, medium, high, xhigh or max")))?,
        ),
    };
    let display = match cli.thinking_display.as_deref().or(file.thinking_display.as_deref()) {
        None => None,
        Some(text @ ("summarized" | "omitted")) => Some(text.to_owned()),
        Some(text) => {
            return Err(SetupError(format!("invalid thinking display {text:?}: use summarized or omitted")));
        }
    };
    let budget_tokens = cli.max_thinking_tokens.or(file.max_thinking_tokens);
    Ok(Reasoning { thinking, budget_tokens, effort, display })
}

/// `--tools`: only these built-in tools (`default` for all, `""` for none). A name tandem lacks is reported.
fn restrict_tools(tools: &mut ToolRegistry, list: &str, notices: &mut Vec<String>) {
    let list = list.trim();
    if list == "default" {
        return;
    }
    let wanted: Vec<String> = split_rule_list(list);
    for name in &wanted {
        if tools.get(name).is_none() {
            notices.push(format!("--tools: tandem has no tool {name:?}; it is left out"));
        }
    }
    // The Task tool answers to Claude Code's newer name too.
    use tandem_core::tools::task::{AGENT_ALIAS, TASK_TOOL};
    // MCP tools are not built-in ones: `--tools` leaves them alone (as in Claude Code).
    tools.retain(move |name| {
        name.starts_with(tandem_core::mcp::tool::PREFIX)
            || name == tandem_core::mcp::search::TOOL_SEARCH
            || wanted.iter().any(|wanted| wanted == name || (wanted == AGENT_ALIAS && name == TASK_TOOL))
    });
}

/// Whether a deny rule without a specifier takes the tool `name` out of the offer: the tool itself, or for
/// `mcp__server` and `mcp__server__*` every tool of that server (a name that only looks like it is taken out too,
/// which is the safe side).
fn rule_removes(rule: &str, name: &str) -> bool {
    use tandem_core::tools::task::{AGENT_ALIAS, TASK_TOOL};
    // Claude Code's newer name for the Task tool takes it out too.
    if rule == name || (rule == AGENT_ALIAS && name == TASK_TOOL) {
        return true;
    }
    if !rule.starts_with(tandem_core::mcp::tool::PREFIX) {
        return false;
    }
    let server = rule.strip_suffix("__*").unwrap_or(rule);
    name.strip_prefix(server).is_some_and(|rest| rest.starts_with("__"))
}

/// Flags tandem accepts (the Agent SDK passes them) but does not apply yet: each is said, never silently dropped.
fn unapplied_flags(cli: &Cli) -> Vec<String> {
    let mut notices = Vec::new();
    let mut not_yet = |flag: &str, what: &str| notices.push(format!("{flag} is accepted but not applied yet: {what}"));
    if cli.permission_prompt_tool.is_some() && !cli.streaming_input() {
        not_yet("--permission-prompt-tool", "it needs --input-format stream-json (an SDK host to ask)");
    }
    notices
}

/// The session log: a new one, or the one `--continue`/`--resume` names (copied first with `--fork-session`),
/// with the conversation to continue from.
fn open_session(
    cli: &Cli,
    paths: &Paths,
    cwd: &std::path::Path,
    provider: &str,
    model: &str,
    notices: &mut Vec<String>,
) -> Result<(SessionWriter, Option<Resume>), SetupError> {
    let summary = match (&cli.resume, cli.continue_session) {
        (Some(id), _) if !id.is_empty() => {
            Some(session::find(&paths.data_dir, id).map_err(|err| SetupError(err.to_string()))?)
        }
        (Some(_), _) => {
            return Err(SetupError(
                "--resume needs a session id here: see `tandem sessions` (the app can pick one)".into(),
            ));
        }
        (None, true) => Some(session::latest_for_cwd(&paths.data_dir, cwd).ok_or_else(|| {
            SetupError(format!(
                "no saved session to continue in {}: start one with `tandem`{}",
                cwd.display(),
                unreadable_sessions_note(&paths.data_dir)
            ))
        })?),
        (None, false) => None,
    };
    let Some(summary) = summary else {
        if cli.fork_session {
            return Err(SetupError("--fork-session needs --continue or --resume".into()));
        }
        let mut meta = SessionMeta::new(cwd, provider, model);
        if let Some(id) = &cli.session_id {
            if !is_uuid(id) {
                return Err(SetupError(format!("invalid --session-id {id:?}: it must be a UUID")));
            }
            meta.id = id.to_ascii_lowercase();
        }
        let writer = SessionWriter::create(&paths.data_dir, meta).map_err(|err| match err.kind() {
            std::io::ErrorKind::AlreadyExists => {
                SetupError("--session-id: a session with this id exists already (resume it with --resume)".into())
            }
            _ => SetupError(format!("cannot create the session log in {}: {err}", paths.data_dir.display())),
        })?;
        return Ok((writer, None));
    };
    let loaded = session::load(&summary.path).map_err(|err| SetupError(err.to_string()))?;
    notices.extend(loaded.damage_note());
    if cli.session_id.is_some() && !cli.fork_session {
        return Err(SetupError(
            "--session-id with --resume or --continue needs --fork-session (the copy gets the id)".into(),
        ));
    }
    let fork_id = cli.session_id.clone().map(|id| id.to_ascii_lowercase()).unwrap_or_else(session::new_session_id);
    let path = if cli.fork_session {
        session::fork(&paths.data_dir, &summary.path, &fork_id)
            .map_err(|err| SetupError(format!("cannot fork {}: {err}", summary.path.display())))?
    } else {
        summary.path.clone()
    };
    let writer = SessionWriter::reopen(&path).map_err(|err| SetupError(err.to_string()))?;
    let resume = Resume::from(loaded);
    Ok((writer, Some(resume)))
}

/// Deletes sessions older than `cleanupPeriodDays` (30 by default), never `in_use`: a stat per session, done at
/// every start (as Claude Code does), so that disk use has a bound.
fn remove_old_sessions(data_dir: &std::path::Path, days: Option<u64>, in_use: &str) {
    let days = days.unwrap_or(session::cleanup::DEFAULT_PERIOD_DAYS);
    let cleaned = session::cleanup::remove_old(data_dir, days, in_use);
    if cleaned.sessions > 0 {
        tracing::info!(sessions = cleaned.sessions, bytes = cleaned.bytes, days, "removed old sessions");
    }
}

/// For "no saved session": the session files that could not be read at all (a damaged first line), which may be
/// the one the user meant.
fn unreadable_sessions_note(data_dir: &std::path::Path) -> String {
    let unreadable = session::unreadable(data_dir);
    match unreadable.as_slice() {
        [] => String::new(),
        [(_, why)] => format!(" (one session file could not be read: {why})"),
        [(_, why), ..] => {
            format!(" ({} session files could not be read, e.g. {why}; `tandem sessions` lists them)", unreadable.len())
        }
    }
}

/// `8-4-4-4-12` hex digits.
fn is_uuid(text: &str) -> bool {
    let groups: Vec<&str> = text.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(group, len)| group.len() == len && group.chars().all(|ch| ch.is_ascii_hexdigit()))
}

#[cfg(test)]
mod tests {
    use super::rule_removes;

    #[test]
    fn deny_rules_take_a_tool_or_a_whole_server_out_of_the_offer() {
        assert!(rule_removes("Bash", "Bash"));
        assert!(!rule_removes("Bash", "BashOutput"));
        assert!(rule_removes("Agent", "Task"), "--disallowedTools Agent takes the Task tool out");
        assert!(rule_removes("mcp__github", "mcp__github__create_issue"));
        assert!(rule_removes("mcp__github__*", "mcp__github__create_issue"));
        assert!(rule_removes("mcp__github__create_issue", "mcp__github__create_issue"));
        assert!(!rule_removes("mcp__github__create_issue", "mcp__github__list_issues"));
        assert!(!rule_removes("mcp__git", "mcp__github__create_issue"), "a server name is not a prefix");
    }
}
