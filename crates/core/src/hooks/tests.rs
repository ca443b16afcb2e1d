use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use super::*;
use crate::trust::{self, Store};

fn set_from(document: Value, project: bool) -> HookSet {
    let mut set = HookSet::default();
    let Value::Object(document) = document else { panic!("an object") };
    set.read_document(Path::new("/p/.claude/settings.json"), &document, project);
    set
}

fn engine_for(document: Value, dir: &Path) -> HookEngine {
    HookEngine::new(set_from(document, false), dir.to_path_buf(), Arc::default(), true)
}

fn base(dir: &Path) -> HookBase {
    HookBase {
        session_id: "s-1".into(),
        transcript_path: Some(dir.join("s-1.jsonl")),
        cwd: dir.to_path_buf(),
        permission_mode: crate::permissions::PermissionMode::Default,
        sandbox: None,
        agent: None,
    }
}

fn pre_tool(command: &str) -> Value {
    json!({"hooks": {"PreToolUse": [{"matcher": "Edit|Write", "hooks": [{"type": "command", "command": command}]}]}})
}

fn edit_fields() -> Map<String, Value> {
    let mut fields = Map::new();
    fields.insert("tool_name".into(), json!("Edit"));
    fields.insert("tool_input".into(), json!({"file_path": "a.txt"}));
    fields
}

#[test]
fn bad_entries_are_reported_and_the_rest_is_kept() {
    let set = set_from(
        json!({"hooks": {
            "PreToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "echo ok"}]},
                {"matcher": "(", "hooks": [{"type": "command", "command": "echo x"}]},
                {"matcher": "Edit", "hooks": [{"type": "prompt", "prompt": "is this ok?"}]},
                {"matcher": "Edit", "hooks": [{"type": "command", "command": "x", "timeout": -1}]}
            ],
            "BeforeEverything": [],
            "Stop": {"hooks": []}
        }}),
        false,
    );
    // The bad timeout is reported and replaced by the default: the hook itself still runs.
    assert_eq!(set.entries.len(), 2, "{:?}", set.entries);
    let problems = set.problems.join("\n");
    for expected in ["not a valid regular expression", "\"prompt\"", "timeout -1", "BeforeEverything", "hooks.Stop"] {
        assert!(problems.contains(expected), "{expected} missing from:\n{problems}");
    }
}

#[test]
fn matchers_are_exact_names_or_regular_expressions() {
    let set = set_from(
        json!({"hooks": {"PreToolUse": [
            {"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "a"}]},
            {"matcher": "mcp__.*", "hooks": [{"type": "command", "command": "b"}]},
            {"hooks": [{"type": "command", "command": "c"}]}
        ]}}),
        false,
    );
    let names = |subject: &str| -> Vec<&str> {
        set.entries.iter().filter(|entry| entry.matcher.matches(subject)).map(|entry| entry.command.as_str()).collect()
    };
    assert_eq!(names("Edit"), ["a", "c"]);
    assert_eq!(names("MultiEdit"), ["c"], "a plain name is not a substring match");
    assert_eq!(names("mcp__github__issue"), ["b", "c"]);
}

#[tokio::test]
async fn exit_two_blocks_with_stderr_and_the_input_is_on_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let seen = dir.path().join("seen.json");
    let command = format!("cat > {}; echo 'no edits here' >&2; exit 2", seen.display());
    let engine = engine_for(pre_tool(&command), dir.path());
    let outcome = engine.fire(HookEvent::PreToolUse, Some("Edit"), &base(dir.path()), edit_fields(), None).await;
    assert_eq!(outcome.blocked.as_deref(), Some("no edits here"));
    let input: Value = serde_json::from_str(&std::fs::read_to_string(seen).unwrap()).unwrap();
    assert_eq!(input["hook_event_name"], "PreToolUse");
    assert_eq!(input["session_id"], "s-1");
    assert_eq!(input["permission_mode"], "default");
    assert_eq!(input["tool_name"], "Edit");
    assert_eq!(input["tool_input"]["file_path"], "a.txt");
    assert_eq!(input["cwd"], dir.path().display().to_string());
}

#[tokio::test]
async fn a_hook_that_does_not_match_does_not_run() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine_for(pre_tool("exit 2"), dir.path());
    let outcome = engine.fire(HookEvent::PreToolUse, Some("Bash"), &base(dir.path()), Map::new(), None).await;
    assert_eq!(outcome.ran, 0);
    assert!(outcome.blocked.is_none());
}

#[tokio::test]
async fn json_output_is_honoured() {
    let dir = tempfile::tempdir().unwrap();
    let output = json!({
        "systemMessage": "checked",
        "hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
            "permissionDecisionReason": "generated file", "updatedInput": {"file_path": "b.txt"}}
    });
    let engine = engine_for(pre_tool(&format!("echo '{output}'")), dir.path());
    let outcome = engine.fire(HookEvent::PreToolUse, Some("Write"), &base(dir.path()), edit_fields(), None).await;
    assert_eq!(outcome.verdict, Some((Verdict::Deny, "generated file".into())));
    assert_eq!(outcome.notices, ["checked"]);
    assert_eq!(outcome.updated_input, Some(json!({"file_path": "b.txt"})));
}

#[tokio::test]
async fn a_crash_is_reported_and_blocks_only_when_the_hook_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let open = engine_for(pre_tool("no-such-command-anywhere"), dir.path());
    let outcome = open.fire(HookEvent::PreToolUse, Some("Edit"), &base(dir.path()), Map::new(), None).await;
    assert!(outcome.blocked.is_none());
    assert!(outcome.errors[0].contains("exited with 127"), "{:?}", outcome.errors);

    let closed = engine_for(
        json!({"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "kill -9 $$", "onFailure": "block"}]}]}}),
        dir.path(),
    );
    let outcome = closed.fire(HookEvent::PreToolUse, Some("Edit"), &base(dir.path()), Map::new(), None).await;
    let blocked = outcome.blocked.expect("a crash of an onFailure: block hook blocks");
    assert!(blocked.contains("killed by a signal") && blocked.contains("block on failure"), "{blocked}");
}

#[tokio::test]
async fn a_hook_past_its_timeout_is_killed_with_what_it_started() {
    let dir = tempfile::tempdir().unwrap();
    let leftover = dir.path().join("leftover");
    let command = format!("(sleep 2; touch {}) & sleep 30", leftover.display());
    let engine = engine_for(
        json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": command, "timeout": 0.3, "onFailure": "block"}]}]}}),
        dir.path(),
    );
    let started = Instant::now();
    let outcome = engine.fire(HookEvent::Stop, None, &base(dir.path()), Map::new(), None).await;
    assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
    assert!(outcome.blocked.expect("a timeout blocks").contains("timed out"));
    std::thread::sleep(Duration::from_millis(2500));
    assert!(!leftover.exists(), "the hook's background child outlived it");
}

#[tokio::test]
async fn plain_stdout_is_context_for_prompt_hooks_and_the_project_dir_is_set() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine_for(
        json!({"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo \"root=$CLAUDE_PROJECT_DIR\""}]}]}}),
        dir.path(),
    );
    let outcome = engine.fire(HookEvent::UserPromptSubmit, None, &base(dir.path()), Map::new(), None).await;
    assert_eq!(outcome.context, [format!("root={}", dir.path().display())]);
}

#[tokio::test]
async fn project_hooks_run_only_when_trusted_and_disable_all_hooks_stops_everything() {
    let dir = tempfile::tempdir().unwrap();
    let engine = HookEngine::new(set_from(pre_tool("exit 2"), true), dir.path().to_path_buf(), Arc::default(), false);
    let outcome = engine.fire(HookEvent::PreToolUse, Some("Edit"), &base(dir.path()), Map::new(), None).await;
    assert_eq!(outcome.ran, 0);
    assert!(engine.describe()[0].contains("off until"), "{:?}", engine.describe());
    engine.set_project_trusted(true);
    let outcome = engine.fire(HookEvent::PreToolUse, Some("Edit"), &base(dir.path()), Map::new(), None).await;
    assert!(outcome.blocked.is_some());

    let mut document = pre_tool("exit 2");
    document["disableAllHooks"] = json!(true);
    let engine = engine_for(document, dir.path());
    assert!(!engine.has(HookEvent::PreToolUse));
}

#[test]
fn trust_covers_exactly_the_hooks_trusted() {
    let dir = tempfile::tempdir().unwrap();
    let project = Path::new("/work/project");
    assert!(!trust::is_trusted(dir.path(), Store::Hooks, project, "a"));
    trust::trust(dir.path(), Store::Hooks, project, "a").unwrap();
    assert!(trust::is_trusted(dir.path(), Store::Hooks, project, "a"));
    assert!(!trust::is_trusted(dir.path(), Store::Hooks, project, "a\nb"));
    assert!(!trust::is_trusted(dir.path(), Store::Hooks, Path::new("/work/other"), "a"));
}

#[test]
fn the_trust_fingerprint_keeps_fields_apart() {
    let hook = |matcher: &str, command: &str| {
        set_from(
            json!({"hooks": {"SessionStart": [{"matcher": matcher, "hooks": [{"type": "command", "command": command}]}]}}),
            true,
        )
    };
    let harmless = hook("\ttouch /tmp/pwned;", "true");
    let harmful = hook("", "touch /tmp/pwned;\ttrue");
    assert_ne!(harmless.project_fingerprint(), harmful.project_fingerprint());
}

#[test]
fn wrong_fields_fail_closed_instead_of_dropping_the_hook() {
    let set = set_from(
        json!({"hooks": {"PreToolUse": [{"hooks": [
            {"type": "command", "command": "a", "onFailure": "Block"},
            {"type": "command", "command": "b", "onFailure": "sometimes"},
            {"type": "command", "command": "c", "timeout": "5"},
            {"type": "command", "command": "d", "timeout": 1e300}
        ]}], "Stop": [{"matcher": "Bash | Write", "hooks": [{"type": "command", "command": "e"}]}]}}),
        false,
    );
    let by_command = |command: &str| set.entries.iter().find(|entry| entry.command == command).unwrap();
    assert!(by_command("a").block_on_failure);
    assert!(by_command("b").block_on_failure, "an unknown onFailure blocks");
    assert_eq!(by_command("c").timeout, Duration::from_secs(5));
    assert_eq!(by_command("d").timeout, Duration::from_secs(24 * 60 * 60));
    assert!(set.problems.iter().any(|problem| problem.contains("sometimes")), "{:?}", set.problems);
    let pre = set_from(
        json!({"hooks": {"PreToolUse": [{"matcher": "Bash | Write", "hooks": [{"type": "command", "command": "e"}]}]}}),
        false,
    );
    assert!(pre.entries[0].matcher.matches("Write") && !pre.entries[0].matcher.matches("Edit"));
}

#[tokio::test]
async fn an_untrusted_project_cannot_turn_off_the_users_hooks() {
    let dir = tempfile::tempdir().unwrap();
    let mut set = set_from(pre_tool("exit 2"), false);
    let Value::Object(project) = json!({"disableAllHooks": true}) else { unreachable!() };
    set.read_document(Path::new("/p/.claude/settings.local.json"), &project, true);
    let engine = HookEngine::new(set, dir.path().to_path_buf(), Arc::default(), false);
    let outcome = engine.fire(HookEvent::PreToolUse, Some("Edit"), &base(dir.path()), Map::new(), None).await;
    assert!(outcome.blocked.is_some(), "the user's hook still runs");
    engine.set_project_trusted(true);
    assert!(!engine.has(HookEvent::PreToolUse), "once trusted, the project's switch counts");
}

#[tokio::test]
async fn a_decision_counts_even_when_an_escaped_child_holds_the_pipe_and_a_bom_leads() {
    let dir = tempfile::tempdir().unwrap();
    let deny = json!({"hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason": "no"}});
    let command = format!("printf '\\357\\273\\277%s\\n' '{deny}'; setsid sleep 30 & exit 0");
    let engine = engine_for(pre_tool(&command), dir.path());
    let started = Instant::now();
    let outcome = engine.fire(HookEvent::PreToolUse, Some("Edit"), &base(dir.path()), edit_fields(), None).await;
    assert_eq!(outcome.verdict, Some((Verdict::Deny, "no".into())), "{outcome:?}");
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn a_huge_hook_output_reaches_the_model_bounded_and_is_kept_whole_next_to_the_transcript() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine_for(
        json!({"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "head -c 300000 /dev/zero | tr '\\0' x"}]}]}}),
        dir.path(),
    );
    let outcome = engine.fire(HookEvent::UserPromptSubmit, None, &base(dir.path()), Map::new(), None).await;
    let [context] = outcome.context.as_slice() else { panic!("one context: {:?}", outcome.context.len()) };
    assert!(context.len() < 101_000, "{} bytes reach the model", context.len());
    let kept = context.split("the whole text is in ").nth(1).and_then(|rest| rest.split(" …").next());
    let note = context.find("[…").map_or("", |at| &context[at..at + 120]);
    let kept = kept.unwrap_or_else(|| panic!("no saved copy named: {note}"));
    assert!(kept.starts_with(&dir.path().join("s-1").display().to_string()), "{kept}");
    assert_eq!(std::fs::read_to_string(kept).unwrap().len(), 300_000);
}
