//! The session's sandbox made from the permission policy and the `sandbox` settings: what no sandboxed command
//! may ever read or write (secrets, profiles, what deny rules and the settings name), the workspace it may
//! write, the caches a rule-allowed command may write. Front ends and tests build it the same way.

use std::path::{Path, PathBuf};

use super::PermissionPolicy;
use super::rules::path_globs;
use super::settings::{RuleKind, resolve_path_pattern};
use crate::sandbox::{
    AskedPaths, Confinement, PathGlob, SandboxMode, SandboxPolicy, SandboxSettings, default_cache_paths, is_pattern,
};

/// The session-wide choices: whether unapproved commands are sandboxed, and what approved ones run in.
#[derive(Clone, Copy, Debug)]
pub struct ConfinementShape {
    pub enabled: bool,
    pub approved: SandboxMode,
    pub approved_network: bool,
}

/// The session's [`Confinement`] (creates its private temp dir).
pub fn confinement(
    permissions: &PermissionPolicy,
    settings: &SandboxSettings,
    shape: ConfinementShape,
) -> std::io::Result<Confinement> {
    let base = base_policy(settings, permissions)?;
    let mut rule_write = default_cache_paths(&permissions.home);
    rule_write.extend(settings.allow_write.iter().cloned());
    let (read, read_globs) = named_by_rules(permissions, RuleKind::Ask, "Read");
    let (write, write_globs) = named_by_rules(permissions, RuleKind::Ask, "Edit");
    Ok(Confinement {
        enabled: shape.enabled,
        approved: shape.approved,
        approved_network: shape.approved_network,
        base,
        rule_write,
        asked: AskedPaths { read, read_globs, write, write_globs },
    })
}

/// What every call's policy shares: the workspace, the private temp dir, and what may never be read or written.
fn base_policy(settings: &SandboxSettings, permissions: &PermissionPolicy) -> std::io::Result<SandboxPolicy> {
    let workspace = &permissions.workspace;
    let mut base = SandboxPolicy::with_private_temp(SandboxMode::WorkspaceWrite, workspace.roots().to_vec(), false)?;
    let secrets = workspace.secret_paths();
    base.deny_read = secrets.clone();
    base.deny_read.extend(settings.deny_read.iter().cloned());
    let (read_paths, read_globs) = named_by_rules(permissions, RuleKind::Deny, "Read");
    base.deny_read.extend(read_paths);
    base.deny_read_globs = read_globs;
    base.allow_read = settings.allow_read.clone();
    // An allow rule naming a secret (`Read(~/.ssh/known_hosts)`) lets the analyser through; the sandbox too.
    base.allow_read.extend(
        allowed_read_paths(permissions)
            .into_iter()
            .filter(|path| secrets.iter().any(|secret| path.starts_with(secret))),
    );
    base.deny_write = secrets;
    base.deny_write.extend(workspace.profile_paths());
    base.deny_write.extend(settings.deny_write.iter().cloned());
    let (edit_paths, edit_globs) = named_by_rules(permissions, RuleKind::Deny, "Edit");
    base.deny_write.extend(edit_paths);
    base.deny_write_globs = edit_globs;
    Ok(base)
}

/// What the `kind` rules for `tool` (deny or ask) name, read the wide way, as the analyser applies them (`/x` in
/// the project and at the root, a name without `/` at any depth): the paths they name outright, and the patterns
/// the sandbox searches for before each command.
fn named_by_rules(permissions: &PermissionPolicy, kind: RuleKind, tool: &str) -> (Vec<PathBuf>, Vec<PathGlob>) {
    let roots = permissions.workspace.roots();
    let (mut paths, mut globs) = (Vec::new(), Vec::new());
    let rules = permissions.rules.iter().filter(|rule| rule.kind == kind && rule.rule.tool == tool);
    for rule in rules {
        let Some(spec) = rule.rule.specifier.as_deref() else { continue };
        for pattern in path_globs(spec, &rule.root, roots, &permissions.home, true) {
            // `dir/**` names `dir` and all below it: searched as a pattern all the same, for the links inside
            // it (`conf/k -> ../private/k2`), whose targets the rule covers too.
            let text = pattern.to_string_lossy();
            let whole_dir = text.ends_with("/**");
            let literal = Path::new(text.strip_suffix("/**").unwrap_or(&text));
            match PathGlob::new(&pattern).filter(|_| is_pattern(literal) || whole_dir) {
                Some(glob) => globs.push(glob),
                None => paths.push(literal.to_path_buf()),
            }
        }
    }
    (paths, globs)
}

/// The paths the user's own `Read` allow rules name literally (`Read(~/.ssh/known_hosts)`, `Read(~/keys/**)` →
/// `~/keys`): only those may make part of a denied path readable again (see `read_rule_names`); a rule with a
/// wildcard, or a name without `/` (any depth), names no single path.
fn allowed_read_paths(permissions: &PermissionPolicy) -> Vec<PathBuf> {
    let cwd = permissions.workspace.cwd().to_path_buf();
    permissions
        .rules
        .iter()
        .filter(|rule| rule.kind == RuleKind::Allow && rule.rule.tool == "Read" && rule.scope.lifts_secrets())
        .filter_map(|rule| {
            let spec = rule.rule.specifier.as_deref()?;
            let literal = spec.strip_suffix("/**").unwrap_or(spec);
            if is_pattern(Path::new(literal)) || !literal.contains('/') && !literal.starts_with('~') {
                return None;
            }
            Some(resolve_path_pattern(literal, &rule.root, &cwd, &permissions.home))
        })
        .collect()
}
