//! Denied paths end to end: a denied file or directory stays denied to commands, and to the Read tool, through
//! renames, links, other names and moves a command makes (`denied_files.rs` follows them).

use super::tests::{allowed, denied, landlock_abi, policy, repo, scratch, sh};
use super::*;

/// A policy that denies reading `secret` and allows `again` inside it.
fn denying(mode: SandboxMode, secret: &Path, again: Option<&Path>) -> SandboxPolicy {
    let mut p = policy(mode, vec![], false);
    p.deny_read = vec![secret.to_path_buf()];
    p.allow_read = again.into_iter().map(Path::to_path_buf).collect();
    p
}

#[tokio::test]
async fn denied_paths_cant_be_read_by_any_route() {
    let (Some(_abi), Some(ws), Some(home)) = (landlock_abi(), scratch(), scratch()) else { return };
    let (ws, home) = (ws.path(), home.path());
    repo(ws);
    let ssh = home.join(".ssh");
    std::fs::create_dir_all(&ssh).unwrap();
    std::fs::write(ssh.join("id_rsa"), "SECRET-KEY\n").unwrap();
    std::fs::write(ssh.join("known_hosts"), "host\n").unwrap();
    std::fs::write(home.join("notes"), "fine\n").unwrap();
    std::os::unix::fs::symlink(&ssh, ws.join("src/link")).unwrap();
    std::fs::hard_link(ssh.join("id_rsa"), home.join("hardlink")).ok();
    for mode in [SandboxMode::ReadOnly, SandboxMode::WorkspaceWrite] {
        let p = denying(mode, &ssh, Some(&ssh.join("known_hosts")));
        for attempt in [
            format!("cat {}/id_rsa", ssh.display()),
            "cat src/link/id_rsa".to_owned(),
            format!("cd {} && cat id_rsa", ssh.display()),
            format!("cp {}/id_rsa src/copy; cat src/copy", ssh.display()),
            format!("tar cf - -C {} . 2>/dev/null", ssh.display()),
            format!("cat {}/hardlink", home.display()),
        ] {
            let (ok, _) = sh(&p, ws, &format!("({attempt}) | grep -a -q SECRET-KEY")).await;
            assert!(!ok, "{mode}: `{attempt}` read the secret");
        }
        allowed(&p, ws, &format!("cat {}/notes {}/known_hosts README", home.display(), ssh.display())).await;
        allowed(&p, ws, "ls / > /dev/null && cat /etc/passwd > /dev/null").await;
    }
    assert!(!ws.join("src/copy").exists());
}

/// A denial names a path, and a command allowed to write the workspace could rename the `.env` a Read deny rule
/// names to `notes.txt`, in the same directory (Landlock refuses moving it elsewhere, where it would gain the right
/// to be read): the next command's grants, made by name, granted `notes.txt`. A denied file stays denied, and the
/// Read tool refuses it too.
#[tokio::test]
async fn a_denied_file_renamed_in_its_directory_stays_denied() {
    let (Some(_abi), Some(ws)) = (landlock_abi(), scratch()) else { return };
    let ws = ws.path();
    repo(ws);
    std::fs::write(ws.join("src/.env"), "API=CANARY-ENV\n").unwrap();
    std::fs::create_dir(ws.join("lib")).unwrap();
    let mut p = policy(SandboxMode::WorkspaceWrite, vec![ws.to_path_buf()], false);
    p.deny_read = vec![ws.join("src/.env")];
    allowed(&p, ws, "mv src/.env src/notes.txt").await;
    let (ok, _) = sh(&p, ws, "grep -q CANARY src/notes.txt").await;
    assert!(!ok, "the renamed denied file was read");
    let (ok, _) = sh(&p, ws, "mv src/notes.txt lib/notes.txt").await;
    assert!(!ok, "the renamed denied file was moved where it could be read");
    allowed(&p, ws, "mv src/main.rs lib/main.rs && cat lib/main.rs").await;
    let file = std::fs::File::open(ws.join("src/notes.txt")).unwrap();
    let env: crate::tools::HiddenPaths = std::sync::Arc::new(|path: &Path| path.ends_with(".env"));
    assert!(crate::tools::refuse_hidden_opened(&file, "notes.txt", Some(&*env)).is_err());
    let nothing: crate::tools::HiddenPaths = std::sync::Arc::new(|_: &Path| false);
    assert!(crate::tools::refuse_hidden_opened(&file, "notes.txt", Some(&*nothing)).is_ok(), "no rule denies it now");
}

/// Found by the thirty-seventh red-team round: a file a pattern denies (`Read(.env)` at any depth) renamed by a
/// build matched nothing any more, so its directory was granted whole to the next command; moving the directory
/// too hides it from any split by names. A denied file is followed wherever it goes.
#[tokio::test]
async fn a_file_a_pattern_denies_is_followed_through_renames() {
    let (Some(_abi), Some(ws)) = (landlock_abi(), scratch()) else { return };
    let ws = ws.path();
    repo(ws);
    std::fs::create_dir_all(ws.join("src/inner")).unwrap();
    std::fs::write(ws.join("src/inner/.env"), "API=CANARY-ENV\n").unwrap();
    let mut p = policy(SandboxMode::WorkspaceWrite, vec![ws.to_path_buf()], false);
    p.deny_read_globs = vec![PathGlob::new(&ws.join("**/.env")).unwrap()];
    denied(&p, ws, "cat src/inner/.env").await;
    allowed(&p, ws, "mv src/inner/.env src/inner/notes.txt && mv src/inner src/moved").await;
    let (ok, _) = sh(&p, ws, "grep -q CANARY src/moved/notes.txt").await;
    assert!(!ok, "the renamed denied file was read");
    allowed(&p, ws, "cat src/main.rs").await;
}

/// Found by the twenty-third red-team round: a denied path that did not exist yet was dropped from the grants, so
/// its existing parent was granted whole: with the home directory as the workspace, a build a rule allowed
/// created `~/.config/git/config` (a git profile every later `git status` obeys) and a missing secret directory
/// could be made and then read. Missing denied paths are carved out at their longest existing ancestor.
#[tokio::test]
async fn denied_paths_that_do_not_exist_yet_cant_be_created() {
    let (Some(_abi), Some(home)) = (landlock_abi(), scratch()) else { return };
    let home = home.path();
    std::fs::create_dir_all(home.join(".config/other")).unwrap();
    let mut p = policy(SandboxMode::WorkspaceWrite, vec![home.to_path_buf()], false);
    p.deny_write = vec![home.join(".config/git"), home.join(".config/tandem")];
    p.deny_read = vec![home.join(".config/tandem")];
    for attempt in ["mkdir -p .config/git && echo '[core] fsmonitor = x' > .config/git/config", "mkdir .config/tandem"]
    {
        let (ok, _) = sh(&p, home, attempt).await;
        assert!(!ok, "`{attempt}` was allowed");
    }
    assert!(!home.join(".config/git").exists() && !home.join(".config/tandem").exists());
    allowed(&p, home, "echo ok > .config/other/file").await;
}

/// Found by the thirty-ninth red-team round: a build a rule allowed made `.env` and a second name of it in
/// another directory in one command (before anything denied it); the user then filled `.env` in. Landlock grants
/// a file wherever a name of it is granted: the other name's directory, holding no denied path, was granted whole.
#[tokio::test]
async fn a_second_name_a_build_gave_a_denied_file_before_it_was_denied_is_denied_too() {
    let (Some(_abi), Some(ws)) = (landlock_abi(), scratch()) else { return };
    let ws = ws.path();
    repo(ws);
    let mut p = policy(SandboxMode::WorkspaceWrite, vec![ws.to_path_buf()], false);
    p.deny_read_globs = vec![PathGlob::new(&ws.join("**/.env")).unwrap()];
    allowed(&p, ws, "touch src/.env && mkdir src/cache && ln src/.env src/cache/env.txt").await;
    std::fs::write(ws.join("src/.env"), "API=CANARY-ENV\n").unwrap();
    denied(&p, ws, "cat src/.env").await;
    let (ok, _) = sh(&p, ws, "grep -q CANARY src/cache/env.txt").await;
    assert!(!ok, "the denied file was read through its second name");
    let file = std::fs::File::open(ws.join("src/cache/env.txt")).unwrap();
    let env: crate::tools::HiddenPaths = std::sync::Arc::new(|path: &Path| path.ends_with(".env"));
    assert!(crate::tools::refuse_hidden_opened(&file, "src/cache/env.txt", Some(&*env)).is_err());
    allowed(&p, ws, "cat src/main.rs").await;
}

/// Found by the thirty-ninth red-team round: a denied path that is a link (`.env` → `config/prod.env`, or
/// `secrets` → a directory outside) was remembered by its target's path, which no rule names: the Read tool read
/// the target, and once a build removed the link the target was readable to commands too.
#[tokio::test]
async fn a_denied_link_s_target_stays_denied_without_the_link() {
    let (Some(_abi), Some(root)) = (landlock_abi(), scratch()) else { return };
    let (ws, outside) = (root.path().join("ws"), root.path().join("outside"));
    std::fs::create_dir_all(&outside).unwrap();
    repo(&ws);
    std::fs::write(outside.join("secret.txt"), "CANARY-OUTSIDE\n").unwrap();
    std::os::unix::fs::symlink("../../outside", ws.join("src/secrets")).unwrap();
    std::fs::create_dir_all(ws.join("config")).unwrap();
    std::fs::write(ws.join("config/prod.env"), "API=CANARY-ENV\n").unwrap();
    std::os::unix::fs::symlink("../config/prod.env", ws.join("src/.env")).unwrap();
    let mut p = policy(SandboxMode::WorkspaceWrite, vec![ws.clone()], false);
    p.deny_read_globs =
        vec![PathGlob::new(&ws.join("src/secrets/**")).unwrap(), PathGlob::new(&ws.join("**/.env")).unwrap()];
    denied(&p, &ws, "cat ../outside/secret.txt").await;
    denied(&p, &ws, "cat config/prod.env").await;
    let rules: crate::tools::HiddenPaths = {
        let ws = ws.clone();
        std::sync::Arc::new(move |path: &Path| path.starts_with(ws.join("src/secrets")) || path.ends_with(".env"))
    };
    let file = std::fs::File::open(ws.join("config/prod.env")).unwrap();
    assert!(crate::tools::refuse_hidden_opened(&file, "config/prod.env", Some(&*rules)).is_err());
    allowed(&p, &ws, "rm src/secrets src/.env").await;
    denied(&p, &ws, "cat ../outside/secret.txt").await;
    denied(&p, &ws, "cat config/prod.env").await;
    allowed(&p, &ws, "cat src/main.rs").await;
}

/// Found by the thirty-ninth red-team round: a build nested the directory holding a denied file under new
/// directories with long names until its path passed `PATH_MAX`; the path of the file held could not be read back,
/// so it was let go as if deleted, and a command reached it by `cd`-ing down one level at a time. Moving the
/// directory into another is refused now (it lies in a directory listed only); renaming each of its ancestors in
/// place to a long name still pushes the path past `PATH_MAX`, and the file stays denied.
#[tokio::test]
async fn a_denied_file_nested_past_path_max_stays_denied() {
    let (Some(_abi), Some(ws)) = (landlock_abi(), scratch()) else { return };
    let ws = ws.path();
    repo(ws);
    let deep: PathBuf = (1..=18).map(|level| format!("n{level}")).collect();
    std::fs::create_dir_all(ws.join("src").join(&deep)).unwrap();
    std::fs::write(ws.join("src").join(&deep).join(".env"), "API=CANARY-ENV\n").unwrap();
    let mut p = policy(SandboxMode::WorkspaceWrite, vec![ws.to_path_buf()], false);
    p.deny_read = vec![ws.join("src").join(&deep).join(".env")];
    denied(&p, ws, &format!("cat src/{}/.env", deep.display())).await;
    let long = "d".repeat(240);
    let (moved, _) = sh(&p, ws, &format!("set -e; cd src; mkdir w{long}; mv n1 w{long}/")).await;
    assert!(!moved, "a directory holding a denied file was moved into another");
    let hide = format!("set -e; cd src; for i in $(seq 18); do mv n$i w${{i}}{long}; cd w${{i}}{long}; done");
    allowed(&p, ws, &hide).await;
    let show = format!("set -e; cd src; for i in $(seq 18); do cd w${{i}}{long}; done; grep -q CANARY .env");
    let (ok, _) = sh(&p, ws, &show).await;
    assert!(!ok, "the denied file nested past PATH_MAX was read");
    allowed(&p, ws, "cat src/main.rs").await;
}

/// Found by the fortieth red-team round: a rule denying a directory (`Read(secrets/)`) followed the directory,
/// not the files in it: a build a rule allowed linked or moved `secrets/key` into a directory it had just made
/// (which has no more rights than the denied one, so Landlock let it), and the next command, the Read tool and
/// Grep read it there. Nothing may leave a denied directory; one a command made, with a file it linked out before
/// anything denied it, has that file denied under its other name too.
#[tokio::test]
async fn nothing_leaves_a_denied_directory() {
    let (Some(_abi), Some(ws)) = (landlock_abi(), scratch()) else { return };
    let ws = ws.path();
    repo(ws);
    std::fs::create_dir_all(ws.join("src/keep/secrets")).unwrap();
    std::fs::create_dir_all(ws.join("lib")).unwrap();
    for key in ["linked", "moved", "kept"] {
        std::fs::write(ws.join("src/keep/secrets").join(key), "KEY=CANARY-ENV\n").unwrap();
    }
    let mut p = policy(SandboxMode::WorkspaceWrite, vec![ws.to_path_buf()], false);
    p.deny_read_globs =
        vec![PathGlob::new(&ws.join("src/keep/secrets/**")).unwrap(), PathGlob::new(&ws.join("**/vault/**")).unwrap()];
    denied(&p, ws, "cat src/keep/secrets/kept").await;
    let leaks = [
        "mkdir -p src/cache && mv src/keep/secrets/moved src/cache/moved",
        "mkdir -p src/cache && ln src/keep/secrets/linked src/cache/linked",
        "mv src/keep/secrets src/keep/public",
    ];
    for leak in leaks {
        sh(&p, ws, leak).await;
    }
    for put in ["src/cache/moved", "src/cache/linked", "src/keep/public/kept"] {
        let (ok, _) = sh(&p, ws, &format!("grep -q CANARY {put}")).await;
        assert!(!ok, "a file of the denied directory was read where a command put it: {put}");
    }
    let secrets: crate::tools::HiddenPaths = {
        let secrets = ws.join("src/keep/secrets");
        std::sync::Arc::new(move |path: &Path| path.starts_with(&secrets))
    };
    let file = std::fs::File::open(ws.join("src/keep/public/kept")).unwrap();
    assert!(crate::tools::refuse_hidden_opened(&file, "src/keep/public/kept", Some(&*secrets)).is_err());
    // Grep checks each file it opened on the place its descriptor leads to: a race renaming the denied directory
    // between the walk's check of its name and the open must meet the same refusal (round 41).
    let real = ws.join("src/keep/public/kept").canonicalize().unwrap();
    assert!(crate::tools::refuse_hidden_at(&file, Some(&real), "", &*secrets).is_err(), "Grep's check let it through");
    // A command swapping the names of the denied directory and a harmless one in a loop: the file was opened in
    // the denied one, its place read back, and by the time the directories are looked at the name holds the
    // harmless one (round 41's review). The directories are judged by identity, not by name.
    std::fs::create_dir_all(ws.join("src/keep/other")).unwrap();
    std::fs::write(ws.join("src/keep/other/kept"), "harmless\n").unwrap();
    let swap = || {
        let (public, other) = (ws.join("src/keep/public"), ws.join("src/keep/other"));
        rustix::fs::renameat_with(rustix::fs::CWD, &public, rustix::fs::CWD, &other, rustix::fs::RenameFlags::EXCHANGE)
            .unwrap();
    };
    let real = ws.join("src/keep/public/kept").canonicalize().unwrap();
    let denied = std::fs::File::open(&real).unwrap();
    swap();
    assert_eq!(std::fs::read_to_string(&real).unwrap(), "harmless\n", "the name holds the harmless directory now");
    assert!(crate::tools::refuse_hidden_at(&denied, Some(&real), "", &*secrets).is_err(), "the swap let it through");
    swap();
    let kept = ws.join("src/keep/public/kept");
    let walked = crate::tools::skip_hidden(&mut ignore::WalkBuilder::new(&kept), &kept, Some(secrets.clone()));
    assert!(walked.is_err(), "a search of a file in the renamed denied directory was let through");
    allowed(&p, ws, "mkdir -p lib/vault lib/cache && touch lib/vault/key && ln lib/vault/key lib/cache/vault-key")
        .await;
    std::fs::write(ws.join("lib/vault/key"), "KEY=CANARY-ENV\n").unwrap();
    let (ok, _) = sh(&p, ws, "grep -q CANARY lib/cache/vault-key").await;
    assert!(!ok, "the denied directory's file was read through its other name");
    let file = std::fs::File::open(ws.join("lib/cache/vault-key")).unwrap();
    let vault: crate::tools::HiddenPaths = {
        let vault = ws.join("lib/vault");
        std::sync::Arc::new(move |path: &Path| path.starts_with(&vault))
    };
    assert!(crate::tools::refuse_hidden_opened(&file, "lib/cache/vault-key", Some(&*vault)).is_err());
    allowed(&p, ws, "cat src/main.rs && touch src/cache/new").await;
}

/// Found by a red-team review of the fortieth round's fixes: a build a rule allowed made `.env` and hard-linked it
/// into a tool cache it may write (`~/.cache`), which lies outside the workspace; the other names of a denied file
/// were looked for in the workspace only.
#[tokio::test]
async fn a_second_name_in_a_cache_a_rule_may_write_is_denied_too() {
    let (Some(_abi), Some(ws), Some(cache)) = (landlock_abi(), scratch(), scratch()) else { return };
    let (ws, cache) = (ws.path(), cache.path());
    repo(ws);
    let mut p = policy(SandboxMode::WorkspaceWrite, vec![ws.to_path_buf()], true);
    p.extra_write = vec![cache.to_path_buf()];
    p.deny_read_globs = vec![PathGlob::new(&ws.join("**/.env")).unwrap()];
    allowed(&p, ws, &format!("touch src/.env && ln src/.env {}/env.txt", cache.display())).await;
    std::fs::write(ws.join("src/.env"), "API=CANARY-ENV\n").unwrap();
    denied(&p, ws, "cat src/.env").await;
    let (ok, _) = sh(&p, ws, &format!("grep -q CANARY {}/env.txt", cache.display())).await;
    assert!(!ok, "the denied file was read through its name in the cache");
}
