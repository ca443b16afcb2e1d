//! One model round trip, with retries.
//!
//! Each attempt streams into a fresh [`MessageAssembler`]; events are forwarded to the front end as they
//! arrive. When an attempt fails after output has begun, the partial output is discarded (the front end is told
//! through `Event::Retrying { discarded_partial_output: true }`) and the whole request is sent again: only a
//! complete message ever reaches the conversation, so a tool call from a broken stream never runs.

use crate::events::EventSink;
use std::time::Duration;

use futures::StreamExt;
use tokio_util::sync::CancellationToken;

use super::items::Items;
use crate::conversation::{ContentBlock, Usage};
use crate::inspect::{Attempt, Recorder};
use crate::protocol::{Event, ItemOutcome};
use crate::provider::assemble::{Assembled, MessageAssembler};
use crate::provider::retry::RetryPolicy;
use crate::provider::{ModelRequest, Provider, ProviderError};

/// Why a round trip produced no message.
pub(super) enum SampleError {
    /// The user interrupted; `partial` is the text that had streamed so far, `usage` what the stopped response
    /// (and any attempt before it) had reported: its input is billed all the same.
    Interrupted { partial: Vec<ContentBlock>, usage: Usage },
    /// The request failed and retrying did not help (or the error is not retryable).
    Failed(ProviderError),
}

/// Where a round trip's attempts are recorded (the API inspector), and what the request is for.
pub(super) type Recording<'a> = Option<(&'a Recorder, &'static str)>;

pub(super) async fn sample(
    provider: &dyn Provider,
    request: &ModelRequest,
    retry: &RetryPolicy,
    cancel: &CancellationToken,
    events: &EventSink,
    raw: bool,
    recording: Recording<'_>,
) -> Result<Assembled, SampleError> {
    let mut attempt = 1;
    // What attempts that brought no message had reported.
    let mut spent = Usage::default();
    loop {
        let mut assembler = MessageAssembler::new();
        let mut items = Items::default();
        let mut record = recording
            .map(|(recorder, purpose)| recorder.start(purpose, &request.model, attempt, provider.wire(request)));
        let outcome = tokio::select! {
            biased;
            _ = cancel.cancelled() => None,
            result = stream_once(provider, request, &mut assembler, &mut items, events, raw, record.as_mut()) => Some(result),
        };
        let finish = |record: Option<Attempt>, error: Option<(String, Option<u16>)>, usage| {
            if let (Some(mut record), Some((recorder, _))) = (record, recording) {
                record.end(error, usage);
                recorder.finish(record);
            }
        };
        let error = match outcome {
            None => {
                // What the response had cost when it was stopped (its input is billed all the same).
                let usage = Some(assembler.usage()).filter(|usage| *usage != Usage::default());
                finish(record, Some((crate::inspect::INTERRUPTED.into(), None)), usage);
                items.close_all(ItemOutcome::Interrupted, events);
                spent.accumulate(&assembler.usage());
                return Err(SampleError::Interrupted { partial: partial_text(assembler), usage: spent });
            }
            Some(Ok(())) => {
                items.close_all(ItemOutcome::Completed, events);
                let assembled = assembler.finish();
                finish(record, None, Some(assembled.message.usage));
                return Ok(assembled);
            }
            Some(Err(error)) => error,
        };
        let usage = Some(assembler.usage()).filter(|usage| *usage != Usage::default());
        spent.accumulate(&assembler.usage());
        if let Some(record) = record.as_mut() {
            record.failed(&error);
        }
        finish(record, Some((error.to_string(), error.http_status())), usage);
        let Some(delay) = retry.retry_delay(&error, attempt) else {
            items.close_all(ItemOutcome::Failed, events);
            return Err(SampleError::Failed(error));
        };
        items.close_all(ItemOutcome::Discarded, events);
        let _ = events.send(Event::Retrying {
            attempt,
            max_attempts: retry.max_attempts,
            delay_ms: delay.as_millis() as u64,
            reason: error.to_string(),
            discarded_partial_output: assembler.has_output(),
            status: error.http_status(),
        });
        tracing::warn!(attempt, delay_ms = delay.as_millis() as u64, "retrying model request: {error}");
        if sleep_or_cancel(delay, cancel).await.is_err() {
            return Err(SampleError::Interrupted { partial: Vec::new(), usage: spent });
        }
        attempt += 1;
    }
}

async fn stream_once(
    provider: &dyn Provider,
    request: &ModelRequest,
    assembler: &mut MessageAssembler,
    items: &mut Items,
    events: &EventSink,
    raw: bool,
    mut record: Option<&mut Attempt>,
) -> Result<(), ProviderError> {
    let mut stream = provider.stream(request).await?;
    while let Some(event) = stream.next().await {
        let event = event?;
        if let Some(record) = record.as_deref_mut() {
            record.event(&event);
        }
        assembler.push(&event)?;
        items.on(&event, assembler, events);
        if raw {
            let _ = events.send(Event::RawStream(event));
        }
        if assembler.is_complete() {
            return Ok(());
        }
    }
    if assembler.is_complete() {
        Ok(())
    } else {
        Err(ProviderError::Disconnected { message: "the response ended before the message was complete".into() })
    }
}

/// The text that had streamed before an interrupt (thinking and incomplete tool calls are dropped).
fn partial_text(assembler: MessageAssembler) -> Vec<ContentBlock> {
    assembler
        .finish()
        .message
        .content
        .into_iter()
        .filter(|block| matches!(block, ContentBlock::Text { text } if !text.trim().is_empty()))
        .collect()
}

async fn sleep_or_cancel(delay: Duration, cancel: &CancellationToken) -> Result<(), ()> {
    tokio::select! {
        _ = cancel.cancelled() => Err(()),
        _ = tokio::time::sleep(delay) => Ok(()),
    }
}
