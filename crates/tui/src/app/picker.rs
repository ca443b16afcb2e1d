//! Pickers: a saved session (`tandem --resume` without an id, or `/resume`), and a model (`/model` alone).

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use tandem_core::session::SessionSummary;

use super::{App, Effect};

/// The open session list.
#[derive(Clone, Debug)]
pub struct SessionPicker {
    pub sessions: Vec<SessionSummary>,
    pub selected: usize,
    /// Opened with `/resume` inside a session: Esc closes the picker instead of quitting.
    pub in_session: bool,
}

/// The `/model` picker: the models the table knows for this provider, the current one selected.
#[derive(Clone, Debug)]
pub struct ModelPicker {
    pub models: Vec<String>,
    pub selected: usize,
    pub current: String,
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
            KeyCode::Esc | KeyCode::Char('q') if picker.in_session => self.session_picker = None,
            KeyCode::Esc | KeyCode::Char('q') => return vec![Effect::Quit],
            KeyCode::Char('c') if key.modifiers.contains(KeyModifiers::CONTROL) => return vec![Effect::Quit],
            _ => {}
        }
        Vec::new()
    }

    /// The saved sessions arrived (`/resume`): the picker opens, or the user hears there are none.
    pub(crate) fn open_session_picker(&mut self, sessions: Vec<SessionSummary>) {
        if sessions.is_empty() {
            self.notice(super::cells::NoticeKind::Info, "No saved sessions for this directory yet.");
            return;
        }
        self.session_picker = Some(SessionPicker { sessions, selected: 0, in_session: true });
    }

    /// `/model` without a name: the models for this provider, the one in use first selected.
    pub(crate) fn open_model_picker(&mut self) {
        let anthropic = self.status.provider == "anthropic" || self.status.model.starts_with("claude-");
        let kind = if anthropic {
            tandem_core::provider::ProviderKind::Anthropic
        } else {
            tandem_core::provider::ProviderKind::Openai
        };
        let mut models = tandem_core::models::models_for(kind);
        let current = self.status.model.clone();
        if !current.is_empty() && !models.contains(&current) {
            models.insert(0, current.clone());
        }
        let selected = models.iter().position(|model| *model == current).unwrap_or(0);
        self.model_picker = Some(ModelPicker { models, selected, current });
    }

    pub(crate) fn on_model_picker_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        let Some(picker) = &mut self.model_picker else { return Vec::new() };
        let last = picker.models.len().saturating_sub(1);
        match key.code {
            KeyCode::Down | KeyCode::Char('j') => picker.selected = (picker.selected + 1).min(last),
            KeyCode::Up | KeyCode::Char('k') => picker.selected = picker.selected.saturating_sub(1),
            KeyCode::Enter => {
                let chosen = picker.models.get(picker.selected).cloned();
                let current = picker.current.clone();
                self.model_picker = None;
                if let Some(model) = chosen.filter(|model| *model != current) {
                    if self.working {
                        self.flash("the model changes after this turn");
                    }
                    return vec![Effect::Op(tandem_protocol::Op::SetModel { model })];
                }
            }
            KeyCode::Esc | KeyCode::Char('q') => self.model_picker = None,
            KeyCode::Char('c') if key.modifiers.contains(KeyModifiers::CONTROL) => self.model_picker = None,
            _ => {}
        }
        Vec::new()
    }
}
