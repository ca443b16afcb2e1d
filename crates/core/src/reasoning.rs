//! Extended thinking and effort: what the user asked for (`--thinking`, `--max-thinking-tokens`, `--effort`,
//! config.toml, `/effort`), turned into what a request to a given model carries. Claude models take
//! `thinking` (a token budget, or adaptive on newer ones) and `output_config.effort`; OpenAI-compatible models
//! that reason take `reasoning_effort`. What a model does not take is left out and said once, never sent to
//! fail: assets/models.toml says which model takes what.

use serde::{Deserialize, Serialize};

use crate::models::ProviderKind;
use crate::models::{ModelInfo, ThinkingSupport};
pub use tandem_protocol::Effort;

/// OpenAI's `reasoning_effort` has three levels: the two highest of ours ask for its highest.
fn openai_effort(effort: Effort) -> &'static str {
    match effort {
        Effort::Low => "low",
        Effort::Medium => "medium",
        Effort::High | Effort::Xhigh | Effort::Max => "high",
    }
}

/// `--thinking`: whether the model thinks before it answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ThinkingMode {
    /// The model decides when and how much (newer Claude models).
    Adaptive,
    /// Always, with a token budget.
    Enabled,
    Disabled,
}

impl ThinkingMode {
    pub fn parse(text: &str) -> Option<ThinkingMode> {
        match text.trim().to_ascii_lowercase().as_str() {
            "adaptive" => Some(ThinkingMode::Adaptive),
            "enabled" | "on" => Some(ThinkingMode::Enabled),
            "disabled" | "off" => Some(ThinkingMode::Disabled),
            _ => None,
        }
    }
}

/// What the session asks for, whatever the model.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reasoning {
    pub thinking: Option<ThinkingMode>,
    /// `--max-thinking-tokens`: the budget of `enabled` thinking (and, alone, enables it).
    pub budget_tokens: Option<u32>,
    pub effort: Option<Effort>,
    /// `--thinking-display`: `summarized` or `omitted` (adaptive thinking on Claude).
    pub display: Option<String>,
}

/// The `thinking` parameter of an Anthropic request.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum ThinkingParam {
    Enabled {
        budget_tokens: u32,
    },
    Adaptive {
        #[serde(skip_serializing_if = "Option::is_none")]
        display: Option<String>,
    },
    Disabled,
}

/// What one request carries for reasoning.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RequestReasoning {
    pub thinking: Option<ThinkingParam>,
    /// Anthropic's `output_config.effort`.
    pub effort: Option<Effort>,
    /// OpenAI's `reasoning_effort`.
    pub reasoning_effort: Option<&'static str>,
    /// Anthropic beta headers these need.
    pub betas: Vec<&'static str>,
    /// The `max_tokens` the request needs at least (a thinking budget counts toward it).
    pub min_max_tokens: Option<u32>,
}

/// The budget used when thinking is enabled without one.
pub const DEFAULT_BUDGET: u32 = 16_000;
/// The smallest budget Anthropic accepts.
pub const MIN_BUDGET: u32 = 1024;
/// Room left for the answer beside a thinking budget.
const ANSWER_ROOM: u32 = 4096;
/// Needed for thinking between tool calls with budgeted thinking (adaptive thinking interleaves by itself).
pub const INTERLEAVED_THINKING_BETA: &str = "interleaved-thinking-2025-05-14";
/// Enables `output_config.effort` (Claude Code sends it with every request that sets an effort).
pub const EFFORT_BETA: &str = "effort-2025-11-24";

impl Reasoning {
    /// Whether anything was asked for.
    pub fn is_set(&self) -> bool {
        self.thinking.is_some() || self.budget_tokens.is_some() || self.effort.is_some()
    }

    /// What a request to `model` on a provider of `kind` carries, and what had to be left out (for a notice).
    pub fn for_model(&self, model: &ModelInfo, kind: ProviderKind, has_tools: bool) -> (RequestReasoning, Vec<String>) {
        let mut out = RequestReasoning::default();
        let mut notes = Vec::new();
        match kind {
            ProviderKind::Openai => {
                if self.thinking.is_some() || self.budget_tokens.is_some() {
                    notes.push(format!(
                        "{} is served by an OpenAI-compatible API, which takes no thinking budget: only the effort is sent",
                        model.id
                    ));
                }
                if let Some(effort) = self.effort {
                    if model.reasoning_effort {
                        out.reasoning_effort = Some(openai_effort(effort));
                    } else {
                        notes.push(format!(
                            "{} does not take reasoning_effort (assets/models.toml); the effort is not sent",
                            model.id
                        ));
                    }
                }
            }
            ProviderKind::Anthropic => self.anthropic(model, has_tools, &mut out, &mut notes),
        }
        (out, notes)
    }

    fn anthropic(&self, model: &ModelInfo, has_tools: bool, out: &mut RequestReasoning, notes: &mut Vec<String>) {
        let mode = match (self.thinking, self.budget_tokens) {
            (Some(mode), _) => Some(mode),
            (None, Some(0)) => Some(ThinkingMode::Disabled),
            (None, Some(_)) => Some(ThinkingMode::Enabled),
            (None, None) => None,
        };
        let support = model.thinking;
        let budget = |notes: &mut Vec<String>| {
            let wanted = self.budget_tokens.filter(|budget| *budget > 0).unwrap_or(DEFAULT_BUDGET);
            let most = (model.max_output_tokens as u32).saturating_sub(ANSWER_ROOM).max(MIN_BUDGET);
            let budget = wanted.clamp(MIN_BUDGET, most);
            if budget != wanted {
                notes.push(format!("a thinking budget of {wanted} tokens does not fit {}: {budget} is used", model.id));
            }
            budget
        };
        match (mode, support) {
            (None, _) => {}
            (Some(_), ThinkingSupport::None) => {
                notes.push(format!("{} does not think (assets/models.toml); thinking is not requested", model.id))
            }
            (Some(ThinkingMode::Disabled), ThinkingSupport::Adaptive | ThinkingSupport::Unknown) => {
                out.thinking = Some(ThinkingParam::Disabled)
            }
            // Thinking is off unless asked for on models that only take a budget.
            (Some(ThinkingMode::Disabled), ThinkingSupport::Budget) => {}
            (Some(ThinkingMode::Adaptive), ThinkingSupport::Budget) => {
                let budget_tokens = budget(notes);
                notes.push(format!(
                    "{} has no adaptive thinking: it thinks with a budget of {budget_tokens} tokens",
                    model.id
                ));
                out.thinking = Some(ThinkingParam::Enabled { budget_tokens });
            }
            (Some(ThinkingMode::Adaptive), _) => {
                out.thinking = Some(ThinkingParam::Adaptive { display: self.display.clone() })
            }
            (Some(ThinkingMode::Enabled), _) => {
                let budget_tokens = budget(notes);
                out.thinking = Some(ThinkingParam::Enabled { budget_tokens });
            }
        }
        if let Some(ThinkingParam::Enabled { budget_tokens }) = out.thinking {
            out.min_max_tokens = Some(budget_tokens + ANSWER_ROOM);
            if has_tools {
                out.betas.push(INTERLEAVED_THINKING_BETA);
            }
        }
        if let Some(effort) = self.effort {
            if model.effort || support == ThinkingSupport::Unknown {
                out.effort = Some(effort);
                out.betas.push(EFFORT_BETA);
            } else {
                notes.push(format!("{} does not take an effort level (assets/models.toml); it is not sent", model.id));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(id: &str) -> ModelInfo {
        crate::models::lookup(id)
    }

    #[test]
    fn a_budget_model_gets_enabled_thinking_with_room_for_the_answer() {
        let reasoning = Reasoning { budget_tokens: Some(8000), ..Reasoning::default() };
        let (out, notes) = reasoning.for_model(&model("claude-sonnet-4-5"), ProviderKind::Anthropic, true);
        assert_eq!(out.thinking, Some(ThinkingParam::Enabled { budget_tokens: 8000 }));
        assert_eq!(out.min_max_tokens, Some(8000 + ANSWER_ROOM));
        assert_eq!(out.betas, [INTERLEAVED_THINKING_BETA]);
        assert!(notes.is_empty(), "{notes:?}");
    }

    /// Issue 29: an effort was sent without the beta header that enables it.
    #[test]
    fn an_effort_carries_the_header_that_enables_it() {
        let reasoning = Reasoning { effort: Some(Effort::Low), ..Reasoning::default() };
        let opus = model("claude-opus-4-5");
        assert!(opus.effort, "assets/models.toml: claude-opus-4-5 takes an effort");
        let (out, _) = reasoning.for_model(&opus, ProviderKind::Anthropic, true);
        assert_eq!(out.effort, Some(Effort::Low));
        assert_eq!(out.betas, [EFFORT_BETA]);
    }

    #[test]
    fn adaptive_on_a_budget_model_becomes_a_budget_and_says_so() {
        let reasoning = Reasoning { thinking: Some(ThinkingMode::Adaptive), ..Reasoning::default() };
        let (out, notes) = reasoning.for_model(&model("claude-sonnet-4-5"), ProviderKind::Anthropic, false);
        assert_eq!(out.thinking, Some(ThinkingParam::Enabled { budget_tokens: DEFAULT_BUDGET }));
        assert!(out.betas.is_empty());
        assert_eq!(notes.len(), 1);
    }

    #[test]
    fn unknown_claude_models_get_what_was_asked() {
        let reasoning = Reasoning {
            thinking: Some(ThinkingMode::Adaptive),
            effort: Some(Effort::Xhigh),
            display: Some("summarized".into()),
            ..Reasoning::default()
        };
        let (out, notes) = reasoning.for_model(&model("claude-opus-9"), ProviderKind::Anthropic, true);
        assert_eq!(out.thinking, Some(ThinkingParam::Adaptive { display: Some("summarized".into()) }));
        assert_eq!(out.effort, Some(Effort::Xhigh));
        assert!(notes.is_empty());
        let json = serde_json::to_value(out.thinking.unwrap()).unwrap();
        assert_eq!(json, serde_json::json!({"type": "adaptive", "display": "summarized"}));
    }

    #[test]
    fn effort_is_sent_only_where_the_model_takes_it() {
        let reasoning = Reasoning { effort: Some(Effort::Max), ..Reasoning::default() };
        let (out, notes) = reasoning.for_model(&model("claude-opus-4-5"), ProviderKind::Anthropic, false);
        assert_eq!(out.effort, Some(Effort::Max));
        assert!(notes.is_empty());
        let (out, notes) = reasoning.for_model(&model("claude-sonnet-4-5"), ProviderKind::Anthropic, false);
        assert_eq!(out.effort, None);
        assert_eq!(notes.len(), 1);
        let (out, _) = reasoning.for_model(&model("o3"), ProviderKind::Openai, false);
        assert_eq!(out.reasoning_effort, Some("high"));
        let (out, notes) = reasoning.for_model(&model("gpt-4o"), ProviderKind::Openai, false);
        assert_eq!(out.reasoning_effort, None);
        assert_eq!(notes.len(), 1);
    }

    #[test]
    fn nothing_asked_sends_nothing() {
        let (out, notes) = Reasoning::default().for_model(&model("claude-opus-4-5"), ProviderKind::Anthropic, true);
        assert_eq!(out, RequestReasoning::default());
        assert!(notes.is_empty());
    }
}
