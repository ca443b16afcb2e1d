//! The `tandem` binary.

use std::io::{IsTerminal, Read};
use std::process::ExitCode;

use clap::error::ErrorKind;

use tandem_core::setup;
use tandem_tui::cli::{Cli, Command};
use tandem_tui::headless::{self, HeadlessOptions};

fn main() -> ExitCode {
    // First, while this is the only thread: `setenv` is only sound then.
    #[cfg(target_os = "linux")]
    let environment_hidden = tandem_core::sandbox::hide_own_environment();
    tandem_core::sandbox::harden_self();
    quiet_for_caught_panics();
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let a_command = tandem_tui::cli::names_a_command(&args);
    let (parsed, warnings) = tandem_tui::cli::parse_tolerant(args);
    for warning in warnings {
        eprintln!("tandem: warning: {warning}");
    }
    let mut cli = match parsed {
        Ok(cli) => cli,
        Err(error) => match error.kind() {
            ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
                let _ = error.print();
                return ExitCode::SUCCESS;
            }
            // A command's usage and its `--help` say more than one line; a session's errors stay one line.
            _ if a_command => {
                let _ = error.print();
                return ExitCode::from(2);
            }
            _ => return usage_error(&first_line(&error.render().to_string())),
        },
    };
    match cli.command.take() {
        Some(Command::Sessions) => return list_sessions(),
        Some(Command::Inspect(args)) => return ExitCode::from(tandem_tui::inspect_cli::run(args)),
        Some(Command::Mcp(args)) => return ExitCode::from(tandem_tui::mcp_cli::run(args)),
        None => {}
    }
    init_logging();
    #[cfg(target_os = "linux")]
    if let Err(why) = environment_hidden {
        tracing::warn!("tandem's environment stays readable in /proc to root: {why}");
    }

    if cli.await_initialize && !cli.streaming_input() {
        eprintln!("tandem: warning: --await-initialize only means something with --input-format stream-json");
    }
    if !cli.headless() {
        return interactive(cli);
    }
    if cli.streaming_input() {
        return streaming(cli);
    }
    let prompt = match read_prompt(&cli) {
        Ok(prompt) => prompt,
        Err(message) => return usage_error(&message),
    };
    let cwd = match std::env::current_dir() {
        Ok(cwd) => cwd,
        Err(error) => return usage_error(&format!("cannot read the working directory: {error}")),
    };
    let Some(runtime) = runtime() else { return ExitCode::from(1) };
    let options = HeadlessOptions {
        format: cli.output_format,
        include_partial_messages: cli.include_partial_messages,
        include_hook_events: cli.include_hook_events,
    };
    let code = runtime.block_on(async {
        match setup::build(&cli.session_options(), cwd) {
            Ok(mut config) => {
                config.raw_stream = options.include_partial_messages;
                headless::run(config, prompt, options).await
            }
            Err(error) => {
                eprintln!("tandem: {}", error.0);
                2
            }
        }
    });
    // Don't wait for tool processes or streams that are still winding down.
    runtime.shutdown_background();
    end_commands();
    ExitCode::from(code as u8)
}

/// `--input-format stream-json`: NDJSON frames on stdin (the Agent SDK's control protocol) until it closes.
fn streaming(cli: Cli) -> ExitCode {
    if cli.output_format != tandem_tui::cli::OutputFormat::StreamJson {
        return usage_error("--input-format stream-json needs --output-format stream-json");
    }
    let cwd = match std::env::current_dir() {
        Ok(cwd) => cwd,
        Err(error) => return usage_error(&format!("cannot read the working directory: {error}")),
    };
    let Some(runtime) = runtime() else { return ExitCode::from(1) };
    let code = runtime.block_on(tandem_tui::sdk::run(cli.session_options(), cwd, &cli));
    runtime.shutdown_background();
    end_commands();
    ExitCode::from(code as u8)
}

/// Whatever way tandem ends, no command it started outlives it (the runtime's tasks may not have been dropped).
fn end_commands() {
    tandem_core::shutdown::end_everything();
}

/// The async runtime: two workers are plenty for one agent and one terminal.
fn runtime() -> Option<tokio::runtime::Runtime> {
    match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
        Ok(runtime) => Some(runtime),
        Err(error) => {
            eprintln!("tandem: error: cannot start the async runtime: {error}");
            None
        }
    }
}

/// `tandem sessions`: the saved sessions, newest first.
fn list_sessions() -> ExitCode {
    let env = |name: &str| std::env::var(name).ok();
    let paths = tandem_core::config::Paths::discover(&env);
    let sessions = tandem_core::session::list(&paths.data_dir);
    tandem_tui::pipe::print(format_args!("{}", tandem_core::session::format_summary_table(&sessions)));
    let unreadable = tandem_core::session::unreadable(&paths.data_dir);
    if !unreadable.is_empty() {
        tandem_tui::pipe::print(format_args!(
            "\nDamaged, not listed above (they can't be resumed; move them away to hide them):\n"
        ));
        for (_, why) in &unreadable {
            tandem_tui::pipe::print(format_args!("  {why}\n"));
        }
    }
    ExitCode::SUCCESS
}

/// The full-screen app.
fn interactive(cli: Cli) -> ExitCode {
    if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
        return usage_error(
            "the interactive app needs a terminal; for scripts and pipes use headless mode: tandem -p \"prompt\"",
        );
    }
    let cwd = match std::env::current_dir() {
        Ok(cwd) => cwd,
        Err(error) => return usage_error(&format!("cannot read the working directory: {error}")),
    };
    let Some(runtime) = runtime() else { return ExitCode::from(1) };
    // `--resume` without an id: the app shows the saved sessions and starts the agent on the one picked.
    let pick_session = if cli.resume.as_deref() == Some("") {
        let env = |name: &str| std::env::var(name).ok();
        let sessions = tandem_core::session::list(&tandem_core::config::Paths::discover(&env).data_dir);
        if sessions.is_empty() {
            return usage_error("no saved sessions to resume yet: start one with `tandem`");
        }
        Some(sessions)
    } else {
        None
    };
    let code = runtime.block_on(async {
        let options = cli.session_options();
        let config = match setup::build(&options, cwd.clone()) {
            _ if pick_session.is_some() || cli.demo => None,
            Ok(config) => Some(config),
            Err(_) if setup::needs_onboarding(&options) => None,
            Err(error) => {
                eprintln!("tandem: {}", error.0);
                return 2;
            }
        };
        let (base, base_cwd) = (options.clone(), cwd.clone());
        let configure = move |provider: &str, base_url: &str, model: &str| {
            let mut options = base.clone();
            options.provider.provider = Some(provider.to_owned());
            options.provider.base_url = Some(base_url.to_owned());
            options.provider.model = Some(model.to_owned());
            setup::build(&options, base_cwd.clone()).map_err(|error| error.0)
        };
        let (base, base_cwd) = (options.clone(), cwd.clone());
        let resume = move |id: &str| {
            let mut options = base.clone();
            options.session.resume = Some(id.to_owned());
            setup::build(&options, base_cwd.clone()).map_err(|error| error.0)
        };
        let mouse_capture =
            !cli.no_mouse && std::env::var("TANDEM_NO_MOUSE").map_or(true, |value| value.is_empty() || value == "0");
        let launch = tandem_tui::tui::Launch {
            config,
            configure: Box::new(configure),
            initial_prompt: cli.prompt.clone().filter(|prompt| !prompt.trim().is_empty()),
            cwd,
            screen: tandem_tui::tui::ScreenOptions { mouse_capture },
            config_file: setup::config_file_path(),
            pick_session,
            resume: Box::new(resume),
            demo: cli.demo,
        };
        tandem_tui::tui::run(launch).await
    });
    runtime.shutdown_background();
    end_commands();
    ExitCode::from(code as u8)
}

/// How long a prompt given as an argument waits for piped text to begin (stdin may be a pipe nobody writes to).
const PIPED_TEXT_WAIT: std::time::Duration = std::time::Duration::from_secs(3);

/// The prompt from the argument, from stdin when it is not a terminal, or both: `git diff | tandem -p "Review
/// this"` sends the argument, a blank line, then the piped text.
fn read_prompt(cli: &Cli) -> Result<String, String> {
    let argument = cli.prompt.clone().filter(|prompt| !prompt.trim().is_empty());
    let stdin = std::io::stdin();
    let piped = if stdin.is_terminal() {
        String::new()
    } else {
        let wait = argument.as_ref().map(|_| PIPED_TEXT_WAIT);
        read_piped(wait).map_err(|error| format!("cannot read the prompt from stdin: {error}"))?
    };
    match (argument, piped.trim().is_empty()) {
        (Some(prompt), true) => Ok(prompt),
        (Some(prompt), false) => Ok(format!("{prompt}\n\n{piped}")),
        (None, false) => Ok(piped),
        (None, true) => Err("no prompt: pass it as an argument (tandem -p \"…\") or on stdin".into()),
    }
}

/// All of stdin. With `first_byte_wait`, gives up (returning nothing) when no byte arrived by then.
fn read_piped(first_byte_wait: Option<std::time::Duration>) -> std::io::Result<String> {
    let (tx, rx) = std::sync::mpsc::channel::<std::io::Result<Vec<u8>>>();
    std::thread::spawn(move || {
        let mut stdin = std::io::stdin().lock();
        let mut buffer = [0u8; 64 * 1024];
        loop {
            match stdin.read(&mut buffer) {
                Ok(0) => break,
                Ok(read) => {
                    if tx.send(Ok(buffer[..read].to_vec())).is_err() {
                        break;
                    }
                }
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(error) => {
                    let _ = tx.send(Err(error));
                    break;
                }
            }
        }
    });
    let mut bytes = Vec::new();
    let first = match first_byte_wait {
        Some(wait) => match rx.recv_timeout(wait) {
            Ok(chunk) => Some(chunk),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                eprintln!(
                    "tandem: warning: no input arrived on stdin in {}s; running the prompt without it",
                    wait.as_secs()
                );
                return Ok(String::new());
            }
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => None,
        },
        None => rx.recv().ok(),
    };
    if let Some(chunk) = first {
        bytes.extend(chunk?);
        for chunk in rx {
            bytes.extend(chunk?);
        }
    }
    String::from_utf8(bytes).map_err(|_| std::io::Error::other("stdin is not UTF-8 text"))
}

fn usage_error(message: &str) -> ExitCode {
    let message = message.strip_prefix("error: ").unwrap_or(message);
    eprintln!("tandem: {message}");
    ExitCode::from(2)
}

/// A panic core catches and reports as an error (see `provider::sse::panic_is_caught`) is not printed as a crash.
fn quiet_for_caught_panics() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !tandem_core::provider::sse::panic_is_caught() {
            previous(info);
        }
    }));
}

fn first_line(text: &str) -> String {
    let line = text.lines().find(|line| !line.trim().is_empty()).unwrap_or("invalid arguments");
    format!("{line} (see tandem --help)")
}

/// Logs go to a file, never to the terminal: set `TANDEM_LOG` (e.g. `debug`) to enable them; the file is
/// `tandem.log` in tandem's data directory.
fn init_logging() {
    let Ok(filter) = std::env::var("TANDEM_LOG") else { return };
    let env = |name: &str| std::env::var(name).ok();
    let paths = tandem_core::config::Paths::discover(&env);
    if std::fs::create_dir_all(&paths.data_dir).is_err() {
        return;
    }
    let Ok(file) = std::fs::OpenOptions::new().create(true).append(true).open(paths.data_dir.join("tandem.log")) else {
        return;
    };
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
        .with_writer(std::sync::Mutex::new(file))
        .with_ansi(false)
        .try_init();
}
