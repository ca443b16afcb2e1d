//! Frame time of the full screen with a 10,000-cell transcript at 200×60, drawn through ratatui's
//! `Terminal<TestBackend>` exactly as the runtime draws: `terminal.draw(|f| ui::frame::render(&app, f, now))`.
//!
//! The transcript is built by feeding the app the core events a real session produces (user prompts, streamed
//! answers with a code block, Read/Bash tool calls that finish), so every cell goes through `App::update`.
//! Measured, after one draw that fills the layout cache:
//!
//! - `frame/steady_bottom`: nothing changed, following the bottom (the spinner/animation frame);
//! - `frame/streaming_delta`: a ~4-character text delta is appended before each frame, so exactly one cell
//!   (the streaming answer) is laid out again;
//! - `frame/scrolled_middle`: scrolled halfway up, nothing changed.
//!
//! Besides criterion's mean/median, `main` times 1,000 frames of each kind with `Instant` and prints
//! p50/p99/max (the target is p99 ≤ 4 ms), the first (cold) layout of all cells, and a re-layout after a
//! resize (every cell again, as on a terminal resize).
//!
//! Run: `cargo bench -p tandem-tui --bench frame`. Prints figures; asserts nothing about time.

// Test code: a panic is how a failure is reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::Criterion;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::{Value, json};
use tandem_core::conversation::{AssistantMessage, ContentBlock, StopReason, Usage};
use tandem_core::protocol::{Event, ToolCallStatus};
use tandem_core::provider::{BlockStart, StreamEvent};
use tandem_tui::app::{App, Input};
use tandem_tui::ui::frame::render;

mod common;
use common::{measuring, ms, pieces, turn_finished};

const WIDTH: u16 = 200;
const HEIGHT: u16 = 60;
/// Cells in the transcript: 1,000 × (tool turn + plain turn + tool turn) = 1,000 × (4 + 2 + 4).
const CELLS: usize = 10_000;
/// Frames timed one by one for the percentiles.
const TIMED_FRAMES: usize = 1_000;

fn user_prompt(turn: usize) -> String {
    format!("Fix the failing test #{turn} in the parser module and explain what was wrong, briefly.")
}

/// A ~1.5 KB Markdown answer: paragraphs, inline code, emphasis, a Rust code block and a list.
fn answer(turn: usize) -> String {
    format!(
        "I looked at `src/parser/module_{turn}.rs` and found the problem: the parser keeps the **previous** token \
         when the input ends in a comment, so the last expression is evaluated twice and the test sees the \
         doubled side effect.\n\n\
         Here is the fix — drop the stale token before returning, and make `finish` idempotent:\n\n\
         ```rust\n\
         fn finish(&mut self) -> Result<Expr, ParseError> {{\n    \
             // A trailing comment leaves the last token pending; it was already consumed.\n    \
             self.pending.take();\n    \
             let expr = self.parse_expr({turn})?;\n    \
             self.finished = true;\n    \
             Ok(expr)\n\
         }}\n\
         ```\n\n\
         After the change:\n\n\
         - `cargo test -p parser` passes (128 tests, 0 failures),\n\
         - the new regression test `trailing_comment_{turn}` covers the case,\n\
         - nothing else calls `finish` twice, so no other behaviour changes.\n\n\
         Let me know if you want me to *also* simplify the error type: it has grown three variants that mean \
         the same thing, and merging them would make the match in `report.rs` about half as long. I left it \
         alone for now so this change stays small and easy to review.\n"
    )
}

fn core(app: &mut App, event: Event, now: Instant) {
    app.update(Input::Core(Box::new(event.into())), now);
}

/// A provider event as core hands it on: an item event (the index stands for the item's id).
fn stream(app: &mut App, event: StreamEvent, now: Instant) {
    let id = |index: usize| format!("item_{index}");
    let event = match event {
        StreamEvent::BlockStart { index, block: BlockStart::Text } => Event::MessageStarted { item_id: id(index) },
        StreamEvent::BlockStart { block: BlockStart::ToolUse { id, name }, .. } => {
            Event::ToolInputStarted { call_id: id, name }
        }
        StreamEvent::TextDelta { index, text } => Event::MessageDelta { item_id: id(index), text },
        StreamEvent::BlockStop { index } => Event::MessageCompleted {
            item_id: id(index),
            outcome: tandem_core::protocol::ItemOutcome::Completed,
            text: None,
        },
        _ => return,
    };
    core(app, event, now);
}

/// Streams one text block (in deltas of `chars` characters) and closes it.
fn stream_text(app: &mut App, index: usize, text: &str, chars: usize, now: Instant) {
    stream(app, StreamEvent::BlockStart { index, block: BlockStart::Text }, now);
    for piece in pieces(text, chars) {
        stream(app, StreamEvent::TextDelta { index, text: piece }, now);
    }
    stream(app, StreamEvent::BlockStop { index }, now);
}

fn message(turn: usize, content: Vec<ContentBlock>, stop_reason: StopReason) -> Event {
    Event::AssistantMessage(AssistantMessage {
        id: format!("msg_{turn}"),
        model: "claude-sonnet-4-5".into(),
        content,
        stop_reason: Some(stop_reason),
        usage: Usage { input_tokens: 1200, output_tokens: 400, ..Usage::default() },
    })
}

/// A tool call the model makes before answering: (name, input, output).
fn tool_call(turn: usize, bash: bool) -> (&'static str, Value, String) {
    if bash {
        let output = (0..8)
            .map(|line| format!("test parser::tests::case_{turn}_{line} ... ok\n"))
            .chain(["\ntest result: ok. 128 passed; 0 failed; 0 ignored\n".to_owned()])
            .collect();
        ("Bash", json!({ "command": "cargo test -p parser", "description": "Run the parser tests" }), output)
    } else {
        let output = (1..=12)
            .map(|line| format!("{line:>6}\u{2192}    let value_{line} = self.next_token()?; // module {turn}\n"))
            .collect();
        ("Read", json!({ "file_path": format!("src/parser/module_{turn}.rs") }), output)
    }
}

/// One user turn: prompt, (optionally) a streamed preamble + a finished tool call, then the streamed answer.
/// Adds 4 cells with a tool call, 2 without.
fn feed_turn(app: &mut App, turn: usize, tool: Option<bool>, now: Instant) {
    app.submit(user_prompt(turn), now);
    core(app, Event::RequestStarted { round: 1 }, now);
    let mut round = 1;
    if let Some(bash) = tool {
        let (name, input, output) = tool_call(turn, bash);
        let call_id = format!("toolu_{turn}");
        let preamble = "I'll look at the code first.";
        stream_text(app, 0, preamble, 16, now);
        stream(
            app,
            StreamEvent::BlockStart { index: 1, block: BlockStart::ToolUse { id: call_id.clone(), name: name.into() } },
            now,
        );
        stream(app, StreamEvent::BlockStop { index: 1 }, now);
        let content = vec![
            ContentBlock::text(preamble),
            ContentBlock::ToolUse { id: call_id.clone(), name: name.into(), input: input.clone().into() },
        ];
        core(app, message(turn, content, StopReason::ToolUse), now);
        let context = tandem_core::tools::ToolContext::new(std::path::PathBuf::from("/work/project"));
        let tools = tandem_core::tools::ToolRegistry::builtin();
        let display = tools.describe(name, &input, &context);
        let view = tools.result_view(name, &input, &output);
        let display = tandem_core::tools::CallDisplay { risk: tandem_core::tools::Risk::Low, ..display };
        core(
            app,
            Event::ToolCallStarted { call_id: call_id.clone(), name: name.into(), input: input.into(), display },
            now,
        );
        let finished = Event::ToolCallFinished {
            call_id,
            content: output,
            is_error: false,
            status: ToolCallStatus::Completed,
            duration_ms: Some(42),
            structured: None,
            view,
        };
        core(app, finished, now);
        round = 2;
        core(app, Event::RequestStarted { round }, now);
    }
    let text = answer(turn);
    stream_text(app, 0, &text, 64, now);
    core(app, message(turn * 10 + round as usize, vec![ContentBlock::text(text)], StopReason::EndTurn), now);
    core(app, turn_finished(), now);
}

/// An app whose transcript holds `CELLS` cells, built through `App::update`.
fn build_app() -> App {
    let mut app = common::new_app(WIDTH, HEIGHT);
    let now = Instant::now();
    let mut turn = 0;
    while app.transcript.len() < CELLS {
        let tool = match turn % 3 {
            0 => Some(false),
            1 => None,
            _ => Some(true),
        };
        feed_turn(&mut app, turn, tool, now);
        turn += 1;
    }
    assert_eq!(app.transcript.len(), CELLS, "the turn pattern adds exactly {CELLS} cells");
    app
}

fn terminal() -> Terminal<TestBackend> {
    Terminal::new(TestBackend::new(WIDTH, HEIGHT)).expect("a test terminal")
}

fn draw(terminal: &mut Terminal<TestBackend>, app: &App) {
    let now = Instant::now();
    terminal.draw(|frame| render(app, frame, now)).expect("draw");
}

/// Streams an answer into a new cell at the end of the transcript, one ~4-character delta per step. When the
/// answer is complete, its cell is dropped and a new one starts, so the streaming cell stays 0–1.5 KB.
struct Streamer {
    base: usize,
    deltas: Vec<String>,
    next: usize,
}

impl Streamer {
    fn start(app: &mut App) -> Streamer {
        let now = Instant::now();
        app.submit("Now explain the tokenizer as well.".into(), now);
        let base = app.transcript.len();
        let mut streamer = Streamer { base, deltas: pieces(&answer(99_999), 4), next: 0 };
        streamer.restart(app);
        streamer
    }

    fn restart(&mut self, app: &mut App) {
        let now = Instant::now();
        app.transcript.truncate(self.base);
        core(app, Event::RequestStarted { round: 1 }, now);
        stream(app, StreamEvent::BlockStart { index: 0, block: BlockStart::Text }, now);
        self.next = 0;
    }

    fn step(&mut self, app: &mut App) {
        if self.next == self.deltas.len() {
            self.restart(app);
        }
        let text = self.deltas[self.next].clone();
        self.next += 1;
        stream(app, StreamEvent::TextDelta { index: 0, text }, Instant::now());
    }

    /// Ends the turn (the answer so far stays in the transcript).
    fn finish(self, app: &mut App) {
        let now = Instant::now();
        stream(app, StreamEvent::BlockStop { index: 0 }, now);
        core(app, turn_finished(), now);
    }
}

fn scroll_to_middle(app: &mut App) -> usize {
    let total = app.transcript.height(WIDTH as usize, &app.theme, Instant::now());
    app.transcript.scroll_from_bottom = total / 2;
    total
}

fn percentiles(label: &str, mut samples: Vec<Duration>) {
    samples.sort();
    let at = |q: f64| samples[((samples.len() as f64 * q).ceil() as usize).clamp(1, samples.len()) - 1];
    let mean = samples.iter().sum::<Duration>() / samples.len() as u32;
    println!(
        "  {label:<34} p50 {:>7.3} ms   p99 {:>7.3} ms   max {:>7.3} ms   mean {:>7.3} ms   ({} frames)",
        ms(at(0.50)),
        ms(at(0.99)),
        ms(*samples.last().expect("samples")),
        ms(mean),
        samples.len()
    );
}

fn time_frames(terminal: &mut Terminal<TestBackend>, app: &mut App, mut before: impl FnMut(&mut App)) -> Vec<Duration> {
    (0..TIMED_FRAMES)
        .map(|_| {
            before(app);
            let start = Instant::now();
            draw(terminal, app);
            start.elapsed()
        })
        .collect()
}

/// Cold layout, resize re-layout and per-frame percentiles, timed with `Instant`.
fn report() {
    println!("frame: {CELLS}-cell transcript at {WIDTH}x{HEIGHT} (TestBackend)");
    let start = Instant::now();
    let mut app = build_app();
    println!("  built through App::update in {:.0} ms", ms(start.elapsed()));
    let mut terminal = terminal();

    let start = Instant::now();
    draw(&mut terminal, &app);
    let cold = start.elapsed();
    let total = app.transcript.height(WIDTH as usize, &app.theme, Instant::now());
    println!("  cold layout of all {CELLS} cells (first frame): {:.1} ms   ({total} lines)", ms(cold));

    let start = Instant::now();
    draw(&mut terminal, &app);
    println!("  second frame (cache warm): {:.3} ms", ms(start.elapsed()));

    // A resize lays every cell out again at the new width.
    let mut narrower = Terminal::new(TestBackend::new(WIDTH - 1, HEIGHT)).expect("a test terminal");
    app.update(Input::Resize(WIDTH - 1, HEIGHT), Instant::now());
    let start = Instant::now();
    draw(&mut narrower, &app);
    println!("  re-layout after a resize to {}x{HEIGHT}: {:.1} ms", WIDTH - 1, ms(start.elapsed()));
    app.update(Input::Resize(WIDTH, HEIGHT), Instant::now());
    draw(&mut terminal, &app);

    percentiles("steady, at the bottom", time_frames(&mut terminal, &mut app, |_| {}));

    let mut streamer = Streamer::start(&mut app);
    draw(&mut terminal, &app);
    percentiles("streaming (one delta per frame)", time_frames(&mut terminal, &mut app, |app| streamer.step(app)));
    streamer.finish(&mut app);
    draw(&mut terminal, &app);

    let total = scroll_to_middle(&mut app);
    draw(&mut terminal, &app);
    percentiles("scrolled to the middle, steady", time_frames(&mut terminal, &mut app, |_| {}));

    // Scrolling up one line per frame (wheel/arrow scrolling): the visible slice changes every frame.
    let scrolling = time_frames(&mut terminal, &mut app, |app| {
        let viewport = app.transcript_viewport();
        app.transcript.scroll_by(1, total, viewport);
    });
    percentiles("scrolling one line per frame", scrolling);
    println!("  target: p99 <= 4 ms");
}

fn benches(c: &mut Criterion) {
    let mut app = build_app();
    let mut terminal = terminal();
    draw(&mut terminal, &app);

    let mut group = c.benchmark_group("frame");
    group.sample_size(20).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2));
    group.bench_function("steady_bottom", |b| {
        b.iter(|| {
            draw(&mut terminal, &app);
            black_box(terminal.backend().buffer().area);
        })
    });

    let mut streamer = Streamer::start(&mut app);
    draw(&mut terminal, &app);
    group.bench_function("streaming_delta", |b| {
        b.iter(|| {
            streamer.step(&mut app);
            draw(&mut terminal, &app);
        })
    });
    streamer.finish(&mut app);
    draw(&mut terminal, &app);

    scroll_to_middle(&mut app);
    draw(&mut terminal, &app);
    group.bench_function("scrolled_middle", |b| b.iter(|| draw(&mut terminal, &app)));
    group.finish();
}

fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    if measuring() {
        report();
    }
    benches(&mut criterion);
    criterion.final_summary();
}
