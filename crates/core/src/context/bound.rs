//! One rule for every text that reaches the model from outside the conversation — a tool's result (its error
//! messages included, which may quote a huge input), an MCP result, what hooks say: at most [`MAX_CHARS`]
//! characters. A longer text keeps its head and its tail (where a build's verdict or a test summary is) and says
//! what was left out and, where it could be saved, where the whole text is.

use std::path::Path;

/// About 25,000 tokens: Claude Code's cap for one tool result.
pub const MAX_CHARS: usize = 100_000;
/// Of what is kept, the share at the end.
const TAIL_SHARE: usize = 5;

/// `text` as the model may see it. `keep_in`: a directory where the whole text is saved (as `name`.txt) when
/// it is cut, so that the user (or the model, with Read) can open it.
pub fn for_model(text: String, keep_in: Option<&Path>, name: &str) -> String {
    let total = text.chars().count();
    if total <= MAX_CHARS {
        return text;
    }
    let tail_chars = MAX_CHARS / TAIL_SHARE;
    let head_end = byte_at(&text, MAX_CHARS - tail_chars);
    let tail_start = byte_at(&text, total - tail_chars);
    let left_out = total - MAX_CHARS;
    let saved = keep_in.and_then(|dir| save(dir, name, &text));
    let whereabouts = match saved {
        Some(path) => format!("; the whole text is in {}", path.display()),
        None => String::new(),
    };
    format!(
        "{}\n\n[… {left_out} characters left out here ({} in all){whereabouts} …]\n\n{}",
        &text[..head_end],
        crate::fs_util::human_size(text.len() as u64),
        &text[tail_start..]
    )
}

/// The byte offset of character `index`.
fn byte_at(text: &str, index: usize) -> usize {
    text.char_indices().nth(index).map_or(text.len(), |(at, _)| at)
}

fn save(dir: &Path, name: &str, text: &str) -> Option<std::path::PathBuf> {
    let safe: String = name.chars().map(|ch| if ch.is_ascii_alphanumeric() || ch == '-' { ch } else { '_' }).collect();
    let path = dir.join(format!("{safe}.txt"));
    std::fs::create_dir_all(dir).ok()?;
    std::fs::write(&path, text).ok()?;
    Some(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_text_keeps_its_head_and_tail_and_says_where_the_rest_is() {
        let dir = tempfile::tempdir().unwrap();
        let text = format!("HEAD{}TAIL", "é".repeat(MAX_CHARS * 3));
        let bounded = for_model(text.clone(), Some(dir.path()), "toolu_1");
        assert!(bounded.starts_with("HEAD") && bounded.ends_with("TAIL"));
        assert!(bounded.chars().count() < MAX_CHARS + 300, "{}", bounded.chars().count());
        let note = bounded.lines().find(|line| line.contains("left out")).unwrap();
        assert!(note.contains(&format!("{} characters left out", MAX_CHARS * 2 + 8)), "{note}");
        assert_eq!(std::fs::read_to_string(dir.path().join("toolu_1.txt")).unwrap(), text);
        assert_eq!(for_model("short".into(), None, "x"), "short");
    }
}
