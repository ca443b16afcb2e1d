//! Tables: which programs are read-only (and with which arguments), which are shells or interpreters, and
//! which run another command (wrappers) and how to find that command in their arguments.

use super::words::{Word, basename, is_assignment};

/// Environment assignments that don't change what a read-only command can do (`LC_ALL=C sort`).
pub(super) fn is_harmless_env(name: &str) -> bool {
    matches!(name, "LANG" | "LANGUAGE" | "TZ" | "NO_COLOR" | "CLICOLOR" | "COLUMNS" | "LINES")
        || name.starts_with("LC_")
}

/// Shells: with `-c` they run their argument as a command line.
pub(super) fn is_shell(name: &str) -> bool {
    matches!(
        name,
        "sh" | "bash" | "zsh" | "dash" | "ksh" | "mksh" | "pdksh" | "ash" | "fish" | "csh" | "tcsh" | "yash" | "rbash"
    )
}

/// Interpreters that run code read from standard input when given no script.
pub(super) fn is_interpreter(name: &str) -> bool {
    name.starts_with("python")
        || matches!(
            name,
            "perl"
                | "ruby"
                | "node"
                | "nodejs"
                | "deno"
                | "bun"
                | "php"
                | "lua"
                | "luajit"
                | "tclsh"
                | "wish"
                | "Rscript"
                | "R"
                | "julia"
                | "osascript"
                | "pwsh"
                | "powershell"
                | "nu"
                | "xonsh"
                | "irb"
                | "awk"
                | "gawk"
                | "mawk"
                | "nawk"
                | "groovy"
                | "scala"
                | "elixir"
        )
}

/// For `bash -c 'cmd'`: `Some(Some(i))` when `-c` is given and word `i` is the command string,
/// `Some(None)` when `-c` is given without one, `None` without `-c`.
pub(super) fn shell_command_string(words: &[Word]) -> Option<Option<usize>> {
    let mut found = false;
    for (i, word) in words.iter().enumerate().skip(1) {
        let text = word.text();
        if found && !text.starts_with(['-', '+']) {
            return Some(Some(i));
        }
        if text == "--" && !found {
            return None;
        }
        let is_c = text.starts_with("--command")
            || text.starts_with("--init-command")
            || (text.starts_with('-') && !text.starts_with("--") && text[1..].contains('c'));
        if is_c {
            found = true;
        } else if !found && !text.starts_with(['-', '+']) {
            return None;
        }
    }
    found.then_some(None)
}

/// Whether a shell or interpreter would read its program from standard input: no script operand, or `-`,
/// or (for shells) `-s`.
pub(super) fn reads_program_from_stdin(words: &[Word], shell: bool) -> bool {
    for word in &words[1..] {
        let text = word.text();
        if text == "-" || (shell && text.starts_with('-') && !text.starts_with("--") && text.contains('s')) {
            return true;
        }
        if text == "--" || !text.starts_with(['-', '+']) {
            return false;
        }
    }
    true
}

/// How a wrapper's own options look, so the wrapped command can be found.
pub(super) struct Wrapper {
    /// Short options that take a value (`-u user`).
    short_values: &'static str,
    /// Long options that take a value when not written `--opt=value`.
    long_values: &'static [&'static str],
    /// Short options whose value is a shell command line (`su -c 'cmd'`).
    short_strings: &'static str,
    /// Operands before the command (`timeout 5 cmd`); `usize::MAX` when operands are never a command.
    skip_operands: usize,
    /// Whether `NAME=value` words before the command are allowed (`env`).
    assignments: bool,
    /// Whether the option table is complete: when it isn't, every later non-option word is also treated as
    /// a possible start of the wrapped command (the broad reading, for deny rules and the blocklist).
    precise: bool,
}

const fn wrapper(short_values: &'static str, long_values: &'static [&'static str], skip_operands: usize) -> Wrapper {
    Wrapper { short_values, long_values, short_strings: "", skip_operands, assignments: false, precise: true }
}

const fn generic(skip_operands: usize) -> Wrapper {
    Wrapper { short_values: "", long_values: &[], short_strings: "", skip_operands, assignments: false, precise: false }
}

const fn with_string(short_values: &'static str, short_strings: &'static str, skip_operands: usize) -> Wrapper {
    Wrapper { short_values, long_values: &[], short_strings, skip_operands, assignments: false, precise: false }
}

/// The wrapper table entry for a program name, if it runs another command.
pub(super) fn wrapper_for(name: &str) -> Option<Wrapper> {
    let spec = match name {
        "sudo" => wrapper(
            "ugCDhprtTU",
            &[
                "--user",
                "--group",
                "--close-from",
                "--chdir",
                "--host",
                "--prompt",
                "--role",
                "--type",
                "--command-timeout",
                "--other-user",
            ],
            0,
        ),
        "doas" => wrapper("uC", &[], 0),
        "pkexec" => wrapper("", &["--user"], 0),
        "env" => Wrapper {
            assignments: true,
            short_strings: "S",
            ..wrapper("uCP", &["--unset", "--chdir", "--split-string"], 0)
        },
        "nohup" | "builtin" | "setsid" | "unbuffer" | "fakeroot" | "eatmydata" | "catchsegv" | "torsocks"
        | "dbus-run-session" => wrapper("", &[], 0),
        "nice" => wrapper("n", &["--adjustment"], 0),
        "ionice" => wrapper("cnpPu", &["--class", "--classdata", "--pid", "--pgid", "--uid"], 0),
        "timeout" => wrapper("sk", &["--signal", "--kill-after"], 1),
        "stdbuf" => wrapper("ioe", &["--input", "--output", "--error"], 0),
        "time" => wrapper("fo", &["--format", "--output"], 0),
        "command" => wrapper("", &[], 0),
        "exec" => wrapper("a", &[], 0),
        "xargs" => wrapper(
            "adEILnPs",
            &[
                "--arg-file",
                "--delimiter",
                "--eof",
                "--max-lines",
                "--max-args",
                "--max-procs",
                "--max-chars",
                "--process-slot-var",
            ],
            0,
        ),
        "strace" | "ltrace" => wrapper("oepsuEabIOPSXn", &[], 0),
        "chroot" | "taskset" | "chrt" | "gosu" | "su-exec" => generic(1),
        "flock" => with_string("wE", "c", 1),
        "su" | "runuser" => with_string("gGsuw", "c", usize::MAX),
        "sg" => with_string("", "c", 1),
        "script" => with_string("ETtIOBm", "c", usize::MAX),
        "busybox" | "caffeinate" | "proxychains" | "proxychains4" | "firejail" | "systemd-run" | "nsenter"
        | "unshare" | "setpriv" | "prlimit" | "numactl" | "valgrind" | "rlwrap" | "xvfb-run" | "parallel" | "chpst"
        | "cgexec" | "faketime" => generic(0),
        _ => return None,
    };
    Some(spec)
}

/// What a wrapper runs: the indexes where a wrapped command may start, and the indexes of words that are
/// shell command lines (`su -c 'cmd'`, `env -S 'cmd args'`).
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Wrapped {
    pub starts: Vec<usize>,
    pub strings: Vec<usize>,
}

/// Finds the wrapped command in `words` (`words[0]` is the wrapper).
pub(super) fn wrapped(spec: &Wrapper, words: &[Word]) -> Wrapped {
    let mut out = Wrapped::default();
    let mut operands = 0;
    let mut options_done = false;
    let mut i = 1;
    while i < words.len() {
        let text = words[i].text();
        if !options_done && text == "--" {
            options_done = true;
            i += 1;
            continue;
        }
        if !options_done && text.starts_with("--") {
            let name = text.split('=').next().unwrap_or(&text);
            if name == "--split-string" || name == "--command" {
                match text.split_once('=') {
                    Some(_) => out.strings.push(i),
                    None => out.strings.push(i + 1),
                }
            }
            if !text.contains('=') && spec.long_values.contains(&name) {
                i += 1;
            }
            i += 1;
            continue;
        }
        if !options_done && text.len() > 1 && text.starts_with('-') {
            let letters: Vec<char> = text[1..].chars().collect();
            for (k, letter) in letters.iter().enumerate() {
                let attached = k + 1 < letters.len();
                if spec.short_strings.contains(*letter) {
                    if !attached {
                        out.strings.push(i + 1);
                        i += 1;
                    }
                    break;
                }
                if spec.short_values.contains(*letter) {
                    if !attached {
                        i += 1;
                    }
                    break;
                }
            }
            i += 1;
            continue;
        }
        if spec.assignments && is_assignment(&text) {
            i += 1;
            continue;
        }
        if operands < spec.skip_operands {
            operands += 1;
            i += 1;
            continue;
        }
        out.starts.push(i);
        break;
    }
    if !spec.precise {
        let first = out.starts.first().copied().unwrap_or(words.len());
        for (j, word) in words.iter().enumerate().skip(1) {
            let text = word.text();
            if j != first && !text.starts_with('-') && !is_assignment(&text) && !out.strings.contains(&j) {
                out.starts.push(j);
            }
        }
    }
    out.strings.retain(|&j| j < words.len());
    out
}

/// `find … -exec cmd {} ;`: the ranges of the commands `find` runs.
pub(super) fn find_exec_ranges(words: &[Word]) -> Vec<(usize, usize)> {
    let mut ranges = Vec::new();
    let mut i = 1;
    while i < words.len() {
        if matches!(words[i].text().as_str(), "-exec" | "-execdir" | "-ok" | "-okdir") {
            let start = i + 1;
            let end =
                (start..words.len()).find(|&j| matches!(words[j].text().as_str(), ";" | "+")).unwrap_or(words.len());
            if start < end {
                ranges.push((start, end));
            }
            i = end;
        }
        i += 1;
    }
    ranges
}

/// The program name used to recognise shells, wrappers and builtins: the file name of `argv[0]`.
pub(super) fn program_name(words: &[Word]) -> Option<String> {
    words.first().and_then(Word::plain_text).map(|text| basename(&text).to_owned())
}

/// `git -C dir --no-pager push` → `git push`: git's global options removed, so a deny rule on a
/// subcommand can't be sidestepped by putting options before it. `None` when there are none.
pub(super) fn git_without_global_options(words: &[Word]) -> Option<Vec<Word>> {
    if program_name(words).as_deref() != Some("git") {
        return None;
    }
    let mut i = 1;
    while let Some(word) = words.get(i) {
        let text = word.text();
        if !text.starts_with('-') {
            break;
        }
        let takes_value = matches!(
            text.as_str(),
            "-C" | "-c" | "--git-dir" | "--work-tree" | "--namespace" | "--super-prefix" | "--config-env"
        );
        i += if takes_value { 2 } else { 1 };
    }
    (i > 1).then(|| words[..1].iter().chain(words.get(i..).unwrap_or_default()).cloned().collect())
}
