//! What connected servers offer besides tools: their resources (`@server:uri` mentions) and prompts
//! (`/mcp__server__prompt` commands), listed and read.

use serde_json::Value;

use super::manager::McpManager;
use super::tool;

impl McpManager {
    /// Every resource the servers list: (server, entry).
    pub fn resources(&self) -> Vec<(String, Value)> {
        self.listed(|offer| &offer.resources)
    }

    /// Every prompt the servers list: (server, entry).
    pub fn prompts(&self) -> Vec<(String, Value)> {
        self.listed(|offer| &offer.prompts)
    }

    /// The text of a resource of `server` (each content entry; binary ones described), for an `@server:uri`
    /// mention.
    pub async fn read_resource(&self, server: &str, uri: &str) -> Result<String, String> {
        let connection = self.live(server).await?;
        let contents = connection.read_resource(uri, self.options.startup_timeout).await?;
        let mut parts = Vec::new();
        for entry in contents {
            match entry.get("text").and_then(Value::as_str) {
                Some(text) => parts.push(text.to_owned()),
                None => {
                    let mime = entry.get("mimeType").and_then(Value::as_str).unwrap_or("binary");
                    parts.push(format!("[{mime} content not shown]"));
                }
            }
        }
        Ok(tool::cap_text(parts.join("\n"), self.options.max_output_tokens.saturating_mul(4)))
    }

    /// A prompt of `server` with its arguments, as the text of a user message.
    pub async fn get_prompt(
        &self,
        server: &str,
        name: &str,
        arguments: serde_json::Map<String, Value>,
    ) -> Result<String, String> {
        let connection = self.live(server).await?;
        let messages = connection.get_prompt(name, arguments, self.options.startup_timeout).await?;
        let texts: Vec<String> = messages
            .iter()
            .filter_map(|message| {
                let content = message.get("content")?;
                match content.get("type").and_then(Value::as_str) {
                    Some("text") => content.get("text").and_then(Value::as_str).map(str::to_owned),
                    Some("resource") => {
                        content.get("resource").and_then(|r| r.get("text")).and_then(Value::as_str).map(str::to_owned)
                    }
                    _ => None,
                }
            })
            .collect();
        Ok(tool::cap_text(texts.join("\n\n"), self.options.max_output_tokens.saturating_mul(4)))
    }
}
