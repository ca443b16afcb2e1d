//! Matching rule specifiers (`npm test`, `npm run test:*`, `git *`) against one simple command.
//!
//! Both sides become token streams in which a word boundary is its own token. That is why a quoted space
//! inside one argument (`git push 'x --dry-run'`) can never satisfy a space in a rule, and why `git  status`
//! (two spaces, one boundary to the shell) equals `git status`.
//!
//! Allow matching is exact: an expansion in the command (`$X`) matches only a `*` of the rule. Deny
//! matching is the broad reading: an expansion or a glob in the command may stand for anything, including
//! several words, so `git $X` is denied by `git push:*`.

use super::words::{Seg, Word};

/// A token of a rule specifier.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pat {
    Char(char),
    Sep,
    /// `*`: any run of command tokens, word boundaries included.
    Star,
}

/// A token of a command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tok {
    Char(char),
    Sep,
    /// An expansion, for allow matching: only a `*` of the rule may consume it.
    Unknown,
    /// An expansion or glob, for deny matching: it may stand for any run of rule tokens.
    Wild,
}

/// Beyond this many DP cells the match is not computed: allow says no, deny says yes.
const MAX_CELLS: usize = 4_000_000;

/// The alternatives a specifier stands for: `P:*` and `P *` mean "exactly P, or P followed by more words".
fn compile(spec: &str) -> Vec<Vec<Pat>> {
    let spec = spec.trim();
    let prefix =
        spec.strip_suffix(":*").or_else(|| spec.strip_suffix('*').filter(|rest| rest.ends_with(char::is_whitespace)));
    match prefix {
        Some(prefix) => {
            let base = tokenize_spec(prefix.trim_end());
            let mut longer = base.clone();
            longer.extend([Pat::Sep, Pat::Star]);
            vec![base, longer]
        }
        None => vec![tokenize_spec(spec)],
    }
}

/// Splits a specifier the way a shell would split a command: runs of blanks are one boundary, quotes
/// protect blanks and `*`, a backslash makes the next character literal.
fn tokenize_spec(spec: &str) -> Vec<Pat> {
    let mut out = Vec::new();
    let mut quote: Option<char> = None;
    let mut chars = spec.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('"'), '\\') => out.push(Pat::Char(chars.next().unwrap_or('\\'))),
            (Some(_), c) => out.push(Pat::Char(c)),
            (None, '\'' | '"') => quote = Some(c),
            (None, '\\') => out.push(Pat::Char(chars.next().unwrap_or('\\'))),
            (None, '*') => out.push(Pat::Star),
            (None, c) if c.is_whitespace() => {
                if !matches!(out.last(), None | Some(Pat::Sep)) {
                    out.push(Pat::Sep);
                }
            }
            (None, c) => out.push(Pat::Char(c)),
        }
    }
    if out.last() == Some(&Pat::Sep) {
        out.pop();
    }
    out
}

/// How to turn command words into tokens.
#[derive(Clone, Copy)]
pub(super) struct Reading {
    /// Deny reading: expansions and globs become wildcards.
    pub deny: bool,
    /// Map Unicode look-alikes (`ｒｍ`, Cyrillic `с`) to ASCII and drop invisible characters.
    pub fold: bool,
}

fn tokens(words: &[Word], reading: Reading) -> Vec<Tok> {
    let mut out = Vec::new();
    for (i, word) in words.iter().enumerate() {
        if i > 0 {
            out.push(Tok::Sep);
        }
        for seg in &word.segs {
            match seg {
                Seg::Text(text) => push_chars(&mut out, text, reading.fold),
                Seg::Glob(_) | Seg::Opaque(_) if reading.deny => out.push(Tok::Wild),
                Seg::Glob(text) => push_chars(&mut out, text, reading.fold),
                Seg::Opaque(_) => out.push(Tok::Unknown),
            }
        }
    }
    out
}

fn push_chars(out: &mut Vec<Tok>, text: &str, fold: bool) {
    for c in text.chars() {
        if !fold {
            out.push(Tok::Char(c));
        } else if let Some(c) = fold_char(c) {
            out.push(Tok::Char(c));
        }
    }
}

/// Whether `spec` matches the words (already in the order the rule should see them).
pub(super) fn matches(spec: &str, words: &[Word], reading: Reading) -> bool {
    let command = tokens(words, reading);
    compile(spec).iter().any(|pattern| {
        let pattern: Vec<Pat> =
            if reading.fold { pattern.iter().filter_map(|p| fold_pat(*p)).collect() } else { pattern.clone() };
        match_tokens(&pattern, &command, reading.deny)
    })
}

fn fold_pat(p: Pat) -> Option<Pat> {
    match p {
        Pat::Char(c) => fold_char(c).map(Pat::Char),
        other => Some(other),
    }
}

/// `dp[i][j]`: `pattern[i..]` matches `command[j..]`. Iterative, so no input can overflow the stack.
fn match_tokens(pattern: &[Pat], command: &[Tok], deny: bool) -> bool {
    let (np, nc) = (pattern.len(), command.len());
    let width = nc + 1;
    if (np + 1).saturating_mul(width) > MAX_CELLS {
        return deny;
    }
    let mut dp = vec![false; (np + 1) * width];
    dp[np * width + nc] = true;
    for i in (0..=np).rev() {
        for j in (0..=nc).rev() {
            if i == np && j == nc {
                continue;
            }
            let mut ok = false;
            if j < nc && command[j] == Tok::Wild {
                // The expansion is empty, or it swallows the next rule token.
                ok = dp[i * width + j + 1] || (i < np && dp[(i + 1) * width + j]);
            }
            if !ok && i < np && pattern[i] == Pat::Star {
                ok = dp[(i + 1) * width + j] || (j < nc && dp[i * width + j + 1]);
            }
            if !ok && i < np && j < nc {
                ok = match (pattern[i], command[j]) {
                    (Pat::Char(a), Tok::Char(b)) => a == b && dp[(i + 1) * width + j + 1],
                    (Pat::Sep, Tok::Sep) => dp[(i + 1) * width + j + 1],
                    _ => false,
                };
            }
            dp[i * width + j] = ok;
        }
    }
    dp[0]
}

/// The ASCII character a look-alike stands for; `None` for invisible characters, which are dropped.
pub(super) fn fold_char(c: char) -> Option<char> {
    let folded = match c {
        '\u{200b}'..='\u{200d}' | '\u{2060}' | '\u{feff}' | '\u{00ad}' => return None,
        // Fullwidth forms: `ｒｍ`.
        '\u{ff01}'..='\u{ff5e}' => char::from_u32(u32::from(c) - 0xfee0).unwrap_or(c),
        '\u{3000}' => ' ',
        // Cyrillic and Greek letters that look like Latin ones.
        'а' | 'α' => 'a',
        'с' | 'ϲ' => 'c',
        'ԁ' => 'd',
        'е' | 'ε' => 'e',
        'һ' => 'h',
        'і' | 'ι' | 'ı' => 'i',
        'ј' => 'j',
        'κ' => 'k',
        'ӏ' => 'l',
        'о' | 'ο' => 'o',
        'р' | 'ρ' => 'p',
        'ԛ' => 'q',
        'ѕ' => 's',
        'τ' => 't',
        'ν' => 'v',
        'ԝ' => 'w',
        'х' | 'χ' => 'x',
        'у' | 'γ' => 'y',
        'А' | 'Α' => 'A',
        'В' | 'Β' => 'B',
        'С' => 'C',
        'Е' | 'Ε' => 'E',
        'Н' | 'Η' => 'H',
        'І' | 'Ι' => 'I',
        'Ј' => 'J',
        'К' | 'Κ' => 'K',
        'М' | 'Μ' => 'M',
        'Ν' => 'N',
        'О' | 'Ο' => 'O',
        'Р' | 'Ρ' => 'P',
        'Ѕ' => 'S',
        'Т' | 'Τ' => 'T',
        'Х' | 'Χ' => 'X',
        'У' | 'Υ' => 'Y',
        'Ζ' => 'Z',
        other => other,
    };
    Some(folded)
}

/// `text` with look-alikes folded (for the blocklist, which compares program names).
pub(super) fn fold_str(text: &str) -> String {
    text.chars().filter_map(fold_char).collect()
}
