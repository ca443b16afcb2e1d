//! The permission dialog: the modal that shows what a tool call would do (a coloured diff, the exact command,
//! or the input) and takes the user's answer from the keyboard.
//!
//! [`PermissionDialog`] is state plus key handling; it never does I/O. The app feeds it keys with
//! [`PermissionDialog::handle_key`] and acts on the [`DialogAction`] it returns: send an answer to core, or
//! run the user's editor and hand the result back with [`PermissionDialog::editor_result`]. Drawing is a pure
//! function of the state ([`PermissionDialog::render`]). Invariant: what `a` would remember is always on
//! screen (the exact rule), and an Edit/Write answer that changes the content always tells the model how.

mod keys;
mod render;

#[cfg(test)]
mod snapshot_tests;
#[cfg(test)]
mod tests;

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use ratatui::crossterm::event::KeyEvent;
use ratatui::text::Line;
use serde_json::Value;
use tandem_core::diff::apply_hunks;
use tandem_core::tools::{DiffTexts, Preview, Risk, display_path};
use tandem_protocol::PermissionAnswer;

use super::diff::{DiffView, HunkReview};
use super::theme::ColorDepth;

/// The note sent with content the user changed in their editor.
pub const EDITOR_NOTE: &str = "The user edited your proposed content in their editor before it was written.";

/// The feedback sent when the user rejects every hunk of a change.
pub const ALL_HUNKS_REJECTED: &str = "The user rejected every hunk of this change.";

/// What the app should do after a key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DialogAction {
    /// Nothing to do outside the dialog (it may have changed, so redraw).
    None,
    /// Close the dialog and send this answer for [`PermissionDialog::call_id`].
    Answer(PermissionAnswer),
    /// Keep the dialog open, run `$EDITOR` on a temporary copy of `proposed` (name it after `path`'s
    /// extension so the editor picks the right mode), then pass the saved text to
    /// [`PermissionDialog::editor_result`]. If the editor fails, just keep the dialog.
    OpenEditor { path: PathBuf, proposed: String },
}

/// What the dialog shows under its title.
#[derive(Debug)]
enum Body {
    Diff(DiffBody),
    /// A Bash call: the command exactly as it would run, and where.
    Command {
        command: String,
        cwd: PathBuf,
        /// What the model says the command is for (Bash's `description`).
        description: Option<String>,
    },
    /// Any other tool: its input, pretty-printed.
    Input(String),
    /// ExitPlanMode: the plan, as Markdown.
    Plan(String),
    /// AskUserQuestion: the questions and how far the user got.
    Questions(Questions),
}

/// The answering of an AskUserQuestion call: one question at a time.
#[derive(Debug)]
pub(crate) struct Questions {
    pub(crate) questions: Vec<tandem_core::tools::ask_user::Question>,
    /// The question on screen.
    pub(crate) current: usize,
    /// The highlighted row: an option, or one past the last for "your own answer".
    pub(crate) cursor: usize,
    /// For a multi-select question: the options ticked.
    pub(crate) ticked: Vec<bool>,
    /// The answers so far.
    pub(crate) answers: Vec<String>,
}

impl Questions {
    pub(crate) fn question(&self) -> Option<&tandem_core::tools::ask_user::Question> {
        self.questions.get(self.current)
    }

    /// The row for an answer of the user's own.
    pub(crate) fn other_row(&self) -> usize {
        self.question().map_or(0, |question| question.options.len())
    }
}

#[derive(Debug)]
struct DiffBody {
    path: PathBuf,
    view: DiffView,
    /// The full texts, when the preview carried them: needed for per-hunk review and the editor.
    texts: Option<(Option<String>, String)>,
}

/// Rendered body lines for one width, colour depth and review state.
#[derive(Debug)]
struct BodyCache {
    width: usize,
    depth: ColorDepth,
    review: Option<HunkReview>,
    lines: Arc<Vec<Line<'static>>>,
}

/// A pending permission request and how far the user has got in answering it.
#[derive(Debug)]
pub struct PermissionDialog {
    call_id: String,
    tool: String,
    risk: Risk,
    suggested_rule: String,
    /// Why the call asks, when the policy said (outside the workspace, protected path…).
    reason: Option<String>,
    /// The subagent that asks, when it is one.
    agent: Option<String>,
    body: Body,
    /// Per-hunk review, only for diffs of two hunks or more (one hunk is simply yes or no).
    review: Option<HunkReview>,
    /// First body line shown.
    scroll: usize,
    /// The feedback for a denial; kept when the user leaves the field, so an accidental Esc loses nothing.
    feedback: String,
    /// Keys go to the feedback field.
    typing_feedback: bool,
    /// Every key hint is shown (`?`); otherwise those that fit one line, so that the diff keeps the rows.
    all_keys: bool,
    /// The body's size at the last render, so paging and hunk jumps match what is on screen.
    body_width: AtomicUsize,
    body_height: AtomicUsize,
    cache: Mutex<Option<BodyCache>>,
}

/// Body size assumed before the first render.
const DEFAULT_BODY: (usize, usize) = (76, 16);

impl PermissionDialog {
    /// A dialog for an `Event::PermissionRequested`. `cwd` is the session's directory: paths under it are shown
    /// relative to it.
    pub fn new(
        call_id: String,
        tool: String,
        risk: Risk,
        input: tandem_protocol::conversation::ToolInput,
        preview: Option<Preview>,
        suggested_rule: String,
        cwd: PathBuf,
    ) -> Self {
        let body = match preview {
            Some(Preview::Diff { path, diff, new_file, texts }) => {
                let label = display_path(&path, &cwd);
                // Without the texts (a large file, or a preview that went through serde) only the diff is shown.
                let (view, texts) = match texts {
                    Some(DiffTexts { old, new }) => {
                        let old = if new_file { None } else { Some(old.unwrap_or_default()) };
                        (DiffView::new(&label, old.as_deref(), &new), Some((old, new)))
                    }
                    None => (DiffView::from_unified(&label, &diff, new_file), None),
                };
                Body::Diff(DiffBody { path, view, texts })
            }
            Some(Preview::Command { command, cwd }) => {
                let description = input
                    .get("description")
                    .and_then(Value::as_str)
                    .map(str::trim)
                    .filter(|text| !text.is_empty())
                    .map(str::to_owned);
                Body::Command { command, cwd, description }
            }
            Some(Preview::Plan { plan }) => Body::Plan(plan),
            Some(Preview::Questions { questions }) => {
                let ticked = vec![false; questions.first().map_or(0, |question| question.options.len())];
                Body::Questions(Questions { questions, current: 0, cursor: 0, ticked, answers: Vec::new() })
            }
            None => Body::Input(pretty_input(&input)),
        };
        // A diff with both texts can take the user's version of the content: core writes it to the diff's file in
        // the call's place.
        let review = match &body {
            Body::Diff(diff) if diff.texts.is_some() && diff.view.hunks().len() >= 2 => {
                Some(HunkReview::all_accepted(diff.view.hunks().len()))
            }
            _ => None,
        };
        PermissionDialog {
            call_id,
            tool,
            risk,
            reason: None,
            agent: None,
            suggested_rule,
            body,
            review,
            scroll: 0,
            feedback: String::new(),
            typing_feedback: false,
            all_keys: false,
            body_width: AtomicUsize::new(0),
            body_height: AtomicUsize::new(0),
            cache: Mutex::new(None),
        }
    }

    /// The tool call this dialog answers.
    /// Shows why the call asks (from the permission request).
    pub fn with_reason(mut self, reason: Option<String>) -> Self {
        self.reason = reason;
        self
    }

    /// Names the subagent that asks (shown in the title).
    pub fn for_agent(mut self, agent: Option<String>) -> Self {
        self.agent = agent;
        self
    }

    pub fn call_id(&self) -> &str {
        &self.call_id
    }

    /// The tool's name, as in the request.
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// The rule `a` remembers for the session.
    pub fn suggested_rule(&self) -> &str {
        &self.suggested_rule
    }

    /// First body line on screen.
    pub fn scroll(&self) -> usize {
        self.scroll
    }

    /// The per-hunk review, when the diff has two hunks or more.
    pub fn review(&self) -> Option<&HunkReview> {
        self.review.as_ref()
    }

    /// The feedback being typed, while the dialog is in feedback mode.
    pub fn feedback(&self) -> Option<&str> {
        self.typing_feedback.then_some(self.feedback.as_str())
    }

    /// Handles one key press (releases are ignored). See the module docs of `keys` for the bindings.
    pub fn handle_key(&mut self, key: KeyEvent) -> DialogAction {
        keys::handle_key(self, key)
    }

    /// Inserts pasted text into the feedback being typed (line breaks become spaces); ignored otherwise.
    pub fn paste(&mut self, text: &str) {
        if self.typing_feedback {
            self.feedback.extend(text.chars().map(|ch| if ch.is_control() { ' ' } else { ch }));
        }
    }

    /// The text the user saved in their editor after [`DialogAction::OpenEditor`]: allows the call with that
    /// content (`AllowModified` with [`EDITOR_NOTE`]), or plainly (`AllowOnce`) when it is exactly the model's
    /// proposal. Saved unchanged from a partial hunk review, it answers as Enter would (the review's note).
    /// `DialogAction::None` for a dialog without a diff.
    pub fn editor_result(&mut self, edited: String) -> DialogAction {
        let Some((_, started_from)) = self.editor_start() else { return DialogAction::None };
        let Body::Diff(DiffBody { texts: Some((_, new)), .. }) = &self.body else { return DialogAction::None };
        if edited == *new {
            return DialogAction::Answer(PermissionAnswer::AllowOnce);
        }
        if edited == started_from {
            return DialogAction::Answer(self.apply_review());
        }
        DialogAction::Answer(PermissionAnswer::AllowModified { content: edited, note: EDITOR_NOTE.to_owned() })
    }

    /// Whether some hunks of the review are rejected: then no answer may write the whole proposal.
    pub(super) fn review_is_partial(&self) -> bool {
        self.review.as_ref().is_some_and(|review| review.accepted.iter().any(|yes| !yes))
    }

    /// The answer for Enter (and `y`): the review applied, or a plain allow without one.
    fn apply_review(&self) -> PermissionAnswer {
        let (Some(review), Body::Diff(DiffBody { view, texts: Some((old, new)), .. })) = (&self.review, &self.body)
        else {
            return PermissionAnswer::AllowOnce;
        };
        let hunks = view.hunks();
        let accepted: Vec<bool> = (0..hunks.len()).map(|i| review.accepted.get(i).copied().unwrap_or(true)).collect();
        if accepted.iter().all(|&yes| yes) {
            return PermissionAnswer::AllowOnce;
        }
        if accepted.iter().all(|&yes| !yes) {
            return PermissionAnswer::Deny { feedback: Some(ALL_HUNKS_REJECTED.to_owned()) };
        }
        let describe = |keep: bool| -> Vec<String> {
            hunks
                .iter()
                .enumerate()
                .filter(|(index, _)| accepted[*index] == keep)
                .map(|(index, hunk)| format!("hunk {} ({})", index + 1, hunk.header()))
                .collect()
        };
        let rejected = describe(false);
        let consequence = if rejected.len() == 1 {
            "so that part of the file was not changed"
        } else {
            "so those parts of the file were not changed"
        };
        let note = format!(
            "The user reviewed the change hunk by hunk: applied {}; rejected {}, {consequence}.",
            describe(true).join(", "),
            rejected.join(", ")
        );
        let content = apply_hunks(old.as_deref().unwrap_or(""), new, hunks, &accepted);
        PermissionAnswer::AllowModified { content, note }
    }

    /// What the editor starts from: the proposal with the review applied (rejected hunks left out), so the user
    /// continues from what they chose. `None` without the full texts.
    fn editor_start(&self) -> Option<(PathBuf, String)> {
        let Body::Diff(DiffBody { path, view, texts: Some((old, new)) }) = &self.body else { return None };
        let proposed = match &self.review {
            Some(review) if review.accepted.iter().any(|&yes| !yes) => {
                apply_hunks(old.as_deref().unwrap_or(""), new, view.hunks(), &review.accepted)
            }
            _ => new.clone(),
        };
        Some((path.clone(), proposed))
    }

    /// Scrolls the body by `lines` (negative: up), as the wheel does over the dialog.
    pub fn scroll_lines(&mut self, lines: isize) {
        self.scroll = self.scroll.saturating_add_signed(lines).min(self.max_scroll());
    }

    /// Body size at the last render (or a default before the first).
    fn body_size(&self) -> (usize, usize) {
        match (self.body_width.load(Ordering::Relaxed), self.body_height.load(Ordering::Relaxed)) {
            (0, _) | (_, 0) => DEFAULT_BODY,
            size => size,
        }
    }

    /// The largest useful scroll offset for the last rendered size.
    fn max_scroll(&self) -> usize {
        let (width, height) = self.body_size();
        render::body_len(self, width).saturating_sub(height)
    }

    /// Selects the next (or previous) hunk, wrapping around, and scrolls it into view if it is not: from its
    /// header where its first change fits below it, else from the line above its first change.
    fn move_hunk(&mut self, forward: bool) {
        let Some(review) = &mut self.review else { return };
        let count = review.accepted.len().max(1);
        review.current = if forward { (review.current + 1) % count } else { (review.current + count - 1) % count };
        let current = review.current;
        let Body::Diff(diff) = &self.body else { return };
        let (width, height) = self.body_size();
        let offsets = diff.view.hunk_line_offsets(width);
        let Some(&start) = offsets.get(current) else { return };
        let end = offsets.get(current + 1).copied().unwrap_or_else(|| diff.view.line_count(width));
        let change = diff.view.first_change_offsets(width).get(current).copied().unwrap_or(start);
        if start < self.scroll || end > self.scroll + height {
            let top = if change < start + height { start } else { change.saturating_sub(1) };
            self.scroll = top.min(self.max_scroll());
        }
    }
}

/// `path` relative to `cwd` when it lies under it, else as given.
fn pretty_input(input: &Value) -> String {
    serde_json::to_string_pretty(input).unwrap_or_else(|_| input.to_string())
}
