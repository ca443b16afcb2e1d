use std::time::{Duration, Instant};

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use tandem_core::permissions::PermissionMode;
use tandem_protocol::conversation::Usage;

use super::*;
use crate::ui::theme::ColorDepth;

/// Snapshots go next to the other UI snapshots (`ui/snapshots`).
macro_rules! snapshot {
    ($name:expr, $value:expr) => {
        insta::with_settings!({ snapshot_path => "../snapshots" }, { insta::assert_snapshot!($name, $value) })
    };
}

fn info() -> StatusInfo {
    StatusInfo {
        provider: "anthropic".into(),
        model: "claude-sonnet-4-5".into(),
        context_used: Some(46_000),
        context_window: 200_000,
        usage: Usage {
            input_tokens: 2_300,
            output_tokens: 1_234,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: 10_000,
        },
        cost_usd: Some(0.0123),
        ..StatusInfo::default()
    }
}

/// Draws the line through a real terminal backend and returns its text.
fn draw(info: &StatusInfo, width: u16, now: Instant) -> String {
    let theme = Theme::new(ColorDepth::TrueColor);
    let mut terminal = Terminal::new(TestBackend::new(width, 1)).expect("test backend");
    terminal.draw(|frame| render_status(info, frame.area(), frame.buffer_mut(), &theme, now)).expect("draw");
    terminal.backend().to_string()
}

fn working(mut info: StatusInfo, now: Instant) -> StatusInfo {
    info.working_since = Some(now - Duration::from_millis(12_300));
    info
}

#[test]
fn formats_tokens() {
    assert_eq!(format_tokens(0), "0");
    assert_eq!(format_tokens(999), "999");
    assert_eq!(format_tokens(1000), "1k");
    assert_eq!(format_tokens(1234), "1.2k");
    assert_eq!(format_tokens(12_345), "12.3k");
    assert_eq!(format_tokens(123_456), "123k");
    assert_eq!(format_tokens(999_499), "999k");
    assert_eq!(format_tokens(999_999), "1M");
    assert_eq!(format_tokens(1_200_000), "1.2M");
    assert_eq!(format_tokens(45_600_000), "45.6M");
}

#[test]
fn formats_times_and_costs() {
    assert_eq!(format_elapsed(Duration::from_millis(3_900)), "3s");
    assert_eq!(format_elapsed(Duration::from_secs(65)), "1m 05s");
    assert_eq!(format_elapsed(Duration::from_secs(7_380)), "2h 03m");
    assert_eq!(format_duration_ms(1_234), "1.2s");
    assert_eq!(format_duration_ms(40), "40ms");
    assert_eq!(format_duration_ms(125_000), "2m 05s");
    assert_eq!(format_cost(None), "$?");
    assert_eq!(format_cost(Some(0.0)), "$0.00");
    assert_eq!(format_cost(Some(0.0123)), "$0.0123");
    assert_eq!(format_cost(Some(12.345)), "$12.35");
}

#[test]
fn spinner_moves_with_the_clock() {
    assert_eq!(spinner_frame(Duration::ZERO), "⠋");
    assert_eq!(spinner_frame(Duration::from_millis(150)), "⠙");
    assert_eq!(spinner_frame(Duration::from_millis(1_000)), "⠋");
    assert_ne!(spinner_frame(Duration::from_millis(100)), spinner_frame(Duration::from_millis(200)));
}

#[test]
fn idle() {
    let now = Instant::now();
    snapshot!("status_idle_120", draw(&info(), 120, now));
    snapshot!("status_idle_40", draw(&info(), 40, now));
}

#[test]
fn working_shows_spinner_and_interrupt_hint() {
    let now = Instant::now();
    let info = working(info(), now);
    let wide = draw(&info, 120, now);
    assert!(wide.contains("⠸ 12s · esc to interrupt"), "{wide}");
    snapshot!("status_working_120", wide);
    snapshot!("status_working_40", draw(&info, 40, now));
}

#[test]
fn retrying_replaces_the_hint() {
    let now = Instant::now();
    let mut info = working(info(), now);
    info.retry = Some("overloaded, retrying in 4s (attempt 2/5)".into());
    let wide = draw(&info, 120, now);
    assert!(wide.contains("retrying in 4s") && !wide.contains("esc to interrupt"), "{wide}");
    snapshot!("status_retrying_120", wide);
    snapshot!("status_retrying_40", draw(&info, 40, now));
}

#[test]
fn accept_edits_mode() {
    let now = Instant::now();
    let mut info = working(info(), now);
    info.mode = PermissionMode::AcceptEdits;
    snapshot!("status_accept_edits_120", draw(&info, 120, now));
    let narrow = draw(&info, 40, now);
    assert!(narrow.contains("⏵⏵ accept edits") && narrow.contains("⠸"), "{narrow}");
    snapshot!("status_accept_edits_40", narrow);
}

#[test]
fn plan_mode() {
    let now = Instant::now();
    let mut info = info();
    info.mode = PermissionMode::Plan;
    snapshot!("status_plan_120", draw(&info, 120, now));
    let narrow = draw(&working(info, now), 40, now);
    assert!(narrow.contains("⏸ plan mode") && narrow.contains("12s"), "{narrow}");
    snapshot!("status_plan_40", narrow);
}

#[test]
fn unknown_cost_is_never_zero() {
    let now = Instant::now();
    let mut info = info();
    info.provider = "ollama".into();
    info.model = "qwen3-coder:30b".into();
    info.cost_usd = None;
    let wide = draw(&info, 120, now);
    assert!(wide.contains("$?") && !wide.contains("$0"), "{wide}");
    snapshot!("status_unknown_cost_120", wide);
    snapshot!("status_unknown_cost_40", draw(&info, 40, now));
}

#[test]
fn narrow_keeps_mode_and_spinner_and_drops_the_rest_in_order() {
    let now = Instant::now();
    let mut info = working(info(), now);
    info.mode = PermissionMode::BypassPermissions;
    info.provider = "openrouter".into();
    info.model = "anthropic/claude-sonnet-4.5".into();
    let narrow = draw(&info, 40, now);
    assert!(narrow.contains("bypass permissions") && narrow.contains("⠸ 12s"), "{narrow}");
    assert!(!narrow.contains('↑'), "tokens go first: {narrow}");
    // Tiny widths clip instead of panicking.
    for width in [1, 5, 12, 25] {
        draw(&info, width, now);
    }
}

#[test]
fn styles() {
    let theme = Theme::new(ColorDepth::TrueColor);
    let now = Instant::now();
    let mut info = info();
    info.mode = PermissionMode::BypassPermissions;
    info.context_used = Some(199_000);
    let mut buf = Buffer::empty(Rect::new(0, 0, 120, 1));
    render_status(&info, buf.area, &mut buf, &theme, now);
    let find = |needle: &str| {
        let text: String = (0..120).map(|x| buf[(x, 0)].symbol().to_owned()).collect::<Vec<_>>().concat();
        let byte = text.find(needle).expect(needle);
        text[..byte].chars().count() as u16
    };
    assert_eq!(buf[(find("bypass"), 0)].fg, theme.error.fg.expect("error colour"));
    assert_eq!(buf[(find("ctx 100%"), 0)].fg, theme.error.fg.expect("error colour"));
    assert_eq!(mode_label(PermissionMode::Default, &theme), None);
}
