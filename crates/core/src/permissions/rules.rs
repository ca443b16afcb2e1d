//! Rule syntax (Claude Code's): `Tool` or `Tool(specifier)`.
//!
//! Bash specifiers are matched per simple command by [`crate::shell`]. File specifiers are gitignore-style path
//! globs: `//abs/**` absolute, `~/x` in the home directory, `/x` relative to the settings file's project, `x`
//! relative to the working directory; a pattern without a `/` matches at any depth (`*.env`), and a pattern
//! ending in `/` matches everything below that directory. `Edit` rules cover every tool that edits files
//! (Edit, Write); `Read` rules cover every tool that reads them (Read, Grep, Glob).

use std::path::{Path, PathBuf};

use crate::tools::task::{AGENT_ALIAS, TASK_TOOL};

/// A parsed rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    pub tool: String,
    pub specifier: Option<String>,
}

impl Rule {
    /// Parses `Edit`, `Bash(npm test)`, `Bash(npm run test:*)`, `Edit(src/**)`, `WebFetch(domain:x.com)`.
    pub fn parse(text: &str) -> Result<Rule, String> {
        let text = text.trim();
        let (tool, specifier) = match text.find('(') {
            Some(open) => {
                let Some(inner) = text[open + 1..].strip_suffix(')') else {
                    return Err(format!("rule {text:?} has an opening '(' without a closing ')' at the end"));
                };
                (&text[..open], Some(inner.trim().to_owned()))
            }
            None => (text, None),
        };
        // `mcp__server__*`: every tool of a server.
        let name = if tool.starts_with("mcp__") { tool.strip_suffix("__*").unwrap_or(tool) } else { tool };
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
            return Err(format!("rule {text:?} does not start with a tool name"));
        }
        if specifier.as_deref() == Some("") {
            return Err(format!("rule {text:?} has an empty specifier: write {tool} to mean every call"));
        }
        let specifier = specifier.filter(|s| s != "*");
        Ok(Rule { tool: tool.to_owned(), specifier })
    }

    /// Whether this rule is about `tool` (an `Edit` rule also covers Write; a `Read` rule also Grep and Glob).
    pub fn covers_tool(&self, tool: &str) -> bool {
        let named = if self.tool == AGENT_ALIAS { TASK_TOOL } else { self.tool.as_str() };
        named == tool || named == rule_family(tool)
    }
}

/// The tool name a rule for `tool`'s family is written with (Claude Code's families): an `Edit` rule covers every
/// tool that edits files, a `Read` rule every tool that reads them; other tools are their own family.
pub fn rule_family(tool: &str) -> &str {
    match tool {
        "Write" | "MultiEdit" | "NotebookEdit" => "Edit",
        "Grep" | "Glob" => "Read",
        _ => tool,
    }
}

impl std::fmt::Display for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.specifier {
            Some(spec) => write!(f, "{}({spec})", self.tool),
            None => f.write_str(&self.tool),
        }
    }
}

/// Whether the resolved path `path` matches a path specifier resolved against `rule_root` (the settings
/// file's project) and the workspace's directories `roots` ([`path_globs`]).
pub fn path_matches(
    specifier: &str,
    path: &Path,
    rule_root: &Path,
    roots: &[PathBuf],
    home: &Path,
    broad: bool,
) -> bool {
    path_globs(specifier, rule_root, roots, home, broad).iter().any(|resolved| {
        let glob = globset::GlobBuilder::new(&resolved.to_string_lossy()).literal_separator(true).build();
        let Ok(glob) = glob else { return false };
        let matcher = glob.compile_matcher();
        // A deny or ask rule that matches a directory (`Read(conf/*)` and `conf/sub`) covers what is in it, as the
        // sandbox denies it whole: the wide reading.
        if matcher.is_match(path) || broad && path.ancestors().skip(1).any(|dir| matcher.is_match(dir)) {
            return true;
        }
        // `dir/**` also covers `dir` itself: searching the directory reads what is below it.
        resolved.to_string_lossy().strip_suffix("/**").is_some_and(|base| Path::new(base) == path)
    })
}

/// The absolute glob patterns a path specifier stands for (matched with `/` matched only by `/`, `**` any
/// depth). A `/x` pattern means "x in the project" (Claude Code's reading); with `broad` (deny and ask rules,
/// where the wider reading is the safe one) it also stands for the absolute path `/x`, which is what
/// `Write(/etc/**)` means to most people. A pattern without `/` matches at any depth below the working directory
/// (`roots[0]`), like .gitignore's, and for a deny or ask rule (`broad`) below every `--add-dir` directory too
/// (`roots[1..]`: `Read(.env)` keeps an added directory's `.env` from being read unasked); a trailing `/` means
/// everything below. Other relative patterns are the working directory's.
pub fn path_globs(specifier: &str, rule_root: &Path, roots: &[PathBuf], home: &Path, broad: bool) -> Vec<PathBuf> {
    let Some(cwd) = roots.first() else { return Vec::new() };
    let mut pattern = specifier.trim().to_owned();
    if pattern.ends_with('/') {
        pattern.push_str("**");
    }
    let mut globs = Vec::new();
    if broad && pattern.starts_with('/') && !pattern.starts_with("//") {
        globs.push(super::settings::resolve_path_pattern(&format!("/{pattern}"), rule_root, cwd, home));
    }
    let anchored =
        pattern.starts_with('/') || pattern.starts_with("~/") || pattern.starts_with("./") || pattern.contains('/');
    if anchored {
        globs.push(super::settings::resolve_path_pattern(&pattern, rule_root, cwd, home));
    } else {
        let below = if broad { roots } else { &roots[..1] };
        globs.extend(below.iter().map(|root| root.join("**").join(&pattern)));
    }
    if broad {
        // A deny or ask rule naming a link (`Read(conf/**)`, `conf -> private`) covers where it leads too: the
        // file is the same whichever name reaches it.
        let followed: Vec<PathBuf> = globs.iter().filter_map(|glob| where_it_leads(glob)).collect();
        globs.extend(followed);
    }
    globs
}

/// `glob` with its literal beginning (the components before the first with a wildcard) replaced by where it
/// really is, when that differs (a link on the way); `None` when it does not exist or leads nowhere else.
fn where_it_leads(glob: &Path) -> Option<PathBuf> {
    let (literal, rest) = crate::sandbox::split_literal(glob);
    let real = std::fs::canonicalize(&literal).ok().filter(|real| *real != literal)?;
    Some(if rest.as_os_str().is_empty() { real } else { real.join(rest) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    /// Claude Code names the Task tool `Agent` now: a rule with either name covers it (issue 29 found
    /// `--disallowedTools Agent` ignored).
    #[test]
    fn an_agent_rule_covers_the_task_tool_and_families_cover_their_tools() {
        assert!(Rule::parse("Agent").unwrap().covers_tool("Task"));
        assert!(Rule::parse("Task").unwrap().covers_tool("Task"));
        assert!(Rule::parse("Edit").unwrap().covers_tool("Write"));
        assert!(Rule::parse("Read").unwrap().covers_tool("Glob"));
        assert!(!Rule::parse("Write").unwrap().covers_tool("Edit"));
        assert!(!Rule::parse("Bash").unwrap().covers_tool("BashOutput"));
    }

    #[test]
    fn parses_rules() {
        assert_eq!(Rule::parse("Edit").unwrap(), Rule { tool: "Edit".into(), specifier: None });
        assert_eq!(Rule::parse("Bash(npm test)").unwrap().specifier.as_deref(), Some("npm test"));
        assert!(Rule::parse("Bash(npm test").is_err());
        assert!(Rule::parse("(x)").is_err());
        assert!(Rule::parse("Bash()").is_err());
        assert!(Rule::parse("").is_err());
        assert_eq!(Rule::parse("Bash(*)").unwrap().specifier, None);
        assert_eq!(
            Rule::parse("WebFetch(domain:example.com)").unwrap().specifier.as_deref(),
            Some("domain:example.com")
        );
    }

    /// Found by the forty-first red-team round: `Read(.env)` with `--add-dir ../lib` left `../lib/.env` to Read,
    /// `cat` and Grep unasked. A name without `/` in a deny or ask rule covers every workspace directory; an allow
    /// rule's stays the working directory's (a rule allows exactly what it says).
    #[test]
    fn a_bare_name_in_a_deny_rule_covers_added_directories_too() {
        let roots = [PathBuf::from("/work/project"), PathBuf::from("/work/lib")];
        let home = PathBuf::from("/home/me");
        let matches = |broad| path_matches(".env", Path::new("/work/lib/sub/.env"), &roots[0], &roots, &home, broad);
        assert!(matches(true), "deny and ask rules");
        assert!(!matches(false), "allow rules");
        assert!(path_matches(".env", Path::new("/work/project/.env"), &roots[0], &roots, &home, false));
        assert!(!path_matches("src/.env", Path::new("/work/lib/src/.env"), &roots[0], &roots, &home, true));
    }

    #[test]
    fn path_globs() {
        let cwd = PathBuf::from("/work/project");
        let home = PathBuf::from("/home/me");
        let roots = [cwd.clone()];
        let matches = |spec: &str, path: &str| path_matches(spec, Path::new(path), &cwd, &roots, &home, false);
        assert!(matches("src/**", "/work/project/src/a/b.rs"));
        assert!(!matches("src/**", "/work/project/tests/a.rs"));
        assert!(matches("src/*.rs", "/work/project/src/main.rs"));
        assert!(!matches("src/*.rs", "/work/project/src/a/main.rs"));
        assert!(matches("*.env", "/work/project/config/prod.env"), "no slash: any depth");
        assert!(matches(".env", "/work/project/.env"));
        assert!(matches("//etc/**", "/etc/passwd"));
        assert!(matches("~/.ssh/**", "/home/me/.ssh/id_rsa"));
        assert!(matches("docs/", "/work/project/docs/a/b.md"));
        assert!(!matches("//etc/**", "/work/project/etc/x"));
        assert!(matches("/etc/**", "/work/project/etc/x"), "project-relative");
        assert!(!matches("/etc/**", "/etc/passwd"), "not absolute for allow rules");
        assert!(
            path_matches("/etc/**", Path::new("/etc/passwd"), &cwd, &roots, &home, true),
            "absolute too for deny rules"
        );
    }

    #[test]
    fn edit_rules_cover_write_and_read_rules_cover_search() {
        let edit = Rule::parse("Edit(src/**)").unwrap();
        assert!(edit.covers_tool("Edit") && edit.covers_tool("Write") && !edit.covers_tool("Read"));
        let read = Rule::parse("Read").unwrap();
        assert!(read.covers_tool("Grep") && read.covers_tool("Glob") && !read.covers_tool("Bash"));
    }
}
