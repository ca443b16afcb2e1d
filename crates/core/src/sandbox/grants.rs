//! What a policy grants, worked out with the file system before the fork: the paths readable (everything but
//! the denied ones) and the paths writable (the workspace split around its protected entries, the temp dir, the
//! caches a rule may write).
//!
//! Landlock rules only ever add rights, and a right granted on a directory covers everything beneath it. So a
//! denied path is carved out by granting its siblings instead of its parent, all the way up to `/`: the parent
//! itself gets only the right to list its entries (see [`ReadGrants::list_only`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::mend::{Listing, list_dir, metadata};
use super::path_globs::with_matches;
use super::{SandboxMode, SandboxPolicy};

/// Devices a normal command writes to whatever the mode: discarding output. Not the terminals (`/dev/tty`,
/// `/dev/pts`): a command has none (its output is a pipe), and writing to the user's could draw over tandem's
/// screen.
const DEVICES: &[&str] = &["/dev/null", "/dev/zero", "/dev/full"];

/// The paths a policy makes readable and writable.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Grants {
    /// What may be read: the same for every command while the directories it splits stay as they were
    /// ([`super::read_cache`]).
    pub(super) reads: Arc<ReadGrants>,
    /// Files and directories writable, with everything beneath them (writing, not reading: reads come from
    /// `read`, so a write grant never reopens a denied path).
    pub(super) write: Vec<PathBuf>,
}

impl Grants {
    pub(super) fn for_policy(policy: &SandboxPolicy, cwd: Option<&Path>) -> Grants {
        let (reads, deny_read) = reads_for(policy, cwd);
        let mut write: Vec<PathBuf> = DEVICES.iter().map(PathBuf::from).collect();
        // The session's own temp dir, never the system's: a workspace inside /tmp keeps its protection, and
        // nothing lands in other programs' temp files. Even a read-only command gets it (its `$TMPDIR`).
        write.extend(canonical_unique(policy.temp_root()));
        if policy.mode == SandboxMode::WorkspaceWrite {
            let roots = policy.roots(cwd);
            let mut deny_write = with_matches(&policy.deny_write, &policy.deny_write_globs);
            // As for reads: a denied path is denied under every name the mounts give it.
            let aliases = crate::fs_util::mount_aliases(&deny_write);
            deny_write.extend(aliases);
            // A denied file that is not followed wherever it goes (beyond what is held) must stay where it is.
            deny_write.extend(deny_read.into_iter().filter(|path| {
                std::fs::symlink_metadata(path).is_ok_and(|meta| !super::denied_files::followed(&meta))
            }));
            let denied = anchored_unique(deny_write.iter().map(PathBuf::as_path));
            if policy.restore_protected {
                // The protected entries are put back after the command (`guard`): only the denied paths are
                // carved out, so entries can be created at the top of the workspace.
                for root in &roots {
                    grant_around(root, &denied, &mut write);
                }
            } else {
                write.extend(workspace_grants(&roots, &denied));
            }
            let extra = canonical_unique(policy.extra_write.iter().map(PathBuf::as_path));
            write.extend(extra.into_iter().filter(|path| !denied.iter().any(|d| d.starts_with(path))));
        }
        Grants { reads, write }
    }
}

/// Works out what `policy` lets a command read before any command runs, on a thread of its own: the files it
/// denies are then known to the Read tool from the start (one denied through a link a rule names, `.env` →
/// `config/prod.env`), and the first command finds its read grants made.
pub(super) fn search_at_start(policy: SandboxPolicy, cwd: PathBuf) {
    super::denied_files::search_at_start(Arc::new(move || {
        reads_for(&policy, Some(&cwd));
    }));
}

/// What the policy lets a command read, and every path it denies now: those it names, what its patterns match,
/// and where denied files found before are now (while the policy still denies where they were found).
fn reads_for(policy: &SandboxPolicy, cwd: Option<&Path>) -> (Arc<ReadGrants>, Vec<PathBuf>) {
    let mut deny_read = with_matches(&policy.deny_read, &policy.deny_read_globs);
    let named = anchored_unique(policy.deny_read.iter().map(PathBuf::as_path));
    // A denied file is known by the path the policy named it by, which may lead through a link (`.env` →
    // `config/prod.env`): the policy keeps denying that path once the link is gone, while the target's own path
    // is one it never named.
    let denies = |origin: &Path| {
        named.iter().chain(&policy.deny_read).any(|denied| origin.starts_with(denied))
            || policy.deny_read_globs.iter().any(|glob| glob.covers(origin))
    };
    let mut named_as: Vec<(PathBuf, PathBuf)> =
        deny_read.iter().filter_map(|spelled| Some((anchored(spelled)?, spelled.clone()))).collect();
    deny_read.extend(super::denied_files::where_they_are(&denies));
    let mut written = policy.roots(cwd);
    written.extend(canonical_unique(
        policy.temp_root().into_iter().chain(policy.extra_write.iter().map(PathBuf::as_path)),
    ));
    for (other, origin) in super::denied_files::other_names(&deny_read, &written) {
        named_as.extend(anchored(&other).map(|canonical| (canonical, origin)));
        deny_read.push(other);
    }
    // The same files reached under another mount point (the project or the home bind-mounted elsewhere) are
    // denied under that name too: a directory granted whole there would hand them out.
    let aliases = crate::fs_util::mount_aliases(&deny_read);
    deny_read.extend(aliases);
    (read_grants(&deny_read, &policy.allow_read, &named_as, &denies), deny_read)
}

/// What [`read_grants`] found.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct ReadGrants {
    /// Readable (read, list, execute), with everything beneath them.
    pub(super) read: Vec<PathBuf>,
    /// Directories above a denied path: their entries can be listed, nothing more (their other entries are in
    /// `read`).
    pub(super) list_only: Vec<PathBuf>,
}

/// Everything readable but `deny` (and what lies beneath), with `allow` readable again even inside a denied path
/// (an allow rule that names `~/.ssh/known_hosts`). No denied path: `/` whole. Kept for later commands while the
/// directories split stay as they were ([`super::read_cache`]).
fn read_grants(
    deny: &[PathBuf],
    allow: &[PathBuf],
    named_as: &[(PathBuf, PathBuf)],
    origins: &dyn Fn(&Path) -> bool,
) -> Arc<ReadGrants> {
    let paths = anchored_unique(deny.iter().map(PathBuf::as_path));
    let allowed = canonical_unique(allow.iter().map(PathBuf::as_path));
    super::read_cache::read_grants_with(paths, allowed, |paths| {
        let mut grants = ReadGrants::default();
        split_for_reads(Path::new("/"), &Denied { paths, named_as, origins }, &mut grants);
        grants
    })
}

/// What [`split_for_reads`] leaves out: the denied paths, and files found at a denied path before (renamed
/// since) whose origin is still denied.
struct Denied<'a> {
    /// Canonical.
    paths: &'a [PathBuf],
    /// A denied path as the policy named it (second), for each canonical one it leads to (first).
    named_as: &'a [(PathBuf, PathBuf)],
    origins: &'a dyn Fn(&Path) -> bool,
}

impl Denied<'_> {
    /// The path the policy denies `path` (canonical, denied) by.
    fn origin<'p>(&'p self, path: &'p Path) -> &'p Path {
        self.named_as.iter().find(|(canonical, _)| canonical == path).map_or(path, |(_, named)| named)
    }
}

/// Grants `path` whole when no denied path is at or beneath it; otherwise lists it only and recurses into its
/// entries. Symlinks are never granted: what they lead to is granted (or not) where it is, and granting a link
/// would grant its target, denied or not.
fn split_for_reads(path: &Path, denied: &Denied<'_>, grants: &mut ReadGrants) {
    if denied.paths.iter().any(|d| d == path) {
        super::denied_files::remember(path, denied.origin(path));
        return;
    }
    if !denied.paths.iter().any(|d| d.starts_with(path)) {
        grants.read.push(path.to_path_buf());
        return;
    }
    grants.list_only.push(path.to_path_buf());
    let Ok(entries) = std::fs::read_dir(path) else { return };
    for entry in entries.flatten() {
        let Ok(meta) = entry.metadata() else { continue };
        // A denied file renamed since is still denied. A file with another name is not granted (a denied one is
        // remembered, as any denied path).
        let renamed = super::denied_files::known_origin(&meta).is_some_and(|origin| (denied.origins)(&origin));
        let denied_here = || denied.paths.contains(&entry.path());
        if !meta.file_type().is_symlink() && !renamed && (!shares_inode(&meta) || denied_here()) {
            split_for_reads(&entry.path(), denied, grants);
        }
    }
}

/// The paths, canonical (so they compare with what `read_dir` lists), existing, without duplicates.
pub(super) fn canonical_unique<'a>(paths: impl IntoIterator<Item = &'a Path>) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for path in paths {
        if let Ok(path) = std::fs::canonicalize(path)
            && !out.contains(&path)
        {
            out.push(path);
        }
    }
    out
}

/// Denied paths, canonical where they exist; one that does not exist yet is kept as its longest existing ancestor
/// (canonical) with the rest appended, so that the grants split that ancestor and the path can't be created.
/// Dropped, a missing `~/.config/git` left `~/.config` granted whole, and a build a rule allowed created the
/// git profile that every later `git status` obeys.
pub(super) fn anchored_unique<'a>(paths: impl IntoIterator<Item = &'a Path>) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for path in paths {
        if let Some(path) = anchored(path)
            && !out.contains(&path)
        {
            out.push(path);
        }
    }
    out
}

fn anchored(path: &Path) -> Option<PathBuf> {
    if let Ok(path) = std::fs::canonicalize(path) {
        return Some(path);
    }
    let path = crate::fs_util::normalize(path);
    let existing = path.ancestors().skip(1).find(|ancestor| ancestor.exists())?;
    let rest = path.strip_prefix(existing).ok()?;
    Some(std::fs::canonicalize(existing).ok()?.join(rest))
}

/// Entries of a workspace root that stay read-only in the sandbox, whether they exist or not: the repository and
/// the configuration that decides what tandem (or Claude Code) may do in later sessions.
pub(super) const READ_ONLY_ENTRIES: &[&str] = &[".git", ".tandem", ".claude", ".mcp.json"];

/// What to grant so that the `roots` are writable except each root's [`READ_ONLY_ENTRIES`] (also those nested
/// in subdirectories) and the `denied` paths: every root is split around them (see the module docs of
/// [`super`] for the trade-off).
pub(super) fn workspace_grants(roots: &[PathBuf], denied: &[PathBuf]) -> Vec<PathBuf> {
    let mut protected: Vec<PathBuf> =
        roots.iter().flat_map(|root| READ_ONLY_ENTRIES.iter().map(move |name| root.join(name))).collect();
    protected.extend(denied.iter().cloned());
    for root in roots {
        nested_read_only(root, Listing::AsItIs, &mut protected);
    }
    let mut out = Vec::new();
    for root in roots {
        grant_around(root, &protected, &mut out);
    }
    out
}

/// Adds the read-only entries nested below `root` (not its own) to `out`, within the scan's limits.
pub(super) fn nested_read_only(root: &Path, listing: Listing, out: &mut Vec<PathBuf>) {
    find_nested_read_only(root, MAX_NESTED_SCAN, listing, out);
    let repositories = super::gitlinks::submodule_repositories(root);
    for repository in repositories.into_iter().chain(super::gitlinks::pointed_repositories(root)) {
        if !out.contains(&repository) {
            out.push(repository);
        }
    }
    // A nested repository's `.git` file (`nest/.git`: `gitdir: ../nest-store`) names a repository git obeys as it
    // does a `.git` directory.
    let nested: Vec<PathBuf> = out.iter().filter(|path| path.ends_with(".git")).cloned().collect();
    for pointed in nested.iter().filter_map(|dot_git| super::gitlinks::pointed_git_dir(dot_git)) {
        if pointed.starts_with(root) && !pointed.starts_with(root.join(".git")) && !out.contains(&pointed) {
            out.push(pointed);
        }
    }
}

/// Entries looked at, at most, per root when looking for nested read-only entries (`sub/.claude`, a
/// submodule's `.git`); deeper or bigger trees keep only the root's own protected.
const MAX_NESTED_SCAN: usize = 50_000;
/// How deep nested read-only entries are looked for.
const MAX_NESTED_DEPTH: usize = 6;

/// Adds the read-only entries found below `root` (not following links, not entering `.git`, `node_modules` or
/// `target`) to `out`, looking at `budget` entries at most. Breadth first, level by level, and each directory found
/// is asked for the read-only names directly before its entries are listed: a big directory (a `.venv`, 50,000
/// generated files) uses up the budget only for what lies below the directories already found, and never hides
/// `sub/.claude` next to it.
fn find_nested_read_only(root: &Path, mut budget: usize, listing: Listing, out: &mut Vec<PathBuf>) {
    let mut level = vec![root.to_path_buf()];
    for _ in 0..MAX_NESTED_DEPTH {
        let mut next = Vec::new();
        'listing: for dir in &level {
            let Ok(entries) = list_dir(dir, listing, root) else { continue };
            for entry in entries.flatten() {
                if budget == 0 {
                    break 'listing;
                }
                budget -= 1;
                let name = entry.file_name();
                let skip = READ_ONLY_ENTRIES.iter().any(|read_only| name == *read_only)
                    || name == "node_modules"
                    || name == "target";
                if !skip && entry.file_type().is_ok_and(|kind| kind.is_dir()) {
                    next.push(entry.path());
                }
            }
        }
        for dir in &next {
            let found = READ_ONLY_ENTRIES.iter().map(|name| dir.join(name));
            out.extend(found.filter(|path| metadata(path, listing, root).is_ok()));
        }
        if budget == 0 {
            return;
        }
        level = next;
    }
}

/// Grants `path` whole when no protected path lies beneath it; otherwise its entries, recursively, leaving out the
/// protected ones and symlinks (a link may lead into a protected path or out of the workspace). Only directories
/// above a protected path are split, so this descends at most as deep as the protected paths are.
fn grant_around(path: &Path, protected: &[PathBuf], out: &mut Vec<PathBuf>) {
    if protected.iter().any(|p| p == path) {
        return;
    }
    if !protected.iter().any(|p| p.starts_with(path)) {
        out.push(path.to_path_buf());
        return;
    }
    let Ok(entries) = std::fs::read_dir(path) else { return };
    for entry in entries.flatten() {
        // A file with another hard link would make that other name writable too (Landlock grants the inode).
        if entry.metadata().is_ok_and(|meta| !meta.file_type().is_symlink() && !shares_inode(&meta)) {
            grant_around(&entry.path(), protected, out);
        }
    }
}

/// A file with more than one name: granting it by one name grants every other (Landlock rules hold inodes).
fn shares_inode(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    meta.is_file() && meta.nlink() > 1
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by the sixteenth red-team round: a repository kept in the work tree by a `.git` file — the root's own
    /// (`gitdir: store`) or a nested one's — was neither kept read-only nor put back.
    #[test]
    fn repositories_git_files_point_to_are_read_only() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(root.join("store/hooks")).unwrap();
        std::fs::write(root.join(".git"), "gitdir: store\n").unwrap();
        std::fs::create_dir_all(root.join("nest")).unwrap();
        std::fs::create_dir_all(root.join("nest-store")).unwrap();
        std::fs::write(root.join("nest/.git"), "gitdir: ../nest-store\n").unwrap();
        let mut found = Vec::new();
        nested_read_only(&root, Listing::AsItIs, &mut found);
        assert!(found.contains(&root.join("store")) && found.contains(&root.join("nest-store")), "{found:?}");
    }

    /// Found by the fourteenth red-team round: 55,000 files in one directory used up the scan before it reached
    /// `sub`, so the settings planted in `sub/.claude` (next to a planted `sub/.git`) were neither kept read-only
    /// nor put back.
    #[test]
    fn a_big_directory_does_not_hide_settings_next_to_it() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        for name in ["a1", "a2", "a3"] {
            std::fs::create_dir(root.join(name)).unwrap();
            for i in 0..40 {
                std::fs::write(root.join(name).join(i.to_string()), "").unwrap();
            }
        }
        std::fs::create_dir_all(root.join("sub/.claude")).unwrap();
        std::fs::create_dir_all(root.join("sub/deeper/.tandem")).unwrap();
        let mut found = Vec::new();
        find_nested_read_only(&root, 30, Listing::AsItIs, &mut found);
        assert!(found.contains(&root.join("sub/.claude")), "{found:?}");
        let mut found = Vec::new();
        find_nested_read_only(&root, 1_000, Listing::AsItIs, &mut found);
        assert!(found.contains(&root.join("sub/deeper/.tandem")), "{found:?}");
    }

    #[test]
    fn reads_are_split_around_denied_paths_up_to_the_root() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(root.join("home/.ssh")).unwrap();
        std::fs::create_dir_all(root.join("home/project")).unwrap();
        std::fs::write(root.join("home/.ssh/known_hosts"), "h").unwrap();
        std::os::unix::fs::symlink(root.join("home/.ssh"), root.join("home/ssh-link")).unwrap();
        let grants = read_grants(&[root.join("home/.ssh")], &[root.join("home/.ssh/known_hosts")], &[], &|_| true);
        assert!(!grants.read.contains(&PathBuf::from("/")));
        assert!(grants.list_only.contains(&PathBuf::from("/")) && grants.list_only.contains(&root.join("home")));
        assert!(grants.read.contains(&root.join("home/project")));
        assert!(grants.read.contains(&root.join("home/.ssh/known_hosts")), "an allowed path is granted back");
        assert!(!grants.read.iter().any(|path| path == &root.join("home/.ssh") || path.ends_with("ssh-link")));
        assert!(grants.read.contains(&PathBuf::from("/usr")) || !Path::new("/usr").exists());
        // A denied path that does not exist yet splits its existing parent, so it can't be made and then read.
        let missing = read_grants(&[root.join("missing")], &[], &[], &|_| true);
        assert!(missing.list_only.contains(&root) && missing.read.contains(&root.join("home")), "{missing:?}");
        assert!(!missing.read.iter().any(|path| path == &root || root.starts_with(path)));
    }
}
