//! Rewind's checkpoint cost: a 10 MB text file edited 100 times (one line each time), each change checkpointed
//! as Edit does it. Prints the time per checkpoint and the disk the 101 versions take.
//!
//! Run: `cargo bench -p tandem-core --bench rewind`. Prints figures; asserts nothing about time.

// Test code: a panic is how a failure is reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::time::Duration;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use tandem_core::rewind::Checkpoints;

fn file_of_10_mb() -> String {
    let mut text = String::with_capacity(10 * 1024 * 1024 + 100);
    let mut line = 0;
    while text.len() < 10 * 1024 * 1024 {
        text.push_str(&format!("{line:>8}: fn item_{line}() -> usize {{ {line} }} // generated source line\n"));
        line += 1;
    }
    text
}

/// 100 one-line edits spread over the file, each checkpointed; returns the final text.
fn edit_100_times(checkpoints: &Checkpoints, mut text: String) -> String {
    checkpoints.begin_prompt("edit a big file");
    for edit in 0..100 {
        let before = text.clone();
        let needle = format!("fn item_{}()", edit * 1_000 + 7);
        text = text.replacen(&needle, &format!("fn item_{}_renamed()", edit * 1_000 + 7), 1);
        checkpoints.record(Path::new("/bench/big.rs"), Some(before.as_bytes()), text.as_bytes(), None);
    }
    text
}

fn disk_used(dir: &Path) -> u64 {
    let mut total = 0;
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        total += if path.is_dir() { disk_used(&path) } else { entry.metadata().map_or(0, |meta| meta.len()) };
    }
    total
}

fn bench(c: &mut Criterion) {
    let original = file_of_10_mb();
    {
        let dir = tempfile::tempdir().unwrap();
        let checkpoints = Checkpoints::new(dir.path());
        let started = std::time::Instant::now();
        edit_100_times(&checkpoints, original.clone());
        let elapsed = started.elapsed();
        println!(
            "10 MB file ({} bytes), 100 checkpointed edits: {:.1} ms per checkpoint, {:.1} MB on disk for 101 versions",
            original.len(),
            elapsed.as_secs_f64() * 1000.0 / 100.0,
            disk_used(dir.path()) as f64 / (1024.0 * 1024.0)
        );
    }
    let mut group = c.benchmark_group("rewind checkpoints");
    group.sample_size(10).measurement_time(Duration::from_secs(30));
    group.bench_function("10 MB file, 100 edits", |b| {
        b.iter_batched(
            || (tempfile::tempdir().unwrap(), original.clone()),
            |(dir, text)| edit_100_times(&Checkpoints::new(dir.path()), text),
            BatchSize::PerIteration,
        )
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
