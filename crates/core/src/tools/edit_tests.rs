//! Tests of the Edit tool (a separate file to keep edit.rs readable).

use super::*;
use crate::tools::Tool;
use serde_json::json;
use std::fs;
use std::path::Path;

fn ctx(dir: &Path) -> ToolContext {
    ToolContext::new(dir.to_path_buf())
}

/// Writes a file and marks it read, as a Read call would.
fn seeded(dir: &Path, name: &str, content: &[u8]) -> (ToolContext, PathBuf) {
    let path = dir.join(name);
    fs::write(&path, content).unwrap();
    let ctx = ctx(dir);
    ctx.files.record_content(&path, content);
    (ctx, path)
}

async fn edit(ctx: &ToolContext, input: Value) -> ToolOutput {
    EditTool.run(input.into(), ctx).await
}

#[tokio::test]
async fn replaces_once_and_shows_snippet() {
    let dir = tempfile::tempdir().unwrap();
    let (ctx, path) = seeded(dir.path(), "f.rs", b"fn a() {}\nfn b() {}\nfn c() {}\n");
    let out = edit(&ctx, json!({"file_path": "f.rs", "old_string": "fn b() {}", "new_string": "fn b() { 1 }"})).await;
    assert!(!out.is_error, "{}", out.content);
    assert_eq!(fs::read_to_string(&path).unwrap(), "fn a() {}\nfn b() { 1 }\nfn c() {}\n");
    assert!(out.content.starts_with("The file f.rs has been updated."), "{}", out.content);
    assert!(out.content.ends_with("     1\tfn a() {}\n     2\tfn b() { 1 }\n     3\tfn c() {}"), "{}", out.content);
    // The edit is recorded: a second edit needs no new Read.
    let out = edit(&ctx, json!({"file_path": "f.rs", "old_string": "fn c", "new_string": "fn d"})).await;
    assert!(!out.is_error, "{}", out.content);
}

#[tokio::test]
async fn refuses_without_read_and_after_external_change() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.txt");
    fs::write(&path, "hello\n").unwrap();
    let fresh = ctx(dir.path());
    let input = json!({"file_path": "f.txt", "old_string": "hello", "new_string": "bye"});
    let out = edit(&fresh, input.clone()).await;
    assert!(out.is_error && out.content.contains("has not been read"), "{}", out.content);
    assert!(Tool::preview(&EditTool, &input, &fresh).is_err());

    let (ctx, path) = seeded(dir.path(), "f.txt", b"hello\n");
    fs::write(&path, "hello, changed by someone else\n").unwrap();
    let out = edit(&ctx, input).await;
    assert!(out.is_error, "{}", out.content);
    assert!(out.content.contains("has been modified since it was last read — Read it again before editing"));
    assert_eq!(fs::read_to_string(&path).unwrap(), "hello, changed by someone else\n");
}

#[tokio::test]
async fn zero_matches_with_hints() {
    let dir = tempfile::tempdir().unwrap();
    let (ctx, _) = seeded(dir.path(), "f.py", b"def f():\n    return 1\n");
    let out = edit(&ctx, json!({"file_path": "f.py", "old_string": "nothing here", "new_string": "x"})).await;
    assert!(out.is_error && out.content.starts_with("old_string was not found in f.py."), "{}", out.content);
    let out = edit(&ctx, json!({"file_path": "f.py", "old_string": "def f():\n  return 1", "new_string": "x"})).await;
    assert!(out.content.contains("would match if whitespace were ignored"), "{}", out.content);
    let out = edit(&ctx, json!({"file_path": "f.py", "old_string": "     2\t    return 1", "new_string": "x"})).await;
    assert!(out.content.contains("line-number prefixes"), "{}", out.content);
}

#[tokio::test]
async fn multiple_matches_need_replace_all() {
    let dir = tempfile::tempdir().unwrap();
    let (ctx, path) = seeded(dir.path(), "f", b"x = old\ny = old\n");
    let input = json!({"file_path": "f", "old_string": "old", "new_string": "new"});
    let out = edit(&ctx, input).await;
    assert!(out.is_error && out.content.starts_with("Found 2 matches of old_string in f"), "{}", out.content);
    assert!(out.content.contains("replace_all"));
    let out =
        edit(&ctx, json!({"file_path": "f", "old_string": "old", "new_string": "new", "replace_all": true})).await;
    assert!(!out.is_error && out.content.contains("(2 occurrences replaced)"), "{}", out.content);
    assert_eq!(fs::read_to_string(&path).unwrap(), "x = new\ny = new\n");
}

#[tokio::test]
async fn identical_strings_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let (ctx, _) = seeded(dir.path(), "f", b"a\n");
    let out = edit(&ctx, json!({"file_path": "f", "old_string": "a", "new_string": "a"})).await;
    assert!(out.is_error && out.content.contains("identical"));
}

#[tokio::test]
async fn crlf_bom_and_missing_final_newline_preserved() {
    let dir = tempfile::tempdir().unwrap();
    let (ctx, path) = seeded(dir.path(), "w.txt", b"\xEF\xBB\xBFone\r\ntwo\r\nthree");
    let out = edit(&ctx, json!({"file_path": "w.txt", "old_string": "one\ntwo", "new_string": "uno\ndos\ndos"})).await;
    assert!(!out.is_error, "{}", out.content);
    assert_eq!(fs::read(&path).unwrap(), b"\xEF\xBB\xBFuno\r\ndos\r\ndos\r\nthree");
    // An edit at the very end keeps the file without a final newline.
    let out = edit(&ctx, json!({"file_path": "w.txt", "old_string": "three", "new_string": "tres\n"})).await;
    assert!(!out.is_error, "{}", out.content);
    assert_eq!(fs::read(&path).unwrap(), b"\xEF\xBB\xBFuno\r\ndos\r\ndos\r\ntres");
}

#[tokio::test]
async fn a_match_never_splits_a_crlf_line_break() {
    let dir = tempfile::tempdir().unwrap();
    let (ctx, path) = seeded(dir.path(), "w.txt", b"a\r\nb\r\n");
    let out = edit(&ctx, json!({"file_path": "w.txt", "old_string": "a\r", "new_string": "x"})).await;
    assert!(out.is_error && out.content.contains("not found"), "{}", out.content);
    let out = edit(&ctx, json!({"file_path": "w.txt", "old_string": "a\r\nb", "new_string": "c"})).await;
    assert!(!out.is_error, "{}", out.content);
    assert_eq!(fs::read(&path).unwrap(), b"c\r\n");
    let preview =
        Tool::preview(&EditTool, &json!({"file_path": "w.txt", "old_string": "c", "new_string": "d\ne"}), &ctx);
    let Ok(Some(Preview::Diff { diff, texts: Some(texts), .. })) = preview else {
        panic!("a small file keeps its texts")
    };
    assert_eq!(diff, "--- a/w.txt\n+++ b/w.txt\n@@ -1 +1,2 @@\n-c\n+d\n+e\n", "shown with \\n line breaks");
    assert_eq!((texts.old.as_deref(), texts.new.as_str()), (Some("c\r\n"), "d\r\ne\r\n"));
}

#[tokio::test]
async fn final_newline_kept_when_edit_drops_it() {
    let dir = tempfile::tempdir().unwrap();
    let (ctx, path) = seeded(dir.path(), "f", b"a\nb\n");
    let out = edit(&ctx, json!({"file_path": "f", "old_string": "b\n", "new_string": "c"})).await;
    assert!(!out.is_error, "{}", out.content);
    assert_eq!(fs::read_to_string(&path).unwrap(), "a\nc\n");
}

#[tokio::test]
async fn mixed_line_endings_untouched_elsewhere() {
    let dir = tempfile::tempdir().unwrap();
    let (ctx, path) = seeded(dir.path(), "m", b"a\r\nb\nc\r\n");
    let out = edit(&ctx, json!({"file_path": "m", "old_string": "b", "new_string": "B"})).await;
    assert!(!out.is_error, "{}", out.content);
    assert_eq!(fs::read(&path).unwrap(), b"a\r\nB\nc\r\n");
    let out = edit(&ctx, json!({"file_path": "m", "old_string": "a\nB", "new_string": "x"})).await;
    assert!(out.is_error && out.content.contains("line endings"), "{}", out.content);
}

#[cfg(unix)]
#[tokio::test]
async fn mode_preserved() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let (ctx, path) = seeded(dir.path(), "run.sh", b"#!/bin/sh\necho a\n");
    fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
    let out = edit(&ctx, json!({"file_path": "run.sh", "old_string": "echo a", "new_string": "echo b"})).await;
    assert!(!out.is_error, "{}", out.content);
    assert_eq!(fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o755);
    let names: Vec<_> = fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names.len(), 1, "no temp files left: {names:?}");
}

#[tokio::test]
async fn preview_is_a_diff_with_real_line_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let text: String = (1..=100).map(|i| format!("line {i}\n")).collect();
    let (ctx, path) = seeded(dir.path(), "f", text.as_bytes());
    let input = json!({"file_path": path.to_str().unwrap(), "old_string": "line 50\n", "new_string": "fifty\n"});
    let Ok(Some(Preview::Diff { diff, new_file, .. })) = Tool::preview(&EditTool, &input, &ctx) else {
        panic!("no diff")
    };
    assert!(!new_file);
    assert_eq!(
        diff,
        "--- a/f\n+++ b/f\n@@ -47,7 +47,7 @@\n line 47\n line 48\n line 49\n-line 50\n+fifty\n line 51\n line 52\n line 53\n"
    );
    assert_eq!(Tool::target_path(&EditTool, &input, &ctx), Some(path));
}

#[tokio::test]
async fn ten_megabyte_file_edit() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::with_capacity(10_500_000);
    for i in 0..200_000 {
        text.push_str(&format!("{i:>8} some filler text to make the line about fifty b\n"));
    }
    let (ctx, path) = seeded(dir.path(), "big", text.as_bytes());
    let input = json!({"file_path": "big", "old_string": "  123456 some", "new_string": "  123456 EDITED"});
    let Ok(Some(Preview::Diff { diff, texts, .. })) = Tool::preview(&EditTool, &input, &ctx) else { panic!("no diff") };
    assert!(diff.contains("@@ -123454,7 +123454,7 @@"), "{diff}");
    assert!(texts.is_none(), "a file over the limit is previewed by its diff alone");
    let out = edit(&ctx, input).await;
    assert!(!out.is_error, "{}", out.content);
    let patch = &out.structured.as_ref().unwrap()["structuredPatch"];
    assert_eq!(patch.as_array().unwrap().len(), 1, "{patch}");
    assert_eq!(patch[0]["oldStart"], 123454, "{patch}");
    assert!(out.content.contains("123457\t  123456 EDITED filler"), "{}", out.content);
    let written = fs::read_to_string(&path).unwrap();
    assert_eq!(written.len(), text.len() + 2);
}

#[tokio::test]
async fn empty_old_string_creates_a_new_file() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(dir.path());
    let out = edit(&ctx, json!({"file_path": "new/f.txt", "old_string": "", "new_string": "hi\n"})).await;
    assert_eq!(out, ToolOutput::ok("Created file new/f.txt (1 line)."));
    assert_eq!(fs::read_to_string(dir.path().join("new/f.txt")).unwrap(), "hi\n");
    let out = edit(&ctx, json!({"file_path": "missing.txt", "old_string": "a", "new_string": "b"})).await;
    assert!(out.is_error && out.content.contains("File does not exist") && out.content.contains("Write"));
    let out = edit(&ctx, json!({"file_path": "new/f.txt", "old_string": "", "new_string": "x"})).await;
    assert!(out.is_error && out.content.contains("old_string is empty"), "{}", out.content);
}

#[test]
fn line_helpers() {
    let text = "a\nbb\nccc\ndd\ne";
    assert_eq!(line_start_before(text, 6, 0), 5);
    assert_eq!(line_start_before(text, 6, 1), 2);
    assert_eq!(line_start_before(text, 6, 9), 0);
    assert_eq!(line_end_after(text, 6, 0), 9);
    assert_eq!(line_end_after(text, 5, 0), 5);
    assert_eq!(line_end_after(text, 6, 5), text.len());
    assert!(is_pure_crlf("a\r\nb\r\n"));
    assert!(!is_pure_crlf("a\r\nb\n"));
    assert!(!is_pure_crlf("no newline"));
}
