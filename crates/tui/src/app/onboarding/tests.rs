use std::time::{Duration, Instant};

use ratatui::crossterm::event::{KeyEvent, KeyEventKind};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use super::*;

/// A one-shot HTTP server on a free port that answers every connection with `response`.
async fn serve(response: &'static str) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = listener.local_addr().expect("address").port();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut request = [0u8; 2048];
                let _ = stream.read(&mut request).await;
                let _ = stream.write_all(response.as_bytes()).await;
                let _ = stream.shutdown().await;
            });
        }
    });
    port
}

/// A port nothing listens on (bound, then released).
async fn closed_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    listener.local_addr().expect("address").port()
}

const OPENAI_LIST: &str = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 63\r\n\r\n{\"object\":\"list\",\"data\":[{\"id\":\"qwen2.5-coder\"},{\"id\":\"phi4\"}]}";

#[tokio::test]
async fn finds_a_server_and_skips_a_closed_port() {
    let open = serve(OPENAI_LIST).await;
    let closed = closed_port().await;
    let started = Instant::now();
    let servers =
        probe_ports(&[("LM Studio", "openai", open), ("llama.cpp", "llamacpp", closed)], Duration::from_millis(300))
            .await;
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(
        servers,
        vec![LocalServer {
            name: "LM Studio",
            provider: "openai",
            base_url: format!("http://127.0.0.1:{open}/v1"),
            models: vec!["qwen2.5-coder".into(), "phi4".into()],
        }]
    );
}

#[tokio::test]
async fn reads_ollama_tags_chunked_and_empty_lists() {
    let ollama = serve(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n{\"models\":[{\"nam\r\n13\r\ne\":\"llama3.1:8b\"}]}\r\n0\r\n\r\n",
    )
    .await;
    let empty = serve("HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\n{\"data\":[]}").await;
    let not_found = serve("HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\n\r\nnot found").await;
    let servers = probe_ports(
        &[("Ollama", "ollama", ollama), ("llama.cpp", "llamacpp", empty), ("Other", "openai", not_found)],
        Duration::from_millis(300),
    )
    .await;
    assert_eq!(servers.len(), 2, "{servers:?}");
    assert_eq!(servers[0].models, vec!["llama3.1:8b".to_owned()]);
    assert!(servers[1].models.is_empty());
}

#[tokio::test]
async fn a_silent_server_times_out() {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = listener.local_addr().expect("address").port();
    // Accepts (the kernel does) but never answers.
    let started = Instant::now();
    let servers = probe_ports(&[("Ollama", "ollama", port)], Duration::from_millis(100)).await;
    assert!(servers.is_empty());
    assert!(started.elapsed() < Duration::from_secs(2));
    drop(listener);
}

#[test]
fn parses_responses() {
    let (body, complete) = parse_response(OPENAI_LIST.as_bytes()).expect("2xx");
    assert_eq!(complete, Complete::Yes);
    assert_eq!(model_names(&serde_json::from_slice(&body).expect("json")), vec!["qwen2.5-coder", "phi4"]);
    assert!(parse_response(b"HTTP/1.1 200 OK\r\nContent-Len").is_none());
    assert!(parse_response(b"HTTP/1.1 500 Oops\r\n\r\n{}").is_none());
    let (_, complete) = parse_response(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{}").expect("2xx");
    assert_eq!(complete, Complete::Unknown);
}

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
    assert_eq!(
        onboarding.handle_key(key(KeyCode::Enter)),
        OnboardingAction::Choose {
            provider: "ollama".into(),
            base_url: "http://127.0.0.1:11434/v1".into(),
            model: "b".into()
        }
    );
    // A server without models can't be chosen.
    onboarding.handle_key(key(KeyCode::Down));
    assert_eq!(onboarding.selected, 1);
    onboarding.handle_key(key(KeyCode::Right));
    assert_eq!(onboarding.handle_key(key(KeyCode::Enter)), OnboardingAction::None);
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
