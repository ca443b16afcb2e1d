//! The decision for a Bash call. A command line runs unasked only when a rule the user wrote allows each of its
//! simple commands, or when each is understood word by word ([`bash::spec`]) and everything it reads and writes
//! is known and allowed: reads inside the workspace, writes (in `acceptEdits`) inside it and not protected, and
//! nothing that an earlier part of the same line created, moved or copied. Everything else asks.

use std::path::PathBuf;

use super::command_paths;
use super::paths::Protection;
use super::policy::source;
use super::settings::RuleKind;
use super::{Decision, PermissionMode, PermissionPolicy};
use crate::sandbox::Grant;
use crate::shell::spec::{Effects, HistoryRead};
use crate::shell::{self as bash, Analysis, SimpleCommand};

/// Programs whose "always" rule is the exact command: a prefix rule for them would allow far more than was seen.
const EXACT_ONLY: &[&str] = &[
    "rm", "rmdir", "mv", "cp", "ln", "chmod", "chown", "chgrp", "dd", "kill", "pkill", "killall", "curl", "wget",
    "sudo", "su", "sh", "bash", "zsh", "dash", "eval", "exec", "env", "xargs", "find", "sed", "awk", "perl", "tee",
    "truncate", "shred", "install", "rsync", "scp", "ssh", "tar", "unzip", "docker", "kubectl",
];
/// `program subcommand` pairs that get exact rules too.
const EXACT_SUBCOMMANDS: &[(&str, &str)] = &[
    ("git", "push"),
    ("git", "reset"),
    ("git", "clean"),
    ("git", "checkout"),
    ("git", "rebase"),
    ("git", "config"),
    ("git", "remote"),
    ("git", "filter-branch"),
    ("npm", "publish"),
    ("cargo", "publish"),
    ("npm", "exec"),
    ("npx", ""),
];
/// Subcommands that run a named script: the script is part of the rule.
const RUNNERS: &[(&str, &str)] = &[
    ("npm", "run"),
    ("npm", "run-script"),
    ("pnpm", "run"),
    ("yarn", "run"),
    ("bun", "run"),
    ("uv", "run"),
    ("poetry", "run"),
    ("cargo", "run"),
];
/// Interpreters: `python3 -m pytest -q` remembers `python3 -m pytest`, `node script.js` remembers the script.
const INTERPRETERS: &[&str] = &["python", "python3", "node", "ruby", "php", "deno", "bun", "uv", "poetry"];

/// What the policy learnt of one auto-allowed command.
struct Judged {
    mutates: bool,
    /// An operand or option holds a glob, expanded only when the command runs.
    globbed: bool,
}

impl PermissionPolicy {
    /// The decision for a Bash call, and when it is an allow, why ([`Grant`]): what the sandbox must hold the
    /// command to.
    pub(super) fn decide_bash(&self, command: &str, unsandboxed: bool) -> (Decision, Grant) {
        let analysis = bash::analyze(command);
        let decision = self.judge_bash(&analysis, unsandboxed);
        let Decision::Allow = decision.0 else { return decision };
        // Commands the user keeps out of the sandbox never run unsandboxed on tandem's own judgement.
        if let Some(excluded) = self.excluded_command(&analysis) {
            return match decision.1 {
                Grant::UserRule => (Decision::Allow, Grant::Excluded),
                _ => (
                    self.ask_bash(
                        suggest_bash_rule(&analysis, |cmd| self.allowed_by_rule(cmd)),
                        Some(format!("{excluded} is in sandbox.excludedCommands, so it would run outside the sandbox")),
                    ),
                    Grant::Approved,
                ),
            };
        }
        decision
    }

    /// The first `sandbox.excludedCommands` entry a simple command of the line matches.
    fn excluded_command(&self, analysis: &Analysis) -> Option<String> {
        self.sandbox.excluded_commands.iter().find_map(|entry| {
            let spec = if entry.contains(':') || entry.contains('*') { entry.clone() } else { format!("{entry}:*") };
            analysis.commands.iter().any(|cmd| cmd.matches(&spec)).then(|| entry.clone())
        })
    }

    #[expect(
        clippy::too_many_lines,
        reason = "the Bash decision's steps in the order they must run (deny, ask, sandbox, mode, rules, analysis); each is one call, the order is the point"
    )]
    fn judge_bash(&self, analysis: &Analysis, unsandboxed: bool) -> (Decision, Grant) {
        let refused = |decision: Decision| (decision, Grant::Approved);
        if let Some(reason) = &analysis.blocked {
            return refused(Decision::Deny {
                reason: format!("Refused: {reason}. tandem never runs this command, in any mode."),
            });
        }
        let bash_rules = |kind: RuleKind| self.rules_of(kind).filter(|rule| rule.rule.covers_tool("Bash"));
        for rule in bash_rules(RuleKind::Deny) {
            let hit = match &rule.rule.specifier {
                None => true,
                Some(spec) => analysis.commands.iter().any(|cmd| cmd.matches_for_deny(spec)),
            };
            if hit {
                return refused(Decision::Deny {
                    reason: format!(
                        "Permission to run this command was denied by the rule {}{}.",
                        rule.text,
                        source(rule)
                    ),
                });
            }
        }
        if let Some(reason) = self.denied_read(analysis) {
            return refused(Decision::Deny { reason });
        }
        let suggestion = suggest_bash_rule(analysis, |cmd| self.allowed_by_rule(cmd));
        let asked = bash_rules(RuleKind::Ask).any(|rule| match &rule.rule.specifier {
            None => true,
            Some(spec) => analysis.commands.iter().any(|cmd| cmd.matches(spec)),
        });
        if asked {
            return refused(self.ask("Bash", suggestion, Some("an ask rule matches".into())));
        }
        if unsandboxed && self.sandboxed && !self.sandbox.allow_unsandboxed_commands {
            return refused(Decision::Deny {
                reason: "Running outside the sandbox is switched off (sandbox.allowUnsandboxedCommands is false); \
                         this command was not run. Do without it, or ask the user to run it themselves."
                    .into(),
            });
        }
        if unsandboxed && self.sandboxed {
            // Leaving the sandbox is always the user's call, whatever the rules or the mode say.
            return refused(self.ask_bash(String::new(), Some("it asks to run outside the sandbox".into())));
        }
        if self.mode == PermissionMode::BypassPermissions {
            return (Decision::Allow, Grant::UserRule);
        }
        // Plan mode refuses every change, whatever an allow rule says: rules count only outside it.
        let planning = self.mode == PermissionMode::Plan;
        if !planning && bash_rules(RuleKind::Allow).any(|rule| rule.rule.specifier.is_none()) {
            return (Decision::Allow, Grant::UserRule);
        }
        if let Some(reason) = &analysis.always_ask {
            let why = format!("it contains {reason}, which a rule can never allow");
            return self.ask_or_sandbox(String::new(), Some(why));
        }
        let mut touched: Vec<PathBuf> = Vec::new();
        let mut why_not: Option<String> = None;
        let mut mutates = !analysis.writes.is_empty();
        let mut globbed = false;
        let mut by_rule = false;
        // Looked up once per line: a PATH that reaches into the workspace makes every bare program name unknown.
        let path_lookup = path_is_outside_the_workspace(&self.workspace);
        for cmd in &analysis.commands {
            if let Err(why) = &path_lookup
                && cmd.argv.first().is_some_and(|program| !program.contains('/'))
            {
                why_not.get_or_insert_with(|| why.clone());
            }
            if !planning && self.allowed_by_rule(cmd) {
                // A rule allows the command it names, not a stand-in for it found through PATH, nor the programs
                // a planted repository configuration would make a reading git command run.
                if let Err(why) = self.rule_allowed_stays_itself(cmd) {
                    why_not.get_or_insert(why);
                }
                by_rule = true;
                continue;
            }
            match self.auto_allowed(cmd, &mut touched) {
                Ok(judged) => {
                    mutates |= judged.mutates;
                    globbed |= judged.globbed;
                }
                Err(why) => {
                    why_not.get_or_insert(why);
                }
            }
        }
        // Redirections are opened while the line runs: judged against everything the line makes (a symlink
        // `cp -a` copies, then `> dest/link`).
        for write in &analysis.writes {
            if let Err(why) = self.writable(write, &touched) {
                return self.ask_or_sandbox(suggestion, Some(format!("it writes to {why}")));
            }
        }
        for read in &analysis.reads {
            if let Err(why) = self.readable(read, &touched) {
                return self.ask_or_sandbox(suggestion, Some(format!("it reads {why}")));
            }
        }
        let runs_git = analysis.commands.iter().any(|cmd| cmd.argv.first().is_some_and(|p| p == "git"));
        if mutates && runs_git && why_not.is_none() {
            why_not =
                Some("git runs after another part of the line changed files its configuration could come from".into());
        }
        if mutates && globbed && why_not.is_none() {
            why_not = Some(
                "a glob is expanded when its part of the line runs, after other parts changed the files".to_owned(),
            );
        }
        if why_not.is_none() && (!mutates || self.mode == PermissionMode::AcceptEdits) {
            let grant = if by_rule {
                Grant::UserRule
            } else if mutates {
                Grant::WorkspaceWrite
            } else {
                Grant::ReadOnly
            };
            return (Decision::Allow, grant);
        }
        self.ask_or_sandbox(suggestion, why_not)
    }

    /// Asks about a command the analyser could not allow, unless the user chose to let such commands run in the
    /// sandbox (`sandbox.autoAllowBashIfSandboxed`): then it runs there, writing only the workspace, offline.
    fn ask_or_sandbox(&self, suggestion: String, why: Option<String>) -> (Decision, Grant) {
        let auto = self.sandboxed
            && self.sandbox.auto_allow_bash_if_sandboxed
            && matches!(self.mode, PermissionMode::Default | PermissionMode::AcceptEdits);
        if auto {
            return (Decision::Allow, Grant::WorkspaceWrite);
        }
        (self.ask_bash(suggestion, why), Grant::Approved)
    }

    fn rule_allowed_stays_itself(&self, cmd: &SimpleCommand) -> Result<(), String> {
        let Some(program) = cmd.argv.first() else { return Ok(()) };
        let reading = ["status", "diff", "log", "show", "shortlog", "rev-parse", "ls-files", "blame", "branch", "tag"];
        if program == "git"
            && cmd.argv.get(1).is_some_and(|sub| reading.contains(&sub.as_str()))
            && super::git_config::in_repository(self.workspace.cwd())
        {
            super::git_config::check(self.workspace.cwd())
                .map(drop)
                .map_err(|why| format!("{why} (the rule allows git, not that)"))?;
        }
        Ok(())
    }

    /// A reading git command runs unasked only in a repository whose configuration runs nothing and whose work
    /// tree is inside the workspace (from a subdirectory, `git show HEAD:../x` reads past the workspace).
    fn git_repository_is_ours(&self) -> Result<(), String> {
        let worktree = super::git_config::check(self.workspace.cwd())?;
        let worktree = self.workspace.resolve(&worktree.to_string_lossy());
        if self.workspace.contains(&worktree) {
            Ok(())
        } else {
            Err(format!("the repository's work tree {} reaches past the workspace", worktree.display()))
        }
    }

    fn allowed_by_rule(&self, cmd: &SimpleCommand) -> bool {
        self.rules_of(RuleKind::Allow)
            .filter(|rule| rule.rule.covers_tool("Bash"))
            .any(|rule| rule.rule.specifier.as_deref().is_some_and(|spec| cmd.matches(spec)))
    }

    /// Whether one simple command runs without a rule: understood, reading only what may be read, and (in
    /// `acceptEdits`) writing only what may be written. Paths it creates are added to `touched`, which other
    /// parts of the line may not use.
    fn auto_allowed(&self, cmd: &SimpleCommand, touched: &mut Vec<PathBuf>) -> Result<Judged, String> {
        if self.mode == PermissionMode::DontAsk {
            return Err("no rule allows it".into());
        }
        let effects = cmd.understand()?;
        let judged = Judged {
            mutates: effects.mutates(),
            globbed: !effects.literal_globs.is_empty()
                || effects.reads.iter().chain(&effects.writes).any(|arg| arg.glob)
                || effects.transfer.as_ref().is_some_and(|t| t.sources.iter().any(|arg| arg.glob)),
        };
        if judged.mutates && self.mode != PermissionMode::AcceptEdits {
            return Ok(judged);
        }
        self.effects_allowed(&effects, touched)?;
        if effects.repository_config {
            self.git_repository_is_ours()?;
        }
        self.history_reads_allowed(&effects.history_reads, touched)?;
        let guarded = |kind| self.rules_of(kind).any(super::policy::names_read_paths);
        if effects.unnamed_history && (guarded(RuleKind::Deny) || guarded(RuleKind::Ask)) {
            return Err("it may print files out of the repository's history or index without naming them, and a \
                        Read deny or ask rule could name one"
                .into());
        }
        Ok(judged)
    }

    /// Files read out of the repository's history or index are judged as reads of their paths in the work tree:
    /// `git show HEAD~1:.env` reads what `Read(.env)` denies, committed before the rule or not. What `git diff`
    /// compares must be a file here: a tree (`HEAD~1:config`, `HEAD~1:`) prints every file below it, and one gone
    /// from the work tree can't be told from a tree.
    fn history_reads_allowed(&self, reads: &[HistoryRead], touched: &[PathBuf]) -> Result<(), String> {
        let top = match reads.iter().all(HistoryRead::from_here) {
            true => None,
            false => Some(super::git_config::check(self.workspace.cwd())?),
        };
        for read in reads {
            let place = match &top {
                Some(top) if !read.from_here() => {
                    self.workspace.resolve(&top.join(read.path.trim_end_matches('/')).to_string_lossy())
                }
                _ => self.workspace.resolve(&read.path),
            };
            let by_name = match &top {
                Some(top) if !read.from_here() => top.join(read.path.trim_end_matches('/')),
                _ => self.workspace.cwd().join(read.path.trim_end_matches('/')),
            };
            // git takes `..` by name (`:./lnk/../.env` is `.env`); the kernel after following `lnk`.
            if self.workspace.resolve(&crate::fs_util::normalize(&by_name).to_string_lossy()) != place {
                return Err(format!(
                    "git reads `{}` out of the history by name, `..` included, not where its links lead",
                    read.path
                ));
            }
            self.readable(&place.to_string_lossy(), touched)
                .map_err(|why| format!("it reads {why} (out of the repository's history)"))?;
            if read.file_only && !std::fs::symlink_metadata(&place).is_ok_and(|meta| meta.is_file()) {
                return Err(format!(
                    "it compares `{}` out of the history, which is not a file here: a tree's files are all printed, \
                     denied ones too",
                    read.path
                ));
            }
        }
        Ok(())
    }

    fn effects_allowed(&self, effects: &Effects, touched: &mut Vec<PathBuf>) -> Result<(), String> {
        let mut created: Vec<PathBuf> = Vec::new();
        for pattern in &effects.literal_globs {
            let arg = crate::shell::spec::PathArg { text: pattern.clone(), glob: true };
            if command_paths::expand(&self.workspace, &arg).map_err(|why| format!("it has {why}"))? != [pattern.clone()]
            {
                return Err(format!("`{pattern}` matches file names, which bash would put in its place"));
            }
        }
        for arg in &effects.reads {
            for path in command_paths::expand(&self.workspace, arg)? {
                self.readable(&path, touched).map_err(|why| format!("it reads {why}"))?;
                if effects.files_only && self.workspace.resolve(&path).is_dir() {
                    return Err(format!("it compares the directory {path}, reading what its links point to"));
                }
            }
        }
        for arg in &effects.writes {
            self.writable(&arg.text, touched).map_err(|why| format!("it writes to {why}"))?;
            created.push(self.workspace.resolve(&arg.text));
        }
        if let Some(transfer) = &effects.transfer {
            let mut sources = Vec::new();
            for arg in &transfer.sources {
                sources.extend(command_paths::expand(&self.workspace, arg)?);
            }
            for source in &sources {
                self.readable(source, touched).map_err(|why| format!("it copies {why}"))?;
                if transfer.moves {
                    self.writable(source, touched).map_err(|why| format!("it moves {why}"))?;
                    created.push(self.workspace.resolve(source));
                }
            }
            let targets = command_paths::transfer_targets(&self.workspace, transfer, &sources)?;
            for target in targets {
                let text = target.to_string_lossy().into_owned();
                self.writable(&text, touched).map_err(|why| format!("it writes to {why}"))?;
                if transfer.backups {
                    for backup in [format!("{text}~"), format!("{text}.~1~")] {
                        self.writable(&backup, touched).map_err(|why| format!("its backup goes to {why}"))?;
                    }
                }
                created.push(self.workspace.resolve(&text));
            }
        }
        touched.extend(created);
        Ok(())
    }

    /// `Ok` when a command may read `path` unasked; otherwise the path and why not.
    fn readable(&self, path: &str, touched: &[PathBuf]) -> Result<(), String> {
        if matches!(path, "/dev/null" | "/dev/stdin") {
            return Ok(());
        }
        let resolved = self.judge_path(path, touched, Protection::guards_reads)?;
        self.not_asked_by_rule(&resolved, "Read")
    }

    /// `Ok` unless a rule of the user's says `tool` must ask about `path` (a Read ask rule for a read, an Edit
    /// ask or deny rule for a write): a rule that asks about the Read tool asks about a command that reads the
    /// same file. The sandbox holds what no word names (`grep -r .`) to the same rules.
    fn not_asked_by_rule(&self, path: &std::path::Path, tool: &str) -> Result<(), String> {
        let kinds: &[RuleKind] = if tool == "Read" { &[RuleKind::Ask] } else { &[RuleKind::Ask, RuleKind::Deny] };
        let rule = kinds.iter().flat_map(|kind| self.rules_of(*kind)).find(|rule| {
            rule.rule.specifier.is_some()
                && (self.file_rule_matches(rule, tool, Some(path), true)
                    || rule.rule.covers_tool(tool) && self.rule_leads_to(rule, path))
        });
        match rule {
            Some(rule) => Err(format!("{}, which the rule {}{} covers", path.display(), rule.text, source(rule))),
            None => Ok(()),
        }
    }

    /// Where `path` certainly leads, when that is inside the workspace, not made by another part of the line and
    /// not protected in a way `counts` cares about; otherwise the path and why not.
    fn judge_path(&self, path: &str, touched: &[PathBuf], counts: fn(Protection) -> bool) -> Result<PathBuf, String> {
        let Some(resolved) = self.workspace.resolve_strict(path) else {
            let shown = self.workspace.resolve(path);
            return Err(format!(
                "{}, a path that can't be resolved for sure (a dangling or looping link)",
                shown.display()
            ));
        };
        if self.earlier_part_made(&resolved, touched) {
            return Err(format!("{}, which an earlier part of the command creates or moves", resolved.display()));
        }
        if let Some(protection) = self.workspace.protected(&resolved).filter(|p| counts(*p)) {
            return Err(format!("{}, which is protected: {}", resolved.display(), protection.reason()));
        }
        if !self.workspace.contains(&resolved) {
            return Err(format!("{}, outside the workspace", resolved.display()));
        }
        Ok(resolved)
    }

    /// `Ok` when a command may write `path` unasked (mode aside); otherwise the path and why not.
    fn writable(&self, path: &str, touched: &[PathBuf]) -> Result<(), String> {
        let resolved = self.judge_path(path, touched, |_| true)?;
        self.not_asked_by_rule(&resolved, "Edit")?;
        // Directories that don't exist yet are made on the way (`mkdir -p .claude/CLAUDE.md` makes `.claude`).
        for missing in resolved.ancestors().skip(1).take_while(|dir| dir.symlink_metadata().is_err()) {
            if let Some(protection) = self.workspace.protected(missing) {
                return Err(format!("{}, which is protected: {}", missing.display(), protection.reason()));
            }
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            if std::fs::metadata(&resolved).is_ok_and(|meta| meta.is_file() && meta.nlink() > 1) {
                return Err(format!(
                    "{}, a file with several hard links (writing it changes the others)",
                    resolved.display()
                ));
            }
        }
        Ok(())
    }

    /// Whether `resolved` is, or lies below (or above), a path an earlier part of the line made.
    fn earlier_part_made(&self, resolved: &std::path::Path, touched: &[PathBuf]) -> bool {
        touched.iter().any(|made| {
            let made = super::paths::normalize(made);
            resolved.starts_with(&made) || made.starts_with(resolved) && resolved != self.workspace.cwd()
        })
    }

    /// Reading a secret, or a path a Read deny rule covers, through any command: denied. Every word of every
    /// command is looked at (not only those of understood commands): `python3 x.py ~/.ssh/id_rsa` is denied too.
    fn denied_read(&self, analysis: &Analysis) -> Option<String> {
        let hidden = self.hidden_paths();
        let words = analysis.commands.iter().flat_map(|cmd| {
            cmd.argv.iter().skip(1).map(|arg| arg.split_once('=').map_or(arg.as_str(), |(_, value)| value))
        });
        for word in
            words.chain(analysis.reads.iter().map(String::as_str)).chain(analysis.writes.iter().map(String::as_str))
        {
            if word.is_empty() || word.starts_with('-') && !word.contains('/') {
                continue;
            }
            // Every process's environment holds secrets, tandem's own API key among them.
            if word.starts_with("/proc/") && word.contains("environ") {
                return Some(format!(
                    "The command names {word}: a process's environment holds secrets (tandem's API key among them)."
                ));
            }
            let word = self.spelled_out(word);
            // Where it leads, and the name as written (a link under a denied directory leads out of it).
            let mut paths =
                vec![self.workspace.resolve(&word), super::paths::normalize(&self.workspace.absolute(&word))];
            if crate::shell::spec::has_glob_chars(&word) {
                let arg = crate::shell::spec::PathArg { text: word.clone(), glob: true };
                let expanded = command_paths::expand(&self.workspace, &arg).unwrap_or_default();
                paths.extend(expanded.iter().map(|path| self.workspace.resolve(path)));
                paths.extend(self.protected_candidates(&word));
            }
            for path in paths {
                if let Some(reason) = self.denied_path(&path, hidden.as_ref()) {
                    return Some(reason);
                }
            }
        }
        self.denied_history_read(analysis, hidden.as_ref())
    }

    /// A file git reads out of the history or the index (`git show HEAD~1:.env`) that a deny rule names, judged
    /// from the top of the work tree and from here: a denied file committed before the rule is the same secret.
    fn denied_history_read(&self, analysis: &Analysis, hidden: Option<&crate::tools::HiddenPaths>) -> Option<String> {
        let git_words = analysis
            .commands
            .iter()
            .filter(|cmd| cmd.argv.first().is_some_and(|program| program == "git"))
            .flat_map(|cmd| cmd.argv.iter().skip(1));
        let top = super::git_config::find_git_dir(self.workspace.cwd()).map(|(_, worktree)| worktree);
        for path in git_words.flat_map(|word| crate::shell::spec::history_files(word)) {
            let path = path.trim_end_matches('/');
            let bases = std::iter::once(self.workspace.cwd().to_path_buf()).chain(top.clone());
            // Where the kernel goes (following links before `..`), and where git goes (`..` by name).
            let places = bases.flat_map(|base| {
                let joined = base.join(path);
                [joined.clone(), crate::fs_util::normalize(&joined)]
                    .map(|spelled| self.workspace.resolve(&spelled.to_string_lossy()))
            });
            for place in places {
                if let Some(reason) = self.denied_path(&place, hidden) {
                    return Some(reason);
                }
            }
        }
        None
    }

    /// A word with the spellings of home, the working directory and `/proc`'s views of the file system replaced
    /// by what they stand for (`$HOME/.ssh`, `~+/x`, `"$PWD"/..`, `/proc/self/root/etc`, `/proc/self/cwd/..`).
    fn spelled_out(&self, word: &str) -> String {
        let cwd = self.workspace.cwd().to_string_lossy().into_owned();
        let replacements: [(&str, String); 6] = [
            ("${HOME}", "~".into()),
            ("$HOME", "~".into()),
            ("~+", cwd.clone()),
            ("${PWD}", cwd.clone()),
            ("$PWD", cwd.clone()),
            ("/proc/self/cwd", cwd),
        ];
        for (spelling, meaning) in replacements {
            if let Some(rest) = word.strip_prefix(spelling) {
                return format!("{meaning}{rest}");
            }
        }
        // `/proc/<pid>/root/x` is `/x` (every process here shares the root).
        if let Some(rest) = word.strip_prefix("/proc/")
            && let Some((_, after)) = rest.split_once("/root")
        {
            return if after.is_empty() { "/".to_owned() } else { after.to_owned() };
        }
        word.to_owned()
    }

    /// For a glob word: the protected entries of its literal directory whose names start with the pattern's
    /// literal part (`~/.s[s]h` → `~/.ssh`), whatever the pattern's bracket expressions would match.
    fn protected_candidates(&self, word: &str) -> Vec<std::path::PathBuf> {
        let first_glob = word.find(['*', '?', '[']).unwrap_or(word.len());
        let (dir, name_prefix) = match word[..first_glob].rsplit_once('/') {
            Some((dir, prefix)) => (if dir.is_empty() { "/" } else { dir }, prefix),
            None => (".", &word[..first_glob]),
        };
        let Some(listed) = self.workspace.resolve_strict(dir) else { return Vec::new() };
        let Ok(entries) = std::fs::read_dir(&listed) else { return Vec::new() };
        entries
            .flatten()
            .map(|entry| entry.path())
            .filter(|path| path.file_name().is_some_and(|name| name.to_string_lossy().starts_with(name_prefix)))
            .filter(|path| self.workspace.protected(path).is_some_and(|p| p.guards_reads()))
            .collect()
    }

    /// Why reading `path` through a command is denied (a Read deny rule, or a secret no rule names), if it is.
    fn denied_path(&self, path: &std::path::Path, hidden: Option<&crate::tools::HiddenPaths>) -> Option<String> {
        if hidden.is_some_and(|hidden| hidden(path)) {
            return Some(format!("Reading {} is denied by a Read rule, also through a command.", path.display()));
        }
        let protection = self.workspace.protected(path).filter(|p| p.guards_reads())?;
        if self.read_rule_names(path) {
            return None;
        }
        Some(format!(
            "The command names {}, which is protected: {}. tandem doesn't let commands read it unless an allow rule \
             names it (e.g. Read({})).",
            path.display(),
            protection.reason(),
            path.display()
        ))
    }

    /// Whether an allow rule with a path names `path` explicitly (a bare `Read` rule does not).
    /// Only the user's own rules count ([`super::Scope::lifts_secrets`]): not `Read(//**)` committed in
    /// `.claude/settings.json`, nor one in a personal file that came with the project.
    pub(super) fn read_rule_names(&self, path: &std::path::Path) -> bool {
        let users = |rule: &&super::settings::SourcedRule| rule.rule.covers_tool("Read") && rule.scope.lifts_secrets();
        self.rules_of(RuleKind::Allow).filter(users).any(|rule| {
            rule.rule.specifier.as_deref().is_some_and(|spec| {
                super::policy::lifts_protection(spec, &rule.root, path, &self.workspace, &self.home)
            })
        })
    }
}

/// A `PATH` with a relative entry (`.`, an empty one) or one inside the workspace would let a file there stand in
/// for a known program (`cat` could be `./cat`): then no command runs unasked.
fn path_is_outside_the_workspace(workspace: &super::paths::Workspace) -> Result<(), String> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&path) {
        let text = dir.to_string_lossy();
        if !dir.is_absolute() || workspace.resolve_strict(&text).is_some_and(|dir| workspace.contains(&dir)) {
            return Err(format!(
                "your PATH includes {text:?}, where a file of the workspace could stand in for a program"
            ));
        }
    }
    Ok(())
}

/// The rules an "always" answer remembers for a command, one per simple command not covered yet, each as
/// narrow as the command: `python3 -m pytest -q` → `Bash(python3 -m pytest:*)`, `npm test -- --watch` →
/// `Bash(npm test:*)`, `rm -rf build` → exactly `Bash(rm -rf build)`. Empty when no rule could ever allow it.
pub(super) fn suggest_bash_rule(analysis: &Analysis, covered: impl Fn(&SimpleCommand) -> bool) -> String {
    if analysis.always_ask.is_some() || analysis.blocked.is_some() {
        return String::new();
    }
    let mut rules: Vec<String> = Vec::new();
    for cmd in analysis.commands.iter().filter(|cmd| !covered(cmd)) {
        if cmd.argv.is_empty() {
            continue;
        }
        let rule = format!("Bash({})", rule_for(cmd));
        if !rules.contains(&rule) {
            rules.push(rule);
        }
    }
    tandem_protocol::permissions::join_rules(&rules)
}

fn rule_for(cmd: &SimpleCommand) -> String {
    let argv = &cmd.argv;
    let exact = || {
        let words: Vec<String> =
            cmd.assignments.iter().map(|(name, value)| format!("{name}={value}")).chain(argv.iter().cloned()).collect();
        words.iter().map(|word| quote_for_rule(word)).collect::<Vec<_>>().join(" ")
    };
    let simple_word =
        |word: &str| !word.is_empty() && word.chars().all(|c| c.is_ascii_alphanumeric() || "-_:.".contains(c));
    let program = argv[0].as_str();
    if !cmd.assignments.is_empty() || !cmd.is_plain() || EXACT_ONLY.contains(&program) || !simple_word(program) {
        return exact();
    }
    let second = argv.get(1).map(String::as_str).unwrap_or_default();
    if EXACT_SUBCOMMANDS.iter().any(|(p, sub)| *p == program && (sub.is_empty() || *sub == second)) {
        return exact();
    }
    if INTERPRETERS.contains(&program) || program.starts_with("python3.") {
        return match (second, argv.get(2)) {
            ("-m", Some(module)) if simple_word(module) => format!("{program} -m {module}:*"),
            (script, _)
                if !script.starts_with('-') && simple_word(script.trim_start_matches("./"))
                    || script.ends_with(".py")
                    || script.ends_with(".js") =>
            {
                if argv.len() == 2 {
                    exact()
                } else {
                    format!("{program} {}:*", quote_for_rule(script))
                }
            }
            _ => exact(),
        };
    }
    if argv.len() == 1 {
        return exact();
    }
    if !second.starts_with('-') && simple_word(second) {
        if argv.len() == 2 {
            return exact();
        }
        // `npm run test:unit` remembers that script, not every script.
        let third = argv.get(2).map(String::as_str).unwrap_or_default();
        if RUNNERS.contains(&(program, second)) {
            if !simple_word(third) || argv.len() == 3 {
                return exact();
            }
            return format!("{program} {second} {third}:*");
        }
        return format!("{program} {second}:*");
    }
    exact()
}

/// A word of a rule as the user would type it: bare when nothing in it is special, else in single quotes, else in
/// double quotes (`"it's"`); a backslash before each special character only when it holds both kinds of quote.
fn quote_for_rule(word: &str) -> String {
    let special = |c: char| c.is_whitespace() || matches!(c, '*' | '\'' | '"' | '\\' | '(' | ')');
    if !word.is_empty() && !word.contains(special) {
        return word.to_owned();
    }
    if !word.contains(['\'', '\\']) {
        return format!("'{word}'");
    }
    if !word.contains(['"', '\\']) {
        return format!("\"{word}\"");
    }
    let mut out = String::with_capacity(word.len());
    for c in word.chars() {
        if special(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}
