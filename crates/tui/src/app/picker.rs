//! `tandem --resume` without an id: pick a saved session (title, time, first prompt, size).

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use tandem_core::session::SessionSummary;

use super::{App, Effect};

/// The open session list.
#[derive(Clone, Debug)]
pub struct SessionPicker {
    pub sessions: Vec<SessionSummary>,
    pub selected: usize,
}

impl App {
    pub(crate) fn on_picker_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        let Some(picker) = &mut self.session_picker else { return Vec::new() };
        let last = picker.sessions.len().saturating_sub(1);
        match key.code {
            KeyCode::Down | KeyCode::Char('j') => picker.selected = (picker.selected + 1).min(last),
            KeyCode::Up | KeyCode::Char('k') => picker.selected = picker.selected.saturating_sub(1),
            KeyCode::PageDown => picker.selected = (picker.selected + 10).min(last),
            KeyCode::PageUp => picker.selected = picker.selected.saturating_sub(10),
            KeyCode::Enter => {
                if let Some(session) = picker.sessions.get(picker.selected) {
                    let id = session.id.clone();
                    self.session_picker = None;
                    return vec![Effect::ResumeSession { id }];
                }
            }
            KeyCode::Esc | KeyCode::Char('q') => return vec![Effect::Quit],
            KeyCode::Char('c') if key.modifiers.contains(KeyModifiers::CONTROL) => return vec![Effect::Quit],
            _ => {}
        }
        Vec::new()
    }
}
