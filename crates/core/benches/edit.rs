//! The Edit and Read tools on a 10 MB source file (200,000 lines), through the public tool API exactly as the
//! agent calls them: `ToolRegistry::builtin().get(..)`, then `preview` / `run` with a `ToolContext`.
//!
//! Edit replaces one unique snippet near the end of the file; the file is rewritten to its original content and
//! recorded as read before each iteration (not timed), so every iteration does the same work: read 10 MB, check
//! it is what the session saw, find the one match, write 10 MB atomically (with fsync), record the new state.
//!
//! Run: `cargo bench -p tandem-core --bench edit`. Prints figures; asserts nothing about time.

// Test code: a panic is how a failure is reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::{BatchSize, Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use serde_json::{Value, json};
use tandem_core::tools::{ToolContext, ToolOutput, ToolRegistry};
use tokio::runtime::Runtime;

const LINES: usize = 200_000;
/// The edited line, near the end of the file.
const TARGET_LINE: usize = 199_000;
/// Lines Read returns (its default limit).
const WINDOW: usize = 2000;

/// About 10 MB of Rust-like code, one generated function every 8 lines; every line is unique.
fn source(lines: usize) -> String {
    let mut out = String::with_capacity(lines * 52);
    for i in 0..lines {
        let f = i / 8;
        let line = match i % 8 {
            0 => format!("/// Handles request kind {f} and returns the number of bytes written.\n"),
            1 => format!("pub fn handle_request_{f}(ctx: &mut Context, input: &[u8]) -> Result<usize> {{\n"),
            2 => format!("    let limit = ctx.config().max_len.min({});\n", f % 4096 + 64),
            3 => format!("    if input.len() > limit {{ return Err(Error::TooLong {{ kind: {f}, limit }}); }}\n"),
            4 => format!("    let written = ctx.sink().write_all(&input[..limit])?; // step {i}\n"),
            5 => format!("    tracing::debug!(kind = {f}, written, \"request handled\");\n"),
            6 => "    Ok(written)\n".to_string(),
            _ => "}\n".to_string(),
        };
        out.push_str(&line);
    }
    out
}

fn tool_output(rt: &Runtime, tool: &str, input: Value, ctx: &ToolContext) -> ToolOutput {
    let tool = ToolRegistry::builtin().get(tool).expect("a built-in tool");
    rt.block_on(tool.run(input.into(), ctx))
}

struct Fixture {
    _dir: tempfile::TempDir,
    path: PathBuf,
    original: String,
    edit: Value,
}

impl Fixture {
    fn new() -> Self {
        let dir = tempfile::tempdir().expect("a temp dir");
        let path = dir.path().join("big.rs");
        let original = source(LINES);
        let old_string: String = original.lines().skip(TARGET_LINE - 1).take(3).map(|l| format!("{l}\n")).collect();
        assert_eq!(original.matches(&old_string).count(), 1, "old_string must be unique");
        let new_string = old_string.replace("Result<usize>", "Result<usize, RequestError>");
        let edit = json!({
            "file_path": path.to_str().expect("a UTF-8 temp path"),
            "old_string": old_string,
            "new_string": new_string,
        });
        let fixture = Fixture { _dir: dir, path, original, edit };
        fixture.reset_file();
        fixture
    }

    fn reset_file(&self) {
        fs::write(&self.path, &self.original).expect("write the fixture");
    }

    /// A fresh session that has read the file as it is now.
    fn session(&self) -> ToolContext {
        let ctx = ToolContext::new(self.path.parent().unwrap_or(Path::new("/")).to_path_buf());
        ctx.files.record_content(&self.path, self.original.as_bytes());
        ctx
    }
}

fn bench_edit(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread().build().expect("a tokio runtime");
    let fixture = Fixture::new();
    let size = fixture.original.len() as u64;
    let file_path = fixture.path.to_str().expect("a UTF-8 temp path");
    eprintln!("fixture: {} bytes, {LINES} lines", size);

    // Check once that the calls do what is measured (a refused edit would be fast and meaningless).
    {
        let ctx = ToolContext::new(fixture.path.parent().unwrap_or(Path::new("/")).to_path_buf());
        let read = tool_output(&rt, "Read", json!({"file_path": file_path}), &ctx);
        assert!(!read.is_error, "{}", read.content);
        let edit = tool_output(&rt, "Edit", fixture.edit.clone(), &ctx);
        assert!(!edit.is_error, "{}", edit.content);
        assert!(fs::read_to_string(&fixture.path).expect("read back").contains("RequestError"));
        fixture.reset_file();
    }

    let edit_tool = ToolRegistry::builtin().get("Edit").expect("Edit");
    let read_tool = ToolRegistry::builtin().get("Read").expect("Read");

    let mut group = c.benchmark_group("edit_10mb");
    group
        .sampling_mode(SamplingMode::Flat)
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4))
        .throughput(Throughput::Bytes(size));
    group.bench_function("run_unique_near_end", |b| {
        b.iter_batched(
            || {
                fixture.reset_file();
                fixture.session()
            },
            |ctx| {
                let out = rt.block_on(edit_tool.run(fixture.edit.clone().into(), &ctx));
                assert!(!out.is_error, "{}", out.content);
                ctx
            },
            BatchSize::PerIteration,
        )
    });
    // The permission request's diff, computed before the user is asked.
    fixture.reset_file();
    let ctx = fixture.session();
    group.bench_function("preview_unique_near_end", |b| {
        b.iter(|| edit_tool.preview(&fixture.edit, &ctx).expect("a preview").expect("a diff"))
    });
    group.finish();

    let mut group = c.benchmark_group("read_10mb");
    group
        .sampling_mode(SamplingMode::Flat)
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .throughput(Throughput::Bytes(size));
    let windows = [("last_2000_lines", LINES - WINDOW + 1), ("first_2000_lines", 1)];
    for (name, offset) in windows {
        let input = json!({"file_path": file_path, "offset": offset, "limit": WINDOW});
        let out = rt.block_on(read_tool.run(input.clone().into(), &ctx));
        assert!(!out.is_error, "{}", out.content);
        // Read stops at its output cap (100,000 characters), which these lines reach before 2000 of them.
        let shown = out.content.lines().filter(|l| l.trim_start().split('\t').next().is_some_and(is_number)).count();
        eprintln!("read {name}: {shown} numbered lines, {} chars of output", out.content.len());
        group.bench_function(name, |b| {
            b.iter(|| {
                let out = rt.block_on(read_tool.run(input.clone().into(), &ctx));
                assert!(!out.is_error);
                out
            })
        });
    }
    group.finish();
}

fn is_number(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

criterion_group!(benches, bench_edit);
criterion_main!(benches);
