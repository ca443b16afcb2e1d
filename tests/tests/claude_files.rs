//! Claude Code's own files: `~/.claude/CLAUDE.md` and `~/.claude/settings.json` count as the user's, and
//! `@path` imports in guideline files are followed as Claude Code follows them.

// Test code: a panic is how a failure is reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;
use tandem_e2e::{FakeServer, Scenario, Workspace, execute, tool_results};

fn one_reply() -> FakeServer {
    FakeServer::spawn(Scenario::from_json(r#"{"replies":[{"blocks":[{"type":"text","text":"ok"}]}]}"#).unwrap())
        .unwrap()
}

/// A model that runs `touch made.txt`, then says it is done.
fn touch_then_done() -> FakeServer {
    let replies = json!({"replies": [
        {"blocks": [{"type": "tool_use", "id": "toolu_touch", "name": "Bash", "input": {"command": "touch made.txt"}}]},
        {"blocks": [{"type": "text", "text": "done"}]}
    ]});
    FakeServer::spawn(Scenario::from_json(&replies.to_string()).unwrap()).unwrap()
}

fn system_text(server: &FakeServer) -> String {
    let body = &server.requests()[0].body;
    body["system"].as_array().unwrap().iter().filter_map(|block| block["text"].as_str()).collect::<Vec<_>>().join("\n")
}

#[test]
fn claude_user_guidelines_and_imports_reach_the_model() {
    let workspace = Workspace::new();
    std::fs::create_dir_all(workspace.path().join(".git")).unwrap();
    workspace.write_config("claude/CLAUDE.md", "User rule: USER-GUIDE.\n@~/personal.md\n");
    workspace.write(
        "CLAUDE.md",
        "Project rule.\nSee @docs/style.md and @docs/missing.md, mail me@example.com.\n@../outside.md\n",
    );
    workspace.write("docs/style.md", "STYLE-GUIDE: tabs.\n@nested/deeper.md\n");
    workspace.write("docs/nested/deeper.md", "DEEPER-GUIDE.\n@../style.md\n");
    std::fs::write(workspace.path().parent().unwrap().join("outside.md"), "OUTSIDE-SECRET").unwrap();
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join("personal.md"), "PERSONAL-GUIDE").unwrap();
    let server = one_reply();
    let mut command = workspace.anthropic(&server);
    command.env("HOME", home.path()).args(["-p", "hi"]);
    let run = execute(command);
    assert_eq!(run.code, 0, "{run:?}");
    let system = system_text(&server);
    for wanted in ["USER-GUIDE", "PERSONAL-GUIDE", "STYLE-GUIDE", "DEEPER-GUIDE"] {
        assert!(system.contains(wanted), "{wanted} missing:\n{system}");
    }
    // The cycle back to style.md ends; nothing outside the project comes in through a project file.
    assert_eq!(system.matches("STYLE-GUIDE").count(), 1, "{system}");
    assert!(!system.contains("OUTSIDE-SECRET"), "{system}");
    assert!(system.contains("not found in the project"), "{system}");
    assert!(system.contains("docs/missing.md"), "the missing import is named: {system}");
    assert!(system.contains("(imported by"), "{system}");
}

#[test]
fn claude_user_settings_rules_apply() {
    let workspace = Workspace::new();
    workspace.write("a.txt", "a\n");
    workspace.write_config("claude/settings.json", r#"{"permissions": {"allow": ["Bash(touch made.txt)"]}}"#);
    let server = touch_then_done();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "make it", "--output-format", "json"]);
    let run = execute(command);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(workspace.path().join("made.txt").exists(), "{:?}", tool_results(&server.requests()[1].body));
    // --setting-sources without user leaves the file out.
    std::fs::remove_file(workspace.path().join("made.txt")).unwrap();
    let server = touch_then_done();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "make it", "--output-format", "json", "--setting-sources", "project,local"]);
    let run = execute(command);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(!workspace.path().join("made.txt").exists());
}

#[test]
fn settings_flag_takes_json_or_a_file() {
    let workspace = Workspace::new();
    let server = touch_then_done();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "make it", "--settings", r#"{"permissions": {"allow": ["Bash(touch made.txt)"]}}"#]);
    assert_eq!(execute(command).code, 0);
    assert!(workspace.path().join("made.txt").exists());
    std::fs::remove_file(workspace.path().join("made.txt")).unwrap();
    let file = workspace.write_config("extra-settings.json", r#"{"permissions": {"allow": ["Bash(touch made.txt)"]}}"#);
    let server = touch_then_done();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "make it", "--settings"]).arg(&file);
    assert_eq!(execute(command).code, 0);
    assert!(workspace.path().join("made.txt").exists());
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "x", "--settings", "{not json"]);
    let run = execute(command);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("--settings"), "{}", run.stderr);
}

#[test]
fn an_empty_or_relative_home_does_not_make_the_repositorys_files_the_users() {
    let workspace = Workspace::new();
    std::fs::create_dir_all(workspace.path().join(".git")).unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("SECRET"), "CANARY-OUTSIDE").unwrap();
    let import = format!("@{}\n", outside.path().join("SECRET").display());
    workspace.write(".claude/CLAUDE.md", &import);
    workspace.write(".config/tandem/AGENTS.md", &import);
    for home in ["", "."] {
        let server = one_reply();
        let mut command = workspace.anthropic(&server);
        command.env("HOME", home).env_remove("CLAUDE_CONFIG_DIR").args(["-p", "hi"]);
        assert_eq!(execute(command).code, 0);
        let system = system_text(&server);
        assert!(!system.contains("CANARY-OUTSIDE"), "HOME={home:?}: {system}");
    }
    // A config directory above the repository does not make the repository's files the user's either.
    workspace.write("AGENTS.md", &import);
    let server = one_reply();
    let mut command = workspace.anthropic(&server);
    command.env("TANDEM_CONFIG_DIR", workspace.path().parent().unwrap()).args(["-p", "hi"]);
    assert_eq!(execute(command).code, 0);
    assert!(!system_text(&server).contains("CANARY-OUTSIDE"));
}

/// Issue 29: `settingSources` decides the guideline files as Claude Code does — the user's `CLAUDE.md` with
/// `user`, the project's with `project`, `CLAUDE.local.md` with `local` (an SDK program passing `[]` got the
/// project's `CLAUDE.md` all the same).
#[test]
fn setting_sources_decide_which_guideline_files_are_read() {
    let workspace = Workspace::new();
    std::fs::create_dir_all(workspace.path().join(".git")).unwrap();
    workspace.write_config("claude/CLAUDE.md", "USER-GUIDE\n");
    workspace.write("CLAUDE.md", "PROJECT-GUIDE\n");
    workspace.write("CLAUDE.local.md", "LOCAL-GUIDE\n");
    let home = tempfile::tempdir().unwrap();
    for (sources, expected) in [
        ("", &[][..]),
        ("user", &["USER-GUIDE"][..]),
        ("project", &["PROJECT-GUIDE"][..]),
        ("project,local", &["PROJECT-GUIDE", "LOCAL-GUIDE"][..]),
        ("user,project,local", &["USER-GUIDE", "PROJECT-GUIDE", "LOCAL-GUIDE"][..]),
    ] {
        let server = one_reply();
        let mut command = workspace.anthropic(&server);
        command.env("HOME", home.path()).args(["-p", "hi", "--setting-sources", sources]);
        let run = execute(command);
        assert_eq!(run.code, 0, "{run:?}");
        let system = system_text(&server);
        for guide in ["USER-GUIDE", "PROJECT-GUIDE", "LOCAL-GUIDE"] {
            assert_eq!(system.contains(guide), expected.contains(&guide), "--setting-sources {sources:?}, {guide}");
        }
    }
}

/// Claude Code reads `sub/CLAUDE.md` the first time the model reads a file under `sub/` (issue 29): it comes with
/// that Read's result, once, and never in the system prompt; without the project's settings source it is not read.
#[test]
fn a_subdirectorys_guidelines_come_with_the_first_read_there() {
    let workspace = Workspace::new();
    std::fs::create_dir_all(workspace.path().join(".git")).unwrap();
    workspace.write("CLAUDE.md", "ROOT-GUIDE\n");
    workspace.write("sub/CLAUDE.md", "SUB-GUIDE: tabs here.\n");
    workspace.write("sub/deeper/.claude/CLAUDE.md", "DEEPER-GUIDE\n");
    workspace.write("sub/a.txt", "alpha\n");
    workspace.write("sub/deeper/b.txt", "beta\n");
    workspace.write("top.txt", "top\n");
    let read =
        |id: &str, path: &str| json!({"type": "tool_use", "id": id, "name": "Read", "input": {"file_path": path}});
    for (sources, expected) in [(None, true), (Some("user"), false)] {
        let replies = json!({"replies": [
            {"blocks": [read("r1", "top.txt"), read("r2", "sub/a.txt")]},
            {"blocks": [read("r3", "sub/a.txt"), read("r4", "sub/deeper/b.txt")]},
            {"blocks": [{"type": "text", "text": "done"}]}
        ]});
        let server = FakeServer::spawn(Scenario::from_json(&replies.to_string()).unwrap()).unwrap();
        let mut command = workspace.anthropic(&server);
        command.args(["-p", "hi"]);
        if let Some(sources) = sources {
            command.args(["--setting-sources", sources]);
        }
        let run = execute(command);
        assert_eq!(run.code, 0, "{run:?}");
        let requests = server.requests();
        let first = tool_results(&requests[1].body);
        let second = tool_results(&requests[2].body)[2..].to_vec();
        let has = |result: &serde_json::Value, text: &str| result["content"].as_str().unwrap().contains(text);
        assert!(!has(&first[0], "SUB-GUIDE"), "a file of the working directory brings none");
        assert_eq!(has(&first[1], "SUB-GUIDE"), expected, "{sources:?}: {}", first[1]);
        assert!(!has(&second[0], "SUB-GUIDE"), "only the first read there brings it");
        assert_eq!(has(&second[1], "DEEPER-GUIDE"), expected, "{sources:?}: {}", second[1]);
        assert!(!has(&second[1], "SUB-GUIDE"));
        assert!(!system_text(&server).contains("SUB-GUIDE"));
    }
}
