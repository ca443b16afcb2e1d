//! The memory index (`MEMORY.md`): one line per topic, `- [title](file.md) — description`.
//!
//! The index is in every prompt, so its size is bounded twice: each line is kept under [`MAX_LINE_CHARS`]
//! (descriptions are shortened to fit) and the whole file under [`MAX_INDEX_LINES`] / [`MAX_INDEX_BYTES`]
//! (a save past that is refused, and the model is told to consolidate). Entries are matched by their file name,
//! which is derived from the title ([`file_name`]), so saving the same title again replaces its line.

use std::path::Path;

/// The index file's name in each memory directory.
pub const INDEX_FILE: &str = "MEMORY.md";
/// Most lines the index may have.
pub const MAX_INDEX_LINES: usize = 200;
/// Most bytes the index may have.
pub const MAX_INDEX_BYTES: usize = 25 * 1024;
/// Most characters in one index line (lines are kept under 150).
pub const MAX_LINE_CHARS: usize = 149;
/// Most characters in a file name's stem, so names stay readable and well under file system limits.
pub const MAX_SLUG_CHARS: usize = 60;

/// Characters a description keeps at least when a long title has to be shortened to make room for it.
const MIN_DESCRIPTION_CHARS: usize = 20;
/// Between the link and the description.
const DASH: &str = " — ";

/// The topic file name for a title: ASCII lowercase words joined by dashes, `.md`. Stable, so the same title
/// always lands in the same file. Titles with no ASCII letters or digits, and slugs cut at [`MAX_SLUG_CHARS`],
/// get a short hash so distinct titles don't collide.
pub fn file_name(title: &str) -> String {
    let mut slug = String::new();
    for c in title.chars() {
        if c.is_ascii_alphanumeric() {
            slug.push(c.to_ascii_lowercase());
        } else if matches!(c, '\'' | '’') {
            // "user's" → "users", not "user-s".
        } else if !slug.is_empty() && !slug.ends_with('-') {
            slug.push('-');
        }
    }
    let slug = slug.trim_end_matches('-');
    let slug = if slug.is_empty() {
        format!("memory-{}", short_hash(&title.to_lowercase()))
    } else if slug.len() > MAX_SLUG_CHARS {
        let head = slug[..MAX_SLUG_CHARS - 9].trim_end_matches('-');
        format!("{head}-{}", short_hash(slug))
    } else if slug == "memory" {
        // `memory.md` and `MEMORY.md` are the same file on case-insensitive file systems.
        "memory-topic".to_owned()
    } else {
        slug.to_owned()
    };
    format!("{slug}.md")
}

/// Eight hex digits of FNV-1a: stable across Rust versions and platforms (unlike `DefaultHasher`), which file
/// names must be.
fn short_hash(text: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in text.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{:08x}", hash & 0xffff_ffff)
}

/// Collapses all whitespace (newlines included) to single spaces: titles and descriptions are one line.
pub fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `text` cut to at most `max` characters, ending in `…` when cut.
fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let kept: String = text.chars().take(max.saturating_sub(1)).collect();
    format!("{}…", kept.trim_end())
}

/// Escapes what would end the link text early.
fn escape_title(title: &str) -> String {
    let mut out = String::with_capacity(title.len());
    for c in title.chars() {
        if matches!(c, '\\' | '[' | ']') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The index line for an entry, under [`MAX_LINE_CHARS`]: the description (and a very long title) shortened to
/// fit. `title` and `description` are already one line.
pub fn index_line(title: &str, file: &str, description: &str) -> String {
    let fixed = "- []()".chars().count() + file.chars().count() + DASH.chars().count();
    let title_room = MAX_LINE_CHARS.saturating_sub(fixed + MIN_DESCRIPTION_CHARS);
    let mut title = escape_title(title);
    if title.chars().count() > title_room {
        // Shorten the raw title so an escape is never split, then escape again.
        let mut raw = shorten(&unescape(&title), title_room);
        while escape_title(&raw).chars().count() > title_room && raw.chars().count() > 1 {
            let shorter: String = raw.chars().take(raw.chars().count() - 2).collect();
            raw = format!("{shorter}…");
        }
        title = escape_title(&raw);
    }
    let link = format!("- [{title}]({file})");
    let room = MAX_LINE_CHARS.saturating_sub(link.chars().count() + DASH.chars().count());
    format!("{link}{DASH}{}", shorten(description, room))
}

fn unescape(title: &str) -> String {
    let mut out = String::with_capacity(title.len());
    let mut chars = title.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.extend(chars.next()),
            c => out.push(c),
        }
    }
    out
}

/// The file an index line links to (`- [title](file.md) …`), without a leading `./`; `None` for other lines.
pub fn entry_file(line: &str) -> Option<&str> {
    let rest = line.trim_start().strip_prefix("- [").or_else(|| line.trim_start().strip_prefix("* ["))?;
    // The link text ends at the first unescaped `]`.
    let mut escaped = false;
    let mut close = None;
    for (at, c) in rest.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            ']' => {
                close = Some(at);
                break;
            }
            _ => {}
        }
    }
    let target = rest[close? + 1..].strip_prefix('(')?;
    let target = &target[..target.find(')')?];
    Some(target.strip_prefix("./").unwrap_or(target).trim())
}

/// Entries in an index.
pub fn entry_count(index: &str) -> usize {
    index.lines().filter(|line| entry_file(line).is_some()).count()
}

/// `index` with `line` as the entry for `file`: in place of the first line linking to it (later duplicates
/// dropped), or appended. Other lines (headings, notes the user wrote) are kept.
pub fn upsert(index: &str, file: &str, line: &str) -> String {
    let mut lines: Vec<&str> = Vec::new();
    let mut placed = false;
    for existing in index.lines() {
        if entry_file(existing) == Some(file) {
            if !placed {
                lines.push(line);
                placed = true;
            }
            continue;
        }
        lines.push(existing);
    }
    if !placed {
        while lines.last().is_some_and(|last| last.trim().is_empty()) {
            lines.pop();
        }
        lines.push(line);
    }
    let mut out = lines.join("\n");
    out.push('\n');
    out
}

/// Refuses a new index past the limits, unless it is no bigger than the old one (an update of an index the user
/// grew by hand must stay possible). The message tells the model how to make room.
pub fn check_limits(old: &str, new: &str, index_path: &Path) -> Result<(), String> {
    let (lines, bytes) = (new.lines().count(), new.len());
    let over = lines > MAX_INDEX_LINES || bytes > MAX_INDEX_BYTES;
    let grew = lines > old.lines().count() || bytes > old.len();
    if !over || !grew {
        return Ok(());
    }
    Err(format!(
        "Not saved: the memory index {path} would have {lines} lines / {bytes} bytes, over its limit of \
         {MAX_INDEX_LINES} lines / {kb} KB. Consolidate entries first: merge related memories into one topic \
         (SaveMemory with that topic's existing title replaces its entry), delete the entries that became \
         redundant from {path} with Edit (and their topic files), then save again.",
        path = index_path.display(),
        kb = MAX_INDEX_BYTES / 1024,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_are_stable_slugs() {
        assert_eq!(file_name("Build & Test: the user's commands"), "build-test-the-users-commands.md");
        assert_eq!(file_name("  --Hello,   World!-- "), "hello-world.md");
        assert_eq!(file_name("Memory"), "memory-topic.md");
        let cjk = file_name("日本語のメモ");
        assert!(cjk.starts_with("memory-") && cjk.len() == "memory-".len() + 8 + 3, "{cjk}");
        assert_eq!(cjk, file_name("日本語のメモ"));
        assert_ne!(cjk, file_name("別のメモ"));
        let long_a = file_name(&format!("{} alpha", "word ".repeat(20)));
        let long_b = file_name(&format!("{} beta", "word ".repeat(20)));
        assert_ne!(long_a, long_b);
        assert!(long_a.len() <= MAX_SLUG_CHARS + 3, "{long_a}");
        assert!(long_a.is_ascii());
    }

    #[test]
    fn lines_fit_and_round_trip() {
        let line = index_line("Prefers tabs", "prefers-tabs.md", "Indent with tabs in every language");
        assert_eq!(line, "- [Prefers tabs](prefers-tabs.md) — Indent with tabs in every language");
        assert_eq!(entry_file(&line), Some("prefers-tabs.md"));

        let long = index_line("T", "t.md", &"very long description ".repeat(20));
        assert_eq!(long.chars().count(), MAX_LINE_CHARS);
        assert!(long.ends_with('…'));

        let title = "[x] ".repeat(40);
        let file = file_name(&title);
        let line = index_line(&title, &file, "desc");
        assert!(line.chars().count() < 150, "{line}");
        assert_eq!(entry_file(&line), Some(file.as_str()), "{line}");
        assert!(line.ends_with(" — desc"));

        assert_eq!(entry_file("- [a \\] b](./a-b.md) — x"), Some("a-b.md"));
        assert_eq!(entry_file("# Heading"), None);
        assert_eq!(entry_file("- plain bullet"), None);
    }

    #[test]
    fn upsert_replaces_and_appends() {
        let index = "# My notes\n- [A](a.md) — old\n- [B](b.md) — b\n- [A again](./a.md) — dup\n\n";
        let out = upsert(index, "a.md", "- [A](a.md) — new");
        assert_eq!(out, "# My notes\n- [A](a.md) — new\n- [B](b.md) — b\n\n");
        let out = upsert(&out, "c.md", "- [C](c.md) — c");
        assert_eq!(out, "# My notes\n- [A](a.md) — new\n- [B](b.md) — b\n- [C](c.md) — c\n");
        assert_eq!(entry_count(&out), 3);
        assert_eq!(upsert("", "c.md", "- [C](c.md) — c"), "- [C](c.md) — c\n");
    }

    #[test]
    fn limits() {
        let path = Path::new("/m/MEMORY.md");
        let full: String = (0..MAX_INDEX_LINES).map(|i| format!("- [{i}]({i}.md) — d\n")).collect();
        assert!(check_limits("", &full, path).is_ok());
        let over = upsert(&full, "new.md", "- [new](new.md) — d");
        let err = check_limits(&full, &over, path).unwrap_err();
        assert!(err.contains("201 lines") && err.contains("Consolidate") && err.contains("/m/MEMORY.md"), "{err}");
        // Replacing an entry of an index already over the limit (grown by hand) does not make it worse.
        let replaced = upsert(&over, "new.md", "- [new](new.md) — e");
        assert!(check_limits(&over, &replaced, path).is_ok());

        let wide: String = (0..150).map(|i| format!("- [{i}]({i}.md) — {}\n", "x".repeat(160))).collect();
        let err = check_limits("", &wide, path).unwrap_err();
        assert!(err.contains("25 KB") && err.contains("Consolidate"), "{err}");
    }
}
