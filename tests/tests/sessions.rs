//! Context, memory and saved sessions through the real `tandem -p` binary: guidelines and the memory index
//! re-read for every request, `SaveMemory`, `--continue` / `--resume` / `--fork-session`, `tandem sessions`,
//! a crash in the middle of a turn, automatic compaction and `SearchSessions`.
//!
//! Sessions live in `<TANDEM_CONFIG_DIR>/data/sessions/<id>.jsonl`; each test has its own config directory, so
//! tests never see each other's sessions.

// Test code: a panic is how a failure is reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tandem_e2e::{FakeServer, Run, Scenario, Workspace, execute, tool_results};

fn scenario(value: Value) -> Scenario {
    Scenario::from_json(&value.to_string()).expect("scenario")
}

fn text_reply(text: &str) -> Value {
    json!({"blocks": [{"type": "text", "text": text, "chunks": 2}]})
}

/// A server that plays `replies` in order.
fn fake(replies: Vec<Value>) -> FakeServer {
    FakeServer::spawn(scenario(json!({ "replies": replies }))).expect("fake server")
}

/// `tandem -p PROMPT --output-format stream-json` plus `extra` flags, against `server`; asserts it succeeded.
fn run_ok(workspace: &Workspace, server: &FakeServer, prompt: &str, extra: &[&str]) -> Run {
    let mut command = workspace.anthropic(server);
    command.args(["-p", prompt, "--output-format", "stream-json"]).args(extra);
    let run = execute(command);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.result()["subtype"], "success", "{run:?}");
    run
}

/// The session id of a stream-json run (from its init line).
fn session_id(run: &Run) -> String {
    let init = &run.lines()[0];
    assert_eq!(init["subtype"], "init", "{init}");
    init["session_id"].as_str().expect("a session id").to_owned()
}

fn sessions_dir(workspace: &Workspace) -> PathBuf {
    workspace.config.path().join("data").join("sessions")
}

/// The saved transcripts, sorted by path.
fn session_files(workspace: &Workspace) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(sessions_dir(workspace)) else { return Vec::new() };
    let mut files: Vec<PathBuf> = entries
        .map(|entry| entry.expect("dir entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "jsonl"))
        .collect();
    files.sort();
    files
}

fn session_file(workspace: &Workspace, id: &str) -> PathBuf {
    sessions_dir(workspace).join(format!("{id}.jsonl"))
}

/// A transcript's lines as JSON.
fn transcript(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .expect("read the transcript")
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| serde_json::from_str(line).unwrap_or_else(|err| panic!("bad transcript line {line}: {err}")))
        .collect()
}

/// The text blocks of one API message, joined by newlines.
fn message_text(message: &Value) -> String {
    match &message["content"] {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter(|block| block["type"] == "text")
            .filter_map(|block| block["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// `(role, text)` of each message of a recorded request body.
fn conversation(body: &Value) -> Vec<(String, String)> {
    body["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .map(|message| (message["role"].as_str().unwrap_or("?").to_owned(), message_text(message)))
        .collect()
}

/// The concatenated text of a request's `system` blocks.
fn system_text(body: &Value) -> String {
    body["system"]
        .as_array()
        .expect("system blocks")
        .iter()
        .map(|block| block["text"].as_str().unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n")
}

fn ids<'a>(message: &'a Value, kind: &str, field: &str) -> Vec<&'a str> {
    message["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|block| block["type"] == kind)
        .map(|block| block[field].as_str().expect("an id"))
        .collect()
}

/// Asserts that a recorded Messages API body holds a history the API accepts: it starts with the user, roles
/// alternate, no message is empty, every `tool_use` is answered in the very next message and every
/// `tool_result` answers a `tool_use` of the message just before it (results before any text).
fn assert_valid_history(body: &Value) {
    let messages = body["messages"].as_array().expect("messages");
    assert!(!messages.is_empty(), "empty history");
    assert_eq!(messages[0]["role"], "user", "the history must start with the user: {body}");
    for (index, message) in messages.iter().enumerate() {
        let content = message["content"].as_array().expect("content blocks");
        assert!(!content.is_empty(), "message {index} is empty: {body}");
        if index > 0 {
            assert_ne!(
                messages[index - 1]["role"],
                message["role"],
                "messages {index} and before share a role: {body}"
            );
        }
        let uses = ids(message, "tool_use", "id");
        let results = ids(message, "tool_result", "tool_use_id");
        match message["role"].as_str() {
            Some("assistant") => {
                assert!(results.is_empty(), "assistant message {index} holds a tool_result: {body}");
                let answered = messages.get(index + 1).map(|next| ids(next, "tool_result", "tool_use_id"));
                for id in uses {
                    assert!(
                        answered.as_ref().is_some_and(|answered| answered.contains(&id)),
                        "tool_use {id} in message {index} is not answered by the next message: {body}"
                    );
                }
            }
            Some("user") => {
                assert!(uses.is_empty(), "user message {index} holds a tool_use: {body}");
                let asked = index.checked_sub(1).map(|before| ids(&messages[before], "tool_use", "id"));
                for id in &results {
                    assert!(
                        asked.as_ref().is_some_and(|asked| asked.contains(id)),
                        "tool_result {id} in message {index} answers no tool_use just before it: {body}"
                    );
                }
                let mut deduped = results.clone();
                deduped.sort_unstable();
                deduped.dedup();
                assert_eq!(deduped.len(), results.len(), "a tool_use is answered twice in message {index}: {body}");
                let first_text = content.iter().position(|block| block["type"] != "tool_result");
                let last_result = content.iter().rposition(|block| block["type"] == "tool_result");
                if let (Some(text), Some(result)) = (first_text, last_result) {
                    assert!(result < text, "user message {index} has text before a tool_result: {body}");
                }
            }
            other => panic!("message {index} has role {other:?}: {body}"),
        }
    }
}

/// The workspace path as the binary sees it (`getcwd` resolves symlinks).
fn real_path(workspace: &Workspace) -> PathBuf {
    workspace.path().canonicalize().expect("canonicalize the workspace")
}

// ---------------------------------------------------------------------------------------------------------------
// Guidelines and memory
// ---------------------------------------------------------------------------------------------------------------

#[test]
fn guidelines_are_reread_for_every_request_behind_a_stable_cached_prefix() {
    let workspace = Workspace::new();
    workspace.write("CLAUDE.md", "Always answer in haiku.\n");
    let server = fake(vec![
        json!({"blocks": [{"type": "tool_use", "id": "toolu_append", "name": "Bash",
                           "input": {"command": "echo 'Use tabs, never spaces.' >> CLAUDE.md"}}]}),
        text_reply("Tabs it is."),
    ]);
    run_ok(&workspace, &server, "Add a rule", &["--dangerously-skip-permissions"]);
    assert_eq!(workspace.read("CLAUDE.md"), "Always answer in haiku.\nUse tabs, never spaces.\n");

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let heading = format!("# Guidelines from {}", real_path(&workspace).join("CLAUDE.md").display());
    let first = requests[0].body["system"].as_array().unwrap().clone();
    let second = requests[1].body["system"].as_array().unwrap().clone();

    // The guidelines are the last system block, under their path heading.
    let first_guidelines = first.last().unwrap()["text"].as_str().unwrap();
    assert!(first_guidelines.contains(&format!("{heading}\n\nAlways answer in haiku.")), "{first_guidelines}");
    assert!(!first_guidelines.contains("Use tabs"), "{first_guidelines}");
    let second_guidelines = second.last().unwrap()["text"].as_str().unwrap();
    assert!(
        second_guidelines.contains(&format!("{heading}\n\nAlways answer in haiku.\nUse tabs, never spaces.")),
        "the edit reached the very next request: {second_guidelines}"
    );
    // Nowhere else in the system prompt.
    let before_guidelines = |system: &[Value]| system[..system.len() - 1].to_vec();
    assert!(!json!(before_guidelines(&first)).to_string().contains("haiku"));

    // Prompt caching: everything before the guidelines block is byte-identical, tools included.
    assert!(first.len() >= 2, "a base prompt before the guidelines: {first:?}");
    assert_eq!(first.len(), second.len());
    assert_eq!(
        serde_json::to_string(&before_guidelines(&first)).unwrap(),
        serde_json::to_string(&before_guidelines(&second)).unwrap()
    );
    assert_eq!(requests[0].body["tools"].to_string(), requests[1].body["tools"].to_string());
    for system in [&first, &second] {
        assert_eq!(system.last().unwrap()["cache_control"], json!({"type": "ephemeral"}), "{system:?}");
    }
}

#[test]
fn save_memory_writes_one_index_line_per_title_and_the_next_request_sees_it() {
    let workspace = Workspace::new();
    let save = |id: &str, description: &str, content: &str| {
        json!({"blocks": [{"type": "tool_use", "id": id, "name": "SaveMemory",
                           "input": {"title": "Test command", "description": description, "content": content}}]})
    };
    let server = fake(vec![
        save("toolu_save1", "How to run tests", "Run `just test`."),
        save("toolu_save2", "Tests: just test -q", "Run `just test -q`."),
        text_reply("Remembered."),
    ]);
    // An allow rule for the tool (acceptEdits should do as well, see the next test).
    let run = run_ok(&workspace, &server, "Remember how to run the tests", &["--allowedTools", "SaveMemory"]);
    assert_eq!(run.result()["permission_denials"], json!([]), "{run:?}");

    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    for (request, id) in [(&requests[1], "toolu_save1"), (&requests[2], "toolu_save2")] {
        let results = tool_results(&request.body);
        let result = results.iter().find(|result| result["tool_use_id"] == id).expect("the save's result");
        assert_ne!(result["is_error"], true, "{result}");
        assert!(result["content"].as_str().unwrap().contains("Saved memory \"Test command\""), "{result}");
    }

    // One index line, updated in place by the second save with the same title.
    let memory = workspace.path().join(".tandem/memory");
    assert_eq!(
        std::fs::read_to_string(memory.join("MEMORY.md")).unwrap(),
        "- [Test command](test-command.md) — Tests: just test -q\n"
    );
    assert_eq!(
        std::fs::read_to_string(memory.join("test-command.md")).unwrap(),
        "---\nname: Test command\ndescription: Tests: just test -q\n---\nRun `just test -q`.\n"
    );

    // Each next request's system prompt holds the index as it was then.
    let first_line = "- [Test command](test-command.md) — How to run tests";
    let second_line = "- [Test command](test-command.md) — Tests: just test -q";
    let systems: Vec<String> = requests.iter().map(|request| system_text(&request.body)).collect();
    assert!(!systems[0].contains("Test command"), "no memory before the first save: {}", systems[0]);
    assert!(systems[1].contains(first_line), "{}", systems[1]);
    assert!(systems[2].contains(second_line) && !systems[2].contains(first_line), "{}", systems[2]);
    assert_eq!(systems[2].matches("(test-command.md)").count(), 1, "{}", systems[2]);
}

/// `SaveMemory`'s own docs (crates/core/src/tools/save_memory.rs): "project memory is inside the workspace, so
/// `acceptEdits` allows it".
#[test]
fn save_memory_in_project_scope_is_allowed_in_accept_edits_mode() {
    let workspace = Workspace::new();
    let server = fake(vec![
        json!({"blocks": [{"type": "tool_use", "id": "toolu_save", "name": "SaveMemory",
                           "input": {"title": "Build", "description": "How to build", "content": "Use `just build`."}}]}),
        text_reply("Remembered."),
    ]);
    let run = run_ok(&workspace, &server, "Remember how to build", &["--permission-mode", "acceptEdits"]);
    assert_eq!(run.result()["permission_denials"], json!([]), "{run:?}");
    assert_eq!(
        std::fs::read_to_string(workspace.path().join(".tandem/memory/MEMORY.md")).unwrap(),
        "- [Build](build.md) — How to build\n"
    );
}

/// `SaveMemory`'s own docs: "user memory is in tandem's config directory, which always asks" — as an `Edit` of
/// a file there does, even with a general allow rule for the tool. Headless, asking means denied.
#[test]
fn save_memory_in_user_scope_asks_even_with_an_allow_rule() {
    let workspace = Workspace::new();
    let server = fake(vec![
        json!({"blocks": [{"type": "tool_use", "id": "toolu_save", "name": "SaveMemory",
                           "input": {"title": "Terse", "description": "Answer tersely", "content": "Short answers.",
                                     "scope": "user"}}]}),
        text_reply("Remembered."),
    ]);
    let run = run_ok(&workspace, &server, "Remember that I like short answers", &["--allowedTools", "SaveMemory"]);
    let denials = run.result()["permission_denials"].clone();
    assert_eq!(denials.as_array().map(Vec::len), Some(1), "{run:?}");
    assert_eq!(denials[0]["tool_name"], "SaveMemory");
    assert!(!workspace.config.path().join("memory").exists(), "nothing written to the config directory");
}

// ---------------------------------------------------------------------------------------------------------------
// Saved sessions
// ---------------------------------------------------------------------------------------------------------------

#[test]
fn continue_sends_the_previous_conversation_and_sessions_lists_it() {
    let workspace = Workspace::new();
    let first = fake(vec![text_reply("Noted: pelican.")]);
    let run = run_ok(&workspace, &first, "remember the word pelican", &[]);
    let id = session_id(&run);
    assert_eq!(session_files(&workspace), vec![session_file(&workspace, &id)]);

    let second = fake(vec![text_reply("The word was pelican.")]);
    let run = run_ok(&workspace, &second, "what word?", &["-c"]);
    assert_eq!(session_id(&run), id, "--continue keeps the same session");
    assert_eq!(run.result()["result"], "The word was pelican.");
    let requests = second.requests();
    assert_eq!(
        conversation(&requests[0].body),
        [
            ("user".to_owned(), "remember the word pelican".to_owned()),
            ("assistant".to_owned(), "Noted: pelican.".to_owned()),
            ("user".to_owned(), "what word?".to_owned()),
        ]
    );
    assert_valid_history(&requests[0].body);
    assert_eq!(session_files(&workspace).len(), 1, "continuing appends to the same file");

    // `tandem sessions`: a header and one row, ID TIME DIRECTORY TITLE TURNS COST.
    let mut command = workspace.tandem();
    command.arg("sessions");
    let listing = execute(command);
    assert_eq!(listing.code, 0, "{listing:?}");
    let lines: Vec<&str> = listing.stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{}", listing.stdout);
    let cells = |line: &str| -> Vec<String> {
        line.split("  ").map(str::trim).filter(|cell| !cell.is_empty()).map(str::to_owned).collect()
    };
    assert_eq!(cells(lines[0]), ["ID", "TIME", "DIRECTORY", "TITLE", "TURNS", "COST", "SIZE"]);
    let row = cells(lines[1]);
    assert_eq!(row.len(), 7, "{row:?}");
    assert!(row[6].ends_with(" KB") || row[6].ends_with(" bytes"), "the space it takes: {row:?}");
    assert_eq!(row[0], id[..8]);
    let time = row[1].as_bytes();
    assert!(
        row[1].len() == 16 && time[4] == b'-' && time[7] == b'-' && time[10] == b' ' && time[13] == b':',
        "TIME is YYYY-MM-DD HH:MM: {row:?}"
    );
    let dir_name = workspace.path().file_name().unwrap().to_str().unwrap();
    assert!(row[2].ends_with(dir_name), "{row:?}");
    assert!(row[3].contains("pelican"), "{row:?}");
    assert_eq!(row[3], "remember the word pelican");
    assert_eq!(row[4], "2", "two prompts, two turns: {row:?}");
    assert!(row[5].starts_with('$') || row[5] == "?", "{row:?}");
}

#[test]
fn fork_session_leaves_the_original_byte_identical_and_resume_takes_an_id_prefix() {
    let workspace = Workspace::new();
    let first = fake(vec![text_reply("Noted: the cache key is the path.")]);
    let run = run_ok(&workspace, &first, "the cache key is the path", &[]);
    let original_id = session_id(&run);
    let original_path = session_file(&workspace, &original_id);
    let original = std::fs::read(&original_path).unwrap();

    let forked = fake(vec![text_reply("Fork: let's try the hash instead.")]);
    let run = run_ok(&workspace, &forked, "what if the key were a hash?", &["-c", "--fork-session"]);
    let fork_id = session_id(&run);
    assert_ne!(fork_id, original_id, "the fork is a new session");
    assert_eq!(std::fs::read(&original_path).unwrap(), original, "the original transcript is untouched");
    let fork_path = session_file(&workspace, &fork_id);
    assert_eq!(session_files(&workspace).len(), 2);
    let mut expected = vec![original_path.clone(), fork_path.clone()];
    expected.sort();
    assert_eq!(session_files(&workspace), expected);

    // The fork saw the original conversation…
    assert_eq!(
        conversation(&forked.requests()[0].body),
        [
            ("user".to_owned(), "the cache key is the path".to_owned()),
            ("assistant".to_owned(), "Noted: the cache key is the path.".to_owned()),
            ("user".to_owned(), "what if the key were a hash?".to_owned()),
        ]
    );
    // …and its file holds both: a new header naming the source, the original's lines byte for byte, then the
    // fork's own turn.
    let fork_bytes = std::fs::read(&fork_path).unwrap();
    let header_end = original.iter().position(|&b| b == b'\n').unwrap() + 1;
    let fork_header_end = fork_bytes.iter().position(|&b| b == b'\n').unwrap() + 1;
    assert!(fork_bytes[fork_header_end..].starts_with(&original[header_end..]), "the original's lines are copied");
    let lines = transcript(&fork_path);
    assert_eq!(lines[0]["type"], "session");
    assert_eq!(lines[0]["id"], fork_id.as_str());
    assert_eq!(lines[0]["forked_from"], original_id.as_str());
    let texts: Vec<String> =
        lines.iter().filter(|line| line["type"] == "message").map(|line| message_text(&line["message"])).collect();
    assert_eq!(
        texts,
        [
            "the cache key is the path",
            "Noted: the cache key is the path.",
            "what if the key were a hash?",
            "Fork: let's try the hash instead."
        ]
    );

    // `--resume <prefix>` goes back to the original, without the fork's turn, and appends to it.
    let resumed = fake(vec![text_reply("Back on the path.")]);
    let run = run_ok(&workspace, &resumed, "back to the original", &["--resume", &original_id[..8]]);
    assert_eq!(session_id(&run), original_id);
    let sent = conversation(&resumed.requests()[0].body);
    assert_eq!(sent.len(), 3, "{sent:?}");
    assert_eq!(sent[0].1, "the cache key is the path");
    assert!(!sent.iter().any(|(_, text)| text.contains("hash")), "the fork's turn stays in the fork: {sent:?}");
    let grown = std::fs::read(&original_path).unwrap();
    assert!(grown.len() > original.len() && grown.starts_with(&original), "resuming appends to the original");
    assert_eq!(session_files(&workspace).len(), 2);
}

#[test]
fn kill_9_in_the_middle_of_a_turn_then_continue_restores_every_completed_turn() {
    let workspace = Workspace::new();
    let first = fake(vec![
        json!({"blocks": [
            {"type": "tool_use", "id": "toolu_first_read", "name": "Read", "input": {"file_path": "notes.txt"}}
        ]}),
        text_reply("The notes say: ship on Friday."),
    ]);
    workspace.write("notes.txt", "ship on Friday\n");
    let run = run_ok(&workspace, &first, "first", &[]);
    let id = session_id(&run);
    let path = session_file(&workspace, &id);
    let after_first = std::fs::read(&path).unwrap();

    // Run 2 hangs in the middle of the streamed reply; it is killed once the request has reached the server.
    let stalled = fake(vec![json!({
        "blocks": [{"type": "text", "text": "I will now think for a very long time", "chunks": 6}],
        "fault": {"kind": "stall_after", "events": 4}
    })]);
    let mut command = workspace.anthropic(&stalled);
    command.args(["-p", "second", "-c", "--output-format", "stream-json"]).stdout(Stdio::null()).stderr(Stdio::null());
    let mut child = command.spawn().expect("spawn tandem");
    let deadline = Instant::now() + Duration::from_secs(30);
    while stalled.requests().is_empty() {
        assert!(Instant::now() < deadline, "the request never reached the fake server");
        assert!(child.try_wait().unwrap().is_none(), "tandem exited before sending its request");
        std::thread::sleep(Duration::from_millis(10));
    }
    let status = Command::new("kill").args(["-9", &child.id().to_string()]).status().expect("run kill");
    assert!(status.success());
    let status = child.wait().unwrap();
    assert_eq!(std::os::unix::process::ExitStatusExt::signal(&status), Some(9), "{status:?}");

    // Every message is handed to the OS as it enters the conversation (and synced at the end of each turn), so
    // a SIGKILL mid-turn keeps what the killed turn had so far: its prompt, "second", and no partial reply.
    let after_kill = std::fs::read(&path).unwrap();
    assert!(after_kill.starts_with(&after_first), "the completed turn is intact");
    assert!(String::from_utf8_lossy(&after_kill[after_first.len()..]).contains("\"second\""));

    let third = fake(vec![text_reply("Still shipping on Friday.")]);
    let run = run_ok(&workspace, &third, "third", &["-c"]);
    assert_eq!(session_id(&run), id);
    let body = &third.requests()[0].body;
    assert_valid_history(body);
    let messages = body["messages"].as_array().unwrap();
    // Every completed turn, its tool round included, is restored in order…
    assert_eq!(messages[0]["content"][0]["text"], "first");
    assert_eq!(messages[1]["content"][0]["type"], "tool_use");
    assert_eq!(messages[1]["content"][0]["id"], "toolu_first_read");
    let results = tool_results(body);
    assert_eq!(results.len(), 1);
    assert!(results[0]["content"].as_str().unwrap().contains("ship on Friday"), "{results:?}");
    assert_eq!(message_text(&messages[3]), "The notes say: ship on Friday.");
    // …then the killed turn's prompt and the new one, in one user message (no partial reply is replayed).
    assert_eq!(messages.len(), 5, "{body}");
    assert_eq!(message_text(&messages[4]), "second\nthird");
    assert!(!body.to_string().contains("think for a very long time"), "the partial reply is not replayed");
}

#[test]
fn search_sessions_finds_a_phrase_from_an_earlier_session() {
    let workspace = Workspace::new();
    let answer = "Here is the plan.\nStep one: warm up the cache.\nThe flamingo protocol means we stand on one leg \
                  while deploying.\nStep three: watch the dashboards.\nDone.";
    let old = fake(vec![text_reply(answer)]);
    let run = run_ok(&workspace, &old, "Explain our deploy ritual", &[]);
    let old_id = session_id(&run);

    let new = fake(vec![
        json!({"blocks": [{"type": "tool_use", "id": "toolu_search", "name": "SearchSessions",
                           "input": {"query": "flamingo protocol"}}]}),
        text_reply("Found it."),
    ]);
    let run = run_ok(&workspace, &new, "What was the flamingo thing?", &[]);
    assert_ne!(session_id(&run), old_id, "a new session, not --continue");
    assert_eq!(run.result()["permission_denials"], json!([]), "searching is read-only");

    let results = tool_results(&new.requests()[1].body);
    assert_eq!(results.len(), 1);
    assert_ne!(results[0]["is_error"], true, "{results:?}");
    let content = results[0]["content"].as_str().unwrap();
    assert!(content.starts_with("1 match for \"flamingo protocol\""), "{content}");
    assert!(content.contains(&format!("--- session {} \"Explain our deploy ritual\"", &old_id[..8])), "{content}");
    assert!(content.contains("· assistant"), "{content}");
    // The matching line with up to two lines either side.
    for line in [
        "Here is the plan.",
        "Step one: warm up the cache.",
        "The flamingo protocol means we stand on one leg while deploying.",
        "Step three: watch the dashboards.",
        "Done.",
    ] {
        assert!(content.contains(line), "{line:?} missing from {content}");
    }
}

#[test]
fn resume_and_fork_mistakes_exit_2_with_one_line() {
    let workspace = Workspace::new();
    let server = fake(vec![]);
    let failing = |args: &[&str]| {
        let mut command = workspace.anthropic(&server);
        command.args(["-p", "hi"]).args(args);
        let run = execute(command);
        assert_eq!(run.code, 2, "{args:?}: {run:?}");
        assert_eq!(run.stderr.trim().lines().count(), 1, "{args:?}: {}", run.stderr);
        assert!(run.stdout.is_empty(), "{args:?}: {}", run.stdout);
        run.stderr
    };

    let stderr = failing(&["--resume", "nosuchid"]);
    assert!(stderr.contains("nosuchid") && stderr.contains("tandem sessions"), "{stderr}");
    let stderr = failing(&["--fork-session"]);
    assert!(stderr.contains("--fork-session") && stderr.contains("--continue"), "{stderr}");
    let stderr = failing(&["-c"]);
    assert!(stderr.contains("no saved session to continue"), "{stderr}");
    let stderr = failing(&["--resume", "../../etc/passwd"]);
    assert!(stderr.contains("no saved session matches"), "{stderr}");

    assert!(server.requests().is_empty(), "nothing is sent");
    assert!(session_files(&workspace).is_empty(), "no session is created for a failed start");
}

// ---------------------------------------------------------------------------------------------------------------
// Automatic compaction
// ---------------------------------------------------------------------------------------------------------------

/// Found from the outside: "prompt is too long" from the server stopped the run, where `/compact` then worked.
/// Either provider's wording compacts once and retries; a second refusal is a clear error.
#[test]
fn a_prompt_too_long_from_the_server_compacts_once_and_retries_on_both_providers() {
    let anthropic = json!({"type": "error", "error": {"type": "invalid_request_error",
                           "message": "prompt is too long: 210432 tokens > 200000 maximum"}});
    let openai = json!({"error": {"message": "This model's maximum context length is 128000 tokens. However, your \
                        messages resulted in 131072 tokens.", "type": "invalid_request_error",
                        "code": "context_length_exceeded"}});
    for (provider, refusal) in [("anthropic", anthropic), ("openai", openai)] {
        let workspace = Workspace::new();
        // Big enough to be worth summarizing (~40,000 tokens read), as a conversation the server refuses is.
        let filler: String =
            (0..1990).map(|n| format!("// line {n:04} of the generated table of constants\n")).collect();
        workspace.write("src/lib.rs", &format!("pub fn one() -> u32 {{ 1 }}\n{filler}"));
        let too_long = json!({"fault": {"kind": "http", "status": 400, "body": refusal}});
        let read = json!({"blocks": [{"type": "tool_use", "id": "toolu_read", "name": "Read",
                                      "input": {"file_path": "src/lib.rs"}}]});
        let server = fake(vec![
            read.clone(),
            too_long.clone(),
            json!({"blocks": [{"type": "text", "text": "<summary>Task: read lib.rs.</summary>"}]}),
            text_reply("It returns one."),
        ]);
        let mut command =
            if provider == "anthropic" { workspace.anthropic(&server) } else { workspace.openai(&server) };
        command.args(["-p", "what does it return?", "--output-format", "stream-json"]);
        let run = execute(command);
        assert_eq!(run.code, 0, "{provider}: {run:?}");
        assert_eq!(run.result()["result"], "It returns one.", "{provider}");
        assert!(run.stderr.contains("compacting it and trying again"), "{provider}: {}", run.stderr);
        assert!(run.lines().iter().any(|line| line["subtype"] == "compact_boundary"), "{provider}: {}", run.stdout);
        assert_eq!(server.requests().len(), 4, "{provider}");

        let server = fake(vec![
            read,
            too_long.clone(),
            json!({"blocks": [{"type": "text", "text": "<summary>x</summary>"}]}),
            too_long.clone(),
        ]);
        let mut command =
            if provider == "anthropic" { workspace.anthropic(&server) } else { workspace.openai(&server) };
        command.args(["-p", "again", "--output-format", "json"]);
        let run = execute(command);
        assert_eq!(run.code, 1, "{provider}: {run:?}");
        assert!(run.stderr.contains("still too long after compacting"), "{provider}: {}", run.stderr);

        // A conversation a summary cannot shrink is not summarized: the error says so at once.
        let server = fake(vec![too_long]);
        let mut command =
            if provider == "anthropic" { workspace.anthropic(&server) } else { workspace.openai(&server) };
        command.args(["-p", "and again", "--output-format", "json"]);
        let run = execute(command);
        assert_eq!(run.code, 1, "{provider}: {run:?}");
        assert!(run.stderr.contains("compacting could not make it smaller"), "{provider}: {}", run.stderr);
        assert_eq!(server.requests().len(), 1, "{provider}: no summary request");
    }
}

#[test]
fn auto_compaction_summarizes_restores_the_read_file_and_keeps_the_history_valid() {
    let workspace = Workspace::new();
    let source = "pub fn pelican() -> u32 {\n    41 // the pelican bug\n}\n";
    // A long file, so that the conversation is worth summarizing: the summary and the restored head of the file
    // (cut to ~5,000 tokens) are much smaller than the whole file read.
    let filler: String = (0..1990).map(|n| format!("// line {n:04} of the generated table of constants\n")).collect();
    workspace.write("src/lib.rs", &format!("{source}{filler}"));
    let summary = "Task: fix the pelican bug. Files: src/lib.rs.";
    let server = fake(vec![
        // A big context: 120,000 input tokens, over the limit of an unknown model's 128,000-token window
        // (0.92 × 128,000 − 13,000 = 104,760).
        json!({"blocks": [{"type": "tool_use", "id": "toolu_read", "name": "Read", "input": {"file_path": "src/lib.rs"}}],
               "usage": {"input_tokens": 120000, "output_tokens": 50}}),
        // Consumed by the summary request.
        json!({"blocks": [{"type": "text", "text": format!("<analysis>thinking it over</analysis>\n<summary>{summary}</summary>")}]}),
        text_reply("Fixed the pelican bug."),
    ]);
    let run = run_ok(&workspace, &server, "fix the pelican bug", &["--model", "tiny-model"]);
    assert_eq!(run.result()["result"], "Fixed the pelican bug.");

    let boundaries: Vec<Value> = run.lines().into_iter().filter(|line| line["subtype"] == "compact_boundary").collect();
    assert_eq!(boundaries.len(), 1, "{}", run.stdout);
    assert_eq!(boundaries[0]["type"], "system");
    assert_eq!(boundaries[0]["compact_metadata"]["trigger"], "auto");
    let pre_tokens = boundaries[0]["compact_metadata"]["pre_tokens"].as_u64().unwrap();
    assert!(pre_tokens >= 100_000, "{}", boundaries[0]);
    assert_eq!(boundaries[0]["session_id"], session_id(&run).as_str());

    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    // Request 2 is the summary request: the conversation's next turn (its system prompt and history as sent
    // before, so the prefix is read from the prompt cache), then the instruction.
    let summarize = &requests[1].body;
    assert_eq!(summarize["system"], requests[0].body["system"], "the cached prefix is reused");
    let messages = summarize["messages"].as_array().unwrap();
    assert_eq!(messages[0]["content"][0]["text"], "fix the pelican bug");
    let instruction =
        messages.last().unwrap()["content"].as_array().unwrap().last().unwrap()["text"].as_str().unwrap().to_owned();
    assert!(instruction.contains("<summary>"), "{instruction}");
    for section in
        ["Task and acceptance criteria", "Files", "Decisions", "Errors and fixes", "Current state", "Next step"]
    {
        assert!(instruction.contains(section), "{section:?} missing from {instruction}");
    }
    assert_valid_history(summarize);

    // Request 3 continues from the summary plus the file as it is on disk now.
    let after = &requests[2].body;
    assert_valid_history(after);
    let first = message_text(&after["messages"][0]);
    assert!(first.contains("continued from a previous conversation"), "{first}");
    assert!(first.contains(&format!("<summary>\n{summary}\n</summary>")), "{first}");
    assert!(!first.contains("thinking it over"), "the analysis is dropped: {first}");
    assert!(first.contains("Current contents of files"), "{first}");
    let file_path = real_path(&workspace).join("src/lib.rs");
    assert!(first.contains(&format!("<file path=\"{}\">\n{source}", file_path.display())), "{first}");
    assert!(first.contains("Read the file for the rest"), "the restored file is cut: {first}");
    assert!(after.to_string().len() * 3 < requests[1].body.to_string().len(), "the compacted request is smaller");
    // The agent's own system prompt is back.
    assert!(!system_text(after).starts_with("You summarize"), "{}", system_text(after));

    // The transcript records the boundary, and `--continue` resumes from the compacted history.
    let id = session_id(&run);
    let lines = transcript(&session_file(&workspace, &id));
    let boundary = lines.iter().find(|line| line["type"] == "compact_boundary").expect("a boundary line");
    assert_eq!(boundary["trigger"], "auto");
    let next = fake(vec![text_reply("They pass.")]);
    run_ok(&workspace, &next, "and the tests?", &["-c", "--model", "tiny-model"]);
    let body = &next.requests()[0].body;
    assert_valid_history(body);
    assert!(message_text(&body["messages"][0]).contains(summary), "{body}");
    assert!(!body.to_string().contains("\"fix the pelican bug\""), "the compacted-away prompt stays out: {body}");
    assert_eq!(message_text(body["messages"].as_array().unwrap().last().unwrap()), "and the tests?");
}

/// Found from the outside: when HOME filled up mid-run, the rest of the transcript was lost and the run reported
/// success (per-message failures went only to the debug log). A file-size limit stands in for the full disk:
/// the session file can't grow past it, as on a disk with no room left.
#[test]
fn a_transcript_that_cannot_be_written_is_said_at_once_and_the_run_is_not_a_plain_success() {
    let workspace = Workspace::new();
    let big: String =
        (0..1500).map(|i| format!("line {i} of a file that is long enough to fill the limit\n")).collect();
    workspace.write("big.txt", &big);
    let server = fake(vec![
        json!({"blocks": [{"type": "tool_use", "id": "toolu_read", "name": "Read", "input": {"file_path": "big.txt"}}]}),
        text_reply("Read it."),
    ]);
    let command = workspace.anthropic(&server);
    let mut limited = std::process::Command::new("bash");
    limited.arg("-c").arg("ulimit -f 40; trap '' XFSZ; exec \"$0\" \"$@\"").arg(command.get_program());
    limited.args(command.get_args()).args(["-p", "read big.txt", "--output-format", "json"]);
    for (name, value) in command.get_envs() {
        match value {
            Some(value) => limited.env(name, value),
            None => limited.env_remove(name),
        };
    }
    if let Some(dir) = command.get_current_dir() {
        limited.current_dir(dir);
    }
    let run = execute(limited);
    assert_eq!(run.code, 1, "{run:?}");
    let result = run.result();
    assert_eq!(result["result"], "Read it.", "the answer itself is there: {result}");
    assert_eq!(result["is_error"], true, "{result}");
    assert!(result["warnings"][0].as_str().unwrap_or_default().contains("Could not save the session"), "{result}");
    assert_eq!(run.stderr.matches("Could not save the session").count(), 1, "said once: {}", run.stderr);
}

/// Found from the outside: a session whose header line was damaged made `-c` say "no saved session" and
/// `tandem sessions` say "No saved sessions."; a damaged middle line was skipped without a word.
#[test]
fn a_damaged_session_is_named_with_its_line_by_continue_and_sessions() {
    let workspace = Workspace::new();
    let server = fake(vec![text_reply("first answer"), text_reply("second answer")]);
    let first = run_ok(&workspace, &server, "remember the pelican", &[]);
    let id = session_id(&first);
    let path = session_file(&workspace, &id);
    let text = std::fs::read_to_string(&path).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let damaged = lines.iter().position(|line| line.contains("\"type\":\"usage\"")).expect("a usage line") + 1;
    assert!(damaged < lines.len(), "a line in the middle");
    lines[damaged - 1] = "{\"type\":\"usage\",\"usa".to_owned();
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();

    let run = run_ok(&workspace, &server, "what did I ask?", &["-c"]);
    assert!(
        run.stderr.contains(&format!("is damaged: line {damaged} of")) && run.stderr.contains(&id),
        "{}",
        run.stderr
    );
    let body = &server.requests()[1].body;
    assert!(body.to_string().contains("remember the pelican"), "what came before the damage is kept: {body}");

    std::fs::write(&path, format!("garbage\n{}", lines[1..].join("\n"))).unwrap();
    let mut command = workspace.tandem();
    command.arg("sessions");
    let listing = execute(command);
    assert_eq!(listing.code, 0, "{listing:?}");
    assert!(
        listing.stdout.contains("Damaged") && listing.stdout.contains(&path.display().to_string()),
        "{}",
        listing.stdout
    );
    let mut command = workspace.anthropic(&server);
    command.args(["-p", "again", "-c"]);
    let run = execute(command);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr.contains("could not be read") && run.stderr.contains(&path.display().to_string()),
        "{}",
        run.stderr
    );
}

/// Found from the outside: two `--continue` of one session at once interleaved their messages in one file,
/// unlocked and unwarned. The second is refused; a process killed with the session open leaves no lock behind.
#[test]
fn a_session_open_in_another_tandem_is_refused_and_a_killed_one_leaves_no_lock() {
    let workspace = Workspace::new();
    let server = fake(vec![text_reply("first")]);
    run_ok(&workspace, &server, "start", &[]);
    let stalled = fake(vec![
        json!({"blocks": [{"type": "text", "text": "never ends"}], "fault": {"kind": "stall_after", "events": 2}}),
    ]);
    let mut holder = workspace.anthropic(&stalled);
    holder.args(["-p", "hold it open", "-c"]).stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null());
    let mut holder = holder.spawn().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while stalled.requests().is_empty() {
        assert!(std::time::Instant::now() < deadline, "the first resume never asked the model");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }

    let second = fake(vec![text_reply("second")]);
    let mut command = workspace.anthropic(&second);
    command.args(["-p", "me too", "-c"]);
    let run = execute(command);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("open in another tandem") && run.stderr.contains("--fork-session"), "{}", run.stderr);
    assert!(second.requests().is_empty());

    holder.kill().unwrap();
    holder.wait().unwrap();
    let run = run_ok(&workspace, &second, "now me", &["-c"]);
    assert_eq!(run.result()["result"], "second");
}

/// Found from the outside: sessions, recordings, checkpoints and saved outputs were never cleaned up. Claude
/// Code's `cleanupPeriodDays` (30 by default) removes a session and its directory once it is that old.
#[test]
fn sessions_older_than_the_cleanup_period_are_removed_with_their_directories() {
    let workspace = Workspace::new();
    let server = fake(vec![text_reply("one"), text_reply("two"), text_reply("three")]);
    let old = session_id(&run_ok(&workspace, &server, "old work", &[]));
    let recent = session_id(&run_ok(&workspace, &server, "recent work", &[]));
    let long_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(40 * 86_400);
    let old_dir = sessions_dir(&workspace).join(&old);
    assert!(old_dir.is_dir(), "the session has a directory");
    fn age(path: &Path, at: std::time::SystemTime) {
        if path.is_dir() {
            for entry in std::fs::read_dir(path).unwrap() {
                age(&entry.unwrap().path(), at);
            }
        } else {
            std::fs::File::options().append(true).open(path).unwrap().set_modified(at).unwrap();
        }
    }
    age(&old_dir, long_ago);
    age(&session_file(&workspace, &old), long_ago);

    run_ok(&workspace, &server, "new work", &[]);
    assert!(!session_file(&workspace, &old).exists() && !old_dir.exists(), "the 40-day-old session is gone");
    assert!(session_file(&workspace, &recent).exists(), "a recent one stays");
}

/// `--no-session-persistence` (the SDK's `persistSession: false`): nothing of the session is saved, so it is not
/// listed and can't be continued; a saved session continued this way is left as it was.
#[test]
fn a_session_that_is_not_persisted_leaves_nothing_to_resume() {
    let workspace = Workspace::new();
    let server = fake(vec![text_reply("one")]);
    let run = run_ok(&workspace, &server, "hello", &["--no-session-persistence"]);
    assert!(!session_id(&run).is_empty());
    assert!(session_files(&workspace).is_empty(), "{:?}", session_files(&workspace));
    let mut command = workspace.anthropic(&fake(vec![]));
    command.args(["-p", "again", "--continue"]);
    assert_eq!(execute(command).code, 2, "there is nothing to continue");

    let server = fake(vec![text_reply("saved")]);
    run_ok(&workspace, &server, "saved one", &[]);
    let saved = session_files(&workspace);
    let before = std::fs::read(&saved[0]).unwrap();
    let server = fake(vec![text_reply("unsaved turn")]);
    run_ok(&workspace, &server, "continue unsaved", &["--continue", "--no-session-persistence"]);
    assert_eq!(server.requests()[0].body["messages"].as_array().unwrap().len(), 3, "the saved conversation goes on");
    assert_eq!(session_files(&workspace), saved);
    assert_eq!(std::fs::read(&saved[0]).unwrap(), before, "the saved session is left as it was");
}
