//! Attacks on the permission policy, run for real: every attempt is decided by the real policy in
//! `acceptEdits` and `default`, with the rules `Bash(git status)`, `Bash(echo hello)` and `Bash(ls:*)`, and
//! whatever it allows is run with bash in a scratch tree (see `attacks/harness.rs`). Nothing may change outside
//! the workspace or in its protected paths, no secret may be printed, and a fresh session's rules must be
//! unchanged. Figures (attempts, how many ran) are printed with `--nocapture`.

// Test code: a panic is how a failure is reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod attacks {
    pub(crate) mod corpus;
    pub(crate) mod harness;
}

use attacks::corpus::*;
use attacks::harness::{Outcome, attack};
use tandem_core::permissions::PermissionMode::{self, AcceptEdits, Default as DefaultMode};

const MODES: [PermissionMode; 2] = [AcceptEdits, DefaultMode];

fn read_attempts() -> Vec<Vec<String>> {
    READERS.iter().flat_map(|reader| OUTSIDE_READS.iter().map(move |path| vec![format!("{reader} {path}")])).collect()
}

fn write_attempts() -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> =
        WRITERS.iter().flat_map(|w| WRITE_TARGETS.iter().map(move |t| vec![w.replace('T', t)])).collect();
    // `T` also appears in option letters (`-T`): the writers above use none.
    out.extend(TARGET_DIR_FORMS.iter().flat_map(|f| TARGET_DIRS.iter().map(move |d| vec![f.replace('D', d)])));
    out
}

fn other_attempts() -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> =
        DANGEROUS_OPTIONS.iter().chain(PARSER_TRICKS).map(|c| vec![c.to_string()]).collect();
    out.extend(TWO_STEP.iter().map(|(a, b)| vec![a.to_string(), b.to_string()]));
    out.extend(red_team());
    out
}

/// Runs the attempts in both modes; `strict`: none may even be allowed (each one is bad as a whole).
fn run_all(name: &str, attempts: &[Vec<String>], strict: bool) {
    let mut violations = Vec::new();
    let mut ran = 0;
    for mode in MODES {
        for steps in attempts {
            let steps: Vec<&str> = steps.iter().map(String::as_str).collect();
            let Outcome { allowed_steps, violations: found } = attack(mode, &steps);
            ran += allowed_steps;
            violations.extend(found);
            if strict && allowed_steps > 0 {
                violations.push(format!("{steps:?} was allowed in {}", mode.as_str()));
            }
        }
    }
    eprintln!(
        "{name}: {} attempts × {} modes, {ran} steps allowed and run, {} violations",
        attempts.len(),
        MODES.len(),
        violations.len()
    );
    assert!(violations.is_empty(), "SECURITY: {} violations:\n{}", violations.len(), violations.join("\n"));
}

#[test]
fn reads_outside_the_workspace_never_run_unasked() {
    run_all("reads", &read_attempts(), true);
}

#[test]
fn writes_never_land_outside_or_on_protected_paths() {
    run_all("writes", &write_attempts(), true);
}

#[test]
fn dangerous_options_parser_tricks_and_two_step_attacks_do_nothing() {
    run_all("options, parser, two-step", &other_attempts(), false);
    // The dangerous options are refused outright.
    let strict: Vec<Vec<String>> = DANGEROUS_OPTIONS.iter().map(|c| vec![c.to_string()]).collect();
    run_all("options (strict)", &strict, true);
}

/// Round five's classes are seen by the analyser: the last step of every attempt asks, in every mode.
#[test]
fn shell_state_moved_config_outside_probes_and_git_programs_ask() {
    let mut allowed = Vec::new();
    for mode in MODES {
        for steps in must_ask() {
            let last: Vec<&str> = steps.iter().map(String::as_str).collect();
            if attacks::harness::decides_allow(mode, &last) {
                allowed.push(format!("{}: {:?}", mode.as_str(), steps.last().unwrap()));
            }
        }
    }
    assert!(allowed.is_empty(), "{} allowed:\n{}", allowed.len(), allowed.join("\n"));
}

/// The sandbox holds even where the analyser would be wrong: every read attempt, run as if it had been judged
/// read-only, and every write attempt, as if judged a workspace write (`acceptEdits`), run in the sandbox of that
/// grant; no secret may be printed and nothing outside the workspace or protected inside it may change.
#[test]
fn wrong_allows_cant_reach_a_secret_or_a_protected_path_in_the_sandbox() {
    if !attacks::harness::can_sandbox() {
        return;
    }
    use tandem_core::sandbox::Grant;
    let mut violations = Vec::new();
    let reads = read_attempts();
    for steps in &reads {
        let steps: Vec<&str> = steps.iter().map(String::as_str).collect();
        violations.extend(attacks::harness::attack_as_if_allowed(DefaultMode, Grant::ReadOnly, &steps));
    }
    let writes = write_attempts();
    for steps in &writes {
        let steps: Vec<&str> = steps.iter().map(String::as_str).collect();
        violations.extend(attacks::harness::attack_as_if_allowed(AcceptEdits, Grant::WorkspaceWrite, &steps));
        violations.extend(attacks::harness::attack_as_if_allowed(AcceptEdits, Grant::UserRule, &steps));
    }
    eprintln!(
        "sandbox, as if allowed: {} reads, {} writes (twice), {} violations",
        reads.len(),
        writes.len(),
        violations.len()
    );
    assert!(violations.is_empty(), "SECURITY: {} violations:\n{}", violations.len(), violations.join("\n"));
}

#[test]
fn file_tools_never_read_or_write_past_the_policy() {
    let attacks = file_tool_attacks();
    let mut violations = Vec::new();
    let mut ran = 0;
    for mode in MODES {
        for (tool, input) in &attacks {
            let outcome = attacks::harness::file_attack(mode, tool, input);
            ran += outcome.allowed_steps;
            violations.extend(outcome.violations);
        }
    }
    eprintln!(
        "file tools: {} attempts × {} modes, {ran} allowed and run, {} violations",
        attacks.len(),
        MODES.len(),
        violations.len()
    );
    assert!(attacks.len() >= 25, "{}", attacks.len());
    assert!(violations.is_empty(), "SECURITY: {} violations:\n{}", violations.len(), violations.join("\n"));
}

#[test]
fn the_corpus_is_big_enough() {
    let total = read_attempts().len() + write_attempts().len() + other_attempts().len();
    eprintln!("corpus: {total} attempts");
    assert!(total >= 600, "{total}");
}

#[test]
fn ordinary_work_runs_without_a_prompt() {
    use serde_json::json;
    use tandem_core::permissions::Decision;
    let tree = attacks::harness::Tree::new();
    let tools = tandem_core::tools::ToolRegistry::builtin();
    let bash = tools.get("Bash").unwrap();
    let everywhere = [
        "ls",
        "ls -la src",
        "cat a.txt",
        "head -n 3 src/main.rs",
        "grep -rn main src",
        "grep -rn --include=*.rs main .",
        "git status",
        "wc -l src/main.rs a.txt",
        "find . -name '*.rs' -type f",
        "cat src/*.rs",
        "sort a.txt | uniq -c | sort -rn | head",
        "echo done",
        "cat ./-/inside.txt",
        "diff a.txt src/main.rs",
        "jq . package.json",
        "[ -f src/main.rs ] && echo yes",
        "test -d src || echo no",
        "[[ -e a.txt && src/main.rs -nt a.txt ]] && echo newer",
        "command -v cargo",
        "which ls",
        "git log --oneline -5 --format=%h%x20%s",
    ];
    let accept_edits = [
        "mkdir -p src/x",
        "cp a.txt b.txt",
        "touch new.txt",
        "mv a.txt c.txt",
        "cp -r src src2",
        "mkdir -p build && touch out.txt",
    ];
    for command in everywhere {
        for mode in MODES {
            let decision = tree.policy(mode).decide(bash.as_ref(), &json!({ "command": command }));
            assert_eq!(decision, Decision::Allow, "{command:?} in {}", mode.as_str());
        }
    }
    for command in accept_edits {
        let decision = tree.policy(AcceptEdits).decide(bash.as_ref(), &json!({ "command": command }));
        assert_eq!(decision, Decision::Allow, "{command:?} in acceptEdits");
        let decision = tree.policy(DefaultMode).decide(bash.as_ref(), &json!({ "command": command }));
        assert!(matches!(decision, Decision::Ask { .. }), "{command:?} asks in default");
    }
}

/// A property test: random command lines from the tools and options the analyser knows (and some it doesn't),
/// over paths inside, outside, through links and onto protected files. Whatever the policy allows runs, and
/// must never touch what lies outside (a fixed seed, so a failure is reproducible).
#[test]
fn generated_commands_never_touch_the_canary() {
    const PROGRAMS: &[&str] = &[
        "cat", "head", "tail", "wc", "grep", "sort", "uniq", "cut", "ls", "du", "find", "cp", "mv", "mkdir", "touch",
        "diff", "stat", "od", "tac", "jq", "echo", "date", "file", "git", "realpath", "md5sum", "tee", "ln", "rm",
    ];
    const OPTIONS: &[&str] = &[
        "-r",
        "-R",
        "-a",
        "-f",
        "-l",
        "-s",
        "-L",
        "-P",
        "-t",
        "-T",
        "-o",
        "-n",
        "-c",
        "-p",
        "-v",
        "-x",
        "--",
        "-",
        "--out=",
        "--output=",
        "--target-directory=",
        "--t=",
        "--files0-from=",
        "--compress-program=",
        "--reference=",
        "-S",
        "--suffix=",
        "--backup",
        "-b",
        "-d",
        "-H",
        "--dereference",
        "--parents",
        "--link",
        "--sym",
        "--no-target-directory",
        "-exec",
        "-delete",
        "-fprint",
        "-name",
        "status",
        "log",
        "diff",
        "-C",
        "--no-index",
        "-e",
        "-f",
        "--rawfile",
    ];
    const PATHS: &[&str] = &[
        "a.txt",
        "src",
        "src/main.rs",
        "new",
        "-",
        "./-",
        "link_out",
        "link_out/canary.txt",
        "link_up",
        "link_up/outside",
        "rel/far",
        "rel",
        "dangling",
        "hl",
        "gitlink",
        ".git",
        ".git/config",
        ".git/hooks",
        ".tandem",
        ".claude",
        ".mcp.json",
        "evil",
        "evil/.",
        "evil/.tandem",
        "{OUT}",
        "{OUT}/canary.txt",
        "~/.ssh/id_rsa",
        "~",
        "..",
        "../outside",
        "*",
        "link_out/*",
        "sshlink",
        "x",
        "x/y",
        "/tmp",
        ".",
        "./",
    ];
    const GLUE: &[&str] = &[" && ", "; ", " | ", " || "];
    const REDIRECTS: &[&str] =
        &["", "", "", " > out.txt", " > {OUT}/r", " >> .git/config", " < {OUT}/canary.txt", " 2>/dev/null"];
    let mut rng = fastrand::Rng::with_seed(0x7a4d);
    let mut pick = |items: &[&'static str]| items[rng.usize(..items.len())];
    let mut attempts = Vec::new();
    for _ in 0..700 {
        let parts = 1 + usize::from(pick(&["1", "1", "2"]) == "2");
        let mut line = String::new();
        for part in 0..parts {
            if part > 0 {
                line.push_str(pick(GLUE));
            }
            line.push_str(pick(PROGRAMS));
            for _ in 0..(1 + (line.len() % 3)) {
                let option = pick(OPTIONS);
                line.push(' ');
                line.push_str(option);
                if option.ends_with('=') {
                    line.push_str(pick(PATHS));
                }
            }
            for _ in 0..(1 + (line.len() % 2)) {
                line.push(' ');
                line.push_str(pick(PATHS));
            }
            line.push_str(pick(REDIRECTS));
        }
        attempts.push(vec![line]);
    }
    run_all("generated", &attempts, false);
}
