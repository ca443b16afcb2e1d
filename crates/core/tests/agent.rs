//! The agent loop against the fake server, driven through `Op`/`Event` like a front end: concurrency of
//! read-only calls, order of mutating calls, and the permission round trip.

// Test code: a panic is how a failure is reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::{Value, json};
use tandem_core::agent::{self, AgentConfig, AgentHandle};
use tandem_core::permissions::{PermissionMode, PermissionPolicy};
use tandem_core::protocol::{AlwaysScope, Event, Op, PermissionAnswer, RunOutcome, TurnSummary};
use tandem_core::tools::{Risk, Tool, ToolContext, ToolOutput, ToolRegistry};
use tandem_testkit::{FakeServer, Scenario};

/// A read-only tool that waits until `parties` calls are inside it at once: it only finishes if the agent runs
/// read-only calls concurrently.
struct Rendezvous {
    barrier: Arc<tokio::sync::Barrier>,
}

impl Tool for Rendezvous {
    fn name(&self) -> &'static str {
        "Rendezvous"
    }
    fn description(&self) -> std::borrow::Cow<'static, str> {
        "waits for its peers".into()
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]})
    }
    fn is_read_only(&self) -> bool {
        true
    }
    fn risk(&self) -> Risk {
        Risk::Low
    }
    fn run<'a>(
        &'a self,
        input: tandem_core::conversation::ToolInput,
        _ctx: &'a ToolContext,
    ) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move {
            match tokio::time::timeout(Duration::from_secs(10), self.barrier.wait()).await {
                Ok(_) => ToolOutput::ok(format!("met {}", input["n"])),
                Err(_) => ToolOutput::error("peers never came: calls ran one at a time"),
            }
        })
    }
}

/// A mutating tool that records the order of calls and whether two ever overlapped.
struct Recorder {
    log: Arc<Mutex<Vec<i64>>>,
    running: Arc<AtomicUsize>,
    overlapped: Arc<AtomicUsize>,
}

impl Tool for Recorder {
    fn name(&self) -> &'static str {
        "Record"
    }
    fn description(&self) -> std::borrow::Cow<'static, str> {
        "records a number".into()
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]})
    }
    fn is_read_only(&self) -> bool {
        false
    }
    fn risk(&self) -> Risk {
        Risk::Medium
    }
    fn run<'a>(
        &'a self,
        input: tandem_core::conversation::ToolInput,
        _ctx: &'a ToolContext,
    ) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move {
            if self.running.fetch_add(1, Ordering::SeqCst) > 0 {
                self.overlapped.fetch_add(1, Ordering::SeqCst);
            }
            tokio::task::yield_now().await;
            tokio::time::sleep(Duration::from_millis(5)).await;
            self.log.lock().unwrap().push(input["n"].as_i64().unwrap());
            self.running.fetch_sub(1, Ordering::SeqCst);
            ToolOutput::ok("recorded")
        })
    }
}

fn config(server: &FakeServer, tools: ToolRegistry, mode: PermissionMode) -> AgentConfig {
    AgentConfig {
        tools,
        permissions: PermissionPolicy::for_cwd(mode, &std::env::temp_dir()),
        config_dir: std::env::temp_dir().join("tandem-agent-test-config"),
        ..common::agent_config(server, &std::env::temp_dir())
    }
}

/// Runs one turn, answering permission requests with `answer`; returns the summary and the events.
async fn turn(
    handle: &mut AgentHandle,
    prompt: &str,
    mut answer: impl FnMut(&str, &str) -> PermissionAnswer,
) -> (TurnSummary, Vec<Event>) {
    handle.ops.send(Op::UserTurn { text: prompt.into() }).unwrap();
    let mut events = Vec::new();
    loop {
        let event = tokio::time::timeout(Duration::from_secs(20), handle.events.recv()).await.unwrap().unwrap().event;
        match &event {
            Event::PermissionRequested { call_id, suggested_rule, .. } => {
                let reply = answer(call_id, suggested_rule);
                handle.ops.send(Op::PermissionAnswer { call_id: call_id.clone(), answer: reply }).unwrap();
            }
            Event::TurnFinished(summary) => return (summary.clone(), events),
            _ => {}
        }
        events.push(event);
    }
}

fn tool_results(body: &Value) -> Vec<Value> {
    body["messages"].as_array().unwrap().last().unwrap()["content"].as_array().unwrap().clone()
}

#[tokio::test]
async fn consecutive_read_only_calls_run_concurrently_and_results_keep_order() {
    let scenario = Scenario::from_json(
        &json!({"replies": [
            {"blocks": [
                {"type": "tool_use", "id": "a", "name": "Rendezvous", "input": {"n": 1}},
                {"type": "tool_use", "id": "b", "name": "Rendezvous", "input": {"n": 2}},
                {"type": "tool_use", "id": "c", "name": "Rendezvous", "input": {"n": 3}}
            ]},
            {"blocks": [{"type": "text", "text": "all met"}]}
        ]})
        .to_string(),
    )
    .unwrap();
    let server = FakeServer::start(scenario).await.unwrap();
    let mut tools = ToolRegistry::empty();
    tools.register(Arc::new(Rendezvous { barrier: Arc::new(tokio::sync::Barrier::new(3)) }));
    let mut handle = agent::spawn(config(&server, tools, PermissionMode::Default));
    let (summary, _) = turn(&mut handle, "meet", |_, _| PermissionAnswer::AllowOnce).await;
    assert_eq!(summary.outcome, RunOutcome::Success);
    let results = tool_results(&server.requests()[1].body);
    let contents: Vec<&str> = results.iter().map(|result| result["content"].as_str().unwrap()).collect();
    assert_eq!(contents, ["met 1", "met 2", "met 3"]);
    let ids: Vec<&str> = results.iter().map(|result| result["tool_use_id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["a", "b", "c"]);
}

#[tokio::test]
async fn mutating_calls_run_one_at_a_time_in_order_and_the_user_decides() {
    let calls: Vec<Value> = (1..=4)
        .map(|n| json!({"type": "tool_use", "id": format!("r{n}"), "name": "Record", "input": {"n": n}}))
        .collect();
    let scenario = Scenario::from_json(
        &json!({"replies": [
            {"blocks": calls},
            {"blocks": [{"type": "tool_use", "id": "r5", "name": "Record", "input": {"n": 5}}]},
            {"blocks": [{"type": "text", "text": "done"}]}
        ]})
        .to_string(),
    )
    .unwrap();
    let server = FakeServer::start(scenario).await.unwrap();
    let log = Arc::new(Mutex::new(Vec::new()));
    let overlapped = Arc::new(AtomicUsize::new(0));
    let mut tools = ToolRegistry::empty();
    tools.register(Arc::new(Recorder {
        log: log.clone(),
        running: Arc::new(AtomicUsize::new(0)),
        overlapped: overlapped.clone(),
    }));
    let mut handle = agent::spawn(config(&server, tools, PermissionMode::Default));
    let mut asked = Vec::new();
    let (summary, events) = turn(&mut handle, "record", |call_id, rule| {
        asked.push(call_id.to_owned());
        match call_id {
            "r1" => PermissionAnswer::AllowOnce,
            "r2" => PermissionAnswer::Deny { feedback: Some("not that one".into()) },
            "r3" => PermissionAnswer::AllowAlways { rule: rule.to_owned(), scope: AlwaysScope::Session },
            other => panic!("{other} should not have been asked: the session rule allows it"),
        }
    })
    .await;
    assert_eq!(summary.outcome, RunOutcome::Success);
    assert_eq!(asked, ["r1", "r2", "r3"]);
    assert_eq!(*log.lock().unwrap(), [1, 3, 4, 5]);
    assert_eq!(overlapped.load(Ordering::SeqCst), 0);
    assert_eq!(summary.permission_denials.len(), 1);
    assert_eq!(summary.permission_denials[0].tool_use_id, "r2");
    let results = tool_results(&server.requests()[1].body);
    assert_eq!(results[1]["is_error"], true);
    assert!(results[1]["content"].as_str().unwrap().contains("not that one"));
    // Every call went through the whole lifecycle.
    let started = events.iter().filter(|event| matches!(event, Event::ToolCallStarted { .. })).count();
    let finished = events.iter().filter(|event| matches!(event, Event::ToolCallFinished { .. })).count();
    assert_eq!((started, finished), (5, 5));
}

#[tokio::test]
async fn thinking_is_sent_back_with_its_signature_and_the_prefix_is_stable() {
    let scenario = Scenario::from_json(
        &json!({"replies": [
            {"blocks": [
                {"type": "thinking", "thinking": "hmm", "signature": "sig-123"},
                {"type": "tool_use", "id": "t1", "name": "Rendezvous", "input": {"n": 1}}
            ]},
            {"blocks": [{"type": "text", "text": "first"}]},
            {"blocks": [{"type": "text", "text": "second"}]}
        ]})
        .to_string(),
    )
    .unwrap();
    let server = FakeServer::start(scenario).await.unwrap();
    let mut tools = ToolRegistry::empty();
    tools.register(Arc::new(Rendezvous { barrier: Arc::new(tokio::sync::Barrier::new(1)) }));
    let mut handle = agent::spawn(config(&server, tools, PermissionMode::Default));
    turn(&mut handle, "one", |_, _| PermissionAnswer::AllowOnce).await;
    turn(&mut handle, "two", |_, _| PermissionAnswer::AllowOnce).await;
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let assistant = &requests[1].body["messages"][1];
    assert_eq!(assistant["content"][0], json!({"type": "thinking", "thinking": "hmm", "signature": "sig-123"}));
    // Each request's messages are a prefix of the next one's (apart from the moving cache breakpoint).
    let strip = |mut message: Value| {
        if let Some(blocks) = message["content"].as_array_mut() {
            for block in blocks {
                block.as_object_mut().unwrap().remove("cache_control");
            }
        }
        message
    };
    for pair in requests.windows(2) {
        let before = pair[0].body["messages"].as_array().unwrap().clone();
        let after = pair[1].body["messages"].as_array().unwrap().clone();
        for (a, b) in before.into_iter().zip(after) {
            assert_eq!(strip(a), strip(b));
        }
        assert_eq!(pair[0].body["system"], pair[1].body["system"]);
        assert_eq!(pair[0].body["tools"], pair[1].body["tools"]);
    }
    let last = requests[2].body["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["content"].as_array().unwrap().last().unwrap()["cache_control"]["type"], "ephemeral");
}

/// Issue 28: `/cost` and the status line left out an interrupted response that `/inspect` counted; its input is
/// billed all the same. The usage it reported before the interrupt is now added to the session's totals.
#[tokio::test]
async fn an_interrupted_response_is_counted_in_the_totals() {
    let scenario = json!({"replies": [{
        "blocks": [{"type": "text", "text": "one two three four five six seven eight nine ten", "chunks": 10}],
        "usage": {"input_tokens": 1000, "output_tokens": 7, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
        "delay_ms": 30
    }]});
    let server = FakeServer::start(Scenario::from_json(&scenario.to_string()).unwrap()).await.unwrap();
    let mut handle = agent::spawn(config(&server, ToolRegistry::empty(), PermissionMode::Default));
    handle.ops.send(Op::UserTurn { text: "count".into() }).unwrap();
    let mut totals = None;
    loop {
        let event = tokio::time::timeout(Duration::from_secs(20), handle.events.recv()).await.unwrap().unwrap().event;
        match event {
            Event::MessageDelta { .. } if totals.is_none() => {
                totals = Some(None);
                handle.ops.send(Op::Interrupt).unwrap();
            }
            Event::Usage { total, .. } => totals = Some(Some(total)),
            Event::TurnFinished(summary) => {
                assert!(summary.interrupted, "{summary:?}");
                break;
            }
            _ => {}
        }
    }
    let total = totals.flatten().expect("the interrupted response's usage is reported");
    assert_eq!(total.input_tokens, 1000);
}

/// What a compaction test's conversation holds per answer: enough that compacting it is worth a summary.
fn long_answer(turn: usize) -> String {
    format!("Answer {turn}: the pelican is safe. {}", "The pelican rests on the pier by the boats. ".repeat(400))
}

/// A window small enough that the kept tail (a tenth of it) is the last exchange of a few long answers.
const SMALL_WINDOW: u64 = 20_000;

#[tokio::test]
async fn manual_compact_survives_a_failing_summary_request_and_keeps_the_task() {
    let mut replies: Vec<Value> =
        (0..4).map(|turn| json!({"blocks": [{"type": "text", "text": long_answer(turn)}]})).collect();
    // The first summary request fails (not retryable): it is sent again shrunk.
    replies.push(json!({"fault": {"kind": "http", "status": 400, "body": {"type": "error", "error": {"type": "invalid_request_error", "message": "prompt is too long"}}}}));
    replies.push(json!({"blocks": [{"type": "text", "text": "<summary>Task and acceptance criteria: keep the pelican safe.</summary>"}]}));
    replies.push(json!({"blocks": [{"type": "text", "text": "Continuing with the pelican."}]}));
    let server =
        FakeServer::start(Scenario::from_json(&json!({ "replies": replies }).to_string()).unwrap()).await.unwrap();
    let mut config = config(&server, ToolRegistry::empty(), PermissionMode::Default);
    config.model.context_window = SMALL_WINDOW;
    let mut handle = agent::spawn(config);
    for turn in 0..4 {
        let prompt = if turn == 0 { "Task: keep the pelican safe.".to_owned() } else { format!("next step {turn}") };
        turn_of(&mut handle, &prompt).await;
    }
    handle.ops.send(Op::Compact { instructions: Some("Mention every bird.".into()) }).unwrap();
    let mut paid = None;
    loop {
        let event = tokio::time::timeout(Duration::from_secs(20), handle.events.recv()).await.unwrap().unwrap().event;
        match event {
            Event::Usage { total, cost_usd, .. } => paid = Some((total, cost_usd)),
            Event::CompactBoundary { trigger, .. } => {
                assert_eq!(trigger, tandem_core::session::CompactTrigger::Manual);
                let (total, cost) = paid.expect("the summary's usage is reported before the boundary");
                assert!(total.output_tokens > 0 && cost.is_some_and(|cost| cost > 0.0), "{total:?} {cost:?}");
                break;
            }
            Event::Error { message } => panic!("compaction failed: {message}"),
            _ => {}
        }
    }
    let (summary, _) = turn(&mut handle, "carry on", |_, _| PermissionAnswer::AllowOnce).await;
    assert_eq!(summary.outcome, RunOutcome::Success);

    let requests = server.requests();
    let summaries: Vec<&Value> = requests
        .iter()
        .map(|request| &request.body)
        .filter(|body| body["messages"].to_string().contains("write a detailed summary"))
        .collect();
    assert_eq!(summaries.len(), 2, "the summary request as the next turn (it fails), then a shrunk one");
    // The first is the conversation's own next turn: the same system prompt, tools and history prefix as the
    // request before it, so a provider reads it from the prompt cache.
    let before = &requests[3].body;
    assert_eq!(summaries[0]["system"], before["system"]);
    assert_eq!(summaries[0]["tools"], before["tools"]);
    let sent = before["messages"].as_array().unwrap();
    let asked = summaries[0]["messages"].as_array().unwrap();
    assert_eq!(&asked[..sent.len() - 1], &sent[..sent.len() - 1], "the history is sent unchanged");
    assert_eq!(summaries[1]["system"][0]["text"], tandem_core::context::compact::SUMMARY_SYSTEM);
    assert!(summaries[1].to_string().contains("keep the pelican safe"), "the task itself is never dropped");
    assert!(summaries[1].to_string().contains("Mention every bird."), "the user's /compact instructions are sent");
    let last = &requests.last().unwrap().body;
    let first_message = last["messages"][0].to_string();
    assert!(first_message.contains("keep the pelican safe"), "{first_message}");
    assert!(
        first_message.contains(&tandem_core::context::compact::SUMMARY_PREAMBLE[..40]),
        "the history now starts with the summary: {first_message}"
    );
}

/// Runs one prompt to its end, allowing anything asked.
async fn turn_of(handle: &mut AgentHandle, prompt: &str) {
    let (summary, _) = turn(handle, prompt, |_, _| PermissionAnswer::AllowOnce).await;
    assert_eq!(summary.outcome, RunOutcome::Success);
}

/// Compaction brings back the files the conversation read, but only those a Read may read now: a path named by
/// a denied call (or only in the model's text) is not read into the rebuilt history.
/// A fake server playing `replies`, and an agent in default mode whose workspace is `workspace`.
async fn spawn_in(workspace: &std::path::Path, replies: Vec<Value>, window: Option<u64>) -> (FakeServer, AgentHandle) {
    let server =
        FakeServer::start(Scenario::from_json(&json!({ "replies": replies }).to_string()).unwrap()).await.unwrap();
    let mut config = config(&server, ToolRegistry::builtin(), PermissionMode::Default);
    if let Some(window) = window {
        config.model.context_window = window;
    }
    config.cwd = workspace.to_path_buf();
    config.permissions = PermissionPolicy::for_cwd(PermissionMode::Default, workspace);
    (server, agent::spawn(config))
}

/// Issue 28: `/compact` on a short conversation made the next request larger (13.5k → 14.3k tokens) while saying
/// it had summarized 13.6k. A conversation whose summarized part would be about as long as its summary is now
/// left as it is, without paying for a summary, and the user is told why.
#[tokio::test]
async fn compacting_a_short_conversation_says_so_and_changes_nothing() {
    let replies = vec![
        json!({"blocks": [{"type": "text", "text": "The pelican is safe."}]}),
        json!({"blocks": [{"type": "text", "text": "Still safe."}]}),
    ];
    let workspace = tempfile::tempdir().unwrap();
    let (server, mut handle) = spawn_in(workspace.path(), replies, None).await;
    turn_of(&mut handle, "Task: keep the pelican safe.").await;
    handle.ops.send(Op::Compact { instructions: None }).unwrap();
    let said = loop {
        let event = tokio::time::timeout(Duration::from_secs(20), handle.events.recv()).await.unwrap().unwrap().event;
        match event {
            Event::Info { message } => break message,
            Event::CompactionStarted { .. } | Event::CompactBoundary { .. } => panic!("compacted: {event:?}"),
            _ => {}
        }
    };
    assert!(said.starts_with("Not compacted") && said.contains("would not make it smaller"), "{said}");
    turn_of(&mut handle, "and now?").await;
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "no summary was asked for");
    let history = requests[1].body["messages"].to_string();
    assert!(history.contains("Task: keep the pelican safe.") && history.contains("The pelican is safe."), "{history}");
}

/// A compaction that is worth it leaves a smaller conversation, says by how much, and carries its summary for the
/// front end to show.
#[tokio::test]
async fn a_compaction_makes_the_conversation_smaller_and_carries_its_summary() {
    // Near a small window's limit, and early in a large one (~13,000 tokens, under the 20,000-token tail a large
    // window keeps): `/compact` summarizes most of the conversation either way.
    for window in [Some(SMALL_WINDOW), None] {
        compaction_makes_the_conversation_smaller(window).await;
    }
}

async fn compaction_makes_the_conversation_smaller(window: Option<u64>) {
    let mut replies: Vec<Value> =
        (0..3).map(|turn| json!({"blocks": [{"type": "text", "text": long_answer(turn)}]})).collect();
    replies.push(json!({"blocks": [{"type": "text", "text": "<summary>The pelican is safe on the pier.</summary>"}]}));
    replies.push(json!({"blocks": [{"type": "text", "text": "Continuing."}]}));
    let workspace = tempfile::tempdir().unwrap();
    let (server, mut handle) = spawn_in(workspace.path(), replies, window).await;
    for turn in 0..3 {
        turn_of(&mut handle, &format!("step {turn}")).await;
    }
    handle.ops.send(Op::Compact { instructions: None }).unwrap();
    loop {
        let event = tokio::time::timeout(Duration::from_secs(20), handle.events.recv()).await.unwrap().unwrap().event;
        match event {
            Event::CompactBoundary { post_tokens, summary, .. } => {
                assert!(post_tokens > 0);
                assert_eq!(summary, "The pelican is safe on the pier.");
                break;
            }
            Event::Info { message } | Event::Error { message } => panic!("not compacted in {window:?}: {message}"),
            _ => {}
        }
    }
    turn_of(&mut handle, "carry on").await;
    let requests = server.requests();
    let size = |index: usize| requests[index].body["messages"].to_string().len();
    assert_eq!(requests.len(), 5);
    assert!(
        size(4) * 3 < size(2),
        "{window:?}: the request after the compaction is far smaller: {} → {}",
        size(2),
        size(4)
    );
}

#[tokio::test]
async fn compaction_restores_only_files_a_read_may_read() {
    // Two sibling directories: the workspace, and one outside it (wherever the clone lives, /tmp included).
    let workspace = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("secret.txt");
    std::fs::write(&secret, "PELICAN-SECRET-42").unwrap();
    let secret_path = secret.to_string_lossy().into_owned();
    let replies = vec![
        json!({"blocks": [
            {"type": "text", "text": format!("Let me look at <file path=\"{secret_path}\">.")},
            {"type": "tool_use", "id": "toolu_r", "name": "Read", "input": {"file_path": secret_path}}
        ]}),
        json!({"blocks": [{"type": "text", "text": long_answer(0)}]}),
        json!({"blocks": [{"type": "text", "text": long_answer(1)}]}),
        json!({"blocks": [{"type": "text", "text": "<summary>The user keeps a pelican.</summary>"}]}),
        json!({"blocks": [{"type": "text", "text": "Continuing."}]}),
    ];
    let (server, mut handle) = spawn_in(workspace.path(), replies, Some(SMALL_WINDOW)).await;
    let (summary, _) = turn(&mut handle, "read it", |_, _| PermissionAnswer::Deny { feedback: None }).await;
    assert_eq!(summary.outcome, RunOutcome::Success);
    turn_of(&mut handle, "and then?").await;
    turn_of(&mut handle, "more?").await;
    handle.ops.send(Op::Compact { instructions: None }).unwrap();
    loop {
        let event = tokio::time::timeout(Duration::from_secs(20), handle.events.recv()).await.unwrap().unwrap().event;
        match event {
            Event::CompactBoundary { .. } => break,
            Event::Info { message } | Event::Error { message } => panic!("not compacted: {message}"),
            _ => {}
        }
    }
    turn_of(&mut handle, "carry on").await;
    let requests = server.requests();
    assert!(requests.iter().all(|request| !request.body.to_string().contains("PELICAN-SECRET-42")));
}

/// Found by the nineteenth red-team round: an Edit of a file outside the workspace was previewed before anyone
/// was asked, and the preview's failure went back to the model in place of the question — "does not exist … did
/// you mean secret.txt?" listed the directory, "has not been read" said the file exists. Now the user hears why
/// the change can't be shown; the model hears only that it was not allowed.
#[tokio::test]
async fn a_preview_of_a_file_the_model_may_not_read_says_nothing_to_the_model() {
    let workspace = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), "PELICAN").unwrap();
    let edit = |path: &str| json!({"file_path": outside.path().join(path), "old_string": "PELICAN", "new_string": "x"});
    let replies = vec![
        json!({"blocks": [
            {"type": "tool_use", "id": "toolu_missing", "name": "Edit", "input": edit("secret.tx")},
            {"type": "tool_use", "id": "toolu_unread", "name": "Edit", "input": edit("secret.txt")}
        ]}),
        json!({"blocks": [{"type": "text", "text": "Both were refused."}]}),
    ];
    let (server, mut handle) = spawn_in(workspace.path(), replies, None).await;
    let mut asked = Vec::new();
    let (_, events) = turn(&mut handle, "edit them", |call_id, _| {
        asked.push(call_id.to_owned());
        // With a reason, so that the turn goes on to the second call (a bare "no" ends it).
        PermissionAnswer::Deny { feedback: Some("not there".into()) }
    })
    .await;
    assert_eq!(asked, ["toolu_missing", "toolu_unread"], "the user is asked about both");
    let reasons: Vec<String> = events
        .iter()
        .filter_map(|event| match event {
            Event::PermissionRequested { reason, .. } => reason.clone(),
            _ => None,
        })
        .collect();
    assert!(reasons.iter().any(|reason| reason.contains("Did you mean")), "the user hears why: {reasons:?}");
    let sent = server.requests().last().unwrap().body.to_string();
    assert!(!sent.contains("Did you mean") && !sent.contains("has not been read"), "{sent}");
}

/// Issue 28: `n` denied one call and the model carried on ("All done: the values were updated"). Saying no
/// without a reason ends the turn, as in Claude Code and Codex: the call and the rest of the reply are not run,
/// no further request is made, and the model hears with the next prompt that the user declined and waited.
#[tokio::test]
async fn declining_a_call_without_a_reason_ends_the_turn() {
    let workspace = tempfile::tempdir().unwrap();
    let write = |name: &str| json!({"file_path": workspace.path().join(name), "content": "x"});
    let replies = vec![
        json!({"blocks": [
            {"type": "tool_use", "id": "toolu_a", "name": "Write", "input": write("a.txt")},
            {"type": "tool_use", "id": "toolu_b", "name": "Write", "input": write("b.txt")}
        ]}),
        json!({"blocks": [{"type": "text", "text": "All done: the values were updated as requested."}]}),
        json!({"blocks": [{"type": "text", "text": "What should I do instead?"}]}),
    ];
    let (server, mut handle) = spawn_in(workspace.path(), replies, None).await;
    let mut asked = Vec::new();
    let (summary, events) = turn(&mut handle, "write them", |call_id, _| {
        asked.push(call_id.to_owned());
        PermissionAnswer::Deny { feedback: None }
    })
    .await;
    assert_eq!(asked, ["toolu_a"], "the second call is not asked about");
    assert_eq!(server.requests().len(), 1, "no request after the refusal");
    assert_eq!(summary.outcome, RunOutcome::Success, "the user ended it: not an error");
    assert!(!events.iter().any(|event| matches!(event, Event::MessageDelta { text, .. } if text.contains("All done"))));
    assert!(!workspace.path().join("a.txt").exists() && !workspace.path().join("b.txt").exists());

    turn_of(&mut handle, "use c.txt").await;
    let body = server.requests().last().unwrap().body.clone();
    let last = body["messages"].as_array().unwrap().last().unwrap().to_string();
    assert!(last.contains("declined") && last.contains("use c.txt"), "{last}");
}
