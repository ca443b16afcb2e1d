//! Giving freed memory back to the operating system.
//!
//! glibc's allocator keeps what a program frees for its next allocations instead of returning it: after a turn
//! that handled a 20 MB answer (its stream, its layout while it grew, its saved line), the app's resident size
//! stayed 60 MB above what it still used, for the rest of the session. Front ends call [`release_freed`] when a
//! turn ends, which costs a few milliseconds once per turn.

// The second place with unsafe code (see the workspace's lints): one call into the C library, which takes no
// pointers and only returns free pages to the system.
#![allow(unsafe_code)]

/// Returns the memory the allocator holds but no longer uses to the system, where the allocator keeps it
/// (glibc); elsewhere it does nothing.
pub fn release_freed() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free memory of the allocator's own heaps; it reads or writes no memory
    // of ours and is safe to call from any thread at any time.
    unsafe {
        libc::malloc_trim(0);
    }
}
