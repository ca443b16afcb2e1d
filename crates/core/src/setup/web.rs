//! The web tools a session offers: WebFetch always (its reader model when there is one), WebSearch when there is
//! somewhere to search (`[web_search]` in config.toml, or the Anthropic API's own search).

use std::sync::Arc;

use crate::config::{ConfigFile, WebSearchConfig};
use crate::models::{self, ModelInfo};
use crate::provider::{ApiKey, Endpoint, Provider, ProviderKind};
use crate::tools::Tool;
use crate::tools::web_fetch::WebFetchTool;
use crate::tools::web_search::{SearchBackend, WebSearchTool};
use crate::web::reader::PageReader;
use crate::web::search::anthropic::AnthropicSearch;
use crate::web::search::engines::{BRAVE_URL, Engine};

use super::SetupError;

/// The small, fast model Claude Code uses for pages, on Anthropic's own API.
const DEFAULT_SMALL_MODEL: &str = "claude-haiku-4-5";
/// Claude Code's variable naming the small, fast model.
const SMALL_MODEL_ENV: &str = "ANTHROPIC_SMALL_FAST_MODEL";
const BRAVE_KEY_ENV: &str = "BRAVE_API_KEY";

/// What the web tools are made from.
pub(super) struct WebInputs<'a> {
    pub(super) file: &'a ConfigFile,
    pub(super) endpoint: &'a Endpoint,
    pub(super) provider: &'a Arc<dyn Provider>,
    /// The session's model, with its prices as the session knows them.
    pub(super) model: &'a ModelInfo,
    pub(super) env: &'a dyn Fn(&str) -> Option<String>,
}

/// WebFetch, and WebSearch when a backend is configured or the provider searches itself.
pub(super) fn tools(inputs: &WebInputs, notices: &mut Vec<String>) -> Result<Vec<Arc<dyn Tool>>, SetupError> {
    let reader = small_model(inputs).map(|model| Arc::new(PageReader { provider: inputs.provider.clone(), model }));
    let mut tools: Vec<Arc<dyn Tool>> = vec![Arc::new(WebFetchTool { reader, ..WebFetchTool::default() })];
    if let Some(backend) = search_backend(inputs, notices)? {
        tools.push(Arc::new(WebSearchTool { backend }));
    }
    Ok(tools)
}

/// `small_model` in config.toml ("" for none), else `ANTHROPIC_SMALL_FAST_MODEL` on an Anthropic provider, else
/// Haiku on Anthropic's own API. Other providers have none unless one is named: the page's Markdown is returned.
fn small_model(inputs: &WebInputs) -> Option<ModelInfo> {
    let anthropic = inputs.endpoint.kind == ProviderKind::Anthropic;
    let named = match &inputs.file.small_model {
        Some(name) => Some(name.trim().to_owned()),
        None if anthropic => (inputs.env)(SMALL_MODEL_ENV)
            .map(|name| name.trim().to_owned())
            .or_else(|| inputs.endpoint.base_url.contains("api.anthropic.com").then(|| DEFAULT_SMALL_MODEL.to_owned())),
        None => None,
    }?;
    if named.is_empty() {
        return None;
    }
    let mut model = models::lookup(&named);
    if inputs.model.prices == Some(models::Prices::LOCAL) {
        // The same local server: free too.
        model.prices = Some(models::Prices::LOCAL);
    }
    Some(model)
}

fn search_backend(inputs: &WebInputs, notices: &mut Vec<String>) -> Result<Option<SearchBackend>, SetupError> {
    let anthropic =
        || SearchBackend::Anthropic(AnthropicSearch { endpoint: inputs.endpoint.clone(), model: inputs.model.clone() });
    let Some(config) = &inputs.file.web_search else {
        return Ok((inputs.endpoint.kind == ProviderKind::Anthropic).then(anthropic));
    };
    let WebSearchConfig { backend, url, api_key_env } = config;
    let url = url.as_deref().map(str::trim).filter(|url| !url.is_empty());
    match backend.trim() {
        "off" => Ok(None),
        "anthropic" if inputs.endpoint.kind == ProviderKind::Anthropic => Ok(Some(anthropic())),
        "anthropic" => {
            notices.push(format!(
                "WebSearch: [web_search] backend = \"anthropic\" needs an Anthropic provider, and {} is not one; WebSearch is not offered",
                inputs.endpoint.name
            ));
            Ok(None)
        }
        "searxng" => match url {
            Some(url) => Ok(Some(SearchBackend::Engine(Engine::Searxng { url: url.to_owned() }))),
            None => Err(SetupError(
                "[web_search] backend = \"searxng\" in config.toml needs url = \"…\" (the instance's address)".into(),
            )),
        },
        "brave" => {
            let key_env = api_key_env.clone().unwrap_or_else(|| BRAVE_KEY_ENV.to_owned());
            match (inputs.env)(&key_env).filter(|key| !key.trim().is_empty()) {
                Some(key) => Ok(Some(SearchBackend::Engine(Engine::Brave {
                    url: url.unwrap_or(BRAVE_URL).to_owned(),
                    key: ApiKey::new(key.trim()),
                    key_env,
                }))),
                None => {
                    notices.push(format!(
                        "WebSearch: [web_search] backend = \"brave\" needs its key in {key_env}, which is not set; WebSearch is not offered"
                    ));
                    Ok(None)
                }
            }
        }
        other => Err(SetupError(format!(
            "[web_search] backend = {other:?} in config.toml: use \"anthropic\", \"searxng\", \"brave\" or \"off\""
        ))),
    }
}
