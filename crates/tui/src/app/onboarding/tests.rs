use ratatui::crossterm::event::{KeyEvent, KeyEventKind};

use super::*;

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn found() -> Onboarding {
    let mut onboarding = Onboarding::new(PathBuf::from("/cfg/config.toml"));
    assert!(onboarding.probing);
    onboarding.set_servers(vec![
        LocalServer {
            name: "Ollama",
            provider: "ollama",
            base_url: "http://127.0.0.1:11434/v1".into(),
            models: vec!["a".into(), "b".into(), "c".into()],
        },
        LocalServer {
            name: "LM Studio",
            provider: "openai",
            base_url: "http://127.0.0.1:1234/v1".into(),
            models: vec![],
        },
    ]);
    onboarding
}

#[test]
fn keys_select_cycle_and_choose() {
    let mut onboarding = found();
    assert_eq!(onboarding.handle_key(key(KeyCode::Right)), OnboardingAction::None);
    assert_eq!(onboarding.handle_key(key(KeyCode::Right)), OnboardingAction::None);
    assert_eq!(onboarding.handle_key(key(KeyCode::Left)), OnboardingAction::None);
    assert_eq!(onboarding.handle_key(key(KeyCode::Enter)), OnboardingAction::None, "asks whether to save first");
    assert!(onboarding.confirming);
    let chosen = |save| OnboardingAction::Choose {
        provider: "ollama".into(),
        choice: ProviderChoice {
            name: "ollama".into(),
            kind: ProviderKind::Openai,
            base_url: "http://127.0.0.1:11434/v1".into(),
            model: "b".into(),
        },
        save,
    };
    assert_eq!(onboarding.handle_key(key(KeyCode::Enter)), chosen(true));
    assert_eq!(onboarding.handle_key(key(KeyCode::Char('y'))), chosen(true));
    assert_eq!(onboarding.handle_key(key(KeyCode::Char('n'))), chosen(false));
    assert_eq!(onboarding.handle_key(key(KeyCode::Char('q'))), OnboardingAction::None, "q answers nothing here");
    assert_eq!(onboarding.handle_key(key(KeyCode::Esc)), OnboardingAction::None, "esc goes back");
    assert!(!onboarding.confirming);
    // A server without models can't be chosen.
    onboarding.handle_key(key(KeyCode::Down));
    assert_eq!(onboarding.selected, 1);
    onboarding.handle_key(key(KeyCode::Right));
    assert_eq!(onboarding.handle_key(key(KeyCode::Enter)), OnboardingAction::None);
    assert!(!onboarding.confirming, "nothing to confirm");
    onboarding.handle_key(key(KeyCode::Down));
    assert_eq!(onboarding.selected, 0);
    onboarding.handle_key(key(KeyCode::Up));
    assert_eq!(onboarding.selected, 1);
    // Releases are ignored (Windows reports them).
    let mut release = key(KeyCode::Char('q'));
    release.kind = KeyEventKind::Release;
    assert_eq!(onboarding.handle_key(release), OnboardingAction::None);
}

#[test]
fn rescan_and_quit() {
    let mut onboarding = found();
    assert_eq!(onboarding.handle_key(key(KeyCode::Char('r'))), OnboardingAction::Rescan);
    assert!(onboarding.probing);
    assert_eq!(onboarding.handle_key(key(KeyCode::Enter)), OnboardingAction::None, "not while probing");
    assert_eq!(onboarding.handle_key(key(KeyCode::Char('q'))), OnboardingAction::Quit);
    assert_eq!(onboarding.handle_key(key(KeyCode::Esc)), OnboardingAction::Quit);
    assert_eq!(onboarding.handle_key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL)), OnboardingAction::Quit);
    // Keys with nothing to act on, and a stale selection, are harmless.
    let mut empty = Onboarding::new(PathBuf::new());
    empty.set_servers(Vec::new());
    empty.selected = 7;
    for code in [KeyCode::Up, KeyCode::Down, KeyCode::Left, KeyCode::Right, KeyCode::Enter] {
        assert_eq!(empty.handle_key(key(code)), OnboardingAction::None);
    }
}

/// LM Studio speaks OpenAI's protocol: saved as `openai` it would mean OpenAI's hosted API (and its key).
#[test]
fn a_server_without_a_provider_of_its_own_is_saved_under_its_name() {
    let server = LocalServer {
        name: "LM Studio",
        provider: "openai",
        base_url: "http://127.0.0.1:1234/v1".into(),
        models: vec!["qwen".into()],
    };
    let saved = saved_as(&server, "qwen");
    assert_eq!((saved.name.as_str(), saved.kind, saved.model.as_str()), ("lmstudio", ProviderKind::Openai, "qwen"));
}
