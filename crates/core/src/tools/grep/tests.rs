//! Tests of the Grep tool.

use super::*;
use crate::tools::Tool;
use serde_json::json;
use std::fs;
use std::time::{Duration, SystemTime};

/// A small tree: two Rust files, a text file, an ignored dir, a hidden dir and a binary file.
fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    fs::create_dir_all(p.join("src")).unwrap();
    fs::write(p.join("src/main.rs"), "fn main() {\n    println!(\"hello\");\n}\n").unwrap();
    fs::write(p.join("src/lib.rs"), "pub fn hello() {}\n// hello again\n").unwrap();
    fs::write(p.join("notes.txt"), "Hello world\n").unwrap();
    fs::write(p.join(".gitignore"), "target/\n").unwrap();
    fs::create_dir_all(p.join("target")).unwrap();
    fs::write(p.join("target/out.rs"), "fn hello() {}\n").unwrap();
    fs::create_dir_all(p.join(".hidden")).unwrap();
    fs::write(p.join(".hidden/h.rs"), "hello\n").unwrap();
    fs::write(p.join("blob.bin2"), b"hello\0binary").unwrap();
    set_age(&p.join("src/main.rs"), 100);
    set_age(&p.join("src/lib.rs"), 10);
    dir
}

fn set_age(path: &Path, seconds_ago: u64) {
    let file = fs::File::options().write(true).open(path).unwrap();
    file.set_modified(SystemTime::now() - Duration::from_secs(seconds_ago)).unwrap();
}

async fn grep(dir: &Path, input: Value) -> ToolOutput {
    GrepTool.run(input.into(), &ToolContext::new(dir.to_path_buf())).await
}

#[tokio::test]
async fn files_with_matches_newest_first_skipping_ignored_hidden_and_binary() {
    let dir = tree();
    let p = dir.path();
    let out = grep(p, json!({"pattern": "hello"})).await;
    assert!(!out.is_error, "{}", out.content);
    let expected = format!("Found 2 files\n{}\n{}", p.join("src/lib.rs").display(), p.join("src/main.rs").display());
    assert_eq!(out.content, expected);
    let out = grep(p, json!({"pattern": "hello", "-i": true})).await;
    assert!(out.content.starts_with("Found 3 files") && out.content.contains("notes.txt"), "{}", out.content);
}

#[tokio::test]
async fn content_mode_with_context_and_line_numbers() {
    let dir = tree();
    let p = dir.path();
    let main = p.join("src/main.rs").display().to_string();
    let out = grep(p, json!({"pattern": "println", "output_mode": "content", "-C": 1})).await;
    assert_eq!(out.content, format!("{main}-1-fn main() {{\n{main}:2:    println!(\"hello\");\n{main}-3-}}"));
    let out = grep(p, json!({"pattern": "println", "output_mode": "content", "-n": false})).await;
    assert_eq!(out.content, format!("{main}:    println!(\"hello\");"));
    let out = grep(p, json!({"pattern": "^fn", "output_mode": "content", "path": "src/main.rs"})).await;
    assert_eq!(out.content, format!("{main}:1:fn main() {{"));
}

#[tokio::test]
async fn context_breaks_between_groups() {
    let dir = tempfile::tempdir().unwrap();
    let text: String =
        (1..=20).map(|i| if i == 3 || i == 15 { "match\n".to_string() } else { format!("{i}\n") }).collect();
    fs::write(dir.path().join("f"), text).unwrap();
    let f = dir.path().join("f").display().to_string();
    let out = grep(dir.path(), json!({"pattern": "match", "output_mode": "content", "-A": 1, "-B": 0})).await;
    assert_eq!(out.content, format!("{f}:3:match\n{f}-4-4\n--\n{f}:15:match\n{f}-16-16"));
}

#[tokio::test]
async fn count_mode() {
    let dir = tree();
    let p = dir.path();
    let out = grep(p, json!({"pattern": "hello", "output_mode": "count"})).await;
    let expected = format!(
        "{}:2\n{}:1\n\nFound 3 total matches across 2 files.",
        p.join("src/lib.rs").display(),
        p.join("src/main.rs").display()
    );
    assert_eq!(out.content, expected);
}

#[tokio::test]
async fn glob_and_type_filters() {
    let dir = tree();
    let p = dir.path();
    let out = grep(p, json!({"pattern": "hello", "-i": true, "glob": "*.txt"})).await;
    assert_eq!(out.content, format!("Found 1 file\n{}", p.join("notes.txt").display()));
    let out = grep(p, json!({"pattern": "hello", "-i": true, "glob": "*.txt, main.rs"})).await;
    assert!(out.content.starts_with("Found 2 files"), "{}", out.content);
    let out = grep(p, json!({"pattern": "hello", "-i": true, "type": "rust"})).await;
    assert!(out.content.starts_with("Found 2 files") && !out.content.contains("notes"), "{}", out.content);
    let out = grep(p, json!({"pattern": "hello", "type": "nosuchtype"})).await;
    assert!(out.is_error && out.content.starts_with("Unknown file type \"nosuchtype\""), "{}", out.content);
}

#[tokio::test]
async fn head_limit_says_how_many_were_cut() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..10 {
        fs::write(dir.path().join(format!("f{i}.txt")), "needle\n").unwrap();
    }
    let out = grep(dir.path(), json!({"pattern": "needle", "head_limit": 3})).await;
    assert_eq!(out.content.lines().count(), 6, "{}", out.content);
    assert!(out.content.ends_with("[Showing 3 of 10 files; 7 more not shown. Use head_limit and offset to page, a narrower path or glob, or a more specific pattern to see others.]"));
    let out = grep(dir.path(), json!({"pattern": "needle", "output_mode": "content", "head_limit": 4})).await;
    assert!(out.content.contains("[Showing 4 of 10 lines; 6 more not shown."), "{}", out.content);
}

#[tokio::test]
async fn default_cap_applies() {
    let dir = tempfile::tempdir().unwrap();
    let text: String = (0..1000).map(|i| format!("needle {i}\n")).collect();
    fs::write(dir.path().join("many"), text).unwrap();
    let out = grep(dir.path(), json!({"pattern": "needle", "output_mode": "content"})).await;
    assert!(out.content.contains("[Showing 250 of 1000 lines; 750 more not shown."), "{}", out.content);
}

#[tokio::test]
async fn errors_and_no_match() {
    let dir = tree();
    let p = dir.path();
    let out = grep(p, json!({"pattern": "fn("})).await;
    assert!(out.is_error && out.content.starts_with("Invalid regex \"fn(\""), "{}", out.content);
    assert!(!out.content.contains("multiline"), "no hint for an error that is not a line break: {}", out.content);
    let out = grep(p, json!({"pattern": "hello\\nworld"})).await;
    assert!(out.is_error && out.content.ends_with("(to match across lines, set multiline: true)"), "{}", out.content);
    let out = grep(p, json!({"pattern": "zzz_not_there"})).await;
    assert_eq!(out, ToolOutput::ok("No matches found"));
    let out = grep(p, json!({"pattern": "x", "path": "missing"})).await;
    assert!(out.is_error && out.content.starts_with("Path does not exist"));
}

#[tokio::test]
async fn multiline_patterns() {
    let dir = tree();
    let p = dir.path();
    let input = json!({"pattern": "main\\(\\) \\{\\n\\s+println", "output_mode": "content", "multiline": true});
    let out = grep(p, input).await;
    let main = p.join("src/main.rs").display().to_string();
    assert_eq!(out.content, format!("{main}:1:fn main() {{\n{main}:2:    println!(\"hello\");"));
    let out = grep(p, json!({"pattern": "main.*\\n.*println"})).await;
    assert!(out.is_error && out.content.contains("multiline"), "{}", out.content);
}

#[tokio::test]
async fn long_lines_are_cut() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("min.js"), format!("{}needle{}\n", "a".repeat(600), "b".repeat(600))).unwrap();
    let out = grep(dir.path(), json!({"pattern": "needle", "output_mode": "content"})).await;
    assert!(out.content.ends_with("… [line truncated, 1206 chars]"), "{}", out.content);
}

#[test]
fn glob_splitting() {
    assert_eq!(split_globs("*.rs *.toml"), vec!["*.rs", "*.toml"]);
    assert_eq!(split_globs("*.rs,*.md"), vec!["*.rs", "*.md"]);
    assert_eq!(split_globs("**/*.{ts,tsx}"), vec!["**/*.{ts,tsx}"]);
}

/// The card's count and results come from Grep's own text, in every mode and when the list is cut.
#[tokio::test]
async fn result_view_reads_back_every_mode() {
    let dir = tree();
    let p = dir.path();
    let view = |input: Value, content: &str| Tool::result_view(&GrepTool, &input, content).unwrap();
    let input = json!({"pattern": "hello", "-i": true});
    let ResultView::Found { count, unit, items } = view(input.clone(), &grep(p, input).await.content) else {
        panic!("not a search view")
    };
    assert_eq!((count, unit, items.len()), (3, FoundUnit::File, 3));
    assert!(items.iter().all(|item| !item.starts_with("Found")), "{items:?}");

    let input = json!({"pattern": "hello", "-i": true, "output_mode": "count"});
    let ResultView::Found { count, unit, items } = view(input.clone(), &grep(p, input).await.content) else {
        panic!("not a search view")
    };
    assert_eq!((count, unit), (4, FoundUnit::Match));
    assert_eq!(items.len(), 3, "{items:?}");

    let input = json!({"pattern": "hello", "-i": true, "output_mode": "content", "head_limit": 2});
    let ResultView::Found { count, unit, items } = view(input.clone(), &grep(p, input).await.content) else {
        panic!("not a search view")
    };
    assert_eq!((count, unit, items.len()), (4, FoundUnit::Line, 2), "{items:?}");

    let input = json!({"pattern": "absent-word"});
    assert_eq!(
        view(input.clone(), &grep(p, input).await.content),
        ResultView::Found { count: 0, unit: FoundUnit::File, items: Vec::new() }
    );
}

/// Found by the thirty-sixth red-team round: the walk judged `sub/x/secret.txt` while `sub/x` was a directory, and
/// the file was opened later by name, after a background command had swapped `sub/x` for a link to a directory
/// outside the workspace; the descriptor check knew secrets only. Here the swap happens while the name is judged.
#[tokio::test]
async fn a_file_opened_out_of_the_root_after_the_walk_judged_it_is_not_searched() {
    let dir = tempfile::tempdir().unwrap();
    let base = fs::canonicalize(dir.path()).unwrap();
    let (work, outside) = (base.join("work"), base.join("outside"));
    fs::create_dir_all(work.join("sub/x")).unwrap();
    fs::create_dir_all(&outside).unwrap();
    fs::write(work.join("sub/x/secret.txt"), "decoy\n").unwrap();
    fs::write(outside.join("secret.txt"), "CANARY-OUTSIDE\n").unwrap();
    let swap_in = work.join("sub");
    let hidden: HiddenPaths = std::sync::Arc::new(move |path: &Path| {
        if path.ends_with("x/secret.txt") && !swap_in.join("y").exists() {
            fs::rename(swap_in.join("x"), swap_in.join("y")).unwrap();
            std::os::unix::fs::symlink(&outside, swap_in.join("x")).unwrap();
        }
        false
    });
    let mut ctx = ToolContext::new(work.clone());
    ctx.hidden = Some(hidden);
    let input = json!({"pattern": "CANARY", "path": "sub", "output_mode": "content"});
    let out = GrepTool.run(input.into(), &ctx).await;
    assert!(work.join("sub/y").exists(), "the swap happened");
    assert!(!out.content.contains("CANARY-OUTSIDE"), "{}", out.content);
}

/// Issue 29: Claude Code's `offset` pages through a result (after sorting, before head_limit), `head_limit: 0` shows
/// everything, and `context` is read before `-C` and `-A`/`-B`.
#[tokio::test]
async fn offset_pages_head_limit_zero_shows_all_and_context_wins() {
    let dir = tempfile::tempdir().unwrap();
    for index in 0..5 {
        std::fs::write(dir.path().join(format!("f{index}.txt")), "before\nneedle\nafter\n").unwrap();
    }
    let page =
        grep(dir.path(), json!({"pattern": "needle", "output_mode": "count", "offset": 1, "head_limit": 2})).await;
    let shown: Vec<bool> = (0..5).map(|index| page.content.contains(&format!("f{index}.txt:1"))).collect();
    assert_eq!(shown, [false, true, true, false, false], "{}", page.content);
    assert!(page.content.contains("[Showing files 2 to 3 of 5 (offset 1); 2 more after these.]"), "{}", page.content);
    let all = grep(dir.path(), json!({"pattern": "needle", "output_mode": "count", "head_limit": 0})).await;
    assert!(all.content.contains("f4.txt:1") && !all.content.contains("Showing"), "{}", all.content);
    let past = grep(dir.path(), json!({"pattern": "needle", "output_mode": "count", "offset": 9})).await;
    assert!(past.content.contains("[No files past offset 5: there are 5.]"), "{}", past.content);
    let context = grep(
        dir.path(),
        json!({"pattern": "needle", "path": "f0.txt", "output_mode": "content", "context": 1, "-A": 0}),
    )
    .await;
    assert!(context.content.contains("before") && context.content.contains("after"), "{}", context.content);
}

/// Issue 29: SDK hosts get Grep's result as Claude Code gives it (`tool_use_result` was the plain text): the mode,
/// the files or the content listed, the counts, and the limit and offset applied.
#[tokio::test]
async fn hosts_get_the_result_as_claude_codes_object() {
    let dir = tempfile::tempdir().unwrap();
    for index in 0..3 {
        std::fs::write(dir.path().join(format!("f{index}.txt")), "needle\nneedle\n").unwrap();
    }
    let files = grep(dir.path(), json!({"pattern": "needle", "head_limit": 2})).await;
    let structured = files.structured.unwrap();
    assert_eq!(structured["mode"], "files_with_matches");
    assert_eq!((structured["numFiles"].as_u64(), structured["appliedLimit"].as_u64()), (Some(2), Some(2)));
    assert_eq!(structured["filenames"].as_array().unwrap().len(), 2);
    let count = grep(dir.path(), json!({"pattern": "needle", "output_mode": "count", "offset": 1})).await;
    let structured = count.structured.unwrap();
    assert_eq!(
        (structured["mode"].as_str(), structured["numMatches"].as_u64()),
        (Some("count"), Some(6)),
        "{structured}"
    );
    assert_eq!(structured["appliedOffset"], 1);
    let content = grep(dir.path(), json!({"pattern": "needle", "output_mode": "content", "path": "f0.txt"})).await;
    let structured = content.structured.unwrap();
    assert_eq!((structured["mode"].as_str(), structured["numLines"].as_u64()), (Some("content"), Some(2)));
    assert!(structured["content"].as_str().unwrap().contains("f0.txt:1:needle"), "{structured}");
}
