//! Helpers for end-to-end tests: run the real `tandem` binary in a scratch workspace against the fake LLM
//! server, with a clean environment (no real keys, no user config).

// Test code: a panic is how a failure is reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

pub use tandem_testkit::{FakeServer, Scenario, WebPage, WebSite};

pub mod app;
pub mod process;
pub mod pty;

/// The key the tests hand to tandem; assertions check it never shows up in any output.
pub const TEST_KEY: &str = "sk-test-e2e-SECRET-do-not-print-0123456789";

/// The `tandem` binary built by `cargo test --workspace` (or `$TANDEM_BIN`).
pub fn tandem_bin() -> PathBuf {
    if let Some(path) = std::env::var_os("TANDEM_BIN") {
        return PathBuf::from(path);
    }
    // target/<profile>/deps/<test-binary> → target/<profile>/tandem
    let exe = std::env::current_exe().expect("current exe");
    let profile_dir = exe.parent().and_then(Path::parent).expect("target profile dir");
    let bin = profile_dir.join(format!("tandem{}", std::env::consts::EXE_SUFFIX));
    assert!(bin.exists(), "{} is missing: run the tests with `cargo test --workspace`", bin.display());
    bin
}

/// The fake MCP server (`tandem-fake-mcp`), built next to `tandem` by `cargo test --workspace`.
pub fn fake_mcp_bin() -> PathBuf {
    let bin = tandem_bin().with_file_name(format!("tandem-fake-mcp{}", std::env::consts::EXE_SUFFIX));
    assert!(bin.exists(), "{} is missing: run the tests with `cargo test --workspace`", bin.display());
    bin
}

/// A scratch project directory plus an empty tandem config directory.
pub struct Workspace {
    pub dir: tempfile::TempDir,
    pub config: tempfile::TempDir,
}

impl Default for Workspace {
    fn default() -> Self {
        Self::new()
    }
}

impl Workspace {
    pub fn new() -> Self {
        Workspace { dir: tempfile::tempdir().expect("tempdir"), config: tempfile::tempdir().expect("tempdir") }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn write(&self, name: &str, content: &str) -> PathBuf {
        let path = self.dir.path().join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("mkdir");
        }
        std::fs::write(&path, content).expect("write");
        path
    }

    /// Writes a file in the config directory (Claude Code's user directory is its `claude/`).
    pub fn write_config(&self, name: &str, content: &str) -> PathBuf {
        let path = self.config.path().join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("mkdir");
        }
        std::fs::write(&path, content).expect("write");
        path
    }

    pub fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.dir.path().join(name)).expect("read")
    }

    /// A `tandem` command in this workspace with a scrubbed environment.
    pub fn tandem(&self) -> Command {
        let mut command = Command::new(tandem_bin());
        command.current_dir(self.dir.path()).stdin(Stdio::null());
        for var in [
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_BASE_URL",
            "OPENAI_API_KEY",
            "OPENAI_BASE_URL",
            "OPENROUTER_API_KEY",
            "ANTHROPIC_SMALL_FAST_MODEL",
            "BRAVE_API_KEY",
            "TANDEM_LOG",
        ] {
            command.env_remove(var);
        }
        command
            .env("TANDEM_CONFIG_DIR", self.config.path())
            .env("CLAUDE_CONFIG_DIR", self.config.path().join("claude"))
            .env("TANDEM_RETRY_BASE_MS", "1");
        command
    }

    /// `tandem` pointed at the fake server as Anthropic.
    pub fn anthropic(&self, server: &FakeServer) -> Command {
        let mut command = self.tandem();
        command.env("ANTHROPIC_API_KEY", TEST_KEY).env("ANTHROPIC_BASE_URL", server.url());
        command
    }

    /// `tandem` pointed at the fake server's Chat Completions endpoint.
    pub fn openai(&self, server: &FakeServer) -> Command {
        let mut command = self.tandem();
        command.env("OPENAI_API_KEY", TEST_KEY).env("OPENAI_BASE_URL", format!("{}/v1", server.url())).args([
            "--provider",
            "openai",
            "--model",
            "gpt-4o",
        ]);
        command
    }
}

/// A finished run of the binary.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn of(output: Output) -> Run {
        let run = Run {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        };
        assert!(!run.stdout.contains(TEST_KEY) && !run.stderr.contains(TEST_KEY), "the API key leaked: {run:?}");
        assert!(!run.stderr.contains("panicked"), "tandem panicked: {}", run.stderr);
        run
    }

    /// stdout as JSON lines.
    pub fn lines(&self) -> Vec<Value> {
        self.stdout
            .lines()
            .filter(|line| !line.trim().is_empty())
            .map(|line| serde_json::from_str(line).unwrap_or_else(|err| panic!("not JSON: {line}: {err}")))
            .collect()
    }

    /// The `result` line of json / stream-json output.
    pub fn result(&self) -> Value {
        self.lines().into_iter().rev().find(|line| line["type"] == "result").expect("a result line")
    }

    /// `type` or `type/subtype` of each line.
    pub fn kinds(&self) -> Vec<String> {
        self.lines()
            .iter()
            .map(|line| match line["subtype"].as_str() {
                Some(subtype) => format!("{}/{subtype}", line["type"].as_str().unwrap_or("?")),
                None => line["type"].as_str().unwrap_or("?").to_owned(),
            })
            .collect()
    }
}

/// Runs a command to completion.
pub fn execute(mut command: Command) -> Run {
    Run::of(command.output().expect("run tandem"))
}

/// The tool results the model received in a recorded Anthropic request body.
pub fn tool_results(body: &Value) -> Vec<Value> {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|message| message["role"] == "user")
        .filter_map(|message| message["content"].as_array())
        .flatten()
        .filter(|block| block["type"] == "tool_result")
        .cloned()
        .collect()
}
