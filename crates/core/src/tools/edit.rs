//! `Edit`: replaces an exact string in a file.
//!
//! The model sends text with `\n` line breaks, as Read showed it. A CRLF file is matched with its line breaks
//! normalized to `\n` and written back with CRLF restored; its BOM and whether it ends with a newline are kept.
//! The file is searched once (`match_indices`), and the preview diffs only the lines around the change, so a
//! one-line edit in a 10 MB file costs a scan and a small diff, not a diff of 10 MB.

use std::borrow::Cow;
use std::path::PathBuf;

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::diff::{self, DEFAULT_CONTEXT};
use super::file_state::{read_if_exists, staleness_message};
use super::fs_util;
use super::typed::TypedTool;
use super::{Preview, Risk, ToolContext, ToolOutput, display_path, parse_input};

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
    new_bytes: Vec<u8>,
    diff: String,
    summary: String,
}

impl TypedTool for EditTool {
    type Input = Input;
    const NAME: &'static str = "Edit";

    fn description(&self) -> std::borrow::Cow<'static, str> {
        DESCRIPTION.into()
    }

    fn is_read_only(&self) -> bool {
        false
    }

    fn risk(&self) -> Risk {
        Risk::Medium
    }

    fn target_path(&self, input: &Value, ctx: &ToolContext) -> Option<PathBuf> {
        input.get("file_path").and_then(Value::as_str).map(|p| ctx.resolve(p))
    }

    fn preview(&self, input: &Value, ctx: &ToolContext) -> Result<Option<Preview>, String> {
        let input: Input = parse_input("Edit", input.clone()).map_err(|out| out.content)?;
        let plan = plan(&input, ctx)?;
        let new = String::from_utf8_lossy(&plan.new_bytes).into_owned();
        Ok(Some(Preview::Diff { path: plan.path, diff: plan.diff, new_file: plan.new_file, old: plan.old_text, new }))
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
    fs_util::write_atomic_create_dirs(&plan.path, &plan.new_bytes)
        .map_err(|err| format!("Cannot write {}: {err}", plan.path.display()))?;
    ctx.files.record_content(&plan.path, &plan.new_bytes);
    if let Some(checkpoints) = &ctx.checkpoints {
        checkpoints.record(&plan.path, plan.old_text.as_deref().map(str::as_bytes), &plan.new_bytes, mode);
    }
    let old = plan.old_text.as_deref().unwrap_or_default();
    let new = String::from_utf8_lossy(&plan.new_bytes);
    let structured = serde_json::json!({
        "filePath": plan.path.display().to_string(),
        "oldString": input.old_string,
        "newString": input.new_string,
        "originalFile": super::structured_text(old),
        "structuredPatch": super::diff::structured_patch(old, &new),
        "userModified": false,
        "replaceAll": input.replace_all,
    });
    Ok((plan.summary, structured))
}

fn plan(input: &Input, ctx: &ToolContext) -> Result<Plan, String> {
    if input.old_string == input.new_string {
        return Err("old_string and new_string are identical, so there is nothing to change.".to_string());
    }
    let path = ctx.resolve(&input.file_path);
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
    let text = std::str::from_utf8(&bytes)
        .map_err(|_| format!("{} is not valid UTF-8 text; Edit cannot change it safely.", path.display()))?;
    let (bom, text) = match text.strip_prefix(BOM) {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let crlf = is_pure_crlf(text);
    let content: Cow<str> = if crlf { Cow::Owned(text.replace("\r\n", "\n")) } else { Cow::Borrowed(text) };
    let old_s: Cow<str> =
        if crlf { Cow::Owned(input.old_string.replace("\r\n", "\n")) } else { Cow::Borrowed(&input.old_string) };
    let new_s: Cow<str> =
        if crlf { Cow::Owned(input.new_string.replace("\r\n", "\n")) } else { Cow::Borrowed(&input.new_string) };

    let positions: Vec<usize> = if old_s.is_empty() {
        if !content.is_empty() {
            return Err(format!(
                "old_string is empty, but {shown} is not: give the exact text to replace, or use Write to replace \
                 the whole file."
            ));
        }
        vec![0]
    } else {
        content.match_indices(old_s.as_ref()).map(|(i, _)| i).collect()
    };
    match positions.len() {
        0 => return Err(not_found_message(&shown, &content, &old_s, text)),
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

    let mut edited = String::with_capacity(content.len() + positions.len() * new_s.len());
    let mut copied = 0;
    for &pos in &positions {
        edited.push_str(&content[copied..pos]);
        edited.push_str(&new_s);
        copied = pos + old_s.len();
    }
    edited.push_str(&content[copied..]);
    keep_final_newline(&content, &mut edited);
    if edited == content.as_ref() {
        return Err(format!(
            "This edit would only change whether {shown} ends with a newline, which Edit keeps as it was. Use Write \
             to change that."
        ));
    }

    // Where the change is, in both texts (the text before the first match is the same in both).
    let first = positions[0];
    let old_end = positions[positions.len() - 1] + old_s.len();
    let unchanged_tail = content.len() - old_end;
    let new_end = edited.len().saturating_sub(unchanged_tail).max(first);
    let diff = windowed_diff(&shown, &content, &edited, first, old_end);
    let snippet = snippet(&edited, first, new_end);
    let what = if positions.len() > 1 { format!(" ({} occurrences replaced)", positions.len()) } else { String::new() };
    let summary = format!(
        "The file {shown} has been updated{what}. Here's the result of running `cat -n` on a snippet of the edited \
         file:\n{snippet}"
    );

    let mut out = String::with_capacity(edited.len() + edited.len() / 32 + 3);
    if bom {
        out.push_str(BOM);
    }
    if crlf {
        out.push_str(&edited.replace('\n', "\r\n"));
    } else {
        out.push_str(&edited);
    }
    let old_text = Some(std::str::from_utf8(&bytes).unwrap_or_default().to_owned());
    Ok(Plan { path, new_file: false, old_text, new_bytes: out.into_bytes(), diff, summary })
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
        summary: format!("Created file {shown} ({lines} line{}).", if lines == 1 { "" } else { "s" }),
        new_bytes: input.new_string.clone().into_bytes(),
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

/// Keeps the file's final-newline state: an edit at the end of the file neither adds nor drops it.
fn keep_final_newline(original: &str, edited: &mut String) {
    if original.is_empty() || edited.is_empty() {
        return;
    }
    match (original.ends_with('\n'), edited.ends_with('\n')) {
        (true, false) => edited.push('\n'),
        (false, true) => {
            edited.pop();
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

/// Start of the line `lines_before` lines above the line containing `pos`.
fn line_start_before(text: &str, pos: usize, lines_before: usize) -> usize {
    let mut start = text[..pos].rfind('\n').map_or(0, |i| i + 1);
    for _ in 0..lines_before {
        if start == 0 {
            break;
        }
        start = text[..start - 1].rfind('\n').map_or(0, |i| i + 1);
    }
    start
}

/// End (after the `\n`) of the line `lines_after` lines below the line containing `pos - 1`.
fn line_end_after(text: &str, pos: usize, lines_after: usize) -> usize {
    let mut end = if pos > 0 && text.as_bytes()[pos - 1] == b'\n' { pos } else { next_line_end(text, pos) };
    for _ in 0..lines_after {
        if end >= text.len() {
            break;
        }
        end = next_line_end(text, end);
    }
    end
}

fn next_line_end(text: &str, from: usize) -> usize {
    text[from..].find('\n').map_or(text.len(), |i| from + i + 1)
}

/// Diff of the changed region only, with line numbers of the whole file. `first..old_end` is the changed span
/// of `old`; the text after it is the same in `new`.
fn windowed_diff(shown: &str, old: &str, new: &str, first: usize, old_end: usize) -> String {
    let start = line_start_before(old, first, DEFAULT_CONTEXT);
    let old_window_end = line_end_after(old, old_end, DEFAULT_CONTEXT);
    let tail = &old[old_window_end..];
    let new_window_end =
        if new.ends_with(tail) && new.len() - tail.len() >= start { new.len() - tail.len() } else { new.len() };
    let old_window = &old[start..old_window_end];
    let new_window = &new[start..new_window_end];
    let offset = old[..start].bytes().filter(|&b| b == b'\n').count();
    diff::render(shown, &diff::hunks_at(old_window, new_window, DEFAULT_CONTEXT, offset), false)
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
