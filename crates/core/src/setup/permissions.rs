//! The session's permission policy: the mode, the directories it may work in, and the rules of the settings files
//! and of the options, with the settings a tracked file would widen held back until the user trusts them.

use std::path::PathBuf;

use super::{FrontEnd, Places, SessionOptions, SetupError};
use crate::permissions::settings::{self, Settings};
use crate::permissions::{PermissionMode, PermissionPolicy, RuleKind, Scope, Workspace, split_rule_list};

/// `--settings`' document, with the name its problems are reported under.
pub(super) type FlagSettings = (PathBuf, serde_json::Map<String, serde_json::Value>);

/// `--settings`: a JSON object, or the path of a settings file; with the name its problems are reported under.
pub(super) fn flag_settings(options: &SessionOptions) -> Result<Option<FlagSettings>, SetupError> {
    let Some(value) = options.settings.as_deref().map(str::trim).filter(|value| !value.is_empty()) else {
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

/// For each tracked personal settings file: what it would widen, and how to apply it.
pub(super) fn held_notices(settings: &Settings, front_end: FrontEnd) -> impl Iterator<Item = String> + '_ {
    let how = if front_end.headless() {
        "start tandem here and type /permissions trust"
    } else {
        "/permissions trust applies it"
    };
    settings.held.iter().map(move |held| {
        format!(
            "Settings: {} is tracked by git, so it may have been committed by someone else; what it widens is off \
             until you trust it ({how}): {}",
            held.file.display(),
            held.describe()
        )
    })
}

/// The policy: mode, workspace (the working directory, `add_dirs` and the settings' additional directories) and
/// rules (settings files, then the options' allowed and disallowed tools).
pub(super) fn policy(
    options: &SessionOptions,
    settings: &Settings,
    places: &Places<'_>,
) -> Result<PermissionPolicy, SetupError> {
    let mode = mode(options, settings)?;
    let mut extra_dirs: Vec<PathBuf> = options.add_dirs.iter().map(|dir| places.cwd.join(dir)).collect();
    if let Some(dir) = extra_dirs.iter().find(|dir| !dir.is_dir()) {
        return Err(SetupError(format!("--add-dir {}: not a directory", dir.display())));
    }
    extra_dirs.extend(settings.additional_directories.iter().cloned());
    let home = places.home.map(PathBuf::from);
    let claude_json = super::claude_json(&super::process_env, places.home);
    let workspace = Workspace::new(places.cwd, &extra_dirs, home.clone(), Some(places.paths.config_dir.clone()))
        .with_claude_dir(places.claude_dir, claude_json.as_deref());
    crate::shell::keep_programs_outside(workspace.roots());
    let mut permissions = PermissionPolicy::new(mode, workspace, home.unwrap_or_else(|| PathBuf::from("/")));
    permissions.rules = settings.rules.clone();
    permissions.held = settings.held.clone();
    for (flag, kind, values) in [
        ("--allowedTools", RuleKind::Allow, &options.allowed_tools),
        ("--disallowedTools", RuleKind::Deny, &options.disallowed_tools),
    ] {
        for text in values.iter().flat_map(|value| split_rule_list(value)) {
            permissions
                .add_rule(kind, &text, Scope::Flag)
                .map_err(|problem| SetupError(format!("invalid {flag} rule: {problem}")))?;
        }
    }
    Ok(permissions)
}

/// The mode: skipping permissions, else the one asked for, else the settings' `defaultMode`.
fn mode(options: &SessionOptions, settings: &Settings) -> Result<PermissionMode, SetupError> {
    if options.skip_permissions {
        return Ok(PermissionMode::BypassPermissions);
    }
    match options.permission_mode.as_deref() {
        None => Ok(settings.default_mode.unwrap_or_default()),
        Some(text) => PermissionMode::parse(text).ok_or_else(|| {
            let names: Vec<&str> = PermissionMode::ALL.iter().map(|mode| mode.as_str()).collect();
            SetupError(format!("invalid --permission-mode {text:?}: use one of {}", names.join(", ")))
        }),
    }
}
