//! `Skill`: loads one of the session's skills (`.claude/skills/<name>/SKILL.md`) into the conversation. The
//! tool's description lists every skill's name and description — the only part of a skill the model sees until
//! it asks for one.

use std::borrow::Cow;
use std::sync::Arc;

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;

use super::typed::TypedTool;
use super::{Risk, ToolContext, ToolOutput};
use crate::skills::SkillCatalog;

const DESCRIPTION: &str = "Loads a skill: instructions, and the files that go with them, for a kind of task. When the \
user's request matches a skill's description below, load it before you start and follow it. The result is the \
skill's SKILL.md and the directory its other files are in (read them with Read when the skill refers to them). \
Don't load a skill that is already loaded in this conversation.";

/// Most of the skill's other files named in the result.
const MAX_LISTED_FILES: usize = 50;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// The skill's name, as listed in this tool's description
    #[serde(alias = "command")]
    skill: String,
    /// Optional arguments for the skill
    #[serde(default)]
    args: Option<String>,
}

/// The Skill tool's name (a deny rule or `--disallowedTools` naming it keeps skills out of the offer).
pub const SKILL_TOOL: &str = "Skill";

/// Serves the skills of `catalog`.
pub struct SkillTool {
    pub catalog: Arc<SkillCatalog>,
}

impl TypedTool for SkillTool {
    type Input = Input;
    const NAME: &'static str = SKILL_TOOL;

    fn description(&self) -> Cow<'static, str> {
        let list: Vec<String> =
            self.catalog.skills.iter().map(|skill| format!("- {}: {}", skill.name, skill.description)).collect();
        format!("{DESCRIPTION}\n\n<available_skills>\n{}\n</available_skills>", list.join("\n")).into()
    }

    fn is_read_only(&self) -> bool {
        true
    }

    fn is_lookup(&self) -> bool {
        false
    }

    fn kind(&self) -> super::ToolKind {
        super::ToolKind::Other
    }

    fn risk(&self) -> Risk {
        Risk::Low
    }

    fn call<'a>(&'a self, input: Input, _ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move {
            let name = input.skill.trim().trim_start_matches('/');
            let Some(skill) = self.catalog.find(name) else {
                let names: Vec<&str> = self.catalog.skills.iter().map(|skill| skill.name.as_str()).collect();
                return ToolOutput::error(format!("There is no skill {name:?}. The skills are: {}.", names.join(", ")));
            };
            let file = skill.file();
            // Read again as at the start: a regular file, never through a link.
            let text = match crate::front_matter::read_regular_file(&file) {
                Ok(text) => text,
                Err(why) => return ToolOutput::error(format!("The skill's file {} {why}.", file.display())),
            };
            let body = crate::front_matter::Document::parse(&text).map(|doc| doc.body).unwrap_or(text);
            let body = with_arguments(body.trim(), input.args.as_deref().map(str::trim).unwrap_or_default());
            let others = other_files(&skill.dir);
            let others =
                if others.is_empty() { String::new() } else { format!("\n\nIts other files:\n{}", others.join("\n")) };
            ToolOutput::ok(format!(
                "Skill {} loaded. Base directory of the skill: {}{others}\n\n{}",
                skill.name,
                skill.dir.display(),
                body
            ))
        })
    }
}

/// The skill's text with the call's arguments: in place of `$ARGUMENTS`, else after it (`ARGUMENTS: …`), as Claude
/// Code gives them. Only `$ARGUMENTS`: a skill's code samples hold `$1` and friends of their own.
fn with_arguments(body: &str, args: &str) -> String {
    if args.is_empty() {
        return body.to_owned();
    }
    if body.contains("$ARGUMENTS") {
        return body.replace("$ARGUMENTS", args);
    }
    format!("{body}\n\nARGUMENTS: {args}")
}

/// The skill directory's files other than SKILL.md, relative, sorted.
fn other_files(dir: &std::path::Path) -> Vec<String> {
    let mut files: Vec<String> = ignore::WalkBuilder::new(dir)
        .max_depth(Some(4))
        .build()
        .flatten()
        .filter(|entry| entry.file_type().is_some_and(|kind| kind.is_file()))
        .filter_map(|entry| entry.path().strip_prefix(dir).ok().map(|path| path.display().to_string()))
        .filter(|path| path != crate::skills::SKILL_FILE)
        .collect();
    files.sort();
    files.truncate(MAX_LISTED_FILES);
    files
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::Tool;

    #[tokio::test]
    async fn a_skill_loads_with_its_files_and_the_description_lists_it() {
        let dir = tempfile::tempdir().unwrap();
        let skill_dir = dir.path().join("release");
        std::fs::create_dir_all(skill_dir.join("scripts")).unwrap();
        std::fs::write(
            skill_dir.join("SKILL.md"),
            "---\ndescription: Cut a release.\n---\nRun scripts/bump.sh first.\n",
        )
        .unwrap();
        std::fs::write(skill_dir.join("scripts/bump.sh"), "echo bump").unwrap();
        let catalog = crate::skills::load(&[(dir.path().to_path_buf(), "project")]);
        let tool = SkillTool { catalog: Arc::new(catalog) };
        assert!(Tool::description(&tool).contains("- release: Cut a release."));
        let ctx = ToolContext::new(dir.path().to_path_buf());
        let output = Tool::run(&tool, serde_json::json!({"skill": "release"}).into(), &ctx).await;
        assert!(!output.is_error, "{}", output.content);
        assert!(output.content.contains("Run scripts/bump.sh first.") && output.content.contains("scripts/bump.sh\n"));
        assert!(!output.content.contains("description:"), "front matter is not repeated");
        let missing = Tool::run(&tool, serde_json::json!({"skill": "deploy"}).into(), &ctx).await;
        assert!(missing.is_error && missing.content.contains("release"));
    }

    /// Issue 29: Claude Code's Skill takes `args`, given to the skill where it says `$ARGUMENTS` or after it.
    #[tokio::test]
    async fn a_skill_gets_its_arguments() {
        let dir = tempfile::tempdir().unwrap();
        for (name, body) in [("greet", "Say hello to $ARGUMENTS."), ("lint", "Run `grep $1 x`.")] {
            std::fs::create_dir_all(dir.path().join(name)).unwrap();
            std::fs::write(dir.path().join(name).join("SKILL.md"), format!("---\ndescription: d\n---\n{body}\n"))
                .unwrap();
        }
        let catalog = crate::skills::load(&[(dir.path().to_path_buf(), "project")]);
        let tool = SkillTool { catalog: Arc::new(catalog) };
        let ctx = ToolContext::new(dir.path().to_path_buf());
        let run = |input: serde_json::Value| Tool::run(&tool, input.into(), &ctx);
        let greet = run(serde_json::json!({"skill": "greet", "args": "the team"})).await;
        assert!(greet.content.contains("Say hello to the team."), "{}", greet.content);
        let lint = run(serde_json::json!({"skill": "lint", "args": "src/"})).await;
        assert!(lint.content.contains("Run `grep $1 x`.\n\nARGUMENTS: src/"), "{}", lint.content);
    }
}
