//! The environment of the processes tandem starts (Bash commands today; hooks and MCP servers use the same
//! policy): tandem's environment minus its secrets.
//!
//! Without this, a provider's API key is in every command's environment for `printenv` to show. The provider
//! keys tandem knows of (and the variable a configured provider names in `api_key_env`) are always removed;
//! on top of that, as Codex's `shell_environment_policy` does, `config.toml` decides what is inherited:
//!
//! ```toml
//! [shell_environment_policy]
//! inherit = "all"                    # "all" (default), "core" (HOME, PATH, USER, LANG, TERM…) or "none"
//! ignore_default_excludes = false    # the defaults remove names with KEY, SECRET, TOKEN, PASS, CREDENTIAL…
//! exclude = ["AWS_*"]                # more names to remove (case-insensitive globs)
//! include_only = []                  # when set, only these names are kept
//! set = { CI = "1" }                 # set last, always
//! ```

use std::collections::BTreeMap;
use std::ffi::OsString;

use serde::Deserialize;

/// Names always removed: the providers' credentials (tandem's own secrets).
pub const PROVIDER_SECRETS: &[&str] = &[
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "OPENAI_API_KEY",
    "OPENROUTER_API_KEY",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "TANDEM_API_KEY",
];
/// The default exclusions (Codex's, plus passwords and credentials): names that are secrets by convention.
const DEFAULT_EXCLUDES: &[&str] = &[
    "*KEY*",
    "*SECRET*",
    "*TOKEN*",
    "*PASS*",
    "*_PWD",
    "*CREDENTIAL*",
    "*PRIVATE*",
    "*COOKIE*",
    "*DATABASE_URL*",
    "*_DSN",
    "*SESSION_ID*",
    "BW_SESSION",
    "*JWT*",
    "REDIS_URL",
    "MONGODB_URI",
    "DOCKER_AUTH_CONFIG",
];
/// What `inherit = "core"` keeps.
const CORE: &[&str] = &[
    "HOME", "LOGNAME", "PATH", "SHELL", "USER", "USERNAME", "TMPDIR", "TEMP", "TMP", "LANG", "LANGUAGE", "LC_*",
    "TERM", "TZ", "PWD",
];

/// Which variables are inherited at all.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Inherit {
    #[default]
    All,
    Core,
    None,
}

/// `[shell_environment_policy]` in `config.toml`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShellEnvPolicy {
    #[serde(default)]
    pub inherit: Inherit,
    #[serde(default)]
    pub ignore_default_excludes: bool,
    #[serde(default)]
    pub exclude: Vec<String>,
    #[serde(default)]
    pub include_only: Vec<String>,
    #[serde(default)]
    pub set: BTreeMap<String, String>,
    /// More names always removed (the `api_key_env` of configured providers); not read from the file.
    #[serde(skip)]
    pub secrets: Vec<String>,
}

impl ShellEnvPolicy {
    /// The environment a child gets, from `vars` (tandem's own environment).
    pub fn environment(&self, vars: impl IntoIterator<Item = (OsString, OsString)>) -> Vec<(OsString, OsString)> {
        let mut out: Vec<(OsString, OsString)> = vars
            .into_iter()
            .filter(|(name, _)| {
                let name = name.to_string_lossy();
                self.keeps(&name)
            })
            .collect();
        for (name, value) in &self.set {
            out.retain(|(existing, _)| existing.to_string_lossy() != name.as_str());
            out.push((OsString::from(name), OsString::from(value)));
        }
        out
    }

    /// Whether a variable of this name is passed on.
    pub fn keeps(&self, name: &str) -> bool {
        if PROVIDER_SECRETS.iter().any(|secret| secret.eq_ignore_ascii_case(name))
            || self.secrets.iter().any(|secret| secret.eq_ignore_ascii_case(name))
        {
            return false;
        }
        let inherited = match self.inherit {
            Inherit::All => true,
            Inherit::Core => CORE.iter().any(|pattern| wildcard(pattern, name)),
            Inherit::None => false,
        };
        if !inherited {
            return false;
        }
        if !self.ignore_default_excludes && DEFAULT_EXCLUDES.iter().any(|pattern| wildcard(pattern, name)) {
            return false;
        }
        if self.exclude.iter().any(|pattern| wildcard(pattern, name)) {
            return false;
        }
        self.include_only.is_empty() || self.include_only.iter().any(|pattern| wildcard(pattern, name))
    }

    /// Replaces a command's environment with [`ShellEnvPolicy::environment`] of tandem's.
    pub fn apply(&self, command: &mut tokio::process::Command) {
        command.env_clear();
        command.envs(self.environment(std::env::vars_os()));
    }
}

/// Case-insensitive glob with `*` (any run) and `?` (one character).
fn wildcard(pattern: &str, name: &str) -> bool {
    let pattern: Vec<char> = pattern.to_ascii_uppercase().chars().collect();
    let name: Vec<char> = name.to_ascii_uppercase().chars().collect();
    let (mut p, mut n) = (0, 0);
    let (mut star, mut mark) = (None, 0);
    while n < name.len() {
        if p < pattern.len() && (pattern[p] == '?' || pattern[p] == name[n]) {
            p += 1;
            n += 1;
        } else if p < pattern.len() && pattern[p] == '*' {
            star = Some(p);
            mark = n;
            p += 1;
        } else if let Some(s) = star {
            p = s + 1;
            mark += 1;
            n = mark;
        } else {
            return false;
        }
    }
    pattern[p..].iter().all(|c| *c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(policy: &ShellEnvPolicy, vars: &[(&str, &str)]) -> Vec<String> {
        let vars = vars.iter().map(|(k, v)| (OsString::from(k), OsString::from(v)));
        policy.environment(vars).into_iter().map(|(k, _)| k.to_string_lossy().into_owned()).collect()
    }

    #[test]
    fn secrets_never_reach_a_child() {
        let vars = [
            ("PATH", "/bin"),
            ("ANTHROPIC_API_KEY", "sk"),
            ("OPENAI_API_KEY", "sk"),
            ("GITHUB_TOKEN", "t"),
            ("AWS_SECRET_ACCESS_KEY", "s"),
            ("MY_VLLM", "k"),
            ("HOME", "/h"),
        ];
        let mut policy = ShellEnvPolicy::default();
        assert_eq!(names(&policy, &vars), ["PATH", "MY_VLLM", "HOME"]);
        policy.secrets.push("my_vllm".into());
        assert_eq!(names(&policy, &vars), ["PATH", "HOME"]);
        policy.ignore_default_excludes = true;
        assert_eq!(
            names(&policy, &vars),
            ["PATH", "GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "HOME"],
            "provider keys stay out"
        );
    }

    #[test]
    fn inherit_include_exclude_and_set() {
        let vars = [("PATH", "/bin"), ("LC_ALL", "C"), ("EDITOR", "vi"), ("AWS_REGION", "x")];
        let policy = ShellEnvPolicy { inherit: Inherit::Core, ..ShellEnvPolicy::default() };
        assert_eq!(names(&policy, &vars), ["PATH", "LC_ALL"]);
        let policy = ShellEnvPolicy { exclude: vec!["aws_*".into()], ..ShellEnvPolicy::default() };
        assert_eq!(names(&policy, &vars), ["PATH", "LC_ALL", "EDITOR"]);
        let policy = ShellEnvPolicy { include_only: vec!["PATH".into()], ..ShellEnvPolicy::default() };
        assert_eq!(names(&policy, &vars), ["PATH"]);
        let mut set = BTreeMap::new();
        set.insert("PATH".to_owned(), "/x".to_owned());
        let policy = ShellEnvPolicy { inherit: Inherit::None, set, ..ShellEnvPolicy::default() };
        let env = policy.environment(vars.iter().map(|(k, v)| (OsString::from(k), OsString::from(v))));
        assert_eq!(env, [(OsString::from("PATH"), OsString::from("/x"))]);
        let parsed: ShellEnvPolicy = toml::from_str("inherit = \"core\"\nexclude = [\"X\"]\n").unwrap();
        assert_eq!(parsed.inherit, Inherit::Core);
        assert!(toml::from_str::<ShellEnvPolicy>("inherits = \"all\"").is_err(), "unknown keys are reported");
    }
}
