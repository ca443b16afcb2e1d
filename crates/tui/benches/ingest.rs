//! Ingesting 100k tokens of streamed text: ~100,000 `Event::MessageDelta` events of ~4
//! characters (~400 KB of Markdown: paragraphs, lists and code blocks) fed to `App::update`, with frames drawn
//! to a 120×40 `Terminal<TestBackend>` the way the runtime draws them: update a batch, then draw once.
//!
//! Printed (one run each; CPU time from `/proc/self/stat` utime+stime, with `/proc/self/schedstat` for ns):
//!
//! - **wire speed**: every delta is already there, as from a zero-latency server; the loop is the runtime's
//!   (take an event plus up to 512 queued ones, draw when 16 ms of real time passed since the last frame);
//! - **paced**: a simulated clock where deltas arrive at a fixed rate and a frame is drawn every 16 ms of
//!   simulated time, so the number of frames is fixed by the rate (not by how slow frames are);
//! - both for one long answer (one cell growing to 400 KB) and for 100 answers of 4 KB (cells of normal size).
//!
//! Criterion measures `App::update` alone for the 100k deltas (no drawing).
//!
//! Run: `cargo bench -p tandem-tui --bench ingest`. Prints figures; asserts nothing about time.

// Test code: a panic is how a failure is reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BatchSize, Criterion};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use tandem_core::conversation::{AssistantMessage, ContentBlock, StopReason, Usage};
use tandem_core::protocol::Event;
use tandem_tui::app::{App, Input};
use tandem_tui::ui::frame::render;

mod common;
use common::{measuring, ms, pieces, turn_finished};

const WIDTH: u16 = 120;
const HEIGHT: u16 = 40;
/// ~100k tokens at ~4 bytes a token.
const TOTAL_BYTES: usize = 400_000;
const DELTA_CHARS: usize = 4;
/// The runtime's frame interval.
const FRAME: Duration = Duration::from_millis(16);
/// The runtime drains one event plus up to this many queued ones before it looks at the clock again.
const DRAIN: usize = 512;
/// The paced runs' rate: deltas per 16 ms frame (100 ≈ 25,000 tokens/s, a fast local stream).
const PACED_DELTAS_PER_FRAME: usize = 100;

/// One ~4 KB Markdown section: paragraphs, a list and a code block. `n` makes it unique.
fn section(n: usize) -> String {
    format!(
        "## Step {n}: the tokenizer\n\n\
         The tokenizer reads the input **once**, left to right, and keeps a small window of look-ahead so the \
         parser can tell `<` as a comparison from `<` as the start of a generic list. Step {n} is where the \
         window is refilled; it used to copy the whole buffer, which made long inputs *quadratic*.\n\n\
         - keep the window as a ring buffer of 4 tokens,\n\
         - refill it lazily, only when the parser peeks past the end,\n\
         - report positions as byte offsets, converting to line/column only for errors.\n\n\
         ```rust\n\
         fn refill_{n}(&mut self) -> Result<(), LexError> {{\n    \
             while self.window.len() < LOOKAHEAD {{\n        \
                 let token = self.next_raw()?;\n        \
                 self.window.push_back(token);\n    \
             }}\n    \
             Ok(())\n\
         }}\n\
         ```\n\n\
         With that change the benchmark in `benches/lex.rs` went from 41 ms to 3 ms on the 10 MB input, and \
         the allocation count dropped from one per token to one per refill. The error messages are unchanged: \
         they still point at the first byte of the offending token, and the tests in `tests/errors.rs` pass \
         without edits. A later step can reuse the same window for the formatter, which today re-lexes the \
         file from the start for every line it re-indents; that is the next most expensive thing in a profile \
         of a large format run.\n\n\
         | input | before | after |\n\
         | --- | --- | --- |\n\
         | 1 MB | 4.1 ms | 0.3 ms |\n\
         | 10 MB | 41 ms | 3 ms |\n\n\
         > Note: the numbers above are from one run on a laptop; they are meant to show the shape, not to be \
         quoted.\n\n\
         The remaining work for step {n} is small: delete the old `copy_window` helper, update the two call sites \
         in `parser/expr.rs`, and add a regression test with an input that ends in the middle of a token, \
         which is the only case where the lazy refill behaves differently from the eager one. I checked the \
         fuzz corpus too: none of its inputs change their output, and the fuzzer ran for ten minutes without \
         finding anything new after the change, which is what we would expect from a refactor that keeps the \
         token stream identical.\n\n\
         Finally, the documentation comment on `Lexer` still says the window is a `Vec`; I updated it to \
         describe the ring buffer and the lazy refill, so the next reader does not go looking for a copy that \
         no longer happens. Nothing else in the public interface moved, so downstream crates need no change.\n\n"
    )
}

fn markdown(bytes: usize) -> String {
    let mut text = String::with_capacity(bytes + 8192);
    let mut n = 0;
    while text.len() < bytes {
        text.push_str(&section(n));
        n += 1;
    }
    text
}

/// The events of one turn whose answers are `answers` (each streamed as one text block of ~4-char deltas,
/// one model request per answer), as the agent sends them.
fn turn_events(answers: &[String]) -> Vec<Event> {
    let mut events = Vec::new();
    for (round, answer) in answers.iter().enumerate() {
        events.push(Event::RequestStarted { round: round as u32 + 1 });
        let item_id = format!("item_{round}");
        events.push(Event::MessageStarted { item_id: item_id.clone() });
        for text in pieces(answer, DELTA_CHARS) {
            events.push(Event::MessageDelta { item_id: item_id.clone(), text });
        }
        events.push(Event::MessageCompleted {
            item_id,
            outcome: tandem_core::protocol::ItemOutcome::Completed,
            text: None,
        });
        events.push(Event::AssistantMessage(AssistantMessage {
            id: format!("msg_{round}"),
            model: "claude-sonnet-4-5".into(),
            content: vec![ContentBlock::text(answer.clone())],
            stop_reason: Some(StopReason::EndTurn),
            usage: Usage::default(),
        }));
    }
    events.push(turn_finished());
    events
}

/// One long answer of ~400 KB.
fn one_long_answer() -> Vec<Event> {
    turn_events(&[markdown(TOTAL_BYTES)])
}

/// 100 answers of ~4 KB (one section each), ~400 KB in all.
fn many_answers() -> Vec<Event> {
    let mut answers = Vec::new();
    let mut total = 0;
    while total < TOTAL_BYTES {
        let text = section(answers.len());
        total += text.len();
        answers.push(text);
    }
    turn_events(&answers)
}

fn count_pieces(events: &[Event]) -> (usize, usize) {
    events.iter().fold((0, 0), |(count, bytes), event| match event {
        Event::MessageDelta { text, .. } => (count + 1, bytes + text.len()),
        _ => (count, bytes),
    })
}

/// Process CPU time (user + system) from `/proc/self/stat`, in clock ticks of 10 ms (USER_HZ is 100).
fn proc_cpu() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which is in parentheses and may hold spaces).
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the whole line, 12 and 13 after the name and the state.
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some(Duration::from_millis((utime + stime) * 10))
}

/// On-CPU time of this (main) thread in ns from `/proc/thread-self/schedstat`.
fn sched_cpu() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    Some(Duration::from_nanos(stat.split_whitespace().next()?.parse().ok()?))
}

fn draw(terminal: &mut Terminal<TestBackend>, app: &App) -> Duration {
    let start = Instant::now();
    let now = Instant::now();
    terminal.draw(|frame| render(app, frame, now)).expect("draw");
    start.elapsed()
}

struct Run {
    frames: usize,
    wall: Duration,
    draw: Duration,
    slowest_frame: Duration,
    /// p50 and p99 of the frames' times.
    percentiles: (Duration, Duration),
    milestones: Vec<(usize, Duration)>,
    cpu_stat: Option<Duration>,
    cpu_sched: Option<Duration>,
}

/// Feeds `events` as the runtime does at wire speed: all of them are queued already, so each loop takes one
/// plus up to 512 more, and a frame is drawn when 16 ms of real time passed since the last one.
fn wire_speed(events: Vec<Event>) -> Run {
    measure(events, |app, terminal, events, stats| {
        let mut last_draw = Instant::now() - FRAME;
        let mut events = events.into_iter().peekable();
        while events.peek().is_some() {
            if app.dirty && last_draw.elapsed() >= FRAME {
                stats.frame(draw(terminal, app));
                app.dirty = false;
                last_draw = Instant::now();
            }
            for event in events.by_ref().take(DRAIN + 1) {
                app.update(Input::Core(Box::new(event.into())), Instant::now());
            }
        }
    })
}

/// Feeds `events` on a simulated clock: `PACED_DELTAS_PER_FRAME` events arrive per 16 ms, and one frame is
/// drawn after each 16 ms of simulated time.
fn paced(events: Vec<Event>) -> Run {
    measure(events, |app, terminal, events, stats| {
        let mut events = events.into_iter().peekable();
        while events.peek().is_some() {
            for event in events.by_ref().take(PACED_DELTAS_PER_FRAME) {
                if let Event::MessageDelta { text, .. } = &event {
                    stats.bytes += text.len();
                }
                app.update(Input::Core(Box::new(event.into())), Instant::now());
            }
            stats.frame(draw(terminal, app));
            app.dirty = false;
        }
    })
}

/// Feeds `events` as a model streaming `tokens_per_second` one-token deltas would, on a simulated clock: a frame
/// every 16 ms with the deltas that arrived in it (3.2 a frame at 200 tokens/s).
fn at_rate(events: Vec<Event>, tokens_per_second: f64) -> Run {
    measure(events, |app, terminal, events, stats| {
        let per_frame = tokens_per_second * FRAME.as_secs_f64();
        let mut due = 0.0;
        let mut events = events.into_iter().peekable();
        while events.peek().is_some() {
            due += per_frame;
            while due >= 1.0 {
                let Some(event) = events.next() else { break };
                if let Event::MessageDelta { text, .. } = &event {
                    stats.bytes += text.len();
                    due -= 1.0;
                }
                app.update(Input::Core(Box::new(event.into())), Instant::now());
            }
            if app.dirty {
                stats.frame(draw(terminal, app));
                app.dirty = false;
            }
        }
    })
}

/// Text sizes at which the paced runs note the frame time.
const MILESTONES_KB: [usize; 6] = [4, 16, 64, 128, 256, 384];

#[derive(Default)]
struct Stats {
    frames: usize,
    /// Every frame's time, for percentiles.
    times: Vec<Duration>,
    draw: Duration,
    slowest: Duration,
    /// Text bytes fed so far (paced runs).
    bytes: usize,
    /// (KB streamed, that frame's time) at each milestone passed.
    milestones: Vec<(usize, Duration)>,
}

impl Stats {
    fn frame(&mut self, took: Duration) {
        self.frames += 1;
        self.times.push(took);
        self.draw += took;
        self.slowest = self.slowest.max(took);
        if let Some(&kb) = MILESTONES_KB.get(self.milestones.len())
            && self.bytes >= kb * 1000
        {
            self.milestones.push((kb, took));
        }
    }
}

fn measure(events: Vec<Event>, feed: impl FnOnce(&mut App, &mut Terminal<TestBackend>, Vec<Event>, &mut Stats)) -> Run {
    let mut app = common::new_app(WIDTH, HEIGHT);
    let mut terminal = Terminal::new(TestBackend::new(WIDTH, HEIGHT)).expect("a test terminal");
    app.submit("Explain the tokenizer changes step by step.".into(), Instant::now());
    draw(&mut terminal, &app);
    let mut stats = Stats::default();
    let (cpu_stat, cpu_sched, start) = (proc_cpu(), sched_cpu(), Instant::now());
    feed(&mut app, &mut terminal, events, &mut stats);
    // The final frame, with everything in.
    stats.frame(draw(&mut terminal, &app));
    let wall = start.elapsed();
    let used = |before: Option<Duration>, after: Option<Duration>| Some(after? - before?);
    stats.times.sort();
    let percentile = |p: f64| stats.times[((stats.times.len() - 1) as f64 * p) as usize];
    let percentiles = (percentile(0.50), percentile(0.99));
    let run = Run {
        frames: stats.frames,
        wall,
        draw: stats.draw,
        slowest_frame: stats.slowest,
        percentiles,
        milestones: stats.milestones,
        cpu_stat: used(cpu_stat, proc_cpu()),
        cpu_sched: used(cpu_sched, sched_cpu()),
    };
    black_box(app);
    run
}

fn print(label: &str, deltas: (usize, usize), run: &Run) {
    let cpu = run.cpu_sched.or(run.cpu_stat).unwrap_or(run.wall);
    println!("  {label}: 100k tokens ingested in {:.0} ms CPU ({} frames)", ms(cpu), run.frames);
    println!(
        "      {} deltas, {} KB; wall {:.0} ms; CPU {:.0} ms (/proc/self/stat, 10 ms ticks), {:.1} ms (schedstat); \
         drawing {:.0} ms, frame p50 {:.2} ms, p99 {:.2} ms, slowest {:.1} ms",
        deltas.0,
        deltas.1 / 1000,
        ms(run.wall),
        run.cpu_stat.map_or(f64::NAN, ms),
        run.cpu_sched.map_or(f64::NAN, ms),
        ms(run.draw),
        ms(run.percentiles.0),
        ms(run.percentiles.1),
        ms(run.slowest_frame)
    );
    if !run.milestones.is_empty() {
        let at: Vec<String> = run.milestones.iter().map(|(kb, took)| format!("{kb} KB: {:.2} ms", ms(*took))).collect();
        println!("      frame time after N KB streamed: {}", at.join(", "));
    }
}

/// A named way to build a turn's events.
type Case = (&'static str, fn() -> Vec<Event>);

fn report() {
    println!("ingest: ~100k tokens (~4-char deltas, ~400 KB of Markdown) into App::update, drawn at {WIDTH}x{HEIGHT}");
    let cases: [Case; 2] = [("one 400 KB answer", one_long_answer), ("100 answers of 4 KB", many_answers)];
    for (name, events) in cases {
        let sample = events();
        let counted = count_pieces(&sample);
        drop(sample);
        print(&format!("wire speed, {name}"), counted, &wire_speed(events()));
        print(&format!("paced {PACED_DELTAS_PER_FRAME} deltas/16 ms frame, {name}"), counted, &paced(events()));
    }
    let (tokens_per_second, events) = (200.0, one_long_answer());
    let counted = count_pieces(&events);
    let run = at_rate(events, tokens_per_second);
    print("200 tokens/s (one delta a token), one 400 KB answer", counted, &run);
    let stream_seconds = counted.0 as f64 / tokens_per_second;
    let cpu = run.cpu_sched.or(run.cpu_stat).unwrap_or(run.wall);
    println!("      a {stream_seconds:.0} s stream: {:.1} ms CPU per second of stream", ms(cpu) / stream_seconds);
}

fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    if measuring() {
        report();
    }
    let mut group = criterion.benchmark_group("ingest");
    group.sample_size(10).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(3));
    group.bench_function("update_only_100k_deltas", |b| {
        b.iter_batched(
            || {
                let mut app = common::new_app(WIDTH, HEIGHT);
                app.submit("Explain the tokenizer changes step by step.".into(), Instant::now());
                (app, one_long_answer())
            },
            |(mut app, events)| {
                for event in events {
                    app.update(Input::Core(Box::new(event.into())), Instant::now());
                }
                app
            },
            BatchSize::LargeInput,
        )
    });
    group.finish();
    criterion.final_summary();
}
