//! Answers a WebFetch's `prompt` over the page with the session's small, fast model, so a long page costs the
//! main model a paragraph instead of its whole text.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::conversation::Message;
use crate::provider::{ModelRequest, Provider, SystemBlock};
use crate::spend::ToolSpend;

const READER_SYSTEM: &str = "You read a web page for a coding assistant. Answer the request from the page's \
content only. Quote code, commands, option names and version numbers exactly as the page has them. Be concise. \
If the page does not answer the request, say so and say what the page is about instead.";

/// Page text given to the reader at most (characters).
pub const MAX_READER_INPUT: usize = 100_000;

/// The small, fast model and the provider that serves it.
pub struct PageReader {
    pub provider: Arc<dyn Provider>,
    /// The model, with its prices as the session knows them (what it costs counts in the session's totals).
    pub model: crate::models::ModelInfo,
}

impl PageReader {
    /// The model's answer to `prompt` over `markdown`; what it cost is recorded in `spend`.
    pub async fn answer(
        &self,
        url: &str,
        markdown: &str,
        prompt: &str,
        cancel: &CancellationToken,
        spend: &ToolSpend,
        recorder: Option<&crate::inspect::Recorder>,
    ) -> Result<String, String> {
        let page = match markdown.char_indices().nth(MAX_READER_INPUT) {
            Some((cut, _)) => &markdown[..cut],
            None => markdown,
        };
        let request = ModelRequest {
            model: self.model.id.clone(),
            system: vec![SystemBlock { text: READER_SYSTEM.into(), cache: false }],
            messages: vec![Message::user_text(format!(
                "The page at {url}, as Markdown:\n<page>\n{page}\n</page>\n\nRequest: {prompt}"
            ))],
            tools: Vec::new(),
            max_tokens: 2048,
            reasoning: Default::default(),
            betas: Vec::new(),
        };
        let mut record =
            recorder.map(|recorder| recorder.start("webfetch", &self.model.id, 1, self.provider.wire(&request)));
        let read = crate::inspect::read_stream(self.provider.stream(&request), record.as_mut());
        let answer = tokio::select! {
            () = cancel.cancelled() => Err(("interrupted".to_owned(), None)),
            answer = read => answer,
        };
        let usage = answer.as_ref().ok().map(|message| message.usage);
        if let (Some(recorder), Some(mut record)) = (recorder, record) {
            record.end(answer.as_ref().err().cloned(), usage);
            recorder.finish(record);
        }
        let message = answer.map_err(|(error, _)| error)?;
        spend.record(&self.model, &message.usage);
        Ok(message.to_message().text())
    }
}
