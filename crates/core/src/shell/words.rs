//! Words after parsing: which parts are literal text (after quote removal), which are unquoted glob
//! patterns, and which are expansions whose value the analyser cannot know.
//!
//! Rules match literal text only; a deny rule treats everything unknown as "could be anything", so the
//! distinction is kept per segment rather than flattened into one string.

/// One part of a word.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Seg {
    /// Literal text after quote removal: exactly what the program receives.
    Text(String),
    /// Unquoted glob characters (`*.rs`): the shell may replace them with file names. Literal for allow
    /// rules (the file names are still arguments of the same program), a wildcard for deny rules.
    Glob(String),
    /// An expansion (`$X`, `$(…)`, `{a,b}`, `~user`), kept as written: its value is unknown.
    Opaque(String),
}

/// A word of a simple command, split into segments.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Word {
    pub segs: Vec<Seg>,
    /// The shell globs the word, though the analyser could not split it into segments (an expansion or a quoted
    /// part beside unquoted glob characters, `$PWD/../*`): its value is names of files, unknown here.
    pub globbed: bool,
}

impl Word {
    pub(super) fn literal(text: &str) -> Word {
        Word { segs: vec![Seg::Text(text.to_owned())], globbed: false }
    }

    /// The word as shown to people and rules: literal parts unquoted, expansions as written.
    pub(super) fn text(&self) -> String {
        self.segs
            .iter()
            .map(|seg| match seg {
                Seg::Text(s) | Seg::Glob(s) | Seg::Opaque(s) => s.as_str(),
            })
            .collect()
    }

    /// Only literal text: no expansion and no glob.
    pub(super) fn is_plain(&self) -> bool {
        self.segs.iter().all(|seg| matches!(seg, Seg::Text(_)))
    }

    /// Whether some part is an expansion whose value is unknown (globs don't count).
    pub(super) fn has_opaque(&self) -> bool {
        self.segs.iter().any(|seg| matches!(seg, Seg::Opaque(_)))
    }

    /// The literal text when the word is plain.
    pub(super) fn plain_text(&self) -> Option<String> {
        self.is_plain().then(|| self.text())
    }
}

/// Whether unquoted text would be subject to pathname expansion.
pub(super) fn has_glob(text: &str) -> bool {
    text.contains(['*', '?']) || text.find('[').is_some_and(|open| text[open..].contains(']'))
}

/// Whether a word's unquoted skeleton (quoted parts replaced by `\0`) contains a brace expansion
/// (`{a,b}`, `{1..3}`), which turns one word into several: `{rm,-rf,/}` is three words.
pub(super) fn has_brace_expansion(skeleton: &str) -> bool {
    let Some(open) = skeleton.find('{') else { return false };
    let Some(close) = skeleton.rfind('}') else { return false };
    close > open && {
        let inner = &skeleton[open..close];
        inner.contains(',') || inner.contains("..")
    }
}

/// Decodes the body of `$'…'` (ANSI-C quoting). `None` for an escape this decoder doesn't know, so the
/// caller treats the word as unknown rather than guessing.
pub(super) fn decode_ansi_c(body: &str) -> Option<String> {
    let mut out = String::new();
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let escape = chars.next()?;
        let simple = match escape {
            'a' => Some('\x07'),
            'b' => Some('\x08'),
            'e' | 'E' => Some('\x1b'),
            'f' => Some('\x0c'),
            'n' => Some('\n'),
            'r' => Some('\r'),
            't' => Some('\t'),
            'v' => Some('\x0b'),
            '\\' | '\'' | '"' | '?' => Some(escape),
            _ => None,
        };
        if let Some(decoded) = simple {
            out.push(decoded);
            continue;
        }
        let (radix, max_digits, first) = match escape {
            '0'..='7' => (8, 3, Some(escape)),
            'x' => (16, 2, None),
            'u' => (16, 4, None),
            'U' => (16, 8, None),
            'c' => {
                let control = chars.next()?;
                out.push(char::from_u32(u32::from(control.to_ascii_uppercase()) ^ 0x40)?);
                continue;
            }
            _ => return None,
        };
        let mut digits: String = first.into_iter().collect();
        while digits.len() < max_digits {
            match chars.peek() {
                Some(d) if d.is_digit(radix) => {
                    digits.push(*d);
                    chars.next();
                }
                _ => break,
            }
        }
        let value = u32::from_str_radix(&digits, radix).ok()?;
        out.push(char::from_u32(value)?);
    }
    Some(out)
}

/// The command text inside backticks, with the escapes that backticks remove (`` \` ``, `\\`, `\$`)
/// removed, so it parses the way bash will run it.
pub(super) fn unescape_backquoted(body: &str) -> String {
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' && matches!(chars.peek(), Some('`' | '\\' | '$')) {
            if let Some(next) = chars.next() {
                out.push(next);
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The character an escape sequence stands for. Outside double quotes `\x` is `x`; inside them only
/// `\$ \` \" \\` and backslash-newline lose the backslash.
pub(super) fn unescape(sequence: &str, in_double_quotes: bool) -> String {
    let mut chars = sequence.chars();
    match (chars.next(), chars.next()) {
        (Some('\\'), Some('\n')) => String::new(),
        (Some('\\'), Some(c)) if !in_double_quotes || matches!(c, '$' | '`' | '"' | '\\') => c.to_string(),
        _ => sequence.to_owned(),
    }
}

/// Whether an arithmetic expression is plain numbers and operators. Anything with a name in it can run
/// commands: bash evaluates a variable's value as an expression, and `a[$(cmd)]` inside it runs `cmd`.
pub(super) fn is_numeric_arithmetic(expr: &str) -> bool {
    expr.chars().all(|c| c.is_ascii_digit() || c.is_ascii_whitespace() || "+-*/%()<>=!&|^~?:,".contains(c))
}

/// The part of a path after its last `/` (the program a path names).
pub(super) fn basename(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// `NAME=value` (or `NAME+=value`) with a valid shell variable name.
pub(super) fn is_assignment(word: &str) -> bool {
    let Some(eq) = word.find('=') else { return false };
    let name = word[..eq].strip_suffix('+').unwrap_or(&word[..eq]);
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}
