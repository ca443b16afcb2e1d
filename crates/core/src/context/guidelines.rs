//! Project guidelines (`CLAUDE.md`, `AGENTS.md`, …) gathered for the system prompt.
//!
//! The files are re-read at the start of every turn, so an edit the user (or the model) makes to a guidelines
//! file takes effect on the next request without a restart. That is why loading is plain stat + read of a
//! handful of small files, never cached, and never fails: a file that can't be read is simply left out.
//!
//! Order, most general first so the most specific guidance comes last (closest to the conversation):
//! the user config directory (`CLAUDE.md`, `AGENTS.md`), then every directory from the repository root down to
//! the working directory, each with `CLAUDE.md`, `.claude/CLAUDE.md`, `AGENTS.md`, `CLAUDE.local.md`.

use std::collections::HashSet;
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::fs_util::project_root;

/// Total size of the guidelines text before it is cut (the note saying so comes on top). Guidelines are sent
/// with every request; a runaway file must not eat the context window.
pub const MAX_GUIDELINES_BYTES: usize = 40 * 1024;

/// The most read from one file. Far above [`MAX_GUIDELINES_BYTES`] so summary instructions late in a long file
/// are still found, but bounded so a huge file named `CLAUDE.md` can't slow every turn down.
const MAX_FILE_READ: u64 = 256 * 1024;

/// Guideline file names in a project directory, in the order they are concatenated.
const PROJECT_FILES: [&str; 4] = ["CLAUDE.md", ".claude/CLAUDE.md", "AGENTS.md", "CLAUDE.local.md"];

/// Guideline file names in the user config directory.
const USER_FILES: [&str; 2] = ["CLAUDE.md", "AGENTS.md"];

/// The guidelines in effect for a session in some directory.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Guidelines {
    /// Every file's content under a `# Guidelines from <path>` heading, in order; empty when there are none.
    pub text: String,
    /// The files that contributed, in order (for `/context`-style displays).
    pub files: Vec<PathBuf>,
    /// The text was cut at [`MAX_GUIDELINES_BYTES`] (a note at its end says how much was left out).
    pub truncated: bool,
    /// The body of any "Summary instructions" / "Compact instructions" section, for compaction to follow.
    pub summary_instructions: Option<String>,
}

/// Where the user's own guideline files are: tandem's config directory, and Claude Code's (`~/.claude`, or
/// `$CLAUDE_CONFIG_DIR`), whose `CLAUDE.md` is read first. `home` is where `@~/…` imports point.
#[derive(Clone, Copy, Debug)]
pub struct UserDirs<'a> {
    pub config_dir: &'a Path,
    pub claude_dir: Option<&'a Path>,
    pub home: Option<&'a Path>,
    pub sources: Sources,
}

/// Which guideline files are read, as the settings sources say (`--setting-sources`, an SDK's `settingSources`):
/// Claude Code reads the user's `CLAUDE.md` with `user`, the project's (`CLAUDE.md`, `.claude/CLAUDE.md`, and
/// tandem's `AGENTS.md`) with `project`, and `CLAUDE.local.md` with `local`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sources {
    pub user: bool,
    pub project: bool,
    pub local: bool,
}

impl Sources {
    pub const ALL: Sources = Sources { user: true, project: true, local: true };
}

/// The candidate guideline files for a session in `cwd`, in order (whether or not they exist).
pub fn candidates(config_dir: &Path, cwd: &Path) -> Vec<PathBuf> {
    candidates_for(&UserDirs { config_dir, claude_dir: None, home: None, sources: Sources::ALL }, cwd)
        .into_iter()
        .map(|(path, _)| path)
        .collect()
}

/// The candidates, each with whether it is one of the user's own files. A user directory given as a relative
/// path (an empty or relative `$HOME`) would name files in the repository: such a directory is not read.
fn candidates_for(dirs: &UserDirs, cwd: &Path) -> Vec<(PathBuf, bool)> {
    let mut paths: Vec<(PathBuf, bool)> = Vec::new();
    if let Some(dir) = dirs.claude_dir.filter(|dir| dir.is_absolute() && dirs.sources.user) {
        paths.push((dir.join("CLAUDE.md"), true));
    }
    if dirs.config_dir.is_absolute() && dirs.sources.user {
        paths.extend(USER_FILES.iter().map(|name| (dirs.config_dir.join(name), true)));
    }
    let root = project_root(cwd);
    // `project_root` is an ancestor of `cwd` (or `cwd` itself), so this walks root → cwd.
    let mut project_dirs: Vec<&Path> = cwd.ancestors().take_while(|dir| dir.starts_with(&root)).collect();
    project_dirs.reverse();
    let wanted = |name: &&&str| if **name == "CLAUDE.local.md" { dirs.sources.local } else { dirs.sources.project };
    for dir in project_dirs {
        paths.extend(PROJECT_FILES.iter().filter(wanted).map(|name| (dir.join(name), false)));
    }
    paths
}

/// At most this many imports not followed are named (a repository full of bad imports must not flood the prompt).
const MAX_PROBLEMS: usize = 20;
/// A path in such a note is cut to this many characters.
const MAX_PROBLEM_PATH: usize = 160;

/// Reads the guidelines for a session in `cwd` with user files from `config_dir`. Never fails.
pub fn load(config_dir: &Path, cwd: &Path) -> Guidelines {
    let everything = ProjectReads { hidden: &|_| false, importable: &|_| true };
    load_from(&UserDirs { config_dir, claude_dir: None, home: None, sources: Sources::ALL }, cwd, &everything)
}

/// What a project's guideline files may bring into the prompt, which is sent to the model without anyone being
/// asked. The project's root can be far above the workspace (a monorepo, a repository of dotfiles holding the
/// home directory, tandem started in HOME), so "inside the project" is not enough.
pub struct ProjectReads<'a> {
    /// A project's guideline file (found walking up from the working directory) is read unless this hides it:
    /// credentials, what the user's Read rules deny or ask for.
    pub hidden: &'a dyn Fn(&Path) -> bool,
    /// A project's file imports only what this allows: what a Read may reach unasked (Claude Code asks before an
    /// import from outside the working directory; tandem has nobody to ask while it builds a request).
    pub importable: &'a dyn Fn(&Path) -> bool,
}

/// [`load`] with Claude Code's user directory too, following `@path` imports ([`super::imports`]), a project's
/// files within `reads`.
pub fn load_from(dirs: &UserDirs, cwd: &Path, reads: &ProjectReads) -> Guidelines {
    load_candidates(dirs, cwd, reads, candidates_for(dirs, cwd))
}

/// The project guideline files of the directories below the working directory on the way to `dir` (`dir`
/// included) that `announced` does not hold yet, which it then does: Claude Code reads `sub/CLAUDE.md` the first
/// time the model reads a file under `sub/`. Empty when there are none, when `dir` is not below `cwd`, or when
/// the settings sources leave out the project's files.
pub fn nested(
    dirs: &UserDirs,
    cwd: &Path,
    dir: &Path,
    reads: &ProjectReads,
    announced: &mut HashSet<PathBuf>,
) -> Guidelines {
    let Ok(below) = dir.strip_prefix(cwd) else { return Guidelines::default() };
    let mut candidates = Vec::new();
    let mut current = cwd.to_path_buf();
    for part in below.components() {
        current.push(part);
        if !announced.insert(current.clone()) {
            continue;
        }
        let wanted = |name: &&&str| if **name == "CLAUDE.local.md" { dirs.sources.local } else { dirs.sources.project };
        candidates.extend(PROJECT_FILES.iter().filter(wanted).map(|name| (current.join(name), false)));
    }
    if candidates.is_empty() {
        return Guidelines::default();
    }
    load_candidates(dirs, cwd, reads, candidates)
}

fn load_candidates(dirs: &UserDirs, cwd: &Path, reads: &ProjectReads, candidates: Vec<(PathBuf, bool)>) -> Guidelines {
    let mut walk = Walk {
        dirs,
        reads,
        seen: HashSet::new(),
        sources: Vec::new(),
        problems: Vec::new(),
        real_root: PathBuf::new(),
    };
    let root = project_root(cwd);
    walk.real_root = root.canonicalize().unwrap_or(root);
    for (path, user_candidate) in candidates {
        // `CLAUDE.md` is often a symlink to `AGENTS.md` (or the config dir sits inside the repository): the same
        // file must not be sent twice.
        let Ok(real) = path.canonicalize() else { continue };
        // A user file that is in the repository (a config directory inside it, or above the clone) is the
        // repository's: its imports get the project's limits.
        let user_file = user_candidate && !real.starts_with(&walk.real_root);
        // A project's guideline file that is a link out of the project (to `~/.ssh/id_rsa`, say) would send
        // that file to the model: only files inside the project are read from it.
        if !user_file && (!real.starts_with(&walk.real_root) || (walk.reads.hidden)(&real)) {
            continue;
        }
        // Nor, through a link, a file elsewhere in the project that a Read may not reach unasked (another
        // project below a home directory that is a repository, a monorepo's private directory): a link to a
        // file beside it (`CLAUDE.md -> AGENTS.md`) is fine, one further away must lead where a Read may go.
        if !user_file && leads_away(&path, &real) && !(walk.reads.importable)(&real) {
            continue;
        }
        if !walk.seen.insert(real.clone()) {
            continue;
        }
        // A project's guideline file that is a denied file under this name (a build's `mv .env CLAUDE.md`) is not
        // read; the prompt says nothing of it, as of a guideline file that is a secret.
        let _ = walk.include(&path, &real, None, user_file, 0);
    }
    let mut guidelines = assemble(&walk.sources);
    if !walk.problems.is_empty() {
        let more = walk.problems.len().saturating_sub(MAX_PROBLEMS);
        let mut named: Vec<String> = walk.problems.iter().take(MAX_PROBLEMS).cloned().collect();
        if more > 0 {
            named.push(format!("and {more} more"));
        }
        guidelines.text.push_str(&format!("\n\n[Imports not followed: {}]", named.join("; ")));
    }
    guidelines
}

/// Whether `path` (a guideline file found by name, in a directory named as the kernel gives it) is really `real`
/// somewhere other than beside it: a link to another directory, or a directory on the way that is one.
fn leads_away(path: &Path, real: &Path) -> bool {
    path.parent() != real.parent()
}

/// The files found so far, and the imports that were not followed.
struct Walk<'a> {
    dirs: &'a UserDirs<'a>,
    reads: &'a ProjectReads<'a>,
    seen: HashSet<PathBuf>,
    sources: Vec<Source>,
    problems: Vec<String>,
    real_root: PathBuf,
}

impl Walk<'_> {
    /// Whether a project's file may import `real` (a resolved path): only from inside the project, and only what
    /// a read may reach unasked.
    fn project_may_import(&self, real: &Path) -> bool {
        real.starts_with(&self.real_root) && !(self.reads.hidden)(real) && (self.reads.importable)(real)
    }

    /// Notes an import that was not followed, once, with its paths cut short.
    fn problem(&mut self, target: &str, importer: &Path, why: &str) {
        let cut = |text: &str| {
            if text.chars().count() > MAX_PROBLEM_PATH {
                format!("{}…", text.chars().take(MAX_PROBLEM_PATH).collect::<String>())
            } else {
                text.to_owned()
            }
        };
        let problem = format!("@{} in {} ({why})", cut(target), cut(&importer.display().to_string()));
        if !self.problems.contains(&problem) {
            self.problems.push(problem);
        }
    }

    /// Adds `path` (already checked, on its real place `real`) and, below [`super::imports::MAX_DEPTH`], what it
    /// imports (found relative to `path`, as written). `Err` when the file opened is one a Read may not see.
    fn include(
        &mut self,
        path: &Path,
        real: &Path,
        imported_by: Option<&Path>,
        user_file: bool,
        depth: usize,
    ) -> Result<(), Refused> {
        let hidden = (!user_file).then_some(self.reads.hidden);
        let Some(mut source) = read_source(path, real, hidden)? else { return Ok(()) };
        source.imported_by = imported_by.map(Path::to_path_buf);
        let targets = super::imports::targets(&source.text);
        self.sources.push(source);
        for target in targets {
            // A project's file hears the same for a missing file as for one outside the project: the reply must
            // not tell a repository which files exist elsewhere on the machine.
            const HIDDEN: &str = "not found in the project: a project's file may only import the project's files";
            let home = self.dirs.home.filter(|home| home.is_absolute());
            let Some(resolved) = super::imports::resolve(&target, path, home) else {
                self.problem(&target, path, if user_file { "no home directory" } else { HIDDEN });
                continue;
            };
            let Ok(real) = resolved.canonicalize() else {
                self.problem(&target, path, if user_file { "not found" } else { HIDDEN });
                continue;
            };
            if !user_file && !self.project_may_import(&real) {
                self.problem(&target, path, HIDDEN);
                continue;
            }
            if depth + 1 > super::imports::MAX_DEPTH {
                self.problem(&target, path, "imports nest at most 5 deep");
                continue;
            }
            // Already included (or a cycle back to an importer): once is enough.
            if !self.seen.insert(real.clone()) {
                continue;
            }
            if self.include(&resolved, &real, Some(path), user_file, depth + 1).is_err() {
                self.problem(&target, path, HIDDEN);
            }
        }
        Ok(())
    }
}

/// One file's content, as read.
struct Source {
    path: PathBuf,
    text: String,
    /// The file's size on disk.
    size: usize,
    /// The read stopped at [`MAX_FILE_READ`] before the end of the file.
    capped: bool,
    /// The guideline file whose `@path` brought this one in.
    imported_by: Option<PathBuf>,
}

/// The file `path` names, read from `real`, the place that was checked: opened without following a link (one put
/// in its way since, by a command in the background, would lead to a file nobody checked), and only if it is a
/// regular file (a FIFO named CLAUDE.md would wait for a writer forever). A project's file is not read when the
/// file opened is one `hidden` covers under another name: a denied file a command renamed or linked to
/// `CLAUDE.md` or to what it imports.
fn read_source(path: &Path, real: &Path, hidden: Option<&dyn Fn(&Path) -> bool>) -> Result<Option<Source>, Refused> {
    let Ok(file) = crate::fs_util::open_regular_resolved(real) else { return Ok(None) };
    crate::sandbox::refuse_hidden_opened(&file, "", hidden).map_err(|_| Refused)?;
    let Ok(meta) = file.metadata() else { return Ok(None) };
    let mut bytes = Vec::new();
    if file.take(MAX_FILE_READ).read_to_end(&mut bytes).is_err() {
        return Ok(None);
    }
    let text = String::from_utf8_lossy(&bytes).trim_end().to_owned();
    if text.trim().is_empty() {
        return Ok(None);
    }
    let size = usize::try_from(meta.len()).unwrap_or(usize::MAX).max(bytes.len());
    Ok(Some(Source { path: path.to_path_buf(), text, size, capped: size > bytes.len(), imported_by: None }))
}

/// A guideline file that is, under another name, one a Read may not see.
struct Refused;

/// Concatenates the sources under headings, cutting at [`MAX_GUIDELINES_BYTES`].
fn assemble(sources: &[Source]) -> Guidelines {
    let mut out = Guidelines::default();
    let mut left_out: Vec<&Path> = Vec::new();
    let mut left_out_bytes = 0usize;
    for source in sources {
        if let Some(found) = summary_section(&source.text) {
            match &mut out.summary_instructions {
                Some(all) => {
                    all.push_str("\n\n");
                    all.push_str(&found);
                }
                None => out.summary_instructions = Some(found),
            }
        }
        if out.truncated {
            left_out.push(&source.path);
            left_out_bytes += source.size;
            continue;
        }
        let separator = if out.text.is_empty() { "" } else { "\n\n" };
        let heading = match &source.imported_by {
            Some(importer) => format!(
                "{separator}# Guidelines from {} (imported by {})\n\n",
                source.path.display(),
                importer.display()
            ),
            None => format!("{separator}# Guidelines from {}\n\n", source.path.display()),
        };
        let Some(room) = MAX_GUIDELINES_BYTES.checked_sub(out.text.len() + heading.len()).filter(|&room| room > 0)
        else {
            // Not even the heading fits: the file is left out whole.
            out.truncated = true;
            left_out.push(&source.path);
            left_out_bytes += source.size;
            continue;
        };
        out.files.push(source.path.clone());
        out.text.push_str(&heading);
        let kept = cut_point(&source.text, room);
        out.text.push_str(&source.text[..kept]);
        if kept < source.text.len() || source.capped {
            out.truncated = true;
            left_out.push(&source.path);
            left_out_bytes += source.size.saturating_sub(kept);
        }
    }
    if out.truncated {
        let names: Vec<String> = left_out.iter().map(|p| p.display().to_string()).collect();
        out.text.push_str(&format!(
            "\n\n[… guidelines cut at {} KB; {left_out_bytes} more bytes in {}]",
            MAX_GUIDELINES_BYTES / 1024,
            names.join(", ")
        ));
    }
    out
}

/// Where to cut `text` to keep at most `room` bytes: the whole text when it fits, else the end of the last
/// whole line that fits (mid-line only when not even one line fits), always on a char boundary.
fn cut_point(text: &str, room: usize) -> usize {
    if text.len() <= room {
        return text.len();
    }
    let mut end = room;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    match text[..end].rfind('\n') {
        Some(newline) if newline > 0 => newline,
        _ => end,
    }
}

/// An ATX heading (`## Title`): its level and text. Setext headings (underlined) are not recognized.
fn heading(raw: &str) -> Option<(usize, &str)> {
    // Up to three spaces of indentation, as in CommonMark; four make a code block.
    let line = raw.trim_start_matches(' ');
    if raw.len() - line.len() > 3 {
        return None;
    }
    let level = line.bytes().take_while(|&b| b == b'#').count();
    if !(1..=6).contains(&level) {
        return None;
    }
    let rest = &line[level..];
    if !rest.is_empty() && !rest.starts_with([' ', '\t']) {
        return None;
    }
    Some((level, rest.trim().trim_end_matches('#').trim()))
}

/// Whether a line opens or closes a fenced code block (where `#` lines are comments, not headings).
fn is_fence(line: &str) -> bool {
    let line = line.trim_start();
    line.starts_with("```") || line.starts_with("~~~")
}

/// The bodies of the sections whose heading mentions summary or compact instructions, joined; `None` when there
/// are none (or they are empty). A section runs to the next heading of the same or a higher level.
fn summary_section(text: &str) -> Option<String> {
    let mut found: Vec<String> = Vec::new();
    let mut current: Option<(usize, Vec<&str>)> = None;
    let mut in_fence = false;
    for line in text.lines() {
        if is_fence(line) {
            in_fence = !in_fence;
        }
        let parsed = if in_fence || is_fence(line) { None } else { heading(line) };
        if let Some((level, title)) = parsed {
            if current.as_ref().is_some_and(|(open, _)| level <= *open) {
                finish(current.take(), &mut found);
            }
            let title = title.to_lowercase();
            if current.is_none() && (title.contains("summary instructions") || title.contains("compact instructions")) {
                current = Some((level, Vec::new()));
                continue;
            }
        }
        if let Some((_, lines)) = &mut current {
            lines.push(line);
        }
    }
    finish(current.take(), &mut found);
    if found.is_empty() { None } else { Some(found.join("\n\n")) }
}

/// Closes an open section: its trimmed body joins `found` unless it is empty.
fn finish(section: Option<(usize, Vec<&str>)>, found: &mut Vec<String>) {
    if let Some((_, lines)) = section {
        let body = lines.join("\n").trim().to_owned();
        if !body.is_empty() {
            found.push(body);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    /// A config dir and a repository with a subdirectory as the working directory.
    fn setup() -> (tempfile::TempDir, PathBuf, PathBuf, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let config = tmp.path().join("config");
        let repo = tmp.path().join("repo");
        let cwd = repo.join("crates/app");
        fs::create_dir_all(&config).unwrap();
        fs::create_dir_all(repo.join(".git")).unwrap();
        fs::create_dir_all(&cwd).unwrap();
        (tmp, config, repo, cwd)
    }

    #[test]
    fn order_headings_and_all_file_names() {
        let (_tmp, config, repo, cwd) = setup();
        fs::write(config.join("AGENTS.md"), "user agents").unwrap();
        fs::write(config.join("CLAUDE.md"), "user claude").unwrap();
        fs::write(cwd.join("CLAUDE.md"), "cwd claude\n").unwrap();
        fs::write(repo.join("CLAUDE.local.md"), "root local").unwrap();
        fs::write(repo.join("AGENTS.md"), "root agents").unwrap();
        fs::create_dir_all(repo.join(".claude")).unwrap();
        fs::write(repo.join(".claude/CLAUDE.md"), "root dot-claude").unwrap();
        fs::write(repo.join("CLAUDE.md"), "root claude").unwrap();
        fs::write(repo.join("crates/CLAUDE.md"), "   \n").unwrap(); // blank: left out
        // Above the repository root: not read.
        fs::write(repo.parent().unwrap().join("CLAUDE.md"), "outside").unwrap();

        let g = load(&config, &cwd);
        let expected = [
            config.join("CLAUDE.md"),
            config.join("AGENTS.md"),
            repo.join("CLAUDE.md"),
            repo.join(".claude/CLAUDE.md"),
            repo.join("AGENTS.md"),
            repo.join("CLAUDE.local.md"),
            cwd.join("CLAUDE.md"),
        ];
        assert_eq!(g.files, expected);
        let bodies = ["user claude", "user agents", "root claude", "root dot-claude", "root agents", "root local"];
        let mut want: Vec<String> =
            expected.iter().zip(bodies).map(|(p, b)| format!("# Guidelines from {}\n\n{b}", p.display())).collect();
        want.push(format!("# Guidelines from {}\n\ncwd claude", cwd.join("CLAUDE.md").display()));
        assert_eq!(g.text, want.join("\n\n"));
        assert!(!g.truncated && g.summary_instructions.is_none());
        assert!(!g.text.contains("outside"));
    }

    #[test]
    fn no_repository_means_cwd_only_and_none_is_empty() {
        let tmp = tempfile::tempdir().unwrap();
        let cwd = tmp.path().join("a/b");
        fs::create_dir_all(&cwd).unwrap();
        fs::write(tmp.path().join("a/CLAUDE.md"), "parent").unwrap();
        let g = load(&tmp.path().join("no-config"), &cwd);
        assert_eq!(g, Guidelines::default());
        fs::write(cwd.join("AGENTS.md"), "here").unwrap();
        let g = load(&tmp.path().join("no-config"), &cwd);
        assert_eq!(g.files, vec![cwd.join("AGENTS.md")]);
    }

    #[cfg(unix)]
    #[test]
    fn symlinked_file_is_included_once() {
        let (_tmp, config, repo, cwd) = setup();
        fs::write(repo.join("AGENTS.md"), "shared").unwrap();
        std::os::unix::fs::symlink(repo.join("AGENTS.md"), repo.join("CLAUDE.md")).unwrap();
        let g = load(&config, &cwd);
        assert_eq!(g.files, vec![repo.join("CLAUDE.md")]);
        assert_eq!(g.text.matches("shared").count(), 1);
    }

    #[cfg(unix)]
    #[test]
    fn a_guideline_file_linking_out_of_the_project_is_not_sent() {
        let (tmp, config, repo, cwd) = setup();
        let secret = tmp.path().join("id_rsa");
        fs::write(&secret, "PRIVATE KEY").unwrap();
        std::os::unix::fs::symlink(&secret, repo.join("CLAUDE.md")).unwrap();
        std::os::unix::fs::symlink(&secret, cwd.join("AGENTS.md")).unwrap();
        let g = load(&config, &cwd);
        assert!(!g.text.contains("PRIVATE KEY"), "{}", g.text);
        assert!(g.files.is_empty());
    }

    /// Found by the fifty-third red-team round: a guideline file linking elsewhere inside the project (a
    /// monorepo's private directory, another project below a home directory that is a repository) sent that
    /// file to the model though a Read may not reach it unasked. A link beside it (`CLAUDE.md -> AGENTS.md`) is fine.
    #[cfg(unix)]
    #[test]
    fn a_guideline_file_linking_where_a_read_may_not_go_is_not_sent() {
        let (_tmp, config, repo, cwd) = setup();
        fs::create_dir_all(repo.join("private")).unwrap();
        fs::write(repo.join("private/key.txt"), "CANARY-PRIV").unwrap();
        fs::write(cwd.join("AGENTS.md"), "AGENTS-GUIDE").unwrap();
        std::os::unix::fs::symlink(repo.join("private/key.txt"), cwd.join("CLAUDE.md")).unwrap();
        fs::create_dir_all(cwd.join("sub")).unwrap();
        std::os::unix::fs::symlink(repo.join("private/key.txt"), cwd.join("sub/CLAUDE.md")).unwrap();
        let inside = |path: &Path| path.starts_with(&cwd);
        let dirs = UserDirs { config_dir: &config, claude_dir: None, home: None, sources: Sources::ALL };
        let reads = ProjectReads { hidden: &|_| false, importable: &inside };
        let g = load_from(&dirs, &cwd, &reads);
        assert!(!g.text.contains("CANARY-PRIV") && g.text.contains("AGENTS-GUIDE"), "{}", g.text);
        let nested = nested(&dirs, &cwd, &cwd.join("sub"), &reads, &mut HashSet::new());
        assert!(!nested.text.contains("CANARY-PRIV"), "{}", nested.text);
        fs::remove_file(cwd.join("CLAUDE.md")).unwrap();
        std::os::unix::fs::symlink(cwd.join("AGENTS.md"), cwd.join("CLAUDE.md")).unwrap();
        assert!(load_from(&dirs, &cwd, &reads).text.contains("AGENTS-GUIDE"), "a link beside it is read");
    }

    /// Found by the nineteenth red-team round: the project's root can hold the home directory (a repository of
    /// dotfiles, tandem started in HOME), and a project's `@.ssh/id_rsa` or `@./.env` (under a Read deny rule)
    /// went into every request, unasked. What a read may not reach unasked is neither imported nor read.
    #[test]
    fn a_project_file_imports_nothing_a_read_may_not_reach_unasked() {
        let (_tmp, config, repo, cwd) = setup();
        fs::create_dir_all(repo.join(".ssh")).unwrap();
        fs::write(repo.join(".ssh/id_rsa"), "CANARY-SSH").unwrap();
        fs::write(repo.join(".env"), "CANARY-ENV").unwrap();
        fs::write(repo.join("style.md"), "use tabs").unwrap();
        fs::write(repo.join("CLAUDE.md"), "@.ssh/id_rsa\n@./.env\n@style.md").unwrap();
        fs::write(cwd.join("CLAUDE.md"), "here").unwrap();
        let real = repo.canonicalize().unwrap();
        let hidden = |path: &Path| path.starts_with(real.join(".ssh")) || path == real.join(".env");
        let dirs = UserDirs { config_dir: &config, claude_dir: None, home: None, sources: Sources::ALL };
        let g = load_from(&dirs, &cwd, &ProjectReads { hidden: &hidden, importable: &|_| true });
        assert!(g.text.contains("use tabs") && g.text.contains("here"), "{}", g.text);
        assert!(!g.text.contains("CANARY"), "{}", g.text);
        assert!(g.text.contains("@.ssh/id_rsa in ") && g.text.contains("not found in the project"), "{}", g.text);
        // Only what a Read may reach unasked is imported: the repository's root is above the workspace.
        let workspace = cwd.canonicalize().unwrap();
        let inside = |path: &Path| path.starts_with(&workspace);
        let g = load_from(&dirs, &cwd, &ProjectReads { hidden: &hidden, importable: &inside });
        assert!(!g.text.contains("use tabs") && g.text.contains("here"), "{}", g.text);
        let hide_all = |path: &Path| path.starts_with(&real);
        let reads = ProjectReads { hidden: &hide_all, importable: &|_| true };
        assert!(load_from(&dirs, &cwd, &reads).files.is_empty(), "a project file a read may not reach is not read");
    }

    /// Found by the thirty-sixth red-team round: an import was checked on its real path and then opened by its
    /// spelled name, following whatever link a command in the background had swapped in meanwhile (with
    /// `renameat2(RENAME_EXCHANGE)`), so `~/.ssh/id_rsa` went into a request. Here the swap happens while the
    /// import is checked.
    #[test]
    fn an_import_swapped_for_a_link_after_its_check_is_not_read() {
        let (tmp, config, repo, cwd) = setup();
        fs::create_dir_all(repo.join("sub")).unwrap();
        fs::write(repo.join("sub/notes.md"), "decoy notes").unwrap();
        fs::write(tmp.path().join("id_rsa"), "CANARY-SSH").unwrap();
        fs::write(cwd.join("CLAUDE.md"), "@../../sub/notes.md").unwrap();
        let (notes, secret) = (repo.join("sub/notes.md"), tmp.path().join("id_rsa"));
        let swap = |path: &Path| {
            if path.ends_with("notes.md") && !notes.is_symlink() {
                fs::remove_file(&notes).unwrap();
                std::os::unix::fs::symlink(&secret, &notes).unwrap();
            }
            true
        };
        let dirs = UserDirs { config_dir: &config, claude_dir: None, home: None, sources: Sources::ALL };
        let g = load_from(&dirs, &cwd, &ProjectReads { hidden: &|_| false, importable: &swap });
        assert!(notes.is_symlink(), "the swap happened");
        assert!(!g.text.contains("CANARY"), "{}", g.text);
    }

    #[test]
    fn cut_at_cap_with_note() {
        let (_tmp, config, repo, cwd) = setup();
        let line = format!("{}\n", "x".repeat(99));
        fs::write(repo.join("CLAUDE.md"), line.repeat(300)).unwrap(); // 30,000 bytes
        fs::write(repo.join("AGENTS.md"), line.repeat(200)).unwrap(); // 20,000 bytes
        fs::write(cwd.join("CLAUDE.md"), "late").unwrap();
        let g = load(&config, &cwd);
        assert!(g.truncated);
        let (body, note) = g.text.split_once("\n\n[… guidelines cut at 40 KB; ").unwrap();
        assert!(body.len() <= MAX_GUIDELINES_BYTES, "{}", body.len());
        assert!(body.ends_with('x'), "cut at a line end");
        assert_eq!(g.files, vec![repo.join("CLAUDE.md"), repo.join("AGENTS.md")]);
        let kept_agents = body.rsplit_once("\n\n").unwrap().1.len();
        let missing = 20_000 - kept_agents + 4; // the rest of AGENTS.md, then all of the cwd's CLAUDE.md
        let files = format!("{}, {}", repo.join("AGENTS.md").display(), cwd.join("CLAUDE.md").display());
        assert_eq!(note, format!("{missing} more bytes in {files}]"));
    }

    #[test]
    fn huge_file_is_read_in_part_and_counted_whole() {
        let (_tmp, config, repo, cwd) = setup();
        let size = MAX_FILE_READ as usize + 50_000;
        fs::write(repo.join("CLAUDE.md"), format!("## Compact instructions\nkeep it\n{}", "y\n".repeat(size / 2)))
            .unwrap();
        let g = load(&config, &cwd);
        assert!(g.truncated && g.summary_instructions.as_deref().unwrap().starts_with("keep it\ny\ny"));
        let body_len = g.text.find("\n\n[… guidelines cut").unwrap();
        let kept = body_len - format!("# Guidelines from {}\n\n", repo.join("CLAUDE.md").display()).len();
        let total = fs::metadata(repo.join("CLAUDE.md")).unwrap().len() as usize;
        assert!(g.text.ends_with(&format!("; {} more bytes in {}]", total - kept, repo.join("CLAUDE.md").display())));
    }

    #[test]
    fn summary_instructions_any_level_until_same_or_higher_heading() {
        let text = "# Project\nintro\n## Compact Instructions\nKeep the test names.\n### Detail\nand paths\n```sh\n\
                    # not a heading\n```\n## Other\nnot this\n";
        assert_eq!(
            summary_section(text).as_deref(),
            Some("Keep the test names.\n### Detail\nand paths\n```sh\n# not a heading\n```")
        );
        assert_eq!(summary_section("#### summary instructions ###\nx\n# Top\ny").as_deref(), Some("x"));
        assert_eq!(summary_section("# Summary instructions\n\n# Next\n"), None);
        assert_eq!(summary_section("#summary instructions\nx"), None, "not a heading without a space");

        let (_tmp, config, repo, cwd) = setup();
        fs::write(config.join("CLAUDE.md"), "# Summary instructions\nuser part").unwrap();
        fs::write(cwd.join("AGENTS.md"), "intro\n\n## When compacting: compact instructions\nproject part\n").unwrap();
        fs::write(repo.join("CLAUDE.md"), "nothing here").unwrap();
        let g = load(&config, &cwd);
        assert_eq!(g.summary_instructions.as_deref(), Some("user part\n\nproject part"));
    }

    #[test]
    fn changed_file_is_reread() {
        let (_tmp, config, repo, cwd) = setup();
        fs::write(repo.join("CLAUDE.md"), "first version").unwrap();
        assert!(load(&config, &cwd).text.ends_with("first version"));
        fs::write(repo.join("CLAUDE.md"), "second version").unwrap();
        let g = load(&config, &cwd);
        assert!(g.text.ends_with("second version") && !g.text.contains("first"), "{}", g.text);
        fs::remove_file(repo.join("CLAUDE.md")).unwrap();
        assert_eq!(load(&config, &cwd), Guidelines::default());
    }

    #[test]
    fn unreadable_entries_are_skipped() {
        let (_tmp, config, repo, cwd) = setup();
        fs::create_dir_all(repo.join("CLAUDE.md")).unwrap(); // a directory, not a file
        fs::write(repo.join("AGENTS.md"), b"ok \xff bytes").unwrap();
        let g = load(&config, &cwd);
        assert_eq!(g.files, vec![repo.join("AGENTS.md")]);
        assert!(g.text.ends_with("ok \u{fffd} bytes"));
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_named_claude_md_is_skipped_not_waited_on() {
        let tmp = tempfile::tempdir().unwrap();
        let fifo = tmp.path().join("CLAUDE.md");
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        assert!(read_source(&fifo, &fifo, None).is_ok_and(|source| source.is_none()));
    }
}
