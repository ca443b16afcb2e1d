//! `Edit`: replaces an exact string in a file.
//!
//! The model sends text with `\n` line breaks, as Read showed it. In a CRLF file, `old_string` and `new_string`
//! are given CRLF line breaks and matched against the file as it is; its BOM and whether it ends with a newline
//! are kept. The file is searched once (`match_indices`) and the new content is put together in one pass, so
//! an edit holds the file twice (before and after) and nothing more; the diff covers only the lines that
//! changed ([`diff::hunks`]), so a one-line edit in a 10 MB file costs a comparison and a small diff.

use std::borrow::Cow;
use std::path::PathBuf;

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::file_state::{read_if_exists, staleness_message};
use super::typed::TypedTool;
use super::{DiffTexts, Preview, Risk, ToolContext, ToolOutput, display_path, parse_input};
use crate::diff::{self, DEFAULT_CONTEXT, Hunk, line_end_after, line_start_before};
use crate::fs_util;

const DESCRIPTION: &str = "Performs an exact string replacement in a file.\n\
\n\
- You must Read the file in this session before editing it, and it must not have changed since; otherwise the \
edit is refused (Read it again).\n\
- old_string must match the file's text exactly, including indentation and whitespace. Copy it from Read's \
output WITHOUT the line-number prefix (the number and tab before each line).\n\
- The edit fails if old_string is not found, or if it occurs more than once: then add surrounding lines to make \
it unique, or set replace_all to true to replace every occurrence (useful for renaming).\n\
- Line endings: write \\n; files with CRLF line endings are matched and written back correctly. A file's final \
newline and byte-order mark are kept as they were.\n\
- An empty old_string creates a file that does not exist yet (new_string becomes its content).\n\
- Prefer Edit over Write for changing existing files: it sends only the change.";

/// Lines of the edited file shown around the change in the result.
const SNIPPET_CONTEXT: usize = 4;
/// At most this many lines of snippet in the result.
const SNIPPET_MAX_LINES: usize = 40;
const BOM: &str = "\u{feff}";

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// The absolute path of the file to modify
    file_path: String,
    /// The exact text to replace
    old_string: String,
    /// The text to replace it with (must differ from old_string)
    new_string: String,
    /// Replace every occurrence of old_string (default false)
    #[serde(default)]
    replace_all: bool,
}

pub struct EditTool;

/// What an edit would write, computed the same way for the preview and the run.
struct Plan {
    path: PathBuf,
    new_file: bool,
    /// The file's whole text before the edit (`None` when the edit creates it).
    old_text: Option<String>,
    new_text: String,
    /// The change, numbered as in the whole file (the region around it only).
    hunks: Vec<Hunk>,
    diff: String,
    summary: String,
}

impl TypedTool for EditTool {
    type Input = Input;
    const NAME: &'static str = "Edit";
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
        let input: Input = parse_input("Edit", input).map_err(|out| out.content)?;
        let plan = plan(&input, ctx)?;
        let texts = DiffTexts::within_limit(plan.old_text, plan.new_text);
        Ok(Some(Preview::Diff { path: plan.path, diff: plan.diff, new_file: plan.new_file, texts }))
    }

    fn call<'a>(&'a self, input: Input, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move {
            let ctx = ctx.clone();
            match tokio::task::spawn_blocking(move || apply(&input, &ctx)).await {
                Ok(Ok((text, structured))) => ToolOutput::ok(text).with_structured(structured),
                Ok(Err(message)) => ToolOutput::error(message),
                Err(err) => ToolOutput::error(format!("Edit failed: {err}")),
            }
        })
    }
}

fn apply(input: &Input, ctx: &ToolContext) -> Result<(String, Value), String> {
    let plan = plan(input, ctx)?;
    let mode = crate::rewind::mode_of(&plan.path);
    let new = plan.new_text.as_bytes();
    fs_util::write_atomic_resolved(&plan.path, new)
        .map_err(|err| format!("Cannot write {}: {err}", plan.path.display()))?;
    ctx.files.record_content(&plan.path, new);
    if let Some(checkpoints) = &ctx.checkpoints {
        checkpoints.record(&plan.path, plan.old_text.as_deref().map(str::as_bytes), new, mode);
    }
    let structured = serde_json::json!({
        "filePath": plan.path.display().to_string(),
        "oldString": input.old_string,
        "newString": input.new_string,
        "originalFile": super::structured_text(plan.old_text.as_deref().unwrap_or_default()),
        "structuredPatch": diff::patch_value(&plan.hunks),
        "userModified": false,
        "replaceAll": input.replace_all,
    });
    Ok((plan.summary, structured))
}

fn plan(input: &Input, ctx: &ToolContext) -> Result<Plan, String> {
    if input.old_string == input.new_string {
        return Err("old_string and new_string are identical, so there is nothing to change.".to_string());
    }
    let path = ctx.judged_or_resolved(&input.file_path);
    let shown = display_path(&path, &ctx.cwd);
    if path.is_dir() {
        return Err(format!("{} is a directory; Edit needs a file path.", path.display()));
    }
    let Some(bytes) = read_if_exists(&path).map_err(|err| format!("Cannot read {}: {err}", path.display()))? else {
        return plan_new_file(input, path, shown);
    };
    ctx.files.check_unchanged(&path, &bytes).map_err(|s| staleness_message(s, &path, "editing"))?;
    if fs_util::looks_binary(&path, &bytes) {
        return Err(format!("{} is a binary file; Edit only changes text files.", path.display()));
    }
    let old_text = String::from_utf8(bytes)
        .map_err(|_| format!("{} is not valid UTF-8 text; Edit cannot change it safely.", path.display()))?;
    let bom = if old_text.starts_with(BOM) { BOM.len() } else { 0 };
    let content = &old_text[bom..];
    let crlf = is_pure_crlf(content);
    let old_s = with_line_breaks(&input.old_string, crlf);
    let new_s = with_line_breaks(&input.new_string, crlf);

    let positions: Vec<usize> = if old_s.is_empty() {
        if !content.is_empty() {
            return Err(format!(
                "old_string is empty, but {shown} is not: give the exact text to replace, or use Write to replace \
                 the whole file."
            ));
        }
        vec![0]
    } else {
        let splits_a_line_break = |at: usize| old_s.ends_with('\r') && content[at + old_s.len()..].starts_with('\n');
        content.match_indices(old_s.as_ref()).map(|(at, _)| at).filter(|&at| !splits_a_line_break(at)).collect()
    };
    match positions.len() {
        0 => {
            let (seen, old) = match crlf {
                true => (Cow::Owned(content.replace("\r\n", "\n")), input.old_string.replace("\r\n", "\n").into()),
                false => (Cow::Borrowed(content), Cow::Borrowed(input.old_string.as_str())),
            };
            return Err(not_found_message(&shown, &seen, &old, content));
        }
        1 => {}
        n if !input.replace_all => {
            return Err(format!(
                "Found {n} matches of old_string in {shown}, but replace_all is false. To replace one occurrence, \
                 add surrounding lines to old_string so that it matches exactly once; to replace all {n}, set \
                 replace_all to true."
            ));
        }
        _ => {}
    }

    let mut new_text = String::with_capacity(old_text.len() + positions.len() * new_s.len());
    new_text.push_str(&old_text[..bom]);
    let mut copied = 0;
    for &pos in &positions {
        new_text.push_str(&content[copied..pos]);
        new_text.push_str(&new_s);
        copied = pos + old_s.len();
    }
    new_text.push_str(&content[copied..]);
    keep_final_newline(content, &mut new_text, bom, crlf);
    if new_text == old_text {
        return Err(format!(
            "This edit would only change whether {shown} ends with a newline, which Edit keeps as it was. Use Write \
             to change that."
        ));
    }

    // Where the change is, in both texts (the text before the first match is the same in both).
    let edited = &new_text[bom..];
    let first = positions[0];
    let old_end = positions[positions.len() - 1] + old_s.len();
    let unchanged_tail = content.len() - old_end;
    let new_end = edited.len().saturating_sub(unchanged_tail).max(first);
    let hunks = match crlf {
        true => diff::hunks_crlf_as_lf(content, edited, DEFAULT_CONTEXT),
        false => diff::hunks(content, edited, DEFAULT_CONTEXT),
    };
    let diff = diff::render(&shown, &hunks, false);
    let snippet = snippet(edited, first, new_end);
    let what = if positions.len() > 1 { format!(" ({} occurrences replaced)", positions.len()) } else { String::new() };
    let summary = format!(
        "The file {shown} has been updated{what}. Here's the result of running `cat -n` on a snippet of the edited \
         file:\n{snippet}"
    );
    Ok(Plan { path, new_file: false, old_text: Some(old_text), new_text, hunks, diff, summary })
}

/// `text` as the model wrote it (with `\n`), or with CRLF line breaks for a CRLF file.
fn with_line_breaks(text: &str, crlf: bool) -> Cow<'_, str> {
    if crlf { Cow::Owned(text.replace("\r\n", "\n").replace('\n', "\r\n")) } else { Cow::Borrowed(text) }
}

/// An empty `old_string` on a path that does not exist creates the file, as Claude Code's Edit does.
fn plan_new_file(input: &Input, path: PathBuf, shown: String) -> Result<Plan, String> {
    if !input.old_string.is_empty() {
        let mut message = format!("File does not exist: {}. To create a new file, use Write.", path.display());
        let similar = fs_util::similar_names(&path, 3);
        if !similar.is_empty() {
            let names: Vec<String> = similar.iter().map(|p| p.display().to_string()).collect();
            message.push_str(&format!(" Did you mean: {}?", names.join(", ")));
        }
        return Err(message);
    }
    let lines = input.new_string.lines().count();
    Ok(Plan {
        diff: diff::new_file_diff(&shown, &input.new_string),
        hunks: diff::hunks("", &input.new_string, DEFAULT_CONTEXT),
        summary: format!("Created file {shown} ({lines} line{}).", if lines == 1 { "" } else { "s" }),
        new_text: input.new_string.clone(),
        new_file: true,
        old_text: None,
        path,
    })
}

/// Every `\n` is preceded by `\r` (and there is at least one). Mixed files are left as they are: restoring CRLF
/// everywhere would rewrite their LF lines.
fn is_pure_crlf(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut any = false;
    for (i, _) in text.match_indices('\n') {
        if i == 0 || bytes[i - 1] != b'\r' {
            return false;
        }
        any = true;
    }
    any
}

/// Keeps the file's final-newline state: an edit at the end of the file neither adds nor drops it. `original`
/// is the file without its BOM; `edited` starts with the `bom` bytes.
fn keep_final_newline(original: &str, edited: &mut String, bom: usize, crlf: bool) {
    if original.is_empty() || edited.len() == bom {
        return;
    }
    match (original.ends_with('\n'), edited.ends_with('\n')) {
        (true, false) => edited.push_str(if crlf { "\r\n" } else { "\n" }),
        (false, true) => {
            edited.pop();
            if crlf && edited.len() > bom && edited.ends_with('\r') {
                edited.pop();
            }
        }
        _ => {}
    }
}

/// The error for an `old_string` that is not in the file, with a hint when a near miss explains it.
fn not_found_message(shown: &str, content: &str, old: &str, raw: &str) -> String {
    let mut message = format!("old_string was not found in {shown}.");
    let numbered = old.lines().filter(|l| !l.trim().is_empty()).all(|l| {
        let t = l.trim_start();
        let digits = t.bytes().take_while(u8::is_ascii_digit).count();
        digits > 0 && t[digits..].starts_with('\t')
    });
    if numbered && !old.trim().is_empty() {
        message.push_str(
            " It seems to include the line-number prefixes from Read's output (a number and a tab); leave them out.",
        );
    } else if raw.contains("\r\n") && !content.contains(old) && raw.replace("\r\n", "\n").contains(old) {
        message.push_str(
            " It would match if line endings were ignored: the file mixes CRLF and LF line endings, so this region \
             can't be matched with \\n. Use a smaller old_string within one line, or Write the whole file.",
        );
    } else if squash_whitespace(content).contains(&squash_whitespace(old)) {
        message.push_str(
            " It would match if whitespace were ignored: check indentation (tabs vs spaces) and trailing spaces. \
             Read the file again and copy the exact text.",
        );
    } else {
        message.push_str(" Read the file again and copy the exact text to replace, including indentation.");
    }
    message
}

fn squash_whitespace(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `cat -n` style lines of `text` around `start..end`, a few lines of context each side.
fn snippet(text: &str, start: usize, end: usize) -> String {
    let from = line_start_before(text, start, SNIPPET_CONTEXT);
    let to = line_end_after(text, end.max(start), SNIPPET_CONTEXT);
    let first_line = text[..from].bytes().filter(|&b| b == b'\n').count() + 1;
    let region = &text[from..to];
    let mut out = String::new();
    let total = region.lines().count();
    for (i, line) in region.lines().enumerate().take(SNIPPET_MAX_LINES) {
        out.push_str(&format!("{:>6}\t{line}\n", first_line + i));
    }
    if total > SNIPPET_MAX_LINES {
        out.push_str(&format!("… ({} more changed lines not shown)\n", total - SNIPPET_MAX_LINES));
    }
    out.pop();
    out
}

#[cfg(test)]
#[path = "edit_tests.rs"]
mod tests;
