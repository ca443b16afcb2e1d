//! YAML front matter (`---` … `---` at the top of a Markdown file), as Claude Code's commands, skills and
//! agents use it: parsed with a YAML parser, read as a flat map of strings and string lists.

use yaml_rust2::{Yaml, YamlLoader};

/// The directories of one kind of extension file (`commands`, `skills`, `agents`), highest precedence first:
/// the project's `.claude/<kind>` and `.tandem/<kind>`, then Claude Code's user `~/.claude/<kind>` and tandem's
/// `<config dir>/<kind>`, each with its scope (`project` or `user`).
pub fn extension_dirs(
    kind: &str,
    project_root: &std::path::Path,
    claude_user_dir: Option<&std::path::Path>,
    config_dir: &std::path::Path,
) -> Vec<(std::path::PathBuf, &'static str)> {
    let mut dirs = vec![
        (project_root.join(".claude").join(kind), "project"),
        (project_root.join(".tandem").join(kind), "project"),
    ];
    if let Some(dir) = claude_user_dir {
        dirs.push((dir.join(kind), "user"));
    }
    dirs.push((config_dir.join(kind), "user"));
    dirs
}

/// Whether the extension directory `dir` (of `scope`, as [`extension_dirs`] gives it) may be read. A project's is
/// not when it or the `.claude` / `.tandem` above it is a symbolic link: a repository could link `.claude/skills`
/// to another project's (or the user's) directory and have what is there described to the model, unasked. The
/// reason goes to `problems`, so it is reported, not silently skipped.
pub fn readable_dir(dir: &std::path::Path, scope: &str, problems: &mut Vec<String>) -> bool {
    if scope != "project" {
        return true;
    }
    let is_link = |path: &&std::path::Path| std::fs::symlink_metadata(path).is_ok_and(|meta| meta.is_symlink());
    match [Some(dir), dir.parent()].into_iter().flatten().find(is_link) {
        Some(link) => {
            problems.push(format!(
                "{}: a symbolic link, which tandem does not follow for a project's files; nothing in it is read",
                link.display()
            ));
            false
        }
        None => true,
    }
}

/// Largest command, skill or agent file read.
const MAX_FILE_BYTES: u64 = 1024 * 1024;

/// Reads a command, skill or agent file — only a regular file, not through a symbolic link (a repository could
/// link `.claude/skills/x/SKILL.md` to `~/.ssh/id_rsa` and have it sent to the model), and not a huge one.
pub fn read_regular_file(path: &std::path::Path) -> Result<String, String> {
    let meta = std::fs::symlink_metadata(path).map_err(|err| format!("cannot be read ({err})"))?;
    if meta.file_type().is_symlink() {
        return Err("is a symbolic link, which tandem does not follow here".into());
    }
    if !meta.is_file() {
        return Err("is not a regular file".into());
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(format!("is larger than {} KB", MAX_FILE_BYTES / 1024));
    }
    std::fs::read_to_string(path).map_err(|err| format!("cannot be read ({err})"))
}

/// Whether `path` is a directory itself, not a link to one.
pub fn is_real_dir(path: &std::path::Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|meta| meta.is_dir())
}

/// A Markdown file split into its front matter and its body.
#[derive(Clone, Debug, Default)]
pub struct Document {
    fields: Vec<(String, Field)>,
    raw: Vec<(String, Field)>,
    pub body: String,
}

/// A front matter value, as the files use them.
#[derive(Clone, Debug, PartialEq)]
pub enum Field {
    Text(String),
    List(Vec<String>),
}

impl Document {
    /// Splits `text`; a file without front matter is all body. Errors say why the front matter is not YAML.
    pub fn parse(text: &str) -> Result<Document, String> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let Some(rest) = text.strip_prefix("---").filter(|rest| rest.starts_with('\n') || rest.starts_with("\r\n"))
        else {
            return Ok(Document { fields: Vec::new(), raw: Vec::new(), body: text.to_owned() });
        };
        let (yaml, body) = match rest.find("\n---") {
            Some(end) => {
                let after = &rest[end + 4..];
                let body = after.split_once('\n').map_or("", |(_, body)| body);
                (&rest[..end], body)
            }
            None => return Err("the front matter has no closing ---".to_owned()),
        };
        let raw = lenient(yaml);
        // Claude Code's files are often not strict YAML (`argument-hint: [pr] [priority]`): what YAML can't read
        // is taken line by line, `key: value` and `- item`.
        let Ok(docs) = YamlLoader::load_from_str(yaml) else {
            return Ok(Document { fields: raw.clone(), raw, body: body.to_owned() });
        };
        let mut fields = Vec::new();
        match docs.into_iter().next() {
            None | Some(Yaml::Null) => {}
            Some(Yaml::Hash(hash)) => {
                for (key, value) in hash {
                    let Some(key) = key.as_str().map(str::to_owned) else { continue };
                    if let Some(field) = field(&value) {
                        fields.push((key, field));
                    }
                }
            }
            Some(_) => return Err("the front matter is not a map of fields".to_owned()),
        }
        Ok(Document { fields, raw, body: body.to_owned() })
    }

    /// A field exactly as written on its line (`argument-hint: [pr-number]` keeps its brackets).
    pub fn raw(&self, key: &str) -> Option<String> {
        self.raw.iter().find(|(name, _)| name == key).and_then(|(_, value)| match value {
            Field::Text(text) => Some(text.clone()),
            Field::List(_) => None,
        })
    }

    /// A text field (a list is joined with ", ").
    pub fn text(&self, key: &str) -> Option<String> {
        self.fields.iter().find(|(name, _)| name == key).map(|(_, value)| match value {
            Field::Text(text) => text.clone(),
            Field::List(items) => items.join(", "),
        })
    }

    /// A list field: a YAML list, or a text split at commas outside parentheses (Claude Code accepts both for
    /// `tools` and `allowed-tools`). Only commas: `Bash (echo:*)` stays one (invalid) item rather than becoming
    /// `Bash`, which would allow every command.
    pub fn list(&self, key: &str) -> Option<Vec<String>> {
        self.fields.iter().find(|(name, _)| name == key).map(|(_, value)| match value {
            Field::List(items) => items.clone(),
            Field::Text(text) => split_commas(text),
        })
    }

    /// The field names, for reporting the ones a reader does not use.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.fields.iter().map(|(name, _)| name.as_str())
    }
}

/// `key: value` lines (quotes around a value dropped) and `- item` lines under a `key:` line.
fn lenient(yaml: &str) -> Vec<(String, Field)> {
    let mut fields: Vec<(String, Field)> = Vec::new();
    for line in yaml.lines() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        if let Some(item) = trimmed.strip_prefix("- ")
            && line.starts_with(char::is_whitespace)
        {
            if let Some((_, value)) = fields.last_mut() {
                match value {
                    Field::List(items) => items.push(unquote(item)),
                    Field::Text(text) if text.is_empty() => *value = Field::List(vec![unquote(item)]),
                    Field::Text(_) => {}
                }
            }
            continue;
        }
        if let Some((key, value)) = trimmed.split_once(':') {
            fields.push((key.trim().to_owned(), Field::Text(unquote(value.trim()))));
        }
    }
    fields
}

fn unquote(text: &str) -> String {
    let text = text.trim();
    for quote in ['"', '\''] {
        if let Some(inner) = text.strip_prefix(quote).and_then(|rest| rest.strip_suffix(quote)) {
            return inner.to_owned();
        }
    }
    text.to_owned()
}

/// `a, b(x, y), c` → `a`, `b(x, y)`, `c`.
fn split_commas(text: &str) -> Vec<String> {
    let mut items = Vec::new();
    let mut current = String::new();
    let mut depth = 0usize;
    for ch in text.chars() {
        match ch {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                items.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        current.push(ch);
    }
    items.push(current);
    items.into_iter().map(|item| item.trim().to_owned()).filter(|item| !item.is_empty()).collect()
}

fn field(value: &Yaml) -> Option<Field> {
    match value {
        Yaml::String(text) | Yaml::Real(text) => Some(Field::Text(text.clone())),
        Yaml::Integer(number) => Some(Field::Text(number.to_string())),
        Yaml::Boolean(flag) => Some(Field::Text(flag.to_string())),
        Yaml::Array(items) => Some(Field::List(
            items
                .iter()
                .filter_map(|item| match field(item) {
                    Some(Field::Text(text)) => Some(text),
                    _ => None,
                })
                .collect(),
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_and_body_are_split() {
        let doc = Document::parse(
            "---\ndescription: Review a PR\nargument-hint: [pr-number]\nallowed-tools: Bash(git diff:*), Read\nmodel: haiku\n---\nReview PR $1.\n",
        )
        .unwrap();
        assert_eq!(doc.text("description").as_deref(), Some("Review a PR"));
        assert_eq!(doc.raw("argument-hint").as_deref(), Some("[pr-number]"));
        assert_eq!(doc.list("allowed-tools").unwrap(), ["Bash(git diff:*)", "Read"]);
        let spaced = Document::parse("---\nallowed-tools: Bash (echo:*), Bash(a, b)\n---\n").unwrap();
        assert_eq!(spaced.list("allowed-tools").unwrap(), ["Bash (echo:*)", "Bash(a, b)"]);
        assert_eq!(doc.body, "Review PR $1.\n");
        let list = Document::parse("---\ntools:\n  - Read\n  - Grep\n---\nbody").unwrap();
        assert_eq!(list.list("tools").unwrap(), ["Read", "Grep"]);
        assert_eq!(Document::parse("no front matter").unwrap().body, "no front matter");
        let loose = Document::parse("---\nargument-hint: [pr] [priority]\ndescription: \"Fix: it\"\n---\nx").unwrap();
        assert_eq!(loose.raw("argument-hint").as_deref(), Some("[pr] [priority]"));
        assert_eq!(loose.text("description").as_deref(), Some("Fix: it"));
        assert!(Document::parse("---\ndescription: x\n").is_err());
    }
}
