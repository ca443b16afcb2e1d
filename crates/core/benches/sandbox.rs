//! What the sandbox costs a command: the Bash tool running `true` end to end (spawn, wait, output) unsandboxed
//! and in the sandbox of each grant, in a workspace shaped like a real one (a git repository with hooks, 200
//! files) and a home with the usual secrets and caches. The sandboxed runs build the Landlock rules from the file
//! system each time (the read allowlist around the denied paths), and the workspace-writing ones also copy the
//! protected entries before and compare them after.
//!
//! Run: `cargo bench -p tandem-core --bench sandbox`. Prints figures; asserts nothing about time.

// Test code: a panic is how a failure is reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use tandem_core::permissions::confine::{ConfinementShape, confinement};
use tandem_core::permissions::{PermissionMode, PermissionPolicy, RuleKind, Scope, Workspace};
use tandem_core::sandbox::{Grant, SandboxMode, SandboxSettings, Support, support};
use tandem_core::tools::{ToolContext, ToolRegistry};

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn bench(c: &mut Criterion) {
    if !matches!(support(), Support::Full { .. } | Support::Partial { .. }) {
        eprintln!("no Landlock here: nothing to measure");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (work, home) = (dir.path().join("work"), dir.path().join("home"));
    for i in 0..200 {
        write(&work.join(format!("src/m{}/f{i}.rs", i % 10)), "fn x() {}\n");
    }
    // A real repository with a commit, so that the guard's copy of the history (refs, index, logs) and its look
    // at the object store are measured too.
    let git = |args: &[&str]| {
        let identity = ["-c", "user.name=b", "-c", "user.email=b@b", "-c", "init.defaultBranch=main"];
        let status = std::process::Command::new("git").current_dir(&work).args(identity).args(args).status();
        assert!(status.is_ok_and(|status| status.success()), "git {args:?}");
    };
    git(&["init", "-q"]);
    git(&["add", "src"]);
    git(&["commit", "-q", "-m", "two hundred files"]);
    for hook in ["pre-commit", "pre-push", "commit-msg", "post-checkout"] {
        write(&work.join(format!(".git/hooks/{hook}.sample")), "#!/bin/sh\n");
    }
    write(&work.join(".claude/settings.json"), "{}");
    for secret in [".ssh/id_rsa", ".aws/credentials", ".netrc", ".config/gh/hosts.yml", ".cargo/registry/x"] {
        write(&home.join(secret), "x");
    }
    let workspace = Workspace::new(&work, &[], Some(home.clone()), None);
    let policy = PermissionPolicy::new(PermissionMode::AcceptEdits, workspace, home);
    let shape = ConfinementShape { enabled: true, approved: SandboxMode::Off, approved_network: true };
    let confinement = confinement(&policy, &SandboxSettings::default(), shape).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let tools = ToolRegistry::builtin();
    let bash = tools.get("Bash").unwrap();
    let mut group = c.benchmark_group("bash `true`");
    group.measurement_time(Duration::from_secs(8));
    for (name, grant) in [
        ("unsandboxed (approved)", Grant::Approved),
        ("read-only grant", Grant::ReadOnly),
        ("acceptEdits grant (guard)", Grant::WorkspaceWrite),
        ("user-rule grant (guard, caches, network)", Grant::UserRule),
    ] {
        let mut context = ToolContext::new(work.clone());
        context.sandbox = confinement.policy_for(grant);
        run_true(&mut group, name, &runtime, bash.as_ref(), &context);
    }
    group.finish();
}

/// What a deny rule with a pattern (`Read(.env)`, any depth) adds: the search for what it matches before each
/// command, in a workspace of 10,000 files in 100 directories with two `.env` files.
fn pattern_search(c: &mut Criterion) {
    if !matches!(support(), Support::Full { .. } | Support::Partial { .. }) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (work, home) = (dir.path().join("work"), dir.path().join("home"));
    for i in 0..10_000 {
        write(&work.join(format!("src/d{}/f{i}.rs", i % 100)), "fn x() {}\n");
    }
    write(&work.join(".env"), "A=1");
    write(&work.join("src/d7/.env"), "A=1");
    write(&home.join(".ssh/id_rsa"), "x");
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let tools = ToolRegistry::builtin();
    let bash = tools.get("Bash").unwrap();
    let mut group = c.benchmark_group("bash `true`, 10,000 files");
    group.measurement_time(Duration::from_secs(8));
    for (name, rules) in [("read-only grant", &[][..]), ("read-only grant, Read(.env) denied", &["Read(.env)"][..])] {
        let workspace = Workspace::new(&work, &[], Some(home.clone()), None);
        let mut policy = PermissionPolicy::new(PermissionMode::Default, workspace, home.clone());
        for rule in rules {
            policy.add_rule(RuleKind::Deny, rule, Scope::User).unwrap();
        }
        let shape = ConfinementShape { enabled: true, approved: SandboxMode::Off, approved_network: true };
        let confinement = confinement(&policy, &SandboxSettings::default(), shape).unwrap();
        let mut context = ToolContext::new(work.clone());
        context.sandbox = confinement.policy_for(Grant::ReadOnly);
        run_true(&mut group, name, &runtime, bash.as_ref(), &context);
    }
    group.finish();
}

/// Times the Bash tool running `true` in `context`.
fn run_true(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    runtime: &tokio::runtime::Runtime,
    bash: &dyn tandem_core::tools::Tool,
    context: &ToolContext,
) {
    let input = json!({ "command": "true" });
    group.bench_function(name, |b| {
        b.iter(|| {
            let output = runtime.block_on(bash.run(input.clone().into(), context));
            assert!(!output.is_error, "{}", output.content);
        })
    });
}

criterion_group!(benches, bench, pattern_search);
criterion_main!(benches);
