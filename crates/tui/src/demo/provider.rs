//! The demo's model: a [`Provider`] that streams scripted replies from inside the process — no server, no
//! network, no key. Each request gets the reply for the number of answers already in the conversation, streamed
//! word by word at a human reading pace.

use std::path::PathBuf;
use std::time::Duration;

use futures::future::BoxFuture;
use futures::stream;
use tandem_core::provider::{
    BlockStart, Endpoint, EventStream, ModelRequest, Provider, ProviderError, ProviderKind, StreamEvent,
};
use tandem_protocol::conversation::{Role, StopReason, Usage};

use super::script::{self, Block};

/// Pause between two deltas.
const DELTA_PAUSE: Duration = Duration::from_millis(18);

/// Streams [`script::reply`] for the example project in `dir`.
pub(super) struct DemoProvider {
    endpoint: Endpoint,
    dir: PathBuf,
}

impl DemoProvider {
    pub(super) fn new(dir: PathBuf) -> DemoProvider {
        let endpoint = Endpoint {
            name: "demo".into(),
            kind: ProviderKind::Anthropic,
            base_url: "in-process (scripted, no network)".into(),
            api_key: None,
            api_key_env: None,
        };
        DemoProvider { endpoint, dir }
    }
}

impl Provider for DemoProvider {
    fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    fn stream<'a>(&'a self, request: &'a ModelRequest) -> BoxFuture<'a, Result<EventStream, ProviderError>> {
        let round = request.messages.iter().filter(|message| message.role == Role::Assistant).count();
        let events = events(round, &script::reply(round, &self.dir), &request.model);
        Box::pin(async move {
            let paced = stream::unfold(events.into_iter(), |mut events| async move {
                let event = events.next()?;
                if matches!(event, StreamEvent::TextDelta { .. } | StreamEvent::ThinkingDelta { .. }) {
                    tokio::time::sleep(DELTA_PAUSE).await;
                }
                Some((Ok(event), events))
            });
            Ok(Box::pin(paced) as EventStream)
        })
    }
}

/// A reply as the stream events a real model would send.
fn events(round: usize, blocks: &[Block], model: &str) -> Vec<StreamEvent> {
    let usage = Usage { input_tokens: 1200 + 400 * round as u64, output_tokens: 80, ..Usage::default() };
    let mut out = vec![StreamEvent::MessageStart {
        id: format!("msg_demo_{round}"),
        model: model.to_owned(),
        usage: Usage { output_tokens: 0, ..usage },
    }];
    let mut stop = StopReason::EndTurn;
    for (index, block) in blocks.iter().enumerate() {
        match block {
            Block::Thinking(text) => {
                out.push(StreamEvent::BlockStart { index, block: BlockStart::Thinking });
                out.extend(words(text).map(|thinking| StreamEvent::ThinkingDelta { index, thinking }));
                out.push(StreamEvent::SignatureDelta { index, signature: "demo".into() });
            }
            Block::Text(text) => {
                out.push(StreamEvent::BlockStart { index, block: BlockStart::Text });
                out.extend(words(text).map(|text| StreamEvent::TextDelta { index, text }));
            }
            Block::Tool { id, name, input } => {
                stop = StopReason::ToolUse;
                out.push(StreamEvent::BlockStart {
                    index,
                    block: BlockStart::ToolUse { id: (*id).to_owned(), name: (*name).to_owned() },
                });
                out.push(StreamEvent::ToolInputDelta { index, partial_json: input.to_string() });
            }
        }
        out.push(StreamEvent::BlockStop { index });
    }
    out.push(StreamEvent::MessageDelta { stop_reason: Some(stop), usage });
    out.push(StreamEvent::MessageStop);
    out
}

/// Text in pieces of a word or two, as a model streams it.
fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let cut = rest.char_indices().filter(|(_, c)| *c == ' ' || *c == '\n').nth(1).map_or(rest.len(), |(at, _)| at);
        let (piece, tail) = rest.split_at(cut);
        rest = tail;
        Some(piece.to_owned())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_put_back_together_are_the_text() {
        let text = "Found it: every case\nin `test.sh` expects";
        assert_eq!(words(text).collect::<String>(), text);
        assert!(words(text).count() > 3);
    }

    #[test]
    fn tool_replies_stop_for_tool_use_and_the_last_ends_the_turn() {
        let dir = std::path::Path::new("/tmp/project");
        let stop = |round| {
            events(round, &script::reply(round, dir), "m").into_iter().find_map(|event| match event {
                StreamEvent::MessageDelta { stop_reason, .. } => stop_reason,
                _ => None,
            })
        };
        assert_eq!(stop(0), Some(StopReason::ToolUse));
        assert_eq!(stop(3), Some(StopReason::EndTurn));
        assert_eq!(stop(7), Some(StopReason::EndTurn), "after the script, it says how to connect a provider");
    }
}
