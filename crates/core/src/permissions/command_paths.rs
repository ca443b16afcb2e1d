//! The file-system side of judging a command: expanding an operand's glob as bash will, and working out where
//! `cp`/`mv` put what they copy, including everything inside a directory they copy or move.

use std::path::{Path, PathBuf};

use super::paths::Workspace;
use crate::shell::spec::{PathArg, Transfer};

/// Entries of a copied or moved directory looked at, at most; a bigger tree asks.
const MAX_TREE_ENTRIES: usize = 20_000;
/// Names a glob may expand to, at most.
const MAX_GLOB_MATCHES: usize = 10_000;

/// The paths an operand names: itself, or the names its glob matches (bash's default: `*` and `?` don't match a
/// leading `.`, no match leaves the pattern as it is). Only the last component may hold glob characters; a match
/// that starts with `-` would be read as an option, so it is refused too.
pub(super) fn expand(workspace: &Workspace, arg: &PathArg) -> Result<Vec<String>, String> {
    if !arg.glob {
        return Ok(vec![arg.text.clone()]);
    }
    let (dir, pattern) = match arg.text.rsplit_once('/') {
        Some((dir, pattern)) => (if dir.is_empty() { "/".to_owned() } else { dir.to_owned() }, pattern),
        None => (".".to_owned(), arg.text.as_str()),
    };
    if crate::shell::spec::has_glob_chars(&dir) || pattern.is_empty() {
        return Err(format!("`{}` is a glob across directories, which tandem doesn't expand", arg.text));
    }
    // Only `*` and `?`: there bash and the matcher agree exactly. Bracket expressions (`[^a]`, `[[:alpha:]]`)
    // and escapes are read differently by different matchers, and a name bash matches but tandem doesn't would
    // go unjudged.
    if pattern.contains(['[', ']', '\\']) {
        return Err(format!("`{}` has a bracket expression or an escape, which tandem doesn't expand", arg.text));
    }
    let matcher = globset::GlobBuilder::new(pattern)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .map_err(|_| format!("`{}` is a glob pattern tandem can't read", arg.text))?
        .compile_matcher();
    let listed = workspace.resolve_strict(&dir).ok_or_else(|| format!("`{dir}` can't be resolved for sure"))?;
    let Ok(entries) = std::fs::read_dir(&listed) else { return Ok(vec![arg.text.clone()]) };
    let mut matches = Vec::new();
    // Older bash matches `.*` against `.` and `..` too: judged as if it did.
    let dots = [".", ".."].into_iter().filter(|_| pattern.starts_with('.')).map(str::to_owned);
    for name in entries.flatten().map(|entry| entry.file_name().to_string_lossy().into_owned()).chain(dots) {
        if name.starts_with('.') && !pattern.starts_with('.') {
            continue;
        }
        // A name with non-ASCII bytes is judged as if it matched: bash's `?` matches a byte or a character
        // depending on the locale, and a name that isn't UTF-8 was changed by the lossy conversion above.
        if matcher.is_match(&name) || !name.is_ascii() {
            if name.starts_with('-') {
                return Err(format!("`{}` matches `{name}`, which the program would read as an option", arg.text));
            }
            matches.push(if dir == "." { name } else { format!("{}/{name}", dir.trim_end_matches('/')) });
            if matches.len() > MAX_GLOB_MATCHES {
                return Err(format!("`{}` matches too many names", arg.text));
            }
        }
    }
    if matches.is_empty() { Ok(vec![arg.text.clone()]) } else { Ok(matches) }
}

/// Every path a `cp`/`mv` creates or replaces (the target of each source, and for a directory source the target
/// of each entry inside it), absolute; and the sources themselves as written.
pub(super) fn transfer_targets(
    workspace: &Workspace,
    transfer: &Transfer,
    sources: &[String],
) -> Result<Vec<PathBuf>, String> {
    let dest = workspace.absolute(&transfer.dest);
    let dest_is_dir = match transfer.into_dir {
        Some(into) => into,
        None => sources.len() > 1 || workspace.resolve_strict(&transfer.dest).is_some_and(|path| path.is_dir()),
    };
    let mut targets: Vec<PathBuf> = Vec::new();
    for source in sources {
        let before = targets.len();
        let target = if dest_is_dir {
            match last_name(source) {
                Some(name) => dest.join(name),
                // `cp -r dir/. dest`: the contents land in `dest` itself.
                None => dest.clone(),
            }
        } else {
            dest.clone()
        };
        // A link recreated elsewhere points elsewhere (`../x` from another directory), and one copied into the
        // tree is a way out of it for the next command: copying or moving links asks.
        if transfer.keeps_links && std::fs::symlink_metadata(workspace.absolute(source)).is_ok_and(|m| m.is_symlink()) {
            return Err(format!("`{source}` is a symbolic link, which would be recreated where it points elsewhere"));
        }
        let source_path =
            workspace.resolve_strict(source).ok_or_else(|| format!("`{source}` can't be resolved for sure"))?;
        let source_is_dir = std::fs::symlink_metadata(&source_path).is_ok_and(|meta| meta.is_dir());
        let mut mine = Vec::new();
        if source_is_dir {
            let mut count = 0;
            walk_tree(&source_path, &target, &mut mine, &mut count)?;
        }
        mine.push(target);
        // Two sources landing on the same path: the second is written through what the first put there (a
        // symlink, say).
        if let Some(clash) = mine.iter().find(|path| targets[..before].contains(path)) {
            return Err(format!("two sources are copied onto {}", clash.display()));
        }
        targets.extend(mine);
    }
    Ok(targets)
}

/// The last component of a path as written, or `None` for `.`/`..` (whose contents go to the destination).
fn last_name(source: &str) -> Option<String> {
    let trimmed = source.trim_end_matches('/');
    let name = trimmed.rsplit('/').next().unwrap_or(trimmed);
    (!matches!(name, "" | "." | "..")).then(|| name.to_owned())
}

fn walk_tree(source: &Path, target: &Path, out: &mut Vec<PathBuf>, count: &mut usize) -> Result<(), String> {
    let entries = std::fs::read_dir(source).map_err(|_| format!("{} can't be listed", source.display()))?;
    for entry in entries.flatten() {
        *count += 1;
        if *count > MAX_TREE_ENTRIES {
            return Err(format!("{} holds too many entries to check", source.display()));
        }
        let into = target.join(entry.file_name());
        if entry.file_type().is_ok_and(|kind| kind.is_symlink()) {
            return Err(format!("{} is a symbolic link, which would be recreated elsewhere", entry.path().display()));
        }
        if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
            walk_tree(&entry.path(), &into, out, count)?;
        }
        out.push(into);
    }
    Ok(())
}
