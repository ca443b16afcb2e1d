//! The interactive runtime: owns the terminal, runs one `select!` loop over terminal input, agent events and a
//! frame timer, applies [`Effect`]s, and redraws only when something changed — at most once per frame, so a
//! fast stream of deltas costs one redraw per frame, not one per delta. Idle, it sleeps.

mod clipboard;
mod external_editor;
pub mod history_file;
pub mod scrollback;
mod terminal;
mod terminal_input;

use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use ratatui::crossterm::event::Event as TermEvent;
use ratatui::crossterm::execute;
use ratatui::crossterm::terminal::{BeginSynchronizedUpdate, EndSynchronizedUpdate};
use tandem_core::agent::{self, AgentConfig, AgentHandle};
use tandem_core::config::Paths;
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::mpsc;

use crate::app::editor::Editor;
use crate::app::onboarding::Onboarding;
use crate::app::{App, Effect, Input};
use crate::ui::status::StatusInfo;
use crate::ui::theme::{ColorDepth, Theme};
use tandem_core::provider::local::{PROBE_TIMEOUT, probe_local_servers};

pub use terminal::ScreenOptions;

/// At most this often while content changes (≈ 60 frames a second).
const FRAME: Duration = Duration::from_millis(16);
/// How often spinners move while working and nothing else changes.
const ANIMATION: Duration = Duration::from_millis(100);

/// Builds an agent configuration from (provider, base URL, model), for a server picked on the onboarding screen.
pub type Configure = dyn Fn(&str, &str, &str) -> Result<AgentConfig, String>;

/// Builds the configuration that resumes the session with this id.
pub type ResumeSession = dyn Fn(&str) -> Result<AgentConfig, String>;

/// How the interactive session starts.
pub struct Launch {
    /// `None` when no provider is configured: the onboarding screen opens.
    pub config: Option<AgentConfig>,
    /// Builds a configuration for a provider picked on the onboarding screen.
    pub configure: Box<Configure>,
    pub initial_prompt: Option<String>,
    pub cwd: PathBuf,
    pub screen: ScreenOptions,
    pub config_file: PathBuf,
    /// `--resume` without an id: the sessions to pick from (the agent starts once one is picked).
    pub pick_session: Option<Vec<tandem_core::session::SessionSummary>>,
    /// Builds the configuration that resumes a picked session.
    pub resume: Box<ResumeSession>,
    /// `--demo`: the scripted demo starts at once.
    pub demo: bool,
}

/// Runs the app until the user quits; returns the exit code.
pub async fn run(launch: Launch) -> i32 {
    terminal::install_panic_hook();
    if let Err(err) = terminal::enter(launch.screen) {
        terminal::restore();
        eprintln!("tandem: cannot set up the terminal: {err}");
        return 1;
    }
    let _guard = terminal::Guard;
    match terminal::terminal() {
        Ok(term) => event_loop(term, launch).await,
        Err(err) => {
            terminal::restore();
            eprintln!("tandem: cannot set up the terminal: {err}");
            1
        }
    }
}

#[expect(
    clippy::too_many_lines,
    reason = "the app's event loop (terminal, agent, timers, signals) and its effects; the effects are where to cut it"
)]
async fn event_loop(mut term: terminal::Term, launch: Launch) -> i32 {
    let env = |name: &str| std::env::var(name).ok();
    let theme = Theme::new(ColorDepth::detect(&env));
    let paths = Paths::discover(&env);
    let history_path = history_file::default_path(&paths);
    let history = history_file::load(&history_path);
    let status = StatusInfo::default();
    let mut app = App::new(theme, Editor::new(history), status, launch.cwd.clone());
    if let Ok(size) = term.size() {
        app.set_size(size.width, size.height);
    }

    let (probe_tx, mut probe_rx) = mpsc::unbounded_channel();
    let mut agent: Option<AgentHandle> = None;
    if let Some(sessions) = launch.pick_session.clone() {
        app.session_picker = Some(crate::app::picker::SessionPicker { sessions, selected: 0, in_session: false });
    }
    match launch.config {
        _ if app.session_picker.is_some() || launch.demo => {}
        Some(config) => {
            app.tools = config.tools.clone();
            if let Some(resume) = &config.resume {
                app.applied = resume.applied.clone();
                app.restore_conversation(&resume.messages);
                app.status.usage = resume.usage;
                app.resumed_notice("continue where you left off");
            }
            agent = Some(start_agent(&mut app, config));
        }
        None => {
            app.onboarding = Some(Onboarding::new(launch.config_file.clone()));
            spawn_probe(probe_tx.clone());
        }
    }
    // The demo's scratch project lives as long as the app (removed on exit).
    let mut demo_dir: Option<tempfile::TempDir> = None;
    if launch.demo {
        agent = start_demo(&mut app, &mut demo_dir);
    }
    if let (Some(prompt), Some(_)) = (launch.initial_prompt.clone(), agent.as_ref()) {
        let effects = app.submit(prompt, Instant::now());
        apply_simple(&effects, agent.as_ref());
    }

    let mut terminal_events = terminal_input::TerminalInput::start();
    let Some(mut exit_signals) = ExitSignals::watch() else {
        return 1;
    };
    let mut last_draw = Instant::now() - FRAME;
    let mut exit_code = 0;
    // Lets the end-to-end tests prove the terminal is restored when the app panics.
    let panic_after_first_frame = std::env::var_os("TANDEM_TEST_PANIC").is_some();
    let mut drew_working = false;

    loop {
        let now = Instant::now();
        if app.dirty && now.duration_since(last_draw) >= FRAME {
            app.hold_scroll_position();
            draw(&mut term, &app);
            app.dirty = false;
            // The first frame after a turn has laid out its final look: what the turn needed meanwhile is free.
            if drew_working && !app.working {
                tandem_core::heap::release_freed();
            }
            drew_working = app.working;
            last_draw = Instant::now();
            if panic_after_first_frame {
                panic!("TANDEM_TEST_PANIC: deliberate panic after the first frame");
            }
        }
        let mut wake = if app.dirty {
            last_draw + FRAME
        } else if app.is_animating() {
            last_draw + ANIMATION
        } else {
            now + Duration::from_secs(3600)
        };
        // A status message that expires must disappear then, not at the next key.
        if let Some(change) = app.next_change() {
            wake = wake.min(change.max(now));
        }

        let mut effects = Vec::new();
        tokio::select! {
            event = terminal_events.next() => match event {
                Some(Ok(event)) => {
                    if let Some(input) = terminal_input(event) {
                        effects = app.update(input, Instant::now());
                    }
                }
                Some(Err(_)) | None => break,
            },
            event = next_agent_event(&mut agent) => match event {
                Some(event) => {
                    effects = app.update(Input::Core(Box::new(event)), Instant::now());
                    // Take everything already queued before drawing: one frame for a burst of deltas.
                    if let Some(handle) = agent.as_mut() {
                        for _ in 0..512 {
                            match handle.events.try_recv() {
                                Ok(event) => effects.extend(app.update(Input::Core(Box::new(event)), Instant::now())),
                                Err(_) => break,
                            }
                        }
                    }
                }
                None => {
                    agent = None;
                    app.notice(crate::app::cells::NoticeKind::Error, "The agent stopped unexpectedly.");
                }
            },
            Some(servers) = probe_rx.recv() => {
                effects = app.update(Input::Probed(servers), Instant::now());
            }
            _ = tokio::time::sleep_until(wake.into()) => {
                if app.is_animating() || app.next_change().is_some_and(|change| change <= Instant::now()) {
                    app.dirty = true;
                }
                app.clock = Instant::now();
            }
            code = exit_signals.next() => { exit_code = code; break; }
        }

        let mut quit = false;
        // Effects in order; an effect's answer (an editor result, a listing) may bring more, handled the same way.
        let mut effects: std::collections::VecDeque<Effect> = effects.into();
        while let Some(effect) = effects.pop_front() {
            match effect {
                Effect::Op(op) => {
                    if let Some(handle) = &agent {
                        let prompt = matches!(op, tandem_protocol::Op::UserTurn { .. });
                        if let Ok(submission) = handle.ops.send(op)
                            && prompt
                        {
                            app.prompt_submitted(submission);
                        }
                    }
                }
                Effect::Copy(text) => {
                    let _ = clipboard::copy(&mut std::io::stdout(), &text);
                }
                Effect::OpenEditor { path, content } => {
                    let result = hand_over(&mut term, &mut terminal_events, launch.screen, || {
                        external_editor::edit(&path, &content)
                    })
                    .await;
                    exit_signals.forget_keyboard();
                    effects.extend(app.update(Input::EditorResult(result), Instant::now()));
                }
                Effect::StartSession { provider, choice, save } => {
                    match (launch.configure)(&provider, &choice.base_url, &choice.model) {
                        Ok(config) => {
                            agent = Some(start_agent(&mut app, config));
                            if save {
                                save_choice(&mut app, &launch.config_file, &choice);
                            }
                        }
                        Err(message) => app.notice(crate::app::cells::NoticeKind::Error, message),
                    }
                }
                Effect::Rescan => spawn_probe(probe_tx.clone()),
                Effect::StartDemo => {
                    if let Some(handle) = start_demo(&mut app, &mut demo_dir) {
                        agent = Some(handle);
                    }
                }
                Effect::EditFile { path } => {
                    let result = hand_over(&mut term, &mut terminal_events, launch.screen, || {
                        external_editor::edit_in_place(&path)
                    })
                    .await;
                    exit_signals.forget_keyboard();
                    if let Err(message) = result {
                        app.notice(crate::app::cells::NoticeKind::Error, message);
                    }
                    app.dirty = true;
                }
                Effect::ListMemories { open } => {
                    let root = tandem_core::permissions::settings::project_root(&app.cwd);
                    let topics = tandem_core::memory::MemoryStore::new(&paths.config_dir, &root).topics();
                    effects.extend(app.update(Input::Memories { topics, open }, Instant::now()));
                }
                Effect::ListRequests => {
                    let requests = tandem_core::session::find(&paths.data_dir, &app.session_id)
                        .map(|session| tandem_core::inspect::read_session(&session.path.with_extension("")))
                        .unwrap_or_default();
                    effects.extend(app.update(Input::Requests(requests), Instant::now()));
                }
                Effect::ListSessions => {
                    let mut sessions = tandem_core::session::list(&paths.data_dir);
                    // This directory's sessions, except the one running (resuming it onto itself means nothing).
                    sessions.retain(|session| session.cwd == app.cwd && session.id != app.session_id);
                    effects.extend(app.update(Input::Sessions(sessions), Instant::now()));
                }
                Effect::ResumeSession { id } => match (launch.resume)(&id) {
                    Ok(config) => {
                        // Resumed from inside a session (`/resume`): the running agent ends, its log stays saved.
                        if let Some(old) = agent.take() {
                            let _ = old.ops.send(tandem_protocol::Op::Interrupt);
                            let _ = old.ops.send(tandem_protocol::Op::Shutdown);
                            app.transcript.clear();
                            app.printed_cells = 0;
                        }
                        // The resumed session is announced as the session, not as a new one.
                        app.session_id.clear();
                        app.tools = config.tools.clone();
                        if let Some(resume) = &config.resume {
                            app.applied = resume.applied.clone();
                            app.restore_conversation(&resume.messages);
                            app.status.usage = resume.usage;
                            app.resumed_notice("continue where you left off");
                        }
                        agent = Some(start_agent(&mut app, config));
                    }
                    Err(message) => app.notice(crate::app::cells::NoticeKind::Error, message),
                },
                Effect::Suspend => {
                    terminal_events.pause().await;
                    suspend(&mut term, &mut app, launch.screen);
                    terminal_events.resume();
                }
                Effect::Redraw => {
                    let _ =
                        ratatui::backend::Backend::clear_region(term.backend_mut(), ratatui::backend::ClearType::All);
                    term.swap_buffers();
                    term.swap_buffers();
                    app.dirty = true;
                }
                Effect::Quit => quit = true,
            }
        }
        history_file::append(&history_path, &app.editor.history_mut().take_unsaved());
        if quit {
            break;
        }
    }

    if let Some(handle) = &agent {
        let _ = handle.ops.send(tandem_protocol::Op::Interrupt);
        let _ = handle.ops.send(tandem_protocol::Op::Shutdown);
    }
    terminal::restore();
    if exit_code != 0 {
        // Ended by a signal: its commands end now, not after the turn winds down.
        tandem_core::shutdown::end_everything();
    }
    // The session ends with its SessionEnd hooks (the terminal is already the user's again).
    if let Some(handle) = agent {
        let _ = tokio::time::timeout(crate::headless::SESSION_END_WAIT, handle.task).await;
    }
    let width = term.size().map(|size| size.width).unwrap_or(80);
    let mut stdout = std::io::stdout();
    let _ = scrollback::print_new_cells(&mut app, &mut stdout, width);
    if let Some(hint) = scrollback::resume_hint(&app) {
        let line = ratatui::text::Line::styled(hint, app.theme.dim);
        let _ = writeln!(stdout, "{}", scrollback::line_to_ansi(&line));
    }
    exit_code
}

fn start_agent(app: &mut App, config: AgentConfig) -> AgentHandle {
    app.status.provider = config.provider.endpoint().name.clone();
    app.status.model = config.model.id.clone();
    app.status.context_window = config.model.context_window;
    app.status.mode = config.permissions.mode;
    // Known prices start at $0 (or a resumed session's total); unknown ones stay unknown ("$?"), never $0.
    app.status.cost_usd = match &config.resume {
        Some(resume) => resume.cost_usd,
        None => config.model.prices.map(|_| 0.0),
    };
    app.bypass_allowed_from_mode();
    app.set_custom_commands(&config.commands, &config.skills);
    app.sandbox_description =
        tandem_core::sandbox::describe(config.sandbox.as_deref(), &tandem_core::sandbox::support());
    agent::spawn(config)
}

/// Starts the demo: a scratch copy of the example project, the scripted model, and its prompt typed for the user.
fn start_demo(app: &mut App, dir: &mut Option<tempfile::TempDir>) -> Option<AgentHandle> {
    let scratch = match crate::demo::scratch_copy() {
        Ok(scratch) => scratch,
        Err(error) => {
            app.notice(crate::app::cells::NoticeKind::Error, format!("Could not set up the demo project: {error}"));
            return None;
        }
    };
    app.onboarding = None;
    app.cwd = scratch.path().to_path_buf();
    app.status.demo = true;
    let handle = start_agent(app, crate::demo::config(scratch.path()));
    *dir = Some(scratch);
    let effects = app.submit(crate::demo::PROMPT.to_owned(), Instant::now());
    apply_simple(&effects, Some(&handle));
    Some(handle)
}

/// Hands the terminal to another program for `run` (the external editor): input reading stops, the screen is
/// restored, and both come back afterwards.
async fn hand_over<T>(
    term: &mut terminal::Term,
    input: &mut terminal_input::TerminalInput,
    screen: ScreenOptions,
    run: impl FnOnce() -> T,
) -> T {
    input.pause().await;
    terminal::restore();
    let result = tokio::task::block_in_place(run);
    reenter(term, screen);
    input.resume();
    result
}

/// Effects that need no terminal access.
fn apply_simple(effects: &[Effect], agent: Option<&AgentHandle>) {
    for effect in effects {
        if let (Effect::Op(op), Some(handle)) = (effect, agent) {
            let _ = handle.ops.send(op.clone());
        }
    }
}

async fn next_agent_event(agent: &mut Option<AgentHandle>) -> Option<tandem_protocol::EventMsg> {
    match agent {
        Some(handle) => handle.events.recv().await,
        None => std::future::pending().await,
    }
}

/// Remembers the welcome screen's choice in `config.toml`, and says so (or why not: the session runs anyway).
fn save_choice(app: &mut App, config_file: &std::path::Path, choice: &tandem_core::config::ProviderChoice) {
    use crate::app::cells::NoticeKind;
    match tandem_core::config::save_provider_choice(config_file, choice) {
        Ok(()) => app.notice(
            NoticeKind::Info,
            format!(
                "Saved to {}: tandem starts with {} ({}) from now on. Change it there, or with --provider and --model.",
                config_file.display(),
                choice.model,
                choice.name
            ),
        ),
        Err(message) => app.notice(NoticeKind::Error, format!("The choice was not saved: {message}")),
    }
}

fn spawn_probe(tx: mpsc::UnboundedSender<Vec<crate::app::onboarding::LocalServer>>) {
    tokio::spawn(async move {
        let servers = probe_local_servers(PROBE_TIMEOUT).await;
        let _ = tx.send(servers);
    });
}

fn terminal_input(event: TermEvent) -> Option<Input> {
    match event {
        TermEvent::Key(key) => Some(Input::Key(key)),
        TermEvent::Paste(text) => Some(Input::Paste(text)),
        TermEvent::Mouse(mouse) => Some(Input::Mouse(mouse)),
        TermEvent::Resize(width, height) => Some(Input::Resize(width, height)),
        TermEvent::FocusGained | TermEvent::FocusLost => None,
    }
}

fn draw(term: &mut terminal::Term, app: &App) {
    let mut stdout = std::io::stdout();
    let _ = execute!(stdout, BeginSynchronizedUpdate);
    let now = Instant::now();
    let _ = term.draw(|frame| crate::ui::frame::render(app, frame, now));
    let _ = execute!(stdout, EndSynchronizedUpdate);
    let _ = stdout.flush();
}

/// Back to the full screen after a suspend or the external editor: clear it and make ratatui forget what it
/// drew, so the next frame is painted in full. (`Terminal::clear` would first query the cursor position, and a
/// terminal that doesn't answer would leave the screen blank for seconds.)
fn reenter(term: &mut terminal::Term, screen: ScreenOptions) {
    let _ = terminal::enter(screen);
    let _ = ratatui::backend::Backend::clear_region(term.backend_mut(), ratatui::backend::ClearType::All);
    term.swap_buffers();
    term.swap_buffers();
}

/// Ctrl+Z: print the conversation so far to the normal screen, restore the terminal and stop; `fg` continues
/// here and the app comes back.
fn suspend(term: &mut terminal::Term, app: &mut App, screen: ScreenOptions) {
    terminal::restore();
    let width = term.size().map(|size| size.width).unwrap_or(80);
    let mut stdout = std::io::stdout();
    let _ = scrollback::print_new_cells(app, &mut stdout, width);
    let _ = writeln!(stdout, "tandem is suspended: type `fg` to return.");
    let _ = stdout.flush();
    let asked = Instant::now();
    let _ = rustix::process::kill_process(rustix::process::getpid(), rustix::process::Signal::TSTP);
    // The stop takes effect as the signal is delivered; give it that moment. Back this soon, nobody typed `fg`:
    // the kernel discarded the stop (the shell that started tandem has no job control).
    std::thread::sleep(Duration::from_millis(30));
    let stopped = asked.elapsed() >= SUSPEND_SEEN;
    reenter(term, screen);
    if !stopped {
        app.notice(
            crate::app::cells::NoticeKind::Warning,
            "Could not suspend: the shell that started tandem has no job control, so `fg` could not bring it back. \
             tandem is still running here.",
        );
    }
    app.dirty = true;
}

/// A suspend that lasted less than this was not a real stop (a person can't type `fg` that fast).
const SUSPEND_SEEN: Duration = Duration::from_millis(300);

/// The signals that end the app, terminal restored. Ctrl+C at the keyboard is a key in raw mode; SIGINT and
/// SIGQUIT come from outside (a multiplexer, an IDE, `kill`) and end it as its own quit does.
struct ExitSignals {
    term: tokio::signal::unix::Signal,
    hup: tokio::signal::unix::Signal,
    int: tokio::signal::unix::Signal,
    quit: tokio::signal::unix::Signal,
}

impl ExitSignals {
    fn watch() -> Option<ExitSignals> {
        Some(ExitSignals {
            term: signal(SignalKind::terminate()).ok()?,
            hup: signal(SignalKind::hangup()).ok()?,
            int: signal(SignalKind::interrupt()).ok()?,
            quit: signal(SignalKind::quit()).ok()?,
        })
    }

    /// The exit code of the next signal (128 + its number).
    async fn next(&mut self) -> i32 {
        tokio::select! {
            _ = self.term.recv() => 143,
            _ = self.hup.recv() => 129,
            _ = self.int.recv() => 130,
            _ = self.quit.recv() => 131,
        }
    }

    /// Drops a SIGINT or SIGQUIT that arrived while an editor had the terminal: there Ctrl+C and Ctrl+\ reach
    /// the whole foreground group, tandem too, and meant the editor.
    fn forget_keyboard(&mut self) {
        use futures::FutureExt;
        while let Some(Some(())) = self.int.recv().now_or_never() {}
        while let Some(Some(())) = self.quit.recv().now_or_never() {}
    }
}
