//! Jupyter notebooks (`.ipynb`, nbformat 4): Read shows their cells (source and text outputs) instead of raw JSON,
//! and NotebookEdit replaces, inserts or deletes one cell, as in Claude Code. A notebook is rewritten as Jupyter
//! writes it (one-space indented JSON, keys in their order), so a change shows as a small diff.

use serde_json::{Map, Value, json};

/// Whether `path` names a notebook.
pub fn is_notebook(path: &std::path::Path) -> bool {
    path.extension().is_some_and(|ext| ext.eq_ignore_ascii_case("ipynb"))
}

/// A parsed notebook.
pub struct Notebook {
    root: Map<String, Value>,
}

impl Notebook {
    pub fn parse(text: &str) -> Result<Notebook, String> {
        let Ok(Value::Object(root)) = serde_json::from_str::<Value>(text) else {
            return Err("it is not a Jupyter notebook (not a JSON object)".into());
        };
        if !root.get("cells").is_some_and(Value::is_array) {
            return Err("it is not a Jupyter notebook (no \"cells\" list)".into());
        }
        Ok(Notebook { root })
    }

    fn cells(&self) -> &Vec<Value> {
        static NONE: Vec<Value> = Vec::new();
        self.root.get("cells").and_then(Value::as_array).unwrap_or(&NONE)
    }

    fn cells_mut(&mut self) -> &mut Vec<Value> {
        if !self.root.get("cells").is_some_and(Value::is_array) {
            self.root.insert("cells".into(), Value::Array(Vec::new()));
        }
        match self.root.get_mut("cells") {
            Some(Value::Array(cells)) => cells,
            _ => unreachable!("cells was made a list just above"),
        }
    }

    /// The kernel's language (`python` when the notebook doesn't say).
    pub fn language(&self) -> String {
        let metadata = self.root.get("metadata");
        metadata
            .and_then(|m| m.pointer("/language_info/name").or_else(|| m.pointer("/kernelspec/language")))
            .and_then(Value::as_str)
            .unwrap_or("python")
            .to_owned()
    }

    /// The cells as the model reads them: each cell's id, type and source, then its text outputs; at most
    /// [`MAX_RENDERED`] bytes (a notebook of many small outputs must not make a huge text).
    pub fn render(&self) -> String {
        let mut out = String::new();
        for (index, cell) in self.cells().iter().enumerate() {
            if out.len() > MAX_RENDERED {
                let left = self.cells().len() - index;
                out.push_str(&format!("[… {left} more cells not shown: the notebook is too large to show whole]\n"));
                break;
            }
            let id = cell_id(cell, index);
            let kind = cell.get("cell_type").and_then(Value::as_str).unwrap_or("code");
            out.push_str(&format!("<cell id=\"{id}\" type=\"{kind}\">\n{}\n</cell>\n", text_of(cell.get("source"))));
            for output in cell.get("outputs").and_then(Value::as_array).into_iter().flatten() {
                let text = output_text(output);
                if !text.is_empty() {
                    out.push_str(&format!("<output cell=\"{id}\">\n{}\n</output>\n", text.trim_end()));
                }
            }
        }
        if out.is_empty() { "The notebook has no cells.".to_owned() } else { out }
    }

    /// The cells in Claude Code's structured Read result.
    pub fn cells_json(&self) -> Value {
        let cells: Vec<Value> = self
            .cells()
            .iter()
            .enumerate()
            .map(|(index, cell)| {
                json!({
                    "cellType": cell.get("cell_type").and_then(Value::as_str).unwrap_or("code"),
                    "source": text_of(cell.get("source")),
                    "cell_id": cell_id(cell, index),
                })
            })
            .collect();
        Value::Array(cells)
    }

    /// The position of the cell `id` names: its `id`, or `cell-N` (N from 0) for a notebook without ids.
    fn position(&self, id: &str) -> Result<usize, String> {
        let cells = self.cells();
        if let Some(index) = cells.iter().enumerate().position(|(index, cell)| cell_id(cell, index) == id) {
            return Ok(index);
        }
        let known: Vec<String> = cells.iter().enumerate().map(|(index, cell)| cell_id(cell, index)).collect();
        Err(format!("there is no cell {id:?} (cells: {})", known.join(", ")))
    }

    /// Applies one edit; returns the id of the cell it made or changed (`None` for a deletion).
    pub fn apply(&mut self, edit: &CellEdit) -> Result<Option<String>, String> {
        match edit.mode {
            EditMode::Replace => {
                let id = edit.cell_id.as_deref().ok_or("replacing a cell needs its cell_id")?;
                let index = self.position(id)?;
                let cell =
                    self.cells_mut().get_mut(index).and_then(Value::as_object_mut).ok_or("a cell is not an object")?;
                let kind = edit.cell_type.map(CellType::as_str);
                set_cell(cell, &edit.source, kind);
                Ok(Some(id.to_owned()))
            }
            EditMode::Insert => {
                let kind = edit.cell_type.ok_or("inserting a cell needs cell_type (code or markdown)")?;
                let at = match edit.cell_id.as_deref() {
                    Some(id) => self.position(id)? + 1,
                    None => 0,
                };
                let id = new_cell_id();
                let mut cell = Map::new();
                cell.insert("cell_type".into(), json!(kind.as_str()));
                cell.insert("id".into(), json!(id));
                cell.insert("metadata".into(), json!({}));
                set_cell(&mut cell, &edit.source, None);
                self.cells_mut().insert(at, Value::Object(cell));
                Ok(Some(id))
            }
            EditMode::Delete => {
                let id = edit.cell_id.as_deref().ok_or("deleting a cell needs its cell_id")?;
                let index = self.position(id)?;
                self.cells_mut().remove(index);
                Ok(None)
            }
        }
    }

    /// The notebook as Jupyter writes it: JSON indented by one space, with a final newline.
    pub fn to_text(&self) -> String {
        let mut out = Vec::new();
        let formatter = serde_json::ser::PrettyFormatter::with_indent(b" ");
        let mut serializer = serde_json::Serializer::with_formatter(&mut out, formatter);
        let _ = serde::Serialize::serialize(&self.root, &mut serializer);
        let mut text = String::from_utf8_lossy(&out).into_owned();
        text.push('\n');
        text
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CellType {
    Code,
    Markdown,
}

impl CellType {
    fn as_str(self) -> &'static str {
        match self {
            CellType::Code => "code",
            CellType::Markdown => "markdown",
        }
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum EditMode {
    #[default]
    Replace,
    Insert,
    Delete,
}

impl EditMode {
    pub fn as_str(self) -> &'static str {
        match self {
            EditMode::Replace => "replace",
            EditMode::Insert => "insert",
            EditMode::Delete => "delete",
        }
    }
}

/// One NotebookEdit.
pub struct CellEdit {
    pub cell_id: Option<String>,
    pub source: String,
    pub cell_type: Option<CellType>,
    pub mode: EditMode,
}

/// A cell's source (and, for a code cell, no outputs any more: they came from the old source).
fn set_cell(cell: &mut Map<String, Value>, source: &str, kind: Option<&str>) {
    if let Some(kind) = kind {
        cell.insert("cell_type".into(), json!(kind));
    }
    cell.insert("source".into(), source_lines(source));
    if cell.get("cell_type").and_then(Value::as_str) == Some("code") {
        cell.insert("execution_count".into(), Value::Null);
        cell.insert("outputs".into(), json!([]));
    } else {
        cell.remove("execution_count");
        cell.remove("outputs");
    }
}

/// nbformat's multiline string: a list of lines, each but the last ending in `\n`.
fn source_lines(source: &str) -> Value {
    Value::Array(source.split_inclusive('\n').map(|line| json!(line)).collect())
}

/// A multiline string field (a list of lines or one string) as one text.
fn text_of(value: Option<&Value>) -> String {
    match value {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(lines)) => lines.iter().filter_map(Value::as_str).collect(),
        _ => String::new(),
    }
}

/// An output's text: a stream's text, a result's `text/plain`, an error's name and message; a picture is named.
fn output_text(output: &Value) -> String {
    match output.get("output_type").and_then(Value::as_str) {
        Some("stream") => text_of(output.get("text")),
        Some("execute_result" | "display_data") => {
            let data = output.get("data");
            let text = text_of(data.and_then(|data| data.get("text/plain")));
            let images = ["image/png", "image/jpeg", "image/svg+xml"]
                .iter()
                .filter(|kind| data.and_then(|data| data.get(**kind)).is_some())
                .map(|kind| format!("[an image ({kind})]"))
                .collect::<Vec<_>>()
                .join("\n");
            [text, images].into_iter().filter(|part| !part.is_empty()).collect::<Vec<_>>().join("\n")
        }
        Some("error") => format!(
            "{}: {}",
            output.get("ename").and_then(Value::as_str).unwrap_or("Error"),
            output.get("evalue").and_then(Value::as_str).unwrap_or_default()
        ),
        _ => String::new(),
    }
}

/// The most text [`Notebook::render`] makes (the model's tool results are cut far below it anyway).
const MAX_RENDERED: usize = 1024 * 1024;

/// A cell's id: its own (nbformat 4.5: 1 to 64 letters, digits, `-` and `_`), else `cell-N` by position — an id
/// that is not one (a megabyte long, say) is not repeated before every output.
fn cell_id(cell: &Value, index: usize) -> String {
    let valid = |id: &&str| {
        (1..=64).contains(&id.len())
            && id.bytes().all(|byte| byte.is_ascii_alphanumeric() || byte == b'-' || byte == b'_')
    };
    cell.get("id").and_then(Value::as_str).filter(valid).map_or_else(|| format!("cell-{index}"), str::to_owned)
}

/// A new cell id as Jupyter makes them (8 hex digits).
fn new_cell_id() -> String {
    format!("{:08x}", fastrand::u32(..))
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOTEBOOK: &str = r##"{
 "cells": [
  {
   "cell_type": "markdown",
   "id": "intro",
   "metadata": {},
   "source": [
    "# Title\n",
    "Some text"
   ]
  },
  {
   "cell_type": "code",
   "execution_count": 1,
   "id": "calc",
   "metadata": {},
   "outputs": [
    {
     "name": "stdout",
     "output_type": "stream",
     "text": [
      "2\n"
     ]
    }
   ],
   "source": [
    "print(1 + 1)"
   ]
  }
 ],
 "metadata": {
  "language_info": {
   "name": "python"
  }
 },
 "nbformat": 4,
 "nbformat_minor": 5
}
"##;

    #[test]
    fn cells_and_outputs_are_shown_and_a_rewrite_of_an_unchanged_notebook_is_byte_identical() {
        let notebook = Notebook::parse(NOTEBOOK).unwrap();
        let shown = notebook.render();
        assert!(shown.contains("<cell id=\"intro\" type=\"markdown\">\n# Title\nSome text\n</cell>"), "{shown}");
        assert!(shown.contains("<output cell=\"calc\">\n2\n</output>"), "{shown}");
        assert_eq!(notebook.language(), "python");
        assert_eq!(notebook.to_text(), NOTEBOOK);
    }

    #[test]
    fn replace_insert_and_delete() {
        let mut notebook = Notebook::parse(NOTEBOOK).unwrap();
        let replace = CellEdit {
            cell_id: Some("calc".into()),
            source: "print(2 + 2)\nx = 1".into(),
            cell_type: None,
            mode: EditMode::Replace,
        };
        assert_eq!(notebook.apply(&replace).unwrap().as_deref(), Some("calc"));
        let text = notebook.to_text();
        assert!(text.contains("\"print(2 + 2)\\n\",\n    \"x = 1\""), "{text}");
        assert!(text.contains("\"outputs\": []") && text.contains("\"execution_count\": null"), "{text}");
        let insert = CellEdit {
            cell_id: Some("intro".into()),
            source: "More".into(),
            cell_type: Some(CellType::Markdown),
            mode: EditMode::Insert,
        };
        let new = notebook.apply(&insert).unwrap().unwrap();
        assert_eq!(notebook.position(&new).unwrap(), 1);
        let delete =
            CellEdit { cell_id: Some("intro".into()), source: String::new(), cell_type: None, mode: EditMode::Delete };
        notebook.apply(&delete).unwrap();
        assert_eq!(notebook.cells().len(), 2);
        let missing = CellEdit { cell_id: Some("nope".into()), ..delete };
        assert!(notebook.apply(&missing).unwrap_err().contains("there is no cell \"nope\""));
        assert!(Notebook::parse("[]").is_err());
    }

    /// Found by the fifty-fourth red-team round: a 4 MB notebook with a 4 MB cell id and 2,000 tiny outputs made
    /// tandem ask for 8 GB (the id was written before every output).
    #[test]
    fn a_notebook_made_to_blow_up_when_shown_stays_small() {
        let outputs: Vec<Value> =
            (0..2000).map(|_| json!({"output_type": "stream", "name": "stdout", "text": "x"})).collect();
        let huge_id = "a".repeat(4 << 20);
        let notebook = json!({"cells": [{"cell_type": "code", "id": huge_id, "source": "1", "outputs": outputs}]});
        let shown = Notebook::parse(&notebook.to_string()).unwrap().render();
        assert!(shown.len() < 200_000, "{} bytes", shown.len());
        assert!(shown.contains("<cell id=\"cell-0\""));
        let many: Vec<Value> =
            (0..200_000).map(|i| json!({"cell_type": "markdown", "id": format!("c{i}"), "source": "text"})).collect();
        let shown = Notebook::parse(&json!({"cells": many}).to_string()).unwrap().render();
        assert!(shown.len() < 2 * MAX_RENDERED && shown.contains("more cells not shown"));
    }
}
