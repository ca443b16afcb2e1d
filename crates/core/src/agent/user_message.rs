//! A prompt becoming the user message the model gets: checkpointed for rewind (and numbered for the API
//! inspector), with what the model must hear first — that the last reply was interrupted, what a rewind did,
//! that plan mode is on — and the images and hook context that came with it.

use super::lock;
use super::turn::Session;
use crate::conversation::{ContentBlock, Message, Role};

/// Sent with every user message while plan mode is on.
const PLAN_MODE_NOTE: &str = "<system-reminder>Plan mode is on: you may read and search, and run read-only commands, but \
must not change files or run anything else. Investigate, then present a plan for the user to approve.</system-reminder>";

/// Told to the model at the start of the next turn after an interrupt (front ends showing a saved conversation
/// leave it out: the user never typed it).
pub const INTERRUPTED_NOTE: &str =
    "[The user interrupted the previous response; tool calls that did not finish were not run.]";

impl Session {
    /// Adds the user message for `text` (named `prompt_id` by its host, if any) to the conversation.
    pub(super) fn push_prompt(&mut self, text: String, prompt_id: Option<&str>, hook_blocks: Vec<ContentBlock>) {
        // The title is what the user typed, not the notes that go in front of it.
        if !self.titled {
            self.titled = true;
            let title = crate::session::title_from_prompt(&text);
            self.log(&crate::session::SessionLine::Title { title });
        }
        // A subagent's changes belong to the parent's prompt that started it.
        if let Some(checkpoints) = self.checkpoints.clone().filter(|_| self.role.is_none()) {
            let prompt = checkpoints.begin_prompt(&text, prompt_id);
            if let Some(recorder) = &self.recorder {
                recorder.set_turn(prompt);
            }
            // Where rewind cuts the conversation for this prompt, even after a restart.
            self.log(&crate::session::SessionLine::Prompt { seq: prompt });
            if self.config.session_log.is_some() {
                self.logged_prompts.insert(prompt);
            }
            self.live_prompts.push(prompt);
            self.emit(crate::protocol::Event::PromptCheckpointed { seq: prompt });
        }
        let text = if std::mem::take(&mut self.interrupted) { format!("{INTERRUPTED_NOTE}\n\n{text}") } else { text };
        let text = match std::mem::take(&mut self.pending_notes) {
            notes if notes.is_empty() => text,
            notes => format!("{}\n\n{text}", notes.join("\n")),
        };
        // The model hears about plan mode with the message it applies to (the system prompt stays cacheable).
        let text = if lock(&self.shared.policy).mode == crate::permissions::PermissionMode::Plan {
            format!("{PLAN_MODE_NOTE}\n\n{text}")
        } else {
            text
        };
        let mut content = vec![ContentBlock::text(text)];
        content.append(&mut self.attachments);
        content.extend(hook_blocks);
        self.push_user(content);
    }
}

/// A saved conversation that ends with the results of calls the user interrupted, and no answer after them: the
/// next prompt tells the model so, as it would have before the restart.
pub(super) fn ends_interrupted(messages: &[Message]) -> bool {
    messages.last().is_some_and(|last| {
        last.role == Role::User
            && last.content.iter().all(|block| matches!(block, ContentBlock::ToolResult { .. }))
            && last.content.iter().any(|block| {
                matches!(block, ContentBlock::ToolResult { content, is_error: true, .. }
                    if crate::tools::result_says_interrupted(content))
            })
    })
}
