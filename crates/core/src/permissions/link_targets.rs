//! Where the links a deny or ask rule covers lead. A rule covers a file under every name that reaches it; a link
//! inside a directory the rule names (`locked/x -> ../open/x` under `Edit(locked/**)`) is a second name for its
//! target, which the rule covers too — also before the target exists (a dangling link that a build or a Write would
//! fill). The sandbox's search finds these links for commands; this finds them for a call being judged.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use super::PermissionPolicy;
use super::rules::path_globs;
use super::settings::SourcedRule;
use crate::sandbox::Seen;

/// Entries looked at, at most, per rule and call: a directory a rule names is usually small; beyond this the links
/// are left to the sandbox's search (which holds commands, and makes the tools refuse what it found).
const MAX_ENTRIES: usize = 10_000;

impl PermissionPolicy {
    /// Whether `path` is, or lies below, where a link that `rule` covers leads.
    pub(super) fn rule_leads_to(&self, rule: &SourcedRule, path: &Path) -> bool {
        self.rule_link_targets(rule).iter().any(|target| path.starts_with(target))
    }

    /// Where the links `rule` covers lead: below the directory the rule names, and for an Edit rule at any depth
    /// of the workspace too (a Read rule at any depth, `Read(**/*.key)`, is left to the sandbox's search).
    pub(super) fn rule_link_targets(&self, rule: &SourcedRule) -> Vec<PathBuf> {
        let Some(spec) = rule.rule.specifier.as_deref() else { return Vec::new() };
        let roots = self.workspace.roots();
        let mut targets = Vec::new();
        // A Read rule at any depth is left to the sandbox's search, whose finds the tools know by their origin; an
        // Edit rule's links are looked for at every depth (a write is rarer than a read, and the dangling link of
        // `Edit(**/*.lock)` names a file no search has found yet).
        let any_depth = rule.rule.covers_tool("Read");
        let globs = path_globs(spec, &rule.root, roots, &self.home, true);
        // Matched by the rule's globs built once: a workspace holds thousands of links (pnpm's node_modules).
        let matchers: Vec<(globset::GlobMatcher, Option<PathBuf>)> = globs
            .iter()
            .filter_map(|glob| {
                let text = glob.to_string_lossy();
                let whole = text.strip_suffix("/**").map(PathBuf::from);
                let built = globset::GlobBuilder::new(&text).literal_separator(true).build().ok()?;
                Some((built.compile_matcher(), whole))
            })
            .collect();
        let covers = |link: &Path| {
            matchers.iter().any(|(matcher, whole)| {
                link.ancestors().any(|path| matcher.is_match(path)) || whole.as_deref().is_some_and(|w| link == w)
            })
        };
        for glob in &globs {
            let (base, _) = crate::sandbox::split_literal(glob);
            let at_a_root = roots.iter().any(|root| root.starts_with(&base));
            if base.parent().is_none() || at_a_root && any_depth {
                continue;
            }
            targets.extend(links_below(&base).iter().filter(|link| covers(link)).map(|link| target_of(link)));
        }
        targets
    }
}

/// The links at or below `base` (not followed), at most [`MAX_ENTRIES`] entries looked at. A walk is kept while
/// every directory it listed is the same directory with the same modification and change times (adding, removing
/// or renaming an entry, a link included, changes its directory's): a rule naming a directory of 10,000 files cost ~50 ms a
/// call walked each time.
fn links_below(base: &Path) -> Vec<PathBuf> {
    let kept = SCANS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let unchanged = |dirs: &[Option<Seen>]| dirs.iter().all(|dir| dir.as_ref().is_some_and(Seen::unchanged));
    if let Some(scan) = kept.iter().find(|scan| scan.base == base && unchanged(&scan.dirs)) {
        return scan.links.clone();
    }
    drop(kept);
    let started = SystemTime::now();
    let (links, dirs) = walk(base);
    let settled = dirs.iter().all(|dir| dir.as_ref().is_some_and(|dir| dir.settled_before(started)));
    let mut kept = SCANS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    kept.retain(|scan| scan.base != base);
    if settled {
        if kept.len() >= KEPT_SCANS {
            kept.remove(0);
        }
        kept.push(Scan { base: base.to_path_buf(), dirs, links: links.clone() });
    }
    links
}

/// Walks kept at most (one per directory a rule names).
const KEPT_SCANS: usize = 16;

static SCANS: Mutex<Vec<Scan>> = Mutex::new(Vec::new());

/// A walk of a directory a rule names: the links found, and the directories listed as they were.
struct Scan {
    base: PathBuf,
    dirs: Vec<Option<Seen>>,
    links: Vec<PathBuf>,
}

/// The sandbox's walk for links (links to directories entered under their own names, each real directory once),
/// bounded here by [`MAX_ENTRIES`]; and the rule's directory itself when it is a link.
fn walk(base: &Path) -> (Vec<PathBuf>, Vec<Option<Seen>>) {
    let mut links = Vec::new();
    if base.symlink_metadata().is_ok_and(|meta| meta.file_type().is_symlink()) {
        links.push(base.to_path_buf());
    }
    let mut listed = Vec::new();
    crate::sandbox::links_inside(base, &mut links, &mut listed, MAX_ENTRIES);
    (links, listed)
}

/// Where `link` leads: the real path, or for a link whose target does not exist yet, the place a file created
/// through it would be — resolved as the kernel will: every link on the way followed, dangling ones in a chain
/// too (`locked/cfg -> ../mid/cfg -> ../open/cfg`), and a `..` after a link going up from where the link leads.
fn target_of(link: &Path) -> PathBuf {
    let mut current = link.to_path_buf();
    for _ in 0..MAX_HOPS {
        if let Ok(real) = std::fs::canonicalize(&current) {
            return real;
        }
        let Ok(named) = std::fs::read_link(&current) else { return with_real_directory(&current) };
        current = with_real_directory(&current.parent().unwrap_or(Path::new("/")).join(named));
    }
    current
}

/// Links followed at most, as the kernel (then `ELOOP`).
const MAX_HOPS: usize = 40;

/// `path` with its directory resolved as the kernel will (links followed, then `..`), its last name as written.
fn with_real_directory(path: &Path) -> PathBuf {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else { return crate::fs_util::normalize(path) };
    let dir = std::fs::canonicalize(dir)
        .ok()
        .or_else(|| crate::fs_util::resolve_like_kernel(dir))
        .unwrap_or_else(|| target_of(dir));
    dir.join(name)
}
