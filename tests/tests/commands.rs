//! Custom slash commands (`.claude/commands/*.md`) through the real binary, headless and in the TUI, and the
//! built-in commands that also work as headless prompts.

// Test code: a panic is how a failure is reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use tandem_e2e::app::{expect_idle_with, start};
use tandem_e2e::{FakeServer, Scenario, Workspace, execute, tool_results};

fn scenario(value: Value) -> Scenario {
    Scenario::from_json(&value.to_string()).expect("scenario")
}

fn answer(text: &str) -> Scenario {
    scenario(json!({"replies": [{"blocks": [{"type": "text", "text": text}]}]}))
}

fn first_prompt(server: &FakeServer) -> String {
    server.requests()[0].body["messages"][0]["content"][0]["text"].as_str().unwrap().to_owned()
}

const REVIEW: &str = "---\ndescription: Review one file\nargument-hint: [file] [focus]\nallowed-tools: Bash(touch:*)\n---\nReview $1, looking for $2. All arguments: $ARGUMENTS\n";

#[test]
fn a_command_expands_headless_with_its_arguments_and_rules() {
    let workspace = Workspace::new();
    workspace.write(".claude/commands/review.md", REVIEW);
    let server = FakeServer::spawn(scenario(json!({"replies": [
        {"blocks": [{"type": "tool_use", "id": "toolu_log", "name": "Bash", "input": {"command": "touch reviewed.txt"}}]},
        {"blocks": [{"type": "text", "text": "Reviewed."}]}
    ]})))
    .unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "/review src/a.rs \"error handling\"", "--output-format", "json"]);
    let run = execute(command);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        first_prompt(&server),
        "Review src/a.rs, looking for error handling. All arguments: src/a.rs \"error handling\"\n"
    );
    // allowed-tools held for the command's turn: the command ran without a question (headless would deny it).
    let results = tool_results(&server.requests()[1].body);
    assert_ne!(results[0]["is_error"], true, "{}", results[0]);
    assert!(workspace.path().join("reviewed.txt").exists());
    assert!(run.result()["permission_denials"].as_array().unwrap().is_empty());
}

#[test]
fn namespaced_user_commands_and_unknown_ones() {
    let workspace = Workspace::new();
    workspace.write_config("claude/commands/git/summary.md", "Summarize the last commits.");
    let server = FakeServer::spawn(answer("Summary.")).unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "/git:summary"]);
    let run = execute(command);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(first_prompt(&server), "Summarize the last commits.");

    let server = FakeServer::spawn(answer("never")).unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "/nonesuch now"]);
    let run = execute(command);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stderr.contains("Unknown command /nonesuch"), "{}", run.stderr);
    assert!(server.requests().is_empty());
}

#[test]
fn built_in_commands_work_as_headless_prompts() {
    let workspace = Workspace::new();
    // Longer than the tail compaction keeps as it is (20,000 tokens), so a summary is worth it.
    let long_answer = "A paragraph of the first answer, long enough to be worth summarizing. ".repeat(2000);
    let server = FakeServer::spawn(scenario(json!({"replies": [
        {"blocks": [{"type": "text", "text": long_answer}]},
        {"blocks": [{"type": "text", "text": "Second answer."}]},
        {"blocks": [{"type": "text", "text": "<summary>We said hello.</summary>"}]}
    ]})))
    .unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "hello", "--output-format", "json"]);
    let run = execute(command);
    let session = run.result()["session_id"].as_str().unwrap().to_owned();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "and now?", "--resume", &session, "--output-format", "json"]);
    execute(command);
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "/compact", "--resume", &session, "--output-format", "json"]);
    let run = execute(command);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.result()["result"], "Compacted the conversation.");
    assert_eq!(server.requests().len(), 3, "the compaction's summary request");
}

#[test]
fn a_headless_compact_says_why_a_short_conversation_was_kept() {
    let workspace = Workspace::new();
    let server = FakeServer::spawn(answer("First answer.")).unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "hello", "--output-format", "json"]);
    let session = execute(command).result()["session_id"].as_str().unwrap().to_owned();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "/compact", "--resume", &session, "--output-format", "json"]);
    let run = execute(command);
    assert_eq!(run.code, 0, "{run:?}");
    let said = run.result()["result"].as_str().unwrap().to_owned();
    assert!(said.starts_with("Not compacted"), "{said}");
    assert_eq!(server.requests().len(), 1, "no summary request for a conversation a summary would not shrink");
}

#[test]
fn the_tui_lists_a_command_in_the_popup_and_runs_it() {
    let workspace = Workspace::new();
    workspace.write(".claude/commands/review.md", REVIEW);
    workspace.write(".claude/commands/broken.md", "---\ndescription: never closed\n");
    let server = FakeServer::spawn(answer("Looks fine.")).unwrap();
    let pty = start(&workspace, &server, 40, 120, &[]);
    let screen = pty.expect_text("broken.md");
    assert!(screen.contains("closing ---"), "the broken command is reported:\n{screen}");
    pty.send("/rev");
    let popup = pty.expect_text("Review one file");
    assert!(popup.contains("/review") && popup.contains("[file] [focus]"), "{popup}");
    pty.send("iew main.rs speed");
    pty.expect("the whole command in the input", |screen| screen.contains("> /review main.rs speed"));
    pty.send(tandem_e2e::pty::keys::ENTER);
    let screen = expect_idle_with(&pty, "Looks fine.");
    assert!(screen.contains("/review main.rs speed"), "the transcript shows what was typed:\n{screen}");
    assert_eq!(first_prompt(&server), "Review main.rs, looking for speed. All arguments: main.rs speed\n");
}

#[test]
fn a_command_runs_its_allowed_shell_lines_and_includes_files() {
    let workspace = Workspace::new();
    workspace.write("notes.txt", "the release is on Friday\n");
    workspace.write(
        ".claude/commands/status.md",
        "---\nallowed-tools: Bash(echo:*)\n---\nState: !`echo all-green`\nDenied: !`touch planted.txt`\nNotes: @notes.txt\n",
    );
    let server = FakeServer::spawn(answer("Noted.")).unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "/status", "--output-format", "json"]);
    let run = execute(command);
    assert_eq!(run.code, 0, "{run:?}");
    let prompt = first_prompt(&server);
    assert!(prompt.contains("State: all-green"), "the allowed line ran: {prompt}");
    assert!(prompt.contains("Denied: !`touch planted.txt`"), "the other stayed text: {prompt}");
    assert!(!workspace.path().join("planted.txt").exists(), "a line no rule allows must not run");
    assert!(prompt.contains("Contents of notes.txt:") && prompt.contains("the release is on Friday"), "{prompt}");
    assert!(run.stderr.contains("was not run"), "{}", run.stderr);
}

#[test]
fn the_apps_informational_commands_answer_headless_too() {
    let workspace = Workspace::new();
    workspace.write(".claude/commands/review.md", REVIEW);
    let server = FakeServer::spawn(answer("I wrote CLAUDE.md.")).unwrap();
    let result = |prompt: &str| {
        let mut command = workspace.anthropic(&server);
        command.args(["-p", prompt, "--output-format", "json"]);
        let run = execute(command);
        assert_eq!(run.code, 0, "{prompt}: {run:?}");
        run.result()["result"].as_str().unwrap().to_owned()
    };
    assert!(result("/cost").starts_with("Session cost: $0.0000"));
    let help = result("/help");
    assert!(help.contains("/compact") && help.contains("/review — Review one file"), "{help}");
    assert!(result("/hooks").contains("No hooks"));
    assert!(server.requests().is_empty(), "none of these asks the model");
    assert_eq!(result("/init"), "I wrote CLAUDE.md.");
    assert!(first_prompt(&server).contains("create a CLAUDE.md"));
}

#[test]
fn arguments_never_become_shell_lines_and_a_spaced_rule_allows_nothing() {
    let workspace = Workspace::new();
    workspace.write(".claude/commands/todo.md", "---\nallowed-tools: Bash(touch:*)\n---\nNote this: $ARGUMENTS\n");
    workspace
        .write(".claude/commands/spaced.md", "---\nallowed-tools: Bash (echo:*)\n---\nState: !`touch spaced.txt`\n");
    let server = FakeServer::spawn(scenario(json!({"replies": [
        {"blocks": [{"type": "text", "text": "Noted."}]},
        {"blocks": [{"type": "text", "text": "Noted."}]}
    ]})))
    .unwrap();
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "/todo !`touch from-args.txt`"]);
    assert_eq!(execute(command).code, 0);
    assert!(!workspace.path().join("from-args.txt").exists(), "an argument ran as a shell line");
    assert!(first_prompt(&server).contains("Note this: !`touch from-args.txt`"), "{}", first_prompt(&server));

    let mut command = workspace.anthropic(&server);
    command.args(["-p", "/spaced"]);
    let run = execute(command);
    assert!(!workspace.path().join("spaced.txt").exists(), "`Bash (echo:*)` allowed every command: {run:?}");
    assert!(run.stderr.contains("Bash (echo:*)"), "the bad rule is reported whole: {}", run.stderr);
}

/// Issue 27: the app's commands were listed by hand in three places, and `tandem -p /rewind` answered "Unknown
/// command". Every built-in is in one table: headless, an app-only one says it belongs to the app, and an alias
/// (`/usage`) runs its command.
#[test]
fn every_app_command_is_known_headless_and_aliases_run_their_command() {
    let workspace = Workspace::new();
    let server = FakeServer::spawn(answer("unused")).unwrap();
    let run = |prompt: &str| {
        let mut command = workspace.anthropic(&server);
        command.args(["-p", prompt, "--output-format", "json"]);
        execute(command)
    };
    for builtin in tandem_core::commands::BUILTINS {
        if builtin.reach == tandem_core::commands::Reach::App {
            let run = run(&format!("/{}", builtin.name));
            assert!(run.stderr.contains("is a command of the full-screen app"), "/{}: {run:?}", builtin.name);
        }
    }
    let usage = run("/usage");
    assert_eq!(usage.code, 0, "{usage:?}");
    assert!(usage.result()["result"].as_str().unwrap().starts_with("Session cost:"), "{usage:?}");
    assert!(server.requests().is_empty(), "none of these asks the model");
}
