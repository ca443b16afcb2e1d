//! The permission decision for Bash calls, through the public policy API as the agent calls it. Each decision
//! parses the command, has bash confirm its reading (one `bash` process: the dominant cost), and resolves every
//! path it reads or writes.
//!
//! Run: `cargo bench -p tandem-core --bench permissions`. Prints figures; asserts nothing about time.

// Test code: a panic is how a failure is reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use tandem_core::permissions::{PermissionMode, PermissionPolicy, RuleKind, Scope, Workspace};
use tandem_core::tools::ToolRegistry;

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path();
    std::fs::create_dir_all(work.join("src")).unwrap();
    for i in 0..50 {
        std::fs::write(work.join(format!("src/f{i}.rs")), "fn x() {}\n").unwrap();
    }
    std::fs::create_dir_all(work.join(".git")).unwrap();
    std::fs::write(work.join(".git/config"), "[core]\n\tbare = false\n").unwrap();
    let home = work.join("home");
    let workspace = Workspace::new(work, &[], Some(home.clone()), None);
    let mut policy = PermissionPolicy::new(PermissionMode::AcceptEdits, workspace, home);
    policy.add_rule(RuleKind::Allow, "Bash(cargo test:*)", Scope::Flag).unwrap();
    let tools = ToolRegistry::builtin();
    let bash = tools.get("Bash").unwrap();
    let mut group = c.benchmark_group("bash decision");
    group.measurement_time(Duration::from_secs(5));
    for (name, command) in [
        ("rule: cargo test", "cargo test -p core"),
        ("read-only pipeline", "cat src/f1.rs | grep -n x | head -5"),
        ("glob of 50 files", "wc -l src/*.rs"),
        ("git status (config checked)", "git status --short"),
        ("cp -r of a 50-file tree", "cp -r src dst"),
        ("asks: substitution", "echo $(whoami)"),
    ] {
        let input = json!({ "command": command });
        group.bench_function(name, |b| b.iter(|| policy.decide(bash.as_ref(), &input)));
    }
    group.bench_function("analysis alone (parse + bash's reading)", |b| {
        b.iter(|| tandem_core::shell::analyze("cat src/f1.rs | grep -n x | head -5"))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
