//! A saved conversation told again as the events a live session sent, so that a front end draws a resumed
//! session with the code that draws a live one. What core added to user messages for the model (compaction
//! summaries, rewind notes, reminders, the interrupted note) is taken out here, beside where it is written.

use std::collections::HashMap;
use std::path::Path;

use tandem_protocol::conversation::{ContentBlock, Message, Role};
use tandem_protocol::{Event, ItemOutcome, ToolCallStatus};

use super::{INTERRUPTED_NOTE, rewind_notes_for_user};
use crate::context::compact::SUMMARY_PREAMBLE;
use crate::tools::{Preview, ToolContext, ToolRegistry, result_says_interrupted};

/// The events that draw `messages` as they were drawn live: prompts, answers, thinking, and each tool call
/// started and finished with its result as the session's `tools` describe it, with the diff it applied where
/// `applied` has it (the log's [`crate::session::SessionLine::Applied`] lines). Item ids are `replay-N`.
pub fn replay_events(
    messages: &[Message],
    applied: &HashMap<String, serde_json::Value>,
    tools: &ToolRegistry,
    cwd: &Path,
) -> Vec<Event> {
    let results: HashMap<&str, (&str, bool)> = messages
        .iter()
        .filter(|message| message.role == Role::User)
        .flat_map(|message| &message.content)
        .filter_map(|block| match block {
            ContentBlock::ToolResult { tool_use_id, content, is_error } => {
                Some((tool_use_id.as_str(), (content.as_str(), *is_error)))
            }
            _ => None,
        })
        .collect();
    let context = ToolContext::new(cwd.to_path_buf());
    let mut events = Vec::new();
    let mut items = 0usize;
    let mut item_id = || {
        items += 1;
        format!("replay-{items}")
    };
    for message in messages {
        for block in &message.content {
            match (message.role, block) {
                (Role::User, ContentBlock::Text { text }) => prompt_events(text, &mut events),
                (Role::Assistant, ContentBlock::Text { text }) => {
                    let item_id = item_id();
                    events.push(Event::MessageStarted { item_id: item_id.clone() });
                    events.push(Event::MessageCompleted {
                        item_id,
                        outcome: ItemOutcome::Completed,
                        text: Some(text.clone()),
                    });
                }
                (Role::Assistant, ContentBlock::Thinking { thinking, .. }) => {
                    let item_id = item_id();
                    events.push(Event::ThinkingStarted { item_id: item_id.clone(), redacted: false });
                    events.push(Event::ThinkingDelta { item_id: item_id.clone(), text: thinking.clone() });
                    events.push(Event::ThinkingCompleted { item_id, outcome: ItemOutcome::Completed });
                }
                (Role::Assistant, ContentBlock::RedactedThinking { .. }) => {
                    let item_id = item_id();
                    events.push(Event::ThinkingStarted { item_id: item_id.clone(), redacted: true });
                    events.push(Event::ThinkingCompleted { item_id, outcome: ItemOutcome::Completed });
                }
                (Role::Assistant, ContentBlock::ToolUse { id, name, input }) => {
                    events.push(Event::ToolCallStarted {
                        call_id: id.clone(),
                        name: name.clone(),
                        input: input.clone(),
                        display: tools.describe(name, input, &context),
                    });
                    let (content, is_error, status) = match results.get(id.as_str()).copied() {
                        None => ("", false, ToolCallStatus::Interrupted),
                        Some((content, true)) if result_says_interrupted(content) => {
                            (content, true, ToolCallStatus::Interrupted)
                        }
                        Some((content, true)) => (content, true, ToolCallStatus::Failed),
                        Some((content, false)) => (content, false, ToolCallStatus::Completed),
                    };
                    if let Some(preview) =
                        applied.get(id.as_str()).and_then(|change| applied_preview(change, input, cwd))
                    {
                        events.push(Event::ToolCallPreview { call_id: id.clone(), preview });
                    }
                    let view = (!is_error).then(|| tools.result_view(name, input, content)).flatten();
                    events.push(Event::ToolCallFinished {
                        call_id: id.clone(),
                        content: content.to_owned(),
                        is_error,
                        status,
                        duration_ms: None,
                        structured: None,
                        view,
                    });
                }
                _ => {}
            }
        }
    }
    events
}

/// The diff a saved change applied, as the preview a live call showed: a created file is every line of the
/// call's `content`, a change its hunks.
fn applied_preview(
    change: &serde_json::Value,
    input: &tandem_protocol::conversation::ToolInput,
    cwd: &Path,
) -> Option<Preview> {
    let path = change.get("filePath").and_then(serde_json::Value::as_str)?;
    let label = crate::tools::display_path(Path::new(path), cwd);
    let created = change.get("type").and_then(serde_json::Value::as_str) == Some("create");
    let diff = match input.get("content").and_then(serde_json::Value::as_str) {
        Some(content) if created => crate::diff::new_file_diff(&label, content),
        _ => crate::diff::render(&label, &crate::diff::hunks_from_patch(change.get("structuredPatch")?)?, false),
    };
    Some(Preview::Diff { path: path.into(), diff, new_file: created, texts: None })
}

/// A user message's text: a compaction summary is a notice; rewind notes are notices; the prompt is what the
/// user typed, without the reminders and the interrupted note tandem put before it.
fn prompt_events(text: &str, events: &mut Vec<Event>) {
    if text.starts_with(SUMMARY_PREAMBLE) {
        let summary = text.split_once("<summary>").and_then(|(_, rest)| rest.split_once("</summary>"));
        events.push(Event::CompactedBefore { summary: summary.map_or("", |(summary, _)| summary).trim().to_owned() });
        return;
    }
    for note in rewind_notes_for_user(text) {
        events.push(Event::Info { message: note });
    }
    let typed = strip_reminders(text);
    let typed = typed.strip_prefix(INTERRUPTED_NOTE).unwrap_or(&typed).trim();
    if !typed.is_empty() {
        events.push(Event::PromptReplayed { text: typed.to_owned() });
    }
}

/// `text` without the `<system-reminder>` notes tandem adds to user messages (plan mode, rewinds, hooks).
fn strip_reminders(text: &str) -> String {
    let mut out = text.to_owned();
    while let (Some(start), Some(end)) = (out.find("<system-reminder>"), out.find("</system-reminder>")) {
        if end < start {
            break;
        }
        out.replace_range(start..end + "</system-reminder>".len(), "");
    }
    out.trim().to_owned()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn replayed(messages: &[Message]) -> Vec<Event> {
        let mut tools = ToolRegistry::default();
        tools.register(std::sync::Arc::new(crate::tools::todo_write::TodoWriteTool));
        replay_events(messages, &HashMap::new(), &tools, Path::new("/work"))
    }

    /// What tandem wrote for the model is not shown as typed: a summary is a notice, the prompt loses its
    /// reminders and the interrupted note; a call's result comes with the tool's view for people.
    #[test]
    fn a_saved_conversation_is_told_as_the_live_events() {
        let summary = format!("{SUMMARY_PREAMBLE}\n<summary>the task</summary>");
        let prompt = format!("<system-reminder>Plan mode is on.</system-reminder>\n\n{INTERRUPTED_NOTE}\n\nfix it");
        let todos = json!({"todos": [{"content": "a", "activeForm": "doing a", "status": "completed"}]});
        let messages = vec![
            Message::user_text(summary),
            Message::user_text(prompt),
            Message {
                role: Role::Assistant,
                content: vec![
                    ContentBlock::text("On it."),
                    ContentBlock::ToolUse { id: "t".into(), name: "TodoWrite".into(), input: todos.into() },
                    ContentBlock::ToolUse { id: "u".into(), name: "Bash".into(), input: json!({}).into() },
                ],
            },
            Message {
                role: Role::User,
                content: vec![ContentBlock::ToolResult {
                    tool_use_id: "t".into(),
                    content: "The todo list is updated (1 steps). Keep it current as you work.".into(),
                    is_error: false,
                }],
            },
        ];
        let events = replayed(&messages);
        assert!(matches!(&events[0], Event::CompactedBefore { summary } if summary == "the task"), "{events:?}");
        assert!(matches!(&events[1], Event::PromptReplayed { text } if text == "fix it"), "{events:?}");
        assert!(matches!(&events[3], Event::MessageCompleted { text: Some(text), .. } if text.as_str() == "On it."));
        let finished: Vec<(&str, ToolCallStatus, bool)> = events
            .iter()
            .filter_map(|event| match event {
                Event::ToolCallFinished { call_id, status, view, duration_ms: None, .. } => {
                    Some((call_id.as_str(), *status, view.is_some()))
                }
                _ => None,
            })
            .collect();
        assert_eq!(finished, [("t", ToolCallStatus::Completed, true), ("u", ToolCallStatus::Interrupted, false)]);
    }

    /// An edit's saved change comes back as the diff the live card showed, before its result.
    #[test]
    fn a_saved_change_is_shown_as_its_diff() {
        let old = "a\nb\nc\n";
        let structured = json!({"filePath": "/work/src/x.rs", "type": "update", "originalFile": old,
                                "structuredPatch": crate::diff::structured_patch(old, "a\nB\nc\n")});
        let change = crate::diff::applied_change(&structured).unwrap();
        assert!(change.get("originalFile").is_none(), "the log does not hold the file again");
        let input = json!({"file_path": "src/x.rs", "old_string": "b", "new_string": "B"});
        let messages = vec![
            Message {
                role: Role::Assistant,
                content: vec![ContentBlock::ToolUse { id: "e".into(), name: "Edit".into(), input: input.into() }],
            },
            Message {
                role: Role::User,
                content: vec![ContentBlock::ToolResult {
                    tool_use_id: "e".into(),
                    content: "The file src/x.rs has been updated.".into(),
                    is_error: false,
                }],
            },
        ];
        let applied = HashMap::from([("e".to_owned(), change)]);
        let events = replay_events(&messages, &applied, &ToolRegistry::builtin(), Path::new("/work"));
        let Some(Event::ToolCallPreview { preview: Preview::Diff { path, diff, new_file: false, .. }, .. }) =
            events.get(1)
        else {
            panic!("{events:?}")
        };
        assert_eq!(path, Path::new("/work/src/x.rs"));
        assert!(diff.contains("@@ -1,3 +1,3 @@\n a\n-b\n+B\n c"), "{diff}");
        assert!(matches!(events.get(2), Some(Event::ToolCallFinished { .. })), "{events:?}");
    }
}
