//! Driving the full-screen app in a pseudo-terminal: the real binary runs in a PTY of a chosen size, a reader
//! thread feeds everything it prints into a `vt100` terminal emulator (and keeps the raw bytes, for escape
//! sequences the emulator swallows), and tests type keys and wait for the screen to show what they expect.
//!
//! Waiting is always polling with a generous hang guard, never a fixed sleep: a slow machine only makes a
//! test slower, not flaky.

use std::io::{Read, Write};
use std::num::NonZeroU16;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use portable_pty::{Child, CommandBuilder, ExitStatus, MasterPty, PtySize, native_pty_system};

use crate::{FakeServer, TEST_KEY, Workspace, tandem_bin};

/// How long [`Pty::expect`] and friends wait before giving up. Only a guard against hangs: tests never rely on
/// anything taking less than this.
pub const HANG_GUARD: Duration = Duration::from_secs(30);
/// How often the screen is checked while waiting.
const POLL: Duration = Duration::from_millis(20);

/// Keys as the bytes a terminal sends for them (no keyboard enhancement: the harness tells the app the terminal
/// does not support it).
pub mod keys {
    pub const ENTER: &str = "\r";
    pub const ESC: &str = "\x1b";
    pub const TAB: &str = "\t";
    pub const SHIFT_TAB: &str = "\x1b[Z";
    pub const BACKSPACE: &str = "\x7f";
    pub const CTRL_C: &str = "\x03";
    pub const CTRL_D: &str = "\x04";
    pub const CTRL_F: &str = "\x06";
    pub const CTRL_O: &str = "\x0f";
    pub const CTRL_S: &str = "\x13";
    pub const CTRL_L: &str = "\x0c";
    pub const CTRL_Z: &str = "\x1a";
    pub const SHIFT_PAGE_UP: &str = "\x1b[5;2~";
    pub const UP: &str = "\x1b[A";
    pub const DOWN: &str = "\x1b[B";
    pub const RIGHT: &str = "\x1b[C";
    pub const LEFT: &str = "\x1b[D";
    pub const PAGE_UP: &str = "\x1b[5~";
    pub const PAGE_DOWN: &str = "\x1b[6~";
    pub const HOME: &str = "\x1b[H";
    pub const CTRL_U: &str = "\x15";
}

/// The primary device attributes query (`ESC [ c`) crossterm sends to detect keyboard enhancement support.
const DA1_QUERY: &[u8] = b"\x1b[c";
/// A VT220-ish answer without the kitty keyboard flags reply: "no enhancement", answered at once instead of
/// after crossterm's two second timeout.
const DA1_ANSWER: &[u8] = b"\x1b[?62;22c";
/// The cursor position report request (DSR 6).
const CPR_QUERY: &[u8] = b"\x1b[6n";
/// Begin and end of a synchronized update (a frame the terminal shows only once it is complete).
const SYNC_BEGIN: &[u8] = b"\x1b[?2026h";
const SYNC_END: &[u8] = b"\x1b[?2026l";

/// Which terminal queries the harness answers, the way a real terminal does.
#[derive(Clone, Copy, Debug)]
pub struct Answers {
    /// Primary device attributes (`ESC [ c`): answered as a terminal without keyboard enhancement.
    pub device_attributes: bool,
    /// Cursor position reports (`ESC [ 6 n`), from the emulator's cursor.
    pub cursor_position: bool,
}

impl Default for Answers {
    fn default() -> Self {
        Answers { device_attributes: true, cursor_position: true }
    }
}

/// A `tandem` command with a scrubbed environment and no provider configured: an empty config directory, no
/// API keys, `HOME` inside the workspace's config directory.
pub fn tandem_command(workspace: &Workspace) -> CommandBuilder {
    let mut command = CommandBuilder::new(tandem_bin());
    command.env_clear();
    command.cwd(workspace.path());
    if let Some(path) = std::env::var_os("PATH") {
        command.env("PATH", path);
    }
    command.env("HOME", workspace.config.path());
    command.env("TERM", "xterm-256color");
    command.env("LANG", "C.UTF-8");
    command.env("TANDEM_CONFIG_DIR", workspace.config.path());
    command.env("TANDEM_RETRY_BASE_MS", "1");
    command
}

/// A `tandem` command pointed at the fake server as Anthropic.
pub fn anthropic_command(workspace: &Workspace, server: &FakeServer) -> CommandBuilder {
    let mut command = tandem_command(workspace);
    command.env("ANTHROPIC_API_KEY", TEST_KEY);
    command.env("ANTHROPIC_BASE_URL", server.url());
    command
}

struct State {
    parser: vt100::Parser,
    raw: Vec<u8>,
    /// The reader saw the end of the output (every holder of the terminal's slave side is gone).
    eof: bool,
    /// How much of `raw` the emulator has processed (and searched for queries).
    parsed: usize,
    /// While the app is inside a synchronized update (`CSI ? 2026 h` … `l`), the screen as it was before it:
    /// like a real terminal, the emulator shows a frame only once it is complete, so a test never reads half
    /// of one.
    shown: Option<vt100::Screen>,
}

impl State {
    /// Takes in newly read bytes; returns the answers to the queries among them, in order.
    fn take(&mut self, bytes: &[u8], answers: Answers) -> Vec<u8> {
        // Search a little before the new bytes too: a query or a marker may straddle two reads.
        let longest = [CPR_QUERY, DA1_QUERY, SYNC_BEGIN, SYNC_END].iter().map(|seq| seq.len()).max().unwrap_or(1);
        let from = self.parsed.saturating_sub(longest - 1);
        self.raw.extend_from_slice(bytes);
        let mut marks: Vec<(usize, &[u8])> = Vec::new();
        for (seq, enabled) in [
            (DA1_QUERY, answers.device_attributes),
            (CPR_QUERY, answers.cursor_position),
            (SYNC_BEGIN, true),
            (SYNC_END, true),
        ] {
            if enabled {
                let ends = matches(&self.raw[from..], seq).map(|at| from + at + seq.len());
                marks.extend(ends.filter(|end| *end > self.parsed).map(|end| (end, seq)));
            }
        }
        marks.sort_unstable_by_key(|(end, _)| *end);
        let mut out = Vec::new();
        for (end, seq) in marks {
            // The emulator must be exactly at a query for the cursor position to be right.
            self.parser.process(&self.raw[self.parsed..end]);
            self.parsed = end;
            if seq == DA1_QUERY {
                out.extend_from_slice(DA1_ANSWER);
            } else if seq == CPR_QUERY {
                let (row, col) = self.parser.screen().cursor_position();
                out.extend_from_slice(format!("\x1b[{};{}R", row + 1, col + 1).as_bytes());
            } else if seq == SYNC_BEGIN {
                self.shown.get_or_insert_with(|| self.parser.screen().clone());
            } else {
                self.shown = None;
            }
        }
        self.parser.process(&self.raw[self.parsed..]);
        self.parsed = self.raw.len();
        out
    }

    /// The screen a user would see: the last complete frame.
    fn screen(&self) -> &vt100::Screen {
        self.shown.as_ref().unwrap_or_else(|| self.parser.screen())
    }
}

/// The app running in a pseudo-terminal.
pub struct Pty {
    state: Arc<Mutex<State>>,
    writer: Arc<Mutex<Box<dyn Write + Send>>>,
    master: Box<dyn MasterPty + Send>,
    child: Box<dyn Child + Send + Sync>,
    status: Option<ExitStatus>,
}

impl Pty {
    /// Starts `command` in a terminal of `rows` × `cols` that answers the usual queries.
    pub fn spawn(command: CommandBuilder, rows: u16, cols: u16) -> Pty {
        Pty::spawn_with(command, rows, cols, Answers::default())
    }

    /// Starts `command` in a terminal of `rows` × `cols` that answers the given queries.
    pub fn spawn_with(command: CommandBuilder, rows: u16, cols: u16, answers: Answers) -> Pty {
        let pair = native_pty_system()
            .openpty(PtySize { rows, cols, pixel_width: 0, pixel_height: 0 })
            .unwrap_or_else(|err| panic!("cannot open a pty: {err}"));
        let child = pair.slave.spawn_command(command).unwrap_or_else(|err| panic!("cannot start tandem: {err}"));
        // Our copy of the slave side must go, or the reader never sees the end of the output.
        drop(pair.slave);
        let mut reader = pair.master.try_clone_reader().unwrap_or_else(|err| panic!("pty reader: {err}"));
        let writer = Arc::new(Mutex::new(pair.master.take_writer().unwrap_or_else(|err| panic!("pty writer: {err}"))));
        let state = Arc::new(Mutex::new(State {
            parser: vt100::Parser::new(nonzero(rows), nonzero(cols), 1000),
            raw: Vec::new(),
            eof: false,
            parsed: 0,
            shown: None,
        }));
        {
            let state = Arc::clone(&state);
            let writer = Arc::clone(&writer);
            std::thread::spawn(move || {
                let mut buf = [0u8; 8192];
                loop {
                    match reader.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => {
                            let reply = lock(&state).take(&buf[..n], answers);
                            if !reply.is_empty() {
                                let mut writer = lock(&writer);
                                let _ = writer.write_all(&reply);
                                let _ = writer.flush();
                            }
                        }
                    }
                }
                let mut state = lock(&state);
                state.eof = true;
                state.shown = None;
            });
        }
        Pty { state, writer, master: pair.master, child, status: None }
    }

    /// Types text (or key sequences from [`keys`]).
    pub fn send(&self, text: &str) {
        self.send_keys(text.as_bytes());
    }

    /// Writes raw bytes to the terminal's input.
    pub fn send_keys(&self, bytes: &[u8]) {
        let mut writer = lock(&self.writer);
        writer.write_all(bytes).expect("write to the pty");
        writer.flush().expect("flush the pty");
    }

    /// The visible screen as text, rows joined by newlines (a row ends at its last written cell, so it may keep
    /// trailing spaces the app wrote over older text).
    pub fn screen_text(&self) -> String {
        lock(&self.state).screen().contents()
    }

    /// The visible rows, one string each.
    pub fn screen_rows(&self) -> Vec<String> {
        let state = lock(&self.state);
        let screen = state.screen();
        let (_, cols) = screen.size();
        screen.rows(0, cols.get()).collect()
    }

    /// Whether the emulator is showing the alternate screen.
    pub fn alternate_screen(&self) -> bool {
        lock(&self.state).screen().alternate_screen()
    }

    /// Everything the app printed so far.
    pub fn raw_output(&self) -> Vec<u8> {
        lock(&self.state).raw.clone()
    }

    /// Waits until `condition` holds for the screen text; returns that screen. Fails with the screen when the
    /// app's output ended first or after `timeout` (a hang guard).
    pub fn wait_for(&self, condition: impl Fn(&str) -> bool, timeout: Duration) -> Result<String, String> {
        let deadline = Instant::now() + timeout;
        loop {
            let (screen, eof) = {
                let state = lock(&self.state);
                (state.screen().contents(), state.eof)
            };
            if condition(&screen) {
                return Ok(screen);
            }
            if eof {
                return Err(format!("the app's output ended; the screen:\n{}", framed(&screen)));
            }
            if Instant::now() >= deadline {
                return Err(format!("timed out after {timeout:?}; the screen:\n{}", framed(&screen)));
            }
            std::thread::sleep(POLL);
        }
    }

    /// Waits (up to [`HANG_GUARD`]) until `condition` holds, panicking with `what` and the screen otherwise.
    pub fn expect(&self, what: &str, condition: impl Fn(&str) -> bool) -> String {
        self.wait_for(condition, HANG_GUARD).unwrap_or_else(|err| panic!("waiting for {what}: {err}"))
    }

    /// Waits until the screen contains `text`.
    pub fn expect_text(&self, text: &str) -> String {
        self.expect(&format!("{text:?} on screen"), |screen| screen.contains(text))
    }

    /// Waits until the raw output satisfies `condition`.
    pub fn expect_raw(&self, what: &str, condition: impl Fn(&[u8]) -> bool) -> Vec<u8> {
        let deadline = Instant::now() + HANG_GUARD;
        loop {
            let (raw, eof) = {
                let state = lock(&self.state);
                (state.raw.clone(), state.eof)
            };
            if condition(&raw) {
                return raw;
            }
            if eof || Instant::now() >= deadline {
                panic!("waiting for {what} in the output (eof: {eof}); the screen:\n{}", framed(&self.screen_text()));
            }
            std::thread::sleep(POLL);
        }
    }

    /// Resizes the terminal (the emulator first, then the PTY, which signals the app).
    pub fn resize(&self, rows: u16, cols: u16) {
        let mut state = lock(&self.state);
        state.parser.screen_mut().set_size(nonzero(rows), nonzero(cols));
        self.master
            .resize(PtySize { rows, cols, pixel_width: 0, pixel_height: 0 })
            .unwrap_or_else(|err| panic!("cannot resize the pty: {err}"));
    }

    /// Waits for the app to exit, then for its output to end (bounded: a leftover process could keep the terminal
    /// open). `None` when it is still running after `timeout`.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + timeout;
        let status = loop {
            if let Some(status) = &self.status {
                break status.clone();
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                self.status = Some(status.clone());
                break status;
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(POLL);
        };
        let drained = Instant::now() + Duration::from_secs(10);
        while !lock(&self.state).eof && Instant::now() < drained {
            std::thread::sleep(POLL);
        }
        Some(status)
    }

    /// The app's process id.
    pub fn pid(&self) -> Option<u32> {
        self.child.process_id()
    }
}

impl Drop for Pty {
    fn drop(&mut self) {
        if self.status.is_none() && !matches!(self.child.try_wait(), Ok(Some(_))) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn nonzero(n: u16) -> NonZeroU16 {
    NonZeroU16::new(n).expect("a terminal is at least one row and one column")
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Where `needle` occurs in `haystack`.
fn matches<'a>(haystack: &'a [u8], needle: &'a [u8]) -> impl Iterator<Item = usize> + 'a {
    haystack.windows(needle.len()).enumerate().filter(move |(_, window)| *window == needle).map(|(at, _)| at)
}

/// Where `needle` first occurs in `haystack`.
pub fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|window| window == needle)
}

/// Where `needle` last occurs in `haystack`.
pub fn rfind(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).rposition(|window| window == needle)
}

/// Fails the test when the API key was ever written to the terminal (it must never reach the screen or the
/// scrollback).
pub fn assert_no_key_leak(pty: &Pty) {
    let raw = pty.raw_output();
    assert!(find(&raw, TEST_KEY.as_bytes()).is_none(), "the API key was printed to the terminal");
}

/// A screen dump between rulers, so blank rows and trailing text are visible in a failure message.
pub fn framed(screen: &str) -> String {
    let ruler = "─".repeat(40);
    format!("{ruler}\n{screen}\n{ruler}")
}
