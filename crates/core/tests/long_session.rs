//! Long sessions through the real agent loop against the fake server: the prompt prefix stays cacheable over a
//! 30-turn session with tool rounds, and a 40-turn session in a small window compacts twice and keeps its task,
//! its files (as they are on disk) and its guidelines, with every request a valid history.

// Test code: a panic is how a failure is reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tandem_core::agent::{self, AgentConfig, AgentHandle};
use tandem_core::context::compact::{CompactionPolicy, FILES_PREAMBLE, SUMMARY_PREAMBLE, SUMMARY_SYSTEM};
use tandem_core::models;
use tandem_core::permissions::{PermissionMode, PermissionPolicy};
use tandem_core::prompt::{self, PromptOptions};
use tandem_core::protocol::{Event, Op, RunOutcome, TurnSummary};
use tandem_core::provider::retry::RetryPolicy;
use tandem_core::provider::{ApiKey, Endpoint, ProviderKind};
use tandem_core::session::CompactTrigger;
use tandem_core::tools::ToolRegistry;
use tandem_testkit::{Block, FakeServer, Reply, Scenario, Usage};

// ---- shared helpers ----

/// A session in `cwd` with the built-in tools, the real system prompt (fixed date) and edits allowed in `cwd`.
fn config(server: &FakeServer, cwd: &Path, config_dir: &Path, window: Option<u64>, reserve_tokens: u64) -> AgentConfig {
    let endpoint = Endpoint {
        name: "anthropic".into(),
        kind: ProviderKind::Anthropic,
        base_url: server.url(),
        api_key: Some(ApiKey::new("test")),
        api_key_env: Some("ANTHROPIC_API_KEY".into()),
    };
    let mut model = models::lookup("claude-sonnet-4-5");
    if let Some(window) = window {
        model.context_window = window;
    }
    AgentConfig {
        session_id: agent::new_session_id(),
        provider: Arc::from(tandem_core::provider::connect(endpoint)),
        model,
        system: prompt::system_blocks(&PromptOptions::default(), cwd, "2025-06-02"),
        tools: ToolRegistry::builtin(),
        permissions: PermissionPolicy::for_cwd(PermissionMode::AcceptEdits, cwd),
        cwd: cwd.to_path_buf(),
        max_turns: None,
        max_budget_usd: None,
        // One attempt: a request the scenario did not foresee must fail the test, not consume the next reply.
        retry: RetryPolicy {
            max_attempts: 1,
            base_delay: Duration::from_millis(1),
            max_delay: Duration::from_millis(2),
        },
        sandbox: None,
        shell_env: Default::default(),
        config_dir: config_dir.to_path_buf(),
        claude_dir: None,
        notices: Vec::new(),
        session_log: None,
        resume: None,
        compaction: CompactionPolicy { threshold: 0.92, reserve_tokens },
        hooks: Default::default(),
        commands: Default::default(),
        skills: Default::default(),
        agents: Default::default(),
        raw_stream: false,
        reasoning: Default::default(),
        betas: Vec::new(),
        structured_output: None,
        fallback_model: None,
        mcp: None,
    }
}

/// A temp dir by its canonical path (what the agent's path checks compare against).
fn temp_dir() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().canonicalize().unwrap();
    (dir, path)
}

/// Runs one turn; Read and Edit inside the workspace must never ask (AcceptEdits).
async fn turn(handle: &mut AgentHandle, prompt: &str) -> (TurnSummary, Vec<Event>) {
    handle.ops.send(Op::UserTurn { text: prompt.into() }).unwrap();
    let mut events = Vec::new();
    loop {
        let event = tokio::time::timeout(Duration::from_secs(20), handle.events.recv()).await.unwrap().unwrap();
        match &event {
            Event::PermissionRequested { call_id, .. } => panic!("{call_id} asked for permission under AcceptEdits"),
            Event::TurnFinished(summary) => return (summary.clone(), events),
            _ => {}
        }
        events.push(event);
    }
}

fn read(id: &str, path: &Path) -> Block {
    Block::tool_use("Read", json!({"file_path": path.display().to_string()})).with_id(id)
}

fn edit(id: &str, path: &Path, old: &str, new: &str) -> Block {
    Block::tool_use("Edit", json!({"file_path": path.display().to_string(), "old_string": old, "new_string": new}))
        .with_id(id)
}

fn reply(blocks: Vec<Block>, usage: Usage) -> Reply {
    Reply { blocks, usage: Some(usage), ..Reply::default() }
}

fn array<'a>(value: &'a Value, key: &str) -> &'a [Value] {
    value.get(key).and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

fn blocks(message: &Value) -> &[Value] {
    message["content"].as_array().expect("the provider always sends content as an array of blocks")
}

fn is_summary_request(body: &Value) -> bool {
    body["system"][0]["text"] == SUMMARY_SYSTEM
        || body["messages"]
            .as_array()
            .and_then(|messages| messages.last())
            .is_some_and(|last| message_text(last).contains("write a detailed summary of the conversation so far"))
}

/// Every text of a message, joined.
fn message_text(message: &Value) -> String {
    blocks(message).iter().filter_map(|block| block["text"].as_str()).collect::<Vec<_>>().join("\n")
}

/// Checks what the Messages API demands of a history: it starts (and, in a request, ends) with the user, roles
/// alternate, no message is empty, tool calls only in assistant messages and results only in user messages
/// (results first), every `tool_use` answered in the very next message, and every `tool_result` answering a
/// `tool_use` of the message just before it, exactly once.
fn validate(messages: &[Value]) -> Result<(), String> {
    let role = |index: usize| messages[index]["role"].as_str().unwrap_or("?");
    if messages.is_empty() {
        return Err("no messages".into());
    }
    if role(0) != "user" || role(messages.len() - 1) != "user" {
        return Err(format!("starts with {} and ends with {}", role(0), role(messages.len() - 1)));
    }
    let ids = |index: usize, kind: &str, key: &str| -> Vec<String> {
        blocks(&messages[index])
            .iter()
            .filter(|block| block["type"] == kind)
            .map(|block| block[key].as_str().unwrap_or_default().to_owned())
            .collect()
    };
    for index in 0..messages.len() {
        let content = blocks(&messages[index]);
        if content.is_empty() {
            return Err(format!("message {index} is empty"));
        }
        if !matches!(role(index), "user" | "assistant") {
            return Err(format!("message {index} has role {}", role(index)));
        }
        if index > 0 && role(index) == role(index - 1) {
            return Err(format!("messages {} and {index} are both {}", index - 1, role(index)));
        }
        let uses = ids(index, "tool_use", "id");
        let results = ids(index, "tool_result", "tool_use_id");
        if role(index) == "assistant" {
            if !results.is_empty() {
                return Err(format!("assistant message {index} holds a tool_result"));
            }
            let answered =
                if index + 1 < messages.len() { ids(index + 1, "tool_result", "tool_use_id") } else { vec![] };
            if let Some(id) = uses.iter().find(|id| !answered.contains(id)) {
                return Err(format!("tool_use {id} of message {index} is not answered in the next message"));
            }
        } else {
            if !uses.is_empty() {
                return Err(format!("user message {index} holds a tool_use"));
            }
            let first_other = content.iter().position(|block| block["type"] != "tool_result").unwrap_or(content.len());
            if content[first_other..].iter().any(|block| block["type"] == "tool_result") {
                return Err(format!("user message {index} has text before a tool_result"));
            }
            let asked = if index > 0 { ids(index - 1, "tool_use", "id") } else { vec![] };
            for (n, id) in results.iter().enumerate() {
                if !asked.contains(id) {
                    return Err(format!("orphan tool_result {id} in message {index}"));
                }
                if results[..n].contains(id) {
                    return Err(format!("tool_use {id} answered twice in message {index}"));
                }
            }
        }
    }
    Ok(())
}

/// No tool call of the session failed (every Read and Edit of the script is valid).
fn assert_no_tool_errors(requests: &[tandem_testkit::RecordedRequest]) {
    for (index, request) in requests.iter().enumerate() {
        for message in array(&request.body, "messages") {
            for block in blocks(message).iter().filter(|block| block["type"] == "tool_result") {
                assert_ne!(block["is_error"], true, "request {index}: a tool call failed: {}", block["content"]);
            }
        }
    }
}

// ---- test 1: prefix stability ----

/// A request laid out in the order the prompt cache reads it (tools, system, messages), each element in its
/// JSON serialization as sent, with the message blocks' `cache_control` removed (the conversation breakpoint
/// moves forward on every request; what must stay identical is the content before it).
struct Linear {
    text: String,
    /// Byte offsets just after each block that carried `cache_control`, in order.
    breakpoints: Vec<usize>,
}

fn linearize(body: &Value) -> Linear {
    let mut out = Linear { text: String::from("{\"tools\":["), breakpoints: Vec::new() };
    let push_list = |out: &mut Linear, items: &[Value], strip: bool| {
        for (index, item) in items.iter().enumerate() {
            if index > 0 {
                out.text.push(',');
            }
            let mut item = item.clone();
            let cached = item.get("cache_control").is_some();
            if strip {
                item.as_object_mut().unwrap().remove("cache_control");
            }
            out.text.push_str(&item.to_string());
            if cached {
                out.breakpoints.push(out.text.len());
            }
        }
    };
    push_list(&mut out, array(body, "tools"), false);
    out.text.push_str("],\"system\":[");
    push_list(&mut out, array(body, "system"), false);
    out.text.push_str("],\"messages\":[");
    for (index, message) in array(body, "messages").iter().enumerate() {
        if index > 0 {
            out.text.push(',');
        }
        out.text.push_str(&format!("{{\"role\":{},\"content\":[", message["role"]));
        push_list(&mut out, blocks(message), true);
        out.text.push_str("]}");
    }
    out.text.push_str("]}");
    out
}

/// The longest prefix of `before` ending at one of its breakpoints that `after` starts with (0 if none).
fn stable_prefix(before: &Linear, after: &Linear) -> usize {
    before
        .breakpoints
        .iter()
        .rev()
        .copied()
        .find(|&end| after.text.as_bytes().starts_with(&before.text.as_bytes()[..end]))
        .unwrap_or(0)
}

fn module_source(k: usize, version: u32) -> String {
    format!(
        "//! Module {k}: formatting helpers.\n\npub const VERSION: u32 = {version};\n\n/// Describes module {k}.\n\
pub fn describe_{k}() -> String {{\n    format!(\"module {k} v{{VERSION}}\")\n}}\n\n#[cfg(test)]\nmod tests {{\n    \
#[test]\n    fn describes() {{\n        assert!(super::describe_{k}().starts_with(\"module {k}\"));\n    }}\n}}\n"
    )
}

const RULES_V1: &str = "# Project rules\n\nUse 4-space indentation. Bump VERSION whenever a module changes.\n";
const RULES_V2: &str = "# Project rules\n\nUse 4-space indentation. Bump VERSION whenever a module changes.\n\
Mention the module number in every commit message (rules v2).\n";

#[tokio::test]
async fn the_prompt_prefix_is_stable_across_a_thirty_turn_session() {
    const TURNS: usize = 30;
    const MODULES: usize = 5;
    const RULES_CHANGE_BEFORE: usize = 15;
    let (_workspace, cwd) = temp_dir();
    let (_config, config_dir) = temp_dir();
    std::fs::create_dir(cwd.join("src")).unwrap();
    std::fs::write(cwd.join("CLAUDE.md"), RULES_V1).unwrap();
    for k in 0..MODULES {
        std::fs::write(cwd.join(format!("src/mod_{k}.rs")), module_source(k, 0)).unwrap();
    }

    // Turn t works on module t % 5: a third of the turns read it, a third read and edit it (bumping VERSION), a
    // third are plain questions. Usage grows like a cached session's, far from the 200k window.
    let mut versions = [0u32; MODULES];
    let mut prompts = Vec::new();
    let mut replies = Vec::new();
    let usage = |n: usize| Usage::new(350, 180).with_cache(450, 4_000 + 450 * n as u64);
    for t in 0..TURNS {
        let k = t % MODULES;
        let path = cwd.join(format!("src/mod_{k}.rs"));
        match t % 3 {
            0 => {
                prompts.push(format!("Turn {t}: what does src/mod_{k}.rs export?"));
                replies.push(reply(
                    vec![Block::text(format!("Let me look at module {k}.")), read(&format!("r{t}"), &path)],
                    usage(replies.len()),
                ));
                replies.push(reply(
                    vec![Block::text(format!("Module {k} exports VERSION and describe_{k}(), plus one test."))],
                    usage(replies.len()),
                ));
            }
            1 => {
                prompts.push(format!("Turn {t}: bump the version of module {k}."));
                let (old, new) = (versions[k], versions[k] + 1);
                versions[k] = new;
                replies.push(reply(vec![read(&format!("r{t}"), &path)], usage(replies.len())));
                replies.push(reply(
                    vec![
                        Block::text(format!("Bumping VERSION from {old} to {new}.")),
                        edit(
                            &format!("e{t}"),
                            &path,
                            &format!("pub const VERSION: u32 = {old};"),
                            &format!("pub const VERSION: u32 = {new};"),
                        ),
                    ],
                    usage(replies.len()),
                ));
                replies.push(reply(
                    vec![Block::text(format!("Module {k} is now at version {new}."))],
                    usage(replies.len()),
                ));
            }
            _ => {
                prompts.push(format!("Turn {t}: should describe_{k} also print the crate name?"));
                replies.push(reply(
                    vec![Block::text(format!(
                        "No: describe_{k} is used in tests that match on the prefix \"module {k}\", and the crate \
                         name is already in the binary's banner."
                    ))],
                    usage(replies.len()),
                ));
            }
        }
    }
    let expected_requests = replies.len();
    let server = FakeServer::start(Scenario::new(replies)).await.unwrap();
    let mut handle = agent::spawn(config(&server, &cwd, &config_dir, None, 13_000));

    let mut rules_change_request = None;
    for (t, prompt) in prompts.iter().enumerate() {
        if t == RULES_CHANGE_BEFORE {
            std::fs::write(cwd.join("CLAUDE.md"), RULES_V2).unwrap();
            rules_change_request = Some(server.requests().len());
        }
        let (summary, events) = turn(&mut handle, prompt).await;
        assert_eq!(summary.outcome, RunOutcome::Success, "turn {t}: {:?}", summary.errors);
        assert!(!events.iter().any(|event| matches!(event, Event::CompactBoundary { .. })), "turn {t} compacted");
    }
    let requests = server.requests();
    assert_eq!(requests.len(), expected_requests);
    assert_no_tool_errors(&requests);
    for (k, &version) in versions.iter().enumerate() {
        let on_disk = std::fs::read_to_string(cwd.join(format!("src/mod_{k}.rs"))).unwrap();
        assert_eq!(on_disk, module_source(k, version), "the edits of module {k} did not all land");
    }

    let linear: Vec<Linear> = requests.iter().map(|request| linearize(&request.body)).collect();
    for (index, request) in requests.iter().enumerate() {
        let body = &request.body;
        validate(array(body, "messages")).unwrap_or_else(|error| panic!("request {index}: {error}"));
        // base + environment (cached), guidelines (cached), and the conversation's breakpoint on the last block.
        let system = array(body, "system");
        assert_eq!(system.len(), 3, "request {index}: system blocks");
        let cached: Vec<bool> = system.iter().map(|block| block.get("cache_control").is_some()).collect();
        assert_eq!(cached, [false, true, true], "request {index}: system breakpoints");
        let last = array(body, "messages").last().unwrap();
        assert_eq!(blocks(last).last().unwrap()["cache_control"]["type"], "ephemeral", "request {index}");
        assert_eq!(linear[index].breakpoints.len(), 3, "request {index}: breakpoints");
    }

    let rules_change = rules_change_request.unwrap();
    let (mut stable_bytes, mut total_bytes) = (0usize, linear[0].text.len());
    for index in 1..linear.len() {
        let (before, after) = (&linear[index - 1], &linear[index]);
        let stable = stable_prefix(before, after);
        stable_bytes += stable;
        total_bytes += after.text.len();
        if index == rules_change {
            // The guidelines block changed: only the prefix up to the environment breakpoint can be reused, and
            // it is reused byte for byte.
            let (old, new) = (&requests[index - 1].body, &requests[index].body);
            assert_eq!(stable, before.breakpoints[0], "request {index}: tools + base + environment changed");
            assert_eq!(old["tools"], new["tools"]);
            assert_eq!(old["system"][0], new["system"][0]);
            assert_eq!(old["system"][1], new["system"][1]);
            let (old_rules, new_rules) =
                (old["system"][2]["text"].as_str().unwrap(), new["system"][2]["text"].as_str().unwrap());
            assert!(old_rules.contains(RULES_V1.trim_end()) && !old_rules.contains("rules v2"), "{old_rules}");
            assert!(new_rules.contains(RULES_V2.trim_end()), "request {index}: stale guidelines: {new_rules}");
            assert!(new_rules.contains(&cwd.join("CLAUDE.md").display().to_string()), "{new_rules}");
            // The conversation itself is untouched.
            let messages_from = |linear: &Linear| linear.text.find("],\"messages\":[").unwrap();
            let old_messages = &before.text[messages_from(before)..*before.breakpoints.last().unwrap()];
            assert!(after.text[messages_from(after)..].starts_with(old_messages), "request {index}: history changed");
        } else {
            assert_eq!(
                stable,
                *before.breakpoints.last().unwrap(),
                "request {index} does not start with request {}'s cached prefix:\nbefore: {}\nafter:  {}",
                index - 1,
                before.text,
                after.text
            );
        }
    }
    let share = stable_bytes as f64 / total_bytes as f64;
    eprintln!(
        "{} requests over {TURNS} turns, {total_bytes} bytes sent (tools + system + messages), {stable_bytes} behind \
         a breakpoint of the previous request",
        requests.len()
    );
    eprintln!("share of input behind a stable breakpoint: {:.1}%", share * 100.0);
    assert!(share >= 0.90, "only {:.1}% of the input was behind a stable breakpoint", share * 100.0);
}

// ---- test 2: two compactions ----

const TASK: &str =
    "Task: rename the function `parse_config` to `load_config` in src/config.rs and keep the tests green";
const TASK_IN_SUMMARY: &str = "Task: rename parse_config to load_config";
const RULES: &str = "# Project rules\n\nRun `cargo test` after every change; keep public names in sync with their \
callers.\n\n## Compact instructions\n\nKeep the exact task statement and the list of renamed items.\n";

const CONFIG_RS: &str = "use std::collections::HashMap;\n\n/// Reads `key = value` lines.\n\
pub fn parse_config(text: &str) -> HashMap<String, String> {\n    text.lines()\n        \
.filter_map(|line| line.split_once('='))\n        .map(|(key, value)| (key.trim().to_owned(), value.trim().to_owned()))\n        \
.collect()\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn parse_config_reads_defaults() {\n        \
assert_eq!(parse_config(\"a = 1\")[\"a\"], \"1\");\n    }\n}\n";
const MAIN_RS: &str = "mod config;\n\nfn main() {\n    let text = std::fs::read_to_string(\"tandem.toml\").unwrap_or_default();\n    \
let config = config::parse_config(&text);\n    println!(\"{} keys\", config.len());\n}\n";

/// The window and the reserve: compaction triggers when the next request would exceed
/// `limit = floor(0.92 × 60,000) − min(8,000, 60,000 / 4) = 47,200` tokens.
const WINDOW: u64 = 60_000;
const RESERVE: u64 = 8_000;
const LIMIT: u64 = 47_200;
/// Every regular reply adds about 2,500 tokens to the context: its answer (about 8,700 chars, 2,400 output
/// tokens) and the next question. The input reported by the j-th regular reply of a phase is
/// `base + 2,500 j`, where `base` is the size of the phase's first request: the system prompt, tools and task
/// at the start (about 12 KB of JSON, 3,500 tokens), the summary, restored files and kept tail after a
/// compaction (about 24 KB, 7,500 tokens). Content and counts agree at about 3.5 chars per token, so the
/// calibrated estimate stays realistic and the kept tail is a realistic one or two exchanges.
const FIRST_BASE: u64 = 3_500;
const COMPACTED_BASE: u64 = 7_500;
const OUTPUT: u64 = 2_400;
/// Below the limit, a reported total leaves at least this much room, far more than the estimate of what
/// comes after a reply (a question, or a small tool result), so the compaction points are certain.
const MARGIN: u64 = 1_000;

fn phase_usage(base: u64, j: usize) -> Usage {
    let total_input = base + 2_500 * j as u64;
    Usage::new(2_500, OUTPUT).with_cache(0, total_input - 2_500)
}

/// A long answer, about 8,700 chars (2,500 tokens), as a thorough model writes them.
fn long_answer(t: usize) -> String {
    let mut text = format!(
        "Answer {t}: no — load_config is defined in src/config.rs and called from src/main.rs; nothing else \
         referred to parse_config. Here is what I checked:\n"
    );
    for line in 0..80 {
        text.push_str(&format!(
            "- check {t}.{line}: `grep -n parse_config` over src/ and tests/ finds no match in module {line}; \
             load_config keeps its signature.\n"
        ));
    }
    text.push_str("The next step is to run `cargo test`.");
    text
}

fn summary_reply(n: usize) -> Reply {
    let text = format!(
        "<analysis>The user wants a rename; it is done in code, the tests are next.</analysis>\n<summary>\n\
1. Task and acceptance criteria: the user asked: \"{TASK}\". {TASK_IN_SUMMARY}, callers included; done when \
`cargo test` passes (summary {n}).\n\
2. Files: src/config.rs, src/main.rs — parse_config renamed to load_config in both; src/config.rs also holds \
the test.\n\
3. Decisions: keep the signature unchanged.\n\
4. Errors and fixes: none.\n\
5. Current state: the rename is applied; the user edits src/config.rs by hand now and then.\n\
6. Next step: answer the user's next question about the rename.\n</summary>"
    );
    reply(vec![Block::text(text)], Usage::new(30_000, 900))
}

#[tokio::test]
async fn a_forty_turn_session_in_a_small_window_compacts_twice_and_keeps_the_task() {
    const TURNS: usize = 40;
    let (_workspace, cwd) = temp_dir();
    let (_config, config_dir) = temp_dir();
    std::fs::create_dir(cwd.join("src")).unwrap();
    std::fs::write(cwd.join("CLAUDE.md"), RULES).unwrap();
    let (config_rs, main_rs) = (cwd.join("src/config.rs"), cwd.join("src/main.rs"));
    std::fs::write(&config_rs, CONFIG_RS).unwrap();
    std::fs::write(&main_rs, MAIN_RS).unwrap();

    // The user edits src/config.rs by hand twice between the compactions; the model reads and edits it in
    // between, so the second compaction must re-read the file to see the last edit.
    const USER_EDIT_1_BEFORE: usize = 17;
    const MODEL_EDIT_TURN: usize = 19;
    const USER_EDIT_2_BEFORE: usize = 24;
    let doc_old = "/// Reads `key = value` lines.";
    let doc_new = "/// Reads `key = value` lines; the caller supplies the text.";
    let default_path = "/// Where the configuration lives.\npub const DEFAULT_PATH: &str = \"tandem.toml\";\n\n";

    // The script: per turn, the rounds' blocks.
    let mut turns: Vec<(String, Vec<Vec<Block>>)> = Vec::new();
    turns.push((
        TASK.to_owned(),
        vec![
            vec![
                Block::text("Let me look at both files."),
                read("read-config", &config_rs),
                read("read-main", &main_rs),
            ],
            vec![Block::text("parse_config is defined in src/config.rs and called once in src/main.rs.")],
        ],
    ));
    turns.push((
        "Go ahead with the rename.".to_owned(),
        vec![
            vec![
                edit("edit-def", &config_rs, "pub fn parse_config(", "pub fn load_config("),
                edit("edit-test", &config_rs, "assert_eq!(parse_config(", "assert_eq!(load_config("),
                edit("edit-call", &main_rs, "config::parse_config(", "config::load_config("),
            ],
            vec![Block::text("Renamed the definition, its test call and the call in main.rs.")],
        ],
    ));
    for t in 2..TURNS {
        if t == MODEL_EDIT_TURN {
            turns.push((
                "I touched the doc comment in src/config.rs. Rename the test to match the function, too.".to_owned(),
                vec![
                    vec![read("reread-config", &config_rs)],
                    vec![edit(
                        "edit-test-name",
                        &config_rs,
                        "fn parse_config_reads_defaults()",
                        "fn load_config_reads_defaults()",
                    )],
                    vec![Block::text("The test is now load_config_reads_defaults.")],
                ],
            ));
            continue;
        }
        turns.push((
            format!("Question {t}: does anything else still mention the old name?"),
            vec![vec![Block::text(long_answer(t))]],
        ));
    }

    // Lay the replies out: a summary reply comes before the first regular request after a reply whose reported
    // total (input + output) exceeds the limit.
    let mut replies = Vec::new();
    let mut expected_summaries = Vec::new();
    let (mut base, mut j, mut over) = (FIRST_BASE, 0, false);
    for (_, rounds) in &turns {
        for blocks in rounds {
            if over {
                expected_summaries.push(replies.len());
                replies.push(summary_reply(expected_summaries.len()));
                (base, j) = (COMPACTED_BASE, 0);
            }
            let usage = phase_usage(base, j);
            let total = usage.input_tokens + usage.cache_read_input_tokens + usage.output_tokens;
            over = total > LIMIT;
            assert!(
                over || total + MARGIN <= LIMIT,
                "reply {} reports {total} tokens, too close to {LIMIT}",
                replies.len()
            );
            replies.push(reply(blocks.clone(), usage));
            j += 1;
        }
    }
    assert_eq!(expected_summaries.len(), 2, "the script itself should foresee two compactions");
    let expected_requests = replies.len();

    let server = FakeServer::start(Scenario::new(replies)).await.unwrap();
    let mut handle = agent::spawn(config(&server, &cwd, &config_dir, Some(WINDOW), RESERVE));
    let mut boundaries = Vec::new(); // (turn, pre_tokens, config.rs on disk during that turn)
    for (t, (prompt, _)) in turns.iter().enumerate() {
        if t == USER_EDIT_1_BEFORE {
            let text = std::fs::read_to_string(&config_rs).unwrap();
            assert!(text.contains(doc_old));
            std::fs::write(&config_rs, text.replace(doc_old, doc_new)).unwrap();
        }
        if t == USER_EDIT_2_BEFORE {
            let text = std::fs::read_to_string(&config_rs).unwrap();
            std::fs::write(&config_rs, text.replacen("/// Reads", &format!("{default_path}/// Reads"), 1)).unwrap();
        }
        let on_disk = std::fs::read_to_string(&config_rs).unwrap();
        let (summary, events) = turn(&mut handle, prompt).await;
        assert_eq!(summary.outcome, RunOutcome::Success, "turn {t}: {:?}", summary.errors);
        for event in &events {
            if let Event::CompactBoundary { trigger, pre_tokens } = event {
                assert_eq!(*trigger, CompactTrigger::Auto);
                // Only the model's edit turn changes the file, and it does not compact.
                assert_eq!(std::fs::read_to_string(&config_rs).unwrap(), on_disk, "turn {t}");
                boundaries.push((t, *pre_tokens, on_disk.clone()));
            }
            if let Event::Error { message } = event {
                panic!("turn {t}: {message}");
            }
        }
    }

    let requests = server.requests();
    let summaries: Vec<usize> = (0..requests.len()).filter(|&i| is_summary_request(&requests[i].body)).collect();
    eprintln!(
        "{} requests ({} regular), summary requests at {summaries:?}, compaction boundaries (turn, pre_tokens): {:?}",
        requests.len(),
        requests.len() - summaries.len(),
        boundaries.iter().map(|(t, pre, _)| (*t, *pre)).collect::<Vec<_>>()
    );
    assert_eq!(summaries, expected_summaries, "the summary requests are not where the usage puts them");
    assert_eq!(boundaries.len(), 2);
    assert_eq!(requests.len(), expected_requests);
    assert_no_tool_errors(&requests);
    let final_config = std::fs::read_to_string(&config_rs).unwrap();
    assert!(!final_config.contains("parse_config") && final_config.contains("DEFAULT_PATH"), "{final_config}");
    assert!(!std::fs::read_to_string(&main_rs).unwrap().contains("parse_config"));

    for (index, request) in requests.iter().enumerate() {
        validate(array(&request.body, "messages")).unwrap_or_else(|error| panic!("request {index}: {error}"));
        if !is_summary_request(&request.body) {
            let system = array(&request.body, "system");
            let guidelines = system.last().unwrap()["text"].as_str().unwrap();
            assert!(guidelines.contains(RULES.trim_end()), "request {index}: no guidelines block: {guidelines}");
        }
    }
    // The second user edit reached no request before the second compaction: only a re-read can show it.
    let before_second = &requests[..summaries[1]];
    assert!(before_second.iter().all(|request| !request.body.to_string().contains("DEFAULT_PATH")));

    let mut previous_summary: Option<String> = None;
    for (n, (&at, (turn_index, pre_tokens, disk))) in summaries.iter().zip(&boundaries).enumerate() {
        let summary_request = &requests[at].body;
        // The summary is the conversation's next turn: the system prompt as before, read from the cache.
        assert_eq!(summary_request["system"], requests[at - 1].body["system"], "summary request {n}");
        assert!(!array(summary_request, "tools").is_empty(), "summary request {n} must define the tools");
        let messages = array(summary_request, "messages");
        let prompt = message_text(messages.last().unwrap());
        assert!(prompt.contains("write a detailed summary"), "summary request {n}: {prompt}");
        assert!(prompt.contains("Keep the exact task statement"), "CLAUDE.md's compact instructions are missing");
        // The task reaches every summarizer: the first one sees the user's words, the second one the summary.
        let history = summary_request["messages"].to_string();
        match &previous_summary {
            None => assert!(history.contains("rename the function `parse_config` to `load_config`")),
            Some(previous) => assert!(history.contains(previous.as_str()), "summary request {n} lost the summary"),
        }
        assert!(*pre_tokens > LIMIT, "compaction {n} ran at {pre_tokens} tokens, under the limit");

        let next = &requests[at + 1].body;
        assert!(!is_summary_request(next));
        let first = &array(next, "messages")[0];
        assert_eq!(first["role"], "user");
        let first_text = message_text(first);
        assert!(first_text.starts_with(SUMMARY_PREAMBLE), "request {}: {first_text}", at + 1);
        assert!(first_text.contains(TASK_IN_SUMMARY) && first_text.contains(TASK), "the task was lost: {first_text}");
        assert!(first_text.contains(&format!("(summary {})", n + 1)), "not the latest summary: {first_text}");
        assert!(first_text.contains(FILES_PREAMBLE), "no files restored: {first_text}");
        let restored = format!("<file path=\"{}\">\n{}\n</file>", config_rs.display(), disk.trim_end());
        assert!(first_text.contains(&restored), "src/config.rs is not restored as on disk:\n{first_text}\n---\n{disk}");
        let restored_paths: Vec<&str> = first_text
            .match_indices("<file path=\"")
            .map(|(i, _)| first_text[i + 12..].split('"').next().unwrap())
            .collect();
        eprintln!(
            "compaction {}: in turn {turn_index}, pre_tokens {pre_tokens}, summary request #{at}, next request has {} \
             messages, restored files {restored_paths:?}",
            n + 1,
            array(next, "messages").len()
        );
        // Files a compaction restored are still being worked on: the next compaction restores them again.
        assert!(
            restored_paths.iter().any(|path| path.ends_with("src/main.rs")),
            "src/main.rs was dropped: {restored_paths:?}"
        );
        previous_summary = Some(format!("(summary {})", n + 1));
        // Until the next compaction, every request starts with that same message (the cached prefix holds).
        let phase_end = summaries.get(n + 1).copied().unwrap_or(requests.len());
        for (index, request) in requests.iter().enumerate().take(phase_end).skip(at + 2) {
            let mut first_now = array(&request.body, "messages")[0].clone();
            let mut first_then = first.clone();
            for message in [&mut first_now, &mut first_then] {
                for block in message["content"].as_array_mut().unwrap() {
                    block.as_object_mut().unwrap().remove("cache_control");
                }
            }
            assert_eq!(first_now, first_then, "request {index} rewrote the compacted history's first message");
        }
    }
    assert!(boundaries[1].2.contains("DEFAULT_PATH") && boundaries[1].2.contains(doc_new));
    assert!(!boundaries[0].2.contains(doc_new), "the first compaction ran after the user's edit");

    // The last request still carries the task, from the second summary.
    let last = requests.last().unwrap();
    assert!(message_text(&array(&last.body, "messages")[0]).contains("(summary 2)"));
}

/// A compaction that cannot bring the context under the threshold (the latest prompt alone nearly fills the
/// window) is not run again at every request; the user's prompt survives it word for word.
#[tokio::test]
async fn a_compaction_that_cannot_shrink_the_context_does_not_repeat() {
    let (_tmp, cwd) = temp_dir();
    let config_dir = cwd.join(".config");
    std::fs::create_dir_all(&config_dir).unwrap();
    let big = "word ".repeat(2400);
    let text = |text: &str| Reply::new().block(Block::text(text));
    let summary = text("<summary>Task and acceptance criteria: the user pasted a long text.</summary>");
    // Two ordinary turns, then one whose prompt is too big to shrink: one compaction, then the answers.
    // The answer after the compaction reports the context as the server counted it: still nearly the window.
    let full =
        Usage { input_tokens: 3900, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
    let scenario = Scenario::new(vec![text("one"), text("two"), summary, text("three").with_usage(full), text("four")]);
    let server = FakeServer::start(scenario).await.unwrap();
    let mut handle = agent::spawn(config(&server, &cwd, &config_dir, Some(4000), 500));
    turn(&mut handle, "The original task: count the words.").await;
    turn(&mut handle, "next").await;
    let (first, _) = turn(&mut handle, &format!("Here it is: {big}")).await;
    assert_eq!(first.outcome, RunOutcome::Success, "{:?}", first.errors);
    let (second, events) = turn(&mut handle, "and again").await;
    assert_eq!(second.outcome, RunOutcome::Success, "{:?}", second.errors);
    assert!(!events.iter().any(|event| matches!(event, Event::CompactionStarted { .. })), "compacted again");
    let requests = server.requests();
    let summaries = requests.iter().filter(|request| is_summary_request(&request.body)).count();
    assert_eq!(summaries, 1, "{} requests", requests.len());
    let after = message_text(&array(&requests[3].body, "messages")[0]);
    assert!(after.contains("<user-messages>") && after.contains("The original task: count the words."), "{after}");
}
