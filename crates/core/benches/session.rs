//! Saved sessions at scale: a ~50 MB transcript, written through `SessionWriter` the way the agent writes it
//! (one flush per turn), then resumed with `load`, summarized with `list` and searched with `search`.
//!
//! The transcript is realistic in shape: each turn is a user prompt, assistant replies with signed thinking and
//! tool calls (Read, Edit, Bash), large tool results (source files and logs full of newlines, tabs and quotes,
//! which JSON has to escape), a usage line per response, and a compaction about two thirds of the way in.
//!
//! Run: `cargo bench -p tandem-core --bench session`. Prints figures; asserts only that the work was done
//! (the requirement is that a 50 MB transcript resumes in under a second).

// Test code: a panic is how a failure is reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::time::{Duration, Instant};

use criterion::{Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use serde_json::json;
use tandem_core::conversation::{ContentBlock, Message, Role, Usage};
use tandem_core::session::{
    CompactTrigger, SessionLine, SessionMeta, SessionWriter, list, load, search, title_from_prompt,
};

const TARGET_BYTES: u64 = 50 * 1024 * 1024;

/// About `lines` lines of Rust-like source as the Read tool returns it (numbered, tab-separated).
fn source_listing(turn: usize, lines: usize) -> String {
    let mut out = String::with_capacity(lines * 70);
    for i in 1..=lines {
        let line = match i % 6 {
            0 => format!("/// Handles \"request\" kind {i} of turn {turn}; returns the bytes written."),
            1 => format!("pub fn handle_{turn}_{i}(ctx: &mut Context, input: &[u8]) -> Result<usize> {{"),
            2 => format!("\tlet limit = ctx.config().max_len.min({});", i * 7 % 4096),
            3 => "\tif input.len() > limit { return Err(Error::TooLong { limit }); }".to_string(),
            4 => format!("\ttracing::debug!(kind = {i}, \"handled in {{}}ms\", elapsed.as_millis());"),
            _ => "}".to_string(),
        };
        out.push_str(&format!("{i:>6}\t{line}\n"));
    }
    out
}

fn thinking(turn: usize) -> ContentBlock {
    let text = format!(
        "The user wants the flaky test in module {turn} fixed. The failure only shows under load, so the \
         timer and the \"sleep\" race. I should read the file first, then check how the pool is shared.\n"
    )
    .repeat(12);
    let signature: String = (0..600).map(|i| (b'A' + ((i * 7 + turn) % 26) as u8) as char).collect();
    ContentBlock::Thinking { thinking: text, signature }
}

fn assistant(blocks: Vec<ContentBlock>) -> Message {
    Message { role: Role::Assistant, content: blocks }
}

fn tool_result(id: &str, content: String) -> Message {
    Message {
        role: Role::User,
        content: vec![ContentBlock::ToolResult { tool_use_id: id.into(), content, is_error: false }],
    }
}

/// One turn: ~75 KB, 6 messages, 3 responses.
fn write_turn(writer: &mut SessionWriter, turn: usize) {
    let usage = Usage {
        input_tokens: 1200,
        output_tokens: 800,
        cache_creation_input_tokens: 300,
        cache_read_input_tokens: 40_000,
    };
    let usage_line = SessionLine::Usage { usage, cost_usd: Some(0.0123), at: 1_700_000_000 + turn as u64 };
    let prompt = Message::user_text(format!("Turn {turn}: the test in module_{turn}.rs fails one run in ten, fix it."));
    writer.append_message(&prompt).expect("append");
    if turn == 0 {
        writer.append(&SessionLine::Title { title: title_from_prompt(&prompt.text()) }).expect("append");
    }
    let read_id = format!("toolu_read_{turn}");
    writer
        .append_message(&assistant(vec![
            thinking(turn),
            ContentBlock::text("Let me read the module first."),
            ContentBlock::ToolUse {
                id: read_id.clone(),
                name: "Read".into(),
                input: json!({"file_path": format!("src/module_{turn}.rs")}).into(),
            },
        ]))
        .expect("append");
    writer.append(&usage_line).expect("append");
    writer.append_message(&tool_result(&read_id, source_listing(turn, 900))).expect("append");
    let edit_id = format!("toolu_edit_{turn}");
    let bash_id = format!("toolu_bash_{turn}");
    writer
        .append_message(&assistant(vec![
            thinking(turn + 1),
            ContentBlock::ToolUse {
                id: edit_id.clone(),
                name: "Edit".into(),
                input: json!({"file_path": format!("src/module_{turn}.rs"), "old_string": source_listing(turn, 12), "new_string": source_listing(turn + 1, 14)}).into(),
            },
            ContentBlock::ToolUse { id: bash_id.clone(), name: "Bash".into(), input: json!({"command": format!("cargo test -p module_{turn} -- --test-threads 1")}).into() },
        ]))
        .expect("append");
    writer.append(&usage_line).expect("append");
    let log: String = (0..250).map(|i| format!("test module_{turn}::case_{i} ... ok\t({i} ms)\n")).collect();
    writer
        .append_message(&Message {
            role: Role::User,
            content: vec![
                ContentBlock::ToolResult {
                    tool_use_id: edit_id,
                    content: "The file was edited.".into(),
                    is_error: false,
                },
                ContentBlock::ToolResult { tool_use_id: bash_id, content: log, is_error: false },
            ],
        })
        .expect("append");
    writer
        .append_message(&assistant(vec![ContentBlock::text(format!(
            "Fixed: module {turn} no longer races the timer."
        ))]))
        .expect("append");
    writer.append(&usage_line).expect("append");
    writer.flush().expect("flush");
}

/// Writes turns until the file reaches [`TARGET_BYTES`], compacting once about two thirds in. Returns the number
/// of turns and the time spent writing.
fn build(data_dir: &Path) -> (SessionWriter, usize, Duration) {
    let mut writer =
        SessionWriter::create(data_dir, SessionMeta::new("/work/project", "anthropic", "claude-sonnet-4-5"))
            .expect("create a session");
    let started = Instant::now();
    let mut turns = 0;
    let mut compacted = false;
    while std::fs::metadata(writer.path()).expect("metadata").len() < TARGET_BYTES {
        if !compacted && std::fs::metadata(writer.path()).expect("metadata").len() > TARGET_BYTES * 2 / 3 {
            let summary = Message::user_text("Summary of the conversation so far: fixed flaky tests in many modules.");
            writer.append_compaction(CompactTrigger::Auto, 180_000, &[summary]).expect("compact");
            compacted = true;
        }
        write_turn(&mut writer, turns);
        turns += 1;
    }
    (writer, turns, started.elapsed())
}

fn bench_session(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("a temp dir");
    let (writer, turns, write_time) = build(dir.path());
    let path = writer.path().to_path_buf();
    drop(writer);
    let size = std::fs::metadata(&path).expect("metadata").len();
    let mb = size as f64 / (1024.0 * 1024.0);
    eprintln!("fixture: {mb:.1} MB, {turns} turns, written in {write_time:.2?} ({turns} flushes with fdatasync)");

    // One cold-ish figure first, as a user resuming would see it.
    let started = Instant::now();
    let loaded = load(&path).expect("load");
    let load_time = started.elapsed();
    assert!(!loaded.messages.is_empty() && loaded.all_messages_count == turns * 6 + 1 && !loaded.torn_tail);
    assert_eq!(loaded.usage_total.output_tokens, 800 * 3 * turns as u64);
    eprintln!(
        "load {mb:.1} MB: {load_time:.2?} ({} messages in the file, {} in the current context, {:.0} MB/s)",
        loaded.all_messages_count,
        loaded.messages.len(),
        mb / load_time.as_secs_f64()
    );
    drop(loaded);

    let started = Instant::now();
    let sessions = list(dir.path());
    eprintln!("list (1 session of {mb:.1} MB): {:.2?}", started.elapsed());
    assert_eq!(sessions.len(), 1);
    assert!(sessions[0].turns >= turns);

    let started = Instant::now();
    let hits = search(dir.path(), "no longer races the timer", 20);
    eprintln!("search {mb:.1} MB (phrase in every turn): {:.2?}, {} hits", started.elapsed(), hits.len());
    assert_eq!(hits.len(), 20);
    let started = Instant::now();
    let none = search(dir.path(), "a phrase that is nowhere", 20);
    eprintln!("search {mb:.1} MB (phrase absent): {:.2?}", started.elapsed());
    assert!(none.is_empty());

    let mut group = c.benchmark_group("session_50mb");
    group
        .sampling_mode(SamplingMode::Flat)
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5))
        .throughput(Throughput::Bytes(size));
    group.bench_function("load", |b| b.iter(|| load(&path).expect("load")));
    group.bench_function("list", |b| b.iter(|| list(dir.path())));
    group.bench_function("search_absent", |b| b.iter(|| search(dir.path(), "a phrase that is nowhere", 20)));
    group.bench_function("search_common", |b| b.iter(|| search(dir.path(), "no longer races the timer", 20)));
    group.finish();
}

criterion_group!(benches, bench_session);
criterion_main!(benches);
