//! Owning the terminal: full screen in, everything restored out — on exit, on panic, on SIGTERM/SIGHUP, and
//! around a suspend (Ctrl+Z) or an external editor.

use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};

use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::cursor::Show;
use ratatui::crossterm::event::{
    DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture, KeyboardEnhancementFlags,
    PopKeyboardEnhancementFlags, PushKeyboardEnhancementFlags,
};
use ratatui::crossterm::execute;
use ratatui::crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode, supports_keyboard_enhancement,
};

pub(super) type Term = Terminal<CrosstermBackend<io::Stdout>>;

/// Whether the terminal is currently in full-screen mode (so the panic hook knows to restore it).
static ACTIVE: AtomicBool = AtomicBool::new(false);
/// Whether mouse capture is on (it can be turned off so the terminal's own selection works).
static MOUSE: AtomicBool = AtomicBool::new(false);
static KEYBOARD_ENHANCED: AtomicBool = AtomicBool::new(false);

/// Options for entering the full screen.
#[derive(Clone, Copy, Debug)]
pub struct ScreenOptions {
    pub mouse_capture: bool,
}

/// Enters the alternate screen in raw mode with bracketed paste, mouse capture (unless disabled) and, where the
/// terminal supports it, keyboard enhancement (so Shift+Enter is distinguishable from Enter).
pub(super) fn enter(options: ScreenOptions) -> io::Result<()> {
    enable_raw_mode()?;
    ACTIVE.store(true, Ordering::SeqCst);
    let mut stdout = io::stdout();
    execute!(stdout, EnterAlternateScreen, EnableBracketedPaste)?;
    if options.mouse_capture {
        execute!(stdout, EnableMouseCapture)?;
        MOUSE.store(true, Ordering::SeqCst);
    }
    if supports_keyboard_enhancement().unwrap_or(false) {
        execute!(stdout, PushKeyboardEnhancementFlags(KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES))?;
        KEYBOARD_ENHANCED.store(true, Ordering::SeqCst);
    }
    Ok(())
}

/// Leaves the full screen and restores the terminal as it was. Safe to call more than once.
pub(super) fn restore() {
    if !ACTIVE.swap(false, Ordering::SeqCst) {
        return;
    }
    let mut stdout = io::stdout();
    if KEYBOARD_ENHANCED.swap(false, Ordering::SeqCst) {
        let _ = execute!(stdout, PopKeyboardEnhancementFlags);
    }
    if MOUSE.swap(false, Ordering::SeqCst) {
        let _ = execute!(stdout, DisableMouseCapture);
    }
    let _ = execute!(stdout, DisableBracketedPaste, LeaveAlternateScreen, Show);
    let _ = disable_raw_mode();
    let _ = stdout.flush();
}

/// Restores the terminal before the default panic message is printed, so the message is readable and the
/// shell is usable afterwards. A panic that core catches (inside the event-stream parser) leaves the screen alone.
pub(super) fn install_panic_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if tandem_core::provider::sse::panic_is_caught() {
            return;
        }
        restore();
        previous(info);
    }));
}

/// Restores the terminal when dropped: covers early returns and unwinding.
pub(super) struct Guard;

impl Drop for Guard {
    fn drop(&mut self) {
        restore();
    }
}

/// Creates the ratatui terminal over stdout.
pub(super) fn terminal() -> io::Result<Term> {
    Terminal::new(CrosstermBackend::new(io::stdout()))
}
