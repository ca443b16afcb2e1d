//! Where the links a deny or ask rule covers lead. A rule covers a file under every name that reaches it; a link
//! inside a directory the rule names (`locked/x -> ../open/x` under `Edit(locked/**)`) is a second name for its
//! target, which the rule covers too — also before the target exists (a dangling link that a build or a Write would
//! fill). The sandbox's search finds these links for commands; this finds them for a call being judged.

use std::path::{Component, Path, PathBuf};

use super::PermissionPolicy;
use super::rules::{path_globs, path_matches};
use super::settings::SourcedRule;

/// Entries looked at, at most, per rule and call: a directory a rule names is usually small; beyond this the links
/// are left to the sandbox's search (which holds commands, and makes the tools refuse what it found).
const MAX_ENTRIES: usize = 10_000;

impl PermissionPolicy {
    /// Whether `path` is, or lies below, where a link that `rule` covers leads.
    pub(super) fn rule_leads_to(&self, rule: &SourcedRule, path: &Path) -> bool {
        self.rule_link_targets(rule).iter().any(|target| path.starts_with(target))
    }

    /// Where the links `rule` covers lead. Only below a directory the rule names: a rule at any depth of the
    /// workspace (`Read(**/*.key)`) is left to the sandbox's search, which walks the workspace once and keeps it.
    pub(super) fn rule_link_targets(&self, rule: &SourcedRule) -> Vec<PathBuf> {
        let Some(spec) = rule.rule.specifier.as_deref() else { return Vec::new() };
        let roots = self.workspace.roots();
        let mut targets = Vec::new();
        for glob in path_globs(spec, &rule.root, roots, &self.home, true) {
            let base: PathBuf = glob.components().take_while(|part| !is_wildcard(part)).collect();
            if base.parent().is_none() || roots.iter().any(|root| root.starts_with(&base)) {
                continue;
            }
            for link in links_below(&base) {
                if path_matches(spec, &link, &rule.root, roots, &self.home, true) {
                    targets.push(target_of(&link));
                }
            }
        }
        targets
    }
}

fn is_wildcard(part: &Component) -> bool {
    part.as_os_str().to_string_lossy().contains(['*', '?', '[', '{'])
}

/// The links at or below `base` (not followed), at most [`MAX_ENTRIES`] entries looked at.
fn links_below(base: &Path) -> Vec<PathBuf> {
    let mut links = Vec::new();
    if base.symlink_metadata().is_ok_and(|meta| meta.file_type().is_symlink()) {
        links.push(base.to_path_buf());
    }
    let mut pending = vec![base.to_path_buf()];
    let mut budget = MAX_ENTRIES;
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            if budget == 0 {
                return links;
            }
            budget -= 1;
            match entry.file_type() {
                Ok(kind) if kind.is_symlink() => links.push(entry.path()),
                Ok(kind) if kind.is_dir() => pending.push(entry.path()),
                _ => {}
            }
        }
    }
    links
}

/// Where `link` leads: the real path, or for a link whose target does not exist yet, the place it names (its
/// directory resolved).
fn target_of(link: &Path) -> PathBuf {
    if let Ok(real) = std::fs::canonicalize(link) {
        return real;
    }
    let Ok(named) = std::fs::read_link(link) else { return link.to_path_buf() };
    let joined = crate::fs_util::normalize(&link.parent().unwrap_or(Path::new("/")).join(named));
    match (joined.parent().and_then(|dir| std::fs::canonicalize(dir).ok()), joined.file_name()) {
        (Some(dir), Some(name)) => dir.join(name),
        _ => joined,
    }
}
