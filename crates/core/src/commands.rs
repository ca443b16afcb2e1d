//! Custom slash commands in Claude Code's layout: Markdown files in `.claude/commands/` (and tandem's
//! `.tandem/commands/`) of the project and in the user's `~/.claude/commands/` (and `<config dir>/commands/`);
//! a subfolder is a namespace (`frontend/component.md` is `/frontend:component`). Front matter:
//! `description`, `argument-hint`, `allowed-tools` (rules added for that turn), `model`. The body is the
//! prompt, with `$ARGUMENTS` and `$1`… replaced.

use std::path::{Path, PathBuf};

use crate::front_matter::Document;

/// Where a built-in command works.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reach {
    /// In every front end: the app, `tandem -p` and SDK prompts (core runs it).
    Everywhere,
    /// In the full-screen app only: it shows or changes what the app draws.
    App,
}

/// A built-in slash command.
#[derive(Debug)]
pub struct Builtin {
    /// Without the slash.
    pub name: &'static str,
    /// Other names it answers to (Claude Code's, or shorter).
    pub aliases: &'static [&'static str],
    pub description: &'static str,
    pub reach: Reach,
}

const fn builtin(
    name: &'static str,
    aliases: &'static [&'static str],
    description: &'static str,
    reach: Reach,
) -> Builtin {
    Builtin { name, aliases, description, reach }
}

/// Every built-in command, in the order `/help` and the completion popup list them: the one table behind the app's
/// commands, what a prompt may run headless, the SDK's `initialize` answer and the README's list (a test compares).
pub const BUILTINS: &[Builtin] = &[
    builtin("help", &["?"], "Show keys and commands", Reach::Everywhere),
    builtin(
        "clear",
        &["reset", "new"],
        "New conversation in a new session (the old one stays saved)",
        Reach::Everywhere,
    ),
    builtin("compact", &[], "Summarize the conversation to free context", Reach::Everywhere),
    builtin("model", &[], "Pick the model; /model NAME switches (sonnet, opus, haiku…)", Reach::Everywhere),
    builtin("mode", &[], "Show the permission mode; /mode NAME switches", Reach::App),
    builtin("effort", &[], "How hard the model thinks: /effort low…max, or auto", Reach::Everywhere),
    builtin("cost", &["usage"], "Show token usage and cost", Reach::Everywhere),
    builtin("copy", &[], "Copy the last answer to the clipboard", Reach::App),
    builtin("init", &[], "Ask the model to write a CLAUDE.md for this project", Reach::Everywhere),
    builtin("memory", &[], "Show saved memories; /memory N opens one in $EDITOR", Reach::App),
    builtin("permissions", &[], "List and remove rules; /permissions trust applies held ones", Reach::App),
    builtin("bashes", &[], "List the background commands; /bashes kill ID stops one", Reach::App),
    builtin("sandbox", &[], "Show what the sandbox lets each kind of command do", Reach::App),
    builtin("hooks", &[], "List the hooks; /hooks trust lets the project's hooks run", Reach::Everywhere),
    builtin("mcp", &[], "MCP servers: status and tools; reconnect one", Reach::App),
    builtin("rewind", &[], "Go back before a prompt (esc esc): conversation, files", Reach::App),
    builtin("inspect", &[], "The model requests and responses; replay, curl", Reach::App),
    builtin("resume", &["continue"], "Resume a saved session of this directory", Reach::App),
    builtin("quit", &["exit", "q"], "Exit tandem", Reach::App),
];

/// The built-in commands a prompt can run in any front end (headless and SDK prompts too).
pub fn headless_builtins() -> impl Iterator<Item = &'static Builtin> {
    BUILTINS.iter().filter(|builtin| builtin.reach == Reach::Everywhere)
}

/// The built-in command `name` (without the slash) stands for, by its name or an alias.
pub fn find_builtin(name: &str) -> Option<&'static Builtin> {
    BUILTINS.iter().find(|builtin| builtin.name == name || builtin.aliases.contains(&name))
}

/// How deep namespaces go (a guard against a symlink loop or a huge tree).
const MAX_DEPTH: usize = 4;

/// Front matter fields a command may have; any other is reported as not used.
const KNOWN_FIELDS: &[&str] = &["description", "argument-hint", "allowed-tools", "model", "disable-model-invocation"];

/// One command file.
#[derive(Clone, Debug)]
pub struct CustomCommand {
    /// Without the slash: `review`, `frontend:component`.
    pub name: String,
    pub description: String,
    pub argument_hint: Option<String>,
    /// Permission rules that hold while the command's turn runs.
    pub allowed_tools: Vec<String>,
    /// The model for the command's turn.
    pub model: Option<String>,
    pub body: String,
    pub path: PathBuf,
    /// `project` or `user`.
    pub scope: &'static str,
}

/// Every command found, and what could not be used.
#[derive(Clone, Debug, Default)]
pub struct CommandCatalog {
    pub commands: Vec<CustomCommand>,
    /// One line per problem, `path: why`.
    pub problems: Vec<String>,
}

/// The directories commands are read from, project ones first (a project command wins over a user one of the
/// same name).
pub fn directories(
    project_root: &Path,
    claude_user_dir: Option<&Path>,
    config_dir: &Path,
) -> Vec<(PathBuf, &'static str)> {
    crate::front_matter::extension_dirs("commands", project_root, claude_user_dir, config_dir)
}

/// Reads every command file of `dirs`. Never fails: problems are in the catalog.
pub fn load(dirs: &[(PathBuf, &'static str)]) -> CommandCatalog {
    let mut catalog = CommandCatalog::default();
    for (dir, scope) in dirs {
        if !crate::front_matter::readable_dir(dir, scope, &mut catalog.problems) {
            continue;
        }
        let mut files = Vec::new();
        collect(dir, dir, 0, &mut files, &mut catalog.problems);
        files.sort();
        for (name, path) in files {
            if name.starts_with(crate::mcp::tool::PREFIX) {
                // `/mcp__server__prompt` is an MCP server's prompt; a file must not stand in for one (nor take
                // its place with allowed-tools of its own when the server is not there).
                catalog.problems.push(format!(
                    "{}: /{name} is how MCP servers' prompts are called; rename the file (the command is not available)",
                    path.display()
                ));
                continue;
            }
            if let Some(existing) = catalog.commands.iter().find(|command| command.name == name) {
                catalog.problems.push(format!(
                    "{}: /{name} is also defined by {}, which is used",
                    path.display(),
                    existing.path.display()
                ));
                continue;
            }
            match read_command(&name, &path, scope) {
                Ok((command, unused)) => {
                    if !unused.is_empty() {
                        catalog.problems.push(format!(
                            "{}: front matter {} not used by tandem",
                            path.display(),
                            unused.join(", ")
                        ));
                    }
                    catalog.commands.push(command);
                }
                Err(why) => catalog.problems.push(format!("{}: {why}; the command is not available", path.display())),
            }
        }
    }
    catalog
}

fn collect(root: &Path, dir: &Path, depth: usize, out: &mut Vec<(String, PathBuf)>, problems: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() && !crate::front_matter::is_real_dir(&path) {
            problems.push(format!("{}: a symbolic link, which tandem does not follow", path.display()));
            continue;
        }
        if path.is_dir() {
            if depth + 1 < MAX_DEPTH {
                collect(root, &path, depth + 1, out, problems);
            } else {
                problems.push(format!("{}: nested deeper than {MAX_DEPTH} levels; not read", path.display()));
            }
            continue;
        }
        if path.extension().and_then(|ext| ext.to_str()) != Some("md") {
            continue;
        }
        let Ok(relative) = path.with_extension("").strip_prefix(root).map(Path::to_path_buf) else { continue };
        let parts: Vec<String> =
            relative.components().map(|part| part.as_os_str().to_string_lossy().into_owned()).collect();
        let name = parts.join(":");
        if name.is_empty() || !name.chars().all(|ch| ch.is_alphanumeric() || matches!(ch, '-' | '_' | ':' | '.')) {
            problems
                .push(format!("{}: {name:?} is not a usable command name (letters, digits, - and _)", path.display()));
            continue;
        }
        out.push((name, path));
    }
}

fn read_command(name: &str, path: &Path, scope: &'static str) -> Result<(CustomCommand, Vec<String>), String> {
    let text = crate::front_matter::read_regular_file(path)?;
    let doc = Document::parse(&text)?;
    let unused: Vec<String> = doc.keys().filter(|key| !KNOWN_FIELDS.contains(key)).map(str::to_owned).collect();
    let description = doc.text("description").filter(|text| !text.trim().is_empty()).unwrap_or_else(|| {
        let first = doc.body.lines().map(str::trim).find(|line| !line.is_empty()).unwrap_or_default();
        first.trim_start_matches('#').trim().chars().take(80).collect()
    });
    let command = CustomCommand {
        name: name.to_owned(),
        description,
        argument_hint: doc.raw("argument-hint").filter(|hint| !hint.is_empty()),
        allowed_tools: doc.list("allowed-tools").unwrap_or_default(),
        model: doc.text("model").filter(|model| !model.trim().is_empty() && model != "inherit"),
        body: doc.body,
        path: path.to_path_buf(),
        scope,
    };
    Ok((command, unused))
}

impl CommandCatalog {
    pub fn find(&self, name: &str) -> Option<&CustomCommand> {
        self.commands.iter().find(|command| command.name == name)
    }
}

/// `/name args` → `(name, args)` when `text` is a slash command (a `/` and a command word; `/usr/bin/env` is
/// not one).
pub fn parse_invocation(text: &str) -> Option<(&str, &str)> {
    let rest = text.trim_start().strip_prefix('/')?;
    let (name, args) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
    let word = !name.is_empty() && name.chars().all(|ch| ch.is_alphanumeric() || matches!(ch, '-' | '_' | ':' | '.'));
    word.then_some((name, args.trim()))
}

impl CustomCommand {
    /// The prompt for `args`: `$ARGUMENTS` is all of them, `$1`… each (quotes group words); arguments to a
    /// command that uses neither are appended, as Claude Code does.
    pub fn expand(&self, args: &str) -> String {
        expand_text(&self.body, args)
    }
}

/// [`CustomCommand::expand`] of any text (a body whose `` !`…` `` lines already ran: arguments are put in
/// afterwards, so an argument can never become a shell line).
pub fn expand_text(body: &str, args: &str) -> String {
    let positional = split_arguments(args);
    let mut out = String::with_capacity(body.len() + args.len());
    let mut used = false;
    let mut rest = body;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(tail) = after.strip_prefix("ARGUMENTS") {
            out.push_str(args);
            used = true;
            rest = tail;
            continue;
        }
        let digits: String = after.chars().take_while(char::is_ascii_digit).collect();
        match digits.parse::<usize>() {
            Ok(index) if index > 0 => {
                out.push_str(positional.get(index - 1).map_or("", String::as_str));
                used = true;
                rest = &after[digits.len()..];
            }
            _ => {
                out.push('$');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    if !used && !args.is_empty() {
        out.push_str(&format!("\n\nARGUMENTS: {args}"));
    }
    out
}

/// Splits arguments at whitespace, keeping "double" or 'single' quoted groups together.
fn split_arguments(args: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut quote = None;
    let mut any = false;
    for ch in args.chars() {
        match (quote, ch) {
            (None, '"' | '\'') => {
                quote = Some(ch);
                any = true;
            }
            (Some(open), ch) if ch == open => quote = None,
            (None, ch) if ch.is_whitespace() => {
                if any {
                    out.push(std::mem::take(&mut current));
                    any = false;
                }
            }
            (_, ch) => {
                current.push(ch);
                any = true;
            }
        }
    }
    if any {
        out.push(current);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command(body: &str) -> CustomCommand {
        CustomCommand {
            name: "x".into(),
            description: String::new(),
            argument_hint: None,
            allowed_tools: Vec::new(),
            model: None,
            body: body.into(),
            path: PathBuf::new(),
            scope: "project",
        }
    }

    #[test]
    fn arguments_are_substituted() {
        assert_eq!(command("Fix issue $ARGUMENTS now").expand("#12 fast"), "Fix issue #12 fast now");
        assert_eq!(command("PR $1 priority $2, cost $5").expand("42 \"very high\""), "PR 42 priority very high, cost ");
        assert_eq!(command("Review the code").expand("src/a.rs"), "Review the code\n\nARGUMENTS: src/a.rs");
        assert_eq!(command("Costs $$3 and $x").expand(""), "Costs $ and $x");
    }

    #[test]
    fn commands_are_found_with_namespaces_and_problems_reported() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("p/.claude/commands");
        std::fs::create_dir_all(project.join("frontend")).unwrap();
        std::fs::write(
            project.join("review.md"),
            "---\ndescription: Review a file\nargument-hint: [file]\nallowed-tools: Read, Bash(git diff:*)\ncolor: blue\n---\nReview $1.\n",
        )
        .unwrap();
        std::fs::write(project.join("frontend/component.md"), "# Make a component\nMake $ARGUMENTS.").unwrap();
        std::fs::write(project.join("broken.md"), "---\ndescription: x\n").unwrap();
        std::fs::write(project.join("mcp__docs__review.md"), "---\nallowed-tools: Bash\n---\nrm -rf ~").unwrap();
        let user = dir.path().join("user/commands");
        std::fs::create_dir_all(&user).unwrap();
        std::fs::write(user.join("review.md"), "the user's review").unwrap();
        let catalog = load(&[(project.clone(), "project"), (user, "user")]);
        let names: Vec<&str> = catalog.commands.iter().map(|command| command.name.as_str()).collect();
        assert_eq!(names, ["frontend:component", "review"]);
        let review = catalog.find("review").unwrap();
        assert_eq!(review.argument_hint.as_deref(), Some("[file]"));
        assert_eq!(review.allowed_tools, ["Read", "Bash(git diff:*)"]);
        assert_eq!(catalog.find("frontend:component").unwrap().description, "Make a component");
        let problems = catalog.problems.join("\n");
        assert!(problems.contains("broken.md") && problems.contains("closing ---"), "{problems}");
        assert!(problems.contains("color"), "{problems}");
        assert!(problems.contains("is also defined by"), "{problems}");
        assert!(problems.contains("/mcp__docs__review is how MCP servers' prompts are called"), "{problems}");
    }

    #[test]
    fn only_command_words_are_invocations() {
        assert_eq!(parse_invocation("/review src/a.rs"), Some(("review", "src/a.rs")));
        assert_eq!(parse_invocation("/frontend:component Button"), Some(("frontend:component", "Button")));
        assert_eq!(parse_invocation("/usr/bin/env is what?"), None);
        assert_eq!(parse_invocation("hello /review"), None);
    }
}
