//! How the app follows the agent: core [`Event`]s become transcript cells, card states and status.

use std::time::Instant;

use tandem_core::permissions::PermissionMode;
use tandem_protocol::conversation::{ContentBlock, SharedText};
use tandem_protocol::{Event, RunOutcome, SubmissionId, ToolCallStatus};

use super::cells::{CellKind, NoticeKind, ToolCard, ToolState};
use super::{App, Effect};
use crate::ui::permission::PermissionDialog;

/// `~/code/app` for a directory under the home directory, else the path as it is.
fn home_relative(path: &std::path::Path) -> String {
    let home = tandem_core::fs_util::user_home();
    match home.as_deref().and_then(|home| path.strip_prefix(home).ok()) {
        Some(rest) if rest.as_os_str().is_empty() => "~".to_owned(),
        Some(rest) => format!("~/{}", rest.display()),
        None => path.display().to_string(),
    }
}

/// A retry's wait as people say it: "800 ms", "4 s", "1.5 s".
fn format_delay(ms: u64) -> String {
    match ms {
        0..1000 => format!("{ms} ms"),
        _ if ms.is_multiple_of(1000) => format!("{} s", ms / 1000),
        _ => format!("{:.1} s", ms as f64 / 1000.0),
    }
}

/// Live output kept per tool card: the tail is what matters, and memory must stay flat.
const MAX_LIVE_OUTPUT: usize = 64 * 1024;

impl App {
    /// `event`, from the submission named (`None`: one of no submission, or a replayed one).
    #[expect(clippy::too_many_lines, reason = "one match over the protocol's events, each arm one reaction")]
    pub(crate) fn on_core_event(&mut self, event: Event, submission: Option<SubmissionId>, now: Instant) {
        match event {
            Event::McpServers(servers) => self.on_mcp_servers(servers),
            Event::Replayed(answer) => self.on_replayed(answer),
            Event::RewindPoints(points) => self.show_rewind_points(points),
            Event::RewindPreview { seq, files } => self.show_rewind_preview(seq, files),
            Event::Rewound(outcome) => self.on_rewound(outcome),
            Event::SessionConfigured { session_id, provider, model, permission_mode, cwd, .. } => {
                let first = self.session_id.is_empty();
                if first && self.transcript.is_empty() {
                    // The start screen: where tandem works and with what.
                    self.notice(
                        NoticeKind::Info,
                        format!(
                            "tandem in {}\n{provider} · {model} · /help for commands and keys",
                            home_relative(&cwd)
                        ),
                    );
                } else if !first && session_id != self.session_id {
                    let short: String = session_id.chars().take(8).collect();
                    self.notice(
                        NoticeKind::Info,
                        format!("New session {short}; the previous one is saved (/resume lists them)."),
                    );
                }
                self.session_id = session_id;
                self.status.provider = provider;
                self.status.model = model;
                self.status.mode = permission_mode;
            }
            Event::PromptReplayed { text } => {
                self.transcript.push(CellKind::User { text });
            }
            Event::TurnStarted { .. } => {
                self.working = true;
                self.status.working_since.get_or_insert(now);
            }
            Event::PromptCheckpointed { seq } => {
                // The prompt just sent is the last one drawn.
                let last = self.transcript.cells().iter().rposition(|cell| matches!(cell.kind, CellKind::User { .. }));
                if let Some(last) = last.filter(|at| self.transcript.cells()[*at].prompt.is_none()) {
                    self.transcript.update(last, |cell| cell.prompt = Some(seq));
                }
            }
            Event::RequestStarted { .. } => {
                self.working = true;
                self.status.working_since.get_or_insert(now);
                self.response_start = Some(self.transcript.len());
                self.stream_cells.clear();
            }
            Event::MessageStarted { item_id } => {
                self.delivering();
                let cell = self.transcript.push(CellKind::Assistant { text: SharedText::default(), streaming: true });
                self.stream_cells.insert(item_id, cell);
            }
            Event::ThinkingStarted { item_id, redacted } => {
                self.delivering();
                let kind = if redacted {
                    CellKind::Thinking { text: "(redacted)".into(), streaming: false }
                } else {
                    CellKind::Thinking { text: String::new(), streaming: true }
                };
                let cell = self.transcript.push(kind);
                self.stream_cells.insert(item_id, cell);
            }
            Event::MessageDelta { item_id, text } | Event::ThinkingDelta { item_id, text } => {
                self.delivering();
                if let Some(&cell) = self.stream_cells.get(&item_id) {
                    self.transcript.update(cell, |cell| match &mut cell.kind {
                        CellKind::Assistant { text: body, .. } => SharedText::make_mut(body).push_str(&text),
                        CellKind::Thinking { text: body, .. } => body.push_str(&text),
                        _ => {}
                    });
                }
            }
            Event::MessageCompleted { item_id, text: complete, .. } => {
                if let Some(&cell) = self.stream_cells.get(&item_id) {
                    self.transcript.update(cell, |cell| {
                        if let CellKind::Assistant { streaming, text } = &mut cell.kind {
                            *streaming = false;
                            match complete {
                                // Nothing streamed (a resumed conversation's answer): the whole text is this.
                                Some(complete) if text.is_empty() || *complete == **text => *text = complete,
                                _ => SharedText::make_mut(text).shrink_to_fit(),
                            }
                        }
                    });
                }
            }
            Event::ThinkingCompleted { item_id, .. } => {
                if let Some(&cell) = self.stream_cells.get(&item_id) {
                    self.transcript.update(cell, |cell| {
                        if let CellKind::Thinking { streaming, text } = &mut cell.kind {
                            *streaming = false;
                            // It grew by doubling: a long answer would keep up to as much room again unused.
                            text.shrink_to_fit();
                        }
                    });
                }
            }
            Event::ToolInputStarted { call_id, name } => {
                self.delivering();
                self.transcript.push(CellKind::Tool(Box::new(
                    ToolCard::new(call_id, name, serde_json::json!({}).into()).in_dir(&self.cwd),
                )));
            }
            Event::CompactionStarted { .. } => self.status.compacting = true,
            Event::CompactionFinished { .. } => self.status.compacting = false,
            Event::RawStream(_) => {}
            Event::Retrying { attempt, max_attempts, delay_ms, reason, discarded_partial_output, .. } => {
                if discarded_partial_output {
                    self.discard_response();
                }
                let discarded = if discarded_partial_output { " (partial answer discarded)" } else { "" };
                let text = format!(
                    "retrying in {}, attempt {}/{max_attempts} — {reason}{discarded}",
                    format_delay(delay_ms),
                    attempt + 1
                );
                self.status.retry = Some(format!("retrying ({}/{max_attempts})…", attempt + 1));
                // One line that updates, not one line per attempt.
                match self.retry_notice.filter(|&index| index + 1 == self.transcript.len()) {
                    Some(index) => self.transcript.update(index, |cell| {
                        if let CellKind::Notice { text: shown, .. } = &mut cell.kind {
                            *shown = text;
                        }
                    }),
                    None => {
                        self.notice(NoticeKind::Warning, text);
                        self.retry_notice = Some(self.transcript.len() - 1);
                    }
                }
                self.response_start = Some(self.transcript.len());
            }
            Event::AssistantMessage(message) => {
                self.status.retry = None;
                self.finish_streaming();
                for block in &message.content {
                    if let ContentBlock::ToolUse { id, name, input } = block {
                        self.upsert_tool(id, name, input.clone());
                    }
                }
                self.stream_cells.clear();
            }
            Event::ToolCallStarted { call_id, name, input, display } => {
                let index = self.upsert_tool(&call_id, &name, input);
                self.transcript.update(index, |cell| {
                    if let CellKind::Tool(card) = &mut cell.kind {
                        card.state = ToolState::Running { since: now };
                        card.describe(display);
                    }
                });
            }
            Event::PermissionRequested { call_id, tool, risk, input, preview, suggested_rule, reason, agent } => {
                if let Some(index) = self.transcript.find_tool(&call_id) {
                    let preview = preview.clone();
                    self.transcript.update(index, |cell| {
                        if let CellKind::Tool(card) = &mut cell.kind {
                            card.state = ToolState::AwaitingApproval;
                            card.preview = preview;
                        }
                    });
                }
                let dialog =
                    PermissionDialog::new(call_id, tool, risk, input, preview, suggested_rule, self.cwd.clone())
                        .with_reason(reason)
                        .for_agent(agent);
                self.dialogs.push_back(dialog);
            }
            Event::ToolCallPreview { call_id, preview } => {
                if let Some(index) = self.transcript.find_tool(&call_id) {
                    self.transcript.update(index, |cell| {
                        if let CellKind::Tool(card) = &mut cell.kind {
                            card.preview = Some(preview);
                        }
                    });
                }
            }
            Event::ToolCallOutput { call_id, chunk } => {
                if let Some(index) = self.transcript.find_tool(&call_id) {
                    self.transcript.update(index, |cell| {
                        if let CellKind::Tool(card) = &mut cell.kind {
                            card.output.push_str(&chunk);
                            if card.output.len() > MAX_LIVE_OUTPUT {
                                let mut cut = card.output.len() - MAX_LIVE_OUTPUT / 2;
                                while !card.output.is_char_boundary(cut) {
                                    cut += 1;
                                }
                                card.output.drain(..cut);
                            }
                        }
                    });
                }
            }
            Event::ToolCallFinished { call_id, content, is_error, status, duration_ms, view, structured } => {
                if let Some(change) =
                    structured.as_ref().filter(|_| !is_error).and_then(tandem_core::diff::applied_change)
                {
                    self.applied.insert(call_id.clone(), change);
                }
                if let Some(index) = self.transcript.find_tool(&call_id) {
                    self.transcript.update(index, |cell| {
                        if let CellKind::Tool(card) = &mut cell.kind {
                            card.state = ToolState::Finished(status);
                            card.output = content;
                            card.is_error = is_error;
                            card.duration_ms = duration_ms;
                            card.view = view;
                            // The whole file before and after served the review; the card shows the diff, and
                            // keeping both for every edit would grow with the session.
                            if let Some(tandem_core::tools::Preview::Diff { texts, .. }) = &mut card.preview {
                                *texts = None;
                            }
                        }
                    });
                }
                // A request the agent stopped waiting for (interrupt) must not stay on screen.
                self.dialogs.retain(|dialog| dialog.call_id() != call_id);
            }
            Event::ToolResults(_) => {}
            // The status line's totals come with the next `Usage`.
            Event::ToolSpend { .. } => {}
            Event::Usage { total, last, cost_usd, context_window } => {
                self.status.usage = total;
                self.status.cost_usd = cost_usd;
                self.status.context_used = Some(last.total_input() + last.output_tokens);
                self.status.context_window = context_window;
            }
            Event::ModelChanged { model, context_window } => {
                self.notice(NoticeKind::Info, format!("Model: {model}"));
                self.status.model = model;
                self.status.context_window = context_window;
            }
            Event::ConversationCleared => self.status.context_used = None,
            // A subagent's progress shows as its Task card's live output; its dialogs come as ordinary ones.
            Event::Subagent { .. } => {}
            Event::Todos(todos) => self.todos = todos,
            // The app reports hooks through their outcomes (blocks, notices, errors), not each run.
            Event::HookStarted { .. } | Event::HookFinished { .. } => {}
            Event::PromptRefused { prompt } => {
                // Not sent: it leaves the conversation and goes back into the prompt (unless something new is
                // being typed there), so nothing is lost. Its cell is the one its submission was sent from, if
                // nothing was drawn below it since.
                let cell = self.prompt_cells.iter().find(|(id, _)| Some(*id) == submission).map(|(_, cell)| *cell);
                if let Some(cell) = cell.filter(|cell| cell + 1 == self.transcript.cells().len()) {
                    self.transcript.truncate(cell);
                    if self.editor.text().is_empty() {
                        self.editor.set_text(&prompt);
                    }
                }
            }
            Event::BackgroundTasks(tasks) => {
                self.status.background_running = tasks.iter().filter(|task| task.running).count();
                self.background = tasks;
            }
            Event::Context { used, window } => {
                self.status.context_used = Some(used);
                self.status.context_window = window;
            }
            Event::Info { message } => self.notice(NoticeKind::Info, message),
            Event::CompactBoundary { trigger, pre_tokens, post_tokens, summary } => {
                let how = match trigger {
                    tandem_core::session::CompactTrigger::Auto => "automatically",
                    tandem_core::session::CompactTrigger::Manual => "on request",
                };
                let tokens = crate::ui::status::format_tokens;
                let headline =
                    format!("conversation compacted {how}: {} → {} tokens", tokens(pre_tokens), tokens(post_tokens));
                self.transcript.push(CellKind::Compaction { headline, summary });
                self.status.context_used = Some(post_tokens);
            }
            Event::CompactedBefore { summary } => {
                let headline = "the conversation before this point was compacted".to_owned();
                self.transcript.push(CellKind::Compaction { headline, summary });
            }
            Event::PermissionRules(rules) => self.show_rules(rules),
            Event::Error { message } => self.notice(NoticeKind::Error, message),
            Event::TurnFinished(summary) => {
                self.prompt_cells.retain(|(id, _)| Some(*id) != submission);
                self.working = false;
                self.status.working_since = None;
                self.status.retry = None;
                if self.status.notice.as_ref().is_some_and(|flash| flash.text == super::INTERRUPTING) {
                    self.status.notice = None;
                }
                self.finish_streaming();
                self.mark_unfinished_tools(ToolCallStatus::Interrupted);
                self.dialogs.clear();
                match summary.outcome {
                    RunOutcome::Success => {}
                    RunOutcome::ErrorDuringExecution => {
                        if summary.interrupted {
                            self.notice(NoticeKind::Warning, "Interrupted · tell the model what to do instead");
                        }
                    }
                    RunOutcome::ErrorMaxTurns
                    | RunOutcome::ErrorMaxBudgetUsd
                    | RunOutcome::ErrorMaxStructuredOutputRetries => {
                        for error in &summary.errors {
                            self.notice(NoticeKind::Warning, error.clone());
                        }
                    }
                }
            }
        }
    }

    /// The (retried) request is delivering: the retry is over.
    fn delivering(&mut self) {
        self.status.retry = None;
        self.retry_notice = None;
    }

    /// Finds the card for a call (created while streaming) or adds one; sets its final input.
    fn upsert_tool(&mut self, call_id: &str, name: &str, input: tandem_protocol::conversation::ToolInput) -> usize {
        match self.transcript.find_tool(call_id) {
            Some(index) => {
                self.transcript.update(index, |cell| {
                    if let CellKind::Tool(card) = &mut cell.kind {
                        card.input = input;
                    }
                });
                index
            }
            None => self.transcript.push(CellKind::Tool(Box::new(
                ToolCard::new(call_id.to_owned(), name.to_owned(), input).in_dir(&self.cwd),
            ))),
        }
    }

    /// Drops what the current response had streamed (it is being retried).
    fn discard_response(&mut self) {
        if let Some(start) = self.response_start {
            self.transcript.truncate(start);
        }
        self.stream_cells.clear();
    }

    fn finish_streaming(&mut self) {
        let indices: Vec<usize> = self.stream_cells.values().copied().collect();
        for index in indices {
            self.transcript.update(index, |cell| match &mut cell.kind {
                CellKind::Assistant { streaming, .. } | CellKind::Thinking { streaming, .. } => *streaming = false,
                _ => {}
            });
        }
    }

    fn mark_unfinished_tools(&mut self, status: ToolCallStatus) {
        let unfinished: Vec<usize> = (0..self.transcript.len())
            .filter(|&index| {
                matches!(&self.transcript.cells()[index].kind, CellKind::Tool(card)
                    if !matches!(card.state, ToolState::Finished(_)))
            })
            .collect();
        for index in unfinished {
            self.transcript.update(index, |cell| {
                if let CellKind::Tool(card) = &mut cell.kind {
                    card.state = ToolState::Finished(status);
                }
            });
        }
    }

    /// Performs what the front permission dialog decided.
    pub(crate) fn on_dialog_action(&mut self, action: crate::ui::permission::DialogAction) -> Vec<Effect> {
        use crate::ui::permission::DialogAction;
        match action {
            DialogAction::None => Vec::new(),
            DialogAction::OpenEditor { path, proposed } => vec![Effect::OpenEditor { path, content: proposed }],
            DialogAction::Answer(answer) => {
                let Some(dialog) = self.dialogs.pop_front() else { return Vec::new() };
                // Answered: follow what happens next, even if the conversation was scrolled behind the dialog.
                self.transcript.scroll_to_bottom();
                let call_id = dialog.call_id().to_owned();
                // An approved plan ends plan mode (core switches it the same way).
                if dialog.tool() == tandem_core::tools::ask_user::EXIT_PLAN_MODE {
                    match &answer {
                        tandem_protocol::PermissionAnswer::AllowOnce => self.status.mode = PermissionMode::Default,
                        tandem_protocol::PermissionAnswer::AllowWithMode(mode) => self.status.mode = *mode,
                        _ => {}
                    }
                }
                if let Some(index) = self.transcript.find_tool(&call_id) {
                    let now = Instant::now();
                    let written = match &answer {
                        tandem_protocol::PermissionAnswer::AllowModified { content, .. } => Some(content.clone()),
                        _ => None,
                    };
                    self.transcript.update(index, |cell| {
                        if let CellKind::Tool(card) = &mut cell.kind {
                            card.state = ToolState::Running { since: now };
                            // The card shows what is really written, not what was proposed.
                            if let (
                                Some(content),
                                Some(tandem_core::tools::Preview::Diff { path, diff, texts: Some(texts), .. }),
                            ) = (written, card.preview.as_mut())
                            {
                                let label = path.display().to_string();
                                *diff = tandem_core::diff::unified_diff(
                                    &label,
                                    texts.old.as_deref().unwrap_or_default(),
                                    &content,
                                    tandem_core::diff::DEFAULT_CONTEXT,
                                );
                                texts.new = content;
                            }
                        }
                    });
                }
                vec![Effect::Op(tandem_protocol::Op::PermissionAnswer { call_id, answer })]
            }
        }
    }
}
