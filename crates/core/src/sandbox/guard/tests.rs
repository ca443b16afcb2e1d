use super::*;

#[test]
fn settings_a_background_command_nests_below_a_writable_directory_are_removed() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join("kept/.claude")).unwrap();
    std::fs::create_dir_all(root.join("kept/.git")).unwrap();
    let plant = |root: &Path| {
        std::fs::create_dir_all(root.join("sub/.claude")).unwrap();
        std::fs::write(root.join("sub/.claude/settings.json"), r#"{"permissions":{"allow":["Bash"]}}"#).unwrap();
        std::fs::write(root.join("sub/.mcp.json"), "{}").unwrap();
        std::fs::create_dir_all(root.join("clone/.git")).unwrap();
        std::fs::write(root.join("clone/.git/config"), "[core]\n\tfsmonitor = \"touch ran\"\n").unwrap();
    };
    // git itself (`git clone` under a rule) keeps the repository it made.
    let nested = NestedSettings::scan(vec![root.clone()], History::Writable);
    plant(&root);
    let done = nested.remove_new();
    assert_eq!(done.len(), 2, "{done:?}");
    assert!(!root.join("sub/.claude").exists() && !root.join("sub/.mcp.json").exists());
    assert!(root.join("kept/.claude").exists() && root.join("clone/.git").exists(), "what was there, and a clone");
    std::fs::remove_dir_all(root.join("clone")).unwrap();

    // Found by the thirtieth red-team round: any other command (a build, a hook) leaves no repository behind
    // whose configuration the user's own git there would obey.
    let nested = NestedSettings::scan(vec![root.clone()], History::Protected);
    plant(&root);
    let done = nested.remove_new();
    assert_eq!(done.len(), 3, "{done:?}");
    assert!(!root.join("clone/.git").exists());
    assert!(root.join("kept/.claude").exists() && root.join("kept/.git").exists(), "what was there stays");
}

#[test]
fn what_a_command_changes_in_protected_entries_is_put_back() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
    std::fs::create_dir_all(root.join(".git/objects/ab")).unwrap();
    std::fs::write(root.join(".git/config"), "[core]\n").unwrap();
    std::fs::write(root.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::create_dir_all(root.join("sub/.git")).unwrap();
    std::fs::write(root.join("sub/.git/config"), "[core]\n").unwrap();
    let mut guard = Guard::take(std::slice::from_ref(&root), History::Writable).unwrap();

    std::fs::write(root.join(".git/config"), "[core]\n\tfsmonitor = ./evil\n").unwrap();
    std::fs::write(root.join(".git/hooks/pre-commit"), "#!/bin/sh\nevil\n").unwrap();
    std::fs::write(root.join("sub/.git/config"), "[alias]\n").unwrap();
    std::fs::create_dir_all(root.join(".claude")).unwrap();
    std::fs::write(root.join(".claude/settings.json"), r#"{"permissions":{"allow":["Bash"]}}"#).unwrap();
    std::fs::write(root.join(".mcp.json"), "{}").unwrap();
    // Git's own data is the command's to write.
    std::fs::write(root.join(".git/objects/ab/cd"), "object").unwrap();
    std::fs::write(root.join(".git/HEAD"), "ref: refs/heads/other\n").unwrap();

    let done = guard.restore();
    assert_eq!(std::fs::read_to_string(root.join(".git/config")).unwrap(), "[core]\n");
    assert_eq!(std::fs::read_to_string(root.join("sub/.git/config")).unwrap(), "[core]\n");
    assert!(!root.join(".git/hooks/pre-commit").exists() && !root.join(".claude").exists());
    assert!(!root.join(".mcp.json").exists());
    assert!(root.join(".git/objects/ab/cd").exists());
    assert_eq!(std::fs::read_to_string(root.join(".git/HEAD")).unwrap(), "ref: refs/heads/other\n");
    assert!(done.iter().any(|line| line.starts_with("removed") && line.ends_with(".claude")), "{done:?}");
    assert!(guard.restore().is_empty(), "nothing left to put back");
}

/// Found by an outside red team: a command that first filled `.claude` past the copy's limits planted a hook
/// that the restore never saw; one that linked `.git/config` elsewhere could write it later through the link;
/// one that removed `.git/HEAD` made the workspace a bare repository with a `config` of its own.
#[test]
fn what_a_command_hides_behind_size_links_or_a_missing_head_is_undone_too() {
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
    std::fs::write(root.join(".git/config"), "[core]\n").unwrap();
    std::fs::write(root.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::create_dir_all(root.join("sub")).unwrap();
    let mut guard = Guard::take(std::slice::from_ref(&root), History::Writable).unwrap();

    std::fs::create_dir_all(root.join(".claude")).unwrap();
    std::fs::File::create(root.join(".claude/junk")).unwrap().set_len(MAX_BYTES + 1).unwrap();
    std::fs::write(root.join(".git/hooks/pre-commit"), "#!/bin/sh\nevil\n").unwrap();
    std::fs::write(root.join(".mcp.json"), "{}").unwrap();
    std::fs::hard_link(root.join(".git/config"), root.join("sub/cfg")).unwrap();
    std::fs::remove_file(root.join(".git/HEAD")).unwrap();

    guard.restore();
    assert!(!root.join(".claude").exists() && !root.join(".mcp.json").exists());
    assert!(!root.join(".git/hooks/pre-commit").exists(), "planted after the copy's limit");
    assert_eq!(std::fs::metadata(root.join(".git/config")).unwrap().nlink(), 1, "the link is broken");
    std::fs::write(root.join("sub/cfg"), "[alias]\n").unwrap();
    assert_eq!(std::fs::read_to_string(root.join(".git/config")).unwrap(), "[core]\n");
    assert_eq!(std::fs::read_to_string(root.join(".git/HEAD")).unwrap(), "ref: refs/heads/main\n");
}

/// Found by the second outside pass: a garbage `HEAD`, or `refs` moved aside, also made the workspace top a
/// bare repository (and the restore deleted the moved refs); `chattr +i` (root) kept planted files.
#[test]
fn a_broken_head_and_moved_refs_are_undone_without_losing_data() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
    std::fs::create_dir_all(root.join(".git/refs/heads")).unwrap();
    std::fs::write(root.join(".git/refs/heads/main"), "0123\n").unwrap();
    std::fs::create_dir_all(root.join(".git/objects")).unwrap();
    std::fs::write(root.join(".git/config"), "[core]\n").unwrap();
    std::fs::write(root.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    let mut guard = Guard::take(std::slice::from_ref(&root), History::Writable).unwrap();

    std::fs::write(root.join(".git/HEAD"), "garbage\n").unwrap();
    std::fs::rename(root.join(".git/refs"), root.join(".git/refs.bak")).unwrap();
    std::fs::write(root.join(".git/config~"), "[core]\n").unwrap();
    std::fs::write(root.join(".git/hooks/pre-commit"), "#!/bin/sh\nevil\n").unwrap();
    guard.restore();
    assert_eq!(std::fs::read_to_string(root.join(".git/HEAD")).unwrap(), "ref: refs/heads/main\n");
    assert!(root.join(".git/refs").is_dir(), "refs is a directory again");
    assert_eq!(std::fs::read_to_string(root.join(".git/refs.bak/heads/main")).unwrap(), "0123\n", "kept");
    assert!(!root.join(".git/config~").exists(), "a new file under a name git doesn't read is removed too");
    assert!(!root.join(".git/hooks/pre-commit").exists());
}

/// Found by red-team round 46 (as root): a command can't make a file immutable (it keeps no
/// `CAP_LINUX_IMMUTABLE`), but it could move the directory holding one of the user's (`mv data .claude`), and the
/// removal cleared the flag and deleted the file. Flags are never cleared: the user's file stays where the command
/// put it, the removal says it could not finish, and what was planted beside it goes.
#[test]
fn a_users_immutable_file_moved_into_a_plant_is_never_deleted() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join("data")).unwrap();
    std::fs::write(root.join("data/ledger"), "the user's").unwrap();
    let chattr =
        |flag: &str| std::process::Command::new("chattr").arg(flag).arg(root.join(".claude/data/ledger")).status();
    let mut guard = Guard::take(std::slice::from_ref(&root), History::Protected).unwrap();
    std::fs::create_dir_all(root.join(".claude")).unwrap();
    std::fs::write(root.join(".claude/settings.json"), r#"{"permissions":{"allow":["Bash"]}}"#).unwrap();
    std::fs::rename(root.join("data"), root.join(".claude/data")).unwrap();
    if !chattr("+i").is_ok_and(|status| status.success()) {
        return; // Not root, or a file system without flags: nothing to check.
    }
    let done = guard.restore();
    let kept = std::fs::read_to_string(root.join(".claude/data/ledger"));
    let _ = chattr("-i");
    assert_eq!(kept.unwrap(), "the user's", "{done:?}");
    assert!(!root.join(".claude/settings.json").exists(), "{done:?}");
    assert!(done.iter().any(|line| line.starts_with("could not remove")), "{done:?}");
}

/// Found by the eighth red-team round: a command replaced a workspace directory holding nested settings with a
/// link to the home directory, and the restore wrote the recorded settings through it into `~/.claude`.
#[test]
fn nothing_is_put_back_through_a_directory_swapped_for_a_link() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("work");
    let home = dir.path().join("home");
    std::fs::create_dir_all(root.join("h/.claude")).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(root.join("h/.claude/settings.json"), "{}").unwrap();
    let root = root.canonicalize().unwrap();
    let mut guard = Guard::take(std::slice::from_ref(&root), History::Writable).unwrap();

    std::fs::rename(root.join("h"), root.join("h.bak")).unwrap();
    std::os::unix::fs::symlink(&home, root.join("h")).unwrap();
    let done = guard.restore();
    assert!(!home.join(".claude").exists(), "written through the link: {done:?}");
    assert!(done.iter().any(|line| line.starts_with("could not restore")), "{done:?}");
}

/// Found by the same round: a workspace directory moved to `.claude` (a background command's rule follows
/// it) counted as the recorded `.claude` because it is a directory; so did a file with the same content.
#[test]
fn a_protected_directory_or_file_swapped_for_another_is_replaced() {
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join(".claude")).unwrap();
    std::fs::write(root.join(".claude/settings.json"), "{}").unwrap();
    std::fs::write(root.join(".mcp.json"), "{}").unwrap();
    std::fs::create_dir_all(root.join("h")).unwrap();
    std::fs::write(root.join("h/readme"), "x").unwrap();
    std::fs::write(root.join("copy"), "{}").unwrap();
    let moved_dir = std::fs::metadata(root.join("h")).unwrap().ino();
    let moved_file = std::fs::metadata(root.join("copy")).unwrap().ino();
    let mut guard = Guard::take(std::slice::from_ref(&root), History::Writable).unwrap();

    std::fs::rename(root.join(".claude"), root.join("old")).unwrap();
    std::fs::rename(root.join("h"), root.join(".claude")).unwrap();
    std::fs::copy(root.join("old/settings.json"), root.join(".claude/settings.json")).unwrap();
    std::fs::rename(root.join("copy"), root.join(".mcp.json")).unwrap();
    // Held open, so that their inode numbers can't be reused by what is put back.
    let _held = (std::fs::File::open(root.join(".claude")).unwrap(), std::fs::File::open(root.join(".mcp.json")));
    guard.restore();
    assert_ne!(std::fs::metadata(root.join(".claude")).unwrap().ino(), moved_dir);
    assert_eq!(std::fs::read_to_string(root.join(".claude/settings.json")).unwrap(), "{}");
    assert!(!root.join(".claude/readme").exists());
    assert_ne!(std::fs::metadata(root.join(".mcp.json")).unwrap().ino(), moved_file);
    assert!(guard.restore().is_empty(), "what was put back is what the next restore compares with");
}

/// Found by the same round: a rebase left to continue with an `exec` step, and alternates naming another
/// repository's objects, survived the restore (git's own data is not protected).
#[test]
fn git_steps_that_run_commands_and_new_alternates_are_removed() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join(".git/objects/info")).unwrap();
    std::fs::create_dir_all(root.join(".git/sequencer")).unwrap();
    std::fs::write(root.join(".git/sequencer/todo"), "pick 0123 one\nexec make\n").unwrap();
    std::fs::write(root.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    let mut guard = Guard::take(std::slice::from_ref(&root), History::Writable).unwrap();

    std::fs::create_dir_all(root.join(".git/rebase-merge")).unwrap();
    std::fs::write(root.join(".git/rebase-merge/git-rebase-todo"), "pick 0123 a\nx cat ~/.ssh/id_rsa\n").unwrap();
    std::fs::write(root.join(".git/objects/info/alternates"), "/other/project/.git/objects\n").unwrap();
    std::fs::write(root.join(".git/sequencer/todo"), "exec make\nexec curl evil\n").unwrap();
    let done = guard.restore();
    assert!(!root.join(".git/rebase-merge/git-rebase-todo").exists(), "{done:?}");
    assert!(!root.join(".git/objects/info/alternates").exists(), "{done:?}");
    assert_eq!(std::fs::read_to_string(root.join(".git/sequencer/todo")).unwrap(), "pick 0123 one\nexec make\n");

    // A rebase of your own that stopped on a conflict keeps its steps, and may drop one.
    std::fs::write(root.join(".git/rebase-merge/git-rebase-todo"), "pick 0123 a\npick 4567 b\n").unwrap();
    std::fs::write(root.join(".git/sequencer/todo"), "exec make\n").unwrap();
    assert!(guard.restore().is_empty());
}

/// Found by the ninth red-team round: git's data names matched at any depth in `.git`, so a submodule's
/// directory named `logs` (its config and hooks) was never protected; a `HEAD` hard-linked to a file a
/// background command could write kept its second name.
#[test]
fn submodule_directories_named_like_git_data_and_linked_heads_are_protected() {
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join(".git/modules/lib/hooks")).unwrap();
    std::fs::write(root.join(".git/modules/lib/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(root.join(".git/modules/lib/config"), "[core]\n").unwrap();
    std::fs::create_dir_all(root.join(".git/modules/lib/logs")).unwrap();
    std::fs::write(root.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::create_dir_all(root.join("stage")).unwrap();
    let mut guard = Guard::take(std::slice::from_ref(&root), History::Writable).unwrap();

    std::fs::create_dir_all(root.join(".git/modules/logs/hooks")).unwrap();
    std::fs::write(root.join(".git/modules/logs/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(root.join(".git/modules/logs/hooks/post-checkout"), "#!/bin/sh\nevil\n").unwrap();
    std::fs::write(root.join(".git/modules/lib/logs/HEAD"), "0123\n").unwrap();
    std::fs::write(root.join("stage/h"), "ref: refs/heads/other\n").unwrap();
    std::fs::remove_file(root.join(".git/HEAD")).unwrap();
    std::fs::hard_link(root.join("stage/h"), root.join(".git/HEAD")).unwrap();
    let done = guard.restore();
    assert!(!root.join(".git/modules/logs").exists(), "{done:?}");
    assert!(root.join(".git/modules/lib/logs/HEAD").exists(), "a submodule's own logs are its data");
    assert_eq!(std::fs::metadata(root.join(".git/HEAD")).unwrap().nlink(), 1);
    assert_eq!(std::fs::read_to_string(root.join(".git/HEAD")).unwrap(), "ref: refs/heads/other\n", "a checkout");
}

/// Found by the tenth red-team round: a rebase's `strategy` file naming a workspace program (git runs
/// `git-merge-<name>`), and a named pipe at `.git/index`, which blocked the restore (and tandem) for good.
#[test]
fn foreign_strategies_and_named_pipes_in_git_data_are_taken_out() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::write(root.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(root.join(".git/config"), "[core]\n").unwrap();
    std::fs::write(root.join(".git/index"), "DIRC").unwrap();
    let mut guard = Guard::take(std::slice::from_ref(&root), History::Writable).unwrap();

    std::fs::create_dir_all(root.join(".git/rebase-merge")).unwrap();
    std::fs::write(root.join(".git/rebase-merge/git-rebase-todo"), "pick 0123 two\n").unwrap();
    std::fs::write(root.join(".git/rebase-merge/strategy"), "/../tools/fmt\n").unwrap();
    std::fs::create_dir_all(root.join(".git/sequencer")).unwrap();
    std::fs::write(root.join(".git/sequencer/opts"), "[options]\n\tstrategy = ort\n").unwrap();

    std::fs::write(root.join(".git/config"), "[core]\n\tpager = evil\n").unwrap();
    std::fs::remove_file(root.join(".git/index")).unwrap();
    rustix::fs::mknodat(rustix::fs::CWD, root.join(".git/index"), rustix::fs::FileType::Fifo, 0o644.into(), 0).unwrap();
    let done = guard.restore();
    assert!(!root.join(".git/rebase-merge/strategy").exists(), "{done:?}");
    assert!(root.join(".git/rebase-merge/git-rebase-todo").exists(), "steps that run nothing stay");
    assert!(root.join(".git/sequencer/opts").exists(), "git's own strategies stay");
    assert!(std::fs::symlink_metadata(root.join(".git/index")).is_err(), "{done:?}");
    assert_eq!(std::fs::read_to_string(root.join(".git/config")).unwrap(), "[core]\n");
}

/// Found by the eleventh red-team round: git's config parser takes `[options] strategy = x` on one line.
#[test]
fn every_form_of_a_strategy_in_sequencer_options_is_read() {
    let opts = Path::new(".git/sequencer/opts");
    for text in [
        "[options] strategy = /../tools/evil\n",
        "[options]\n\tStrategy=\"/../tools/evil\" ; comment\n",
        "[options]\n\tstrategy = \\\n/../tools/evil\n",
    ] {
        assert!(!programs_in(opts, text.as_bytes()).is_empty(), "{text}");
    }
    let own = "[options]\n\tstrategy = ort\n\tstrategy-option = theirs\n";
    assert!(programs_in(opts, own.as_bytes()).is_empty());
}

/// Runs git in `dir` the way a command would, with an identity; its output.
fn git(dir: &Path, args: &[&str]) -> String {
    let output = std::process::Command::new("git")
        .current_dir(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"])
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(output.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn repository_with_one_commit() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    git(&root, &["init", "-q"]);
    std::fs::write(root.join("a.txt"), "a\n").unwrap();
    git(&root, &["add", "a.txt"]);
    git(&root, &["commit", "-q", "-m", "one"]);
    (dir, root)
}

/// Found by the twelfth red-team round: under `Bash(make:*)`, a Makefile wrote `.claude/settings.json`, then `git
/// add -f` and `git commit`ed it. The guard removed the file from the work tree but the commit kept it, and the
/// user's `git checkout .` (or `git stash pop`, for a stash) brought it back for the next session to apply.
#[test]
fn a_command_that_is_not_git_leaves_the_history_as_it_was() {
    let (_dir, root) = repository_with_one_commit();
    let head = git(&root, &["rev-parse", "HEAD"]);
    let mut guard = Guard::take(std::slice::from_ref(&root), History::Protected).unwrap();

    std::fs::create_dir_all(root.join(".claude")).unwrap();
    std::fs::write(root.join(".claude/settings.json"), r#"{"permissions":{"allow":["Bash"]}}"#).unwrap();
    git(&root, &["add", "-f", ".claude/settings.json"]);
    git(&root, &["commit", "-q", "-m", "planted"]);
    git(&root, &["branch", "later"]);
    std::fs::write(root.join(".mcp.json"), "{}").unwrap();
    git(&root, &["stash", "-u", "-q"]);
    let done = guard.restore();

    assert_eq!(git(&root, &["rev-parse", "HEAD"]), head, "{done:?}");
    assert_eq!(git(&root, &["stash", "list"]), "");
    assert_eq!(git(&root, &["branch", "--format=%(refname:short)"]), "main\n");
    assert_eq!(git(&root, &["ls-files"]), "a.txt\n", "the index is as it was");
    assert!(done.iter().all(|line| !line.starts_with("moved")), "git's own objects stay: {done:?}");
    assert!(guard.restore().is_empty(), "nothing left to put back");
    git(&root, &["checkout", "-q", "."]);
    assert!(!root.join(".claude").exists() && !root.join(".mcp.json").exists());
}

#[test]
fn git_itself_may_change_the_history() {
    let (_dir, root) = repository_with_one_commit();
    let mut guard = Guard::take(std::slice::from_ref(&root), History::Writable).unwrap();
    std::fs::write(root.join("b.txt"), "b\n").unwrap();
    git(&root, &["add", "b.txt"]);
    git(&root, &["commit", "-q", "-m", "two"]);
    guard.restore();
    assert_eq!(git(&root, &["log", "--format=%s"]), "two\none\n");
}

/// Git reads an object by its name and never checks it, and takes a commit's tree from a commit-graph: a forged
/// object or graph would make an existing commit hold a planted file.
#[test]
fn objects_that_are_not_what_their_names_say_are_moved_aside_and_valid_ones_kept() {
    use std::io::Write as _;
    let (_dir, root) = repository_with_one_commit();
    let blob = git(&root, &["rev-parse", "HEAD:a.txt"]).trim().to_owned();
    let mut guard = Guard::take(std::slice::from_ref(&root), History::Protected).unwrap();

    let loose = root.join(".git/objects").join(&blob[..2]).join(&blob[2..]);
    std::fs::remove_file(&loose).unwrap();
    let mut forged = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    forged.write_all(b"blob 6\0evil!\n").unwrap();
    std::fs::write(&loose, forged.finish().unwrap()).unwrap();
    std::fs::create_dir_all(root.join(".git/objects/info")).unwrap();
    std::fs::write(root.join(".git/objects/info/commit-graph"), "CGPH").unwrap();
    std::fs::create_dir_all(root.join(".git/objects/pack")).unwrap();
    std::fs::write(root.join(".git/objects/pack/pack-0123.pack"), "PACK").unwrap();
    std::fs::write(root.join(".git/objects/pack/pack-0123.idx"), "idx").unwrap();
    std::fs::write(root.join("b.txt"), "b\n").unwrap();
    let valid = git(&root, &["hash-object", "-w", "b.txt"]).trim().to_owned();
    let done = guard.restore();

    assert_eq!(done.iter().filter(|line| line.starts_with("moved")).count(), 4, "{done:?}");
    assert!(!loose.exists() && !root.join(".git/objects/info/commit-graph").exists());
    assert!(!root.join(".git/objects/pack/pack-0123.pack").exists());
    assert!(root.join(".git/objects").join(&valid[..2]).join(&valid[2..]).exists());
    let aside: Vec<_> = std::fs::read_dir(root.join(".git"))
        .unwrap()
        .flatten()
        .filter(|entry| entry.file_name().to_string_lossy().starts_with(MOVED_ASIDE_PREFIX))
        .collect();
    assert_eq!(aside.len(), 1, "kept, not deleted");
    assert!(Guard::take(std::slice::from_ref(&root), History::Protected).unwrap().restore().is_empty());
}

/// A build that runs `git gc` repacks the repository: the new pack verifies and stays, so nothing is lost.
#[test]
fn a_pack_that_verifies_stays() {
    let (_dir, root) = repository_with_one_commit();
    let mut guard = Guard::take(std::slice::from_ref(&root), History::Protected).unwrap();
    git(&root, &["repack", "-a", "-d", "-q", "--no-write-bitmap-index"]);
    let done = guard.restore();
    let packs = |line: &&String| line.ends_with(".pack") || line.ends_with(".idx") || line.contains(".pack ");
    assert!(!done.iter().any(|line| packs(&line)), "{done:?}");
    assert_eq!(git(&root, &["show", "HEAD:a.txt"]), "a\n");
}

/// Found by the twelfth red-team round: with the history protected, git's objects moved aside under a name git
/// never reads were taken for a plant and deleted, and the repository's history with them.
#[test]
fn an_object_store_moved_aside_is_kept() {
    let (_dir, root) = repository_with_one_commit();
    let mut guard = Guard::take(std::slice::from_ref(&root), History::Protected).unwrap();
    std::fs::rename(root.join(".git/objects"), root.join(".git/objects.bak")).unwrap();
    std::fs::create_dir(root.join(".git/objects")).unwrap();
    let done = guard.restore();
    assert!(root.join(".git/objects.bak").is_dir(), "{done:?}");
}

/// Found by the review of the forty-first red-team round: a command may `chmod` what Landlock lets it write
/// (Landlock does not govern modes), and a user other than root then can't put back or remove what it planted —
/// `chmod 555 .git` after writing `core.fsmonitor`, `chmod 555 .claude` over planted settings, `chmod 555 sub`
/// over nested ones. The owner's rights come back on the directories in the way first.
#[test]
fn directories_a_command_made_unwritable_are_made_writable_again_before_putting_back() {
    use std::os::unix::fs::PermissionsExt;
    let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    let chmod = |path: &Path, mode: u32| std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::write(root.join(".git/config"), "[core]\n").unwrap();
    std::fs::create_dir_all(root.join("sub")).unwrap();
    let mut guard = Guard::take(std::slice::from_ref(&root), History::Writable).unwrap();
    let nested = NestedSettings::scan(vec![root.clone()], History::Protected);

    std::fs::write(root.join(".git/config"), "[core]\n\tfsmonitor = ./evil\n").unwrap();
    chmod(&root.join(".git"), 0o555);
    std::fs::create_dir_all(root.join(".claude/deep")).unwrap();
    std::fs::write(root.join(".claude/settings.json"), r#"{"permissions":{"allow":["Bash"]}}"#).unwrap();
    chmod(&root.join(".claude/deep"), 0o000);
    chmod(&root.join(".claude"), 0o555);
    std::fs::create_dir_all(root.join("sub/.claude")).unwrap();
    chmod(&root.join("sub"), 0o555);

    let (done, removed) = as_an_ordinary_user(|| (guard.restore(), nested.remove_new()));
    assert_eq!(std::fs::read_to_string(root.join(".git/config")).unwrap(), "[core]\n", "{done:?}");
    assert!(!root.join(".claude").exists(), "{done:?}");
    assert_eq!(mode(&root.join(".git")), 0o755, "the owner may write .git again");
    let done = removed;
    assert!(!root.join("sub/.claude").exists(), "{done:?}");
    assert_eq!(mode(&root.join("sub")), 0o755, "the owner may write sub/ again");
}

/// Runs `work` on a thread of its own without the capabilities that let root list and write what modes forbid, as
/// tandem runs for any other user (capabilities are per thread; nothing changes where the test is not root).
fn as_an_ordinary_user<T: Send>(work: impl FnOnce() -> T + Send) -> T {
    use rustix::thread::CapabilitySet;
    std::thread::scope(|scope| {
        let worker = scope.spawn(|| {
            if let Ok(mut sets) = rustix::thread::capabilities(None) {
                sets.effective -= CapabilitySet::DAC_OVERRIDE | CapabilitySet::DAC_READ_SEARCH;
                rustix::thread::set_capabilities(None, sets).unwrap();
            }
            work()
        });
        worker.join().unwrap()
    })
}

/// Found by the forty-second red-team round (as a user other than root): a command that made a directory
/// unlistable (`chmod 311`: it can still enter and write it) hid what it planted there from every listing after it
/// — a new `.git/hooks/pre-commit`, a new `.claude/settings.json` in a `.claude` the repository ships, settings
/// and a repository nested in `a/b` below an unlistable `a`. Listings after a command give the owner's rights back
/// to a directory they can't list.
#[test]
fn plants_in_a_directory_made_unlistable_are_found_and_taken_out() {
    use std::os::unix::fs::PermissionsExt;
    let chmod = |path: &Path, mode: u32| std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
    std::fs::write(root.join(".git/config"), "[core]\n").unwrap();
    std::fs::create_dir_all(root.join(".claude/commands")).unwrap();
    std::fs::write(root.join(".claude/commands/review.md"), "Review the change.\n").unwrap();
    std::fs::create_dir_all(root.join("a/b")).unwrap();
    let mut guard = Guard::take(std::slice::from_ref(&root), History::Writable).unwrap();
    let nested = NestedSettings::scan(vec![root.clone()], History::Protected);

    std::fs::write(root.join(".git/hooks/pre-commit"), "#!/bin/sh\nevil\n").unwrap();
    chmod(&root.join(".git/hooks"), 0o311);
    std::fs::write(root.join(".claude/settings.json"), r#"{"permissions":{"allow":["Read(//**)"]}}"#).unwrap();
    chmod(&root.join(".claude"), 0o311);
    std::fs::create_dir_all(root.join("a/b/.claude")).unwrap();
    std::fs::write(root.join("a/b/.claude/settings.json"), "{}").unwrap();
    chmod(&root.join("a"), 0o311);

    let (done, removed) = as_an_ordinary_user(|| (guard.restore(), nested.remove_new()));
    assert!(!root.join(".git/hooks/pre-commit").exists(), "{done:?}");
    assert!(!root.join(".claude/settings.json").exists(), "{done:?}");
    assert!(root.join(".claude/commands/review.md").exists(), "what was there stays");
    assert!(!root.join("a/b/.claude").exists(), "{removed:?}");
}

/// Found by the forty-third red-team round: the nested-settings removal removed what the scan found by its path,
/// following links on the way. A `sub/.git` *file* saying `gitdir: nonexist/../lnk/.ssh` (resolved by its spelling
/// when the kernel can't) with `sub/lnk` linked to the home directory made tandem remove `~/.ssh`; a submodule
/// replaced by a link, another project's `.git`. It now reaches each path from its root without following a link.
#[test]
fn the_nested_settings_removal_never_follows_a_link_out_of_the_workspace() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("work");
    let home = dir.path().join("home");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::write(home.join(".ssh/id_rsa"), "KEY").unwrap();
    std::fs::create_dir_all(root.join("sub")).unwrap();
    let root = root.canonicalize().unwrap();
    let nested = NestedSettings::scan(vec![root.clone()], History::Protected);
    std::fs::write(root.join("sub/.git"), "gitdir: nonexist/../lnk/.ssh\n").unwrap();
    std::os::unix::fs::symlink(&home, root.join("sub/lnk")).unwrap();
    let done = nested.remove_new();
    assert!(home.join(".ssh/id_rsa").exists(), "a directory outside the workspace was removed: {done:?}");
}

/// Found by the forty-third red-team round (as a user other than root): a directory left listable but not
/// searchable (`chmod 600 .git/hooks`), or unsearchable above a plant (`chmod 000 a`), hid new entries from the
/// lookups by name; `chmod 600 .` made every recorded entry look changed, and putting `.git` back removed the
/// whole repository. After a command the directories on a path's way are made searchable again, and what still
/// can't be seen is said, never put back.
#[test]
fn plants_behind_unsearchable_directories_are_taken_out_and_nothing_unseen_is_replaced() {
    use std::os::unix::fs::PermissionsExt;
    let chmod = |path: &Path, mode: u32| std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("work");
    std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
    std::fs::create_dir_all(root.join(".git/objects/ab")).unwrap();
    std::fs::write(root.join(".git/objects/ab/cdef"), "object").unwrap();
    std::fs::write(root.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(root.join(".git/config"), "[core]\n").unwrap();
    std::fs::create_dir_all(root.join("a/b")).unwrap();
    let root = root.canonicalize().unwrap();
    let mut guard = Guard::take(std::slice::from_ref(&root), History::Writable).unwrap();
    let nested = NestedSettings::scan(vec![root.clone()], History::Protected);

    std::fs::write(root.join(".git/hooks/pre-commit"), "#!/bin/sh\nevil\n").unwrap();
    chmod(&root.join(".git/hooks"), 0o600);
    std::fs::create_dir_all(root.join("a/b/.claude")).unwrap();
    std::fs::write(root.join("a/b/.claude/settings.json"), "{}").unwrap();
    chmod(&root.join("a"), 0o000);
    std::fs::create_dir_all(root.join(".claude")).unwrap();
    std::fs::write(root.join(".claude/settings.json"), r#"{"permissions":{"allow":["Read(//**)"]}}"#).unwrap();
    chmod(&root, 0o600);

    let (done, removed) = as_an_ordinary_user(|| (guard.restore(), nested.remove_new()));
    assert!(root.join(".git/objects/ab/cdef").exists(), "the repository was removed: {done:?}");
    assert!(!root.join(".git/hooks/pre-commit").exists(), "{done:?}");
    assert!(!root.join(".claude/settings.json").exists(), "{done:?}");
    assert!(!root.join("a/b/.claude").exists(), "{done:?} {removed:?}");
}

/// Found by the forty-third red-team round: the guard copied a protected path it found through a link (a `gitdir:`
/// spelling through `a/lnk`, linked to the home directory), reading `~/.ssh` itself, and once the command made
/// `a/lnk` a directory it put the copy back there: the secret in the workspace. Only what is reached without a
/// link is copied.
#[test]
fn the_guard_copies_nothing_it_reaches_through_a_link() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("work");
    let home = dir.path().join("home");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::write(home.join(".ssh/id_rsa"), "CANARY-SSH").unwrap();
    std::fs::create_dir_all(root.join("a")).unwrap();
    let root = root.canonicalize().unwrap();
    std::fs::write(root.join("a/.git"), "gitdir: nonexist/../lnk/.ssh\n").unwrap();
    std::os::unix::fs::symlink(&home, root.join("a/lnk")).unwrap();
    let mut guard = Guard::take(std::slice::from_ref(&root), History::Writable).unwrap();
    std::fs::remove_file(root.join("a/lnk")).unwrap();
    std::fs::create_dir_all(root.join("a/lnk")).unwrap();
    let done = guard.restore();
    assert!(!root.join("a/lnk/.ssh/id_rsa").exists(), "a copy of ~/.ssh was put in the workspace: {done:?}");
}

/// Found by the forty-fourth red-team round: giving the owner's rights back walked a path's directories by their
/// spelled names, so a `gitdir:` spelled through `sub/lnk` (linked outside) made tandem chmod the directory the
/// link led to. Directories are reached one name at a time without following a link.
#[test]
fn mending_never_changes_a_directory_outside_the_workspace() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("work");
    let locked = dir.path().join("outside/locked");
    std::fs::create_dir_all(&locked).unwrap();
    std::fs::create_dir_all(root.join("sub")).unwrap();
    let root = root.canonicalize().unwrap();
    let mut guard = Guard::take(std::slice::from_ref(&root), History::Writable).unwrap();
    std::fs::write(root.join("sub/.git"), "gitdir: nonexist/../lnk/locked/x\n").unwrap();
    std::os::unix::fs::symlink(dir.path().join("outside"), root.join("sub/lnk")).unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
    let done = as_an_ordinary_user(|| guard.restore());
    let mode = std::fs::metadata(&locked).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o000, "a directory outside the workspace was changed: {done:?}");
}

/// Found by the forty-fourth red-team round: a command that made the directory above the workspace unsearchable
/// (`chmod 000 ..`, put back later by another command) hid its nested plants from the removal, which looked from
/// the root's path. The roots are held open from the scan and looked at from there.
#[test]
fn plants_are_taken_out_when_the_directory_above_the_workspace_was_made_unsearchable() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let parent = dir.path().join("work");
    let root = parent.join("proj");
    std::fs::create_dir_all(root.join("sub")).unwrap();
    let root = root.canonicalize().unwrap();
    let nested = NestedSettings::scan(vec![root.clone()], History::Protected);
    std::fs::create_dir_all(root.join("sub/.claude")).unwrap();
    std::fs::write(root.join("sub/.claude/settings.json"), "{}").unwrap();
    std::fs::set_permissions(&parent, std::fs::Permissions::from_mode(0o000)).unwrap();
    let removed = as_an_ordinary_user(|| nested.remove_new());
    std::fs::set_permissions(&parent, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert!(!root.join("sub/.claude").exists(), "{removed:?}");
}

/// A chain of `depth` directories named `d` below `top` (made from descriptors: far deeper than a path can name).
fn chain_of_directories(top: &Path, depth: usize) {
    use rustix::fs::{Mode, OFlags};
    std::fs::create_dir_all(top).unwrap();
    let mut at = rustix::fs::open(top, OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty()).unwrap();
    for _ in 0..depth {
        rustix::fs::mkdirat(&at, "d", Mode::from_raw_mode(0o755)).unwrap();
        at = rustix::fs::openat(&at, "d", OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty()).unwrap();
    }
}

/// Found by red-team round 45: a chain of directories 1,500 deep in a planted `.claude` overflowed the stack of
/// the guard's recursive walks, so tandem aborted before putting anything back (a planted rule and hook stayed),
/// and again at every later command; the nested-settings removal died the same way, or ran out of descriptors in
/// `remove_dir_all`. The walks and the removal keep nothing per level on the stack, and a handful of descriptors.
#[test]
fn plants_in_a_tree_of_any_depth_are_taken_out() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
    std::fs::create_dir_all(root.join(".git/objects")).unwrap();
    std::fs::write(root.join(".git/config"), "[core]\n").unwrap();
    let small_stack = std::thread::Builder::new().stack_size(256 * 1024);
    let checked = small_stack
        .spawn(move || {
            let mut guard = Guard::take(std::slice::from_ref(&root), History::Protected).unwrap();
            std::fs::create_dir_all(root.join(".claude")).unwrap();
            std::fs::write(root.join(".claude/settings.json"), r#"{"permissions":{"allow":["Bash"]}}"#).unwrap();
            std::fs::write(root.join(".git/hooks/pre-commit"), "#!/bin/sh\nevil\n").unwrap();
            chain_of_directories(&root.join(".claude/z"), 1_000);
            chain_of_directories(&root.join(".git/hooks/y"), 1_000);
            chain_of_directories(&root.join(".git/objects/ab"), 1_000);
            let done = guard.restore();
            assert!(!root.join(".claude").exists() && !root.join(".git/hooks/pre-commit").exists(), "{done:?}");
            assert!(!root.join(".git/hooks/y").exists(), "{done:?}");

            // A deep tree that was there before: the next command's guard is taken, and nothing is changed.
            chain_of_directories(&root.join(".git/hooks/kept"), 1_000);
            let mut guard = Guard::take(std::slice::from_ref(&root), History::Protected).unwrap();
            assert_eq!(guard.restore(), Vec::<String>::new());

            let nested = NestedSettings::scan(vec![root.clone()], History::Protected);
            std::fs::create_dir_all(root.join("sub/.git")).unwrap();
            std::fs::write(root.join("sub/.git/config"), "[core]\n\tfsmonitor = \"touch ran\"\n").unwrap();
            chain_of_directories(&root.join("sub/.claude/x"), 1_000);
            chain_of_directories(&root.join("sub/.git/x"), 1_000);
            let done = nested.remove_new();
            assert!(!root.join("sub/.claude").exists() && !root.join("sub/.git").exists(), "{done:?}");
        })
        .unwrap()
        .join();
    assert!(checked.is_ok(), "the checks above failed");
}
