//! `@path` imports in guideline files, as Claude Code follows them: `@docs/style.md` or `@~/notes.md` on its own
//! token (not in code, not part of an e-mail address) pulls that file in, relative to the importing file, up to
//! [`MAX_DEPTH`] levels deep; a file already included is not included again (so cycles end).
//!
//! A project's file came with the repository: its imports are followed only inside the project (an import of
//! `~/.ssh/id_rsa` would send the key to the model). The user's own files may import from anywhere.

use std::path::{Path, PathBuf};

/// How deep imports are followed (Claude Code's limit).
pub const MAX_DEPTH: usize = 5;

/// The import targets of `text`, in order, as written (`docs/a.md`, `~/x.md`).
pub fn targets(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut in_fence = false;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence || line.starts_with("    ") || line.starts_with('\t') {
            continue;
        }
        let mut in_code = false;
        let mut previous = ' ';
        let chars: Vec<(usize, char)> = line.char_indices().collect();
        for (index, &(at, ch)) in chars.iter().enumerate() {
            if ch == '`' {
                in_code = !in_code;
            } else if ch == '@' && !in_code && (previous.is_whitespace() || index == 0) {
                let rest = &line[at + 1..];
                let end =
                    rest.find(|c: char| c.is_whitespace() || c == '`' || c == ')' || c == ',').unwrap_or(rest.len());
                let target = rest[..end].trim_end_matches(['.', ';', ':']);
                if looks_like_path(target) {
                    found.push(target.to_owned());
                }
            }
            previous = ch;
        }
    }
    found
}

/// A mention of a person (`@alice`) is not an import: a path has a `/`, or a file extension.
fn looks_like_path(target: &str) -> bool {
    !target.is_empty()
        && (target.contains('/')
            || target.rsplit_once('.').is_some_and(|(stem, ext)| !stem.is_empty() && !ext.is_empty()))
}

/// Where an import points: `~/x` in the home directory, an absolute path as is, else next to `importer`.
pub fn resolve(target: &str, importer: &Path, home: Option<&Path>) -> Option<PathBuf> {
    let path = if target == "~" {
        return None;
    } else if let Some(rest) = target.strip_prefix("~/") {
        home?.join(rest)
    } else if target.starts_with('/') {
        PathBuf::from(target)
    } else {
        importer.parent()?.join(target)
    };
    Some(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn imports_are_whole_tokens_outside_code() {
        let text = "See @docs/style.md and @~/notes.md.\nMail me@example.com, ping @alice\n`@not/this.md`\n```\n@nor/this.md\n```\n@README.md";
        assert_eq!(targets(text), ["docs/style.md", "~/notes.md", "README.md"]);
    }

    #[test]
    fn targets_resolve_next_to_the_importer_or_home() {
        let home = Path::new("/home/u");
        assert_eq!(resolve("a/b.md", Path::new("/repo/CLAUDE.md"), Some(home)), Some(PathBuf::from("/repo/a/b.md")));
        assert_eq!(resolve("~/x.md", Path::new("/repo/CLAUDE.md"), Some(home)), Some(PathBuf::from("/home/u/x.md")));
        assert_eq!(resolve("~/x.md", Path::new("/repo/CLAUDE.md"), None), None);
    }
}
