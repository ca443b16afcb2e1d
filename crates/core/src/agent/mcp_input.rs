//! What MCP servers add to the user's input: `/mcp__server__prompt args` runs a server's prompt, and an
//! `@server:uri` mention attaches that resource's text to the message (Claude Code's syntax for both).

use std::time::Instant;

use super::turn::Session;
use crate::protocol::Event;

/// Most resources one message attaches; more mentions are left as typed.
const MAX_MENTIONS: usize = 10;

impl Session {
    /// Runs `/name args` when `name` is one of the servers' prompts; `false` when it is not.
    pub(super) async fn run_mcp_prompt(&mut self, name: &str, args: &str) -> bool {
        let Some(manager) = self.config.mcp.clone() else { return false };
        let Some((server, prompt, names)) = manager.find_prompt(name).await else { return false };
        let started = Instant::now();
        let arguments = prompt_arguments(&names, args);
        match manager.get_prompt(&server, &prompt, arguments).await {
            Ok(text) if !text.trim().is_empty() => self.run_turn(text).await,
            Ok(_) => self.refuse(started, format!("/{name}: the MCP prompt {prompt} of {server} is empty")),
            Err(why) => self.refuse(started, format!("/{name}: {why}")),
        }
        true
    }

    fn refuse(&mut self, started: Instant, why: String) {
        let turn_id = self.next_turn_id();
        self.emit(Event::TurnStarted { turn_id });
        self.emit(Event::Error { message: why.clone() });
        self.finish_without_model(turn_id, started, Err(why));
    }

    /// `text` with the resources it mentions (`@server:uri`, a server of this session) appended; a resource
    /// that can't be read is reported and its mention left as typed.
    pub(super) async fn attach_mcp_resources(&mut self, text: String) -> String {
        let Some(manager) = self.config.mcp.clone() else { return text };
        let servers: Vec<String> = manager.statuses().into_iter().map(|status| status.name).collect();
        let mut attached = String::new();
        for (server, uri) in mentions(&text, &servers).into_iter().take(MAX_MENTIONS) {
            match manager.read_resource(&server, &uri).await {
                Ok(content) => {
                    attached.push_str(&format!(
                        "\n\n<mcp-resource server=\"{server}\" uri=\"{uri}\">\n{content}\n</mcp-resource>"
                    ));
                }
                Err(why) => self.emit(Event::Error { message: format!("@{server}:{uri}: {why}") }),
            }
        }
        if attached.is_empty() { text } else { text + &attached }
    }
}

/// The prompt's arguments from the words after the command, in the prompt's order; the last takes the rest.
fn prompt_arguments(names: &[String], args: &str) -> serde_json::Map<String, serde_json::Value> {
    let mut map = serde_json::Map::new();
    let mut rest = args.trim();
    for (index, name) in names.iter().enumerate() {
        if rest.is_empty() {
            break;
        }
        let value = if index + 1 == names.len() {
            std::mem::take(&mut rest)
        } else {
            let (word, after) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
            rest = after.trim_start();
            word
        };
        map.insert(name.clone(), value.into());
    }
    map
}

/// `(server, uri)` for each `@server:uri` word whose server is one of `servers`, in order, without repeats.
fn mentions(text: &str, servers: &[String]) -> Vec<(String, String)> {
    let mut found: Vec<(String, String)> = Vec::new();
    for word in text.split_whitespace() {
        let Some(rest) = word.strip_prefix('@') else { continue };
        let Some((server, uri)) = rest.split_once(':') else { continue };
        // Trailing punctuation of the sentence is not part of the uri.
        let uri = uri.trim_end_matches(['.', ',', ';', ')', '!', '?']);
        if uri.is_empty() || !servers.iter().any(|name| name == server) {
            continue;
        }
        let entry = (server.to_owned(), uri.to_owned());
        if !found.contains(&entry) {
            found.push(entry);
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_in_order_with_the_rest_in_the_last() {
        let names = vec!["topic".to_owned(), "detail".to_owned()];
        let map = prompt_arguments(&names, "  errors  in the parser ");
        assert_eq!(map["topic"], "errors");
        assert_eq!(map["detail"], "in the parser");
        assert!(prompt_arguments(&names, "").is_empty());
    }

    #[test]
    fn mentions_of_known_servers_only() {
        let servers = vec!["docs".to_owned()];
        let found =
            mentions("see @docs:note://readme. and @other:x://y, mail@docs:z and @docs:note://readme", &servers);
        assert_eq!(found, vec![("docs".to_owned(), "note://readme".to_owned())]);
    }
}
