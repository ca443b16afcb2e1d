//! Model servers running on this machine (Ollama, llama.cpp, LM Studio), for the first-run screen.
//!
//! Each is asked for its model list with the project's HTTP client; every probe has one short timeout and all
//! run at once, so the screen fills in well under a second whether or not anything is listening.

use std::time::Duration;

use futures::future::join_all;
use serde_json::Value;

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
    // No proxy: these are this machine's ports, and a proxy from the environment must not see the probes.
    let Ok(client) = reqwest::Client::builder().no_proxy().timeout(timeout).build() else { return Vec::new() };
    let probes = targets.iter().map(|&(name, provider, port)| {
        let client = &client;
        async move {
            let models = tokio::time::timeout(timeout, probe_one(client, provider, port)).await.ok().flatten()?;
            Some(LocalServer { name, provider, base_url: format!("http://127.0.0.1:{port}/v1"), models })
        }
    });
    join_all(probes).await.into_iter().flatten().collect()
}

/// The model list of one server, or `None` when nothing model-like answers there.
async fn probe_one(client: &reqwest::Client, provider: &str, port: u16) -> Option<Vec<String>> {
    // Ollama's native list works on every version; /v1/models only on newer ones.
    let paths: &[&str] = if provider == "ollama" { &["/api/tags", "/v1/models"] } else { &["/v1/models"] };
    for path in paths {
        if let Some(body) = get_json(client, port, path).await {
            return Some(model_names(&body));
        }
    }
    None
}

/// GETs `path` from 127.0.0.1:`port`: the body of a 2xx JSON response of reasonable size.
async fn get_json(client: &reqwest::Client, port: u16, path: &str) -> Option<Value> {
    let mut response = client
        .get(format!("http://127.0.0.1:{port}{path}"))
        .header(reqwest::header::ACCEPT, "application/json")
        .send()
        .await
        .ok()?;
    if !response.status().is_success() {
        return None;
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.ok()? {
        body.extend_from_slice(&chunk);
        if body.len() > MAX_RESPONSE_BYTES {
            return None;
        }
    }
    serde_json::from_slice(&body).ok()
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

#[cfg(test)]
mod tests;
