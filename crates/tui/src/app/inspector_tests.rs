//! `/inspect` in the app: the list of requests and each one's request, response and changes, at 80×24 and
//! 120×40, then the keys back to the prompt.

use std::time::Instant;

use ratatui::crossterm::event::KeyCode;
use serde_json::json;
use tandem_core::inspect::Exchange;
use tandem_protocol::conversation::Usage;

use super::tests::{app, key, screen, type_text};
use super::{App, Effect, Input};

fn exchange(id: u64, messages: serde_json::Value, answer: &str) -> Exchange {
    Exchange {
        id,
        at_ms: 1_796_340_000_000,
        purpose: "turn".into(),
        turn: if id == 1 { 1 } else { 2 },
        model: "claude-sonnet-4-5".into(),
        attempt: 1,
        method: "POST".into(),
        url: "https://api.anthropic.com/v1/messages".into(),
        request_headers: vec![
            ("anthropic-version".into(), "2023-06-01".into()),
            ("x-api-key".into(), "[redacted]".into()),
        ],
        request_body: Some(
            json!({"model": "claude-sonnet-4-5", "system": [{"type": "text", "text": "You are tandem"}], "messages": messages}),
        ),
        request_bytes: 300,
        status: Some(200),
        events: vec![
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": answer}}),
        ],
        first_event_ms: Some(40),
        first_token_ms: Some(120),
        total_ms: 900,
        usage: Some(Usage { input_tokens: 1200, output_tokens: 30, cache_read_input_tokens: 5000, ..Usage::default() }),
        ..Exchange::default()
    }
}

fn opened(width: u16, height: u16) -> App {
    let mut app = app(width, height);
    let effects = app.submit("/inspect".into(), Instant::now());
    assert!(effects.iter().any(|effect| matches!(effect, Effect::ListRequests)), "{effects:?}");
    let first = exchange(1, json!([{"role": "user", "content": "hi"}]), "Hello!");
    let mut failed = exchange(2, json!([{"role": "user", "content": "hi"}, {"role": "user", "content": "more"}]), "");
    failed.status = Some(529);
    failed.error = Some("API error 529 (overloaded_error): Overloaded".into());
    failed.usage = None;
    failed.events.clear();
    failed.response_headers = vec![("request-id".into(), "req_011".into()), ("retry-after".into(), "3".into())];
    let second = exchange(3, json!([{"role": "user", "content": "hi"}, {"role": "user", "content": "more"}]), "More.");
    app.update(
        Input::Requests(vec![(String::new(), first), (String::new(), failed), (String::new(), second)]),
        Instant::now(),
    );
    app
}

#[test]
fn the_list_shows_every_request_with_status_latency_and_tokens() {
    for (width, height) in [(120, 40), (80, 24)] {
        let app = opened(width, height);
        let text = screen(&app);
        assert!(text.contains("API inspector · 3 requests"), "{text}");
        assert!(text.contains("529!"), "the failed attempt: {text}");
        assert!(text.contains("120ms") && text.contains("1200") && text.contains("5000"), "{text}");
        if width >= 100 {
            assert!(text.contains("$0.00"), "cost at {width}: {text}");
        }
    }
}

#[test]
fn a_request_opens_on_its_body_then_its_response_and_what_changed() {
    for (width, height) in [(120, 40), (80, 24)] {
        let mut app = opened(width, height);
        app.update(key(KeyCode::Enter), Instant::now());
        let text = screen(&app);
        assert!(text.contains("POST https://api.anthropic.com/v1/messages"), "{text}");
        assert!(text.contains("x-api-key: [redacted]"), "{text}");
        assert!(text.contains("\"model\": \"claude-sonnet-4-5\""), "{text}");
        app.update(key(KeyCode::Tab), Instant::now());
        let text = screen(&app);
        assert!(text.contains("HTTP 200") && text.contains("first token 120 ms"), "{text}");
        assert!(text.contains("More."), "the streamed text: {text}");
        app.update(key(KeyCode::Tab), Instant::now());
        let text = screen(&app);
        // Request 3 is compared with request 2 (the attempt that failed): the same body.
        assert!(text.contains("compared with request 2"), "{text}");
        assert!(text.contains("same as the previous request"), "{text}");
        // [ steps to the failed attempt, and again to the first: one message was added since.
        app.update(key(KeyCode::Char('[')), Instant::now());
        app.update(key(KeyCode::Char('[')), Instant::now());
        let text = screen(&app);
        assert!(text.contains("first request here"), "{text}");
        app.update(key(KeyCode::Char(']')), Instant::now());
        let text = screen(&app);
        assert!(text.contains("compared with request 1") && text.contains("+ ") && text.contains("\"more\""), "{text}");
        // The failed attempt's response: its error and the headers it came with.
        app.update(key(KeyCode::BackTab), Instant::now());
        let text = screen(&app);
        assert!(text.contains("HTTP 529") && text.contains("error: API error 529"), "{text}");
        assert!(text.contains("request-id: req_011") && text.contains("retry-after: 3"), "{text}");
    }
}

#[test]
fn c_copies_the_request_as_curl_and_esc_gives_the_prompt_back() {
    let mut app = opened(100, 30);
    let effects = app.update(key(KeyCode::Char('c')), Instant::now());
    let copied = effects.iter().find_map(|effect| match effect {
        Effect::Copy(text) => Some(text.clone()),
        _ => None,
    });
    let copied = copied.expect("a curl command on the clipboard");
    assert!(copied.starts_with("curl -sS -N -X POST 'https://api.anthropic.com/v1/messages'"), "{copied}");
    assert!(copied.contains("x-api-key: $ANTHROPIC_API_KEY") && !copied.contains("[redacted]"), "{copied}");
    app.update(key(KeyCode::Enter), Instant::now());
    app.update(key(KeyCode::Esc), Instant::now());
    assert!(app.inspector.as_ref().is_some_and(|inspector| inspector.detail.is_none()), "Esc goes back to the list");
    app.update(key(KeyCode::Esc), Instant::now());
    assert!(app.inspector.is_none());
    type_text(&mut app, "next");
    assert_eq!(app.editor.text(), "next");
}

#[test]
fn a_session_without_requests_says_so() {
    let mut app = app(80, 24);
    app.update(Input::Requests(Vec::new()), Instant::now());
    assert!(app.inspector.is_none());
    assert!(screen(&app).contains("no model requests recorded"));
}

#[test]
fn r_replays_the_request_as_recorded_and_the_answer_shows_above_the_old_one() {
    use tandem_protocol::{Event, Op, ReplayAnswer};
    let mut app = opened(100, 30);
    app.update(key(KeyCode::Enter), Instant::now());
    let effects = app.update(key(KeyCode::Char('r')), Instant::now());
    let sent = effects.iter().find_map(|effect| match effect {
        Effect::Op(Op::Replay { request, body, headers, edited: false }) => {
            Some((*request, body.clone(), headers.clone()))
        }
        _ => None,
    });
    let (request, body, headers) = sent.expect("a replay op");
    assert_eq!(request, 3);
    assert_eq!(body, app.inspector.as_ref().unwrap().requests[2].1.request_body.clone().unwrap());
    assert!(headers.iter().any(|(name, _)| name == "anthropic-version"));
    assert!(screen(&app).contains("Replaying…"), "{}", screen(&app));
    let answer = ReplayAnswer {
        request: 3,
        edited: false,
        text: "A different answer.".into(),
        tool_calls: vec!["Write {\"file_path\":\"x\"}".into()],
        usage: Some(Usage { input_tokens: 7, ..Usage::default() }),
        error: None,
    };
    let effects = super::tests::core(&mut app, Event::Replayed(answer.clone()));
    assert!(effects.iter().any(|effect| matches!(effect, Effect::ListRequests)), "the list is read again: {effects:?}");
    let text = screen(&app);
    assert!(text.contains("replay 1 (tools not run):") && text.contains("A different answer."), "{text}");
    assert!(text.contains("tool call (not run): Write"), "{text}");
    assert!(text.contains("recorded:") && text.contains("More."), "the old answer below it: {text}");
    assert!(!text.contains("Replaying…"), "{text}");

    // The list read again (with the replay's own record) keeps the request open; a second replay, edited,
    // shows at the top, and the recorded answer keeps its one heading.
    let mut requests = app.inspector.as_ref().unwrap().requests.clone();
    let mut recorded = requests[2].1.clone();
    recorded.id = 4;
    recorded.purpose = "replay".into();
    requests.push((String::new(), recorded));
    app.update(Input::Requests(requests), Instant::now());
    let inspector = app.inspector.as_ref().unwrap();
    assert_eq!((inspector.requests.len(), inspector.selected), (4, 2));
    assert!(inspector.detail.is_some(), "still open");
    app.update(key(KeyCode::Char('e')), Instant::now());
    let edited = app.inspector.as_ref().unwrap().requests[2].1.request_body.clone().unwrap().to_string();
    app.update(Input::EditorResult(Ok(edited)), Instant::now());
    let second = ReplayAnswer { text: "The edited answer.".into(), tool_calls: Vec::new(), edited: true, ..answer };
    super::tests::core(&mut app, Event::Replayed(second));
    let text = screen(&app);
    let newest = text.find("replay 2, edited (tools not run):").expect(&text);
    let oldest = text.find("replay 1 (tools not run):").expect(&text);
    assert!(newest < oldest, "{text}");
    assert_eq!(text.matches("recorded:").count(), 1, "{text}");
}

#[test]
fn e_replays_the_request_as_edited_in_the_editor() {
    use tandem_protocol::Op;
    let mut app = opened(100, 30);
    let effects = app.update(key(KeyCode::Char('e')), Instant::now());
    let content = effects.iter().find_map(|effect| match effect {
        Effect::OpenEditor { content, .. } => Some(content.clone()),
        _ => None,
    });
    let content = content.expect("the body in $EDITOR");
    assert!(content.contains("\"messages\""), "{content}");
    let edited = content.replace("more", "something else");
    let effects = app.update(Input::EditorResult(Ok(edited)), Instant::now());
    let body = effects.iter().find_map(|effect| match effect {
        Effect::Op(Op::Replay { body, edited: true, .. }) => Some(body.clone()),
        _ => None,
    });
    assert_eq!(body.expect("a replay")["messages"][1]["content"], "something else");
    // A body that is no longer JSON is not sent.
    app.update(key(KeyCode::Char('e')), Instant::now());
    let effects = app.update(Input::EditorResult(Ok("{ broken".into())), Instant::now());
    assert!(effects.is_empty(), "{effects:?}");
    assert!(screen(&app).contains("not JSON"), "{}", screen(&app));
}

#[test]
fn the_body_folds_to_a_list_of_messages_and_search_finds_lines() {
    for (width, height) in [(120, 40), (80, 24)] {
        let mut app = opened(width, height);
        app.update(key(KeyCode::Enter), Instant::now());
        let body = |app: &App| {
            let lines = app.inspector.as_ref().unwrap().detail_lines(super::inspector::Tab::Request);
            lines.into_iter().map(|(_, line)| line).collect::<Vec<_>>().join("\n")
        };
        app.update(key(KeyCode::Char('f')), Instant::now());
        let text = screen(&app);
        // A message a line, saying who said it.
        assert!(
            text.contains("\"messages\": [") && text.contains(r#"    {"role": "user", "content": "more"}"#),
            "{text}"
        );
        assert!(!body(&app).contains("      \"content\": \"more\""), "folded");
        app.update(key(KeyCode::Char('f')), Instant::now());
        assert!(body(&app).contains("      \"content\": \"more\""), "{}", body(&app));
        type_text(&mut app, "/");
        type_text(&mut app, "MORE");
        assert!(screen(&app).contains("/MORE"), "{}", screen(&app));
        app.update(key(KeyCode::Enter), Instant::now());
        let text = screen(&app);
        assert!(text.contains("1 line matches"), "{text}");
        assert!(text.contains("match 1 of 1"), "{text}");
        // Esc clears the search first, then goes back to the list.
        app.update(key(KeyCode::Esc), Instant::now());
        assert!(!screen(&app).contains("line matches"));
        app.update(key(KeyCode::Esc), Instant::now());
        assert!(app.inspector.as_ref().unwrap().detail.is_none());
    }
}

#[test]
fn typing_a_search_types_letters_that_are_keys_elsewhere() {
    let mut app = opened(100, 30);
    app.update(key(KeyCode::Enter), Instant::now());
    app.update(key(KeyCode::Char('/')), Instant::now());
    let mut effects = Vec::new();
    for letter in "cache recorded".chars() {
        effects.extend(app.update(key(KeyCode::Char(letter)), Instant::now()));
    }
    assert!(effects.is_empty(), "c, r and e typed into the search did nothing else: {effects:?}");
    let detail = app.inspector.as_ref().unwrap().detail.as_ref().unwrap();
    assert_eq!(detail.query, "cache recorded");
}

#[test]
fn y_copies_the_exchange_as_json() {
    let mut app = opened(100, 30);
    let effects = app.update(key(KeyCode::Char('y')), Instant::now());
    let copied = effects.iter().find_map(|effect| match effect {
        Effect::Copy(text) => Some(text.clone()),
        _ => None,
    });
    let copied: serde_json::Value = serde_json::from_str(&copied.expect("JSON on the clipboard")).unwrap();
    // The list opens on the newest request.
    assert_eq!(copied["id"], 3);
    assert_eq!(copied["request_body"]["model"], "claude-sonnet-4-5");
    assert_eq!(copied["request_headers"][1], serde_json::json!(["x-api-key", "[redacted]"]));
    assert!(screen(&app).contains("request 3 copied as JSON"), "{}", screen(&app));
}

#[test]
fn the_list_and_each_tab_of_the_detail_as_snapshots() {
    for (width, height) in [(80, 24), (120, 40)] {
        let mut app = opened(width, height);
        insta::assert_snapshot!(format!("inspector_list_{width}x{height}"), screen(&app));
        app.update(key(KeyCode::Enter), Instant::now());
        insta::assert_snapshot!(format!("inspector_request_{width}x{height}"), screen(&app));
        app.update(key(KeyCode::Tab), Instant::now());
        insta::assert_snapshot!(format!("inspector_response_{width}x{height}"), screen(&app));
        app.update(key(KeyCode::Tab), Instant::now());
        app.update(key(KeyCode::Char('[')), Instant::now());
        app.update(key(KeyCode::Char('[')), Instant::now());
        app.update(key(KeyCode::Char(']')), Instant::now());
        insta::assert_snapshot!(format!("inspector_changes_{width}x{height}"), screen(&app));
    }
}

#[test]
fn a_long_string_wraps_instead_of_being_cut_and_search_finds_its_row() {
    let mut app = opened(80, 24);
    let long = format!("{} END-OF-PROMPT", "You are tandem, a careful pair programmer. ".repeat(6));
    app.inspector.as_mut().unwrap().requests[2].1.request_body =
        Some(json!({"model": "claude-sonnet-4-5", "system": [{"type": "text", "text": long}], "messages": []}));
    app.update(key(KeyCode::Enter), Instant::now());
    let text = screen(&app);
    assert!(text.contains("END-OF-PROMPT"), "the end of a long string is on screen: {text}");
    assert!(!text.contains('…'), "nothing is cut: {text}");
    app.update(key(KeyCode::Char('/')), Instant::now());
    type_text(&mut app, "end-of-prompt");
    app.update(key(KeyCode::Enter), Instant::now());
    assert!(screen(&app).contains("1 line matches"), "{}", screen(&app));
}

#[test]
fn the_response_shows_one_line_an_event_and_f_lays_them_out() {
    for (width, height) in [(120, 40), (80, 24)] {
        let mut app = opened(width, height);
        app.update(key(KeyCode::Enter), Instant::now());
        app.update(key(KeyCode::Tab), Instant::now());
        let events = |app: &App| {
            let lines = app.inspector.as_ref().unwrap().detail_lines(super::inspector::Tab::Response);
            let at = lines.iter().position(|(_, line)| line.starts_with("events (")).unwrap();
            lines[at + 1..].iter().map(|(kind, line)| (*kind, line.clone())).collect::<Vec<_>>()
        };
        let one_line = events(&app);
        assert_eq!(one_line.len(), 2, "{one_line:?}");
        assert!(one_line.iter().all(|(kind, _)| *kind == super::inspector::LineKind::Json));
        assert!(one_line[1].1.contains(r#""text":"More.""#), "{one_line:?}");
        assert!(screen(&app).contains("f lay events out"), "{}", screen(&app));
        app.update(key(KeyCode::Char('f')), Instant::now());
        let laid_out = events(&app).into_iter().map(|(_, line)| line).collect::<Vec<_>>();
        assert!(laid_out.contains(&"    \"text\": \"More.\"".to_owned()), "{laid_out:?}");
        assert!(laid_out.len() > 10, "{laid_out:?}");
        let text = screen(&app);
        assert!(text.contains("f one line an event"), "{text}");
        // The request's folding is its own.
        app.update(key(KeyCode::BackTab), Instant::now());
        assert!(screen(&app).contains("f fold"), "{}", screen(&app));
    }
}

#[test]
fn a_search_finds_what_is_folded_away_and_unfolds_the_body_to_show_it() {
    let mut app = opened(80, 24);
    let long = "a long message whose last words are the needle in the haystack";
    app.inspector.as_mut().unwrap().requests[2].1.request_body =
        Some(json!({"model": "m", "messages": [{"role": "user", "content": long}]}));
    app.update(key(KeyCode::Enter), Instant::now());
    app.update(key(KeyCode::Char('f')), Instant::now());
    assert!(!screen(&app).contains("haystack"), "cut in the folded line");
    type_text(&mut app, "/haystack");
    app.update(key(KeyCode::Enter), Instant::now());
    let text = screen(&app);
    assert!(text.contains("haystack") && text.contains("unfolded to show it"), "{text}");
    assert_eq!(app.inspector.as_ref().unwrap().detail.as_ref().unwrap().fold, None);
}
