//! The model's checklist (TodoWrite), above the input while any step is open: done steps checked and dimmed,
//! the step in progress in its "-ing" form, pending ones empty boxes.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};
use tandem_core::tools::todo_write::{TodoItem, TodoStatus};

use super::theme::Theme;

/// Most rows the list takes; the rest is counted on the last row.
const MAX_ROWS: u16 = 7;

/// Whether the list is shown: some step is not done yet.
pub fn visible(todos: &[TodoItem]) -> bool {
    todos.iter().any(|todo| todo.status != TodoStatus::Completed)
}

/// Rows the list wants (0 when hidden), at most `room`.
pub fn height(todos: &[TodoItem], room: u16) -> u16 {
    if !visible(todos) {
        return 0;
    }
    (todos.len() as u16).min(MAX_ROWS).min(room)
}

pub fn render(todos: &[TodoItem], area: Rect, buf: &mut Buffer, theme: &Theme) {
    let rows = usize::from(area.height);
    if rows == 0 {
        return;
    }
    // Keep the step in progress in view: start where it is, minus a little context.
    let active = todos.iter().position(|todo| todo.status == TodoStatus::InProgress).unwrap_or(0);
    let hidden_after = |first: usize| todos.len().saturating_sub(first + rows);
    let first = active.saturating_sub(1).min(todos.len().saturating_sub(rows));
    let mut lines: Vec<Line> = todos
        .iter()
        .skip(first)
        .take(rows)
        .map(|todo| {
            let (mark, text, style) = match todo.status {
                TodoStatus::Completed => ("☒ ", todo.content.as_str(), theme.dim.add_modifier(Modifier::CROSSED_OUT)),
                TodoStatus::InProgress => ("◼ ", todo.active_form.as_str(), theme.bold),
                TodoStatus::Pending => ("☐ ", todo.content.as_str(), theme.text),
            };
            Line::from(vec![
                Span::styled(format!("  {mark}"), style.remove_modifier(Modifier::CROSSED_OUT)),
                Span::styled(text.to_owned(), style),
            ])
        })
        .collect();
    let more = hidden_after(first) + first;
    if more > 0
        && let Some(last) = lines.last_mut()
    {
        last.spans.push(Span::styled(format!("  (+{more} more)"), theme.dim));
    }
    Paragraph::new(lines).render(area, buf);
}

#[cfg(test)]
mod tests {
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    use super::*;

    fn todo(content: &str, status: TodoStatus) -> TodoItem {
        TodoItem { content: content.into(), status, active_form: format!("{content}…ing") }
    }

    #[test]
    fn the_checklist_renders() {
        let todos = vec![
            todo("Read the parser", TodoStatus::Completed),
            todo("Fix the bug", TodoStatus::InProgress),
            todo("Run the tests", TodoStatus::Pending),
        ];
        let mut terminal = Terminal::new(TestBackend::new(40, 3)).unwrap();
        terminal
            .draw(|frame| {
                render(&todos, frame.area(), frame.buffer_mut(), &Theme::new(crate::ui::theme::ColorDepth::TrueColor))
            })
            .unwrap();
        insta::assert_snapshot!(terminal.backend());
        assert!(!visible(&[todo("done", TodoStatus::Completed)]));
        assert_eq!(height(&todos, 10), 3);
    }

    #[test]
    fn a_long_list_keeps_the_step_in_progress_in_view() {
        let mut todos: Vec<TodoItem> = (1..=12).map(|n| todo(&format!("step {n}"), TodoStatus::Completed)).collect();
        todos[9].status = TodoStatus::InProgress;
        todos[10].status = TodoStatus::Pending;
        todos[11].status = TodoStatus::Pending;
        let mut terminal = Terminal::new(TestBackend::new(40, 7)).unwrap();
        terminal
            .draw(|frame| {
                render(&todos, frame.area(), frame.buffer_mut(), &Theme::new(crate::ui::theme::ColorDepth::TrueColor))
            })
            .unwrap();
        let text = format!("{}", terminal.backend());
        assert!(text.contains("step 10…ing") && text.contains("more"), "{text}");
    }
}
