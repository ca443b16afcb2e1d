//! The `sandbox` key of a settings file (Claude Code's names). Keys that narrow what commands may do are taken
//! from every file; keys that widen it (switching the sandbox off, running commands outside it, more writable
//! or readable paths) only from the user's own files and flags: a repository could commit the others.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::{Scope, Settings, resolve_path_pattern};

const SANDBOX_KEYS: &[&str] = &[
    "enabled",
    "failIfUnavailable",
    "autoAllowBashIfSandboxed",
    "excludedCommands",
    "allowUnsandboxedCommands",
    "filesystem",
    "network",
];
const FILESYSTEM_KEYS: &[&str] = &["allowRead", "denyRead", "allowWrite", "denyWrite"];

impl Settings {
    pub(super) fn read_sandbox(
        &mut self,
        scope: Scope,
        file: &Path,
        document: &Map<String, Value>,
        root: &Path,
        home: Option<&Path>,
    ) {
        let Some(sandbox) = document.get("sandbox") else { return };
        let Value::Object(sandbox) = sandbox else {
            self.problem(file, "\"sandbox\" is not an object; it is ignored");
            return;
        };
        let trusted = matches!(scope, Scope::User | Scope::ClaudeUser | Scope::Flag);
        for key in sandbox.keys().filter(|key| !SANDBOX_KEYS.contains(&key.as_str())) {
            self.problem(file, format!("sandbox.{key} is not supported by tandem; it is ignored"));
        }
        for (key, value) in sandbox {
            match key.as_str() {
                "enabled" | "failIfUnavailable" | "autoAllowBashIfSandboxed" | "allowUnsandboxedCommands" => {
                    let Some(on) = value.as_bool() else {
                        self.problem(file, format!("sandbox.{key} is not true or false; it is ignored"));
                        continue;
                    };
                    self.sandbox_flag(file, key, on, trusted);
                }
                "excludedCommands" => {
                    let Some(list) = self.string_list(file, "sandbox.excludedCommands", value) else { continue };
                    if trusted {
                        self.sandbox.excluded_commands.extend(list);
                    } else if !list.is_empty() {
                        self.untrusted(file, "sandbox.excludedCommands");
                    }
                }
                "filesystem" => self.read_sandbox_filesystem(file, value, trusted, root, home),
                "network" => self.problem(
                    file,
                    "sandbox.network is not enforced by tandem: Landlock filters TCP as a whole, not by domain or \
                     socket, and tandem runs no proxy. Commands tandem allows on its own judgement have no network; \
                     commands your rules allow have all of it (ignored)",
                ),
                _ => {}
            }
        }
    }

    fn sandbox_flag(&mut self, file: &Path, key: &str, on: bool, trusted: bool) {
        // Which value of each flag widens what commands may do.
        let widening = match key {
            "enabled" | "failIfUnavailable" => !on,
            _ => on,
        };
        if widening && !trusted {
            self.untrusted(file, &format!("sandbox.{key}: {on}"));
            return;
        }
        let settings = &mut self.sandbox;
        match key {
            "enabled" => settings.enabled = Some(on),
            "failIfUnavailable" => settings.fail_if_unavailable = on,
            "autoAllowBashIfSandboxed" => settings.auto_allow_bash_if_sandboxed = on,
            _ => settings.allow_unsandboxed_commands = on,
        }
    }

    fn read_sandbox_filesystem(&mut self, file: &Path, value: &Value, trusted: bool, root: &Path, home: Option<&Path>) {
        let Value::Object(filesystem) = value else {
            self.problem(file, "sandbox.filesystem is not an object; it is ignored");
            return;
        };
        for key in filesystem.keys().filter(|key| !FILESYSTEM_KEYS.contains(&key.as_str())) {
            self.problem(file, format!("sandbox.filesystem.{key} is not supported by tandem; it is ignored"));
        }
        let cwd = root.to_path_buf();
        let home = home.map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from("/"));
        for key in FILESYSTEM_KEYS {
            let Some(value) = filesystem.get(*key) else { continue };
            let name = format!("sandbox.filesystem.{key}");
            let Some(list) = self.string_list(file, &name, value) else { continue };
            let deny = key.starts_with("deny");
            if !deny && !trusted && !list.is_empty() {
                self.untrusted(file, &name);
                continue;
            }
            for pattern in list {
                if pattern.contains(['*', '?', '[']) {
                    self.problem(
                        file,
                        format!(
                            "{name} {pattern:?}: the sandbox takes paths, not patterns (a deny rule can name a \
                             pattern for tandem's own checks); ignored"
                        ),
                    );
                    continue;
                }
                let mut paths = vec![resolve_path_pattern(&pattern, root, &cwd, &home)];
                // A deny list reads `/x` both ways (under the project and absolute), as deny rules do.
                if deny && pattern.starts_with('/') && !pattern.starts_with("//") {
                    paths.push(PathBuf::from(&pattern));
                }
                let target = match *key {
                    "allowRead" => &mut self.sandbox.allow_read,
                    "denyRead" => &mut self.sandbox.deny_read,
                    "allowWrite" => &mut self.sandbox.allow_write,
                    _ => &mut self.sandbox.deny_write,
                };
                target.extend(paths);
            }
        }
    }

    fn string_list(&mut self, file: &Path, name: &str, value: &Value) -> Option<Vec<String>> {
        let list: Option<Vec<String>> =
            value.as_array().and_then(|items| items.iter().map(|item| item.as_str().map(str::to_owned)).collect());
        if list.is_none() {
            self.problem(file, format!("{name} is not an array of strings; it is ignored"));
        }
        list
    }

    fn untrusted(&mut self, file: &Path, what: &str) {
        self.problem(
            file,
            format!(
                "{what} would let commands do more, and a file inside the project can't decide that (a repository \
                 could commit it); set it in your user settings (ignored)"
            ),
        );
    }
}
