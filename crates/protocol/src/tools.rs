//! What front ends are shown of a tool call: how risky it is, what it would do (a diff, a command, questions, a
//! plan), and the model's checklist.

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How much harm a tool call can do; shown in the permission dialog.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Risk {
    /// Reads only (Read, Grep, Glob).
    Low,
    /// Changes files, reviewably (Edit, Write).
    Medium,
    /// Runs arbitrary commands (Bash).
    High,
}

/// What kind of work a tool does. Front ends choose how to present a call (group lookups, show an edit's diff,
/// label a command) from its kind, never from its name, so a new tool needs no front-end change.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolKind {
    /// Reads a file (Read).
    Read,
    /// Searches files or names (Grep, Glob, a session search).
    Search,
    /// Changes a file, reviewably (Edit, Write).
    Edit,
    /// Runs a command, or manages one (Bash, BashOutput, KillShell).
    Exec,
    /// Reaches the web (WebFetch, WebSearch).
    Web,
    /// Hands work to a subagent (Task).
    Task,
    /// Keeps the model's checklist (TodoWrite).
    Todo,
    /// Asks the user (AskUserQuestion).
    Question,
    /// Presents a plan for approval (ExitPlanMode).
    Plan,
    /// A tool of an MCP server.
    Mcp,
    /// Anything else.
    #[default]
    Other,
}

/// How front ends show a call, from its tool (core's `Tool::kind`, `Tool::is_lookup`, `Tool::risk`,
/// `Tool::summary`), so that they hold no table of tool names.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CallDisplay {
    pub kind: ToolKind,
    /// The call only looks something up: front ends group such calls.
    pub lookup: bool,
    /// The tool's risk class; a dialog labels the call itself ([`crate::Event::PermissionRequested`]'s `risk`).
    pub risk: Risk,
    /// A short line that identifies the call.
    pub summary: String,
}

/// A finished call's result as people read it, given by the tool that made the result (core's
/// `Tool::result_view`), so that no front end parses the text the model was sent.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "view", rename_all = "snake_case")]
pub enum ResultView {
    /// Lines of a file were shown: `lines` of them, out of `total` when the file has more.
    FileRead { lines: usize, total: Option<usize> },
    /// A search found `count` results counted in `unit`; `items` are the results listed to the model, in order.
    Found { count: usize, unit: FoundUnit, items: Vec<String> },
    /// A sentence for people that stands in for what the model was told (the model's text gives it
    /// instructions: "Keep it current as you work…").
    Note { text: String },
}

/// What a search counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FoundUnit {
    File,
    Line,
    Match,
}

impl FoundUnit {
    /// The unit's word, singular or plural by `count`.
    pub fn word(self, count: usize) -> &'static str {
        match (self, count == 1) {
            (FoundUnit::File, true) => "file",
            (FoundUnit::File, false) => "files",
            (FoundUnit::Line, true) => "line",
            (FoundUnit::Line, false) => "lines",
            (FoundUnit::Match, true) => "match",
            (FoundUnit::Match, false) => "matches",
        }
    }
}

/// What a mutating tool call would do, shown to the user before it is allowed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Preview {
    /// The unified diff an Edit or Write would make.
    Diff {
        path: PathBuf,
        /// Unified diff text (`---`/`+++` headers, `@@` hunks).
        diff: String,
        /// The file does not exist yet.
        new_file: bool,
        /// The whole texts, for a per-hunk review or an edit of the result; `None` when they did not come along
        /// (over [`PREVIEW_TEXT_LIMIT`], or the preview went through serde): then only `diff` can be shown.
        #[serde(skip)]
        texts: Option<DiffTexts>,
    },
    /// The exact command Bash would run, and where.
    Command { command: String, cwd: PathBuf },
    /// Questions for the user to answer (AskUserQuestion).
    Questions { questions: Vec<Question> },
    /// A plan for the user to approve (ExitPlanMode), as Markdown.
    Plan { plan: String },
}

/// A file before and after a change, whole.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DiffTexts {
    /// The file as it is now (`None` for a new file), in its own line endings, so a front end can review per
    /// hunk (core's `tools::diff`).
    pub old: Option<String>,
    /// The file as the call would write it.
    pub new: String,
}

/// Files larger than this are previewed by their diff alone. A preview's texts are held while the call waits
/// and runs, on top of what the call itself reads and writes: for a 300 MB file that doubled the memory it
/// took.
pub const PREVIEW_TEXT_LIMIT: usize = 8 << 20;

impl DiffTexts {
    /// Both texts, unless either is over [`PREVIEW_TEXT_LIMIT`].
    pub fn within_limit(old: Option<String>, new: String) -> Option<DiffTexts> {
        DiffTexts::fit(old.as_ref().map_or(0, String::len), new.len()).then_some(DiffTexts { old, new })
    }

    /// Whether texts of these sizes (bytes) come along with a preview: asked before making them.
    pub fn fit(old: usize, new: usize) -> bool {
        old.max(new) <= PREVIEW_TEXT_LIMIT
    }
}

/// One option of a question.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct QuestionOption {
    /// The option's text, shown to the user (1-5 words)
    pub label: String,
    /// What the option means or implies
    pub description: String,
}

/// One question.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Question {
    /// The complete question, ending with a question mark
    pub question: String,
    /// A very short label for the question (at most 12 characters)
    pub header: String,
    /// The choices (2-4)
    #[schemars(length(min = 2, max = 4))]
    pub options: Vec<QuestionOption>,
    /// Whether several options may be chosen
    pub multi_select: bool,
}

/// Where a step stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TodoStatus {
    Pending,
    InProgress,
    Completed,
}

/// One step of the list.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TodoItem {
    /// What to do, in the imperative ("Run the tests")
    pub content: String,
    pub status: TodoStatus,
    /// The same step while it is being done ("Running the tests")
    pub active_form: String,
}

impl TodoItem {
    /// The list as the model is reminded of it (after a compaction): one `[status] content` line each.
    pub fn describe(todos: &[TodoItem]) -> String {
        todos
            .iter()
            .map(|todo| {
                let status = match todo.status {
                    TodoStatus::Pending => "pending",
                    TodoStatus::InProgress => "in_progress",
                    TodoStatus::Completed => "completed",
                };
                format!("[{status}] {}", todo.content)
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}
