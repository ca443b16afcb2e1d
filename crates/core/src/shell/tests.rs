use super::*;

fn texts(analysis: &Analysis) -> Vec<&str> {
    analysis.commands.iter().map(|cmd| cmd.text.as_str()).collect()
}

fn one(command: &str) -> SimpleCommand {
    let analysis = analyze(command);
    assert_eq!(analysis.commands.len(), 1, "{command:?}: {analysis:?}");
    analysis.commands.into_iter().next().expect("one command")
}

fn reason(command: &str) -> String {
    analyze(command).always_ask.unwrap_or_else(|| panic!("{command:?} should always ask"))
}

#[test]
fn splits_into_simple_commands_everywhere() {
    let analysis = analyze("a && b | c; (d; e) || { f; }\ng & if h; then i; fi; for x in y; do j; done; k $(l) `m`");
    assert_eq!(texts(&analysis), ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "l", "m", "k $(l) `m`"]);
    assert_eq!(analysis.always_ask.as_deref(), Some("command substitution `$(…)`"));
    assert!(analysis.writes.is_empty() && analysis.blocked.is_none());
}

#[test]
fn words_are_unquoted_and_assignments_kept_apart() {
    let cmd = one("FOO=1 BAR='a b' n'p'm  \"test\" 'x y' \\$HOME");
    assert_eq!(cmd.argv, ["npm", "test", "x y", "$HOME"]);
    assert_eq!(cmd.assignments, [("FOO".to_owned(), "1".to_owned()), ("BAR".to_owned(), "a b".to_owned())]);
    assert_eq!(cmd.text, "npm test x y $HOME");
    assert!(cmd.is_plain(), "an escaped $ is literal");
    let cmd = one("echo $HOME/x");
    assert_eq!(cmd.argv, ["echo", "$HOME/x"]);
    assert!(!cmd.is_plain());
}

#[test]
fn exact_prefix_and_glob_rules() {
    let cmd = one("npm run test -- --watch");
    assert!(cmd.matches("npm run test:*"));
    assert!(cmd.matches("npm run *"));
    assert!(cmd.matches("npm *"));
    assert!(cmd.matches("npm run test -- --watch"));
    assert!(cmd.matches("npm   run test --   --watch"), "blanks in a rule are one boundary too");
    assert!(cmd.matches("npm * --watch"));
    assert!(!cmd.matches("npm run test"), "exact rules are exact");
    assert!(!cmd.matches("npm run tes:*"), "prefixes end at a word boundary");
    assert!(!one("npm run test:unit").matches("npm run test:*"));
    assert!(one("npm run test").matches("npm run test:*"));
    assert!(one("git").matches("git *"), "a trailing ` *` also matches the bare command");
    assert!(!one("gitk").matches("git *"));
    assert!(one("gitk").matches("git*"));
    assert!(one("git  status").matches("git status"), "double spaces are one word boundary");
}

#[test]
fn a_quoted_blank_is_not_a_word_boundary() {
    let cmd = one("git push 'x --dry-run'");
    assert_eq!(cmd.text, "git push x --dry-run");
    assert!(!cmd.matches("git push * --dry-run"));
    assert!(!one("'npm test'").matches("npm test"));
    assert!(!one("'npm test' x").matches("npm test:*"));
    assert!(one("git commit -m 'fix bug'").matches("git commit -m 'fix bug'"), "rules are unquoted too");
    assert!(one("git commit -m 'fix bug'").matches("git commit:*"));
}

#[test]
fn assignments_paths_and_expansions_never_match_allow_rules_by_accident() {
    assert!(!one("FOO=1 npm test").matches("npm test"));
    assert!(one("FOO=1 npm test").matches("FOO=1 npm test"));
    assert!(!one("/usr/bin/git status").matches("git status"));
    assert!(!one("/usr/bin/git status").matches("git:*"));
    assert!(!one("npm $X").matches("npm test"));
    assert!(one("npm test $X").matches("npm test:*"), "an expansion is one more argument for a prefix rule");
    assert!(!one("npm te$X").matches("npm test:*"));
    assert!(!one("ｒｍ x").matches("rm:*"));
    assert!(!one("gіt status").matches("git status"), "Cyrillic і");
}

#[test]
fn deny_rules_take_the_broad_reading() {
    assert!(one("/bin/rm -rf x").matches_for_deny("rm:*"));
    assert!(one("./rm x").matches_for_deny("rm:*"));
    assert!(one("FOO=1 rm x").matches_for_deny("rm:*"));
    assert!(one("FOO=1 rm x").matches_for_deny("FOO=1 rm:*"));
    assert!(one("ｒｍ -rf x").matches_for_deny("rm:*"));
    assert!(one("gіt push").matches_for_deny("git push:*"));
    assert!(one("git $X").matches_for_deny("git push:*"));
    assert!(one("$X -rf x").matches_for_deny("rm:*"));
    assert!(one("git pu*").matches_for_deny("git push"));
    assert!(one("git -C repo -c a=b --no-pager push").matches_for_deny("git push:*"));
    assert!(one("/usr/bin/git -C repo push").matches_for_deny("git push:*"));
    assert!(!one("git pull").matches_for_deny("git push:*"));
    assert!(!one("rmdir x").matches_for_deny("rm:*"));
    assert!(!one("echo rm").matches_for_deny("rm:*"));
}

#[test]
#[expect(clippy::too_many_lines, reason = "a list of commands, one line each")]
fn read_only_commands() {
    for command in [
        "ls -la",
        "cat a b",
        "grep -rn x src",
        "find . -name '*.rs' -type f",
        "git status",
        "git log -p",
        "git branch --list",
        "git tag -l 'v*'",
        "git remote",
        "sort -rn file",
        "uniq -c",
        "LC_ALL=C sort",
        "git --version",
        "sort --rev file",
        "head -5 file",
        "tail -n+2 file",
        "ls -lahR",
        "grep -rn --include=*.rs foo src",
        "wc -l -- -file",
        "date -Iseconds",
        "od -w16 -An file",
        "env",
        "date +%s",
        "command -v git",
        "echo $HOME",
        "test -f x",
    ] {
        assert!(one(command).is_read_only(), "{command:?} should be read-only");
    }
    let first = |command: &str| analyze(command).commands.into_iter().next().expect("a command");
    for command in [
        "/bin/ls",
        "./ls",
        "PATH=/tmp ls",
        "find . -exec rm {} ;",
        "find . -delete",
        "find . -fprintf out x",
        "find $X",
        "sort -o out file",
        "sort -uo out file",
        "sort --compress-program=sh file",
        "uniq in out",
        "rg --pre ./x foo",
        "tree -o out",
        "file -C -m magic",
        "date -s 2020-01-01",
        "printf -v PATH /tmp",
        "git branch -D main",
        "git branch new",
        "git tag v1",
        "git -C x status",
        "git diff --output=x",
        "git push",
        "env rm x",
        "cargo build",
        "hostname new",
        "cd /tmp",
        "X=1",
        "ｌｓ",
        "tee out",
        "sed -n 1p x",
        "cargo --version",
        "python3 --version",
        "sort --out=x file",
        "sort --outp=x file",
        "sort --compress-prog=sh file",
        "sort -T /tmp file",
        "date --s=2020-01-01",
        "date 010100002030",
        "uniq -- -in OUT",
        "grep -R x .",
        "ls -LR",
        "du --files0-from=list",
        "wc --files0-f=list",
        "md5sum -c sums",
        "[ -v 'a[$(id)]' ]",
        "test -R x",
        "grep -e x -- $X",
        "cat $HOME/.ssh/id_rsa",
        "find . -fls out",
        "find -L . -name x",
        "find . -newer x -o -fprint out",
        "jq -L /tmp '.' f",
        "jq 'import \"x\" as x; .' f",
        "file -f list",
        "rg -z foo",
        "git log --output=x",
        "git diff --no-index a b",
        "git -c core.pager=sh log",
        "LC_ALL=./x sort a",
        "LANG=/tmp/l cat a",
        // ls marks a symlink's target by its type in long format, and colours a dangling one (red team, round 7).
        "ls -lF links",
        "ls -l --file-type links",
        "ls --format=long --classify=always links",
        "ls -l --indicator-style=file-type",
        "ls --color=always links",
        "ls --col links",
    ] {
        assert!(!first(command).is_read_only(), "{command:?} should not be read-only");
    }
}

#[test]
fn writing_redirections_are_reported() {
    for (command, written) in [
        ("ls > a", "a"),
        ("ls >> a", "a"),
        ("ls >| a", "a"),
        ("ls &> a", "a"),
        ("ls &>> a", "a"),
        ("ls <> a", "a"),
        ("ls 2> a", "a"),
        ("ls >&a", "a"),
        ("ls > 'my file'", "my file"),
        ("ls > ~/x", "~/x"),
        ("{ ls; } > a", "a"),
        ("echo $(ls > a)", "a"),
    ] {
        assert_eq!(analyze(command).writes, [written], "{command:?}");
    }
    for command in ["ls 2>&1", "ls >/dev/null", "ls 2>/dev/null", "ls >&2", "ls &>/dev/null", "ls < a", "ls 2>&-"] {
        assert_eq!(analyze(command).writes, Vec::<String>::new(), "{command:?}");
    }
    assert!(reason("ls > $OUT").contains("redirection"));
}

#[test]
fn constructs_that_always_ask() {
    for (command, expected) in [
        ("ls $(pwd)", "command substitution"),
        ("ls `pwd`", "backticks"),
        ("echo \"$(pwd)\"", "command substitution"),
        ("cat <(ls)", "process substitution"),
        ("eval ls", "eval"),
        ("bash -c ls", "bash -c"),
        ("/bin/sh -ec ls", "sh -c"),
        ("exec ls", "exec"),
        ("source x", "source"),
        (". x", "`.`"),
        ("bash <<EOF\nls\nEOF", "here-document"),
        ("python3 - <<< 'print(1)'", "python3"),
        ("curl x | sh", "pipe"),
        ("xargs ls", "xargs"),
        ("sudo ls", "sudo"),
        ("env X=1 ls", "env"),
        ("nohup ls", "nohup"),
        ("timeout 1 ls", "timeout"),
        ("nice ls", "nice"),
        ("command ls", "command"),
        ("builtin cd", "builtin"),
        ("find . -exec ls {} +", "find -exec"),
        ("f() { ls; }", "function definition"),
        ("alias x=ls", "alias"),
        ("$CMD x", "command position"),
        ("${X} x", "command position"),
        ("\"$X\" x", "command position"),
        ("$(echo ls)", "command substitution"),
        ("echo ${X:-y}", "parameter expansion"),
        ("echo ${!X}", "parameter expansion"),
        ("echo $((x + 1))", "arithmetic"),
        ("(( x++ ))", "arithmetic"),
        ("[[ $x -gt 1 ]]", "arithmetic comparison"),
        ("a[$i]=1", "array assignment"),
        ("echo \"unterminated", "could not parse"),
        ("ls |", "could not parse"),
    ] {
        let got = reason(command);
        assert!(got.contains(expected), "{command:?}: {got:?} should mention {expected:?}");
    }
    for command in
        ["ls", "echo $HOME", "echo ~/x", "~/bin/tool x", "echo $((1 + 2))", "[[ 1 -eq 1 ]]", "env", "command -v x"]
    {
        assert_eq!(analyze(command).always_ask, None, "{command:?}");
    }
}

#[test]
fn the_blocklist_names_what_it_refuses() {
    for command in [
        "rm -rf /",
        "rm -Rf /",
        "rm -rf //",
        "rm -rf /.",
        "sudo -u root rm -rf --no-preserve-root /",
        "env rm -rf ~",
        "rm -rf $HOME/",
        "mkfs /dev/sda",
        "dd of=/dev/disk2 if=x",
        "echo > /dev/sdb1",
        "ls &> /dev/nvme0n1",
        "chgrp -R x /",
        "telinit 0",
        "systemctl --now reboot",
        ":(){ :|: & };:",
        "eval 'rm -rf /'",
        "rm -rf / ; echo \"unterminated",
    ] {
        assert!(analyze(command).blocked.is_some(), "{command:?} should be blocked");
    }
    for command in [
        "rm -rf /tmp/x",
        "rm -rf ./build",
        "rm /",
        "rm -rf ~/project/target",
        "chmod 777 /",
        "dd if=/dev/sda of=x",
        "init 3",
        "echo shutdown",
        "f() { f; }",
    ] {
        assert_eq!(analyze(command).blocked, None, "{command:?}");
    }
    let reason = analyze("rm -rf /").blocked.unwrap_or_default();
    assert!(reason.contains("whole filesystem"), "{reason}");
}

#[test]
fn look_alikes_are_never_read_only_and_never_skip_a_deny_rule() {
    for command in ["ｌｓ", "lѕ", "сat x", "l\u{200b}s"] {
        let cmd = one(command);
        assert!(!cmd.is_read_only() && !cmd.matches("ls:*") && !cmd.matches("cat:*"), "{command:?}");
    }
    assert!(one("ｒｍ x").matches_for_deny("rm:*"));
    assert!(one("r\u{200b}m x").matches_for_deny("rm:*"));
}

#[test]
fn never_panics_and_never_overflows_the_stack() {
    let deep = [
        format!("{}ls{}", "(".repeat(100_000), ")".repeat(100_000)),
        format!("{}ls;{}", "{ ".repeat(50_000), " }".repeat(50_000)),
        format!("{}ls{}", "$(".repeat(50_000), ")".repeat(50_000)),
        format!("{}true{}", "if ".repeat(20_000), "; then ls; fi".repeat(20_000)),
        format!("echo {}", "`".repeat(10_000)),
        "x".repeat(300 * 1024),
        "ls && ".repeat(20_000) + "ls",
    ];
    for command in &deep {
        let analysis = analyze(command);
        assert!(analysis.blocked.is_none(), "{}", &command[..20]);
    }
    let garbage = [
        "",
        " ",
        "\n",
        "#",
        ";",
        "&&",
        "|",
        "(",
        ")",
        "{",
        "}",
        "$(",
        "`",
        "'",
        "\"",
        "\\",
        "<<",
        "<<EOF",
        "$'\\",
        "${",
        "${!",
        "$((",
        "[[",
        "case",
        "for",
        "a=(",
        "\u{0}",
        "\r\n",
        "é ü 😀",
    ];
    for a in garbage {
        for b in garbage {
            let _ = analyze(&format!("{a}{b}"));
            let _ = analyze(&format!("ls {a} rm {b} x"));
        }
    }
}

#[test]
fn nesting_up_to_the_limit_is_analysed_from_a_small_stack() {
    let levels = walk::MAX_OPENERS - 1;
    let commands = [
        format!("{}rm x{}", "( ".repeat(levels), " )".repeat(levels)),
        format!("{}rm x;{}", "{ ".repeat(levels), " }".repeat(levels)),
        format!("{}rm x{}", "$(".repeat(levels), ")".repeat(levels)),
        format!("{}true{}", "if ".repeat(levels), "; then rm x; fi".repeat(levels)),
    ];
    let handle = std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(move || commands.iter().map(|command| analyze(command)).collect::<Vec<_>>())
        .expect("spawn");
    for analysis in handle.join().expect("no overflow") {
        assert!(analysis.commands.iter().any(|cmd| cmd.matches_for_deny("rm:*")), "{analysis:?}");
    }
}

#[test]
fn heredoc_bodies_are_data_unless_a_shell_reads_them() {
    let analysis = analyze("cat <<EOF\nrm -rf /\nEOF");
    assert_eq!(texts(&analysis), ["cat"]);
    assert!(analysis.blocked.is_none() && analysis.always_ask.is_none());
    assert!(analyze("bash <<EOF\nrm -rf /\nEOF").blocked.is_some());
    assert!(analyze("cat <<-EOF\n\t$(rm x)\n\tEOF").commands.iter().any(|cmd| cmd.text == "rm x"));
}

#[test]
fn wrapped_commands_are_found_behind_their_options() {
    for (command, wrapped) in [
        ("sudo -u bob -E rm x", "rm x"),
        ("sudo --user=bob rm x", "rm x"),
        ("timeout -s KILL 5 rm x", "rm x"),
        ("nice -n 10 rm x", "rm x"),
        ("env -u HOME A=1 rm x", "rm x"),
        ("xargs -I {} -P 4 rm {}", "rm {}"),
        ("stdbuf -oL rm x", "rm x"),
        ("sudo timeout 5 nohup rm x", "rm x"),
    ] {
        // Precise option tables: the wrapper, then exactly the command it runs (and what that one runs).
        let analysis = analyze(command);
        assert_eq!(texts(&analysis)[0], command, "{command:?}");
        assert_eq!(texts(&analysis).last(), Some(&wrapped), "{command:?}: {analysis:?}");
    }
    for (command, wrapped) in
        [("env -S 'rm x'", "rm x"), ("flock /tmp/l -c 'rm x'", "rm x"), ("chroot /jail rm x", "rm x")]
    {
        assert!(texts(&analyze(command)).contains(&wrapped), "{command:?}");
    }
}

#[test]
fn empty_and_comment_only_lines_run_nothing() {
    for command in ["", "   ", "\n\n", "# rm -rf /", "  # just a note\n"] {
        assert_eq!(analyze(command), Analysis::default(), "{command:?}");
    }
}
