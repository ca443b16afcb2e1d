//! Tests of the sandbox: policy parsing and notes everywhere; real Landlock enforcement where the kernel has it
//! (elsewhere those tests print why and pass).

use super::*;
use crate::tools::bash::BashTool;
use crate::tools::{Tool, ToolContext};
use serde_json::json;
use std::process::Stdio;

pub(super) fn policy(mode: SandboxMode, writable_roots: Vec<PathBuf>, network: bool) -> SandboxPolicy {
    SandboxPolicy::with_private_temp(mode, writable_roots, network).unwrap()
}

/// The kernel's Landlock ABI, or `None` (with the reason printed) where the kernel has none.
pub(super) fn landlock_abi() -> Option<u32> {
    match support() {
        Support::Full { abi } | Support::Partial { abi, .. } => Some(abi),
        Support::Unavailable(reason) => {
            eprintln!("skipping the Landlock test: {reason}");
            None
        }
    }
}

/// A scratch directory outside the temp dirs (the sandbox leaves those writable, so "outside the workspace" must
/// be elsewhere): under the target directory next to the test binary, or else under `$HOME/.cache` (a clone in
/// /tmp).
pub(super) fn scratch() -> Option<tempfile::TempDir> {
    let exe = std::env::current_exe().unwrap();
    let temps = canonical_unique([Path::new("/tmp"), std::env::temp_dir().as_path(), Path::new("/dev/shm")]);
    let candidates = [
        exe.parent().and_then(Path::parent).map(|dir| dir.join("sandbox-tests")),
        std::env::var_os("HOME").map(|home| Path::new(&home).join(".cache").join("tandem-sandbox-tests")),
    ];
    for base in candidates.into_iter().flatten() {
        if std::fs::create_dir_all(&base).is_err() {
            continue;
        }
        let Ok(base) = std::fs::canonicalize(&base) else { continue };
        if temps.iter().any(|temp| base.starts_with(temp)) {
            continue;
        }
        if let Ok(dir) = tempfile::tempdir_in(&base) {
            return Some(dir);
        }
    }
    eprintln!("skipping the Landlock test: no writable directory outside the temp dirs");
    None
}

/// Runs `script` with bash under `policy` in `cwd`: whether it succeeded, and its stderr.
pub(super) async fn sh(policy: &SandboxPolicy, cwd: &Path, script: &str) -> (bool, String) {
    let mut cmd = tokio::process::Command::new("bash");
    cmd.arg("-c").arg(script).current_dir(cwd).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    apply(&mut cmd, policy).unwrap();
    // Registered as a command, so that no sweep takes it for an orphan (this test process is a subreaper once
    // `harden_self` was tested).
    use crate::tools::bash::running;
    let mark = format!("sandbox-test-{:016x}", fastrand::u64(..));
    cmd.env(crate::tools::bash::CALL_MARK, &mark);
    let registration = running::register(&mark);
    let child = {
        let _spawning = running::spawning();
        let child = cmd.spawn().unwrap();
        registration.set_group(rustix::process::Pid::from_raw(child.id().unwrap() as i32).unwrap());
        child
    };
    let out = child.wait_with_output().await.unwrap();
    registration.finish();
    (out.status.success(), String::from_utf8_lossy(&out.stderr).into_owned())
}

pub(super) async fn allowed(policy: &SandboxPolicy, cwd: &Path, script: &str) {
    let (ok, stderr) = sh(policy, cwd, script).await;
    assert!(ok, "`{script}` should have been allowed: {stderr}");
}

pub(super) async fn denied(policy: &SandboxPolicy, cwd: &Path, script: &str) {
    let (ok, stderr) = sh(policy, cwd, script).await;
    assert!(!ok, "`{script}` should have been denied");
    assert!(note_for(policy, &stderr).is_some(), "`{script}` failed without a permission error: {stderr}");
}

/// A workspace that is a git repository: `.git/config`, `README`, `src/main.rs`.
pub(super) fn repo(dir: &Path) {
    std::fs::create_dir_all(dir.join(".git")).unwrap();
    std::fs::write(dir.join(".git/config"), "[core]\n").unwrap();
    std::fs::write(dir.join("README"), "readme\n").unwrap();
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join("src/main.rs"), "fn main() {}\n").unwrap();
}

#[test]
fn modes_parse_and_print() {
    for mode in [SandboxMode::Off, SandboxMode::ReadOnly, SandboxMode::WorkspaceWrite] {
        assert_eq!(SandboxMode::parse(mode.as_str()), Some(mode));
        assert_eq!(mode.to_string(), mode.as_str());
    }
    assert_eq!(SandboxMode::parse("workspace-write"), Some(SandboxMode::WorkspaceWrite));
    assert_eq!(SandboxMode::parse("read-only"), Some(SandboxMode::ReadOnly));
    assert_eq!(SandboxMode::parse("readonly"), None);
}

#[test]
fn blocked_note_and_when_it_applies() {
    let write = policy(SandboxMode::WorkspaceWrite, vec![], true);
    assert!(blocked_note(&write).starts_with(
        "Note: this command ran in tandem's sandbox (workspace-write), which blocks writes outside the workspace \
         and its private temp dir ($TMPDIR), and to .git, .tandem, .claude and .mcp.json; if the write is needed, \
         run it again with dangerouslyDisableSandbox: true, which asks the user to approve running it without the \
         sandbox. "
    ));
    assert!(blocked_note(&write).ends_with("use the Write and Edit tools for those."), "{}", blocked_note(&write));
    let offline = policy(SandboxMode::ReadOnly, vec![], false);
    assert!(blocked_note(&offline).starts_with("Note: this command ran in tandem's sandbox (read-only)"));
    assert!(blocked_note(&offline).ends_with("Network connections (TCP) are blocked too."));
    assert_eq!(blocked_note(&policy(SandboxMode::Off, vec![], true)), "");

    let denied = "bash: line 1: /etc/x: Permission denied\nExit code: 1";
    assert_eq!(note_for(&write, denied), Some(blocked_note(&write)));
    assert_eq!(note_for(&write, "touch: cannot touch 'x': Read-only file system"), Some(blocked_note(&write)));
    assert_eq!(note_for(&write, "error: no such file\nExit code: 2"), None);
    let curl = "curl: (7) Failed to connect to example.com port 443 after 0 ms: Couldn't connect to server";
    assert_eq!(note_for(&write, curl), None, "the network is allowed: not the sandbox");
    assert_eq!(note_for(&offline, curl), Some(blocked_note(&offline)));
    assert_eq!(note_for(&policy(SandboxMode::Off, vec![], true), denied), None);
}

#[cfg(target_os = "linux")]
#[test]
fn support_levels_by_abi() {
    use super::linux::classify;
    assert_eq!(classify(6), Support::Full { abi: 6 });
    assert_eq!(classify(7), Support::Full { abi: 7 });
    let Support::Partial { abi: 4, missing } = classify(4) else { panic!() };
    assert!(missing.contains("signal") && !missing.contains("network"), "{missing}");
    let Support::Partial { abi: 3, missing } = classify(3) else { panic!() };
    assert!(missing.contains("network") && missing.contains("signal") && !missing.contains("truncate"), "{missing}");
    let Support::Partial { abi: 1, missing } = classify(1) else { panic!() };
    assert!(missing.contains("between directories") && missing.contains("truncate"), "{missing}");
    eprintln!("Landlock on this kernel: {:?}", support());
}

#[test]
fn git_root_is_split_around_dot_git() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    assert_eq!(
        workspace_grants(std::slice::from_ref(&root), &[]),
        Vec::<PathBuf>::new(),
        "a root is never granted whole"
    );
    std::fs::create_dir_all(root.join(".tandem")).unwrap();
    std::fs::create_dir_all(root.join(".claude")).unwrap();
    std::fs::write(root.join(".mcp.json"), "{}").unwrap();

    repo(&root);
    std::os::unix::fs::symlink(root.join(".git"), root.join("git-link")).unwrap();
    let mut grants = workspace_grants(std::slice::from_ref(&root), &[]);
    grants.sort();
    assert_eq!(grants, vec![root.join("README"), root.join("src")]);

    // An extra root above the workspace is split down to the workspace's .git.
    let parent = root.parent().unwrap().to_path_buf();
    let grants = workspace_grants(&[parent.clone(), root.clone()], &[]);
    assert!(!grants.contains(&parent) && !grants.iter().any(|g| g.starts_with(root.join(".git"))), "{grants:?}");
    assert!(!grants.contains(&root.join("git-link")));
}

#[tokio::test]
async fn off_leaves_the_command_alone() {
    let dir = tempfile::tempdir().unwrap();
    let off = policy(SandboxMode::Off, vec![], false);
    allowed(&off, dir.path(), "echo x > file").await;
}

#[tokio::test]
async fn workspace_write_confines_writes_to_the_workspace_and_temp() {
    let (Some(_abi), Some(ws), Some(outside)) = (landlock_abi(), scratch(), scratch()) else { return };
    let (ws, outside) = (ws.path(), outside.path());
    repo(ws);
    std::fs::write(outside.join("existing"), "outside\n").unwrap();
    let p = policy(SandboxMode::WorkspaceWrite, vec![], true);

    allowed(&p, ws, "echo x > src/new && echo y >> README && mkdir src/d && mv src/new src/d/new && rm -r src/d").await;
    allowed(
        &p,
        ws,
        &format!(
            "f=$(TMPDIR={} mktemp) && echo x > \"$f\" && rm \"$f\" && echo x > /dev/null && echo x >&2",
            p.temp_root().unwrap().display()
        ),
    )
    .await;
    allowed(&p, ws, "echo x > /dev/stdout && echo x > /dev/stderr && : < /dev/tty 2>/dev/null; true").await;
    allowed(&p, ws, &format!("cat {}/existing", outside.display())).await;

    denied(&p, ws, &format!("echo x > {}/new", outside.display())).await;
    denied(&p, ws, &format!("echo x >> {}/existing", outside.display())).await;
    assert!(!outside.join("new").exists());
    assert_eq!(std::fs::read_to_string(outside.join("existing")).unwrap(), "outside\n");

    // .git is read-only: no new files, no edits, no removal.
    denied(&p, ws, "echo x > .git/new").await;
    denied(&p, ws, "echo x >> .git/config").await;
    denied(&p, ws, "rm -rf .git").await;
    denied(&p, ws, "mv .git git-moved").await;
    assert_eq!(std::fs::read_to_string(ws.join(".git/config")).unwrap(), "[core]\n");
    // The documented price: no new entries at the top level of a repository's root.
    denied(&p, ws, "touch NEWFILE").await;

    // Extra writable roots are writable below their top level, like the workspace.
    let extra = policy(SandboxMode::WorkspaceWrite, vec![outside.to_path_buf()], true);
    std::fs::create_dir_all(outside.join("sub")).unwrap();
    allowed(&extra, ws, &format!("echo x > {0}/sub/new && mkdir {0}/sub/d", outside.display())).await;
    denied(&p, outside, "touch NEWFILE").await;
}

/// The same protection wherever the workspace is, a temp dir included, and a private TMPDIR instead of /tmp.
async fn settings_and_temp_dirs_are_protected_in(ws: &Path) {
    repo(ws);
    std::fs::create_dir_all(ws.join(".tandem")).unwrap();
    std::fs::create_dir_all(ws.join(".claude")).unwrap();
    std::fs::create_dir_all(ws.join("pkg/.claude")).unwrap();
    std::fs::hard_link(ws.join(".git/config"), ws.join("hl")).unwrap();
    let p = policy(SandboxMode::WorkspaceWrite, vec![], true);
    for attempt in [
        "echo x >> hl",
        "echo '{}' > pkg/.claude/settings.json",
        "echo x > /dev/tty",
        "echo '{}' > .tandem/settings.local.json",
        "echo '{}' > .claude/settings.json",
        "mkdir .claude/commands",
        "echo '{}' > .mcp.json",
        "echo x >> .git/config",
        "mv .tandem t2",
    ] {
        denied(&p, ws, attempt).await;
    }
    assert!(!ws.join(".tandem/settings.local.json").exists() && !ws.join(".mcp.json").exists());
    let private = p.temp_root().unwrap().to_path_buf();
    allowed(&p, ws, &format!("echo x > {}/mine", private.display())).await;
    let shared = std::env::temp_dir().join(format!("tandem-sandbox-test-{}", std::process::id()));
    denied(&p, ws, &format!("echo x > {}", shared.display())).await;
    assert!(!shared.exists());
    allowed(&p, ws, "echo x > src/inside && cat src/inside").await;
}

#[tokio::test]
async fn workspace_write_protects_settings_outside_temp_dirs() {
    let (Some(_abi), Some(ws)) = (landlock_abi(), scratch()) else { return };
    settings_and_temp_dirs_are_protected_in(ws.path()).await;
}

#[tokio::test]
async fn workspace_write_protects_settings_inside_a_temp_dir() {
    let Some(_abi) = landlock_abi() else { return };
    let ws = tempfile::tempdir().unwrap();
    settings_and_temp_dirs_are_protected_in(&std::fs::canonicalize(ws.path()).unwrap()).await;
}

#[tokio::test]
async fn read_only_allows_no_writes() {
    let (Some(_abi), Some(ws)) = (landlock_abi(), scratch()) else { return };
    let ws = ws.path();
    repo(ws);
    let p = policy(SandboxMode::ReadOnly, vec![], true);
    allowed(&p, ws, "cat README src/main.rs > /dev/null && ls -a .git").await;
    denied(&p, ws, "echo x > src/new").await;
    denied(&p, ws, "echo x >> README").await;
    denied(&p, ws, "echo x > .git/new").await;
    denied(&p, ws, "mktemp").await;
    assert_eq!(std::fs::read_to_string(ws.join("README")).unwrap(), "readme\n");
}

#[tokio::test]
async fn network_off_denies_tcp_where_the_kernel_can() {
    let (Some(abi), Some(ws)) = (landlock_abi(), scratch()) else { return };
    if abi < 4 {
        eprintln!("skipping the network test: Landlock ABI {abi} can't restrict TCP (needs 4)");
        return;
    }
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let connect = format!("exec 3<>/dev/tcp/127.0.0.1/{port}");
    let online = policy(SandboxMode::WorkspaceWrite, vec![], true);
    allowed(&online, ws.path(), &connect).await;
    let offline = policy(SandboxMode::WorkspaceWrite, vec![], false);
    denied(&offline, ws.path(), &connect).await;
}

/// Found by an outside red team: Landlock's TCP rule let UDP, raw and MPTCP sockets through a network-off
/// sandbox. The socket filter refuses them (and io_uring, which opens sockets without `socket`).
#[tokio::test]
async fn network_off_denies_udp_mptcp_and_raw_sockets_too() {
    let (Some(_abi), Some(ws)) = (landlock_abi(), scratch()) else { return };
    let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let send = format!("echo x > /dev/udp/127.0.0.1/{}", udp.local_addr().unwrap().port());
    let online = policy(SandboxMode::WorkspaceWrite, vec![], true);
    allowed(&online, ws.path(), &send).await;
    let offline = policy(SandboxMode::ReadOnly, vec![], false);
    let (ok, stderr) = sh(&offline, ws.path(), &send).await;
    assert!(!ok && stderr.contains("Permission denied"), "UDP: {stderr}");
    let python = "import socket\nfor args in [(2, 1, 262), (10, 2, 0), (2, 3, 1)]:\n    try:\n        socket.socket(*args)\n        raise SystemExit('opened %s' % (args,))\n    except OSError as e:\n        assert e.errno == 13, e\n";
    if std::process::Command::new("python3").arg("-c").arg("1").output().is_ok_and(|out| out.status.success()) {
        std::fs::write(ws.path().join("probe.py"), python).unwrap();
        let (ok, stderr) = sh(&offline, ws.path(), "python3 probe.py").await;
        assert!(ok, "MPTCP, UDP over IPv6 and raw sockets are refused with EACCES: {stderr}");
    }
}

#[tokio::test]
async fn bash_tool_runs_sandboxed_and_notes_blocked_writes() {
    let (Some(_abi), Some(ws), Some(outside)) = (landlock_abi(), scratch(), scratch()) else { return };
    repo(ws.path());
    let mut ctx = ToolContext::new(ws.path().to_path_buf());
    let p = policy(SandboxMode::WorkspaceWrite, vec![], true);
    ctx.sandbox = Some(p.clone());

    let target = outside.path().join("f");
    let out = BashTool.run(json!({"command": format!("echo x > {}", target.display())}).into(), &ctx).await;
    assert!(out.is_error, "{}", out.content);
    assert!(out.content.contains("Permission denied"), "{}", out.content);
    assert!(out.content.ends_with(&format!("Exit code: 1\n{}", blocked_note(&p))), "{}", out.content);
    assert!(!target.exists());

    let out = BashTool.run(json!({"command": "echo x > src/new && cat src/new"}).into(), &ctx).await;
    assert_eq!(out.content, "x");
    let out = BashTool.run(json!({"command": "echo nope >&2; exit 3"}).into(), &ctx).await;
    assert_eq!(out.content, "[stderr]\nnope\nExit code: 3", "a failure that isn't the sandbox's gets no note");
}

/// Found by the eighth red-team round: a sandboxed root command read the API key from the environment of the
/// process that started tandem. It keeps none of root's capabilities but those for files (Landlock limits which).
#[tokio::test]
async fn sandboxed_root_commands_keep_only_file_capabilities() {
    let (Some(_), Some(ws)) = (landlock_abi(), scratch()) else { return };
    let p = policy(SandboxMode::WorkspaceWrite, vec![], false);
    let (ok, status) = sh(&p, ws.path(), "grep -E '^Cap(Eff|Prm|Inh|Bnd|Amb)' /proc/self/status >&2").await;
    assert!(ok, "{status}");
    let kept = 0b11011; // CHOWN, DAC_OVERRIDE, FOWNER, FSETID
    for line in status.lines() {
        let (name, hex) = line.split_once(':').unwrap();
        let set = u64::from_str_radix(hex.trim(), 16).unwrap();
        assert_eq!(set & !kept, 0, "{name} holds more than the file capabilities: {status}");
    }
    if !rustix::process::geteuid().is_root() {
        eprintln!("skipping the environ check: only root can read another process's environ that way");
        return;
    }
    let mut other =
        std::process::Command::new("sleep").arg("30").env("TANDEM_TEST_CANARY", "canary-in-environ").spawn().unwrap();
    let (ok, _) = sh(&p, ws.path(), &format!("grep -c canary-in-environ /proc/{}/environ", other.id())).await;
    other.kill().unwrap();
    other.wait().unwrap();
    assert!(!ok, "a sandboxed root command read another root process's environment");
}

/// Found by the thirteenth red-team round: a process that left its command's process group (`setsid`) and forked
/// and exited in a loop stayed ahead of the sweep and wrote settings after the guard's restore. A sandboxed
/// command can't leave its group, so the one signal to the group at its end reaches every process of it.
#[tokio::test]
async fn sandboxed_commands_cant_leave_their_process_group() {
    let (Some(_), Some(ws)) = (landlock_abi(), scratch()) else { return };
    if std::process::Command::new("setsid").arg("true").status().is_err() {
        eprintln!("skipping: no setsid program");
        return;
    }
    for mode in [SandboxMode::ReadOnly, SandboxMode::WorkspaceWrite] {
        for network in [false, true] {
            let p = policy(mode, vec![], network);
            let (ok, stderr) = sh(&p, ws.path(), "setsid true").await;
            assert!(!ok, "setsid worked in {mode} (network {network})");
            assert!(stderr.to_lowercase().contains("not permitted"), "{stderr}");
        }
    }
    let p = policy(SandboxMode::WorkspaceWrite, vec![], true);
    allowed(&p, ws.path(), "sh -c 'echo a | cat' >/dev/null && (true &) && wait").await;
}

#[tokio::test]
async fn sandboxed_commands_cant_reach_tandem_itself() {
    let (Some(abi), Some(ws)) = (landlock_abi(), scratch()) else { return };
    let p = policy(SandboxMode::WorkspaceWrite, vec![], false);
    // tandem's environment (and its API key) and memory are out of reach. Not for root: Linux lets a root process
    // read another root process's `environ` and `maps` whatever Landlock says; the binary blanks its environment
    // block for that (`own_environment`, tested end to end in tests/tests/permissions.rs).
    harden_self();
    let tandem = std::process::id();
    if rustix::process::geteuid().is_root() {
        eprintln!("skipping the /proc check: tests run as root, and root reads any root process's /proc files");
    } else {
        for file in ["environ", "mem", "maps"] {
            let (ok, _) = sh(&p, ws.path(), &format!("head -c 1 /proc/{tandem}/{file} > /dev/null")).await;
            assert!(!ok, "a sandboxed command read tandem's /proc/{tandem}/{file}");
        }
    }
    if abi >= 6 {
        // No signal to processes outside the sandbox: tandem survives `kill`.
        let mut outside = std::process::Command::new("sleep").arg("30").spawn().unwrap();
        let (ok, _) = sh(&p, ws.path(), &format!("kill -TERM {}", outside.id())).await;
        assert!(!ok, "a sandboxed command signalled a process outside its sandbox");
        assert!(outside.try_wait().unwrap().is_none(), "the outside process was killed");
        outside.kill().unwrap();
        outside.wait().unwrap();
        allowed(&p, ws.path(), "sleep 5 & kill $!").await;
    }
}

#[test]
fn each_grant_gets_what_its_decision_assumed() {
    let base = policy(SandboxMode::WorkspaceWrite, vec![PathBuf::from("/ws")], true);
    let confinement = Confinement {
        enabled: true,
        approved: SandboxMode::Off,
        approved_network: true,
        base,
        rule_write: vec![PathBuf::from("/home/u/.cargo/registry")],
        asked: Default::default(),
    };
    let read_only = confinement.policy_for(Grant::ReadOnly).unwrap();
    assert_eq!((read_only.mode, read_only.network), (SandboxMode::ReadOnly, false));
    let edits = confinement.policy_for(Grant::WorkspaceWrite).unwrap();
    assert_eq!((edits.mode, edits.network, edits.extra_write.len()), (SandboxMode::WorkspaceWrite, false, 0));
    let rule = confinement.policy_for(Grant::UserRule).unwrap();
    assert_eq!((rule.mode, rule.network), (SandboxMode::WorkspaceWrite, true));
    assert_eq!(rule.extra_write, vec![PathBuf::from("/home/u/.cargo/registry")]);
    assert!(confinement.policy_for(Grant::Approved).is_none(), "approved calls run as the user saw them");
    assert!(confinement.policy_for(Grant::Excluded).is_none());

    let capped = Confinement { approved: SandboxMode::ReadOnly, ..confinement.clone() };
    assert_eq!(capped.policy_for(Grant::UserRule).unwrap().mode, SandboxMode::ReadOnly);
    assert_eq!(capped.policy_for(Grant::Approved).unwrap().mode, SandboxMode::ReadOnly);
    let off = Confinement { enabled: false, ..confinement };
    assert!(off.policy_for(Grant::ReadOnly).is_none(), "switched off: nothing is sandboxed");
}

/// What a Read ask rule names is out of reach of every command the user did not approve (round 50: `grep -r . ` read
/// under `Read(secrets/**)`), and within reach of one they approved. An Edit ask rule's paths are asked about when a
/// command names them, not held here: carving them out stopped commands from creating anything in the directories
/// above them (`cp a b` at the top with `Edit(Cargo.lock)` asked, found by a regression check).
#[tokio::test]
async fn what_ask_rules_name_needs_an_approved_call() {
    let (Some(_abi), Some(ws)) = (landlock_abi(), scratch()) else { return };
    let ws = ws.path();
    repo(ws);
    for dir in ["secrets", "locked"] {
        std::fs::create_dir(ws.join(dir)).unwrap();
        std::fs::write(ws.join(dir).join("key"), "CANARY\n").unwrap();
    }
    let confinement = Confinement {
        enabled: true,
        approved: SandboxMode::WorkspaceWrite,
        approved_network: true,
        base: policy(SandboxMode::WorkspaceWrite, vec![ws.to_path_buf()], true),
        rule_write: Vec::new(),
        asked: super::AskedPaths {
            read: vec![ws.join("secrets")],
            write: vec![ws.join("locked")],
            ..Default::default()
        },
    };
    for grant in [Grant::ReadOnly, Grant::WorkspaceWrite, Grant::UserRule] {
        let p = confinement.policy_for(grant).unwrap();
        denied(&p, ws, "cat secrets/key").await;
        allowed(&p, ws, "cat README locked/key > /dev/null").await;
        if grant != Grant::ReadOnly {
            allowed(&p, ws, "echo x > src/new && cp README README2 && mkdir -p top/x").await;
            std::fs::remove_file(ws.join("README2")).unwrap();
            std::fs::remove_dir_all(ws.join("top")).unwrap();
        }
    }
    let approved = confinement.policy_for(Grant::Approved).unwrap();
    allowed(&approved, ws, "cat secrets/key > /dev/null && echo x > locked/key").await;
}
