//! The status line under the input: what the agent is doing on the left, the session's facts on the right.
//!
//! Everything is a pure function of [`StatusInfo`] and the clock, so the spinner animates by redrawing with a
//! later `now`. On a narrow terminal the least important parts go first; the permission mode and the spinner
//! stay, because they change what a keystroke or the agent will do.

use std::time::{Duration, Instant};

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use tandem_core::permissions::PermissionMode;
use tandem_protocol::conversation::Usage;

use super::theme::Theme;
use super::wrap::{truncate, width};

/// Braille spinner frames; one frame every [`SPINNER_FRAME`].
const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
/// How long each spinner frame shows (ten frames a second).
pub const SPINNER_FRAME: Duration = Duration::from_millis(100);

/// The spinner frame for how long something has been going, so the glyph moves without any stored state.
pub fn spinner_frame(elapsed: Duration) -> &'static str {
    let index = (elapsed.as_millis() / SPINNER_FRAME.as_millis()) % SPINNER.len() as u128;
    SPINNER[index as usize]
}

/// Elapsed time in whole seconds (`7s`, `1m 05s`, `2h 03m`): a running clock, so no decimals that flicker.
pub fn format_elapsed(elapsed: Duration) -> String {
    let seconds = elapsed.as_secs();
    match seconds {
        0..60 => format!("{seconds}s"),
        60..3600 => format!("{}m {:02}s", seconds / 60, seconds % 60),
        _ => format!("{}h {:02}m", seconds / 3600, seconds % 3600 / 60),
    }
}

/// A finished duration (`42ms`, `1.2s`, `2m 05s`): precise for quick tool calls, coarse for long ones.
pub fn format_duration_ms(ms: u64) -> String {
    match ms {
        0..1000 => format!("{ms}ms"),
        1000..60_000 => format!("{:.1}s", ms as f64 / 1000.0),
        _ => format_elapsed(Duration::from_millis(ms)),
    }
}

/// Token counts the way people read them: `950`, `1.2k`, `12.3k`, `123k`, `1.2M`.
pub fn format_tokens(n: u64) -> String {
    fn scaled(value: f64, unit: &str) -> String {
        if value >= 99.95 {
            format!("{value:.0}{unit}")
        } else {
            let text = format!("{value:.1}");
            format!("{}{unit}", text.strip_suffix(".0").unwrap_or(&text))
        }
    }
    if n < 1000 {
        n.to_string()
    } else if n < 999_500 {
        scaled(n as f64 / 1e3, "k")
    } else if n < 999_500_000 {
        scaled(n as f64 / 1e6, "M")
    } else {
        scaled(n as f64 / 1e9, "G")
    }
}

/// A cost in dollars; small amounts keep four decimals so a cheap session doesn't read as free.
pub fn format_cost(cost: Option<f64>) -> String {
    match cost {
        None => "$?".to_owned(),
        Some(cost) if cost <= 0.0 => "$0.00".to_owned(),
        Some(cost) if cost < 1.0 => format!("${cost:.4}"),
        Some(cost) => format!("${cost:.2}"),
    }
}

/// Everything the status line shows. The app keeps one and updates it from core events.
#[derive(Clone, Debug, Default)]
pub struct StatusInfo {
    pub provider: String,
    pub model: String,
    pub mode: PermissionMode,
    /// Tokens the last request put in the context window (`None` before the first response).
    pub context_used: Option<u64>,
    /// The model's context window; 0 when unknown (then no percentage is shown).
    pub context_window: u64,
    /// Session totals.
    pub usage: Usage,
    /// `None` when the model's prices are unknown: shown as `$?`, never as a misleading `$0`.
    pub cost_usd: Option<f64>,
    /// Set while a turn runs; drives the spinner and the elapsed time.
    pub working_since: Option<Instant>,
    /// A retry in progress ("rate limited, retrying in 4s (2/5)"), shown instead of the interrupt hint.
    pub retry: Option<String>,
    /// A compaction is running (its summary request can take a while).
    pub compacting: bool,
    /// The scripted demo is running: said on every screen.
    pub demo: bool,
    /// How many `run_in_background` commands are running.
    pub background_running: usize,
    /// Set while a permission dialog waits for the user: the clock stops and the spinner stands still.
    pub waiting_since: Option<Instant>,
    /// A short transient message ("press ctrl+c again to quit"), shown until its time is up.
    pub notice: Option<Flash>,
}

/// A status message that goes away by itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Flash {
    pub text: String,
    /// When it stops being shown.
    pub until: Instant,
}

impl StatusInfo {
    /// The notice, while its time is not up.
    pub fn notice_at(&self, now: Instant) -> Option<&str> {
        self.notice.as_ref().filter(|flash| now < flash.until).map(|flash| flash.text.as_str())
    }
}

/// The label and style of a permission mode; `None` for the default mode, which needs no reminder.
pub fn mode_label(mode: PermissionMode, theme: &Theme) -> Option<(&'static str, Style)> {
    match mode {
        PermissionMode::Default => None,
        PermissionMode::AcceptEdits => Some(("⏵⏵ accept edits", theme.accent)),
        PermissionMode::Plan => Some(("⏸ plan mode", theme.success)),
        PermissionMode::BypassPermissions => Some(("bypass permissions", theme.error)),
        PermissionMode::DontAsk => Some(("don't ask", theme.warning)),
    }
}

/// One piece of the line. Higher `keep` survives longer when space runs out.
struct Part {
    spans: Vec<Span<'static>>,
    keep: u8,
    /// Right-aligned (session facts) rather than left (activity).
    right: bool,
    /// A shorter form, switched to when the squeeze reaches priority `shorten_at` (before `keep` drops the part).
    short: Option<Vec<Span<'static>>>,
    shorten_at: u8,
    /// The text may be cut with `…` before the part is dropped (messages).
    cuttable: bool,
}

impl Part {
    fn new(spans: Vec<Span<'static>>, keep: u8, right: bool) -> Part {
        Part { spans, keep, right, short: None, shorten_at: 0, cuttable: false }
    }

    /// The priority of the next thing that would happen to this part: shortening, then dropping.
    fn priority(&self) -> u8 {
        if self.short.is_some() { self.shorten_at } else { self.keep }
    }

    fn width(&self) -> usize {
        self.spans.iter().map(|span| width(&span.content)).sum()
    }
}

/// Never dropped.
const ALWAYS: u8 = u8::MAX;
const SEPARATOR: &str = " · ";
/// Blank columns at each end of the line.
const MARGIN: usize = 1;
/// Columns between the left and the right group.
const GAP: usize = 2;
/// A message is dropped rather than cut shorter than this.
const MIN_CUT: usize = 8;

/// Draws the status line on the first row of `area`.
pub fn render_status(info: &StatusInfo, area: Rect, buf: &mut Buffer, theme: &Theme, now: Instant) {
    let area = area.intersection(buf.area);
    if area.width == 0 || area.height == 0 {
        return;
    }
    let total = usize::from(area.width);
    buf.set_string(area.x, area.y, " ".repeat(total), theme.status);

    let mut parts = parts(info, theme, now);
    // Shorten, cut, then drop the least important part until everything fits.
    loop {
        let excess = used_width(&parts).saturating_sub(total);
        if excess == 0 {
            break;
        }
        let lowest =
            parts.iter().enumerate().filter(|(_, part)| part.keep != ALWAYS).min_by_key(|(_, part)| part.priority());
        let Some((index, _)) = lowest else { break };
        let part = &mut parts[index];
        if let Some(short) = part.short.take() {
            part.spans = short;
        } else if part.cuttable && part.width().saturating_sub(excess) >= MIN_CUT {
            part.cuttable = false;
            if let Some(last) = part.spans.last_mut() {
                let target = width(&last.content).saturating_sub(excess);
                last.content = truncate(&last.content, target).into();
            }
        } else {
            parts.remove(index);
        }
    }

    let join = |right: bool| {
        let mut spans: Vec<Span<'static>> = Vec::new();
        for part in parts.iter().filter(|part| part.right == right) {
            if !spans.is_empty() {
                spans.push(Span::styled(SEPARATOR, theme.dim));
            }
            spans.extend(part.spans.iter().cloned());
        }
        Line::from(spans)
    };
    let (left, right) = (join(false), join(true));
    let inner = total.saturating_sub(2 * MARGIN);
    // Whatever still doesn't fit (a tiny terminal) is clipped by the buffer, left side first.
    buf.set_line(area.x + MARGIN as u16, area.y, &left, inner as u16);
    let right_width = right.width();
    if right_width > 0 && left.width() + right_width <= inner {
        let right_x = area.x + (total - MARGIN - right_width) as u16;
        buf.set_line(right_x, area.y, &right, right_width as u16);
    }
}

/// Columns the parts take with separators, margins and the gap.
fn used_width(parts: &[Part]) -> usize {
    let side = |right: bool| {
        let widths: Vec<usize> = parts.iter().filter(|part| part.right == right).map(Part::width).collect();
        widths.iter().sum::<usize>() + SEPARATOR.chars().count() * widths.len().saturating_sub(1)
    };
    let (left, right) = (side(false), side(true));
    let gap = if left > 0 && right > 0 { GAP } else { 0 };
    2 * MARGIN + left + right + gap
}

/// The line's parts in display order: activity on the left, session facts on the right.
fn parts(info: &StatusInfo, theme: &Theme, now: Instant) -> Vec<Part> {
    let mut parts = Vec::new();
    if let (Some(since), Some(waiting)) = (info.working_since, info.waiting_since) {
        let elapsed = waiting.saturating_duration_since(since);
        let clock = Span::styled(format!("◆ {}", format_elapsed(elapsed)), theme.status);
        parts.push(Part::new(vec![clock], ALWAYS, false));
        parts.push(Part::new(vec![Span::styled("waiting for your answer", theme.warning)], 20, false));
    } else if let Some(since) = info.working_since {
        let elapsed = now.saturating_duration_since(since);
        let spinner = Span::styled(spinner_frame(elapsed), theme.accent);
        let clock = Span::styled(format!(" {}", format_elapsed(elapsed)), theme.status);
        parts.push(Part::new(vec![spinner, clock], ALWAYS, false));
        match &info.retry {
            Some(retry) => parts.push(Part {
                cuttable: true,
                ..Part::new(vec![Span::styled(retry.clone(), theme.warning)], 70, false)
            }),
            None => parts.push(Part::new(
                vec![Span::styled("esc", theme.key_hint), Span::styled(" to interrupt", theme.dim)],
                20,
                false,
            )),
        }
    }
    if info.compacting {
        parts.push(Part::new(vec![Span::styled("compacting the conversation…", theme.warning)], 75, false));
    }
    if info.background_running > 0 {
        let text = format!("{} in background (/bashes)", info.background_running);
        let short = vec![Span::styled(format!("{} bg", info.background_running), theme.accent)];
        parts.push(Part {
            short: Some(short),
            shorten_at: 30,
            ..Part::new(vec![Span::styled(text, theme.accent)], 50, false)
        });
    }
    if let Some(notice) = info.notice_at(now) {
        parts.push(Part {
            cuttable: true,
            ..Part::new(vec![Span::styled(notice.to_owned(), theme.warning)], 80, false)
        });
    }

    if !info.model.is_empty() {
        let full =
            if info.provider.is_empty() { info.model.clone() } else { format!("{}/{}", info.provider, info.model) };
        let short = (!info.provider.is_empty()).then(|| vec![Span::styled(info.model.clone(), theme.status)]);
        parts.push(Part { short, shorten_at: 15, ..Part::new(vec![Span::styled(full, theme.status)], 40, true) });
    }
    if info.demo {
        parts.push(Part::new(
            vec![Span::styled("DEMO", theme.warning.add_modifier(ratatui::style::Modifier::REVERSED))],
            ALWAYS,
            false,
        ));
    }
    if let Some((label, style)) = mode_label(info.mode, theme) {
        parts.push(Part::new(vec![Span::styled(label, style)], ALWAYS, true));
    }
    if let (Some(used), true) = (info.context_used, info.context_window > 0) {
        let percent = (used.saturating_mul(100) + info.context_window / 2) / info.context_window;
        let style = match percent {
            0..80 => theme.status,
            80..95 => theme.warning,
            _ => theme.error,
        };
        parts.push(Part::new(vec![Span::styled(format!("ctx {percent}%"), style)], 60, true));
    }
    let (input, output) = (info.usage.total_input(), info.usage.output_tokens);
    if input > 0 || output > 0 {
        let text = format!("↑{} ↓{}", format_tokens(input), format_tokens(output));
        parts.push(Part::new(vec![Span::styled(text, theme.status)], 10, true));
    }
    parts.push(Part::new(vec![Span::styled(format_cost(info.cost_usd), theme.status)], 30, true));
    parts
}

#[cfg(test)]
mod tests;
