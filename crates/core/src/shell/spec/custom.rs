//! Tools whose arguments are not plain options and operands: `echo`, `printf`, `test`, `command`, `env`,
//! `find` (an expression language), `git` (subcommands) and `jq` (a filter language).

use super::{Effects, PathArg, path_arg};
use crate::shell::words::{Seg, Word};

/// `Some` when `program` is one of these tools.
pub(super) fn understand(program: &str, args: &[Word]) -> Option<Result<Effects, String>> {
    let result = match program {
        "echo" => echo(args),
        "printf" => printf(args),
        "test" | "[" => test(program, args),
        "command" => command(args),
        "env" => env(args),
        "find" => find(args),
        "git" => super::git::understand(args),
        "jq" => jq(args),
        _ => return None,
    };
    Some(result)
}

/// Literal texts of all words, or why not.
fn plain_all(args: &[Word]) -> Result<Vec<String>, String> {
    args.iter()
        .map(|word| word.plain_text().ok_or_else(|| format!("`{}` is only known when the command runs", word.text())))
        .collect()
}

/// `echo`: prints its arguments. A variable's value can't change what it does; an unquoted glob lists a
/// directory, which is a read.
fn echo(args: &[Word]) -> Result<Effects, String> {
    let mut effects = Effects::default();
    for word in args {
        if word.globbed {
            return Err(format!("`{}` is names of files only known when the command runs", word.text()));
        }
        if word.segs.iter().any(|seg| matches!(seg, Seg::Glob(_))) {
            if word.has_opaque() {
                return Err(format!("`{}` is only known when the command runs", word.text()));
            }
            effects.reads.push(PathArg { text: word.text(), glob: true });
        }
    }
    Ok(effects)
}

/// `printf FORMAT ARGS`: never `-v` (it assigns, evaluating an array subscript).
fn printf(args: &[Word]) -> Result<Effects, String> {
    let texts = plain_all(args)?;
    if texts.first().is_some_and(|first| first.starts_with('-') && first != "--") {
        return Err("`printf` with an option (`-v` assigns a variable)".into());
    }
    Ok(Effects::default())
}

/// The operators of `test` / `[` (and `[[`), which are not operands.
const TEST_OPERATORS: &[&str] = &[
    "!", "(", ")", "-a", "-o", "=", "==", "!=", "<", ">", "-eq", "-ne", "-lt", "-le", "-gt", "-ge", "-nt", "-ot",
    "-ef", "-e", "-f", "-d", "-r", "-w", "-x", "-s", "-L", "-h", "-p", "-S", "-b", "-c", "-g", "-u", "-k", "-O", "-G",
    "-N", "-t", "-z", "-n",
];

/// `test` / `[`: file and string tests. Not `-v`/`-R` (they evaluate an array subscript, which can run
/// commands) and no expansions (their value could be such an operator). Every operand counts as a path read:
/// `test -e`, `-nt`, `-ot` probe the file system, and a string that is not a path resolves inside the
/// workspace, where reading is allowed anyway — so probing outside asks, as `stat` does.
fn test(program: &str, args: &[Word]) -> Result<Effects, String> {
    let mut texts = plain_all(args)?;
    if program == "[" && texts.pop().as_deref() != Some("]") {
        return Err("`[` without its closing `]`".into());
    }
    if let Some(operator) = texts.iter().find(|text| matches!(text.as_str(), "-v" | "-R")) {
        return Err(format!("`{program} {operator}` evaluates a variable name, which can run commands"));
    }
    if args.iter().any(|word| word.segs.iter().any(|seg| matches!(seg, Seg::Glob(_)))) {
        return Err(format!("`{program}` with a glob pattern"));
    }
    let reads = texts.into_iter().filter(|text| !TEST_OPERATORS.contains(&text.as_str()) && !text.is_empty());
    Ok(Effects { reads: reads.map(|text| PathArg { text, glob: false }).collect(), ..Effects::default() })
}

/// `command -v NAME` / `command -V NAME` only describe commands; a NAME with a `/` is a path it probes.
fn command(args: &[Word]) -> Result<Effects, String> {
    let texts = plain_all(args)?;
    let (options, names): (Vec<&String>, Vec<&String>) = texts.iter().partition(|text| text.starts_with('-'));
    let describes = !options.is_empty()
        && options.iter().all(|option| matches!(option.as_str(), "-v" | "-V" | "-p" | "-pv" | "-vp" | "-pV" | "-Vp"))
        && options.iter().any(|option| option.contains(['v', 'V']));
    if !describes || names.is_empty() {
        return Err("`command` runs a command".into());
    }
    let reads = names.into_iter().filter(|name| name.contains('/'));
    Ok(Effects { reads: reads.map(|name| PathArg { text: name.clone(), glob: false }).collect(), ..Effects::default() })
}

/// `env` alone prints the environment (with secrets removed: see `shell_env`).
fn env(args: &[Word]) -> Result<Effects, String> {
    let texts = plain_all(args)?;
    if texts.iter().all(|text| matches!(text.as_str(), "-0" | "--null")) {
        Ok(Effects::default())
    } else {
        Err("`env` with arguments runs a command or changes the environment".into())
    }
}

/// `find`: start paths are read; the expression may only use tests and printing actions.
#[expect(clippy::too_many_lines, reason = "find's options, one arm each: a table like spec/table.rs would read better")]
fn find(args: &[Word]) -> Result<Effects, String> {
    const NO_ARG: &[&str] = &[
        "-print",
        "-print0",
        "-prune",
        "-quit",
        "-empty",
        "-true",
        "-false",
        "-depth",
        "-d",
        "-mount",
        "-xdev",
        "-noleaf",
        "-daystart",
        "-nouser",
        "-nogroup",
        "-not",
        "!",
        "(",
        ")",
        ",",
        "-a",
        "-and",
        "-o",
        "-or",
        "-ls",
    ];
    const TEXT_ARG: &[&str] = &[
        "-name",
        "-iname",
        "-path",
        "-ipath",
        "-wholename",
        "-iwholename",
        "-regex",
        "-iregex",
        "-type",
        "-maxdepth",
        "-mindepth",
        "-size",
        "-mtime",
        "-mmin",
        "-atime",
        "-amin",
        "-ctime",
        "-cmin",
        "-user",
        "-group",
        "-uid",
        "-gid",
        "-perm",
        "-links",
        "-inum",
        "-printf",
        "-regextype",
        "-lname",
        "-ilname",
        "-used",
        "-newermt",
        "-newerat",
        "-newerct",
    ];
    const PATH_ARG: &[&str] = &["-newer", "-anewer", "-cnewer", "-samefile"];
    // These look at what a symlink points to, wherever that is: run unasked in a tree with a link to
    // `~/.ssh/id_rsa`, they would say whether it exists (and a user's tree may hold such links).
    const THROUGH_LINKS: &[&str] = &["-xtype", "-readable", "-writable", "-executable"];
    let mut effects = Effects::default();
    let mut i = 0;
    while let Some(text) = args.get(i).and_then(Word::plain_text) {
        match text.as_str() {
            "-P" => i += 1,
            "-O0" | "-O1" | "-O2" | "-O3" => i += 1,
            "-H" | "-L" => return Err("`find -L`/`-H` follows symlinks out of the tree".into()),
            _ => break,
        }
    }
    let mut starts = 0;
    while let Some(word) = args.get(i) {
        let text = word.text();
        if text.starts_with('-') || matches!(text.as_str(), "(" | ")" | "!" | ",") {
            break;
        }
        effects.reads.push(path_arg(word)?);
        starts += 1;
        i += 1;
    }
    if starts == 0 {
        effects.reads.push(PathArg { text: ".".into(), glob: false });
    }
    while let Some(word) = args.get(i) {
        let Some(text) = word.plain_text() else {
            return Err(format!("`{}` in a find expression is expanded by the shell first", word.text()));
        };
        i += 1;
        if THROUGH_LINKS.contains(&text.as_str()) {
            return Err(format!("`find {text}` looks through symlinks, at files outside the tree too"));
        }
        if NO_ARG.contains(&text.as_str()) {
            continue;
        }
        let takes_path = PATH_ARG.contains(&text.as_str());
        if !takes_path && !TEXT_ARG.contains(&text.as_str()) {
            return Err(format!("`find {text}` is not a test tandem knows to be safe"));
        }
        let Some(value) = args.get(i).and_then(Word::plain_text) else {
            return Err(format!("`find {text}` needs a literal value"));
        };
        i += 1;
        if text == "-printf" && prints_link_target_type(&value) {
            return Err("`find -printf` with `%Y` looks through symlinks, at files outside the tree too".into());
        }
        if takes_path {
            effects.reads.push(PathArg { text: value, glob: false });
        }
    }
    Ok(effects)
}

/// Whether a `-printf` format has a `%Y` directive (flags and widths allowed between), the type of what a
/// symlink points to.
fn prints_link_target_type(format: &str) -> bool {
    let mut chars = format.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            continue;
        }
        let directive = chars.by_ref().find(|c| !matches!(c, '-' | '+' | ' ' | '#' | '0'..='9' | '.'));
        if directive == Some('Y') {
            return true;
        }
    }
    false
}

/// `jq [options] FILTER [FILES]`: files are read; the filter may not import modules (which reads files
/// elsewhere).
fn jq(args: &[Word]) -> Result<Effects, String> {
    const FLAGS: &[&str] = &[
        "-n",
        "-r",
        "-j",
        "-a",
        "-s",
        "-c",
        "-C",
        "-M",
        "-S",
        "-e",
        "-R",
        "--tab",
        "--raw-output",
        "--join-output",
        "--ascii-output",
        "--slurp",
        "--compact-output",
        "--color-output",
        "--monochrome-output",
        "--sort-keys",
        "--exit-status",
        "--raw-input",
        "--null-input",
        "--seq",
        "--stream",
        "--stream-errors",
        "--raw-output0",
    ];
    let mut effects = Effects::default();
    // Each operand, and whether `--args`/`--jsonargs` came before it: jq reads an operand as an argument only
    // from there on (`jq . FILE --args` still reads FILE).
    let mut operands: Vec<(&Word, bool)> = Vec::new();
    let mut positional_are_args = false;
    let mut i = 0;
    while let Some(word) = args.get(i) {
        i += 1;
        let Some(text) = word.plain_text() else {
            if word.text().starts_with('-') || word.has_opaque() {
                return Err(format!("`{}` is only known when the command runs", word.text()));
            }
            operands.push((word, positional_are_args));
            continue;
        };
        // After `--args` the operands are arguments, but options are still options (`--rawfile x FILE` reads).
        if !text.starts_with('-') || text == "-" {
            operands.push((word, positional_are_args));
            continue;
        }
        let mut take = |n: usize| -> Result<Vec<String>, String> {
            let values: Option<Vec<String>> = (0..n).map(|k| args.get(i + k).and_then(Word::plain_text)).collect();
            i += n;
            values.ok_or_else(|| format!("`jq {text}` needs literal values"))
        };
        match text.as_str() {
            flag if FLAGS.contains(&flag) => {}
            "--indent" => drop(take(1)?),
            "--arg" | "--argjson" => drop(take(2)?),
            "--rawfile" | "--slurpfile" => {
                let values = take(2)?;
                effects.reads.push(PathArg { text: values[1].clone(), glob: false });
            }
            "-f" | "--from-file" => {
                // The filter's text (and so its imports) would only be known by reading the file.
                return Err("`jq -f` runs a filter from a file".into());
            }
            "--args" | "--jsonargs" => positional_are_args = true,
            _ if text.len() > 2 && !text.starts_with("--") && text[1..].chars().all(|c| "nrjascCMSeR".contains(c)) => {}
            other => return Err(format!("`jq {other}` is not an option tandem knows to be safe")),
        }
    }
    let mut operands = operands.into_iter();
    let Some((filter, _)) = operands.next() else { return Ok(effects) };
    let filter = filter.plain_text().ok_or("the jq filter is expanded by the shell")?;
    if ["import", "include", "modulemeta", "input_filename", "$__prog"].iter().any(|word| filter.contains(word)) {
        return Err("a jq filter that loads modules or names files".into());
    }
    for (word, is_argument) in operands {
        if !is_argument {
            effects.reads.push(path_arg(word)?);
        }
    }
    Ok(effects)
}
