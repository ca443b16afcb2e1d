//! `Read`: a file's lines, numbered like `cat -n`.
//!
//! The file is streamed once in fixed-size chunks: lines inside the requested window are kept, the rest are only
//! counted (for the "N lines total" note) and hashed (for [`FileState`](super::FileState)), so reading 50 lines of
//! a 10 MB file never builds a 10 MB string.

use std::fs;
use std::io::{self, BufRead, BufReader, Read as _};
use std::path::Path;

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::file_state::{ContentHash, Snapshot};
use super::typed::TypedTool;
use super::{FileState, ResultView, Risk, ToolContext, ToolOutput, display_path};
use crate::fs_util::{self, human_size};

/// Lines returned when the model gives no `limit`.
pub const DEFAULT_LIMIT: usize = 2000;
/// Characters of one line shown before it is cut.
pub const MAX_LINE_CHARS: usize = 2000;
/// Characters of output (~25k tokens) after which the listing stops early, whatever the limit says.
pub const MAX_OUTPUT_CHARS: usize = 100_000;

const DESCRIPTION: &str = "Reads a file from the local filesystem.\n\
\n\
- file_path should be an absolute path (relative paths are resolved against the working directory).\n\
- By default it reads up to 2000 lines from the start of the file. For long files, pass offset (the 1-based \
line number to start at) and limit (how many lines) to read a window; the output says how many lines the file \
has and which offset continues it.\n\
- Lines longer than 2000 characters are cut, with a note of their full length.\n\
- Output is numbered like `cat -n`: the line number, a tab, then the line. The number and tab are not part of \
the file: never include them in Edit's old_string or new_string.\n\
- Reading a file is required before editing or overwriting it with Edit or Write.\n\
- It reads files, not directories: to list a directory use Glob, or `ls` via Bash.\n\
- Images (PNG, JPEG, GIF, WebP) are shown to you as pictures (scaled down when large); other binary files \
(archives, executables) are refused.\n\
- Reading several files you will probably need in one turn (several Read calls at once) is faster than one by \
one.";

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// The absolute path of the file to read
    file_path: String,
    /// The line number to start reading from (1-based). Only for files too long to read at once
    offset: Option<u64>,
    /// The number of lines to read. Only for files too long to read at once
    #[schemars(range(min = 1))]
    limit: Option<u64>,
}

pub struct ReadTool;

impl TypedTool for ReadTool {
    type Input = Input;
    const NAME: &'static str = "Read";
    const FILE_FIELD: Option<&'static str> = Some("file_path");

    fn description(&self) -> std::borrow::Cow<'static, str> {
        DESCRIPTION.into()
    }

    fn is_read_only(&self) -> bool {
        true
    }

    fn kind(&self) -> super::ToolKind {
        super::ToolKind::Read
    }

    fn risk(&self) -> Risk {
        Risk::Low
    }

    fn result_view(&self, _input: &Value, content: &str) -> Option<ResultView> {
        Some(read_view(content))
    }

    fn call<'a>(&'a self, input: Input, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move {
            let judged = ctx.judged_path.is_some();
            let path = ctx.judged_or_resolved(&input.file_path);
            let shown = display_path(&path, &ctx.cwd);
            let files = ctx.files.clone();
            let unreadable = ctx.unreadable.clone();
            let start = usize::try_from(input.offset.unwrap_or(1).max(1)).unwrap_or(usize::MAX);
            let limit = usize::try_from(input.limit.unwrap_or(DEFAULT_LIMIT as u64)).unwrap_or(usize::MAX);
            let guard = Guard { unreadable, judged };
            let job = move || read_file(&path, &shown, (start, limit), &files, &guard);
            match tokio::task::spawn_blocking(job).await {
                Ok(Ok(Read::Image(image))) => {
                    let mut output = ToolOutput::ok(image.text).with_structured(image.structured);
                    output.images = Some(Box::new(vec![image.source]));
                    output
                }
                Ok(Ok(Read::Text(text, Some(structured)))) => ToolOutput::ok(text).with_structured(structured),
                Ok(Ok(Read::Text(text, None))) => ToolOutput::ok(text),
                Ok(Err(message)) => ToolOutput::error(message),
                Err(err) => ToolOutput::error(format!("Read failed: {err}")),
            }
        })
    }
}

/// How the result of a Read the session already holds, unchanged, says so (after the path).
const UNCHANGED: &str = " is unchanged since you last read it";

/// A Read's result for people, read back from the text [`read_file`] wrote: its numbered lines, the file's total
/// from the closing note when only part was shown, or that the file was unchanged.
fn read_view(content: &str) -> ResultView {
    let numbered = |line: &&str| {
        let digits = line.trim_start();
        digits
            .split_once('\t')
            .is_some_and(|(number, _)| !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit()))
    };
    let lines = content.lines().filter(numbered).count();
    if lines == 0 && content.lines().next().is_some_and(|first| first.contains(UNCHANGED)) {
        return ResultView::Note { text: "Unchanged since it was last read".to_owned() };
    }
    let total = content.lines().rev().find_map(|line| {
        let total = line.strip_prefix("[Showing lines ")?.split(" of ").nth(1)?;
        total.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok()
    });
    ResultView::FileRead { lines, total }
}

/// What a Read may not reach: `unreadable` is checked against the real place of the file opened; a `judged`
/// path (resolved when the call was judged, just before it ran) is opened without following any link.
#[derive(Default)]
struct Guard {
    unreadable: Option<crate::tools::HiddenPaths>,
    judged: bool,
}

/// What a Read gives the model.
enum Read {
    /// The text the model sees and, when lines were shown, Claude Code's structured `file` result.
    Text(String, Option<Value>),
    /// A picture, which the model sees as one.
    Image(super::read_image::SentImage),
}

impl Read {
    /// The text the model sees.
    #[cfg(test)]
    fn text(&self) -> &str {
        match self {
            Read::Text(text, _) => text,
            Read::Image(image) => &image.text,
        }
    }
}

/// Reads lines `start..start+limit` (1-based) of `path`, or the image it is, and records the file in `files`.
fn read_file(
    path: &Path,
    shown: &str,
    (start, limit): (usize, usize),
    files: &FileState,
    guard: &Guard,
) -> Result<Read, String> {
    let meta = match fs::metadata(path) {
        Ok(meta) => meta,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Err(not_found_message(path)),
        Err(err) => return Err(format!("Cannot read {}: {err}", path.display())),
    };
    if meta.is_dir() {
        return Err(format!(
            "{} is a directory, not a file. Use Glob to find files in it, or `ls` via Bash to list it.",
            path.display()
        ));
    }
    let opened = if guard.judged { fs_util::open_regular_resolved(path) } else { fs_util::open_regular(path) };
    let file = opened.map_err(|err| format!("Cannot read {}: {err}", path.display()))?;
    crate::tools::refuse_hidden_opened(&file, shown, guard.unreadable.as_deref())?;
    let mut reader = BufReader::with_capacity(64 * 1024, file);
    let head = reader.fill_buf().map_err(|err| format!("Cannot read {}: {err}", path.display()))?;
    if let Some(format) = super::read_image::format_of(head) {
        return read_image(reader, path, shown, format, meta.len());
    }
    if super::notebook::is_notebook(path) && meta.len() <= MAX_NOTEBOOK_BYTES {
        return read_notebook(reader, path, shown, files);
    }
    if fs_util::looks_binary(path, head) {
        return Err(format!(
            "Cannot read {}: it is a binary file ({}). Read only works on text files.",
            path.display(),
            human_size(meta.len())
        ));
    }

    let end = start.saturating_add(limit.max(1) - 1);
    let mut lines = LineWindow::new(start, end);
    let mut hash = ContentHash::new();
    let mut total_bytes = 0u64;
    loop {
        let chunk = reader.fill_buf().map_err(|err| format!("Cannot read {}: {err}", path.display()))?;
        if chunk.is_empty() {
            break;
        }
        hash.update(chunk);
        lines.feed(chunk);
        let n = chunk.len();
        total_bytes += n as u64;
        reader.consume(n);
    }
    lines.finish();
    let content_hash = hash.finish();
    files.record(path, Snapshot { len: total_bytes, mtime: meta.modified().ok(), hash: content_hash });
    if files.repeat_read(path, content_hash, start, limit) {
        return Ok(Read::Text(
            format!(
                "{shown}{UNCHANGED} (the same lines are already in this conversation above); read it again only after \
                 it changes."
            ),
            None,
        ));
    }

    let total = lines.total_lines();
    if total == 0 {
        return Ok(Read::Text(format!("The file {shown} exists but is empty (0 lines)."), None));
    }
    if start > total {
        return Err(format!(
            "{shown} has only {total} line{}; offset {start} is past the end. Use an offset from 1 to {total}.",
            plural(total)
        ));
    }
    let structured = serde_json::json!({
        "type": "text",
        "file": {
            "filePath": path.display().to_string(),
            "content": super::structured_text(lines.raw.strip_suffix('\n').unwrap_or(&lines.raw)),
            "numLines": lines.last_shown + 1 - start.min(lines.last_shown + 1),
            "startLine": start,
            "totalLines": total,
        },
    });
    let mut out = lines.out;
    if lines.last_shown < total {
        let why = if lines.output_capped { " (output size limit reached)" } else { "" };
        out.push_str(&format!(
            "\n[Showing lines {start}-{} of {total}{why}. Use offset={} to read more.]",
            lines.last_shown,
            lines.last_shown + 1
        ));
    } else if out.ends_with('\n') {
        out.pop();
    }
    Ok(Read::Text(out, Some(structured)))
}

/// The largest notebook shown as cells; a larger one is read as text, a window of lines at a time.
const MAX_NOTEBOOK_BYTES: u64 = 8 * 1024 * 1024;

/// A notebook, opened and checked as any file a Read opens, shown as its cells (and recorded as read, so that
/// NotebookEdit may change it). One that doesn't parse is an error saying why.
fn read_notebook(mut reader: BufReader<fs::File>, path: &Path, shown: &str, files: &FileState) -> Result<Read, String> {
    let mut bytes = Vec::new();
    reader.read_to_end(&mut bytes).map_err(|err| format!("Cannot read {}: {err}", path.display()))?;
    files.record_content(path, &bytes);
    let text = String::from_utf8_lossy(&bytes);
    let notebook = super::notebook::Notebook::parse(&text).map_err(|why| format!("Cannot read {shown}: {why}."))?;
    let structured = serde_json::json!({
        "type": "notebook",
        "file": {"filePath": path.display().to_string(), "cells": notebook.cells_json()},
    });
    Ok(Read::Text(notebook.render(), Some(structured)))
}

/// An image file, opened and checked as any file a Read opens, read whole and prepared for the model.
fn read_image(
    mut reader: BufReader<fs::File>,
    path: &Path,
    shown: &str,
    format: image::ImageFormat,
    size: u64,
) -> Result<Read, String> {
    if size > super::read_image::MAX_FILE_BYTES {
        return Err(format!(
            "Cannot read {}: the image is {} on disk, more than tandem sends ({} at most).",
            path.display(),
            human_size(size),
            human_size(super::read_image::MAX_FILE_BYTES)
        ));
    }
    let mut bytes = Vec::new();
    reader
        .by_ref()
        .take(super::read_image::MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|err| format!("Cannot read {}: {err}", path.display()))?;
    super::read_image::prepare(bytes, format, shown).map(Read::Image)
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

fn not_found_message(path: &Path) -> String {
    let mut message = format!("File does not exist: {}", path.display());
    let similar = fs_util::similar_names(path, 3);
    if !similar.is_empty() {
        let names: Vec<String> = similar.iter().map(|p| p.display().to_string()).collect();
        message.push_str(&format!(". Did you mean: {}?", names.join(", ")));
    }
    message
}

/// Collects numbered lines `start..=end` from a stream of chunks, counting every line.
struct LineWindow {
    start: usize,
    end: usize,
    /// The line being scanned (1-based).
    line_no: usize,
    /// Bytes of the current line (only inside the window, at most a cut line's worth).
    current: Vec<u8>,
    /// Characters of the current line so far (counted even past the cut).
    current_chars: usize,
    /// The current line has at least one byte (so a last line without `\n` still counts).
    current_started: bool,
    current_last_byte: u8,
    out: String,
    /// The shown lines as they are in the file (for the structured result), without numbers.
    raw: String,
    last_shown: usize,
    output_capped: bool,
}

impl LineWindow {
    fn new(start: usize, end: usize) -> Self {
        LineWindow {
            start,
            end,
            line_no: 1,
            current: Vec::new(),
            current_chars: 0,
            current_started: false,
            current_last_byte: 0,
            out: String::new(),
            raw: String::new(),
            last_shown: 0,
            output_capped: false,
        }
    }

    fn feed(&mut self, mut chunk: &[u8]) {
        while !chunk.is_empty() {
            if self.line_no > self.end {
                // Past the window: count only.
                let newlines = chunk.iter().filter(|&&b| b == b'\n').count();
                self.line_no += newlines;
                self.current_started = chunk.last() != Some(&b'\n');
                return;
            }
            let newline = chunk.iter().position(|&b| b == b'\n');
            let segment = &chunk[..newline.unwrap_or(chunk.len())];
            if self.line_no >= self.start {
                self.push_segment(segment);
            } else if !segment.is_empty() {
                self.current_started = true;
            }
            match newline {
                Some(i) => {
                    self.finish_line();
                    chunk = &chunk[i + 1..];
                }
                None => return,
            }
        }
    }

    fn push_segment(&mut self, segment: &[u8]) {
        if segment.is_empty() {
            return;
        }
        self.current_started = true;
        self.current_last_byte = segment[segment.len() - 1];
        self.current_chars += segment.iter().filter(|&&b| (b & 0xC0) != 0x80).count();
        let room = (MAX_LINE_CHARS * 4 + 4).saturating_sub(self.current.len());
        self.current.extend_from_slice(&segment[..segment.len().min(room)]);
    }

    fn finish_line(&mut self) {
        if self.line_no >= self.start && self.line_no <= self.end {
            self.emit_line();
        }
        self.line_no += 1;
        self.current.clear();
        self.current_chars = 0;
        self.current_started = false;
        self.current_last_byte = 0;
    }

    /// At end of input: a last line without a trailing newline is still a line.
    fn finish(&mut self) {
        if self.current_started {
            self.finish_line();
        }
    }

    fn total_lines(&self) -> usize {
        self.line_no - 1
    }

    fn emit_line(&mut self) {
        // CRLF files are shown with plain line breaks; Edit matches them the same way.
        let mut chars = self.current_chars;
        if self.current_last_byte == b'\r' {
            chars -= 1;
            if self.current.last() == Some(&b'\r') {
                self.current.pop();
            }
        }
        let text = String::from_utf8_lossy(&self.current);
        let line = if chars > MAX_LINE_CHARS {
            let cut: String = text.chars().take(MAX_LINE_CHARS).collect();
            format!("{cut}… [line truncated, {chars} chars]")
        } else {
            text.into_owned()
        };
        let formatted = format!("{:>6}\t{line}\n", self.line_no);
        if self.out.len() + formatted.len() > MAX_OUTPUT_CHARS && self.last_shown > 0 {
            // Stop showing lines; keep counting.
            self.output_capped = true;
            self.end = self.line_no - 1;
            return;
        }
        self.out.push_str(&formatted);
        if self.raw.len() <= super::MAX_STRUCTURED_TEXT {
            self.raw.push_str(&line);
            self.raw.push('\n');
        }
        self.last_shown = self.line_no;
    }
}

#[cfg(test)]
mod dedup_tests {
    use super::*;

    #[test]
    fn an_identical_read_of_an_unchanged_file_answers_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.txt");
        std::fs::write(&path, "one\ntwo\n").unwrap();
        let files = FileState::default();
        assert!(read_file(&path, "a.txt", (1, 2000), &files, &Guard::default()).unwrap().text().contains("one"));
        assert!(read_file(&path, "a.txt", (1, 2000), &files, &Guard::default()).unwrap().text().contains("unchanged"));
        assert!(
            read_file(&path, "a.txt", (2, 2000), &files, &Guard::default()).unwrap().text().contains("two"),
            "another window is read"
        );
        std::fs::write(&path, "one\nTWO\n").unwrap();
        assert!(
            read_file(&path, "a.txt", (2, 2000), &files, &Guard::default()).unwrap().text().contains("TWO"),
            "a change is read"
        );
        files.forget_reads();
        assert!(
            read_file(&path, "a.txt", (2, 2000), &files, &Guard::default()).unwrap().text().contains("TWO"),
            "after compaction"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::Tool;
    use serde_json::json;
    use std::io::Write;

    fn ctx(dir: &Path) -> ToolContext {
        ToolContext::new(dir.to_path_buf())
    }

    async fn read(ctx: &ToolContext, input: Value) -> ToolOutput {
        ReadTool.run(input.into(), ctx).await
    }

    /// The card's line counts come from Read's own text: whole, cut, empty and unchanged.
    #[tokio::test]
    async fn result_view_reads_back_the_text() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("a.txt"), "one\ntwo\nthree\n").unwrap();
        fs::write(dir.path().join("empty.txt"), "").unwrap();
        let ctx = ctx(dir.path());
        let view = |input: Value, content: &str| Tool::result_view(&ReadTool, &input, content).unwrap();
        let input = json!({"file_path": "a.txt", "limit": 2});
        assert_eq!(
            view(input.clone(), &read(&ctx, input).await.content),
            ResultView::FileRead { lines: 2, total: Some(3) }
        );
        let input = json!({"file_path": "a.txt", "offset": 1});
        assert_eq!(
            view(input.clone(), &read(&ctx, input).await.content),
            ResultView::FileRead { lines: 3, total: None }
        );
        let again = read(&ctx, json!({"file_path": "a.txt", "offset": 1})).await.content;
        assert!(matches!(view(json!({}), &again), ResultView::Note { .. }), "{again}");
        let input = json!({"file_path": "empty.txt"});
        assert_eq!(
            view(input.clone(), &read(&ctx, input).await.content),
            ResultView::FileRead { lines: 0, total: None }
        );
    }

    #[tokio::test]
    async fn numbers_lines_like_cat_n_and_records_state() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("a.txt"), "one\ntwo\r\nthree").unwrap();
        let ctx = ctx(dir.path());
        let out = read(&ctx, json!({"file_path": "a.txt"})).await;
        assert!(!out.is_error);
        assert_eq!(out.content, "     1\tone\n     2\ttwo\n     3\tthree");
        assert!(ctx.files.was_read(&dir.path().join("a.txt")));
        assert_eq!(ctx.files.check_unchanged(&dir.path().join("a.txt"), b"one\ntwo\r\nthree"), Ok(()));
    }

    /// Found from the outside: a Read of a named pipe (no approval needed inside the workspace) or of
    /// `/dev/tty` hung for good, and nothing but kill -9 ended it.
    #[tokio::test]
    async fn a_pipe_or_a_device_is_refused_at_once_not_waited_on() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        rustix::fs::mknodat(rustix::fs::CWD, &fifo, rustix::fs::FileType::Fifo, 0o644.into(), 0).unwrap();
        let ctx = ctx(dir.path());
        let reading = read(&ctx, json!({"file_path": "fifo"}));
        let out = tokio::time::timeout(std::time::Duration::from_secs(5), reading).await.expect("no wait");
        assert!(out.is_error && out.content.contains("named pipe"), "{}", out.content);
        let out = read(&ctx, json!({"file_path": "/dev/zero"})).await;
        assert!(out.is_error && out.content.contains("character device"), "{}", out.content);
        assert!(crate::tools::file_state::read_if_exists(&fifo).is_err(), "Edit's read of it is refused too");
    }

    #[tokio::test]
    async fn offset_and_limit_window_with_continuation_note() {
        let dir = tempfile::tempdir().unwrap();
        let text: String = (1..=10).map(|i| format!("line {i}\n")).collect();
        fs::write(dir.path().join("f"), text).unwrap();
        let ctx = ctx(dir.path());
        let out = read(&ctx, json!({"file_path": "f", "offset": 3, "limit": 2})).await;
        assert_eq!(
            out.content,
            "     3\tline 3\n     4\tline 4\n\n[Showing lines 3-4 of 10. Use offset=5 to read more.]"
        );
        let out = read(&ctx, json!({"file_path": "f", "offset": 9})).await;
        assert_eq!(out.content, "     9\tline 9\n    10\tline 10");
        let out = read(&ctx, json!({"file_path": "f", "offset": 11})).await;
        assert!(out.is_error);
        assert!(out.content.contains("has only 10 lines; offset 11 is past the end"), "{}", out.content);
    }

    #[tokio::test]
    async fn huge_file_default_limit_and_total() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.txt");
        let mut f = io::BufWriter::new(fs::File::create(&path).unwrap());
        for i in 1..=100_000 {
            writeln!(f, "line number {i} of a large file").unwrap();
        }
        drop(f);
        let ctx = ctx(dir.path());
        let out = read(&ctx, json!({"file_path": path.to_str().unwrap()})).await;
        assert!(!out.is_error);
        assert!(out.content.starts_with("     1\tline number 1 of"));
        assert!(out.content.contains("  2000\tline number 2000 of"));
        assert!(!out.content.contains("line number 2001 of"));
        assert!(out.content.ends_with("[Showing lines 1-2000 of 100000. Use offset=2001 to read more.]"));
        let out = read(&ctx, json!({"file_path": "big.txt", "offset": 99_999, "limit": 5})).await;
        assert_eq!(
            out.content,
            " 99999\tline number 99999 of a large file\n100000\tline number 100000 of a large file"
        );
    }

    #[tokio::test]
    async fn long_lines_are_cut_with_length() {
        let dir = tempfile::tempdir().unwrap();
        let long = "é".repeat(5123);
        fs::write(dir.path().join("l"), format!("short\n{long}\nend\n")).unwrap();
        let out = read(&ctx(dir.path()), json!({"file_path": "l"})).await;
        let second = out.content.lines().nth(1).unwrap();
        assert!(second.starts_with("     2\téé"));
        assert!(second.ends_with("… [line truncated, 5123 chars]"), "{}", &second[second.len() - 60..]);
        assert_eq!(second.chars().filter(|&c| c == 'é').count(), MAX_LINE_CHARS);
        assert!(out.content.ends_with("     3\tend"));
    }

    #[tokio::test]
    async fn output_cap_stops_early_with_note() {
        let dir = tempfile::tempdir().unwrap();
        let line = "x".repeat(1500);
        let text: String = (0..200).map(|_| format!("{line}\n")).collect();
        fs::write(dir.path().join("wide"), text).unwrap();
        let out = read(&ctx(dir.path()), json!({"file_path": "wide"})).await;
        assert!(out.content.len() <= MAX_OUTPUT_CHARS + 200);
        assert!(out.content.contains("of 200 (output size limit reached). Use offset="), "{}", out.content.len());
    }

    #[tokio::test]
    async fn missing_file_suggests_similar_names() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("main.rs"), "fn main() {}\n").unwrap();
        let out = read(&ctx(dir.path()), json!({"file_path": "mian.rs"})).await;
        assert!(out.is_error);
        assert!(out.content.starts_with("File does not exist: "), "{}", out.content);
        assert!(out.content.contains("Did you mean: ") && out.content.contains("main.rs"), "{}", out.content);
    }

    #[tokio::test]
    async fn directory_binary_and_empty() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = ctx(dir.path());
        let out = read(&ctx, json!({"file_path": "."})).await;
        assert!(out.is_error && out.content.contains("is a directory") && out.content.contains("Glob"));
        fs::write(dir.path().join("blob"), b"\x7fELF\0\0\x01binary").unwrap();
        let out = read(&ctx, json!({"file_path": "blob"})).await;
        assert!(out.is_error && out.content.contains("binary file (13 bytes)"), "{}", out.content);
        fs::write(dir.path().join("empty"), b"").unwrap();
        let out = read(&ctx, json!({"file_path": "empty"})).await;
        assert!(!out.is_error && out.content.contains("is empty"), "{}", out.content);
        assert!(ctx.files.was_read(&dir.path().join("empty")));
    }

    #[test]
    fn window_counts_lines_across_chunk_boundaries() {
        let mut w = LineWindow::new(2, 3);
        for piece in [&b"a\nbb"[..], b"b\n", b"c", b"c\nd\ne"] {
            w.feed(piece);
        }
        w.finish();
        assert_eq!(w.total_lines(), 5);
        assert_eq!(w.out, "     2\tbbb\n     3\tcc\n");
    }

    /// Found by the thirty-fourth red-team round: a Read judged while `sub/x` did not exist ran after a background
    /// command made it a link to the home directory, and the key came back. The opened file's real place is
    /// checked against what a Read may not see.
    #[tokio::test]
    async fn a_file_reached_through_a_link_made_after_the_judgement_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        let key = home.path().canonicalize().unwrap().join("id_rsa");
        std::fs::write(&key, "KEY\n").unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::os::unix::fs::symlink(home.path(), dir.path().join("sub/x")).unwrap();
        let mut ctx = ctx(dir.path());
        let hidden_key = key.clone();
        ctx.unreadable = Some(std::sync::Arc::new(move |path: &Path| path == hidden_key));
        let output = read(&ctx, json!({ "file_path": "sub/x/id_rsa" })).await;
        assert!(output.is_error && output.content.contains("now leads to"), "{}", output.content);
        assert!(!output.content.contains("KEY"));
    }

    /// Found by the thirty-fifth red-team round: the check by descriptor sees secrets and denied paths only; a
    /// path judged inside the workspace must not lead outside by the time it is opened either.
    #[tokio::test]
    async fn a_judged_path_is_opened_without_following_a_link_put_in_its_way() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("f.txt"), "OUTSIDE\n").unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("sub")).unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join("sub/x")).unwrap();
        let mut ctx = ctx(&root);
        ctx.judged_path = Some(root.join("sub/x/f.txt"));
        let output = read(&ctx, json!({ "file_path": "sub/x/f.txt" })).await;
        assert!(output.is_error, "{}", output.content);
        assert!(!output.content.contains("OUTSIDE"));
    }
}
