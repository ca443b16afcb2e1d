//! The read grants of earlier commands, kept for the process: splitting the file system around the denied paths
//! lists every directory above them (the home directory, `/tmp` when the home is there), which cost more than the
//! rest of a sandboxed command's set-up together, and its answer only changes when one of those directories does.
//!
//! An answer is reused only while the denied and allowed paths resolve as they did (so a denied path created since,
//! or a link on its way re-pointed, splits anew) and every directory it split still is the same directory with the
//! same modification time. A directory modified less than two seconds before the split is never trusted ([`Seen::settled_before`]): file
//! system clocks are coarse, so a change in the same tick as the listing would keep the listed time. Reusing an
//! answer is never wider than splitting again: the grants name paths, opened without following links when the
//! ruleset is built; what was added to a split directory since is simply not granted until the next split.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use super::grants::ReadGrants;
use super::walk::Seen;

/// Answers kept at most (a session has one set of denied paths, hooks and subagents rarely another).
const KEPT: usize = 4;

struct Known {
    denied: Vec<PathBuf>,
    allowed: Vec<PathBuf>,
    split: Vec<Seen>,
    grants: Arc<ReadGrants>,
}

static KNOWN: Mutex<Vec<Known>> = Mutex::new(Vec::new());

/// The read grants for `denied` (anchored) and `allowed` (canonical) paths: a kept answer while it still holds,
/// else `split()`'s, kept when every directory it split had settled.
pub(super) fn read_grants_with(
    denied: Vec<PathBuf>,
    allowed: Vec<PathBuf>,
    split: impl FnOnce(&[PathBuf]) -> ReadGrants,
) -> Arc<ReadGrants> {
    if let Some(kept) = kept(&denied, &allowed) {
        return kept;
    }
    let started = SystemTime::now();
    let mut grants = split(&denied);
    let seen: Option<Vec<Seen>> = grants.list_only.iter().map(|dir| Seen::now(dir)).collect();
    grants.read.extend(allowed.iter().cloned());
    let grants = Arc::new(grants);
    if let Some(seen) = seen.filter(|seen| seen.iter().all(|dir| dir.settled_before(started))) {
        keep(Known { denied, allowed, split: seen, grants: Arc::clone(&grants) });
    }
    grants
}

fn kept(denied: &[PathBuf], allowed: &[PathBuf]) -> Option<Arc<ReadGrants>> {
    let mut known = KNOWN.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let at = known.iter().position(|k| k.denied == denied && k.allowed == allowed)?;
    if known[at].split.iter().all(Seen::unchanged) {
        return Some(Arc::clone(&known[at].grants));
    }
    known.remove(at);
    None
}

fn keep(answer: Known) {
    let mut known = KNOWN.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    known.retain(|k| !(k.denied == answer.denied && k.allowed == answer.allowed));
    if known.len() >= KEPT {
        known.remove(0);
    }
    known.push(answer);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;
    use std::time::Duration;

    fn age(dir: &Path) {
        let an_hour_ago = SystemTime::now() - Duration::from_secs(3600);
        std::fs::File::open(dir).unwrap().set_modified(an_hour_ago).unwrap();
    }

    /// Splits `denied`'s parents as the real split does, counting how often it ran.
    fn split_counting(runs: &std::cell::Cell<usize>, denied: &[PathBuf]) -> ReadGrants {
        runs.set(runs.get() + 1);
        let list_only = denied.iter().filter_map(|path| path.parent().map(Path::to_path_buf)).collect();
        ReadGrants { read: Vec::new(), list_only }
    }

    #[test]
    fn an_answer_is_kept_while_the_split_directories_stay_as_they_were() {
        let dir = tempfile::tempdir().unwrap();
        let home = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir(home.join(".ssh")).unwrap();
        let denied = vec![home.join(".ssh")];
        let runs = std::cell::Cell::new(0);
        let grants = |runs: &std::cell::Cell<usize>| {
            read_grants_with(denied.clone(), Vec::new(), |denied| split_counting(runs, denied))
        };
        // Just modified: a change in the same clock tick would keep its time, so the answer is not kept.
        grants(&runs);
        grants(&runs);
        assert_eq!(runs.get(), 2);
        age(&home);
        let first = grants(&runs);
        let again = grants(&runs);
        assert_eq!(runs.get(), 3, "kept once settled");
        assert!(Arc::ptr_eq(&first, &again));
        // An entry made since changes the directory: split again, so that it is granted.
        std::fs::write(home.join("new-project"), "").unwrap();
        grants(&runs);
        assert_eq!(runs.get(), 4);
        // Other denied paths are another answer.
        age(&home);
        read_grants_with(vec![home.join(".aws")], Vec::new(), |denied| split_counting(&runs, denied));
        assert_eq!(runs.get(), 5);
    }
}
