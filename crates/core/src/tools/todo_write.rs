//! `TodoWrite` (Claude Code's schema): the model's checklist for the task at hand. Each call replaces the whole
//! list; the session keeps the latest (front ends show it, a compaction carries it over) — see
//! [`todos_from_input`].

use std::borrow::Cow;

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;

use super::typed::TypedTool;
use super::{Risk, ToolContext, ToolOutput};
pub use tandem_protocol::tools::{TodoItem, TodoStatus};

/// The list a TodoWrite call's input sets (`None` when the input is not a valid list).
pub fn todos_from_input(input: &serde_json::Value) -> Option<Vec<TodoItem>> {
    serde_json::from_value::<Input>(input.clone()).ok().map(|input| input.todos)
}

const DESCRIPTION: &str = "Creates and updates a checklist for the current task, which the user sees. Use it for \
work of three or more steps, or when the user gives a list of things to do: write the steps as pending, mark one \
in_progress before you start it and completed as soon as it is done (only one in progress at a time), and add \
steps you discover. Each call replaces the whole list. Don't use it for a single, simple step.";

/// The list the conversation's last TodoWrite call set whose result was not an error (`None` when none did).
pub fn current_todos(messages: &[crate::conversation::Message]) -> Option<Vec<TodoItem>> {
    use crate::conversation::ContentBlock;
    let failed = |id: &str| {
        messages.iter().flat_map(|message| &message.content).any(
            |block| matches!(block, ContentBlock::ToolResult { tool_use_id, is_error: true, .. } if tool_use_id == id),
        )
    };
    messages.iter().rev().flat_map(|message| message.content.iter().rev()).find_map(|block| match block {
        ContentBlock::ToolUse { id, name, input } if name == TodoWriteTool::NAME && !failed(id) => {
            todos_from_input(input)
        }
        _ => None,
    })
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// The updated todo list
    pub todos: Vec<TodoItem>,
}

pub struct TodoWriteTool;

impl TypedTool for TodoWriteTool {
    type Input = Input;
    const NAME: &'static str = "TodoWrite";

    fn description(&self) -> Cow<'static, str> {
        DESCRIPTION.into()
    }

    /// It changes nothing but the list the user sees.
    fn is_read_only(&self) -> bool {
        true
    }

    fn is_lookup(&self) -> bool {
        false
    }

    fn kind(&self) -> super::ToolKind {
        super::ToolKind::Todo
    }

    fn risk(&self) -> Risk {
        Risk::Low
    }

    fn summary(&self, input: &serde_json::Value, _ctx: &ToolContext) -> String {
        match todos_from_input(input) {
            Some(todos) => {
                let done = todos.iter().filter(|todo| todo.status == TodoStatus::Completed).count();
                format!("{done}/{} done", todos.len())
            }
            None => String::new(),
        }
    }

    /// The list's progress: the model's instructions in the result are not for people.
    fn result_view(&self, input: &serde_json::Value, _content: &str) -> Option<super::ResultView> {
        let todos = input.get("todos").and_then(serde_json::Value::as_array)?;
        let done =
            todos.iter().filter(|todo| todo.get("status").and_then(serde_json::Value::as_str) == Some("completed"));
        let steps = if todos.len() == 1 { "step" } else { "steps" };
        let text = format!("Todo list updated: {} {steps}, {} done", todos.len(), done.count());
        Some(super::ResultView::Note { text })
    }

    fn call<'a>(&'a self, input: Input, _ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move {
            let active = input.todos.iter().filter(|todo| todo.status == TodoStatus::InProgress).count();
            if input.todos.iter().any(|todo| todo.content.trim().is_empty()) {
                return ToolOutput::error("A todo has empty content; every step needs a description.");
            }
            let note = if active > 1 { " Note: more than one step is in_progress; keep one at a time." } else { "" };
            ToolOutput::ok(format!(
                "The todo list is updated ({} steps).{note} Keep it current as you work: mark each step completed as soon as it is done.",
                input.todos.len()
            ))
        })
    }
}
