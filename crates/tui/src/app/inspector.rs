//! `/inspect`: the API inspector in the app. A list of the session's model requests (and its subagents'), and
//! for the selected one its request (URL, headers, body), its response (status, timings, usage, the text and
//! tool calls it streamed, every event), or what changed since the previous request — the cached prefix staying
//! put, what a compaction sent. `c` copies the request as a curl command.

use ratatui::crossterm::event::{KeyCode, KeyEvent};
use serde_json::Value;
use tandem_core::inspect::Exchange;
use tandem_protocol::{Op, ReplayAnswer};

use super::{App, Effect};

/// The open inspector.
#[derive(Clone, Debug, Default)]
pub struct Inspector {
    /// The requests, labelled with the subagent that made them ("" for the session's own).
    pub requests: Vec<(String, Exchange)>,
    pub selected: usize,
    /// The selected request's detail, while open.
    pub detail: Option<Detail>,
    /// Answers to replays of requests (by number), newest last; shown in the request's response tab.
    pub replays: Vec<ReplayAnswer>,
    /// Replays sent and not answered yet.
    pub waiting: Vec<u64>,
    /// A replay was recorded since the list was read: read it again (the replay is a request of its own).
    pub stale: bool,
    /// The request whose body is open in `$EDITOR`, to replay as edited.
    pub editing: Option<u64>,
}

/// The detail view of one request.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Detail {
    pub tab: Tab,
    /// The first line shown.
    pub scroll: usize,
    /// The request body's objects and arrays at this depth or deeper are folded (`f` cycles: none, 2, 3).
    pub fold: Option<usize>,
    /// The response's events are laid out as pretty JSON instead of one line an event (`f` there).
    pub events_laid_out: bool,
    /// What `/` searches for; matching lines are highlighted, `n`/`N` go to the next/previous one.
    pub query: String,
    /// The query is being typed.
    pub typing: bool,
}

/// What the detail view shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Tab {
    #[default]
    Request,
    Response,
    Changes,
}

impl Tab {
    pub const ALL: [Tab; 3] = [Tab::Request, Tab::Response, Tab::Changes];

    pub fn label(self) -> &'static str {
        match self {
            Tab::Request => "request",
            Tab::Response => "response",
            Tab::Changes => "changes",
        }
    }
}

/// How a detail line is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineKind {
    Heading,
    Plain,
    /// A line of pretty JSON (coloured by its tokens).
    Json,
    Added,
    Removed,
    Dim,
}

impl App {
    /// `/inspect`: asks for the session's recorded requests.
    pub(crate) fn open_inspector(&mut self) -> Vec<Effect> {
        vec![Effect::ListRequests]
    }

    /// The recorded requests arrived: the list opens on the newest.
    pub(crate) fn show_requests(&mut self, requests: Vec<(String, Exchange)>) {
        if requests.is_empty() {
            self.flash("no model requests recorded in this session yet");
            return;
        }
        // The list read again while it is open (a replay was recorded): the same request stays open.
        if let Some(open) = &mut self.inspector {
            let id = open.requests.get(open.selected).map(|(_, exchange)| exchange.id);
            open.selected = requests.iter().position(|(_, exchange)| Some(exchange.id) == id).unwrap_or(open.selected);
            open.selected = open.selected.min(requests.len() - 1);
            open.requests = requests;
            return;
        }
        let selected = requests.len() - 1;
        self.inspector = Some(Inspector {
            requests,
            selected,
            detail: None,
            replays: Vec::new(),
            waiting: Vec::new(),
            stale: false,
            editing: None,
        });
    }

    /// A replay's answer: kept for the response tab of its request.
    pub(crate) fn on_replayed(&mut self, answer: ReplayAnswer) {
        let request = answer.request;
        let Some(inspector) = &mut self.inspector else { return };
        if let Some(at) = inspector.waiting.iter().position(|waiting| *waiting == request) {
            inspector.waiting.remove(at);
        }
        inspector.replays.push(answer);
        inspector.stale = true;
        self.flash(format!("request {request} replayed: its answer is in the response tab"));
    }

    /// `r`: the selected request again, as recorded; `e`: as edited in `$EDITOR` first.
    fn replay_selected(&mut self, edit: bool) -> Vec<Effect> {
        let Some(inspector) = &mut self.inspector else { return Vec::new() };
        let (_, exchange) = &inspector.requests[inspector.selected];
        let id = exchange.id;
        let Some(body) = exchange.request_body.clone() else {
            self.flash(format!("request {id}'s body is not kept whole: it can't be sent again"));
            return Vec::new();
        };
        if edit {
            inspector.editing = Some(id);
            let path = std::env::temp_dir().join(format!("tandem-request-{id}-{}.json", std::process::id()));
            return vec![Effect::OpenEditor { path, content: serde_json::to_string_pretty(&body).unwrap_or_default() }];
        }
        self.send_replay(id, body, false)
    }

    fn send_replay(&mut self, id: u64, body: Value, edited: bool) -> Vec<Effect> {
        let Some(inspector) = &mut self.inspector else { return Vec::new() };
        let Some((_, exchange)) = inspector.requests.iter().find(|(_, exchange)| exchange.id == id) else {
            return Vec::new();
        };
        let headers = exchange.request_headers.clone();
        inspector.waiting.push(id);
        if let Some(detail) = &mut inspector.detail {
            detail.tab = Tab::Response;
            detail.scroll = 0;
        }
        self.flash(format!("replaying request {id}: no tool runs, nothing enters the conversation"));
        vec![Effect::Op(Op::Replay { request: id, body, headers, edited })]
    }

    /// The edited body came back from `$EDITOR` (for a replay), when the inspector asked for it.
    pub(crate) fn on_replay_edited(&mut self, result: Result<String, String>) -> Option<Vec<Effect>> {
        let id = self.inspector.as_mut()?.editing.take()?;
        Some(
            match result.map_err(|why| format!("the editor failed: {why}")).and_then(|text| {
                serde_json::from_str::<Value>(&text)
                    .map_err(|err| format!("the edited request is not JSON ({err}); nothing was sent"))
            }) {
                Ok(body) => self.send_replay(id, body, true),
                Err(why) => {
                    self.flash(why);
                    Vec::new()
                }
            },
        )
    }

    #[expect(
        clippy::too_many_lines,
        reason = "one match over the inspector's keys (list, body, replay editing), as the other views' key handlers"
    )]
    pub(crate) fn on_inspector_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        let page = (self.size.1 as usize).saturating_sub(6).max(1);
        let Some(inspector) = &mut self.inspector else { return Vec::new() };
        let count = inspector.requests.len();
        // While a search is typed, every letter is part of it.
        let typing = inspector.detail.as_ref().is_some_and(|detail| detail.typing);
        if let KeyCode::Char(letter @ ('r' | 'e')) = key.code
            && !typing
        {
            return self.replay_selected(letter == 'e');
        }
        if let KeyCode::Char(letter @ ('c' | 'y')) = key.code
            && !typing
        {
            let (_, exchange) = &inspector.requests[inspector.selected];
            let id = exchange.id;
            let exported = match letter {
                'c' => crate::inspect_cli::curl(exchange).map(|command| (command, "a curl command")),
                _ => serde_json::to_string_pretty(exchange)
                    .map(|json| (json, "JSON"))
                    .map_err(|err| format!("request {id} could not be written as JSON: {err}")),
            };
            return match exported {
                Ok((text, what)) => {
                    self.flash(format!("request {id} copied as {what}"));
                    vec![Effect::Copy(text)]
                }
                Err(why) => {
                    self.flash(why);
                    Vec::new()
                }
            };
        }
        match &mut inspector.detail {
            None => match key.code {
                KeyCode::Esc | KeyCode::Char('q') => self.inspector = None,
                KeyCode::Up | KeyCode::Char('k') => inspector.selected = inspector.selected.saturating_sub(1),
                KeyCode::Down | KeyCode::Char('j') => inspector.selected = (inspector.selected + 1).min(count - 1),
                KeyCode::Home => inspector.selected = 0,
                KeyCode::End => inspector.selected = count - 1,
                KeyCode::Enter => inspector.detail = Some(Detail::default()),
                _ => {}
            },
            Some(detail) if detail.typing => match key.code {
                KeyCode::Enter => {
                    detail.typing = false;
                    return self.jump_to_match(true, true);
                }
                KeyCode::Esc => {
                    detail.typing = false;
                    detail.query.clear();
                }
                KeyCode::Backspace => {
                    detail.query.pop();
                }
                KeyCode::Char(c) => detail.query.push(c),
                _ => {}
            },
            Some(detail) => match key.code {
                KeyCode::Esc if !detail.query.is_empty() => detail.query.clear(),
                KeyCode::Esc | KeyCode::Char('q') => inspector.detail = None,
                KeyCode::Tab | KeyCode::Right => {
                    let next = Tab::ALL.iter().position(|tab| *tab == detail.tab).map_or(0, |at| (at + 1) % 3);
                    detail.tab = Tab::ALL[next];
                    detail.scroll = 0;
                }
                KeyCode::BackTab | KeyCode::Left => {
                    let next = Tab::ALL.iter().position(|tab| *tab == detail.tab).map_or(0, |at| (at + 2) % 3);
                    detail.tab = Tab::ALL[next];
                    detail.scroll = 0;
                }
                KeyCode::Up | KeyCode::Char('k') => detail.scroll = detail.scroll.saturating_sub(1),
                KeyCode::Down | KeyCode::Char('j') => detail.scroll += 1,
                KeyCode::PageUp => detail.scroll = detail.scroll.saturating_sub(page),
                KeyCode::PageDown | KeyCode::Char(' ') => detail.scroll += page,
                KeyCode::Home => detail.scroll = 0,
                // Past the end is clamped when drawn.
                KeyCode::End => detail.scroll = usize::MAX / 2,
                KeyCode::Char('f') if detail.tab == Tab::Response => {
                    detail.events_laid_out = !detail.events_laid_out;
                    detail.scroll = 0;
                    // A "match N of M" said before counted other rows.
                    self.status.notice = None;
                }
                KeyCode::Char('f') => {
                    self.status.notice = None;
                    detail.fold = match detail.fold {
                        None => Some(2),
                        Some(2) => Some(3),
                        _ => None,
                    };
                    detail.scroll = 0;
                }
                KeyCode::Char('/') => {
                    detail.typing = true;
                    detail.query.clear();
                }
                KeyCode::Char('n') if !detail.query.is_empty() => return self.jump_to_match(true, false),
                KeyCode::Char('N') if !detail.query.is_empty() => return self.jump_to_match(false, false),
                KeyCode::Char(']') if inspector.selected + 1 < count => {
                    inspector.selected += 1;
                    detail.scroll = 0;
                }
                KeyCode::Char('[') if inspector.selected > 0 => {
                    inspector.selected -= 1;
                    detail.scroll = 0;
                }
                _ => {}
            },
        }
        Vec::new()
    }
}

impl App {
    /// Scrolls to the next (or previous) line matching the search, from the top line shown (`here`: that line
    /// counts too); says so when nothing matches.
    fn jump_to_match(&mut self, forward: bool, here: bool) -> Vec<Effect> {
        let Some(inspector) = &mut self.inspector else { return Vec::new() };
        let Some(mut detail) = inspector.detail.clone() else { return Vec::new() };
        // The detail's text is the terminal's width less the frame.
        let width = (self.size.0 as usize).saturating_sub(2);
        let mut matches = inspector.matches(width);
        let mut unfolded = false;
        // What is folded away is searched too: the body opens to show it.
        if matches.is_empty() && detail.tab == Tab::Request && detail.fold.is_some() {
            let folded = detail.fold.take();
            inspector.detail = Some(detail.clone());
            matches = inspector.matches(width);
            unfolded = !matches.is_empty();
            if !unfolded {
                detail.fold = folded;
                inspector.detail = Some(detail.clone());
            }
        }
        let found = if forward {
            let from = if here { detail.scroll } else { detail.scroll + 1 };
            matches.iter().find(|line| **line >= from).or(matches.first())
        } else {
            matches.iter().rev().find(|line| **line < detail.scroll).or(matches.last())
        };
        match found {
            Some(line) => {
                if let Some(open) = &mut inspector.detail {
                    open.scroll = *line;
                }
                let at = matches.iter().position(|other| other == line).unwrap_or(0) + 1;
                let opened = if unfolded { " (unfolded to show it)" } else { "" };
                self.flash(format!("match {at} of {}{opened}", matches.len()));
            }
            None => self.flash(format!("no line has {:?}", detail.query)),
        }
        Vec::new()
    }
}

impl Inspector {
    /// The rows of the open detail, at `width`, that hold its query (case-insensitive).
    pub fn matches(&self, width: usize) -> Vec<usize> {
        let Some(detail) = &self.detail else { return Vec::new() };
        if detail.query.is_empty() {
            return Vec::new();
        }
        let query = detail.query.to_lowercase();
        self.detail_rows(detail.tab, width)
            .iter()
            .enumerate()
            .filter(|(_, (_, line))| line.to_lowercase().contains(&query))
            .map(|(index, _)| index)
            .collect()
    }

    /// [`Inspector::detail_lines`] wrapped to `width` columns: nothing is cut off (a JSON string holding a whole
    /// system prompt reads to its end). A JSON line's continuation rows are plain text.
    pub fn detail_rows(&self, tab: Tab, width: usize) -> Vec<(LineKind, String)> {
        let width = width.max(8);
        let mut rows = Vec::new();
        for (kind, line) in self.detail_lines(tab) {
            let chars: Vec<char> = line.chars().collect();
            if chars.len() <= width {
                rows.push((kind, line));
                continue;
            }
            for (index, piece) in wrap_at_words(&chars, width).into_iter().enumerate() {
                let kind = if index > 0 && kind == LineKind::Json { LineKind::Plain } else { kind };
                rows.push((kind, piece.iter().collect()));
            }
        }
        rows
    }

    /// The lines of the selected request's detail in `tab`.
    pub fn detail_lines(&self, tab: Tab) -> Vec<(LineKind, String)> {
        let (agent, exchange) = &self.requests[self.selected];
        match tab {
            Tab::Request => request_lines(exchange, self.detail.as_ref().and_then(|detail| detail.fold)),
            Tab::Response => {
                let laid_out = self.detail.as_ref().is_some_and(|detail| detail.events_laid_out);
                // Replays first, newest at the top, then the recorded response under one heading.
                let mut lines = Vec::new();
                if self.waiting.contains(&exchange.id) {
                    lines.push((LineKind::Dim, "Replaying… (the answer appears here)".to_owned()));
                }
                let replays: Vec<&ReplayAnswer> =
                    self.replays.iter().filter(|answer| answer.request == exchange.id).collect();
                for (index, replay) in replays.iter().enumerate().rev() {
                    lines.extend(replay_lines(replay, index + 1));
                    lines.push((LineKind::Plain, String::new()));
                }
                if !lines.is_empty() {
                    lines.push((LineKind::Heading, "recorded:".to_owned()));
                }
                lines.extend(response_lines(exchange, laid_out));
                lines
            }
            Tab::Changes => {
                let previous = self.requests[..self.selected].iter().rev().find(|(other, _)| other == agent);
                match previous {
                    Some((_, before)) => change_lines(before, exchange),
                    None => vec![(LineKind::Dim, "The first request here: nothing to compare it with.".to_owned())],
                }
            }
        }
    }
}

/// `chars` cut into rows of at most `width`, after a space where one falls in a row's last two thirds (so a word,
/// and a search for it, is not split), else at `width`.
fn wrap_at_words(chars: &[char], width: usize) -> Vec<&[char]> {
    let mut rows = Vec::new();
    let mut rest = chars;
    while rest.len() > width {
        let cut =
            rest[..width].iter().rposition(|ch| *ch == ' ').filter(|at| *at >= width / 3).map_or(width, |at| at + 1);
        rows.push(&rest[..cut]);
        rest = &rest[cut..];
    }
    rows.push(rest);
    rows
}

fn pretty_body(exchange: &Exchange) -> String {
    match (&exchange.request_body, &exchange.request_body_start) {
        (Some(body), _) => serde_json::to_string_pretty(body).unwrap_or_default(),
        (None, Some(start)) => {
            format!("{start}\n… (the body was {} bytes; only its start is kept)", exchange.request_bytes)
        }
        (None, None) => String::new(),
    }
}

fn request_lines(exchange: &Exchange, fold: Option<usize>) -> Vec<(LineKind, String)> {
    let mut lines = vec![(LineKind::Heading, format!("{} {}", exchange.method, exchange.url))];
    lines.extend(exchange.request_headers.iter().map(|(name, value)| (LineKind::Dim, format!("{name}: {value}"))));
    lines.push((LineKind::Dim, format!("({} bytes)", exchange.request_bytes)));
    lines.push((LineKind::Plain, String::new()));
    match &exchange.request_body {
        Some(body) => {
            lines.extend(super::inspector_json::json_lines(body, fold).into_iter().map(|line| (LineKind::Json, line)))
        }
        None => lines.extend(pretty_body(exchange).lines().map(|line| (LineKind::Plain, line.to_owned()))),
    }
    lines
}

/// A replay's answer (the `number`th of its request), above the recorded one.
fn replay_lines(answer: &ReplayAnswer, number: usize) -> Vec<(LineKind, String)> {
    let edited = if answer.edited { ", edited" } else { "" };
    let mut lines = vec![(LineKind::Heading, format!("replay {number}{edited} (tools not run):"))];
    if let Some(error) = &answer.error {
        lines.push((LineKind::Removed, format!("error: {error}")));
    }
    if let Some(usage) = &answer.usage {
        lines.push((
            LineKind::Dim,
            format!(
                "input {} · cache read {} · output {}",
                usage.input_tokens, usage.cache_read_input_tokens, usage.output_tokens
            ),
        ));
    }
    lines.extend(answer.text.lines().map(|line| (LineKind::Added, line.to_owned())));
    lines.extend(answer.tool_calls.iter().map(|call| (LineKind::Added, format!("tool call (not run): {call}"))));
    lines
}

/// The response: its status and timings, what it said, and its events — one line each (as they streamed), or
/// `laid_out` as pretty JSON.
fn response_lines(exchange: &Exchange, laid_out: bool) -> Vec<(LineKind, String)> {
    let ms = |value: Option<u64>| value.map_or("-".to_owned(), |ms| format!("{ms} ms"));
    let status = exchange.status.map_or("no response".to_owned(), |status| format!("HTTP {status}"));
    let mut lines = vec![(
        LineKind::Heading,
        format!(
            "{status} · first event {} · first token {} · total {} ms · attempt {}",
            ms(exchange.first_event_ms),
            ms(exchange.first_token_ms),
            exchange.total_ms,
            exchange.attempt
        ),
    )];
    if let Some(error) = &exchange.error {
        lines.push((LineKind::Removed, format!("error: {error}")));
    }
    lines.extend(exchange.response_headers.iter().map(|(name, value)| (LineKind::Dim, format!("{name}: {value}"))));
    if let Some(usage) = &exchange.usage {
        let cost = exchange.cost_usd().map_or("cost unknown".to_owned(), |cost| format!("${cost:.4}"));
        lines.push((
            LineKind::Dim,
            format!(
                "input {} · cache read {} · cache write {} · output {} · {cost}",
                usage.input_tokens,
                usage.cache_read_input_tokens,
                usage.cache_creation_input_tokens,
                usage.output_tokens
            ),
        ));
    }
    let (text, tools) = streamed(&exchange.events);
    if !text.is_empty() {
        lines.push((LineKind::Plain, String::new()));
        lines.push((LineKind::Heading, "text".to_owned()));
        lines.extend(text.lines().map(|line| (LineKind::Plain, line.to_owned())));
    }
    for (name, input) in tools {
        lines.push((LineKind::Plain, String::new()));
        lines.push((LineKind::Heading, format!("tool call: {name}")));
        lines.extend(input.lines().map(|line| (LineKind::Plain, line.to_owned())));
    }
    lines.push((LineKind::Plain, String::new()));
    let omitted =
        if exchange.events_omitted > 0 { format!(", {} left out", exchange.events_omitted) } else { String::new() };
    lines.push((LineKind::Heading, format!("events ({}{omitted})", exchange.events.len())));
    for event in &exchange.events {
        if laid_out {
            let event = super::inspector_json::json_lines(event, None);
            lines.extend(event.into_iter().map(|line| (LineKind::Json, line)));
        } else {
            lines.push((LineKind::Json, event.to_string()));
        }
    }
    lines
}

/// The text a response streamed, and its tool calls with their inputs (pretty when they parse).
fn streamed(events: &[Value]) -> (String, Vec<(String, String)>) {
    let mut text = String::new();
    let mut tools: Vec<(u64, String, String)> = Vec::new();
    for event in events {
        match event["type"].as_str() {
            Some("content_block_start") if event["content_block"]["type"] == "tool_use" => {
                let name = event["content_block"]["name"].as_str().unwrap_or_default().to_owned();
                tools.push((event["index"].as_u64().unwrap_or_default(), name, String::new()));
            }
            Some("content_block_delta") => {
                let delta = &event["delta"];
                if let Some(piece) = delta["text"].as_str() {
                    text.push_str(piece);
                } else if let Some(piece) = delta["partial_json"].as_str() {
                    let index = event["index"].as_u64().unwrap_or_default();
                    if let Some(tool) = tools.iter_mut().find(|(at, ..)| *at == index) {
                        tool.2.push_str(piece);
                    }
                }
            }
            _ => {}
        }
    }
    let tools = tools
        .into_iter()
        .map(|(_, name, input)| {
            let pretty = serde_json::from_str::<Value>(&input)
                .ok()
                .and_then(|value| serde_json::to_string_pretty(&value).ok())
                .unwrap_or(input);
            (name, pretty)
        })
        .collect();
    (text, tools)
}

/// The request's body against the previous one's, as changed lines with two lines of context around each.
fn change_lines(before: &Exchange, after: &Exchange) -> Vec<(LineKind, String)> {
    let (old, new) = (pretty_body(before), pretty_body(after));
    let diff = similar::TextDiff::from_lines(&old, &new);
    let mut lines = vec![(LineKind::Heading, format!("compared with request {}", before.id))];
    let mut changed = false;
    for group in diff.grouped_ops(2) {
        changed = true;
        lines.push((LineKind::Dim, "…".to_owned()));
        for op in group {
            for change in diff.iter_changes(&op) {
                let text = change.value().trim_end_matches('\n');
                let line = match change.tag() {
                    similar::ChangeTag::Insert => (LineKind::Added, format!("+ {text}")),
                    similar::ChangeTag::Delete => (LineKind::Removed, format!("- {text}")),
                    similar::ChangeTag::Equal => (LineKind::Dim, format!("  {text}")),
                };
                lines.push(line);
            }
        }
    }
    if !changed {
        lines.push((LineKind::Dim, "The body is the same as the previous request's.".to_owned()));
    }
    lines
}
