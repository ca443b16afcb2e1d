//! Other names a path has through the mounts of this system: a bind mount of the home directory, a btrfs
//! top-level subvolume mounted beside its subvolumes, `/home` also mounted under `/mnt/data`. The sandbox denies
//! secrets by path; the same files reached under another mount point must be denied too.

use std::path::PathBuf;

/// One line of `/proc/self/mountinfo`: the file system (`major:minor`), the directory of it that is mounted,
/// and where.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Mount {
    device: String,
    root: PathBuf,
    point: PathBuf,
}

/// Every other path under which each of `paths` (absolute, resolved) can be reached through this system's mounts;
/// empty where there is no mount table to read.
pub fn mount_aliases(paths: &[PathBuf]) -> Vec<PathBuf> {
    match std::fs::read_to_string("/proc/self/mountinfo") {
        Ok(table) => aliases_in(&parse(&table), paths),
        Err(_) => Vec::new(),
    }
}

fn parse(table: &str) -> Vec<Mount> {
    table
        .lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split(' ').collect();
            Some(Mount {
                device: (*fields.get(2)?).to_owned(),
                root: PathBuf::from(unescape(fields.get(3)?)),
                point: PathBuf::from(unescape(fields.get(4)?)),
            })
        })
        .collect()
}

/// The kernel writes a space, tab, newline and backslash in a path as `\040`, `\011`, `\012`, `\134`.
fn unescape(field: &str) -> String {
    let mut out = String::with_capacity(field.len());
    let mut rest = field;
    while let Some(at) = rest.find('\\') {
        out.push_str(&rest[..at]);
        let code = rest.get(at + 1..at + 4).and_then(|digits| u8::from_str_radix(digits, 8).ok());
        match code {
            Some(byte) => {
                out.push(char::from(byte));
                rest = &rest[at + 4..];
            }
            None => {
                out.push('\\');
                rest = &rest[at + 1..];
            }
        }
    }
    out.push_str(rest);
    out
}

fn aliases_in(mounts: &[Mount], paths: &[PathBuf]) -> Vec<PathBuf> {
    let mut aliases = Vec::new();
    for path in paths {
        // The mount the path is under now: the last one mounted at its longest mount point (a later mount hides
        // an earlier one at the same place).
        let Some(home) = mounts
            .iter()
            .filter(|mount| path.starts_with(&mount.point))
            .max_by_key(|mount| mount.point.components().count())
        else {
            continue;
        };
        let Ok(below) = path.strip_prefix(&home.point) else { continue };
        let in_device = home.root.join(below);
        for other in mounts.iter().filter(|other| other.device == home.device) {
            let Ok(rest) = in_device.strip_prefix(&other.root) else { continue };
            let alias = other.point.join(rest);
            if alias != *path && !aliases.contains(&alias) {
                aliases.push(alias);
            }
        }
    }
    aliases
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: &str = "\
22 27 0:21 / /proc rw,relatime - proc proc rw
27 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw
40 27 8:2 / /home rw,relatime - ext4 /dev/sda2 rw
41 27 8:2 /alice /mnt/alice\\040home rw,relatime - ext4 /dev/sda2 rw
42 27 8:2 / /mnt/data rw,relatime - ext4 /dev/sda2 rw
43 27 8:3 / /mnt/other rw,relatime - ext4 /dev/sda3 rw
";

    /// `/home` is also mounted whole at `/mnt/data`, and alice's home alone at `/mnt/alice home`: her `.ssh` has
    /// two more names; a directory on another device has none.
    #[test]
    fn a_secret_has_a_name_under_every_mount_of_its_file_system() {
        let mounts = parse(TABLE);
        assert_eq!(mounts[3].point, PathBuf::from("/mnt/alice home"));
        let aliases = aliases_in(&mounts, &[PathBuf::from("/home/alice/.ssh")]);
        assert_eq!(aliases, [PathBuf::from("/mnt/alice home/.ssh"), PathBuf::from("/mnt/data/alice/.ssh")]);
        assert!(aliases_in(&mounts, &[PathBuf::from("/etc/shadow")]).is_empty(), "the root device is mounted once");
        assert!(aliases_in(&mounts, &[PathBuf::from("/home/bob/.ssh")]).contains(&PathBuf::from("/mnt/data/bob/.ssh")));
        assert!(
            !aliases_in(&mounts, &[PathBuf::from("/home/bob/.ssh")])
                .iter()
                .any(|alias| alias.starts_with("/mnt/alice home"))
        );
    }
}
