//! What tools spend on model requests of their own (WebFetch's small model reading a page, WebSearch's search
//! request), so the session's usage, cost and `--max-budget-usd` count them like the conversation's requests.

use std::sync::Mutex;

use crate::conversation::Usage;

/// Usage and cost recorded by tools since the agent last took them; the cost is `None` once a model without
/// prices was used.
#[derive(Debug)]
pub struct ToolSpend {
    spent: Mutex<(Usage, Option<f64>)>,
}

impl Default for ToolSpend {
    fn default() -> Self {
        ToolSpend { spent: Mutex::new((Usage::default(), Some(0.0))) }
    }
}

impl ToolSpend {
    /// Records one response of `model` (its prices as the session knows them: a local server's cost nothing).
    pub fn record(&self, model: &crate::models::ModelInfo, usage: &Usage) {
        let cost = model.cost(usage);
        let mut spent = self.spent.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        spent.0.accumulate(usage);
        spent.1 = spent.1.zip(cost).map(|(total, cost)| total + cost);
    }

    /// Records a charge that is not for tokens (Anthropic's price per web search).
    pub fn record_cost(&self, cost: f64) {
        let mut spent = self.spent.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        spent.1 = spent.1.map(|total| total + cost);
    }

    /// What was recorded since the last call.
    pub fn take(&self) -> (Usage, Option<f64>) {
        let mut spent = self.spent.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        std::mem::replace(&mut *spent, (Usage::default(), Some(0.0)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spending_is_taken_once_and_an_unpriced_model_makes_the_cost_unknown() {
        let spend = ToolSpend::default();
        let usage = Usage { input_tokens: 1_000_000, output_tokens: 0, ..Usage::default() };
        spend.record(&crate::models::lookup("claude-haiku-4-5"), &usage);
        let (taken, cost) = spend.take();
        assert_eq!(taken.input_tokens, 1_000_000);
        assert!(cost.is_some_and(|cost| cost > 0.0), "{cost:?}");
        assert_eq!(spend.take().0.input_tokens, 0);
        spend.record(&crate::models::lookup("some-local-model-nobody-prices"), &usage);
        assert_eq!(spend.take().1, None);
    }
}
