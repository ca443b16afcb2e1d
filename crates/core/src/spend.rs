//! What tools spend on model requests of their own (WebFetch's small model reading a page, WebSearch's search
//! request), so the session's usage, cost and `--max-budget-usd` count them like the conversation's requests,
//! and stream-json's `modelUsage` lists them under the model that made them.

use std::collections::BTreeMap;
use std::sync::Mutex;

use crate::conversation::Usage;

/// What tools spent on one model since the agent last took it.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelSpend {
    pub usage: Usage,
    /// `None` once a response had no price (a model whose prices are unknown).
    pub cost: Option<f64>,
    /// Server-side web searches, each charged apart from tokens.
    pub web_searches: u64,
}

impl Default for ModelSpend {
    fn default() -> Self {
        ModelSpend { usage: Usage::default(), cost: Some(0.0), web_searches: 0 }
    }
}

/// Tools' spending by model, until the agent takes it.
#[derive(Debug, Default)]
pub struct ToolSpend {
    spent: Mutex<BTreeMap<String, ModelSpend>>,
}

impl ToolSpend {
    fn with<T>(&self, change: impl FnOnce(&mut BTreeMap<String, ModelSpend>) -> T) -> T {
        change(&mut self.spent.lock().unwrap_or_else(|poisoned| poisoned.into_inner()))
    }

    /// Records one response of `model` (its prices as the session knows them: a local server's cost nothing).
    pub fn record(&self, model: &crate::models::ModelInfo, usage: &Usage) {
        let cost = model.cost(usage);
        self.with(|spent| {
            let entry = spent.entry(model.id.clone()).or_default();
            entry.usage.accumulate(usage);
            entry.cost = entry.cost.zip(cost).map(|(total, cost)| total + cost);
        });
    }

    /// Records `count` server-side searches `model` ran, at `price` each (none: unpriced).
    pub fn record_searches(&self, model: &crate::models::ModelInfo, count: u64, price: Option<f64>) {
        self.with(|spent| {
            let entry = spent.entry(model.id.clone()).or_default();
            entry.web_searches += count;
            entry.cost = entry.cost.zip(price).map(|(total, price)| total + count as f64 * price);
        });
    }

    /// What was recorded since the last call, by model.
    pub fn take(&self) -> BTreeMap<String, ModelSpend> {
        self.with(std::mem::take)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spending_is_taken_once_by_model_and_an_unpriced_model_makes_its_cost_unknown() {
        let spend = ToolSpend::default();
        let usage = Usage { input_tokens: 1_000_000, output_tokens: 0, ..Usage::default() };
        let haiku = crate::models::lookup("claude-haiku-4-5");
        spend.record(&haiku, &usage);
        spend.record_searches(&haiku, 2, Some(0.01));
        let taken = spend.take();
        let spent = &taken["claude-haiku-4-5"];
        assert_eq!((spent.usage.input_tokens, spent.web_searches), (1_000_000, 2));
        assert!(spent.cost.is_some_and(|cost| cost > 1.0), "{spent:?}");
        assert!(spend.take().is_empty());
        spend.record(&crate::models::lookup("some-local-model-nobody-prices"), &usage);
        assert_eq!(spend.take()["some-local-model-nobody-prices"].cost, None);
    }
}
