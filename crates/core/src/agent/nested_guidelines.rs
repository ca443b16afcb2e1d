//! Guidelines of the directories below the working directory, read when the model first reads a file there:
//! Claude Code reads `sub/CLAUDE.md` (and `sub/.claude/CLAUDE.md`, …) the first time the model reads a file under
//! `sub/`, and so does tandem, adding them to that Read's result. The system prompt keeps only the guidelines from
//! the project's root down to the working directory, so that it never changes under the prompt cache.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde_json::Value;

use super::lock;
use super::tool_calls::{Call, ToolRunner};
use crate::context::guidelines::{self, ProjectReads, Sources, UserDirs};
use crate::permissions::Decision;
use crate::tools::ToolOutput;
use crate::tools::read::ReadTool;
use crate::tools::typed::TypedTool;

/// What a session needs to add nested guidelines to Read results.
pub(super) struct NestedGuidelines<'a> {
    pub sources: Sources,
    /// The directories whose guidelines the model has been given (or that have none).
    pub announced: &'a Mutex<HashSet<PathBuf>>,
}

impl ToolRunner<'_> {
    /// Adds the guidelines of the directories on the way to the file a Read read that the model has not been
    /// given yet, within what a Read may reach unasked.
    pub(super) fn add_nested_guidelines(&self, call: &Call, input: &Value, output: &mut ToolOutput) {
        let Some(nested) = &self.guidelines else { return };
        if call.name != ReadTool::NAME || output.is_error {
            return;
        }
        let Some(path) = input.get("file_path").and_then(Value::as_str) else { return };
        let policy = lock(&self.shared.policy);
        let file = policy.workspace.resolve(path);
        let Some(dir) = file.parent() else { return };
        let hidden = policy.walk_hidden();
        let importable =
            |path: &Path| policy.decide(&ReadTool, &serde_json::json!({ "file_path": path })) == Decision::Allow;
        let home = crate::fs_util::user_home();
        let dirs =
            UserDirs { config_dir: self.config_dir, claude_dir: None, home: home.as_deref(), sources: nested.sources };
        let reads = ProjectReads { hidden: &*hidden, importable: &importable };
        let found = guidelines::nested(&dirs, policy.workspace.cwd(), dir, &reads, &mut lock(nested.announced));
        if !found.text.is_empty() {
            output.content.push_str(&format!(
                "\n\n<system-reminder>\nThe directory of this file has guidelines of its own; follow them when \
                 working there.\n\n{}\n</system-reminder>",
                found.text
            ));
        }
    }
}
