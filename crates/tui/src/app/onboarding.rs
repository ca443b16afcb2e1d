//! The first-run screen when no provider is configured: finds local model servers and lets the user pick one.
//!
//! The probe is a tiny HTTP/1.1 GET over a `TcpStream` (no HTTP client dependency for three requests to
//! localhost). Each server gets one short timeout, and all are probed at once, so the screen fills in well
//! under a second whether or not anything is listening.

use std::path::PathBuf;
use std::time::Duration;

use futures::future::join_all;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The servers probed, as (display name, tandem provider name, port on 127.0.0.1).
pub const LOCAL_SERVERS: [(&str, &str, u16); 3] =
    [("Ollama", "ollama", 11434), ("llama.cpp", "llamacpp", 8080), ("LM Studio", "openai", 1234)];

/// Long enough for a local server to answer, short enough that the screen doesn't wait on closed ports.
pub const PROBE_TIMEOUT: Duration = Duration::from_millis(300);

/// A response bigger than this is not a model list.
const MAX_RESPONSE_BYTES: usize = 1 << 20;

/// A model server found on this machine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LocalServer {
    /// "Ollama", "llama.cpp" or "LM Studio".
    pub name: &'static str,
    /// The provider to start tandem with: "ollama", "llamacpp", or "openai" (LM Studio, with `base_url`).
    pub provider: &'static str,
    /// Its OpenAI-compatible endpoint, e.g. `http://127.0.0.1:1234/v1`.
    pub base_url: String,
    /// The models it offers (empty when it answered but has none loaded).
    pub models: Vec<String>,
}

/// Probes Ollama (11434), llama.cpp (8080) and LM Studio (1234) on 127.0.0.1, all at once.
pub async fn probe_local_servers(timeout: Duration) -> Vec<LocalServer> {
    probe_ports(&LOCAL_SERVERS, timeout).await
}

/// Probes each (name, provider, port) on 127.0.0.1 concurrently; `timeout` bounds each probe. Servers that
/// answer with a JSON model list (possibly empty) are returned in the order given.
pub async fn probe_ports(targets: &[(&'static str, &'static str, u16)], timeout: Duration) -> Vec<LocalServer> {
    let probes = targets.iter().map(|&(name, provider, port)| async move {
        let models = tokio::time::timeout(timeout, probe_one(provider, port)).await.ok().flatten()?;
        Some(LocalServer { name, provider, base_url: format!("http://127.0.0.1:{port}/v1"), models })
    });
    join_all(probes).await.into_iter().flatten().collect()
}

/// The model list of one server, or `None` when nothing model-like answers there.
async fn probe_one(provider: &str, port: u16) -> Option<Vec<String>> {
    // Ollama's native list works on every version; /v1/models only on newer ones.
    let paths: &[&str] = if provider == "ollama" { &["/api/tags", "/v1/models"] } else { &["/v1/models"] };
    for path in paths {
        if let Some(body) = http_get(port, path).await {
            return Some(model_names(&body));
        }
    }
    None
}

/// GETs `path` from 127.0.0.1:`port` and returns the body of a 2xx JSON response.
async fn http_get(port: u16, path: &str) -> Option<Value> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).await.ok()?;
    let request = format!(
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: application/json\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).await.ok()?;
    let mut received = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        let read = stream.read(&mut chunk).await.ok()?;
        if read == 0 {
            break;
        }
        received.extend_from_slice(&chunk[..read]);
        if received.len() > MAX_RESPONSE_BYTES {
            return None;
        }
        // A server that keeps the connection open despite `Connection: close` is done once the body is.
        if let Some(Complete::Yes) = parse_response(&received).map(|(_, complete)| complete) {
            break;
        }
    }
    let (body, _) = parse_response(&received)?;
    serde_json::from_slice(&body).ok()
}

/// Whether a response has all of its body.
#[derive(Debug, PartialEq)]
enum Complete {
    Yes,
    /// More may follow (or the body is delimited by the connection closing).
    Unknown,
}

/// Splits a 2xx HTTP/1.1 response into its (decoded) body and whether it is complete. `None` for other
/// statuses, or when the headers haven't all arrived.
fn parse_response(bytes: &[u8]) -> Option<(Vec<u8>, Complete)> {
    let header_end = bytes.windows(4).position(|window| window == b"\r\n\r\n")?;
    let head = std::str::from_utf8(&bytes[..header_end]).ok()?;
    let body = &bytes[header_end + 4..];
    let mut lines = head.split("\r\n");
    let status: u16 = lines.next()?.split_whitespace().nth(1)?.parse().ok()?;
    if !(200..300).contains(&status) {
        return None;
    }
    let mut content_length = None;
    let mut chunked = false;
    for line in lines {
        let Some((name, value)) = line.split_once(':') else { continue };
        let value = value.trim();
        if name.eq_ignore_ascii_case("content-length") {
            content_length = value.parse::<usize>().ok();
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            chunked = value.to_ascii_lowercase().contains("chunked");
        }
    }
    if chunked {
        return Some(decode_chunked(body));
    }
    match content_length {
        Some(length) if body.len() >= length => Some((body[..length].to_vec(), Complete::Yes)),
        _ => Some((body.to_vec(), Complete::Unknown)),
    }
}

/// Decodes a chunked body as far as it has arrived.
fn decode_chunked(mut body: &[u8]) -> (Vec<u8>, Complete) {
    let mut out = Vec::new();
    loop {
        let Some(line_end) = body.windows(2).position(|window| window == b"\r\n") else {
            return (out, Complete::Unknown);
        };
        let size_text = std::str::from_utf8(&body[..line_end]).unwrap_or("");
        let size_text = size_text.split(';').next().unwrap_or("").trim();
        let Ok(size) = usize::from_str_radix(size_text, 16) else { return (out, Complete::Unknown) };
        if size == 0 {
            return (out, Complete::Yes);
        }
        let data = &body[line_end + 2..];
        if data.len() < size {
            out.extend_from_slice(data);
            return (out, Complete::Unknown);
        }
        out.extend_from_slice(&data[..size]);
        body = data.get(size + 2..).unwrap_or(&[]);
    }
}

/// Model names from an OpenAI-style list (`data[].id`) or Ollama's (`models[].name`).
fn model_names(body: &Value) -> Vec<String> {
    let field = |list: &str, key: &str| -> Vec<String> {
        let items = body.get(list).and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        items.iter().filter_map(|item| item.get(key).and_then(Value::as_str)).map(str::to_owned).collect()
    };
    let mut names = field("data", "id");
    for name in field("models", "name") {
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

/// What a key on the onboarding screen asks the app to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OnboardingAction {
    None,
    /// Start a session with this local server and model.
    Choose {
        provider: String,
        base_url: String,
        model: String,
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
}

impl Onboarding {
    /// A screen that is probing; feed the probe's result to [`Onboarding::set_servers`].
    pub fn new(config_file: PathBuf) -> Onboarding {
        Onboarding { servers: Vec::new(), selected: 0, probing: true, config_file }
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

    /// Up/Down (or k/j) pick a server, Left/Right (or h/l) cycle its models (the current model is always
    /// the list's first, so no extra state is needed), Enter uses the server with that model, `r` rescans,
    /// `q`, Esc or Ctrl+C quit.
    pub fn handle_key(&mut self, key: KeyEvent) -> OnboardingAction {
        if key.kind == KeyEventKind::Release {
            return OnboardingAction::None;
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
            KeyCode::Enter => match self.selected_server() {
                Some(server) if !self.probing => match server.models.first() {
                    Some(model) => OnboardingAction::Choose {
                        provider: server.provider.to_owned(),
                        base_url: server.base_url.clone(),
                        model: model.clone(),
                    },
                    None => OnboardingAction::None,
                },
                _ => OnboardingAction::None,
            },
            _ => OnboardingAction::None,
        }
    }
}

#[cfg(test)]
mod tests;
