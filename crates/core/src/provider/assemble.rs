//! Folds a response's [`StreamEvent`]s into the [`AssistantMessage`] that goes into the conversation.
//!
//! The result must always be valid to send back to the API, because the next request repeats it: a tool call
//! whose input JSON was cut off (by `max_tokens`, say) keeps an empty object as input and is reported in
//! [`Assembled::invalid_tool_inputs`] so the agent can answer it with an error result instead of running it,
//! and empty text blocks (which the Anthropic API rejects) are left out.

use std::collections::{BTreeMap, VecDeque};
use std::io;

use serde_json::Value;

use super::{BlockStart, ProviderError, StreamEvent};
use crate::conversation::{AssistantMessage, ContentBlock, SharedText, StopReason, Usage};

/// How much of a bad tool input is quoted in its error.
const QUOTE_CHARS: usize = 120;

/// The largest piece a tool input's JSON text is kept in while it streams (see [`JsonPieces`]).
const PIECE_BYTES: usize = 1 << 20;

#[derive(Debug)]
enum Partial {
    /// Shared once the block stops ([`MessageAssembler::text`]); until then this is the only holder.
    Text(SharedText),
    Thinking {
        thinking: String,
        signature: String,
    },
    RedactedThinking(String),
    ToolUse {
        id: String,
        name: String,
        json: JsonPieces,
    },
}

impl Partial {
    fn kind(&self) -> &'static str {
        match self {
            Partial::Text(_) => "text",
            Partial::Thinking { .. } => "thinking",
            Partial::RedactedThinking(_) => "redacted_thinking",
            Partial::ToolUse { .. } => "tool_use",
        }
    }
}

#[derive(Debug)]
struct Slot {
    partial: Partial,
    stopped: bool,
}

/// Builds one assistant message from its stream events.
#[derive(Debug, Default)]
pub struct MessageAssembler {
    id: String,
    model: String,
    usage: Usage,
    stop_reason: Option<StopReason>,
    blocks: BTreeMap<usize, Slot>,
    complete: bool,
}

/// A finished message and the tool calls whose input could not be used.
#[derive(Clone, Debug, PartialEq)]
pub struct Assembled {
    pub message: AssistantMessage,
    /// `(tool_use id, why)` for each tool call whose input was not a JSON object; its input is `{}` in
    /// `message`.
    pub invalid_tool_inputs: Vec<(String, String)>,
}

impl MessageAssembler {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn push(&mut self, event: &StreamEvent) -> Result<(), ProviderError> {
        match event {
            StreamEvent::MessageStart { id, model, usage } => {
                self.id.clone_from(id);
                self.model.clone_from(model);
                self.usage = *usage;
            }
            StreamEvent::BlockStart { index, block } => {
                if self.blocks.contains_key(index) {
                    return Err(malformed(format!("content block {index} started twice")));
                }
                let partial = match block {
                    BlockStart::Text => Partial::Text(SharedText::default()),
                    BlockStart::Thinking => Partial::Thinking { thinking: String::new(), signature: String::new() },
                    BlockStart::RedactedThinking { data } => Partial::RedactedThinking(data.clone()),
                    BlockStart::ToolUse { id, name } => {
                        Partial::ToolUse { id: id.clone(), name: name.clone(), json: JsonPieces::default() }
                    }
                };
                self.blocks.insert(*index, Slot { partial, stopped: false });
            }
            StreamEvent::TextDelta { index, text } => match self.open(*index, "text_delta")? {
                Partial::Text(out) => SharedText::make_mut(out).push_str(text),
                other => return Err(mismatch("text_delta", *index, other)),
            },
            StreamEvent::ThinkingDelta { index, thinking } => match self.open(*index, "thinking_delta")? {
                Partial::Thinking { thinking: out, .. } => out.push_str(thinking),
                other => return Err(mismatch("thinking_delta", *index, other)),
            },
            StreamEvent::SignatureDelta { index, signature } => match self.open(*index, "signature_delta")? {
                Partial::Thinking { signature: out, .. } => out.push_str(signature),
                other => return Err(mismatch("signature_delta", *index, other)),
            },
            StreamEvent::ToolInputDelta { index, partial_json } => match self.open(*index, "input_json_delta")? {
                Partial::ToolUse { json, .. } => json.push(partial_json),
                other => return Err(mismatch("input_json_delta", *index, other)),
            },
            StreamEvent::BlockStop { index } => {
                if let Partial::Text(text) = self.open(*index, "content_block_stop")? {
                    // It grew by doubling: a long answer would keep up to as much room again unused.
                    SharedText::make_mut(text).shrink_to_fit();
                }
                if let Some(slot) = self.blocks.get_mut(index) {
                    slot.stopped = true;
                }
            }
            StreamEvent::MessageDelta { stop_reason, usage } => {
                if stop_reason.is_some() {
                    self.stop_reason.clone_from(stop_reason);
                }
                self.usage = *usage;
            }
            StreamEvent::MessageStop => self.complete = true,
        }
        Ok(())
    }

    fn open(&mut self, index: usize, what: &str) -> Result<&mut Partial, ProviderError> {
        match self.blocks.get_mut(&index) {
            Some(Slot { stopped: false, partial }) => Ok(partial),
            Some(Slot { stopped: true, .. }) => {
                Err(malformed(format!("{what} for content block {index} after it stopped")))
            }
            None => Err(malformed(format!("{what} for unknown content block {index}"))),
        }
    }

    /// The text of a text block that has stopped, to share with front ends.
    pub fn text(&self, index: usize) -> Option<SharedText> {
        match self.blocks.get(&index) {
            Some(Slot { stopped: true, partial: Partial::Text(text) }) => Some(text.clone()),
            _ => None,
        }
    }

    /// Whether `MessageStop` has been seen.
    pub fn is_complete(&self) -> bool {
        self.complete
    }

    /// Whether any content block has started, i.e. whether the user may have seen part of this response.
    pub fn has_output(&self) -> bool {
        !self.blocks.is_empty()
    }

    /// The usage reported so far (cumulative for this response).
    pub fn usage(&self) -> Usage {
        self.usage
    }

    /// The message as far as it got. Blocks come out in index order; tool inputs are parsed here.
    pub fn finish(self) -> Assembled {
        let mut invalid_tool_inputs = Vec::new();
        let mut content = Vec::with_capacity(self.blocks.len());
        for slot in self.blocks.into_values() {
            let block = match slot.partial {
                Partial::Text(text) if text.is_empty() => continue,
                Partial::Text(text) => ContentBlock::Text { text },
                Partial::Thinking { thinking, signature } => ContentBlock::Thinking { thinking, signature },
                Partial::RedactedThinking(data) => ContentBlock::RedactedThinking { data },
                Partial::ToolUse { id, name, json } => {
                    let input = match parse_tool_input(json) {
                        Ok(input) => input,
                        Err(why) => {
                            invalid_tool_inputs.push((id.clone(), why));
                            Value::Object(serde_json::Map::new())
                        }
                    };
                    ContentBlock::ToolUse { id, name, input: input.into() }
                }
            };
            content.push(block);
        }
        Assembled {
            message: AssistantMessage {
                id: self.id,
                model: self.model,
                content,
                stop_reason: self.stop_reason,
                usage: self.usage,
            },
            invalid_tool_inputs,
        }
    }
}

/// A tool input's JSON text as it streams in, in pieces of at most [`PIECE_BYTES`]: a large input (a Write of a
/// 300 MB file) is parsed from the pieces, each freed once read, so the text and the parsed value are never held
/// whole at once (the peak was the text, the parser's scratch copy of the content and the value's, 3× the file).
#[derive(Debug, Default)]
struct JsonPieces {
    full: VecDeque<String>,
    last: String,
}

impl JsonPieces {
    fn push(&mut self, text: &str) {
        if !self.last.is_empty() && self.last.len() + text.len() > PIECE_BYTES {
            self.full.push_back(std::mem::take(&mut self.last));
        }
        self.last.push_str(text);
    }

    fn is_blank(&self) -> bool {
        self.full.iter().chain([&self.last]).all(|piece| piece.trim().is_empty())
    }

    /// The start of the text, enough to quote it in an error.
    fn head(&self) -> String {
        let mut head = String::new();
        for piece in self.full.iter().chain([&self.last]) {
            if head.trim_start().len() > QUOTE_CHARS * 4 {
                break;
            }
            head.push_str(piece);
        }
        head
    }

    fn into_reader(mut self) -> PieceReader {
        self.full.push_back(self.last);
        PieceReader { pieces: self.full, at: 0 }
    }
}

/// Reads the pieces in order, dropping each one when it has been read.
struct PieceReader {
    pieces: VecDeque<String>,
    at: usize,
}

impl io::Read for PieceReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while let Some(piece) = self.pieces.front() {
            let rest = &piece.as_bytes()[self.at..];
            if !rest.is_empty() {
                let count = rest.len().min(buf.len());
                buf[..count].copy_from_slice(&rest[..count]);
                self.at += count;
                return Ok(count);
            }
            self.pieces.pop_front();
            self.at = 0;
        }
        Ok(0)
    }
}

fn parse_tool_input(json: JsonPieces) -> Result<Value, String> {
    if json.is_blank() {
        return Ok(Value::Object(serde_json::Map::new()));
    }
    let (parsed, head) = if json.full.is_empty() {
        (serde_json::from_str::<Value>(&json.last), json.last)
    } else {
        let head = json.head();
        (serde_json::from_reader(json.into_reader()), head)
    };
    match parsed {
        Ok(value @ Value::Object(_)) => Ok(value),
        Ok(_) => Err(format!("the tool input is not a JSON object: {}", quote(&head))),
        Err(err) if err.is_eof() => {
            Err(format!("the tool input JSON is incomplete (the reply was probably cut off): {}", quote(&head)))
        }
        Err(err) => Err(format!("the tool input is not valid JSON ({err}): {}", quote(&head))),
    }
}

fn quote(json: &str) -> String {
    let json = json.trim();
    match json.char_indices().nth(QUOTE_CHARS) {
        Some((at, _)) => format!("`{}…`", &json[..at]),
        None => format!("`{json}`"),
    }
}

fn malformed(message: String) -> ProviderError {
    ProviderError::Malformed { message }
}

fn mismatch(what: &str, index: usize, block: &Partial) -> ProviderError {
    malformed(format!("{what} for content block {index}, which is a {} block", block.kind()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn start(index: usize, block: BlockStart) -> StreamEvent {
        StreamEvent::BlockStart { index, block }
    }

    fn tool(id: &str, name: &str) -> BlockStart {
        BlockStart::ToolUse { id: id.into(), name: name.into() }
    }

    fn json_delta(index: usize, partial_json: &str) -> StreamEvent {
        StreamEvent::ToolInputDelta { index, partial_json: partial_json.into() }
    }

    fn assemble(events: &[StreamEvent]) -> Assembled {
        let mut assembler = MessageAssembler::new();
        for event in events {
            assembler.push(event).unwrap();
        }
        assert!(assembler.is_complete());
        assembler.finish()
    }

    #[test]
    fn interleaved_blocks_come_out_in_index_order_with_usage_and_stop_reason() {
        let usage = Usage { input_tokens: 10, cache_read_input_tokens: 5, ..Usage::default() };
        let events = vec![
            StreamEvent::MessageStart { id: "msg_1".into(), model: "m".into(), usage },
            start(0, BlockStart::Thinking),
            StreamEvent::ThinkingDelta { index: 0, thinking: "let me ".into() },
            StreamEvent::ThinkingDelta { index: 0, thinking: "think".into() },
            StreamEvent::SignatureDelta { index: 0, signature: "sig==".into() },
            StreamEvent::BlockStop { index: 0 },
            start(2, tool("t2", "Grep")),
            start(1, BlockStart::Text),
            json_delta(2, ""),
            StreamEvent::TextDelta { index: 1, text: "Hello".into() },
            json_delta(2, "{\"pattern\":"),
            StreamEvent::TextDelta { index: 1, text: " world".into() },
            json_delta(2, "\"fn\"}"),
            start(3, tool("t3", "Glob")),
            StreamEvent::BlockStop { index: 2 },
            StreamEvent::BlockStop { index: 1 },
            StreamEvent::BlockStop { index: 3 },
            StreamEvent::MessageDelta {
                stop_reason: Some(StopReason::ToolUse),
                usage: Usage { output_tokens: 42, ..usage },
            },
            StreamEvent::MessageStop,
        ];
        let done = assemble(&events);
        assert!(done.invalid_tool_inputs.is_empty());
        let message = done.message;
        assert_eq!((message.id.as_str(), message.model.as_str()), ("msg_1", "m"));
        assert_eq!(message.stop_reason, Some(StopReason::ToolUse));
        assert_eq!(
            message.usage,
            Usage { input_tokens: 10, output_tokens: 42, cache_read_input_tokens: 5, ..Usage::default() }
        );
        assert_eq!(
            message.content,
            vec![
                ContentBlock::Thinking { thinking: "let me think".into(), signature: "sig==".into() },
                ContentBlock::text("Hello world"),
                ContentBlock::ToolUse { id: "t2".into(), name: "Grep".into(), input: json!({"pattern":"fn"}).into() },
                ContentBlock::ToolUse { id: "t3".into(), name: "Glob".into(), input: json!({}).into() },
            ]
        );
    }

    #[test]
    fn truncated_or_non_object_tool_input_becomes_empty_and_is_reported() {
        let events = vec![
            start(0, tool("cut", "Write")),
            json_delta(0, "{\"file_path\":\"/tmp/a\",\"content\":\"long"),
            StreamEvent::BlockStop { index: 0 },
            start(1, tool("list", "Read")),
            json_delta(1, "[1,2]"),
            StreamEvent::BlockStop { index: 1 },
            start(2, tool("bad", "Read")),
            json_delta(2, "{nope}"),
            StreamEvent::BlockStop { index: 2 },
            StreamEvent::MessageDelta { stop_reason: Some(StopReason::MaxTokens), usage: Usage::default() },
            StreamEvent::MessageStop,
        ];
        let done = assemble(&events);
        for block in &done.message.content {
            assert!(matches!(block, ContentBlock::ToolUse { input, .. } if *input == json!({}).into()));
        }
        let ids: Vec<&str> = done.invalid_tool_inputs.iter().map(|(id, _)| id.as_str()).collect();
        assert_eq!(ids, ["cut", "list", "bad"]);
        let why = &done.invalid_tool_inputs[0].1;
        assert!(why.contains("incomplete") && why.contains("{\"file_path\":\"/tmp/a\""), "{why}");
        assert!(done.invalid_tool_inputs[1].1.contains("not a JSON object"));
        assert!(done.invalid_tool_inputs[2].1.contains("not valid JSON"));
    }

    #[test]
    fn long_bad_input_is_quoted_briefly() {
        let why = parse_tool_input(pieces(&[&format!("{{\"content\":\"{}", "é".repeat(1000))])).unwrap_err();
        assert!(why.chars().count() < 300, "{why}");
        assert!(why.ends_with("…`"));
    }

    fn pieces(deltas: &[&str]) -> JsonPieces {
        let mut json = JsonPieces::default();
        for delta in deltas {
            json.push(delta);
        }
        json
    }

    /// A 3 MB input streamed in small deltas, with escapes and multi-byte characters across the pieces' edges.
    fn large_input_deltas() -> (Value, Vec<String>) {
        let content: String = (0..120_000).map(|n| format!("line {n}: \"é\" \\ tab\t 😀\n")).collect();
        let input = json!({"file_path": "/tmp/big.rs", "content": content});
        let text = input.to_string();
        let chars: Vec<char> = text.chars().collect();
        let deltas = chars.chunks(997).map(|chunk| chunk.iter().collect()).collect();
        (input, deltas)
    }

    #[test]
    fn a_large_input_is_read_from_pieces_each_freed_when_read() {
        let (input, deltas) = large_input_deltas();
        let json = pieces(&deltas.iter().map(String::as_str).collect::<Vec<_>>());
        assert!(json.full.len() >= 2, "the input is kept in pieces");
        let mut reader = json.into_reader();
        let pieces_at_start = reader.pieces.len();
        io::copy(&mut io::Read::take(&mut reader, PIECE_BYTES as u64 + 1), &mut io::sink()).unwrap();
        assert_eq!(reader.pieces.len(), pieces_at_start - 1, "the first piece is dropped once read");

        let parsed = parse_tool_input(pieces(&deltas.iter().map(String::as_str).collect::<Vec<_>>())).unwrap();
        assert_eq!(parsed, input);
    }

    #[test]
    fn a_large_bad_input_is_reported_with_its_start() {
        let (_, mut deltas) = large_input_deltas();
        let last = deltas.pop().unwrap();
        let cut = parse_tool_input(pieces(&deltas.iter().map(String::as_str).collect::<Vec<_>>())).unwrap_err();
        assert!(cut.starts_with("the tool input JSON is incomplete"), "{cut}");
        assert!(cut.contains("`{\"file_path\":\"/tmp/big.rs\""), "{cut}");
        assert!(cut.chars().count() < 300, "{cut}");

        deltas.extend([last, " trailing".into()]);
        let bad = parse_tool_input(pieces(&deltas.iter().map(String::as_str).collect::<Vec<_>>())).unwrap_err();
        assert!(bad.starts_with("the tool input is not valid JSON"), "{bad}");
        assert!(parse_tool_input(pieces(&[" ", "\n"])).unwrap() == json!({}));
    }

    #[test]
    fn empty_text_is_dropped_and_redacted_thinking_kept() {
        let events = vec![
            start(0, BlockStart::RedactedThinking { data: "opaque".into() }),
            StreamEvent::BlockStop { index: 0 },
            start(1, BlockStart::Text),
            StreamEvent::BlockStop { index: 1 },
            StreamEvent::MessageStop,
        ];
        let done = assemble(&events);
        assert_eq!(done.message.content, vec![ContentBlock::RedactedThinking { data: "opaque".into() }]);
        assert_eq!(done.message.stop_reason, None);
    }

    #[test]
    fn protocol_violations_are_malformed() {
        let mut assembler = MessageAssembler::new();
        assert!(!assembler.has_output());
        let err = assembler.push(&StreamEvent::TextDelta { index: 4, text: "x".into() }).unwrap_err();
        assert!(err.to_string().contains("unknown content block 4"), "{err}");
        assembler.push(&start(0, BlockStart::Text)).unwrap();
        assert!(assembler.has_output());
        assert!(assembler.push(&start(0, BlockStart::Text)).is_err());
        let err = assembler.push(&json_delta(0, "{}")).unwrap_err();
        assert!(err.to_string().contains("which is a text block"), "{err}");
        assembler.push(&StreamEvent::BlockStop { index: 0 }).unwrap();
        assert!(assembler.push(&StreamEvent::TextDelta { index: 0, text: "late".into() }).is_err());
        assert!(assembler.push(&StreamEvent::BlockStop { index: 9 }).is_err());
        assert!(!assembler.is_complete());
    }
}
