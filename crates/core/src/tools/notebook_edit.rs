//! `NotebookEdit`: replaces, inserts or deletes one cell of a Jupyter notebook (Claude Code's tool). Like Write,
//! it needs the notebook read first and unchanged since, shows the change as a diff, and writes atomically.

use std::path::PathBuf;

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::file_state::{read_if_exists, staleness_message};
use super::notebook::{CellEdit, CellType, EditMode, Notebook};
use super::typed::TypedTool;
use super::{DiffTexts, Preview, Risk, ToolContext, ToolOutput, display_path};
use crate::diff::{self, DEFAULT_CONTEXT};
use crate::fs_util;

const DESCRIPTION: &str = "Replaces, inserts or deletes one cell of a Jupyter notebook (.ipynb).\n\
\n\
- notebook_path should be an absolute path (relative paths are resolved against the working directory). Read \
the notebook first: Read shows each cell with its id.\n\
- edit_mode replace (the default) sets the cell's source (and cell_type, if given); a code cell's outputs are \
cleared. insert adds a new cell after cell_id (at the start without one) and needs cell_type. delete removes \
the cell.\n\
- cell_id is the id Read shows (`cell-N` for a notebook whose cells have no ids).";

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// The absolute path of the notebook to edit
    notebook_path: String,
    /// The id of the cell to replace or delete, or after which to insert
    cell_id: Option<String>,
    /// The new source of the cell
    new_source: String,
    /// The type of the cell (needed to insert)
    cell_type: Option<CellType>,
    /// replace (the default), insert or delete
    edit_mode: Option<EditMode>,
}

pub struct NotebookEditTool;

/// What an edit would do, computed the same way for the preview and the run.
struct Plan {
    path: PathBuf,
    shown: String,
    old: String,
    new: String,
    cell_id: Option<String>,
    language: String,
}

fn plan(input: &Input, ctx: &ToolContext) -> Result<Plan, String> {
    let path = ctx.judged_or_resolved(&input.notebook_path);
    let shown = display_path(&path, &ctx.cwd);
    if !super::notebook::is_notebook(&path) {
        return Err(format!("{shown} is not a notebook (.ipynb): edit other files with Edit."));
    }
    let Some(old) = read_if_exists(&path).map_err(|err| format!("Cannot read {}: {err}", path.display()))? else {
        return Err(format!("{shown} does not exist: NotebookEdit changes an existing notebook."));
    };
    ctx.files.check_unchanged(&path, &old).map_err(|s| staleness_message(s, &path, "editing"))?;
    let old = String::from_utf8(old).map_err(|_| format!("Cannot edit {shown}: it is not UTF-8 text."))?;
    let mut notebook = Notebook::parse(&old).map_err(|why| format!("Cannot edit {shown}: {why}."))?;
    let edit = CellEdit {
        cell_id: input.cell_id.clone(),
        source: input.new_source.clone(),
        cell_type: input.cell_type,
        mode: input.edit_mode.unwrap_or_default(),
    };
    let cell_id = notebook.apply(&edit).map_err(|why| format!("Cannot edit {shown}: {why}."))?;
    Ok(Plan { path, shown, new: notebook.to_text(), old, cell_id, language: notebook.language() })
}

impl TypedTool for NotebookEditTool {
    type Input = Input;
    const NAME: &'static str = "NotebookEdit";
    const FILE_FIELD: Option<&'static str> = Some("notebook_path");

    fn description(&self) -> std::borrow::Cow<'static, str> {
        DESCRIPTION.into()
    }

    fn is_read_only(&self) -> bool {
        false
    }

    fn kind(&self) -> super::ToolKind {
        super::ToolKind::Edit
    }

    fn risk(&self) -> Risk {
        Risk::Medium
    }

    fn result_view(&self, _input: &Value, content: &str) -> Option<super::ResultView> {
        super::first_sentence_view(content)
    }

    fn preview(&self, input: &Value, ctx: &ToolContext) -> Result<Option<Preview>, String> {
        let input: Input = super::parse_input(Self::NAME, input).map_err(|out| out.content)?;
        let plan = plan(&input, ctx)?;
        let texts = DiffTexts::fit(plan.old.len(), plan.new.len())
            .then(|| DiffTexts { old: Some(plan.old.clone()), new: plan.new.clone() });
        let diff = diff::unified_diff(&plan.shown, &plan.old, &plan.new, DEFAULT_CONTEXT);
        Ok(Some(Preview::Diff { diff, new_file: false, path: plan.path, texts }))
    }

    fn call<'a>(&'a self, input: Input, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutput> {
        let ctx = ctx.clone();
        Box::pin(async move {
            match tokio::task::spawn_blocking(move || edit(&input, &ctx)).await {
                Ok(Ok((text, structured))) => ToolOutput::ok(text).with_structured(structured),
                Ok(Err(message)) => ToolOutput::error(message),
                Err(err) => ToolOutput::error(format!("NotebookEdit failed: {err}")),
            }
        })
    }
}

fn edit(input: &Input, ctx: &ToolContext) -> Result<(String, Value), String> {
    let plan = plan(input, ctx)?;
    let mode = input.edit_mode.unwrap_or_default();
    let mode_bits = crate::rewind::mode_of(&plan.path);
    fs_util::write_atomic_resolved(&plan.path, plan.new.as_bytes())
        .map_err(|err| format!("Cannot write {}: {err}", plan.path.display()))?;
    ctx.files.record_content(&plan.path, plan.new.as_bytes());
    if let Some(checkpoints) = &ctx.checkpoints {
        checkpoints.record(&plan.path, Some(plan.old.as_bytes()), plan.new.as_bytes(), mode_bits);
    }
    let cell = plan.cell_id.clone().or_else(|| input.cell_id.clone()).unwrap_or_default();
    let text = match mode {
        EditMode::Replace => format!("Updated cell {cell} of {}.", plan.shown),
        EditMode::Insert => format!("Inserted cell {cell} into {}.", plan.shown),
        EditMode::Delete => format!("Deleted cell {cell} of {}.", plan.shown),
    };
    let structured = json!({
        "new_source": input.new_source,
        "cell_id": cell,
        "cell_type": input.cell_type.map_or("code", |kind| if kind == CellType::Markdown { "markdown" } else { "code" }),
        "language": plan.language,
        "edit_mode": mode.as_str(),
        "error": "",
        "notebook_path": plan.path.display().to_string(),
        "original_file": plan.old,
        "updated_file": plan.new,
    });
    Ok((text, structured))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::Tool;

    const NOTEBOOK: &str = "{\n \"cells\": [\n  {\n   \"cell_type\": \"code\",\n   \"execution_count\": 3,\n   \"id\": \"a1\",\n   \"metadata\": {},\n   \"outputs\": [],\n   \"source\": [\n    \"x = 1\"\n   ]\n  }\n ],\n \"metadata\": {},\n \"nbformat\": 4,\n \"nbformat_minor\": 5\n}\n";

    #[tokio::test]
    async fn a_cell_is_replaced_after_the_notebook_was_read_and_never_before() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("n.ipynb");
        std::fs::write(&path, NOTEBOOK).unwrap();
        let ctx = ToolContext::new(dir.path().to_path_buf());
        let input = json!({"notebook_path": "n.ipynb", "cell_id": "a1", "new_source": "x = 2"});
        let out = NotebookEditTool.run(input.clone().into(), &ctx).await;
        assert!(out.is_error && out.content.contains("Read"), "{}", out.content);
        ctx.files.record_content(&path, NOTEBOOK.as_bytes());
        let Ok(Some(Preview::Diff { diff, .. })) = Tool::preview(&NotebookEditTool, &input, &ctx) else { panic!() };
        assert!(diff.contains("-    \"x = 1\"\n+    \"x = 2\""), "{diff}");
        let out = NotebookEditTool.run(input.into(), &ctx).await;
        assert_eq!(out.content, "Updated cell a1 of n.ipynb.");
        let written = std::fs::read_to_string(&path).unwrap();
        assert!(written.contains("\"x = 2\"") && written.contains("\"execution_count\": null"), "{written}");
        assert_eq!(out.structured.unwrap()["edit_mode"], "replace");
    }
}
