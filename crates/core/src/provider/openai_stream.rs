//! The Chat Completions stream, read into the Anthropic event vocabulary: tool-call fragments merged by index
//! whatever order and grouping they come in, repeated names and missing ids tolerated, usage taken from wherever
//! it appears, and a stream that ends without `[DONE]` accepted once a finish reason was seen.

use std::collections::VecDeque;

use serde::Deserialize;
use serde_json::Value;

use super::anthropic::excerpt;
use super::sse::{EventDecoder, Flow, SseEvent};
use super::{BlockStart, ProviderError, StreamEvent};
use crate::conversation::{StopReason, Usage};

#[derive(Deserialize)]
struct Chunk {
    id: Option<String>,
    model: Option<String>,
    choices: Option<Vec<Choice>>,
    usage: Option<WireUsage>,
    error: Option<Value>,
}

#[derive(Deserialize)]
struct Choice {
    #[serde(default)]
    index: u64,
    delta: Option<Delta>,
    finish_reason: Option<String>,
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
struct Delta {
    content: Option<Value>,
    reasoning_content: Option<String>,
    reasoning: Option<String>,
    tool_calls: Option<Vec<Fragment>>,
}

#[derive(Deserialize)]
struct Fragment {
    index: Option<u64>,
    id: Option<String>,
    function: Option<FunctionFragment>,
}

#[derive(Deserialize)]
struct FunctionFragment {
    name: Option<String>,
    arguments: Option<Value>,
}

#[derive(Deserialize)]
struct WireUsage {
    prompt_tokens: Option<u64>,
    completion_tokens: Option<u64>,
    prompt_tokens_details: Option<PromptDetails>,
    /// DeepSeek's name for cached prompt tokens.
    prompt_cache_hit_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct PromptDetails {
    cached_tokens: Option<u64>,
}

impl WireUsage {
    fn to_usage(&self) -> Usage {
        let prompt = self.prompt_tokens.unwrap_or(0);
        let cached = self
            .prompt_tokens_details
            .as_ref()
            .and_then(|d| d.cached_tokens)
            .or(self.prompt_cache_hit_tokens)
            .unwrap_or(0)
            .min(prompt);
        Usage {
            input_tokens: prompt - cached,
            output_tokens: self.completion_tokens.unwrap_or(0),
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: cached,
        }
    }
}

/// A tool call being merged from its fragments.
#[derive(Debug)]
struct ToolSlot {
    /// The server's tool-call index.
    key: u64,
    /// Our block index.
    block: usize,
    id: String,
    name: String,
    /// Arguments received before the block started.
    pending: String,
    /// Whether `BlockStart` was sent. It waits for the first arguments so that a name sent in pieces is whole.
    started: bool,
}

/// Decodes Chat Completions chunks into [`StreamEvent`]s. Public for benchmarks and recorded-stream tests.
#[derive(Debug, Default)]
pub struct OpenAiDecoder {
    started: bool,
    next_block: usize,
    text: Option<usize>,
    reasoning: Option<usize>,
    tools: Vec<ToolSlot>,
    saw_tools: bool,
    finish_reason: Option<String>,
    usage: Usage,
}

type Out = VecDeque<Result<StreamEvent, ProviderError>>;

impl OpenAiDecoder {
    pub fn new() -> Self {
        Self::default()
    }

    fn start_message(&mut self, id: Option<String>, model: Option<String>, out: &mut Out) {
        if !self.started {
            self.started = true;
            out.push_back(Ok(StreamEvent::MessageStart {
                id: id.unwrap_or_default(),
                model: model.unwrap_or_default(),
                usage: Usage::default(),
            }));
        }
    }

    fn open_block(next_block: &mut usize, slot: &mut Option<usize>, start: BlockStart, out: &mut Out) -> usize {
        *slot.get_or_insert_with(|| {
            let index = *next_block;
            *next_block += 1;
            out.push_back(Ok(StreamEvent::BlockStart { index, block: start }));
            index
        })
    }

    fn text(&mut self, text: String, out: &mut Out) {
        if !text.is_empty() {
            let index = Self::open_block(&mut self.next_block, &mut self.text, BlockStart::Text, out);
            out.push_back(Ok(StreamEvent::TextDelta { index, text }));
        }
    }

    fn reasoning(&mut self, thinking: String, out: &mut Out) {
        if !thinking.is_empty() {
            let index = Self::open_block(&mut self.next_block, &mut self.reasoning, BlockStart::Thinking, out);
            out.push_back(Ok(StreamEvent::ThinkingDelta { index, thinking }));
        }
    }

    fn fragment(&mut self, fragment: Fragment, out: &mut Out) {
        self.saw_tools = true;
        let key = match fragment.index {
            Some(key) => key,
            // No index: a new id means a new call; otherwise it continues the latest one.
            None => match (self.tools.last(), &fragment.id) {
                (Some(last), Some(id)) if !last.id.is_empty() && last.id != *id => last.key + 1,
                (Some(last), _) => last.key,
                (None, _) => 0,
            },
        };
        let position = match self.tools.iter().position(|slot| slot.key == key) {
            Some(position) => position,
            None => {
                self.tools.push(ToolSlot {
                    key,
                    block: self.next_block,
                    id: String::new(),
                    name: String::new(),
                    pending: String::new(),
                    started: false,
                });
                self.next_block += 1;
                self.tools.len() - 1
            }
        };
        let slot = &mut self.tools[position];
        let (name, arguments) = match fragment.function {
            Some(function) => (function.name, function.arguments),
            None => (None, None),
        };
        if !slot.started {
            if let Some(id) = fragment.id.filter(|id| !id.is_empty() && slot.id.is_empty()) {
                slot.id = id;
            }
            // llama-cpp-python repeats the whole name in every fragment; others may send it in pieces.
            if let Some(name) = name.filter(|n| !n.is_empty() && *n != slot.name) {
                slot.name.push_str(&name);
            }
        }
        match arguments {
            Some(Value::String(piece)) => slot.pending.push_str(&piece),
            Some(Value::Null) | None => {}
            Some(other) => slot.pending.push_str(&other.to_string()),
        }
        if !slot.pending.is_empty() {
            start_tool(slot, out);
            let partial_json = std::mem::take(&mut slot.pending);
            out.push_back(Ok(StreamEvent::ToolInputDelta { index: slot.block, partial_json }));
        }
    }

    /// Stops every open block, in index order. Content after this opens new blocks.
    fn close_blocks(&mut self, out: &mut Out) {
        let mut open: Vec<usize> = self.text.take().into_iter().chain(self.reasoning.take()).collect();
        for mut slot in self.tools.drain(..) {
            let had_input = !slot.pending.is_empty();
            start_tool(&mut slot, out);
            if had_input {
                out.push_back(Ok(StreamEvent::ToolInputDelta { index: slot.block, partial_json: slot.pending }));
            }
            open.push(slot.block);
        }
        open.sort_unstable();
        for index in open {
            out.push_back(Ok(StreamEvent::BlockStop { index }));
        }
    }

    fn finish(&mut self, out: &mut Out) {
        self.start_message(None, None, out);
        self.close_blocks(out);
        let stop_reason = match self.finish_reason.as_deref() {
            Some("tool_calls" | "function_call") => StopReason::ToolUse,
            // Some local servers say "stop" (or nothing) after tool calls; the calls are what matter.
            Some("stop") | None if self.saw_tools => StopReason::ToolUse,
            Some("stop") | None => StopReason::EndTurn,
            Some("length") => StopReason::MaxTokens,
            Some("content_filter") => StopReason::Refusal,
            Some(other) => StopReason::Other(other.to_owned()),
        };
        out.push_back(Ok(StreamEvent::MessageDelta { stop_reason: Some(stop_reason), usage: self.usage }));
        out.push_back(Ok(StreamEvent::MessageStop));
    }

    fn chunk(&mut self, chunk: Chunk, out: &mut Out) {
        self.start_message(chunk.id, chunk.model, out);
        if let Some(usage) = &chunk.usage {
            self.usage = usage.to_usage();
        }
        for choice in chunk.choices.unwrap_or_default() {
            if choice.index != 0 {
                continue;
            }
            if let Some(usage) = &choice.usage {
                self.usage = usage.to_usage();
            }
            if let Some(delta) = choice.delta {
                if let Some(thinking) = delta.reasoning_content.or(delta.reasoning) {
                    self.reasoning(thinking, out);
                }
                match delta.content {
                    Some(Value::String(text)) => self.text(text, out),
                    Some(Value::Array(parts)) => {
                        for part in parts {
                            if let Some(Value::String(text)) = part.get("text") {
                                self.text(text.clone(), out);
                            }
                        }
                    }
                    _ => {}
                }
                for fragment in delta.tool_calls.unwrap_or_default() {
                    self.fragment(fragment, out);
                }
            }
            if let Some(reason) = choice.finish_reason.filter(|r| !r.is_empty()) {
                self.finish_reason = Some(reason);
                self.close_blocks(out);
            }
        }
    }
}

fn start_tool(slot: &mut ToolSlot, out: &mut Out) {
    if slot.started {
        return;
    }
    slot.started = true;
    if slot.id.is_empty() {
        slot.id = format!("call_{:016x}", fastrand::u64(..));
    }
    let block = BlockStart::ToolUse { id: slot.id.clone(), name: slot.name.clone() };
    out.push_back(Ok(StreamEvent::BlockStart { index: slot.block, block }));
}

fn stream_error(error: &Value) -> ProviderError {
    let field = |name: &str| match error.get(name) {
        Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    };
    let message = match error {
        Value::String(s) => s.clone(),
        _ => field("message").unwrap_or_else(|| excerpt(&error.to_string())),
    };
    let error_type = field("type").or_else(|| field("code")).unwrap_or_else(|| "error".to_owned());
    ProviderError::StreamError { error_type, message }
}

impl EventDecoder for OpenAiDecoder {
    fn event(&mut self, event: SseEvent<'_>, out: &mut Out) -> Flow {
        let data = event.data.trim();
        if data.is_empty() {
            return Flow::Continue;
        }
        if data == "[DONE]" {
            self.finish(out);
            return Flow::Done;
        }
        if event.event == "error" {
            let error = serde_json::from_str::<Value>(data).unwrap_or_else(|_| Value::String(excerpt(data)));
            out.push_back(Err(stream_error(error.get("error").unwrap_or(&error))));
            return Flow::Done;
        }
        match serde_json::from_str::<Chunk>(data) {
            Ok(Chunk { error: Some(error), .. }) if !error.is_null() => {
                out.push_back(Err(stream_error(&error)));
                Flow::Done
            }
            Ok(chunk) => {
                self.chunk(chunk, out);
                Flow::Continue
            }
            Err(err) => {
                let message = format!("could not parse a chat completion chunk ({err}): {}", excerpt(data));
                out.push_back(Err(ProviderError::Malformed { message }));
                Flow::Done
            }
        }
    }

    /// A whole chat completion is read as one chunk whose choices carry their `message` as the `delta`; an
    /// error document is the error it would be in a stream.
    fn document(&mut self, body: &str, out: &mut Out) {
        let mut document = match serde_json::from_str::<Value>(body) {
            Ok(document @ Value::Object(_)) => document,
            Ok(_) | Err(_) => {
                let message = format!("the answer document is not a JSON object: {}", excerpt(body));
                out.push_back(Err(ProviderError::Malformed { message }));
                return;
            }
        };
        if document.get("choices").is_none() && document.get("error").is_none_or(Value::is_null) {
            let message = format!("the answer document has neither choices nor an error: {}", excerpt(body));
            out.push_back(Err(ProviderError::Malformed { message }));
            return;
        }
        for choice in document.get_mut("choices").and_then(Value::as_array_mut).into_iter().flatten() {
            let Some(choice) = choice.as_object_mut() else { continue };
            let Some(mut message) = choice.remove("message") else { continue };
            // A whole message's tool calls have no index; a stream's fragments do.
            for (index, call) in
                message.get_mut("tool_calls").and_then(Value::as_array_mut).into_iter().flatten().enumerate()
            {
                if let Some(call) = call.as_object_mut() {
                    call.entry("index").or_insert(Value::from(index));
                }
            }
            choice.insert("delta".to_owned(), message);
        }
        if self.event(SseEvent { event: "message", data: &document.to_string() }, out) == Flow::Continue {
            self.finish(out);
        }
    }

    fn end(&mut self, out: &mut Out) {
        if self.finish_reason.is_some() {
            self.finish(out);
        } else {
            out.push_back(Err(ProviderError::Disconnected {
                message: "the response ended before a finish reason or [DONE]".to_owned(),
            }));
        }
    }
}
