//! No crate declares a dependency it does not use: each one named in a `Cargo.toml` of the workspace must be
//! used (as `name::` or `use name`) by that crate's code for that section (`[dependencies]`: `src/`;
//! `[dev-dependencies]`: `src/`, `tests/`, `benches/`). An unused dependency costs every build and every
//! review, and `cargo` does not say so. Checked here rather than by an installed tool, so CI needs nothing more.

// Test code: a panic is how a failure is reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

/// Dependencies used without being named in code, with why.
const USED_WITHOUT_A_PATH: &[(&str, &str)] = &[];

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("tests/ is inside the workspace").to_path_buf()
}

/// The crate directories: every workspace member.
fn members(root: &Path) -> Vec<PathBuf> {
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).expect("the workspace manifest");
    let line = manifest.lines().find(|line| line.starts_with("members")).expect("a members list");
    line.split('"').skip(1).step_by(2).map(|member| root.join(member)).collect()
}

/// The dependency names of `section` (`dependencies`, `dev-dependencies`) in a member's manifest, the
/// platform-specific ones (`[target.'cfg(unix)'.dependencies]`) included.
fn dependencies(manifest: &str, section: &str) -> Vec<String> {
    let (plain, platform) = (format!("[{section}]"), format!(".{section}]"));
    let mut in_section = false;
    let mut names = Vec::new();
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_section = line == plain || (line.starts_with("[target.") && line.ends_with(&platform));
        } else if in_section && !line.is_empty() && !line.starts_with('#') {
            names.extend(line.split(['=', '.']).next().map(|key| key.trim().to_owned()));
        }
    }
    names
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            out.push(path);
        }
    }
}

/// Whether the code names the crate: a path (`name::`), a `use name`, an `extern crate name`, or a derive/attribute
/// of it (`#[name(`, as `#[serde(` also uses serde's derive).
fn names(code: &str, name: &str) -> bool {
    let name = name.replace('-', "_");
    [format!("{name}::"), format!("use {name}"), format!("extern crate {name}")].iter().any(|pattern| {
        code.match_indices(pattern.as_str()).any(|(at, _)| {
            let before = code[..at].chars().next_back();
            !before.is_some_and(|ch| ch.is_alphanumeric() || ch == '_')
        })
    })
}

#[test]
fn every_declared_dependency_is_used() {
    let root = workspace_root();
    let mut unused = Vec::new();
    for member in members(&root) {
        let manifest = std::fs::read_to_string(member.join("Cargo.toml")).expect("a member's manifest");
        for (section, dirs) in [("dependencies", &["src"][..]), ("dev-dependencies", &["src", "tests", "benches"][..])]
        {
            let mut files = Vec::new();
            for dir in dirs {
                rust_files(&member.join(dir), &mut files);
            }
            let code: String = files.iter().filter_map(|file| std::fs::read_to_string(file).ok()).collect();
            for name in dependencies(&manifest, section) {
                if !names(&code, &name) && !USED_WITHOUT_A_PATH.iter().any(|(used, _)| *used == name) {
                    unused.push(format!("{}: [{section}] {name}", member.display()));
                }
            }
        }
    }
    assert!(unused.is_empty(), "dependencies declared but not used (remove them):\n{}", unused.join("\n"));
}

#[test]
fn the_check_sees_a_dependency_that_is_not_used() {
    let manifest = "[package]\nname = \"x\"\n\n[dependencies]\nserde.workspace = true\nsmall-thing = \"1\"\n\n[target.'cfg(unix)'.dependencies]\nlibc = \"0.2\"\n\n[dev-dependencies]\ntempfile = \"3\"\n";
    assert_eq!(dependencies(manifest, "dependencies"), ["serde", "small-thing", "libc"]);
    assert_eq!(dependencies(manifest, "dev-dependencies"), ["tempfile"]);
    assert!(names("use serde::Deserialize;", "serde"));
    assert!(names("let x = small_thing::f();", "small-thing"));
    assert!(!names("let x = not_small_thing::f();", "small-thing"), "a longer name is another crate");
    assert!(!names("// tempfile is not named here", "tempfile"));
}
