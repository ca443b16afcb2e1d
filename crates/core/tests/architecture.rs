//! Core's layers, checked: every top-level module of `src/` sits in one layer of [`LAYERS`] and imports only
//! modules of lower layers. An import upwards or sideways (which is how import cycles start) fails here, naming
//! the file; a new module must be placed in the table. The protocol is a crate of its own below all of them
//! (`tandem-protocol`), so the compiler already keeps it a leaf.
//!
//! Read from the source as text: every `crate::<module>` path and every name in a `use crate::{…}` group, in
//! shipped code (test files and the `#[cfg(test)] mod tests` at the end of a file are left out).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Bottom first. A module may import any module of a lower layer, none of its own or a higher one.
const LAYERS: &[(&str, &[&str])] = &[
    ("paths and files: import nothing of core", &["fs_util"]),
    (
        "foundations: on paths and files alone",
        &["diff", "events", "front_matter", "heap", "models", "safe_git", "shell", "shell_env"],
    ),
    (
        "what a session knows and keeps, each on foundations alone",
        &["agents", "memory", "reasoning", "rewind", "sandbox", "skills", "spend", "trust"],
    ),
    ("the model APIs", &["provider"]),
    ("what a request is built from", &["config", "context", "inspect", "prompt"]),
    ("services the tools use", &["session", "web"]),
    ("the tools", &["tools"]),
    ("what extends the tools: hooks and MCP servers", &["hooks", "mcp"]),
    ("what decides: permissions, commands, shutdown", &["commands", "permissions", "shutdown"]),
    ("the agent", &["agent"]),
    ("the composition root: a session built from options, files and the environment", &["setup"]),
];

#[test]
fn core_imports_only_downwards() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let layer_of: BTreeMap<&str, usize> =
        LAYERS.iter().enumerate().flat_map(|(layer, (_, modules))| modules.iter().map(move |m| (*m, layer))).collect();
    let mut wrong = Vec::new();
    for (module, files) in modules(&src) {
        let Some(&layer) = layer_of.get(module.as_str()) else {
            wrong.push(format!("{module}: not in LAYERS (place it in the layer it belongs to)"));
            continue;
        };
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            for target in imported_modules(shipped(&text)) {
                let Some(&target_layer) = layer_of.get(target.as_str()) else { continue };
                if target != module && target_layer >= layer {
                    wrong.push(format!(
                        "{} imports {target} (\"{}\"), which is not below its own layer (\"{}\")",
                        file.strip_prefix(&src).unwrap().display(),
                        LAYERS[target_layer].0,
                        LAYERS[layer].0,
                    ));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "imports against core's layers:\n{}", wrong.join("\n"));
}

/// Each top-level module of `src` with its files (`lib.rs` is the crate root, not a module).
fn modules(src: &Path) -> BTreeMap<String, Vec<PathBuf>> {
    let mut out: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
    for entry in std::fs::read_dir(src).unwrap().flatten() {
        let path = entry.path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            out.entry(name).or_default().extend(rust_files(&path));
        } else if name != "lib" && path.extension().is_some_and(|ext| ext == "rs") {
            out.entry(name).or_default().push(path);
        }
    }
    out
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        let name = path.file_name().unwrap().to_string_lossy();
        if path.is_dir() {
            out.extend(rust_files(&path));
        } else if name.ends_with(".rs") && name != "tests.rs" && !name.ends_with("_tests.rs") {
            out.push(path);
        }
    }
    out
}

/// The text without a trailing `#[cfg(test)] mod tests { … }` (a `mod tests;` declaration is not the end of
/// the shipped code: cutting there hid most of `shell.rs`).
fn shipped(text: &str) -> &str {
    text.find("#[cfg(test)]\nmod tests {").map_or(text, |at| &text[..at])
}

/// The top-level modules named after `crate::` (`crate::tools::x`, and each name of `use crate::{tools, web::y}`).
fn imported_modules(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (at, _) in text.match_indices("crate::") {
        if text[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let rest = &text[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let inner = &group[..group.find('}').unwrap_or(group.len())];
            out.extend(top_level_names(inner));
        } else {
            out.push(identifier(rest));
        }
    }
    out
}

/// The first path segment of each comma-separated item of a `use` group, nested groups skipped.
fn top_level_names(group: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut depth = 0;
    let mut start = true;
    for (at, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => start = true,
            c if start && (c.is_alphabetic() || c == '_') => {
                names.push(identifier(&group[at..]));
                start = false;
            }
            _ => {}
        }
    }
    names
}

fn identifier(text: &str) -> String {
    text.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect()
}

/// Every crate of the workspace uses each dependency it declares (named in its code as `name::` or `use name`),
/// so that nothing is compiled for nothing.
#[test]
fn every_dependency_is_used() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut unused = Vec::new();
    for dir in ["crates/protocol", "crates/core", "crates/tui", "crates/testkit", "tests"] {
        let root = workspace.join(dir);
        let manifest: toml::Table = std::fs::read_to_string(root.join("Cargo.toml")).unwrap().parse().unwrap();
        let code: String = ["src", "tests", "benches", "sdk"]
            .iter()
            .flat_map(|sub| all_rust_files(&root.join(sub)))
            .map(|file| std::fs::read_to_string(file).unwrap())
            .collect();
        for name in dependency_names(&manifest) {
            let ident = name.replace('-', "_");
            let used = code.contains(&format!("{ident}::")) || code.contains(&format!("use {ident}"));
            if !used {
                unused.push(format!("{dir}: {name}"));
            }
        }
    }
    assert!(unused.is_empty(), "dependencies declared but never used:\n{}", unused.join("\n"));
}

/// The names under every `[dependencies]`, `[dev-dependencies]` and `[target.….dependencies]` of a manifest.
fn dependency_names(manifest: &toml::Table) -> Vec<String> {
    let mut tables: Vec<&toml::Table> = ["dependencies", "dev-dependencies"]
        .iter()
        .filter_map(|key| manifest.get(*key).and_then(toml::Value::as_table))
        .collect();
    if let Some(targets) = manifest.get("target").and_then(toml::Value::as_table) {
        for target in targets.values().filter_map(toml::Value::as_table) {
            tables.extend(["dependencies", "dev-dependencies"].iter().filter_map(|key| target.get(*key)?.as_table()));
        }
    }
    tables.into_iter().flat_map(|table| table.keys().cloned()).collect()
}

fn all_rust_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut out = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(all_rust_files(&path));
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            out.push(path);
        }
    }
    out
}
