//! `StructuredOutput` (`--json-schema`, the SDK's `output_format`): the model gives its final answer by calling
//! this tool, whose input schema is the user's. The input is validated against the schema (a full JSON Schema
//! validator, not just the required fields); a valid one ends the turn as the result's `structured_output`, an
//! invalid one goes back to the model with what is wrong so it can try again.

use std::borrow::Cow;
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use serde_json::Value;

use super::{Risk, Tool, ToolContext, ToolOutput};

/// The tool's name, as Claude Code calls it.
pub const STRUCTURED_OUTPUT: &str = "StructuredOutput";

/// How many times the model may miss the schema (or not call the tool) before the run fails with
/// `error_max_structured_output_retries`.
pub const MAX_RETRIES: u32 = 5;

/// What the model is told when it ends a turn without calling the tool.
pub const REMINDER: &str = "You must give your final answer by calling the StructuredOutput tool with JSON that \
matches its input schema. Call it now.";

/// The schema-bound final answer.
pub struct StructuredOutputTool {
    schema: Value,
    validator: jsonschema::Validator,
    /// The accepted output, for the turn runner to end the turn with.
    accepted: Arc<Mutex<Option<Value>>>,
}

impl StructuredOutputTool {
    /// A tool for `schema`; `Err` says why the schema can't be used.
    pub fn new(schema: Value) -> Result<Self, String> {
        if schema.get("type").and_then(Value::as_str) != Some("object") {
            return Err("the schema must describe a JSON object (\"type\": \"object\")".into());
        }
        let validator = jsonschema::validator_for(&schema).map_err(|err| format!("not a valid JSON schema: {err}"))?;
        Ok(StructuredOutputTool { schema, validator, accepted: Arc::default() })
    }

    /// Where the accepted output lands.
    pub fn accepted(&self) -> Arc<Mutex<Option<Value>>> {
        self.accepted.clone()
    }
}

impl Tool for StructuredOutputTool {
    fn name(&self) -> &'static str {
        STRUCTURED_OUTPUT
    }

    fn description(&self) -> Cow<'static, str> {
        "Gives your final answer as JSON matching the input schema. Call it exactly once, when you are done; \
         the call ends your turn."
            .into()
    }

    fn input_schema(&self) -> Value {
        self.schema.clone()
    }

    fn is_read_only(&self) -> bool {
        true
    }

    fn risk(&self) -> Risk {
        Risk::Low
    }

    fn run<'a>(&'a self, input: crate::conversation::ToolInput, _ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move {
            let problems: Vec<String> = self
                .validator
                .iter_errors(&input)
                .take(10)
                .map(|error| {
                    let at = error.instance_path().to_string();
                    if at.is_empty() { error.to_string() } else { format!("{at}: {error}") }
                })
                .collect();
            if !problems.is_empty() {
                return ToolOutput::error(format!(
                    "The output does not match the schema: {}. Call StructuredOutput again with corrected output.",
                    problems.join("; ")
                ));
            }
            let input = std::sync::Arc::unwrap_or_clone(input);
            *self.accepted.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(input.clone());
            ToolOutput::ok("Structured output accepted.").with_structured(input)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_object_schemas_that_compile() {
        assert!(StructuredOutputTool::new(json!({"type": "string"})).is_err());
        assert!(StructuredOutputTool::new(json!({"type": "object", "properties": {"a": {"type": 7}}})).is_err());
        assert!(StructuredOutputTool::new(json!({"type": "object"})).is_ok());
    }
}
