use std::fs;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde_json::json;

use super::*;
use crate::conversation::{ContentBlock, Role};

fn meta(id: &str, cwd: &str) -> SessionMeta {
    SessionMeta { id: id.into(), ..SessionMeta::new(cwd, "anthropic", "claude-sonnet-4-5") }
}

fn assistant(blocks: Vec<ContentBlock>) -> Message {
    Message { role: Role::Assistant, content: blocks }
}

fn tool_result(id: &str, content: &str) -> Message {
    Message {
        role: Role::User,
        content: vec![ContentBlock::ToolResult { tool_use_id: id.into(), content: content.into(), is_error: false }],
    }
}

/// A realistic exchange: prompt, assistant with thinking (signed), redacted thinking, text and a tool call, an
/// erroring tool result, and a final answer.
fn exchange() -> Vec<Message> {
    vec![
        Message::user_text("Fix the flaky test in parser.rs\nIt fails one run in ten."),
        assistant(vec![
            ContentBlock::Thinking {
                thinking: "Look at the \"timing\" ✓".into(),
                signature: "EqQBCkgIARABGAIiQ+/=".into(),
            },
            ContentBlock::RedactedThinking { data: "c2VjcmV0".into() },
            ContentBlock::text("Let me read it."),
            ContentBlock::ToolUse {
                id: "toolu_1".into(),
                name: "Read".into(),
                input: json!({"file_path": "src/parser.rs", "limit": 20}).into(),
            },
        ]),
        Message {
            role: Role::User,
            content: vec![ContentBlock::ToolResult {
                tool_use_id: "toolu_1".into(),
                content: "1\tfn parse() {\n2\t  sleep(10);\n3\t}\n\u{0}\ttab\\".into(),
                is_error: true,
            }],
        },
        assistant(vec![ContentBlock::text("The sleep races the timer; fixed.")]),
    ]
}

fn write_session(data_dir: &Path, meta: SessionMeta, messages: &[Message]) -> PathBuf {
    let mut writer = SessionWriter::create(data_dir, meta).unwrap();
    for message in messages {
        writer.append_message(message).unwrap();
    }
    writer.flush().unwrap();
    writer.path().to_path_buf()
}

fn usage(input: u64, output: u64) -> Usage {
    Usage { input_tokens: input, output_tokens: output, cache_creation_input_tokens: 1, cache_read_input_tokens: 2 }
}

fn hash_file(path: &Path) -> u64 {
    let mut hasher = DefaultHasher::new();
    fs::read(path).unwrap().hash(&mut hasher);
    hasher.finish()
}

fn set_mtime(path: &Path, secs: u64) {
    let file = fs::File::options().append(true).open(path).unwrap();
    file.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(secs)).unwrap();
}

#[test]
fn round_trip_preserves_everything_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let messages = exchange();
    let mut writer = SessionWriter::create(dir.path(), meta("s1", "/work/p")).unwrap();
    assert_eq!(writer.id(), "s1");
    assert_eq!(writer.path(), dir.path().join("sessions/s1.jsonl"));
    writer.append_message(&messages[0]).unwrap();
    writer.append(&SessionLine::Title { title: title_from_prompt(&messages[0].text()) }).unwrap();
    writer.append_message(&messages[1]).unwrap();
    writer.append(&SessionLine::Usage { usage: usage(10, 5), cost_usd: Some(0.25), at: 7 }).unwrap();
    writer.append_message(&messages[2]).unwrap();
    writer.append(&SessionLine::Model { model: "claude-opus-4-1".into() }).unwrap();
    writer.append_message(&messages[3]).unwrap();
    writer.append(&SessionLine::Usage { usage: usage(20, 1), cost_usd: Some(0.5), at: 8 }).unwrap();
    writer.flush().unwrap();
    let path = writer.path().to_path_buf();
    drop(writer);

    let text = fs::read_to_string(&path).unwrap();
    let first: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(first["type"], "session");
    assert_eq!(first["version"], 1);
    assert!(first.get("forked_from").is_none());
    assert!(text.lines().nth(1).unwrap().starts_with(r#"{"type":"message","message":{"role":"user""#));
    // The borrowed fast path writes exactly what the enum would.
    for line in text.lines() {
        let parsed: SessionLine = serde_json::from_str(line).unwrap();
        assert_eq!(serde_json::to_string(&parsed).unwrap(), line);
    }

    let loaded = load(&path).unwrap();
    assert_eq!(loaded.messages, messages);
    assert_eq!(loaded.meta.id, "s1");
    assert_eq!(loaded.meta.cwd, Path::new("/work/p"));
    assert_eq!(loaded.all_messages_count, 4);
    assert_eq!(
        loaded.usage_total,
        Usage { input_tokens: 30, output_tokens: 6, cache_creation_input_tokens: 2, cache_read_input_tokens: 4 }
    );
    assert_eq!(loaded.cost_total, Some(0.75));
    assert_eq!(loaded.title.as_deref(), Some("Fix the flaky test in parser.rs"));
    assert_eq!(loaded.model, "claude-opus-4-1");
    assert!(!loaded.torn_tail);
    assert_eq!(loaded.skipped_lines, 0);
}

#[test]
fn unknown_cost_makes_the_total_unknown_and_unknown_kinds_are_ignored() {
    let dir = tempfile::tempdir().unwrap();
    let mut writer = SessionWriter::create(dir.path(), meta("s", "/p")).unwrap();
    writer.append_message(&Message::user_text("hi")).unwrap();
    writer.append(&SessionLine::Usage { usage: usage(1, 1), cost_usd: Some(1.0), at: 1 }).unwrap();
    writer.append(&SessionLine::Usage { usage: usage(1, 1), cost_usd: None, at: 2 }).unwrap();
    writer.flush().unwrap();
    let path = writer.path().to_path_buf();
    drop(writer);
    fs::OpenOptions::new().append(true).open(&path).unwrap().write_all(b"{\"type\":\"bookmark\",\"x\":1}\n").unwrap();
    let loaded = load(&path).unwrap();
    assert_eq!(loaded.cost_total, None);
    assert_eq!(loaded.usage_total.input_tokens, 2);
    assert_eq!((loaded.skipped_lines, loaded.torn_tail), (0, false));
    assert_eq!(list(dir.path())[0].cost_usd, None);
}

#[test]
fn torn_last_line_is_ignored_and_resuming_appends_after_it() {
    let dir = tempfile::tempdir().unwrap();
    let messages = exchange();
    let path = write_session(dir.path(), meta("torn", "/p"), &messages[..2]);
    let full = serde_json::to_string(&SessionLine::Message { message: messages[2].clone(), at: 1 }).unwrap();
    fs::OpenOptions::new().append(true).open(&path).unwrap().write_all(&full.as_bytes()[..full.len() / 2]).unwrap();

    let loaded = load(&path).unwrap();
    assert_eq!(loaded.messages, messages[..2]);
    assert!(loaded.torn_tail);
    assert_eq!(loaded.skipped_lines, 1);

    let mut writer = SessionWriter::reopen(&path).unwrap();
    assert_eq!(writer.id(), "torn");
    writer.append_message(&messages[3]).unwrap();
    writer.flush().unwrap();
    drop(writer);
    let loaded = load(&path).unwrap();
    assert_eq!(loaded.messages, [messages[0].clone(), messages[1].clone(), messages[3].clone()]);
    assert!(!loaded.torn_tail);
    assert_eq!(loaded.skipped_lines, 1);
}

#[test]
fn killed_mid_write_at_any_byte_still_loads() {
    let dir = tempfile::tempdir().unwrap();
    let messages = exchange();
    let path = write_session(dir.path(), meta("kill", "/p"), &messages);
    let bytes = fs::read(&path).unwrap();
    let last_start = bytes[..bytes.len() - 1].iter().rposition(|&b| b == b'\n').unwrap() + 1;
    let cut_path = dir.path().join("cut.jsonl");
    // Every cut inside the last line (a kill can land on any byte, even inside a UTF-8 sequence).
    for cut in last_start..bytes.len() {
        fs::write(&cut_path, &bytes[..cut]).unwrap();
        let loaded = load(&cut_path).unwrap();
        let complete = cut >= bytes.len() - 1; // only the newline missing
        let expected = if complete { &messages[..] } else { &messages[..3] };
        assert_eq!(loaded.messages, expected, "cut at {cut}");
        assert_eq!(loaded.torn_tail, !complete && cut > last_start, "cut at {cut}");
    }
    // A crash before the header reached the disk: an error that names the file, not a panic.
    fs::write(&cut_path, &bytes[..10]).unwrap();
    let err = load(&cut_path).unwrap_err().to_string();
    assert!(err.contains("cut.jsonl") && err.contains("not a tandem session"), "{err}");
}

#[test]
fn compact_boundary_restores_the_new_history() {
    let dir = tempfile::tempdir().unwrap();
    let messages = exchange();
    let mut writer = SessionWriter::create(dir.path(), meta("c", "/p")).unwrap();
    for message in &messages {
        writer.append_message(message).unwrap();
    }
    let summary = Message::user_text("Summary: fixed the flaky parser test.");
    writer.append_compaction(CompactTrigger::Manual, 91_000, &[summary.clone(), messages[3].clone()]).unwrap();
    let next = Message::user_text("now add a regression test");
    writer.append_message(&next).unwrap();
    writer.flush().unwrap();
    let path = writer.path().to_path_buf();
    drop(writer);

    let text = fs::read_to_string(&path).unwrap();
    let boundary = text.lines().find(|l| l.contains("compact_boundary")).unwrap();
    let boundary: serde_json::Value = serde_json::from_str(boundary).unwrap();
    assert_eq!((boundary["trigger"].as_str(), boundary["pre_tokens"].as_u64()), (Some("manual"), Some(91_000)));

    let loaded = load(&path).unwrap();
    assert_eq!(loaded.messages, [summary, messages[3].clone(), next]);
    assert_eq!(loaded.all_messages_count, 7);
    // Replayed history is not a turn, and is not found twice.
    let summary = find(dir.path(), "c").unwrap();
    assert_eq!(summary.turns, 2);
    assert_eq!(search(dir.path(), "sleep races", 10).len(), 1);
}

#[test]
fn list_is_newest_first_with_the_fields_filled() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let mut writer = SessionWriter::create(data, SessionMeta { created_at: 1_000, ..meta("old", "/a") }).unwrap();
    writer.append_message(&Message::user_text("  first question\nwith detail")).unwrap();
    writer.append(&SessionLine::Title { title: "First question".into() }).unwrap();
    writer.append_message(&assistant(vec![ContentBlock::text("answer")])).unwrap();
    writer.append(&SessionLine::Usage { usage: usage(1, 1), cost_usd: Some(0.12), at: 1 }).unwrap();
    writer.append_message(&tool_result("t", "not a turn")).unwrap();
    writer.append_message(&Message::user_text("second question")).unwrap();
    writer.append(&SessionLine::Model { model: "gpt-4.1".into() }).unwrap();
    drop(writer);
    let new =
        write_session(data, SessionMeta { created_at: 2_000, ..meta("new", "/b") }, &[Message::user_text("hello")]);
    let empty = SessionWriter::create(data, meta("empty", "/b")).unwrap();
    drop(empty);
    fs::write(sessions_dir(data).join("junk.jsonl"), "not json\n").unwrap();
    fs::write(sessions_dir(data).join("notes.txt"), "ignored").unwrap();
    set_mtime(&session_path(data, "old"), 1_700_000_000);
    set_mtime(&new, 1_700_000_600);

    let sessions = list(data);
    let ids: Vec<&str> = sessions.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["new", "old"], "empty and broken sessions are left out");
    let old = &sessions[1];
    assert_eq!(old.path, session_path(data, "old"));
    assert_eq!(old.cwd, Path::new("/a"));
    assert_eq!((old.created_at, old.modified_at), (1_000, 1_700_000_000));
    assert_eq!(old.title.as_deref(), Some("First question"));
    assert_eq!(old.first_prompt.as_deref(), Some("first question\nwith detail"));
    assert_eq!(old.turns, 2);
    assert_eq!(old.size_bytes, fs::metadata(&old.path).unwrap().len());
    assert_eq!(old.cost_usd, Some(0.12));
    assert_eq!(old.model, "gpt-4.1");
    assert_eq!(
        (sessions[0].title.as_deref(), sessions[0].turns, sessions[0].model.as_str()),
        (None, 1, "claude-sonnet-4-5")
    );

    let table = format_summary_table(&sessions);
    let lines: Vec<&str> = table.lines().collect();
    assert!(lines[0].starts_with("ID ") && lines[0].contains(" COST ") && lines[0].ends_with("SIZE"), "{table}");
    assert!(lines[1].starts_with("new ") && lines[1].contains("2023-11-14 22:23") && lines[1].contains("hello"));
    assert!(lines[2].contains("2023-11-14 22:13") && lines[2].contains("First question") && lines[2].contains("$0.12"));
    assert_eq!(format_summary_table(&[]), "No saved sessions.\n");
    let unknown = SessionSummary { cost_usd: None, id: "0123456789abcdef".into(), ..old.clone() };
    let table = format_summary_table(&[unknown]);
    assert!(table.lines().nth(1).unwrap().starts_with("01234567  ") && table.contains("  ?  "), "{table}");
}

#[test]
fn latest_for_cwd_picks_the_newest_non_empty_session_there() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let hi = [Message::user_text("hi")];
    let a1 = write_session(data, meta("a1", "/proj"), &hi);
    let a2 = write_session(data, meta("a2", "/proj/./sub/.."), &hi);
    let b = write_session(data, meta("b", "/other"), &hi);
    drop(SessionWriter::create(data, meta("a3", "/proj")).unwrap());
    set_mtime(&a1, 100);
    set_mtime(&a2, 200);
    set_mtime(&b, 300);
    set_mtime(&session_path(data, "a3"), 400);
    assert_eq!(latest_for_cwd(data, Path::new("/proj")).map(|s| s.id), Some("a2".into()));
    assert_eq!(latest_for_cwd(data, Path::new("/other/")).map(|s| s.id), Some("b".into()));
    assert_eq!(latest_for_cwd(data, Path::new("/nowhere")), None);
    assert_eq!(latest_for_cwd(&data.join("missing"), Path::new("/proj")), None);
}

#[test]
fn find_by_id_or_unique_prefix() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    for id in ["abc", "abcdef", "abd123", "xyz"] {
        write_session(data, meta(id, "/p"), &[Message::user_text("hi")]);
    }
    assert_eq!(find(data, "abd").unwrap().id, "abd123");
    assert_eq!(find(data, "abc").unwrap().id, "abc", "an exact id wins over longer ids it prefixes");
    assert_eq!(find(data, "abcd").unwrap().id, "abcdef");
    match find(data, "ab") {
        Err(err @ SessionError::Ambiguous { .. }) => {
            let msg = err.to_string();
            assert!(msg.contains("abc, abcdef, abd123") && msg.contains("type more"), "{msg}");
        }
        other => panic!("{other:?}"),
    }
    for query in ["q", "", "../sessions/abc", "abc.jsonl"] {
        let err = find(data, query).unwrap_err();
        assert!(matches!(err, SessionError::NotFound { .. }), "{query}: {err:?}");
        assert!(err.to_string().contains("tandem sessions"), "{err}");
    }
}

#[test]
fn fork_copies_and_leaves_the_original_byte_identical() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let messages = exchange();
    let mut writer = SessionWriter::create(data, meta("orig", "/p")).unwrap();
    for message in &messages {
        writer.append_message(message).unwrap();
    }
    writer.append(&SessionLine::Title { title: "Original".into() }).unwrap();
    writer.flush().unwrap();
    let source = writer.path().to_path_buf();
    drop(writer);
    let before = hash_file(&source);
    let bytes_before = fs::read(&source).unwrap();

    let forked = fork(data, &source, "copy").unwrap();
    assert_eq!(forked, session_path(data, "copy"));
    let mut writer = SessionWriter::reopen(&forked).unwrap();
    writer.append_message(&Message::user_text("only in the fork")).unwrap();
    writer.flush().unwrap();
    drop(writer);

    assert_eq!(hash_file(&source), before);
    assert_eq!(fs::read(&source).unwrap(), bytes_before);
    let loaded = load(&forked).unwrap();
    assert_eq!(loaded.meta.id, "copy");
    assert_eq!(loaded.meta.forked_from.as_deref(), Some("orig"));
    assert_eq!(loaded.messages.len(), messages.len() + 1);
    assert_eq!(loaded.messages[..messages.len()], messages[..]);
    assert_eq!(loaded.title.as_deref(), Some("Original"));
    assert_eq!(load(&source).unwrap().messages, messages);

    assert_eq!(fork(data, &source, "copy").unwrap_err().kind(), std::io::ErrorKind::AlreadyExists);
    assert_eq!(fork(data, &source, "../x").unwrap_err().kind(), std::io::ErrorKind::InvalidInput);
    let names: Vec<_> = fs::read_dir(sessions_dir(data)).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names.len(), 2, "no temporary files left: {names:?}");
}

#[test]
fn search_finds_old_phrases_with_context_ranked_and_capped() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let now = now_secs();
    let day = 86_400;
    let mut old = SessionWriter::create(data, meta("old-session", "/legacy")).unwrap();
    let log = "line 1\nline 2\nline 3\nline 4\nERROR: Connection Pool exhausted after 30s\nline 6\nline 7\nline 8";
    old.append(&SessionLine::Message { message: tool_result("t1", log), at: now - 400 * day }).unwrap();
    let thinking =
        assistant(vec![ContentBlock::Thinking { thinking: "connection pool".into(), signature: "s".into() }]);
    old.append(&SessionLine::Message { message: thinking, at: now - 400 * day }).unwrap();
    old.append(&SessionLine::Title { title: "Pool debugging".into() }).unwrap();
    drop(old);

    let mut new = SessionWriter::create(data, meta("new-session", "/current")).unwrap();
    let twice = Message::user_text("the connection pool, again the CONNECTION POOL");
    new.append(&SessionLine::Message { message: twice, at: now - 10 * day }).unwrap();
    let once_old = Message::user_text("a connection pool question");
    new.append(&SessionLine::Message { message: once_old, at: now - 10 * day }).unwrap();
    let call = ContentBlock::ToolUse {
        id: "t".into(),
        name: "Bash".into(),
        input: json!({"command": "grep -r 'connection pool' ."}).into(),
    };
    new.append(&SessionLine::Message { message: assistant(vec![call]), at: now - day }).unwrap();
    drop(new);

    let hits = search(data, "Connection pool", 10);
    let found: Vec<(&str, u64)> = hits.iter().map(|h| (h.session_id.as_str(), (now - h.at) / day)).collect();
    // More occurrences first at equal age, the more recent first at equal occurrences, thinking not searched.
    assert_eq!(found, [("new-session", 10), ("new-session", 1), ("new-session", 10), ("old-session", 400)]);
    assert!(hits[0].excerpt.contains("again") && hits[0].score > hits[2].score, "{hits:#?}");
    assert!(hits[1].excerpt.contains("grep -r 'connection pool'") && hits[1].role == Role::Assistant);
    let old_hit = &hits[3];
    assert_eq!((old_hit.title.as_deref(), old_hit.role), (Some("Pool debugging"), Role::User));
    assert_eq!(old_hit.excerpt, "line 3\nline 4\nERROR: Connection Pool exhausted after 30s\nline 6\nline 7");

    assert_eq!(search(data, "connection pool", 2).len(), 2);
    // Scores age with the clock between the two searches: compare what was found.
    let what = |hits: &[SearchHit]| -> Vec<(String, u64, String)> {
        hits.iter().map(|hit| (hit.session_id.clone(), hit.at, hit.excerpt.clone())).collect()
    };
    assert_eq!(what(&search(data, "connection pool", 2)), what(&hits[..2]));
    let legacy = search_in(data, "CONNECTION POOL", Some(Path::new("/legacy")), 10);
    assert_eq!(legacy.len(), 1);
    assert_eq!(legacy[0].session_id, "old-session");
    assert!(search(data, "not there at all", 10).is_empty());
    assert!(search(data, "  ", 10).is_empty());
    assert!(search(data, "pool", 0).is_empty());
}

#[test]
fn search_handles_escaped_and_unicode_phrases_and_long_lines() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let long = format!("{}needle \"quoted\" ÄÖÜ straße{}", "x".repeat(5000), "y".repeat(5000));
    write_session(data, meta("u", "/p"), &[Message::user_text(long)]);
    let hit = &search(data, "\"QUOTED\"", 5)[0];
    assert!(hit.excerpt.contains("needle \"quoted\""), "{}", hit.excerpt);
    assert!(hit.excerpt.chars().count() <= 420 && hit.excerpt.starts_with('…') && hit.excerpt.ends_with('…'));
    assert_eq!(search(data, "äöü STRASSE", 5).len(), 0, "lowercase, not case folding");
    assert_eq!(search(data, "äöü straße", 5).len(), 1);
}

#[test]
fn ids_titles_and_dates() {
    let id = new_session_id();
    assert_eq!(id.len(), 36);
    assert!(is_valid_id(&id) && id.as_bytes()[14] == b'4', "{id}");
    assert_ne!(id, new_session_id());
    assert!(!is_valid_id("a/b") && !is_valid_id("..") && !is_valid_id(""));
    assert_eq!(title_from_prompt("\n\n  fix   the\tbug  \nmore"), "fix the bug");
    assert_eq!(title_from_prompt(&"é".repeat(100)).chars().count(), 60);
    assert_eq!(list::format_utc(0), "1970-01-01 00:00");
    assert_eq!(list::format_utc(951_782_400), "2000-02-29 00:00");
    assert_eq!(list::format_utc(4_102_444_799), "2099-12-31 23:59");
    let dir = tempfile::tempdir().unwrap();
    let err = SessionWriter::create(dir.path(), meta("bad/id", "/p")).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
    drop(SessionWriter::create(dir.path(), meta("dup", "/p")).unwrap());
    assert_eq!(
        SessionWriter::create(dir.path(), meta("dup", "/p")).unwrap_err().kind(),
        std::io::ErrorKind::AlreadyExists
    );
}

#[test]
fn newer_format_and_missing_files_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("future.jsonl");
    fs::write(&path, "{\"type\":\"session\",\"id\":\"f\",\"cwd\":\"/\",\"version\":2}\nsecret contents\n").unwrap();
    let err = load(&path).unwrap_err().to_string();
    assert!(err.contains("future.jsonl") && err.contains("upgrade tandem") && !err.contains("secret"), "{err}");
    let err = load(&dir.path().join("gone.jsonl")).unwrap_err().to_string();
    assert!(err.contains("gone.jsonl"), "{err}");
    assert!(matches!(SessionWriter::reopen(&path), Err(SessionError::UnsupportedVersion { version: 2, .. })));
}
