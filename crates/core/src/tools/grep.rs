//! `Grep`: regex search over files, with ripgrep's own crates and ripgrep's defaults.
//!
//! Files are walked in parallel with `ignore` (`.gitignore`, `.ignore` and `.rgignore` respected — also outside
//! git repositories —, hidden files and binary files skipped), each thread searching with its own `Searcher`.
//! Threads finish in any order, so results are sorted before printing: the same search always gives the same
//! output.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::SystemTime;

use futures::future::BoxFuture;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};
use ignore::overrides::OverrideBuilder;
use ignore::types::TypesBuilder;
use ignore::{WalkBuilder, WalkState};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::typed::TypedTool;
use super::{FoundUnit, HiddenPaths, ResultView, Risk, ToolContext, ToolOutput};

/// Entries (lines or files) shown when the model gives no `head_limit`.
pub const DEFAULT_HEAD_LIMIT: usize = 250;
/// Characters of output after which the listing stops, whatever the limit.
pub const MAX_OUTPUT_CHARS: usize = 30_000;
/// Characters of a matching line shown (like ripgrep's `--max-columns 500`, which Claude Code uses).
pub const MAX_LINE_CHARS: usize = 500;
/// Content lines kept in memory over all files; past it, matches are only counted.
const MAX_STORED_LINES: usize = 50_000;

const DESCRIPTION: &str = "A fast content search tool built on ripgrep's engine.\n\
\n\
- Searches file contents with a regular expression (Rust regex syntax, like ripgrep: `log.*Error`, \
`fn\\s+\\w+`). Literal braces and other metacharacters need escaping: `interface\\{\\}` finds `interface{}`.\n\
- path: a file or directory to search (default: the working directory). Files ignored by .gitignore/.ignore, \
hidden files and binary files are skipped.\n\
- glob filters files by name (`*.js`, `**/*.{ts,tsx}`, several separated by spaces or commas); type filters by \
language (`rust`, `py`, `js`, `ts`, `go`, `java`, `cpp`, …), which is faster than glob for standard types.\n\
- output_mode: \"files_with_matches\" (default) lists matching files, most recently modified first; \
\"content\" shows matching lines as path:line:text (context lines as path-line-text, with -A/-B/-C); \"count\" \
shows path:count.\n\
- -i: case insensitive. -n: line numbers in content mode (default true). multiline: patterns can span lines \
and `.` matches newlines.\n\
- head_limit: show only the first N entries (default 250, 0 for all); offset: skip the first N entries (to page \
through a long result); the output says how many were left out.\n\
- Use Grep for searching; don't run grep or rg through Bash.";

#[derive(Clone, Copy, Debug, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
enum Mode {
    Content,
    #[default]
    FilesWithMatches,
    Count,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// The regular expression to search for in file contents
    pattern: String,
    /// File or directory to search in. Defaults to the working directory
    path: Option<String>,
    /// Glob to filter files (e.g. "*.js", "*.{ts,tsx}")
    glob: Option<String>,
    /// File type to search (e.g. js, py, rust, go, java)
    #[serde(rename = "type")]
    file_type: Option<String>,
    /// Output mode; default files_with_matches
    #[serde(default)]
    #[schemars(with = "Option<Mode>")]
    output_mode: Mode,
    /// Case insensitive search
    #[serde(rename = "-i")]
    case_insensitive: Option<bool>,
    /// Show line numbers (content mode; default true)
    #[serde(rename = "-n")]
    line_numbers: Option<bool>,
    /// Lines to show after each match (content mode)
    #[serde(rename = "-A")]
    after: Option<u64>,
    /// Lines to show before each match (content mode)
    #[serde(rename = "-B")]
    before: Option<u64>,
    /// Alias for context
    #[serde(rename = "-C")]
    context_c: Option<u64>,
    /// Lines to show before and after each match (content mode; before -A/-B)
    context: Option<u64>,
    /// Let patterns span lines; `.` matches newlines. Default false
    multiline: Option<bool>,
    /// Show only the first N entries (default 250; 0 for all)
    head_limit: Option<u64>,
    /// Skip the first N entries before applying head_limit (default 0)
    offset: Option<u64>,
}

/// Which entries of the result are shown: `offset` skipped, then at most `limit`.
#[derive(Clone, Copy, Debug)]
struct Page {
    offset: usize,
    limit: usize,
}

impl Page {
    fn of(input: &Input) -> Page {
        let count = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
        let limit = match input.head_limit {
            None => DEFAULT_HEAD_LIMIT,
            Some(0) => usize::MAX,
            Some(n) => count(n),
        };
        Page { offset: input.offset.map_or(0, count), limit }
    }

    /// Entries a file may keep: what could be shown.
    fn kept(self) -> usize {
        self.offset.saturating_add(self.limit)
    }
}

pub struct GrepTool;

impl TypedTool for GrepTool {
    type Input = Input;
    const NAME: &'static str = "Grep";

    fn description(&self) -> std::borrow::Cow<'static, str> {
        DESCRIPTION.into()
    }

    fn is_read_only(&self) -> bool {
        true
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

    fn result_view(&self, input: &Value, content: &str) -> Option<ResultView> {
        let mode = input.get("output_mode").cloned().and_then(|mode| serde_json::from_value(mode).ok());
        Some(grep_view(mode.unwrap_or_default(), content))
    }

    fn call<'a>(&'a self, input: Input, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move {
            let root = ctx.resolve(input.path.as_deref().unwrap_or("."));
            let cancel = ctx.cancel.clone();
            let judged_root = ctx.judged_path.clone();
            let guards = Guards { hidden: ctx.hidden.clone(), unreadable: ctx.unreadable.clone(), judged_root };
            let (mode, page) = (input.output_mode, Page::of(&input));
            match tokio::task::spawn_blocking(move || grep(&input, &root, &cancel, guards)).await {
                Ok(Ok(text)) => {
                    let structured = structured_result(mode, page, &text);
                    ToolOutput::ok(text).with_structured(structured)
                }
                Ok(Err(message)) => ToolOutput::error(message),
                Err(err) => ToolOutput::error(format!("Grep failed: {err}")),
            }
        })
    }
}

const NO_MATCHES: &str = "No matches found";

/// A search's result for people, read back from the text [`grep`] wrote for `mode`: the count it states (the
/// files found, the total of matches, the lines before a cut) and the listed results without its notes.
fn grep_view(mode: Mode, content: &str) -> ResultView {
    let unit = match mode {
        Mode::FilesWithMatches => FoundUnit::File,
        Mode::Count => FoundUnit::Match,
        Mode::Content => FoundUnit::Line,
    };
    let is_note = |line: &str| line.starts_with("[Showing ") || line.starts_with("(Too many matches");
    let items: Vec<String> = content
        .lines()
        .filter(|line| !line.is_empty() && *line != "--" && !line.starts_with("Found ") && !is_note(line))
        .filter(|_| content != NO_MATCHES)
        .map(str::to_owned)
        .collect();
    let stated = |prefix: &str| {
        content.lines().find_map(|line| line.strip_prefix(prefix)?.split(' ').next()?.parse::<usize>().ok())
    };
    let cut_total = content.lines().find_map(|line| {
        line.strip_prefix("[Showing ")?.split(" of ").nth(1)?.split(' ').next()?.parse::<usize>().ok()
    });
    let count = match mode {
        Mode::FilesWithMatches | Mode::Count => stated("Found "),
        Mode::Content => cut_total,
    };
    ResultView::Found { count: count.unwrap_or(items.len()), unit, items }
}

/// The result as Claude Code gives it to SDK hosts (`tool_use_result`): `mode`, `numFiles`, `filenames`, and for
/// content and count modes the `content` listed (`numLines`, `numMatches`), with the `appliedLimit` when the listing
/// was cut and the `appliedOffset` when one was asked for.
fn structured_result(mode: Mode, page: Page, text: &str) -> Value {
    let ResultView::Found { count, items, .. } = grep_view(mode, text) else { return Value::Null };
    let cut = text.lines().any(|line| line.starts_with("[Showing "));
    let mut result = match mode {
        Mode::FilesWithMatches => json!({"mode": "files_with_matches", "numFiles": items.len(), "filenames": items}),
        Mode::Content => json!({
            "mode": "content", "numFiles": 0, "filenames": [], "content": items.join("\n"), "numLines": items.len()
        }),
        Mode::Count => json!({
            "mode": "count", "numFiles": items.len(), "filenames": [], "content": items.join("\n"), "numMatches": count
        }),
    };
    if cut && page.limit != usize::MAX {
        result["appliedLimit"] = json!(page.limit);
    }
    if page.offset > 0 {
        result["appliedOffset"] = json!(page.offset);
    }
    result
}

/// One matching file.
struct FileResult {
    path: PathBuf,
    mtime: Option<SystemTime>,
    /// Matching lines (count mode) or entries (content mode: match and context lines).
    entries: usize,
    lines: Vec<Line>,
}

enum Line {
    Match(u64, String),
    Context(u64, String),
    Break,
}

/// What a search may not see: `hidden` is what the walk skips by name; `unreadable` is checked against the real
/// place of each file opened (a link put in the way after the walk judged its name leads elsewhere), and so is the
/// root: a file opened must really lie beneath the root as it was judged (`judged_root`, when nobody approved the
/// call) or as it resolves when the search starts.
struct Guards {
    hidden: Option<HiddenPaths>,
    unreadable: Option<HiddenPaths>,
    judged_root: Option<PathBuf>,
}

/// Runs the search and formats the result.
fn grep(input: &Input, root: &Path, cancel: &CancellationToken, guards: Guards) -> Result<String, String> {
    let Guards { hidden, unreadable, judged_root } = guards;
    if !root.exists() {
        return Err(format!("Path does not exist: {}", root.display()));
    }
    let matcher = build_matcher(input)?;
    let mode = input.output_mode;
    let mut searcher = SearcherBuilder::new();
    searcher.line_number(true).multi_line(input.multiline == Some(true)).binary_detection(BinaryDetection::quit(0));
    if mode == Mode::Content {
        // `context` (then `-C`) over `-A`/`-B`, as Claude Code reads them.
        let around = input.context.or(input.context_c);
        let (before, after) = (around.or(input.before), around.or(input.after));
        searcher.before_context(before.unwrap_or(0) as usize).after_context(after.unwrap_or(0) as usize);
    }
    let mut walker = build_walker(input, root)?;
    super::skip_hidden(&mut walker, root, hidden)?;
    let beneath = judged_root
        .or_else(|| crate::fs_util::resolve_like_kernel(root))
        .unwrap_or_else(|| crate::fs_util::normalize(root));
    let beneath = beneath.as_path();
    let page = Page::of(input);
    let limit = page.kept();

    let results = Mutex::new(Vec::new());
    let stored = AtomicUsize::new(0);
    walker.build_parallel().run(|| {
        let matcher = matcher.clone();
        let mut searcher = searcher.build();
        let (results, stored) = (&results, &stored);
        let unreadable = unreadable.clone();
        Box::new(move |entry| {
            if cancel.is_cancelled() {
                return WalkState::Quit;
            }
            let Ok(entry) = entry else { return WalkState::Continue };
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                return WalkState::Continue;
            }
            let file = Opened { path: entry.path(), beneath, unreadable: unreadable.as_ref() };
            if let Some(result) = search_file(&mut searcher, &matcher, file, mode, limit, stored) {
                let mtime = match mode {
                    Mode::FilesWithMatches => entry.metadata().ok().and_then(|m| m.modified().ok()),
                    _ => None,
                };
                let result = FileResult { mtime, ..result };
                results.lock().unwrap_or_else(|p| p.into_inner()).push(result);
            }
            WalkState::Continue
        })
    });
    if cancel.is_cancelled() {
        return Err("Search was interrupted.".to_string());
    }
    let mut results = results.into_inner().unwrap_or_else(|p| p.into_inner());
    if results.is_empty() {
        return Ok(NO_MATCHES.to_string());
    }
    Ok(match mode {
        Mode::FilesWithMatches => format_files(&mut results, page),
        Mode::Count => format_counts(&mut results, page),
        Mode::Content => {
            results.sort_by(|a, b| a.path.cmp(&b.path));
            format_content(&results, page, input.line_numbers.unwrap_or(true), stored.load(Ordering::Relaxed))
        }
    })
}

fn build_matcher(input: &Input) -> Result<RegexMatcher, String> {
    let mut builder = RegexMatcherBuilder::new();
    // `^`/`$` match at line boundaries, as in ripgrep.
    builder.case_insensitive(input.case_insensitive == Some(true)).multi_line(true);
    if input.multiline == Some(true) {
        builder.dot_matches_new_line(true);
    } else {
        // Lets the searcher search whole buffers for candidate lines instead of going line by line.
        builder.line_terminator(Some(b'\n'));
    }
    builder.build(&input.pattern).map_err(|err| {
        let hint = if input.multiline != Some(true) && matches!(err.kind(), grep_regex::ErrorKind::NotAllowed(_)) {
            " (to match across lines, set multiline: true)"
        } else {
            ""
        };
        format!("Invalid regex {:?}: {err}{hint}", input.pattern)
    })
}

fn build_walker(input: &Input, root: &Path) -> Result<WalkBuilder, String> {
    let mut walker = WalkBuilder::new(root);
    // A .gitignore applies outside git repositories too: that is what users expect of it.
    walker.require_git(false).threads(0);
    walker.add_custom_ignore_filename(".rgignore");
    if let Some(globs) = input.glob.as_deref().filter(|g| !g.trim().is_empty()) {
        let mut overrides = OverrideBuilder::new(root);
        for glob in split_globs(globs) {
            overrides.add(&glob).map_err(|err| format!("Invalid glob {glob:?}: {err}"))?;
        }
        walker.overrides(overrides.build().map_err(|err| format!("Invalid glob {globs:?}: {err}"))?);
    }
    if let Some(name) = input.file_type.as_deref().filter(|t| !t.is_empty()) {
        let mut types = TypesBuilder::new();
        types.add_defaults();
        types.select(name);
        let types = types.build().map_err(|_| {
            format!(
                "Unknown file type {name:?}. Common types: rust, py, js, ts, go, java, c, cpp, cs, rb, php, swift, \
                 kotlin, scala, sh, html, css, json, yaml, toml, md, sql. Or use glob instead."
            )
        })?;
        walker.types(types);
    }
    Ok(walker)
}

/// Splits Claude Code's `glob` parameter: globs separated by whitespace, or by commas outside braces.
fn split_globs(globs: &str) -> Vec<String> {
    let mut out = Vec::new();
    for part in globs.split_whitespace() {
        if part.contains('{') && part.contains('}') {
            out.push(part.to_string());
        } else {
            out.extend(part.split(',').filter(|g| !g.is_empty()).map(str::to_string));
        }
    }
    out
}

/// A file the walk found, where its opened descriptor must lead (beneath the search's root) and where not.
struct Opened<'a> {
    path: &'a Path,
    beneath: &'a Path,
    unreadable: Option<&'a HiddenPaths>,
}

/// Searches one file; `None` when it has no match, could not be read, or now leads out of the search's root or
/// where no Read may look.
fn search_file(
    searcher: &mut Searcher,
    matcher: &RegexMatcher,
    file: Opened<'_>,
    mode: Mode,
    limit: usize,
    stored: &AtomicUsize,
) -> Option<FileResult> {
    let Opened { path, beneath, unreadable } = file;
    let opened = crate::fs_util::open_regular(path).ok()?;
    // The walk judged the name beneath the root, but a directory swapped for a link since (by a command in the
    // background) leads the open out of it, to a file nobody judged. Where the descriptor can't tell (no `/proc`),
    // the file is not searched.
    let real = crate::fs_util::opened_path(&opened).ok().filter(|real| real.starts_with(beneath))?;
    if let Some(unreadable) = unreadable {
        super::refuse_hidden_at(&opened, Some(&real), "", &**unreadable).ok()?;
    }
    let mut sink = FileSink { mode, limit, stored, matched: 0, entries: 0, lines: Vec::new() };
    searcher.search_file(matcher, &opened, &mut sink).ok()?;
    (sink.matched > 0).then(|| FileResult {
        path: path.to_path_buf(),
        mtime: None,
        entries: if mode == Mode::Content { sink.entries } else { sink.matched },
        lines: sink.lines,
    })
}

/// Collects one file's matches. Stops at the first match when only file names are wanted.
struct FileSink<'a> {
    mode: Mode,
    /// No file contributes more than the head limit of lines to the output, so no more are kept.
    limit: usize,
    stored: &'a AtomicUsize,
    matched: usize,
    entries: usize,
    lines: Vec<Line>,
}

impl FileSink<'_> {
    fn keep(&mut self, line: Line) {
        self.entries += 1;
        if self.lines.len() < self.limit && self.stored.fetch_add(1, Ordering::Relaxed) < MAX_STORED_LINES {
            self.lines.push(line);
        }
    }
}

impl Sink for FileSink<'_> {
    type Error = std::io::Error;

    fn matched(&mut self, _: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        match self.mode {
            Mode::FilesWithMatches => {
                self.matched = 1;
                Ok(false)
            }
            Mode::Count => {
                self.matched += mat.lines().count().max(1);
                Ok(true)
            }
            Mode::Content => {
                let first = mat.line_number().unwrap_or(0);
                for (i, line) in mat.lines().enumerate() {
                    self.matched += 1;
                    self.keep(Line::Match(first + i as u64, display_line(line)));
                }
                Ok(true)
            }
        }
    }

    fn context(&mut self, _: &Searcher, context: &SinkContext<'_>) -> Result<bool, Self::Error> {
        let number = context.line_number().unwrap_or(0);
        self.keep(Line::Context(number, display_line(context.bytes())));
        Ok(true)
    }

    fn context_break(&mut self, _: &Searcher) -> Result<bool, Self::Error> {
        if self.lines.len() < self.limit {
            self.lines.push(Line::Break);
        }
        Ok(true)
    }
}

/// A line as shown: without its line terminator, lossily decoded, cut at [`MAX_LINE_CHARS`].
fn display_line(bytes: &[u8]) -> String {
    let bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
    let text = String::from_utf8_lossy(bytes);
    let chars = text.chars().count();
    if chars <= MAX_LINE_CHARS {
        return text.into_owned();
    }
    let cut: String = text.chars().take(MAX_LINE_CHARS).collect();
    format!("{cut}… [line truncated, {chars} chars]")
}

fn format_files(results: &mut [FileResult], page: Page) -> String {
    // Most recently modified first (what the model is most likely working on), then by path.
    results.sort_by(|a, b| b.mtime.cmp(&a.mtime).then_with(|| a.path.cmp(&b.path)));
    let total = results.len();
    let mut out = format!("Found {total} file{}\n", plural(total));
    let shown = emit_limited(&mut out, results.iter().map(|r| r.path.display().to_string()), page);
    finish(out, shown, total, "files", page)
}

fn format_counts(results: &mut [FileResult], page: Page) -> String {
    results.sort_by(|a, b| a.path.cmp(&b.path));
    let total_files = results.len();
    let total_matches: usize = results.iter().map(|r| r.entries).sum();
    let mut out = String::new();
    let shown = emit_limited(&mut out, results.iter().map(|r| format!("{}:{}", r.path.display(), r.entries)), page);
    let mut out = finish(out, shown, total_files, "files", page);
    out.push_str(&format!(
        "\n\nFound {total_matches} total match{} across {total_files} file{}.",
        if total_matches == 1 { "" } else { "es" },
        plural(total_files)
    ));
    out
}

fn format_content(results: &[FileResult], page: Page, numbers: bool, stored: usize) -> String {
    let total: usize = results.iter().map(|r| r.entries).sum();
    let mut out = String::new();
    let mut shown = 0;
    let mut skipped = 0;
    let mut full = false;
    'files: for (index, result) in results.iter().enumerate() {
        let path = result.path.display().to_string();
        let has_context = result.lines.iter().any(|l| matches!(l, Line::Context(..)));
        if index > 0 && has_context {
            out.push_str("--\n");
        }
        for line in &result.lines {
            let text = match line {
                Line::Match(n, text) if numbers => format!("{path}:{n}:{text}\n"),
                Line::Context(n, text) if numbers => format!("{path}-{n}-{text}\n"),
                Line::Match(_, text) => format!("{path}:{text}\n"),
                Line::Context(_, text) => format!("{path}-{text}\n"),
                Line::Break => {
                    out.push_str("--\n");
                    continue;
                }
            };
            if skipped < page.offset {
                skipped += 1;
                continue;
            }
            if shown >= page.limit || out.len() + text.len() > MAX_OUTPUT_CHARS {
                full = true;
                break 'files;
            }
            out.push_str(&text);
            shown += 1;
        }
    }
    let mut out = finish(out, shown, total, "lines", page);
    if !full && stored >= MAX_STORED_LINES && shown < total {
        out.push_str("\n(Too many matches to keep them all; narrow the search.)");
    }
    out
}

/// Appends the page's items one per line, stopping at [`MAX_OUTPUT_CHARS`]; returns how many were shown.
fn emit_limited(out: &mut String, items: impl Iterator<Item = String>, page: Page) -> usize {
    let mut shown = 0;
    for item in items.skip(page.offset) {
        if shown >= page.limit || out.len() + item.len() + 1 > MAX_OUTPUT_CHARS {
            break;
        }
        out.push_str(&item);
        out.push('\n');
        shown += 1;
    }
    shown
}

/// Trims the final newline and says how many entries were left out (before the page, and after it).
fn finish(mut out: String, shown: usize, total: usize, what: &str, page: Page) -> String {
    loop {
        out.truncate(out.trim_end_matches('\n').len());
        if out.ends_with("\n--") {
            out.truncate(out.len() - 3);
        } else if out == "--" {
            out.clear();
        } else {
            break;
        }
    }
    let skipped = page.offset.min(total);
    if skipped > 0 && shown == 0 {
        out.push_str(&format!("[No {what} past offset {skipped}: there are {total}.]"));
    } else if skipped > 0 {
        let after = total - skipped - shown;
        out.push_str(&format!(
            "\n\n[Showing {what} {} to {} of {total} (offset {skipped}); {after} more after these.]",
            skipped + 1,
            skipped + shown
        ));
    } else if shown < total {
        out.push_str(&format!(
            "\n\n[Showing {shown} of {total} {what}; {} more not shown. Use head_limit and offset to page, a narrower \
             path or glob, or a more specific pattern to see others.]",
            total - shown
        ));
    }
    out
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

#[cfg(test)]
mod tests;
