//! Simple commands: their words, assignments and redirections, and what the builtins and wrappers among
//! them run.

use brush_parser::ast;
use brush_parser::word as shell_word;

use super::super::classify::{
    find_exec_ranges, is_interpreter, is_shell, program_name, reads_program_from_stdin, shell_command_string, wrapped,
    wrapper_for,
};
use super::super::words::{Seg, Word};
use super::super::{SimpleCommand, blocklist};
use super::{Assign, Ctx, MAX_DEPTH, Walker, parser_options};

impl Walker {
    /// Walks a compound command's redirections; here-documents and here-strings make stdin "piped".
    pub(super) fn redirect_list(&mut self, redirects: Option<&ast::RedirectList>, ctx: Ctx) -> Ctx {
        let mut ctx = ctx;
        for redirect in redirects.iter().flat_map(|list| list.0.iter()) {
            if self.redirect(redirect).is_some() {
                ctx.piped_stdin = true;
            }
        }
        ctx
    }

    /// Records what a redirection writes or runs. Returns the text it feeds to standard input (here-documents
    /// and here-strings).
    fn redirect(&mut self, redirect: &ast::IoRedirect) -> Option<String> {
        use ast::IoFileRedirectKind as K;
        match redirect {
            ast::IoRedirect::File(fd, kind, target) => match target {
                ast::IoFileRedirectTarget::Filename(word) => {
                    if fd.is_some_and(|fd| fd != 0) && matches!(kind, K::Read) {
                        // `1<file >/dev/stdout` reopens the file for writing through the descriptor.
                        self.ask("a file opened on an output descriptor (`N<file`), which /dev/stdout can reopen for writing");
                    }
                    let word = self.word(&word.value, true);
                    self.target(&word, matches!(kind, K::Write | K::Append | K::Clobber | K::ReadAndWrite));
                    if matches!(kind, K::Read | K::ReadAndWrite) {
                        self.read_target(&word);
                    }
                }
                ast::IoFileRedirectTarget::Duplicate(word) => {
                    let word = self.word(&word.value, true);
                    let text = word.text();
                    let is_fd = word.is_plain() && (text == "-" || text.chars().all(|c| c.is_ascii_digit()));
                    // `>&file` is `>file 2>&1`.
                    self.target(&word, matches!(kind, K::DuplicateOutput) && !is_fd);
                }
                ast::IoFileRedirectTarget::Fd(_) => {}
                ast::IoFileRedirectTarget::ProcessSubstitution(_, subshell) => self.process_substitution(subshell),
            },
            ast::IoRedirect::OutputAndError(word, _) => {
                let word = self.word(&word.value, true);
                self.target(&word, true);
            }
            ast::IoRedirect::HereString(fd, word) => {
                let word = self.word(&word.value, false);
                return fd.is_none_or(|fd| fd == 0).then(|| word.text());
            }
            ast::IoRedirect::HereDocument(fd, doc) => {
                if doc.requires_expansion {
                    match shell_word::parse_heredoc(&doc.doc.value, &parser_options()) {
                        Ok(pieces) => {
                            let mut sink = (Vec::new(), String::new());
                            for piece in &pieces {
                                self.piece(&doc.doc.value, piece, true, false, &mut sink);
                            }
                        }
                        Err(_) => {
                            self.ask("a here-document the analyser could not parse");
                            self.crude(&doc.doc.value);
                        }
                    }
                }
                return fd.is_none_or(|fd| fd == 0).then(|| doc.doc.value.clone());
            }
        }
        None
    }

    fn target(&mut self, word: &Word, writes: bool) {
        let text = word.text();
        if text.starts_with("/dev/tcp/") || text.starts_with("/dev/udp/") {
            self.ask("a network connection through /dev/tcp or /dev/udp");
        }
        if !writes {
            return;
        }
        if blocklist::is_disk_device(&text) {
            self.block(format!("writing to the disk device {text} destroys the data on it"));
        }
        if !word.is_plain() {
            self.ask(format!("a redirection to a path only known when the command runs (`{text}`)"));
        }
        if !matches!(text.as_str(), "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/fd/1" | "/dev/fd/2") {
            self.writes.push(text);
        }
    }

    /// A file a redirection reads (`< file`): judged like any other read.
    fn read_target(&mut self, word: &Word) {
        let text = word.text();
        if !word.is_plain() {
            self.ask(format!("a redirection from a path only known when the command runs (`{text}`)"));
        } else if !matches!(text.as_str(), "/dev/null" | "/dev/zero" | "/dev/stdin") {
            self.reads.push(text);
        }
    }

    pub(super) fn process_substitution(&mut self, subshell: &ast::SubshellCommand) {
        self.ask("process substitution `<(…)` or `>(…)`");
        self.list(&subshell.list, Ctx::default());
    }

    pub(super) fn simple(&mut self, simple: &ast::SimpleCommand, ctx: Ctx) {
        use ast::CommandPrefixOrSuffixItem as Item;
        let mut words = Vec::new();
        let mut assigns = Vec::new();
        let mut stdin = Vec::new();
        let prefix = simple.prefix.iter().flat_map(|prefix| prefix.0.iter());
        for item in prefix {
            match item {
                Item::AssignmentWord(assignment, _) => assigns.push(self.assignment(assignment)),
                _ => self.item(item, &mut words, &mut stdin),
            }
        }
        if let Some(name) = &simple.word_or_name {
            words.push(self.word(&name.value, true));
        }
        for item in simple.suffix.iter().flat_map(|suffix| suffix.0.iter()) {
            self.item(item, &mut words, &mut stdin);
        }
        if let Some(word) = words.iter().find(|word| names_a_descriptor_variable(word)) {
            // The parser reads `{NAME}>file` as a word and a redirection; bash assigns NAME a descriptor number,
            // which changes PATH, HOME or whatever NAME is for the rest of the line.
            self.ask(format!("`{}` before a redirection assigns a variable", word.text()));
        }
        let ctx = Ctx { piped_stdin: ctx.piped_stdin || !stdin.is_empty(), ..ctx };
        self.command(words, assigns, ctx, &stdin);
    }

    /// A word, redirection or process substitution of a simple command (assignments after the command name,
    /// as in `export A=1`, are ordinary arguments).
    fn item(&mut self, item: &ast::CommandPrefixOrSuffixItem, words: &mut Vec<Word>, stdin: &mut Vec<String>) {
        use ast::CommandPrefixOrSuffixItem as Item;
        match item {
            Item::IoRedirect(redirect) => stdin.extend(self.redirect(redirect)),
            Item::Word(word) | Item::AssignmentWord(_, word) => words.push(self.word(&word.value, true)),
            Item::ProcessSubstitution(kind, subshell) => {
                self.process_substitution(subshell);
                let shown = if matches!(kind, ast::ProcessSubstitutionKind::Read) { "<(…)" } else { ">(…)" };
                words.push(Word { segs: vec![Seg::Opaque(shown.to_owned())], globbed: false });
            }
        }
    }

    fn assignment(&mut self, assignment: &ast::Assignment) -> Assign {
        let name = match &assignment.name {
            ast::AssignmentName::VariableName(name) => name.clone(),
            ast::AssignmentName::ArrayElementName(name, index) => {
                if !index.chars().all(|c| c.is_ascii_digit()) {
                    self.ask("an array assignment with a computed index, which is evaluated as code");
                    self.embedded(index);
                }
                format!("{name}[{index}]")
            }
        };
        let value = match &assignment.value {
            ast::AssignmentValue::Scalar(word) => self.word(&word.value, false),
            ast::AssignmentValue::Array(elements) => {
                let mut parts = Vec::new();
                for (key, value) in elements {
                    if let Some(key) = key {
                        self.word(&key.value, false);
                    }
                    parts.push(self.word(&value.value, true));
                }
                let text = format!("({})", parts.iter().map(Word::text).collect::<Vec<_>>().join(" "));
                if parts.iter().all(Word::is_plain) {
                    Word::literal(&text)
                } else {
                    Word { segs: vec![Seg::Opaque(text)], globbed: parts.iter().any(|part| part.globbed) }
                }
            }
        };
        if let Some(text) = value.plain_text().filter(|text| text.contains("$(") || text.contains('`')) {
            // A literal that is code (`x='a[$(cmd)]'`) runs when an arithmetic context reads the variable.
            self.embedded(&text);
        }
        let operator = if assignment.append { "+=" } else { "=" };
        let mut word = Word::literal(&format!("{name}{operator}"));
        word.segs.extend(value.segs.iter().cloned());
        Assign { name, value, word }
    }

    /// One simple command (from the AST, or the command a wrapper runs).
    fn command(&mut self, words: Vec<Word>, assigns: Vec<Assign>, ctx: Ctx, stdin: &[String]) {
        if words.is_empty() && assigns.is_empty() {
            return;
        }
        if let Some(first) = words.first() {
            if !first.is_plain() {
                self.ask(format!("a variable or other expansion in command position (`{}`)", first.text()));
            }
            if let Some(reason) = blocklist::check(&words) {
                self.block(reason);
            }
            if let Some(name) = first.plain_text()
                && (ctx.in_pipeline || ctx.background)
                && self.functions.contains(&name)
            {
                self.block(format!(
                    "a fork bomb: the function `{name}` starts copies of itself in a pipeline or in the background"
                ));
            }
        }
        self.commands.push(SimpleCommand::new(words.clone(), assigns));
        self.runs_other_code(&words, ctx, stdin);
    }

    /// Builtins and programs that run code the rules can't see: always ask, and analyse what they run
    /// where possible, so that deny rules and the blocklist still apply to it.
    fn runs_other_code(&mut self, words: &[Word], ctx: Ctx, stdin: &[String]) {
        let Some(name) = program_name(words) else { return };
        match name.as_str() {
            "eval" => {
                self.ask("`eval`, which runs its arguments as a command line");
                let args: Option<Vec<String>> = words[1..].iter().map(Word::plain_text).collect();
                if let Some(args) = args {
                    self.source(&args.join(" "));
                }
            }
            "source" | "." => {
                self.ask(format!("`{name}`, which runs a script in this shell"));
                for text in stdin {
                    self.source(text); // `. /dev/stdin <<< 'cmd'`
                }
            }
            "alias" | "unalias" => {
                self.ask("an alias definition");
                // With `expand_aliases` the value runs as a command: read it as one.
                for value in
                    words[1..].iter().filter_map(|word| word.plain_text()?.split_once('=').map(|(_, v)| v.to_owned()))
                {
                    self.source(&value);
                }
            }
            "test" | "[" | "printf" | "declare" | "typeset" | "local" | "export" | "readonly" | "let" | "unset"
            | "read" | "mapfile" | "readarray" | "getopts" | "wait" => self.evaluated_arguments(&name, words),
            "trap" => {
                self.ask("`trap`, which runs a command later");
                self.nested_word(words.get(1));
            }
            "command" if is_command_query(words) => {}
            shell if is_shell(shell) => match shell_command_string(words) {
                Some(string) => {
                    self.ask(format!("`{name} -c`, which runs a command line"));
                    self.nested_word(string.and_then(|i| words.get(i)));
                }
                None if ctx.piped_stdin && reads_program_from_stdin(words, true) => {
                    self.ask(format!("`{name}` reading commands from a pipe, here-document or here-string"));
                    for text in stdin {
                        self.source(text);
                    }
                }
                None => {}
            },
            interpreter if is_interpreter(interpreter) => {
                if ctx.piped_stdin && reads_program_from_stdin(words, false) {
                    self.ask(format!("`{name}` reading a program from a pipe, here-document or here-string"));
                }
            }
            "find" => {
                let ranges = find_exec_ranges(words);
                if !ranges.is_empty() {
                    self.ask("`find -exec`, which runs another command");
                }
                for (start, end) in ranges {
                    self.inner(words[start..end].to_vec(), ctx);
                }
            }
            "watch" => {
                self.ask("`watch`, which runs another command");
                let args: Vec<String> = words[1..].iter().map(Word::text).filter(|arg| !arg.starts_with('-')).collect();
                self.source(&args.join(" "));
            }
            other => {
                let Some(spec) = wrapper_for(other) else { return };
                let found = wrapped(&spec, words);
                if other == "env" && found.starts.is_empty() && found.strings.is_empty() {
                    return; // `env` alone prints the environment.
                }
                self.ask(format!("`{other}`, which runs another command"));
                for index in found.strings {
                    self.nested_word(words.get(index));
                }
                for start in found.starts {
                    self.inner(words[start..].to_vec(), ctx);
                }
            }
        }
    }

    /// Builtins that evaluate array subscripts or arithmetic in their arguments, even quoted ones:
    /// `[ -v 'a[$(cmd)]' ]`, `printf -v 'a[$(cmd)]'` and `declare 'a[$(cmd)]=1'` run `cmd`.
    fn evaluated_arguments(&mut self, name: &str, words: &[Word]) {
        let args = &words[1..];
        let checked = match name {
            "test" | "[" | "printf" => args.iter().any(|arg| arg.plain_text().is_some_and(|text| text == "-v")),
            _ => true,
        };
        for arg in args.iter().filter(|_| checked) {
            let text = arg.text();
            if text.contains("$(") || text.contains('`') || (text.contains('[') && text.contains('$')) {
                self.ask(format!("`{name}` with an argument it evaluates as code (`{text}`)"));
                if arg.is_plain() {
                    // A quoted `'a[$(cmd)]'`: the substitution only runs when the builtin evaluates it.
                    self.embedded(&text);
                }
            }
        }
    }

    /// A command run by a wrapper (`sudo rm x` runs `rm x`).
    fn inner(&mut self, words: Vec<Word>, ctx: Ctx) {
        if self.depth >= MAX_DEPTH {
            self.ask("commands nested too deeply to analyse");
            return;
        }
        self.depth += 1;
        self.command(words, Vec::new(), ctx, &[]);
        self.depth -= 1;
    }

    /// Parses a word that is itself a command line (`bash -c 'cmd'`), when its text is known.
    fn nested_word(&mut self, word: Option<&Word>) {
        if let Some(text) = word.and_then(Word::plain_text) {
            self.source(&text);
        }
    }
}

/// `command -v name` / `command -V name` only describe a command.
fn is_command_query(words: &[Word]) -> bool {
    words[1..]
        .iter()
        .map(Word::text)
        .take_while(|arg| arg.starts_with('-') && arg != "--")
        .any(|arg| arg.contains(['v', 'V']))
}

/// `{NAME}`: the form of bash's `{NAME}>file` redirection, which assigns NAME.
fn names_a_descriptor_variable(word: &Word) -> bool {
    word.plain_text().is_some_and(|text| {
        text.strip_prefix('{').and_then(|rest| rest.strip_suffix('}')).is_some_and(|name| {
            name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
    })
}
