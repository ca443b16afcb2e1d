//! What a simple command does, understood word by word — or not at all.
//!
//! A command may run without a rule (read-only, or a plain filesystem command in `acceptEdits`) only when every
//! word of it is understood: the program has a [`Spec`] (an allowlist of its options, read with the tool's own
//! rules: clustered short options, `-oVALUE`, `--opt=VALUE`, GNU long-option prefixes, `--` ending options), and
//! every operand has a known role — a path it reads, a path it writes, or plain text. Anything else (an unknown
//! option, an ambiguous abbreviation, an expansion whose value is decided at run time, a construct the tables
//! don't model) makes [`understand`] return `Err` with the reason, and the policy asks.

mod custom;
mod git;
mod table;

pub use git::history_files;

use super::words::{Seg, Word};

/// What an option's value or an operand is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Role {
    /// A path the command reads (a file, or a directory it lists or walks).
    Read,
    /// A path the command creates or writes.
    Write,
    /// Text that names no file: a pattern, a number, a format.
    Text,
    /// A short option's optional text value, only attached (`x?` in a spec).
    Optional,
}

/// Whether an option takes a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Arg {
    No,
    Required(Role),
    /// Only as `--opt=VALUE` (GNU optional arguments).
    Optional(Role),
}

/// A path operand as written (quotes removed), with whether it holds an unquoted glob to expand.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathArg {
    pub text: String,
    /// Unquoted `*`, `?` or `[…]`: the shell replaces it with the matching names (the policy expands it the same
    /// way and judges every match).
    pub glob: bool,
}

/// A file git reads out of the repository's history or index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HistoryRead {
    /// As written after the colon: from the top of the work tree, or from the working directory when it starts with
    /// `./` or `../`, as git reads it.
    pub path: String,
    /// `git diff` compares it: a tree would print every file below it, a denied one too, so it must be a file.
    pub file_only: bool,
}

impl HistoryRead {
    /// Whether the path is the working directory's (`HEAD:./x`), not the work tree top's.
    pub fn from_here(&self) -> bool {
        let path = self.path.as_str();
        path.starts_with("./") || path.starts_with("../") || path == "." || path == ".."
    }
}

/// `cp` and `mv`: where sources land depends on the file system (is the destination a directory?), so the
/// policy works the targets out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transfer {
    pub sources: Vec<PathArg>,
    pub dest: String,
    /// `-t DIR` (`Some(true)`), `-T` (`Some(false)`), or decided by whether `dest` is a directory (`None`).
    pub into_dir: Option<bool>,
    /// `mv`: the sources are removed too.
    pub moves: bool,
    /// Symbolic links among the sources are recreated as links (`mv`, `cp -a`/`-d`/`-P`/`-r`), not followed.
    pub keeps_links: bool,
    /// `-b`/`--backup`: a replaced target is kept next to it as `NAME~` or `NAME.~N~`.
    pub backups: bool,
}

/// What an understood command does to the file system.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Effects {
    pub reads: Vec<PathArg>,
    pub writes: Vec<PathArg>,
    pub transfer: Option<Transfer>,
    /// `git`: it also follows the repository's configuration, which must not name programs to run.
    pub repository_config: bool,
    /// `git`: files it reads out of the repository's history or index (`HEAD~1:.env`, `:.env`), judged as reads
    /// of their paths in the work tree, since a denied file once committed is still the file the rule denies.
    pub history_reads: Vec<HistoryRead>,
    /// `git`: it may print file contents out of the history or the index without naming the files (`git diff
    /// --cached`, `git status -v`, an object's id, `HEAD^{tree}`), so no path can be judged.
    pub unnamed_history: bool,
    /// Option words with unquoted glob characters (`--include=*.rs`): literal only while no file matches them.
    pub literal_globs: Vec<String>,
    /// The reads must be files, not directories (`diff` of two directories reads the files in them, following
    /// symlinks there).
    pub files_only: bool,
}

impl Effects {
    /// Whether the command changes anything (else it is read-only).
    pub fn mutates(&self) -> bool {
        !self.writes.is_empty() || self.transfer.is_some()
    }
}

/// How a tool's operands are read.
#[derive(Clone, Copy, Debug)]
enum Operands {
    /// Every operand is a path read (`-` is standard input).
    Read,
    /// Every operand is a file read; a directory operand asks.
    ReadFiles,
    /// At most this many operands, all read (`uniq IN OUT` writes its second).
    ReadAtMost(usize),
    /// Every operand is text.
    Text,
    /// No operands.
    Nothing,
    /// The first operand is a pattern unless one of these options gave it; the rest are read.
    PatternThenRead(&'static [&'static str]),
    /// `date`: at most one operand, a `+FORMAT` (anything else sets the clock).
    DateFormat,
    /// Every operand is a path created or written (`mkdir`, `touch`).
    Write,
    /// `cp` / `mv` (`true`: moves).
    Transfer(bool),
}

/// A tool's options and operands.
struct Spec {
    /// Short options: letters without a value, `x:r` / `x:w` / `x:t` for one with a value of that role, and
    /// `x?` for one whose optional value can only be attached (`-Iseconds`), separated by spaces.
    short: &'static str,
    /// Allowed long options without the dashes: `name`, `name=r|w|t` (a value), `name[=r|w|t]` (optional value).
    long: &'static str,
    /// Every long option the tool knows, allowed or not (for GNU prefix abbreviations); empty: exact names only.
    known: &'static str,
    /// `-5` means a count (`head -5`, `tail -5`).
    numeric: bool,
    /// The tool reads short options one to a word (`tree -Lo` gives `-L` and `-o` each the next word): a
    /// cluster asks.
    single_letters: bool,
    operands: Operands,
}

/// A parsed option: its canonical name (`-n`, `--lines`) and value.
struct Parsed {
    options: Vec<(String, Option<String>)>,
    /// Operands, and the values of options with a path role, in order, with their roles.
    paths: Vec<(Role, PathArg)>,
    operands: Vec<Word>,
    literal_globs: Vec<String>,
}

/// What `words` (a simple command; `words[0]` the program as a bare name) does, or why it isn't understood.
pub(super) fn understand(words: &[Word]) -> Result<Effects, String> {
    let Some(program) = words.first().and_then(Word::plain_text) else {
        return Err("its program is not literal text".into());
    };
    if program.contains('/') || !program.is_ascii() {
        return Err(format!("`{program}` is run by path, which could be any program"));
    }
    let args = &words[1..];
    // binutils read more arguments from `@FILE`, anywhere on the line; a glob may match a name that starts with
    // `@` (`strings ?rsp` with `@rsp` there), so a glob is refused too.
    if program == "strings"
        && args.iter().any(|word| {
            word.text().starts_with('@') || word.globbed || word.segs.iter().any(|seg| matches!(seg, Seg::Glob(_)))
        })
    {
        return Err("`strings @FILE` reads its arguments from a file, and a glob may name one".into());
    }
    // bash expands `~` after `=` or `:` in an argument that looks like an assignment (`a=b:~/x`).
    if let Some(word) = args.iter().find(|word| {
        let text = word.text();
        super::words::is_assignment(&text) && (text.contains("=~") || text.contains(":~"))
    }) {
        return Err(format!("`{}` has a `~` that bash expands", word.text()));
    }
    if let Some(effects) = custom::understand(&program, args) {
        return effects;
    }
    let Some(spec) = table::spec(&program) else {
        return Err(format!("`{program}` is not a command tandem knows to be read-only"));
    };
    let parsed = parse(&program, &spec, args)?;
    operands(&program, &spec, parsed)
}

/// Applies the operand rule of a spec to what [`parse`] found.
fn operands(program: &str, spec: &Spec, parsed: Parsed) -> Result<Effects, String> {
    let mut effects = Effects { literal_globs: parsed.literal_globs.clone(), ..Effects::default() };
    let texts: Vec<PathArg> = parsed.operands.iter().map(path_arg).collect::<Result<_, _>>()?;
    let count = texts.len();
    let text_operands = match spec.operands {
        Operands::Text | Operands::DateFormat => count,
        Operands::PatternThenRead(givers) => {
            usize::from(!parsed.options.iter().any(|(name, _)| givers.contains(&name.as_str())))
        }
        _ => 0,
    };
    if let Some(glob) = texts.iter().take(text_operands).find(|arg| arg.glob) {
        return Err(format!("`{}` is a pattern the shell expands into file names first", glob.text));
    }
    match spec.operands {
        Operands::Read => effects.reads.extend(texts),
        Operands::ReadFiles => {
            effects.files_only = true;
            effects.reads.extend(texts);
        }
        Operands::ReadAtMost(_) if texts.iter().any(|arg| arg.glob) => {
            return Err(format!("`{program}` of a glob, which may name more files than it reads"));
        }
        Operands::ReadAtMost(max) if count <= max => effects.reads.extend(texts),
        Operands::ReadAtMost(max) => {
            return Err(format!("`{program}` with more than {max} operand(s) writes to the last one"));
        }
        Operands::Text => {}
        Operands::Nothing if count == 0 => {}
        Operands::Nothing => return Err(format!("`{program}` given operands")),
        Operands::PatternThenRead(givers) => {
            let given = parsed.options.iter().any(|(name, _)| givers.contains(&name.as_str()));
            effects.reads.extend(texts.into_iter().skip(usize::from(!given)));
        }
        Operands::DateFormat => {
            if count > 1 || texts.iter().any(|arg| !arg.text.starts_with('+')) {
                return Err("`date` with an operand other than +FORMAT sets the clock".into());
            }
        }
        Operands::Write => {
            if count == 0 {
                return Err(format!("`{program}` without operands"));
            }
            if texts.iter().any(|arg| arg.glob) {
                return Err(format!("`{program}` of a glob pattern"));
            }
            effects.writes.extend(texts);
        }
        Operands::Transfer(moves) => effects.transfer = Some(transfer(program, &parsed, texts, moves)?),
    }
    for (role, arg) in parsed.paths {
        match role {
            Role::Read => effects.reads.push(arg),
            Role::Write => effects.writes.push(arg),
            Role::Text | Role::Optional => {}
        }
    }
    Ok(effects)
}

fn transfer(program: &str, parsed: &Parsed, mut texts: Vec<PathArg>, moves: bool) -> Result<Transfer, String> {
    let target_dir = parsed
        .options
        .iter()
        .find(|(name, _)| name == "-t" || name == "--target-directory")
        .and_then(|(_, v)| v.clone());
    let no_target = parsed.options.iter().any(|(name, _)| name == "-T" || name == "--no-target-directory");
    let (dest, into_dir) = match target_dir {
        Some(dir) => (dir, Some(true)),
        None => {
            let Some(last) = texts.pop() else { return Err(format!("`{program}` without a destination")) };
            if last.glob {
                return Err(format!("`{program}` to a glob pattern"));
            }
            (last.text, if no_target { Some(false) } else { None })
        }
    };
    if texts.is_empty() {
        return Err(format!("`{program}` without a source"));
    }
    if no_target && texts.len() > 1 {
        return Err(format!("`{program} -T` with several sources"));
    }
    let keeps_links = moves
        || parsed.options.iter().any(|(name, _)| {
            matches!(name.as_str(), "-a" | "-d" | "-P" | "-r" | "-R" | "--archive" | "--no-dereference" | "--recursive")
        });
    let backups = parsed.options.iter().any(|(name, _)| name == "-b" || name == "--backup");
    Ok(Transfer { sources: texts, dest, into_dir, moves, keeps_links, backups })
}

/// An operand word as a path: literal text, or literal text with unquoted glob characters.
fn path_arg(word: &Word) -> Result<PathArg, String> {
    if word.has_opaque() {
        return Err(format!("`{}` is only known when the command runs", word.text()));
    }
    let glob = word.segs.iter().any(|seg| matches!(seg, Seg::Glob(_)));
    Ok(PathArg { text: word.text(), glob })
}

/// The literal text of an option word, or why it isn't one.
fn literal(word: &Word) -> Result<String, String> {
    word.plain_text().ok_or_else(|| format!("`{}` is only known when the command runs", word.text()))
}

/// Reads `args` against a spec, GNU style: options anywhere before `--` (they may follow operands), clustered
/// short options, values attached or in the next word, long options by exact name or unique prefix.
fn parse(program: &str, spec: &Spec, args: &[Word]) -> Result<Parsed, String> {
    let mut parsed = Parsed { options: Vec::new(), paths: Vec::new(), operands: Vec::new(), literal_globs: Vec::new() };
    let mut i = 0;
    let mut options_done = false;
    while i < args.len() {
        let word = &args[i];
        i += 1;
        let starts_with_dash = word.segs.first().is_some_and(|seg| match seg {
            Seg::Text(text) | Seg::Glob(text) => text.starts_with('-'),
            Seg::Opaque(_) => false,
        });
        if starts_with_dash && !word.is_plain() && !word.has_opaque() {
            // `--include=*.rs`: bash expands it only if a file has that very name; the policy checks none does.
            parsed.literal_globs.push(word.text());
        }
        let Some(text) = word
            .plain_text()
            .or_else(|| (starts_with_dash && !word.has_opaque()).then(|| word.text()))
            .or_else(|| (!starts_with_dash).then(String::new))
        else {
            return Err(format!("`{}` is only known when the command runs", word.text()));
        };
        if options_done || !starts_with_dash || text == "-" {
            if !word.is_plain() && word.has_opaque() {
                return Err(format!("`{}` is only known when the command runs", word.text()));
            }
            parsed.operands.push(word.clone());
            continue;
        }
        if text == "--" {
            options_done = true;
            continue;
        }
        if let Some(long) = text.strip_prefix("--") {
            let (name, value) = match long.split_once('=') {
                Some((name, value)) => (name, Some(value.to_owned())),
                None => (long, None),
            };
            let (name, arg) = long_option(program, spec, name)?;
            let value = match (arg, value) {
                (Arg::No, Some(_)) => return Err(format!("`--{name}` of `{program}` takes no value")),
                (Arg::No, None) | (Arg::Optional(_), None) => None,
                (Arg::Required(role) | Arg::Optional(role), Some(value)) => Some((role, value)),
                (Arg::Required(role), None) => {
                    let next = args.get(i).ok_or_else(|| format!("`--{name}` of `{program}` needs a value"))?;
                    i += 1;
                    Some((role, literal(next)?))
                }
            };
            record(&mut parsed, format!("--{name}"), value);
            continue;
        }
        let cluster: Vec<char> = text[1..].chars().collect();
        if spec.single_letters && cluster.len() > 1 {
            return Err(format!("`{text}`: `{program}` doesn't read clustered options the usual way"));
        }
        if spec.numeric && cluster.iter().all(char::is_ascii_digit) {
            parsed.options.push(("-n".into(), Some(text[1..].to_owned())));
            continue;
        }
        let mut k = 0;
        while k < cluster.len() {
            let letter = cluster[k];
            k += 1;
            match short_option(spec, letter) {
                None => return Err(format!("`-{letter}` is not an option of `{program}` tandem knows to be safe")),
                Some(None) => record(&mut parsed, format!("-{letter}"), None),
                // An optional value is only ever the rest of the word (`date -Iseconds`, `od -w16`).
                Some(Some(Role::Optional)) => {
                    let rest: String = cluster[k..].iter().collect();
                    record(&mut parsed, format!("-{letter}"), (!rest.is_empty()).then_some((Role::Text, rest)));
                    break;
                }
                Some(Some(role)) => {
                    let value = if k < cluster.len() {
                        cluster[k..].iter().collect()
                    } else {
                        let next = args.get(i).ok_or_else(|| format!("`-{letter}` of `{program}` needs a value"))?;
                        i += 1;
                        literal(next)?
                    };
                    record(&mut parsed, format!("-{letter}"), Some((role, value)));
                    break;
                }
            }
        }
    }
    Ok(parsed)
}

fn record(parsed: &mut Parsed, name: String, value: Option<(Role, String)>) {
    if let Some((role, value)) = &value
        && *role != Role::Text
    {
        parsed.paths.push((*role, PathArg { text: value.clone(), glob: false }));
    }
    parsed.options.push((name, value.map(|(_, value)| value)));
}

/// `Some(None)`: a flag; `Some(Some(role))`: takes a value; `None`: not allowed.
fn short_option(spec: &Spec, letter: char) -> Option<Option<Role>> {
    for token in spec.short.split_whitespace() {
        if let Some(name) = token.strip_suffix('?') {
            if name.chars().eq([letter]) {
                return Some(Some(Role::Optional));
            }
            continue;
        }
        match token.split_once(':') {
            Some((name, role)) if name.chars().eq([letter]) => return Some(Some(role_of(role))),
            Some(_) => {}
            None if token.contains(letter) => return Some(None),
            None => {}
        }
    }
    None
}

/// Resolves a long option name (exact, or a unique prefix among every option the tool knows) to an allowed
/// option.
fn long_option(program: &str, spec: &Spec, name: &str) -> Result<(String, Arg), String> {
    let allowed = |wanted: &str| -> Option<Arg> {
        spec.long.split_whitespace().chain(["help", "version"]).find_map(|token| {
            let (token_name, arg) = parse_long_token(token);
            (token_name == wanted).then_some(arg)
        })
    };
    if let Some(arg) = allowed(name) {
        return Ok((name.to_owned(), arg));
    }
    let known: Vec<&str> = spec
        .known
        .split_whitespace()
        .chain(spec.long.split_whitespace().map(|token| parse_long_token(token).0))
        .collect();
    if known.contains(&name) {
        return Err(format!("`--{name}` of `{program}` can write files or run programs"));
    }
    if spec.known.is_empty() || name.is_empty() {
        return Err(format!("`--{name}` is not an option of `{program}` tandem knows to be safe"));
    }
    let mut candidates: Vec<&str> = known.iter().copied().filter(|option| option.starts_with(name)).collect();
    candidates.sort_unstable();
    candidates.dedup();
    match candidates.as_slice() {
        [only] => match allowed(only) {
            Some(arg) => Ok(((*only).to_owned(), arg)),
            None => {
                Err(format!("`--{name}` abbreviates `--{only}` of `{program}`, which can write files or run programs"))
            }
        },
        [] => Err(format!("`--{name}` is not an option of `{program}` tandem knows to be safe")),
        _ => Err(format!("`--{name}` is an ambiguous abbreviation for `{program}`")),
    }
}

fn parse_long_token(token: &'static str) -> (&'static str, Arg) {
    if let Some((name, role)) = token.split_once("[=") {
        return (name, Arg::Optional(role_of(role.trim_end_matches(']'))));
    }
    match token.split_once('=') {
        Some((name, role)) => (name, Arg::Required(role_of(role))),
        None => (token, Arg::No),
    }
}

fn role_of(code: &str) -> Role {
    match code {
        "r" => Role::Read,
        "w" => Role::Write,
        _ => Role::Text,
    }
}

/// Whether unquoted text holds glob characters.
pub fn has_glob_chars(text: &str) -> bool {
    super::words::has_glob(text)
}
