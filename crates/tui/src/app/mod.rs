//! The interactive app: state plus `update`. No I/O happens here: `update` returns [`Effect`]s that the
//! runtime (`crate::tui`) performs, so every behaviour can be tested by feeding inputs and reading state.

pub mod cells;
pub mod commands;
pub mod editor;
pub mod events;
pub mod history;
pub mod inspector;
pub mod inspector_json;
pub mod keymap;
pub mod keys;
pub mod mcp_view;
pub mod modal;
pub mod onboarding;
pub mod picker;
pub mod restore;
pub mod rewind_view;
pub mod rules_view;
pub mod transcript;

#[cfg(test)]
mod dialog_tests;
#[cfg(test)]
mod inspector_tests;
#[cfg(test)]
mod key_tests;
#[cfg(test)]
mod mcp_tests;
#[cfg(test)]
mod rewind_tests;
#[cfg(test)]
mod tests;

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::time::Instant;

use ratatui::crossterm::event::{KeyEvent, MouseEvent};
use tandem_core::permissions::PermissionMode;
use tandem_protocol::{Op, SubmissionId};

use self::cells::{CellKind, NoticeKind};
use self::editor::Editor;
use self::onboarding::Onboarding;
use self::transcript::Transcript;
use crate::ui::permission::PermissionDialog;
use crate::ui::status::StatusInfo;
use crate::ui::theme::Theme;

/// Something the app wants done outside itself.
#[derive(Debug, PartialEq)]
pub enum Effect {
    /// Send an op to the agent.
    Op(Op),
    /// Put text on the clipboard (OSC 52).
    Copy(String),
    /// Edit `content` in `$EDITOR`, then feed the result back with [`Input::EditorResult`].
    OpenEditor {
        path: PathBuf,
        content: String,
    },
    /// Start the agent with a provider picked on the onboarding screen (and save it to `config.toml`).
    StartSession {
        provider: String,
        choice: tandem_core::config::ProviderChoice,
        save: bool,
    },
    /// Probe local model servers again (onboarding).
    Rescan,
    /// Start the scripted demo (`d` on the welcome screen).
    StartDemo,
    /// Open a file in `$EDITOR` as it is on disk (`/memory N`).
    EditFile {
        path: PathBuf,
    },
    /// Resume the session picked in the session picker.
    ResumeSession {
        id: String,
    },
    /// Read the saved sessions (`/resume`) and hand them back with [`Input::Sessions`].
    ListSessions,
    /// Read this session's recorded model requests (`/inspect`) and hand them back with [`Input::Requests`].
    ListRequests,
    /// Read the saved memories (`/memory [N]`) and hand them back with [`Input::Memories`].
    ListMemories {
        open: Option<usize>,
    },
    /// Print the conversation to the normal screen and stop the process (Ctrl+Z); `fg` resumes.
    Suspend,
    /// Clear the terminal and paint everything again (Ctrl+L), e.g. after a program wrote to /dev/tty.
    Redraw,
    Quit,
}

/// What the app reacts to.
#[derive(Debug)]
pub enum Input {
    Key(KeyEvent),
    Paste(String),
    Mouse(MouseEvent),
    Resize(u16, u16),
    Core(Box<tandem_protocol::EventMsg>),
    /// `$EDITOR` finished: the edited text, or why it failed.
    EditorResult(Result<String, String>),
    /// Local servers found by the onboarding probe.
    Probed(Vec<onboarding::LocalServer>),
    /// The saved sessions of this directory, newest first (after [`Effect::ListSessions`]).
    Sessions(Vec<tandem_core::session::SessionSummary>),
    /// The session's recorded model requests (after [`Effect::ListRequests`]), labelled with their subagent.
    Requests(Vec<(String, tandem_core::inspect::Exchange)>),
    /// The saved memories, and which one to open (after [`Effect::ListMemories`]).
    Memories {
        topics: Vec<tandem_core::memory::MemoryTopic>,
        open: Option<usize>,
    },
}

/// Where keys go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Focus {
    Input,
    /// Keyboard scrolling, selection and copy over the transcript.
    Scroll,
}

/// The whole interactive state.
pub struct App {
    pub theme: Theme,
    pub transcript: Transcript,
    pub editor: Editor,
    pub status: StatusInfo,
    pub focus: Focus,
    /// Permission requests, answered one at a time (the front one is on screen).
    pub dialogs: VecDeque<PermissionDialog>,
    pub onboarding: Option<Onboarding>,
    pub show_help: bool,
    /// First line of the help shown (it scrolls on a short screen).
    pub help_scroll: usize,
    /// The session's sandbox in words (`/sandbox`), set when the agent starts.
    pub sandbox_description: String,
    /// The `/permissions` list, while open.
    pub rules_view: Option<rules_view::RulesView>,
    /// The MCP servers (`/mcp`, the `.mcp.json` approval dialog).
    pub mcp: mcp_view::McpState,
    /// `/inspect`, while open.
    pub inspector: Option<inspector::Inspector>,
    /// `/rewind`, while open.
    pub rewind: Option<rewind_view::RewindView>,
    /// When Esc was last pressed on an empty, idle prompt (a second press soon after opens `/rewind`).
    pub(crate) last_empty_esc: Option<Instant>,
    /// `--resume` without an id, or `/resume`: the saved sessions to pick from.
    pub session_picker: Option<picker::SessionPicker>,
    /// `/model` without a name: the models to pick from.
    pub model_picker: Option<picker::ModelPicker>,
    pub cwd: PathBuf,
    /// The session's tools, which describe a resumed session's calls as they described them live.
    pub tools: tandem_core::tools::ToolRegistry,
    /// What each file-changing call applied, by call id (the saved ones of a resumed session, then the live
    /// ones), so that a conversation drawn again from its messages shows their diffs.
    pub applied: std::collections::HashMap<String, serde_json::Value>,
    /// The session's id (from core), empty until the agent has announced it.
    pub session_id: String,
    /// A turn is running.
    pub working: bool,
    /// Messages typed while the model worked, sent together when the turn ends.
    pub queued: Vec<String>,
    /// The prompts sent and not answered yet: their submission and their cell (so that a refused one is taken
    /// back out of the transcript).
    pub(crate) prompt_cells: Vec<(SubmissionId, usize)>,
    /// Screen size.
    pub size: (u16, u16),
    /// Streaming item id (core's) → transcript cell, for the response being streamed.
    pub(crate) stream_cells: HashMap<String, usize>,
    /// First cell of the response being streamed (removed if the response is retried).
    pub(crate) response_start: Option<usize>,
    /// The transcript notice that shows the retry in progress (updated in place by the next attempt).
    pub(crate) retry_notice: Option<usize>,
    /// When Ctrl+C last cleared an empty input (a second one soon after quits).
    pub(crate) last_ctrl_c: Option<Instant>,
    /// The mode Shift+Tab cycles from, and whether bypass is part of the cycle.
    pub(crate) bypass_allowed: bool,
    /// The transcript's height when last drawn while scrolled up (see [`App::hold_scroll_position`]).
    pub(crate) scroll_anchor: Option<usize>,
    /// The model's checklist (TodoWrite), drawn above the input while a step is open.
    pub(crate) todos: Vec<tandem_core::tools::todo_write::TodoItem>,
    /// The session's `run_in_background` commands (`/bashes`).
    pub(crate) background: Vec<tandem_protocol::BackgroundTask>,
    /// Cells already printed to the terminal's scrollback (by a suspend).
    pub printed_cells: usize,
    /// Redraw needed.
    pub dirty: bool,
    /// The time of the input being handled (what transient messages are timed from).
    pub(crate) clock: Instant,
}

/// How long a transient status message stays.
const FLASH: std::time::Duration = std::time::Duration::from_secs(4);
/// Said while an interrupt is on its way; taken down when the turn ends.
const INTERRUPTING: &str = "interrupting…";

impl App {
    pub fn new(theme: Theme, editor: Editor, status: StatusInfo, cwd: PathBuf) -> App {
        let bypass_allowed = status.mode == PermissionMode::BypassPermissions;
        App {
            theme,
            transcript: Transcript::default(),
            editor,
            status,
            focus: Focus::Input,
            dialogs: VecDeque::new(),
            onboarding: None,
            show_help: false,
            help_scroll: 0,
            sandbox_description: "No session is running yet.".to_owned(),
            rules_view: None,
            mcp: mcp_view::McpState::default(),
            inspector: None,
            rewind: None,
            last_empty_esc: None,
            session_picker: None,
            model_picker: None,
            cwd,
            tools: tandem_core::tools::ToolRegistry::builtin(),
            applied: std::collections::HashMap::new(),
            session_id: String::new(),
            working: false,
            queued: Vec::new(),
            prompt_cells: Vec::new(),
            size: (80, 24),
            stream_cells: HashMap::new(),
            response_start: None,
            retry_notice: None,
            last_ctrl_c: None,
            bypass_allowed,
            scroll_anchor: None,
            todos: Vec::new(),
            background: Vec::new(),
            printed_cells: 0,
            dirty: true,
            clock: Instant::now(),
        }
    }

    /// Handles one input; returns what must be done outside.
    pub fn update(&mut self, input: Input, now: Instant) -> Vec<Effect> {
        self.dirty = true;
        self.clock = now;
        let effects = self.handle(input, now);
        self.track_waiting(now);
        effects
    }

    /// The turn's clock stops while a dialog waits for the user: the time spent deciding is not the model's.
    fn track_waiting(&mut self, now: Instant) {
        match (self.dialogs.is_empty(), self.status.waiting_since) {
            (false, None) => self.status.waiting_since = Some(now),
            (true, Some(since)) => {
                self.status.waiting_since = None;
                if let Some(started) = &mut self.status.working_since {
                    *started += now.saturating_duration_since(since);
                }
            }
            _ => {}
        }
    }

    fn handle(&mut self, input: Input, now: Instant) -> Vec<Effect> {
        match input {
            Input::Key(key) => self.on_key(key, now),
            Input::Paste(text) => {
                // A paste never answers a permission dialog.
                if self.dialogs.is_empty() && self.onboarding.is_none() && self.focus == Focus::Input {
                    self.editor.paste(&text);
                }
                Vec::new()
            }
            Input::Mouse(mouse) => self.on_mouse(mouse),
            Input::Resize(width, height) => {
                self.set_size(width, height);
                Vec::new()
            }
            Input::Core(message) => {
                let tandem_protocol::EventMsg { submission, event } = *message;
                self.on_core_event(event, submission, now);
                let mut effects = self.send_queued(now);
                if self.inspector.as_mut().is_some_and(|inspector| std::mem::take(&mut inspector.stale)) {
                    effects.push(Effect::ListRequests);
                }
                effects
            }
            Input::EditorResult(result) => self.on_editor_result(result),
            Input::Memories { topics, open } => self.show_memories(topics, open),
            Input::Requests(requests) => {
                self.show_requests(requests);
                Vec::new()
            }
            Input::Sessions(sessions) => {
                self.open_session_picker(sessions);
                Vec::new()
            }
            Input::Probed(servers) => {
                if let Some(onboarding) = &mut self.onboarding {
                    onboarding.servers = servers;
                    onboarding.selected = 0;
                    onboarding.probing = false;
                }
                Vec::new()
            }
        }
    }

    /// Submits a prompt (as if typed): used for `tandem "initial prompt"`.
    pub fn submit(&mut self, text: String, now: Instant) -> Vec<Effect> {
        if let Some(command) = text.strip_prefix('/') {
            return self.run_command(command, now);
        }
        self.send_prompt(text, now)
    }

    /// Sends `text` to the model as it is (a custom command goes this way, for core to expand).
    pub(crate) fn send_prompt(&mut self, text: String, now: Instant) -> Vec<Effect> {
        self.transcript.scroll_to_bottom();
        self.status.notice = None;
        self.transcript.push(CellKind::User { text: text.clone() });
        self.working = true;
        self.status.working_since = Some(now);
        vec![Effect::Op(Op::UserTurn { text })]
    }

    /// The runtime sent the prompt of the last user cell as `submission`: a refusal names it.
    pub fn prompt_submitted(&mut self, submission: SubmissionId) {
        let last_prompt = self.transcript.cells().iter().rposition(|cell| matches!(cell.kind, CellKind::User { .. }));
        if let Some(cell) = last_prompt {
            self.prompt_cells.push((submission, cell));
        }
    }

    /// Sends what was queued while the model worked, once the turn is over.
    fn send_queued(&mut self, now: Instant) -> Vec<Effect> {
        if self.working || self.queued.is_empty() {
            return Vec::new();
        }
        let text = std::mem::take(&mut self.queued).join("\n\n");
        self.submit(text, now)
    }

    /// The screen size changed (or is first known): everything re-wraps at the new width on the next frame.
    pub fn set_size(&mut self, width: u16, height: u16) {
        self.size = (width, height);
        // Heights change with the width: what was added below can't be told apart from re-wrapping.
        self.scroll_anchor = None;
        self.editor.set_wrap_width(crate::ui::input::text_width(width));
        self.dirty = true;
    }

    /// Re-reads whether Shift+Tab may cycle into bypass mode (only when the session started in it).
    pub fn bypass_allowed_from_mode(&mut self) {
        self.bypass_allowed = self.status.mode == PermissionMode::BypassPermissions;
    }

    /// Shows a transient message in the status line for a few seconds.
    pub fn flash(&mut self, text: impl Into<String>) {
        self.flash_for(text, FLASH);
    }

    /// Shows a transient message in the status line for `duration`.
    pub fn flash_for(&mut self, text: impl Into<String>, duration: std::time::Duration) {
        self.status.notice = Some(crate::ui::status::Flash { text: text.into(), until: self.clock + duration });
    }

    /// When the screen changes by itself next without any input (a status message expiring), if ever.
    pub fn next_change(&self) -> Option<Instant> {
        self.status.notice.as_ref().map(|flash| flash.until).filter(|until| *until > self.clock)
    }

    /// Shows a one-line notice in the transcript.
    pub fn notice(&mut self, kind: NoticeKind, text: impl Into<String>) {
        self.transcript.push(CellKind::Notice { kind, text: text.into() });
    }

    /// Called by the runtime before each frame: while the user is scrolled up, output arriving below must not
    /// move what they are reading, so the distance from the bottom grows by what was added.
    pub fn hold_scroll_position(&mut self) {
        // In scroll mode the view holds still even at the bottom: the cursor must not be carried away.
        if self.transcript.scroll_from_bottom == 0 && self.focus != Focus::Scroll {
            self.scroll_anchor = None;
            return;
        }
        let width = self.size.0 as usize;
        let viewport = self.transcript_viewport();
        let total = self.transcript.approximate_height(width, viewport, &self.theme, self.clock);
        if let Some(before) = self.scroll_anchor
            && total > before
        {
            self.transcript.scroll_from_bottom += total - before;
        }
        self.scroll_anchor = Some(total);
    }

    /// Whether something on screen moves by itself (spinners), so the runtime keeps a frame timer.
    pub fn is_animating(&self) -> bool {
        (self.working && self.dialogs.is_empty())
            || self.onboarding.as_ref().is_some_and(|onboarding| onboarding.probing)
    }

    /// The height the transcript gets in the current layout (used for paging).
    pub fn transcript_viewport(&self) -> usize {
        crate::ui::frame::transcript_height(self) as usize
    }

    fn on_editor_result(&mut self, result: Result<String, String>) -> Vec<Effect> {
        if self.dialogs.is_empty()
            && let Some(effects) = self.on_replay_edited(result.clone())
        {
            return effects;
        }
        let Some(dialog) = self.dialogs.front_mut() else { return Vec::new() };
        match result {
            Ok(edited) => {
                let action = dialog.editor_result(edited);
                self.on_dialog_action(action)
            }
            Err(message) => {
                self.notice(NoticeKind::Error, format!("Could not open the editor: {message}"));
                Vec::new()
            }
        }
    }
}
