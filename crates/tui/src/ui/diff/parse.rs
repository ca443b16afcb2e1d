//! Reading a unified diff's text back into hunks, for previews that carry only the text (a preview that went
//! through serde loses the full file texts).

use tandem_core::diff::{DiffLine, Hunk, LineKind};

/// The hunks of a unified diff. `---`/`+++` and other lines outside hunks are skipped; a malformed `@@` line
/// ends the current hunk.
pub(crate) fn parse_unified(diff: &str) -> Vec<Hunk> {
    let mut hunks: Vec<Hunk> = Vec::new();
    let mut in_hunk = false;
    for line in diff.lines() {
        if line.starts_with("@@") {
            in_hunk = match parse_header(line) {
                Some((old_start, old_len, new_start, new_len)) => {
                    hunks.push(Hunk { old_start, old_len, new_start, new_len, lines: Vec::new() });
                    true
                }
                None => false,
            };
            continue;
        }
        let Some(hunk) = hunks.last_mut().filter(|_| in_hunk) else { continue };
        let (kind, text) = match line.chars().next() {
            Some('+') => (LineKind::Added, &line[1..]),
            Some('-') => (LineKind::Removed, &line[1..]),
            Some(' ') => (LineKind::Context, &line[1..]),
            None => (LineKind::Context, ""),
            Some('\\') => {
                if let Some(last) = hunk.lines.last_mut() {
                    last.missing_newline = true;
                }
                continue;
            }
            Some(_) => {
                in_hunk = false;
                continue;
            }
        };
        hunk.lines.push(DiffLine { kind, text: text.to_owned(), missing_newline: false });
    }
    hunks
}

/// `@@ -a[,b] +c[,d] @@…` → (a, b, c, d), with an omitted length meaning 1.
fn parse_header(line: &str) -> Option<(usize, usize, usize, usize)> {
    let mut parts = line.strip_prefix("@@ ")?.split(' ');
    let old = parts.next()?.strip_prefix('-')?;
    let new = parts.next()?.strip_prefix('+')?;
    let range = |text: &str| -> Option<(usize, usize)> {
        match text.split_once(',') {
            Some((start, len)) => Some((start.parse().ok()?, len.parse().ok()?)),
            None => Some((text.parse().ok()?, 1)),
        }
    };
    let ((old_start, old_len), (new_start, new_len)) = (range(old)?, range(new)?);
    Some((old_start, old_len, new_start, new_len))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tandem_core::diff::{hunks, render};

    #[test]
    fn reads_back_what_core_renders() {
        let old = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\nm\n";
        let new = "a\nB\nc\nd\ne\nf\ng\nh\ni\nj\nk\nL\nm\nn";
        let expected = hunks(old, new, 3);
        let text = render("x.rs", &expected, false);
        assert_eq!(parse_unified(&text), expected);
        assert!(parse_unified("not a diff").is_empty());
    }
}
