//! The binary's instant paths: these need no configuration and no network.
//! (This file also makes `cargo test --workspace` build the `tandem` binary the end-to-end tests drive.)

// Test code: a panic is how a failure is reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

fn tandem() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_tandem"));
    command.env("TANDEM_CONFIG_DIR", std::env::temp_dir().join("tandem-cli-test-none"));
    command
}

#[test]
fn version_and_help_need_no_configuration() {
    let version = tandem().arg("--version").output().unwrap();
    assert!(version.status.success());
    assert!(String::from_utf8_lossy(&version.stdout).starts_with("tandem "));
    let help = tandem().arg("--help").output().unwrap();
    assert!(help.status.success());
    let text = String::from_utf8_lossy(&help.stdout);
    for flag in ["--print", "--output-format", "--permission-mode", "--allowedTools", "--max-turns"] {
        assert!(text.contains(flag), "{flag} missing from --help");
    }
}

#[test]
fn bad_flag_values_exit_2_with_one_line() {
    let output = tandem().args(["-p", "hi", "--output-format", "yaml"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("yaml"));
}

#[test]
fn unknown_flags_are_a_warning_not_an_exit() {
    // SDK options add flags this version may not know: they are named on stderr and the run goes on (here to
    // the next problem: no provider is configured).
    let output = tandem().args(["-p", "hi", "--no-such-flag"]).env_remove("ANTHROPIC_API_KEY").output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("warning: ignoring unknown option --no-such-flag"), "{stderr}");
    assert!(!stderr.contains("see tandem --help"), "{stderr}");
}
