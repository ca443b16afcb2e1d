//! Events on their way to the front end, each with the submission that caused it ([`EventMsg`]).
//!
//! Every part of core that tells the front end something holds an [`EventSink`]. The session's own sink says the
//! submission the turn runner is working on (it sets it when it takes a submission and clears it after), read
//! when an event is sent, not when it is received; a task that outlives that submission or serves another one
//! (an MCP server's status, a replayed request) gets a sink whose submission is fixed.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::sync::mpsc;

use crate::protocol::{Event, EventMsg, SubmissionId};

/// "No submission" in the atomic: submission ids start at 1.
const NONE: u64 = 0;

/// The front end stopped listening: the event was not delivered.
#[derive(Debug, thiserror::Error)]
#[error("the front end has gone")]
pub struct FrontEndGone;

/// Sends events to the front end, tagged with their submission.
#[derive(Clone, Debug)]
pub struct EventSink {
    tx: mpsc::UnboundedSender<EventMsg>,
    submission: Tag,
}

#[derive(Clone, Debug)]
enum Tag {
    /// Whatever the session is working on when the event is sent.
    Current(Arc<AtomicU64>),
    Fixed(Option<SubmissionId>),
}

impl EventSink {
    /// A sink that follows the submission the session works on, and the front end's end of it.
    pub fn channel() -> (EventSink, mpsc::UnboundedReceiver<EventMsg>) {
        let (tx, rx) = mpsc::unbounded_channel();
        (EventSink { tx, submission: Tag::Current(Arc::new(AtomicU64::new(NONE))) }, rx)
    }

    /// Sends `event`; an error when the front end is gone.
    pub fn send(&self, event: Event) -> Result<(), FrontEndGone> {
        let submission = match &self.submission {
            Tag::Current(current) => match current.load(Ordering::SeqCst) {
                NONE => None,
                id => Some(SubmissionId(id)),
            },
            Tag::Fixed(submission) => *submission,
        };
        self.tx.send(EventMsg { submission, event }).map_err(|_| FrontEndGone)
    }

    /// Whether the front end stopped listening.
    pub fn is_closed(&self) -> bool {
        self.tx.is_closed()
    }

    /// A sink whose events belong to `submission` whatever the session works on meanwhile.
    pub fn for_submission(&self, submission: Option<SubmissionId>) -> EventSink {
        EventSink { tx: self.tx.clone(), submission: Tag::Fixed(submission) }
    }

    /// From now on, events of this sink (and of its clones that follow the session) belong to `submission`.
    pub(crate) fn working_on(&self, submission: Option<SubmissionId>) {
        if let Tag::Current(current) = &self.submission {
            current.store(submission.map_or(NONE, |id| id.0), Ordering::SeqCst);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_say_the_submission_they_were_sent_under() {
        let (sink, mut rx) = EventSink::channel();
        let follows = sink.clone();
        let fixed = sink.for_submission(Some(SubmissionId(7)));
        sink.send(Event::ConversationCleared).unwrap();
        sink.working_on(Some(SubmissionId(3)));
        follows.send(Event::ConversationCleared).unwrap();
        fixed.send(Event::ConversationCleared).unwrap();
        sink.working_on(None);
        follows.send(Event::ConversationCleared).unwrap();
        let tags: Vec<Option<SubmissionId>> = std::iter::from_fn(|| rx.try_recv().ok()).map(|m| m.submission).collect();
        assert_eq!(tags, [None, Some(SubmissionId(3)), Some(SubmissionId(7)), None]);
    }
}
