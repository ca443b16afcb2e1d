//! The slash commands the prompt offers to complete.
//!
//! The editor only completes names; the app interprets the submitted text (`/model gpt-4o`). To add a
//! command, add a row to core's table (`tandem_core::commands::BUILTINS`) and handle it in the app (and in core
//! when it works headless too).

use std::borrow::Cow;

/// A command shown in the completion popup: a built-in one, or a custom one from `.claude/commands/`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SlashCommand {
    /// Including the leading `/`.
    pub name: Cow<'static, str>,
    pub description: Cow<'static, str>,
}

/// Every built-in command, in the order the popup lists them (core's table: [`tandem_core::commands::BUILTINS`]).
pub static SLASH_COMMANDS: std::sync::LazyLock<Vec<SlashCommand>> = std::sync::LazyLock::new(|| {
    tandem_core::commands::BUILTINS
        .iter()
        .map(|builtin| SlashCommand {
            name: Cow::Owned(format!("/{}", builtin.name)),
            description: Cow::Borrowed(builtin.description),
        })
        .collect()
});

/// The commands (built-in, then `custom`) whose name starts with `typed`, while `typed` is still a bare
/// command word (a `/` and no whitespace); anything else gets none, so the popup closes once arguments begin.
pub(super) fn matching<'a>(typed: &str, custom: &'a [SlashCommand]) -> Vec<&'a SlashCommand> {
    if !typed.starts_with('/') || typed.contains(char::is_whitespace) {
        return Vec::new();
    }
    SLASH_COMMANDS.iter().chain(custom).filter(|command| command.name.starts_with(typed)).collect()
}
