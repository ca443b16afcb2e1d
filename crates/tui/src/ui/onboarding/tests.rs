use std::path::PathBuf;

use ratatui::Terminal;
use ratatui::backend::TestBackend;

use super::*;
use crate::ui::theme::ColorDepth;

/// Snapshots go next to the other UI snapshots (`ui/snapshots`).
macro_rules! snapshot {
    ($name:expr, $value:expr) => {
        insta::with_settings!({ snapshot_path => "../snapshots" }, { insta::assert_snapshot!($name, $value) })
    };
}

fn state(probing: bool, servers: Vec<LocalServer>) -> Onboarding {
    let mut onboarding = Onboarding::new(PathBuf::from("/home/me/.config/tandem/config.toml"));
    onboarding.set_servers(servers);
    onboarding.probing = probing;
    onboarding
}

fn two_servers() -> Vec<LocalServer> {
    vec![
        LocalServer {
            name: "Ollama",
            provider: "ollama",
            base_url: "http://127.0.0.1:11434/v1".into(),
            models: vec!["qwen3-coder:30b".into(), "llama3.1:8b".into(), "gpt-oss:20b".into()],
        },
        LocalServer {
            name: "LM Studio",
            provider: "openai",
            base_url: "http://127.0.0.1:1234/v1".into(),
            models: vec![],
        },
    ]
}

fn draw(state: &Onboarding, width: u16, height: u16) -> String {
    let theme = Theme::new(ColorDepth::TrueColor);
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("test backend");
    terminal.draw(|frame| render_onboarding(state, frame.area(), frame.buffer_mut(), &theme)).expect("draw");
    terminal.backend().to_string()
}

#[test]
fn no_servers() {
    let state = state(false, Vec::new());
    let text = draw(&state, 80, 24);
    for needle in [
        "Welcome to tandem",
        "export ANTHROPIC_API_KEY=…",
        "export OPENAI_API_KEY=…",
        "export OPENROUTER_API_KEY=…",
        "--provider ollama --model …",
        "--provider openai --base-url http://127.0.0.1:1234/v1",
        "/home/me/.config/tandem/config.toml",
        "no local server found on 11434, 8080, 1234",
    ] {
        assert!(text.contains(needle), "{needle} missing:\n{text}");
    }
    snapshot!("onboarding_no_servers_80x24", text);
    let small = draw(&state, 40, 20);
    assert!(small.contains("no local server found") && small.contains("quit"), "{small}");
    snapshot!("onboarding_no_servers_40x20", small);
}

#[test]
fn two_servers_found() {
    let mut state = state(false, two_servers());
    let text = draw(&state, 80, 24);
    assert!(
        text.contains("› Ollama") && text.contains("qwen3-coder:30b") && text.contains("no model loaded"),
        "{text}"
    );
    snapshot!("onboarding_two_servers_80x24", text);
    let small = draw(&state, 40, 20);
    assert!(small.contains("› Ollama") && small.contains("LM Studio") && small.contains("enter"), "{small}");
    snapshot!("onboarding_two_servers_40x20", small);
    state.selected = 1;
    assert!(draw(&state, 80, 24).contains("› LM Studio"));
}

/// Enter asks before anything is written: what will start, and whether to remember it in config.toml.
#[test]
fn enter_asks_whether_to_save_the_choice() {
    let mut state = state(false, two_servers());
    state.confirming = true;
    for (width, height) in [(80, 24), (40, 20)] {
        let text = draw(&state, width, height);
        assert!(text.contains("Start with qwen3-coder:30b on") && text.contains("Ollama."), "{text}");
        assert!(text.contains("config.toml") && text.contains("start and save") && text.contains("esc"), "{text}");
        assert!(!text.contains("try the demo"), "only the keys that answer the question:\n{text}");
        snapshot!(format!("onboarding_confirm_{width}x{height}"), text);
    }
}

#[test]
fn while_probing() {
    let state = state(true, Vec::new());
    let text = draw(&state, 80, 24);
    assert!(text.contains("scanning local ports…") && !text.contains("no local server"), "{text}");
    snapshot!("onboarding_probing_80x24", text);
    snapshot!("onboarding_probing_40x20", draw(&state, 40, 20));
}

#[test]
fn tiny_areas_do_not_panic() {
    let state = state(false, two_servers());
    for (width, height) in [(1, 1), (7, 2), (8, 3), (20, 5), (30, 10), (200, 60)] {
        draw(&state, width, height);
    }
    // An area that doesn't start at the origin, and one larger than the buffer.
    let theme = Theme::new(ColorDepth::None);
    let mut buf = Buffer::empty(Rect::new(0, 0, 50, 20));
    render_onboarding(&state, Rect::new(5, 3, 45, 17), &mut buf, &theme);
    render_onboarding(&state, Rect::new(0, 0, 300, 300), &mut buf, &theme);
}

#[test]
fn selected_server_is_marked_in_accent() {
    let theme = Theme::new(ColorDepth::TrueColor);
    let state = state(false, two_servers());
    let mut buf = Buffer::empty(Rect::new(0, 0, 80, 24));
    render_onboarding(&state, buf.area, &mut buf, &theme);
    let position = (0..24u16)
        .flat_map(|y| (0..80u16).map(move |x| (x, y)))
        .find(|&(x, y)| buf[(x, y)].symbol() == "›")
        .expect("marker");
    assert_eq!(buf[position].fg, theme.accent.fg.expect("accent colour"));
}

#[test]
fn commands_wrap_between_flags_and_paths_after_slashes() {
    let theme = Theme::new(ColorDepth::None);
    let text = |lines: Vec<Line<'static>>| lines.iter().map(crate::ui::wrap::line_text).collect::<Vec<_>>();
    let lines = command_lines("tandem --provider openai --base-url http://127.0.0.1:1234/v1 --model …", 40, theme.text);
    assert_eq!(text(lines), ["  tandem --provider openai", "    --base-url http://127.0.0.1:1234/v1", "    --model …"]);
    assert_eq!(break_word("/home/me/.config/tandem/config.toml", 20), ["/home/me/.config/", "tandem/config.toml"]);
    assert_eq!(break_word("abcdefgh", 3), ["abc", "def", "gh"]);
    assert_eq!(break_word("日本語", 1), ["日", "本", "語"]);
}
