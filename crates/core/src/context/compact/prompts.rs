//! The user's own words survive a compaction verbatim: the most recent prompts that are not in the kept tail go
//! into the summary message (up to [`PROMPTS_BUDGET_CHARS`]), so the task is never only the model's paraphrase
//! of it. A later compaction carries the earlier ones over from the previous summary message.

use crate::conversation::{ContentBlock, Message, Role};

/// About 20,000 tokens of the user's messages (as Codex keeps them).
pub const PROMPTS_BUDGET_CHARS: usize = 80_000;

const OPEN: &str = "<user-messages>";
const CLOSE: &str = "</user-messages>";
const ITEM_OPEN: &str = "<message>";
const ITEM_CLOSE: &str = "</message>";

/// Heads the block in the summary message.
pub const PROMPTS_PREAMBLE: &str = "The user's own messages from the summarized part, most recent last, word for word:";

/// The user's prompts in `messages`, oldest first: the text of user messages without tool results, and those a
/// previous compaction kept.
pub fn user_prompts(messages: &[Message]) -> Vec<String> {
    let mut prompts = Vec::new();
    for message in messages.iter().filter(|message| message.role == Role::User) {
        if message.content.iter().any(|block| matches!(block, ContentBlock::ToolResult { .. })) {
            continue;
        }
        let mut texts = message.content.iter().filter_map(|block| match block {
            ContentBlock::Text { text } => Some(text.as_str()),
            _ => None,
        });
        let Some(first) = texts.next() else { continue };
        if first.starts_with(super::SUMMARY_PREAMBLE) {
            // A previous summary message: its kept prompts, not its summary.
            for text in std::iter::once(first).chain(texts) {
                prompts.extend(kept_prompts(text));
            }
            continue;
        }
        prompts.push(first.to_owned());
    }
    prompts
}

/// The block for the summary message: the most recent of `prompts` that fit the budget, in order.
pub fn prompts_block(prompts: &[String]) -> Option<String> {
    let mut kept: Vec<&str> = Vec::new();
    let mut used = 0;
    for prompt in prompts.iter().rev() {
        if used + prompt.len() > PROMPTS_BUDGET_CHARS {
            break;
        }
        used += prompt.len();
        kept.push(prompt);
    }
    if kept.is_empty() {
        return None;
    }
    kept.reverse();
    let items: Vec<String> = kept.iter().map(|prompt| format!("{ITEM_OPEN}\n{prompt}\n{ITEM_CLOSE}")).collect();
    Some(format!("{PROMPTS_PREAMBLE}\n{OPEN}\n{}\n{CLOSE}", items.join("\n")))
}

/// The prompts a block made by [`prompts_block`] holds.
fn kept_prompts(text: &str) -> Vec<String> {
    let Some(start) = text.find(OPEN) else { return Vec::new() };
    let body = &text[start + OPEN.len()..];
    let body = body.rfind(CLOSE).map_or(body, |end| &body[..end]);
    body.split(ITEM_OPEN)
        .filter_map(|item| item.rsplit_once(ITEM_CLOSE).map(|(prompt, _)| prompt.trim_matches('\n').to_owned()))
        .filter(|prompt| !prompt.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(text: &str) -> Message {
        Message { role: Role::User, content: vec![ContentBlock::text(text)] }
    }

    #[test]
    fn prompts_round_trip_through_a_summary_message() {
        let block = prompts_block(&["fix the bug".into(), "and add a test".into()]).unwrap();
        let summary = Message {
            role: Role::User,
            content: vec![
                ContentBlock::text(format!("{}\n\n<summary>x</summary>", super::super::SUMMARY_PREAMBLE)),
                ContentBlock::text(block),
            ],
        };
        let results = Message {
            role: Role::User,
            content: vec![ContentBlock::ToolResult { tool_use_id: "t".into(), content: "out".into(), is_error: false }],
        };
        let prompts = user_prompts(&[summary, user("now the docs"), results]);
        assert_eq!(prompts, ["fix the bug", "and add a test", "now the docs"]);
    }

    #[test]
    fn the_most_recent_prompts_fit_the_budget() {
        let big = "x".repeat(PROMPTS_BUDGET_CHARS - 10);
        let block = prompts_block(&["the original task".into(), big.clone(), "latest".into()]).unwrap();
        assert!(block.contains("latest") && block.contains(&big) && !block.contains("the original task"));
    }
}
