//! Diff rendering of a 5,000-line Rust file at width 120, as the permission dialog and the Edit tool card
//! draw it: `DiffView::new(label, Some(old), new)` then `render(120, &theme, None)`.
//!
//! Two edits: one line changed every 40 lines (125 hunks, typical of a rename across a file) and a worst
//! case with one line changed every 7 lines (the hunks' context overlaps, so it is one hunk spanning the
//! whole file). For each, criterion measures:
//!
//! - `new`: computing the hunks and display rows;
//! - `first_render`: the first render of a fresh view (syntax colours are computed then and kept);
//! - `new_and_first_render`: both, what a dialog pays when it opens;
//! - `cached_render`: rendering the same view again (a redraw).
//!
//! `main` also prints a one-shot timing of the very first render in the process (the syntax set and theme
//! are loaded lazily then).
//!
//! Run: `cargo bench -p tandem-tui --bench diff`. Prints figures; asserts nothing about time.

// Test code: a panic is how a failure is reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BatchSize, Criterion};
use tandem_tui::ui::diff::DiffView;
use tandem_tui::ui::theme::{ColorDepth, Theme};

mod common;
use common::{measuring, ms};

const LINES: usize = 5_000;
const WIDTH: usize = 120;
const LABEL: &str = "src/parser/engine.rs";

/// About 5,000 lines of Rust-like code; every line is unique.
fn source() -> String {
    let mut out = String::with_capacity(LINES * 60);
    for i in 0..LINES {
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

/// `old` with every `every`-th line changed (a rename plus a longer tail, so word diffs have work to do).
fn edited(old: &str, every: usize) -> String {
    let mut out = String::with_capacity(old.len() + old.len() / every * 20);
    for (index, line) in old.lines().enumerate() {
        if index % every == every / 2 {
            out.push_str(&line.replace("limit", "max_bytes").replace("kind", "request_kind"));
            out.push_str(" // reviewed\n");
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

fn report(theme: &Theme, old: &str, cases: &[(&str, String)]) {
    println!("diff: {LINES}-line file at width {WIDTH}");
    for (name, new) in cases {
        let start = Instant::now();
        let view = DiffView::new(LABEL, Some(old), new);
        let built = start.elapsed();
        let start = Instant::now();
        let lines = view.render(WIDTH, theme, None);
        let first = start.elapsed();
        let start = Instant::now();
        let again = view.render(WIDTH, theme, None);
        let cached = start.elapsed();
        let (added, removed) = view.counts();
        println!(
            "  {name:<10} {} hunks, +{added} -{removed}, {} lines: new {:.2} ms, first render {:.2} ms (first in \
             the process for the first case), cached render {:.2} ms",
            view.hunks().len(),
            lines.len(),
            ms(built),
            ms(first),
            ms(cached)
        );
        black_box(again);
    }
}

fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    let theme = Theme::new(ColorDepth::TrueColor);
    let old = source();
    let cases = [("every40", edited(&old, 40)), ("every7", edited(&old, 7))];
    if measuring() {
        report(&theme, &old, &cases);
    }

    let mut group = criterion.benchmark_group("diff");
    group.sample_size(20).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(3));
    for (name, new) in &cases {
        group.bench_function(format!("{name}/new"), |b| b.iter(|| DiffView::new(LABEL, Some(&old), new)));
        group.bench_function(format!("{name}/first_render"), |b| {
            b.iter_batched(
                || DiffView::new(LABEL, Some(&old), new),
                |view| view.render(WIDTH, &theme, None),
                BatchSize::LargeInput,
            )
        });
        group.bench_function(format!("{name}/new_and_first_render"), |b| {
            b.iter(|| DiffView::new(LABEL, Some(&old), new).render(WIDTH, &theme, None))
        });
        let view = DiffView::new(LABEL, Some(&old), new);
        view.render(WIDTH, &theme, None);
        group.bench_function(format!("{name}/cached_render"), |b| b.iter(|| view.render(WIDTH, &theme, None)));
    }
    group.finish();
    criterion.final_summary();
}
