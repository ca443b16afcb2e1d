//! Rebuilding the transcript from a saved conversation (`--continue`, `--resume`).

use std::time::Instant;

use tandem_protocol::conversation::Message;

use super::App;
use super::cells::NoticeKind;

impl App {
    /// Shows a resumed conversation as if it had just happened: core tells it again as the events of a live
    /// session (prompts, answers, thinking, tool cards with their results), drawn by the code that draws those.
    pub fn restore_conversation(&mut self, messages: &[Message]) {
        let now = Instant::now();
        for event in tandem_core::agent::replay_events(messages, &self.applied, &self.tools, &self.cwd) {
            self.on_core_event(event, None, now);
        }
        self.stream_cells.clear();
        self.transcript.scroll_to_bottom();
    }

    /// Marks where the resumed part ends.
    pub fn resumed_notice(&mut self, title: &str) {
        self.notice(NoticeKind::Info, format!("Resumed session: {title}"));
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use serde_json::json;

    use tandem_protocol::ToolCallStatus;
    use tandem_protocol::conversation::{ContentBlock, Role};

    use super::*;
    use crate::app::cells::{CellKind, ToolState};
    use crate::app::editor::Editor;
    use crate::ui::status::StatusInfo;
    use crate::ui::theme::{ColorDepth, Theme};

    #[test]
    fn a_saved_conversation_becomes_cells() {
        let mut app =
            App::new(Theme::new(ColorDepth::None), Editor::default(), StatusInfo::default(), PathBuf::from("/"));
        let messages = vec![
            Message::user_text("<system-reminder>Plan mode is on.</system-reminder>\n\nfix it"),
            Message {
                role: Role::Assistant,
                content: vec![
                    ContentBlock::Thinking { thinking: "hmm".into(), signature: "s".into() },
                    ContentBlock::text("Reading."),
                    ContentBlock::ToolUse {
                        id: "t".into(),
                        name: "Read".into(),
                        input: json!({"file_path": "a.rs"}).into(),
                    },
                ],
            },
            Message {
                role: Role::User,
                content: vec![ContentBlock::ToolResult {
                    tool_use_id: "t".into(),
                    content: "1\tx".into(),
                    is_error: false,
                }],
            },
            Message { role: Role::Assistant, content: vec![ContentBlock::text("Done.")] },
        ];
        app.restore_conversation(&messages);
        let kinds: Vec<&CellKind> = app.transcript.cells().iter().map(|cell| &cell.kind).collect();
        assert!(matches!(kinds[0], CellKind::User { text } if text == "fix it"));
        assert!(matches!(kinds[1], CellKind::Thinking { .. }));
        assert!(
            matches!(kinds[3], CellKind::Tool(card) if card.output == "1\tx" && card.state == ToolState::Finished(ToolCallStatus::Completed))
        );
        assert!(matches!(kinds[4], CellKind::Assistant { text, .. } if text.as_str() == "Done."));
    }

    /// A resumed card shows what a live one shows: the tool's view of its result, not the instructions the model
    /// was given with it.
    #[test]
    fn a_resumed_card_shows_the_result_for_people() {
        let mut app =
            App::new(Theme::new(ColorDepth::None), Editor::default(), StatusInfo::default(), PathBuf::from("/"));
        app.tools.register(std::sync::Arc::new(tandem_core::tools::todo_write::TodoWriteTool));
        let todos = json!({"todos": [
            {"content": "a", "activeForm": "doing a", "status": "completed"},
            {"content": "b", "activeForm": "doing b", "status": "in_progress"},
        ]});
        let told = "The todo list is updated (2 steps). Keep it current as you work: mark each step completed as soon as it is done.";
        let messages = vec![
            Message {
                role: Role::Assistant,
                content: vec![ContentBlock::ToolUse { id: "t".into(), name: "TodoWrite".into(), input: todos.into() }],
            },
            Message {
                role: Role::User,
                content: vec![ContentBlock::ToolResult {
                    tool_use_id: "t".into(),
                    content: told.into(),
                    is_error: false,
                }],
            },
        ];
        app.restore_conversation(&messages);
        let CellKind::Tool(card) = &app.transcript.cells()[0].kind else { panic!("not a card") };
        let theme = Theme::new(ColorDepth::None);
        let lines = crate::ui::tool_card::render_tool_card(card, false, 100, &theme, std::time::Instant::now());
        let text: String = lines.iter().map(crate::ui::wrap::line_text).collect::<Vec<_>>().join("\n");
        assert!(text.contains("Todo list updated: 2 steps, 1 done"), "{text}");
        assert!(!text.contains("Keep it current"), "{text}");
    }

    #[test]
    fn what_the_model_was_told_of_a_rewind_is_a_notice_not_the_users_prompt() {
        let mut app =
            App::new(Theme::new(ColorDepth::None), Editor::default(), StatusInfo::default(), PathBuf::from("/"));
        let note = format!(
            "{} to just before their prompt \"write notes\". These files were put back as they were then: notes.md.</system-reminder>",
            tandem_core::agent::REWIND_NOTE_START
        );
        let messages = vec![Message::user_text(format!(
            "{note}\n{note}\n\n{}\n\nwhat changed?",
            tandem_core::agent::INTERRUPTED_NOTE
        ))];
        app.restore_conversation(&messages);
        let kinds: Vec<&CellKind> = app.transcript.cells().iter().map(|cell| &cell.kind).collect();
        assert_eq!(kinds.len(), 3, "{kinds:?}");
        assert!(
            matches!(kinds[0], CellKind::Notice { text, .. } if text.starts_with("↺ Rewound to just before your prompt \"write notes\"")),
            "{kinds:?}"
        );
        assert!(matches!(kinds[2], CellKind::User { text } if text == "what changed?"), "{kinds:?}");
    }

    #[test]
    fn a_call_the_user_interrupted_is_drawn_again_as_interrupted_not_failed() {
        let mut app =
            App::new(Theme::new(ColorDepth::None), Editor::default(), StatusInfo::default(), PathBuf::from("/"));
        let call = |id: &str| ContentBlock::ToolUse {
            id: id.into(),
            name: "Bash".into(),
            input: json!({"command": "sleep 30"}).into(),
        };
        let result = |id: &str, content: &str| ContentBlock::ToolResult {
            tool_use_id: id.into(),
            content: content.into(),
            is_error: true,
        };
        let messages = vec![
            Message::user_text("run it"),
            Message { role: Role::Assistant, content: vec![call("a"), call("b"), call("c")] },
            Message {
                role: Role::User,
                content: vec![
                    result("a", &format!("Exit code: 130\n{}", tandem_core::tools::COMMAND_INTERRUPTED)),
                    result("b", tandem_core::tools::NOT_RUN_INTERRUPTED),
                    result("c", "Exit code: 1"),
                ],
            },
        ];
        app.restore_conversation(&messages);
        let states: Vec<ToolState> = app
            .transcript
            .cells()
            .iter()
            .filter_map(|cell| match &cell.kind {
                CellKind::Tool(card) => Some(card.state.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(
            states,
            [
                ToolState::Finished(ToolCallStatus::Interrupted),
                ToolState::Finished(ToolCallStatus::Interrupted),
                ToolState::Finished(ToolCallStatus::Failed)
            ]
        );
    }
}
