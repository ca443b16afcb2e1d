//! Unified diffs for Edit/Write previews, with the hunk structure exposed for front ends that review per hunk.

use std::fmt::Write as _;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use similar::{Algorithm, ChangeTag, TextDiff};

/// Lines of context around each change in previews, like `diff -u`.
pub const DEFAULT_CONTEXT: usize = 3;

/// A pathological diff (huge, nothing in common) must not stall a permission prompt: past this, similar falls
/// back to a coarser (still correct) diff.
const DIFF_TIMEOUT: Duration = Duration::from_millis(500);

/// What a diff line is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LineKind {
    Context,
    Removed,
    Added,
}

impl LineKind {
    /// The unified-diff prefix character.
    pub fn prefix(self) -> char {
        match self {
            LineKind::Context => ' ',
            LineKind::Removed => '-',
            LineKind::Added => '+',
        }
    }
}

/// One line of a hunk.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiffLine {
    pub kind: LineKind,
    /// The line without its `\n`.
    pub text: String,
    /// The line is the last of its file and has no newline (`\ No newline at end of file`).
    pub missing_newline: bool,
}

/// One `@@` hunk. Starts are 1-based line numbers as printed in the header (for an empty range, the line
/// before it, as `diff -u` does).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hunk {
    pub old_start: usize,
    pub old_len: usize,
    pub new_start: usize,
    pub new_len: usize,
    pub lines: Vec<DiffLine>,
}

impl Hunk {
    /// `@@ -old_start,old_len +new_start,new_len @@`, with the `,1` elided like `diff -u`.
    pub fn header(&self) -> String {
        fn range(start: usize, len: usize) -> String {
            if len == 1 { start.to_string() } else { format!("{start},{len}") }
        }
        format!("@@ -{} +{} @@", range(self.old_start, self.old_len), range(self.new_start, self.new_len))
    }

    /// The hunk with at most `context` unchanged lines before its first change and after its last (those
    /// between changes stay): a compact view of what changed.
    pub fn trimmed(&self, context: usize) -> Hunk {
        let is_context = |line: &&DiffLine| line.kind == LineKind::Context;
        let leading = self.lines.iter().take_while(is_context).count();
        if leading == self.lines.len() {
            return self.clone();
        }
        let trailing = self.lines.iter().rev().take_while(is_context).count();
        let (cut_front, cut_back) = (leading.saturating_sub(context), trailing.saturating_sub(context));
        let cut = cut_front + cut_back;
        Hunk {
            old_start: self.old_start + cut_front,
            old_len: self.old_len - cut,
            new_start: self.new_start + cut_front,
            new_len: self.new_len - cut,
            lines: self.lines[cut_front..self.lines.len() - cut_back].to_vec(),
        }
    }

    /// Lines added and removed in this hunk.
    pub fn counts(&self) -> (usize, usize) {
        let added = self.lines.iter().filter(|l| l.kind == LineKind::Added).count();
        let removed = self.lines.iter().filter(|l| l.kind == LineKind::Removed).count();
        (added, removed)
    }
}

/// Claude Code's `structuredPatch`: the hunks as `{oldStart, oldLines, newStart, newLines, lines}` with each line
/// prefixed by ` `, `-` or `+`.
pub fn structured_patch(old: &str, new: &str) -> serde_json::Value {
    patch_value(&hunks(old, new, DEFAULT_CONTEXT))
}

/// [`structured_patch`] of hunks already computed (Edit's, of the changed region only).
pub fn patch_value(hunks: &[Hunk]) -> serde_json::Value {
    let hunks: Vec<serde_json::Value> = hunks
        .iter()
        .map(|hunk| {
            let lines: Vec<String> =
                hunk.lines.iter().map(|line| format!("{}{}", line.kind.prefix(), line.text)).collect();
            serde_json::json!({
                "oldStart": hunk.old_start,
                "oldLines": hunk.old_len,
                "newStart": hunk.new_start,
                "newLines": hunk.new_len,
                "lines": lines,
            })
        })
        .collect();
    serde_json::Value::Array(hunks)
}

/// What a successful file-changing call applied, from its structured output: the path, whether it created the
/// file, and the hunks (`structuredPatch`) — not the file's whole text, which a session log need not hold again.
pub fn applied_change(structured: &serde_json::Value) -> Option<serde_json::Value> {
    let patch = structured.get("structuredPatch")?;
    let mut change = serde_json::Map::new();
    for key in ["filePath", "type"] {
        if let Some(value) = structured.get(key) {
            change.insert(key.into(), value.clone());
        }
    }
    change.insert("structuredPatch".into(), patch.clone());
    Some(serde_json::Value::Object(change))
}

/// The hunks of a [`patch_value`] (Claude Code's `structuredPatch`), for showing a saved change again; `None`
/// when `patch` is not one.
pub fn hunks_from_patch(patch: &serde_json::Value) -> Option<Vec<Hunk>> {
    let number = |hunk: &serde_json::Value, key: &str| hunk.get(key)?.as_u64().map(|n| n as usize);
    patch
        .as_array()?
        .iter()
        .map(|hunk| {
            let lines = hunk.get("lines")?.as_array()?.iter().map(|line| {
                let line = line.as_str()?;
                let kind = match line.chars().next()? {
                    ' ' => LineKind::Context,
                    '-' => LineKind::Removed,
                    '+' => LineKind::Added,
                    _ => return None,
                };
                Some(DiffLine { kind, text: line[1..].to_owned(), missing_newline: false })
            });
            Some(Hunk {
                old_start: number(hunk, "oldStart")?,
                old_len: number(hunk, "oldLines")?,
                new_start: number(hunk, "newStart")?,
                new_len: number(hunk, "newLines")?,
                lines: lines.collect::<Option<Vec<DiffLine>>>()?,
            })
        })
        .collect()
}

/// Total lines (added, removed) over hunks.
pub fn counts(hunks: &[Hunk]) -> (usize, usize) {
    hunks.iter().map(Hunk::counts).fold((0, 0), |(a, r), (ha, hr)| (a + ha, r + hr))
}

/// The hunks turning `old` into `new`, with `context` lines around changes.
///
/// Only the region between the lines both texts begin and end with is diffed (with `context` lines around it):
/// the result is the same, and a change in a 300 MB file costs a comparison of its bytes, not a diff of its
/// millions of lines.
pub fn hunks(old: &str, new: &str, context: usize) -> Vec<Hunk> {
    region_hunks(old, new, context, false)
}

/// [`hunks`] of a file with CRLF line breaks, compared and shown with `\n` ones, as the model and the user read
/// it (Edit's diff of a CRLF file).
pub fn hunks_crlf_as_lf(old: &str, new: &str, context: usize) -> Vec<Hunk> {
    region_hunks(old, new, context, true)
}

fn region_hunks(old: &str, new: &str, context: usize, crlf_as_lf: bool) -> Vec<Hunk> {
    let (start, old_end, new_end) = changed_region(old, new);
    let start = line_start_before(old, start, context);
    let old_window_end = line_end_after(old, old_end, context);
    let new_window_end = new_end + (old_window_end - old_end);
    let offset = old.as_bytes()[..start].iter().filter(|&&b| b == b'\n').count();
    let (old, new) = (&old[start..old_window_end], &new[start..new_window_end]);
    if crlf_as_lf {
        hunks_at(&old.replace("\r\n", "\n"), &new.replace("\r\n", "\n"), context, offset)
    } else {
        hunks_at(old, new, context, offset)
    }
}

/// Where two texts differ, by whole lines: `(start, old_end, new_end)` such that `old[..start]` and
/// `new[..start]` are the same lines, and so are `old[old_end..]` and `new[new_end..]`.
fn changed_region(old: &str, new: &str) -> (usize, usize, usize) {
    let (old_bytes, new_bytes) = (old.as_bytes(), new.as_bytes());
    let same_start = common_len(old_bytes, new_bytes, false);
    let start = old_bytes[..same_start].iter().rposition(|&b| b == b'\n').map_or(0, |at| at + 1);
    let room = old.len().min(new.len()) - start;
    let same_end = common_len(old_bytes, new_bytes, true).min(room);
    // The common end begins after a line break inside it (the bytes before it differ).
    let tail = old.len() - same_end;
    let old_end = old_bytes[tail..].iter().position(|&b| b == b'\n').map_or(old.len(), |at| tail + at + 1);
    (start, old_end, new.len() - (old.len() - old_end))
}

/// How many bytes `a` and `b` share at their start (or, `from_end`, at their end): compared a block at a time,
/// then byte by byte within the block that differs.
fn common_len(a: &[u8], b: &[u8], from_end: bool) -> usize {
    const BLOCK: usize = 4096;
    let max = a.len().min(b.len());
    let (a, b) = if from_end { (&a[a.len() - max..], &b[b.len() - max..]) } else { (&a[..max], &b[..max]) };
    let mut same = 0;
    while same < max {
        let len = BLOCK.min(max - same);
        let range = if from_end { max - same - len..max - same } else { same..same + len };
        let (x, y) = (&a[range.clone()], &b[range]);
        if x == y {
            same += len;
            continue;
        }
        let pairs = |x: &[u8], y: &[u8]| -> usize {
            if from_end {
                x.iter().rev().zip(y.iter().rev()).take_while(|(p, q)| p == q).count()
            } else {
                x.iter().zip(y).take_while(|(p, q)| p == q).count()
            }
        };
        return same + pairs(x, y);
    }
    same
}

/// Start of the line `lines_before` lines above the line containing `pos`.
pub fn line_start_before(text: &str, pos: usize, lines_before: usize) -> usize {
    let mut start = text[..pos].rfind('\n').map_or(0, |i| i + 1);
    for _ in 0..lines_before {
        if start == 0 {
            break;
        }
        start = text[..start - 1].rfind('\n').map_or(0, |i| i + 1);
    }
    start
}

/// End (after the `\n`) of the line `lines_after` lines below the line containing `pos - 1`.
pub fn line_end_after(text: &str, pos: usize, lines_after: usize) -> usize {
    let mut end = if pos > 0 && text.as_bytes()[pos - 1] == b'\n' { pos } else { next_line_end(text, pos) };
    for _ in 0..lines_after {
        if end >= text.len() {
            break;
        }
        end = next_line_end(text, end);
    }
    end
}

fn next_line_end(text: &str, from: usize) -> usize {
    text[from..].find('\n').map_or(text.len(), |i| from + i + 1)
}

/// Like [`hunks`], for a window of a larger file that starts after `line_offset` unchanged lines (the same on
/// both sides). Edit diffs only the region it changed this way, so a small edit in a 10 MB file costs a
/// small diff.
pub fn hunks_at(old: &str, new: &str, context: usize, line_offset: usize) -> Vec<Hunk> {
    let diff = TextDiff::configure().algorithm(Algorithm::Myers).timeout(DIFF_TIMEOUT).diff_lines(old, new);
    let mut out = Vec::new();
    for group in diff.grouped_ops(context) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else { continue };
        let (old_begin, old_end) = (first.old_range().start, last.old_range().end);
        let (new_begin, new_end) = (first.new_range().start, last.new_range().end);
        let start = |begin: usize, len: usize| if len == 0 { begin + line_offset } else { begin + line_offset + 1 };
        let mut lines = Vec::new();
        for op in &group {
            for change in diff.iter_changes(op) {
                let kind = match change.tag() {
                    ChangeTag::Equal => LineKind::Context,
                    ChangeTag::Delete => LineKind::Removed,
                    ChangeTag::Insert => LineKind::Added,
                };
                let value = change.value();
                let (text, missing_newline) = match value.strip_suffix('\n') {
                    Some(text) => (text, false),
                    None => (value, true),
                };
                lines.push(DiffLine { kind, text: text.to_string(), missing_newline });
            }
        }
        out.push(Hunk {
            old_start: start(old_begin, old_end - old_begin),
            old_len: old_end - old_begin,
            new_start: start(new_begin, new_end - new_begin),
            new_len: new_end - new_begin,
            lines,
        });
    }
    out
}

/// Applies only the accepted hunks of `hunks` (computed from `old` to `new` by [`hunks`]) to `old`, keeping
/// every other line byte for byte (line endings and a missing final newline included). This is how a
/// reviewer's per-hunk choice becomes the file's content.
pub fn apply_hunks(old: &str, new: &str, hunks: &[Hunk], accepted: &[bool]) -> String {
    let old_lines = split_lines(old);
    let new_lines = split_lines(new);
    // 0-based index of a hunk range's first line (an empty range sits after line `start`).
    let first = |start: usize, len: usize| if len == 0 { start } else { start.saturating_sub(1) };
    let mut out = String::with_capacity(old.len().max(new.len()));
    let mut copied = 0;
    for (index, hunk) in hunks.iter().enumerate() {
        let old_first = first(hunk.old_start, hunk.old_len).min(old_lines.len());
        for line in &old_lines[copied.min(old_first)..old_first] {
            out.push_str(line);
        }
        let old_last = (old_first + hunk.old_len).min(old_lines.len());
        if accepted.get(index).copied().unwrap_or(false) {
            let new_first = first(hunk.new_start, hunk.new_len).min(new_lines.len());
            let new_last = (new_first + hunk.new_len).min(new_lines.len());
            for line in &new_lines[new_first..new_last] {
                out.push_str(line);
            }
        } else {
            for line in &old_lines[old_first..old_last] {
                out.push_str(line);
            }
        }
        copied = old_last;
    }
    for line in &old_lines[copied.min(old_lines.len())..] {
        out.push_str(line);
    }
    out
}

/// `text`'s lines with their ends, cut where the diff cuts them: after `\r\n`, `\n`, or a `\r` on its own (old
/// Mac line ends), so that hunk line numbers count the same lines.
fn split_lines(text: &str) -> Vec<&str> {
    let bytes = text.as_bytes();
    let mut lines = Vec::new();
    let mut start = 0;
    let mut at = 0;
    while at < bytes.len() {
        let end = match bytes[at] {
            b'\r' if bytes.get(at + 1) == Some(&b'\n') => at + 2,
            b'\r' | b'\n' => at + 1,
            _ => {
                at += 1;
                continue;
            }
        };
        lines.push(&text[start..end]);
        start = end;
        at = end;
    }
    if start < text.len() {
        lines.push(&text[start..]);
    }
    lines
}

/// Renders hunks as a unified diff. A relative `path_label` gets git's `a/` and `b/` prefixes; an absolute
/// one is printed as is. `new_file` makes the old side `/dev/null`. No hunks → empty string.
pub fn render(path_label: &str, hunks: &[Hunk], new_file: bool) -> String {
    if hunks.is_empty() {
        return String::new();
    }
    let (old_label, new_label) = if path_label.starts_with('/') {
        (path_label.to_string(), path_label.to_string())
    } else {
        (format!("a/{path_label}"), format!("b/{path_label}"))
    };
    let old_label = if new_file { "/dev/null".to_string() } else { old_label };
    let mut out = format!("--- {old_label}\n+++ {new_label}\n");
    for hunk in hunks {
        out.push_str(&hunk.header());
        out.push('\n');
        for line in &hunk.lines {
            let _ = writeln!(out, "{}{}", line.kind.prefix(), line.text);
            if line.missing_newline {
                out.push_str("\\ No newline at end of file\n");
            }
        }
    }
    out
}

/// Unified diff of `old` → `new` (`--- a/path`, `+++ b/path`, `@@` hunks). Identical texts → empty string.
pub fn unified_diff(path_label: &str, old: &str, new: &str, context: usize) -> String {
    render(path_label, &hunks(old, new, context), false)
}

/// Unified diff creating a file with `content` (`--- /dev/null`, every line added).
pub fn new_file_diff(path_label: &str, content: &str) -> String {
    let hunks = hunks("", content, 0);
    if hunks.is_empty() {
        // An empty new file still deserves a header, so the preview says what is being created.
        let label = if path_label.starts_with('/') { path_label.to_string() } else { format!("b/{path_label}") };
        return format!("--- /dev/null\n+++ {label}\n");
    }
    render(path_label, &hunks, true)
}

#[cfg(test)]
mod apply_tests {
    use super::*;

    #[test]
    fn applies_exactly_the_accepted_hunks() {
        let old: String = (1..=30).map(|i| format!("line {i}\r\n")).collect();
        let new = old.replace("line 2\r\n", "TWO\r\n").replace("line 20\r\n", "line 20\r\nextra\r\n");
        let hunks = hunks(&old, &new, DEFAULT_CONTEXT);
        assert_eq!(hunks.len(), 2);
        assert_eq!(apply_hunks(&old, &new, &hunks, &[true, true]), new);
        assert_eq!(apply_hunks(&old, &new, &hunks, &[false, false]), old);
        let first_only = apply_hunks(&old, &new, &hunks, &[true, false]);
        assert!(first_only.contains("TWO\r\n") && !first_only.contains("extra"));
        let second_only = apply_hunks(&old, &new, &hunks, &[false, true]);
        assert!(!second_only.contains("TWO") && second_only.contains("line 20\r\nextra\r\n"));
    }

    #[test]
    fn handles_files_without_a_final_newline_and_pure_insertions() {
        let old = "a\nb";
        let new = "start\na\nb\nc";
        let hunks = hunks(old, new, 0);
        let all = vec![true; hunks.len()];
        assert_eq!(apply_hunks(old, new, &hunks, &all), new);
        assert_eq!(apply_hunks(old, new, &hunks, &vec![false; hunks.len()]), old);
        assert_eq!(apply_hunks("", "x\n", &super::hunks("", "x\n", 3), &[true]), "x\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diffing_only_the_changed_region_gives_the_whole_diff() {
        let lines: Vec<String> = (0..40).map(|n| format!("line {}\n", n % 7)).collect();
        let base: String = lines.concat();
        let mut cases = vec![
            (base.clone(), base.clone()),
            (String::new(), base.clone()),
            (base.clone(), String::new()),
            (base.clone(), base.trim_end().to_owned()),
            (base.clone(), format!("{base}tail without newline")),
            ("same\nabc".to_owned(), "same\nabd".to_owned()),
            ("é\nñ\n".to_owned(), "é\nõ\n".to_owned()),
        ];
        for at in [0, 1, 5, 20, 38, 39] {
            let mut changed = lines.clone();
            changed[at] = "changed\n".into();
            cases.push((base.clone(), changed.concat()));
            let mut removed = lines.clone();
            removed.remove(at);
            cases.push((base.clone(), removed.concat()));
            let mut two = lines.clone();
            two[at] = "one\n".into();
            two[(at + 12) % 40] = "two\n".into();
            two.insert(at, "inserted\n".into());
            cases.push((base.clone(), two.concat()));
        }
        for (old, new) in &cases {
            for context in [0, 1, 3] {
                assert_eq!(hunks(old, new, context), hunks_at(old, new, context, 0), "{old:?} → {new:?} ({context})");
            }
        }
    }

    #[test]
    fn chosen_hunks_land_on_their_lines_when_a_file_has_lone_carriage_returns() {
        let old = "a\rb\rc\rd\re\rf\rg\rh\ri\rj\rk\rl\r";
        let new = old.replace("b\r", "B\r").replace("k\r", "K\r");
        let found = hunks(old, &new, 1);
        assert_eq!(found.len(), 2);
        assert_eq!(apply_hunks(old, &new, &found, &[false, true]), old.replace("k\r", "K\r"));
        assert_eq!(apply_hunks(old, &new, &found, &[true, false]), old.replace("b\r", "B\r"));
        let mixed = "one\r\ntwo\rthree\nfour";
        assert_eq!(split_lines(mixed), ["one\r\n", "two\r", "three\n", "four"]);
    }

    #[test]
    fn simple_change() {
        let old = "a\nb\nc\nd\ne\nf\ng\nh\n";
        let new = "a\nb\nc\nD\ne\nf\ng\nh\n";
        let diff = unified_diff("src/x.rs", old, new, 3);
        assert_eq!(diff, "--- a/src/x.rs\n+++ b/src/x.rs\n@@ -1,7 +1,7 @@\n a\n b\n c\n-d\n+D\n e\n f\n g\n");
    }

    #[test]
    fn identical_is_empty() {
        assert_eq!(unified_diff("x", "same\n", "same\n", 3), "");
    }

    #[test]
    fn missing_newline_marker() {
        let diff = unified_diff("/abs/f", "a\nb", "a\nc", 1);
        assert_eq!(
            diff,
            "--- /abs/f\n+++ /abs/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"
        );
    }

    #[test]
    fn new_file() {
        assert_eq!(new_file_diff("n.txt", "x\ny\n"), "--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1,2 @@\n+x\n+y\n");
        assert_eq!(new_file_diff("n.txt", ""), "--- /dev/null\n+++ b/n.txt\n");
    }

    #[test]
    fn separate_hunks_and_counts() {
        let old: String = (1..=30).map(|i| format!("{i}\n")).collect();
        let new: String = (1..=30)
            .filter(|&i| i != 25)
            .map(|i| if i == 3 { "three\n".to_string() } else { format!("{i}\n") })
            .collect();
        let hunks = hunks(&old, &new, 2);
        assert_eq!(hunks.len(), 2);
        assert_eq!((hunks[0].old_start, hunks[0].old_len, hunks[0].new_start, hunks[0].new_len), (1, 5, 1, 5));
        assert_eq!(hunks[1].header(), "@@ -23,5 +23,4 @@");
        assert_eq!(counts(&hunks), (1, 2));
    }

    #[test]
    fn offset_windows_shift_line_numbers() {
        let hunks = hunks_at("x\ny\nz\n", "x\nY\nz\n", 1, 100);
        assert_eq!(hunks[0].header(), "@@ -101,3 +101,3 @@");
        let pure_insert = hunks_at("a\n", "a\nb\n", 0, 10);
        assert_eq!(pure_insert[0].header(), "@@ -11,0 +12 @@");
    }
}
