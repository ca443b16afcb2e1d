//! Adding and removing servers in the files `tandem mcp add|remove` manage, as `claude mcp` does.
//!
//! The files: `<config dir>/mcp.json` for the user scope (`mcpServers`) and the local scope
//! (`projects["<project root>"].mcpServers`), and the project's `.mcp.json` for the project scope. Claude
//! Code's `~/.claude.json` is read but never written: it holds Claude Code's own state, and a tandem write racing a
//! running Claude Code could lose it. Every write keeps the file's other keys, is pretty-printed and atomic, and a
//! file that is not valid JSON is never overwritten.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::config::{self, McpScope, PROJECT_MCP_FILE, TANDEM_MCP_FILE};

/// The files of the scopes `tandem mcp` writes.
pub struct Files<'a> {
    pub config_dir: &'a Path,
    pub project_root: &'a Path,
}

impl Files<'_> {
    /// The file a scope's servers are written to.
    pub fn file(&self, scope: McpScope) -> Result<PathBuf, String> {
        match scope {
            McpScope::User | McpScope::Local => Ok(self.config_dir.join(TANDEM_MCP_FILE)),
            McpScope::Project => Ok(self.project_root.join(PROJECT_MCP_FILE)),
            McpScope::Dynamic => Err("--mcp-config servers live only in the session that was given them".into()),
        }
    }

    /// Adds `entry` as server `name` of `scope`; a server of that name already in the scope is an error (remove it
    /// first), as in Claude Code. Returns the file written.
    pub fn add(&self, scope: McpScope, name: &str, entry: Value) -> Result<PathBuf, String> {
        if let Some(problem) = config::name_problem(name) {
            return Err(format!("invalid server name: {problem}"));
        }
        let file = self.file(scope)?;
        let mut document = read_for_update(&file)?.unwrap_or_default();
        let Some(servers) = self.servers_mut(&mut document, scope, &file, true)? else {
            return Err(format!("{}: cannot hold servers", file.display()));
        };
        if servers.contains_key(name) {
            return Err(format!("MCP server {name} already exists in {} config ({})", scope.as_str(), file.display()));
        }
        servers.insert(name.to_owned(), entry);
        write_document(&file, document)?;
        Ok(file)
    }

    /// Removes server `name` from `scope`. Returns the file written, or `None` when the scope has no such server
    /// (the file is then left untouched).
    pub fn remove(&self, scope: McpScope, name: &str) -> Result<Option<PathBuf>, String> {
        let file = self.file(scope)?;
        let Some(mut document) = read_for_update(&file)? else { return Ok(None) };
        let Some(servers) = self.servers_mut(&mut document, scope, &file, false)? else { return Ok(None) };
        if servers.remove(name).is_none() {
            return Ok(None);
        }
        write_document(&file, document)?;
        Ok(Some(file))
    }

    /// The scope's `mcpServers` object in `document`; created when `create` (else `None` when missing).
    fn servers_mut<'d>(
        &self,
        document: &'d mut Map<String, Value>,
        scope: McpScope,
        file: &Path,
        create: bool,
    ) -> Result<Option<&'d mut Map<String, Value>>, String> {
        let holder = if scope == McpScope::Local {
            let key = self.project_root.to_string_lossy().into_owned();
            let Some(projects) = object_at(document, "projects", create, file)? else { return Ok(None) };
            match object_at(projects, &key, create, file)? {
                Some(project) => project,
                None => return Ok(None),
            }
        } else {
            document
        };
        object_at(holder, "mcpServers", create, file)
    }
}

/// `map[key]` as an object: created when missing and `create`; an error when it is something else.
fn object_at<'m>(
    map: &'m mut Map<String, Value>,
    key: &str,
    create: bool,
    file: &Path,
) -> Result<Option<&'m mut Map<String, Value>>, String> {
    if !map.contains_key(key) {
        if !create {
            return Ok(None);
        }
        map.insert(key.to_owned(), Value::Object(Map::new()));
    }
    match map.get_mut(key) {
        Some(Value::Object(object)) => Ok(Some(object)),
        _ => Err(format!("{}: {key:?} is not an object; fix the file first", file.display())),
    }
}

fn read_for_update(file: &Path) -> Result<Option<Map<String, Value>>, String> {
    let text = match std::fs::read_to_string(file) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(format!("{}: cannot be read: {err}", file.display())),
    };
    if text.trim().is_empty() {
        return Ok(Some(Map::new()));
    }
    match serde_json::from_str(&text) {
        Ok(Value::Object(document)) => Ok(Some(document)),
        Ok(_) => Err(format!("{}: the top level is not a JSON object; fix the file first", file.display())),
        Err(err) => Err(format!("{}: not valid JSON ({err}); fix the file first", file.display())),
    }
}

fn write_document(file: &Path, document: Map<String, Value>) -> Result<(), String> {
    crate::fs_util::write_json_object(file, &document).map_err(|err| format!("{}: cannot write: {err}", file.display()))
}

/// A server entry from `tandem mcp add`'s arguments, in Claude Code's shape.
pub struct NewServer {
    /// `stdio` or `http` (`sse` is refused: tandem's client can't speak it).
    pub transport: String,
    pub command_or_url: String,
    pub args: Vec<String>,
    /// `KEY=value` pairs.
    pub env: Vec<String>,
    /// `Name: value` pairs.
    pub headers: Vec<String>,
}

impl NewServer {
    /// The entry, or what is wrong with the arguments.
    pub fn entry(&self) -> Result<Value, String> {
        let mut entry = Map::new();
        match self.transport.as_str() {
            "stdio" => {
                if !self.headers.is_empty() {
                    return Err("--header is for http servers".into());
                }
                entry.insert("type".into(), "stdio".into());
                entry.insert("command".into(), self.command_or_url.clone().into());
                entry.insert("args".into(), self.args.clone().into());
                let mut env = Map::new();
                for pair in &self.env {
                    let (key, value) = pair
                        .split_once('=')
                        .filter(|(key, _)| !key.is_empty())
                        .ok_or_else(|| format!("--env {pair:?}: use KEY=value"))?;
                    env.insert(key.to_owned(), value.into());
                }
                entry.insert("env".into(), Value::Object(env));
            }
            "http" => {
                if !self.env.is_empty() {
                    return Err("--env is for stdio servers (an http server's secrets go in --header)".into());
                }
                if !self.args.is_empty() {
                    return Err(format!("an http server takes no arguments after the url: {:?}", self.args));
                }
                let url = &self.command_or_url;
                if !(url.starts_with("http://") || url.starts_with("https://") || url.starts_with("${")) {
                    return Err(format!("{url:?} is not an http:// or https:// url"));
                }
                entry.insert("type".into(), "http".into());
                entry.insert("url".into(), url.clone().into());
                let mut headers = Map::new();
                for pair in &self.headers {
                    let (key, value) = pair
                        .split_once(':')
                        .filter(|(key, _)| !key.trim().is_empty())
                        .ok_or_else(|| format!("--header {pair:?}: use \"Name: value\""))?;
                    headers.insert(key.trim().to_owned(), value.trim().into());
                }
                if !headers.is_empty() {
                    entry.insert("headers".into(), Value::Object(headers));
                }
            }
            "sse" => {
                return Err("the legacy SSE transport is not supported by tandem's MCP client; use the server's \
                            streamable HTTP endpoint with --transport http"
                    .into());
            }
            other => return Err(format!("unknown transport {other:?}: use stdio or http")),
        }
        Ok(Value::Object(entry))
    }
}

/// Checks an entry the way a session will read it; an unset `${VAR}` is fine (it may be set when the session
/// starts) and is returned as a warning.
pub fn check_entry(name: &str, entry: &Value) -> Result<Option<String>, String> {
    match config::parse_entry_for_check(name, entry) {
        Ok(()) => Ok(None),
        Err(unset @ config::EntryError::UnsetVariable(_)) => Ok(Some(unset.to_string())),
        Err(why) => Err(why.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn files(dir: &Path) -> (PathBuf, PathBuf) {
        let config_dir = dir.join("config");
        let root = dir.join("repo");
        std::fs::create_dir_all(&root).unwrap();
        (config_dir, root)
    }

    #[test]
    fn local_user_and_project_scopes_write_their_own_places_and_keep_other_keys() {
        let dir = tempfile::tempdir().unwrap();
        let (config_dir, root) = files(dir.path());
        std::fs::create_dir_all(&config_dir).unwrap();
        std::fs::write(config_dir.join("mcp.json"), "{\"keep\": 1}").unwrap();
        let files = Files { config_dir: &config_dir, project_root: &root };
        files.add(McpScope::Local, "a", json!({"command": "x"})).unwrap();
        files.add(McpScope::User, "b", json!({"command": "y"})).unwrap();
        files.add(McpScope::Project, "c", json!({"command": "z"})).unwrap();
        let user: Value = serde_json::from_str(&std::fs::read_to_string(config_dir.join("mcp.json")).unwrap()).unwrap();
        assert_eq!(user["keep"], 1);
        assert_eq!(user["mcpServers"]["b"]["command"], "y");
        assert_eq!(user["projects"][root.to_string_lossy().as_ref()]["mcpServers"]["a"]["command"], "x");
        let project: Value = serde_json::from_str(&std::fs::read_to_string(root.join(".mcp.json")).unwrap()).unwrap();
        assert_eq!(project["mcpServers"]["c"]["command"], "z");

        let again = files.add(McpScope::Local, "a", json!({"command": "x"})).unwrap_err();
        assert!(again.contains("already exists in local config"), "{again}");
        assert!(files.remove(McpScope::User, "a").unwrap().is_none(), "a is local, not user");
        assert!(files.remove(McpScope::Local, "a").unwrap().is_some());
        assert!(files.remove(McpScope::Local, "a").unwrap().is_none());
    }

    #[test]
    fn a_broken_file_is_never_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let (config_dir, root) = files(dir.path());
        std::fs::write(root.join(".mcp.json"), "{ not json").unwrap();
        let files = Files { config_dir: &config_dir, project_root: &root };
        let error = files.add(McpScope::Project, "c", json!({"command": "z"})).unwrap_err();
        assert!(error.contains("not valid JSON"), "{error}");
        assert_eq!(std::fs::read_to_string(root.join(".mcp.json")).unwrap(), "{ not json");
    }

    #[test]
    fn arguments_become_claude_code_entries() {
        let stdio = NewServer {
            transport: "stdio".into(),
            command_or_url: "npx".into(),
            args: vec!["-y".into(), "server".into()],
            env: vec!["KEY=v=1".into()],
            headers: vec![],
        };
        assert_eq!(
            stdio.entry().unwrap(),
            json!({"type": "stdio", "command": "npx", "args": ["-y", "server"], "env": {"KEY": "v=1"}})
        );
        let http = NewServer {
            transport: "http".into(),
            command_or_url: "https://example.com/mcp".into(),
            args: vec![],
            env: vec![],
            headers: vec!["Authorization: Bearer ${TOKEN}".into()],
        };
        assert_eq!(
            http.entry().unwrap(),
            json!({"type": "http", "url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}})
        );
        let sse = NewServer { transport: "sse".into(), ..http };
        assert!(sse.entry().unwrap_err().contains("not supported"));
        let bad_env = NewServer { env: vec!["novalue".into()], ..stdio };
        assert!(bad_env.entry().unwrap_err().contains("KEY=value"));
        assert!(check_entry("s", &json!({"command": "${UNSET_FOR_TANDEM_TEST}"})).unwrap().is_some());
        assert!(check_entry("s", &json!({"command": "x", "bogus": 1})).is_err());
    }
}
