//! The tools that need the user rather than the machine: `AskUserQuestion` (multiple-choice questions, Claude
//! Code's schema) and plan mode's `ExitPlanMode` (the plan, for the user to approve). Both go through the
//! permission dialog — their previews are the questions and the plan — so they work wherever a front end can
//! ask, and are denied with a clear reason where nobody can answer (headless, `dontAsk`).

use std::borrow::Cow;

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;

use super::typed::TypedTool;
use super::{Preview, Risk, ToolContext, ToolOutput};
pub use tandem_protocol::tools::{Question, QuestionOption};

pub const ASK_USER_QUESTION: &str = "AskUserQuestion";
pub const EXIT_PLAN_MODE: &str = "ExitPlanMode";

const ASK_DESCRIPTION: &str = "Asks the user one to four multiple-choice questions and waits for the answers. Use it \
when a decision is the user's (which approach, which library, what to name something) and guessing would waste \
work; not for things you can find out yourself. Each question has a short header (at most 12 characters), two to \
four options with a description each, and multiSelect when several options may apply. The user can always give \
an answer of their own instead.";

const PLAN_DESCRIPTION: &str = "In plan mode, presents your plan for the user to approve: the steps you will take, \
as Markdown. If the user approves, plan mode ends and you carry the plan out; if not, you stay in plan mode with \
the user's feedback. Use it only when the plan is complete and you are ready to implement it, not for research.";

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AskInput {
    /// The questions to ask (1-4)
    #[schemars(length(min = 1, max = 4))]
    pub questions: Vec<Question>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlanInput {
    /// The plan, as Markdown
    pub plan: String,
}

pub struct AskUserQuestionTool;

impl TypedTool for AskUserQuestionTool {
    type Input = AskInput;
    const NAME: &'static str = ASK_USER_QUESTION;

    fn description(&self) -> Cow<'static, str> {
        ASK_DESCRIPTION.into()
    }

    fn is_read_only(&self) -> bool {
        true
    }

    fn is_lookup(&self) -> bool {
        false
    }

    fn kind(&self) -> super::ToolKind {
        super::ToolKind::Question
    }

    fn permission_subject(&self, _input: &serde_json::Value, _cwd: &std::path::Path) -> super::Subject {
        super::Subject::UserAnswer
    }

    fn risk(&self) -> Risk {
        Risk::Low
    }

    fn preview(&self, input: &serde_json::Value, _ctx: &ToolContext) -> Result<Option<Preview>, String> {
        let input: AskInput = serde_json::from_value(input.clone()).map_err(|err| format!("Invalid input: {err}"))?;
        check(&input.questions)?;
        Ok(Some(Preview::Questions { questions: input.questions }))
    }

    fn summary(&self, input: &serde_json::Value, _ctx: &ToolContext) -> String {
        let count = input.get("questions").and_then(serde_json::Value::as_array).map_or(0, Vec::len);
        format!("{count} question{}", if count == 1 { "" } else { "s" })
    }

    /// The answers, without the framing that tells the model what to do with them.
    fn result_view(&self, _input: &serde_json::Value, content: &str) -> Option<super::ResultView> {
        let answers = content.strip_prefix(ANSWERS_START)?.strip_suffix(ANSWERS_END)?;
        Some(super::ResultView::Note { text: format!("Answered: {answers}") })
    }

    /// Reached only without an answer (the runner answers the call from the dialog).
    fn call<'a>(&'a self, _input: AskInput, _ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async { ToolOutput::error("The questions were not answered: nobody could be asked.") })
    }
}

pub struct ExitPlanModeTool;

impl TypedTool for ExitPlanModeTool {
    type Input = PlanInput;
    const NAME: &'static str = EXIT_PLAN_MODE;

    fn description(&self) -> Cow<'static, str> {
        PLAN_DESCRIPTION.into()
    }

    fn is_read_only(&self) -> bool {
        true
    }

    fn is_lookup(&self) -> bool {
        false
    }

    fn kind(&self) -> super::ToolKind {
        super::ToolKind::Plan
    }

    fn permission_subject(&self, _input: &serde_json::Value, _cwd: &std::path::Path) -> super::Subject {
        super::Subject::UserAnswer
    }

    fn risk(&self) -> Risk {
        Risk::Low
    }

    fn preview(&self, input: &serde_json::Value, _ctx: &ToolContext) -> Result<Option<Preview>, String> {
        let plan = input.get("plan").and_then(serde_json::Value::as_str).unwrap_or_default().to_owned();
        Ok(Some(Preview::Plan { plan }))
    }

    fn summary(&self, _input: &serde_json::Value, _ctx: &ToolContext) -> String {
        "the plan".to_owned()
    }

    fn result_view(&self, _input: &serde_json::Value, content: &str) -> Option<super::ResultView> {
        let text = "Plan approved; plan mode is off".to_owned();
        (content == PLAN_APPROVED).then_some(super::ResultView::Note { text })
    }

    /// Runs once the user approved the plan (the runner has switched the mode).
    fn call<'a>(&'a self, _input: PlanInput, _ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async { ToolOutput::ok(PLAN_APPROVED) })
    }
}

const PLAN_APPROVED: &str = "The user approved your plan and plan mode is off. Carry out the plan now, step by step.";

/// The limits of Claude Code's schema, enforced: 1-4 questions of 2-4 options, none of them empty.
fn check(questions: &[Question]) -> Result<(), String> {
    if questions.is_empty() || questions.len() > 4 {
        return Err(format!("Ask 1 to 4 questions at a time (this call has {}).", questions.len()));
    }
    for question in questions {
        if question.question.trim().is_empty() {
            return Err("A question is empty: write the question out.".into());
        }
        if question.options.len() < 2 || question.options.len() > 4 {
            return Err(format!(
                "The question {:?} has {} options: give 2 to 4 (the user can always answer in their own words).",
                question.question,
                question.options.len()
            ));
        }
        if question.options.iter().any(|option| option.label.trim().is_empty()) {
            return Err(format!("An option of {:?} has no label.", question.question));
        }
    }
    Ok(())
}

/// How [`answers_result`] frames the answers for the model.
const ANSWERS_START: &str = "The user answered your questions: ";
const ANSWERS_END: &str = ". Go on with these answers in mind.";

/// The tool result for the user's answers, one per question.
pub fn answers_result(questions: &[Question], answers: &[String]) -> String {
    let pairs: Vec<String> = questions
        .iter()
        .zip(answers)
        .map(|(question, answer)| format!("\"{}\" = \"{answer}\"", question.question))
        .collect();
    format!("{ANSWERS_START}{}{ANSWERS_END}", pairs.join(", "))
}
