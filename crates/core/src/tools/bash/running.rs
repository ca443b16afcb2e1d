//! Every command tandem is running, process-wide, so that whatever ends tandem — a signal, stdin closing, a
//! panic unwinding the runtime — ends them too: nothing a command started outlives the session, and protected
//! entries a workspace-writing command may have changed are put back (see [`crate::sandbox::Guard`]).
//!
//! A command is found three ways: by its process group (the shell leads one of its own); by the mark every
//! process of it carries in its environment ([`super::CALL_MARK`]), which finds those that left the group
//! (`setsid`, a daemon's double fork); and, for one that also cleared its environment, as an orphan: tandem is a
//! subreaper ([`crate::sandbox::harden_self`]), so an escaped process becomes tandem's child, and a sandboxed
//! one carries `no_new_privs` (Landlock sets it, and nothing can clear it). A child of tandem with
//! `no_new_privs` that is no live command's shell and carries no live command's mark is such an orphan
//! ([`sweep_orphans`]).
//!
//! A command granted the whole workspace (its protected entries put back when it ends) is *exclusive*: it runs
//! only when no other command does, and while it runs no command starts that could be fooled by what it changed
//! in the meantime — one that runs unsandboxed (an approved command, a hook, an MCP tool call: git there would
//! run a `core.fsmonitor` the exclusive one wrote into `.git/config`), a background one (its grants follow
//! directories the exclusive one may move), or a second exclusive one (whose copy would take the first one's plant
//! for the original and put it back after the first one's restore). Commands sandboxed with the protected entries
//! read-only may run beside it.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use rustix::process::{Pid, Signal, kill_process_group};

use super::CALL_MARK;
use crate::sandbox::{Guard, NestedSettings};

struct Entry {
    mark: String,
    group: Option<Pid>,
    /// The protected entries to put back once the command is gone (foreground workspace-writing commands).
    protected: Option<Guard>,
    /// Granted the whole workspace: see the module's doc.
    exclusive: bool,
    /// The nested settings and repositories a background command may make, taken out however it ends: when its
    /// shell exits, or when the session ends with it still running.
    nested: Option<NestedSettings>,
}

/// Woken whenever an exclusive command leaves the registry.
static EXCLUSIVE_ENDED: tokio::sync::Notify = tokio::sync::Notify::const_new();

static RUNNING: Mutex<BTreeMap<u64, Entry>> = Mutex::new(BTreeMap::new());
/// Held (shared) from just before a command is spawned until its shell's pid is registered, and (exclusively)
/// by a sweep: between fork and exec a new shell already runs with `no_new_privs` but shows neither its pid in
/// the registry nor its mark in `/proc`, and must not be taken for an orphan.
static SPAWNING: std::sync::RwLock<()> = std::sync::RwLock::new(());
static NEXT: AtomicU64 = AtomicU64::new(0);
/// How many commands are out of the registry with what they nested not yet taken out
/// ([`end_one`]); [`end_all`] waits for them, so that a session ending then leaves nothing.
static ENDING: Mutex<usize> = Mutex::new(0);
static ENDING_DONE: std::sync::Condvar = std::sync::Condvar::new();
/// How long [`end_all`] waits for those.
const ENDING_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// Counts one command in [`ENDING`] while it lives.
struct Ending;

impl Ending {
    fn start() -> Ending {
        *ENDING.lock().unwrap_or_else(std::sync::PoisonError::into_inner) += 1;
        Ending
    }
}

impl Drop for Ending {
    fn drop(&mut self) {
        *ENDING.lock().unwrap_or_else(std::sync::PoisonError::into_inner) -= 1;
        ENDING_DONE.notify_all();
    }
}

fn running() -> std::sync::MutexGuard<'static, BTreeMap<u64, Entry>> {
    RUNNING.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// One command in the registry. Dropping it ends the command (kills its group and marked processes, puts the
/// protected entries back): a run abandoned midway leaves nothing behind. [`Registration::finish`] is the
/// normal end.
pub(crate) struct Registration(u64);

/// Held around a spawn until [`Registration::set_group`]; see [`SPAWNING`].
pub(crate) fn spawning() -> std::sync::RwLockReadGuard<'static, ()> {
    SPAWNING.read().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Registers a sandboxed command that keeps the protected entries read-only, before it is spawned, so that no
/// moment exists in which it runs unregistered. It may run beside an exclusive one.
pub(crate) fn register(mark: &str) -> Registration {
    insert(&mut running(), Entry::new(mark))
}

/// Registers a command that will be granted the whole workspace, only when no other command runs (`None`
/// otherwise: it keeps the protected entries read-only instead). Its protected entries' copy is taken after
/// this, and handed over with [`Registration::protect`].
pub(crate) fn register_exclusive(mark: &str) -> Option<Registration> {
    let mut running = running();
    running.is_empty().then(|| insert(&mut running, Entry { exclusive: true, ..Entry::new(mark) }))
}

/// Registers a command that must not run beside an exclusive one (see the module's doc): unsandboxed, or in the
/// background. Waits until none runs; `None` when `cancel` fired first.
pub(crate) async fn register_apart(
    mark: &str,
    cancel: Option<&tokio_util::sync::CancellationToken>,
) -> Option<Registration> {
    when_no_exclusive(cancel, |running| insert(running, Entry::new(mark))).await
}

/// Registers a hook: sandboxed, but what it runs is the user's, which must not obey what an exclusive command
/// changed before its restore (git there would run the `core.fsmonitor` it wrote). Waits until none runs, then
/// registers it exclusive when nothing else runs (`(registration, true)`), or beside the others. `None` when
/// `cancel` fired first.
pub(crate) async fn register_after_exclusive(
    mark: &str,
    cancel: Option<&tokio_util::sync::CancellationToken>,
) -> Option<(Registration, bool)> {
    when_no_exclusive(cancel, |running| {
        let exclusive = running.is_empty();
        (insert(running, Entry { exclusive, ..Entry::new(mark) }), exclusive)
    })
    .await
}

/// Runs `register` on the registry once no exclusive command is in it.
async fn when_no_exclusive<T>(
    cancel: Option<&tokio_util::sync::CancellationToken>,
    register: impl FnOnce(&mut BTreeMap<u64, Entry>) -> T,
) -> Option<T> {
    let mut register = Some(register);
    loop {
        // Made before the look, so that an end between the look and the wait still wakes it.
        let ended = EXCLUSIVE_ENDED.notified();
        {
            let mut running = running();
            if !running.values().any(|entry| entry.exclusive) {
                return register.take().map(|register| register(&mut running));
            }
        }
        match cancel {
            Some(cancel) => tokio::select! {
                _ = ended => {}
                _ = cancel.cancelled() => return None,
            },
            None => ended.await,
        }
    }
}

impl Entry {
    fn new(mark: &str) -> Entry {
        Entry { mark: mark.to_owned(), group: None, protected: None, exclusive: false, nested: None }
    }
}

fn insert(running: &mut BTreeMap<u64, Entry>, entry: Entry) -> Registration {
    let id = NEXT.fetch_add(1, Ordering::Relaxed);
    running.insert(id, entry);
    Registration(id)
}

/// Wakes the commands waiting for an exclusive one to end, once the command that left the registry (its protected
/// entries put back) was one.
fn ended(exclusive: bool) {
    if exclusive {
        EXCLUSIVE_ENDED.notify_waiters();
    }
}

impl Registration {
    /// Hands over the copy of the protected entries an exclusive command's end puts back; `None` (they could not
    /// be copied) makes it an ordinary command, which keeps them read-only.
    pub(crate) fn protect(&self, guard: Option<Guard>) {
        let mut running = running();
        let Some(entry) = running.get_mut(&self.0) else { return };
        if guard.is_none() {
            ended(std::mem::take(&mut entry.exclusive));
        }
        entry.protected = guard;
    }

    /// Whether the command's protected entries are put back when it ends (it was granted the workspace whole).
    pub(crate) fn is_protected(&self) -> bool {
        running().get(&self.0).is_some_and(|entry| entry.protected.is_some())
    }

    /// What the command may nest below the workspace, to be taken out when it ends.
    pub(crate) fn remove_nested_at_end(&self, nested: NestedSettings) {
        if let Some(entry) = running().get_mut(&self.0) {
            entry.nested = Some(nested);
        }
    }

    /// Ends the command (its shell has exited): ends what it left running, then takes out what it nested; what
    /// was taken out, one path each.
    pub(crate) fn end_with_nested(self) -> Vec<String> {
        let id = self.0;
        std::mem::forget(self);
        end_one(id)
    }

    /// The command's process group, once it is spawned.
    pub(crate) fn set_group(&self, group: Pid) {
        if let Some(entry) = running().get_mut(&self.0) {
            entry.group = Some(group);
        }
    }

    /// The command is over and its processes are gone: puts its protected entries back, then takes it out of the
    /// registry (only then may the commands kept apart from it start); what the restore did, one line each.
    pub(crate) fn finish(self) -> Vec<String> {
        let guard = running().get_mut(&self.0).and_then(|entry| entry.protected.take());
        let restored = guard.map(|mut guard| guard.restore()).unwrap_or_default();
        crate::sandbox::note_where_denied_files_are();
        let entry = running().remove(&self.0);
        std::mem::forget(self);
        ended(entry.is_some_and(|entry| entry.exclusive));
        restored
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        end_one(self.0);
    }
}

/// Takes command `id` out of the registry and ends it ([`end`]); what its nested settings' removal did. Counted in
/// [`ENDING`] meanwhile: out of the registry, [`end_all`] would not see what it has left to take out.
fn end_one(id: u64) -> Vec<String> {
    let _ending = Ending::start();
    // Out of the registry first, in a statement of its own: `end` takes the lock again.
    let entry = running().remove(&id);
    let Some(entry) = entry else { return Vec::new() };
    let exclusive = entry.exclusive;
    let removed = end(vec![entry]);
    crate::sandbox::note_where_denied_files_are();
    ended(exclusive);
    removed
}

/// Ends every command still running: kills each process group and every marked process, then puts protected
/// entries back. Returns how many commands there were. Front ends call it on their way out, whatever the way.
pub fn end_all() -> usize {
    let entries: Vec<Entry> = std::mem::take(&mut *running()).into_values().collect();
    let count = entries.len();
    let _ = end(entries);
    EXCLUSIVE_ENDED.notify_waiters();
    let ending = ENDING.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    drop(ENDING_DONE.wait_timeout_while(ending, ENDING_WAIT, |ending| *ending > 0));
    count
}

/// Kills the commands' processes, puts their protected entries back and takes out what they nested; what that
/// removal did, one line each.
fn end(mut entries: Vec<Entry>) -> Vec<String> {
    let marks: Vec<&str> = entries.iter().map(|entry| entry.mark.as_str()).collect();
    for group in entries.iter().filter_map(|entry| entry.group) {
        let _ = kill_process_group(group, Signal::KILL);
    }
    kill_marked(&marks);
    sweep_orphans();
    for guard in entries.iter_mut().filter_map(|entry| entry.protected.as_mut()) {
        guard.restore();
    }
    entries.iter_mut().filter_map(|entry| entry.nested.take()).flat_map(NestedSettings::remove_new).collect()
}

/// SIGKILL to every process whose environment carries one of `marks` (each process of a command, wherever it
/// went); whether any was found.
pub(crate) fn kill_marked(marks: &[&str]) -> bool {
    if marks.is_empty() {
        return false;
    }
    let needles: Vec<String> = marks.iter().map(|mark| format!("{CALL_MARK}={mark}")).collect();
    let Ok(entries) = std::fs::read_dir("/proc") else { return false };
    let mut found = false;
    for entry in entries.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|name| name.parse::<i32>().ok()) else { continue };
        let Ok(environ) = std::fs::read(entry.path().join("environ")) else { continue };
        let marked = environ.split(|byte| *byte == 0).any(|var| needles.iter().any(|needle| var == needle.as_bytes()));
        if marked && let Some(pid) = Pid::from_raw(pid) {
            found |= rustix::process::kill_process(pid, Signal::KILL).is_ok();
        }
    }
    found
}

/// How long [`sweep_orphans`] goes on while it still finds orphans: each round kills the ones there are, whose
/// own children then become orphans in turn (a process that forks and exits in a loop is ended round by round).
const SWEEP_FOR: std::time::Duration = std::time::Duration::from_secs(3);

/// Kills every sandboxed process that escaped its command (see the module's doc), and reaps it. Returns how many
/// there were. A mark in the environment does not spare one (marks can be copied from another command's
/// `/proc/PID/environ`); only the shells of live commands are not orphans. Where tandem is not a subreaper
/// (tests, other platforms), none are its children and nothing is done.
pub(crate) fn sweep_orphans() -> usize {
    let me = rustix::process::getpid().as_raw_nonzero().get();
    let _quiet = SPAWNING.write().unwrap_or_else(std::sync::PoisonError::into_inner);
    let deadline = std::time::Instant::now() + SWEEP_FOR;
    let mut killed: Vec<Pid> = Vec::new();
    while std::time::Instant::now() < deadline {
        let shells: Vec<i32> =
            running().values().filter_map(|entry| entry.group).map(|pid| pid.as_raw_nonzero().get()).collect();
        let orphans: Vec<Pid> = children_of(me)
            .into_iter()
            .filter(|pid| !shells.contains(pid) && sandboxed_and_running(*pid))
            .filter_map(Pid::from_raw)
            .collect();
        if orphans.is_empty() {
            break;
        }
        for pid in &orphans {
            let _ = rustix::process::kill_process(*pid, Signal::KILL);
        }
        killed.extend(orphans);
    }
    for pid in &killed {
        reap(*pid);
    }
    reap_dead_orphans(me);
    killed.len()
}

/// Reaps the orphans that died on their own or from an earlier kill: adopted by tandem, they would stay zombies
/// until it exits. The shells of live commands are left to the code that waits for them.
fn reap_dead_orphans(me: i32) {
    let shells: Vec<i32> =
        running().values().filter_map(|entry| entry.group).map(|pid| pid.as_raw_nonzero().get()).collect();
    for pid in children_of(me) {
        if !shells.contains(&pid)
            && sandboxed_zombie(pid)
            && let Some(pid) = Pid::from_raw(pid)
        {
            let _ = rustix::process::waitpid(Some(pid), rustix::process::WaitOptions::NOHANG);
        }
    }
}

/// The pids whose parent is `parent` (this process): each thread's `children` list, a few small reads; where the
/// kernel has none (`CONFIG_PROC_CHILDREN` off), every process's `stat`.
fn children_of(parent: i32) -> Vec<i32> {
    let lists: Vec<String> = std::fs::read_dir("/proc/self/task")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|task| std::fs::read_to_string(task.path().join("children")).ok())
        .collect();
    if !lists.is_empty() {
        return lists.iter().flat_map(|list| list.split_whitespace().filter_map(|pid| pid.parse().ok())).collect();
    }
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            // `pid (comm) state ppid …`: the name may hold spaces and parentheses, so read after the last `)`.
            let ppid = stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse().ok());
            ppid == Some(parent)
        })
        .collect()
}

/// Whether the process runs (is not a zombie already killed) with `no_new_privs`, as everything in the sandbox
/// does.
fn sandboxed_and_running(pid: i32) -> bool {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| status.lines().find_map(|line| line.strip_prefix(name)).map(str::trim);
    field("NoNewPrivs:") == Some("1") && !field("State:").is_some_and(|state| state.starts_with('Z'))
}

/// Whether the process is a zombie that ran with `no_new_privs` (in the sandbox).
fn sandboxed_zombie(pid: i32) -> bool {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| status.lines().find_map(|line| line.strip_prefix(name)).map(str::trim);
    field("NoNewPrivs:") == Some("1") && field("State:").is_some_and(|state| state.starts_with('Z'))
}

/// Waits (briefly) for a killed child to be gone, so it leaves no zombie behind.
fn reap(pid: Pid) {
    for _ in 0..100 {
        match rustix::process::waitpid(Some(pid), rustix::process::WaitOptions::NOHANG) {
            Ok(Some(_)) | Err(_) => return,
            Ok(None) => std::thread::sleep(std::time::Duration::from_millis(2)),
        }
    }
}
