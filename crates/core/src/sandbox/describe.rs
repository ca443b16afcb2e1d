//! The session's sandbox in words, for `/sandbox`: what each way a command gets to run is granted, the paths that
//! decide it, and what the running kernel enforces of it.

use std::fmt::Write;
use std::path::PathBuf;

use super::{Confinement, Grant, SandboxMode, SandboxPolicy, Support};

/// The resolved policy and the kernel's part, one line per fact. `None`: the session has no sandbox.
pub fn describe(confinement: Option<&Confinement>, support: &Support) -> String {
    let mut out = String::new();
    let kernel = match support {
        Support::Full { abi } => format!("Landlock ABI {abi}: everything below is enforced by the kernel."),
        Support::Partial { abi, missing } => {
            format!("Landlock ABI {abi}: enforced, except what this kernel lacks: {missing}.")
        }
        Support::Unavailable(why) => format!("no Landlock ({why}): nothing below can be enforced."),
    };
    let Some(confinement) = confinement else {
        let _ = writeln!(out, "Sandbox: off. Commands tandem allows without asking run with your full rights.");
        let _ = write!(out, "Kernel: {kernel}");
        return out;
    };
    let _ = writeln!(out, "Sandbox: {}.", if confinement.enabled { "on" } else { "off for unapproved commands" });
    let _ = writeln!(out, "Kernel: {kernel}");
    let rows = [
        ("Judged read-only", Grant::ReadOnly),
        ("acceptEdits file operations", Grant::WorkspaceWrite),
        ("Your rules, hooks, bypass", Grant::UserRule),
        ("Approved in the dialog", Grant::Approved),
    ];
    for (label, grant) in rows {
        let _ = writeln!(out, "  {label}: {}", grant_line(confinement.policy_for(grant).as_ref()));
    }
    let base = &confinement.base;
    if let Some(temp) = base.temp_root() {
        let _ = writeln!(out, "Private temp dir: {}", temp.display());
    }
    let _ = writeln!(out, "Workspace: {}", paths(&base.writable_roots));
    let _ = writeln!(out, "Never readable: {}", paths(&base.deny_read));
    let patterns = |globs: &[super::PathGlob]| globs.iter().map(|glob| glob.pattern().to_owned()).collect::<Vec<_>>();
    if !base.deny_read_globs.is_empty() {
        let _ = writeln!(
            out,
            "Never readable, what matches (searched before each command): {}",
            patterns(&base.deny_read_globs).join(", ")
        );
    }
    if !base.allow_read.is_empty() {
        let _ = writeln!(out, "Readable again inside those: {}", paths(&base.allow_read));
    }
    let _ = writeln!(
        out,
        "Never writable: {} (and .git config and hooks, .claude, .tandem, .mcp.json, put back after each command)",
        paths(&base.deny_write)
    );
    if !base.deny_write_globs.is_empty() {
        let _ = writeln!(
            out,
            "Never writable, what matches (searched before each command): {}",
            patterns(&base.deny_write_globs).join(", ")
        );
    }
    let asked = &confinement.asked;
    let mut named: Vec<String> = asked.read.iter().map(|path| format!("read {}", path.display())).collect();
    named.extend(patterns(&asked.read_globs).into_iter().map(|pattern| format!("read {pattern}")));
    named.extend(asked.write.iter().map(|path| format!("write {} (asked when a command names it)", path.display())));
    named.extend(patterns(&asked.write_globs).into_iter().map(|pattern| format!("write {pattern}")));
    if !named.is_empty() {
        let _ = writeln!(out, "Only for commands you approve (your ask rules): {}", named.join(", "));
    }
    let _ = write!(out, "Also writable under your rules: {}", paths(&confinement.rule_write));
    out
}

fn grant_line(policy: Option<&SandboxPolicy>) -> String {
    let Some(policy) = policy else { return "unsandboxed (your full rights)".to_owned() };
    let writes = match policy.mode {
        SandboxMode::ReadOnly => "no writes but the private temp dir",
        SandboxMode::WorkspaceWrite if policy.extra_write.is_empty() => "writes in the workspace",
        SandboxMode::WorkspaceWrite => "writes in the workspace and the tool caches",
        SandboxMode::Off => return "unsandboxed (your full rights)".to_owned(),
    };
    let network = if policy.network { "network on" } else { "no network" };
    format!("{writes}, {network}")
}

/// The paths, the home directories written `~` (the lists are long: most of them are in one), each once: what is
/// denied in `$HOME` is denied in the account's home too where that differs, which the list then says.
fn paths(list: &[PathBuf]) -> String {
    if list.is_empty() {
        return "none".to_owned();
    }
    let mut homes: Vec<PathBuf> = Vec::new();
    let candidates = [std::env::var_os("HOME").map(PathBuf::from), crate::fs_util::account_home()];
    for home in candidates.into_iter().flatten().filter(|home| home.as_os_str().len() > 1) {
        if !homes.contains(&home) {
            homes.push(home);
        }
    }
    let mut used = vec![false; homes.len()];
    let mut shown: Vec<String> = Vec::new();
    for path in list {
        let text = match homes.iter().enumerate().find_map(|(at, home)| Some((at, path.strip_prefix(home).ok()?))) {
            Some((at, rest)) => {
                used[at] = true;
                format!("~/{}", rest.display())
            }
            None => path.display().to_string(),
        };
        if !shown.contains(&text) {
            shown.push(text);
        }
    }
    let mut out = shown.join(", ");
    let named: Vec<String> =
        homes.iter().zip(&used).filter(|(_, used)| **used).map(|(home, _)| home.display().to_string()).collect();
    if homes.len() > 1 && !named.is_empty() {
        out.push_str(&format!(" (~ is {})", named.join(" and ")));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn says_what_each_grant_gets_and_what_the_kernel_enforces() {
        let mut base =
            SandboxPolicy::with_private_temp(SandboxMode::WorkspaceWrite, vec![PathBuf::from("/w")], false).unwrap();
        base.deny_read = vec![PathBuf::from("/h/.ssh")];
        base.deny_write = vec![PathBuf::from("/h/.bashrc")];
        let confinement = Confinement {
            enabled: true,
            approved: SandboxMode::Off,
            approved_network: true,
            base,
            rule_write: vec![PathBuf::from("/h/.cargo/registry")],
            asked: Default::default(),
        };
        let text = describe(Some(&confinement), &Support::Full { abi: 6 });
        for line in [
            "Sandbox: on.",
            "Kernel: Landlock ABI 6: everything below is enforced by the kernel.",
            "  Judged read-only: no writes but the private temp dir, no network",
            "  acceptEdits file operations: writes in the workspace, no network",
            "  Your rules, hooks, bypass: writes in the workspace and the tool caches, network on",
            "  Approved in the dialog: unsandboxed (your full rights)",
            "Workspace: /w",
            "Never readable: /h/.ssh",
            "Also writable under your rules: /h/.cargo/registry",
        ] {
            assert!(text.lines().any(|l| l == line), "{line:?} in:\n{text}");
        }
        assert!(text.contains("Never writable: /h/.bashrc"), "{text}");
        let off = describe(None, &Support::Unavailable("no kernel support".into()));
        assert!(off.starts_with("Sandbox: off.") && off.contains("no Landlock (no kernel support)"), "{off}");
    }
}
