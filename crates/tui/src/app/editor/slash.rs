//! The slash commands the prompt offers to complete.
//!
//! The editor only completes names; the app interprets the submitted text (`/model gpt-4o`). To add a
//! command, add a row here and handle it in the app.

/// A command shown in the completion popup.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlashCommand {
    /// Including the leading `/`.
    pub name: &'static str,
    pub description: &'static str,
}

/// Every command, in the order the popup lists them.
pub static SLASH_COMMANDS: &[SlashCommand] = &[
    SlashCommand { name: "/help", description: "Show keys and commands" },
    SlashCommand { name: "/clear", description: "New conversation in a new session (the old one stays saved)" },
    SlashCommand { name: "/compact", description: "Summarize the conversation to free context" },
    SlashCommand { name: "/model", description: "Pick the model; /model NAME switches (sonnet, opus, haiku…)" },
    SlashCommand { name: "/mode", description: "Show the permission mode; /mode NAME switches" },
    SlashCommand { name: "/cost", description: "Show token usage and cost" },
    SlashCommand { name: "/copy", description: "Copy the last answer to the clipboard" },
    SlashCommand { name: "/init", description: "Ask the model to write a CLAUDE.md for this project" },
    SlashCommand { name: "/memory", description: "Show saved memories; /memory N opens one in $EDITOR" },
    SlashCommand { name: "/permissions", description: "List permission rules and remove them" },
    SlashCommand { name: "/hooks", description: "List the hooks; /hooks trust lets the project's hooks run" },
    SlashCommand { name: "/resume", description: "Resume a saved session of this directory" },
    SlashCommand { name: "/quit", description: "Exit tandem" },
];

/// The commands whose name starts with `typed`, while `typed` is still a bare command word (a `/` and no
/// whitespace); anything else gets none, so the popup closes once arguments begin.
pub(super) fn matching(typed: &str) -> Vec<&'static SlashCommand> {
    if !typed.starts_with('/') || typed.contains(char::is_whitespace) {
        return Vec::new();
    }
    SLASH_COMMANDS.iter().filter(|command| command.name.starts_with(typed)).collect()
}
