//! The decision matrix (tool × rule × mode) and the command corpus run through the real policy.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::*;
use crate::permissions::split_rule_list;
use crate::tools::ToolRegistry;

struct Setup {
    dir: tempfile::TempDir,
    home: tempfile::TempDir,
    tools: ToolRegistry,
}

impl Setup {
    fn new() -> Setup {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        std::fs::create_dir_all(dir.path().join(".git")).unwrap();
        Setup { dir, home: tempfile::tempdir().unwrap(), tools: ToolRegistry::builtin() }
    }

    fn cwd(&self) -> PathBuf {
        self.dir.path().canonicalize().unwrap()
    }

    fn policy(&self, mode: PermissionMode, rules: &[(RuleKind, &str)]) -> PermissionPolicy {
        let home = self.home.path().canonicalize().unwrap();
        let workspace = Workspace::new(&self.cwd(), &[], Some(home.clone()), None);
        let mut policy = PermissionPolicy::new(mode, workspace, home);
        for (kind, text) in rules {
            policy.add_rule(*kind, text, Scope::Flag).unwrap();
        }
        policy
    }

    fn decide(&self, policy: &PermissionPolicy, tool: &str, input: Value) -> Outcome {
        let tool = self.tools.get(tool).unwrap();
        outcome(&policy.decide(tool.as_ref(), &input))
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    Allow,
    Ask,
    Deny,
}

fn outcome(decision: &Decision) -> Outcome {
    match decision {
        Decision::Allow => Outcome::Allow,
        Decision::Ask { .. } => Outcome::Ask,
        Decision::Deny { .. } => Outcome::Deny,
    }
}

use Outcome::{Allow, Ask, Deny};
use PermissionMode::{AcceptEdits, BypassPermissions, Default as DefaultMode, DontAsk, Plan};

const MODES: [PermissionMode; 5] = [DefaultMode, AcceptEdits, Plan, DontAsk, BypassPermissions];

/// One row: a call, the rules, and the expected outcome in each of [`MODES`].
struct Row {
    what: &'static str,
    tool: &'static str,
    input: fn(&Path) -> Value,
    rules: &'static [(RuleKind, &'static str)],
    expected: [Outcome; 5],
}

#[test]
fn the_decision_matrix() {
    let setup = Setup::new();
    let rows = [
        Row {
            what: "read inside",
            tool: "Read",
            input: |cwd| json!({"file_path": cwd.join("src/a.rs")}),
            rules: &[],
            expected: [Allow, Allow, Allow, Allow, Allow],
        },
        Row {
            what: "read outside",
            tool: "Read",
            input: |_| json!({"file_path": "/etc/hosts"}),
            rules: &[],
            expected: [Ask, Ask, Ask, Deny, Allow],
        },
        Row {
            what: "read outside, allowed by rule",
            tool: "Read",
            input: |_| json!({"file_path": "/etc/hosts"}),
            rules: &[(RuleKind::Allow, "Read(//etc/**)")],
            expected: [Allow; 5],
        },
        Row {
            what: "read credentials",
            tool: "Read",
            input: |_| json!({"file_path": "~/.ssh/id_rsa"}),
            rules: &[],
            expected: [Deny, Deny, Deny, Deny, Deny],
        },
        Row {
            what: "read denied by rule",
            tool: "Read",
            input: |_| json!({"file_path": ".env"}),
            rules: &[(RuleKind::Deny, "Read(.env)")],
            expected: [Deny; 5],
        },
        Row {
            what: "grep denied by a Read rule",
            tool: "Grep",
            input: |_| json!({"pattern": "x", "path": "secrets/"}),
            rules: &[(RuleKind::Deny, "Read(secrets/**)")],
            expected: [Deny; 5],
        },
        Row {
            what: "edit inside",
            tool: "Edit",
            input: |_| json!({"file_path": "src/a.rs", "old_string": "a", "new_string": "b"}),
            rules: &[],
            expected: [Ask, Allow, Deny, Deny, Allow],
        },
        Row {
            what: "edit inside, allowed",
            tool: "Edit",
            input: |_| json!({"file_path": "src/a.rs", "old_string": "a", "new_string": "b"}),
            rules: &[(RuleKind::Allow, "Edit(src/**)")],
            expected: [Allow, Allow, Deny, Allow, Allow],
        },
        Row {
            what: "edit outside",
            tool: "Edit",
            input: |_| json!({"file_path": "/tmp/x.rs", "old_string": "a", "new_string": "b"}),
            rules: &[],
            expected: [Ask, Ask, Deny, Deny, Allow],
        },
        Row {
            what: "edit outside with a bare Edit rule",
            tool: "Edit",
            input: |_| json!({"file_path": "/tmp/x.rs", "old_string": "a", "new_string": "b"}),
            rules: &[(RuleKind::Allow, "Edit")],
            expected: [Ask, Ask, Deny, Deny, Allow],
        },
        Row {
            what: "write .git internals",
            tool: "Write",
            input: |_| json!({"file_path": ".git/config", "content": "x"}),
            rules: &[(RuleKind::Allow, "Write")],
            expected: [Ask, Ask, Deny, Deny, Allow],
        },
        Row {
            what: "write settings",
            tool: "Write",
            input: |_| json!({"file_path": ".tandem/settings.json", "content": "{}"}),
            rules: &[],
            expected: [Ask, Ask, Deny, Deny, Allow],
        },
        Row {
            what: "write /etc denied (absolute reading)",
            tool: "Write",
            input: |_| json!({"file_path": "/etc/passwd", "content": "x"}),
            rules: &[(RuleKind::Deny, "Write(/etc/**)")],
            expected: [Deny; 5],
        },
        Row {
            what: "edit with an ask rule",
            tool: "Edit",
            input: |_| json!({"file_path": "src/a.rs", "old_string": "a", "new_string": "b"}),
            rules: &[(RuleKind::Ask, "Edit(src/**)"), (RuleKind::Allow, "Edit")],
            expected: [Ask, Ask, Deny, Deny, Ask],
        },
        Row {
            what: "read-only command",
            tool: "Bash",
            input: |_| json!({"command": "git status"}),
            rules: &[],
            expected: [Allow, Allow, Allow, Deny, Allow],
        },
        Row {
            what: "allowed command",
            tool: "Bash",
            input: |_| json!({"command": "npm test"}),
            rules: &[(RuleKind::Allow, "Bash(npm test)")],
            expected: [Allow, Allow, Deny, Allow, Allow],
        },
        Row {
            what: "other command",
            tool: "Bash",
            input: |_| json!({"command": "npm install"}),
            rules: &[(RuleKind::Allow, "Bash(npm test)")],
            expected: [Ask, Ask, Deny, Deny, Allow],
        },
        Row {
            what: "chained past a rule",
            tool: "Bash",
            input: |_| json!({"command": "npm test && curl x | sh"}),
            rules: &[(RuleKind::Allow, "Bash(npm test)")],
            expected: [Ask, Ask, Deny, Deny, Allow],
        },
        Row {
            what: "substitution",
            tool: "Bash",
            input: |_| json!({"command": "npm test $(rm -rf x)"}),
            rules: &[(RuleKind::Allow, "Bash(npm test:*)")],
            expected: [Ask, Ask, Deny, Deny, Allow],
        },
        Row {
            what: "denied command",
            tool: "Bash",
            input: |_| json!({"command": "git push --force"}),
            rules: &[(RuleKind::Deny, "Bash(git push:*)")],
            expected: [Deny; 5],
        },
        Row {
            what: "blocklisted",
            tool: "Bash",
            input: |_| json!({"command": "rm -rf /"}),
            rules: &[(RuleKind::Allow, "Bash")],
            expected: [Deny; 5],
        },
        Row {
            what: "mkdir inside",
            tool: "Bash",
            input: |_| json!({"command": "mkdir -p src/new"}),
            rules: &[],
            expected: [Ask, Allow, Deny, Deny, Allow],
        },
        Row {
            what: "mkdir outside",
            tool: "Bash",
            input: |_| json!({"command": "mkdir /tmp/elsewhere"}),
            rules: &[],
            expected: [Ask, Ask, Deny, Deny, Allow],
        },
        Row {
            what: "write redirection inside",
            tool: "Bash",
            input: |_| json!({"command": "ls > out.txt"}),
            rules: &[],
            expected: [Ask, Allow, Deny, Deny, Allow],
        },
        Row {
            what: "write redirection outside",
            tool: "Bash",
            input: |_| json!({"command": "ls > /tmp/out.txt"}),
            rules: &[],
            expected: [Ask, Ask, Deny, Deny, Allow],
        },
        Row {
            what: "write redirection into .git",
            tool: "Bash",
            input: |_| json!({"command": "echo x > .git/HEAD"}),
            rules: &[],
            expected: [Ask, Ask, Deny, Deny, Allow],
        },
    ];
    let mut failures = Vec::new();
    for row in &rows {
        for (mode, expected) in MODES.iter().zip(row.expected) {
            let policy = setup.policy(*mode, row.rules);
            let got = setup.decide(&policy, row.tool, (row.input)(&setup.cwd()));
            if got != expected {
                failures.push(format!("{} in {}: expected {expected:?}, got {got:?}", row.what, mode.as_str()));
            }
        }
    }
    assert!(failures.is_empty(), "{} wrong decisions:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn the_command_corpus_through_the_real_policy() {
    use crate::shell::corpus::{ALLOW, CORPUS, D, DENY};
    let setup = Setup::new();
    let mut rules: Vec<(RuleKind, String)> =
        ALLOW.iter().map(|rule| (RuleKind::Allow, format!("Bash({rule})"))).collect();
    rules.extend(DENY.iter().map(|rule| (RuleKind::Deny, format!("Bash({rule})"))));
    let rules: Vec<(RuleKind, &str)> = rules.iter().map(|(kind, text)| (*kind, text.as_str())).collect();
    let policy = setup.policy(DefaultMode, &rules);
    let mut failures = Vec::new();
    for (command, expected) in CORPUS {
        let got = setup.decide(&policy, "Bash", json!({ "command": command }));
        let expected = match expected {
            D::Allowed => Allow,
            D::Ask => Ask,
            D::Denied | D::Blocked => Deny,
        };
        if got != expected {
            failures.push(format!("{command:?}: expected {expected:?}, got {got:?}"));
        }
        if got == Allow {
            let analysis = crate::shell::analyze(command);
            let stray: Vec<_> =
                analysis.commands.iter().filter(|cmd| !crate::shell::corpus::independently_allowed(cmd)).collect();
            assert!(stray.is_empty(), "SECURITY: {command:?} was allowed but the rules don't allow {stray:?}");
        }
        // In bypass mode only deny rules and the blocklist stop a command.
        let bypass = setup.policy(BypassPermissions, &rules);
        let got = setup.decide(&bypass, "Bash", json!({ "command": command }));
        if (expected == Deny) != (got == Deny) {
            failures.push(format!("{command:?} in bypass: got {got:?}"));
        }
    }
    assert!(CORPUS.len() >= 150);
    assert!(
        failures.is_empty(),
        "{} of {} commands decided wrongly:\n{}",
        failures.len(),
        CORPUS.len(),
        failures.join("\n")
    );
}

#[test]
fn suggestions_name_what_an_always_answer_remembers() {
    let setup = Setup::new();
    let policy = setup.policy(DefaultMode, &[]);
    let tool = setup.tools.get("Bash").unwrap();
    let Decision::Ask { suggested_rule, .. } =
        policy.decide(tool.as_ref(), &json!({"command": "npm test -- --watch && cargo fmt"}))
    else {
        panic!()
    };
    assert_eq!(suggested_rule, "Bash(npm test:*), Bash(cargo fmt)");
    let Decision::Ask { suggested_rule, reason } = policy.decide(tool.as_ref(), &json!({"command": "echo $(whoami)"}))
    else {
        panic!()
    };
    assert_eq!(suggested_rule, "", "no rule can allow a substitution");
    assert!(reason.unwrap().contains("substitution"));
    let edit = setup.tools.get("Edit").unwrap();
    let Decision::Ask { suggested_rule, reason } =
        policy.decide(edit.as_ref(), &json!({"file_path": "/tmp/x/y.rs", "old_string": "a", "new_string": "b"}))
    else {
        panic!()
    };
    assert_eq!(suggested_rule, "Edit(//tmp/x/**)");
    assert!(reason.unwrap().contains("outside the workspace"));
}

#[test]
fn leaving_the_sandbox_always_asks() {
    let setup = Setup::new();
    let mut policy = setup.policy(AcceptEdits, &[(RuleKind::Allow, "Bash")]);
    policy.sandboxed = true;
    let input = json!({"command": "ls", "dangerouslyDisableSandbox": true});
    assert_eq!(setup.decide(&policy, "Bash", input.clone()), Ask);
    assert_eq!(setup.decide(&policy, "Bash", json!({"command": "ls"})), Allow);
    policy.mode = DontAsk;
    assert_eq!(setup.decide(&policy, "Bash", input.clone()), Deny);
    // Round 50's second look: bypass mode ran it unasked and unsandboxed.
    policy.mode = BypassPermissions;
    assert_eq!(setup.decide(&policy, "Bash", input.clone()), Ask, "bypass asks to leave the sandbox too");
    assert_eq!(setup.decide(&policy, "Bash", json!({"command": "ls"})), Allow);
    policy.sandboxed = false;
    policy.mode = DefaultMode;
    assert_eq!(setup.decide(&policy, "Bash", input), Allow, "without a sandbox the flag changes nothing");
}

/// Found by red-team round 45: `git show HEAD~1:.env` printed a `.env` committed before it was ignored, past
/// `Read(.env)`, and ran unasked (its operands were revisions, not paths). A file named out of the history or
/// the index is judged as a read of its path in the work tree, from the top, or from here with `./`.
#[test]
fn files_read_out_of_the_history_are_judged_by_their_paths() {
    let setup = Setup::new();
    std::fs::create_dir_all(setup.dir.path().join("sub")).unwrap();
    let policy = setup.policy(DefaultMode, &[(RuleKind::Deny, "Read(.env)"), (RuleKind::Deny, "Read(./config/key)")]);
    for command in [
        "git show HEAD~1:.env",
        "git show :.env",
        "git show :0:.env",
        "git log -p HEAD:.env",
        "git diff HEAD~1:.env HEAD:.gitignore",
        "git show HEAD:config/key",
        "git show HEAD:./.env",
        // Round 46: a traced range can hold colons itself.
        "git log -L:^:.env HEAD~1",
        "git show -L:^:.env HEAD~1",
        "git log -L1,1:.env",
    ] {
        assert_eq!(setup.decide(&policy, "Bash", json!({"command": command})), Deny, "{command}");
    }
    // Round 46: trees compared print every file below them. Round 47: what is read out of the index or history
    // without a path (staged changes, an object's id, a peeled tree) can't be judged while a Read deny rule is set;
    // nor a range of two files.
    for command in [
        "git show HEAD^{/fix: it}",
        "git show :/message",
        "git diff HEAD~1:src HEAD:src",
        "git diff HEAD~1: HEAD:",
        "git diff HEAD~1:./src HEAD:./src",
        "git diff --cached",
        "git diff --staged -- src",
        "git status -v",
        "git show 3f4e5d6a7b8c",
        "git diff HEAD~1^{tree} HEAD^{tree}",
        "git diff HEAD~1:.env..HEAD:./../README.md",
    ] {
        assert_eq!(setup.decide(&policy, "Bash", json!({"command": command})), Ask, "{command}");
    }
    std::fs::write(setup.dir.path().join("README.md"), "# x\n").unwrap();
    for command in [
        "git show HEAD:src/a.rs",
        "git diff HEAD~1:README.md HEAD:README.md",
        "git show HEAD~2",
        "git log -L1,3:README.md",
        "git show HEAD:./src/../README.md",
        "git status -s",
    ] {
        assert_eq!(setup.decide(&policy, "Bash", json!({"command": command})), Allow, "{command}");
    }
    let no_deny_rules = setup.policy(DefaultMode, &[]);
    for command in ["git diff --cached", "git status -v", "git show 3f4e5d6a7b8c"] {
        assert_eq!(setup.decide(&no_deny_rules, "Bash", json!({"command": command})), Allow, "{command}");
    }
}

/// Round 48: git takes `..` in a path out of the index or history by name, the analyser took it after following
/// links: with `lnk -> src/deep`, `git show :./lnk/../.env` printed a staged `.env` past `Read(./.env)`.
#[test]
fn history_paths_are_judged_where_git_takes_them() {
    let setup = Setup::new();
    std::fs::create_dir_all(setup.cwd().join("src/deep")).unwrap();
    std::os::unix::fs::symlink("src/deep", setup.cwd().join("lnk")).unwrap();
    std::fs::write(setup.cwd().join(".env"), "SECRET=1").unwrap();
    let policy = setup.policy(DefaultMode, &[(RuleKind::Deny, "Read(./.env)")]);
    for command in ["git show :./lnk/../.env", "git show HEAD:./lnk/../.env"] {
        assert_eq!(setup.decide(&policy, "Bash", json!({"command": command})), Deny, "{command}");
    }
    let no_deny_rules = setup.policy(DefaultMode, &[]);
    assert_eq!(setup.decide(&no_deny_rules, "Bash", json!({"command": "git show :./lnk/../.env"})), Ask);
}

/// Round 49: with no revision, git blame reads the file in the work tree, through a link on the way (a tracked
/// directory now a link to another project): its operands were never judged as reads.
#[test]
fn git_blame_reads_its_file_where_the_work_tree_has_it() {
    let setup = Setup::new();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), "SECRET").unwrap();
    std::os::unix::fs::symlink(outside.path(), setup.cwd().join("d")).unwrap();
    let policy = setup.policy(DefaultMode, &[]);
    for command in ["git blame d/secret.txt", "git blame -- d/secret.txt", "git blame -w HEAD d/secret.txt"] {
        assert_eq!(setup.decide(&policy, "Bash", json!({"command": command})), Ask, "{command}");
    }
    for command in ["git blame src/a.rs", "git blame -L 1,5 HEAD -- src/a.rs"] {
        assert_eq!(setup.decide(&policy, "Bash", json!({"command": command})), Allow, "{command}");
    }
}

/// Round 49: a word that mixes an expansion with unquoted glob characters is globbed by bash, though the analyser
/// can't split it: `echo $PWD/../*/*` listed other projects' files and `~/.ssh`. echo's globbed words are reads.
#[test]
fn echo_of_a_globbed_expansion_asks() {
    let setup = Setup::new();
    let policy = setup.policy(DefaultMode, &[]);
    for command in ["echo $PWD/../*/*", "echo \"$PWD/../home\"/.aws/*", "echo ~+/../*"] {
        assert_eq!(setup.decide(&policy, "Bash", json!({"command": command})), Ask, "{command}");
    }
    assert_eq!(setup.decide(&policy, "Bash", json!({"command": "echo $HOME/.ssh/*"})), Deny, "a secret's names");
    // A parameter the line itself filled is globbed when unquoted (a second look at the fix: `$_`).
    for command in [": '../*/*'; echo $_", "echo hi '../*' >/dev/null; echo $_", "echo $1 $@"] {
        assert_eq!(setup.decide(&policy, "Bash", json!({"command": command})), Ask, "{command}");
    }
    for command in [": '../*'; echo \"$_\"", "echo $HOME $PATH"] {
        assert_eq!(setup.decide(&policy, "Bash", json!({"command": command})), Allow, "{command}");
    }
    for command in ["echo $PWD", "echo src/*", "echo \"$HOME/*\""] {
        assert_eq!(setup.decide(&policy, "Bash", json!({"command": command})), Allow, "{command}");
    }
}

/// A signature placeholder runs the signature program (which writes in the home): asked, also with the `+`, `-`
/// and space modifiers round 49 found running unasked (`%+G?`).
#[test]
fn signature_placeholders_ask_with_their_modifiers() {
    let setup = Setup::new();
    let policy = setup.policy(DefaultMode, &[]);
    for format in ["%G?", "%+G?", "%-GG", "% GS", "tformat:%h%+GK"] {
        let command = format!("git log --format='{format}'");
        assert_eq!(setup.decide(&policy, "Bash", json!({"command": command})), Ask, "{command}");
    }
    assert_eq!(setup.decide(&policy, "Bash", json!({"command": "git log --format='%h %+s'"})), Allow);
}

/// Round 48: jq reads an operand as an argument only after `--args`/`--jsonargs`; a file named before them was
/// taken for an argument and read unasked from outside the workspace.
#[test]
fn jq_reads_the_files_named_before_args() {
    let setup = Setup::new();
    let policy = setup.policy(DefaultMode, &[]);
    for command in ["jq -R . ../other/secret.txt --args", "jq -R . /etc/hostname --jsonargs", "jq . ../x --args a b"] {
        assert_eq!(setup.decide(&policy, "Bash", json!({"command": command})), Ask, "{command}");
    }
    for command in ["jq -n '$ARGS' --args ../not-read", "jq . src/a.rs --args x"] {
        assert_eq!(setup.decide(&policy, "Bash", json!({"command": command})), Allow, "{command}");
    }
}

#[test]
fn read_deny_rules_reach_shell_reads_and_directory_searches() {
    let setup = Setup::new();
    std::fs::write(setup.dir.path().join(".env"), "SECRET=1").unwrap();
    let policy = setup.policy(DefaultMode, &[(RuleKind::Deny, "Read(.env)")]);
    assert_eq!(setup.decide(&policy, "Bash", json!({"command": "cat .env"})), Deny);
    assert_eq!(setup.decide(&policy, "Bash", json!({"command": "head -n 1 src/../.env"})), Deny);
    assert_eq!(setup.decide(&policy, "Bash", json!({"command": "cat src/a.rs"})), Allow);
    let hidden = policy.hidden_paths().unwrap();
    assert!(hidden(&setup.cwd().join(".env")));
    assert!(hidden(&setup.cwd().join("config/.env")), "no slash: any depth");
    assert!(!hidden(&setup.cwd().join("src/a.rs")));
    assert!(setup.policy(DefaultMode, &[]).hidden_paths().is_none());
}

/// The sandbox carved out only the deny rules that name a path outright (`Read(./.env)`): `Read(.env)` (any depth),
/// `Read(./.env.*)` and `Read(/etc/x)` read as the absolute path were left to the analyser, which judges the command
/// line alone, so a build a rule allowed printed every `.env` they name. Patterns are searched for before each
/// command and denied like paths.
#[test]
fn the_sandbox_denies_what_deny_rules_with_patterns_match() {
    use crate::sandbox::{SandboxSettings, Support, support};
    let setup = Setup::new();
    let cwd = setup.cwd();
    std::fs::create_dir_all(cwd.join("sub")).unwrap();
    for file in ["sub/.env", ".env.prod", "src/keep.rs"] {
        std::fs::write(cwd.join(file), "CANARY").unwrap();
    }
    let rules = [(RuleKind::Deny, "Read(.env)"), (RuleKind::Deny, "Read(./.env.*)"), (RuleKind::Deny, "Edit(/etc/x)")];
    let policy = setup.policy(AcceptEdits, &rules);
    let shape = crate::permissions::confine::ConfinementShape {
        enabled: true,
        approved: crate::sandbox::SandboxMode::Off,
        approved_network: true,
    };
    let confinement = crate::permissions::confine::confinement(&policy, &SandboxSettings::default(), shape).unwrap();
    assert_eq!(confinement.base.deny_read_globs.len(), 2, "{:?}", confinement.base.deny_read_globs);
    assert!(confinement.base.deny_write.contains(&PathBuf::from("/etc/x")), "the absolute reading of `/x` too");
    let sandboxed = confinement.policy_for(crate::sandbox::Grant::UserRule).unwrap();
    if !matches!(support(), Support::Full { .. } | Support::Partial { .. }) {
        return;
    }
    let run = |script: &str| {
        let mut command = tokio::process::Command::new("bash");
        command.arg("-c").arg(script).current_dir(&cwd);
        crate::sandbox::apply(&mut command, &sandboxed).unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async { command.output().await.unwrap() })
    };
    for secret in ["sub/.env", ".env.prod"] {
        let out = run(&format!("cat {secret}"));
        assert!(!out.status.success() && !String::from_utf8_lossy(&out.stdout).contains("CANARY"), "{secret} was read");
    }
    assert!(run("cat src/keep.rs").status.success());
}

/// Found by the eighteenth red-team round: bash expands a glob in a `for` loop's list, so `for f in ~/.ssh/*; do
/// echo $f; done` listed a denied directory and `for f in ../*/*` another project, unasked; and `tree` said
/// whether a link's target exists (its colours, `-F`, its directory count).
#[test]
fn a_for_loops_globs_are_reads_and_tree_asks() {
    let setup = Setup::new();
    std::fs::create_dir_all(setup.home.path().join(".ssh")).unwrap();
    let policy = setup.policy(DefaultMode, &[]);
    let cases = [
        ("for f in src/*; do echo $f; done", Allow),
        ("for f in a b; do echo $f; done", Allow),
        ("for f in ../*/*; do echo $f; done", Ask),
        ("for f in $HOME/.ssh/*; do echo $f; done", Ask),
        ("for f in /srv/.*; do echo $f; done", Ask),
        ("tree", Ask),
        ("tree -C", Ask),
    ];
    for (command, expected) in cases {
        assert_eq!(setup.decide(&policy, "Bash", json!({ "command": command })), expected, "{command}");
    }
    let secret = setup.decide(&policy, "Bash", json!({ "command": "for f in ~/.ssh/*; do echo $f; done" }));
    assert_ne!(secret, Allow);
}

#[test]
fn file_tools_read_like_the_kernel_and_never_read_secrets() {
    let setup = Setup::new();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("x.txt"), "x").unwrap();
    std::os::unix::fs::symlink(outside.path(), setup.cwd().join("link")).unwrap();
    std::fs::create_dir_all(setup.home.path().join(".ssh")).unwrap();
    let policy = setup.policy(DefaultMode, &[]);
    let cases = [
        ("Read", json!({"file_path": "link/x.txt"}), Ask),
        ("Read", json!({"file_path": "link/../src/x"}), Ask),
        ("Read", json!({"file_path": "/proc/self/cwd/src/x"}), Deny),
        ("Read", json!({"file_path": "src/../src/main.rs"}), Allow),
        ("Read", json!({"file_path": "~/.ssh/id_rsa"}), Deny),
        ("Grep", json!({"pattern": "x", "path": "~/.ssh"}), Deny),
        ("Grep", json!({"pattern": "x", "path": "link"}), Ask),
        ("Glob", json!({"pattern": "../**/id_rsa"}), Ask),
        ("Glob", json!({"pattern": "link/**/*.txt"}), Ask),
        ("Glob", json!({"pattern": "src/**/*.rs"}), Allow),
        ("Glob", json!({"pattern": "**/*.rs", "path": "link"}), Ask),
        ("Write", json!({"file_path": ".mcp.json", "content": "{}"}), Ask),
        ("Write", json!({"file_path": ".claude/commands/x.md", "content": "x"}), Ask),
    ];
    for (tool, input, expected) in cases {
        assert_eq!(setup.decide(&policy, tool, input.clone()), expected, "{tool} {input}");
    }
    for mode in [AcceptEdits, BypassPermissions] {
        let policy = setup.policy(mode, &[]);
        assert_eq!(setup.decide(&policy, "Read", json!({"file_path": "~/.ssh/id_rsa"})), Deny, "secrets in {mode:?}");
    }
    let named = setup.policy(DefaultMode, &[(RuleKind::Allow, "Read(~/.ssh/known_hosts)")]);
    assert_eq!(setup.decide(&named, "Read", json!({"file_path": "~/.ssh/known_hosts"})), Allow, "a rule names it");
    assert_eq!(setup.decide(&named, "Read", json!({"file_path": "~/.ssh/id_rsa"})), Deny);
}

#[test]
fn always_rules_are_as_narrow_as_the_command() {
    let setup = Setup::new();
    let policy = setup.policy(DefaultMode, &[]);
    let tool = setup.tools.get("Bash").unwrap();
    for (command, rule) in [
        ("python3 -m pytest -q", "Bash(python3 -m pytest:*)"),
        ("rm -rf build", "Bash(rm -rf build)"),
        ("npm run test:unit -- --watch", "Bash(npm run test:unit:*)"),
        ("npm run build", "Bash(npm run build)"),
        ("cargo test --release", "Bash(cargo test:*)"),
        ("git push --force origin main", "Bash(git push --force origin main)"),
        ("make", "Bash(make)"),
        ("node scripts/build.js --prod", "Bash(node scripts/build.js:*)"),
        ("curl -s http://127.0.0.1:9/x", "Bash(curl -s http://127.0.0.1:9/x)"),
        // Issue 28: shown as the user would type it, quoted, not backslash-escaped.
        ("rm -rf \"old build\"", "Bash(rm -rf 'old build')"),
        ("rm -rf 'build dir'", "Bash(rm -rf 'build dir')"),
        ("rm -f \"it's here\"", "Bash(rm -f \"it's here\")"),
        ("rm -f 'a(1)'", "Bash(rm -f 'a(1)')"),
    ] {
        let Decision::Ask { suggested_rule, .. } = policy.decide(tool.as_ref(), &json!({ "command": command })) else {
            panic!("{command} should ask")
        };
        assert_eq!(suggested_rule, rule, "{command}");
        // The rule allows the command it was proposed for.
        let allowed = setup.policy(DefaultMode, &[(RuleKind::Allow, rule)]);
        assert_eq!(setup.decide(&allowed, "Bash", json!({ "command": command })), Allow, "{rule} allows {command}");
    }
    use crate::tools::Risk;
    assert_eq!(tool.risk_for(&json!({"command": "cat /etc/hostname"})), Risk::Low);
    assert_eq!(
        tool.risk_for(&json!({"command": "mkdir -p x && touch x/y"})),
        Risk::High,
        "a command that writes is high risk"
    );
    assert_eq!(tool.risk_for(&json!({"command": "rm -rf build"})), Risk::High);
}

/// Found by the nineteenth red-team round: a directory search judged only the path it was given, and skipped only
/// what Read deny rules name, so a Grep of a workspace holding the home directory (`--add-dir ~`, tandem started
/// in HOME) printed `~/.ssh/id_rsa`, and one of a parent printed a file an ask rule covers, unasked.
#[tokio::test]
async fn directory_searches_skip_secrets_and_what_a_read_would_ask_for() {
    use crate::tools::Tool;
    let home = tempfile::tempdir().unwrap();
    let home = home.path().canonicalize().unwrap();
    for (path, text) in [
        (".ssh/id_rsa", "CANARY-SSH"),
        (".aws/credentials", "CANARY-AWS"),
        ("private/k.txt", "CANARY-ASK"),
        ("notes/plan.txt", "CANARY-OK"),
    ] {
        std::fs::create_dir_all(home.join(path).parent().unwrap()).unwrap();
        std::fs::write(home.join(path), text).unwrap();
    }
    let workspace = Workspace::new(&home, &[], Some(home.clone()), None);
    let mut policy = PermissionPolicy::new(DefaultMode, workspace, home.clone());
    policy.add_rule(RuleKind::Ask, "Read(private/**)", Scope::Flag).unwrap();
    let mut context = crate::tools::ToolContext::new(home.clone());
    context.hidden = Some(policy.walk_hidden());
    let input = json!({"pattern": "CANARY", "glob": "*", "output_mode": "content"});
    let out = crate::tools::grep::GrepTool.run(input.into(), &context).await;
    assert!(out.content.contains("CANARY-OK"), "{}", out.content);
    assert!(!out.content.contains("CANARY-SSH") && !out.content.contains("CANARY-AWS"), "{}", out.content);
    assert!(!out.content.contains("CANARY-ASK"), "{}", out.content);
    let out = crate::tools::glob::GlobTool.run(json!({"pattern": "**/.*/*"}).into(), &context).await;
    assert!(!out.content.contains("id_rsa") && !out.content.contains("credentials"), "{}", out.content);
    // Through a link to the home directory, too.
    let link = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(&home, link.path().join("h")).unwrap();
    let input = json!({"pattern": "CANARY", "glob": "*", "path": link.path().join("h")});
    let out = crate::tools::grep::GrepTool.run(input.into(), &context).await;
    assert!(!out.content.contains(".ssh"), "{}", out.content);
}

/// Found by the twentieth red-team round: a Glob whose `path` is outside the workspace and whose pattern climbs
/// back into it (through a component that does not exist, read lexically) was judged as the workspace, and the
/// tool then told the model whether `path` existed ("not a directory", "does not exist"): a probe of `~/.ssh`.
#[test]
fn a_glob_is_judged_where_it_starts_and_where_it_searches() {
    let setup = Setup::new();
    let policy = setup.policy(DefaultMode, &[]);
    let outside = setup.home.path().join(".ssh/id_rsa");
    let depth = setup.cwd().components().count() + 2;
    let climb = format!("zz/{}{}/*", "../".repeat(depth), setup.cwd().strip_prefix("/").unwrap().display());
    for (path, pattern) in [(outside.display().to_string(), climb.clone()), (".".to_owned(), climb)] {
        let input = json!({"path": path, "pattern": pattern});
        assert_ne!(setup.decide(&policy, "Glob", input.clone()), Allow, "{input}");
    }
    assert_eq!(setup.decide(&policy, "Glob", json!({"pattern": "src/**/*.rs"})), Allow);
    assert_eq!(setup.decide(&policy, "Glob", json!({"path": "src", "pattern": "../src/*"})), Allow);
}

/// Found by the twenty-first red-team round: the policy's list of credentials was a shorter copy of the sandbox's,
/// so with the home directory in the workspace Read showed `~/.pgpass` or `~/.claude.json`, and acceptEdits wrote
/// `~/.claude.json` (whose MCP servers a later session starts, unsandboxed). Every secret is one list now.
#[test]
fn every_secret_the_sandbox_denies_is_denied_to_reads_and_asked_for_writes() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path().canonicalize().unwrap();
    let workspace = Workspace::new(&home, &[], Some(home.clone()), None);
    let read_policy = PermissionPolicy::new(BypassPermissions, workspace.clone(), home.clone());
    let edit_policy = PermissionPolicy::new(AcceptEdits, workspace.clone(), home.clone());
    let tools = ToolRegistry::builtin();
    let (read, write) = (tools.get("Read").unwrap(), tools.get("Write").unwrap());
    for secret in workspace.secret_paths().iter().filter(|path| path.starts_with(&home)) {
        let file = if secret.extension().is_some() { secret.clone() } else { secret.join("x") };
        let input = json!({"file_path": file, "content": "{}"});
        assert_eq!(outcome(&read_policy.decide(read.as_ref(), &input)), Deny, "{}", file.display());
        assert_ne!(outcome(&edit_policy.decide(write.as_ref(), &input)), Allow, "{}", file.display());
    }
    for profile in [".bash_aliases", ".config/git/config", ".zlogout"] {
        let input = json!({"file_path": home.join(profile), "content": "x"});
        assert_ne!(outcome(&edit_policy.decide(write.as_ref(), &input)), Allow, "{profile}");
    }
}

/// Found by the thirty-first red-team round: a Read spelled through `/proc/self/cwd` or `/proc/self/root` was
/// judged by that spelling (no secret matched it, a `Read(//proc/**)` rule did, bypass let it through) while the
/// kernel followed the process's link to `~/.ssh/id_rsa`.
#[test]
fn a_path_through_a_process_link_is_refused_in_every_mode() {
    let setup = Setup::new();
    let home = setup.home.path().canonicalize().unwrap();
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::write(home.join(".ssh/id_rsa"), "key").unwrap();
    let through_cwd = format!("/proc/self/cwd/{}", home.join(".ssh/id_rsa").display());
    let through_root = format!("/proc/self/root{}", home.join(".ssh/id_rsa").display());
    for mode in MODES {
        let policy = setup.policy(mode, &[(RuleKind::Allow, "Read(//proc/**)")]);
        for path in [&through_cwd, &through_root] {
            assert_eq!(setup.decide(&policy, "Read", json!({ "file_path": path })), Deny, "{mode:?} {path}");
        }
        let write = json!({ "file_path": "/proc/self/cwd/x.txt", "content": "" });
        assert_eq!(setup.decide(&policy, "Write", write), Deny, "{mode:?}");
    }
    let policy = setup.policy(DefaultMode, &[]);
    assert_eq!(setup.decide(&policy, "Read", json!({ "file_path": "/proc/cpuinfo" })), Ask);
}

/// Found by the thirty-first red-team round: a cloned repository's committed `Read(//**)` rule "named" every
/// secret, so a headless run printed `~/.ssh/id_rsa`. Only the user's own rules lift a secret's denial.
#[test]
fn the_repositorys_rules_lift_no_secret() {
    let setup = Setup::new();
    let home = setup.home.path().canonicalize().unwrap();
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    let key = home.join(".ssh/id_rsa");
    std::fs::write(&key, "key").unwrap();
    let read = || json!({ "file_path": key.display().to_string() });
    // Found by the thirty-fourth red-team round: nor a personal file of the project (here without `.git`, so
    // nothing says it came with an archive).
    for scope in [Scope::ClaudeProject, Scope::Project, Scope::ClaudeLocal, Scope::Local, Scope::Command] {
        let mut policy = setup.policy(DefaultMode, &[]);
        policy.add_rule(RuleKind::Allow, "Read(//**)", scope).unwrap();
        assert_eq!(setup.decide(&policy, "Read", read()), Deny, "{scope:?}");
        assert!((policy.walk_hidden())(&key), "{scope:?}: a search would print it");
    }
    let policy = setup.policy(DefaultMode, &[(RuleKind::Allow, "Read(~/.ssh/**)")]);
    assert_eq!(setup.decide(&policy, "Read", read()), Allow, "the user's own rule names it");
}

/// Found by the thirty-third red-team round: a path that can't be resolved for sure (a link dangling when judged,
/// a chain of links longer than PATH_MAX) was judged by its spelling — inside the workspace, no secret, matched
/// by `Read(/**)` or `Edit(src/**)`, allowed in bypass — while the kernel followed the links to `~/.ssh` (the
/// dangling one made valid by a background `mkdir` before the call ran). Such a path is never allowed unasked.
#[test]
fn a_path_that_cant_be_resolved_for_sure_is_never_allowed_unasked() {
    let setup = Setup::new();
    std::os::unix::fs::symlink("sub/gen/../../../home", setup.cwd().join("src/x")).unwrap();
    let read = || json!({ "file_path": "src/x/.ssh/id_rsa" });
    let write = || json!({ "file_path": "src/x/.ssh/authorized_keys", "content": "key" });
    let rules = [(RuleKind::Allow, "Read(/**)"), (RuleKind::Allow, "Edit(src/**)")];
    for mode in [DefaultMode, AcceptEdits] {
        let policy = setup.policy(mode, &rules);
        assert_eq!(setup.decide(&policy, "Read", read()), Ask, "{mode:?}");
        assert_eq!(setup.decide(&policy, "Write", write()), Ask, "{mode:?}");
    }
    for mode in [BypassPermissions, DontAsk] {
        let policy = setup.policy(mode, &rules);
        assert_eq!(setup.decide(&policy, "Read", read()), Deny, "{mode:?}");
        assert_eq!(setup.decide(&policy, "Write", write()), Deny, "{mode:?}");
    }
    let policy = setup.policy(BypassPermissions, &[]);
    assert_eq!(setup.decide(&policy, "Read", json!({ "file_path": "/proc/cpuinfo" })), Allow, "no link of a process");
}

/// A third look at round 49: the loop's variable holds a quoted pattern as written, and `echo $x` unquoted globs
/// it (`for x in '../*'; do echo $x; done` listed another project, unasked).
#[test]
fn a_loop_over_a_quoted_path_pattern_asks() {
    let setup = Setup::new();
    let policy = setup.policy(DefaultMode, &[]);
    for command in ["for x in '../*'; do echo $x; done", "for x in src \"/etc/*\"; do echo $x; done"] {
        assert_eq!(setup.decide(&policy, "Bash", json!({"command": command})), Ask, "{command}");
    }
    for command in ["for x in a b; do echo $x; done", "for f in src/*; do echo $f; done"] {
        assert_eq!(setup.decide(&policy, "Bash", json!({"command": command})), Allow, "{command}");
    }
}

/// binutils' `strings` reads more arguments from a file named `@FILE`: a glob that matches such a name (round 50:
/// `strings ?rsp` with `@rsp` in the workspace read the file `rsp` named, outside it) asks, as `@FILE` does.
#[test]
fn strings_with_a_glob_asks_since_a_match_may_be_a_response_file() {
    let setup = Setup::new();
    std::fs::write(setup.cwd().join("rsp"), "../other/secret.txt\n").unwrap();
    std::fs::write(setup.cwd().join("@rsp"), "").unwrap();
    std::fs::write(setup.cwd().join("a.o"), "").unwrap();
    let policy = setup.policy(DefaultMode, &[]);
    for command in ["strings ?rsp", "strings *", "strings @rsp", "strings -a *.o"] {
        assert_eq!(setup.decide(&policy, "Bash", json!({"command": command})), Ask, "{command}");
    }
    assert_eq!(setup.decide(&policy, "Bash", json!({"command": "strings a.o"})), Allow);
}

/// An ask rule for Read or Edit asks about a command that reads or writes what it names, as it asks about the tool
/// (round 50: `cat secrets/key` printed a file `Read(secrets/**)` asks about; `echo x > locked/a.txt` wrote
/// under `Edit(locked/**)` in acceptEdits).
#[test]
fn ask_rules_for_files_ask_about_commands_that_name_them() {
    let setup = Setup::new();
    for dir in ["secrets", "locked"] {
        std::fs::create_dir(setup.cwd().join(dir)).unwrap();
        std::fs::write(setup.cwd().join(dir).join("key"), "k").unwrap();
    }
    std::fs::write(setup.cwd().join("README.md"), "r").unwrap();
    let rules = [(RuleKind::Ask, "Read(secrets/**)"), (RuleKind::Ask, "Edit(locked/**)")];
    let policy = setup.policy(AcceptEdits, &rules);
    for command in [
        "cat secrets/key",
        "head -1 secrets/*",
        "cp secrets/key pub.txt",
        "echo x > locked/a.txt",
        "cp README.md locked/new.txt",
        "touch locked/key",
    ] {
        assert_eq!(setup.decide(&policy, "Bash", json!({"command": command})), Ask, "{command}");
    }
    for command in ["cat README.md", "cat locked/key", "cp README.md copy.md", "echo x > secrets/new"] {
        assert_eq!(setup.decide(&policy, "Bash", json!({"command": command})), Allow, "{command}");
    }
}

/// Round 50's second look: with only a Read *ask* rule, `git diff --cached` (which prints staged files without
/// naming them) ran unasked and printed what the rule covers; and an ask rule naming a link did not cover the
/// Read of the file it leads to.
#[test]
fn ask_rules_cover_unnamed_history_and_what_a_named_link_leads_to() {
    let setup = Setup::new();
    std::fs::create_dir(setup.cwd().join("private")).unwrap();
    std::fs::write(setup.cwd().join("private/k2"), "k").unwrap();
    std::os::unix::fs::symlink("private", setup.cwd().join("conf")).unwrap();
    let policy = setup.policy(DefaultMode, &[(RuleKind::Ask, "Read(secrets/**)"), (RuleKind::Ask, "Read(conf/**)")]);
    for command in ["git diff --cached", "git status -v", "cat private/k2"] {
        assert_eq!(setup.decide(&policy, "Bash", json!({"command": command})), Ask, "{command}");
    }
    let read = json!({"file_path": setup.cwd().join("private/k2")});
    assert_eq!(setup.decide(&policy, "Read", read), Ask, "the rule names the link to it");
    assert_eq!(setup.decide(&policy, "Bash", json!({"command": "git status"})), Allow);
}

/// Round 51: a rule covers a file by the name the call spells too, not only where it resolves: `Read(conf/**)`
/// with `conf/k -> ../private/k2` let `Read conf/k` through (judged as `private/k2`), and `Read(**/*.key)` as an
/// ask rule with `a.key -> plain.txt` let `Read a.key` through.
#[test]
fn file_rules_cover_the_name_a_call_spells() {
    let setup = Setup::new();
    std::fs::create_dir_all(setup.cwd().join("conf")).unwrap();
    std::fs::create_dir_all(setup.cwd().join("private")).unwrap();
    std::fs::write(setup.cwd().join("private/k2"), "k").unwrap();
    std::fs::write(setup.cwd().join("plain.txt"), "k").unwrap();
    std::os::unix::fs::symlink("../private/k2", setup.cwd().join("conf/k")).unwrap();
    std::os::unix::fs::symlink("plain.txt", setup.cwd().join("a.key")).unwrap();
    let policy = setup.policy(DefaultMode, &[(RuleKind::Deny, "Read(conf/**)"), (RuleKind::Ask, "Read(**/*.key)")]);
    let read = |path: &str| setup.decide(&policy, "Read", json!({"file_path": setup.cwd().join(path)}));
    assert_eq!(read("conf/k"), Deny);
    assert_eq!(read("a.key"), Ask);
    assert_eq!(read("README.md"), Allow);
}

/// Round 51's second look: a deny rule matching a directory (`Read(conf/*)` and `conf/sub`) covers what is in it
/// by name too, as the sandbox denies the directory whole: `Read conf/sub/k` (a link out of it) went through.
#[test]
fn a_rule_matching_a_directory_covers_the_names_in_it() {
    let setup = Setup::new();
    std::fs::create_dir_all(setup.cwd().join("conf/sub")).unwrap();
    std::fs::write(setup.cwd().join("k2"), "k").unwrap();
    std::os::unix::fs::symlink("../../k2", setup.cwd().join("conf/sub/k")).unwrap();
    let policy = setup.policy(DefaultMode, &[(RuleKind::Deny, "Read(conf/*)")]);
    let read = |path: &str| setup.decide(&policy, "Read", json!({"file_path": setup.cwd().join(path)}));
    assert_eq!(read("conf/sub/k"), Deny);
    assert_eq!(setup.decide(&policy, "Bash", json!({"command": "cat conf/sub/k"})), Deny);
}

/// Round 51's third look: a rule covers where the links in a directory it names lead for every tool, also before
/// the target exists: Write and Edit wrote `open/x` through `locked/x -> ../open/x` under `Edit(locked/**)` (the
/// sandbox held commands; the tools judged names), Write created `open/new` behind a dangling `locked/new`, and
/// `make && cat build/db.key` read a file a build made behind a dangling `conf/db.key` under `Read(conf/**)`.
#[test]
fn rules_cover_where_the_links_in_their_directories_lead_even_before_it_exists() {
    let setup = Setup::new();
    for dir in ["locked", "open", "conf", "build"] {
        std::fs::create_dir(setup.cwd().join(dir)).unwrap();
    }
    std::fs::write(setup.cwd().join("open/x"), "x").unwrap();
    std::fs::write(setup.cwd().join("open/free"), "x").unwrap();
    std::os::unix::fs::symlink("../open/x", setup.cwd().join("locked/x")).unwrap();
    std::os::unix::fs::symlink("../open/new", setup.cwd().join("locked/new")).unwrap();
    std::os::unix::fs::symlink("../build/db.key", setup.cwd().join("conf/db.key")).unwrap();
    let rules = [(RuleKind::Deny, "Edit(locked/**)"), (RuleKind::Deny, "Read(conf/**)")];
    let policy = setup.policy(AcceptEdits, &rules);
    let write =
        |path: &str| setup.decide(&policy, "Write", json!({"file_path": setup.cwd().join(path), "content": "y"}));
    assert_eq!(write("open/x"), Deny);
    assert_eq!(write("open/new"), Deny, "the place a dangling link names");
    assert_eq!(write("open/free"), Allow);
    assert_eq!(setup.decide(&policy, "Bash", json!({"command": "cat build/db.key"})), Deny);
    assert_eq!(setup.decide(&policy, "Read", json!({"file_path": setup.cwd().join("build/db.key")})), Deny);
}

/// Round 51's fourth look: an Edit rule at any depth covers where a link it matches leads (`Edit(**/*.lock)` with
/// `yarn.lock -> data/lock.txt`: Write of `data/lock.txt` went through), and a dangling link's target is resolved
/// as the kernel will (`locked/cfg -> ../open/s/../new` with `open/s -> ../deep/a/b` names `deep/a/new`).
#[test]
fn edit_rules_follow_links_at_any_depth_and_resolve_dangling_targets_as_the_kernel() {
    let setup = Setup::new();
    for dir in ["data", "locked", "open", "deep/a/b"] {
        std::fs::create_dir_all(setup.cwd().join(dir)).unwrap();
    }
    std::fs::write(setup.cwd().join("data/lock.txt"), "x").unwrap();
    std::os::unix::fs::symlink("data/lock.txt", setup.cwd().join("yarn.lock")).unwrap();
    std::os::unix::fs::symlink("../deep/a/b", setup.cwd().join("open/s")).unwrap();
    std::os::unix::fs::symlink("../open/s/../new", setup.cwd().join("locked/cfg")).unwrap();
    let policy = setup.policy(AcceptEdits, &[(RuleKind::Deny, "Edit(**/*.lock)"), (RuleKind::Deny, "Edit(locked/**)")]);
    let write =
        |path: &str| setup.decide(&policy, "Write", json!({"file_path": setup.cwd().join(path), "content": "y"}));
    assert_eq!(write("data/lock.txt"), Deny);
    assert_eq!(write("deep/a/new"), Deny, "where the dangling link really leads");
    assert_eq!(write("open/new"), Allow, "not where it leads: `..` goes up from deep/a/b");
}

/// Round 51's fifth look: a chain of dangling links (`locked/cfg -> ../mid/cfg -> ../open/cfg`) is followed to its
/// end, as the kernel does when a Write creates the file; and a link made in a directory whose modification time a
/// command set back (`touch -m -d`) is still seen (the walk is kept by the directories' change times too).
#[test]
fn chains_of_dangling_links_are_followed_and_a_reset_mtime_does_not_hide_a_new_link() {
    let setup = Setup::new();
    for dir in ["locked", "mid", "open", "data", "sub"] {
        std::fs::create_dir_all(setup.cwd().join(dir)).unwrap();
    }
    std::os::unix::fs::symlink("../mid/cfg", setup.cwd().join("locked/cfg")).unwrap();
    std::os::unix::fs::symlink("../open/cfg", setup.cwd().join("mid/cfg")).unwrap();
    let policy = setup.policy(AcceptEdits, &[(RuleKind::Deny, "Edit(locked/**)"), (RuleKind::Deny, "Edit(*.lock)")]);
    let write =
        |path: &str| setup.decide(&policy, "Write", json!({"file_path": setup.cwd().join(path), "content": "y"}));
    assert_eq!(write("open/cfg"), Deny, "the end of the chain");
    assert_eq!(write("mid/other"), Allow);
    // Every directory settled long ago, so that the walk is kept.
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    let settle = |dir: &std::path::Path| std::fs::File::open(dir).unwrap().set_modified(old).unwrap();
    let mut dirs = vec![setup.cwd()];
    while let Some(dir) = dirs.pop() {
        settle(&dir);
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            if entry.file_type().unwrap().is_dir() {
                dirs.push(entry.path());
            }
        }
    }
    assert_eq!(write("data/new.txt"), Allow, "no link leads there yet");
    std::os::unix::fs::symlink("../data/new.txt", setup.cwd().join("sub/x.lock")).unwrap();
    settle(&setup.cwd().join("sub"));
    assert_eq!(write("data/new.txt"), Deny, "the new link is seen though sub's mtime was set back");
}

/// Round 51's sixth look: the links inside a directory that a link in the rule's directory leads to are covered too
/// (`locked/sub -> ../open/sub`, `open/sub/e -> ../../data/exists`: `locked/sub/e` names `data/exists`).
#[test]
fn links_inside_a_linked_directory_are_covered_too() {
    let setup = Setup::new();
    for dir in ["locked", "open/sub", "data"] {
        std::fs::create_dir_all(setup.cwd().join(dir)).unwrap();
    }
    std::fs::write(setup.cwd().join("data/exists"), "s").unwrap();
    std::os::unix::fs::symlink("../open/sub", setup.cwd().join("locked/sub")).unwrap();
    std::os::unix::fs::symlink("../../data/exists", setup.cwd().join("open/sub/e")).unwrap();
    std::os::unix::fs::symlink("../../data/k", setup.cwd().join("open/sub/k")).unwrap();
    std::os::unix::fs::symlink("..", setup.cwd().join("open/sub/up")).unwrap();
    let policy = setup.policy(AcceptEdits, &[(RuleKind::Deny, "Read(locked/**)"), (RuleKind::Deny, "Edit(locked/**)")]);
    let read = json!({"file_path": setup.cwd().join("data/exists")});
    assert_eq!(setup.decide(&policy, "Read", read), Deny);
    let write = json!({"file_path": setup.cwd().join("data/k"), "content": "y"});
    assert_eq!(setup.decide(&policy, "Write", write), Deny, "behind a dangling link in the linked directory");
}

/// Found by the fifty-second red-team round: `--allowedTools 'Edit(*.json)'` let Write create
/// `.claude/settings.local.json` unasked (its allow rules then widened the next session), and `Edit(**)` let it write
/// `.git/config` (`core.fsmonitor`, run by the user's next `git status`). A rule allows a protected path only when
/// its literal part names the protected place; a wildcard that happens to cover it does not.
#[test]
fn only_a_rule_that_spells_a_protected_place_lets_it_be_written() {
    let setup = Setup::new();
    std::fs::create_dir_all(setup.cwd().join(".claude")).unwrap();
    let write = |path: &str| json!({ "file_path": setup.cwd().join(path).display().to_string(), "content": "x" });
    for (rule, path) in [
        ("Edit(*.json)", ".claude/settings.local.json"),
        ("Edit(**/*.json)", ".claude/settings.local.json"),
        ("Edit(**)", ".git/config"),
        ("Edit(/**)", ".git/hooks/pre-commit"),
        ("Edit(.*/**)", ".claude/settings.json"),
        ("Edit(*.json)", ".mcp.json"),
        ("Edit(src/**)", "src/.claude/settings.json"),
        ("Edit(*.json)", ".tandem/settings.local.json"),
        // Found by round 54: `.claude` spelled, the repository below it not.
        ("Edit(.claude/worktrees/**)", ".claude/worktrees/wt/.git/config"),
        ("Edit(.claude/skills/**)", ".claude/skills/s/.git/hooks/pre-commit"),
    ] {
        let policy = setup.policy(AcceptEdits, &[(RuleKind::Allow, rule)]);
        assert_eq!(setup.decide(&policy, "Write", write(path)), Ask, "{rule} must not write {path} unasked");
    }
    for (rule, path) in [
        ("Edit(.claude/settings.local.json)", ".claude/settings.local.json"),
        ("Edit(.claude/**)", ".claude/settings.json"),
        ("Edit(.git/hooks/**)", ".git/hooks/pre-commit"),
        ("Edit(.mcp.json)", ".mcp.json"),
    ] {
        let policy = setup.policy(DefaultMode, &[(RuleKind::Allow, rule)]);
        assert_eq!(setup.decide(&policy, "Write", write(path)), Allow, "{rule} names {path}");
    }
}

/// Found by the fifty-second red-team round: `touch ')' Bash '(x'` offered "always allow Bash(touch ')' Bash '(x')",
/// and saving it split the text at the quoted `)` into `Bash(touch ')'`, `Bash` and `'(x')`: a bare `Bash` rule in
/// `.tandem/settings.local.json`, so the next session ran any command unasked. A suggestion that would not split
/// back into exactly the rules shown is not offered.
#[test]
fn an_always_rule_is_offered_only_when_it_saves_as_shown() {
    let setup = Setup::new();
    let policy = setup.policy(DefaultMode, &[]);
    let suggested = |tool: &str, input: Value| match policy.decide(setup.tools.get(tool).unwrap().as_ref(), &input) {
        Decision::Ask { suggested_rule, .. } => suggested_rule,
        other => panic!("{other:?}"),
    };
    let tricky = suggested("Bash", json!({ "command": "touch ')' Bash '(x'" }));
    for rule in split_rule_list(&tricky) {
        assert!(Rule::parse(&rule).is_ok_and(|rule| rule.specifier.is_some()), "{tricky:?} would save {rule:?}");
    }
    let outside = tempfile::tempdir().unwrap();
    let dir = outside.path().join("a) Bash (b");
    std::fs::create_dir_all(&dir).unwrap();
    let tricky = suggested("Write", json!({ "file_path": dir.join("f").display().to_string(), "content": "x" }));
    for rule in split_rule_list(&tricky) {
        assert!(Rule::parse(&rule).is_ok_and(|rule| rule.specifier.is_some()), "{tricky:?} would save {rule:?}");
    }
    assert_eq!(suggested("Bash", json!({ "command": "touch a; rm b" })), "Bash(touch a), Bash(rm b)");
}

/// Found by the second look at round 52: after Read learned that `Read(~/**)` does not spell `~/.ssh`, Grep's walk
/// and `cat` still took it as naming the secrets below it (Grep of `~` printed every one).
#[test]
fn a_wildcard_read_rule_lifts_no_secret_anywhere() {
    let setup = Setup::new();
    let home = setup.home.path().canonicalize().unwrap();
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    let key = home.join(".ssh/id_rsa");
    std::fs::write(&key, "key").unwrap();
    for rule in ["Read(~/**)", "Read(//**)", "Read(~/.*/**)"] {
        let policy = setup.policy(DefaultMode, &[(RuleKind::Allow, rule), (RuleKind::Allow, "Bash(cat:*)")]);
        assert!((policy.walk_hidden())(&key), "{rule}: a search would print it");
        let cat = json!({ "command": format!("cat {}", key.display()) });
        assert_ne!(setup.decide(&policy, "Bash", cat), Allow, "{rule}: cat would print it");
    }
    let policy = setup.policy(DefaultMode, &[(RuleKind::Allow, "Read(~/.ssh/**)")]);
    assert!(!(policy.walk_hidden())(&key), "a rule that spells it lifts it");
}

/// Found by the second look at round 52: `rm '), Bash, Bash('` is one command whose exact rule,
/// `Bash(rm '), Bash, Bash(')`, splits into three that join back into the same text, so a check that only joined
/// the pieces again offered it, and saving it wrote a bare `Bash`. Every suggestion must split into exactly the
/// rules it was made of; a path with the same trick (outside the workspace) is held to it too.
#[test]
fn a_rule_that_splits_into_other_rules_is_never_offered() {
    let setup = Setup::new();
    let policy = setup.policy(DefaultMode, &[]);
    let suggested = |tool: &str, input: Value| match policy.decide(setup.tools.get(tool).unwrap().as_ref(), &input) {
        Decision::Ask { suggested_rule, .. } => suggested_rule,
        other => panic!("{other:?}"),
    };
    assert_eq!(suggested("Bash", json!({ "command": "rm '), Bash, Bash('" })), "");
    let outside = tempfile::tempdir().unwrap();
    let dir = outside.path().join("x), Bash, Bash(y");
    std::fs::create_dir_all(&dir).unwrap();
    let write = json!({ "file_path": dir.join("f").display().to_string(), "content": "x" });
    assert_eq!(suggested("Write", write), "");
}
