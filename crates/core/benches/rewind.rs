//! Rewind's checkpoint cost: a 10 MB text file edited 100 times (one line each time), each change checkpointed
//! as Edit does it. Prints the time per checkpoint and the disk the 101 versions take. And the scan around a Bash
//! command (what it adds to every command): a 5,000-file workspace, in git (100 files modified) and outside it.
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
    checkpoints.begin_prompt("edit a big file", None);
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

/// 5,000 files of about 2 KB in 50 directories; in git, committed and then 100 of them modified.
fn workspace_of_10_000_files(git: bool) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    for file in 0..5_000 {
        let path = work.join(format!("dir{:03}/file{file:05}.rs", file % 50));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, format!("// file {file}\n").repeat(160)).unwrap();
    }
    if git {
        let run = |args: &[&str]| {
            let status = std::process::Command::new("git")
                .current_dir(&work)
                .args(["-c", "user.name=b", "-c", "user.email=b@b", "-c", "commit.gpgsign=false"])
                .args(args)
                .stdout(std::process::Stdio::null())
                .status()
                .unwrap();
            assert!(status.success());
        };
        run(&["init", "-q"]);
        run(&["add", "."]);
        run(&["commit", "-q", "-m", "files"]);
        // As in a repository worked in for a while: the index written well after the files (not "racily clean",
        // which would make git read every file each time).
        std::thread::sleep(Duration::from_millis(1_100));
        run(&["update-index", "-q", "--really-refresh"]);
        for file in (0..5_000).step_by(50) {
            std::fs::write(work.join(format!("dir{:03}/file{file:05}.rs", file % 50)), "modified\n").unwrap();
        }
    }
    dir
}

/// The scan around a command that changes one file: first in the session, then once the session knows the files.
fn scan_figures() {
    for git in [true, false] {
        let dir = workspace_of_10_000_files(git);
        let work = dir.path().join("work");
        let checkpoints = Checkpoints::new(&dir.path().join("session"));
        checkpoints.begin_prompt("run commands", None);
        let mut times = Vec::new();
        for round in 0..6 {
            let started = std::time::Instant::now();
            let scan = checkpoints.scan_before(&work);
            std::fs::write(work.join(format!("dir000/file{:05}.rs", round * 100)), format!("round {round}\n")).unwrap();
            checkpoints.record_scan(scan);
            times.push(started.elapsed().as_secs_f64() * 1000.0);
        }
        let later = &times[1..];
        println!(
            "scan around a Bash command, 5,000 files, {}: first {:.0} ms, then median {:.0} ms; checkpoints {:.1} MB",
            if git { "git, 100 modified" } else { "no git" },
            times[0],
            median(later),
            disk_used(&dir.path().join("session")) as f64 / (1024.0 * 1024.0)
        );
    }
}

fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted[sorted.len() / 2]
}

fn bench(c: &mut Criterion) {
    scan_figures();
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
