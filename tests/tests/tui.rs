//! End to end: the real full-screen `tandem` in a pseudo-terminal, against the fake LLM server. The tests type
//! keys and read the screen through a terminal emulator, and check the files on disk, the requests the "model"
//! received, and the escape sequences the app wrote (clipboard, alternate screen).
//!
//! Every wait polls the screen with a generous hang guard; nothing relies on timing.

// Test code: a panic is how a failure is reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use serde_json::json;
use tandem_e2e::app::{IDLE, expect_idle_with, input_line, scenario, start, status_line, submit};
use tandem_e2e::process::{alive, wait_for_line};
use tandem_e2e::pty::{Pty, anthropic_command, assert_no_key_leak, framed, keys};
use tandem_e2e::{FakeServer, Scenario, Workspace, tool_results};

const GREETING: &str = "fn main() {\n    println!(\"Hello, world\");\n}\n";

/// The Read → Edit → answer scenario on `hello.txt`.
fn read_edit_answer(answer: &str) -> Scenario {
    scenario(json!({"replies": [
        {"blocks": [
            {"type": "text", "text": "Let me read the file first.", "chunks": 3},
            {"type": "tool_use", "id": "toolu_read", "name": "Read", "input": {"file_path": "hello.txt"}}
        ]},
        {"blocks": [
            {"type": "tool_use", "id": "toolu_edit", "name": "Edit",
             "input": {"file_path": "hello.txt", "old_string": "Hello, world", "new_string": "Hello, tandem"}}
        ]},
        {"blocks": [{"type": "text", "text": answer, "chunks": 4}]}
    ]}))
}

/// The words of the answer paragraph that starts with `first_words`, read back from the screen: its first line
/// (after the `● ` bullet) and the indented lines that continue it.
fn paragraph_words(screen: &str, first_words: &str) -> Vec<String> {
    let lines: Vec<&str> = screen.lines().collect();
    let start = lines
        .iter()
        .position(|line| line.starts_with(&format!("● {first_words}")))
        .unwrap_or_else(|| panic!("no paragraph starting {first_words:?}:\n{}", framed(screen)));
    let mut words: Vec<String> = lines[start].trim_start_matches("● ").split_whitespace().map(str::to_owned).collect();
    for line in &lines[start + 1..] {
        if !line.starts_with("  ") || line.trim().is_empty() {
            break;
        }
        words.extend(line.split_whitespace().map(str::to_owned));
    }
    words
}

#[test]
fn a_prompt_streams_its_answer_onto_the_screen() {
    let workspace = Workspace::new();
    let answer =
        "Streaming works.\n\n- first item\n- second item\n\nEvery chunk of this answer arrived **separately**.";
    let server = FakeServer::spawn(scenario(json!({"replies": [
        {"blocks": [{"type": "text", "text": answer, "chunks": 24}], "delay_ms": 10}
    ]})))
    .unwrap();
    let pty = start(&workspace, &server, 40, 120, &[]);
    submit(&pty, "Does streaming work?");
    let screen = expect_idle_with(&pty, "arrived separately");
    let lines: Vec<&str> = screen.lines().map(str::trim_end).collect();
    let at = lines.iter().position(|line| *line == "> Does streaming work?").unwrap_or_else(|| {
        panic!("the user message is missing:\n{}", framed(&screen));
    });
    // The answer, rendered as markdown, below the user message.
    let answer_lines: Vec<&str> = lines[at + 1..].iter().copied().filter(|line| !line.is_empty()).take(4).collect();
    assert_eq!(
        answer_lines,
        ["● Streaming works.", "  • first item", "  • second item", "  Every chunk of this answer arrived separately."],
        "{}",
        framed(&screen)
    );

    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].body["messages"][0]["content"][0]["text"], "Does streaming work?");
    let model = requests[0].body["model"].as_str().expect("a model in the request");
    let status = status_line(&screen);
    assert!(status.contains(model), "the status line does not name the model {model}: {status:?}");
    assert_no_key_leak(&pty);
}

#[test]
fn y_approves_an_edit() {
    let workspace = Workspace::new();
    workspace.write("hello.txt", GREETING);
    let server = FakeServer::spawn(read_edit_answer("I changed the greeting to say tandem.")).unwrap();
    let pty = start(&workspace, &server, 40, 120, &[]);
    submit(&pty, "Change the greeting");
    let dialog = pty.expect_text("Allow Edit?");
    assert!(dialog.contains("Hello, tandem"), "the dialog shows the diff:\n{}", framed(&dialog));
    assert_eq!(workspace.read("hello.txt"), GREETING, "nothing is written before the answer");
    pty.send("y");
    let screen = expect_idle_with(&pty, "I changed the greeting to say tandem.");
    assert!(!screen.contains("Allow Edit?"), "{}", framed(&screen));
    assert_eq!(workspace.read("hello.txt"), "fn main() {\n    println!(\"Hello, tandem\");\n}\n");
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let results = tool_results(&requests[2].body);
    let edit = results.iter().find(|result| result["tool_use_id"] == "toolu_edit").expect("the edit's result");
    assert_ne!(edit["is_error"], true, "{edit}");
}

/// `n` rejects the edit and ends the turn (issue 28: the model carried on as if nothing happened); the model is
/// told with the next prompt.
#[test]
fn n_rejects_an_edit_stops_the_turn_and_the_model_is_told() {
    let workspace = Workspace::new();
    workspace.write("hello.txt", GREETING);
    let server = FakeServer::spawn(read_edit_answer("Understood, I left the file alone.")).unwrap();
    let pty = start(&workspace, &server, 40, 120, &[]);
    submit(&pty, "Change the greeting");
    pty.expect_text("Allow Edit?");
    pty.send("n");
    let screen = expect_idle_with(&pty, "You declined, so the turn stopped");
    assert!(!screen.contains("Allow Edit?") && !screen.contains("Understood"), "{}", framed(&screen));
    assert_eq!(workspace.read("hello.txt"), GREETING);
    assert_eq!(server.requests().len(), 2, "no request after the refusal");
    submit(&pty, "Leave it as it is");
    expect_idle_with(&pty, "Understood, I left the file alone.");
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let results = tool_results(&requests[2].body);
    let denial = results.iter().find(|result| result["tool_use_id"] == "toolu_edit").expect("the edit's result");
    assert_eq!(denial["is_error"], true, "{denial}");
    let content = denial["content"].to_string();
    assert!(content.contains("denied") && content.contains("stopped the turn"), "{denial}");
    assert!(requests[2].body.to_string().contains("Leave it as it is"));
}

/// `n` with a message typed while the model worked: the turn stops at the refusal and the queued message goes
/// out at once, with the refusal before it, as the user's next word.
#[test]
fn n_stops_the_turn_and_the_message_queued_meanwhile_is_sent() {
    let workspace = Workspace::new();
    workspace.write("hello.txt", GREETING);
    let server = FakeServer::spawn(scenario(json!({"replies": [
        {"blocks": [
            {"type": "text", "text": "- reading\n- then editing\n- then done\n", "chunks": 30},
            {"type": "tool_use", "id": "toolu_read", "name": "Read", "input": {"file_path": "hello.txt"}}
        ], "delay_ms": 80},
        {"blocks": [
            {"type": "tool_use", "id": "toolu_edit", "name": "Edit",
             "input": {"file_path": "hello.txt", "old_string": "Hello, world", "new_string": "Hello, tandem"}}
        ]},
        {"blocks": [{"type": "text", "text": "Then I will only rename the function."}]}
    ]})))
    .unwrap();
    let pty = start(&workspace, &server, 40, 120, &[]);
    submit(&pty, "Change the greeting");
    pty.expect_text("• reading");
    pty.send("rename the function instead");
    pty.expect_text("> rename the function instead");
    pty.send(keys::ENTER);
    pty.expect_text("queued: rename the function instead");
    pty.expect_text("Allow Edit?");
    pty.send("n");
    expect_idle_with(&pty, "Then I will only rename the function.");
    assert_eq!(workspace.read("hello.txt"), GREETING);
    let requests = server.requests();
    assert_eq!(requests.len(), 3, "the refusal ended the turn; the queued message started the next");
    let results = tool_results(&requests[2].body);
    let denial = results.iter().find(|result| result["tool_use_id"] == "toolu_edit").expect("the edit's result");
    assert!(denial["content"].to_string().contains("stopped the turn"), "{denial}");
    assert!(requests[2].body.to_string().contains("rename the function instead"));
}

#[test]
/// Enter and `y` after rejecting a hunk both write only the accepted one.
fn a_review_can_accept_one_hunk_of_two() {
    for answer in [keys::ENTER, "y"] {
        review_one_hunk_of_two(answer);
    }
}

fn review_one_hunk_of_two(answer: &str) {
    let workspace = Workspace::new();
    let original: String = (1..=30).map(|n| format!("line {n}\n")).collect();
    workspace.write("lines.txt", &original);
    let proposed = original.replace("line 2\n", "line two\n").replace("line 29\n", "line twenty-nine\n");
    let server = FakeServer::spawn(scenario(json!({"replies": [
        {"blocks": [{"type": "tool_use", "id": "toolu_read", "name": "Read", "input": {"file_path": "lines.txt"}}]},
        {"blocks": [{"type": "tool_use", "id": "toolu_write", "name": "Write",
                     "input": {"file_path": "lines.txt", "content": proposed}}]},
        {"blocks": [{"type": "text", "text": "Noted: only the first change was applied."}]}
    ]})))
    .unwrap();
    let pty = start(&workspace, &server, 40, 120, &[]);
    submit(&pty, "Spell out two numbers");
    let dialog =
        pty.expect("the review dialog", |screen| screen.contains("Allow Write?") && screen.contains("hunk 1/2"));
    assert!(dialog.contains("line two"), "{}", framed(&dialog));

    pty.send(keys::TAB);
    pty.expect("hunk 2 selected", |screen| screen.lines().any(|line| line.contains("▶") && line.contains("hunk 2/2")));
    pty.send(" ");
    pty.expect("hunk 2 rejected", |screen| {
        screen.lines().any(|line| line.contains("[✗]") && line.contains("hunk 2/2"))
    });
    pty.send(answer);
    expect_idle_with(&pty, "Noted: only the first change was applied.");

    assert_eq!(workspace.read("lines.txt"), original.replace("line 2\n", "line two\n"), "answered {answer:?}");
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let results = tool_results(&requests[2].body);
    let write = results.iter().find(|result| result["tool_use_id"] == "toolu_write").expect("the write's result");
    assert_ne!(write["is_error"], true, "{write}");
    let content = write["content"].to_string();
    assert!(content.contains("applied hunk 1"), "{write}");
    assert!(content.contains("rejected hunk 2"), "{write}");
}

#[test]
fn a_allows_the_same_command_for_the_rest_of_the_session() {
    let workspace = Workspace::new();
    let server = FakeServer::spawn(scenario(json!({"replies": [
        {"blocks": [{"type": "tool_use", "id": "toolu_sh1", "name": "Bash", "input": {"command": "touch hi.txt && echo hi"}}]},
        {"blocks": [{"type": "tool_use", "id": "toolu_sh2", "name": "Bash", "input": {"command": "touch hi.txt && echo hi"}}]},
        {"blocks": [{"type": "text", "text": "Said hi twice."}]}
    ]})))
    .unwrap();
    let pty = start(&workspace, &server, 40, 120, &[]);
    submit(&pty, "Say hi twice");
    pty.expect_text("Allow Bash?");
    pty.send("a");
    // Only one key was pressed: a second dialog would block the turn, so the answer proves there was none.
    expect_idle_with(&pty, "Said hi twice.");
    assert_eq!(server.served(), 3);
    let requests = server.requests();
    let results = tool_results(&requests[2].body);
    assert_eq!(results.len(), 2, "{results:?}");
    for result in &results {
        assert_ne!(result["is_error"], true, "{result}");
        assert!(result["content"].to_string().contains("hi"), "{result}");
    }
}

#[test]
fn esc_stops_a_stream_and_the_app_stays_usable() {
    let workspace = Workspace::new();
    // Forty list items of ten characters in forty deltas: one whole line per delta, and a streaming answer shows
    // whole lines only.
    let items: String = (1..=40).map(|n| format!("- step {n:02}\n")).collect();
    let server = FakeServer::spawn(scenario(json!({"replies": [
        // message_start, ping, content_block_start, then 8 deltas, then silence.
        {"blocks": [{"type": "text", "text": items, "chunks": 40}], "fault": {"kind": "stall_after", "events": 11}},
        {"blocks": [{"type": "text", "text": "Back at your service."}]}
    ]})))
    .unwrap();
    let pty = start(&workspace, &server, 40, 120, &[]);
    submit(&pty, "Count slowly");
    let streaming = pty.expect_text("step 08");
    assert!(streaming.contains("esc to interrupt"), "{}", framed(&streaming));
    pty.send(keys::ESC);
    let screen = pty.expect("the interrupted notice", |screen| screen.contains("Interrupted") && screen.contains(IDLE));
    assert!(screen.contains("step 01") && screen.contains("step 08"), "the partial answer stays:\n{}", framed(&screen));
    assert!(!screen.contains("step 09"), "{}", framed(&screen));

    submit(&pty, "Are you there?");
    expect_idle_with(&pty, "Back at your service.");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let messages = requests[1].body["messages"].as_array().expect("messages");
    let last = messages.last().expect("a last message");
    assert_eq!(last["role"], "user");
    assert!(last.to_string().contains("Are you there?"), "{last}");
}

#[test]
fn esc_kills_a_running_command_and_its_background_children() {
    let workspace = Workspace::new();
    let command = "sleep 300 & echo $! > bg.pid; sleep 300";
    let server = FakeServer::spawn(scenario(json!({"replies": [
        {"blocks": [{"type": "tool_use", "id": "toolu_sleep", "name": "Bash", "input": {"command": command}}]},
        {"blocks": [{"type": "text", "text": "never asked"}]}
    ]})))
    .unwrap();
    let pty = start(&workspace, &server, 40, 120, &["--dangerously-skip-permissions"]);
    submit(&pty, "Sleep for a while");
    let background = wait_for_line(&workspace.path().join("bg.pid"));
    assert!(alive(&background), "the background sleep is not running");
    pty.send(keys::ESC);
    pty.expect("the interrupted notice", |screen| screen.contains("Interrupted") && screen.contains(IDLE));
    let deadline = Instant::now() + Duration::from_secs(10);
    while alive(&background) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!alive(&background), "the background sleep survived the interrupt");
    assert_eq!(server.served(), 1, "an interrupted turn asks the model nothing more");
}

#[test]
fn a_resize_rewraps_the_conversation() {
    let workspace = Workspace::new();
    let paragraph = "Terminals come in every size, so the conversation has to wrap to whatever width the window \
                     has right now, and wrap again when the window changes, without losing or repeating a single \
                     word of what the model said along the way.";
    let server = FakeServer::spawn(scenario(
        json!({"replies": [{"blocks": [{"type": "text", "text": paragraph, "chunks": 6}]}]}),
    ))
    .unwrap();
    let expected: Vec<String> = paragraph.split_whitespace().map(str::to_owned).collect();
    let pty = start(&workspace, &server, 40, 120, &[]);
    submit(&pty, "Tell me about wrapping");
    let wide = expect_idle_with(&pty, "single");
    assert_eq!(paragraph_words(&wide, "Terminals come"), expected, "{}", framed(&wide));

    pty.resize(30, 60);
    // Re-wrapped, not cut: every word is there, in order, on lines that fit.
    let narrow = pty.expect("every word at 60 columns", |screen| {
        screen.contains("● Terminals come") && paragraph_words(screen, "Terminals come") == expected
    });
    assert!(narrow.lines().all(|line| line.chars().count() <= 60), "{}", framed(&narrow));
    let lines = narrow.lines().skip_while(|line| !line.starts_with("● Terminals")).take(4).count();
    assert!(lines >= 4, "at 60 columns the paragraph takes several lines:\n{}", framed(&narrow));

    pty.resize(40, 120);
    pty.expect("the paragraph re-wrapped at 120 columns", |screen| {
        screen.lines().any(|line| line.starts_with("● Terminals come") && line.chars().count() > 60)
            && paragraph_words(screen, "Terminals come") == expected
    });
}

#[test]
fn ctrl_f_searches_the_conversation() {
    let workspace = Workspace::new();
    let answer = "A pineapple is a tropical fruit.\n\nUnlike an apple, a pineapple grows from the middle of a plant.";
    let server =
        FakeServer::spawn(scenario(json!({"replies": [{"blocks": [{"type": "text", "text": answer, "chunks": 3}]}]})))
            .unwrap();
    let pty = start(&workspace, &server, 40, 120, &[]);
    submit(&pty, "Tell me about fruit");
    expect_idle_with(&pty, "grows from the middle");
    pty.send(keys::CTRL_F);
    pty.expect_text("search:");
    pty.send("pineapple");
    pty.expect("the live match count", |screen| search_bar(screen).is_some_and(|bar| bar.contains("pineapple  2/2")));
    pty.send(keys::ENTER);
    let screen = pty.expect("the confirmed search", |screen| {
        search_bar(screen).is_some_and(|bar| bar.contains("2/2") && bar.contains("n/N next/prev"))
    });
    assert!(screen.contains("A pineapple is a tropical fruit."), "{}", framed(&screen));
    pty.send("N");
    pty.expect("the previous match", |screen| search_bar(screen).is_some_and(|bar| bar.contains("pineapple  1/2")));
    pty.send(keys::ESC);
    pty.expect("the search bar closed", |screen| search_bar(screen).is_none() && screen.contains(IDLE));
}

#[test]
fn ctrl_f_finds_text_inside_a_collapsed_card_and_opens_it() {
    let workspace = Workspace::new();
    workspace.write("notes.txt", "alpha\nbeta\nquokka\n");
    let server = FakeServer::spawn(scenario(json!({"replies": [
        {"blocks": [{"type": "tool_use", "id": "toolu_read", "name": "Read", "input": {"file_path": "notes.txt"}}]},
        {"blocks": [{"type": "text", "text": "Three words."}]}
    ]})))
    .unwrap();
    let pty = start(&workspace, &server, 40, 120, &[]);
    submit(&pty, "What is in the notes?");
    let collapsed = expect_idle_with(&pty, "Three words.");
    assert!(!collapsed.contains("quokka"), "{}", framed(&collapsed));
    pty.send(keys::CTRL_F);
    pty.expect_text("search:");
    pty.send("quokka");
    pty.expect("a match inside the collapsed card", |screen| {
        search_bar(screen).is_some_and(|bar| bar.contains("quokka  1/1 (in a collapsed card: enter opens it)"))
    });
    pty.send(keys::ENTER);
    let opened = pty.expect("the card opened at the match", |screen| {
        screen.contains("quokka") && search_bar(screen).is_some_and(|bar| bar.contains("1/1  n/N next/prev"))
    });
    assert!(opened.lines().any(|line| line.contains("quokka") && !line.starts_with("search:")), "{}", framed(&opened));
    pty.send(keys::ESC);
    pty.expect("the search bar closed", |screen| search_bar(screen).is_none());
}

fn search_bar(screen: &str) -> Option<&str> {
    screen.lines().find(|line| line.starts_with("search: "))
}

#[test]
fn the_permission_dialog_fits_an_80_by_24_terminal() {
    let workspace = Workspace::new();
    workspace.write("hello.txt", GREETING);
    let server = FakeServer::spawn(read_edit_answer("Done at 80 columns.")).unwrap();
    let pty = start(&workspace, &server, 24, 80, &[]);
    submit(&pty, "Change the greeting");
    let dialog = pty.expect_text("Allow Edit?");
    let rows = pty.screen_rows();
    assert!(rows.len() <= 24 && rows.iter().all(|row| row.chars().count() <= 80), "{}", framed(&dialog));
    // The whole diff and the answer keys are visible.
    for text in ["hello.txt", "Hello, world", "Hello, tandem", "allow once", "deny"] {
        assert!(dialog.contains(text), "{text:?} is missing:\n{}", framed(&dialog));
    }
    let top = dialog.lines().position(|line| line.contains("Allow Edit?")).unwrap();
    let bottom = dialog.lines().skip(top + 1).position(|line| line.contains('└')).map(|at| at + top + 1);
    assert!(bottom.is_some(), "the dialog's bottom border is on screen:\n{}", framed(&dialog));
    pty.send("y");
    expect_idle_with(&pty, "Done at 80 columns.");
    assert!(workspace.read("hello.txt").contains("Hello, tandem"));
}

#[test]
fn shift_tab_switches_to_accept_edits_and_the_edit_needs_no_dialog() {
    let workspace = Workspace::new();
    workspace.write("hello.txt", GREETING);
    let server = FakeServer::spawn(read_edit_answer("Edited without asking.")).unwrap();
    let pty = start(&workspace, &server, 40, 120, &[]);
    pty.send(keys::SHIFT_TAB);
    pty.expect("the mode in the status line", |screen| status_line(screen).contains("accept edits"));
    submit(&pty, "Change the greeting");
    // A dialog would block the turn: reaching the answer proves there was none.
    let screen = expect_idle_with(&pty, "Edited without asking.");
    assert!(workspace.read("hello.txt").contains("Hello, tandem"));
    assert_eq!(server.served(), 3);
    // The card shows the diff that was applied, as it does after a dialog.
    assert!(
        screen.contains("hello.txt  +1 −1") && screen.contains("+     println!(\"Hello, tandem\");"),
        "{}",
        framed(&screen)
    );
}

#[test]
fn f_denies_with_feedback_for_the_model() {
    let workspace = Workspace::new();
    workspace.write("hello.txt", GREETING);
    let server = FakeServer::spawn(read_edit_answer("I will keep the world.")).unwrap();
    let pty = start(&workspace, &server, 40, 120, &[]);
    submit(&pty, "Change the greeting");
    pty.expect_text("Allow Edit?");
    pty.send("f");
    pty.send("keep the world");
    let dialog = pty.expect_text("keep the world");
    assert!(dialog.contains("Allow Edit?"), "the feedback is typed into the dialog:\n{}", framed(&dialog));
    pty.send(keys::ENTER);
    expect_idle_with(&pty, "I will keep the world.");
    assert_eq!(workspace.read("hello.txt"), GREETING);
    let results = tool_results(&server.requests()[2].body);
    let denial = results.iter().find(|result| result["tool_use_id"] == "toolu_edit").expect("the edit's result");
    assert_eq!(denial["is_error"], true, "{denial}");
    assert!(denial["content"].to_string().contains("keep the world"), "{denial}");
}

#[test]
fn a_prompt_sent_while_working_is_queued_and_sent_when_the_turn_ends() {
    let workspace = Workspace::new();
    let server = FakeServer::spawn(scenario(json!({"replies": [
        {"blocks": [{"type": "text", "text": "- one\n- two\n- three\n", "chunks": 30}], "delay_ms": 80},
        {"blocks": [{"type": "text", "text": "Now I see your message."}]}
    ]})))
    .unwrap();
    let pty = start(&workspace, &server, 40, 120, &[]);
    submit(&pty, "Start something slow");
    pty.expect_text("• one");
    pty.send("and then this");
    pty.expect_text("> and then this");
    pty.send(keys::ENTER);
    let screen = pty.expect_text("queued: and then this");
    assert!(!input_line(&screen).contains("and then this"), "the prompt is free again:\n{}", framed(&screen));
    assert_eq!(server.requests().len(), 1, "nothing is sent while the model works");
    expect_idle_with(&pty, "Now I see your message.");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let last = requests[1].body["messages"].as_array().and_then(|messages| messages.last().cloned()).unwrap();
    assert!(last.to_string().contains("and then this"), "{last}");
}

#[test]
fn page_up_and_end_scroll_the_conversation() {
    let workspace = Workspace::new();
    let rows: String = (1..=80).map(|n| format!("- row {n:03}\n")).collect();
    let server =
        FakeServer::spawn(scenario(json!({"replies": [{"blocks": [{"type": "text", "text": rows, "chunks": 8}]}]})))
            .unwrap();
    let pty = start(&workspace, &server, 24, 80, &[]);
    submit(&pty, "List eighty rows");
    let bottom = expect_idle_with(&pty, "row 080");
    assert!(!bottom.contains("row 001"), "{}", framed(&bottom));
    pty.send(keys::PAGE_UP);
    let up = pty.expect("an earlier page", |screen| !screen.contains("row 080") && screen.contains("row 06"));
    assert!(!up.contains("row 001"), "one page only:\n{}", framed(&up));
    pty.send("\x1b[H");
    pty.expect("the top", |screen| screen.contains("> List eighty rows") && screen.contains("row 001"));
    pty.send("\x1b[F");
    pty.expect("the bottom again", |screen| screen.contains("row 080") && !screen.contains("row 001"));
}

#[test]
fn a_large_bracketed_paste_is_collapsed_and_sent_in_full() {
    let workspace = Workspace::new();
    let server =
        FakeServer::spawn(scenario(json!({"replies": [{"blocks": [{"type": "text", "text": "Got your log."}]}]})))
            .unwrap();
    let pty = start(&workspace, &server, 40, 120, &[]);
    let log: Vec<String> = (1..=40).map(|n| format!("log line {n}")).collect();
    pty.send("look at this: ");
    pty.send(&format!("\x1b[200~{}\x1b[201~", log.join("\n")));
    let screen = pty.expect_text("[pasted");
    assert!(!screen.contains("log line 40"), "the paste is collapsed:\n{}", framed(&screen));
    pty.send(keys::ENTER);
    expect_idle_with(&pty, "Got your log.");
    let sent = server.requests()[0].body["messages"][0]["content"][0]["text"].as_str().unwrap().to_owned();
    assert_eq!(sent, format!("look at this: {}", log.join("\n")));
}

#[test]
fn ctrl_o_expands_thinking_and_tool_output() {
    let workspace = Workspace::new();
    workspace.write("notes.txt", "alpha\nbeta\ngamma\n");
    let server = FakeServer::spawn(scenario(json!({"replies": [
        {"blocks": [
            {"type": "thinking", "thinking": "First I ponder.\nThen I ponder more.\nAnd finally I decide.", "chunks": 3},
            {"type": "text", "text": "Let me look."},
            {"type": "tool_use", "id": "toolu_read", "name": "Read", "input": {"file_path": "notes.txt"}}
        ]},
        {"blocks": [{"type": "text", "text": "Three Greek letters."}]}
    ]})))
    .unwrap();
    let pty = start(&workspace, &server, 40, 120, &[]);
    submit(&pty, "What is in the notes?");
    let collapsed = expect_idle_with(&pty, "Three Greek letters.");
    assert!(collapsed.contains("✻ Thought (3 lines"), "{}", framed(&collapsed));
    assert!(collapsed.contains("Read 3 lines"), "{}", framed(&collapsed));
    assert!(!collapsed.contains("And finally I decide.") && !collapsed.contains("gamma"), "{}", framed(&collapsed));
    // The latest expandable cell is the Read card.
    pty.send(keys::CTRL_O);
    let expanded = pty.expect("the file's lines", |screen| screen.contains("gamma"));
    assert!(!expanded.contains("And finally I decide."), "{}", framed(&expanded));
    pty.send(keys::CTRL_O);
    pty.expect("the Read card collapsed again", |screen| !screen.contains("gamma") && screen.contains("Read 3 lines"));
    // The thinking went back to the model with its signature.
    let thinking = server.requests()[1].body["messages"][1]["content"][0].clone();
    assert_eq!(thinking["type"], "thinking", "the thinking block goes back to the model: {thinking}");
    assert_eq!(thinking["signature"], "sig_fake");
}

#[test]
fn an_api_error_is_shown_and_the_next_prompt_works() {
    let workspace = Workspace::new();
    let server = FakeServer::spawn(scenario(json!({"replies": [
        {"fault": {"kind": "http", "status": 400}},
        {"blocks": [{"type": "text", "text": "Recovered."}]}
    ]})))
    .unwrap();
    let pty = start(&workspace, &server, 40, 120, &[]);
    submit(&pty, "This one fails");
    let screen = pty.expect("the error", |screen| screen.contains("API error 400") && screen.contains(IDLE));
    assert!(screen.contains("✗ API error 400"), "{}", framed(&screen));
    // The failed prompt is in the history: ↑ brings it back.
    pty.send(keys::UP);
    pty.expect("the failed prompt back in the input", |screen| input_line(screen) == "> This one fails");
    pty.send(keys::CTRL_C);
    pty.expect("an empty prompt", |screen| screen.contains(IDLE));
    submit(&pty, "Try again");
    expect_idle_with(&pty, "Recovered.");
    assert_eq!(server.served(), 2);
}

#[test]
fn slash_help_shows_the_keys_and_any_key_closes_it() {
    let workspace = Workspace::new();
    let server = FakeServer::spawn(scenario(json!({"replies": []}))).unwrap();
    let pty = start(&workspace, &server, 40, 100, &[]);
    submit(&pty, "/help");
    let help = pty.expect_text("key closes");
    for text in ["ctrl+f", "search the conversation", "ctrl+z", "/quit"] {
        assert!(help.contains(text), "{text:?} is missing:\n{}", framed(&help));
    }
    pty.send("x");
    let screen = pty.expect("the help closed", |screen| !screen.contains("key closes") && screen.contains(IDLE));
    assert!(!screen.contains("> x"), "the closing key is not typed:\n{}", framed(&screen));
    assert_eq!(server.served(), 0);
}

#[test]
fn e_edits_the_proposal_in_the_editor_first() {
    let workspace = Workspace::new();
    workspace.write("hello.txt", GREETING);
    let server = FakeServer::spawn(read_edit_answer("Fine, editor it is.")).unwrap();
    let mut command = anthropic_command(&workspace, &server);
    // An "editor" that changes the proposed content without a screen of its own.
    command.env("EDITOR", "sed -i s/tandem/editor/");
    let pty = Pty::spawn(command, 40, 120);
    pty.expect("the first frame", |screen| screen.contains(IDLE));
    submit(&pty, "Change the greeting");
    pty.expect_text("Allow Edit?");
    pty.send("e");
    expect_idle_with(&pty, "Fine, editor it is.");
    assert!(pty.alternate_screen(), "back on the alternate screen after the editor");
    assert_eq!(workspace.read("hello.txt"), "fn main() {\n    println!(\"Hello, editor\");\n}\n");
    let results = tool_results(&server.requests()[2].body);
    let edit = results.iter().find(|result| result["tool_use_id"] == "toolu_edit").expect("the edit's result");
    assert_ne!(edit["is_error"], true, "{edit}");
    let content = edit["content"].to_string();
    assert!(content.contains("edited your proposed content"), "{edit}");
    assert!(content.contains("Hello, editor"), "the model sees what was really written: {edit}");
}

#[test]
fn slash_sandbox_shows_what_each_kind_of_command_may_do() {
    let workspace = Workspace::new();
    let server = FakeServer::spawn(scenario(json!({"replies": []}))).unwrap();
    let pty = start(&workspace, &server, 40, 120, &[]);
    submit(&pty, "/sandbox");
    let screen = pty.expect("the sandbox description", |screen| screen.contains("Judged read-only"));
    assert!(screen.contains("Kernel:") && screen.contains("Never readable:"), "{}", framed(&screen));
}

/// Issue 28: a dialog open through a resize from 120×40 to 60×20 and back. Small, the key help is one line and `?`
/// shows the rest; Tab brings the second hunk's change into view; large again, every key shows; `y` still answers.
#[test]
fn a_dialog_keeps_its_diff_and_keys_through_a_resize_to_60x20() {
    let workspace = Workspace::new();
    let original: String = (1..=60).map(|n| format!("line {n}\n")).collect();
    workspace.write("lines.txt", &original);
    let proposed = original.replace("line 2\n", "line two\n").replace("line 49\n", "line forty-nine\n");
    let server = FakeServer::spawn(scenario(json!({"replies": [
        {"blocks": [{"type": "tool_use", "id": "toolu_read", "name": "Read", "input": {"file_path": "lines.txt"}}]},
        {"blocks": [{"type": "tool_use", "id": "toolu_write", "name": "Write",
                     "input": {"file_path": "lines.txt", "content": proposed}}]},
        {"blocks": [{"type": "text", "text": "Both changes are written."}]}
    ]})))
    .unwrap();
    let pty = start(&workspace, &server, 40, 120, &[]);
    submit(&pty, "Spell out two numbers");
    let roomy = pty.expect("the dialog", |screen| screen.contains("Allow Write?") && screen.contains("hunk 1/2"));
    assert!(roomy.contains("scroll the conversation") && !roomy.contains("more keys"), "{}", framed(&roomy));

    pty.resize(20, 60);
    let small = pty.expect("one line of keys at 60x20", |screen| screen.contains("? more keys"));
    assert!(small.contains("line two") && small.contains("Allow Write?"), "{}", framed(&small));
    pty.send("?");
    pty.expect("every key after ?", |screen| screen.contains("fewer keys"));
    pty.send("?");
    pty.expect("one line again", |screen| screen.contains("? more keys"));
    pty.send(keys::TAB);
    pty.expect("the second hunk's change in view", |screen| screen.contains("line forty-nine"));

    pty.resize(40, 120);
    pty.expect("every key again at 120x40", |screen| {
        screen.contains("scroll the conversation") && !screen.contains("more keys")
    });
    pty.send("y");
    expect_idle_with(&pty, "Both changes are written.");
    assert_eq!(workspace.read("lines.txt"), proposed);
}
