//! Long sessions through the real agent loop against the fake server: the prompt prefix stays cacheable over a
//! 30-turn session with tool rounds, and a 40-turn session in a small window compacts twice and keeps its task,
//! its files (as they are on disk) and its guidelines, with every request a valid history.

// Test code: a panic is how a failure is reported.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::too_many_lines)]

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};
use tandem_core::agent::{self, AgentConfig, AgentHandle};
use tandem_core::context::compact::{CompactionPolicy, FILES_PREAMBLE, SUMMARY_PREAMBLE, SUMMARY_SYSTEM};
use tandem_core::models;
use tandem_core::permissions::{PermissionMode, PermissionPolicy};
use tandem_core::prompt::{self, PromptOptions};
use tandem_core::protocol::{Event, Op, RunOutcome, TurnSummary};
use tandem_core::provider::retry::RetryPolicy;
use tandem_core::session::CompactTrigger;
use tandem_testkit::{Block, FakeServer, Reply, Scenario, Usage};

// ---- shared helpers ----

/// A session in `cwd` with the built-in tools, the real system prompt (fixed date) and edits allowed in `cwd`.
fn config(server: &FakeServer, cwd: &Path, config_dir: &Path, window: Option<u64>, reserve_tokens: u64) -> AgentConfig {
    let mut model = models::lookup("claude-sonnet-4-5");
    if let Some(window) = window {
        model.context_window = window;
    }
    AgentConfig {
        model,
        system: prompt::system_blocks(&PromptOptions::default(), cwd, "2025-06-02"),
        permissions: PermissionPolicy::for_cwd(PermissionMode::AcceptEdits, cwd),
        // One attempt: a request the scenario did not foresee must fail the test, not consume the next reply.
        retry: RetryPolicy {
            max_attempts: 1,
            base_delay: Duration::from_millis(1),
            max_delay: Duration::from_millis(2),
        },
        config_dir: config_dir.to_path_buf(),
        compaction: CompactionPolicy { threshold: 0.92, reserve_tokens },
        ..common::agent_config(server, cwd)
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
        let event = tokio::time::timeout(Duration::from_secs(20), handle.events.recv()).await.unwrap().unwrap().event;
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

/// The compaction tests (`long_session/compaction.rs`).
mod long_session {
    mod compaction;
}
