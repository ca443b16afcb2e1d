//! The tools the model can call: one file per tool behind the [`Tool`] trait.
//!
//! Inputs are checked against the tool's JSON schema ([`schema::validate`]) before a tool runs, so a tool's
//! `run` can deserialize its typed input and trust it. Tool failures are results the model sees
//! (`ToolOutput { is_error: true }`), never panics or errors that end the run.

pub use tandem_protocol::tools::{
    CallDisplay, DiffTexts, FoundUnit, PREVIEW_TEXT_LIMIT, Preview, ResultView, Risk, ToolKind,
};

pub mod ask_user;
pub mod bash;
pub mod bash_output;
pub mod edit;
pub mod file_state;
pub mod glob;
pub mod grep;
pub mod notebook;
pub mod notebook_edit;
pub mod read;
mod read_image;
pub mod registry;
pub mod save_memory;
pub mod schema;
pub mod search_sessions;
pub mod skill;
pub mod structured_output;
pub mod task;
pub mod todo_write;
pub mod typed;
pub mod web_fetch;
pub mod web_search;
pub mod write;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::conversation::ToolInput;

pub use file_state::FileState;
pub use registry::ToolRegistry;

/// A call the user's interrupt stopped before it ran (its whole result).
pub const NOT_RUN_INTERRUPTED: &str = "Not run: interrupted by the user.";
/// The line a Bash result has when the user's interrupt killed the command.
pub const COMMAND_INTERRUPTED: &str = "Command was interrupted by the user and killed.";

/// The result of a call the user's interrupt abandoned while it ran (a tool that did not end on its own).
pub const CALL_INTERRUPTED: &str = "Interrupted by the user while it ran; its result is unknown.";

/// Whether a saved tool result is that of a call the user interrupted: a conversation drawn again from its
/// messages (`--resume`) shows it as interrupted, as it was shown live, not as failed.
pub fn result_says_interrupted(content: &str) -> bool {
    content == NOT_RUN_INTERRUPTED
        || content == CALL_INTERRUPTED
        || content.lines().any(|line| line == COMMAND_INTERRUPTED)
}

/// The result of a tool call, as the model will see it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ToolOutput {
    pub content: String,
    pub is_error: bool,
    /// The result in Claude Code's per-tool shape (stream-json's `tool_use_result`: Read's `file`, Edit's
    /// `structuredPatch`, Bash's `stdout`/`stderr`), for SDK hosts; the model only sees `content`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured: Option<Value>,
    /// Images that go with the result (an MCP tool's), as Anthropic image sources (`{"type": "base64",
    /// "media_type", "data"}`): they follow the tool results in the same message.
    /// (Boxed: results are passed by value everywhere and are rarely images.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub images: Option<Box<Vec<Value>>>,
}

impl PartialEq for ToolOutput {
    /// What the model sees: the structured copy is for hosts.
    fn eq(&self, other: &Self) -> bool {
        self.content == other.content && self.is_error == other.is_error
    }
}

impl ToolOutput {
    pub fn ok(content: impl Into<String>) -> Self {
        ToolOutput { content: content.into(), is_error: false, structured: None, images: None }
    }

    pub fn error(content: impl Into<String>) -> Self {
        ToolOutput { content: content.into(), is_error: true, structured: None, images: None }
    }

    pub fn with_structured(mut self, structured: Value) -> Self {
        self.structured = Some(structured);
        self
    }
}

/// Largest text copied into a structured result (a host reads lines of at most 1 MiB).
pub const MAX_STRUCTURED_TEXT: usize = 256 * 1024;

/// `text` for a structured result, or `None` when it is too large to copy.
pub fn structured_text(text: &str) -> Value {
    if text.len() <= MAX_STRUCTURED_TEXT { Value::String(text.to_owned()) } else { Value::Null }
}

/// A predicate telling which paths must not be read.
pub type HiddenPaths = Arc<dyn Fn(&Path) -> bool + Send + Sync>;

/// Makes a directory walk from `root` skip what `hidden` hides. The walk's paths are judged as the kernel resolves
/// them (the root's links followed once, up front; the walk follows none), so a root reached through a link
/// can't walk into a secret that its spelled-out paths would not name. A root in a denied directory renamed since
/// is refused (the walk never asks about its root).
pub fn skip_hidden(walker: &mut ignore::WalkBuilder, root: &Path, hidden: Option<HiddenPaths>) -> Result<(), String> {
    let Some(hidden) = hidden else { return Ok(()) };
    let resolve =
        |path: &Path| crate::fs_util::resolve_like_kernel(path).unwrap_or_else(|| crate::fs_util::normalize(path));
    let resolved = resolve(root);
    if let Some(origin) = denied_directory_around(&resolved, &*hidden) {
        return Err(format!(
            "{} lies in the directory found at {}, which a Read may not see unasked (renamed since).",
            root.display(),
            origin.display()
        ));
    }
    let root = root.to_path_buf();
    walker.filter_entry(move |entry| {
        let path = entry.path();
        let judged = match path.strip_prefix(&root) {
            Ok(rest) if rest.as_os_str().is_empty() => resolved.clone(),
            Ok(rest) => resolved.join(rest),
            Err(_) => resolve(path),
        };
        // A file or directory found at a hidden place and reached here under another name (renamed since, or the
        // target of a link a rule names: `a.key -> plain.txt` under `Read(**/*.key)`) is left out too.
        let found_hidden = || {
            entry.metadata().ok().and_then(|meta| crate::sandbox::denied_origin_of(&meta)).is_some_and(|o| hidden(&o))
        };
        !hidden(&judged) && !found_hidden()
    });
    Ok(())
}

pub use crate::sandbox::{denied_directory_around, open_unasked, refuse_hidden_at, refuse_hidden_opened};

/// What a tool call runs with.
#[derive(Clone)]
pub struct ToolContext {
    /// The working directory; relative paths in inputs are resolved against it.
    pub cwd: PathBuf,
    /// What this session has read and written, for Edit/Write staleness checks.
    pub files: Arc<FileState>,
    /// Cancelled on interrupt: a running tool stops (Bash kills its whole process group).
    pub cancel: CancellationToken,
    /// Live output of a running tool (Bash), shown by front ends while it runs. `None` when nobody listens.
    pub live_output: Option<mpsc::UnboundedSender<String>>,
    /// Where big outputs are saved whole (the session's directory), so the model can read what a result left
    /// out. `None`: they are only truncated.
    pub output_dir: Option<PathBuf>,
    /// Paths that Read deny rules hide: directory searches (Grep, Glob) skip them, so a search over a parent
    /// directory can't read what a rule denies.
    pub hidden: Option<HiddenPaths>,
    /// What no Read may return whatever was approved (deny rules, secrets no rule of the user's names), checked
    /// against the real place of the file opened ([`refuse_hidden_opened`]).
    pub unreadable: Option<HiddenPaths>,
    /// The resolved path a file call nobody approved was judged on just before it ran: the file a file tool opens
    /// ([`ToolContext::judged_or_resolved`]), the root beneath which a search's files must lie.
    pub judged_path: Option<PathBuf>,
    /// The sandbox this call's Bash command runs in (set per call from its grant); `None` runs it with tandem's
    /// own rights.
    pub sandbox: Option<crate::sandbox::SandboxPolicy>,
    /// The session's sandbox, from which each call's [`ToolContext::sandbox`] is made; `None`: no sandbox.
    pub confinement: Option<Arc<crate::sandbox::Confinement>>,
    /// The environment commands get: tandem's, without its secrets.
    pub shell_env: Arc<crate::shell_env::ShellEnvPolicy>,
    /// Runs the Task tool's subagents; `None` inside a subagent (they don't nest).
    pub subagents: Option<Arc<dyn task::SubagentLauncher>>,
    /// The id of the call being run (set while a tool runs), e.g. to tag a subagent's output with its parent.
    pub call_id: Option<String>,
    /// The session's `run_in_background` commands.
    pub background: Arc<bash::background::BackgroundShells>,
    /// Where tools that make model requests of their own record what those cost.
    pub spend: Arc<crate::spend::ToolSpend>,
    /// The session's request record (the API inspector), for the requests tools make of their own.
    pub recorder: Option<Arc<crate::inspect::Recorder>>,
    /// Where Edit and Write checkpoint the files they change, for rewind.
    pub checkpoints: Option<Arc<crate::rewind::Checkpoints>>,
}

impl ToolContext {
    pub fn new(cwd: PathBuf) -> Self {
        ToolContext {
            cwd,
            files: Arc::new(FileState::default()),
            cancel: CancellationToken::new(),
            live_output: None,
            hidden: None,
            unreadable: None,
            judged_path: None,
            output_dir: None,
            sandbox: None,
            confinement: None,
            shell_env: Arc::default(),
            subagents: None,
            call_id: None,
            background: Arc::default(),
            spend: Arc::default(),
            recorder: None,
            checkpoints: None,
        }
    }

    /// Resolves a path from a tool input against the working directory (`~` is the home directory).
    pub fn resolve(&self, path: &str) -> PathBuf {
        crate::fs_util::resolve_path(&self.cwd, path)
    }

    /// Where a file tool writes: the path its call was judged on just before it ran, when nobody approved it
    /// (resolved then, free of links: a link put in the way since fails the write), else `path` resolved now.
    pub fn judged_or_resolved(&self, path: &str) -> PathBuf {
        self.judged_path.clone().unwrap_or_else(|| self.resolve(path))
    }
}

/// What a call asks permission for, as its tool knows it ([`Tool::permission_subject`]): the policy decides on
/// this, never on the tool's name or the raw fields of its input, so a new tool says what it touches in its own
/// file and the policy needs no change.
#[derive(Clone, Debug, PartialEq)]
pub enum Subject {
    /// A shell command line, judged by the analyser and run in the sandbox its decision grants.
    Command { command: String, unsandboxed: bool },
    /// A web page to fetch.
    Fetch { url: String },
    /// A web search.
    WebSearch,
    /// A file or directory the call reads (searches) or writes.
    File(FileAccess),
    /// The call asks the user something only they can answer (questions, approval of a plan): it always asks,
    /// whatever the mode or a rule allows, and is refused where nobody is asked.
    UserAnswer,
}

/// The path side of a [`Subject`].
#[derive(Clone, Debug, PartialEq)]
pub struct FileAccess {
    /// The path as the call names it (relative to the working directory, `~` for home); `None`: no path.
    pub path: Option<String>,
    /// The call changes what it names (else it only reads).
    pub writes: bool,
    /// The change is a file edit, which acceptEdits allows inside the workspace (Edit, Write, a memory topic).
    pub edits_files: bool,
    /// It reads the sessions of every project, not only this one's.
    pub every_project: bool,
    /// Where the tool starts when that is not `path` (a Glob's `path`, before its pattern's literal part moves
    /// the search): judged as well, since what the tool says of it (missing, not a directory) reaches the model.
    pub starts_at: Option<String>,
}

impl FileAccess {
    /// Reads `path`.
    pub fn read(path: impl Into<String>) -> Self {
        FileAccess { path: Some(path.into()), writes: false, edits_files: false, every_project: false, starts_at: None }
    }

    /// Edits `path` (the change acceptEdits allows).
    pub fn edit(path: Option<String>) -> Self {
        FileAccess { path, writes: true, edits_files: true, every_project: false, starts_at: None }
    }
}

/// What [`Tool::permission_subject`] says by default: the path the input names (`file_path`, `path`,
/// `notebook_path`, else [`Tool::target_path`]), else the working directory for a tool that only reads; read or
/// written as the tool is read-only or not. Tools from elsewhere (MCP's) are judged by the rules naming them.
pub fn default_subject(tool: &(impl Tool + ?Sized), input: &Value, cwd: &Path) -> Subject {
    let named = ["file_path", "path", "notebook_path"].iter().find_map(|field| input.get(*field)?.as_str());
    let path = named.map(str::to_owned).or_else(|| {
        let context = ToolContext::new(cwd.to_path_buf());
        tool.target_path(input, &context).map(|path| path.to_string_lossy().into_owned())
    });
    let read_only = tool.is_read_only();
    let path = path.or_else(|| read_only.then(|| ".".to_owned()));
    Subject::File(FileAccess { path, writes: !read_only, edits_files: false, every_project: false, starts_at: None })
}

/// A tool the model can call.
pub trait Tool: Send + Sync {
    /// The name the model calls it by (Claude Code's names: `Read`, `Edit`, …).
    fn name(&self) -> &str;

    /// The description the model reads.
    /// Whether a call only looks something up (reads a file, searches): front ends show a run of such calls as
    /// one compact group. Tools that change nothing but do more (start a subagent, ask the user, keep the
    /// checklist) are read-only without being lookups.
    fn is_lookup(&self) -> bool {
        self.is_read_only()
    }

    fn description(&self) -> std::borrow::Cow<'static, str>;

    /// JSON schema of the input (`type: object`, `properties`, `required`).
    fn input_schema(&self) -> Value;

    /// Read-only tools run concurrently and without asking in most modes.
    fn is_read_only(&self) -> bool;

    fn risk(&self) -> Risk;

    /// The risk of this particular call, for the permission dialog's label: a Bash command that only reads is not
    /// "high risk". Defaults to [`Tool::risk`].
    fn risk_for(&self, input: &Value) -> Risk {
        let _ = input;
        self.risk()
    }

    /// What the call would do, for the permission request. `Err` carries a message for the model when the call
    /// can't work at all (e.g. an Edit whose `old_string` is not in the file); the agent then returns it as the
    /// tool's error result without asking the user.
    fn preview(&self, _input: &Value, _ctx: &ToolContext) -> Result<Option<Preview>, String> {
        Ok(None)
    }

    /// A short line that identifies the call for people (a card's title): the command's first line, the path
    /// (relative to the working directory when under it), the pattern. The default looks for the usual input
    /// fields, so a new tool shows sensibly without front-end changes.
    fn summary(&self, input: &Value, ctx: &ToolContext) -> String {
        display_summary(input, ctx)
    }

    /// What the call asks permission for (see [`Subject`]); `cwd` resolves what the input names relative to it.
    fn permission_subject(&self, input: &Value, cwd: &Path) -> Subject {
        default_subject(self, input, cwd)
    }

    /// What kind of work the tool does: front ends present its calls by kind, never by name.
    fn kind(&self) -> ToolKind {
        ToolKind::Other
    }

    /// A successful result as people read it, from the call's input and the text the model got. The tool that
    /// wrote the text reads it back, so the format stays in one file, and a resumed session (which keeps only the
    /// text) shows the same as the live one. `None`: front ends show the text.
    fn result_view(&self, input: &Value, content: &str) -> Option<ResultView> {
        let _ = (input, content);
        None
    }

    /// The MCP server the tool belongs to (`mcp__<server>__<tool>`), for permission rules naming the server.
    fn mcp_server(&self) -> Option<&str> {
        None
    }

    /// The path the call reads or writes, if any, for permission rules and display.
    fn target_path(&self, _input: &Value, _ctx: &ToolContext) -> Option<PathBuf> {
        None
    }

    /// Runs the call. The input has already been validated against [`Tool::input_schema`]; it is the one the
    /// conversation holds, shared rather than copied (a Write's can be hundreds of megabytes).
    fn run<'a>(&'a self, input: ToolInput, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutput>;
}

/// The first sentence of a file tool's result ("The file x has been updated.", without Edit's snippet that
/// follows), for people.
fn first_sentence_view(content: &str) -> Option<ResultView> {
    let first = content.lines().next().filter(|line| !line.is_empty())?;
    let sentence = first.find(". Here's").map_or(first, |end| &first[..=end]);
    Some(ResultView::Note { text: sentence.to_owned() })
}

/// What [`Tool::summary`] shows by default: the first of `command`, a path field, `pattern` (with ` in PATH`),
/// `title`, `query`, `url`; else the input as compact JSON (empty for `{}`).
pub fn display_summary(input: &Value, ctx: &ToolContext) -> String {
    let field = |name: &str| input.get(name).and_then(Value::as_str).filter(|text| !text.is_empty());
    let path = |text: &str| display_path(&ctx.resolve(text), &ctx.cwd);
    if let Some(command) = field("command") {
        let mut lines = command.lines().filter(|line| !line.trim().is_empty());
        let first = lines.next().unwrap_or_default().trim_end();
        return if lines.next().is_some() { format!("{first} …") } else { first.to_owned() };
    }
    if let Some(file) = field("file_path").or_else(|| field("notebook_path")) {
        return path(file);
    }
    if let Some(pattern) = field("pattern") {
        return match field("path") {
            Some(dir) => format!("{pattern} in {}", path(dir)),
            None => pattern.to_owned(),
        };
    }
    if let Some(text) = field("title").or_else(|| field("query")).or_else(|| field("url")) {
        return text.to_owned();
    }
    let text = input.to_string();
    if text == "{}" { String::new() } else { text }
}

/// Parses a validated input into the tool's typed input (borrowing from it where `T` borrows); a mismatch the
/// schema did not catch becomes an error result naming the problem.
pub fn parse_input<'de, T: serde::Deserialize<'de>>(tool: &str, input: &'de Value) -> Result<T, ToolOutput> {
    T::deserialize(input).map_err(|err| ToolOutput::error(format!("Invalid input for {tool}: {err}")))
}

/// Display form of a path relative to the working directory when it is inside it.
pub fn display_path(path: &Path, cwd: &Path) -> String {
    match path.strip_prefix(cwd) {
        Ok(relative) if !relative.as_os_str().is_empty() => relative.display().to_string(),
        _ => path.display().to_string(),
    }
}
