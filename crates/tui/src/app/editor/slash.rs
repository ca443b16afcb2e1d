//! The slash commands the prompt offers to complete.
//!
//! The editor only completes names; the app interprets the submitted text (`/model gpt-4o`). To add a
//! command, add a row here and handle it in the app.

use std::borrow::Cow;

/// A command shown in the completion popup: a built-in one, or a custom one from `.claude/commands/`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SlashCommand {
    /// Including the leading `/`.
    pub name: Cow<'static, str>,
    pub description: Cow<'static, str>,
}

impl SlashCommand {
    const fn builtin(name: &'static str, description: &'static str) -> SlashCommand {
        SlashCommand { name: Cow::Borrowed(name), description: Cow::Borrowed(description) }
    }
}

/// Every command, in the order the popup lists them.
pub static SLASH_COMMANDS: &[SlashCommand] = &[
    SlashCommand::builtin("/help", "Show keys and commands"),
    SlashCommand::builtin("/clear", "New conversation in a new session (the old one stays saved)"),
    SlashCommand::builtin("/compact", "Summarize the conversation to free context"),
    SlashCommand::builtin("/model", "Pick the model; /model NAME switches (sonnet, opus, haiku…)"),
    SlashCommand::builtin("/mode", "Show the permission mode; /mode NAME switches"),
    SlashCommand::builtin("/effort", "How hard the model thinks: /effort low…max, or auto"),
    SlashCommand::builtin("/cost", "Show token usage and cost"),
    SlashCommand::builtin("/copy", "Copy the last answer to the clipboard"),
    SlashCommand::builtin("/init", "Ask the model to write a CLAUDE.md for this project"),
    SlashCommand::builtin("/memory", "Show saved memories; /memory N opens one in $EDITOR"),
    SlashCommand::builtin("/permissions", "List and remove rules; /permissions trust applies held ones"),
    SlashCommand::builtin("/bashes", "List the background commands; /bashes kill ID stops one"),
    SlashCommand::builtin("/sandbox", "Show what the sandbox lets each kind of command do"),
    SlashCommand::builtin("/hooks", "List the hooks; /hooks trust lets the project's hooks run"),
    SlashCommand::builtin("/mcp", "MCP servers: status and tools; reconnect one"),
    SlashCommand::builtin("/rewind", "Go back before a prompt (esc esc): conversation, files"),
    SlashCommand::builtin("/inspect", "The model requests and responses; replay, curl"),
    SlashCommand::builtin("/resume", "Resume a saved session of this directory"),
    SlashCommand::builtin("/quit", "Exit tandem"),
];

/// The commands (built-in, then `custom`) whose name starts with `typed`, while `typed` is still a bare
/// command word (a `/` and no whitespace); anything else gets none, so the popup closes once arguments begin.
pub(super) fn matching<'a>(typed: &str, custom: &'a [SlashCommand]) -> Vec<&'a SlashCommand> {
    if !typed.starts_with('/') || typed.contains(char::is_whitespace) {
        return Vec::new();
    }
    SLASH_COMMANDS.iter().chain(custom).filter(|command| command.name.starts_with(typed)).collect()
}
