//! Terminal input read by its own task and handed over through a channel.
//!
//! Polling crossterm's `EventStream` is not free: every poll asks the terminal for pending input (a system call)
//! and hands a wake-up task to crossterm's reader thread. The runtime's loop turns once per agent event —
//! hundreds of times a second while an answer streams — so the stream is polled here, only when crossterm says
//! input is ready, and the loop receives from a channel. The reader is stopped while another program owns the
//! terminal (`$EDITOR`, a suspend), so it doesn't take that program's keystrokes.

use futures::StreamExt;
use ratatui::crossterm::event::{Event, EventStream};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// The running reader, or none while paused.
pub(super) struct TerminalInput {
    reader: Option<JoinHandle<()>>,
    events: mpsc::UnboundedReceiver<std::io::Result<Event>>,
    sender: mpsc::UnboundedSender<std::io::Result<Event>>,
}

impl TerminalInput {
    pub(super) fn start() -> TerminalInput {
        let (sender, events) = mpsc::unbounded_channel();
        let mut input = TerminalInput { reader: None, events, sender };
        input.resume();
        input
    }

    /// The next terminal event; `None` when the terminal is gone.
    pub(super) async fn next(&mut self) -> Option<std::io::Result<Event>> {
        self.events.recv().await
    }

    /// Stops reading (before another program takes the terminal).
    pub(super) async fn pause(&mut self) {
        if let Some(reader) = self.reader.take() {
            reader.abort();
            let _ = reader.await;
        }
    }

    /// Reads again (the app has the terminal back).
    pub(super) fn resume(&mut self) {
        if self.reader.is_some() {
            return;
        }
        let sender = self.sender.clone();
        self.reader = Some(tokio::spawn(async move {
            let mut stream = EventStream::new();
            while let Some(event) = stream.next().await {
                let failed = event.is_err();
                if sender.send(event).is_err() || failed {
                    break;
                }
            }
        }));
    }
}
