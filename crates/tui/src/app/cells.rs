//! What the transcript holds: one [`Cell`] per user message, answer, thinking block, tool call or notice.
//!
//! Cells are plain data; `ui::cell::render` turns one into lines for a width. A cell's `revision` changes
//! whenever its content does, so the transcript can cache each cell's lines per (width, revision).

use std::path::{Path, PathBuf};
use std::time::Instant;

use tandem_core::tools::{CallDisplay, Preview};
use tandem_protocol::ToolCallStatus;
use tandem_protocol::conversation::{SharedText, ToolInput};
use tandem_protocol::tools::{ResultView, ToolKind};

/// Where a tool call is in its life.
#[derive(Clone, Debug, PartialEq)]
pub enum ToolState {
    /// The model is still streaming the call's input.
    Streaming,
    /// Waiting for the user in the permission dialog.
    AwaitingApproval,
    Running {
        since: Instant,
    },
    Finished(ToolCallStatus),
}

/// A tool call card.
#[derive(Clone, Debug)]
pub struct ToolCard {
    pub call_id: String,
    pub name: String,
    pub input: ToolInput,
    pub state: ToolState,
    /// The diff or command shown in the permission request, kept so the card can show what was applied.
    pub preview: Option<Preview>,
    /// Live output while running, then the result the model saw.
    pub output: String,
    pub is_error: bool,
    pub duration_ms: Option<u64>,
    /// The session's working directory: paths under it are shown relative to it.
    pub cwd: Option<PathBuf>,
    /// Core's one-line summary of the call (`None` until the call starts).
    pub summary: Option<String>,
    /// The tool only reads (core's word for it).
    pub read_only: bool,
    /// What kind of work the tool does (core's word for it): how the card presents the call.
    pub kind: ToolKind,
    /// The finished result as people read it, when the tool gives one (core's `Tool::result_view`).
    pub view: Option<ResultView>,
}

impl ToolCard {
    pub fn new(call_id: String, name: String, input: ToolInput) -> ToolCard {
        ToolCard {
            call_id,
            name,
            input,
            state: ToolState::Streaming,
            preview: None,
            output: String::new(),
            is_error: false,
            duration_ms: None,
            cwd: None,
            summary: None,
            read_only: false,
            kind: ToolKind::Other,
            view: None,
        }
    }

    /// Shows paths relative to `cwd` when they are under it.
    pub fn in_dir(mut self, cwd: &Path) -> ToolCard {
        self.cwd = Some(cwd.to_path_buf());
        self
    }

    /// A path as the card shows it: relative to the working directory when under it.
    pub fn display_path(&self, path: &Path) -> String {
        match self.cwd.as_deref() {
            Some(cwd) => tandem_core::tools::display_path(path, cwd),
            None => path.display().to_string(),
        }
    }

    /// The line that identifies the call: core's summary once the call started (or was restored), else core's
    /// default summary of the input as streamed so far.
    pub fn key_argument(&self) -> String {
        match &self.summary {
            Some(summary) => summary.clone(),
            None => {
                let ctx = tandem_core::tools::ToolContext::new(self.cwd.clone().unwrap_or_default());
                tandem_core::tools::display_summary(&self.input, &ctx)
            }
        }
    }

    /// Whether the tool only reads (from core), so finished calls can be grouped.
    pub fn is_read_only_tool(&self) -> bool {
        self.read_only
    }

    /// Takes what core says about the call: its kind, whether its tool only looks things up, and its summary.
    pub fn describe(&mut self, display: CallDisplay) {
        self.kind = display.kind;
        self.read_only = display.lookup;
        self.summary = Some(display.summary);
    }
}

/// A line of information in the transcript that is not a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoticeKind {
    Info,
    Warning,
    Error,
}

/// The content of a transcript cell.
#[derive(Clone, Debug)]
pub enum CellKind {
    User {
        text: String,
    },
    /// Markdown; while `streaming`, only completed lines are shown. Once complete, the text is the conversation's
    /// own (one copy of a long answer, not two).
    Assistant {
        text: SharedText,
        streaming: bool,
    },
    /// Collapsed to one line unless the cell is expanded.
    Thinking {
        text: String,
        streaming: bool,
    },
    Tool(Box<ToolCard>),
    /// Where the conversation was compacted: one line, expanding to the summary the model continues from.
    Compaction {
        headline: String,
        summary: String,
    },
    Notice {
        kind: NoticeKind,
        text: String,
    },
}

/// One transcript item.
#[derive(Clone, Debug)]
pub struct Cell {
    pub kind: CellKind,
    /// Thinking, tool output and a compaction's summary show in full when expanded.
    pub expanded: bool,
    /// Bumped on every change; part of the layout cache key.
    pub revision: u64,
    /// A prompt's rewind point (`Event::PromptCheckpointed`): a conversation rewind to it cuts the transcript
    /// here, keeping what was drawn before it as it was.
    pub prompt: Option<u64>,
}

impl Cell {
    pub fn new(kind: CellKind) -> Cell {
        Cell { kind, expanded: false, revision: 0, prompt: None }
    }

    /// Marks the cell changed.
    pub fn touch(&mut self) {
        self.revision = self.revision.wrapping_add(1);
    }

    /// Whether the cell's look depends on the clock (spinners, elapsed time), so it can't be cached.
    pub fn is_live(&self) -> bool {
        matches!(&self.kind, CellKind::Tool(card) if matches!(card.state, ToolState::Running { .. }))
    }
}
