//! The hard blocklist: commands refused in every mode, bypass included, because one run destroys the
//! machine or its data. Program names are compared after folding look-alikes and taking the file name of
//! a path (`/bin/rm`), so the broad reading wins here as it does for deny rules.

use super::pattern::fold_str;
use super::words::{Word, basename};

/// Why `words` (one simple command) is refused, or `None`.
pub(super) fn check(words: &[Word]) -> Option<String> {
    let first = words.first()?;
    if first.has_opaque() {
        return None;
    }
    let program = fold_str(basename(&first.text()));
    let args: Vec<String> = words[1..].iter().map(|word| fold_str(&word.text())).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    match program.as_str() {
        "rm" => {
            let recursive = options(&args).any(|arg| arg == "--recursive" || short_has(arg, "rR"));
            let target = operands(&args).find(|target| is_root_like(target))?;
            recursive.then(|| format!("`rm -r {target}` would delete {}", what(target)))
        }
        "chmod" | "chown" | "chgrp" => {
            let recursive = options(&args).any(|arg| arg == "--recursive" || short_has(arg, "R"));
            let target = operands(&args).find(|target| is_root_like(target))?;
            recursive.then(|| format!("`{program} -R` on {target} would change the permissions of {}", what(target)))
        }
        name if name.starts_with("mkfs") || name == "mke2fs" => {
            Some(format!("`{name}` formats a disk or partition, destroying its data"))
        }
        "dd" => args.iter().find_map(|arg| {
            let device = arg.strip_prefix("of=")?;
            is_disk_device(device).then(|| format!("`dd of={device}` overwrites a disk device"))
        }),
        "shutdown" | "reboot" | "halt" | "poweroff" => Some(format!("`{program}` shuts down or restarts the machine")),
        "init" | "telinit" if matches!(args.first(), Some(&("0" | "6"))) => {
            Some(format!("`{program} {}` shuts down or restarts the machine", args[0]))
        }
        "systemctl" if args.iter().any(|arg| matches!(*arg, "poweroff" | "reboot" | "halt" | "kexec")) => {
            Some("`systemctl poweroff/reboot/halt` shuts down or restarts the machine".to_owned())
        }
        _ => None,
    }
}

/// Options: words before `--` that start with `-`.
fn options<'a>(args: &'a [&'a str]) -> impl Iterator<Item = &'a str> + 'a {
    args.iter().copied().take_while(|arg| *arg != "--").filter(|arg| arg.starts_with('-') && arg.len() > 1)
}

/// Operands: words that are not options, and every word after `--`.
fn operands<'a>(args: &'a [&'a str]) -> impl Iterator<Item = &'a str> + 'a {
    let end = args.iter().position(|arg| *arg == "--").unwrap_or(args.len());
    let before = args[..end].iter().copied().filter(|arg| !arg.starts_with('-') || *arg == "-");
    before.chain(args.get(end + 1..).unwrap_or_default().iter().copied())
}

/// `-xyz` containing one of `letters`.
fn short_has(arg: &str, letters: &str) -> bool {
    !arg.starts_with("--") && arg[1..].contains(|c| letters.contains(c))
}

/// The root directory or the home directory, however written: `/`, `/*`, `//`, `/.`, `~`, `~/`, `~/*`,
/// `$HOME`, `${HOME}/`.
fn is_root_like(target: &str) -> bool {
    if target.is_empty() {
        return false;
    }
    let mut rest = target;
    loop {
        let stripped = ["/..", "/.", "/*", "/"].iter().find_map(|suffix| rest.strip_suffix(suffix));
        match stripped {
            Some(shorter) => rest = shorter,
            None => break,
        }
    }
    matches!(rest, "" | "~" | "$HOME" | "${HOME}")
}

fn what(target: &str) -> &'static str {
    if target.starts_with('/') { "the whole filesystem" } else { "the home directory" }
}

/// Block devices of disks and partitions: writing to one destroys the filesystem on it.
pub(super) fn is_disk_device(path: &str) -> bool {
    const DISKS: &[&str] = &[
        "/dev/sd",
        "/dev/hd",
        "/dev/nvme",
        "/dev/disk",
        "/dev/rdisk",
        "/dev/mmcblk",
        "/dev/xvd",
        "/dev/vd",
        "/dev/mapper/",
        "/dev/dm-",
        "/dev/md",
    ];
    DISKS.iter().any(|prefix| path.starts_with(prefix))
}
