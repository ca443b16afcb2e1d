//! `/rewind` in the app: the list of prompts, the preview reviewed hunk by hunk, and what is sent, at 80×24
//! and 120×40.

use std::time::Instant;

use ratatui::crossterm::event::KeyCode;
use tandem_protocol::{Event, Op, RewindFileView, RewindHunks, RewindPointView, RewindTarget};

use super::tests::{app, core, key, screen};
use super::{App, Effect};

fn points() -> Vec<RewindPointView> {
    vec![
        RewindPointView {
            seq: 1,
            text: "add the parser".into(),
            files: vec!["src/parse.rs".into()],
            in_conversation: true,
        },
        RewindPointView {
            seq: 2,
            text: "rename the config keys and update the tests".into(),
            files: vec!["src/config.rs".into(), "notes.txt".into(), "logo.png".into()],
            in_conversation: true,
        },
    ]
}

fn files() -> Vec<RewindFileView> {
    let then: String = (1..=30).map(|line| format!("key_{line} = {line}\n")).collect();
    let now = then.replace("key_2 =", "renamed_2 =").replace("key_28 =", "renamed_28 =");
    vec![
        RewindFileView {
            path: "src/config.rs".into(),
            now: Some(now),
            then: Some(then),
            conflict: false,
            binary: false,
            now_hash: Some("h".into()),
            removed: false,
            why: None,
        },
        RewindFileView {
            path: "notes.txt".into(),
            now: Some("made since\n".into()),
            then: None,
            conflict: false,
            binary: false,
            now_hash: Some("h".into()),
            removed: true,
            why: None,
        },
        RewindFileView {
            path: "logo.png".into(),
            now: None,
            then: None,
            conflict: true,
            binary: true,
            now_hash: None,
            removed: false,
            why: Some("changed outside tandem since".into()),
        },
    ]
}

/// The list opened and the newest prompt's preview shown.
fn previewing(width: u16, height: u16) -> App {
    let mut app = app(width, height);
    let effects = app.submit("/rewind".into(), Instant::now());
    assert!(effects.iter().any(|effect| matches!(effect, Effect::Op(Op::ListRewindPoints))), "{effects:?}");
    core(&mut app, Event::RewindPoints(points()));
    insta::assert_snapshot!(format!("rewind_list_{width}x{height}"), screen(&app));
    let effects = app.update(key(KeyCode::Enter), Instant::now());
    assert!(effects.iter().any(|effect| matches!(effect, Effect::Op(Op::PreviewRewind { seq: 2 }))), "{effects:?}");
    core(&mut app, Event::RewindPreview { seq: 2, files: files() });
    app
}

#[test]
fn the_preview_is_reviewed_hunk_by_hunk_and_only_ticked_hunks_go_back() {
    for (width, height) in [(80, 24), (120, 40)] {
        let mut app = previewing(width, height);
        let text = screen(&app);
        assert!(text.contains("3 files · 3 of 3 hunks go back · 1 conflict"), "{text}");
        insta::assert_snapshot!(format!("rewind_preview_{width}x{height}"), text);
        // Tab to the second hunk of config.rs and untick it: it stays as it is now.
        app.update(key(KeyCode::Tab), Instant::now());
        app.update(key(KeyCode::Char(' ')), Instant::now());
        let text = screen(&app);
        assert!(text.contains("2 of 3 hunks go back"), "{text}");
        insta::assert_snapshot!(format!("rewind_preview_one_kept_{width}x{height}"), text);
        let effects = app.update(key(KeyCode::Char('3')), Instant::now());
        let sent = effects.iter().find_map(|effect| match effect {
            Effect::Op(Op::Rewind { to, conversation, files, hunks, dry_run }) => {
                Some((to.clone(), *conversation, *files, hunks.clone(), *dry_run))
            }
            _ => None,
        });
        // Every file of the preview is named (only those go back), each with the hash it was previewed with.
        let hunks = vec![
            RewindHunks {
                path: "src/config.rs".into(),
                restore: vec![true, false],
                now_hash: Some("h".into()),
                conflict: false,
            },
            RewindHunks { path: "notes.txt".into(), restore: vec![true], now_hash: Some("h".into()), conflict: false },
            RewindHunks { path: "logo.png".into(), restore: vec![], now_hash: None, conflict: true },
        ];
        assert_eq!(sent, Some((RewindTarget::Prompt(2), false, true, Some(hunks), false)));
        assert!(app.rewind.is_none());
    }
}

#[test]
fn tab_wraps_and_skips_conflicts_and_going_back_to_the_list_forgets_the_choice() {
    let mut app = previewing(80, 24);
    for _ in 0..3 {
        app.update(key(KeyCode::Tab), Instant::now());
    }
    // config.rs has 2 hunks, notes.txt 1, logo.png none (a conflict): three Tabs come back to the first.
    assert_eq!(app.rewind.as_ref().unwrap().cursor, (0, 0));
    app.update(key(KeyCode::BackTab), Instant::now());
    assert_eq!(app.rewind.as_ref().unwrap().cursor, (1, 0));
    app.update(key(KeyCode::Char(' ')), Instant::now());
    app.update(key(KeyCode::Esc), Instant::now());
    let effects = app.update(key(KeyCode::Enter), Instant::now());
    assert!(effects.iter().any(|effect| matches!(effect, Effect::Op(Op::PreviewRewind { .. }))));
    core(&mut app, Event::RewindPreview { seq: 2, files: files() });
    assert!(screen(&app).contains("3 of 3 hunks go back"), "a new preview starts with every hunk going back");
    // A preview for another prompt than the one open is ignored.
    app.update(key(KeyCode::Esc), Instant::now());
    app.update(key(KeyCode::Down), Instant::now());
    app.update(key(KeyCode::Enter), Instant::now());
    core(&mut app, Event::RewindPreview { seq: 2, files: files() });
    assert!(screen(&app).contains("Reading the checkpoints"), "{}", screen(&app));
    // Until its preview has come, the files can't go back (a quick Enter Enter must not restore unseen files);
    // the conversation alone can.
    for key_code in [KeyCode::Enter, KeyCode::Char('1'), KeyCode::Char('3')] {
        let effects = app.update(key(key_code), Instant::now());
        assert!(!effects.iter().any(|effect| matches!(effect, Effect::Op(Op::Rewind { .. }))), "{effects:?}");
    }
    assert!(screen(&app).contains("still reading the checkpoints"), "{}", screen(&app));
    let effects = app.update(key(KeyCode::Char('2')), Instant::now());
    assert!(
        effects.iter().any(|effect| matches!(
            effect,
            Effect::Op(Op::Rewind { to: RewindTarget::Prompt(1), conversation: true, files: false, hunks: None, .. })
        )),
        "{effects:?}"
    );
}

#[test]
fn a_failed_rewind_says_why() {
    let mut app = app(80, 24);
    core(&mut app, Event::Rewound(Err("No file checkpoint was kept for user message x.".into())));
    assert!(screen(&app).contains("No file checkpoint was kept"), "{}", screen(&app));
}

#[test]
fn a_prompt_no_longer_in_the_conversation_offers_its_files_only() {
    let mut app = app(80, 24);
    let mut listed = points();
    listed[1].in_conversation = false;
    core(&mut app, Event::RewindPoints(listed));
    let text = screen(&app);
    assert!(text.contains("2  (files only) rename the config keys"), "{text}");
    let effects = app.update(key(KeyCode::Enter), Instant::now());
    assert!(matches!(effects.as_slice(), [Effect::Op(Op::PreviewRewind { seq: 2 })]), "{effects:?}");
    assert_eq!(app.rewind.as_ref().unwrap().choosing, Some(2), "files only is chosen");
    core(&mut app, Event::RewindPreview { seq: 2, files: files() });
    let text = screen(&app);
    assert!(text.contains("1. Restore the conversation and the files (not in the conversation"), "{text}");
    app.update(key(KeyCode::Up), Instant::now());
    assert_eq!(app.rewind.as_ref().unwrap().choosing, Some(2), "↑ does not go to a choice that is closed");
    for refused in ['1', '2'] {
        let effects = app.update(key(KeyCode::Char(refused)), Instant::now());
        assert!(effects.is_empty(), "{refused}: {effects:?}");
        assert!(app.rewind.is_some(), "the preview stays open");
    }
    let effects = app.update(key(KeyCode::Enter), Instant::now());
    assert!(
        matches!(
            effects.as_slice(),
            [Effect::Op(Op::Rewind { to: RewindTarget::Prompt(2), conversation: false, files: true, .. })]
        ),
        "{effects:?}"
    );
}

#[test]
fn home_and_end_go_to_the_newest_and_the_oldest_prompt() {
    let mut app = app(80, 24);
    core(&mut app, Event::RewindPoints(points()));
    app.update(key(KeyCode::End), Instant::now());
    assert_eq!(app.rewind.as_ref().unwrap().selected, 0);
    app.update(key(KeyCode::Home), Instant::now());
    assert_eq!(app.rewind.as_ref().unwrap().selected, 1);
}

#[test]
fn a_conversation_rewind_cuts_the_transcript_where_the_prompt_was_drawn_and_keeps_what_came_before() {
    use tandem_protocol::conversation::Message;
    use tandem_protocol::{RewindOutcome, ToolCallStatus};

    let mut app = app(80, 24);
    app.submit("retry the flaky test".into(), Instant::now());
    core(&mut app, Event::PromptCheckpointed { seq: 1 });
    core(&mut app, super::tests::tool_started("t1", "Bash", serde_json::json!({"command": "cargo test"})));
    core(
        &mut app,
        Event::ToolCallFinished {
            call_id: "t1".into(),
            content: "test result: ok".into(),
            is_error: false,
            status: ToolCallStatus::Completed,
            duration_ms: Some(3),
            structured: None,
            view: None,
        },
    );
    app.notice(super::NoticeKind::Info, "retrying in 1s (overloaded)");
    core(&mut app, super::tests::finished(tandem_protocol::RunOutcome::Success, Vec::new()));
    app.submit("now break it".into(), Instant::now());
    core(&mut app, Event::PromptCheckpointed { seq: 2 });
    core(&mut app, super::tests::finished(tandem_protocol::RunOutcome::Success, Vec::new()));
    let before = app.transcript.cells().iter().position(|cell| cell.prompt == Some(2)).unwrap();

    let outcome = RewindOutcome {
        prompt: "now break it".into(),
        seq: 2,
        messages: Some(vec![Message::user_text("retry the flaky test")]),
        ..RewindOutcome::default()
    };
    core(&mut app, Event::Rewound(Ok(outcome)));
    let cells = app.transcript.cells();
    assert_eq!(cells.len(), before + 1, "cut at the prompt, then the rewind's notice");
    assert!(cells.iter().any(|cell| cell.prompt == Some(1)), "the earlier prompt stays");
    let text = screen(&app);
    assert!(text.contains("retrying in 1s") && text.contains("cargo test"), "drawn as it was: {text}");
    assert_eq!(app.editor.text(), "now break it");
}
