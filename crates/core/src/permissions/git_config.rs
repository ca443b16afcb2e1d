//! Whether a repository's configuration can make a "read-only" git command run a program.
//!
//! `git status`, `git diff` and `git log` only read — unless the repository's own configuration says otherwise:
//! `core.fsmonitor` runs a program on every status, `diff.*.textconv` and `diff.external` run on every diff, a
//! pager, filters, signature programs. A repository unpacked from an archive brings its `.git/config` along, so
//! those commands run unasked only when that configuration (with its worktree and submodule parts) names none
//! of these. Includes are not followed: a configuration with one asks.

use std::path::{Path, PathBuf};

/// Submodule configurations looked at, at most.
const MAX_CONFIG_FILES: usize = 64;

/// `Ok` with the repository's work tree when git in `cwd` reads a repository whose configuration runs nothing;
/// otherwise why not. Every repository git enters counts: this one and each submodule its index names, as deep
/// as they nest and wherever a submodule's `.git` file points.
pub(super) fn check(cwd: &Path) -> Result<PathBuf, String> {
    let (git_dir, worktree) =
        find_git_dir(cwd).ok_or("there is no git repository here (outside one, git diff reads any files)")?;
    stays_in(&git_dir, &worktree)?;
    // A linked worktree's repository lies outside it (`stays_in` checked that it is its own): its submodules'
    // repositories are in it.
    let own = normalized(&git_dir);
    let mut repositories = Vec::new();
    entered(git_dir, worktree.clone(), &mut repositories)?;
    if repositories.len() > MAX_CONFIG_FILES {
        return Err("the repository has too many submodules to check".into());
    }
    for (git_dir, work_tree) in &repositories {
        if !inside(git_dir, &worktree) && !inside(git_dir, &own) {
            return Err(format!("the submodule repository {} is outside the workspace", git_dir.display()));
        }
        check_one(git_dir, work_tree)?;
    }
    Ok(worktree)
}

/// Whether the repository of `worktree` keeps to it: its git directory, common directory and object stores
/// inside the work tree — else a "reading" git command there reads another project's history and files (a
/// `.git` file saying `gitdir: ../other/.git`, a `commondir` or `alternates` naming one). A linked worktree's
/// git directory lies in its main repository, outside: it counts when it names this work tree back (its
/// `gitdir` file), and its common directory is then that repository's.
fn stays_in(git_dir: &Path, worktree: &Path) -> Result<(), String> {
    let outside = |what: &str, path: &Path| Err(format!("the repository's {what} {} is outside it", path.display()));
    let linked = !inside(git_dir, worktree) && names_back(git_dir, worktree);
    if !inside(git_dir, worktree) && !linked {
        return outside("git directory", git_dir);
    }
    let mut stores = vec![git_dir.join("objects")];
    if let Ok(common) = read_text(git_dir.join("commondir")) {
        let common = normalized(&git_dir.join(common.trim()));
        let own_main = linked && git_dir.parent().and_then(Path::parent).map(normalized) == Some(common.clone());
        if !inside(&common, worktree) && !own_main {
            return outside("common directory", &common);
        }
        stores.push(common.join("objects"));
    }
    for objects in stores {
        let alternates = objects.join("info/alternates");
        if alternates.symlink_metadata().is_ok() {
            return Err(format!("the repository reads objects from elsewhere ({})", alternates.display()));
        }
    }
    Ok(())
}

/// Entries looked at, at most, in a repository directory for links; a bigger one asks.
const MAX_REPOSITORY_ENTRIES: usize = 200_000;

/// Whether the repository directory holds only files and directories: git reads what a link in it leads to
/// (`info/grafts`, `packed-refs`), and quotes what it can't parse in its errors — a link to a file outside the
/// workspace printed it. A named pipe would block git. Hook directories are left out.
fn no_links_in(git_dir: &Path) -> Result<(), String> {
    let mut budget = MAX_REPOSITORY_ENTRIES;
    let mut dirs = vec![git_dir.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            if budget == 0 {
                return Err("the repository is too big to check for links".into());
            }
            budget -= 1;
            match entry.file_type() {
                // Hooks are run, not read (the one a reading command runs is looked at on its own), and a linked
                // hook (`pre-commit -> ../../scripts/hook`) is common.
                Ok(kind) if kind.is_dir() && entry.file_name() == "hooks" => {}
                Ok(kind) if kind.is_dir() => dirs.push(entry.path()),
                Ok(kind) if kind.is_file() => {}
                _ => return Err(format!("the repository has a link or special file at {}", entry.path().display())),
            }
        }
    }
    Ok(())
}

/// Whether a linked worktree's git directory names `worktree` back (`gitdir` holds the work tree's `.git` file).
fn names_back(git_dir: &Path, worktree: &Path) -> bool {
    read_text(git_dir.join("gitdir")).is_ok_and(|text| normalized(Path::new(text.trim())) == worktree.join(".git"))
}

/// `path` lexically normalized and, where it exists, resolved (links followed), as git would reach it.
fn normalized(path: &Path) -> PathBuf {
    path.canonicalize().unwrap_or_else(|_| crate::fs_util::normalize(path))
}

fn inside(path: &Path, dir: &Path) -> bool {
    normalized(path).starts_with(normalized(dir))
}

/// Adds the repository (`git_dir`, checked out at `work_tree`) and, recursively, every submodule git enters from
/// it to `out`; stops adding past [`MAX_CONFIG_FILES`].
fn entered(git_dir: PathBuf, work_tree: PathBuf, out: &mut Vec<(PathBuf, PathBuf)>) -> Result<(), String> {
    if out.len() > MAX_CONFIG_FILES || out.iter().any(|(known, _)| *known == git_dir) {
        return Ok(());
    }
    let submodules = crate::sandbox::submodules_of(&git_dir, &work_tree);
    out.push((git_dir, work_tree));
    for submodule in submodules {
        if let Some((git_dir, work_tree)) = repository_at(&submodule)? {
            entered(git_dir, work_tree, out)?;
        }
    }
    Ok(())
}

/// The repository of a work tree whose `.git` is a directory, or a file naming one (`gitdir: …`); `None` when it
/// has no `.git`. Anything else there (a link, which git follows, to a repository elsewhere in the tree; a file
/// that is no `gitdir:`) is not skipped but refused: skipped, a submodule whose `.git` linked to a repository
/// with a planted `core.fsmonitor` was entered by `git status` unchecked.
fn repository_at(work_tree: &Path) -> Result<Option<(PathBuf, PathBuf)>, String> {
    let dot_git = work_tree.join(".git");
    let Ok(meta) = std::fs::symlink_metadata(&dot_git) else { return Ok(None) };
    if meta.is_dir() {
        return Ok(Some((dot_git, work_tree.to_path_buf())));
    }
    match crate::sandbox::pointed_git_dir(&dot_git).filter(|_| meta.is_file()) {
        Some(git_dir) => Ok(Some((git_dir, work_tree.to_path_buf()))),
        None => Err(format!("the submodule's {} is a link or a file that names no repository", dot_git.display())),
    }
}

/// Whether one repository's configuration (with its worktree, common-dir and absorbed submodules' parts) and
/// hooks run nothing a reading git command would start.
fn check_one(git_dir: &Path, worktree: &Path) -> Result<(), String> {
    no_links_in(git_dir)?;
    let mut files = vec![git_dir.join("config"), git_dir.join("config.worktree")];
    if let Ok(common) = read_text(git_dir.join("commondir")) {
        let common = git_dir.join(common.trim());
        no_links_in(&common)?;
        files.push(common.join("config"));
        files.push(common.join("config.worktree"));
        collect_module_configs(&common.join("modules"), &mut files);
    }
    collect_module_configs(&git_dir.join("modules"), &mut files);
    if files.len() > MAX_CONFIG_FILES {
        return Err("the repository has too many submodule configurations to check".into());
    }
    // The one hook a reading command can run: `git status` writing the index runs `post-index-change`.
    let mut dirs = hook_dirs(git_dir);
    for file in &files {
        if let Ok(text) = read_text(file) {
            for dir in hooks_paths(&text) {
                if dir.is_empty() || dir.starts_with('~') || dir.contains(['$', '"', '\\', ';', '#']) {
                    return Err(format!("the repository's core.hooksPath `{dir}` isn't followed"));
                }
                // Relative to the work tree (as git reads it), which is not the git dir's parent in a worktree.
                dirs.push(worktree.join(dir));
            }
        }
    }
    for dir in dirs {
        let hook = dir.join("post-index-change");
        if hook.symlink_metadata().is_ok() {
            return Err(format!("the repository has the hook {}, which git status runs", hook.display()));
        }
    }
    for file in files {
        match read_text(&file) {
            Ok(text) => {
                if let Some(key) = first_program_key(&text) {
                    return Err(format!(
                        "the repository's configuration sets `{key}` ({}), which runs a program",
                        file.display()
                    ));
                }
            }
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
            Err(_) => return Err(format!("{} could not be read", file.display())),
        }
    }
    Ok(())
}

/// Whether git in `cwd` finds a repository at all (outside one, git runs nothing of a repository's).
pub(super) fn in_repository(cwd: &Path) -> bool {
    find_git_dir(cwd).is_some()
}

/// The repository directory git would use from `cwd`, found as git finds it: at each level up, a `.git`
/// directory, the directory a `.git` file points to, or the directory itself when it looks like a repository
/// (`HEAD`, `objects/`, `refs/`: a bare one, which files in the workspace could imitate).
pub(super) fn find_git_dir(cwd: &Path) -> Option<(PathBuf, PathBuf)> {
    for dir in cwd.ancestors() {
        let dot_git = dir.join(".git");
        if let Ok(meta) = std::fs::metadata(&dot_git) {
            if meta.is_dir() {
                return Some((dot_git, dir.to_path_buf()));
            }
            return repository_at(dir).ok().flatten();
        }
        // git accepts `objects` and `refs` of any kind it can enter, or a `commondir` that has them: anything
        // close to that counts.
        let head = dir.join("HEAD").symlink_metadata().is_ok();
        let parts = ["objects", "refs", "commondir"].iter().any(|name| dir.join(name).symlink_metadata().is_ok());
        if head && parts {
            return Some((dir.to_path_buf(), dir.to_path_buf()));
        }
    }
    None
}

/// The hook directories of the repository and its submodules (`git status` writing the index runs
/// `post-index-change`).
fn hook_dirs(git_dir: &Path) -> Vec<PathBuf> {
    let mut configs = Vec::new();
    collect_module_configs(&git_dir.join("modules"), &mut configs);
    let mut dirs = vec![git_dir.join("hooks")];
    dirs.extend(configs.iter().filter_map(|config| config.parent().map(|dir| dir.join("hooks"))));
    if let Ok(common) = read_text(git_dir.join("commondir")) {
        dirs.push(git_dir.join(common.trim()).join("hooks"));
    }
    dirs
}

fn collect_module_configs(dir: &Path, files: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        if files.len() > MAX_CONFIG_FILES {
            return;
        }
        let path = entry.path();
        if path.is_dir() {
            files.push(path.join("config"));
            collect_module_configs(&path.join("modules"), files);
            collect_module_configs(&path, files);
        }
    }
}

/// The first `section.key` in a git configuration text that names a program to run (or an include, which
/// isn't followed), or a line that can't be read with certainty (which counts as one).
fn first_program_key(text: &str) -> Option<String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut section = String::new();
    let mut subsection = false;
    for raw in text.lines() {
        let mut line = raw.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if line.starts_with('[') {
            let Some((name, sub, rest)) = section_header(line) else {
                return Some(format!("an unreadable line `{line}`"));
            };
            section = name;
            subsection = sub;
            line = rest.trim();
            if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
                continue;
            }
        }
        let key_end = line.find(|c: char| c == '=' || c.is_whitespace()).unwrap_or(line.len());
        let key = line[..key_end].to_lowercase();
        let plain_key = key.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
            && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
        if !plain_key || section.is_empty() {
            return Some(format!("an unreadable line `{line}`"));
        }
        if line.ends_with('\\') {
            return Some(format!("{section}.{key} (continued on the next line)"));
        }
        let runs = match section.as_str() {
            "include" | "includeif" | "pager" | "filter" | "difftool" | "mergetool" | "alias" => true,
            "core" => matches!(
                key.as_str(),
                "fsmonitor"
                    | "pager"
                    | "editor"
                    | "sshcommand"
                    | "askpass"
                    | "attributesfile"
                    | "worktree"
                    | "gitproxy"
                    | "excludesfile"
            ),
            "diff" => {
                matches!(key.as_str(), "external" | "orderfile")
                    || (subsection && matches!(key.as_str(), "command" | "textconv"))
            }
            // Every signature setting: `gpg.format = ssh` with `gpg.ssh.allowedSignersFile` makes `git log` run
            // ssh-keygen on a file the repository names, anywhere.
            "gpg" => true,
            // A default format may show signatures (`%G?`), which checks them.
            "format" => key == "pretty",
            "pretty" => true,
            "merge" => subsection && key == "driver",
            "credential" => key == "helper",
            "status" | "log" => key == "showsignature",
            // A partial clone fetches missing objects on demand (`git show <id>`), running the remote's programs.
            "extensions" => key == "partialclone",
            "remote" => {
                matches!(key.as_str(), "promisor" | "uploadpack" | "receivepack" | "vcs")
                    || (key == "url" && line.contains("ext::"))
            }
            "protocol" => true,
            "url" => true,
            // Name a file git reads (anywhere, outside the workspace too) and shows back, in errors or as authors.
            "blame" => key == "ignorerevsfile",
            "mailmap" => true,
            _ => false,
        };
        if runs {
            return Some(format!("{section}.{key}"));
        }
    }
    None
}

/// The values of `core.hooksPath` in a configuration text (already known to be readable).
fn hooks_paths(text: &str) -> Vec<String> {
    let mut section = String::new();
    let mut out = Vec::new();
    for line in text.strip_prefix('\u{feff}').unwrap_or(text).lines().map(str::trim) {
        let line = match section_header(line) {
            Some((name, _, rest)) => {
                section = name;
                rest.trim()
            }
            None => line,
        };
        if let Some((key, value)) = line.split_once('=')
            && section == "core"
            && key.trim().eq_ignore_ascii_case("hookspath")
        {
            out.push(value.trim().trim_matches('"').to_owned());
        }
    }
    out
}

/// `[name]`, `[name "sub"]` or `[name.sub]` at the start of `line`: the lowercased name, whether there is a
/// subsection, and what follows the header. `None` when it isn't one of those exactly.
fn section_header(line: &str) -> Option<(String, bool, &str)> {
    let rest = line.strip_prefix('[')?;
    let name_end = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '.'))?;
    let (name, after) = rest.split_at(name_end);
    if name.is_empty() {
        return None;
    }
    let (sub, after) =
        if let Some(quoted) = after.strip_prefix(' ').map(str::trim_start).and_then(|a| a.strip_prefix('"')) {
            let mut chars = quoted.char_indices();
            let mut end = None;
            while let Some((i, c)) = chars.next() {
                match c {
                    '\\' => {
                        chars.next();
                    }
                    '"' => {
                        end = Some(i);
                        break;
                    }
                    _ => {}
                }
            }
            (true, &quoted[end? + 1..])
        } else {
            (name.contains('.'), after)
        };
    let after = after.strip_prefix(']')?;
    if after.trim_start().starts_with('[') {
        return None;
    }
    let name = name.split('.').next().unwrap_or(name).to_lowercase();
    Some((name, sub, after))
}

/// A configuration file's text, never waiting on a named pipe or reading a device put in its place (an error
/// instead, so the command asks).
fn read_text(path: impl AsRef<Path>) -> std::io::Result<String> {
    let bytes = crate::sandbox::read_regular_file(path.as_ref(), 1 << 20, true)?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs git in `dir` with an identity; whether it worked (no git here: the test has nothing to check).
    fn git(dir: &Path, args: &[&str]) -> bool {
        std::process::Command::new("git")
            .current_dir(dir)
            .args(["-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"])
            .args(args)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .output()
            .is_ok_and(|output| output.status.success())
    }

    /// A repository in `dir` with one commit.
    fn repository(dir: &Path) -> bool {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join("f"), "x\n").unwrap();
        git(dir, &["init", "-q"]) && git(dir, &["add", "f"]) && git(dir, &["commit", "-q", "-m", "one"])
    }

    /// Found by the fifteenth red-team round: `git status` goes into every submodule the index names, also one
    /// whose `.git` is a file pointing to a repository elsewhere, and one nested in another; their configuration
    /// was not read, and a `core.fsmonitor` there ran unasked.
    #[test]
    fn submodules_pointed_to_or_nested_are_checked_too() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        if !repository(&root) || !repository(&root.join("sub")) {
            return;
        }
        std::fs::rename(root.join("sub/.git"), root.join("elsewhere")).unwrap();
        std::fs::write(root.join("sub/.git"), "gitdir: ../elsewhere\n").unwrap();
        assert!(git(&root, &["add", "sub"]) && git(&root, &["commit", "-q", "-m", "sub"]));
        assert!(check(&root).is_ok(), "{:?}", check(&root));
        std::fs::write(root.join("elsewhere/config"), "[core]\n\tfsmonitor = evil\n").unwrap();
        assert!(check(&root).is_err_and(|why| why.contains("fsmonitor")));

        let nested = tempfile::tempdir().unwrap();
        let top = nested.path().canonicalize().unwrap();
        if !repository(&top) || !repository(&top.join("sub")) || !repository(&top.join("sub/inner")) {
            return;
        }
        assert!(git(&top.join("sub"), &["add", "inner"]) && git(&top.join("sub"), &["commit", "-q", "-m", "in"]));
        assert!(git(&top, &["add", "sub"]) && git(&top, &["commit", "-q", "-m", "sub"]));
        assert!(check(&top).is_ok(), "{:?}", check(&top));
        std::fs::write(top.join("sub/inner/.git/config"), "[core]\n\tfsmonitor = evil\n").unwrap();
        assert!(check(&top).is_err_and(|why| why.contains("fsmonitor")), "{:?}", check(&top));
    }

    /// Found by the sixteenth red-team round: a repository whose git directory, common directory or object store
    /// lies outside the workspace let a "reading" git command print another project's history and files.
    /// Found by the twenty-fifth red-team round: a submodule whose `.git` is a link (git follows it) to a
    /// repository elsewhere in the tree was skipped, and `git status` ran its planted `core.fsmonitor`; and a
    /// configuration that only seemed to name SHA-256 (`[extensions "x"]`) had the index read with the wrong
    /// length of names, which hid the submodule.
    #[test]
    fn a_linked_submodule_or_a_misleading_configuration_hides_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        if !repository(&root) || !repository(&root.join("sub")) {
            return;
        }
        assert!(git(&root, &["add", "sub"]) && git(&root, &["commit", "-q", "-m", "sub"]));
        std::fs::write(root.join("sub/.git/config"), "[core]\n\tfsmonitor = evil\n").unwrap();
        let mut config = std::fs::read_to_string(root.join(".git/config")).unwrap();
        config.push_str("[extensions \"x\"]\n\tobjectformat = sha256\n");
        std::fs::write(root.join(".git/config"), config).unwrap();
        assert!(check(&root).is_err_and(|why| why.contains("fsmonitor")), "{:?}", check(&root));
        std::fs::rename(root.join("sub/.git"), root.join("subrepo")).unwrap();
        std::os::unix::fs::symlink("../subrepo", root.join("sub/.git")).unwrap();
        assert!(check(&root).is_err(), "a submodule's .git that is a link asks");
    }

    #[test]
    fn a_repository_reaching_outside_its_work_tree_asks() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let (work, other) = (base.join("work"), base.join("other"));
        if !repository(&other) || !repository(&work) {
            return;
        }
        assert!(check(&work).is_ok(), "{:?}", check(&work));
        std::fs::write(
            work.join(".git/objects/info/alternates"),
            format!("{}\n", other.join(".git/objects").display()),
        )
        .unwrap();
        assert!(check(&work).is_err_and(|why| why.contains("objects from elsewhere")));
        std::fs::remove_file(work.join(".git/objects/info/alternates")).unwrap();
        std::fs::write(work.join(".git/commondir"), "../../other/.git\n").unwrap();
        assert!(check(&work).is_err_and(|why| why.contains("common directory")), "{:?}", check(&work));
        std::fs::remove_file(work.join(".git/commondir")).unwrap();
        std::fs::rename(work.join(".git"), base.join("work.git")).unwrap();
        std::fs::write(work.join(".git"), "gitdir: ../other/.git\n").unwrap();
        assert!(check(&work).is_err_and(|why| why.contains("git directory")), "{:?}", check(&work));

        // A linked worktree's repository is its main one's, outside it: it names the worktree back.
        let main = base.join("main");
        if !repository(&main) || !git(&main, &["worktree", "add", "-q", "../linked"]) {
            return;
        }
        assert!(check(&base.join("linked")).is_ok(), "{:?}", check(&base.join("linked")));
    }

    /// Found by the seventeenth red-team round: git reads what a link in the repository leads to (`info/grafts`,
    /// `packed-refs`) and quotes what it can't parse: `git log` printed a file outside the workspace. A linked
    /// hook stays fine.
    #[test]
    fn links_in_the_repository_ask() {
        let dir = tempfile::tempdir().unwrap();
        let work = dir.path().canonicalize().unwrap().join("work");
        if !repository(&work) {
            return;
        }
        std::os::unix::fs::symlink("../../scripts/hook", work.join(".git/hooks/pre-commit")).unwrap();
        assert!(check(&work).is_ok(), "{:?}", check(&work));
        std::fs::create_dir_all(work.join(".git/info")).unwrap();
        std::os::unix::fs::symlink("/etc/hostname", work.join(".git/info/grafts")).unwrap();
        assert!(check(&work).is_err_and(|why| why.contains("link")), "{:?}", check(&work));
    }

    #[test]
    fn program_keys_are_found() {
        assert_eq!(first_program_key("[core]\n\trepositoryformatversion = 0\n\tbare = false\n"), None);
        assert_eq!(first_program_key("[core]\n\tfsmonitor = ./evil\n").as_deref(), Some("core.fsmonitor"));
        assert_eq!(first_program_key("[CORE]\n\tPager = less\n").as_deref(), Some("core.pager"));
        assert_eq!(first_program_key("[diff \"x\"]\n\ttextconv = sh\n").as_deref(), Some("diff.textconv"));
        assert_eq!(first_program_key("[diff]\n\texternal = x\n").as_deref(), Some("diff.external"));
        assert_eq!(first_program_key("[diff]\n\tcolorMoved = zebra\n"), None);
        assert_eq!(first_program_key("[include]\n\tpath = ../x\n").as_deref(), Some("include.path"));
        assert_eq!(first_program_key("[mailmap]\n\tfile = /elsewhere\n").as_deref(), Some("mailmap.file"));
        assert_eq!(first_program_key("[gpg]\n\tformat = ssh\n").as_deref(), Some("gpg.format"));
        assert_eq!(first_program_key("[format]\n\tpretty = %G?\n").as_deref(), Some("format.pretty"));
        assert_eq!(first_program_key("[pretty]\n\tsig = %GG\n").as_deref(), Some("pretty.sig"));
        assert_eq!(first_program_key("[diff]\n\torderFile = /x\n").as_deref(), Some("diff.orderfile"));
        assert_eq!(first_program_key("[core] fsmonitor = x\n").as_deref(), Some("core.fsmonitor"));
        assert_eq!(first_program_key("[filter \"lfs\"]\n\tclean = git-lfs clean\n").as_deref(), Some("filter.clean"));
        assert!(first_program_key("[core]\n\tpager = a\\\n b\n").is_some());
        assert!(first_program_key("\u{feff}[core]\n\tfsmonitor = x\n").is_some(), "a byte-order mark");
        assert!(first_program_key("[x][core]fsmonitor = x\n").is_some(), "two headers on a line");
        assert!(first_program_key("[diff \"a]b\"]\n\ttextconv = x\n").is_some(), "a bracket in a subsection");
        assert!(first_program_key("fsmonitor = x\n").is_some(), "a key before any section");
        assert_eq!(first_program_key("[remote \"origin\"]\n\turl = x\n[branch \"main\"]\n\tremote = origin\n"), None);
    }

    #[test]
    fn a_repository_is_needed_and_its_config_checked() {
        let dir = tempfile::tempdir().unwrap();
        assert!(check(dir.path()).is_err(), "no repository");
        std::fs::create_dir_all(dir.path().join(".git/modules/sub")).unwrap();
        std::fs::write(dir.path().join(".git/config"), "[core]\n\tbare = false\n").unwrap();
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        assert_eq!(check(&dir.path().join("src")), Ok(dir.path().to_path_buf()), "the work tree is found");
        std::fs::create_dir_all(dir.path().join(".git/hooks")).unwrap();
        std::fs::write(dir.path().join(".git/hooks/pre-commit.sample"), "").unwrap();
        assert!(check(dir.path()).is_ok(), "sample hooks run nothing");
        std::fs::write(dir.path().join(".git/hooks/pre-commit"), "#!/bin/sh\n").unwrap();
        assert!(check(dir.path()).is_ok(), "a commit hook doesn't run when reading");
        std::fs::write(dir.path().join(".git/hooks/post-index-change"), "#!/bin/sh\n").unwrap();
        assert!(check(dir.path()).unwrap_err().contains("post-index-change"));
        std::fs::remove_file(dir.path().join(".git/hooks/post-index-change")).unwrap();
        std::fs::write(dir.path().join(".git/config"), "[core]\n\thooksPath = .husky\n").unwrap();
        assert!(check(dir.path()).is_ok(), "husky's hooks path");
        std::fs::create_dir_all(dir.path().join(".husky")).unwrap();
        std::fs::write(dir.path().join(".husky/post-index-change"), "#!/bin/sh\n").unwrap();
        assert!(check(dir.path()).unwrap_err().contains("post-index-change"));
        std::fs::write(dir.path().join(".git/config"), "[core]\n\tbare = false\n").unwrap();
        std::fs::write(dir.path().join(".git/modules/sub/config"), "[core]\n\tfsmonitor = x\n").unwrap();
        assert!(check(dir.path()).unwrap_err().contains("core.fsmonitor"));
    }
}
