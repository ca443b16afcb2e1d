//! The Landlock side of the sandbox: probing the kernel, building the ruleset, installing it in the child.

use std::io;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, Weak};

use landlock::{
    ABI, AccessFs, AccessNet, BitFlags, LandlockStatus, PathBeneath, Ruleset, RulesetAttr, RulesetCreated,
    RulesetCreatedAttr, RulesetError, RulesetStatus, Scope,
};
use rustix::thread::{CapabilitySet, CapabilitySets};

use super::grants::ReadGrants;
use super::{Grants, SandboxPolicy, Support};

/// The file-system rights handled (denied unless granted). Pinned rather than "the newest the crate knows", as
/// the crate advises: newer ABIs add rights such as device ioctls (which would break GPU and terminal programs)
/// and connecting to Unix sockets, which a write sandbox has no business denying. ABI 3 covers every way of
/// writing: file writes, creating/removing/renaming entries, cross-directory renames (`Refer`) and `truncate`.
const FS_ABI: ABI = ABI::V3;

/// The ABI from which everything the sandbox uses is enforced (TCP bind/connect came with 4, the signal and
/// abstract Unix socket scopes with 6).
const FULL_ABI: u32 = 6;

/// The network rights denied when the policy cuts the network off: TCP only (UDP rights would also need the
/// ephemeral-port dance described by the crate, and DNS over UDP alone does little harm).
fn net_access() -> BitFlags<AccessNet> {
    AccessNet::BindTcp | AccessNet::ConnectTcp
}

/// Asks the kernel which Landlock ABI it has. The crate only reports it after enforcing a ruleset, so this
/// enforces a harmless one (it denies `execve`) on a throwaway thread: a Landlock domain and `no_new_privs` belong
/// to the calling thread only, and die with it. Runs once per process ([`super::support`] caches it).
pub(super) fn probe() -> Support {
    let probe = std::thread::Builder::new().name("landlock-probe".into()).spawn(|| {
        Ruleset::default().handle_access(AccessFs::Execute)?.create()?.restrict_self().map(|status| status.landlock)
    });
    let status = match probe.map(|thread| thread.join()) {
        Ok(Ok(Ok(status))) => status,
        Ok(Ok(Err(err))) => return Support::Unavailable(format!("Landlock could not be probed: {err}")),
        Ok(Err(_)) | Err(_) => return Support::Unavailable("Landlock could not be probed".to_string()),
    };
    match status {
        LandlockStatus::NotEnabled => Support::Unavailable(
            "Landlock is built into this kernel but not enabled (add `landlock` to the `lsm=` boot parameter)"
                .to_string(),
        ),
        LandlockStatus::NotImplemented => {
            Support::Unavailable("this kernel has no Landlock (it needs Linux 5.13 or later with Landlock)".to_string())
        }
        LandlockStatus::Available { effective_abi, kernel_abi } => {
            let abi = kernel_abi.and_then(|n| u32::try_from(n).ok()).unwrap_or_else(|| abi_number(effective_abi));
            classify(abi)
        }
    }
}

/// The number of an ABI (its `Display` is the number, `unsupported` for none).
fn abi_number(abi: ABI) -> u32 {
    abi.to_string().parse().unwrap_or(0)
}

/// What an ABI version leaves out of the sandbox.
pub(super) fn classify(abi: u32) -> Support {
    if abi >= FULL_ABI {
        return Support::Full { abi };
    }
    let mut missing = Vec::new();
    if abi < 2 {
        missing.push("moving or linking files between directories is always denied (Landlock ABI 2, Linux 5.19)");
    }
    if abi < 3 {
        missing.push("truncate(2) is not restricted (Landlock ABI 3, Linux 6.2)");
    }
    if abi < 4 {
        missing.push("the network can't be cut off (Landlock ABI 4, Linux 6.7)");
    }
    if abi < 6 {
        missing.push(
            "commands can signal processes outside the sandbox and reach abstract Unix sockets (Landlock ABI 6, Linux \
             6.12)",
        );
    }
    Support::Partial { abi, missing: missing.join("; ") }
}

/// Builds the ruleset now and installs it in the child, before exec.
pub(super) fn apply(command: &mut tokio::process::Command, policy: &SandboxPolicy, grants: &Grants) -> io::Result<()> {
    if let Support::Unavailable(reason) = super::support() {
        return Err(io::Error::new(io::ErrorKind::Unsupported, format!("sandbox {}: {reason}", policy.mode)));
    }
    let built = read_layer(&grants.reads).and_then(|reads| Ok((reads, write_layer(policy, &grants.write)?)));
    let (reads, writes) = built.map_err(|err| {
        io::Error::other(format!("sandbox {}: could not build the Landlock ruleset: {err}", policy.mode))
    })?;
    let mut layers = Some([reads, writes]);
    let sockets = if policy.network { None } else { Some(network_filter()?) };
    let group = group_filter()?;
    let kept =
        rustix::thread::capabilities(None).map_or(CapabilitySet::empty(), |own| own.permitted & KEPT_CAPABILITIES);
    let restrict = move || -> io::Result<()> {
        let Some(layers) = layers.take() else {
            return Err(io::Error::from_raw_os_error(EINVAL));
        };
        for layer in layers {
            match layer.restrict_self() {
                Ok(status) if status.ruleset != RulesetStatus::NotEnforced => {}
                // Fail closed: the child must not run the command unsandboxed.
                Ok(_) => return Err(io::Error::from_raw_os_error(ENOSYS)),
                Err(_) => {
                    return Err(io::Error::from_raw_os_error(
                        io::Error::last_os_error().raw_os_error().filter(|&errno| errno != 0).unwrap_or(EPERM),
                    ));
                }
            }
        }
        for filter in sockets.iter().chain([&group]) {
            if seccompiler::apply_filter(filter).is_err() {
                return Err(io::Error::from_raw_os_error(
                    io::Error::last_os_error().raw_os_error().filter(|&errno| errno != 0).unwrap_or(EPERM),
                ));
            }
        }
        drop_capabilities(kept)
    };
    // SAFETY: between fork and exec only async-signal-safe work is allowed. The closure takes the two prepared
    // rulesets (file descriptors and plain data) and calls prctl(PR_SET_NO_NEW_PRIVS) and landlock_restrict_self
    // for each, then closes the descriptors; it installs the filters compiled above (prctl and seccomp over slices
    // it only reads: the process-group one, and the socket one with the network off); then it drops capabilities
    // (prctl and capset): system calls only. No allocation, no locks; the errors are `Os` errors, which don't
    // allocate either.
    unsafe {
        command.pre_exec(restrict);
    }
    Ok(())
}

/// What a sandboxed command keeps of root's capabilities: the ones that let it work on files it may write anyway
/// (Landlock decides which). Everything else goes, most of all `CAP_SYS_PTRACE`: Linux lets a process read another
/// one's `/proc/<pid>/environ` when it holds every capability that one has, or `CAP_SYS_PTRACE` (a read-mode check,
/// which Landlock lets through), so a sandboxed root command could read the API key from the environment of
/// whatever started tandem. It also can't load a kernel module, reboot or mount, which Landlock doesn't cover.
const KEPT_CAPABILITIES: CapabilitySet =
    CapabilitySet::CHOWN.union(CapabilitySet::DAC_OVERRIDE).union(CapabilitySet::FOWNER).union(CapabilitySet::FSETID);

/// In the child, before exec: takes every capability but `kept` out of the bounding set (so that no program run
/// later can regain one; refused without `CAP_SETPCAP`, which only matters for root) and out of the permitted,
/// effective and inheritable sets (which also empties the ambient set). System calls only.
fn drop_capabilities(kept: CapabilitySet) -> io::Result<()> {
    for capability in (CapabilitySet::all() - KEPT_CAPABILITIES).iter() {
        let _ = rustix::thread::remove_capability_from_bounding_set(capability);
    }
    let sets = CapabilitySets { effective: kept, permitted: kept, inheritable: CapabilitySet::empty() };
    rustix::thread::set_capabilities(None, sets).map_err(io::Error::from)
}

/// With the network off, the sockets Landlock's TCP rule does not see are refused too (EACCES, as Landlock
/// answers): every socket family but Unix and netlink (IPv4 and IPv6 of any type — UDP, raw, MPTCP, SCTP —,
/// packet, vsock, Bluetooth…), and io_uring, which can open sockets without the `socket` system call. Unix
/// sockets stay (pipes to local tools; pathname sockets are a documented limit) and so does netlink (the
/// kernel's own, which `ip` and `ss` read). Compiled here, in the parent; installed in the child before exec.
fn network_filter() -> io::Result<seccompiler::BpfProgram> {
    use seccompiler::{SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule};
    let unsupported = |why: String| io::Error::other(format!("sandbox: cannot build the network filter: {why}"));
    let arch = seccompiler::TargetArch::try_from(std::env::consts::ARCH).map_err(|err| unsupported(err.to_string()))?;
    let not = |family: i32| SeccompCondition::new(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Ne, family as u64);
    let other_families = not(libc::AF_UNIX)
        .and_then(|unix| Ok(vec![unix, not(libc::AF_NETLINK)?]))
        .and_then(SeccompRule::new)
        .map_err(|err| unsupported(err.to_string()))?;
    let rules = [(libc::SYS_socket, vec![other_families]), (libc::SYS_io_uring_setup, vec![])];
    let filter = SeccompFilter::new(
        with_x32_numbers(rules.into_iter()).collect(),
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EACCES as u32),
        arch,
    )
    .map_err(|err| unsupported(err.to_string()))?;
    filter.try_into().map_err(|err: seccompiler::BackendError| unsupported(err.to_string()))
}

/// `setsid` and `setpgid` are refused (EPERM): every process of a sandboxed command stays in the process group
/// the command was started in (`own_session` makes it before this filter is installed), so that one signal to
/// the group ends all of them. Linux delivers a group signal atomically with respect to `fork` (a fork racing it
/// is restarted), which killing processes one by one can't match: a process that forks and exits in a loop stays
/// ahead of any sweep, and kept the whole workspace's grant after the guard had put the protected entries back.
fn group_filter() -> io::Result<seccompiler::BpfProgram> {
    use seccompiler::{SeccompAction, SeccompFilter};
    let unsupported = |why: String| io::Error::other(format!("sandbox: cannot build the process-group filter: {why}"));
    let arch = seccompiler::TargetArch::try_from(std::env::consts::ARCH).map_err(|err| unsupported(err.to_string()))?;
    let rules = [(libc::SYS_setsid, vec![]), (libc::SYS_setpgid, vec![])];
    let rules = with_x32_numbers(rules.into_iter()).collect();
    let filter = SeccompFilter::new(rules, SeccompAction::Allow, SeccompAction::Errno(EPERM as u32), arch)
        .map_err(|err| unsupported(err.to_string()))?;
    filter.try_into().map_err(|err: seccompiler::BackendError| unsupported(err.to_string()))
}

/// The rules again for the same calls made through the x32 ABI (the call's number with bit 30 set), which the
/// kernel takes under the same architecture as x86-64 where it was built with `CONFIG_X86_X32_ABI`: a filter that
/// names only the plain numbers would let `socket` through that door. Elsewhere, the rules as they are.
fn with_x32_numbers<R: Clone>(rules: impl Iterator<Item = (i64, R)>) -> impl Iterator<Item = (i64, R)> {
    const X32_SYSCALL_BIT: i64 = 0x4000_0000;
    rules.flat_map(|(number, rule)| {
        let x32 = cfg!(target_arch = "x86_64").then(|| (number | X32_SYSCALL_BIT, rule.clone()));
        std::iter::once((number, rule)).chain(x32)
    })
}

const EPERM: i32 = 1;
const EINVAL: i32 = 22;
const ENOSYS: i32 = 38;

/// The sandbox is two Landlock layers, which the kernel enforces together: a right handled by one layer must be
/// granted by it, whatever the other grants. The read layer handles reading, listing and executing, and grants
/// them on [`ReadGrants::read`] (listing only on [`ReadGrants::list_only`]); it is the same for every command while
/// the directories it splits stay as they were, so it is built once and kept: its hundreds of rules (one per entry
/// of the home directory, of `/tmp` when the home is there) cost more than all the rest of a command's set-up. The
/// write layer, built for each command, handles writing and TCP and grants writes on [`Grants::write`]; it also
/// scopes signals and abstract Unix sockets to the sandbox.
///
/// Moving or linking a file to another directory (`Refer`) is refused by every layer unless granted, and never lets
/// a file gain a right it lacked where it was: the read layer grants it where it grants reading, so it is the write
/// layer that decides which moves happen, and the read layer that no file moves out of a denied place. Not on the
/// directories listed only: a rule covers everything beneath, denied paths included, and a file moved out of a
/// denied directory into one a command had just made there (which has no more rights) was readable to the next
/// command. A file directly in such a directory moves to another one by copy (`mv` does that by itself).
fn read_layer(grants: &Arc<ReadGrants>) -> Result<RulesetCreated, RulesetError> {
    let mut kept = READ_LAYERS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    kept.retain(|(of, _)| of.strong_count() > 0);
    let same = |of: &Weak<ReadGrants>| of.upgrade().is_some_and(|of| Arc::ptr_eq(&of, grants));
    if let Some(Ok(copy)) = kept.iter().find(|(of, _)| same(of)).map(|(_, layer)| layer.try_clone()) {
        return Ok(copy);
    }
    kept.retain(|(of, _)| !same(of));
    let read = AccessFs::from_read(FS_ABI) | AccessFs::Refer;
    let layer = Ruleset::default()
        .handle_access(read)?
        .create()?
        .add_rules(rules(&grants.read, read))?
        .add_rules(rules(&grants.list_only, AccessFs::ReadDir.into()))?;
    if let Ok(copy) = layer.try_clone() {
        kept.push((Arc::downgrade(grants), copy));
    }
    Ok(layer)
}

/// The read layers built, for the read grants they were built from (see [`read_layer`]).
static READ_LAYERS: Mutex<Vec<(Weak<ReadGrants>, RulesetCreated)>> = Mutex::new(Vec::new());

/// The write layer: writes of what `write` names, TCP denied unless the policy allows the network, no signals to
/// and no abstract Unix sockets of processes outside the sandbox. Best effort: rights the kernel lacks are left
/// out (that is what [`Support::Partial`] reports) rather than failing.
fn write_layer(policy: &SandboxPolicy, write: &[PathBuf]) -> Result<RulesetCreated, RulesetError> {
    let mut ruleset = Ruleset::default().handle_access(AccessFs::from_write(FS_ABI))?;
    if !policy.network {
        ruleset = ruleset.handle_access(net_access())?;
    }
    ruleset
        .scope(Scope::AbstractUnixSocket | Scope::Signal)?
        // `no_new_privs` is on by default for a created ruleset: restrict_self sets it, as Landlock requires.
        .create()?
        .add_rules(rules(write, AccessFs::from_write(FS_ABI)))
}

/// A rule per path that can still be opened: one removed since the grants were worked out is left out (it
/// grants nothing then) instead of failing the command. Opened without following a link: every granted path was
/// canonical when the grants were worked out (or kept, [`super::read_cache`]), so a link in its way now was put
/// there since, and would grant what it leads to.
fn rules(
    paths: &[PathBuf],
    access: BitFlags<AccessFs>,
) -> impl Iterator<Item = Result<PathBeneath<std::os::fd::OwnedFd>, RulesetError>> + '_ {
    paths.iter().filter_map(|path| open_unfollowed(path)).map(move |fd| Ok(PathBeneath::new(fd, access)))
}

/// `path` opened as a place only (`O_PATH`), refusing any link on the way (`openat2` with `RESOLVE_NO_SYMLINKS`);
/// where the kernel has no `openat2` (before 5.6), opened following links, as the crate's `PathFd` does.
fn open_unfollowed(path: &std::path::Path) -> Option<std::os::fd::OwnedFd> {
    use rustix::fs::{Mode, OFlags, ResolveFlags};
    let flags = OFlags::PATH | OFlags::CLOEXEC;
    match rustix::fs::openat2(rustix::fs::CWD, path, flags, Mode::empty(), ResolveFlags::NO_SYMLINKS) {
        Ok(fd) => Some(fd),
        Err(rustix::io::Errno::NOSYS) => rustix::fs::open(path, flags, Mode::empty()).ok(),
        Err(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by the forty-second red-team round (read in the code: this kernel has no x32 ABI to try it on): the
    /// socket and process-group filters named only the x86-64 numbers of the calls they refuse.
    #[test]
    fn the_filters_refuse_the_x32_numbers_of_their_calls_too() {
        let numbers: Vec<i64> = with_x32_numbers([(libc::SYS_socket, ()), (libc::SYS_setsid, ())].into_iter())
            .map(|(number, ())| number)
            .collect();
        assert!(numbers.contains(&libc::SYS_socket) && numbers.contains(&libc::SYS_setsid));
        if cfg!(target_arch = "x86_64") {
            assert!(numbers.contains(&(libc::SYS_socket | 0x4000_0000)), "{numbers:?}");
            assert!(numbers.contains(&(libc::SYS_setsid | 0x4000_0000)), "{numbers:?}");
        }
        network_filter().expect("the network filter builds");
        group_filter().expect("the group filter builds");
    }
}
