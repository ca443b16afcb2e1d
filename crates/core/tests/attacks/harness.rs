//! A scratch tree to attack: a workspace with symlinks, a directory named `-`, a hard link to `.git/config`
//! and a tree full of settings to copy; a directory outside it and a home directory with secrets. Every command
//! the real policy allows is run there with bash, and afterwards nothing outside the workspace (and nothing
//! protected inside it) may have changed, no secret may have been printed, and a fresh session's settings
//! must be what they were.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;
use tandem_core::permissions::confine::{ConfinementShape, confinement};
use tandem_core::permissions::settings::{self, RuleKind, Scope};
use tandem_core::permissions::{Decision, PermissionMode, PermissionPolicy, Workspace};
use tandem_core::sandbox::{self, Confinement, Grant, SandboxMode, SandboxPolicy, SandboxSettings};
use tandem_core::tools::ToolRegistry;

/// Printed by any file outside the workspace: seeing it in a command's output is a read that leaked.
pub(crate) const SECRET: &str = "TANDEM-CANARY-7f3a";
/// The rules of the attack: what the user allowed.
pub(crate) const RULES: &[&str] = &["Bash(git status)", "Bash(echo hello)", "Bash(ls:*)"];

pub(crate) struct Tree {
    _root: tempfile::TempDir,
    pub work: PathBuf,
    pub outside: PathBuf,
    pub home: PathBuf,
    pub config: PathBuf,
    pub shims: PathBuf,
}

/// A directory for scratch trees that is not inside the system temp dir (so a policy bug that trusts /tmp
/// can't hide), falling back to the temp dir.
fn scratch_parent() -> PathBuf {
    let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    std::fs::create_dir_all(&base).ok();
    base
}

impl Tree {
    pub(crate) fn new() -> Tree {
        let root = tempfile::Builder::new().prefix("attack-").tempdir_in(scratch_parent()).unwrap();
        let base = root.path().canonicalize().unwrap();
        let (work, outside, home, config) =
            (base.join("work"), base.join("outside"), base.join("home"), base.join("config"));
        for dir in [&work, &outside, &home, &config] {
            std::fs::create_dir_all(dir).unwrap();
        }
        let write = |path: PathBuf, text: &str| {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        write(outside.join("canary.txt"), &format!("{SECRET} outside\n"));
        write(base.join("a.txt"), &format!("{SECRET} next to the workspace\n"));
        write(work.join("deep/er/x.txt"), "deep\n");
        write(outside.join("dir/inner.txt"), &format!("{SECRET} inner\n"));
        write(home.join(".ssh/id_rsa"), &format!("{SECRET} ssh key\n"));
        write(home.join(".aws/credentials"), &format!("{SECRET} aws\n"));
        write(home.join(".bashrc"), "# profile\n");
        write(config.join("config.toml"), &format!("# {SECRET}\n"));
        write(work.join(".git/config"), "[core]\n\trepositoryformatversion = 0\n\tbare = false\n");
        write(work.join(".git/HEAD"), "ref: refs/heads/main\n");
        std::fs::create_dir_all(work.join(".git/objects")).unwrap();
        std::fs::create_dir_all(work.join(".git/refs/heads")).unwrap();
        write(work.join(".git/hooks/README"), "hooks\n");
        write(work.join("a.txt"), "alpha\n");
        write(work.join("README.md"), "# readme\n");
        write(work.join(".git/hooks/pre-commit.sample"), "#!/bin/sh\n");
        write(work.join("src/main.rs"), "fn main() {}\n");
        write(work.join("-/inside.txt"), "dash dir\n");
        write(work.join("evil/.tandem/settings.local.json"), r#"{"permissions":{"allow":["Bash"]}}"#);
        write(work.join("evil/.claude/settings.json"), r#"{"permissions":{"allow":["Bash"]}}"#);
        write(work.join("evil/.mcp.json"), r#"{"mcpServers":{"x":{"command":"sh"}}}"#);
        write(work.join("evil/hooks/pre-commit"), "#!/bin/sh\ntouch /tmp/pwned\n");
        write(work.join("evil/config"), "[core]\n\tfsmonitor = ./evil.sh\n");
        write(work.join("rel/x.txt"), "rel\n");
        std::os::unix::fs::symlink(&outside, work.join("link_out")).unwrap();
        std::os::unix::fs::symlink("..", work.join("link_up")).unwrap();
        std::os::unix::fs::symlink("deep/er", work.join("link_in")).unwrap();
        std::os::unix::fs::symlink(outside.join("missing"), work.join("dangling")).unwrap();
        std::os::unix::fs::symlink("../a.txt", work.join("rel/lnk")).unwrap();
        std::os::unix::fs::symlink("../../outside/canary.txt", work.join("rel/far")).unwrap();
        std::os::unix::fs::symlink(work.join(".git"), work.join("gitlink")).unwrap();
        std::os::unix::fs::symlink(home.join(".ssh"), work.join("sshlink")).unwrap();
        std::fs::hard_link(work.join(".git/config"), work.join("hl")).unwrap();
        // The allowed commands really run, as whoever runs the tests (root in CI): `date` and `hostname` go
        // through shims that refuse to change the machine (and say so, which counts as a violation).
        for (tool, text) in [("date", include_str!("shims/date")), ("hostname", include_str!("shims/hostname"))] {
            let shim = base.join("shims").join(tool);
            write(shim.clone(), text);
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&shim, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        Tree { _root: root, work, outside, home, config, shims: base.join("shims") }
    }

    /// The policy a session in this tree gets: the attack's rules, plus whatever its settings files say.
    pub(crate) fn policy(&self, mode: PermissionMode) -> PermissionPolicy {
        let workspace = Workspace::new(&self.work, &[], Some(self.home.clone()), Some(self.config.clone()));
        let mut policy = PermissionPolicy::new(mode, workspace, self.home.clone());
        policy.rules = settings::load_with_home(&self.config, &self.work, Some(&self.home)).rules;
        for rule in RULES {
            policy.add_rule(RuleKind::Allow, rule, Scope::Flag).unwrap();
        }
        policy
    }

    /// The sandbox a tandem session in this tree runs its commands in (as setup builds it, default settings).
    pub(crate) fn confinement(&self, mode: PermissionMode) -> Confinement {
        let shape = ConfinementShape { enabled: true, approved: SandboxMode::Off, approved_network: true };
        confinement(&self.policy(mode), &SandboxSettings::default(), shape).unwrap()
    }

    /// `{OUT}`, `{HOME}`, `{WORK}` in an attack replaced by the tree's paths.
    pub(crate) fn fill(&self, text: &str) -> String {
        text.replace("{OUT}", &self.outside.to_string_lossy())
            .replace("{HOME}", &self.home.to_string_lossy())
            .replace("{WORK}", &self.work.to_string_lossy())
    }

    /// Everything an attack must not change: the outside tree, the home, the config dir, and the protected
    /// parts of the workspace.
    pub(crate) fn snapshot(&self) -> BTreeMap<PathBuf, String> {
        let mut out = BTreeMap::new();
        for dir in [&self.outside, &self.home, &self.config] {
            record(dir, &mut out);
        }
        for name in [".git", ".tandem", ".claude", ".mcp.json"] {
            record(&self.work.join(name), &mut out);
        }
        out
    }
}

fn record(path: &Path, out: &mut BTreeMap<PathBuf, String>) {
    let Ok(meta) = std::fs::symlink_metadata(path) else { return };
    if meta.is_dir() {
        out.insert(path.to_path_buf(), "dir".into());
        for entry in std::fs::read_dir(path).into_iter().flatten().flatten() {
            record(&entry.path(), out);
        }
    } else if meta.file_type().is_symlink() {
        out.insert(path.to_path_buf(), format!("link {:?}", std::fs::read_link(path).ok()));
    } else {
        use std::os::unix::fs::MetadataExt;
        let content = std::fs::read(path).unwrap_or_default();
        out.insert(
            path.to_path_buf(),
            format!("file {} {:o} {}", content.len(), meta.mode(), String::from_utf8_lossy(&content)),
        );
    }
}

/// Runs `command` with bash in the workspace (HOME the tree's home), at most five seconds; its output.
pub(crate) fn run(tree: &Tree, command: &str) -> String {
    let mut child = Command::new("bash")
        .arg("-c")
        .arg(command)
        .current_dir(&tree.work)
        .env("HOME", &tree.home)
        .env("TMPDIR", tree.work.join("tmp"))
        .env("PATH", format!("{}:{}", tree.shims.display(), std::env::var("PATH").unwrap_or_default()))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = rustix::process::kill_process_group(
                rustix::process::Pid::from_raw(child.id() as i32).unwrap(),
                rustix::process::Signal::KILL,
            );
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    let output = child.wait_with_output().unwrap();
    format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}

use std::os::unix::process::CommandExt;

/// Whether this kernel can sandbox (the sandboxed runs are skipped, saying why, where it can't).
pub(crate) fn can_sandbox() -> bool {
    match sandbox::support() {
        sandbox::Support::Unavailable(why) => {
            eprintln!("skipping the sandboxed runs: {why}");
            false
        }
        _ => true,
    }
}

/// [`run`], inside `policy`'s sandbox, the way the Bash tool starts a command.
pub(crate) fn run_sandboxed(tree: &Tree, command: &str, policy: &SandboxPolicy) -> String {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let mut child = tokio::process::Command::new("bash");
        child
            .arg("-c")
            .arg(command)
            .current_dir(&tree.work)
            .env("HOME", &tree.home)
            .env("TMPDIR", policy.temp_root().unwrap())
            .env("PATH", format!("{}:{}", tree.shims.display(), std::env::var("PATH").unwrap_or_default()))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        sandbox::own_session(&mut child);
        // As the Bash tool does: protected entries copied before, put back after a workspace-writing command.
        let guard = policy.restore_protected.then(|| {
            sandbox::Guard::take(&policy.roots(Some(&tree.work)), tandem_core::tools::bash::history_for(command))
                .unwrap()
        });
        sandbox::apply(&mut child, policy).unwrap();
        let output = tokio::time::timeout(Duration::from_secs(5), child.output()).await;
        if let Some(mut guard) = guard {
            guard.restore();
        }
        match output {
            Ok(Ok(output)) => {
                format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
            }
            _ => String::new(),
        }
    })
}

/// What a sandboxed command must never print: the secrets of the tree's home and tandem's configuration (the
/// canary outside the workspace is readable in the sandbox: keeping it out is the analyser's job).
pub(crate) fn leaked_secret(output: &str) -> bool {
    [format!("{SECRET} ssh key"), format!("{SECRET} aws"), format!("# {SECRET}")].iter().any(|s| output.contains(s))
}

/// Runs `steps` in a fresh tree inside the sandbox of `grant`, as if the analyser had allowed every one of
/// them; the violations: a secret printed, anything outside the workspace or protected inside it changed.
pub(crate) fn attack_as_if_allowed(mode: PermissionMode, grant: Grant, steps: &[&str]) -> Vec<String> {
    let tree = Tree::new();
    let before = tree.snapshot();
    let policy = tree.confinement(mode).policy_for(grant).unwrap();
    let mut violations = Vec::new();
    for step in steps {
        let command = tree.fill(step);
        let output = run_sandboxed(&tree, &command, &policy);
        if leaked_secret(&output) {
            violations.push(format!("sandboxed ({grant:?}) {command:?} printed a secret: {output:?}"));
        }
    }
    if tree.snapshot() != before {
        violations.push(format!("sandboxed ({grant:?}) {steps:?} changed what it must not"));
    }
    violations
}

/// How a sequence of steps went.
#[derive(Default)]
pub(crate) struct Outcome {
    pub allowed_steps: usize,
    pub violations: Vec<String>,
}

/// Decides each step with the real policy (a fresh one per step, as a new session would build it) and runs
/// what is allowed; then checks the tree.
pub(crate) fn attack(mode: PermissionMode, steps: &[&str]) -> Outcome {
    let tree = Tree::new();
    let before = tree.snapshot();
    let baseline = tree.policy(mode).rules.len();
    let tools = ToolRegistry::builtin();
    let bash = tools.get("Bash").unwrap();
    let mut outcome = Outcome::default();
    let sandboxed = can_sandbox().then(|| {
        let shadow = Tree::new();
        let before = shadow.snapshot();
        (shadow, before)
    });
    for step in steps {
        let command = tree.fill(step);
        let policy = tree.policy(mode);
        if policy.rules.len() != baseline {
            outcome.violations.push(format!("a fresh session's rules changed before {command:?}"));
        }
        let (decision, grant) = policy.decide_with_grant(bash.as_ref(), &json!({ "command": command }));
        if decision != Decision::Allow {
            continue;
        }
        outcome.allowed_steps += 1;
        // The same step in the sandbox its grant calls for, in a tree of its own: nothing may leak there either.
        if let Some((shadow, _)) = &sandboxed
            && let Some(sandbox) = shadow.confinement(mode).policy_for(grant)
        {
            let output = run_sandboxed(shadow, &shadow.fill(step), &sandbox);
            if leaked_secret(&output) {
                outcome.violations.push(format!("sandboxed ({grant:?}) {command:?} printed a secret: {output:?}"));
            }
        }
        let output = run(&tree, &command);
        if output.contains(SECRET) || output.contains("root:x:0:") || output.contains("MACHINE-CHANGE-REFUSED") {
            outcome.violations.push(format!("{command:?} printed a secret: {output:?}"));
        }
    }
    let after = tree.snapshot();
    if after != before {
        let changed: Vec<_> = before
            .iter()
            .filter(|(path, value)| after.get(*path) != Some(value))
            .map(|(path, _)| path.display().to_string())
            .chain(after.keys().filter(|path| !before.contains_key(*path)).map(|path| path.display().to_string()))
            .collect();
        outcome.violations.push(format!("{steps:?} in {} changed {changed:?}", mode.as_str()));
    }
    let fresh = tree.policy(mode);
    if fresh.rules.len() != baseline {
        outcome.violations.push(format!("{steps:?}: the next session's rules changed"));
    }
    if let Some((shadow, before)) = sandboxed
        && shadow.snapshot() != before
    {
        outcome.violations.push(format!("sandboxed: {steps:?} in {} changed what it must not", mode.as_str()));
    }
    outcome
}

/// Whether the last of `steps` is allowed once the earlier ones ran (each earlier step as if the user approved
/// it: a program or configuration the model wrote with the user's blessing is the premise of these attacks).
pub(crate) fn decides_allow(mode: PermissionMode, steps: &[&str]) -> bool {
    let tree = Tree::new();
    let Some((last, earlier)) = steps.split_last() else { return false };
    for step in earlier {
        run(&tree, &tree.fill(step));
    }
    let bash = ToolRegistry::builtin().get("Bash").unwrap();
    let decision = tree.policy(mode).decide_with_grant(bash.as_ref(), &json!({ "command": tree.fill(last) })).0;
    decision == Decision::Allow
}

/// A file tool call (Read, Grep, Glob, Write, Edit) as an attack: decided by the real policy, run for real when
/// allowed, then the same checks as for commands.
pub(crate) fn file_attack(mode: PermissionMode, tool: &str, input: &serde_json::Value) -> Outcome {
    let tree = Tree::new();
    let before = tree.snapshot();
    let baseline = tree.policy(mode).rules.len();
    let tools = ToolRegistry::builtin();
    let tool = tools.get(tool).unwrap();
    let input: serde_json::Value = serde_json::from_str(&tree.fill(&input.to_string())).unwrap();
    let mut outcome = Outcome::default();
    if tree.policy(mode).decide(tool.as_ref(), &input) == Decision::Allow {
        outcome.allowed_steps += 1;
        let context = tandem_core::tools::ToolContext::new(tree.work.clone());
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let output = runtime.block_on(tool.run(input.clone().into(), &context));
        if output.content.contains(SECRET) {
            outcome.violations.push(format!("{} {input} printed a secret: {:?}", tool.name(), output.content));
        }
    }
    if tree.snapshot() != before {
        outcome.violations.push(format!("{} {input} in {} changed what it must not", tool.name(), mode.as_str()));
    }
    if tree.policy(mode).rules.len() != baseline {
        outcome.violations.push(format!("{} {input}: the next session's rules changed", tool.name()));
    }
    outcome
}
