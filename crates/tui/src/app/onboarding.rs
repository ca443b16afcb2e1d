//! The first-run screen when no provider is configured: the local model servers core's probe found
//! (`tandem_core::provider::local`), and the keys to pick one, rescan, try the demo or quit.

use std::path::PathBuf;

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use tandem_core::config::ProviderChoice;
use tandem_core::models::ProviderKind;
pub use tandem_core::provider::local::LocalServer;

/// What a key on the onboarding screen asks the app to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OnboardingAction {
    None,
    /// Start a session with the built-in `provider` at the chosen server and model, and remember the choice in
    /// `config.toml` when `save` is set.
    Choose {
        provider: String,
        choice: ProviderChoice,
        save: bool,
    },
    /// Probe the local ports again (the state is already marked as probing).
    Rescan,
    /// Start the scripted demo.
    Demo,
    Quit,
}

/// The onboarding screen's state.
#[derive(Clone, Debug)]
pub struct Onboarding {
    pub servers: Vec<LocalServer>,
    /// The highlighted server.
    pub selected: usize,
    /// A probe is running ("scanning local ports…").
    pub probing: bool,
    /// Where `config.toml` goes, shown so the user can write one.
    pub config_file: PathBuf,
    /// Enter was pressed on a server: the screen asks whether to save the choice before starting.
    pub confirming: bool,
}

impl Onboarding {
    /// A screen that is probing; feed the probe's result to [`Onboarding::set_servers`].
    pub fn new(config_file: PathBuf) -> Onboarding {
        Onboarding { servers: Vec::new(), selected: 0, probing: true, config_file, confirming: false }
    }

    /// Shows a finished probe's servers.
    pub fn set_servers(&mut self, servers: Vec<LocalServer>) {
        self.servers = servers;
        self.selected = 0;
        self.probing = false;
    }

    /// The highlighted server, if any (tolerates a stale `selected`).
    pub fn selected_server(&self) -> Option<&LocalServer> {
        self.servers.get(self.selected.min(self.servers.len().saturating_sub(1)))
    }

    /// The highlighted server's current model, when it has one (the server can be chosen).
    pub fn selected_model(&self) -> Option<(&LocalServer, &str)> {
        let server = self.selected_server().filter(|_| !self.probing)?;
        Some((server, server.models.first()?.as_str()))
    }

    /// Up/Down (or k/j) pick a server, Left/Right (or h/l) cycle its models (the current model is always
    /// the list's first, so no extra state is needed), Enter asks whether to save the choice (Enter or `y`
    /// start and save it, `n` starts without saving, Esc goes back), `r` rescans, `q`, Esc or Ctrl+C quit.
    pub fn handle_key(&mut self, key: KeyEvent) -> OnboardingAction {
        if key.kind == KeyEventKind::Release {
            return OnboardingAction::None;
        }
        if self.confirming {
            return self.confirm_key(key);
        }
        let count = self.servers.len();
        self.selected = self.selected.min(count.saturating_sub(1));
        match key.code {
            KeyCode::Char('c') if key.modifiers.contains(KeyModifiers::CONTROL) => OnboardingAction::Quit,
            KeyCode::Esc | KeyCode::Char('q') => OnboardingAction::Quit,
            KeyCode::Char('r') => {
                self.probing = true;
                OnboardingAction::Rescan
            }
            KeyCode::Char('d') => OnboardingAction::Demo,
            KeyCode::Up | KeyCode::Char('k') if count > 0 => {
                self.selected = (self.selected + count - 1) % count;
                OnboardingAction::None
            }
            KeyCode::Down | KeyCode::Char('j') | KeyCode::Tab if count > 0 => {
                self.selected = (self.selected + 1) % count;
                OnboardingAction::None
            }
            KeyCode::Right | KeyCode::Char('l') => {
                if let Some(server) = self.servers.get_mut(self.selected)
                    && !server.models.is_empty()
                {
                    server.models.rotate_left(1);
                }
                OnboardingAction::None
            }
            KeyCode::Left | KeyCode::Char('h') => {
                if let Some(server) = self.servers.get_mut(self.selected)
                    && !server.models.is_empty()
                {
                    server.models.rotate_right(1);
                }
                OnboardingAction::None
            }
            KeyCode::Enter => {
                self.confirming = self.selected_model().is_some();
                OnboardingAction::None
            }
            _ => OnboardingAction::None,
        }
    }

    fn confirm_key(&mut self, key: KeyEvent) -> OnboardingAction {
        let save = match key.code {
            KeyCode::Char('c') if key.modifiers.contains(KeyModifiers::CONTROL) => return OnboardingAction::Quit,
            KeyCode::Esc => {
                self.confirming = false;
                return OnboardingAction::None;
            }
            KeyCode::Enter | KeyCode::Char('y') => true,
            KeyCode::Char('n') => false,
            _ => return OnboardingAction::None,
        };
        let Some((server, model)) = self.selected_model() else {
            self.confirming = false;
            return OnboardingAction::None;
        };
        OnboardingAction::Choose { provider: server.provider.to_owned(), choice: saved_as(server, model), save }
    }
}

/// How `config.toml` remembers a server: under its built-in provider (`ollama`, `llamacpp`), or, for a server
/// that speaks OpenAI's protocol with no built-in entry (LM Studio), under its own name (`lmstudio`) with
/// `kind = "openai"` — saved as `openai` it would stand for OpenAI's hosted API.
pub fn saved_as(server: &LocalServer, model: &str) -> ProviderChoice {
    let name = if server.provider == "openai" {
        server.name.chars().filter(char::is_ascii_alphanumeric).collect::<String>().to_ascii_lowercase()
    } else {
        server.provider.to_owned()
    };
    ProviderChoice { name, kind: ProviderKind::Openai, base_url: server.base_url.clone(), model: model.to_owned() }
}

#[cfg(test)]
mod tests;
