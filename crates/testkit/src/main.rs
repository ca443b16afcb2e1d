//! `tandem-fake-llm`: serves a JSON scenario on 127.0.0.1 until killed, for scripts and subprocess tests.
//!
//! Arguments are parsed by hand to keep the test kit's dependency set small.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use tandem_testkit::{FakeServer, Scenario, ServerOptions};

const USAGE: &str = "\
usage: tandem-fake-llm --scenario FILE [--port N] [--log FILE]

Serves a scripted fake LLM on 127.0.0.1 (Anthropic POST /v1/messages, OpenAI POST /v1/chat/completions,
GET /health) and prints `listening on http://127.0.0.1:PORT` once ready.

  --scenario FILE  JSON scenario: {\"replies\": [...]} (required)
  --port N         port to bind (default 0: a free one)
  --log FILE       append every model request as one JSON line
  --help           print this help";

#[derive(Debug)]
struct Args {
    scenario: PathBuf,
    options: ServerOptions,
}

enum Parsed {
    Run(Args),
    Help,
}

fn parse(mut argv: impl Iterator<Item = String>) -> Result<Parsed, String> {
    let mut scenario = None;
    let mut options = ServerOptions::default();
    while let Some(arg) = argv.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_owned(), Some(v.to_owned())),
            _ => (arg.clone(), None),
        };
        let mut value = |name: &str| inline.clone().or_else(|| argv.next()).ok_or(format!("{name} needs a value"));
        match flag.as_str() {
            "-h" | "--help" => return Ok(Parsed::Help),
            "--scenario" => scenario = Some(PathBuf::from(value("--scenario")?)),
            "--port" => {
                let v = value("--port")?;
                options.port = v.parse().map_err(|_| format!("invalid --port {v:?}"))?;
            }
            "--log" => options.log = Some(PathBuf::from(value("--log")?)),
            other => return Err(format!("unexpected argument {other:?}")),
        }
    }
    let scenario = scenario.ok_or("--scenario is required")?;
    Ok(Parsed::Run(Args { scenario, options }))
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let args = match parse(std::env::args().skip(1)) {
        Ok(Parsed::Run(args)) => args,
        Ok(Parsed::Help) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("tandem-fake-llm: {e}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let scenario = match Scenario::from_file(&args.scenario) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("tandem-fake-llm: {e}");
            return ExitCode::from(2);
        }
    };
    let server = match FakeServer::start_with(scenario, args.options).await {
        Ok(s) => s,
        Err(e) => {
            eprintln!("tandem-fake-llm: cannot listen: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut stdout = std::io::stdout();
    let _ = writeln!(stdout, "listening on {}", server.url());
    let _ = stdout.flush();
    if tokio::signal::ctrl_c().await.is_err() {
        std::future::pending::<()>().await;
    }
    drop(server);
    ExitCode::SUCCESS
}
