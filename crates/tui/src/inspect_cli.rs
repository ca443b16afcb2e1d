//! `tandem inspect SESSION [N] [--json | --curl]`: the API inspector's record, headless. Without `N`, the list of
//! the session's model requests (and its subagents'), as a table or, with `--json`, as a JSON array of the same
//! rows; with `N`, that exchange in full as JSON (`--json`, the default) or as a `curl` command that sends the
//! same request again (`--curl`, the key read from the environment at run time, never written out).

use tandem_core::config::Paths;
use tandem_core::inspect::{self, Exchange};
use tandem_core::session;

use crate::pipe::{say, say_part};
use crate::ui::inspector::cut;

/// `tandem inspect`: what a session sent to the model and what came back.
#[derive(Clone, Debug, clap::Args)]
pub struct InspectArgs {
    /// The session's id (or a unique start of it), as `tandem sessions` lists them.
    session: String,
    /// The request to show (its number in the list).
    request: Option<u64>,
    /// Print the request as a curl command.
    #[arg(long, conflicts_with = "json")]
    curl: bool,
    /// Print the request and its response as JSON (the default with a number); without one, the list as JSON.
    #[arg(long)]
    json: bool,
}

/// Runs `tandem inspect …` and returns the exit code.
pub fn run(cli: InspectArgs) -> u8 {
    let env = |name: &str| std::env::var(name).ok();
    let paths = Paths::discover(&env);
    let found = match session::find(&paths.data_dir, &cli.session) {
        Ok(found) => found,
        Err(error) => {
            eprintln!("tandem inspect: {error}");
            return 1;
        }
    };
    let exchanges = inspect::read_session(&found.path.with_extension(""));
    let Some(number) = cli.request else {
        match cli.json {
            true => say!("{}", serde_json::to_string_pretty(&list_json(&exchanges)).unwrap_or_default()),
            false => say_part!("{}", list(&exchanges)),
        }
        return 0;
    };
    let Some((_, exchange)) = exchanges.iter().find(|(_, exchange)| exchange.id == number) else {
        eprintln!("tandem inspect: session {} has no request {number} (it has {})", found.id, exchanges.len());
        return 1;
    };
    if cli.curl {
        match curl(exchange) {
            Ok(command) => say!("{command}"),
            Err(why) => {
                eprintln!("tandem inspect: {why}");
                return 1;
            }
        }
    } else {
        say!("{}", serde_json::to_string_pretty(exchange).unwrap_or_default());
    }
    0
}

/// One line a request: number, time, what for, model, attempt, status, latency, tokens, cost.
pub fn list(exchanges: &[(String, Exchange)]) -> String {
    if exchanges.is_empty() {
        return "No model requests were recorded for this session.\n".to_owned();
    }
    let mut out = format!(
        "{:>4}  {:<8}  {:>4}  {:<18}  {:<22}  {:>3}  {:>6}  {:>7}  {:>7}  {:>8}  {:>8}  {:>7}  {:>9}\n",
        "#", "time", "turn", "for", "model", "try", "status", "first", "total", "input", "cached", "output", "cost"
    );
    for (agent, exchange) in exchanges {
        let purpose = if agent.is_empty() { exchange.purpose_label() } else { agent.clone() };
        let usage = exchange.usage.unwrap_or_default();
        let status = exchange.status_label();
        let ms = |value: Option<u64>| value.map_or("-".to_owned(), |ms| format!("{ms} ms"));
        let cost = exchange.cost_label();
        out.push_str(&format!(
            "{:>4}  {:<8}  {:>4}  {:<18}  {:<22}  {:>3}  {:>6}  {:>7}  {:>7}  {:>8}  {:>8}  {:>7}  {:>9}\n",
            exchange.id,
            clock(exchange.at_ms),
            if exchange.turn == 0 { "-".to_owned() } else { exchange.turn.to_string() },
            cut(&purpose, 18),
            cut(&exchange.model, 22),
            exchange.attempt,
            status,
            ms(exchange.first_token_ms.or(exchange.first_event_ms)),
            ms(Some(exchange.total_ms)),
            usage.input_tokens,
            usage.cache_read_input_tokens,
            usage.output_tokens,
            cost,
        ));
        if let Some(error) = &exchange.error {
            out.push_str(&format!("      {}\n", cut(error, 110)));
        }
    }
    out
}

/// The list's rows as JSON, for scripts: everything of each exchange but its bodies and events.
pub fn list_json(exchanges: &[(String, Exchange)]) -> serde_json::Value {
    let rows = exchanges.iter().map(|(agent, exchange)| {
        serde_json::json!({
            "id": exchange.id,
            "at_ms": exchange.at_ms,
            "turn": exchange.turn,
            "purpose": exchange.purpose,
            "replay_of": exchange.replay_of,
            "edited": exchange.edited,
            "subagent": (!agent.is_empty()).then_some(agent),
            "model": exchange.model,
            "attempt": exchange.attempt,
            "status": exchange.status,
            "error": exchange.error,
            "first_event_ms": exchange.first_event_ms,
            "first_token_ms": exchange.first_token_ms,
            "total_ms": exchange.total_ms,
            "usage": exchange.usage,
            "cost_usd": exchange.cost_usd(),
        })
    });
    serde_json::Value::Array(rows.collect())
}

/// `HH:MM:SS` (UTC) of a time in milliseconds since the epoch.
fn clock(at_ms: u64) -> String {
    let seconds = at_ms / 1000 % 86_400;
    format!("{:02}:{:02}:{:02}", seconds / 3600, seconds / 60 % 60, seconds % 60)
}

/// A curl command that sends the recorded request again: its URL, headers (the key from the environment
/// variable the provider reads, never the key itself) and body.
pub fn curl(exchange: &Exchange) -> Result<String, String> {
    if exchange.url.is_empty() {
        return Err(format!("request {} has no recorded HTTP request (the demo model)", exchange.id));
    }
    let body = match (&exchange.request_body, &exchange.request_body_start) {
        (Some(body), _) => body.to_string(),
        (None, Some(_)) => {
            return Err(format!(
                "request {}'s body was larger than the record keeps whole ({} bytes): it can't be sent again",
                exchange.id, exchange.request_bytes
            ));
        }
        (None, None) => String::new(),
    };
    let mut command = format!("curl -sS -N -X {} {}", exchange.method, shell_quote(&exchange.url));
    for (name, value) in &exchange.request_headers {
        let value = match (name.as_str(), value.as_str()) {
            ("x-api-key", "[redacted]") => "$ANTHROPIC_API_KEY".to_owned(),
            ("authorization", "[redacted]") => "Bearer $OPENAI_API_KEY".to_owned(),
            (_, value) => value.to_owned(),
        };
        // Double quotes, so the shell puts the key in from the environment.
        let header = format!("{name}: {value}").replace('\\', "\\\\").replace('"', "\\\"").replace('`', "\\`");
        command.push_str(&format!(" \\\n  -H \"{header}\""));
    }
    command.push_str(&format!(" \\\n  --data-binary {}", shell_quote(&body)));
    Ok(command)
}

/// `text` in single quotes for a POSIX shell.
fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}
