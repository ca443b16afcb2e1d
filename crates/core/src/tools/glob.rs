//! `Glob`: files whose path matches a glob pattern, most recently modified first.
//!
//! Patterns match paths relative to the search directory, as in Claude Code: `*.rs` finds Rust files in that
//! directory only, `**/*.rs` at any depth. Literal leading components (`src/` in `src/**/*.rs`, or an absolute
//! prefix) move the walk's root down, and a pattern without `**` bounds the walk's depth, so narrow patterns
//! don't walk the whole tree.

use std::path::{Component, Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use futures::future::BoxFuture;
use globset::{GlobBuilder, GlobMatcher};
use ignore::{WalkBuilder, WalkState};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::typed::TypedTool;
use super::{FoundUnit, HiddenPaths, ResultView, Risk, ToolContext, ToolOutput};

/// Files listed at most.
pub const MAX_RESULTS: usize = 100;

const DESCRIPTION: &str = "Fast file pattern matching: finds files by name, most recently modified first.\n\
\n\
- pattern is a glob matched against paths relative to the search directory: `**/*.rs` finds Rust files at \
any depth, `src/**/*.{ts,tsx}` under src/, `*.toml` only in the search directory itself (not in \
subdirectories).\n\
- path: the directory to search in (default: the working directory).\n\
- Files ignored by .gitignore/.ignore are skipped, and hidden files unless the pattern names them (`**/.env`).\n\
- Returns absolute paths, newest first, at most 100 (the output says how many more matched).\n\
- Use Glob to find files by name; use Grep to search their contents.";

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// The glob pattern to match files against
    pattern: String,
    /// The directory to search in. Defaults to the working directory
    path: Option<String>,
}

pub struct GlobTool;

impl TypedTool for GlobTool {
    type Input = Input;
    const NAME: &'static str = "Glob";

    fn description(&self) -> std::borrow::Cow<'static, str> {
        DESCRIPTION.into()
    }

    fn is_read_only(&self) -> bool {
        true
    }

    /// Where the search really starts: a pattern's literal leading part moves it (`../../**/id_rsa` searches two
    /// levels up).
    fn permission_subject(&self, input: &Value, cwd: &Path) -> super::Subject {
        let given = input.get("path").and_then(Value::as_str).unwrap_or(".");
        let root = crate::fs_util::resolve_path(cwd, given);
        let pattern = input.get("pattern").and_then(Value::as_str).unwrap_or_default();
        let searched = search_root(&root, pattern);
        let starts_at = (searched != root).then(|| root.to_string_lossy().into_owned());
        super::Subject::File(super::FileAccess { starts_at, ..super::FileAccess::read(searched.to_string_lossy()) })
    }

    fn kind(&self) -> super::ToolKind {
        super::ToolKind::Search
    }

    fn risk(&self) -> Risk {
        Risk::Low
    }

    fn target_path(&self, input: &Value, ctx: &ToolContext) -> Option<PathBuf> {
        Some(ctx.resolve(input.get("path").and_then(Value::as_str).unwrap_or(".")))
    }

    fn result_view(&self, _input: &Value, content: &str) -> Option<ResultView> {
        Some(glob_view(content))
    }

    fn call<'a>(&'a self, input: Input, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move {
            let root = ctx.resolve(input.path.as_deref().unwrap_or("."));
            let cancel = ctx.cancel.clone();
            let hidden = ctx.hidden.clone();
            let started = std::time::Instant::now();
            match tokio::task::spawn_blocking(move || glob(&input.pattern, &root, &cancel, hidden)).await {
                Ok(Ok(text)) => {
                    let structured = structured_result(&text, started.elapsed());
                    ToolOutput::ok(text).with_structured(structured)
                }
                Ok(Err(message)) => ToolOutput::error(message),
                Err(err) => ToolOutput::error(format!("Glob failed: {err}")),
            }
        })
    }
}

/// The result as Claude Code gives it to SDK hosts (`tool_use_result`): `filenames` (those listed), `numFiles`,
/// `truncated` (more matched than are listed) and `durationMs`.
fn structured_result(text: &str, took: std::time::Duration) -> Value {
    let ResultView::Found { count, items, .. } = glob_view(text) else { return Value::Null };
    serde_json::json!({
        "filenames": items,
        "durationMs": u64::try_from(took.as_millis()).unwrap_or(u64::MAX),
        "numFiles": items.len(),
        "truncated": count > items.len(),
    })
}

fn glob(pattern: &str, root: &Path, cancel: &CancellationToken, hidden: Option<HiddenPaths>) -> Result<String, String> {
    if pattern.trim().is_empty() {
        return Err("pattern is empty; give a glob like **/*.rs".to_string());
    }
    if !root.is_dir() {
        return Err(if root.exists() {
            format!("{} is not a directory; Glob searches directories.", root.display())
        } else {
            format!("Directory does not exist: {}", root.display())
        });
    }
    let (root, rest) = split_literal_prefix(root, pattern);
    if rest.is_empty() {
        // The whole pattern is a literal path.
        return Ok(if root.is_file() { root.display().to_string() } else { NO_FILES.to_string() });
    }
    if !root.is_dir() {
        return Ok(NO_FILES.to_string());
    }
    let matcher = GlobBuilder::new(&rest)
        .literal_separator(true)
        .build()
        .map_err(|err| format!("Invalid glob pattern {pattern:?}: {err}"))?
        .compile_matcher();

    let mut walker = WalkBuilder::new(&root);
    walker.require_git(false).threads(0).hidden(!names_hidden(&rest));
    super::skip_hidden(&mut walker, &root, hidden)?;
    if !rest.contains("**") {
        walker.max_depth(Some(rest.split('/').count()));
    }
    let found = walk(&walker, &root, &matcher, cancel);
    if cancel.is_cancelled() {
        return Err("Search was interrupted.".to_string());
    }
    Ok(format_results(found))
}

/// The directory a Glob search really walks: `root` with the pattern's literal leading components applied,
/// resolved as the kernel resolves it (symlinks before `..`). The permission policy judges this directory.
pub fn search_root(root: &Path, pattern: &str) -> PathBuf {
    split_literal_prefix(root, pattern).0
}

/// Moves literal leading components of `pattern` (no glob metacharacters) into the root: `src/**/*.rs` under
/// `/p` is `**/*.rs` under `/p/src`; an absolute pattern replaces the root.
fn split_literal_prefix(root: &Path, pattern: &str) -> (PathBuf, String) {
    let mut base = if pattern.starts_with('/') { PathBuf::from("/") } else { root.to_path_buf() };
    let parts: Vec<&str> = pattern.split('/').filter(|p| !p.is_empty()).collect();
    let literal = parts.iter().take_while(|p| !p.contains(['*', '?', '[', ']', '{', '}'])).count();
    // A fully literal pattern (`Cargo.toml`) leaves nothing to match: the caller checks the path itself.
    for part in &parts[..literal] {
        base.push(part);
    }
    let rest = parts[literal..].join("/");
    // What the kernel can't resolve for sure stays as written (the policy takes it for outside): lexically,
    // `../home/.ssh/id_rsa` with `zz/../../../../work/*` would have been judged as the workspace.
    let base = crate::fs_util::resolve_like_kernel(&base).unwrap_or(base);
    (base, rest)
}

/// Whether the pattern names hidden files or directories explicitly (a component starting with `.`).
fn names_hidden(pattern: &str) -> bool {
    pattern.split('/').any(|part| part.starts_with('.') && part != "." && part != "..")
}

fn walk(
    walker: &WalkBuilder,
    root: &Path,
    matcher: &GlobMatcher,
    cancel: &CancellationToken,
) -> Vec<(PathBuf, Option<SystemTime>)> {
    let found = Mutex::new(Vec::new());
    walker.build_parallel().run(|| {
        let found = &found;
        Box::new(move |entry| {
            if cancel.is_cancelled() {
                return WalkState::Quit;
            }
            let Ok(entry) = entry else { return WalkState::Continue };
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                return WalkState::Continue;
            }
            let path = entry.path();
            let Ok(relative) = path.strip_prefix(root) else { return WalkState::Continue };
            if relative.components().all(|c| matches!(c, Component::Normal(_))) && matcher.is_match(relative) {
                let mtime = entry.metadata().ok().and_then(|m| m.modified().ok());
                found.lock().unwrap_or_else(|p| p.into_inner()).push((path.to_path_buf(), mtime));
            }
            WalkState::Continue
        })
    });
    found.into_inner().unwrap_or_else(|p| p.into_inner())
}

const NO_FILES: &str = "No files found";

/// A Glob's result for people, read back from the text [`format_results`] wrote: the files listed, and the total
/// its closing note states when not all are.
fn glob_view(content: &str) -> ResultView {
    let items: Vec<String> = content
        .lines()
        .filter(|line| !line.is_empty() && !line.starts_with('(') && *line != NO_FILES)
        .map(str::to_owned)
        .collect();
    let total = content.lines().rev().find_map(|line| {
        let rest = line.strip_prefix('(')?.split_once(": ")?.1;
        rest.split(' ').next()?.parse::<usize>().ok()
    });
    ResultView::Found { count: total.unwrap_or(items.len()), unit: FoundUnit::File, items }
}

fn format_results(mut found: Vec<(PathBuf, Option<SystemTime>)>) -> String {
    if found.is_empty() {
        return NO_FILES.to_string();
    }
    found.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let total = found.len();
    let mut out: Vec<String> = found.iter().take(MAX_RESULTS).map(|(p, _)| p.display().to_string()).collect();
    if total > MAX_RESULTS {
        out.push(format!(
            "({} more not shown: {total} files matched. Use a more specific pattern or path.)",
            total - MAX_RESULTS
        ));
    }
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::Tool;
    use serde_json::json;
    use std::fs;
    use std::time::Duration;

    async fn glob_tool(dir: &Path, input: Value) -> ToolOutput {
        GlobTool.run(input.into(), &ToolContext::new(dir.to_path_buf())).await
    }

    /// The card's count comes from Glob's own text, also the total its note gives when the list is cut.
    #[tokio::test]
    async fn hosts_get_the_result_as_claude_codes_object() {
        let dir = tempfile::tempdir().unwrap();
        for n in 0..MAX_RESULTS + 3 {
            touch(&dir.path().join(format!("f{n}.txt")), 10);
        }
        let out = glob_tool(dir.path(), json!({"pattern": "*.txt"})).await;
        let structured = out.structured.expect("Claude Code's object for hosts");
        assert_eq!(structured["numFiles"], MAX_RESULTS);
        assert_eq!(structured["truncated"], true);
        assert_eq!(structured["filenames"].as_array().unwrap().len(), MAX_RESULTS);
        assert!(structured["durationMs"].is_u64());
    }

    #[tokio::test]
    async fn result_view_reads_back_the_text() {
        let dir = tempfile::tempdir().unwrap();
        for n in 0..MAX_RESULTS + 3 {
            touch(&dir.path().join(format!("f{n}.txt")), 10);
        }
        let input = json!({"pattern": "*.txt"});
        let out = glob_tool(dir.path(), input.clone()).await;
        let Some(ResultView::Found { count, unit, items }) = Tool::result_view(&GlobTool, &input, &out.content) else {
            panic!("not a search view")
        };
        assert_eq!((count, unit, items.len()), (MAX_RESULTS + 3, FoundUnit::File, MAX_RESULTS));
        let none = glob_tool(dir.path(), json!({"pattern": "*.zig"})).await;
        assert_eq!(
            Tool::result_view(&GlobTool, &input, &none.content),
            Some(ResultView::Found { count: 0, unit: FoundUnit::File, items: Vec::new() })
        );
    }

    fn touch(path: &Path, seconds_ago: u64) {
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).unwrap();
        }
        fs::write(path, "").unwrap();
        let file = fs::File::options().write(true).open(path).unwrap();
        file.set_modified(SystemTime::now() - Duration::from_secs(seconds_ago)).unwrap();
    }

    #[tokio::test]
    async fn newest_first_relative_to_root() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        touch(&p.join("old.rs"), 300);
        touch(&p.join("src/new.rs"), 10);
        touch(&p.join("src/deep/mid.rs"), 100);
        touch(&p.join("readme.md"), 5);
        let out = glob_tool(p, json!({"pattern": "**/*.rs"})).await;
        let expected = [p.join("src/new.rs"), p.join("src/deep/mid.rs"), p.join("old.rs")];
        let expected: Vec<String> = expected.iter().map(|x| x.display().to_string()).collect();
        assert_eq!(out.content, expected.join("\n"));
        // `*.rs` matches only in the root itself.
        let out = glob_tool(p, json!({"pattern": "*.rs"})).await;
        assert_eq!(out.content, p.join("old.rs").display().to_string());
        let out = glob_tool(p, json!({"pattern": "src/*.rs"})).await;
        assert_eq!(out.content, p.join("src/new.rs").display().to_string());
        let out = glob_tool(p, json!({"pattern": "*.rs", "path": "src/deep"})).await;
        assert_eq!(out.content, p.join("src/deep/mid.rs").display().to_string());
        let abs = format!("{}/**/*.md", p.display());
        let out = glob_tool(Path::new("/"), json!({"pattern": abs})).await;
        assert_eq!(out.content, p.join("readme.md").display().to_string());
        let out = glob_tool(p, json!({"pattern": "readme.md"})).await;
        assert_eq!(out.content, p.join("readme.md").display().to_string());
    }

    #[tokio::test]
    async fn cap_at_one_hundred() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..130 {
            touch(&dir.path().join(format!("f{i:03}.txt")), i);
        }
        let out = glob_tool(dir.path(), json!({"pattern": "*.txt"})).await;
        let lines: Vec<&str> = out.content.lines().collect();
        assert_eq!(lines.len(), 101);
        assert!(lines[0].ends_with("f000.txt"), "newest first: {}", lines[0]);
        assert_eq!(lines[100], "(30 more not shown: 130 files matched. Use a more specific pattern or path.)");
    }

    #[tokio::test]
    async fn gitignore_hidden_and_no_match() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        fs::write(p.join(".gitignore"), "build/\n").unwrap();
        touch(&p.join("build/gen.rs"), 1);
        touch(&p.join(".cfg/x.rs"), 1);
        touch(&p.join("a.rs"), 1);
        touch(&p.join(".env"), 1);
        let out = glob_tool(p, json!({"pattern": "**/*.rs"})).await;
        assert_eq!(out.content, p.join("a.rs").display().to_string());
        let out = glob_tool(p, json!({"pattern": "**/.env"})).await;
        assert_eq!(out.content, p.join(".env").display().to_string());
        let out = glob_tool(p, json!({"pattern": "**/*.py"})).await;
        assert_eq!(out, ToolOutput::ok(NO_FILES));
        let out = glob_tool(p, json!({"pattern": "*.rs", "path": "nope"})).await;
        assert!(out.is_error && out.content.starts_with("Directory does not exist"));
        let out = glob_tool(p, json!({"pattern": "a[.rs"})).await;
        assert!(out.is_error && out.content.starts_with("Invalid glob pattern"), "{}", out.content);
    }

    #[test]
    fn literal_prefix_moves_root() {
        let root = Path::new("/p");
        assert_eq!(split_literal_prefix(root, "src/**/*.rs"), (PathBuf::from("/p/src"), "**/*.rs".to_string()));
        assert_eq!(split_literal_prefix(root, "/abs/x/*.md"), (PathBuf::from("/abs/x"), "*.md".to_string()));
        // `..` is resolved as the kernel resolves it; through a path that does not exist it stays as written
        // (the policy takes that for outside), never normalised lexically.
        assert_eq!(split_literal_prefix(root, "../q/*.rs"), (PathBuf::from("/p/../q"), "*.rs".to_string()));
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().canonicalize().unwrap();
        fs::create_dir_all(real.join("p")).unwrap();
        fs::create_dir_all(real.join("q")).unwrap();
        assert_eq!(split_literal_prefix(&real.join("p"), "../q/*.rs"), (real.join("q"), "*.rs".to_string()));
        assert_eq!(split_literal_prefix(root, "Cargo.toml"), (PathBuf::from("/p/Cargo.toml"), String::new()));
    }
}
