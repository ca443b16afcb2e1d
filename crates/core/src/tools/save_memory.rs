//! `SaveMemory`: saves a memory as a topic file and upserts its line in the memory index (see [`crate::memory`]).
//!
//! It is a write like any other: the permission request shows the topic file's diff, and the target path is the
//! topic file, so permission rules and the path policy apply (project memory is inside the workspace, so
//! `acceptEdits` allows it; user memory is in tandem's config directory, which always asks).

use std::path::{Path, PathBuf};

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::typed::TypedTool;
use super::{DiffTexts, Preview, Risk, ToolContext, ToolOutput, display_path, parse_input};
use crate::diff::{self, DEFAULT_CONTEXT};
use crate::fs_util::project_root;
use crate::memory::{MemoryScope, MemoryStore, SavePlan};

const DESCRIPTION: &str = "Saves a memory that later sessions will see: a topic file plus a one-line entry in the \
memory index (MEMORY.md), which is included in every conversation.\n\
\n\
When to save:\n\
- Durable facts worth knowing next time: the user's preferences and corrections (\"always use pnpm\", \"answer \
tersely\"), the project's conventions, commands and layout, decisions made and why.\n\
- When the user asks you to remember something.\n\
Do not save transient task state (what you are doing right now, a to-do list, intermediate results), anything \
already in the code or in CLAUDE.md/AGENTS.md, or secrets.\n\
\n\
How:\n\
- title: short and specific; it names the topic file, so saving the same title again updates that memory and \
replaces its index entry. Update an existing topic (titles are in the memory index) rather than adding a \
near-duplicate; to update, Read its file first and save the complete new content, which replaces the old.\n\
- description: one line saying when the memory is relevant (it is shortened to fit the index line).\n\
- content: the memory itself, in markdown; keep it short and factual.\n\
- scope: \"project\" (default) for this repository, shared with its other users; \"user\" for personal \
preferences that apply in every project.\n\
- The index holds at most 200 entries / 25 KB; when a save is refused because it is full, consolidate related \
entries first.";

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// Short title of the memory; the same title updates the same memory
    title: String,
    /// One line: what the memory is about and when it is relevant
    description: String,
    /// The memory itself (markdown)
    content: String,
    /// "project" (default): this repository's memory; "user": the user's, in every project
    scope: Option<MemoryScope>,
}

impl Input {
    fn scope(&self) -> MemoryScope {
        self.scope.unwrap_or(MemoryScope::Project)
    }
}

/// The `SaveMemory` tool, holding the session's memory directories (the tool context knows only the working
/// directory, not the config directory).
pub struct SaveMemoryTool {
    pub store: MemoryStore,
}

impl SaveMemoryTool {
    pub fn new(store: MemoryStore) -> Self {
        SaveMemoryTool { store }
    }

    /// For a session in `cwd`: user memory under `config_dir`, project memory at `cwd`'s project root (the
    /// nearest ancestor with `.git`, else `cwd`), the same root permissions use.
    pub fn for_session(config_dir: &Path, cwd: &Path) -> Self {
        SaveMemoryTool { store: MemoryStore::new(config_dir, &project_root(cwd)) }
    }

    fn plan(&self, input: &Input) -> Result<SavePlan, String> {
        self.store.plan_save(&input.title, &input.description, &input.content, input.scope())
    }
}

impl TypedTool for SaveMemoryTool {
    type Input = Input;
    const NAME: &'static str = "SaveMemory";

    fn description(&self) -> std::borrow::Cow<'static, str> {
        DESCRIPTION.into()
    }

    fn is_read_only(&self) -> bool {
        false
    }

    /// The topic file it writes, which acceptEdits allows like an edit.
    fn permission_subject(&self, input: &Value, cwd: &Path) -> super::Subject {
        let context = ToolContext::new(cwd.to_path_buf());
        let path = TypedTool::target_path(self, input, &context).map(|path| path.to_string_lossy().into_owned());
        super::Subject::File(super::FileAccess::edit(path))
    }

    fn kind(&self) -> super::ToolKind {
        super::ToolKind::Other
    }

    fn risk(&self) -> Risk {
        Risk::Medium
    }

    fn target_path(&self, input: &Value, _ctx: &ToolContext) -> Option<PathBuf> {
        let title = input.get("title").and_then(Value::as_str)?;
        let scope = match input.get("scope") {
            None | Some(Value::Null) => MemoryScope::Project,
            Some(scope) => serde_json::from_value(scope.clone()).ok()?,
        };
        Some(self.store.topic_path(title, scope))
    }

    /// The topic file's diff; the index line is updated by the same call (its path is in the result).
    fn preview(&self, input: &Value, ctx: &ToolContext) -> Result<Option<Preview>, String> {
        let input: Input = parse_input("SaveMemory", input).map_err(|out| out.content)?;
        let plan = self.plan(&input)?;
        let label = display_path(&plan.topic_path, &ctx.cwd);
        let diff = match &plan.old_topic {
            Some(old) => diff::unified_diff(&label, old, &plan.new_topic, DEFAULT_CONTEXT),
            None => diff::new_file_diff(&label, &plan.new_topic),
        };
        Ok(Some(Preview::Diff {
            path: plan.topic_path,
            diff,
            new_file: plan.old_topic.is_none(),
            texts: DiffTexts::within_limit(plan.old_topic, plan.new_topic),
        }))
    }

    fn call<'a>(&'a self, input: Input, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move {
            let store = self.store.clone();
            let ctx = ctx.clone();
            let saved = tokio::task::spawn_blocking(move || {
                let plan = store.plan_save(&input.title, &input.description, &input.content, input.scope())?;
                save(&store, &plan, &ctx)
            });
            match saved.await {
                Ok(Ok(text)) => ToolOutput::ok(text),
                Ok(Err(message)) => ToolOutput::error(message),
                Err(err) => ToolOutput::error(format!("SaveMemory failed: {err}")),
            }
        })
    }
}

fn save(store: &MemoryStore, plan: &SavePlan, ctx: &ToolContext) -> Result<String, String> {
    let entries = match plan.entries {
        1 => "1 entry".to_owned(),
        n => format!("{n} entries"),
    };
    if plan.is_noop() {
        return Ok(format!(
            "Memory \"{}\" is already saved with this content in {} (index: {}, {entries}); nothing changed.",
            plan.title,
            plan.topic_path.display(),
            plan.index_path.display()
        ));
    }
    store.save(plan).map_err(|err| match err.kind() {
        // Limit messages (the index grew since the plan) are already written for the model.
        std::io::ErrorKind::Other => err.to_string(),
        _ => format!("Cannot save memory \"{}\": {err}", plan.title),
    })?;
    // The model wrote this content: a later Edit of the topic file needs no Read first.
    ctx.files.record_content(&plan.topic_path, plan.new_topic.as_bytes());
    Ok(format!(
        "Saved memory \"{}\" to {} (index: {}, {entries}).",
        plan.title,
        plan.topic_path.display(),
        plan.index_path.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::Tool;
    use crate::tools::schema;
    use serde_json::json;
    use std::fs;

    fn setup() -> (tempfile::TempDir, SaveMemoryTool, ToolContext) {
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path().join("repo");
        fs::create_dir_all(repo.join(".git")).unwrap();
        fs::create_dir_all(repo.join("src")).unwrap();
        let tool = SaveMemoryTool::for_session(&tmp.path().join("config"), &repo.join("src"));
        (tmp, tool, ToolContext::new(repo.join("src")))
    }

    #[test]
    fn schema_validation() {
        let (_tmp, tool, _ctx) = setup();
        let schema = tool.input_schema();
        let ok = json!({"title": "t", "description": "d", "content": "c"});
        assert!(schema::validate(&schema, &ok).is_ok());
        assert!(
            schema::validate(&schema, &json!({"title": "t", "description": "d", "content": "c", "scope": "user"}))
                .is_ok()
        );
        let err = schema::validate(&schema, &json!({"title": "t", "content": "c"})).unwrap_err();
        assert_eq!(err, "missing required field \"description\"");
        let err =
            schema::validate(&schema, &json!({"title": "t", "description": "d", "content": "c", "scope": "team"}))
                .unwrap_err();
        assert!(err.contains("\"scope\"") && err.contains("\"project\""), "{err}");
        assert!(schema::validate(&schema, &json!({"title": "t", "description": "d", "content": "c", "x": 1})).is_err());
        assert!(!Tool::is_read_only(&tool));
        assert_eq!(Tool::risk(&tool), Risk::Medium);
        assert_eq!(tool.name(), "SaveMemory");
    }

    #[test]
    fn target_path_is_the_topic_file() {
        let (tmp, tool, ctx) = setup();
        let project =
            Tool::target_path(&tool, &json!({"title": "Code Style", "description": "d", "content": "c"}), &ctx);
        assert_eq!(project, Some(tmp.path().join("repo/.tandem/memory/code-style.md")));
        let user = Tool::target_path(&tool, &json!({"title": "Code Style", "scope": "user"}), &ctx);
        assert_eq!(user, Some(tmp.path().join("config/memory/code-style.md")));
        assert_eq!(Tool::target_path(&tool, &json!({"scope": "user"}), &ctx), None);
    }

    #[tokio::test]
    async fn preview_then_run_writes_topic_and_index() {
        let (tmp, tool, ctx) = setup();
        let input = json!({"title": "Test command", "description": "How to run tests", "content": "Run `just test`."});
        let Ok(Some(Preview::Diff { path, diff, new_file, texts: Some(DiffTexts { old, new }) })) =
            Tool::preview(&tool, &input, &ctx)
        else {
            panic!("expected a diff preview with its texts")
        };
        let topic = tmp.path().join("repo/.tandem/memory/test-command.md");
        assert_eq!(path, topic);
        assert!(new_file && old.is_none());
        assert_eq!(new, "---\nname: Test command\ndescription: How to run tests\n---\nRun `just test`.\n");
        let label = topic.display();
        let want = format!(
            "--- /dev/null\n+++ {label}\n@@ -0,0 +1,5 @@\n+---\n+name: Test command\n+description: How to run tests\n+---\n\
             +Run `just test`.\n"
        );
        assert_eq!(diff, want);
        assert!(!topic.exists(), "the preview writes nothing");

        let out = tool.run(input.into(), &ctx).await;
        let index = tmp.path().join("repo/.tandem/memory/MEMORY.md");
        let expected =
            format!("Saved memory \"Test command\" to {} (index: {}, 1 entry).", topic.display(), index.display());
        assert_eq!(out, ToolOutput::ok(expected));
        assert_eq!(fs::read_to_string(&topic).unwrap(), new);
        assert_eq!(fs::read_to_string(&index).unwrap(), "- [Test command](test-command.md) — How to run tests\n");

        // An update shows the old text in the preview and replaces the index line.
        let update =
            json!({"title": "Test command", "description": "Tests: just test", "content": "Run `just test -q`."});
        let Ok(Some(Preview::Diff { new_file, diff, texts: Some(DiffTexts { old, .. }), .. })) =
            Tool::preview(&tool, &update, &ctx)
        else {
            panic!("expected a diff preview with its texts")
        };
        assert!(!new_file && old.as_deref() == Some(new.as_str()));
        assert!(diff.contains("-Run `just test`.") && diff.contains("+Run `just test -q`."), "{diff}");
        let out = tool.run(update.clone().into(), &ctx).await;
        assert!(!out.is_error && out.content.ends_with("1 entry)."), "{}", out.content);
        assert_eq!(fs::read_to_string(&index).unwrap(), "- [Test command](test-command.md) — Tests: just test\n");
        let out = tool.run(update.into(), &ctx).await;
        assert!(out.content.contains("nothing changed"), "{}", out.content);
    }

    #[tokio::test]
    async fn user_scope_and_limit_errors() {
        let (tmp, tool, ctx) = setup();
        let out =
            tool.run(json!({"title": "Terse", "description": "d", "content": "c", "scope": "user"}).into(), &ctx).await;
        assert!(!out.is_error, "{}", out.content);
        assert!(tmp.path().join("config/memory/terse.md").exists());
        assert!(tool.store.index_text().contains("- [Terse](terse.md) — d"));

        let index = tool.store.index_path(MemoryScope::Project);
        fs::create_dir_all(index.parent().unwrap()).unwrap();
        let full: String = (0..200).map(|i| format!("- [E{i}](e{i}.md) — d\n")).collect();
        fs::write(&index, full).unwrap();
        let input = json!({"title": "Another", "description": "d", "content": "c"});
        let err = Tool::preview(&tool, &input, &ctx).unwrap_err();
        assert!(err.contains("Consolidate"), "{err}");
        let out = tool.run(input.into(), &ctx).await;
        assert!(out.is_error && out.content.contains("Consolidate"), "{}", out.content);
        assert!(!tmp.path().join("repo/.tandem/memory/another.md").exists());
    }
}
