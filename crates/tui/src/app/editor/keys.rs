//! The key bindings: readline/Emacs keys as shells and Claude Code have them, plus the newline variants
//! terminals send (Shift+Enter with keyboard enhancement; Ctrl+J or Alt+Enter without; `\` then Enter
//! everywhere).

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::text::{self, Units};
use super::{Editor, EditorAction};

fn changed(did: bool) -> EditorAction {
    if did { EditorAction::Changed } else { EditorAction::None }
}

impl Editor {
    /// A key while editing. `goal` is the column a run of Up/Down presses aims for.
    pub(super) fn edit_key(&mut self, key: KeyEvent, goal: Option<usize>) -> EditorAction {
        // Super/Hyper/Meta combinations (Cmd+V under the kitty protocol) belong to the app or the terminal;
        // taking them as plain keys would type a stray letter.
        if key.modifiers.intersects(KeyModifiers::SUPER | KeyModifiers::HYPER | KeyModifiers::META) {
            return EditorAction::None;
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        let did = match key.code {
            KeyCode::Enter if ctrl || alt || key.modifiers.contains(KeyModifiers::SHIFT) => self.insert("\n"),
            KeyCode::Enter => return self.enter(),
            // AltGr arrives as Ctrl+Alt on Windows: it types a character.
            KeyCode::Char(c) if ctrl && alt => self.insert(c.encode_utf8(&mut [0; 4])),
            KeyCode::Char(c) if ctrl => return self.control_key(c.to_ascii_lowercase()),
            KeyCode::Char(c) if alt => match c.to_ascii_lowercase() {
                'b' => self.word_left(),
                'f' => self.word_right(),
                'd' => self.kill_word_right(),
                _ => false,
            },
            KeyCode::Char(c) => self.insert(c.encode_utf8(&mut [0; 4])),
            KeyCode::Backspace if ctrl || alt => self.kill_word_left(),
            KeyCode::Backspace => self.delete_left(),
            KeyCode::Delete if ctrl || alt => self.kill_word_right(),
            KeyCode::Delete => self.delete_right(),
            KeyCode::Left if ctrl || alt => self.word_left(),
            KeyCode::Left => self.step_left(),
            KeyCode::Right if ctrl || alt => self.word_right(),
            KeyCode::Right => self.step_right(),
            KeyCode::Home if ctrl => self.move_to(0),
            KeyCode::Home => self.move_to(text::line_start(&self.text, self.cursor)),
            KeyCode::End if ctrl => self.move_to(self.text.len()),
            KeyCode::End => self.move_to(text::line_end(&self.text, self.cursor)),
            KeyCode::Up => self.up(goal),
            KeyCode::Down => self.down(goal),
            KeyCode::Tab if key.modifiers.is_empty() => self.complete(),
            KeyCode::Esc if !self.completions().is_empty() => {
                self.completion.dismissed = true;
                true
            }
            _ => false,
        };
        changed(did)
    }

    fn control_key(&mut self, c: char) -> EditorAction {
        let did = match c {
            'a' => self.move_to(text::line_start(&self.text, self.cursor)),
            'e' => self.move_to(text::line_end(&self.text, self.cursor)),
            'h' => self.delete_left(),
            // On an empty prompt the app quits instead (it never gets here).
            'd' => self.delete_right(),
            'j' => self.insert("\n"),
            'k' => {
                // At the end of a line, Ctrl+K joins the next line (as in Emacs).
                let end = text::line_end(&self.text, self.cursor);
                let end = if end == self.cursor && end < self.text.len() { end + 1 } else { end };
                self.kill(self.cursor..end, true)
            }
            'u' => {
                let start = text::line_start(&self.text, self.cursor);
                let start = if start == self.cursor { start.saturating_sub(1) } else { start };
                self.kill(start..self.cursor, false)
            }
            'w' => {
                let start = self.with_units(|units| units.big_word_left(self.cursor));
                self.kill(start..self.cursor, false)
            }
            'y' => self.yank(),
            'r' => self.start_search(),
            _ => false,
        };
        changed(did)
    }

    /// Enter: `\` before the cursor makes a newline; with the popup open it completes the command unless
    /// the typed text already names one; otherwise it submits.
    fn enter(&mut self) -> EditorAction {
        if self.text[..self.cursor].ends_with('\\') {
            self.replace(self.cursor - 1..self.cursor, "\n");
            return EditorAction::Changed;
        }
        let commands = self.completions();
        if let Some(selected) = commands.get(self.completion_selected()) {
            let typed = &self.text[self.completion_range()];
            let complete = commands.iter().any(|command| command.name == typed);
            if !complete || (self.completion.moved && selected.name != typed) {
                return changed(self.complete());
            }
        }
        self.submit()
    }

    /// Tab: the selected command's name (or resource's `@server:uri`) and a space, ready for what follows
    /// (which closes the popup).
    fn complete(&mut self) -> bool {
        let Some(command) = self.completions().get(self.completion_selected()).copied() else { return false };
        let name = format!("{} ", command.name);
        self.replace(self.completion_range(), &name);
        true
    }

    fn step_left(&mut self) -> bool {
        let pos = self.with_units(|units| units.prev(self.cursor).map(|(start, _)| start));
        pos.is_some_and(|pos| self.move_to(pos))
    }

    fn step_right(&mut self) -> bool {
        let pos = self.with_units(|units| units.next(self.cursor).map(|(end, _)| end));
        pos.is_some_and(|pos| self.move_to(pos))
    }

    fn word_left(&mut self) -> bool {
        let pos = self.with_units(|units| units.word_left(self.cursor));
        self.move_to(pos)
    }

    fn word_right(&mut self) -> bool {
        let pos = self.with_units(|units| units.word_right(self.cursor));
        self.move_to(pos)
    }

    fn delete_left(&mut self) -> bool {
        let start = self.with_units(|units| units.prev(self.cursor).map(|(start, _)| start));
        start.is_some_and(|start| self.remove(start..self.cursor).is_some())
    }

    fn delete_right(&mut self) -> bool {
        let end = self.with_units(|units| units.next(self.cursor).map(|(end, _)| end));
        end.is_some_and(|end| self.remove(self.cursor..end).is_some())
    }

    fn kill_word_left(&mut self) -> bool {
        let start = self.with_units(|units| units.word_left(self.cursor));
        self.kill(start..self.cursor, false)
    }

    fn kill_word_right(&mut self) -> bool {
        let end = self.with_units(|units| units.word_right(self.cursor));
        self.kill(self.cursor..end, true)
    }

    /// Up: the popup selection, else the row above, else (on the first row) the previous history entry.
    fn up(&mut self, goal: Option<usize>) -> bool {
        let count = self.completions().len();
        if count > 0 {
            self.completion.selected = (self.completion_selected() + count - 1) % count;
            self.completion.moved = true;
            return true;
        }
        self.vertical(goal, false) || self.history_older()
    }

    /// Down: the popup selection, else the row below, else (on the last row) the next history entry or the
    /// draft.
    fn down(&mut self, goal: Option<usize>) -> bool {
        let count = self.completions().len();
        if count > 0 {
            self.completion.selected = (self.completion_selected() + 1) % count;
            self.completion.moved = true;
            return true;
        }
        self.vertical(goal, true) || self.history_newer()
    }

    /// Moves one row up or down, aiming for the goal column; false at the first or last row.
    fn vertical(&mut self, goal: Option<usize>, down: bool) -> bool {
        let pastes = self.paste_ranges();
        let units = Units { text: &self.text, pastes: &pastes };
        let rows = text::layout(&self.text, &pastes, self.wrap_width, self.cursor);
        let row = text::row_of(&rows, self.cursor);
        let target = if down { row + 1 } else { row.wrapping_sub(1) };
        let Some(target_row) = rows.get(target).copied() else { return false };
        let start = rows[row].start;
        let goal = goal.unwrap_or_else(|| text::str_width(&self.text[start..self.cursor]));
        let pos = text::position_in_row(&units, target_row, goal);
        self.cursor = pos;
        self.goal_col = Some(goal);
        true
    }

    /// A key during Ctrl+R. Typing edits the query; Ctrl+R steps to older matches; Enter accepts the match
    /// without submitting; Esc, Ctrl+G or Ctrl+C go back to the draft untouched; any other key accepts the
    /// match and then acts as usual (as in readline).
    pub(super) fn search_key(&mut self, key: KeyEvent) -> EditorAction {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        match key.code {
            KeyCode::Char('r' | 'R') if ctrl && !alt => changed(self.search_older()),
            KeyCode::Char('g' | 'G' | 'c' | 'C') if ctrl && !alt => {
                self.search = None;
                EditorAction::Changed
            }
            KeyCode::Esc => {
                self.search = None;
                EditorAction::Changed
            }
            KeyCode::Enter => {
                self.accept_search();
                EditorAction::Changed
            }
            KeyCode::Backspace if !ctrl && !alt => {
                if let Some(search) = &mut self.search {
                    let keep = search.query.char_indices().next_back().map_or(0, |(at, _)| at);
                    search.query.truncate(keep);
                }
                self.research();
                EditorAction::Changed
            }
            KeyCode::Char(c) if ctrl == alt => {
                if let Some(search) = &mut self.search {
                    search.query.push(c);
                }
                self.research();
                EditorAction::Changed
            }
            _ => {
                self.accept_search();
                self.edit_key(key, None);
                EditorAction::Changed
            }
        }
    }
}
