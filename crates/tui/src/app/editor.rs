//! The prompt editor: multi-line text, a cursor, readline-style keys, prompt history, reverse search,
//! collapsed pastes and slash-command completion. Pure state: it draws nothing and does no I/O except
//! through [`History::push`] on submit.
//!
//! The text the editor holds is its *display* text: a big paste sits in it as a `[pasted N lines]` token and
//! its real text in a side table, so the pane stays readable; [`Editor::text`] and
//! [`EditorAction::Submit`] give the real text. The cursor is a byte index that is always on a grapheme
//! boundary and never inside a token.

mod keys;
mod paste;
mod slash;
mod text;

#[cfg(test)]
mod tests;

use std::ops::Range;

use ratatui::crossterm::event::{KeyEvent, KeyEventKind};

pub use paste::{COLLAPSE_CHARS, COLLAPSE_LINES};
pub use slash::{SLASH_COMMANDS, SlashCommand};
pub use text::{DisplayLine, Segment, SegmentKind};

use self::paste::Paste;
use self::text::Units;
use crate::app::history::History;

/// What a key did, for the app.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EditorAction {
    /// Nothing changed: the key is not the editor's (the app may use it) or had no effect here (Left at
    /// the start of the text).
    None,
    /// The user submitted this prompt (pastes expanded); the editor is now empty and the prompt is in the
    /// history. Slash commands come with trailing whitespace trimmed (`/help` even when Tab left `/help `).
    Submit(String),
    /// The text, cursor, search or completion state changed: redraw.
    Changed,
}

/// What was typed before walking the history, restored when walking back past the newest entry.
#[derive(Clone, Debug, Default)]
struct Draft {
    text: String,
    cursor: usize,
    pastes: Vec<Paste>,
}

/// Reverse incremental search (Ctrl+R) in progress. The editor's own text is untouched until the user
/// accepts a match.
#[derive(Clone, Debug)]
struct Search {
    query: String,
    /// The history index shown.
    matched: Option<usize>,
    /// The last step found nothing ("failing reverse-i-search").
    failed: bool,
}

/// The last killed text, for Ctrl+Y, with the pastes whose tokens it holds (so yanking a token back brings
/// its paste back).
#[derive(Clone, Debug, Default)]
struct Kill {
    text: String,
    pastes: Vec<Paste>,
}

/// The completion popup's state; reset whenever the text changes.
#[derive(Clone, Copy, Debug, Default)]
struct Completion {
    selected: usize,
    /// The user moved the selection, so Enter takes it even when the typed text is a complete name.
    moved: bool,
    /// Esc closed the popup for this text.
    dismissed: bool,
}

/// The prompt editor. See the module docs.
#[derive(Clone, Debug)]
pub struct Editor {
    text: String,
    cursor: usize,
    pastes: Vec<Paste>,
    history: History,
    /// The history entry shown while walking with Up/Down; `None` while editing the draft.
    history_index: Option<usize>,
    draft: Option<Draft>,
    search: Option<Search>,
    kill: Kill,
    /// The previous key killed text, so this key's kill extends the same Ctrl+Y text (as in Emacs).
    kill_chain: bool,
    last_was_kill: bool,
    /// The column Up/Down aim for, kept across a run of vertical moves through shorter lines.
    goal_col: Option<usize>,
    /// Text columns the app last laid the editor out at, so Up/Down move by screen rows.
    wrap_width: Option<usize>,
    completion: Completion,
    /// The project's and user's commands, then the MCP servers' prompts: what the popup offers after the
    /// built-in commands.
    custom_commands: Vec<SlashCommand>,
    /// How many of `custom_commands` are the project's and user's (the rest are MCP prompts).
    own_commands: usize,
    /// The MCP servers' resources as `@server:uri`, completed in the word being typed.
    mentions: Vec<SlashCommand>,
}

impl Default for Editor {
    fn default() -> Editor {
        Editor::new(History::in_memory())
    }
}

impl Editor {
    pub fn new(history: History) -> Editor {
        Editor {
            text: String::new(),
            cursor: 0,
            pastes: Vec::new(),
            history,
            history_index: None,
            draft: None,
            search: None,
            kill: Kill::default(),
            kill_chain: false,
            last_was_kill: false,
            goal_col: None,
            wrap_width: None,
            completion: Completion::default(),
            custom_commands: Vec::new(),
            own_commands: 0,
            mentions: Vec::new(),
        }
    }

    /// Handles a key press (releases are ignored). The app should take its own global keys (Ctrl+C,
    /// Ctrl+D, Esc unless [`Editor::handles_esc`], Shift+Tab, PageUp/PageDown) before calling this.
    pub fn handle_key(&mut self, key: KeyEvent) -> EditorAction {
        if key.kind == KeyEventKind::Release {
            return EditorAction::None;
        }
        self.kill_chain = std::mem::take(&mut self.last_was_kill);
        let goal = self.goal_col.take();
        let action = if self.search.is_some() { self.search_key(key) } else { self.edit_key(key, goal) };
        if self.search.is_some() {
            self.goal_col = None;
        }
        action
    }

    /// Inserts a bracketed paste at the cursor, exactly as pasted apart from line endings. A paste of more
    /// than [`COLLAPSE_LINES`] lines or [`COLLAPSE_CHARS`] characters shows as one `[pasted N lines]` token.
    /// During Ctrl+R the paste's first line extends the search query instead.
    pub fn paste(&mut self, text: &str) {
        self.last_was_kill = false;
        self.goal_col = None;
        let text = paste::normalize_newlines(text);
        if let Some(search) = &mut self.search {
            search.query.push_str(text.lines().next().unwrap_or_default());
            self.research();
            return;
        }
        if text.is_empty() {
            return;
        }
        if paste::is_large(&text) {
            let placeholder = paste::placeholder_for(&text, &self.pastes);
            self.pastes.push(Paste { placeholder: placeholder.clone(), content: text });
            self.insert(&placeholder);
        } else {
            self.insert(&text);
        }
    }

    /// The full text, pastes expanded.
    pub fn text(&self) -> String {
        paste::expand(&self.text, &self.pastes)
    }

    /// The text as shown, with paste tokens.
    pub fn display_text(&self) -> &str {
        &self.text
    }

    /// The cursor as a byte index into [`Editor::display_text`].
    pub fn cursor(&self) -> usize {
        self.cursor
    }

    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// Empties the editor and ends any history walk or search. The kill buffer survives, as in a shell.
    pub fn clear(&mut self) {
        self.text.clear();
        self.cursor = 0;
        self.pastes.clear();
        self.history_index = None;
        self.draft = None;
        self.search = None;
        self.goal_col = None;
        self.completion = Completion::default();
    }

    /// Replaces the text (no collapsing), cursor at the end, e.g. to put back a prompt the app could not
    /// send. Ends any history walk or search.
    pub fn set_text(&mut self, text: &str) {
        self.clear();
        self.text = paste::normalize_newlines(text);
        self.cursor = self.text.len();
    }

    /// Tells the editor how many text columns the input pane has (its width less the prompt; see
    /// `ui::input::text_width`), so Up/Down move by screen rows of wrapped text. Until it is called they
    /// move by lines.
    pub fn set_wrap_width(&mut self, width: u16) {
        self.wrap_width = Some(usize::from(width.max(1)));
    }

    /// The cursor as (row, column) in the rows [`Editor::display_lines`] gives for `width` text columns.
    pub fn cursor_position(&self, width: u16) -> (usize, usize) {
        let pastes = self.paste_ranges();
        let rows = text::layout(&self.text, &pastes, Some(usize::from(width.max(1))), self.cursor);
        let row = text::row_of(&rows, self.cursor);
        let start = rows.get(row).map_or(0, |row| row.start);
        (row, text::str_width(&self.text[start..self.cursor]))
    }

    /// The text wrapped to `width` columns, split into text and paste-token segments. Always at least one
    /// row; when the cursor is at the end of a line that exactly fills its row, an empty row follows for it.
    pub fn display_lines(&self, width: u16) -> Vec<DisplayLine> {
        let pastes = self.paste_ranges();
        let rows = text::layout(&self.text, &pastes, Some(usize::from(width.max(1))), self.cursor);
        text::display(&self.text, &pastes, &rows)
    }

    /// The slash commands matching the typed `/word`, or the resources matching the `@word` before the
    /// cursor, for the popup; empty when it is closed (neither, dismissed with Esc, or during Ctrl+R).
    pub fn completions(&self) -> Vec<&SlashCommand> {
        if self.search.is_some() || self.completion.dismissed {
            return Vec::new();
        }
        let commands = slash::matching(&self.text, &self.custom_commands);
        if !commands.is_empty() {
            return commands;
        }
        match self.mention_at_cursor() {
            Some(range) => {
                let typed = &self.text[range];
                self.mentions.iter().filter(|mention| mention.name.starts_with(typed)).collect()
            }
            None => Vec::new(),
        }
    }

    /// What a completion replaces: the whole text for a `/command`, else the `@word` before the cursor.
    fn completion_range(&self) -> std::ops::Range<usize> {
        if slash::matching(&self.text, &self.custom_commands).is_empty() {
            self.mention_at_cursor().unwrap_or(0..self.text.len())
        } else {
            0..self.text.len()
        }
    }

    /// The `@…` word that ends at the cursor, if the cursor ends one.
    fn mention_at_cursor(&self) -> Option<std::ops::Range<usize>> {
        let before = &self.text[..self.cursor];
        let start = before.rfind(char::is_whitespace).map_or(0, |index| index + 1);
        let at_end = self.text[self.cursor..].chars().next().is_none_or(char::is_whitespace);
        (before[start..].starts_with('@') && at_end).then_some(start..self.cursor)
    }

    /// The MCP servers' resources, offered as `@server:uri` while a word starting with `@` is typed.
    pub fn set_mentions(&mut self, mentions: Vec<SlashCommand>) {
        self.mentions = mentions;
    }

    pub fn custom_commands(&self) -> &[SlashCommand] {
        &self.custom_commands
    }

    /// The project's and the user's own commands, offered after the built-in ones.
    pub fn set_custom_commands(&mut self, mut commands: Vec<SlashCommand>) {
        let mcp = self.custom_commands.split_off(self.own_commands.min(self.custom_commands.len()));
        self.own_commands = commands.len();
        commands.extend(mcp);
        self.custom_commands = commands;
    }

    /// The MCP servers' prompts (`/mcp__server__prompt`), offered after the project's commands.
    pub fn set_mcp_commands(&mut self, commands: Vec<SlashCommand>) {
        self.custom_commands.truncate(self.own_commands);
        self.custom_commands.extend(commands);
    }

    /// The highlighted row of [`Editor::completions`].
    pub fn completion_selected(&self) -> usize {
        let count = self.completions().len();
        self.completion.selected.min(count.saturating_sub(1))
    }

    /// Whether Esc means something to the editor now (cancel Ctrl+R, close the popup); otherwise the app
    /// may use Esc (e.g. to interrupt the model).
    pub fn handles_esc(&self) -> bool {
        self.search.is_some() || !self.completions().is_empty()
    }

    /// Whether Ctrl+R search is active.
    pub fn is_searching(&self) -> bool {
        self.search.is_some()
    }

    /// The Ctrl+R query, while searching.
    pub fn search_query(&self) -> Option<&str> {
        self.search.as_ref().map(|search| search.query.as_str())
    }

    /// The history entry the Ctrl+R search currently shows.
    pub fn search_match(&self) -> Option<&str> {
        self.search.as_ref().and_then(|search| search.matched).and_then(|index| self.history.get(index))
    }

    /// Whether the last Ctrl+R step found nothing.
    pub fn search_failed(&self) -> bool {
        self.search.as_ref().is_some_and(|search| search.failed)
    }

    pub fn history(&self) -> &History {
        &self.history
    }

    pub fn history_mut(&mut self) -> &mut History {
        &mut self.history
    }

    // ----- editing primitives (used by `keys`) -----

    fn paste_ranges(&self) -> Vec<Range<usize>> {
        paste::occurrences(&self.text, &self.pastes).into_iter().map(|(range, _)| range).collect()
    }

    /// Runs `f` over the text's units (graphemes and whole tokens).
    fn with_units<T>(&self, f: impl FnOnce(&Units<'_>) -> T) -> T {
        let pastes = self.paste_ranges();
        f(&Units { text: &self.text, pastes: &pastes })
    }

    /// Replaces a range (already grown to whole tokens) and puts the cursor after the new text. Every text
    /// change goes through here, so the popup state and the paste table always match the text.
    fn replace(&mut self, range: Range<usize>, with: &str) {
        self.text.replace_range(range.clone(), with);
        self.cursor = range.start + with.len();
        let text = &self.text;
        self.pastes.retain(|paste| text.contains(&paste.placeholder));
        self.completion = Completion::default();
        self.cursor = self.with_units(|units| units.snap(self.cursor));
    }

    fn insert(&mut self, with: &str) -> bool {
        self.replace(self.cursor..self.cursor, with);
        true
    }

    fn move_to(&mut self, pos: usize) -> bool {
        let moved = pos != self.cursor;
        self.cursor = pos;
        moved
    }

    /// Removes `range` grown to whole tokens; what was removed, for the kill buffer.
    fn remove(&mut self, range: Range<usize>) -> Option<Kill> {
        let range = self.with_units(|units| units.expand(range));
        if range.is_empty() {
            return None;
        }
        let text = self.text[range.clone()].to_owned();
        let pastes = self.pastes.iter().filter(|paste| text.contains(&paste.placeholder)).cloned().collect();
        self.replace(range, "");
        Some(Kill { text, pastes })
    }

    /// Removes `range` into the kill buffer; consecutive kills add up (forward ones append, backward ones
    /// prepend), so Ctrl+Y gives back everything just killed.
    fn kill(&mut self, range: Range<usize>, forward: bool) -> bool {
        let Some(killed) = self.remove(range) else { return false };
        if self.kill_chain {
            if forward {
                self.kill.text.push_str(&killed.text);
            } else {
                self.kill.text.insert_str(0, &killed.text);
            }
            self.kill.pastes.extend(killed.pastes);
        } else {
            self.kill = killed;
        }
        self.last_was_kill = true;
        true
    }

    /// Inserts the kill buffer, restoring its pastes (renamed if a paste now uses the token).
    fn yank(&mut self) -> bool {
        if self.kill.text.is_empty() {
            return false;
        }
        let mut text = self.kill.text.clone();
        for killed in self.kill.pastes.clone() {
            match self.pastes.iter().find(|paste| paste.placeholder == killed.placeholder) {
                Some(existing) if existing.content == killed.content => {}
                Some(_) => {
                    let placeholder = paste::placeholder_for(&killed.content, &self.pastes);
                    text = text.replace(&killed.placeholder, &placeholder);
                    self.pastes.push(Paste { placeholder, content: killed.content });
                }
                None => self.pastes.push(killed),
            }
        }
        self.insert(&text)
    }

    /// Shows a history entry (or the restored draft) in the editor. A recalled `/command` keeps the popup
    /// closed until it is edited: otherwise Up would move the popup's selection instead of walking on.
    fn show(&mut self, text: String, cursor: usize, pastes: Vec<Paste>, from_history: bool) {
        self.text = text;
        self.pastes = pastes;
        self.completion = Completion { dismissed: from_history, ..Completion::default() };
        self.cursor = self.with_units(|units| units.snap(cursor));
    }

    /// Up on the first row: the next older entry, saving the draft on the first step.
    fn history_older(&mut self) -> bool {
        let index = match self.history_index {
            None => match self.history.len().checked_sub(1) {
                Some(newest) => newest,
                None => return false,
            },
            Some(0) => return false,
            Some(index) => index - 1,
        };
        if self.history_index.is_none() {
            self.save_draft();
        }
        self.history_index = Some(index);
        let entry = self.history.get(index).unwrap_or_default().to_owned();
        let end = entry.len();
        self.show(entry, end, Vec::new(), true);
        true
    }

    /// Down on the last row: the next newer entry, or back to the draft after the newest.
    fn history_newer(&mut self) -> bool {
        let Some(index) = self.history_index else { return false };
        if index + 1 < self.history.len() {
            self.history_index = Some(index + 1);
            let entry = self.history.get(index + 1).unwrap_or_default().to_owned();
            let end = entry.len();
            self.show(entry, end, Vec::new(), true);
        } else {
            self.history_index = None;
            let draft = self.draft.take().unwrap_or_default();
            self.show(draft.text, draft.cursor, draft.pastes, false);
        }
        true
    }

    fn save_draft(&mut self) {
        self.draft = Some(Draft { text: self.text.clone(), cursor: self.cursor, pastes: self.pastes.clone() });
    }

    /// Enter: submit the expanded text, unless blank.
    fn submit(&mut self) -> EditorAction {
        let mut text = self.text();
        if text.trim().is_empty() {
            return EditorAction::None;
        }
        if text.starts_with('/') {
            text.truncate(text.trim_end().len());
        }
        self.history.push(text.clone());
        self.clear();
        EditorAction::Submit(text)
    }

    // ----- reverse search -----

    fn start_search(&mut self) -> bool {
        self.search = Some(Search { query: String::new(), matched: None, failed: false });
        self.research();
        true
    }

    /// Searches again from the newest entry after the query changed.
    fn research(&mut self) {
        let newest = self.history.len();
        if let Some(search) = &mut self.search {
            search.matched = self.history.search(&search.query, newest);
            search.failed = search.matched.is_none() && !search.query.is_empty();
        }
    }

    /// Ctrl+R again: the next older match with different text (repeats of a prompt are skipped).
    fn search_older(&mut self) -> bool {
        let Some(search) = &mut self.search else { return false };
        let current = search.matched.and_then(|index| self.history.get(index));
        let mut before = search.matched.unwrap_or(self.history.len());
        loop {
            match self.history.search(&search.query, before) {
                Some(index) if self.history.get(index) == current => before = index,
                Some(index) => {
                    search.matched = Some(index);
                    search.failed = false;
                    return true;
                }
                None => {
                    let changed = !search.failed;
                    search.failed = true;
                    return changed;
                }
            }
        }
    }

    /// Enter (or any editing key) during search: the match becomes the editor's text, and Up/Down walk the
    /// history on from it.
    fn accept_search(&mut self) {
        let Some(search) = self.search.take() else { return };
        let Some(index) = search.matched else { return };
        let Some(entry) = self.history.get(index).map(str::to_owned) else { return };
        if self.history_index.is_none() {
            self.save_draft();
        }
        self.history_index = Some(index);
        let end = entry.len();
        self.show(entry, end, Vec::new(), true);
    }
}
