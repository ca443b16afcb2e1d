//! The user's answers about a project's `.mcp.json` servers, kept in tandem's config directory (never in the
//! project: a repository could commit a "local" settings file that approves its own servers). An approval
//! covers the server's entry exactly as it was approved, so a server whose command, arguments, environment,
//! URL or headers changed since (a `git pull`) is asked about again.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

const APPROVALS_FILE: &str = "mcp-approvals.json";

/// What was answered for one project.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stored {
    /// "Use this and all future MCP servers in this project".
    pub enable_all: bool,
    /// Approved servers, with their entries as they were approved.
    pub approved: BTreeMap<String, Value>,
    /// Servers the user turned down.
    pub refused: Vec<String>,
}

fn file(config_dir: &Path) -> PathBuf {
    config_dir.join(APPROVALS_FILE)
}

fn key(project_root: &Path) -> String {
    project_root.display().to_string()
}

fn read_all(config_dir: &Path) -> Map<String, Value> {
    crate::fs_util::read_json_object(&file(config_dir))
}

/// The answers recorded for `project_root`.
pub fn read(config_dir: &Path, project_root: &Path) -> Stored {
    let all = read_all(config_dir);
    let Some(project) = all.get(&key(project_root)) else { return Stored::default() };
    Stored {
        enable_all: project.get("enableAll").and_then(Value::as_bool) == Some(true),
        approved: project
            .get("approved")
            .and_then(Value::as_object)
            .map(|map| map.iter().map(|(name, entry)| (name.clone(), entry.clone())).collect())
            .unwrap_or_default(),
        refused: project
            .get("refused")
            .and_then(Value::as_array)
            .map(|list| list.iter().filter_map(Value::as_str).map(str::to_owned).collect())
            .unwrap_or_default(),
    }
}

fn write(config_dir: &Path, project_root: &Path, stored: Option<&Stored>) -> Result<PathBuf, String> {
    let mut all = read_all(config_dir);
    match stored {
        Some(stored) => {
            all.insert(
                key(project_root),
                json!({"enableAll": stored.enable_all, "approved": stored.approved, "refused": stored.refused}),
            );
        }
        None => {
            all.remove(&key(project_root));
        }
    }
    let path = file(config_dir);
    crate::fs_util::write_json_object(&path, &all).map_err(|err| format!("{}: {err}", path.display()))?;
    Ok(path)
}

/// Records an answer about server `name`, whose entry is `entry`. Returns the file written.
pub fn remember(
    config_dir: &Path,
    project_root: &Path,
    name: &str,
    entry: &Value,
    approved: bool,
) -> Result<PathBuf, String> {
    let mut stored = read(config_dir, project_root);
    stored.refused.retain(|n| n != name);
    stored.approved.remove(name);
    if approved {
        stored.approved.insert(name.to_owned(), entry.clone());
    } else {
        stored.refused.push(name.to_owned());
    }
    write(config_dir, project_root, Some(&stored))
}

/// Records "use this and all future MCP servers in this project". Returns the file written.
pub fn remember_all(config_dir: &Path, project_root: &Path) -> Result<PathBuf, String> {
    let mut stored = read(config_dir, project_root);
    stored.enable_all = true;
    write(config_dir, project_root, Some(&stored))
}

/// Forgets every answer about the project's servers; returns the file when there was something to forget.
pub fn forget(config_dir: &Path, project_root: &Path) -> Result<Option<PathBuf>, String> {
    if read(config_dir, project_root) == Stored::default() {
        return Ok(None);
    }
    write(config_dir, project_root, None).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_kept_per_project_with_the_entry_approved() {
        let config = tempfile::tempdir().unwrap();
        let (a, b) = (Path::new("/work/a"), Path::new("/work/b"));
        let entry = json!({"command": "npx", "args": ["server"]});
        remember(config.path(), a, "docs", &entry, true).unwrap();
        remember(config.path(), a, "evil", &json!({}), false).unwrap();
        assert_eq!(read(config.path(), a).approved.get("docs"), Some(&entry));
        assert_eq!(read(config.path(), a).refused, vec!["evil".to_owned()]);
        assert_eq!(read(config.path(), b), Stored::default());
        remember(config.path(), a, "evil", &json!({"command": "x"}), true).unwrap();
        assert!(read(config.path(), a).refused.is_empty());
        remember_all(config.path(), b).unwrap();
        assert!(read(config.path(), b).enable_all);
        assert!(forget(config.path(), a).unwrap().is_some());
        assert_eq!(read(config.path(), a), Stored::default());
        assert!(forget(config.path(), a).unwrap().is_none());
        assert!(read(config.path(), b).enable_all, "other projects are kept");
    }
}
