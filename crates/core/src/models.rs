//! Model facts (context window, output limit, prices) from `assets/models.toml`, compiled in.

use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use crate::conversation::Usage;

const MODELS_TOML: &str = include_str!("../../../assets/models.toml");

/// The wire protocol a provider speaks (here, below the providers, since which models a kind offers is
/// known here).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    Anthropic,
    #[serde(alias = "openai-compatible", alias = "openai_compatible")]
    Openai,
}

/// US dollars per million tokens.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
pub struct Prices {
    pub input: f64,
    pub output: f64,
    pub cache_write: f64,
    pub cache_read: f64,
}

impl Prices {
    /// Free: models served on the user's own machine.
    pub const LOCAL: Prices = Prices { input: 0.0, output: 0.0, cache_write: 0.0, cache_read: 0.0 };

    pub fn cost(&self, usage: &Usage) -> f64 {
        (usage.input_tokens as f64 * self.input
            + usage.output_tokens as f64 * self.output
            + usage.cache_creation_input_tokens as f64 * self.cache_write
            + usage.cache_read_input_tokens as f64 * self.cache_read)
            / 1_000_000.0
    }
}

/// What tandem knows about a model.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelInfo {
    /// The id sent to the API: as the user gave it, except that an alias of the table (`sonnet`, `opus`,
    /// `haiku`, `claude-sonnet-4.5`…) given without a `vendor/` prefix becomes the model's full id.
    pub id: String,
    pub context_window: u64,
    pub max_output_tokens: u64,
    /// `None`: the price is unknown, and costs are shown as unknown.
    pub prices: Option<Prices>,
    /// Whether the id was found in the table (otherwise the defaults were used).
    pub known: bool,
    /// What kind of extended thinking it takes (Claude models).
    pub thinking: ThinkingSupport,
    /// It takes `output_config.effort` (Claude models).
    pub effort: bool,
    /// It takes `reasoning_effort` (OpenAI-compatible reasoning models).
    pub reasoning_effort: bool,
}

/// What kind of extended thinking a model takes (`thinking` in assets/models.toml).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ThinkingSupport {
    /// Not in the table: what the user asks for is sent as asked.
    #[default]
    Unknown,
    /// It does not think.
    None,
    /// `thinking: {type: enabled, budget_tokens}`.
    Budget,
    /// `thinking: {type: adaptive}` as well as a budget.
    Adaptive,
}

impl ModelInfo {
    /// The cost of some usage, or `None` when the model's prices are unknown.
    pub fn cost(&self, usage: &Usage) -> Option<f64> {
        self.prices.map(|prices| prices.cost(usage))
    }

    /// The `max_tokens` to request: the model's limit, capped so a reply can't run for ever.
    pub fn request_max_tokens(&self) -> u32 {
        self.max_output_tokens.min(32_000) as u32
    }
}

#[derive(Deserialize)]
struct Table {
    defaults: Defaults,
    model: Vec<Entry>,
}

#[derive(Deserialize)]
struct Defaults {
    context_window: u64,
    max_output_tokens: u64,
}

#[derive(Deserialize)]
struct Entry {
    id: String,
    #[serde(default)]
    aliases: Vec<String>,
    context_window: u64,
    max_output_tokens: u64,
    prices: Option<Prices>,
    #[serde(default)]
    thinking: Option<ThinkingSupport>,
    #[serde(default)]
    effort: bool,
    #[serde(default)]
    reasoning_effort: bool,
}

fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    // The table is checked by a test; a broken one leaves every model unknown rather than stopping tandem.
    TABLE.get_or_init(|| {
        toml::from_str(MODELS_TOML).unwrap_or_else(|error| {
            tracing::error!("assets/models.toml does not parse: {error}");
            Table { defaults: Defaults { context_window: 128_000, max_output_tokens: 8192 }, model: Vec::new() }
        })
    })
}

/// The default context window for a model the table doesn't know.
pub fn default_context_window() -> u64 {
    table().defaults.context_window
}

/// The table's models for a provider of `kind` (for the `/model` picker): Claude models for Anthropic's API,
/// the others for OpenAI-compatible servers.
pub fn models_for(kind: ProviderKind) -> Vec<String> {
    let claude = |id: &str| id.starts_with("claude-");
    table()
        .model
        .iter()
        .filter(|entry| match kind {
            ProviderKind::Anthropic => claude(&entry.id),
            ProviderKind::Openai => !claude(&entry.id),
        })
        .map(|entry| entry.id.clone())
        .collect()
}

/// Whether what follows a table id names another version rather than a snapshot of it: `claude-opus-4-7` is not
/// `claude-opus-4` (a remainder of one or two digits is a minor version), `claude-opus-4-20250514` is.
fn is_next_version(rest: &str) -> bool {
    let digits: String = rest[1..].chars().take_while(char::is_ascii_digit).collect();
    let after = &rest[1 + digits.len()..];
    rest.starts_with('-') && (1..=2).contains(&digits.len()) && (after.is_empty() || after.starts_with(['-', '@', '.']))
}

/// Looks a model up by id, alias, or longest matching id prefix; a `vendor/` prefix is ignored.
pub fn lookup(model_id: &str) -> ModelInfo {
    let table = table();
    let bare = model_id.rsplit('/').next().unwrap_or(model_id).to_ascii_lowercase();
    let bare = bare.split(':').next().unwrap_or(&bare).to_owned();
    let exact = table.model.iter().find(|entry| entry.id == bare || entry.aliases.contains(&bare));
    let entry = exact.or_else(|| {
        table
            .model
            .iter()
            .filter(|entry| {
                bare.starts_with(&entry.id)
                    && bare[entry.id.len()..].starts_with(['-', '.', '@', '_'])
                    && !is_next_version(&bare[entry.id.len()..])
                    || entry
                        .aliases
                        .iter()
                        .any(|alias| bare.starts_with(alias.as_str()) && bare[alias.len()..].starts_with(['-', '@']))
            })
            .max_by_key(|entry| entry.id.len())
    });
    let is_alias = !model_id.contains('/') && exact.is_some_and(|entry| entry.id != bare);
    match entry {
        Some(entry) => ModelInfo {
            id: if is_alias { entry.id.clone() } else { model_id.to_owned() },
            context_window: entry.context_window,
            max_output_tokens: entry.max_output_tokens,
            prices: entry.prices,
            known: true,
            thinking: entry.thinking.unwrap_or(ThinkingSupport::None),
            effort: entry.effort,
            reasoning_effort: entry.reasoning_effort,
        },
        None => ModelInfo {
            id: model_id.to_owned(),
            context_window: table.defaults.context_window,
            max_output_tokens: table.defaults.max_output_tokens,
            prices: None,
            known: false,
            // A Claude model newer than the table may think; another unknown model is not sent thinking.
            thinking: if bare.starts_with("claude-") { ThinkingSupport::Unknown } else { ThinkingSupport::None },
            effort: false,
            reasoning_effort: false,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_aliases_become_full_ids_before_anything_is_sent() {
        assert_eq!(lookup("sonnet").id, "claude-sonnet-4-5");
        assert_eq!(lookup("opus").id, "claude-opus-4-5");
        assert_eq!(lookup("haiku").id, "claude-haiku-4-5");
        assert_eq!(lookup("Sonnet").id, "claude-sonnet-4-5");
        // Full ids, dated snapshots and vendor-prefixed ids are sent as given.
        assert_eq!(lookup("claude-sonnet-4-5-20250929").id, "claude-sonnet-4-5-20250929");
        assert_eq!(lookup("anthropic/claude-sonnet-4.5").id, "anthropic/claude-sonnet-4.5");
        assert_eq!(lookup("my-local-model").id, "my-local-model");
    }

    /// The models a provider of `kind` serves, for a picker.
    #[test]
    fn models_are_listed_per_provider_kind() {
        let anthropic = models_for(ProviderKind::Anthropic);
        assert!(anthropic.iter().any(|model| model == "claude-sonnet-4-5"));
        assert!(anthropic.iter().all(|model| model.starts_with("claude-")));
        assert!(!models_for(ProviderKind::Openai).iter().any(|model| model.starts_with("claude-")));
    }

    #[test]
    fn table_parses_and_finds_models() {
        let sonnet = lookup("claude-sonnet-4-5-20250929");
        assert!(sonnet.known);
        assert_eq!(sonnet.context_window, 200_000);
        assert_eq!(lookup("anthropic/claude-sonnet-4.5").prices, sonnet.prices);
        assert_eq!(lookup("claude-sonnet-4-20250514").id, "claude-sonnet-4-20250514");
        assert_eq!(lookup("claude-sonnet-4-20250514").prices.unwrap().input, 3.0);
        // A newer minor version is not a snapshot of the older one.
        assert!(!lookup("claude-opus-4-7").known);
        assert!(!lookup("claude-sonnet-4-6-20260101").known);
        assert!(lookup("claude-opus-4-1-20250805").known);
        assert_eq!(lookup("gpt-4o-mini").prices.unwrap().input, 0.15);
        assert_eq!(lookup("gpt-4o").prices.unwrap().input, 2.5);
        assert_eq!(lookup("qwen2.5-coder:7b").context_window, 32768);
    }

    #[test]
    fn unknown_models_have_unknown_cost() {
        let info = lookup("my-private-model");
        assert!(!info.known);
        assert_eq!(info.prices, None);
        assert_eq!(info.cost(&Usage { input_tokens: 10, ..Default::default() }), None);
        assert_eq!(info.context_window, default_context_window());
    }

    #[test]
    fn cost_uses_every_token_kind() {
        let prices = Prices { input: 3.0, output: 15.0, cache_write: 3.75, cache_read: 0.3 };
        let usage = Usage {
            input_tokens: 1_000_000,
            output_tokens: 1_000_000,
            cache_creation_input_tokens: 1_000_000,
            cache_read_input_tokens: 1_000_000,
        };
        assert!((prices.cost(&usage) - 22.05).abs() < 1e-9);
    }
}
