//! Takes tandem's environment (and the API key in it) out of `/proc/<tandem>/environ`.
//!
//! That file is the block of memory the kernel copied the environment into at `exec`; it stays as it was
//! whatever `setenv` does later. A non-dumpable process (see [`super::harden_self`]) keeps other users' and
//! sandboxed processes of the same user out of it, but not root: Linux lets a process with `CAP_SYS_PTRACE` read
//! another's `environ` (a read-mode ptrace check, which Landlock does not refuse), so a command tandem runs
//! sandboxed as root could still print the key with `cat /proc/$PPID/environ`. Its memory stays out of reach
//! (reading `mem` is an attach-mode check, which Landlock refuses), so moving every variable to memory tandem
//! allocated and blanking the block closes it.

use std::io::{Seek, SeekFrom, Write};

/// Moves every variable of tandem's environment out of the `exec` block into allocated memory (through `setenv`)
/// and blanks the block, so that `/proc/<tandem>/environ` reads as zeros. Variables read by the dynamic loader
/// (`LD_*`), which it may keep pointing into the block, stay. Does nothing and says so unless this process has a
/// single thread: `setenv` races any thread reading the environment.
pub fn hide() -> Result<(), String> {
    let threads = std::fs::read_dir("/proc/self/task").map_err(|e| format!("can't count threads: {e}"))?.count();
    if threads != 1 {
        return Err(format!("{threads} threads are running; the environment is only moved before any starts"));
    }
    let (start, end) = block_bounds()?;
    let mut block = std::fs::read("/proc/self/environ").map_err(|e| format!("can't read the environment: {e}"))?;
    if block.len() as u64 != end - start {
        return Err("the environment block changed size since exec".to_string());
    }
    let mut start_of_entry = 0;
    while start_of_entry < block.len() {
        let len = block[start_of_entry..].iter().position(|&byte| byte == 0).unwrap_or(block.len() - start_of_entry);
        let entry = start_of_entry..start_of_entry + len;
        if let Some((name, value)) = split_entry(&block[entry.clone()])
            && !name.starts_with(b"LD_")
        {
            move_to_heap(name, value);
            block[entry].fill(0);
        }
        start_of_entry += len + 1;
    }
    let mut memory = std::fs::OpenOptions::new()
        .write(true)
        .open("/proc/self/mem")
        .map_err(|e| format!("can't open own memory: {e}"))?;
    memory
        .seek(SeekFrom::Start(start))
        .and_then(|_| memory.write_all(&block))
        .map_err(|e| format!("can't blank the environment: {e}"))
}

/// `env_start` and `env_end` from `/proc/self/stat` (fields 50 and 51; the name in field 2 may hold spaces and
/// parentheses, so fields are counted after its closing parenthesis).
fn block_bounds() -> Result<(u64, u64), String> {
    let stat = std::fs::read_to_string("/proc/self/stat").map_err(|e| format!("can't read /proc/self/stat: {e}"))?;
    let after_name = stat.rsplit_once(')').map(|(_, rest)| rest).unwrap_or_default();
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let field = |number: usize| fields.get(number - 3).and_then(|text| text.parse::<u64>().ok());
    match (field(50), field(51)) {
        (Some(start), Some(end)) if start < end => Ok((start, end)),
        _ => Err("this kernel does not say where the environment is".to_string()),
    }
}

fn split_entry(entry: &[u8]) -> Option<(&[u8], &[u8])> {
    let equals = entry.iter().skip(1).position(|&byte| byte == b'=')? + 1;
    Some((&entry[..equals], &entry[equals + 1..]))
}

fn move_to_heap(name: &[u8], value: &[u8]) {
    use std::os::unix::ffi::OsStrExt;
    let (name, value) = (std::ffi::OsStr::from_bytes(name), std::ffi::OsStr::from_bytes(value));
    // SAFETY: `hide` checked that this is the process's only thread, so nothing reads the environment while
    // `setenv` replaces the entry (with an allocated copy of the same text).
    unsafe { std::env::set_var(name, value) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_split_at_their_first_equals_sign() {
        assert_eq!(split_entry(b"KEY=a=b"), Some((&b"KEY"[..], &b"a=b"[..])));
        assert_eq!(split_entry(b"=C:=x"), Some((&b"=C:"[..], &b"x"[..])));
        assert_eq!(split_entry(b"EMPTY="), Some((&b"EMPTY"[..], &b""[..])));
        assert_eq!(split_entry(b"junk"), None);
    }

    #[test]
    fn the_block_is_found_where_the_kernel_says() {
        let (start, end) = block_bounds().unwrap();
        let block = std::fs::read("/proc/self/environ").unwrap();
        assert_eq!(block.len() as u64, end - start);
    }

    #[test]
    fn hiding_refuses_while_other_threads_run() {
        let (stop, stopped) = std::sync::mpsc::channel::<()>();
        let other = std::thread::spawn(move || stopped.recv());
        let error = hide().unwrap_err();
        drop(stop);
        let _ = other.join();
        assert!(error.contains("threads"), "{error}");
    }
}
