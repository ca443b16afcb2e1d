//! Rewinding the conversation through the real agent loop against the fake server, with a real session log: the
//! cut is made at the prompt chosen (a prompt sent twice is told apart by its place, a prompt sent after an
//! interrupt shares the message of the tool results before it), prompts taken back are said to be out of the
//! conversation, and the cut and what the model is told hold across a restart.

// Test code: a panic is how a failure is reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use tandem_core::agent::{self, AgentConfig, AgentHandle, Resume};
use tandem_core::conversation::{ContentBlock, Message, Role};
use tandem_core::permissions::{PermissionMode, PermissionPolicy};
use tandem_core::protocol::{Event, Op, RewindOutcome, RewindPointView, RewindTarget};
use tandem_core::session::{self, SessionMeta, SessionWriter};
use tandem_testkit::{FakeServer, Scenario};

const WAIT: Duration = Duration::from_secs(20);

fn config(server: &FakeServer, cwd: &Path, log: SessionWriter, resume: Option<Resume>) -> AgentConfig {
    AgentConfig {
        session_id: log.id().to_owned(),
        permissions: PermissionPolicy::for_cwd(PermissionMode::BypassPermissions, cwd),
        session_log: Some(log),
        resume,
        ..common::agent_config(server, cwd)
    }
}

fn scenario(replies: Value) -> Scenario {
    Scenario::from_json(&json!({ "replies": replies }).to_string()).unwrap()
}

fn text(answer: &str) -> Value {
    json!({"blocks": [{"type": "text", "text": answer}]})
}

async fn next(handle: &mut AgentHandle) -> Event {
    tokio::time::timeout(WAIT, handle.events.recv())
        .await
        .expect("an event in time")
        .expect("the agent is running")
        .event
}

async fn turn(handle: &mut AgentHandle, prompt: &str) {
    handle.ops.send(Op::UserTurn { text: prompt.into() }).unwrap();
    while !matches!(next(handle).await, Event::TurnFinished(_)) {}
}

/// A turn whose tool call the user interrupts as soon as it starts.
async fn interrupted_turn(handle: &mut AgentHandle, prompt: &str) {
    handle.ops.send(Op::UserTurn { text: prompt.into() }).unwrap();
    loop {
        match next(handle).await {
            Event::ToolCallStarted { .. } => {
                handle.ops.send(Op::Interrupt).unwrap();
            }
            Event::TurnFinished(_) => break,
            _ => {}
        }
    }
}

async fn points(handle: &mut AgentHandle) -> Vec<RewindPointView> {
    handle.ops.send(Op::ListRewindPoints).unwrap();
    loop {
        if let Event::RewindPoints(points) = next(handle).await {
            return points;
        }
    }
}

async fn rewind_conversation(handle: &mut AgentHandle, seq: u64) -> RewindOutcome {
    let to = RewindTarget::Prompt(seq);
    handle.ops.send(Op::Rewind { to, conversation: true, files: false, hunks: None, dry_run: false }).unwrap();
    loop {
        if let Event::Rewound(outcome) = next(handle).await {
            return outcome.expect("the rewind ran");
        }
    }
}

fn in_conversation(points: &[RewindPointView]) -> Vec<(u64, bool)> {
    points.iter().map(|point| (point.seq, point.in_conversation)).collect()
}

/// The texts of the user messages as the model got them.
fn user_texts(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|message| message["role"] == "user")
        .map(|message| {
            message["content"].as_array().unwrap().iter().filter_map(|block| block["text"].as_str()).collect()
        })
        .collect()
}

fn new_log(data: &Path, cwd: &Path) -> SessionWriter {
    SessionWriter::create(data, SessionMeta::new(cwd, "anthropic", "claude-sonnet-4-5")).unwrap()
}

fn resume_from(path: &Path) -> (SessionWriter, Resume, Vec<Message>) {
    let loaded = session::load(path).unwrap();
    let messages = loaded.messages.clone();
    let resume = Resume::from(loaded);
    (SessionWriter::reopen(path).unwrap(), resume, messages)
}

#[tokio::test]
async fn a_prompt_sent_twice_is_cut_where_it_was_chosen_and_the_cut_and_the_note_survive_a_restart() {
    let (workspace, data) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let server =
        FakeServer::spawn(scenario(json!([text("A1"), text("A2"), text("A3"), text("after the restart")]))).unwrap();
    let log = new_log(data.path(), workspace.path());
    let path = log.path().to_path_buf();
    let mut handle = agent::spawn(config(&server, workspace.path(), log, None));
    turn(&mut handle, "first").await;
    turn(&mut handle, "again").await;
    turn(&mut handle, "again").await;
    assert_eq!(in_conversation(&points(&mut handle).await), [(1, true), (2, true), (3, true)]);

    // The older of the two identical prompts: the conversation keeps only the first exchange.
    let outcome = rewind_conversation(&mut handle, 2).await;
    assert!(outcome.problems.is_empty(), "{:?}", outcome.problems);
    let kept = outcome.messages.unwrap();
    assert_eq!(kept.len(), 2, "{kept:?}");
    assert_eq!((kept[0].text(), kept[1].text()), ("first".to_owned(), "A1".to_owned()));
    assert_eq!(in_conversation(&points(&mut handle).await), [(1, true), (2, false), (3, false)]);

    // A prompt taken back can't be gone back to in the conversation, and the reason says so.
    let outcome = rewind_conversation(&mut handle, 3).await;
    assert!(outcome.messages.is_none());
    assert!(outcome.problems[0].contains("no longer in the conversation"), "{:?}", outcome.problems);

    // Restart before the next prompt: the cut holds, and the model is still told what was rewound.
    handle.ops.send(Op::Shutdown).unwrap();
    let _ = tokio::time::timeout(WAIT, handle.task).await;
    let (log, resume, messages) = resume_from(&path);
    assert_eq!(messages.iter().map(Message::text).collect::<Vec<_>>(), ["first", "A1"]);
    assert_eq!(resume.prompts, [1]);
    assert_eq!(resume.notes.len(), 1, "the rewind that changed nothing told nothing: {:?}", resume.notes);
    let mut handle = agent::spawn(config(&server, workspace.path(), log, Some(resume)));
    assert_eq!(in_conversation(&points(&mut handle).await), [(1, true), (2, false), (3, false)]);
    turn(&mut handle, "what now?").await;
    let sent = user_texts(&server.requests().last().unwrap().body);
    assert_eq!(sent.len(), 2, "{sent:?}");
    assert_eq!(sent[0], "first");
    assert!(sent[1].starts_with("<system-reminder>The user rewound to just before their prompt \"again\""), "{sent:?}");
    assert!(sent[1].ends_with("\n\nwhat now?"), "{sent:?}");

    // Told once: a second restart does not tell it again.
    handle.ops.send(Op::Shutdown).unwrap();
    let _ = tokio::time::timeout(WAIT, handle.task).await;
    let (_, resume, _) = resume_from(&path);
    assert!(resume.notes.is_empty(), "{:?}", resume.notes);
    assert_eq!(resume.prompts, [1, 4]);
}

#[tokio::test]
async fn a_prompt_sent_after_an_interrupt_is_cut_inside_the_message_it_shares() {
    let (workspace, data) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let server = FakeServer::spawn(scenario(json!([
        {"blocks": [{"type": "tool_use", "id": "b1", "name": "Bash", "input": {"command": "sleep 30"}}]},
        text("after the interrupt"),
        text("later"),
        text("once more"),
    ])))
    .unwrap();
    let log = new_log(data.path(), workspace.path());
    let path = log.path().to_path_buf();
    let mut handle = agent::spawn(config(&server, workspace.path(), log, None));
    interrupted_turn(&mut handle, "run it").await;
    turn(&mut handle, "go on").await;
    turn(&mut handle, "and then").await;
    // "go on" went into the message of the interrupted call's result.
    let merged = server.requests()[1].body["messages"][2].clone();
    assert!(merged["content"][0]["type"] == "tool_result", "{merged}");

    let outcome = rewind_conversation(&mut handle, 2).await;
    assert!(outcome.problems.is_empty(), "{:?}", outcome.problems);
    let kept = outcome.messages.unwrap();
    assert_eq!(kept.len(), 3, "{kept:?}");
    let last = &kept[2];
    assert_eq!(last.role, Role::User);
    assert!(
        last.content.iter().all(|block| matches!(block, ContentBlock::ToolResult { .. })),
        "only the tool result stays: {last:?}"
    );

    handle.ops.send(Op::Shutdown).unwrap();
    let _ = tokio::time::timeout(WAIT, handle.task).await;
    let (log, resume, _) = resume_from(&path);
    let resumed = tandem_core::context::compact::repair_history(resume.messages.clone());
    assert_eq!(resumed, kept, "the log gives back the same conversation");

    // The conversation ends with the interrupted call again: the prompt sent now says so, as the first did.
    let mut handle = agent::spawn(config(&server, workspace.path(), log, Some(resume)));
    turn(&mut handle, "go on, differently").await;
    let sent = user_texts(&server.requests().last().unwrap().body);
    assert!(sent.last().unwrap().contains(tandem_core::agent::INTERRUPTED_NOTE), "{sent:?}");
}

#[tokio::test]
async fn a_session_rewound_to_its_start_keeps_its_cost_and_title_after_a_restart() {
    let (workspace, data) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let server = FakeServer::spawn(scenario(json!([text("A1"), text("A2"), text("after the restart")]))).unwrap();
    let log = new_log(data.path(), workspace.path());
    let path = log.path().to_path_buf();
    let mut handle = agent::spawn(config(&server, workspace.path(), log, None));
    turn(&mut handle, "first").await;
    turn(&mut handle, "second").await;
    assert!(rewind_conversation(&mut handle, 1).await.messages.unwrap().is_empty());
    handle.ops.send(Op::Shutdown).unwrap();
    let _ = tokio::time::timeout(WAIT, handle.task).await;

    let before = session::load(&path).unwrap().cost_total.unwrap();
    assert!(before > 0.0);
    let (log, resume, messages) = resume_from(&path);
    assert!(messages.is_empty());
    let mut handle = agent::spawn(config(&server, workspace.path(), log, Some(resume)));
    handle.ops.send(Op::UserTurn { text: "first, again".into() }).unwrap();
    let summary = loop {
        if let Event::TurnFinished(summary) = next(&mut handle).await {
            break summary;
        }
    };
    let total = summary.total_cost_usd.unwrap();
    assert!(total > before, "the session's cost goes on from {before}, not from 0: {total}");
    handle.ops.send(Op::Shutdown).unwrap();
    let _ = tokio::time::timeout(WAIT, handle.task).await;
    let loaded = session::load(&path).unwrap();
    assert_eq!(loaded.title.as_deref(), Some("first"), "the rewind's note never becomes the title");
}

#[tokio::test]
async fn after_clear_the_new_session_keeps_its_own_requests_and_rewind_points() {
    let (workspace, data) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let server = FakeServer::spawn(scenario(json!([text("old"), text("new")]))).unwrap();
    let log = new_log(data.path(), workspace.path());
    let old_dir = log.path().with_extension("");
    let mut handle = agent::spawn(config(&server, workspace.path(), log, None));
    turn(&mut handle, "before the clear").await;
    handle.ops.send(Op::ClearConversation).unwrap();
    let new_id = loop {
        if let Event::SessionConfigured { session_id, .. } = next(&mut handle).await {
            break session_id;
        }
    };
    turn(&mut handle, "after the clear").await;
    let points = points(&mut handle).await;
    assert_eq!(points.iter().map(|point| point.text.as_str()).collect::<Vec<_>>(), ["after the clear"]);
    assert!(points[0].in_conversation);
    handle.ops.send(Op::Shutdown).unwrap();
    let _ = tokio::time::timeout(WAIT, handle.task).await;

    let new_dir = session::session_path(data.path(), &new_id).with_extension("");
    let old = tandem_core::inspect::read(&old_dir.join(tandem_core::inspect::REQUESTS_FILE));
    let new = tandem_core::inspect::read(&new_dir.join(tandem_core::inspect::REQUESTS_FILE));
    assert_eq!((old.len(), new.len()), (1, 1), "each session has its own requests");
    assert_eq!((new[0].id, new[0].turn), (1, 1), "numbered from 1 in the new session");
    let prompts = tandem_core::rewind::Checkpoints::for_session_dir(&new_dir).points();
    assert_eq!(prompts.len(), 1, "the new session's rewind points are in its own directory");
}

#[tokio::test]
async fn a_conversation_rewound_from_a_full_context_is_not_compacted_for_what_it_no_longer_holds() {
    let (workspace, data) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let full = json!({"blocks": [{"type": "text", "text": "A2"}],
                      "usage": {"input_tokens": 180000, "output_tokens": 10,
                                "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}});
    let server = FakeServer::spawn(scenario(json!([text("A1"), full, text("A3")]))).unwrap();
    let log = new_log(data.path(), workspace.path());
    let mut handle = agent::spawn(config(&server, workspace.path(), log, None));
    turn(&mut handle, "first").await;
    turn(&mut handle, "second").await;
    assert_eq!(rewind_conversation(&mut handle, 2).await.messages.unwrap().len(), 2);
    turn(&mut handle, "third").await;
    let requests = server.requests();
    assert_eq!(requests.len(), 3, "no summary request: the context is two messages now");
    let sent = user_texts(&requests[2].body);
    assert!(sent.last().unwrap().ends_with("third"), "{sent:?}");
}

#[tokio::test]
async fn after_a_conversation_rewind_a_file_read_in_the_part_taken_back_is_read_in_full_again() {
    let (workspace, data) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    std::fs::write(workspace.path().join("notes.txt"), "the secret word is pineapple\n").unwrap();
    let read = |id: &str| json!({"blocks": [{"type": "tool_use", "id": id, "name": "Read", "input": {"file_path": "notes.txt"}}]});
    let server =
        FakeServer::spawn(scenario(json!([text("A1"), read("r1"), text("read it"), read("r2"), text("again")])))
            .unwrap();
    let log = new_log(data.path(), workspace.path());
    let mut handle = agent::spawn(config(&server, workspace.path(), log, None));
    turn(&mut handle, "hello").await;
    turn(&mut handle, "read the notes").await;
    rewind_conversation(&mut handle, 2).await;
    turn(&mut handle, "read the notes").await;
    let requests = server.requests();
    let last = requests.last().unwrap().body["messages"].as_array().unwrap().last().unwrap().clone();
    let result = last["content"][0]["content"].to_string();
    assert!(result.contains("pineapple"), "the model gets the content, not 'unchanged since last read': {result}");
}

#[tokio::test]
async fn a_conversation_rewind_puts_back_the_checklist_the_kept_conversation_wrote() {
    let (workspace, data) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let todos = |id: &str, steps: Value| json!({"blocks": [{"type": "tool_use", "id": id, "name": "TodoWrite", "input": {"todos": steps}}]});
    let step = |content: &str, status: &str| json!({"content": content, "status": status, "activeForm": content});
    let server = FakeServer::spawn(scenario(json!([
        todos("t1", json!([step("plan", "in_progress")])),
        text("planned"),
        todos("t2", json!([step("plan", "completed"), step("build", "in_progress")])),
        text("building"),
    ])))
    .unwrap();
    let log = new_log(data.path(), workspace.path());
    let mut tools = tandem_core::tools::ToolRegistry::builtin();
    tools.register(std::sync::Arc::new(tandem_core::tools::todo_write::TodoWriteTool));
    let mut handle = agent::spawn(AgentConfig { tools, ..config(&server, workspace.path(), log, None) });
    turn(&mut handle, "make a plan").await;
    turn(&mut handle, "build it").await;
    let to = RewindTarget::Prompt(2);
    handle.ops.send(Op::Rewind { to, conversation: true, files: false, hunks: None, dry_run: false }).unwrap();
    let mut shown = None;
    loop {
        match next(&mut handle).await {
            Event::Todos(todos) => shown = Some(todos),
            Event::Rewound(outcome) => {
                assert!(outcome.as_ref().is_ok_and(|outcome| outcome.messages.is_some()), "{outcome:?}");
                break;
            }
            _ => {}
        }
    }
    let shown = shown.expect("the checklist is told again");
    assert_eq!(shown.iter().map(|item| item.content.as_str()).collect::<Vec<_>>(), ["plan"]);
}

#[tokio::test]
async fn rewinding_past_an_interrupt_forgets_it_and_rewinding_to_the_prompt_after_it_remembers_it() {
    let (workspace, data) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let server = FakeServer::spawn(scenario(json!([
        text("A1"),
        {"blocks": [{"type": "tool_use", "id": "b1", "name": "Bash", "input": {"command": "sleep 30"}}]},
        text("after the rewind"),
    ])))
    .unwrap();
    let log = new_log(data.path(), workspace.path());
    let mut handle = agent::spawn(config(&server, workspace.path(), log, None));
    turn(&mut handle, "first").await;
    interrupted_turn(&mut handle, "run it").await;
    // Back to before the interrupted prompt: the conversation ends with an answer, nothing was interrupted.
    rewind_conversation(&mut handle, 2).await;
    turn(&mut handle, "something else").await;
    let sent = user_texts(&server.requests().last().unwrap().body);
    assert!(!sent.last().unwrap().contains(tandem_core::agent::INTERRUPTED_NOTE), "{sent:?}");
}

/// Issue 28: after `/compact`, every earlier prompt showed as "(files only)" in `/rewind`. The session log still
/// holds the conversation as it stood before each of them: rewinding to one brings that conversation back (and
/// the restored history is logged, so it holds after a restart), while a prompt a rewind took back stays gone.
#[tokio::test]
async fn a_prompt_compacted_away_is_rewound_to_from_the_log_and_that_holds_after_a_restart() {
    let (workspace, data) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let long = |name: &str| text(&format!("{name}: {}", "a long answer worth summarizing. ".repeat(1000)));
    let server = FakeServer::spawn(scenario(json!([
        long("A1"),
        long("A2"),
        text("A3"),
        text("<summary>We talked at length.</summary>"),
        text("A2, differently"),
        text("after the restart"),
    ])))
    .unwrap();
    let log = new_log(data.path(), workspace.path());
    let path = log.path().to_path_buf();
    let mut small = config(&server, workspace.path(), log, None);
    small.model.context_window = 40_000;
    let mut handle = agent::spawn(small);
    turn(&mut handle, "first").await;
    turn(&mut handle, "second").await;
    turn(&mut handle, "third").await;
    handle.ops.send(Op::Compact { instructions: None }).unwrap();
    while !matches!(next(&mut handle).await, Event::CompactionFinished { .. }) {}
    assert_eq!(server.requests().len(), 4, "the summary was asked for");
    assert_eq!(in_conversation(&points(&mut handle).await), [(1, true), (2, true), (3, true)]);

    let outcome = rewind_conversation(&mut handle, 2).await;
    assert!(outcome.problems.is_empty(), "{:?}", outcome.problems);
    let kept = outcome.messages.unwrap();
    assert_eq!(kept.len(), 2, "the conversation before the compaction, up to the prompt: {kept:?}");
    assert_eq!(kept[0].text(), "first");
    assert!(kept[1].text().starts_with("A1: "), "{}", kept[1].text());
    assert_eq!(in_conversation(&points(&mut handle).await), [(1, true), (2, false), (3, false)]);

    turn(&mut handle, "second, differently").await;
    let sent = user_texts(&server.requests().last().unwrap().body);
    assert_eq!(sent.len(), 2, "{sent:?}");
    assert_eq!(sent[0], "first", "no summary: the conversation as it was");
    assert!(sent[1].ends_with("second, differently"), "{sent:?}");

    handle.ops.send(Op::Shutdown).unwrap();
    let _ = tokio::time::timeout(WAIT, handle.task).await;
    let (log, resume, messages) = resume_from(&path);
    assert_eq!(messages.len(), 4, "{messages:?}");
    assert_eq!(messages[0].text(), "first");
    assert_eq!(resume.prompts, [1, 4]);
    let mut small = config(&server, workspace.path(), log, Some(resume));
    small.model.context_window = 40_000;
    let mut handle = agent::spawn(small);
    assert_eq!(in_conversation(&points(&mut handle).await), [(1, true), (2, false), (3, false), (4, true)]);
    let outcome = rewind_conversation(&mut handle, 1).await;
    assert!(outcome.messages.unwrap().is_empty());
}
