//! What a local server says its model can hold. assets/models.toml knows hosted models; a llama.cpp server
//! started with `-c 512`, a vLLM with `--max-model-len`, an Ollama model with its `num_ctx` do not match any table,
//! so tandem asks the server: llama.cpp's `/props` (`n_ctx`), vLLM's `/v1/models` (`max_model_len`), Ollama's
//! `/api/show` (`num_ctx`, else the model's `context_length`), LM Studio's `/api/v0/models` (the loaded context).
//! Every probe runs at once with a short timeout; a server that answers none of them keeps the defaults.

use std::time::Duration;

use serde_json::{Value, json};

use super::Endpoint;

/// How long one probe may take (local servers answer in milliseconds; a closed port fails at once).
pub const PROBE_TIMEOUT: Duration = Duration::from_millis(1500);

/// Largest probe answer read.
const MAX_BODY: usize = 4 << 20;

/// What the server reported.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerLimits {
    pub context_window: u64,
    /// Which server said so, for the notice ("llama.cpp", "vLLM", "Ollama", "LM Studio").
    pub source: &'static str,
}

/// Whether a base URL is a server on this machine (the only ones probed: a hosted API has its models in the
/// table, and tandem does not send extra requests to it).
pub fn is_local(base_url: &str) -> bool {
    let rest = base_url.split_once("://").map_or(base_url, |(_, rest)| rest);
    let host = rest.split(['/', ':']).next().unwrap_or_default();
    host == "localhost" || host.starts_with("127.") || rest.starts_with("[::1]")
}

/// Asks the server behind `endpoint` (an OpenAI-compatible base URL, `…/v1`) about `model`.
pub async fn discover(endpoint: &Endpoint, model: &str) -> Option<ServerLimits> {
    let base = endpoint.base_url.trim_end_matches('/');
    let root = base.strip_suffix("/v1").unwrap_or(base);
    let client = reqwest::Client::builder()
        .no_proxy()
        .timeout(PROBE_TIMEOUT)
        .user_agent(super::transport::USER_AGENT)
        .build()
        .ok()?;
    let get = |url: String| {
        let client = client.clone();
        async move { read_json(client.get(url)).await }
    };
    let (props, models, lmstudio, show) = futures::join!(
        get(format!("{root}/props")),
        get(format!("{base}/models")),
        get(format!("{root}/api/v0/models")),
        read_json(client.post(format!("{root}/api/show")).json(&json!({"model": model}))),
    );
    let found = [
        props.as_ref().and_then(llamacpp_context).map(|n| (n, "llama.cpp")),
        models.as_ref().and_then(|models| vllm_context(models, model)).map(|n| (n, "vLLM")),
        show.as_ref().and_then(ollama_context).map(|n| (n, "Ollama")),
        lmstudio.as_ref().and_then(|models| lmstudio_context(models, model)).map(|n| (n, "LM Studio")),
    ];
    found
        .into_iter()
        .flatten()
        .find(|(context, _)| *context > 0)
        .map(|(context_window, source)| ServerLimits { context_window, source })
}

async fn read_json(request: reqwest::RequestBuilder) -> Option<Value> {
    let response = request.send().await.ok()?;
    if !response.status().is_success() {
        return None;
    }
    let bytes = response.bytes().await.ok()?;
    if bytes.len() > MAX_BODY {
        return None;
    }
    serde_json::from_slice(&bytes).ok()
}

/// llama.cpp's `/props`: `default_generation_settings.n_ctx` (older servers: top-level `n_ctx`).
fn llamacpp_context(props: &Value) -> Option<u64> {
    props
        .pointer("/default_generation_settings/n_ctx")
        .or_else(|| props.pointer("/default_generation_settings/params/n_ctx"))
        .or_else(|| props.get("n_ctx"))
        .and_then(Value::as_u64)
}

/// vLLM's `/v1/models`: the entry of `model` (or the only one) has `max_model_len`.
fn vllm_context(models: &Value, model: &str) -> Option<u64> {
    let data = models.get("data")?.as_array()?;
    let entry = data.iter().find(|entry| entry.get("id").and_then(Value::as_str) == Some(model));
    let entry = entry.or_else(|| if data.len() == 1 { data.first() } else { None })?;
    entry.get("max_model_len").and_then(Value::as_u64)
}

/// Ollama's `/api/show`: a `num_ctx` in the model's parameters is what it runs with; else `<arch>.context_length`.
fn ollama_context(show: &Value) -> Option<u64> {
    let from_parameters = show.get("parameters").and_then(Value::as_str).and_then(|parameters| {
        parameters.lines().find_map(|line| {
            let mut words = line.split_whitespace();
            (words.next() == Some("num_ctx")).then(|| words.next()?.parse().ok()).flatten()
        })
    });
    from_parameters.or_else(|| {
        let info = show.get("model_info")?.as_object()?;
        info.iter().find(|(key, _)| key.ends_with(".context_length")).and_then(|(_, value)| value.as_u64())
    })
}

/// LM Studio's `/api/v0/models`: the loaded context of `model`, else its maximum.
fn lmstudio_context(models: &Value, model: &str) -> Option<u64> {
    let entry =
        models.get("data")?.as_array()?.iter().find(|entry| entry.get("id").and_then(Value::as_str) == Some(model))?;
    entry.get("loaded_context_length").or_else(|| entry.get("max_context_length")).and_then(Value::as_u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_servers_answer_is_read() {
        assert_eq!(llamacpp_context(&json!({"default_generation_settings": {"n_ctx": 512}})), Some(512));
        assert_eq!(llamacpp_context(&json!({"n_ctx": 2048})), Some(2048));
        let models = json!({"data": [{"id": "qwen", "max_model_len": 4096}]});
        assert_eq!(vllm_context(&models, "qwen"), Some(4096));
        assert_eq!(vllm_context(&models, "other"), Some(4096), "the only model served");
        let show =
            json!({"parameters": "stop \"<|im_end|>\"\nnum_ctx 8192", "model_info": {"qwen2.context_length": 32768}});
        assert_eq!(ollama_context(&show), Some(8192));
        assert_eq!(ollama_context(&json!({"model_info": {"llama.context_length": 131072}})), Some(131072));
        let lm = json!({"data": [{"id": "m", "max_context_length": 32768, "loaded_context_length": 4096}]});
        assert_eq!(lmstudio_context(&lm, "m"), Some(4096));
    }
}
