//! The processes of stdio MCP servers: started in a process group of their own, stopped with it — when their
//! connection ends, and, busy in a call or not, whenever tandem exits ([`stop_all`]) — and watched for a message
//! too large for the transport, which `rmcp` drops with only a log line (the call would then wait for its whole
//! timeout before "did not answer").

use std::collections::BTreeSet;
use std::pin::Pin;
use std::sync::Mutex;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, kill_process_group};
use tokio::io::{AsyncRead, ReadBuf};
use tokio::sync::watch;

/// The largest message `rmcp` reads from a stdio server (its `DEFAULT_MAX_LINE_LENGTH`).
pub const MAX_MESSAGE_BYTES: u64 = rmcp::transport::async_rw::DEFAULT_MAX_LINE_LENGTH as u64;
/// How long the servers get to exit after SIGTERM when tandem exits, before SIGKILL.
const STOP_GRACE: Duration = Duration::from_millis(500);

/// The process groups of the servers running now.
static GROUPS: Mutex<BTreeSet<i32>> = Mutex::new(BTreeSet::new());

fn groups() -> std::sync::MutexGuard<'static, BTreeSet<i32>> {
    GROUPS.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A running server's process; dropping it kills the server's whole group (what it started too).
pub(crate) struct ServerProcess {
    group: Option<Pid>,
    _child: tokio::process::Child,
}

impl ServerProcess {
    /// Takes charge of `child`, the leader of its own process group.
    pub(crate) fn new(child: tokio::process::Child) -> ServerProcess {
        let group = child.id().and_then(|id| Pid::from_raw(id as i32));
        if let Some(group) = group {
            groups().insert(group.as_raw_nonzero().get());
        }
        ServerProcess { group, _child: child }
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        if let Some(group) = self.group {
            groups().remove(&group.as_raw_nonzero().get());
            let _ = kill_process_group(group, Signal::KILL);
        }
    }
}

/// Stops every server tandem started: SIGTERM to each group, then SIGKILL to those still there after a short
/// grace. Front ends call it on their way out, whatever the way; a server in the middle of a call included.
pub fn stop_all() {
    let running: Vec<Pid> = std::mem::take(&mut *groups()).into_iter().filter_map(Pid::from_raw).collect();
    for group in &running {
        let _ = kill_process_group(*group, Signal::TERM);
    }
    let deadline = Instant::now() + STOP_GRACE;
    let alive = |group: &Pid| rustix::process::test_kill_process_group(*group).is_ok();
    while running.iter().any(alive) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    for group in running.iter().filter(|group| alive(group)) {
        let _ = kill_process_group(*group, Signal::KILL);
    }
}

/// A server's stdout, read through: the size of each line (one message) is counted, and one over
/// [`MAX_MESSAGE_BYTES`] is announced with its size once it ends.
pub(crate) struct MessageSizes<R> {
    inner: R,
    line: u64,
    oversized: watch::Sender<Option<u64>>,
}

impl<R> MessageSizes<R> {
    /// `inner`, and where a message that was too large is announced (its size in bytes).
    pub(crate) fn new(inner: R) -> (MessageSizes<R>, watch::Receiver<Option<u64>>) {
        let (oversized, receiver) = watch::channel(None);
        (MessageSizes { inner, line: 0, oversized }, receiver)
    }

    fn count(&mut self, bytes: &[u8]) {
        for piece in bytes.split_inclusive(|byte| *byte == b'\n') {
            self.line += piece.len() as u64;
            if piece.ends_with(b"\n") {
                if self.line > MAX_MESSAGE_BYTES {
                    self.oversized.send_replace(Some(self.line));
                }
                self.line = 0;
            }
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for MessageSizes<R> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled {
            self.count(&buf.filled()[before..]);
        }
        polled
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_over_the_limit_is_announced_with_its_size_when_it_ends() {
        let (mut sizes, announced) = MessageSizes::new(tokio::io::empty());
        sizes.count(b"{\"small\":1}\n{\"big\":\"");
        assert_eq!(*announced.borrow(), None);
        let chunk = vec![b'x'; 1 << 20];
        for _ in 0..16 {
            sizes.count(&chunk);
        }
        assert_eq!(*announced.borrow(), None, "not before the message ends");
        sizes.count(b"\"}\n{\"next\":2}\n");
        assert_eq!(*announced.borrow(), Some(16 * (1 << 20) + 11));
    }
}
