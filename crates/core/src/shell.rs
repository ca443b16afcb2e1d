//! What a bash command line does, for the permission policy, the sandbox and the Bash tool (below all three).
//!
//! A command line is parsed with a real shell parser (brush-parser) into every simple command it would run:
//! across `;`, `&&`, `||`, `|`, newlines, subshells, brace groups, control structures, function bodies,
//! command and process substitutions, `bash -c` strings, `eval` arguments and the commands wrappers such as
//! `sudo`, `xargs` or `find -exec` run. The policy allows a command line only when every simple command is
//! allowed, so one rule can never be stretched over a second command.
//!
//! Decisions, for the policy and for whoever extends this:
//! - Anything that runs code the rules can't see (substitutions, `eval`, `sh -c`, `exec`, `source`,
//!   wrappers, function and alias definitions, an expansion in command position, a shell reading a
//!   here-document or a pipe) sets [`Analysis::always_ask`]: no rule can allow it. What those constructs run
//!   is still analysed where possible and added to [`Analysis::commands`], so deny rules and the blocklist
//!   still apply (`bash -c 'rm x'` is denied by `Bash(rm:*)`, `sudo rm -rf /` is blocked).
//! - Words are matched after quote removal (`'n'pm test` is `npm test`); an expansion (`$X`) only matches a
//!   `*` of an allow rule, while for deny rules it may stand for anything (`git $X` is denied by
//!   `Bash(git push:*)`), and so may an unquoted glob.
//! - Runs of blanks are one word boundary to the shell, so `git  status` matches `Bash(git status)`.
//! - Prefix assignments (`FOO=1 npm test`) are part of what an allow rule must match: `Bash(npm test)` does
//!   not allow it, `Bash(FOO=1 npm test)` does. Deny rules ignore them. A few harmless locale variables
//!   (`LC_ALL=C sort`) keep a read-only command read-only.
//! - A program written as a path (`/usr/bin/git`) is not the bare name for allow rules or the read-only
//!   list; deny rules and the blocklist compare its file name, and fold Unicode look-alikes to ASCII.
//! - Wrappers (`sudo`, `env cmd`, `xargs`, `timeout`, `nice`, `nohup`, `command`, `builtin`, `exec`,
//!   `find -exec`, …) always ask; the command they run is added to `commands` after the wrapper's own.
//! - A shell fed a here-document, here-string or pipe (`bash <<EOF`) always asks, and the text it would run
//!   is analysed too, so `bash <<EOF\nrm x\nEOF` is denied by `Bash(rm:*)` rather than merely asked about.
//! - Limits: code computed at run time (`source <(curl …)`, `eval "$(cat f)"`) always asks but can't be
//!   checked against deny rules; a deny rule is a guard against mistakes, not a sandbox.

mod blocklist;
mod canonical;
mod classify;
mod pattern;
pub mod spec;
mod walk;
mod words;

#[cfg(test)]
pub(crate) mod corpus;
#[cfg(test)]
mod tests;

use self::pattern::Reading;
use self::walk::Assign;
use self::words::{Seg, Word, basename};

/// The workspace's roots, named once at start ([`keep_programs_outside`]).
static WORKSPACE_ROOTS: std::sync::OnceLock<Vec<std::path::PathBuf>> = std::sync::OnceLock::new();

/// Names the workspace's roots before the first command is analysed or run: the bash that reads commands
/// ([`canonical`]) and runs them (the Bash tool) is never taken from them. Until then (tests, tools), the working
/// directory stands for the workspace.
pub fn keep_programs_outside(roots: &[std::path::PathBuf]) {
    let _ = WORKSPACE_ROOTS.set(roots.to_vec());
}

/// The bash that reads every command line for the analyser and runs it for the Bash tool — one program for
/// both, so that the reading checked is the one run: the first on `PATH` outside the workspace
/// ([`crate::fs_util::program_outside`]), since the analyser runs it before any decision, in every mode.
pub fn bash() -> Option<&'static std::path::Path> {
    static BASH: std::sync::OnceLock<Option<std::path::PathBuf>> = std::sync::OnceLock::new();
    BASH.get_or_init(|| {
        let roots = WORKSPACE_ROOTS.get().cloned().unwrap_or_else(|| std::env::current_dir().into_iter().collect());
        crate::fs_util::program_outside("bash", &std::env::var_os("PATH")?, &roots)
    })
    .as_deref()
}

/// Commands longer than this are not parsed (always ask), to bound the work done per call.
const MAX_COMMAND_BYTES: usize = 256 * 1024;
/// brush-parser recurses per nesting level; the parse runs on its own thread with this much stack so a
/// deeply nested command can't overflow the caller's (tokio workers have 2 MiB).
const PARSER_STACK_BYTES: usize = 32 * 1024 * 1024;

/// One simple command, after quote removal of literal words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimpleCommand {
    /// Words; `argv[0]` is the program as written (e.g. "git", "/usr/bin/git"). A word with an expansion
    /// holds it as written (`$HOME/x`): check [`SimpleCommand::is_plain`] before treating words as paths.
    pub argv: Vec<String>,
    /// `FOO=1` prefixes: name and value.
    pub assignments: Vec<(String, String)>,
    /// Canonical text for rule matching: argv joined by single spaces.
    pub text: String,
    words: Vec<Word>,
    assignment_words: Vec<Word>,
}

/// Everything the policy needs to know about a command line.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Analysis {
    /// Every simple command the line runs, including those inside substitutions and wrappers.
    pub commands: Vec<SimpleCommand>,
    /// Why the command must always be asked about (substitution, eval, sh -c, variable in command
    /// position…), as a phrase ("command substitution `$(…)`"); `None` when every part is plain.
    pub always_ask: Option<String>,
    /// Paths written by redirections (`> out.txt`), as written (the caller resolves them; `~/x` may appear).
    pub writes: Vec<String>,
    /// Paths read by redirections (`< in.txt`), as written.
    pub reads: Vec<String>,
    /// A hard-blocklist hit: refused in every mode, with the reason.
    pub blocked: Option<String>,
}

/// Analyses a command line. Never panics: a parse error gives `always_ask = Some("could not parse …")`
/// (with a rough split of the text in `commands`, so deny rules and the blocklist still apply).
pub fn analyze(command: &str) -> Analysis {
    if let Some(known) = recent(command) {
        return known;
    }
    let analysis = analyze_afresh(command);
    remember(command, &analysis);
    analysis
}

/// The last few lines analysed, with their analyses: a call is analysed when it is decided and again when the
/// Bash tool runs it (the sandbox's look at whether it is only git), milliseconds apart; the second time costs a
/// lookup instead of a parse and a bash process.
static RECENT: std::sync::Mutex<std::collections::VecDeque<(String, Analysis)>> =
    std::sync::Mutex::new(std::collections::VecDeque::new());
/// How many analyses [`RECENT`] keeps (only lines short enough to be worth keeping).
const RECENT_KEPT: usize = 16;
const RECENT_MOST_BYTES: usize = 4096;

fn recent(command: &str) -> Option<Analysis> {
    let recent = RECENT.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    recent.iter().find(|(line, _)| line == command).map(|(_, analysis)| analysis.clone())
}

fn remember(command: &str, analysis: &Analysis) {
    if command.len() > RECENT_MOST_BYTES {
        return;
    }
    let mut recent = RECENT.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if recent.len() >= RECENT_KEPT {
        recent.pop_front();
    }
    recent.push_back((command.to_owned(), analysis.clone()));
}

fn analyze_afresh(command: &str) -> Analysis {
    if command.len() > MAX_COMMAND_BYTES {
        return walk::unparsed(command, format!("could not parse the command (longer than {MAX_COMMAND_BYTES} bytes)"));
    }
    let outcome = std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("bash-analysis".to_owned())
            .stack_size(PARSER_STACK_BYTES)
            .spawn_scoped(scope, || walk::analyze_source(command))
            .map(|handle| handle.join())
    });
    let mut analysis = match outcome {
        Ok(Ok(analysis)) => analysis,
        Ok(Err(_)) => walk::unparsed(command, "could not parse the command (the parser failed)".to_owned()),
        Err(error) => walk::unparsed(command, format!("could not parse the command (no parser thread: {error})")),
    };
    confirm_with_bash(command, &mut analysis);
    analysis
}

/// Checks the analysis against bash's own reading of the command ([`canonical`]): when bash can't confirm it,
/// or reads other commands, redirections or words, the command always asks, and what bash reads is added to
/// `commands` so that deny rules and the blocklist see it too.
fn confirm_with_bash(command: &str, analysis: &mut Analysis) {
    let reading = match canonical::bash_reading(command) {
        Ok(reading) => reading,
        Err(why) => {
            if analysis.always_ask.is_none() {
                analysis.always_ask = Some(format!("text the analyser can't confirm ({why})"));
            }
            return;
        }
    };
    if reading == command {
        return;
    }
    let theirs = std::thread::scope(|scope| {
        std::thread::Builder::new()
            .stack_size(PARSER_STACK_BYTES)
            .spawn_scoped(scope, || walk::analyze_source(&reading))
            .ok()
            .and_then(|handle| handle.join().ok())
    });
    let Some(theirs) = theirs else {
        analysis.always_ask.get_or_insert_with(|| "text the analyser can't confirm".to_owned());
        return;
    };
    let same = theirs
        .commands
        .iter()
        .map(|cmd| (&cmd.argv, &cmd.assignments))
        .eq(analysis.commands.iter().map(|cmd| (&cmd.argv, &cmd.assignments)))
        && theirs.writes == analysis.writes
        && theirs.reads == analysis.reads;
    if let Some(reason) = theirs.blocked.clone() {
        analysis.blocked.get_or_insert(reason);
    }
    if !same {
        analysis.always_ask.get_or_insert_with(|| "text that bash reads differently from the analyser".to_owned());
        for cmd in theirs.commands {
            if !analysis.commands.contains(&cmd) {
                analysis.commands.push(cmd);
            }
        }
    } else if let Some(reason) = theirs.always_ask
        && analysis.always_ask.is_none()
    {
        analysis.always_ask = Some(reason);
    }
}

/// How risky a command line is, for the dialog's label: low when every part is understood and only reads, high
/// otherwise (a command that writes can do more than a file tool's write, so it is never "medium").
pub fn risk_of(command: &str) -> tandem_protocol::tools::Risk {
    use tandem_protocol::tools::Risk;
    let analysis = analyze(command);
    if analysis.always_ask.is_some() || analysis.blocked.is_some() {
        return Risk::High;
    }
    // A command is high risk unless it is known to only read.
    if !analysis.writes.is_empty() {
        return Risk::High;
    }
    for cmd in &analysis.commands {
        match cmd.understand() {
            Ok(effects) if !effects.mutates() => {}
            _ => return Risk::High,
        }
    }
    Risk::Low
}

impl SimpleCommand {
    fn new(words: Vec<Word>, assigns: Vec<Assign>) -> Self {
        let argv: Vec<String> = words.iter().map(Word::text).collect();
        SimpleCommand {
            text: argv.join(" "),
            argv,
            assignments: assigns.iter().map(|assign| (assign.name.clone(), assign.value.text())).collect(),
            words,
            assignment_words: assigns.into_iter().map(|assign| assign.word).collect(),
        }
    }

    /// Only reads, as far as its words tell: understood ([`SimpleCommand::understand`]) and writing nothing. The
    /// policy still checks where it reads.
    pub fn is_read_only(&self) -> bool {
        self.understand().is_ok_and(|effects| !effects.mutates())
    }

    /// What the command does, when every word of it is understood ([`spec::understand`]); otherwise why not.
    /// Prefix assignments must be harmless (`LC_ALL=C sort`): anything else can change what a program does.
    pub fn understand(&self) -> Result<spec::Effects, String> {
        if let Some((name, _)) = self.assignments.iter().find(|(name, _)| !classify::is_harmless_env(name)) {
            return Err(format!("it sets `{name}`, which can change what the program does"));
        }
        // `LC_ALL=./x` loads locale data (and message catalogs) from a path: only names are harmless.
        if let Some((name, value)) =
            self.assignments.iter().find(|(_, value)| value.contains('/') || value.starts_with('.'))
        {
            return Err(format!("it sets `{name}` to the path `{value}`"));
        }
        if self.assignment_words.iter().any(|word| !word.is_plain()) {
            return Err("an assignment's value is only known when the command runs".into());
        }
        spec::understand(&self.words)
    }

    /// Whether every word and assignment value is literal text (no expansion, no glob).
    pub fn is_plain(&self) -> bool {
        self.words.iter().chain(&self.assignment_words).all(Word::is_plain)
    }

    /// Claude Code rule specifiers: exact `npm test`, prefix `npm run test:*` (the command equals the prefix
    /// or continues with another word), glob `git *` (`*` matches any characters; a trailing ` *` also
    /// matches the bare `git`). Matching is word by word on the unquoted words, which is `text` unless a
    /// word contains a blank. Prefix assignments must be matched by the rule too (`FOO=1 npm test` needs
    /// `Bash(FOO=1 npm test)` or a rule starting with `*`). A path is not a bare name: `/usr/bin/git status`
    /// does not match `Bash(git status)`. An expansion matches only a `*`.
    pub fn matches(&self, specifier: &str) -> bool {
        let words: Vec<Word> = self.assignment_words.iter().chain(&self.words).cloned().collect();
        !words.is_empty() && pattern::matches(specifier, &words, Reading { deny: false, fold: false })
    }

    /// For deny rules: like [`SimpleCommand::matches`], but the broad reading. Leading assignments are
    /// ignored (and also tried included), a program path matches by its file name (`/bin/rm -rf x` is
    /// denied by `Bash(rm:*)`), Unicode look-alikes are folded to ASCII (`ｒｍ` is `rm`), and an expansion
    /// or glob may stand for anything (`$CMD x` and `git $X` can be denied), and git's global options are
    /// skipped (`git -C . push` is denied by `Bash(git push:*)`).
    pub fn matches_for_deny(&self, specifier: &str) -> bool {
        let mut variants = vec![self.words.clone()];
        if let Some(short) = self.words.first().and_then(file_name_word) {
            let mut words = self.words.clone();
            words[0] = short;
            variants.push(words);
        }
        let without_git_options: Vec<Vec<Word>> =
            variants.iter().filter_map(|words| classify::git_without_global_options(words)).collect();
        variants.extend(without_git_options);
        if !self.assignment_words.is_empty() {
            let with_assignments = self.assignment_words.iter().chain(&self.words).cloned().collect();
            variants.push(with_assignments);
        }
        variants.iter().filter(|words| !words.is_empty()).any(|words| {
            [false, true].into_iter().any(|fold| pattern::matches(specifier, words, Reading { deny: true, fold }))
        })
    }
}

/// The file name of a program path (`/bin/rm` → `rm`, `$DIR/rm` → `rm`), or `None` when it has no `/`.
fn file_name_word(word: &Word) -> Option<Word> {
    let last_slash = word.segs.iter().rposition(|seg| matches!(seg, Seg::Text(t) | Seg::Glob(t) if t.contains('/')))?;
    let mut segs: Vec<Seg> = word.segs[last_slash + 1..].to_vec();
    let head = match &word.segs[last_slash] {
        Seg::Text(text) => Seg::Text(basename(text).to_owned()),
        Seg::Glob(text) => Seg::Glob(basename(text).to_owned()),
        Seg::Opaque(text) => Seg::Opaque(text.clone()),
    };
    segs.insert(0, head);
    Some(Word { segs, globbed: word.globbed })
}
