//! A 40-turn session in a small window compacts twice and keeps its task, its files (as they are on disk) and
//! its guidelines, with every request a valid history; a compaction that cannot shrink the context is not
//! repeated.

use super::super::*;

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
            if let Event::CompactBoundary { trigger, pre_tokens, .. } = event {
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
/// window, and the summary keeps the user's prompts word for word) is not applied, the user is told, and it is
/// not tried again at every request.
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
    let (first, events) = turn(&mut handle, &format!("Here it is: {big}")).await;
    assert_eq!(first.outcome, RunOutcome::Success, "{:?}", first.errors);
    assert!(
        events.iter().any(|event| matches!(event, Event::Info { message } if message.starts_with("Not compacted"))),
        "{events:?}"
    );
    let (second, events) = turn(&mut handle, "and again").await;
    assert_eq!(second.outcome, RunOutcome::Success, "{:?}", second.errors);
    assert!(!events.iter().any(|event| matches!(event, Event::CompactionStarted { .. })), "compacted again");
    let requests = server.requests();
    let summaries = requests.iter().filter(|request| is_summary_request(&request.body)).count();
    assert_eq!(summaries, 1, "{} requests", requests.len());
    let after = message_text(&array(&requests[3].body, "messages")[0]);
    assert_eq!(after, "The original task: count the words.", "the conversation was kept as it was");
}
