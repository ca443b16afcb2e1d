//! Directories that go with the session whatever ends it (the sandbox's private temp directory, an unsaved
//! session's log): the front ends end without dropping the session, and a signal runs no destructor, so the
//! shutdown every front end runs (`shutdown::end_everything`) removes them.

use std::path::PathBuf;
use std::sync::Mutex;

static DIRECTORIES: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Removes `dir` (and what is in it) when the session ends.
pub fn remove_at_exit(dir: PathBuf) {
    DIRECTORIES.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(dir);
}

/// Removes every directory [`remove_at_exit`] named.
pub fn remove_now() {
    for dir in DIRECTORIES.lock().unwrap_or_else(std::sync::PoisonError::into_inner).drain(..) {
        let _ = std::fs::remove_dir_all(dir);
    }
}
