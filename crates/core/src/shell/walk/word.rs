//! Words: quote removal, and the expansions inside them (substitutions are analysed as commands).

use brush_parser::word::{self as shell_word, Parameter, ParameterExpr, TildeExpr, WordPiece, WordPieceWithSource};

use super::super::words::{Seg, Word, decode_ansi_c, has_brace_expansion, has_glob, unescape, unescape_backquoted};
use super::{MAX_DEPTH, Walker, parser_options};

impl Walker {
    /// Looks for substitutions inside text that is evaluated later (`${X:-$(cmd)}`, `$(( $(cmd) ))`).
    pub(super) fn embedded(&mut self, text: &str) {
        if text.contains(['$', '`']) && self.depth < MAX_DEPTH {
            self.depth += 1;
            self.word(text, false);
            self.depth -= 1;
        }
    }

    /// Parses one word into segments; substitutions in it are analysed as commands of their own. `expand`:
    /// the word is subject to brace and pathname expansion (arguments, not assignment values).
    pub(super) fn word(&mut self, raw: &str, expand: bool) -> Word {
        let pieces = match shell_word::parse(raw, &parser_options()) {
            Ok(pieces) => pieces,
            Err(_) => {
                self.ask(format!("a word the analyser could not parse (`{raw}`)"));
                self.crude(raw);
                return Word { segs: vec![Seg::Opaque(raw.to_owned())], globbed: has_glob(raw) };
            }
        };
        let mut sink = (Vec::new(), String::new());
        for piece in &pieces {
            self.piece(raw, piece, false, expand, &mut sink);
        }
        let (segs, skeleton) = sink;
        if expand && has_brace_expansion(&skeleton) {
            return Word { segs: vec![Seg::Opaque(raw.to_owned())], globbed: has_glob(&skeleton) };
        }
        // bash globs the whole word, quoted parts standing for themselves: `.gi["t"]` and `[\-]v` are bracket
        // expressions although no single piece is one. Such a word's value depends on the files there: unknown.
        let glob_pieces = segs.iter().any(|seg| matches!(seg, Seg::Glob(_)));
        if expand && has_glob(&skeleton) && (skeleton.contains('\0') || !glob_pieces) {
            return Word { segs: vec![Seg::Opaque(raw.to_owned())], globbed: true };
        }
        let mut word = Word::default();
        for seg in segs {
            match (word.segs.last_mut(), seg) {
                (Some(Seg::Text(last)), Seg::Text(next)) => last.push_str(&next),
                (_, seg) => word.segs.push(seg),
            }
        }
        if word.segs.is_empty() {
            word.segs.push(Seg::Text(String::new()));
        }
        word
    }

    /// One piece of a word. `sink` collects the segments and the unquoted skeleton (quoted parts are `\0`)
    /// used to spot brace expansion.
    pub(super) fn piece(
        &mut self,
        raw: &str,
        piece: &WordPieceWithSource,
        quoted: bool,
        expand: bool,
        sink: &mut (Vec<Seg>, String),
    ) {
        let source = raw.get(piece.start_index..piece.end_index).unwrap_or(raw).to_owned();
        let seg = match &piece.piece {
            WordPiece::Text(text) if !quoted => {
                sink.1.push_str(text);
                if expand && has_glob(text) { Seg::Glob(text.clone()) } else { Seg::Text(text.clone()) }
            }
            WordPiece::Text(text) | WordPiece::SingleQuotedText(text) => Seg::Text(text.clone()),
            WordPiece::AnsiCQuotedText(body) => decode_ansi_c(body).map_or(Seg::Opaque(source), Seg::Text),
            WordPiece::DoubleQuotedSequence(inner) | WordPiece::GettextDoubleQuotedSequence(inner) => {
                sink.1.push('\0');
                let mut inner_sink = (Vec::new(), String::new());
                for part in inner {
                    self.piece(raw, part, true, expand, &mut inner_sink);
                }
                sink.0.extend(inner_sink.0);
                return;
            }
            WordPiece::TildeExpansion(TildeExpr::Home) => {
                sink.1.push('~');
                Seg::Text("~".to_owned())
            }
            WordPiece::TildeExpansion(_) => Seg::Opaque(source),
            WordPiece::ParameterExpansion(expr) => {
                if !is_simple_parameter(expr) {
                    self.ask(format!("a parameter expansion with operators (`{source}`)"));
                    let inner = source.strip_prefix("${").and_then(|s| s.strip_suffix('}')).unwrap_or("");
                    self.embedded(inner);
                }
                if expand && !quoted && holds_earlier_words(expr) {
                    // Unquoted, its value is globbed, and the command line itself chose it (`: '../*'; echo $_`):
                    // counted as unquoted glob characters, so the word is names of files only known when it runs.
                    sink.1.push('*');
                }
                Seg::Opaque(source)
            }
            WordPiece::CommandSubstitution(command) => {
                self.ask("command substitution `$(…)`");
                self.source(command);
                Seg::Opaque(source)
            }
            WordPiece::BackquotedCommandSubstitution(command) => {
                self.ask("command substitution with backticks");
                self.source(&unescape_backquoted(command));
                Seg::Opaque(source)
            }
            WordPiece::EscapeSequence(sequence) => Seg::Text(unescape(sequence, quoted)),
            WordPiece::ArithmeticExpression(expr) => {
                self.arithmetic(&expr.value);
                Seg::Opaque(source)
            }
        };
        let unquoted_text =
            !quoted && matches!(piece.piece, WordPiece::Text(_) | WordPiece::TildeExpansion(TildeExpr::Home));
        if !unquoted_text {
            sink.1.push('\0');
        }
        sink.0.push(seg);
    }
}

/// `$X`, `${X}`, `$1`, `$@`, `${#X}`: expansions that only produce a value. Everything else
/// (`${X:-$(cmd)}`, `${!X}`, `${X@P}`, `${a[$i]}`) can run code or depends on another variable's name.
/// A parameter whose value the command line itself can set without an assignment: the positional and special
/// ones (`$_` is the previous command's last argument, `$@`, `$1`), and those bash sets from what a command did
/// (`BASH_REMATCH` from `[[ =~ ]]`, `REPLY` from `read`, `BASH_ARGV`, …). An environment variable's value comes
/// from outside the line.
fn holds_earlier_words(expr: &ParameterExpr) -> bool {
    const SET_BY_COMMANDS: &[&str] = &[
        "BASH_REMATCH",
        "BASH_ARGV",
        "BASH_ARGC",
        "BASH_COMMAND",
        "BASH_EXECUTION_STRING",
        "REPLY",
        "OPTARG",
        "MAPFILE",
        "READLINE_LINE",
        "COMP_LINE",
        "COMP_WORDS",
        "DIRSTACK",
        "FUNCNAME",
        "BASH_SOURCE",
    ];
    let parameter = match expr {
        ParameterExpr::Parameter { parameter, .. } => parameter,
        _ => return true,
    };
    match parameter {
        Parameter::Positional(_) | Parameter::Special(_) => true,
        Parameter::Named(name) | Parameter::NamedWithAllIndices { name, .. } => {
            name == "_" || SET_BY_COMMANDS.contains(&name.as_str())
        }
        _ => true,
    }
}

fn is_simple_parameter(expr: &ParameterExpr) -> bool {
    let plain = |parameter: &Parameter| {
        matches!(
            parameter,
            Parameter::Positional(_)
                | Parameter::Special(_)
                | Parameter::Named(_)
                | Parameter::NamedWithAllIndices { .. }
        )
    };
    match expr {
        ParameterExpr::Parameter { parameter, indirect: false }
        | ParameterExpr::ParameterLength { parameter, indirect: false } => plain(parameter),
        _ => false,
    }
}
