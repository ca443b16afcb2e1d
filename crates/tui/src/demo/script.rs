//! What the demo model says, reply by reply: read the example project, fix it with a two-hunk edit, run its
//! tests, and end by saying how to connect a real provider.

use std::path::Path;

use serde_json::{Value, json};

/// One block of a scripted reply.
pub(super) enum Block {
    Thinking(String),
    Text(String),
    Tool { id: &'static str, name: &'static str, input: Value },
}

/// The prompt the demo types for the user.
pub const PROMPT: &str = "The tests in this project fail. Find out why and fix it.";

/// How to leave the demo for a real model (the last reply, and the answer to anything typed after it).
pub(super) const CONNECT: &str = "To use tandem with a real model:\n\n\
    - **Anthropic**: `export ANTHROPIC_API_KEY=sk-ant-…` and run `tandem`\n\
    - **OpenAI**: `export OPENAI_API_KEY=sk-…` and run `tandem --provider openai`\n\
    - **A local server** (Ollama, llama.cpp, LM Studio): start it and run `tandem`; the welcome screen finds it\n\
    - or name any OpenAI-compatible endpoint under `[providers.NAME]` in `config.toml` (see the README)";

const OLD_GREET: &str = "# greet: prints a greeting for each name given, or for the world.
set -eu

greeting=\"Hello\"

# With no names, greet everyone.
if [ \"$#\" -eq 0 ]; then
    set -- world
fi

# One line per name, in the order given.
for name in \"$@\"; do
    echo \"$greeting, $name\"";

/// The fix: the comment says what the output looks like, and the `echo` ends with "!" (two hunks apart).
fn new_greet() -> String {
    OLD_GREET.replacen("prints a greeting for", "prints a greeting, ending in \"!\", for", 1).replacen(
        "echo \"$greeting, $name\"",
        "echo \"$greeting, $name!\"",
        1,
    )
}

/// The reply to the request that follows `round` earlier replies, in the project at `dir`.
pub(super) fn reply(round: usize, dir: &Path) -> Vec<Block> {
    let path = |name: &str| dir.join(name).display().to_string();
    match round {
        0 => vec![
            Block::Thinking("The user says the tests fail. I should read the script and its tests first.".into()),
            Block::Text("I'll read the script and its tests first.".into()),
            Block::Tool { id: "toolu_demo_read_greet", name: "Read", input: json!({"file_path": path("greet.sh")}) },
            Block::Tool { id: "toolu_demo_read_test", name: "Read", input: json!({"file_path": path("test.sh")}) },
        ],
        1 => vec![
            Block::Text(
                "Found it: every case in `test.sh` expects an exclamation mark after the name, and `greet.sh` \
                 prints none.\n\nThe fix has **two hunks**: the comment that describes the output, and the \
                 `echo` itself. In the dialog you can take both, or review them one by one (**Tab** moves between \
                 hunks, **Space** accepts or rejects one, **Enter** applies what you accepted)."
                    .into(),
            ),
            Block::Tool {
                id: "toolu_demo_edit",
                name: "Edit",
                input: json!({"file_path": path("greet.sh"), "old_string": OLD_GREET, "new_string": new_greet()}),
            },
        ],
        2 => vec![
            Block::Text("Now the tests. Commands always show you exactly what will run before they do:".into()),
            Block::Tool {
                id: "toolu_demo_test",
                name: "Bash",
                input: json!({"command": "sh test.sh", "description": "Run the project's tests"}),
            },
        ],
        3 => vec![Block::Text(format!(
            "That was the demo: a streamed answer, tool cards (**ctrl+o** expands one), an edit you could review \
             hunk by hunk, and a command you approved. Nothing left this scratch copy of the project, and no model \
             was called: the answers were scripted.\n\n{CONNECT}"
        ))],
        _ => vec![Block::Text(format!(
            "This is tandem's demo model: it only knows its script, so it can't answer that.\n\n{CONNECT}"
        ))],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The scripted edit must apply to the project as shipped, and make its tests pass.
    #[test]
    fn the_scripted_fix_matches_the_example_project() {
        let greet = super::super::project::FILES.iter().find(|(name, _)| *name == "greet.sh").unwrap().1;
        assert!(greet.contains(OLD_GREET), "the edit's old_string is in greet.sh");
        let fixed = greet.replace(OLD_GREET, &new_greet());
        assert_ne!(new_greet(), OLD_GREET);
        assert!(fixed.contains("echo \"$greeting, $name!\""));
        let hunks = tandem_core::diff::hunks(greet, &fixed, tandem_core::diff::DEFAULT_CONTEXT);
        assert_eq!(hunks.len(), 2, "the dialog offers a per-hunk review");
    }
}
