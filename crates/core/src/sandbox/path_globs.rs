//! Denied paths given as patterns (`Read(.env)` at any depth, `Read(./.env.*)`, `Edit(**/*.pem)`): Landlock grants
//! paths, not patterns, so before each command the file system is searched for what they match, below the
//! pattern's literal part, and what is found is denied like a path named outright. Without this a build a rule
//! allows could `cat` every `.env` that a deny rule, which the analyser applies to the command line alone, names.
//!
//! The search is bounded ([`MAX_ENTRIES`] per pattern): beyond it, matches are not found (the analyser still
//! judges every command line against the rule). It doesn't follow links (a link's target is denied where it is, if
//! it matches there) and doesn't descend into what it found (denied whole).

use std::path::{Component, Path, PathBuf};

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
}

impl PathGlob {
    /// `None` for a pattern that is not absolute or not a valid glob.
    pub fn new(pattern: &Path) -> Option<PathGlob> {
        let text = pattern.to_str()?.to_owned();
        if !pattern.is_absolute() {
            return None;
        }
        let matcher = globset::GlobBuilder::new(&text).literal_separator(true).build().ok()?.compile_matcher();
        let mut base = PathBuf::new();
        for component in pattern.components() {
            match component {
                Component::Normal(name) if name.to_str().is_some_and(|name| name.contains(['*', '?', '[', '{'])) => {
                    break;
                }
                other => base.push(other),
            }
        }
        let whole = text.strip_suffix("/**").map(PathBuf::from);
        Some(PathGlob { base, matcher, whole, pattern: text })
    }

    /// Whether the pattern has a wildcard at all (a literal one is a plain path).
    pub fn has_wildcard(&self) -> bool {
        self.base.as_os_str().len() < self.pattern.len()
    }

    /// The pattern as written, resolved.
    pub fn pattern(&self) -> &str {
        &self.pattern
    }

    fn matches(&self, path: &Path) -> bool {
        self.matcher.is_match(path) || self.whole.as_deref() == Some(path)
    }

    /// Adds what the pattern matches now to `out`, searching breadth first below its base.
    pub(super) fn expand_into(&self, out: &mut Vec<PathBuf>) {
        let mut budget = MAX_ENTRIES;
        let mut level = vec![self.base.clone()];
        if self.matches(&self.base) {
            out.push(self.base.clone());
            return;
        }
        while !level.is_empty() {
            let mut next = Vec::new();
            for dir in &level {
                let Ok(entries) = std::fs::read_dir(dir) else { continue };
                for entry in entries.flatten() {
                    let Some(left) = budget.checked_sub(1) else { return };
                    budget = left;
                    let path = entry.path();
                    if self.matches(&path) {
                        out.push(path);
                    } else if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
                        next.push(path);
                    }
                }
            }
            level = next;
        }
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
        assert!(PathGlob::new(&root.join("keep.txt")).is_some_and(|glob| !glob.has_wildcard()));
        assert!(PathGlob::new(Path::new("relative/*")).is_none());
    }
}
