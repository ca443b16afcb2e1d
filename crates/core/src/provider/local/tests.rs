//! The probe against throwaway servers on free ports: a list, chunked bodies, errors, silence.

use std::time::{Duration, Instant};

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
fn reads_both_list_shapes() {
    let openai = serde_json::json!({"object": "list", "data": [{"id": "qwen2.5-coder"}, {"id": "phi4"}]});
    assert_eq!(model_names(&openai), vec!["qwen2.5-coder", "phi4"]);
    let ollama = serde_json::json!({"models": [{"name": "llama3.1:8b"}]});
    assert_eq!(model_names(&ollama), vec!["llama3.1:8b"]);
}
