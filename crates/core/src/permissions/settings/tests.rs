use std::fs;
use std::path::{Path, PathBuf};

use super::*;

/// A project (a git repository, or a bare `.git` directory where git is missing) in `work/project`, a config
/// dir, a home, all in one temp dir.
struct Fixture {
    _dir: tempfile::TempDir,
    config: PathBuf,
    root: PathBuf,
    home: PathBuf,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("config");
        let root = dir.path().join("work/project");
        let home = dir.path().join("home");
        fs::create_dir_all(&root).unwrap();
        if !git(&root, &["init", "-q"]) {
            fs::create_dir_all(root.join(".git")).unwrap();
        }
        fs::create_dir_all(&config).unwrap();
        fs::create_dir_all(&home).unwrap();
        Fixture { _dir: dir, config, root, home }
    }

    fn write(&self, path: &Path, text: &str) {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }

    fn file(&self, scope: Scope) -> PathBuf {
        settings_file(scope, &self.config, &self.root).unwrap()
    }

    fn load(&self, cwd: &Path) -> Settings {
        load_with_home(&self.config, cwd, Some(&self.home))
    }
}

fn texts(settings: &Settings, kind: RuleKind) -> Vec<&str> {
    settings.rules_of(kind).map(|rule| rule.text.as_str()).collect()
}

#[test]
fn loads_and_merges_every_file_kind() {
    let f = Fixture::new();
    f.write(&f.file(Scope::User), r#"{"permissions": {"allow": ["Read"]}, "theme": "dark"}"#);
    f.write(&f.file(Scope::Project), r#"{"permissions": {"allow": ["Bash(npm test)"], "deny": ["Bash(rm:*)"]}}"#);
    f.write(&f.file(Scope::Local), r#"{"permissions": {"ask": ["WebFetch"]}}"#);
    f.write(&f.file(Scope::ClaudeProject), r#"{"permissions": {"allow": ["Edit(src/**)"]}, "hooks": {}}"#);
    f.write(&f.file(Scope::ClaudeLocal), r#"{"permissions": {"deny": ["Read(./.env)"]}}"#);
    let cwd = f.root.join("sub/dir");
    fs::create_dir_all(&cwd).unwrap();

    let settings = f.load(&cwd);
    // The one key tandem does not read is said, not silently dropped.
    assert_eq!(settings.problems.len(), 1, "{:?}", settings.problems);
    assert!(settings.problems[0].contains("\"theme\" is not supported"), "{:?}", settings.problems);
    assert_eq!(settings.project_root, f.root);
    assert_eq!(texts(&settings, RuleKind::Allow), vec!["Read", "Edit(src/**)", "Bash(npm test)"]);
    assert_eq!(texts(&settings, RuleKind::Deny), vec!["Read(./.env)", "Bash(rm:*)"]);
    assert_eq!(texts(&settings, RuleKind::Ask), vec!["WebFetch"]);

    let by_text = |text: &str| settings.rules.iter().find(|rule| rule.text == text).unwrap();
    let user = by_text("Read");
    assert_eq!(
        (user.scope, user.file.as_deref(), user.root.as_path()),
        (Scope::User, Some(&*f.file(Scope::User)), &*cwd)
    );
    let project = by_text("Bash(npm test)");
    assert_eq!((project.scope, project.root.as_path()), (Scope::Project, f.root.as_path()));
    assert_eq!(project.rule.specifier.as_deref(), Some("npm test"));
    assert_eq!(by_text("WebFetch").scope, Scope::Local);
    assert_eq!(by_text("Edit(src/**)").scope, Scope::ClaudeProject);
    let claude_local = by_text("Read(./.env)");
    assert_eq!((claude_local.scope, claude_local.root.as_path()), (Scope::ClaudeLocal, f.root.as_path()));
}

#[test]
fn a_claude_code_project_alone_works() {
    let f = Fixture::new();
    f.write(
        &f.file(Scope::ClaudeProject),
        r#"{"permissions": {"allow": ["Bash(cargo test:*)"], "defaultMode": "plan"}}"#,
    );
    let settings = f.load(&f.root);
    assert!(settings.problems.is_empty(), "{:?}", settings.problems);
    assert_eq!(texts(&settings, RuleKind::Allow), vec!["Bash(cargo test:*)"]);
    assert_eq!(settings.default_mode, Some(PermissionMode::Plan));
}

#[test]
fn nothing_configured_is_empty_and_silent() {
    let f = Fixture::new();
    let settings = f.load(&f.root);
    assert!(settings.rules.is_empty() && settings.problems.is_empty() && settings.default_mode.is_none());
    // Files without `permissions`, or empty ones, are fine too (a key tandem doesn't read is reported).
    f.write(&f.file(Scope::User), r#"{"hooks": {}}"#);
    f.write(&f.file(Scope::Local), "  \n");
    assert!(f.load(&f.root).problems.is_empty());
    f.write(&f.file(Scope::User), r#"{"model": "x", "permissions": {"disableBypassPermissionsMode": "disable"}}"#);
    let problems = f.load(&f.root).problems;
    assert!(problems.iter().any(|p| p.contains("\"model\" is not supported")), "{problems:?}");
    assert!(problems.iter().any(|p| p.contains("permissions.disableBypassPermissionsMode")), "{problems:?}");
}

#[test]
fn a_file_that_cannot_be_used_is_unreadable_with_path_and_position_and_stops_the_session() {
    let f = Fixture::new();
    f.write(&f.file(Scope::Project), "{\"permissions\": {\"allow\": [\"Edit\"],\n  \"deny\": [\"Bash\" \"x\"]}}");
    f.write(&f.file(Scope::Local), r#"["Edit"]"#);
    fs::create_dir_all(f.file(Scope::ClaudeProject)).unwrap();
    let settings = f.load(&f.root);
    assert!(settings.rules.is_empty(), "{:?}", settings.rules);
    assert!(settings.problems.is_empty(), "{:?}", settings.problems);
    let unreadable = &settings.unreadable;
    assert_eq!(unreadable.len(), 3, "{unreadable:?}");
    let claude = f.file(Scope::ClaudeProject).display().to_string();
    assert_eq!(unreadable[0], format!("{claude}: cannot be read: not a regular file"));
    let project = f.file(Scope::Project).display().to_string();
    assert!(unreadable[1].starts_with(&format!("{project}: not valid JSON")), "{}", unreadable[1]);
    assert!(unreadable[1].contains("line 2 column"), "{}", unreadable[1]);
    let local = f.file(Scope::Local).display().to_string();
    assert_eq!(unreadable[2], format!("{local}: the top level is not a JSON object"));
    let error = settings.check_readable().unwrap_err();
    assert!(error.contains("deny rules") && error.contains(&local) && error.contains(&claude), "{error}");
    assert!(f.load(&f.home).check_readable().is_ok(), "no settings at all is fine");
}

#[test]
fn invalid_rules_are_reported_and_skipped_never_widened() {
    let f = Fixture::new();
    let user = f.file(Scope::User);
    f.write(
        &user,
        r#"{"permissions": {"allow": ["Bash(", "", "Bash()", "Bash (ls)", 42, "mcp__github__create_issue", "Bash(*)"],
            "deny": "Bash", "ask": ["Edit"], "defaultMode": "yolo", "additionalDirectories": [7, "../lib"]}}"#,
    );
    let settings = f.load(&f.root);
    assert_eq!(texts(&settings, RuleKind::Allow), vec!["mcp__github__create_issue", "Bash(*)"]);
    assert_eq!(settings.rules_of(RuleKind::Allow).nth(1).unwrap().rule.specifier, None);
    assert_eq!(texts(&settings, RuleKind::Ask), vec!["Edit"]);
    assert_eq!(settings.default_mode, None);
    let path = user.display().to_string();
    let problems = &settings.problems;
    assert_eq!(problems.len(), 8, "{problems:#?}");
    assert!(problems.iter().all(|p| p.starts_with(&format!("{path}: "))), "{problems:#?}");
    let has = |needle: &str| problems.iter().any(|p| p.contains(needle));
    assert!(has(r#"rule "Bash(": has an opening '(' without a closing ')'"#), "{problems:#?}");
    assert!(has(r#"rule "": is empty (in "allow", ignored)"#), "{problems:#?}");
    assert!(has(r#"rule "Bash()": has an empty specifier"#), "{problems:#?}");
    assert!(has(r#"rule "Bash (ls)": does not start with a tool name"#), "{problems:#?}");
    assert!(has("rule 42: not a string"), "{problems:#?}");
    assert!(has(r#""deny" is not an array"#), "{problems:#?}");
    assert!(has(r#"defaultMode "yolo": not a permission mode (use one of default, acceptEdits"#), "{problems:#?}");
    assert!(has("additionalDirectories 7: not a string"), "{problems:#?}");
}

#[test]
fn default_mode_precedence() {
    let f = Fixture::new();
    let mode = |m: &str| format!(r#"{{"permissions": {{"defaultMode": "{m}"}}}}"#);
    let order = [
        (Scope::User, PermissionMode::Plan),
        (Scope::ClaudeProject, PermissionMode::DontAsk),
        (Scope::ClaudeLocal, PermissionMode::Plan),
        (Scope::Project, PermissionMode::AcceptEdits),
        (Scope::Local, PermissionMode::Default),
    ];
    for (scope, expected) in order {
        f.write(&f.file(scope), &mode(expected.as_str()));
        assert_eq!(f.load(&f.root).default_mode, Some(expected), "{scope:?} overrides the files before it");
    }
    // No file inside the project switches every question off (a repository could commit it).
    let inside = [Scope::ClaudeProject, Scope::ClaudeLocal, Scope::Project, Scope::Local];
    for scope in inside {
        f.write(&f.file(scope), "{}");
    }
    for scope in inside {
        f.write(&f.file(scope), &mode("bypassPermissions"));
        let settings = f.load(&f.root);
        assert_eq!(settings.default_mode, Some(PermissionMode::Plan), "{scope:?}");
        assert!(settings.problems.iter().any(|p| p.contains("bypassPermissions is not taken")), "{scope:?}");
    }
    f.write(&f.file(Scope::User), &mode("bypassPermissions"));
    assert_eq!(f.load(&f.root).default_mode, Some(PermissionMode::BypassPermissions), "the user's own file may");
    for scope in inside {
        f.write(&f.file(scope), "{}");
    }
    f.write(&f.file(Scope::Project), &mode("acceptEdits"));
    // An invalid mode in a higher file leaves the lower file's mode in force.
    f.write(&f.file(Scope::Local), &mode("nope"));
    let settings = f.load(&f.root);
    assert_eq!(settings.default_mode, Some(PermissionMode::AcceptEdits));
    assert_eq!(settings.problems.len(), 1);
}

#[test]
fn additional_directories_resolve_against_the_files_root() {
    let f = Fixture::new();
    let cwd = f.root.join("crates/app");
    fs::create_dir_all(&cwd).unwrap();
    f.write(&f.file(Scope::Project), r#"{"permissions": {"additionalDirectories": ["../lib", "/opt/x", "~/notes"]}}"#);
    f.write(&f.file(Scope::User), r#"{"permissions": {"additionalDirectories": ["../shared", "./.", "~"]}}"#);
    f.write(&f.file(Scope::Local), r#"{"permissions": {"additionalDirectories": ["../lib"]}}"#);
    let settings = f.load(&cwd);
    assert!(settings.problems.is_empty(), "{:?}", settings.problems);
    let work = f.root.parent().unwrap();
    assert_eq!(
        settings.additional_directories,
        vec![
            f.root.join("crates/shared"),
            cwd.clone(),
            f.home.clone(),
            work.join("lib"),
            PathBuf::from("/opt/x"),
            f.home.join("notes")
        ]
    );
    // Without a home directory, `~` entries are reported rather than guessed.
    let settings = load_with_home(&f.config, &cwd, None);
    assert_eq!(settings.problems.len(), 2, "{:?}", settings.problems);
}

#[test]
fn settings_add_for_flags_and_sessions() {
    let mut settings = Settings::default();
    let root = Path::new("/w");
    settings.add(RuleKind::Allow, " Bash(npm test) ", Scope::Flag, root).unwrap();
    settings.add(RuleKind::Allow, "Bash(npm test)", Scope::Flag, root).unwrap();
    settings.add(RuleKind::Deny, "Bash(npm test)", Scope::Session, root).unwrap();
    assert_eq!(settings.rules.len(), 2);
    assert_eq!((settings.rules[0].text.as_str(), settings.rules[0].file.as_ref()), ("Bash(npm test)", None));
    let err = settings.add(RuleKind::Allow, "Bash(", Scope::Flag, root).unwrap_err();
    assert!(err.starts_with(r#"rule "Bash(": has an opening"#), "{err}");
    assert!(settings.add(RuleKind::Allow, "Edit()", Scope::Flag, root).is_err());
}

#[test]
fn persist_to_project_creates_local_file_and_gitignore_keeping_keys_and_order() {
    let f = Fixture::new();
    let written = persist_rule(Scope::Project, RuleKind::Allow, "Bash(npm test:*)", &f.config, &f.root).unwrap();
    assert_eq!(written, f.root.join(".tandem/settings.local.json"));
    assert_eq!(
        fs::read_to_string(&written).unwrap(),
        "{\n  \"permissions\": {\n    \"allow\": [\n      \"Bash(npm test:*)\"\n    ]\n  }\n}\n"
    );
    assert_eq!(fs::read_to_string(f.root.join(".tandem/.gitignore")).unwrap(), "settings.local.json\n");

    // Other keys and their order survive; duplicates (however spaced) are not added.
    fs::write(
        &written,
        r#"{"zeta": 1, "permissions": {"deny": ["Read(.env)"], "allow": ["Edit"], "defaultMode": "plan"}, "alpha": {"b": 2, "a": 1}}"#,
    )
    .unwrap();
    persist_rule(Scope::Local, RuleKind::Allow, "Bash(cargo build)", &f.config, &f.root).unwrap();
    persist_rule(Scope::Project, RuleKind::Allow, "Bash( cargo build )", &f.config, &f.root).unwrap();
    persist_rule(Scope::Project, RuleKind::Allow, "Edit", &f.config, &f.root).unwrap();
    persist_rule(Scope::Project, RuleKind::Ask, "WebFetch", &f.config, &f.root).unwrap();
    let text = fs::read_to_string(&written).unwrap();
    assert_eq!(
        text,
        r#"{
  "zeta": 1,
  "permissions": {
    "deny": [
      "Read(.env)"
    ],
    "allow": [
      "Edit",
      "Bash(cargo build)"
    ],
    "defaultMode": "plan",
    "ask": [
      "WebFetch"
    ]
  },
  "alpha": {
    "b": 2,
    "a": 1
  }
}
"#
    );
    // The gitignore line is not repeated, and the result loads back.
    assert_eq!(fs::read_to_string(f.root.join(".tandem/.gitignore")).unwrap(), "settings.local.json\n");
    let settings = f.load(&f.root);
    assert_eq!(texts(&settings, RuleKind::Allow), vec!["Edit", "Bash(cargo build)"]);
    let names: Vec<_> = fs::read_dir(f.root.join(".tandem")).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names.len(), 2, "no temp files left: {names:?}");
}

#[test]
fn gitignore_is_left_alone_when_the_file_is_already_ignored() {
    let f = Fixture::new();
    f.write(&f.root.join(".gitignore"), "target/\n.tandem/settings.local.json\n");
    persist_rule(Scope::Project, RuleKind::Allow, "Edit", &f.config, &f.root).unwrap();
    assert!(!f.root.join(".tandem/.gitignore").exists());

    // An existing `.tandem/.gitignore` without the line gets it appended, other lines kept.
    let g = Fixture::new();
    g.write(&g.root.join(".tandem/.gitignore"), "cache");
    persist_rule(Scope::Project, RuleKind::Allow, "Edit", &g.config, &g.root).unwrap();
    assert_eq!(fs::read_to_string(g.root.join(".tandem/.gitignore")).unwrap(), "cache\nsettings.local.json\n");

    // A `!` un-ignoring it in `.tandem/.gitignore` wins over the root's ignore, so the line is added.
    let h = Fixture::new();
    h.write(&h.root.join(".gitignore"), ".tandem/\n");
    h.write(&h.root.join(".tandem/.gitignore"), "!settings.local.json\n");
    persist_rule(Scope::Project, RuleKind::Allow, "Edit", &h.config, &h.root).unwrap();
    assert!(fs::read_to_string(h.root.join(".tandem/.gitignore")).unwrap().ends_with("\nsettings.local.json\n"));
}

#[test]
fn persist_to_user_and_refusals() {
    let f = Fixture::new();
    let user = f.file(Scope::User);
    f.write(&user, "{\n  \"theme\": \"dark\"\n}\n");
    let written = persist_rule(Scope::User, RuleKind::Deny, "Bash(rm:*)", &f.config, &f.root).unwrap();
    assert_eq!(written, user);
    assert_eq!(
        fs::read_to_string(&user).unwrap(),
        "{\n  \"theme\": \"dark\",\n  \"permissions\": {\n    \"deny\": [\n      \"Bash(rm:*)\"\n    ]\n  }\n}\n"
    );
    assert!(!f.root.join(".tandem").exists(), "a user rule touches nothing in the project");

    // Missing config dir is created.
    let fresh = f.config.join("nested");
    persist_rule(Scope::User, RuleKind::Allow, "Read", &fresh, &f.root).unwrap();
    assert!(fresh.join("settings.json").exists());

    // Invalid rules, scopes without a writable file, and broken files are errors; the file is never clobbered.
    assert!(persist_rule(Scope::User, RuleKind::Allow, "Bash(", &f.config, &f.root).is_err());
    assert!(persist_rule(Scope::Session, RuleKind::Allow, "Edit", &f.config, &f.root).is_err());
    assert!(persist_rule(Scope::ClaudeProject, RuleKind::Allow, "Edit", &f.config, &f.root).is_err());
    fs::write(&user, "{ broken").unwrap();
    let err = persist_rule(Scope::User, RuleKind::Allow, "Edit", &f.config, &f.root).unwrap_err();
    assert!(err.starts_with(&format!("{}: not valid JSON", user.display())), "{err}");
    assert_eq!(fs::read_to_string(&user).unwrap(), "{ broken");
    fs::write(&user, r#"{"permissions": {"allow": "Edit"}}"#).unwrap();
    assert!(persist_rule(Scope::User, RuleKind::Allow, "Read", &f.config, &f.root).is_err());
}

#[test]
fn remove_rule_removes_every_spelling_and_keeps_the_rest() {
    let f = Fixture::new();
    let file = f.file(Scope::Project);
    f.write(&file, r#"{"a": 1, "permissions": {"allow": ["Edit", "Bash(npm test)", "Bash( npm test )", "Bash("], "deny": ["Edit"]}}"#);
    assert!(remove_rule(&file, RuleKind::Allow, "Bash(npm test)").unwrap());
    assert!(!remove_rule(&file, RuleKind::Allow, "Bash(npm test)").unwrap());
    assert!(remove_rule(&file, RuleKind::Allow, "Bash(").unwrap(), "a broken rule can be removed by its text");
    assert!(remove_rule(&file, RuleKind::Allow, "Edit").unwrap());
    assert_eq!(
        fs::read_to_string(&file).unwrap(),
        "{\n  \"a\": 1,\n  \"permissions\": {\n    \"allow\": [],\n    \"deny\": [\n      \"Edit\"\n    ]\n  }\n}\n"
    );
    assert!(!remove_rule(&file, RuleKind::Ask, "Edit").unwrap());
    assert!(!remove_rule(&f.root.join("missing.json"), RuleKind::Allow, "Edit").unwrap());
    assert!(!f.root.join("missing.json").exists());
}

#[test]
fn project_root_is_the_nearest_git_ancestor() {
    let f = Fixture::new();
    let deep = f.root.join("a/b/c");
    fs::create_dir_all(&deep).unwrap();
    assert_eq!(project_root(&deep), f.root);
    assert_eq!(project_root(&f.root), f.root);
    // A `.git` file (worktree, submodule) counts, and the nearest one wins.
    f.write(&f.root.join("a/.git"), "gitdir: ../.git/worktrees/a\n");
    assert_eq!(project_root(&deep), f.root.join("a"));
    // Outside any repository, the working directory itself.
    let outside = f.home.join("scratch");
    fs::create_dir_all(&outside).unwrap();
    assert_eq!(project_root(&outside), outside);
}

#[test]
fn resolve_path_pattern_forms() {
    let root = Path::new("/work/project");
    let cwd = Path::new("/work/project/crates/app");
    let home = Path::new("/home/me");
    let resolve = |p: &str| resolve_path_pattern(p, root, cwd, home);
    assert_eq!(resolve("//etc/hosts"), PathBuf::from("/etc/hosts"), "`//` is absolute");
    assert_eq!(resolve("//tmp/**"), PathBuf::from("/tmp/**"));
    assert_eq!(resolve("~/.zshrc"), PathBuf::from("/home/me/.zshrc"), "`~/` is the home directory");
    assert_eq!(resolve("~"), PathBuf::from("/home/me"));
    assert_eq!(resolve("/docs/**"), PathBuf::from("/work/project/docs/**"), "`/` is the settings file's root");
    assert_eq!(resolve("/"), PathBuf::from("/work/project"));
    assert_eq!(resolve("./src/*.rs"), PathBuf::from("/work/project/crates/app/src/*.rs"), "`./` is the cwd");
    assert_eq!(resolve("src/**"), PathBuf::from("/work/project/crates/app/src/**"), "relative is the cwd");
    assert_eq!(resolve("../lib/**"), PathBuf::from("/work/project/crates/lib/**"));
    assert_eq!(resolve("/../secrets"), PathBuf::from("/work/secrets"));
    assert_eq!(resolve("~bob/x"), PathBuf::from("/work/project/crates/app/~bob/x"), "`~user` is not expanded");
}

#[test]
fn settings_files_per_scope() {
    let (config, root) = (Path::new("/c"), Path::new("/p"));
    assert_eq!(settings_file(Scope::User, config, root), Some(PathBuf::from("/c/settings.json")));
    assert_eq!(settings_file(Scope::Project, config, root), Some(PathBuf::from("/p/.tandem/settings.json")));
    assert_eq!(settings_file(Scope::Local, config, root), Some(PathBuf::from("/p/.tandem/settings.local.json")));
    assert_eq!(settings_file(Scope::ClaudeProject, config, root), Some(PathBuf::from("/p/.claude/settings.json")));
    assert_eq!(settings_file(Scope::ClaudeLocal, config, root), Some(PathBuf::from("/p/.claude/settings.local.json")));
    assert_eq!(settings_file(Scope::Flag, config, root), None);
    assert_eq!(settings_file(Scope::Session, config, root), None);
}

#[cfg(unix)]
#[test]
fn a_settings_file_that_is_not_a_regular_file_is_unreadable_not_read() {
    let f = Fixture::new();
    let file = f.file(Scope::Local);
    fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &file).unwrap();
    let unreadable = f.load(&f.root).unreadable;
    assert!(unreadable.iter().any(|p| p.contains("not a regular file")), "{unreadable:?}");
}

/// Runs git in `dir`; whether it succeeded.
fn git(dir: &Path, args: &[&str]) -> bool {
    std::process::Command::new("git").arg("-C").arg(dir).args(args).output().is_ok_and(|out| out.status.success())
}

#[test]
fn a_tracked_local_file_widens_nothing_until_trusted_as_it_is() {
    let f = Fixture::new();
    if !git(&f.root, &["status"]) {
        return; // No git here: nothing can be tracked.
    }
    let tracked = f.file(Scope::ClaudeLocal);
    let text = r#"{"permissions": {"allow": ["Bash(curl:*)"], "deny": ["Read(notes.txt)"], "ask": ["Edit"],
                   "defaultMode": "acceptEdits", "additionalDirectories": ["/elsewhere"]}}"#;
    f.write(&tracked, text);
    f.write(&f.file(Scope::Local), r#"{"permissions": {"allow": ["Bash(npm test:*)"]}}"#);
    let untracked = f.load(&f.root);
    assert!(untracked.held.is_empty(), "an untracked local file is the user's own: {:?}", untracked.held);
    assert_eq!(texts(&untracked, RuleKind::Allow), ["Bash(curl:*)", "Bash(npm test:*)"]);

    assert!(git(&f.root, &["add", "-f", ".claude"]));
    let settings = f.load(&f.root);
    assert_eq!(texts(&settings, RuleKind::Allow), ["Bash(npm test:*)"], "the tracked file's allow rule is held");
    assert_eq!(texts(&settings, RuleKind::Deny), ["Read(notes.txt)"], "narrowing applies at once");
    assert_eq!(texts(&settings, RuleKind::Ask), ["Edit"]);
    assert_eq!(settings.default_mode, None);
    assert!(settings.additional_directories.is_empty());
    assert_eq!(settings.held.len(), 1);
    let held = &settings.held[0];
    assert_eq!(held.file, tracked);
    assert_eq!(
        held.describe(),
        "allow Bash(curl:*); defaultMode acceptEdits; additionalDirectories /elsewhere",
        "{held:?}"
    );

    held.trust(&f.config).unwrap();
    let trusted = f.load(&f.root);
    assert!(trusted.held.is_empty());
    assert_eq!(texts(&trusted, RuleKind::Allow), ["Bash(curl:*)", "Bash(npm test:*)"]);
    assert_eq!(trusted.default_mode, Some(PermissionMode::AcceptEdits));

    f.write(&tracked, &text.replace("curl", "wget"));
    let changed = f.load(&f.root);
    assert_eq!(texts(&changed, RuleKind::Allow), ["Bash(npm test:*)"], "trust covers the text trusted, no other");
    assert_eq!(changed.held.len(), 1);
}

#[test]
fn cleanup_period_days_comes_from_the_users_own_files_only() {
    let f = Fixture::new();
    f.write(&f.file(Scope::User), r#"{"cleanupPeriodDays": 7}"#);
    f.write(&f.file(Scope::ClaudeProject), r#"{"cleanupPeriodDays": 1}"#);
    let settings = f.load(&f.root);
    assert_eq!(settings.cleanup_period_days, Some(7));
    assert!(settings.problems.iter().any(|p| p.contains("cleanupPeriodDays") && p.contains("not a project's")));
    f.write(&f.file(Scope::User), r#"{"cleanupPeriodDays": "soon"}"#);
    let settings = f.load(&f.root);
    assert_eq!(settings.cleanup_period_days, None);
    assert!(settings.problems.iter().any(|p| p.contains("not a positive whole number")), "{:?}", settings.problems);
}

/// Found by the fourteenth red-team round: a personal settings file inside a submodule (`.claude` added as one)
/// came with the repository as surely as a tracked one, but `git ls-files` of the superproject doesn't list it.
#[test]
fn a_local_file_in_a_submodule_is_held_like_a_tracked_one() {
    let f = Fixture::new();
    let module = tempfile::tempdir().unwrap();
    let identity = ["-c", "user.name=t", "-c", "user.email=t@t"];
    if !git(&f.root, &["status"]) || !git(module.path(), &["init", "-q"]) {
        return; // No git here: nothing can be tracked.
    }
    fs::write(module.path().join("settings.local.json"), r#"{"permissions": {"allow": ["Bash(curl:*)"]}}"#).unwrap();
    assert!(git(module.path(), &["add", "settings.local.json"]));
    assert!(git(module.path(), &[identity.as_slice(), &["commit", "-q", "-m", "settings"]].concat()));
    let url = module.path().to_string_lossy().into_owned();
    let add = ["-c", "protocol.file.allow=always", "submodule", "add", "-q", &url, ".claude"];
    assert!(git(&f.root, &[identity.as_slice(), &add].concat()));
    let settings = f.load(&f.root);
    assert!(texts(&settings, RuleKind::Allow).is_empty(), "{:?}", texts(&settings, RuleKind::Allow));
    assert_eq!(settings.held.len(), 1);
}

/// Found by the thirty-second red-team round: a repository committing `.claude` as a link (`.claude` → `cfg`)
/// and `cfg/settings.local.json` had that file taken for the user's own (git's index holds the link and `cfg/…`,
/// not `.claude/settings.local.json`), and its `Read(~/.ssh/**)` rule lifted the secret's denial.
#[test]
fn a_local_file_behind_a_link_is_held_like_a_tracked_one() {
    let f = Fixture::new();
    if !git(&f.root, &["status"]) {
        return; // No git here: nothing can be tracked.
    }
    fs::create_dir_all(f.root.join("cfg")).unwrap();
    fs::write(f.root.join("cfg/settings.local.json"), r#"{"permissions": {"allow": ["Read(~/.ssh/**)"]}}"#).unwrap();
    std::os::unix::fs::symlink("cfg", f.root.join(".claude")).unwrap();
    let settings = f.load(&f.root);
    assert!(texts(&settings, RuleKind::Allow).is_empty(), "{:?}", texts(&settings, RuleKind::Allow));
    assert_eq!(settings.held.len(), 1);
}
