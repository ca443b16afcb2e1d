//! `Write`: creates a file or replaces its whole content.

use std::path::{Path, PathBuf};

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::file_state::{read_if_exists, staleness_message};
use super::typed::TypedTool;
use super::{DiffTexts, Preview, Risk, ToolContext, ToolOutput, display_path, parse_input};
use crate::conversation::ToolInput;
use crate::diff::{self, DEFAULT_CONTEXT};
use crate::fs_util;

const DESCRIPTION: &str = "Writes a file to the local filesystem, creating it (and missing parent directories) \
or replacing its whole content.\n\
\n\
- file_path should be an absolute path (relative paths are resolved against the working directory).\n\
- Overwriting an existing file requires that you Read it earlier in this session and that it has not changed \
since; otherwise the write is refused.\n\
- content is written exactly as given (line endings included). The file's permissions are kept.\n\
- Prefer Edit for changing part of an existing file: it sends only the change. Use Write for new files or \
complete rewrites.\n\
- Don't create documentation or README files unless asked.";

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// The absolute path of the file to write
    file_path: String,
    /// The complete content to write to the file
    content: String,
}

/// [`Input`] read in place from the call's input, so that a huge content is never copied.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args<'a> {
    file_path: &'a str,
    content: &'a str,
}

pub struct WriteTool;

/// What a Write would do, computed the same way for the preview and the run.
struct Plan<'a> {
    path: PathBuf,
    shown: String,
    old: Option<Vec<u8>>,
    content: &'a str,
}

impl Plan<'_> {
    fn diff(&self) -> String {
        match &self.old {
            None => diff::new_file_diff(&self.shown, self.content),
            Some(old) => match std::str::from_utf8(old) {
                Ok(old) => diff::unified_diff(&self.shown, old, self.content, DEFAULT_CONTEXT),
                Err(_) => format!(
                    "--- a/{0}\n+++ b/{0}\nBinary file ({1}) replaced by {2} lines of text\n",
                    self.shown,
                    fs_util::human_size(old.len() as u64),
                    line_count(self.content)
                ),
            },
        }
    }
}

fn plan<'a>(input: &Args<'a>, ctx: &ToolContext) -> Result<Plan<'a>, String> {
    let path = ctx.judged_or_resolved(input.file_path);
    let shown = display_path(&path, &ctx.cwd);
    if path.is_dir() {
        return Err(format!("{} is a directory; Write needs a file path.", path.display()));
    }
    let old = read_if_exists(&path).map_err(|err| format!("Cannot read {}: {err}", path.display()))?;
    if let Some(old) = &old {
        ctx.files.check_unchanged(&path, old).map_err(|s| staleness_message(s, &path, "writing"))?;
    }
    Ok(Plan { path, shown, old, content: input.content })
}

fn line_count(text: &str) -> usize {
    text.lines().count()
}

impl TypedTool for WriteTool {
    type Input = Input;
    const NAME: &'static str = "Write";
    const FILE_FIELD: Option<&'static str> = Some("file_path");

    fn description(&self) -> std::borrow::Cow<'static, str> {
        DESCRIPTION.into()
    }

    fn is_read_only(&self) -> bool {
        false
    }

    fn kind(&self) -> super::ToolKind {
        super::ToolKind::Edit
    }

    fn risk(&self) -> Risk {
        Risk::Medium
    }

    /// What changed, in a sentence (the diff is the preview's).
    fn result_view(&self, _input: &Value, content: &str) -> Option<super::ResultView> {
        super::first_sentence_view(content)
    }

    fn preview(&self, input: &Value, ctx: &ToolContext) -> Result<Option<Preview>, String> {
        let input: Args = parse_input("Write", input).map_err(|out| out.content)?;
        let plan = plan(&input, ctx)?;
        let texts = DiffTexts::fit(plan.old.as_ref().map_or(0, Vec::len), plan.content.len()).then(|| DiffTexts {
            old: plan.old.as_deref().map(|old| String::from_utf8_lossy(old).into_owned()),
            new: plan.content.to_owned(),
        });
        Ok(Some(Preview::Diff { diff: plan.diff(), new_file: plan.old.is_none(), path: plan.path, texts }))
    }

    fn call<'a>(&'a self, input: Input, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutput> {
        let ctx = ctx.clone();
        written(move || write(&Args { file_path: &input.file_path, content: &input.content }, &ctx))
    }

    fn call_shared<'a>(&'a self, input: ToolInput, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutput> {
        let ctx = ctx.clone();
        written(move || write(&parse_input("Write", &input).map_err(|out| out.content)?, &ctx))
    }
}

/// The result of `write`, run off the async workers.
fn written(write: impl FnOnce() -> Result<(String, Value), String> + Send + 'static) -> BoxFuture<'static, ToolOutput> {
    Box::pin(async move {
        match tokio::task::spawn_blocking(write).await {
            Ok(Ok((text, structured))) => ToolOutput::ok(text).with_structured(structured),
            Ok(Err(message)) => ToolOutput::error(message),
            Err(err) => ToolOutput::error(format!("Write failed: {err}")),
        }
    })
}

fn write(input: &Args, ctx: &ToolContext) -> Result<(String, Value), String> {
    let plan = plan(input, ctx)?;
    let old_text = plan.old.as_ref().map(|old| String::from_utf8_lossy(old));
    let structured = serde_json::json!({
        "type": if plan.old.is_some() { "update" } else { "create" },
        "filePath": plan.path.display().to_string(),
        "content": super::structured_text(plan.content),
        "structuredPatch": match &old_text {
            Some(old) => crate::diff::structured_patch(old, plan.content),
            None => Value::Array(Vec::new()),
        },
        "originalFile": old_text.as_deref().map_or(Value::Null, super::structured_text),
    });
    let summary = write_and_summarize(&plan, ctx)?;
    Ok((summary, structured))
}

/// Writes the file (unless it already has the content) and says what changed.
fn write_and_summarize(plan: &Plan, ctx: &ToolContext) -> Result<String, String> {
    let lines = line_count(plan.content);
    let summary = match &plan.old {
        Some(old) if old.as_slice() == plan.content.as_bytes() => {
            ctx.files.record_content(&plan.path, old);
            return Ok(format!("{} already has this content; nothing changed.", plan.shown));
        }
        Some(old) => {
            let (added, removed) = match std::str::from_utf8(old) {
                Ok(old) => diff::counts(&diff::hunks(old, plan.content, 0)),
                Err(_) => (lines, 0),
            };
            format!("Updated {} ({lines} line{}; +{added} -{removed}).", plan.shown, plural(lines))
        }
        None => format!("Created file {} ({lines} line{}).", plan.shown, plural(lines)),
    };
    let mode = crate::rewind::mode_of(&plan.path);
    write_file(&plan.path, plan.content.as_bytes())?;
    ctx.files.record_content(&plan.path, plan.content.as_bytes());
    if let Some(checkpoints) = &ctx.checkpoints {
        checkpoints.record(&plan.path, plan.old.as_deref(), plan.content.as_bytes(), mode);
    }
    Ok(summary)
}

fn write_file(path: &Path, bytes: &[u8]) -> Result<(), String> {
    fs_util::write_atomic_resolved(path, bytes).map_err(|err| format!("Cannot write {}: {err}", path.display()))
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::Tool;
    use serde_json::json;
    use std::fs;

    fn ctx(dir: &Path) -> ToolContext {
        ToolContext::new(dir.to_path_buf())
    }

    #[tokio::test]
    async fn creates_new_file_with_parents() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = ctx(dir.path());
        let input = json!({"file_path": "a/b/c.txt", "content": "x\ny\n"});
        let Ok(Some(Preview::Diff { diff, new_file, path, .. })) = Tool::preview(&WriteTool, &input, &ctx) else {
            panic!("expected a diff preview")
        };
        assert!(new_file);
        assert_eq!(path, dir.path().join("a/b/c.txt"));
        assert_eq!(diff, "--- /dev/null\n+++ b/a/b/c.txt\n@@ -0,0 +1,2 @@\n+x\n+y\n");
        let out = WriteTool.run(input.into(), &ctx).await;
        assert_eq!(out, ToolOutput::ok("Created file a/b/c.txt (2 lines)."));
        assert_eq!(fs::read_to_string(dir.path().join("a/b/c.txt")).unwrap(), "x\ny\n");
        // Written counts as seen: a second write needs no Read.
        let out = WriteTool.run(json!({"file_path": "a/b/c.txt", "content": "x\nz\n"}).into(), &ctx).await;
        assert_eq!(out, ToolOutput::ok("Updated a/b/c.txt (2 lines; +1 -1)."));
    }

    #[tokio::test]
    async fn refuses_unread_or_changed_existing_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.txt");
        fs::write(&path, "original\n").unwrap();
        let ctx = ctx(dir.path());
        let input = json!({"file_path": "f.txt", "content": "new\n"});
        let err = Tool::preview(&WriteTool, &input, &ctx).unwrap_err();
        assert!(err.contains("has not been read") && err.contains("Read it first"), "{err}");
        let out = WriteTool.run(input.clone().into(), &ctx).await;
        assert!(out.is_error);
        assert_eq!(fs::read_to_string(&path).unwrap(), "original\n");

        ctx.files.record_content(&path, b"original\n");
        fs::write(&path, "changed by the user\n").unwrap();
        let out = WriteTool.run(input.clone().into(), &ctx).await;
        assert!(out.is_error && out.content.contains("modified since it was last read"), "{}", out.content);

        ctx.files.record_content(&path, b"changed by the user\n");
        let out = WriteTool.run(input.into(), &ctx).await;
        assert!(!out.is_error, "{}", out.content);
        assert_eq!(fs::read_to_string(&path).unwrap(), "new\n");
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn atomic_keeps_mode_and_leaves_no_temp_files() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.sh");
        fs::write(&path, "#!/bin/sh\n").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
        let ctx = ctx(dir.path());
        ctx.files.record_content(&path, b"#!/bin/sh\n");
        let out = WriteTool
            .run(json!({"file_path": path.to_str().unwrap(), "content": "#!/bin/sh\necho hi\n"}).into(), &ctx)
            .await;
        assert!(!out.is_error, "{}", out.content);
        assert_eq!(fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o755);
        let names: Vec<_> = fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, vec![std::ffi::OsString::from("run.sh")]);
    }

    #[tokio::test]
    async fn directory_and_unchanged_content() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = ctx(dir.path());
        let out = WriteTool.run(json!({"file_path": ".", "content": "x"}).into(), &ctx).await;
        assert!(out.is_error && out.content.contains("is a directory"));
        fs::write(dir.path().join("same"), "x").unwrap();
        ctx.files.record_content(&dir.path().join("same"), b"x");
        let out = WriteTool.run(json!({"file_path": "same", "content": "x"}).into(), &ctx).await;
        assert_eq!(out, ToolOutput::ok("same already has this content; nothing changed."));
        assert_eq!(Tool::target_path(&WriteTool, &json!({"file_path": "same"}), &ctx), Some(dir.path().join("same")));
    }
}
