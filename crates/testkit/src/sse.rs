//! Turning a list of rendered events into an HTTP body, with the scripted faults applied.
//!
//! Both endpoints render a reply to a `Vec<Frame>` first; faults are then applied uniformly here (truncate, replace,
//! insert an error, abort, stall), so every fault behaves the same on both routes and event positions mean the same
//! thing. The body is a plain `Stream` of `Result<Bytes, io::Error>`: yielding an `Err` makes hyper abort the
//! chunked response without its terminating chunk, which is exactly how a dropped connection looks to a client.

use std::io;
use std::time::Duration;

use bytes::Bytes;
use futures::Stream;
use tokio::sync::watch;

use crate::scenario::Fault;

/// One SSE event (or, for a non-streaming answer, the whole body).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Frame {
    /// The `event:` line (Anthropic); `None` for OpenAI's data-only events and for raw bodies.
    pub event: Option<&'static str>,
    /// The payload after `data: `.
    pub data: String,
    /// A raw body frame is sent as-is, without SSE framing.
    pub raw: bool,
}

impl Frame {
    /// `event: <name>\ndata: <json>\n\n`.
    pub(crate) fn named(event: &'static str, data: &serde_json::Value) -> Self {
        Frame { event: Some(event), data: data.to_string(), raw: false }
    }

    /// `data: <json>\n\n`.
    pub(crate) fn data(data: &serde_json::Value) -> Self {
        Frame::data_text(data.to_string())
    }

    /// `data: <text>\n\n` with any text (e.g. `[DONE]` or deliberately broken JSON).
    pub(crate) fn data_text(text: impl Into<String>) -> Self {
        Frame { event: None, data: text.into(), raw: false }
    }

    /// Unframed body bytes (non-streaming answers).
    pub(crate) fn raw(text: impl Into<String>) -> Self {
        Frame { event: None, data: text.into(), raw: true }
    }

    /// The bytes on the wire.
    pub(crate) fn to_bytes(&self) -> Bytes {
        if self.raw {
            return Bytes::from(self.data.clone());
        }
        match self.event {
            Some(name) => Bytes::from(format!("event: {name}\ndata: {}\n\n", self.data)),
            None => Bytes::from(format!("data: {}\n\n", self.data)),
        }
    }
}

/// How the body ends after its last frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ending {
    /// Normal end of body.
    Clean,
    /// Abort the connection (no terminating chunk).
    Abort,
    /// Send nothing more, keep the connection open until the client leaves or the server shuts down.
    Stall,
}

/// Everything the body stream needs.
#[derive(Debug)]
pub(crate) struct Plan {
    pub frames: Vec<Bytes>,
    pub ending: Ending,
    pub delay: Duration,
}

/// Endpoint-specific pieces needed to apply a fault.
pub(crate) trait FaultShapes {
    /// A broken version of `frame`.
    fn malformed(&self, frame: &Frame) -> Frame;
    /// A mid-stream error event.
    fn error_event(&self, error_type: &str, message: &str) -> Frame;
}

/// Applies a streaming fault (HTTP faults are handled before rendering and are ignored here).
pub(crate) fn plan(mut frames: Vec<Frame>, fault: Option<&Fault>, shapes: &dyn FaultShapes, delay: Duration) -> Plan {
    let mut ending = Ending::Clean;
    match fault {
        None | Some(Fault::Http { .. } | Fault::ContentType { .. } | Fault::NotStreamed) => {}
        Some(Fault::ByteOrderMark) => {
            if let Some(first) = frames.first_mut() {
                let mut bytes = b"\xef\xbb\xbf".to_vec();
                bytes.extend_from_slice(&first.to_bytes());
                return Plan {
                    frames: std::iter::once(Bytes::from(bytes))
                        .chain(frames[1..].iter().map(Frame::to_bytes))
                        .collect(),
                    ending,
                    delay,
                };
            }
        }
        Some(Fault::DropAfter { events }) => {
            frames.truncate(*events);
            ending = Ending::Abort;
        }
        Some(Fault::StallAfter { events }) => {
            frames.truncate(*events);
            ending = Ending::Stall;
        }
        Some(Fault::MalformedAt { event }) => {
            if let Some(frame) = frames.get_mut(*event) {
                *frame = shapes.malformed(frame);
            }
        }
        Some(Fault::ErrorEventAt { event, error_type, message }) => {
            frames.truncate(*event);
            frames.push(shapes.error_event(error_type, message));
        }
    }
    Plan { frames: frames.iter().map(Frame::to_bytes).collect(), ending, delay }
}

/// Resolves once the server is shutting down (or its handle is gone).
pub(crate) async fn shutdown_signal(rx: &mut watch::Receiver<bool>) {
    // An error means the sender was dropped: that is a shutdown too.
    let _ = rx.wait_for(|stop| *stop).await;
}

struct BodyState {
    plan: Plan,
    next: usize,
    done: bool,
    shutdown: watch::Receiver<bool>,
}

fn abort_error(why: &str) -> io::Error {
    io::Error::other(format!("fake-llm: {why}"))
}

/// The response body for `plan`. Every wait also watches `shutdown`, so dropping the server ends stalled and slow
/// streams (by aborting them) instead of leaving connections open forever.
pub(crate) fn body_stream(
    plan: Plan,
    shutdown: watch::Receiver<bool>,
) -> impl Stream<Item = Result<Bytes, io::Error>> + Send + 'static {
    let state = BodyState { plan, next: 0, done: false, shutdown };
    futures::stream::unfold(state, |mut st| async move {
        if st.done {
            return None;
        }
        if st.next < st.plan.frames.len() {
            if st.next > 0 && !st.plan.delay.is_zero() {
                tokio::select! {
                    biased;
                    _ = shutdown_signal(&mut st.shutdown) => {
                        st.done = true;
                        return Some((Err(abort_error("server shut down")), st));
                    }
                    _ = tokio::time::sleep(st.plan.delay) => {}
                }
            }
            let frame = st.plan.frames[st.next].clone();
            st.next += 1;
            return Some((Ok(frame), st));
        }
        st.done = true;
        match st.plan.ending {
            Ending::Clean => None,
            Ending::Abort => {
                // hyper propagates a body error before flushing what it has buffered, so give it a turn to
                // write the frames already yielded: the client must receive exactly the scripted events.
                tokio::task::yield_now().await;
                tokio::time::sleep(Duration::from_millis(5)).await;
                Some((Err(abort_error("scripted drop_after")), st))
            }
            Ending::Stall => {
                shutdown_signal(&mut st.shutdown).await;
                Some((Err(abort_error("server shut down during stall")), st))
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Shapes;
    impl FaultShapes for Shapes {
        fn malformed(&self, _: &Frame) -> Frame {
            Frame::data_text("{broken")
        }
        fn error_event(&self, t: &str, m: &str) -> Frame {
            Frame::data_text(format!("{t}:{m}"))
        }
    }

    fn frames(n: usize) -> Vec<Frame> {
        (0..n).map(|i| Frame::data_text(i.to_string())).collect()
    }

    #[test]
    fn faults_reshape_frames() {
        let d = Duration::ZERO;
        let p = plan(frames(4), Some(&Fault::drop_after(2)), &Shapes, d);
        assert_eq!((p.frames.len(), p.ending), (2, Ending::Abort));
        let p = plan(frames(4), Some(&Fault::malformed_at(1)), &Shapes, d);
        assert_eq!(p.frames[1], Bytes::from("data: {broken\n\n"));
        assert_eq!((p.frames.len(), p.ending), (4, Ending::Clean));
        let p = plan(frames(4), Some(&Fault::error_event_at(3, "x", "y")), &Shapes, d);
        assert_eq!(p.frames.len(), 4);
        assert_eq!(p.frames[3], Bytes::from("data: x:y\n\n"));
        let p = plan(frames(4), Some(&Fault::stall_after(9)), &Shapes, d);
        assert_eq!((p.frames.len(), p.ending), (4, Ending::Stall));
    }

    #[test]
    fn frame_bytes() {
        let v = serde_json::json!({"type":"ping"});
        assert_eq!(Frame::named("ping", &v).to_bytes(), Bytes::from("event: ping\ndata: {\"type\":\"ping\"}\n\n"));
        assert_eq!(Frame::raw("{}").to_bytes(), Bytes::from("{}"));
    }
}
