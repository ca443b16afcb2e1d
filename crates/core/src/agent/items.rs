//! The streamed response as items for front ends: each text block becomes a message item and each thinking
//! block a thinking item, with an id of its own, started → deltas → completed with a typed outcome. The
//! provider's block indices stay here; a front end never sees them (except stream-json's raw passthrough).

use crate::events::EventSink;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::conversation::SharedText;
use crate::protocol::{Event, ItemOutcome};
use crate::provider::assemble::MessageAssembler;
use crate::provider::{BlockStart, StreamEvent};

/// Item ids are unique in the process: `item_1`, `item_2`, …
static NEXT_ITEM: AtomicU64 = AtomicU64::new(1);

enum Kind {
    Message,
    Thinking,
    /// A tool call being written: its lifecycle is the tool call's (`ToolCallStarted` …), keyed by its call id.
    Tool,
}

/// The items of one streamed attempt that are still open, by the provider's block index.
#[derive(Default)]
pub(super) struct Items {
    open: HashMap<usize, (String, Kind)>,
}

impl Items {
    /// Turns one raw stream event into item events.
    /// `assembler` has already taken `event`: a completed message item carries the text it assembled.
    pub(super) fn on(&mut self, event: &StreamEvent, assembler: &MessageAssembler, events: &EventSink) {
        let send = |event: Event| {
            let _ = events.send(event);
        };
        match event {
            StreamEvent::BlockStart { index, block } => {
                let item_id = format!("item_{}", NEXT_ITEM.fetch_add(1, Ordering::Relaxed));
                match block {
                    BlockStart::Text => {
                        send(Event::MessageStarted { item_id: item_id.clone() });
                        self.open.insert(*index, (item_id, Kind::Message));
                    }
                    BlockStart::Thinking => {
                        send(Event::ThinkingStarted { item_id: item_id.clone(), redacted: false });
                        self.open.insert(*index, (item_id, Kind::Thinking));
                    }
                    BlockStart::RedactedThinking { .. } => {
                        send(Event::ThinkingStarted { item_id: item_id.clone(), redacted: true });
                        self.open.insert(*index, (item_id, Kind::Thinking));
                    }
                    BlockStart::ToolUse { id, name } => {
                        send(Event::ToolInputStarted { call_id: id.clone(), name: name.clone() });
                        self.open.insert(*index, (id.clone(), Kind::Tool));
                    }
                }
            }
            StreamEvent::TextDelta { index, text } => {
                if let Some((item_id, Kind::Message)) = self.open.get(index) {
                    send(Event::MessageDelta { item_id: item_id.clone(), text: text.clone() });
                }
            }
            StreamEvent::ThinkingDelta { index, thinking } => {
                if let Some((item_id, Kind::Thinking)) = self.open.get(index) {
                    send(Event::ThinkingDelta { item_id: item_id.clone(), text: thinking.clone() });
                }
            }
            StreamEvent::BlockStop { index } => {
                if let Some((item_id, kind)) = self.open.remove(index) {
                    complete(item_id, kind, ItemOutcome::Completed, assembler.text(*index), events);
                }
            }
            StreamEvent::MessageStart { .. }
            | StreamEvent::SignatureDelta { .. }
            | StreamEvent::ToolInputDelta { .. }
            | StreamEvent::MessageDelta { .. }
            | StreamEvent::MessageStop => {}
        }
    }

    /// Ends every open item with `outcome` (the attempt was interrupted, failed, or is being retried).
    pub(super) fn close_all(&mut self, outcome: ItemOutcome, events: &EventSink) {
        let mut open: Vec<(usize, (String, Kind))> = self.open.drain().collect();
        open.sort_by_key(|(index, _)| *index);
        for (_, (item_id, kind)) in open {
            complete(item_id, kind, outcome, None, events);
        }
    }
}

fn complete(item_id: String, kind: Kind, outcome: ItemOutcome, text: Option<SharedText>, events: &EventSink) {
    let event = match kind {
        Kind::Message => Event::MessageCompleted { item_id, outcome, text },
        Kind::Thinking => Event::ThinkingCompleted { item_id, outcome },
        Kind::Tool => return,
    };
    let _ = events.send(event);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed(items: &mut Items, assembler: &mut MessageAssembler, event: StreamEvent, tx: &EventSink) {
        assembler.push(&event).unwrap();
        items.on(&event, assembler, tx);
    }

    fn received(rx: &mut tokio::sync::mpsc::UnboundedReceiver<crate::protocol::EventMsg>) -> Vec<Event> {
        let mut seen = Vec::new();
        while let Ok(message) = rx.try_recv() {
            seen.push(message.event);
        }
        seen
    }

    #[test]
    fn blocks_become_items_with_ids_and_an_interrupt_closes_what_is_open() {
        let (tx, mut rx) = EventSink::channel();
        let (mut items, mut assembler) = (Items::default(), MessageAssembler::new());
        feed(&mut items, &mut assembler, StreamEvent::BlockStart { index: 0, block: BlockStart::Thinking }, &tx);
        feed(&mut items, &mut assembler, StreamEvent::ThinkingDelta { index: 0, thinking: "hmm".into() }, &tx);
        feed(&mut items, &mut assembler, StreamEvent::BlockStop { index: 0 }, &tx);
        feed(&mut items, &mut assembler, StreamEvent::BlockStart { index: 1, block: BlockStart::Text }, &tx);
        feed(&mut items, &mut assembler, StreamEvent::TextDelta { index: 1, text: "Hel".into() }, &tx);
        items.close_all(ItemOutcome::Interrupted, &tx);
        let seen = received(&mut rx);
        let thinking_id = match &seen[0] {
            Event::ThinkingStarted { item_id, redacted: false } => item_id.clone(),
            other => panic!("{other:?}"),
        };
        assert!(matches!(&seen[1], Event::ThinkingDelta { item_id, text } if *item_id == thinking_id && text == "hmm"));
        assert!(matches!(&seen[2], Event::ThinkingCompleted { outcome: ItemOutcome::Completed, .. }));
        let Event::MessageStarted { item_id: message_id } = &seen[3] else { panic!("{:?}", seen[3]) };
        assert_ne!(*message_id, thinking_id);
        assert!(matches!(&seen[4], Event::MessageDelta { text, .. } if text == "Hel"));
        assert!(matches!(
            &seen[5],
            Event::MessageCompleted { item_id, outcome: ItemOutcome::Interrupted, text: None } if item_id == message_id
        ));
    }

    #[test]
    fn a_completed_message_item_shares_its_text_with_the_conversation() {
        let (tx, mut rx) = EventSink::channel();
        let (mut items, mut assembler) = (Items::default(), MessageAssembler::new());
        feed(&mut items, &mut assembler, StreamEvent::BlockStart { index: 0, block: BlockStart::Text }, &tx);
        for piece in ["Hello, ", "world."] {
            feed(&mut items, &mut assembler, StreamEvent::TextDelta { index: 0, text: piece.into() }, &tx);
        }
        feed(&mut items, &mut assembler, StreamEvent::BlockStop { index: 0 }, &tx);
        let Some(Event::MessageCompleted { text: Some(shown), .. }) = received(&mut rx).pop() else { panic!() };
        let message = assembler.finish().message;
        let [crate::conversation::ContentBlock::Text { text: kept }] = &message.content[..] else { panic!() };
        assert_eq!(shown.as_str(), "Hello, world.");
        assert!(SharedText::ptr_eq(&shown, kept), "one copy of the text, held by both");
    }
}
