//! The session's hooks. Those from the project's own files run in the app only once the user trusted them
//! (`/hooks trust`, remembered while they stay the same); headless runs trust the project, as `claude -p` does.
//! Which hooks are active is said at the start, and so is every entry that could not be used.

use std::sync::Arc;

use super::permissions::FlagSettings;
use super::{Places, SessionOptions};
use crate::hooks::{self, HookEngine};
use crate::permissions::settings::{SettingSources, Settings};
use crate::shell_env::ShellEnvPolicy;
use crate::trust::Store;

/// The hooks of the settings files the session reads (and of `--settings`), trusted or held as above.
pub(super) fn engine(
    options: &SessionOptions,
    settings: &Settings,
    sources: SettingSources,
    flag_settings: Option<&FlagSettings>,
    places: &Places<'_>,
    shell_env: &Arc<ShellEnvPolicy>,
    notices: &mut Vec<String>,
) -> Arc<HookEngine> {
    let config_dir = &places.paths.config_dir;
    let project_root = &settings.project_root;
    let files: Vec<_> = hooks::settings_files(config_dir, places.claude_dir, project_root)
        .into_iter()
        .filter(|(file, project)| sources.includes(file, *project))
        .collect();
    let mut set = hooks::load_files(files);
    if let Some((label, document)) = flag_settings {
        set.read_document(label, document, false);
    }
    notices.extend(set.problems.iter().map(|problem| format!("Hooks: {problem}")));
    let trusted = options.front_end.headless()
        || crate::trust::is_trusted(config_dir, Store::Hooks, project_root, &set.project_fingerprint());
    let engine = HookEngine::new(set, project_root.clone(), shell_env.clone(), trusted);
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
            "This project's settings define {count} hook{} that run commands on your machine; they are off until you \
             trust them: /hooks lists them, /hooks trust turns them on.",
            if count == 1 { "" } else { "s" }
        ));
    }
    Arc::new(engine)
}
