//! Replay: a recorded request sent again as it was (or as the user edited it), its answer shown beside the old
//! one. It goes only to the session's own endpoint (with its key), never to a URL from the record, and its
//! answer is only read: nothing enters the conversation, and no tool it asks for runs.

use crate::events::EventSink;
use serde_json::Value;

use super::Recorder;
use crate::protocol::{Event, ReplayAnswer};
use crate::provider::Provider;

/// Sends `body` (with the non-secret headers of the recorded request, e.g. its betas) and reports the answer
/// as [`Event::Replayed`]; the exchange is recorded too, as a `replay`.
pub async fn replay(
    provider: &dyn Provider,
    recorder: Option<&Recorder>,
    request: u64,
    body: Value,
    headers: Vec<(String, String)>,
    edited: bool,
    events: &EventSink,
) {
    let bytes = body.to_string().into_bytes();
    let model = body.get("model").and_then(Value::as_str).unwrap_or_default().to_owned();
    let mut record = recorder.map(|recorder| {
        let wire = provider.wire_for_replay(bytes.clone(), &headers);
        let mut record = recorder.start("replay", &model, 1, wire);
        record.replay_of(request, edited);
        record
    });
    let answer = super::read_stream(provider.replay(bytes, &headers), record.as_mut()).await;
    let reply = match answer {
        Ok(message) => {
            if let (Some(recorder), Some(mut record)) = (recorder, record) {
                record.end(None, Some(message.usage));
                recorder.finish(record);
            }
            let content = message.to_message();
            ReplayAnswer {
                request,
                edited,
                text: content.text(),
                tool_calls: content.tool_uses().map(|(_, name, input)| format!("{name} {input}")).collect(),
                usage: Some(message.usage),
                error: None,
            }
        }
        Err((error, status)) => {
            if let (Some(recorder), Some(mut record)) = (recorder, record) {
                record.end(Some((error.clone(), status)), None);
                recorder.finish(record);
            }
            ReplayAnswer {
                request,
                edited,
                text: String::new(),
                tool_calls: Vec::new(),
                usage: None,
                error: Some(error),
            }
        }
    };
    let _ = events.send(Event::Replayed(reply));
}
