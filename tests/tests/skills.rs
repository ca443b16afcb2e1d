//! Skills (`.claude/skills/<name>/SKILL.md`) through the real binary: their names and descriptions reach the
//! model in the Skill tool's description, the Skill tool loads one, and `init` lists them.

// Test code: a panic is how a failure is reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use tandem_e2e::{FakeServer, Scenario, Workspace, execute, tool_results};

fn scenario(value: Value) -> Scenario {
    Scenario::from_json(&value.to_string()).expect("scenario")
}

#[test]
fn a_skill_is_offered_loaded_and_listed() {
    let workspace = Workspace::new();
    workspace.write(
        ".claude/skills/changelog/SKILL.md",
        "---\nname: changelog\ndescription: Write the CHANGELOG entry for a release.\n---\nUse template.md; one line per change.\n",
    );
    workspace.write(".claude/skills/changelog/template.md", "## vX.Y.Z\n");
    workspace.write_config(
        "claude/skills/haiku/SKILL.md",
        "---\ndescription: Answer in a haiku when asked for poetry.\n---\nFive, seven, five.\n",
    );
    let server = FakeServer::spawn(scenario(json!({"replies": [
        {"blocks": [{"type": "tool_use", "id": "toolu_skill", "name": "Skill", "input": {"skill": "changelog"}}]},
        {"blocks": [{"type": "text", "text": "Entry written."}]}
    ]})))
    .unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "write the changelog", "--output-format", "stream-json", "--verbose"]);
    let run = execute(command);
    assert_eq!(run.code, 0, "{run:?}");
    let init = run.lines().into_iter().find(|line| line["subtype"] == "init").unwrap();
    assert_eq!(init["skills"], json!(["changelog", "haiku"]), "{init}");

    let requests = server.requests();
    let tools = requests[0].body["tools"].as_array().unwrap();
    let skill = tools.iter().find(|tool| tool["name"] == "Skill").expect("the Skill tool is offered");
    let description = skill["description"].as_str().unwrap();
    assert!(description.contains("- changelog: Write the CHANGELOG entry for a release."), "{description}");
    assert!(description.contains("- haiku: Answer in a haiku"), "{description}");
    assert!(!requests[0].body.to_string().contains("one line per change"), "the body waits until it is loaded");

    let results = tool_results(&requests[1].body);
    let loaded = results[0]["content"].as_str().unwrap();
    assert!(loaded.contains("Use template.md; one line per change.") && loaded.contains("template.md"), "{loaded}");
    assert_eq!(
        requests[0].body["tools"], requests[1].body["tools"],
        "the tools (with the skills) stay byte-identical between requests"
    );
}

#[test]
fn a_skill_runs_as_a_slash_command() {
    let workspace = Workspace::new();
    workspace.write(
        ".claude/skills/changelog/SKILL.md",
        "---\ndescription: Write the CHANGELOG entry.\n---\nOne line per change.\n",
    );
    let server =
        FakeServer::spawn(scenario(json!({"replies": [{"blocks": [{"type": "text", "text": "Loading it."}]}]})))
            .unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "/changelog v1.2", "--output-format", "json"]);
    let run = execute(command);
    assert_eq!(run.code, 0, "{run:?}");
    let prompt = server.requests()[0].body["messages"][0]["content"][0]["text"].as_str().unwrap().to_owned();
    assert!(prompt.contains("skill changelog") && prompt.contains("ARGUMENTS: v1.2"), "{prompt}");
}

/// Issue 29: the setting sources decide the project's and the user's skills (and commands and agents) as Claude
/// Code's `settingSources` does: an SDK program passing `[]` got the project's skills all the same.
#[test]
fn setting_sources_decide_whose_skills_are_read() {
    let workspace = Workspace::new();
    workspace.write(".claude/skills/changelog/SKILL.md", "---\ndescription: Write the changelog.\n---\nDo it.\n");
    workspace.write_config("claude/skills/haiku/SKILL.md", "---\ndescription: Answer in a haiku.\n---\nFive.\n");
    for (sources, expected) in [
        ("", json!([])),
        ("user", json!(["haiku"])),
        ("project", json!(["changelog"])),
        ("user,project", json!(["changelog", "haiku"])),
    ] {
        let server =
            FakeServer::spawn(scenario(json!({"replies": [{"blocks": [{"type": "text", "text": "ok"}]}]}))).unwrap();
        let mut command = workspace.anthropic(&server);
        command.args(["-p", "hi", "--output-format", "stream-json", "--verbose", "--setting-sources", sources]);
        let run = execute(command);
        assert_eq!(run.code, 0, "{run:?}");
        let init = run.lines().into_iter().find(|line| line["subtype"] == "init").unwrap();
        assert_eq!(init["skills"], expected, "--setting-sources {sources:?}");
    }
}
