//! The shape the Messages API demands of a history, checked and repaired.
//!
//! Compaction cuts, drops and merges messages, and a history the API rejects would strand the session, so
//! everything compaction builds goes through [`repair_history`] and the tests hold it to
//! [`validate_history`].

use std::collections::HashSet;

use crate::conversation::{ContentBlock, Message, Role};

/// Checks that a history can be sent: it starts with a user message, roles alternate, no message is empty,
/// tool calls sit in assistant messages and tool results in user messages (results first, as Anthropic
/// requires), every `tool_use` is answered by a `tool_result` in the very next message, and every
/// `tool_result` answers a `tool_use` of the message just before it, exactly once.
pub fn validate_history(messages: &[Message]) -> Result<(), String> {
    let first = messages.first().ok_or("the history is empty")?;
    if first.role != Role::User {
        return Err("the first message is not the user's".into());
    }
    for (index, message) in messages.iter().enumerate() {
        if message.content.is_empty() {
            return Err(format!("message {index} is empty"));
        }
        if index > 0 && messages[index - 1].role == message.role {
            return Err(format!("messages {} and {index} have the same role", index - 1));
        }
        let uses = use_ids(message);
        if uses.len() != tool_uses(message).count() {
            return Err(format!("message {index} repeats a tool_use id"));
        }
        match message.role {
            Role::Assistant => {
                if message.content.iter().any(|block| matches!(block, ContentBlock::ToolResult { .. })) {
                    return Err(format!("assistant message {index} holds a tool_result"));
                }
                let answered = messages.get(index + 1).map(result_ids).unwrap_or_default();
                if let Some(id) = uses.iter().find(|id| !answered.contains(*id)) {
                    return Err(format!("tool_use {id} in message {index} is not answered in the next message"));
                }
            }
            Role::User => {
                if message
                    .content
                    .iter()
                    .any(|block| !matches!(block, ContentBlock::Text { .. } | ContentBlock::ToolResult { .. }))
                {
                    return Err(format!("user message {index} holds a block only the assistant may send"));
                }
                let results_first = message
                    .content
                    .iter()
                    .skip_while(|block| matches!(block, ContentBlock::ToolResult { .. }))
                    .all(|block| !matches!(block, ContentBlock::ToolResult { .. }));
                if !results_first {
                    return Err(format!("user message {index} has text before a tool_result"));
                }
                let asked = index.checked_sub(1).map(|before| use_ids(&messages[before])).unwrap_or_default();
                let mut seen = HashSet::new();
                for id in tool_results(message) {
                    if !asked.contains(id) {
                        return Err(format!("tool_result {id} in message {index} answers no tool_use just before it"));
                    }
                    if !seen.insert(id) {
                        return Err(format!("tool_use {id} is answered twice in message {index}"));
                    }
                }
            }
        }
    }
    Ok(())
}

/// Makes a history valid for [`validate_history`] with the least change: misplaced blocks, unanswered
/// `tool_use`s and orphan `tool_result`s are removed, empty messages dropped, leading assistant messages
/// dropped, and consecutive messages of one role merged (results moved first). A valid history comes back
/// unchanged. The result is empty only if nothing a user said survived.
pub fn repair_history(messages: Vec<Message>) -> Vec<Message> {
    let mut messages: Vec<Message> = messages
        .into_iter()
        .map(|mut message| {
            message.content.retain(|block| belongs_to(message.role, block));
            message
        })
        .collect();
    // Each pass only removes blocks or messages, so this settles within a few passes; the bound is a guard.
    for _ in 0..=messages.len() + 1 {
        messages = merge_roles(messages);
        if !pair_tools(&mut messages) {
            break;
        }
    }
    messages
}

/// Whether the history may be cut just before `index` (everything from `index` on kept, everything before
/// replaced): the message there must not need anything from before it. A user message qualifies when it
/// holds no tool results; an assistant message always does (its calls are answered after it).
pub(super) fn is_cut_point(messages: &[Message], index: usize) -> bool {
    messages.get(index).is_some_and(|message| match message.role {
        Role::Assistant => true,
        Role::User => tool_results(message).next().is_none(),
    })
}

fn belongs_to(role: Role, block: &ContentBlock) -> bool {
    match block {
        ContentBlock::Text { .. } => true,
        ContentBlock::ToolResult { .. } | ContentBlock::Image { .. } => role == Role::User,
        ContentBlock::ToolUse { .. } | ContentBlock::Thinking { .. } | ContentBlock::RedactedThinking { .. } => {
            role == Role::Assistant
        }
    }
}

/// Drops empty messages and leading assistant messages, then concatenates runs of one role.
fn merge_roles(messages: Vec<Message>) -> Vec<Message> {
    let mut out: Vec<Message> = Vec::with_capacity(messages.len());
    for message in messages {
        if message.content.is_empty() || (out.is_empty() && message.role == Role::Assistant) {
            continue;
        }
        match out.last_mut() {
            Some(last) if last.role == message.role => last.content.extend(message.content),
            _ => out.push(message),
        }
    }
    for message in out.iter_mut().filter(|message| message.role == Role::User) {
        // Stable: results keep their order, and so does the text.
        message.content.sort_by_key(|block| !matches!(block, ContentBlock::ToolResult { .. }));
    }
    out
}

/// Removes tool_uses not answered by the next message and tool_results (or repeats) not asked for by the
/// previous one. Returns whether anything was removed.
fn pair_tools(messages: &mut [Message]) -> bool {
    let mut changed = false;
    for index in 0..messages.len() {
        if messages[index].role != Role::Assistant {
            continue;
        }
        let answered: HashSet<String> =
            messages.get(index + 1).map(|next| tool_results(next).map(str::to_owned).collect()).unwrap_or_default();
        let mut seen = HashSet::new();
        let before = messages[index].content.len();
        messages[index].content.retain(|block| match block {
            ContentBlock::ToolUse { id, .. } => answered.contains(id) && seen.insert(id.clone()),
            _ => true,
        });
        changed |= messages[index].content.len() != before;
    }
    for index in 0..messages.len() {
        if messages[index].role != Role::User {
            continue;
        }
        let asked: HashSet<String> = index
            .checked_sub(1)
            .map(|before| use_ids(&messages[before]).into_iter().map(str::to_owned).collect())
            .unwrap_or_default();
        let mut seen = HashSet::new();
        let before = messages[index].content.len();
        messages[index].content.retain(|block| match block {
            ContentBlock::ToolResult { tool_use_id, .. } => {
                asked.contains(tool_use_id) && seen.insert(tool_use_id.clone())
            }
            _ => true,
        });
        changed |= messages[index].content.len() != before;
    }
    changed
}

fn tool_uses(message: &Message) -> impl Iterator<Item = &str> {
    message.content.iter().filter_map(|block| match block {
        ContentBlock::ToolUse { id, .. } => Some(id.as_str()),
        _ => None,
    })
}

fn tool_results(message: &Message) -> impl Iterator<Item = &str> {
    message.content.iter().filter_map(|block| match block {
        ContentBlock::ToolResult { tool_use_id, .. } => Some(tool_use_id.as_str()),
        _ => None,
    })
}

fn use_ids(message: &Message) -> HashSet<&str> {
    tool_uses(message).collect()
}

fn result_ids(message: &Message) -> HashSet<&str> {
    tool_results(message).collect()
}
