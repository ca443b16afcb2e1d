//! `WebFetch`: a web page as Markdown (main content only), or the small, fast model's answer to `prompt` over
//! it. Which hosts may be fetched is the permission check's business (`WebFetch(domain:…)` rules, private
//! addresses asking): see the permissions module and [`crate::web::address`].

use std::sync::Arc;

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::typed::TypedTool;
use super::{Risk, ToolContext, ToolOutput};
use crate::fs_util::human_size;
use crate::web::fetch::{FetchLimits, FetchOutcome, Fetched, fetch};
use crate::web::reader::PageReader;
use crate::web::{fetch_url, html};

pub const WEB_FETCH_TOOL: &str = "WebFetch";

/// Characters of Markdown returned at most (the whole page is saved in the session's directory).
pub const MAX_MARKDOWN_CHARS: usize = 100_000;

const DESCRIPTION: &str = "Fetches a web page and returns its main content as Markdown, or an answer to \
`prompt` drawn from it.\n\
\n\
- url must be a fully-formed URL; http is upgraded to https (except for local hosts).\n\
- prompt says what you want from the page; when a small model is configured it answers it over the page, \
otherwise the page's Markdown is returned (long pages are cut, with the size left out stated).\n\
- Redirects within the same host are followed. A redirect to another host is reported instead: fetch the URL \
it names with a new call.\n\
- Pages larger than 10 MB are cut; a fetch gives up after 30 seconds.\n\
- Read-only; the user may be asked to allow the domain. Prefer an MCP-provided fetch tool when one is offered.";

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// The URL to fetch content from
    url: String,
    /// The prompt to run on the fetched content
    prompt: String,
}

/// The WebFetch tool, with the model that answers prompts over pages when the session has one.
#[derive(Default)]
pub struct WebFetchTool {
    pub reader: Option<Arc<PageReader>>,
    pub limits: FetchLimits,
}

impl TypedTool for WebFetchTool {
    type Input = Input;
    const NAME: &'static str = WEB_FETCH_TOOL;

    fn description(&self) -> std::borrow::Cow<'static, str> {
        DESCRIPTION.into()
    }

    fn is_read_only(&self) -> bool {
        true
    }

    fn permission_subject(&self, input: &Value, _cwd: &std::path::Path) -> super::Subject {
        super::Subject::Fetch { url: input_url(input).to_owned() }
    }

    fn kind(&self) -> super::ToolKind {
        super::ToolKind::Web
    }

    fn risk(&self) -> Risk {
        Risk::Low
    }

    fn call<'a>(&'a self, input: Input, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move {
            let url = match fetch_url(&input.url) {
                Ok(url) => url,
                Err(message) => return ToolOutput::error(message),
            };
            match fetch(url, self.limits, &ctx.cancel).await {
                Err(message) => ToolOutput::error(message),
                Ok(FetchOutcome::Redirected { from, to, status }) => ToolOutput::ok(format!(
                    "REDIRECT DETECTED: {from} redirects (HTTP {status}) to another host, which was not fetched.\n\
                     Redirect URL: {to}\n\
                     To read it, call WebFetch again with url {to:?} (the user may be asked to allow that host)."
                )),
                Ok(FetchOutcome::Page(page)) => self.page_output(page, &input.prompt, ctx).await,
            }
        })
    }
}

impl WebFetchTool {
    async fn page_output(&self, page: Fetched, prompt: &str, ctx: &ToolContext) -> ToolOutput {
        let url = page.url.to_string();
        let started = page.elapsed;
        let (title, text) = match page_text(&page, &ctx.cancel).await {
            Ok(converted) => converted,
            Err(message) => return ToolOutput::error(message),
        };
        let mut header = format!("URL: {url}\n");
        if let Some(title) = &title {
            header.push_str(&format!("Title: {title}\n"));
        }
        if let Some(announced) = page.truncated {
            let of = announced.map(|size| format!(" of {}", human_size(size))).unwrap_or_default();
            header.push_str(&format!(
                "[Only the first {}{of} of the page were read.]\n",
                human_size(self.limits.max_bytes as u64)
            ));
        }
        if page.status >= 400 {
            let excerpt: String = text.chars().take(2_000).collect();
            return ToolOutput::error(format!("{header}HTTP {} {}\n\n{excerpt}", page.status, page.status_text));
        }
        let answer = match (&self.reader, prompt.trim()) {
            (Some(reader), prompt) if !prompt.is_empty() => {
                match reader.answer(&url, &text, prompt, &ctx.cancel, &ctx.spend, ctx.recorder.as_deref()).await {
                    Ok(answer) => Some(answer),
                    Err(problem) => {
                        header
                            .push_str(&format!("[The small model could not answer ({problem}); the page follows.]\n"));
                        None
                    }
                }
            }
            _ => None,
        };
        let body = match answer {
            Some(answer) => answer,
            None => cap(&text, ctx.output_dir.as_deref(), ctx.call_id.as_deref()),
        };
        let content = format!("{header}\n{body}");
        let elapsed = started.as_millis() as u64;
        ToolOutput::ok(content.clone()).with_structured(json!({
            "bytes": page.body.len(),
            "code": page.status,
            "codeText": page.status_text,
            "result": super::structured_text(&content),
            "durationMs": elapsed,
            "url": url,
        }))
    }
}

/// The page's title and text: HTML as Markdown, other text as it is; binary content is refused.
async fn page_text(
    page: &Fetched,
    cancel: &tokio_util::sync::CancellationToken,
) -> Result<(Option<String>, String), String> {
    let kind = page.content_type.as_str();
    let sniff = &page.body[..page.body.len().min(8192)];
    let textual = kind.is_empty()
        || kind.starts_with("text/")
        || ["json", "xml", "javascript", "yaml", "toml"].iter().any(|word| kind.contains(word));
    if !textual || sniff.contains(&0) {
        return Err(format!(
            "WebFetch reads text pages; {} is {} ({}).",
            page.url,
            if kind.is_empty() { "binary" } else { kind },
            human_size(page.body.len() as u64)
        ));
    }
    let text = String::from_utf8_lossy(&page.body).into_owned();
    let looks_html = kind.contains("html") || (kind.is_empty() && text.trim_start().starts_with('<'));
    if !looks_html {
        return Ok((None, text));
    }
    // Off the runtime's threads, and never waited on for longer than the user wants or CONVERT_TIMEOUT.
    let converting = tokio::task::spawn_blocking(move || html::to_markdown(&text));
    let page = tokio::select! {
        () = cancel.cancelled() => return Err("The fetch was interrupted.".into()),
        () = tokio::time::sleep(CONVERT_TIMEOUT) => {
            return Err(format!("Converting the page took longer than {} s; it was given up.", CONVERT_TIMEOUT.as_secs()))
        }
        converted = converting => converted.map_err(|err| format!("converting the page failed: {err}"))?,
    };
    let mut markdown = page.markdown;
    if page.cut {
        markdown = format!(
            "[Only the first {} of the page's HTML were converted.]\n\n{markdown}",
            human_size(html::MAX_PARSE_BYTES as u64)
        );
    }
    Ok((page.title, markdown))
}

/// Longest a page's conversion is waited for.
const CONVERT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(20);

/// `text` cut to [`MAX_MARKDOWN_CHARS`] with the omitted size stated, saved whole first when there is a place.
fn cap(text: &str, output_dir: Option<&std::path::Path>, call_id: Option<&str>) -> String {
    let total = text.chars().count();
    if total <= MAX_MARKDOWN_CHARS {
        return text.to_owned();
    }
    let kept: String = text.chars().take(MAX_MARKDOWN_CHARS).collect();
    // The call id comes from the model's server: only its letters, digits, `-` and `_` make the file's name.
    let id: String = call_id
        .unwrap_or("page")
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' })
        .collect();
    let name = format!("webfetch-{id}.md");
    let saved = output_dir
        .map(|dir| dir.join(name))
        .filter(|path| crate::fs_util::write_atomic_create_dirs(path, text.as_bytes()).is_ok());
    let whole = match saved {
        Some(path) => format!(" The whole page is saved in {}; read parts of it with Read.", path.display()),
        None => String::new(),
    };
    format!(
        "{kept}\n\n[… {} more characters (about {} tokens) of the page were cut at {MAX_MARKDOWN_CHARS} characters.{whole}]",
        total - MAX_MARKDOWN_CHARS,
        (total - MAX_MARKDOWN_CHARS) / 4
    )
}

/// Reads `url` from an input, for the permission check.
pub fn input_url(input: &Value) -> &str {
    input.get("url").and_then(Value::as_str).unwrap_or_default()
}
