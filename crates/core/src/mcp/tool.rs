//! An MCP server's tool as a [`Tool`] the model calls: `mcp__<server>__<tool>`, the server's own description and
//! input schema, and its result turned into a tool result.

use std::borrow::Cow;
use std::sync::{Arc, Weak};

use futures::future::BoxFuture;
use serde_json::Value;

use super::client::RemoteTool;
use super::manager::McpManager;
use crate::tools::{Risk, Tool, ToolContext, ToolOutput};

/// The prefix of every MCP tool's name.
pub const PREFIX: &str = "mcp__";

/// Image types the providers take in a message.
const SENDABLE_IMAGES: &[&str] = &["image/png", "image/jpeg", "image/gif", "image/webp"];

/// Images one result attaches at most, and the largest (base64 characters: 5 MB of image, the API's limit).
const MAX_IMAGES: usize = 8;
const MAX_IMAGE_BASE64: usize = 5 * 1024 * 1024 * 4 / 3;

/// Longest tool name the providers accept.
const MAX_NAME: usize = 64;

/// `mcp__<server>__<tool>` with every character the providers refuse in a tool name replaced by `_` (as Claude
/// Code does), cut to the providers' limit.
pub fn full_name(server: &str, tool: &str) -> String {
    let mut name = format!("{}__{}", server_prefix(server), clean(tool));
    name.truncate(MAX_NAME);
    name
}

/// `mcp__<server>`: the start of each of its tools' names, and the permission rule naming the whole server.
pub fn server_prefix(server: &str) -> String {
    format!("{PREFIX}{}", clean(server))
}

pub(crate) fn clean(text: &str) -> String {
    text.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' }).collect()
}

/// One tool of one server.
pub struct McpTool {
    pub(super) name: String,
    pub(super) server: String,
    pub(super) remote: RemoteTool,
    /// Weak: the manager owns its tools, and a tool outliving the session must not keep servers running.
    pub(super) manager: Weak<McpManager>,
    /// The estimated tokens its definition takes in a request (for tool search's budget), counted once.
    pub(super) schema_tokens: u64,
}

impl McpTool {
    pub fn new(server: &str, remote: RemoteTool, manager: Weak<McpManager>) -> Arc<McpTool> {
        let name = full_name(server, &remote.name);
        let description = if remote.description.trim().is_empty() { 60 } else { remote.description.len() };
        let schema_tokens = ((name.len() + description + remote.input_schema.to_string().len()) / 4) as u64;
        Arc::new(McpTool { name, server: server.to_owned(), remote, manager, schema_tokens })
    }

    /// The server's name for the tool.
    pub fn remote_name(&self) -> &str {
        &self.remote.name
    }

    /// The tool's description as the model reads it (the server's, or a stand-in when it gave none).
    pub fn description_text(&self) -> String {
        if self.remote.description.trim().is_empty() {
            format!("The {} tool of the MCP server {}.", self.remote.name, self.server)
        } else {
            self.remote.description.clone()
        }
    }
}

impl Tool for McpTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> Cow<'static, str> {
        Cow::Owned(self.description_text())
    }

    fn input_schema(&self) -> Value {
        self.remote.input_schema.clone()
    }

    fn is_read_only(&self) -> bool {
        self.remote.read_only
    }

    fn is_lookup(&self) -> bool {
        false
    }

    fn kind(&self) -> crate::tools::ToolKind {
        crate::tools::ToolKind::Mcp
    }

    fn risk(&self) -> Risk {
        if self.remote.read_only { Risk::Low } else { Risk::High }
    }

    fn mcp_server(&self) -> Option<&str> {
        Some(&self.server)
    }

    fn summary(&self, input: &Value, _ctx: &ToolContext) -> String {
        let args = input.to_string();
        let args = if args == "{}" { String::new() } else { args };
        let mut text =
            format!("{} · {} {args}", self.server, self.remote.title.as_deref().unwrap_or(&self.remote.name));
        if text.chars().count() > 200 {
            text = text.chars().take(199).collect::<String>() + "…";
        }
        text.trim_end().to_owned()
    }

    fn run<'a>(&'a self, input: crate::conversation::ToolInput, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move {
            let Some(manager) = self.manager.upgrade() else {
                return ToolOutput::error(format!("The MCP server {} is no longer part of this session.", self.server));
            };
            // The server runs unsandboxed: its call waits while a command that may have changed the protected
            // entries runs (git in a server would obey a planted `core.fsmonitor`), and no such command starts
            // while the call runs.
            let mark = format!("mcp-{:016x}", fastrand::u64(..));
            let Some(apart) = crate::tools::bash::running::register_apart(&mark, Some(&ctx.cancel)).await else {
                return ToolOutput::error(crate::tools::CALL_INTERRUPTED.to_owned());
            };
            let output =
                manager.call(&self.server, &self.remote.name, std::sync::Arc::unwrap_or_clone(input), ctx).await;
            apart.finish();
            output
        })
    }
}

/// Turns a `tools/call` result into what the model sees: text blocks as they are, structured content as JSON when
/// there is no text, embedded text resources with their URI, images attached (in the types the models take);
/// audio and binary resources are described. Cut at `max_chars` with the omitted amount stated; when `spill` is given the
/// whole text is saved there first and the model told where.
pub fn result_output(result: &Value, max_chars: usize, spill: Option<&std::path::Path>) -> ToolOutput {
    let mut parts: Vec<String> = Vec::new();
    let mut images = Vec::new();
    let blocks = result.get("content").and_then(Value::as_array).cloned().unwrap_or_default();
    for block in &blocks {
        let kind = block.get("type").and_then(Value::as_str).unwrap_or_default();
        let text = |field: &str| block.get(field).and_then(Value::as_str).unwrap_or_default();
        match kind {
            "text" => parts.push(text("text").to_owned()),
            "image"
                if SENDABLE_IMAGES.contains(&text("mimeType"))
                    && !text("data").is_empty()
                    && images.len() < MAX_IMAGES
                    && text("data").len() <= MAX_IMAGE_BASE64 =>
            {
                images
                    .push(serde_json::json!({"type": "base64", "media_type": text("mimeType"), "data": text("data")}));
                parts.push(format!("[image {}: {}, attached]", images.len(), text("mimeType")));
            }
            "image" | "audio" => {
                let size = text("data").len() * 3 / 4;
                let why = if !SENDABLE_IMAGES.contains(&text("mimeType")) || kind == "audio" {
                    "the model takes PNG, JPEG, GIF and WebP images only".to_owned()
                } else if images.len() >= MAX_IMAGES {
                    format!("a result attaches at most {MAX_IMAGES} images")
                } else {
                    "over the 5 MB an image may have".to_owned()
                };
                parts.push(format!(
                    "[{kind}: {}, {} — not shown: {why}]",
                    text("mimeType"),
                    crate::fs_util::human_size(size as u64)
                ));
            }
            "resource" => {
                let resource = block.get("resource").cloned().unwrap_or_default();
                let uri = resource.get("uri").and_then(Value::as_str).unwrap_or_default();
                match resource.get("text").and_then(Value::as_str) {
                    Some(body) => parts.push(format!("[resource {uri}]\n{body}")),
                    None => {
                        let size = resource.get("blob").and_then(Value::as_str).map_or(0, |b| b.len() * 3 / 4);
                        let mime = resource.get("mimeType").and_then(Value::as_str).unwrap_or("binary");
                        parts.push(format!(
                            "[resource {uri}: {mime}, {} of binary content not shown]",
                            crate::fs_util::human_size(size as u64)
                        ));
                    }
                }
            }
            "resource_link" => {
                let name = text("name");
                parts.push(format!("[resource link {} {name}]", text("uri")).trim_end_matches(' ').to_owned());
            }
            other => parts.push(format!("[{other} content not understood by tandem]")),
        }
    }
    let structured = result.get("structuredContent").filter(|value| !value.is_null());
    if parts.is_empty()
        && let Some(structured) = structured
    {
        parts.push(serde_json::to_string_pretty(structured).unwrap_or_default());
    }
    let is_error = result.get("isError").and_then(Value::as_bool) == Some(true);
    let mut content = parts.join("\n");
    if content.is_empty() {
        content = if is_error { "The tool failed without saying why.".into() } else { "(no output)".into() };
    }
    let content = cap(content, max_chars, spill);
    let host_copy = match structured {
        Some(structured) => structured.clone(),
        None => Value::Array(blocks),
    };
    let mut output = if is_error { ToolOutput::error(content) } else { ToolOutput::ok(content) };
    output.images = (!images.is_empty()).then(|| Box::new(images));
    output.with_structured(host_copy)
}

/// `content` cut to `max_chars` characters with the omitted size stated.
/// A resource's or prompt's text cut like a tool result (nowhere to save the rest: the server has it).
pub(crate) fn cap_text(content: String, max_chars: usize) -> String {
    cap(content, max_chars, None)
}

fn cap(content: String, max_chars: usize, spill: Option<&std::path::Path>) -> String {
    let total = content.chars().count();
    if total <= max_chars {
        return content;
    }
    let kept: String = content.chars().take(max_chars).collect();
    let omitted = total - max_chars;
    let saved =
        spill.and_then(|path| crate::fs_util::write_atomic_create_dirs(path, content.as_bytes()).ok().map(|()| path));
    let whole = match saved {
        Some(path) => format!(" The whole result is saved in {}; read parts of it with Read.", path.display()),
        None => String::new(),
    };
    format!(
        "{kept}\n\n[… {omitted} more characters (about {} tokens) of this result were cut: MCP results are limited to \
         {max_chars} characters (MAX_MCP_OUTPUT_TOKENS).{whole}]",
        omitted / 4
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_are_sanitized_and_bounded() {
        assert_eq!(full_name("github", "create_issue"), "mcp__github__create_issue");
        assert_eq!(full_name("my server", "do.it/now"), "mcp__my_server__do_it_now");
        assert_eq!(full_name("s", &"x".repeat(100)).len(), 64);
    }

    #[test]
    fn results_become_text_with_every_kind_said() {
        let result = json!({"content": [
            {"type": "text", "text": "hello"},
            {"type": "image", "mimeType": "image/png", "data": "AAAA"},
            {"type": "image", "mimeType": "image/tiff", "data": "AAAA"},
            {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "body"}},
            {"type": "resource", "resource": {"uri": "file:///b.bin", "blob": "AAAA", "mimeType": "application/zip"}},
            {"type": "resource_link", "uri": "file:///c", "name": "c"},
        ]});
        let output = result_output(&result, 10_000, None);
        assert!(!output.is_error);
        assert_eq!(
            output.images.as_deref().cloned().unwrap_or_default(),
            vec![json!({"type": "base64", "media_type": "image/png", "data": "AAAA"})]
        );
        assert_eq!(
            output.content,
            "hello\n[image 1: image/png, attached]\n\
             [image: image/tiff, 3 bytes — not shown: the model takes PNG, JPEG, GIF and WebP images only]\n\
             [resource file:///a.txt]\nbody\n[resource file:///b.bin: application/zip, 3 bytes of binary content not shown]\n\
             [resource link file:///c c]"
        );
    }

    #[test]
    fn structured_content_and_errors() {
        let output = result_output(&json!({"content": [], "structuredContent": {"n": 1}}), 1000, None);
        assert_eq!(output.content, "{\n  \"n\": 1\n}");
        assert_eq!(output.structured, Some(json!({"n": 1})));
        let output = result_output(&json!({"content": [], "isError": true}), 1000, None);
        assert!(output.is_error);
        assert_eq!(output.content, "The tool failed without saying why.");
    }

    #[test]
    fn long_results_are_cut_with_the_omitted_size_and_saved_whole() {
        let dir = tempfile::tempdir().unwrap();
        let spill = dir.path().join("out/mcp-1.txt");
        let result = json!({"content": [{"type": "text", "text": "a".repeat(150)}]});
        let output = result_output(&result, 100, Some(&spill));
        assert!(output.content.starts_with(&"a".repeat(100)));
        assert!(output.content.contains("50 more characters"), "{}", output.content);
        assert!(output.content.contains(&spill.display().to_string()));
        assert_eq!(std::fs::read_to_string(&spill).unwrap().len(), 150);
    }
}
