//! Which provider and model to use, and where tandem keeps its files.
//!
//! Precedence: command-line flags > `config.toml` in the user config directory > environment variables >
//! built-in defaults. With nothing configured, [`ConfigError::NoProvider`] says exactly how to configure one.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::provider::{ApiKey, Endpoint, ProviderKind};

/// Overrides the user config directory (tests, portable setups).
pub const CONFIG_DIR_ENV: &str = "TANDEM_CONFIG_DIR";

/// The directory, in the project root, holding tandem's project and local settings.
pub const TANDEM_DIR: &str = ".tandem";
/// The directory, in the project root, holding Claude Code's settings.
pub const CLAUDE_DIR: &str = ".claude";
/// The name of the shared (committed) settings file, in the user config directory and in the project.
pub const SETTINGS_FILE: &str = "settings.json";
/// The name of the personal (git-ignored) settings file in the project.
pub const LOCAL_SETTINGS_FILE: &str = "settings.local.json";

/// Largest settings file read.
const MAX_SETTINGS_BYTES: u64 = 4 * 1024 * 1024;

/// A settings file's text: only a regular file (a link to `/dev/zero` would be read forever) of sane size.
pub fn read_settings_text(file: &Path) -> std::io::Result<String> {
    let meta = std::fs::metadata(file)?;
    if !meta.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    if meta.len() > MAX_SETTINGS_BYTES {
        return Err(std::io::Error::other(format!("larger than {} MB", MAX_SETTINGS_BYTES / (1024 * 1024))));
    }
    std::fs::read_to_string(file)
}

/// Configuration problems; each message says what to do.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ConfigError {
    #[error(
        "no model provider configured: set ANTHROPIC_API_KEY (Anthropic), OPENAI_API_KEY (OpenAI) or OPENROUTER_API_KEY (OpenRouter), or use a local server with --provider ollama|llamacpp (or --provider openai --base-url http://127.0.0.1:1234/v1 for LM Studio), or set `provider` in {config_file}"
    )]
    NoProvider { config_file: String },
    #[error("unknown provider {name:?}: use one of {known}, or declare it under [providers.{name}] in {config_file}")]
    UnknownProvider { name: String, known: String, config_file: String },
    #[error("provider {provider:?} needs an API key: set {env_var}")]
    MissingKey { provider: String, env_var: String },
    #[error(
        "provider {provider:?} needs a model: pass --model NAME or set `model` under [providers.{provider}] in {config_file}"
    )]
    MissingModel { provider: String, config_file: String },
    #[error("{path}: {message}")]
    BadConfigFile { path: String, message: String },
}

/// `config.toml` as the user writes it.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    /// The provider used when no flag says otherwise.
    pub provider: Option<String>,
    /// The model used with that provider when no flag says otherwise.
    pub model: Option<String>,
    /// Extra providers, or overrides of the built-in ones, by name.
    #[serde(default)]
    pub providers: BTreeMap<String, ProviderEntry>,
    /// Sandbox for Bash commands: "off", "read-only" or "workspace-write" (`--sandbox` wins).
    pub sandbox: Option<String>,
    /// Whether sandboxed commands may use the network (default true).
    pub sandbox_network: Option<bool>,
    /// Run unsandboxed, with a notice, when a sandbox is asked for but the kernel can't provide it.
    pub allow_unsandboxed: Option<bool>,
    /// Compact automatically when the next request would pass this share of the context window (default 0.92).
    pub compact_threshold: Option<f64>,
    /// Tokens kept free for the summary when compacting (default 13000).
    pub compact_reserve_tokens: Option<u64>,
    /// What the processes tandem starts inherit of its environment (secrets are always removed).
    pub shell_environment_policy: Option<crate::shell_env::ShellEnvPolicy>,
    /// Extended thinking: "adaptive", "enabled" or "disabled" (`--thinking` wins).
    pub thinking: Option<String>,
    /// The thinking budget in tokens (`--max-thinking-tokens` wins).
    pub max_thinking_tokens: Option<u32>,
    /// "low", "medium", "high", "xhigh" or "max" (`--effort` wins; `/effort` changes it for the session).
    pub effort: Option<String>,
    /// "summarized" or "omitted" (`--thinking-display` wins).
    pub thinking_display: Option<String>,
    /// The small, fast model (served by the session's provider) that answers WebFetch's `prompt` over a page;
    /// "" turns that off (the page's Markdown is returned). `ANTHROPIC_SMALL_FAST_MODEL` is read when unset.
    pub small_model: Option<String>,
    /// Where WebSearch searches (see [`WebSearchConfig`]).
    pub web_search: Option<WebSearchConfig>,
}

/// `[web_search]` in `config.toml`: the search backend for WebSearch.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct WebSearchConfig {
    /// "anthropic" (the API's server-side web search), "searxng", "brave" or "off".
    pub backend: String,
    /// The SearXNG instance (its JSON API must be on), or another Brave Search API endpoint.
    pub url: Option<String>,
    /// The environment variable holding the backend's key (Brave: `BRAVE_API_KEY` when unset).
    pub api_key_env: Option<String>,
}

/// A provider declared in `config.toml`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderEntry {
    pub kind: Option<ProviderKind>,
    pub base_url: Option<String>,
    /// The environment variable holding the key (keys are never stored in config files).
    pub api_key_env: Option<String>,
    pub model: Option<String>,
}

/// A built-in provider.
struct Builtin {
    name: &'static str,
    kind: ProviderKind,
    base_url: &'static str,
    /// Environment variable that overrides the base URL.
    base_url_env: Option<&'static str>,
    api_key_env: Option<&'static str>,
    default_model: Option<&'static str>,
}

const BUILTINS: &[Builtin] = &[
    Builtin {
        name: "anthropic",
        kind: ProviderKind::Anthropic,
        base_url: "https://api.anthropic.com",
        base_url_env: Some("ANTHROPIC_BASE_URL"),
        api_key_env: Some("ANTHROPIC_API_KEY"),
        default_model: Some("claude-sonnet-4-5"),
    },
    Builtin {
        name: "openai",
        kind: ProviderKind::Openai,
        base_url: "https://api.openai.com/v1",
        base_url_env: Some("OPENAI_BASE_URL"),
        api_key_env: Some("OPENAI_API_KEY"),
        default_model: Some("gpt-4.1"),
    },
    Builtin {
        name: "openrouter",
        kind: ProviderKind::Openai,
        base_url: "https://openrouter.ai/api/v1",
        base_url_env: None,
        api_key_env: Some("OPENROUTER_API_KEY"),
        default_model: Some("anthropic/claude-sonnet-4.5"),
    },
    Builtin {
        name: "ollama",
        kind: ProviderKind::Openai,
        base_url: "http://127.0.0.1:11434/v1",
        base_url_env: None,
        api_key_env: None,
        default_model: None,
    },
    Builtin {
        name: "llamacpp",
        kind: ProviderKind::Openai,
        base_url: "http://127.0.0.1:8080/v1",
        base_url_env: None,
        api_key_env: None,
        // llama.cpp's server serves whatever model it loaded and ignores the name.
        default_model: Some("default"),
    },
];

/// What the command line asked for.
#[derive(Clone, Debug, Default)]
pub struct ProviderFlags {
    pub provider: Option<String>,
    pub model: Option<String>,
    pub base_url: Option<String>,
}

/// The provider and model a session will use.
#[derive(Clone, Debug)]
pub struct ResolvedProvider {
    pub endpoint: Endpoint,
    pub model: String,
}

/// tandem's directories.
#[derive(Clone, Debug)]
pub struct Paths {
    /// User configuration: `config.toml`, `settings.json`, user memory.
    pub config_dir: PathBuf,
    /// Data: sessions, history.
    pub data_dir: PathBuf,
}

impl Paths {
    /// The platform directories (`directories`), or `$TANDEM_CONFIG_DIR` for both when set.
    pub fn discover(env: &dyn Fn(&str) -> Option<String>) -> Paths {
        if let Some(dir) = env(CONFIG_DIR_ENV).filter(|dir| !dir.is_empty()) {
            let dir = PathBuf::from(dir);
            return Paths { data_dir: dir.join("data"), config_dir: dir };
        }
        match directories::ProjectDirs::from("", "", "tandem") {
            Some(dirs) => Paths { config_dir: dirs.config_dir().to_owned(), data_dir: dirs.data_dir().to_owned() },
            None => Paths { config_dir: PathBuf::from(".tandem"), data_dir: PathBuf::from(".tandem/data") },
        }
    }

    pub fn config_file(&self) -> PathBuf {
        self.config_dir.join("config.toml")
    }
}

/// Reads `config.toml`; a missing file is an empty config, a broken one an error naming the file.
pub fn load_config_file(path: &Path) -> Result<ConfigFile, ConfigError> {
    match std::fs::read_to_string(path) {
        Ok(text) => toml::from_str(&text).map_err(|err| ConfigError::BadConfigFile {
            path: path.display().to_string(),
            message: err.message().to_owned(),
        }),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(ConfigFile::default()),
        Err(err) => Err(ConfigError::BadConfigFile { path: path.display().to_string(), message: err.to_string() }),
    }
}

/// Picks the provider, endpoint, key and model. `env` reads environment variables (injectable for tests).
pub fn resolve_provider(
    flags: &ProviderFlags,
    file: &ConfigFile,
    config_file: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<ResolvedProvider, ConfigError> {
    let env = |name: &str| env(name).filter(|value| !value.is_empty());
    let config_file_text = config_file.display().to_string();
    let name = flags
        .provider
        .clone()
        .or_else(|| file.provider.clone())
        .or_else(|| {
            [("ANTHROPIC_API_KEY", "anthropic"), ("OPENAI_API_KEY", "openai"), ("OPENROUTER_API_KEY", "openrouter")]
                .into_iter()
                .find(|(var, _)| env(var).is_some())
                .map(|(_, name)| name.to_owned())
        })
        .ok_or_else(|| ConfigError::NoProvider { config_file: config_file_text.clone() })?;

    let builtin = BUILTINS.iter().find(|builtin| builtin.name == name);
    let entry = file.providers.get(&name);
    if builtin.is_none() && entry.is_none() {
        let mut known: Vec<&str> = BUILTINS.iter().map(|builtin| builtin.name).collect();
        known.extend(file.providers.keys().map(String::as_str));
        return Err(ConfigError::UnknownProvider { name, known: known.join(", "), config_file: config_file_text });
    }
    let entry = entry.cloned().unwrap_or_default();
    let kind = entry.kind.or(builtin.map(|builtin| builtin.kind)).unwrap_or(ProviderKind::Openai);

    let base_url = flags
        .base_url
        .clone()
        .or(entry.base_url)
        .or_else(|| builtin.and_then(|builtin| builtin.base_url_env).and_then(env))
        .or_else(|| builtin.map(|builtin| builtin.base_url.to_owned()))
        .ok_or_else(|| ConfigError::BadConfigFile {
            path: config_file_text.clone(),
            message: format!("provider {name:?} has no base_url"),
        })?;

    let api_key_env = entry.api_key_env.or_else(|| builtin.and_then(|builtin| builtin.api_key_env).map(str::to_owned));
    let api_key = api_key_env.as_deref().and_then(env).map(ApiKey::new);
    // Hosted providers can't work without a key; self-hosted ones (a custom base URL) may not need one.
    let hosted = builtin.is_some_and(|builtin| builtin.api_key_env.is_some()) && flags.base_url.is_none();
    if api_key.is_none()
        && hosted
        && let Some(var) = &api_key_env
    {
        return Err(ConfigError::MissingKey { provider: name, env_var: var.clone() });
    }

    let model = flags
        .model
        .clone()
        .or(entry.model)
        .or_else(|| file.model.clone().filter(|_| file.provider.as_deref() == Some(name.as_str())))
        .or_else(|| builtin.and_then(|builtin| builtin.default_model).map(str::to_owned))
        .ok_or_else(|| ConfigError::MissingModel { provider: name.clone(), config_file: config_file_text })?;

    Ok(ResolvedProvider { endpoint: Endpoint { name, kind, base_url, api_key, api_key_env }, model })
}

/// A provider the user chose on the welcome screen, to be remembered in `config.toml`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProviderChoice {
    /// The name it is saved under: a built-in provider, or a new `[providers.NAME]` entry.
    pub name: String,
    pub kind: ProviderKind,
    pub base_url: String,
    pub model: String,
}

/// Makes `choice` the provider tandem starts with: `provider = NAME` among the file's top-level keys and
/// `[providers.NAME]` with its address and model (a `kind` too where NAME is not built in), everything else in
/// the file — comments, order, other providers — kept as it was. Written atomically, keeping the file's mode.
/// A file that is not valid TOML is not touched: the error names it.
pub fn save_provider_choice(config_file: &Path, choice: &ProviderChoice) -> Result<(), String> {
    let shown = config_file.display();
    let text = match std::fs::read_to_string(config_file) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(err) => return Err(format!("could not read {shown}: {err}")),
    };
    let mut document: toml_edit::DocumentMut = text.parse().map_err(|err: toml_edit::TomlError| {
        format!("{shown} is not valid TOML ({}), so it was not changed", err.message())
    })?;
    document["provider"] = toml_edit::value(choice.name.as_str());
    let providers = document.entry("providers").or_insert_with(|| {
        let mut table = toml_edit::Table::new();
        table.set_implicit(true);
        toml_edit::Item::Table(table)
    });
    let Some(providers) = providers.as_table_mut() else {
        return Err(format!("{shown}: `providers` is not a [providers] table, so the file was not changed"));
    };
    let entry = providers.entry(&choice.name).or_insert(toml_edit::Item::Table(toml_edit::Table::new()));
    let Some(entry) = entry.as_table_like_mut() else {
        return Err(format!("{shown}: `providers.{}` is not a table, so the file was not changed", choice.name));
    };
    if !BUILTINS.iter().any(|builtin| builtin.name == choice.name) {
        let kind = match choice.kind {
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::Openai => "openai",
        };
        entry.insert("kind", toml_edit::value(kind));
    }
    entry.insert("base_url", toml_edit::value(choice.base_url.as_str()));
    entry.insert("model", toml_edit::value(choice.model.as_str()));
    crate::fs_util::write_atomic_create_dirs(config_file, document.to_string().as_bytes())
        .map_err(|err| format!("could not write {shown}: {err}"))
}

/// Names of the built-in providers.
pub fn builtin_provider_names() -> Vec<&'static str> {
    BUILTINS.iter().map(|builtin| builtin.name).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| pairs.iter().find(|(key, _)| *key == name).map(|(_, value)| value.to_string())
    }

    fn resolve(
        flags: ProviderFlags,
        file: &ConfigFile,
        env: &'static [(&'static str, &'static str)],
    ) -> Result<ResolvedProvider, ConfigError> {
        resolve_provider(&flags, file, Path::new("/cfg/config.toml"), &env_of(env))
    }

    #[test]
    fn nothing_configured_says_how() {
        let err = resolve(ProviderFlags::default(), &ConfigFile::default(), &[]).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("ANTHROPIC_API_KEY") && text.contains("ollama") && text.contains("/cfg/config.toml"),
            "{text}"
        );
    }

    #[test]
    fn environment_picks_anthropic_with_its_base_url() {
        let resolved = resolve(
            ProviderFlags::default(),
            &ConfigFile::default(),
            &[("ANTHROPIC_API_KEY", "k"), ("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")],
        )
        .unwrap();
        assert_eq!(resolved.endpoint.kind, ProviderKind::Anthropic);
        assert_eq!(resolved.endpoint.base_url, "http://127.0.0.1:9");
        assert_eq!(resolved.endpoint.api_key.unwrap().expose(), "k");
        assert_eq!(resolved.model, "claude-sonnet-4-5");
    }

    #[test]
    fn flags_beat_config_beats_env() {
        let file: ConfigFile = toml::from_str("provider = \"openai\"\nmodel = \"gpt-4o\"\n").unwrap();
        let resolved =
            resolve(ProviderFlags::default(), &file, &[("ANTHROPIC_API_KEY", "a"), ("OPENAI_API_KEY", "o")]).unwrap();
        assert_eq!((resolved.endpoint.name.as_str(), resolved.model.as_str()), ("openai", "gpt-4o"));
        let flags = ProviderFlags {
            provider: Some("anthropic".into()),
            model: Some("claude-haiku-4-5".into()),
            base_url: None,
        };
        let resolved = resolve(flags, &file, &[("ANTHROPIC_API_KEY", "a"), ("OPENAI_API_KEY", "o")]).unwrap();
        assert_eq!((resolved.endpoint.name.as_str(), resolved.model.as_str()), ("anthropic", "claude-haiku-4-5"));
    }

    #[test]
    fn local_providers_need_no_key_and_custom_ones_come_from_config() {
        let flags =
            ProviderFlags { provider: Some("ollama".into()), model: Some("qwen3-coder".into()), base_url: None };
        let resolved = resolve(flags, &ConfigFile::default(), &[]).unwrap();
        assert_eq!(resolved.endpoint.base_url, "http://127.0.0.1:11434/v1");
        assert!(resolved.endpoint.api_key.is_none());

        let file: ConfigFile = toml::from_str("[providers.vllm]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:8000/v1\"\napi_key_env = \"VLLM_KEY\"\nmodel = \"m\"\n").unwrap();
        let flags = ProviderFlags { provider: Some("vllm".into()), ..Default::default() };
        let resolved = resolve(flags, &file, &[("VLLM_KEY", "s")]).unwrap();
        assert_eq!(resolved.endpoint.api_key_env.as_deref(), Some("VLLM_KEY"));
        assert_eq!(resolved.model, "m");
    }

    #[test]
    fn errors_name_the_fix() {
        let flags = ProviderFlags { provider: Some("openai".into()), ..Default::default() };
        assert_eq!(
            resolve(flags, &ConfigFile::default(), &[]).unwrap_err(),
            ConfigError::MissingKey { provider: "openai".into(), env_var: "OPENAI_API_KEY".into() }
        );
        let flags = ProviderFlags { provider: Some("nope".into()), ..Default::default() };
        assert!(resolve(flags, &ConfigFile::default(), &[]).unwrap_err().to_string().contains("llamacpp"));
        let flags = ProviderFlags { provider: Some("ollama".into()), ..Default::default() };
        assert!(matches!(resolve(flags, &ConfigFile::default(), &[]).unwrap_err(), ConfigError::MissingModel { .. }));
        assert!(toml::from_str::<ConfigFile>("providr = 1").is_err());
    }

    fn lm_studio() -> ProviderChoice {
        ProviderChoice {
            name: "lmstudio".into(),
            kind: ProviderKind::Openai,
            base_url: "http://127.0.0.1:1234/v1".into(),
            model: "qwen3-coder-30b".into(),
        }
    }

    /// The welcome screen's choice, saved, is what the next start resolves to, with no flag and no key.
    #[test]
    fn a_saved_choice_is_what_tandem_starts_with_next_time() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("tandem/config.toml");
        save_provider_choice(&file, &lm_studio()).unwrap();
        let resolved =
            resolve_provider(&ProviderFlags::default(), &load_config_file(&file).unwrap(), &file, &|_| None).unwrap();
        assert_eq!(resolved.endpoint.name, "lmstudio");
        assert_eq!(resolved.endpoint.kind, ProviderKind::Openai);
        assert_eq!(resolved.endpoint.base_url, "http://127.0.0.1:1234/v1");
        assert_eq!(resolved.model, "qwen3-coder-30b");

        let ollama = ProviderChoice {
            name: "ollama".into(),
            base_url: "http://127.0.0.1:11434/v1".into(),
            model: "qwen3-coder:30b".into(),
            ..lm_studio()
        };
        save_provider_choice(&file, &ollama).unwrap();
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(text.contains("[providers.lmstudio]"), "the earlier server stays declared:\n{text}");
        let resolved =
            resolve_provider(&ProviderFlags::default(), &load_config_file(&file).unwrap(), &file, &|_| None).unwrap();
        assert_eq!((resolved.endpoint.name.as_str(), resolved.model.as_str()), ("ollama", "qwen3-coder:30b"));
        assert!(
            !text.contains("kind = \"openai\"\nbase_url = \"http://127.0.0.1:11434"),
            "a built-in needs no kind:\n{text}"
        );
    }

    /// What the user wrote stays: comments, settings, sections; the provider goes among the top-level keys.
    #[test]
    fn saving_a_choice_keeps_the_rest_of_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("config.toml");
        let written =
            "# my settings\nsandbox = \"workspace-write\" # keep it safe\n\n[web_search]\nbackend = \"off\"\n";
        std::fs::write(&file, written).unwrap();
        save_provider_choice(&file, &lm_studio()).unwrap();
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(text.starts_with(written.lines().next().unwrap()), "{text}");
        assert!(text.contains("sandbox = \"workspace-write\" # keep it safe"), "{text}");
        let config = load_config_file(&file).unwrap();
        assert_eq!(config.provider.as_deref(), Some("lmstudio"));
        assert_eq!(config.sandbox.as_deref(), Some("workspace-write"));
        assert_eq!(config.web_search.unwrap().backend, "off");

        let broken = "provider = \n";
        std::fs::write(&file, broken).unwrap();
        let error = save_provider_choice(&file, &lm_studio()).unwrap_err();
        assert!(error.contains("not valid TOML") && error.contains("config.toml"), "{error}");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), broken, "a broken file is left as it was");
    }
}
