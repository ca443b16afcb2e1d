//! Tools written against a typed input: the `Input` struct is the one source of the JSON schema the model sees
//! (derived with schemars from its fields and doc comments) and of the parsing, so the two cannot drift; the
//! boilerplate every tool repeated (name, schema, parse, error result) lives here once.

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::{Preview, ResultView, Risk, Subject, Tool, ToolContext, ToolKind, ToolOutput, parse_input};
use crate::conversation::ToolInput;

/// A tool with a typed input. Implementing it implements [`Tool`].
pub trait TypedTool: Send + Sync {
    /// Deserialized from the call's input; its schema is the tool's input schema.
    type Input: DeserializeOwned + JsonSchema + Send;

    const NAME: &'static str;

    /// The input field naming the file the tool reads or changes, if one does: the call's target path and, for a
    /// tool that changes it, its permission subject (an edit, which acceptEdits allows) come from it.
    const FILE_FIELD: Option<&'static str> = None;

    fn description(&self) -> std::borrow::Cow<'static, str>;

    fn is_read_only(&self) -> bool;

    /// See [`Tool::is_lookup`].
    fn is_lookup(&self) -> bool {
        self.is_read_only()
    }

    fn risk(&self) -> Risk;

    /// See [`Tool::risk_for`].
    fn risk_for(&self, input: &Value) -> Risk {
        let _ = input;
        self.risk()
    }

    /// See [`Tool::preview`].
    fn preview(&self, input: &Value, ctx: &ToolContext) -> Result<Option<Preview>, String> {
        let _ = (input, ctx);
        Ok(None)
    }

    /// See [`Tool::target_path`].
    fn target_path(&self, input: &Value, ctx: &ToolContext) -> Option<std::path::PathBuf> {
        let field = Self::FILE_FIELD?;
        input.get(field).and_then(Value::as_str).map(|path| ctx.resolve(path))
    }

    /// See [`Tool::summary`].
    fn summary(&self, input: &Value, ctx: &ToolContext) -> String {
        super::display_summary(input, ctx)
    }

    /// See [`Tool::permission_subject`].
    fn permission_subject(&self, input: &Value, cwd: &std::path::Path) -> Subject
    where
        Self: Sized,
    {
        match Self::FILE_FIELD {
            Some(field) if !self.is_read_only() => {
                let path = input.get(field).and_then(Value::as_str).map(str::to_owned);
                Subject::File(super::FileAccess::edit(path))
            }
            _ => super::default_subject(self, input, cwd),
        }
    }

    /// See [`Tool::kind`].
    fn kind(&self) -> ToolKind;

    /// See [`Tool::result_view`].
    fn result_view(&self, input: &Value, content: &str) -> Option<ResultView> {
        let _ = (input, content);
        None
    }

    /// Runs the call with its parsed input.
    fn call<'a>(&'a self, input: Self::Input, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutput>;

    /// Runs the call on its input as the conversation holds it: parsed into `Input`, which copies its strings.
    /// A tool whose input can be huge (Write's content) reads it in place instead.
    fn call_shared<'a>(&'a self, input: ToolInput, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutput>
    where
        Self: Sized,
    {
        match parse_input::<Self::Input>(Self::NAME, &input) {
            Ok(input) => self.call(input, ctx),
            Err(error) => Box::pin(async move { error }),
        }
    }
}

impl<T: TypedTool> Tool for T {
    fn name(&self) -> &'static str {
        T::NAME
    }

    fn description(&self) -> std::borrow::Cow<'static, str> {
        TypedTool::description(self)
    }

    fn input_schema(&self) -> Value {
        schema_of::<T::Input>()
    }

    fn is_read_only(&self) -> bool {
        TypedTool::is_read_only(self)
    }

    fn is_lookup(&self) -> bool {
        TypedTool::is_lookup(self)
    }

    fn risk(&self) -> Risk {
        TypedTool::risk(self)
    }

    fn risk_for(&self, input: &Value) -> Risk {
        TypedTool::risk_for(self, input)
    }

    fn preview(&self, input: &Value, ctx: &ToolContext) -> Result<Option<Preview>, String> {
        TypedTool::preview(self, input, ctx)
    }

    fn target_path(&self, input: &Value, ctx: &ToolContext) -> Option<std::path::PathBuf> {
        TypedTool::target_path(self, input, ctx)
    }

    fn summary(&self, input: &Value, ctx: &ToolContext) -> String {
        TypedTool::summary(self, input, ctx)
    }

    fn permission_subject(&self, input: &Value, cwd: &std::path::Path) -> Subject {
        TypedTool::permission_subject(self, input, cwd)
    }

    fn kind(&self) -> ToolKind {
        TypedTool::kind(self)
    }

    fn result_view(&self, input: &Value, content: &str) -> Option<ResultView> {
        TypedTool::result_view(self, input, content)
    }

    fn run<'a>(&'a self, input: ToolInput, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutput> {
        TypedTool::call_shared(self, input, ctx)
    }
}

/// The JSON schema of `I` as tool schemas are written (Claude Code's shape): an object with `properties`,
/// `required` and `additionalProperties: false`, without the `$schema`, `title` and `format` keys schemars
/// adds, and with optional fields typed as their value (`"integer"`, not `["integer", "null"]`).
pub fn schema_of<I: JsonSchema>() -> Value {
    let mut schema = serde_json::to_value(schemars::schema_for!(I)).unwrap_or_else(|_| serde_json::json!({}));
    let Some(object) = schema.as_object_mut() else { return schema };
    object.remove("$schema");
    object.remove("title");
    let definitions = object.remove("$defs").unwrap_or(Value::Null);
    if let Some(Value::Object(properties)) = object.get_mut("properties") {
        for property in properties.values_mut() {
            tidy_property(property, &definitions);
        }
    }
    object.entry("required").or_insert_with(|| Value::Array(Vec::new()));
    object.insert("additionalProperties".into(), Value::Bool(false));
    schema
}

/// One property as tool schemas write it: references inlined (an enum's `{"type": "string", "enum": …}`),
/// `Option`'s `null` alternative dropped, no `format`.
fn tidy_property(property: &mut Value, definitions: &Value) {
    let Some(object) = property.as_object_mut() else { return };
    object.remove("format");
    // `Option<Enum>` is `anyOf: [{$ref}, {type: null}]`: keep the one that isn't null.
    if let Some(Value::Array(alternatives)) = object.get("anyOf") {
        let kept: Vec<Value> = alternatives
            .iter()
            .filter(|alternative| alternative.get("type") != Some(&"null".into()))
            .cloned()
            .collect();
        if let [only] = kept.as_slice()
            && let Some(inner) = only.as_object()
        {
            let inner = inner.clone();
            object.remove("anyOf");
            for (key, value) in inner {
                object.entry(key).or_insert(value);
            }
        }
    }
    if let Some(Value::String(reference)) = object.remove("$ref") {
        let name = reference.rsplit('/').next().unwrap_or_default();
        if let Some(Value::Object(definition)) = definitions.get(name) {
            for (key, value) in definition {
                if key != "description" {
                    object.entry(key.clone()).or_insert_with(|| value.clone());
                }
            }
        }
    }
    // An enum whose variants have doc comments comes as `oneOf` constants: written as a plain string enum.
    if let Some(Value::Array(alternatives)) = object.get("oneOf") {
        let constants: Option<Vec<Value>> =
            alternatives.iter().map(|alternative| alternative.get("const").cloned()).collect();
        if let Some(constants) = constants.filter(|constants| constants.iter().all(Value::is_string)) {
            object.remove("oneOf");
            object.insert("type".into(), "string".into());
            object.insert("enum".into(), Value::Array(constants));
        }
    }
    if let Some(Value::Array(types)) = object.get("type") {
        let kept: Vec<Value> = types.iter().filter(|kind| kind.as_str() != Some("null")).cloned().collect();
        if let [only] = kept.as_slice() {
            object.insert("type".into(), only.clone());
        }
    }
    if let Some(Value::Array(values)) = object.get_mut("enum") {
        values.retain(|value| !value.is_null());
    }
    if let Some(items) = object.get_mut("items") {
        tidy_property(items, definitions);
    }
    // An object's own fields (a TodoWrite item's `status`): written the same way, so that no `$ref` is left to
    // the `$defs` a tool schema does not carry.
    if let Some(Value::Object(properties)) = object.get_mut("properties") {
        for property in properties.values_mut() {
            tidy_property(property, definitions);
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::tools::Tool;

    /// Issue 29 found the TodoWrite and AskUserQuestion schemas, sent with every request, holding `$ref`s to
    /// `$defs` that were not sent: no model saw the status values or the option fields.
    #[test]
    fn no_schema_refers_to_definitions_it_does_not_carry() {
        let mut tools: Vec<std::sync::Arc<dyn Tool>> = crate::tools::ToolRegistry::builtin().iter().collect();
        tools.push(std::sync::Arc::new(crate::tools::todo_write::TodoWriteTool));
        tools.push(std::sync::Arc::new(crate::tools::ask_user::AskUserQuestionTool));
        tools.push(std::sync::Arc::new(crate::tools::ask_user::ExitPlanModeTool));
        tools.push(std::sync::Arc::new(crate::tools::bash_output::BashOutputTool));
        for tool in tools {
            let schema = tool.input_schema().to_string();
            assert!(!schema.contains("$ref") && !schema.contains("$defs"), "{}: {schema}", tool.name());
        }
        let todo = crate::tools::todo_write::TodoWriteTool.input_schema();
        let status = &todo["properties"]["todos"]["items"]["properties"]["status"];
        assert_eq!(status["enum"], json!(["pending", "in_progress", "completed"]), "{todo}");
    }

    /// The derived schema is the one the model always saw (Claude Code's field names, types and wording).
    #[test]
    fn read_schema_is_claude_codes() {
        let schema = crate::tools::read::ReadTool.input_schema();
        assert_eq!(
            schema,
            json!({
                "type": "object",
                "properties": {
                    "file_path": {"type": "string", "description": "The absolute path of the file to read"},
                    "offset": {"type": "integer", "minimum": 0,
                        "description": "The line number to start reading from (1-based). Only for files too long to read at once"},
                    "limit": {"type": "integer", "minimum": 1,
                        "description": "The number of lines to read. Only for files too long to read at once"}
                },
                "required": ["file_path"],
                "additionalProperties": false
            })
        );
    }
}

#[cfg(test)]
mod schema_tests {
    use crate::tools::ToolRegistry;

    /// Every built-in tool's schema, as the model sees it, is the committed one (`tools/schemas.json`): deriving
    /// schemas from the `Input` structs must not change a field, a type, a bound or a description. Regenerate
    /// with `TANDEM_WRITE_SCHEMAS=1 cargo test -p tandem-core schemas_are_unchanged` when a change is meant.
    #[test]
    fn schemas_are_unchanged() {
        let mut tools = ToolRegistry::builtin();
        let dir = tempfile::tempdir().unwrap();
        tools.register(std::sync::Arc::new(crate::tools::save_memory::SaveMemoryTool::for_session(
            dir.path(),
            dir.path(),
        )));
        tools.register(std::sync::Arc::new(crate::tools::search_sessions::SearchSessionsTool {
            data_dir: dir.path().to_path_buf(),
            current_session: None,
        }));
        let schemas: serde_json::Map<String, serde_json::Value> =
            tools.iter().map(|tool| (tool.name().to_owned(), tool.input_schema())).collect();
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/tools/schemas.json");
        if std::env::var_os("TANDEM_WRITE_SCHEMAS").is_some() {
            std::fs::write(&path, serde_json::to_string_pretty(&schemas).unwrap() + "\n").unwrap();
        }
        let committed: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        for (name, schema) in &schemas {
            assert_eq!(schema, &committed[name], "{name}'s schema changed");
        }
    }
}
