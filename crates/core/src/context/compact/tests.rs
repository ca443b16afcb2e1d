use serde_json::json;

use super::*;

fn user(text: &str) -> Message {
    Message::user_text(text)
}

fn assistant(content: Vec<ContentBlock>) -> Message {
    Message { role: Role::Assistant, content }
}

fn results(pairs: &[(&str, &str)]) -> Message {
    Message {
        role: Role::User,
        content: pairs
            .iter()
            .map(|(id, content)| ContentBlock::ToolResult {
                tool_use_id: (*id).into(),
                content: (*content).into(),
                is_error: false,
            })
            .collect(),
    }
}

fn call(id: &str, name: &str, input: Value) -> ContentBlock {
    ContentBlock::ToolUse { id: id.into(), name: name.into(), input: input.into() }
}

fn read(id: &str, path: &str) -> ContentBlock {
    call(id, "Read", json!({ "file_path": path }))
}

fn text(message: &Message) -> String {
    message.text()
}

#[test]
fn should_compact_at_the_threshold() {
    let policy = CompactionPolicy::default();
    assert_eq!(policy, CompactionPolicy { threshold: 0.92, reserve_tokens: 13_000 });
    // floor(0.92 × 200,000) − 13,000 = 171,000.
    assert_eq!(policy.limit(200_000), 171_000);
    assert!(!policy.should_compact(171_000, 200_000));
    assert!(policy.should_compact(171_001, 200_000));
    // A small window caps the reserve at a quarter: floor(0.92 × 8,000) − 2,000 = 5,360.
    assert_eq!(policy.limit(8_000), 5_360);
    assert!(!policy.should_compact(5_000, 8_000));
    let custom = CompactionPolicy { threshold: 0.5, reserve_tokens: 0 };
    assert!(!custom.should_compact(100_000, 200_000));
    assert!(custom.should_compact(100_001, 200_000));
    assert!(CompactionPolicy { threshold: 2.0, reserve_tokens: 0 }.should_compact(1_001, 1_000));
    assert!(!policy.should_compact(1_000_000, 0));
    assert_eq!(policy.keep_tail_tokens(200_000), 20_000);
    assert_eq!(policy.keep_tail_tokens(32_000), 3_200);
}

#[test]
fn summary_request_drops_a_dangling_call_and_truncates_big_outputs() {
    let big = format!("HEAD{}TAIL", "é".repeat(25_000));
    let messages = vec![
        user("Add a --verbose flag; done when `cargo test` passes."),
        assistant(vec![
            ContentBlock::Thinking { thinking: "let me look".into(), signature: "sig".into() },
            read("t1", "src/main.rs"),
            call("t2", "Write", json!({ "file_path": "src/big.rs", "content": big.clone() })),
        ]),
        results(&[("t1", &big), ("t2", "written")]),
        assistant(vec![ContentBlock::text("Now the tests."), call("t3", "Bash", json!({ "command": "cargo test" }))]),
    ];
    let request = summary_request(&messages, Some("  Focus on the CLI parsing.  "));
    validate_history(&request).unwrap();
    assert_eq!(request.len(), 3, "the dangling assistant message is dropped: {request:#?}");
    assert!(request.iter().all(|m| !m.content.iter().any(|b| matches!(b, ContentBlock::Thinking { .. }))));
    assert!(!request.iter().any(|m| m.tool_uses().any(|(id, _, _)| id == "t3")));

    let ContentBlock::ToolResult { content, .. } = &request[2].content[0] else { panic!("{request:#?}") };
    assert!(content.len() < TOOL_OUTPUT_LIMIT + 100, "{}", content.len());
    assert!(content.starts_with("HEAD") && content.ends_with("TAIL") && content.contains("chars omitted"));
    let (_, _, input) = request[1].tool_uses().nth(1).unwrap();
    assert!(input["content"].as_str().unwrap().len() < TOOL_OUTPUT_LIMIT + 100);
    assert_eq!(input["file_path"], "src/big.rs");

    // The instruction joins the trailing tool results (roles must alternate), after them.
    let prompt = request[2].content.last().unwrap();
    let ContentBlock::Text { text: prompt } = prompt else { panic!("{prompt:?}") };
    for section in SUMMARY_SECTIONS {
        assert!(prompt.contains(section), "missing section {section}");
    }
    assert!(prompt.contains("own words"));
    assert!(prompt.ends_with("Focus on the CLI parsing."));
    assert_eq!(request[0], messages[0]);
}

#[test]
fn summary_request_after_a_finished_reply_adds_a_user_message() {
    let messages = vec![user("hi"), assistant(vec![ContentBlock::text("hello")])];
    let request = summary_request(&messages, None);
    validate_history(&request).unwrap();
    assert_eq!(request.len(), 3);
    assert!(text(&request[2]).contains(SUMMARY_SECTIONS[5]));
    assert!(!text(&request[2]).contains("Additional instructions"));
    assert!(!summary_request(&messages, Some("   ")).last().unwrap().text().contains("Additional instructions"));
}

#[test]
fn extract_summary_prefers_the_summary_tags() {
    assert_eq!(extract_summary("<analysis>think</analysis>\n<summary>\n1. Task\n</summary>"), "1. Task");
    assert_eq!(extract_summary("<analysis>think</analysis>\n1. Task  "), "1. Task");
    assert_eq!(extract_summary("  plain  "), "plain");
    assert_eq!(extract_summary("<summary>unterminated"), "unterminated");
}

/// user task, then `rounds` tool rounds of ~`size` chars each, then a final reply.
fn long_session(rounds: usize, size: usize) -> Vec<Message> {
    let mut messages = vec![user("The original task, in the user's words.")];
    for round in 0..rounds {
        let id = format!("t{round}");
        messages.push(assistant(vec![ContentBlock::text(format!("step {round}")), read(&id, &format!("f{round}.rs"))]));
        messages.push(results(&[(&id, &"x".repeat(size))]));
    }
    messages.push(assistant(vec![ContentBlock::text("done")]));
    messages
}

#[test]
fn drop_oldest_keeps_the_task_and_tool_pairs() {
    let messages = long_session(10, 1_000);
    let trimmed = drop_oldest(&messages, 0.5);
    validate_history(&trimmed).unwrap();
    assert!(trimmed.len() < messages.len());
    let removed = TokenCounter::chars_of(&messages) - TokenCounter::chars_of(&trimmed);
    assert!(removed * 2 >= TokenCounter::chars_of(&messages[1..]) - 200, "removed only {removed}");
    assert_eq!(trimmed[0].content[0], messages[0].content[0]);
    assert!(text(&trimmed[0]).contains(DROPPED_NOTE));
    assert_eq!(trimmed.last(), messages.last());

    let everything = drop_oldest(&messages, 1.0);
    validate_history(&everything).unwrap();
    assert_eq!(everything.len(), 2, "{everything:#?}");

    // Nothing to drop: same history back.
    let short = vec![user("task"), assistant(vec![ContentBlock::text("ok")])];
    assert_eq!(drop_oldest(&short, 0.5), short);
    assert_eq!(drop_oldest(&messages, 0.0), messages);
}

#[test]
fn rebuild_keeps_a_verbatim_tail_the_files_and_the_marked_summary() {
    let messages = long_session(10, 3_500);
    let counter = TokenCounter::new();
    let files: Vec<(PathBuf, String)> = (0..7)
        .map(|n| (PathBuf::from(format!("src/f{n}.rs")), format!("fn f{n}() {{}}\n").repeat(n * 1_000)))
        .collect();
    // Each round is ~1,030 tokens: a budget of 1,100 keeps the last round and the reply.
    let rebuilt = rebuild("1. Task and acceptance criteria: ...", &messages, &files, 1_100, &counter);
    validate_history(&rebuilt).unwrap();
    let first = text(&rebuilt[0]);
    assert!(first.starts_with(SUMMARY_PREAMBLE));
    assert!(first.contains("<summary>\n1. Task and acceptance criteria: ...\n</summary>"));
    assert!(first.contains(FILES_PREAMBLE));
    assert!(first.contains("<file path=\"src/f4.rs\">") && !first.contains("src/f5.rs"));
    assert!(first.contains("cut at 17500 of"));
    assert!(!first.contains(CONTINUE_NOTE));
    let tail = &rebuilt[1..];
    assert_eq!(tail, &messages[messages.len() - tail.len()..]);
    assert_eq!(tail.len(), 3);
    assert!(counter.estimate_messages(tail) <= 1_100);
    assert_eq!(tail[0].role, Role::Assistant);

    // A tail that starts with a user message is merged into the summary message.
    let mut chat = messages.clone();
    chat.push(user("Now also add docs."));
    chat.push(assistant(vec![ContentBlock::text("Added.")]));
    let rebuilt = rebuild("summary", &chat, &[], 12, &counter);
    validate_history(&rebuilt).unwrap();
    assert_eq!(rebuilt.len(), 2);
    assert_eq!(rebuilt[0].content.last(), chat[chat.len() - 2].content.last());
    assert_eq!(rebuilt[1], chat[chat.len() - 1]);

    // No room for a tail: the summary alone, with a nudge to go on.
    let rebuilt = rebuild("summary", &messages, &[], 0, &counter);
    assert_eq!(rebuilt.len(), 1);
    assert!(text(&rebuilt[0]).contains(CONTINUE_NOTE));
}

#[test]
fn recent_file_paths_are_newest_first_and_unique() {
    let messages = vec![
        user("task"),
        assistant(vec![read("a", "src/a.rs"), read("b", "src/b.rs")]),
        results(&[("a", "..."), ("b", "...")]),
        assistant(vec![
            call("c", "Edit", json!({"file_path": "src/a.rs", "old_string": "x", "new_string": "y"})),
            call("d", "Bash", json!({"command": "cat src/z.rs", "file_path": "src/z.rs"})),
            call("e", "Write", json!({"file_path": "src/c.rs", "content": ""})),
            call("f", "Read", json!({"path": "no-file-path"})),
        ]),
        results(&[("c", "ok"), ("d", "ok"), ("e", "ok"), ("f", "error")]),
    ];
    let paths = recent_file_paths(&messages, 10);
    assert_eq!(paths, ["src/c.rs", "src/a.rs", "src/b.rs"].map(PathBuf::from));
    assert_eq!(recent_file_paths(&messages, 2), ["src/c.rs", "src/a.rs"].map(PathBuf::from));
    assert!(recent_file_paths(&messages, 0).is_empty());
}

#[test]
fn validate_history_rejects_what_the_api_rejects() {
    let ok = vec![user("t"), assistant(vec![read("a", "x")]), results(&[("a", "r")])];
    validate_history(&ok).unwrap();
    assert!(validate_history(&[]).is_err());
    assert!(validate_history(&ok[1..]).is_err(), "starts with assistant");
    assert!(validate_history(&ok[..2]).is_err(), "unanswered tool_use");
    assert!(validate_history(&[user("t"), user("u")]).is_err(), "same role twice");
    assert!(validate_history(&[user("t"), assistant(vec![])]).is_err(), "empty message");
    let orphan = vec![user("t"), assistant(vec![ContentBlock::text("hi")]), results(&[("a", "r")])];
    assert!(validate_history(&orphan).is_err(), "orphan tool_result");
    let mut text_first = ok.clone();
    text_first[2].content.insert(0, ContentBlock::text("note"));
    assert!(validate_history(&text_first).is_err(), "text before tool_result");
    let twice = vec![user("t"), assistant(vec![read("a", "x")]), results(&[("a", "r"), ("a", "r")])];
    assert!(validate_history(&twice).is_err(), "answered twice");
}

#[test]
fn repair_fixes_broken_histories_and_leaves_valid_ones_alone() {
    let broken = vec![
        assistant(vec![ContentBlock::text("stray")]),
        user("task"),
        assistant(vec![read("a", "x"), read("b", "y")]),
        results(&[("a", "r")]),
        user("more"),
        assistant(vec![read("c", "z")]),
    ];
    let repaired = repair_history(broken);
    validate_history(&repaired).unwrap();
    assert_eq!(repaired.len(), 3);
    let valid = long_session(3, 10);
    assert_eq!(repair_history(valid.clone()), valid);
}

/// A conversation as the turn loop builds it: prompts, tool rounds, interrupted rounds (whose results get the
/// next prompt merged in), thinking, multi-byte text.
fn random_conversation(rng: &mut fastrand::Rng) -> Vec<Message> {
    let mut messages = vec![user(&random_text(rng, 2_000))];
    let mut next_id = 0;
    for turn in 0..rng.usize(1..7) {
        if turn > 0 {
            let prompt = ContentBlock::text(random_text(rng, 1_000));
            match messages.last_mut() {
                Some(last) if last.role == Role::User => last.content.push(prompt),
                _ => messages.push(Message { role: Role::User, content: vec![prompt] }),
            }
        }
        let rounds = rng.usize(1..6);
        for round in 0..rounds {
            let calls = if round + 1 == rounds { 0 } else { rng.usize(1..4) };
            let mut content = Vec::new();
            if rng.bool() {
                content.push(ContentBlock::Thinking { thinking: random_text(rng, 300), signature: "sig".into() });
            }
            if calls == 0 || rng.bool() {
                content.push(ContentBlock::text(random_text(rng, 1_500)));
            }
            let ids: Vec<String> = (0..calls).map(|n| format!("toolu_{}", next_id + n)).collect();
            next_id += calls;
            for id in &ids {
                let name = ["Read", "Edit", "Write", "Bash"][rng.usize(0..4)];
                let input =
                    json!({ "file_path": format!("src/f{}.rs", rng.usize(0..8)), "content": random_text(rng, 3_000) });
                content.push(call(id, name, input));
            }
            messages.push(assistant(content));
            if calls > 0 {
                let pairs: Vec<(String, String)> = ids.iter().map(|id| (id.clone(), random_text(rng, 8_000))).collect();
                let pairs: Vec<(&str, &str)> = pairs.iter().map(|(id, out)| (id.as_str(), out.as_str())).collect();
                messages.push(results(&pairs));
                if rng.u8(0..10) == 0 {
                    break; // interrupted after the tools ran
                }
            }
        }
    }
    messages
}

fn random_text(rng: &mut fastrand::Rng, max: usize) -> String {
    let piece = ["word ", "é", "漢字", "fn main() {}\n", "🦀"][rng.usize(0..5)];
    piece.repeat(rng.usize(1..=max / piece.len().max(1) + 1))
}

#[test]
fn compaction_output_is_always_valid_for_random_conversations() {
    for seed in 0..400 {
        let mut rng = fastrand::Rng::with_seed(seed);
        let messages = random_conversation(&mut rng);
        validate_history(&messages).unwrap_or_else(|e| panic!("seed {seed}: generator made an invalid history: {e}"));
        assert_eq!(repair_history(messages.clone()), messages, "seed {seed}");

        let mut counter = TokenCounter::new();
        counter.record_usage(
            rng.usize(10_000..100_000),
            &crate::conversation::Usage { input_tokens: 20_000, ..Default::default() },
        );
        let budget = rng.u64(0..15_000);
        let files: Vec<(PathBuf, String)> = recent_file_paths(&messages, rng.usize(0..8))
            .into_iter()
            .map(|path| (path, random_text(&mut rng, 30_000)))
            .collect();
        let rebuilt = rebuild(&random_text(&mut rng, 500), &messages, &files, budget, &counter);
        validate_history(&rebuilt).unwrap_or_else(|e| panic!("seed {seed}: rebuild: {e}\n{rebuilt:#?}"));
        assert!(text(&rebuilt[0]).starts_with(SUMMARY_PREAMBLE));
        let start = tail_start(&messages, budget, &counter);
        assert!(start >= 1);
        assert!(counter.estimate_messages(&messages[start..]) <= budget, "seed {seed}");
        // The tail is verbatim: a leading user message merged into the first one, the rest unchanged.
        match messages.get(start) {
            Some(message) if message.role == Role::User => {
                assert!(rebuilt[0].content.ends_with(&message.content), "seed {seed}");
                assert_eq!(&rebuilt[1..], &messages[start + 1..], "seed {seed}");
            }
            _ => assert_eq!(&rebuilt[1..], &messages[start..], "seed {seed}"),
        }

        let request = summary_request(&messages, Some("extra"));
        validate_history(&request).unwrap_or_else(|e| panic!("seed {seed}: summary_request: {e}"));
        for block in request.iter().flat_map(|m| &m.content) {
            if let ContentBlock::ToolResult { content, .. } = block {
                assert!(content.len() < TOOL_OUTPUT_LIMIT + 100, "seed {seed}");
            }
        }

        let trimmed = drop_oldest(&messages, rng.f64());
        validate_history(&trimmed).unwrap_or_else(|e| panic!("seed {seed}: drop_oldest: {e}"));
        assert!(trimmed[0].content.starts_with(&messages[0].content), "seed {seed}");
        assert!(TokenCounter::chars_of(&trimmed) <= TokenCounter::chars_of(&messages) + DROPPED_NOTE.len() + 8);
    }
}

#[test]
fn repair_makes_random_garbage_valid() {
    for seed in 0..300 {
        let mut rng = fastrand::Rng::with_seed(seed);
        let messages: Vec<Message> = (0..rng.usize(0..12))
            .map(|_| {
                let role = if rng.bool() { Role::User } else { Role::Assistant };
                let content = (0..rng.usize(0..4))
                    .map(|_| match rng.u8(0..4) {
                        0 => ContentBlock::text("t"),
                        1 => ContentBlock::Thinking { thinking: "th".into(), signature: String::new() },
                        2 => read(&format!("id{}", rng.u8(0..4)), "x"),
                        _ => ContentBlock::ToolResult {
                            tool_use_id: format!("id{}", rng.u8(0..4)),
                            content: "r".into(),
                            is_error: false,
                        },
                    })
                    .collect();
                Message { role, content }
            })
            .collect();
        let repaired = repair_history(messages);
        if !repaired.is_empty() {
            validate_history(&repaired).unwrap_or_else(|e| panic!("seed {seed}: {e}\n{repaired:#?}"));
        }
    }
}
