//! bash's own reading of a command line, to check the parser's.
//!
//! brush-parser and bash disagree on corner cases (a here-document delimiter split by backslash-newline,
//! `$\⏎(cmd)` in a here-document body…), and a command is judged by what bash will run. So the command is
//! given to bash as the body of a function inside another function, and bash prints its re-serialisation with
//! `declare -f`: here-documents, continuations, comments and quoting come back as bash read them. Defining a
//! function runs nothing. Should the text close the functions early, what follows would run at the top level;
//! three layers make sure it can't do anything there: a `DEBUG` trap (with `extdebug` and `functrace`, also in
//! substitutions) that exits before any simple command other than the final `declare -f`, a restricted shell
//! (`-r`: no redirections to files, no commands by path, no `cd`, `exec` or `PATH` change) with an empty
//! environment and a `PATH` that holds nothing, and the dangerous builtins disabled. It runs in an empty
//! temporary directory with a two-second limit.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long bash may take to print its reading.
const LIMIT: Duration = Duration::from_secs(2);

/// Builtins disabled before anything of the command is read: none is needed to print a function.
const DISABLED_BUILTINS: &str = "kill fc history source . read mapfile readarray ulimit umask wait suspend disown \
    bind complete compgen compopt hash alias unalias eval exec cd pushd popd dirs jobs bg fg times caller printf \
    echo test [ let set shopt trap unset export readonly local typeset getopts shift return logout type help \
    command builtin enable";

/// bash's re-serialisation of `command` (the body of the function, indented by bash), or why it can't be had.
pub(super) fn bash_reading(command: &str) -> Result<String, String> {
    let bash = super::bash().ok_or("bash was not found to confirm how it reads the command")?;
    let locale = character_locale();
    if !locale_reads_like_utf8(locale.as_deref()) {
        // In a multibyte locale such as GBK a byte of a character can be `\` or `"` to bash and not to the
        // analyser, which reads UTF-8.
        return Err(format!("the locale {} is not UTF-8", locale.unwrap_or_default()));
    }
    let nonce = format!("__tandem_{:016x}", fastrand::u64(..));
    let script = format!(
        "shopt -s extdebug\nset -T\nenable -n {DISABLED_BUILTINS}\n\
         trap '[[ $BASH_COMMAND == \"declare -f {nonce}_o\" ]] || exit 99' DEBUG\n\
         {nonce}_o() {{\n{nonce}_f() {{\n{command}\n:\n}}\n}}\ndeclare -f {nonce}_o\n"
    );
    let scratch = tempfile::tempdir().map_err(|err| format!("no scratch directory to check the command in: {err}"))?;
    let mut child = Command::new(bash)
        .args(["--norc", "--noprofile", "-r", "-c", &script])
        .env_clear()
        .env("PATH", "/nonexistent-tandem-path")
        .env("LC_ALL", locale.as_deref().unwrap_or("C"))
        .current_dir(scratch.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|err| format!("bash could not be started to confirm how it reads the command: {err}"))?;
    let mut stdout = child.stdout.take().ok_or("bash gave no output")?;
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        let _ = stdout.read_to_end(&mut out);
        out
    });
    let deadline = Instant::now() + LIMIT;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(1)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Err("bash took too long to read the command".into());
            }
        }
    };
    let out = reader.join().unwrap_or_default();
    if !status.success() {
        return Err("bash does not read it as one complete command line".into());
    }
    let out = String::from_utf8(out).map_err(|_| "bash printed it back in another encoding")?;
    let head = format!("{nonce}_o () \n{{ \n    function {nonce}_f () \n    {{ \n");
    let body = out
        .strip_prefix(&head)
        .and_then(|rest| rest.strip_suffix("\n    }\n}\n"))
        .ok_or("bash read it as more than one command line")?;
    // The `:` that follows the command: on its own line, or after a trailing `&` on the same one.
    let body = body
        .strip_suffix("\n        :")
        .or_else(|| body.strip_suffix(" & :").map(|rest| &body[..rest.len() + 2]))
        .or_else(|| (body == "        :").then_some(""));
    body.map(str::to_owned).ok_or_else(|| "bash joined the end of the command with what follows it".into())
}

/// The locale commands run in, as far as characters go: `LC_ALL`, else `LC_CTYPE`, else `LANG`.
fn character_locale() -> Option<String> {
    ["LC_ALL", "LC_CTYPE", "LANG"].iter().find_map(|name| std::env::var(name).ok().filter(|value| !value.is_empty()))
}

/// Whether bash in this locale reads the ASCII bytes of a command as the analyser does: everything but the
/// multibyte charsets whose characters can contain ASCII bytes (`\`, `"`, `$`): GBK, GB18030, Big5, Shift JIS…
fn locale_reads_like_utf8(locale: Option<&str>) -> bool {
    let Some(locale) = locale else { return true };
    let base = locale.split('@').next().unwrap_or(locale);
    let (name, charset) = base.split_once('.').unwrap_or((base, ""));
    let charset = charset.to_lowercase().replace(['-', '_'], "");
    let unsafe_charset =
        ["gbk", "gb18030", "big5", "big5hkscs", "sjis", "shiftjis", "cp932", "cp936", "cp949", "cp950", "johab", "uhc"]
            .contains(&charset.as_str());
    // Without a charset, these default to Big5.
    let unsafe_default = charset.is_empty() && matches!(name, "zh_TW" | "zh_HK");
    !unsafe_charset && !unsafe_default
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bash_prints_its_own_reading() {
        let body = bash_reading("cat <<EO\\\nF\nhi $\\\n(id)\nEOF\nls -la # c }").unwrap();
        assert!(body.contains("cat <<EOF\nhi $(id)\nEOF"), "{body}");
        assert!(body.contains("ls -la"));
        assert!(!body.contains("# c"));
    }

    #[test]
    fn closing_the_functions_early_runs_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let canary = dir.path().join("canary");
        for attack in [
            format!("ls\n}}\n}}\n/usr/bin/touch {0}\nf() {{\ng() {{", canary.display()),
            format!("ls\n}}\n}}\n{{ :; }} > $(/usr/bin/touch {0})\nf() {{\ng() {{", canary.display()),
            format!("ls\n}}\n}}\ntrap - DEBUG; /usr/bin/touch {0}\nf() {{\ng() {{", canary.display()),
            format!("ls }} }}; echo x > {0}; f() {{ g() {{", canary.display()),
            format!("ls\n}}\n}}\nenable kill; builtin echo x > {0}\nf() {{\ng() {{", canary.display()),
        ] {
            assert!(bash_reading(&attack).is_err(), "{attack}");
            assert!(!canary.exists(), "{attack}");
        }
    }

    #[test]
    fn only_byte_and_utf8_locales_are_trusted() {
        for good in [
            None,
            Some("C"),
            Some("POSIX"),
            Some("en_US.UTF-8"),
            Some("de_DE.utf8"),
            Some("C.UTF-8@euro"),
            Some("en_US"),
            Some("de_DE.ISO-8859-1"),
        ] {
            assert!(locale_reads_like_utf8(good), "{good:?}");
        }
        for bad in [Some("zh_CN.GBK"), Some("zh_TW.Big5"), Some("ja_JP.SJIS"), Some("zh_TW"), Some("zh_CN.GB18030")] {
            assert!(!locale_reads_like_utf8(bad), "{bad:?}");
        }
    }

    #[test]
    fn incomplete_commands_are_not_read() {
        for text in ["cat <<EOF\nhi", "ls \\", "echo 'open", "if true; then"] {
            assert!(bash_reading(text).is_err(), "{text}");
        }
        assert_eq!(bash_reading("").unwrap(), "");
        assert_eq!(bash_reading("# only a comment").unwrap(), "");
    }
}
