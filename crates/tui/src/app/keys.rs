//! Keys and the mouse: the dialog first, then the onboarding screen, the search bar, scroll mode, and last the
//! prompt editor.

use std::time::{Duration, Instant};

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEvent, MouseEventKind};
use tandem_core::permissions::PermissionMode;
use tandem_protocol::Op;

use super::cells::CellKind;
use super::editor::EditorAction;
use super::keymap::{self, Action};
use super::modal::Modal;
use super::onboarding::OnboardingAction;
use super::transcript::Search;
use super::{App, Effect, Focus};
use crate::ui::markdown::{CodeBlock, code_blocks};
use crate::ui::packed::PackedLines;

/// A second Ctrl+C within this time quits.
const DOUBLE_PRESS: Duration = Duration::from_millis(1500);
/// Lines per mouse-wheel step.
const WHEEL_LINES: isize = 3;

impl App {
    pub(crate) fn on_key(&mut self, key: KeyEvent, now: Instant) -> Vec<Effect> {
        if key.kind == KeyEventKind::Release {
            return Vec::new();
        }
        let action = keymap::action(&key);
        // These two mean the same in every state: a dialog, help, a picker, onboarding.
        match action {
            Some(Action::Suspend) => return vec![Effect::Suspend],
            Some(Action::Redraw) => return vec![Effect::Redraw],
            _ => {}
        }
        match self.modal() {
            Some(Modal::Onboarding) => return self.on_onboarding_key(key),
            Some(Modal::SessionPicker) => return self.on_picker_key(key),
            Some(Modal::Dialog) => return self.on_dialog_key(key, now),
            Some(Modal::McpApproval) => return self.on_approval_key(key),
            Some(Modal::Help) => return self.on_help_key(key),
            Some(Modal::ModelPicker) => return self.on_model_picker_key(key),
            Some(Modal::Rules) => return self.on_rules_key(key),
            Some(Modal::Mcp) => return self.on_mcp_view_key(key),
            Some(Modal::Rewind) => return self.on_rewind_key(key),
            Some(Modal::Inspector) => return self.on_inspector_key(key),
            None => {}
        }
        if self.transcript.search.as_ref().is_some_and(|search| search.editing) {
            return self.on_search_key(key);
        }
        if let Some(effects) = action.and_then(|action| self.run_action(action, now)) {
            return effects;
        }
        match self.focus {
            Focus::Scroll => self.on_scroll_key(key),
            Focus::Input => self.on_input_key(key, now),
        }
    }

    /// Does what the key table binds a key to, where it applies now; `None` passes the key on to the focus.
    fn run_action(&mut self, action: Action, now: Instant) -> Option<Vec<Effect>> {
        let empty_prompt = self.focus == Focus::Input && self.editor.is_empty();
        let effects = match action {
            Action::Suspend => vec![Effect::Suspend],
            Action::Redraw => vec![Effect::Redraw],
            Action::CtrlC => self.on_ctrl_c(now),
            Action::Search => {
                self.start_search();
                Vec::new()
            }
            Action::ToggleCard => {
                self.toggle_card_in_view();
                Vec::new()
            }
            Action::ScrollMode => {
                self.enter_scroll_mode();
                Vec::new()
            }
            Action::CycleMode => self.cycle_mode(),
            Action::PageUp | Action::PageDown => {
                self.page(action == Action::PageUp);
                Vec::new()
            }
            Action::QuitWhenEmpty if empty_prompt => vec![Effect::Quit],
            Action::Top if empty_prompt => {
                let (total, viewport) = self.scroll_metrics();
                self.transcript.scroll_by(total as isize, total, viewport);
                Vec::new()
            }
            Action::Bottom if empty_prompt => {
                self.transcript.scroll_to_bottom();
                Vec::new()
            }
            Action::Escape => return self.on_esc(now),
            Action::QuitWhenEmpty | Action::Top | Action::Bottom => return None,
        };
        Some(effects)
    }

    /// Esc takes a queued message back into the prompt first (to edit or drop); then it interrupts; on an empty
    /// prompt, pressed twice, it opens the rewind. In search or scroll mode it closes the mode (as its hint says),
    /// even while the model works: the mode's own keys do that.
    fn on_esc(&mut self, now: Instant) -> Option<Vec<Effect>> {
        if self.focus == Focus::Scroll || self.transcript.search.is_some() {
            return None;
        }
        let editor_takes_it = self.editor.handles_esc();
        if !self.queued.is_empty() && self.focus == Focus::Input && !editor_takes_it {
            let queued = std::mem::take(&mut self.queued).join("\n\n");
            let draft = self.editor.text();
            let text = if draft.is_empty() { queued } else { format!("{queued}\n\n{draft}") };
            self.editor.set_text(&text);
            self.flash("queued message back in the prompt: enter queues it again");
            return Some(Vec::new());
        }
        if self.working {
            self.flash(super::INTERRUPTING);
            return Some(vec![Effect::Op(Op::Interrupt)]);
        }
        if self.focus == Focus::Input && self.editor.text().is_empty() && !editor_takes_it {
            return Some(self.esc_on_empty_prompt(now));
        }
        None
    }

    fn on_input_key(&mut self, key: KeyEvent, now: Instant) -> Vec<Effect> {
        match self.editor.handle_key(key) {
            EditorAction::Submit(text) => {
                if self.working && !text.starts_with('/') {
                    // Sent when the turn ends, as Claude Code does.
                    self.queued.push(text);
                    return Vec::new();
                }
                self.submit(text, now)
            }
            EditorAction::None | EditorAction::Changed => Vec::new(),
        }
    }

    /// Ctrl+C: clears a prompt; else a second press within [`DOUBLE_PRESS`] quits, and a first press while the
    /// model works interrupts it (as Esc does). The hint lasts exactly as long as the second press would quit.
    fn on_ctrl_c(&mut self, now: Instant) -> Vec<Effect> {
        if !self.editor.is_empty() {
            self.editor.clear();
            self.last_ctrl_c = None;
            return Vec::new();
        }
        if self.last_ctrl_c.is_some_and(|last| now.duration_since(last) < DOUBLE_PRESS) {
            return vec![Effect::Quit];
        }
        if self.working {
            self.arm_quit(now, "interrupting… · ctrl+c again to quit");
            return vec![Effect::Op(Op::Interrupt)];
        }
        self.arm_quit(now, "press ctrl+c again to quit");
        Vec::new()
    }

    /// Starts the window in which another Ctrl+C quits, with a hint that disappears when it closes.
    fn arm_quit(&mut self, now: Instant, hint: &str) {
        self.last_ctrl_c = Some(now);
        self.flash_for(hint, DOUBLE_PRESS);
    }

    fn cycle_mode(&mut self) -> Vec<Effect> {
        let next = match self.status.mode {
            PermissionMode::Default => PermissionMode::AcceptEdits,
            PermissionMode::AcceptEdits => PermissionMode::Plan,
            PermissionMode::Plan if self.bypass_allowed => PermissionMode::BypassPermissions,
            PermissionMode::Plan | PermissionMode::BypassPermissions | PermissionMode::DontAsk => {
                PermissionMode::Default
            }
        };
        self.status.mode = next;
        vec![Effect::Op(Op::SetPermissionMode(next))]
    }

    fn on_help_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        let last = crate::ui::frame::help_len(self);
        match key.code {
            KeyCode::Down | KeyCode::Char('j') => self.help_scroll = (self.help_scroll + 1).min(last),
            KeyCode::Up | KeyCode::Char('k') => self.help_scroll = self.help_scroll.saturating_sub(1),
            KeyCode::PageDown => self.help_scroll = (self.help_scroll + 10).min(last),
            KeyCode::PageUp => self.help_scroll = self.help_scroll.saturating_sub(10),
            KeyCode::End | KeyCode::Char('G') => self.help_scroll = last,
            KeyCode::Home | KeyCode::Char('g') => self.help_scroll = 0,
            _ => {
                self.show_help = false;
                self.help_scroll = 0;
            }
        }
        Vec::new()
    }

    /// The dialog on top has the keys, but for a search opened over it (its `n` is "next match", not "deny").
    fn on_dialog_key(&mut self, key: KeyEvent, now: Instant) -> Vec<Effect> {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if self.transcript.search.is_some() && !(ctrl && key.code == KeyCode::Char('c')) {
            let effects = if self.transcript.search.as_ref().is_some_and(|search| search.editing) {
                self.on_search_key(key)
            } else {
                self.on_scroll_key(key)
            };
            if self.transcript.search.is_none() {
                // Closed: back to the dialog, not to scroll mode.
                self.focus = Focus::Input;
                self.transcript.cursor_line = None;
                self.transcript.selection = None;
            }
            return effects;
        }
        let Some(dialog) = self.dialogs.front_mut() else { return Vec::new() };
        if ctrl && matches!(key.code, KeyCode::Char('f' | 'F')) {
            self.start_search();
            return Vec::new();
        }
        if ctrl && matches!(key.code, KeyCode::Char('c' | 'C')) {
            // Deny, and stop the turn: the user wants out, not the model's next attempt.
            let action = dialog.handle_key(key);
            let mut effects = self.on_dialog_action(action);
            effects.push(Effect::Op(Op::Interrupt));
            self.dialogs.clear();
            self.arm_quit(now, "denied and interrupted · ctrl+c again to quit");
            return effects;
        }
        // Shift+PgUp/PgDn scroll the conversation behind the dialog (plain PgUp/PgDn scroll its body).
        if key.modifiers.contains(KeyModifiers::SHIFT) && matches!(key.code, KeyCode::PageUp | KeyCode::PageDown) {
            self.page(key.code == KeyCode::PageUp);
            return Vec::new();
        }
        let action = dialog.handle_key(key);
        self.on_dialog_action(action)
    }

    fn on_onboarding_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        let Some(onboarding) = &mut self.onboarding else { return Vec::new() };
        match onboarding.handle_key(key) {
            OnboardingAction::None => Vec::new(),
            OnboardingAction::Rescan => {
                onboarding.probing = true;
                vec![Effect::Rescan]
            }
            OnboardingAction::Quit => vec![Effect::Quit],
            OnboardingAction::Demo => {
                self.onboarding = None;
                vec![Effect::StartDemo]
            }
            OnboardingAction::Choose { provider, choice, save } => {
                self.onboarding = None;
                vec![Effect::StartSession { provider, choice, save }]
            }
        }
    }

    /// Transcript height and viewport, exact: search and the scroll-mode cursor index every line.
    pub(crate) fn metrics(&self) -> (usize, usize) {
        let width = self.size.0 as usize;
        let total = self.transcript.height(width, &self.theme, Instant::now());
        (total, self.transcript_viewport())
    }

    /// Like [`App::metrics`], with estimated heights far above the viewport: enough to clamp a scroll, and
    /// cheap right after a resize.
    fn scroll_metrics(&self) -> (usize, usize) {
        let width = self.size.0 as usize;
        let viewport = self.transcript_viewport();
        (self.transcript.approximate_height(width, viewport, &self.theme, Instant::now()), viewport)
    }

    fn page(&mut self, up: bool) {
        let (total, viewport) = self.scroll_metrics();
        let step = viewport.saturating_sub(2).max(1) as isize;
        self.transcript.scroll_by(if up { step } else { -step }, total, viewport);
    }

    fn start_search(&mut self) {
        self.focus = Focus::Scroll;
        self.transcript.search = Some(Search { editing: true, ..Default::default() });
    }

    fn on_search_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        let (total, viewport) = self.metrics();
        let width = self.size.0 as usize;
        match key.code {
            KeyCode::Esc => {
                self.transcript.search = None;
            }
            KeyCode::Enter => {
                let mut missed = None;
                if let Some(search) = &mut self.transcript.search {
                    search.editing = false;
                    if search.matches.is_empty() {
                        missed = Some(format!("no match for {:?}", search.query));
                    }
                }
                match missed {
                    Some(missed) => self.flash(missed),
                    None => self.open_current_match(),
                }
            }
            KeyCode::Backspace => {
                if let Some(search) = &mut self.transcript.search {
                    search.query.pop();
                }
                self.refresh_search(width, total, viewport);
            }
            KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => {
                if let Some(search) = &mut self.transcript.search {
                    search.query.push(c);
                }
                self.refresh_search(width, total, viewport);
            }
            _ => {}
        }
        Vec::new()
    }

    /// Recomputes matches and jumps to the one nearest the bottom (the most recent).
    fn refresh_search(&mut self, width: usize, total: usize, viewport: usize) {
        self.transcript.refresh_search(width, &self.theme, Instant::now());
        if let Some(search) = &mut self.transcript.search
            && !search.matches.is_empty()
        {
            search.current = search.matches.len() - 1;
            let line = search.matches[search.current].line;
            self.transcript.reveal(line, total, viewport);
        }
    }

    fn enter_scroll_mode(&mut self) {
        let (total, _) = self.metrics();
        self.focus = Focus::Scroll;
        let bottom = total.saturating_sub(1 + self.transcript.scroll_from_bottom);
        self.transcript.cursor_line = Some(bottom.min(total.saturating_sub(1)));
    }

    fn on_scroll_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        let (total, viewport) = self.metrics();
        let cursor = self.transcript.cursor_line.unwrap_or(total.saturating_sub(1));
        let move_to = |app: &mut App, line: usize| {
            let line = line.min(total.saturating_sub(1));
            app.transcript.cursor_line = Some(line);
            if let Some((anchor, _)) = app.transcript.selection {
                app.transcript.selection = Some((anchor, line));
            }
            app.transcript.reveal(line, total, viewport);
        };
        match key.code {
            KeyCode::Esc | KeyCode::Char('q') | KeyCode::Char('i') => {
                self.focus = Focus::Input;
                self.transcript.selection = None;
                self.transcript.cursor_line = None;
                self.transcript.search = None;
            }
            KeyCode::Char('j') | KeyCode::Down => move_to(self, cursor + 1),
            KeyCode::Char('k') | KeyCode::Up => move_to(self, cursor.saturating_sub(1)),
            KeyCode::Char('g') | KeyCode::Home => move_to(self, 0),
            KeyCode::Char('G') | KeyCode::End => move_to(self, total.saturating_sub(1)),
            KeyCode::Char('/') => self.start_search(),
            KeyCode::Char('n') => {
                self.transcript.step_search(true, total, viewport);
                self.open_current_match();
            }
            KeyCode::Char('N') => {
                self.transcript.step_search(false, total, viewport);
                self.open_current_match();
            }
            KeyCode::Char('v') => {
                self.transcript.selection = match self.transcript.selection {
                    Some(_) => None,
                    None => Some((cursor, cursor)),
                };
            }
            KeyCode::Char('y') => return self.copy_selection(cursor),
            KeyCode::Char('c') => return self.copy_last_answer(),
            KeyCode::Char('b') => return self.copy_code_block(cursor),
            KeyCode::Enter | KeyCode::Char('o') => {
                let width = self.size.0 as usize;
                if let Some(index) = self.transcript.cell_at_line(cursor, width, &self.theme, Instant::now()) {
                    self.transcript.toggle_expanded(index);
                }
            }
            _ => {}
        }
        Vec::new()
    }

    /// Opens the card the current match is folded in (if it is), then puts the cursor on the match, in view.
    fn open_current_match(&mut self) {
        let width = self.size.0 as usize;
        self.transcript.open_current_match(width, &self.theme, Instant::now());
        let (total, viewport) = self.metrics();
        if let Some(line) =
            self.transcript.search.as_ref().and_then(|search| Some(search.matches.get(search.current)?.line))
        {
            self.transcript.reveal(line, total, viewport);
        }
        self.sync_cursor_to_match();
    }

    fn sync_cursor_to_match(&mut self) {
        if let Some(search) = &self.transcript.search
            && let Some(found) = search.matches.get(search.current)
        {
            self.transcript.cursor_line = Some(found.line);
        }
    }

    fn copy_selection(&mut self, cursor: usize) -> Vec<Effect> {
        let (start, end) = match self.transcript.selection {
            Some((anchor, head)) => (anchor.min(head), anchor.max(head)),
            None => (cursor, cursor),
        };
        let text = self.transcript.copy_text(start, end, self.size.0 as usize, &self.theme, Instant::now());
        self.transcript.selection = None;
        let lines = text.lines().count();
        self.flash(format!("copied {lines} line{}", if lines == 1 { "" } else { "s" }));
        vec![Effect::Copy(text)]
    }

    pub(crate) fn copy_last_answer(&mut self) -> Vec<Effect> {
        match self.transcript.last_answer() {
            Some(text) => {
                let text = text.to_owned();
                self.flash("copied the last answer");
                vec![Effect::Copy(text)]
            }
            None => {
                self.flash("no answer to copy yet");
                Vec::new()
            }
        }
    }

    /// Copies the code block under the cursor, or the one nearest it in the answer under the cursor (the last
    /// answer when the cursor is on no answer): the block in view, not a count from the top.
    fn copy_code_block(&mut self, cursor: usize) -> Vec<Effect> {
        let width = self.size.0 as usize;
        let now = Instant::now();
        let layout = self.transcript.layout(width, &self.theme, now);
        let answer_at = |index: usize| match &self.transcript.cells()[index].kind {
            CellKind::Assistant { text, .. } if !text.trim().is_empty() => Some(text.as_str()),
            _ => None,
        };
        let at_cursor =
            self.transcript.cell_at_line(cursor, width, &self.theme, now).filter(|&index| answer_at(index).is_some());
        let Some(cell) = at_cursor.or_else(|| (0..layout.len()).rev().find(|&index| answer_at(index).is_some())) else {
            self.flash("no code block here");
            return Vec::new();
        };
        let blocks = answer_at(cell).map(code_blocks).unwrap_or_default();
        let cell_start: usize = layout[..cell].iter().map(|lines| lines.len()).sum();
        let cursor_in_cell = cursor.saturating_sub(cell_start).min(layout[cell].len().saturating_sub(1));
        let Some(index) = nearest_block(&layout[cell], &blocks, cursor_in_cell) else {
            self.flash("no code block here");
            return Vec::new();
        };
        let block = &blocks[index];
        let language = block.lang.clone().unwrap_or_else(|| "text".into());
        self.flash(format!(
            "copied code block {}/{} ({language}, {} lines)",
            index + 1,
            blocks.len(),
            block.code.lines().count()
        ));
        vec![Effect::Copy(block.code.clone())]
    }

    /// Ctrl+O: the card under the cursor in scroll mode (or the selection's end), else the lowest expandable card
    /// in view — the latest one when following the conversation, an older one once scrolled up to it.
    fn toggle_card_in_view(&mut self) {
        let width = self.size.0 as usize;
        let now = Instant::now();
        let target = match (self.focus, self.transcript.selection, self.transcript.cursor_line) {
            (Focus::Scroll, Some((_, head)), _) | (Focus::Scroll, None, Some(head)) => {
                self.transcript.cell_at_line(head, width, &self.theme, now).filter(|&index| self.is_expandable(index))
            }
            _ => {
                let (total, viewport) = self.metrics();
                let bottom = total.saturating_sub(self.transcript.scroll_from_bottom);
                let top = bottom.saturating_sub(viewport);
                let layout = self.transcript.layout(width, &self.theme, now);
                let mut start = 0;
                let mut found = None;
                for (index, lines) in layout.iter().enumerate() {
                    let end = start + lines.len();
                    if end > top && start < bottom && self.toggling_shows_more(index, width) {
                        found = Some(index);
                    }
                    start = end;
                }
                found
            }
        };
        match target {
            Some(index) => self.transcript.toggle_expanded(index),
            None => self.flash("nothing to expand here"),
        }
    }

    /// A click on a card or a thinking block expands or collapses it.
    fn click(&mut self, row: u16) {
        let screen = ratatui::layout::Rect::new(0, 0, self.size.0, self.size.1);
        let area = crate::ui::frame::areas(self, screen).transcript;
        if !(area.y..area.y + area.height).contains(&row) {
            self.dirty = false;
            return;
        }
        let (total, viewport) = self.metrics();
        let end = total - self.transcript.scroll_from_bottom.min(total.saturating_sub(viewport));
        let start = end.saturating_sub(viewport);
        // The transcript is bottom-aligned: a short one starts lower.
        let padding = viewport.saturating_sub(end - start);
        let Some(offset) = usize::from(row - area.y).checked_sub(padding) else { return };
        let line = start + offset;
        let width = self.size.0 as usize;
        if let Some(index) = self.transcript.cell_at_line(line, width, &self.theme, Instant::now())
            && self.is_expandable(index)
        {
            self.transcript.toggle_expanded(index);
        }
    }

    /// Whether Ctrl+O on this cell changes what is shown: it is expanded (and would collapse), or expanding it
    /// shows more than its collapsed form (a denied card's one line doesn't).
    fn toggling_shows_more(&self, index: usize, width: usize) -> bool {
        let Some(cell) = self.transcript.cells().get(index).filter(|_| self.is_expandable(index)) else { return false };
        if cell.expanded {
            return true;
        }
        let mut open = cell.clone();
        open.expanded = true;
        let now = self.clock;
        crate::ui::cell::render(&open, width, &self.theme, now)
            != crate::ui::cell::render(cell, width, &self.theme, now)
    }

    fn is_expandable(&self, index: usize) -> bool {
        self.transcript.cells().get(index).is_some_and(|cell| {
            matches!(cell.kind, CellKind::Tool(_) | CellKind::Thinking { .. } | CellKind::Compaction { .. })
        })
    }

    pub(crate) fn on_mouse(&mut self, mouse: MouseEvent) -> Vec<Effect> {
        let wheel = match mouse.kind {
            MouseEventKind::ScrollUp => -WHEEL_LINES,
            MouseEventKind::ScrollDown => WHEEL_LINES,
            _ => 0,
        };
        // The wheel over an open dialog scrolls the dialog; anywhere else, the conversation.
        let screen = ratatui::layout::Rect::new(0, 0, self.size.0, self.size.1);
        if wheel != 0
            && let Some(rect) = crate::ui::frame::areas(self, screen).dialog
            && (rect.y..rect.y + rect.height).contains(&mouse.row)
            && let Some(dialog) = self.dialogs.front_mut()
        {
            dialog.scroll_lines(wheel);
            return Vec::new();
        }
        let (total, viewport) = self.scroll_metrics();
        match mouse.kind {
            MouseEventKind::ScrollUp => self.transcript.scroll_by(WHEEL_LINES, total, viewport),
            MouseEventKind::ScrollDown => self.transcript.scroll_by(-WHEEL_LINES, total, viewport),
            MouseEventKind::Down(ratatui::crossterm::event::MouseButton::Left) if self.dialogs.is_empty() => {
                self.click(mouse.row);
            }
            _ => self.dirty = false,
        }
        Vec::new()
    }
}

/// Which of an answer's code blocks is drawn nearest line `line` of its laid-out `lines` (a block under the line
/// is nearest of all). Each block is found where its first line is drawn, after the previous block.
fn nearest_block(lines: &PackedLines, blocks: &[CodeBlock], line: usize) -> Option<usize> {
    let mut from = 0;
    let mut nearest: Option<(usize, usize)> = None;
    for (index, block) in blocks.iter().enumerate() {
        let Some((skipped, first)) = block.code.lines().enumerate().find(|(_, code)| !code.trim().is_empty()) else {
            continue;
        };
        let drawn = |row: &usize| lines.text(*row).trim_start_matches('●').trim_start().starts_with(first.trim());
        let Some(start) = (from + skipped..lines.len()).find(drawn).map(|row| row - skipped) else { continue };
        let end = start + block.code.lines().count().max(1);
        from = end;
        let distance = if line < start { start - line } else { line.saturating_sub(end - 1) };
        if nearest.is_none_or(|(_, best)| distance < best) {
            nearest = Some((index, distance));
        }
    }
    nearest.map(|(index, _)| index).or((!blocks.is_empty()).then(|| blocks.len() - 1))
}
