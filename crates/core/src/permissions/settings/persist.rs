//! Writing rules to settings files: "always" answers and `/permissions` removals.
//!
//! Every write is read-modify-write of the whole file, keeping every other key and the file's key order
//! (serde_json's `preserve_order`), pretty-printed with 2 spaces and a trailing newline, and atomic (temp file +
//! rename), so a crash never leaves a half-written settings file. A file that isn't valid JSON is never
//! overwritten: the user's hand edits would be lost, so the write fails with the file and the JSON error.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use serde_json::{Map, Value};

use super::{LOCAL_SETTINGS_FILE, Rule, RuleKind, Scope, TANDEM_DIR, parse_rule, read_settings_object, settings_file};
use crate::fs_util::write_atomic_create_dirs;

/// Appends `rule_text` to the `kind` list of the file for `scope` and returns that file.
///
/// `Scope::Project` and `Scope::Local` both write `<project root>/.tandem/settings.local.json`: an "always for
/// this project" answer is one person's decision, so it goes to the git-ignored file rather than the committed
/// one. `.tandem/.gitignore` gets `settings.local.json` unless the file is already ignored. `Scope::User` writes
/// `<config dir>/settings.json`. Other scopes have no file to write. A rule already in the list (the same rule,
/// however spaced) is not added again; the file is then left untouched.
pub fn persist_rule(
    scope: Scope,
    kind: RuleKind,
    rule_text: &str,
    config_dir: &Path,
    project_root: &Path,
) -> Result<PathBuf, String> {
    let text = rule_text.trim();
    let rule = parse_rule(text).map_err(|why| format!("rule {text:?}: {why}"))?;
    let file = match scope {
        Scope::User => settings_file(Scope::User, config_dir, project_root),
        Scope::Project | Scope::Local => {
            // Before the rule is written, so the file is never there un-ignored.
            ensure_git_ignored(project_root)?;
            settings_file(Scope::Local, config_dir, project_root)
        }
        Scope::ClaudeUser
        | Scope::ClaudeProject
        | Scope::ClaudeLocal
        | Scope::Flag
        | Scope::Session
        | Scope::Command => None,
    }
    .ok_or_else(|| format!("rules are not saved to {} settings", scope.as_str()))?;

    let mut document = read_for_update(&file)?.unwrap_or_default();
    let list = rule_list(&mut document, kind, &file)?;
    if list.iter().any(|item| item.as_str().is_some_and(|existing| same_rule(existing, text, Some(&rule)))) {
        return Ok(file);
    }
    list.push(Value::String(text.to_owned()));
    write_document(&file, document)?;
    Ok(file)
}

/// Removes `rule_text` (and any spelling of the same rule) from the `kind` list of `file`. Returns whether
/// anything was removed; a missing file, list or rule is `Ok(false)` and leaves the file untouched. An emptied
/// list stays in the file as `[]`.
pub fn remove_rule(file: &Path, kind: RuleKind, rule_text: &str) -> Result<bool, String> {
    let text = rule_text.trim();
    // A rule that no longer parses (edited by hand, or from an older version) can still be removed by its text.
    let rule = parse_rule(text).ok();
    let Some(mut document) = read_for_update(file)? else { return Ok(false) };
    let Some(Value::Object(permissions)) = document.get_mut("permissions") else { return Ok(false) };
    let Some(Value::Array(list)) = permissions.get_mut(kind.key()) else { return Ok(false) };
    let before = list.len();
    list.retain(|item| !item.as_str().is_some_and(|existing| same_rule(existing, text, rule.as_ref())));
    if list.len() == before {
        return Ok(false);
    }
    write_document(file, document)?;
    Ok(true)
}

/// Removes answers about `.mcp.json` servers from `<project root>/.tandem/settings.local.json`, where earlier
/// versions kept them (`tandem mcp reset-project-choices`; they are not used any more). Returns the file when it
/// changed.
pub fn reset_mcp_choices(project_root: &Path) -> Result<Option<PathBuf>, String> {
    let file = project_root.join(TANDEM_DIR).join(LOCAL_SETTINGS_FILE);
    let Some(mut document) = read_for_update(&file)? else { return Ok(None) };
    let before = document.len();
    for key in ["enabledMcpjsonServers", "disabledMcpjsonServers", "enableAllProjectMcpServers"] {
        document.remove(key);
    }
    if document.len() == before {
        return Ok(None);
    }
    write_document(&file, document)?;
    Ok(Some(file))
}

/// Whether a listed rule text is `text`, or parses to the same rule.
fn same_rule(existing: &str, text: &str, rule: Option<&Rule>) -> bool {
    existing.trim() == text || rule.is_some_and(|rule| parse_rule(existing).as_ref() == Ok(rule))
}

/// The file's top-level object for an update; `None` when the file doesn't exist.
fn read_for_update(file: &Path) -> Result<Option<Map<String, Value>>, String> {
    read_settings_object(file)
        .map(|document| document.map(|(document, _)| document))
        .map_err(|why| format!("{}: {why}; fix it before changing rules in it", file.display()))
}

/// The `permissions.<kind>` array, created when missing. Anything else in its place is an error rather than
/// something to replace: it's the user's, and replacing it would lose it.
fn rule_list<'a>(
    document: &'a mut Map<String, Value>,
    kind: RuleKind,
    file: &Path,
) -> Result<&'a mut Vec<Value>, String> {
    let permissions = document.entry("permissions").or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(permissions) = permissions else {
        return Err(format!("{}: \"permissions\" is not an object", file.display()));
    };
    let list = permissions.entry(kind.key()).or_insert_with(|| Value::Array(Vec::new()));
    let Value::Array(list) = list else {
        return Err(format!("{}: \"permissions.{}\" is not an array", file.display(), kind.key()));
    };
    Ok(list)
}

fn write_document(file: &Path, document: Map<String, Value>) -> Result<(), String> {
    crate::fs_util::write_json_object(file, &document).map_err(|err| format!("{}: cannot write: {err}", file.display()))
}

/// Makes sure git ignores `.tandem/settings.local.json`, adding it to `.tandem/.gitignore` (created if needed,
/// other lines kept) unless `.tandem/.gitignore`, the root `.gitignore` or `.git/info/exclude` already ignores it.
fn ensure_git_ignored(project_root: &Path) -> Result<(), String> {
    let dir = project_root.join(TANDEM_DIR);
    if is_git_ignored(project_root, &dir.join(LOCAL_SETTINGS_FILE)) {
        return Ok(());
    }
    let gitignore = dir.join(".gitignore");
    let mut text = match std::fs::read_to_string(&gitignore) {
        Ok(text) => text,
        Err(err) if err.kind() == ErrorKind::NotFound => String::new(),
        Err(err) => return Err(format!("{}: cannot be read: {err}", gitignore.display())),
    };
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(LOCAL_SETTINGS_FILE);
    text.push('\n');
    write_atomic_create_dirs(&gitignore, text.as_bytes())
        .map_err(|err| format!("{}: cannot write: {err}", gitignore.display()))
}

/// Whether the ignore files tandem knows about ignore `file` (in `<root>/.tandem`). Git's global excludes are
/// not consulted; when only they ignore the file, `.tandem/.gitignore` gets a redundant, harmless line.
fn is_git_ignored(root: &Path, file: &Path) -> bool {
    // The deeper file decides first, as in git; a `!` there un-ignores whatever the root says.
    let (nested, _) = Gitignore::new(root.join(TANDEM_DIR).join(".gitignore"));
    let nested = nested.matched_path_or_any_parents(file, false);
    if !nested.is_none() {
        return nested.is_ignore();
    }
    let mut builder = GitignoreBuilder::new(root);
    // Missing files are the usual case and simply contribute nothing.
    let _ = builder.add(root.join(".git").join("info").join("exclude"));
    let _ = builder.add(root.join(".gitignore"));
    builder.build().is_ok_and(|root_ignore| root_ignore.matched_path_or_any_parents(file, false).is_ignore())
}
