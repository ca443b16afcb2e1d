//! `/permissions`: the active permission rules with where each comes from; `d` removes one (from its
//! settings file too).

use ratatui::crossterm::event::{KeyCode, KeyEvent};
use tandem_protocol::{Op, RuleListing};

use super::{App, Effect};

/// The open rules list.
#[derive(Clone, Debug, Default)]
pub struct RulesView {
    pub rules: Vec<RuleListing>,
    pub selected: usize,
}

impl App {
    /// Opens (or refreshes) the rules list with what the agent reported.
    pub(crate) fn show_rules(&mut self, rules: Vec<RuleListing>) {
        let selected = self.rules_view.as_ref().map_or(0, |view| view.selected).min(rules.len().saturating_sub(1));
        self.rules_view = Some(RulesView { rules, selected });
    }

    pub(crate) fn on_rules_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        let Some(view) = &mut self.rules_view else { return Vec::new() };
        match key.code {
            KeyCode::Esc | KeyCode::Char('q') => self.rules_view = None,
            KeyCode::Down | KeyCode::Char('j') => {
                view.selected = (view.selected + 1).min(view.rules.len().saturating_sub(1));
            }
            KeyCode::Up | KeyCode::Char('k') => view.selected = view.selected.saturating_sub(1),
            KeyCode::Char('d') | KeyCode::Delete | KeyCode::Backspace => {
                if let Some(rule) = view.rules.get(view.selected).cloned() {
                    return vec![Effect::Op(Op::RemovePermissionRule { rule })];
                }
            }
            _ => {}
        }
        Vec::new()
    }
}
