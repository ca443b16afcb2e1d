//! What the guard knows of a repository directory: which entries are git's own data (git writes them and they
//! run nothing), which of that data can still make git run a program when you go on with an operation (a rebase's
//! steps and strategy, an object store's alternates), and what a valid `HEAD` says.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// What the guard watches inside git's own data: the alternates of an object store (other repositories git reads
/// objects from: one naming another project lets `git show` print its files) and the steps of an operation in
/// progress.
pub(super) fn watched_in_git_data(path: &Path) -> Vec<PathBuf> {
    let names: &[&str] = match path.file_name().and_then(|name| name.to_str()) {
        Some("objects") => &["info/alternates", "info/http-alternates"],
        Some("rebase-merge") => &["git-rebase-todo", "strategy"],
        Some("sequencer") => &["todo", "opts"],
        _ => &[],
    };
    names.iter().map(|name| path.join(name)).collect()
}

/// What tells git how to go on with a rebase, cherry-pick or revert in progress: its steps and its merge
/// strategy. Each can name a program that runs when you type `--continue`.
pub(super) fn is_step_file(path: &Path) -> bool {
    let name = path.file_name().and_then(|name| name.to_str());
    let dir = path.parent().and_then(Path::file_name).and_then(|name| name.to_str());
    matches!(
        (dir, name),
        (Some("rebase-merge"), Some("git-rebase-todo" | "strategy")) | (Some("sequencer"), Some("todo" | "opts"))
    )
}

/// The programs a step file makes git run: a todo list's `exec` (`x`) steps; a merge strategy that is not one of
/// git's own (git runs `git-merge-<name>`, and a name like `/../tools/x` reaches a program in the workspace).
pub(super) fn programs_in(path: &Path, content: &[u8]) -> BTreeSet<String> {
    const BUILT_IN: &[&str] = &["ort", "recursive", "resolve", "octopus", "ours", "subtree"];
    let text = String::from_utf8_lossy(content);
    let foreign = |strategy: &str| !BUILT_IN.contains(&strategy);
    match path.file_name().and_then(|name| name.to_str()) {
        Some("strategy") => Some(text.trim().to_owned()).filter(|name| foreign(name)).into_iter().collect(),
        // Read loosely, so that no form git's config parser accepts (`[options] strategy = x` on one line, any
        // case, quotes, a comment after it) slips by: anything that could be a strategy key counts.
        Some("opts") => text
            .to_ascii_lowercase()
            .lines()
            .flat_map(|line| line.match_indices("strategy").map(|(at, key)| line[at + key.len()..].to_owned()))
            .filter_map(|rest| rest.trim_start().strip_prefix('=').map(str::to_owned))
            .map(|value| value.split([';', '#']).next().unwrap_or_default().trim().trim_matches('"').to_owned())
            .filter(|name| foreign(name))
            .collect(),
        _ => text
            .lines()
            .filter_map(|line| {
                let line = line.trim_start();
                let (step, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
                matches!(step, "exec" | "x").then(|| rest.trim().to_owned())
            })
            .collect(),
    }
}

pub(super) fn adds_programs(path: &Path, before: &[u8], now: &[u8]) -> bool {
    programs_in(path, now).difference(&programs_in(path, before)).next().is_some()
}

/// What git accepts in `HEAD`: a symbolic ref or an object name.
pub(super) fn valid_head(text: &[u8]) -> bool {
    let text = String::from_utf8_lossy(text);
    let text = text.trim_end();
    text.starts_with("ref: refs/") || (matches!(text.len(), 40 | 64) && text.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// `refs` or `objects` directly inside a `.git` directory.
pub(super) fn is_repository_store(path: &Path) -> bool {
    path.file_name().is_some_and(|name| name == "refs" || name == "objects")
        && path.parent().and_then(Path::file_name).is_some_and(|dir| dir == ".git")
}

/// An entry directly in a `.git` directory whose name git never reads (`refs.bak`).
pub(super) fn inert_in_repository(path: &Path) -> bool {
    const READ_BY_GIT: &[&str] = &[
        "config",
        "config.worktree",
        "hooks",
        "info",
        "modules",
        "worktrees",
        "commondir",
        "gitdir",
        "branches",
        "remotes",
    ];
    path.parent().and_then(Path::file_name).is_some_and(|dir| dir == ".git")
        && path.file_name().and_then(|name| name.to_str()).is_some_and(|name| !READ_BY_GIT.contains(&name))
}

/// `HEAD` directly inside a `.git` directory.
pub(super) fn is_repository_head(path: &Path) -> bool {
    path.file_name().is_some_and(|name| name == "HEAD")
        && path.parent().and_then(Path::file_name).is_some_and(|dir| dir == ".git")
}

pub(super) fn git_data_name(path: &Path) -> bool {
    let Some(name) = path.file_name().and_then(|name| name.to_str()) else { return false };
    matches!(
        name,
        "objects"
            | "refs"
            | "logs"
            | "index"
            | "packed-refs"
            | "COMMIT_EDITMSG"
            | "lost-found"
            | "rr-cache"
            | "rebase-merge"
            | "rebase-apply"
            | "sequencer"
            | "MERGE_MSG"
            | "SQUASH_MSG"
            | "AUTO_MERGE"
            | "gc.pid"
            | "gc.log"
            | "shallow"
            | "FETCH_HEAD"
    ) || name.ends_with("HEAD")
        || name.ends_with(".lock")
        || name.starts_with(super::MOVED_ASIDE_PREFIX)
}
