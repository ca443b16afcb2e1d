//! The line a streaming answer is still writing, made to render as it will once complete.
//!
//! CommonMark styles `**bold**` only when its closing marker has arrived, so a line in progress showed its raw
//! `**`, `` ` `` or `_` until then and the text jumped when they vanished. The open markers of the last line are
//! closed here for drawing only (the answer itself is untouched), and a marker that has only just arrived at the
//! end of the line is held back until the next character says what it is.

use std::borrow::Cow;

/// `text` with the inline spans its last line leaves open (code, emphasis, strikethrough) closed, and a marker
/// still being written at its very end left out. Unchanged when the last line is inside a fenced or indented
/// code block, or when nothing is open.
pub(crate) fn close_open_inline(text: &str) -> Cow<'_, str> {
    let line_start = text.rfind('\n').map_or(0, |newline| newline + 1);
    let line = &text[line_start..];
    if inside_fenced_code(&text[..line_start]) || line.starts_with("    ") || line.starts_with('\t') {
        return Cow::Borrowed(text);
    }
    let open = OpenInline::scan(line);
    if open.closers.is_empty() && open.keep == line.len() {
        return Cow::Borrowed(text);
    }
    let body = line[..open.keep].trim_end();
    let mut completed = String::with_capacity(line_start + body.len() + open.closers.len());
    completed.push_str(&text[..line_start]);
    completed.push_str(body);
    completed.push_str(&open.closers);
    Cow::Owned(completed)
}

/// Whether the lines before the last one leave a fenced code block open (its fence lines counted in order).
fn inside_fenced_code(before: &str) -> bool {
    let mut open: Option<(char, usize)> = None;
    for line in before.lines() {
        let trimmed = line.trim_start_matches(' ');
        if line.len() - trimmed.len() > 3 {
            continue;
        }
        let Some(fence_char) = trimmed.chars().next().filter(|c| *c == '`' || *c == '~') else { continue };
        let run = trimmed.chars().take_while(|c| *c == fence_char).count();
        if run < 3 {
            continue;
        }
        match open {
            None => open = Some((fence_char, run)),
            Some((char, len)) if char == fence_char && run >= len && trimmed[run..].trim().is_empty() => open = None,
            Some(_) => {}
        }
    }
    open.is_some()
}

/// What a line in progress leaves open.
struct OpenInline {
    /// The markers that close what is open, innermost first.
    closers: String,
    /// How many bytes of the line to draw: all of it, or up to a marker still arriving at its end.
    keep: usize,
}

impl OpenInline {
    /// One pass over the line's bytes (every marker is ASCII), holding nothing per character: the line in
    /// progress can be a whole long paragraph.
    fn scan(line: &str) -> OpenInline {
        let bytes = line.as_bytes();
        let mut emphasis: Vec<(char, usize)> = Vec::new();
        let mut at = 0;
        while at < bytes.len() {
            let c = char::from(bytes[at]);
            if c == '\\' {
                at += 1 + line[at + 1..].chars().next().map_or(0, char::len_utf8);
                continue;
            }
            if !matches!(c, '`' | '*' | '_' | '~') {
                at += 1;
                continue;
            }
            let run = run_length(bytes, at);
            let Some(after) = line[at + run..].chars().next() else {
                // The marker is the last thing written: what it starts is not known yet. At the line's start it
                // may be a bullet or a fence, which the renderer already shows as such.
                let keep = if line[..at].trim().is_empty() { line.len() } else { at };
                return OpenInline::closing(&emphasis, String::new(), keep);
            };
            let before = line[..at].chars().next_back().unwrap_or(' ');
            if c == '`' {
                match matching_code_run(bytes, at + run, run) {
                    Some(end) => at = end,
                    None => return OpenInline::closing(&emphasis, "`".repeat(run), line.len()),
                }
                continue;
            }
            at += run;
            if (c == '~' && run != 2) || (c == '_' && before.is_alphanumeric() && after.is_alphanumeric()) {
                continue;
            }
            let punctuation = |c: char| c.is_ascii_punctuation();
            let left_flanking =
                !after.is_whitespace() && (!punctuation(after) || before.is_whitespace() || punctuation(before));
            let right_flanking =
                !before.is_whitespace() && (!punctuation(before) || after.is_whitespace() || punctuation(after));
            if right_flanking && emphasis.last().is_some_and(|(open, _)| *open == c) {
                emphasis.pop();
            } else if left_flanking {
                emphasis.push((c, run));
            }
        }
        OpenInline::closing(&emphasis, String::new(), line.len())
    }

    /// Closes the open code span (`code`, innermost) and then the open emphasis, innermost first.
    fn closing(emphasis: &[(char, usize)], code: String, keep: usize) -> OpenInline {
        let mut closers = code;
        for (c, run) in emphasis.iter().rev() {
            closers.extend(std::iter::repeat_n(*c, *run));
        }
        OpenInline { closers, keep }
    }
}

/// How many times the byte at `at` repeats from there.
fn run_length(bytes: &[u8], at: usize) -> usize {
    bytes[at..].iter().take_while(|byte| **byte == bytes[at]).count()
}

/// Where the code span opened by a run of `run` backticks ends (just past its closing run), if it does.
fn matching_code_run(bytes: &[u8], from: usize, run: usize) -> Option<usize> {
    let mut at = from;
    while at < bytes.len() {
        if bytes[at] != b'`' {
            at += 1;
            continue;
        }
        let length = run_length(bytes, at);
        if length == run {
            return Some(at + length);
        }
        at += length;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::close_open_inline;

    #[test]
    fn open_spans_of_the_last_line_are_closed() {
        assert_eq!(close_open_inline("Some **bold te"), "Some **bold te**");
        assert_eq!(close_open_inline("run `cargo te"), "run `cargo te`");
        assert_eq!(close_open_inline("a *b **c d"), "a *b **c d***");
        assert_eq!(close_open_inline("~~gone "), "~~gone~~");
        assert_eq!(close_open_inline("**a `b"), "**a `b`**");
        assert_eq!(close_open_inline("`a` and **b** done"), "`a` and **b** done");
        assert_eq!(close_open_inline("first line **x**\nsecond _y"), "first line **x**\nsecond _y_");
    }

    #[test]
    fn a_marker_just_arrived_waits_for_the_next_character() {
        assert_eq!(close_open_inline("text **"), "text");
        assert_eq!(close_open_inline("use `"), "use");
        assert_eq!(close_open_inline("**bold te*"), "**bold te**");
        // At the start of a line a marker may be a bullet or a fence: shown as it is.
        assert_eq!(close_open_inline("- one\n*"), "- one\n*");
        assert_eq!(close_open_inline("intro\n```"), "intro\n```");
    }

    #[test]
    fn what_is_not_an_open_span_stays() {
        for text in ["snake_case_na", "a * b", "2 * 3 = 6", "~single", "* bullet", "escaped \\*star", "plain"] {
            assert_eq!(close_open_inline(text), text);
        }
        // Inside code the markers are text.
        assert_eq!(close_open_inline("```\nlet x = **a"), "```\nlet x = **a");
        assert_eq!(close_open_inline("    indented **code"), "    indented **code");
        assert_eq!(close_open_inline("```\ncode\n```\nafter **b"), "```\ncode\n```\nafter **b**");
    }
}
