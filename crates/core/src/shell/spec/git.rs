//! `git`: the subcommands that only read, with the options that keep them so. They still follow the
//! repository's configuration (pagers, diff and textconv drivers, fsmonitor, filters, signature programs), so
//! [`Effects::repository_config`] tells the policy to check that configuration before running them unasked.

use super::{Effects, HistoryRead, PathArg};
use crate::shell::words::Word;

/// Options (exact spellings; git's own abbreviations are not accepted) of the diff family.
const DIFF_OPTIONS: &[&str] = &[
    "-p",
    "-u",
    "--patch",
    "-s",
    "--no-patch",
    "--raw",
    "--patch-with-raw",
    "--stat",
    "--shortstat",
    "--numstat",
    "--dirstat",
    "--summary",
    "--name-only",
    "--name-status",
    "--check",
    "--full-index",
    "--binary",
    "-w",
    "--ignore-all-space",
    "-b",
    "--ignore-space-change",
    "--ignore-blank-lines",
    "--ignore-space-at-eol",
    "--minimal",
    "--patience",
    "--histogram",
    "--color",
    "--no-color",
    "--word-diff",
    "--color-words",
    "--no-renames",
    "-M",
    "-C",
    "-R",
    "--relative",
    "--text",
    "-a",
    "--exit-code",
    "--quiet",
    "--cached",
    "--staged",
    "--no-ext-diff",
    "--no-textconv",
    "--abbrev",
    "--merge-base",
    "-z",
    "--compact-summary",
    "--function-context",
    "-W",
    "--find-renames",
    "--find-copies",
    "--irreversible-delete",
    "-D",
    "--ignore-submodules",
    "--diff-merges",
    "-m",
    "--cc",
    "--combined-all-paths",
    "--first-parent",
];
const DIFF_VALUE_PREFIXES: &[&str] = &[
    "-U",
    "--unified=",
    "--stat=",
    "--dirstat=",
    "--diff-filter=",
    "--word-diff=",
    "--color=",
    "--abbrev=",
    "--relative=",
    "-M",
    "-C",
    "-S",
    "-G",
    "--src-prefix=",
    "--dst-prefix=",
    "--diff-algorithm=",
    "--inter-hunk-context=",
    "--ignore-submodules=",
    "--diff-merges=",
    "--find-renames=",
    "--find-copies=",
    "--stat-width=",
];
const LOG_OPTIONS: &[&str] = &[
    "--oneline",
    "--graph",
    "--all",
    "--decorate",
    "--no-decorate",
    "--reverse",
    "--abbrev-commit",
    "--no-merges",
    "--merges",
    "--follow",
    "--source",
    "--date-order",
    "--topo-order",
    "--author-date-order",
    "-i",
    "--regexp-ignore-case",
    "--all-match",
    "--invert-grep",
    "--left-right",
    "--cherry-pick",
    "--boundary",
    "--branches",
    "--tags",
    "--remotes",
    "--no-walk",
    "--simplify-by-decoration",
    "--full-history",
    "--walk-reflogs",
    "-g",
    "--parents",
    "--children",
];
/// A `--format`/`--pretty` with a signature placeholder (`%G?`, `%GG`, `%GS`, `%GK`…, also with a `+`, `-` or
/// space between `%` and `G`, which only change the line breaks around it) runs the signature program
/// (`gpg.program`, `gpg.ssh.program`), like `--show-signature` (which is not in [`LOG_OPTIONS`] for that reason).
fn verifies_signatures(arg: &str) -> bool {
    (arg.starts_with("--format=") || arg.starts_with("--pretty="))
        && ["%G", "%+G", "%-G", "% G"].iter().any(|placeholder| arg.contains(placeholder))
}

const LOG_VALUE_PREFIXES: &[&str] = &[
    "-n",
    "--max-count=",
    "--skip=",
    "--since=",
    "--after=",
    "--until=",
    "--before=",
    "--author=",
    "--committer=",
    "--grep=",
    "--format=",
    "--pretty=",
    "--date=",
    "--decorate=",
    "-L",
    "--max-parents=",
    "--min-parents=",
    "--branches=",
    "--tags=",
    "--remotes=",
    "--glob=",
    "--exclude=",
];

/// `git ARGS`, or why it is not known to only read.
#[expect(
    clippy::too_many_lines,
    reason = "git's read-only subcommands and their options, one arm each: a table would read better"
)]
pub(super) fn understand(args: &[Word]) -> Result<Effects, String> {
    let texts: Vec<String> = args
        .iter()
        .map(|word| word.plain_text().ok_or_else(|| format!("`{}` is only known when the command runs", word.text())))
        .collect::<Result<_, _>>()?;
    let Some((sub, rest)) = texts.split_first() else { return Err("`git` without a subcommand".into()) };
    let rest: Vec<&str> = rest.iter().map(String::as_str).collect();
    let mut effects = Effects { repository_config: true, ..Effects::default() };
    let ok = match sub.as_str() {
        "--version" | "version" => {
            effects.repository_config = false;
            rest.is_empty()
        }
        "status" => {
            // `-v` prints the staged changes: file contents out of the index.
            effects.unnamed_history = rest.iter().any(|arg| matches!(*arg, "-v" | "--verbose"));
            all_options(&rest, |arg| {
                matches!(
                    arg,
                    "-s" | "--short"
                        | "-b"
                        | "--branch"
                        | "--porcelain"
                        | "--long"
                        | "-v"
                        | "--verbose"
                        | "-z"
                        | "--show-stash"
                        | "--ahead-behind"
                        | "--no-ahead-behind"
                        | "--renames"
                        | "--no-renames"
                        | "-u"
                        | "-uno"
                        | "-unormal"
                        | "-uall"
                        | "--ignored"
                        | "--no-column"
                ) || ["--porcelain=", "--untracked-files", "--ignored=", "--ignore-submodules"]
                    .iter()
                    .any(|p| arg.starts_with(p))
            })
        }
        "diff" => {
            effects.unnamed_history = rest.iter().any(|arg| matches!(*arg, "--cached" | "--staged"));
            // Given paths outside the work tree, `git diff` quietly becomes `git diff --no-index`, reading any
            // file: every operand is judged as a path it may read (a revision like `HEAD~1` is a harmless one).
            for operand in operands(&rest) {
                // Two trees compared print every file below them: what is compared must be a file.
                if !read_from_history(operand, true, &mut effects)? {
                    effects.reads.push(PathArg { text: operand.to_owned(), glob: false });
                }
            }
            all_options(&rest, diff_option)
        }
        "log" | "show" | "shortlog" => {
            for operand in operands(&rest) {
                read_from_history(operand, false, &mut effects)?;
            }
            let traced = rest.iter().take_while(|arg| **arg != "--").filter(|arg| arg.starts_with("-L"));
            for word in traced {
                let files = history_files(word).into_iter();
                effects.history_reads.extend(files.map(|path| HistoryRead { path: path.to_owned(), file_only: false }));
            }
            all_options(&rest, |arg| {
                diff_option(arg)
                    || LOG_OPTIONS.contains(&arg)
                    || (LOG_VALUE_PREFIXES.iter().any(|prefix| arg.starts_with(prefix) && arg.len() > prefix.len())
                        && !verifies_signatures(arg))
                    || (arg.len() > 1 && arg.starts_with('-') && arg[1..].chars().all(|c| c.is_ascii_digit()))
            })
        }
        "rev-parse" => all_options(&rest, |arg| {
            matches!(
                arg,
                "--show-toplevel"
                    | "--git-dir"
                    | "--absolute-git-dir"
                    | "--is-inside-work-tree"
                    | "--is-inside-git-dir"
                    | "--is-bare-repository"
                    | "--show-prefix"
                    | "--show-cdup"
                    | "--verify"
                    | "-q"
                    | "--quiet"
                    | "--abbrev-ref"
                    | "--short"
                    | "--symbolic"
                    | "--symbolic-full-name"
                    | "--git-common-dir"
                    | "--show-superproject-working-tree"
            ) || arg.starts_with("--short=")
        }),
        "ls-files" => all_options(&rest, |arg| {
            matches!(
                arg,
                "-c" | "--cached"
                    | "-d"
                    | "--deleted"
                    | "-m"
                    | "--modified"
                    | "-o"
                    | "--others"
                    | "-i"
                    | "--ignored"
                    | "-s"
                    | "--stage"
                    | "-u"
                    | "--unmerged"
                    | "-k"
                    | "--killed"
                    | "-z"
                    | "-t"
                    | "-v"
                    | "-f"
                    | "--exclude-standard"
                    | "--directory"
                    | "--no-empty-directory"
                    | "--full-name"
                    | "--error-unmatch"
                    | "--eol"
                    | "--deduplicate"
                    | "--sparse"
            ) || arg.starts_with("--exclude=")
                || arg.starts_with("--abbrev")
        }),
        "blame" => {
            // Without a revision git blame reads the file in the work tree (its uncommitted lines), through a
            // link on the way that git diff would refuse: every operand is judged as a path read (a revision's
            // name read as a path inside the workspace is harmless).
            let read =
                |effects: &mut Effects, text: &str| effects.reads.push(PathArg { text: text.to_owned(), glob: false });
            let mut i = 0;
            let mut fine = true;
            while let Some(arg) = rest.get(i) {
                i += 1;
                match *arg {
                    "--" => {
                        for file in &rest[i..] {
                            read(&mut effects, file);
                        }
                        break;
                    }
                    "-L" | "--date" => i += 1,
                    "--contents" => {
                        if let Some(file) = rest.get(i) {
                            effects.reads.push(PathArg { text: (*file).to_owned(), glob: false });
                        }
                        i += 1;
                    }
                    "-w" | "-M" | "-C" | "-e" | "-s" | "-l" | "-t" | "-f" | "-n" | "-p" | "--porcelain"
                    | "--line-porcelain" | "--show-email" | "--show-name" | "--show-number" | "--root" | "-c"
                    | "--incremental" | "--abbrev" => {}
                    other if other.starts_with("--contents=") => {
                        effects.reads.push(PathArg { text: other["--contents=".len()..].to_owned(), glob: false })
                    }
                    other
                        if other.starts_with("-L")
                            || other.starts_with("--date=")
                            || other.starts_with("--abbrev=") => {}
                    other if other.starts_with('-') => fine = false,
                    operand => read(&mut effects, operand),
                }
            }
            fine
        }
        "branch" => rest.iter().all(|arg| {
            matches!(
                *arg,
                "-a" | "-v"
                    | "-vv"
                    | "-r"
                    | "--all"
                    | "--verbose"
                    | "--remotes"
                    | "--list"
                    | "-l"
                    | "--show-current"
                    | "--merged"
                    | "--no-merged"
                    | "--no-color"
                    | "--color"
            )
        }),
        "remote" => rest.iter().all(|arg| matches!(*arg, "-v" | "--verbose")),
        "tag" => {
            rest.is_empty() || (matches!(rest[0], "-l" | "--list") && rest[1..].iter().all(|a| !a.starts_with('-')))
        }
        _ => return Err(format!("`git {sub}` is not a git command tandem knows to only read")),
    };
    if ok { Ok(effects) } else { Err(format!("`git {sub}` with an option tandem doesn't know to be safe")) }
}

/// When `operand` names a file in a revision or the index (`HEAD~1:.env`, `:.env`, `:2:src/a.rs`), adds it to
/// what the command reads out of the history (`file_only`: it must be a file, not a tree). `Ok(false)` for any
/// other operand; a revision found by a search (`HEAD^{/fix: it}`, `:/message`) can't be told from a path and is not
/// known to read nothing denied.
fn read_from_history(operand: &str, file_only: bool, effects: &mut Effects) -> Result<bool, String> {
    if operand.contains('{') && operand.contains(':') || operand.starts_with(":/") {
        return Err(format!("`{operand}` names a revision by a search, which could be a file's path"));
    }
    if operand.contains(':') && is_range(operand) {
        return Err(format!("`{operand}` is a range of files out of the history, which git splits as tandem can't"));
    }
    // An object's id or a `^{tree}`/`^{blob}` peel can be a file's or a tree's content, named by no path.
    let peeled = operand.contains("^{");
    let object_id = operand.len() >= 4 && operand.bytes().all(|byte| byte.is_ascii_hexdigit());
    effects.unnamed_history |= peeled || object_id;
    let Some(path) = history_files(operand).pop() else { return Ok(false) };
    effects.history_reads.push(HistoryRead { path: path.to_owned(), file_only });
    Ok(true)
}

/// Whether `operand` holds `..` between two revisions (`A..B`, `A...B`), not as a path's `..` component.
fn is_range(operand: &str) -> bool {
    let bytes = operand.as_bytes();
    operand.match_indices("..").any(|(at, _)| {
        let before = at.checked_sub(1).map(|i| bytes[i]);
        let after = bytes.get(at + 2).copied();
        !(matches!(before, None | Some(b'/' | b':')) && matches!(after, None | Some(b'/')))
    })
}

/// The files a word of a git command names out of the history or the index, as written: the path of `REV:path`,
/// `:path` or `:N:path` (a stage of the index), and each name `-L<range>:<file>` may trace (a range can hold colons
/// itself: `-L:funcname:file`, `-L/a:b/,+3:file`). Other options name none.
pub fn history_files(word: &str) -> Vec<&str> {
    if let Some(range) = word.strip_prefix("-L") {
        return range.match_indices(':').map(|(at, _)| &range[at + 1..]).collect();
    }
    if word.starts_with('-') {
        return Vec::new();
    }
    let Some(colon) = word.find(':') else { return Vec::new() };
    let path = &word[colon + 1..];
    match path.as_bytes() {
        [stage, b':', ..] if colon == 0 && stage.is_ascii_digit() => vec![&path[2..]],
        _ => vec![path],
    }
}

/// The operands: words that are not options, and everything after `--`.
fn operands<'a>(args: &'a [&'a str]) -> impl Iterator<Item = &'a str> + 'a {
    let end = args.iter().position(|arg| *arg == "--").unwrap_or(args.len());
    let before = args[..end].iter().copied().filter(|arg| !arg.starts_with('-'));
    before.chain(args.get(end + 1..).unwrap_or_default().iter().copied())
}

/// Every word before `--` that starts with `-` passes `allowed`; revisions and paths (operands) are text: git
/// refuses paths outside its repository.
fn all_options(args: &[&str], allowed: impl Fn(&str) -> bool) -> bool {
    args.iter().take_while(|arg| **arg != "--").filter(|arg| arg.starts_with('-')).all(|arg| allowed(arg))
}

fn diff_option(arg: &str) -> bool {
    DIFF_OPTIONS.contains(&arg)
        || DIFF_VALUE_PREFIXES.iter().any(|prefix| arg.starts_with(prefix) && arg.len() > prefix.len())
}
