//! What the app's benches share: an app at a given size, the end of a turn, text cut into deltas, and when to
//! print figures. Each bench uses part of it.
#![allow(dead_code)]

use std::path::PathBuf;
use std::time::{Duration, Instant};

use tandem_core::conversation::{StopReason, Usage};
use tandem_core::protocol::{Event, RunOutcome, TurnSummary};
use tandem_tui::app::editor::Editor;
use tandem_tui::app::{App, Input};
use tandem_tui::ui::status::StatusInfo;
use tandem_tui::ui::theme::{ColorDepth, Theme};

/// An idle app of `width` × `height`, as the runtime starts it.
pub(crate) fn new_app(width: u16, height: u16) -> App {
    let status = StatusInfo {
        provider: "anthropic".into(),
        model: "claude-sonnet-4-5".into(),
        context_window: 200_000,
        cost_usd: Some(0.0),
        ..StatusInfo::default()
    };
    let mut app =
        App::new(Theme::new(ColorDepth::TrueColor), Editor::default(), status, PathBuf::from("/work/project"));
    app.update(Input::Resize(width, height), Instant::now());
    app
}

/// The event that ends a successful turn.
pub(crate) fn turn_finished() -> Event {
    Event::TurnFinished(TurnSummary {
        turn_id: 1,
        outcome: RunOutcome::Success,
        result_text: None,
        stop_reason: Some(StopReason::EndTurn),
        num_turns: 1,
        duration_ms: 1000,
        duration_api_ms: 900,
        usage: Usage::default(),
        total_cost_usd: Some(0.01),
        permission_denials: Vec::new(),
        errors: Vec::new(),
        interrupted: false,
        api_error: None,
        structured_output: None,
        unsaved: None,
    })
}

/// `text` cut into pieces of `chars` characters, like streamed deltas.
pub(crate) fn pieces(text: &str, chars: usize) -> Vec<String> {
    let all: Vec<char> = text.chars().collect();
    all.chunks(chars).map(|chunk| chunk.iter().collect()).collect()
}

pub(crate) fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}

/// Figures are printed only by `cargo bench`, not when `cargo test --benches` or `--list` runs the binary.
pub(crate) fn measuring() -> bool {
    let args: Vec<String> = std::env::args().collect();
    let has = |flag: &str| args.iter().any(|arg| arg == flag);
    has("--bench") && !has("--test") && !has("--list")
}
