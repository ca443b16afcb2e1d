//! Denied paths given as patterns (`Read(.env)` at any depth, `Read(./.env.*)`, `Edit(**/*.pem)`): Landlock grants
//! paths, not patterns, so before each command the file system is searched for what they match, below the
//! pattern's literal part, and what is found is denied like a path named outright. Without this a build a rule
//! allows could `cat` every `.env` that a deny rule, which the analyser applies to the command line alone, names.
//!
//! A search is kept for the next command while every directory it listed keeps its inode and modification time.
//! The search is bounded ([`MAX_ENTRIES`] per pattern): what it could not finish is denied whole. It doesn't follow
//! links (a link that matches is denied, and so is where it leads), doesn't descend into what it found (denied
//! whole) except to find the links in a directory a rule names whole, nor into a repository's `.git`,
//! `node_modules` or a build's `target` (see [`is_generated`]).

use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use super::walk::{Seen, Visit, Walked, breadth_first};

/// Entries looked at, at most, per pattern and command.
const MAX_ENTRIES: usize = 50_000;

/// A denied pattern: an absolute glob (`/` matched only by `/`, `**` at any depth).
#[derive(Clone, Debug)]
pub struct PathGlob {
    /// Where the search starts: the pattern's longest leading part without a wildcard.
    base: PathBuf,
    matcher: globset::GlobMatcher,
    /// `dir/**` also covers `dir` itself, which is denied whole then.
    whole: Option<PathBuf>,
    pattern: String,
    /// The last complete search, kept while every directory it listed is unchanged.
    last: Arc<Mutex<Option<Search>>>,
}

/// A complete search: what it found, and the directories it listed as it saw them (each settled, see
/// [`Seen::settled_before`]: a change in the same clock tick as the listing would keep the listed time).
#[derive(Debug)]
struct Search {
    listed: Vec<Seen>,
    found: Vec<PathBuf>,
}

impl PathGlob {
    /// `None` for a pattern that is not absolute or not a valid glob.
    pub fn new(pattern: &Path) -> Option<PathGlob> {
        let text = pattern.to_str()?.to_owned();
        if !pattern.is_absolute() {
            return None;
        }
        let matcher = globset::GlobBuilder::new(&text).literal_separator(true).build().ok()?.compile_matcher();
        let (base, _) = split_literal(pattern);
        let whole = text.strip_suffix("/**").map(PathBuf::from);
        Some(PathGlob { base, matcher, whole, pattern: text, last: Arc::default() })
    }

    /// The pattern as written, resolved.
    pub fn pattern(&self) -> &str {
        &self.pattern
    }

    fn matches(&self, path: &Path) -> bool {
        self.matcher.is_match(path) || self.whole.as_deref() == Some(path)
    }

    /// Whether the pattern denies `path`: it matches it or a directory above it.
    pub(super) fn covers(&self, path: &Path) -> bool {
        path.ancestors().any(|ancestor| self.matches(ancestor))
    }

    /// Adds what the pattern matches now to `out`: what the last search found while every directory it listed is
    /// unchanged (a search of 10,000 files cost 10 ms a command), else a new search.
    pub(super) fn expand_into(&self, out: &mut Vec<PathBuf>) {
        let mut last = self.last.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(search) = last.as_ref().filter(|search| search.listed.iter().all(Seen::unchanged)) {
            out.extend(search.found.iter().cloned());
            return;
        }
        let started = SystemTime::now();
        let mut listed = Vec::new();
        let mut found = Vec::new();
        let complete = self.search(&mut found, &mut listed);
        out.extend(found.iter().cloned());
        let settled = listed.iter().all(|dir| dir.as_ref().is_some_and(|dir| dir.settled_before(started)));
        *last = (complete && settled).then(|| Search { listed: listed.into_iter().flatten().collect(), found });
    }

    /// Searches breadth first below the base, adding matches to `found` and each directory listed to `listed`.
    /// What it did not finish (out of [`MAX_ENTRIES`], or a directory it could not list) is added to `found`
    /// whole (fail closed: a match may lie there), and the search is not complete. It doesn't enter
    /// directories [`is_generated`] leaves out (nor deny them).
    fn search(&self, found: &mut Vec<PathBuf>, listed: &mut Vec<Option<Seen>>) -> bool {
        if self.matches(&self.base) {
            found.push(self.base.clone());
            return links_inside(&self.base, found, listed, MAX_ENTRIES);
        }
        let mut matched_dirs = Vec::new();
        let visit = |entry: &std::fs::DirEntry| {
            let path = entry.path();
            let is_dir = entry.file_type().is_ok_and(|kind| kind.is_dir());
            if self.matches(&path) {
                if is_dir {
                    matched_dirs.push(path.clone());
                }
                found.push(path);
                Visit::Pass
            } else if is_dir && !is_generated(&path) {
                Visit::Enter
            } else {
                Visit::Pass
            }
        };
        let mut budget = MAX_ENTRIES;
        let complete = match breadth_first(&self.base, &mut budget, |dir| listed.push(Seen::now(dir)), visit) {
            Walked::Done => true,
            Walked::Unfinished(unfinished) => {
                found.extend(unfinished);
                false
            }
        };
        // A directory the pattern matches is denied whole: where the links in it lead is denied too.
        matched_dirs.iter().fold(complete, |complete, dir| links_inside(dir, found, listed, MAX_ENTRIES) && complete)
    }
}

/// The links below a directory denied whole (`Read(conf/**)`, or one a pattern matches), added to `found`: denying the directory does not
/// deny where a link in it leads (`conf/k -> ../private/k2`), and Landlock judges the file a path reaches; each
/// link found is followed to its target like a link the rule named. `false` when the walk did not finish (the
/// links beyond it are not found; the directory itself is denied all the same).
pub(crate) fn links_inside(
    dir: &Path,
    found: &mut Vec<PathBuf>,
    listed: &mut Vec<Option<Seen>>,
    mut budget: usize,
) -> bool {
    // A link to a directory is entered too, under its name here (`locked/sub -> ../open/sub`: the links in `open/sub`
    // are reached as `locked/sub/…`), each real directory once (a link back up would loop).
    let mut entered: std::collections::HashSet<PathBuf> = std::fs::canonicalize(dir).into_iter().collect();
    let visit = |entry: &std::fs::DirEntry| match entry.file_type() {
        Ok(kind) if kind.is_symlink() => {
            let path = entry.path();
            let into = std::fs::canonicalize(&path).ok().filter(|real| real.is_dir() && entered.insert(real.clone()));
            found.push(path);
            if into.is_some() { Visit::Enter } else { Visit::Pass }
        }
        Ok(kind) if kind.is_dir() => Visit::Enter,
        _ => Visit::Pass,
    };
    matches!(breadth_first(dir, &mut budget, |dir| listed.push(Seen::now(dir)), visit), Walked::Done)
}

/// A glob's literal beginning (its components before the first with a wildcard) and the rest.
pub fn split_literal(glob: &Path) -> (PathBuf, PathBuf) {
    let literal = glob.components().take_while(|component| !is_wildcard(component)).collect();
    let rest = glob.components().skip_while(|component| !is_wildcard(component)).collect();
    (literal, rest)
}

/// Whether a path holds a wildcard (a pattern), or is a plain path.
pub fn is_pattern(path: &Path) -> bool {
    path.components().any(|component| is_wildcard(&component))
}

fn is_wildcard(component: &Component<'_>) -> bool {
    matches!(component, Component::Normal(name) if name.to_str().is_some_and(|name| name.contains(['*', '?', '[', '{'])))
}

/// Whether the search leaves `dir` out: a repository's own data (a `.git` with a `HEAD`), what package managers
/// put in the workspace (`node_modules`) and a build's output that says so (a `target` with Cargo's
/// `CACHEDIR.TAG` or `.rustc_info.json`) — often most of the workspace's entries, and nobody's own files. A
/// directory that only has such a name (`deploy/target/.env`) is searched like any other.
fn is_generated(dir: &Path) -> bool {
    match dir.file_name().and_then(|name| name.to_str()) {
        Some("node_modules") => true,
        Some(".git") => dir.join("HEAD").is_file(),
        Some("target") => ["CACHEDIR.TAG", ".rustc_info.json"].iter().any(|tag| dir.join(tag).is_file()),
        _ => false,
    }
}

/// The paths `globs` match now, added to the named `paths`.
pub(super) fn with_matches(paths: &[PathBuf], globs: &[PathGlob]) -> Vec<PathBuf> {
    let mut out = paths.to_vec();
    for glob in globs {
        glob.expand_into(&mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_what_a_pattern_matches_below_its_literal_part() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        for file in ["a/.env", "a/b/c/.env", ".env.prod", "keep.txt", "secrets/k/x.pem"] {
            let path = root.join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "x").unwrap();
        }
        let found = |pattern: PathBuf| {
            let glob = PathGlob::new(&pattern).unwrap();
            let mut out = Vec::new();
            glob.expand_into(&mut out);
            out.sort();
            out
        };
        assert_eq!(found(root.join("**/.env")), vec![root.join("a/.env"), root.join("a/b/c/.env")]);
        assert_eq!(found(root.join(".env.*")), vec![root.join(".env.prod")]);
        assert_eq!(found(root.join("secrets/**")), vec![root.join("secrets")]);
        assert!(!is_pattern(&root.join("keep.txt")) && is_pattern(&root.join("**/.env")));
        assert!(PathGlob::new(Path::new("relative/*")).is_none());
    }

    /// Round 51: `Read(conf/**)` denied the directory `conf`, but not where the links in it lead
    /// (`conf/k -> ../private/k2`): a command and the Read tool read `private/k2`. The search of a directory a rule
    /// names whole finds the links inside it, which are then followed like a link the rule named.
    #[test]
    fn a_directory_denied_whole_gives_its_links_too() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(root.join("conf/deep")).unwrap();
        std::fs::create_dir_all(root.join("private")).unwrap();
        std::fs::write(root.join("private/k2"), "x").unwrap();
        std::fs::write(root.join("conf/plain"), "x").unwrap();
        std::os::unix::fs::symlink("../private/k2", root.join("conf/k")).unwrap();
        std::os::unix::fs::symlink("../../private", root.join("conf/deep/inner")).unwrap();
        let glob = PathGlob::new(&root.join("conf/**")).unwrap();
        let mut found = Vec::new();
        glob.expand_into(&mut found);
        found.sort();
        assert_eq!(found, vec![root.join("conf"), root.join("conf/deep/inner"), root.join("conf/k")]);
        // A directory a pattern matches on the way (`conf/*` and `conf/deep`) gives its links too.
        let glob = PathGlob::new(&root.join("conf/*")).unwrap();
        let mut found = Vec::new();
        glob.expand_into(&mut found);
        found.sort();
        let expected = ["conf/deep", "conf/deep/inner", "conf/k", "conf/plain"].map(|name| root.join(name));
        assert_eq!(found, expected);
        // A link to a directory is entered under its own name, once (`conf/deep/inner -> ../../private`).
        std::os::unix::fs::symlink("../k2", root.join("private/back")).unwrap();
        std::os::unix::fs::symlink("..", root.join("private/up")).unwrap();
        let glob = PathGlob::new(&root.join("conf/**")).unwrap();
        let mut found = Vec::new();
        glob.expand_into(&mut found);
        assert!(found.contains(&root.join("conf/deep/inner/back")), "{found:?}");
    }

    /// Found by the 48th red-team round: `grep -r SECRET .` (read-only, sandboxed) printed `deploy/target/.env`
    /// past `Read(.env)`: the search never entered a directory named `target`, at any depth. Only a build's
    /// own `target` (tagged as such), a repository's `.git` and `node_modules` are left out now.
    #[test]
    fn only_generated_directories_are_left_out_of_the_search() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        for file in [
            "deploy/target/.env",
            "src/.git/.env",
            "target/.env",
            "target/CACHEDIR.TAG",
            ".git/HEAD",
            ".git/.env",
            "node_modules/p/.env",
        ] {
            let path = root.join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "x").unwrap();
        }
        let glob = PathGlob::new(&root.join("**/.env")).unwrap();
        let mut found = Vec::new();
        glob.expand_into(&mut found);
        found.sort();
        assert_eq!(found, vec![root.join("deploy/target/.env"), root.join("src/.git/.env")]);
    }

    #[test]
    fn a_search_is_kept_until_a_directory_it_listed_changes() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::write(root.join("a/.env"), "x").unwrap();
        let an_hour_ago = SystemTime::now() - std::time::Duration::from_secs(3600);
        for listed in [root.clone(), root.join("a"), root.join("a/b")] {
            std::fs::File::open(listed).unwrap().set_modified(an_hour_ago).unwrap();
        }
        let glob = PathGlob::new(&root.join("**/.env")).unwrap();
        let found = || {
            let mut out = Vec::new();
            glob.expand_into(&mut out);
            out
        };
        assert_eq!(found(), vec![root.join("a/.env")]);
        assert!(glob.last.lock().unwrap().is_some(), "kept");
        std::fs::write(root.join("a/b/.env"), "x").unwrap();
        let mut now = found();
        now.sort();
        assert_eq!(now, vec![root.join("a/.env"), root.join("a/b/.env")], "a new match is found");
    }

    /// Found by the thirty-seventh red-team round: a build made 50,001 files, the search gave up before it reached
    /// `sub/.env`, and `sub` was granted whole. What the search could not finish is denied.
    #[test]
    fn what_the_search_could_not_finish_is_denied() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(root.join("a-gen")).unwrap();
        for i in 0..MAX_ENTRIES {
            std::fs::write(root.join("a-gen").join(i.to_string()), "").unwrap();
        }
        std::fs::create_dir_all(root.join("sub/x")).unwrap();
        std::fs::write(root.join("sub/x/.env"), "x").unwrap();
        let glob = PathGlob::new(&root.join("**/.env")).unwrap();
        let mut out = Vec::new();
        glob.expand_into(&mut out);
        assert!(out.iter().any(|path| root.join("sub/x/.env").starts_with(path)), "{out:?}");
    }
}
