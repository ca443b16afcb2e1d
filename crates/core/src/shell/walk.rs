//! The walk over brush-parser's AST: collects every simple command (also those inside substitutions,
//! function bodies, `bash -c` strings and wrapped commands), the paths redirections write, the reasons a
//! command must always be asked about, and blocklist hits.

mod command;
mod word;

use brush_parser::ast;

use super::words::{Word, is_assignment, is_numeric_arithmetic};
use super::{Analysis, SimpleCommand, blocklist};

/// How deep command lines may nest inside one another (`$(…)` in `bash -c` in `sudo` …) before the
/// analyser gives up and asks.
const MAX_DEPTH: usize = 12;
/// At most this many opening constructs (`(`, `{`, backticks, `if`/`while`/… keywords) in one command:
/// brush-parser recurses once per level, and a deeper input could overflow even the parser thread's stack.
/// A command with more is asked about (with a rough split for deny rules).
pub(super) const MAX_OPENERS: usize = 400;

/// Where a command runs, for the fork-bomb and stdin checks.
#[derive(Clone, Copy, Default)]
struct Ctx {
    in_pipeline: bool,
    background: bool,
    /// Standard input is a pipe, a here-document or a here-string: a shell given no script runs it.
    piped_stdin: bool,
}

/// A prefix assignment: `NAME=value`.
pub(super) struct Assign {
    pub name: String,
    pub value: Word,
    /// The whole `NAME=value` word, for rule matching.
    pub word: Word,
}

#[derive(Default)]
pub(super) struct Walker {
    commands: Vec<SimpleCommand>,
    always_ask: Option<String>,
    writes: Vec<String>,
    reads: Vec<String>,
    blocked: Option<String>,
    depth: usize,
    /// Functions being defined around the current command (for fork bombs).
    functions: Vec<String>,
}

fn parser_options() -> brush_parser::ParserOptions {
    // `bash -c` runs without extglob, so `@(…)` is not a word to it.
    brush_parser::ParserOptions { enable_extended_globbing: false, ..Default::default() }
}

/// Analyses a whole command line. Runs on a thread with a large stack (see `analyze`).
pub(super) fn analyze_source(src: &str) -> Analysis {
    let mut walker = Walker::default();
    walker.source(src);
    walker.finish()
}

/// The analysis of a command that could not be parsed: always ask, with the rough split of
/// [`Walker::crude`] so that deny rules and the blocklist still see its commands.
pub(super) fn unparsed(src: &str, reason: String) -> Analysis {
    let mut walker = Walker::default();
    walker.ask(reason);
    walker.crude(src);
    walker.finish()
}

/// Counts opening constructs (`(`, `{`, backticks, `if`/`while`/… keywords) anywhere, quoted or not:
/// an upper bound on nesting that no quoting, comment or here-document trick can hide openers from.
fn count_openers(src: &str) -> usize {
    let brackets = src.chars().filter(|c| matches!(c, '(' | '{' | '`')).count();
    let keywords = src
        .split(|c: char| !c.is_ascii_alphabetic())
        .filter(|word| matches!(*word, "if" | "while" | "until" | "for" | "case" | "select" | "function" | "coproc"))
        .count();
    brackets + keywords
}

impl Walker {
    fn finish(self) -> Analysis {
        let mut writes = self.writes;
        writes.dedup();
        Analysis {
            commands: self.commands,
            always_ask: self.always_ask,
            writes,
            reads: self.reads,
            blocked: self.blocked,
        }
    }

    fn ask(&mut self, reason: impl Into<String>) {
        if self.always_ask.is_none() {
            self.always_ask = Some(reason.into());
        }
    }

    fn block(&mut self, reason: String) {
        if self.blocked.is_none() {
            self.blocked = Some(reason);
        }
    }

    /// Parses and walks a command line (the whole input, or one nested in it).
    fn source(&mut self, src: &str) {
        if self.depth >= MAX_DEPTH {
            self.ask("commands nested too deeply to analyse");
            self.crude(src);
            return;
        }
        if count_openers(src) > MAX_OPENERS {
            self.ask("could not parse the command (too many nested constructs)");
            self.crude(src);
            return;
        }
        let mut parser = brush_parser::Parser::new(std::io::Cursor::new(src.as_bytes()), &parser_options());
        match parser.parse_program() {
            Ok(program) => {
                self.depth += 1;
                for list in &program.complete_commands {
                    self.list(list, Ctx::default());
                }
                self.depth -= 1;
            }
            Err(error) => {
                self.ask(format!("could not parse the command ({error})"));
                self.crude(src);
            }
        }
    }

    /// A rough split for text the parser rejected: operators and brackets separate commands, quotes and
    /// backslashes are dropped. Only deny rules and the blocklist use the result (the command is asked
    /// about anyway), so erring towards more, smaller commands is the safe side.
    fn crude(&mut self, src: &str) {
        let split: String = src
            .chars()
            .filter(|c| !matches!(c, '\'' | '"' | '\\'))
            .map(|c| if ";&|(){}`<>\n\r".contains(c) { '\n' } else { c })
            .collect();
        for line in split.lines() {
            let mut words = line.split_whitespace().peekable();
            while words.next_if(|word| is_keyword(word) || *word == "$").is_some() {}
            let mut assigns = Vec::new();
            while let Some(word) = words.next_if(|word| is_assignment(word)) {
                let (name, value) = word.split_once('=').unwrap_or((word, ""));
                assigns.push(Assign { name: name.to_owned(), value: Word::literal(value), word: Word::literal(word) });
            }
            let words: Vec<Word> = words.map(Word::literal).collect();
            if let Some(reason) = blocklist::check(&words) {
                self.block(reason);
            }
            if !words.is_empty() || !assigns.is_empty() {
                self.commands.push(SimpleCommand::new(words, assigns));
            }
        }
    }

    fn list(&mut self, list: &ast::CompoundList, ctx: Ctx) {
        for ast::CompoundListItem(and_or, separator) in &list.0 {
            let background = ctx.background || matches!(separator, ast::SeparatorOperator::Async);
            let ctx = Ctx { background, ..ctx };
            self.pipeline(&and_or.first, ctx);
            for next in &and_or.additional {
                let (ast::AndOr::And(pipeline) | ast::AndOr::Or(pipeline)) = next;
                self.pipeline(pipeline, ctx);
            }
        }
    }

    fn pipeline(&mut self, pipeline: &ast::Pipeline, ctx: Ctx) {
        let in_pipeline = ctx.in_pipeline || pipeline.seq.len() > 1;
        for (i, command) in pipeline.seq.iter().enumerate() {
            let piped_stdin = ctx.piped_stdin || i > 0;
            self.command_node(command, Ctx { in_pipeline, piped_stdin, ..ctx });
        }
    }

    fn command_node(&mut self, command: &ast::Command, ctx: Ctx) {
        match command {
            ast::Command::Simple(simple) => self.simple(simple, ctx),
            ast::Command::Compound(compound, redirects) => {
                let ctx = self.redirect_list(redirects.as_ref(), ctx);
                self.compound(compound, ctx);
            }
            ast::Command::Function(definition) => {
                self.ask("a function definition");
                let name = self.word(&definition.fname.value, false).text();
                self.functions.push(name);
                let ast::FunctionBody(body, redirects) = &definition.body;
                let ctx = self.redirect_list(redirects.as_ref(), Ctx::default());
                self.compound(body, ctx);
                self.functions.pop();
            }
            ast::Command::ExtendedTest(test, redirects) => {
                self.redirect_list(redirects.as_ref(), ctx);
                self.extended_test(&test.expr);
            }
        }
    }

    fn compound(&mut self, compound: &ast::CompoundCommand, ctx: Ctx) {
        use ast::CompoundCommand as C;
        match compound {
            C::Arithmetic(arithmetic) => {
                let expr = &arithmetic.expr.value;
                self.arithmetic(expr);
                if !is_numeric_arithmetic(expr) {
                    // brush-parser reads `( (rm x) )` as `((rm x))`; bash runs it as nested subshells. Read
                    // the text as commands too, for deny rules and the blocklist (it always asks anyway).
                    let writes = self.writes.len();
                    self.source(expr);
                    self.writes.truncate(writes);
                }
            }
            C::ArithmeticForClause(clause) => {
                for expr in [&clause.initializer, &clause.condition, &clause.updater].into_iter().flatten() {
                    self.arithmetic(&expr.value);
                }
                self.list(&clause.body.list, ctx);
            }
            C::BraceGroup(group) => self.list(&group.list, ctx),
            C::Subshell(subshell) => self.list(&subshell.list, ctx),
            C::ForClause(clause) => {
                if clause.variable_name.chars().any(|c| c.is_ascii_uppercase()) {
                    self.ask(format!("a `for` loop that sets the variable {}", clause.variable_name));
                }
                for value in clause.values.iter().flatten() {
                    let word = self.word(&value.value, true);
                    self.for_list_word(&word);
                }
                self.list(&clause.body.list, ctx);
            }
            C::CaseClause(clause) => {
                self.word(&clause.value.value, false);
                for item in &clause.cases {
                    for pattern in &item.patterns {
                        self.word(&pattern.value, false);
                    }
                    if let Some(list) = &item.cmd {
                        self.list(list, ctx);
                    }
                }
            }
            C::IfClause(clause) => {
                self.list(&clause.condition, ctx);
                self.list(&clause.then, ctx);
                for branch in clause.elses.iter().flatten() {
                    if let Some(condition) = &branch.condition {
                        self.list(condition, ctx);
                    }
                    self.list(&branch.body, ctx);
                }
            }
            C::WhileClause(clause) | C::UntilClause(clause) => {
                self.list(&clause.0, ctx);
                self.list(&clause.1.list, ctx);
            }
            C::Coprocess(coprocess) => self.command_node(&coprocess.body, Ctx { background: true, ..ctx }),
        }
    }

    fn arithmetic(&mut self, expr: &str) {
        if !is_numeric_arithmetic(expr) {
            self.ask("arithmetic evaluation with names in it, which can run commands");
            self.embedded(expr);
        }
    }

    fn extended_test(&mut self, expr: &ast::ExtendedTestExpr) {
        use ast::ExtendedTestExpr as E;
        match expr {
            E::And(left, right) | E::Or(left, right) => {
                self.extended_test(left);
                self.extended_test(right);
            }
            E::Not(inner) | E::Parenthesized(inner) => self.extended_test(inner),
            E::UnaryTest(predicate, operand) => {
                let operand = self.word(&operand.value, false);
                let names_variable = matches!(
                    predicate,
                    ast::UnaryPredicate::ShellVariableIsSetAndAssigned
                        | ast::UnaryPredicate::ShellVariableIsSetAndNameRef
                );
                if names_variable && (operand.text().contains('[') || !operand.is_plain()) {
                    self.ask("`[[ -v ]]` on an index or a value known only when it runs, evaluated as code");
                }
                if is_file_predicate(predicate) {
                    self.probe(&operand);
                }
            }
            E::BinaryTest(predicate, left, right) => {
                let left = self.word(&left.value, false);
                let right = self.word(&right.value, false);
                if matches!(
                    predicate,
                    ast::BinaryPredicate::LeftFileIsNewerOrExistsWhenRightDoesNot
                        | ast::BinaryPredicate::LeftFileIsOlderOrDoesNotExistWhenRightDoes
                        | ast::BinaryPredicate::FilesReferToSameDeviceAndInodeNumbers
                ) {
                    self.probe(&left);
                    self.probe(&right);
                }
                let numbers = [left, right]
                    .iter()
                    .all(|word| word.plain_text().is_some_and(|text| text.trim().parse::<i64>().is_ok()));
                if is_arithmetic_predicate(predicate) && !numbers {
                    self.ask("an arithmetic comparison in `[[ ]]`, which evaluates variables as code");
                }
            }
        }
    }
}

impl Walker {
    /// A word of a `for` loop's list: bash expands a glob or `~` there, and the matches are names read from the
    /// file system, judged like a read (`for f in ~/.ssh/*` listed a denied directory, `for f in ../*/*` another
    /// project); a word whose value only the run knows is asked about.
    fn for_list_word(&mut self, word: &super::words::Word) {
        let text = word.text();
        if word.has_opaque() {
            // Its value is split and globbed too (`X='../*'; for f in $X`).
            self.ask(format!("a `for` loop over `{text}`, names only known when the command runs"));
        } else if word.segs.iter().any(|seg| matches!(seg, super::words::Seg::Glob(_))) || text.starts_with('~') {
            self.reads.push(text);
        } else if text.contains('/') && super::words::has_glob(&text) {
            // A quoted pattern is the loop variable's value as written; `echo $x` unquoted then globs it
            // (`for x in '../*'; do echo $x; done` listed another project).
            self.ask(format!("a `for` loop over the pattern `{text}`, which the loop's variable would glob"));
        }
    }

    /// A path a `[[ ]]` file test probes: read like `stat`'s operand (outside the workspace asks), and asked
    /// about when only the run knows it.
    fn probe(&mut self, operand: &Word) {
        match operand.plain_text() {
            Some(text) => self.reads.push(text),
            None => self.ask(format!("a file test on `{}`, a path only known when the command runs", operand.text())),
        }
    }
}

/// The `[[ ]]` unary tests that look at a file (not at a string, a variable or an option).
fn is_file_predicate(predicate: &ast::UnaryPredicate) -> bool {
    use ast::UnaryPredicate as P;
    !matches!(
        predicate,
        P::StringHasZeroLength
            | P::StringHasNonZeroLength
            | P::ShellOptionEnabled
            | P::ShellVariableIsSetAndAssigned
            | P::ShellVariableIsSetAndNameRef
            | P::FdIsOpenTerminal
    )
}

fn is_keyword(word: &str) -> bool {
    matches!(
        word,
        "if" | "then"
            | "else"
            | "elif"
            | "fi"
            | "do"
            | "done"
            | "while"
            | "until"
            | "for"
            | "in"
            | "case"
            | "esac"
            | "time"
            | "!"
            | "function"
            | "select"
            | "coproc"
    )
}

fn is_arithmetic_predicate(predicate: &ast::BinaryPredicate) -> bool {
    use ast::BinaryPredicate as P;
    matches!(
        predicate,
        P::ArithmeticEqualTo
            | P::ArithmeticNotEqualTo
            | P::ArithmeticLessThan
            | P::ArithmeticLessThanOrEqualTo
            | P::ArithmeticGreaterThan
            | P::ArithmeticGreaterThanOrEqualTo
    )
}
