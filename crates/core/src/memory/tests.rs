use std::fs;

use super::index::MAX_LINE_CHARS;
use super::*;

fn store() -> (tempfile::TempDir, MemoryStore) {
    let tmp = tempfile::tempdir().unwrap();
    let store = MemoryStore::new(&tmp.path().join("config"), &tmp.path().join("repo"));
    (tmp, store)
}

fn save(store: &MemoryStore, title: &str, description: &str, content: &str, scope: MemoryScope) -> SavePlan {
    let plan = store.plan_save(title, description, content, scope).unwrap();
    store.save(&plan).unwrap();
    plan
}

#[test]
fn directories() {
    let store = MemoryStore::new(Path::new("/cfg"), Path::new("/repo"));
    assert_eq!(store.dir(MemoryScope::User), Path::new("/cfg/memory"));
    assert_eq!(store.dir(MemoryScope::Project), Path::new("/repo/.tandem/memory"));
    assert_eq!(store.index_path(MemoryScope::Project), Path::new("/repo/.tandem/memory/MEMORY.md"));
    assert_eq!(store.topic_path("Test  runner", MemoryScope::User), Path::new("/cfg/memory/test-runner.md"));
    assert_eq!(serde_json::to_string(&MemoryScope::Project).unwrap(), "\"project\"");
    assert_eq!(serde_json::from_str::<MemoryScope>("\"user\"").unwrap(), MemoryScope::User);
}

#[test]
fn save_writes_topic_with_front_matter_and_upserts_index() {
    let (_tmp, store) = store();
    let plan = store
        .plan_save("Test runner", "Use cargo nextest\nnot cargo test", "Run `just test`.\n\n", MemoryScope::Project)
        .unwrap();
    assert_eq!(plan.old_topic, None);
    assert_eq!(plan.old_index, None);
    assert_eq!(plan.topic_path, store.project_dir.join("test-runner.md"));
    assert_eq!(
        plan.new_topic,
        "---\nname: Test runner\ndescription: Use cargo nextest not cargo test\n---\nRun `just test`.\n"
    );
    assert_eq!(plan.new_index, "- [Test runner](test-runner.md) — Use cargo nextest not cargo test\n");
    assert_eq!(plan.entries, 1);
    assert!(!store.project_dir.exists(), "planning writes nothing");
    store.save(&plan).unwrap();
    assert_eq!(fs::read_to_string(&plan.topic_path).unwrap(), plan.new_topic);
    assert_eq!(fs::read_to_string(&plan.index_path).unwrap(), plan.new_index);

    save(&store, "Style", "Tabs", "Indent with tabs.", MemoryScope::Project);
    // Same title again: same file, line replaced in place, no duplicate.
    let again = save(&store, "Test runner", "Use just test", "Run `just test` always.", MemoryScope::Project);
    assert_eq!(again.old_topic.as_deref(), Some(plan.new_topic.as_str()));
    assert_eq!(again.topic_path, plan.topic_path);
    assert_eq!(again.entries, 2);
    let index = fs::read_to_string(store.index_path(MemoryScope::Project)).unwrap();
    assert_eq!(index, "- [Test runner](test-runner.md) — Use just test\n- [Style](style.md) — Tabs\n");
    assert!(fs::read_to_string(&plan.topic_path).unwrap().ends_with("---\nRun `just test` always.\n"));

    let same =
        store.plan_save("Test runner", "Use just test", "Run `just test` always.", MemoryScope::Project).unwrap();
    assert!(same.is_noop());
}

#[test]
fn long_descriptions_are_shortened_to_fit_a_line() {
    let (_tmp, store) = store();
    let plan = save(&store, &"Very long title ".repeat(10), &"described at length ".repeat(20), "x", MemoryScope::User);
    let line = plan.new_index.trim_end();
    assert!(line.chars().count() <= MAX_LINE_CHARS && line.ends_with('…'), "{line}");
    // The topic keeps the whole description.
    assert!(plan.new_topic.contains(&"described at length ".repeat(20).trim_end().to_owned()));
}

#[test]
fn empty_fields_are_refused() {
    let (_tmp, store) = store();
    let err = store.plan_save(" \n", "d", "c", MemoryScope::Project).unwrap_err();
    assert_eq!(err, "Not saved: the memory's title is empty.");
    assert!(store.plan_save("t", "d", "\n  \n", MemoryScope::Project).unwrap_err().contains("content is empty"));
    assert!(store.plan_save("t", "", "c", MemoryScope::Project).unwrap_err().contains("description is empty"));
}

#[test]
fn line_limit_refuses_with_consolidate_message() {
    let (_tmp, store) = store();
    let full: String = (0..200).map(|i| format!("- [Entry {i}](entry-{i}.md) — d\n")).collect();
    fs::create_dir_all(&store.user_dir).unwrap();
    fs::write(store.index_path(MemoryScope::User), &full).unwrap();
    let err = store.plan_save("One more", "d", "c", MemoryScope::User).unwrap_err();
    assert!(err.contains("201 lines") && err.contains("limit of 200 lines") && err.contains("Consolidate"), "{err}");
    assert!(!store.user_dir.join("one-more.md").exists());
    // Updating an existing entry needs no room.
    let plan = save(&store, "Entry 7", "updated", "c", MemoryScope::User);
    assert_eq!(plan.entries, 200);
}

#[test]
fn byte_limit_refuses_with_consolidate_message() {
    let (_tmp, store) = store();
    let long = "x".repeat(120);
    let big: String = (0..180).map(|i| format!("- [E{i}](e{i}.md) — {long}\n")).collect();
    assert!(big.len() < MAX_INDEX_BYTES && big.len() > MAX_INDEX_BYTES - 1000, "{}", big.len());
    fs::create_dir_all(&store.project_dir).unwrap();
    fs::write(store.index_path(MemoryScope::Project), &big).unwrap();
    let mut refused = None;
    for i in 0..20 {
        match store.plan_save(&format!("New {i}"), &long, "c", MemoryScope::Project) {
            Ok(plan) => store.save(&plan).unwrap(),
            Err(err) => {
                refused = Some(err);
                break;
            }
        }
    }
    let err = refused.expect("the 25 KB limit refuses a save");
    assert!(err.contains("25 KB") && err.contains("Consolidate"), "{err}");
    let index = fs::read_to_string(store.index_path(MemoryScope::Project)).unwrap();
    assert!(index.len() <= MAX_INDEX_BYTES && index.lines().count() < 200);
}

#[test]
fn index_text_has_both_scopes() {
    let (_tmp, store) = store();
    assert_eq!(store.index_text(), "");
    save(&store, "Likes short answers", "Be terse", "The user wants short answers.", MemoryScope::User);
    let text = store.index_text();
    assert!(text.starts_with("# Memory\n"), "{text}");
    let user = format!(
        "## User memory ({})\n\n- [Likes short answers](likes-short-answers.md) — Be terse\n",
        store.user_dir.display()
    );
    let project = format!("## Project memory ({})\n\n(no entries)\n", store.project_dir.display());
    assert!(text.contains(&user) && text.ends_with(&project), "{text}");
    save(&store, "Build", "just build", "Use just.", MemoryScope::Project);
    let text = store.index_text();
    let user_at = text.find("## User memory").unwrap();
    let project_at = text.find("## Project memory").unwrap();
    assert!(user_at < project_at);
    assert!(text.ends_with("- [Build](build.md) — just build\n"), "{text}");
}

#[test]
fn oversized_index_is_cut_in_the_prompt() {
    let (_tmp, store) = store();
    fs::create_dir_all(&store.project_dir).unwrap();
    let huge: String = (0..250).map(|i| format!("- [E{i}](e{i}.md) — d\n")).collect();
    fs::write(store.index_path(MemoryScope::Project), huge).unwrap();
    let text = store.index_text();
    assert!(text.contains("- [E199](e199.md)") && !text.contains("- [E200]"), "{text}");
    assert!(text.contains("[… index cut at the limit; 50 more lines in "), "{text}");
}

#[test]
fn writes_are_atomic_and_leave_no_temp_files() {
    let (_tmp, store) = store();
    save(&store, "One", "d", "c", MemoryScope::Project);
    save(&store, "One", "d2", "c2", MemoryScope::Project);
    save(&store, "Two", "d", "c", MemoryScope::Project);
    let mut names: Vec<String> =
        fs::read_dir(&store.project_dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    names.sort();
    assert_eq!(names, ["MEMORY.md", "one.md", "two.md"]);
}

#[test]
fn save_merges_into_an_index_changed_after_planning() {
    let (_tmp, store) = store();
    save(&store, "A", "a", "c", MemoryScope::Project);
    let plan = store.plan_save("B", "b", "c", MemoryScope::Project).unwrap();
    // Another session saves meanwhile.
    save(&store, "C", "c", "c", MemoryScope::Project);
    store.save(&plan).unwrap();
    let index = fs::read_to_string(store.index_path(MemoryScope::Project)).unwrap();
    assert_eq!(index, "- [A](a.md) — a\n- [C](c.md) — c\n- [B](b.md) — b\n");
}

#[cfg(unix)]
#[test]
fn linked_memory_files_are_neither_read_into_the_prompt_nor_written_through() {
    let (tmp, store) = store();
    let outside = tmp.path().join("outside.txt");
    fs::write(&outside, "OUTSIDE SECRET").unwrap();
    fs::create_dir_all(store.dir(MemoryScope::Project)).unwrap();
    std::os::unix::fs::symlink(&outside, store.index_path(MemoryScope::Project)).unwrap();
    assert!(!store.index_text().contains("OUTSIDE SECRET"), "a linked index is not read");
    let plan = store.plan_save("Runner", "how tests run", "use just", MemoryScope::Project);
    if let Ok(plan) = plan {
        assert!(store.save(&plan).is_err(), "a linked index is not written through");
    }
    assert_eq!(fs::read_to_string(&outside).unwrap(), "OUTSIDE SECRET");
}

/// Found by the twentieth red-team round: a repository's `MEMORY.md` linked to a file elsewhere was read to plan a
/// save, and the plan's failure told the model that file's size ("would have 401 lines / 3510 bytes"), or that a
/// linked directory was one, before anyone approved the save.
#[test]
fn a_save_reads_nothing_through_a_link() {
    let (tmp, store) = store();
    let outside = tmp.path().join("outside.txt");
    fs::write(&outside, "x\n".repeat(401)).unwrap();
    let dir = store.dir(MemoryScope::Project).to_path_buf();
    fs::create_dir_all(&dir).unwrap();
    std::os::unix::fs::symlink(&outside, dir.join("MEMORY.md")).unwrap();
    let error = store.plan_save("t", "d", "c", MemoryScope::Project).unwrap_err();
    assert!(error.contains("symbolic link") && !error.contains("401"), "{error}");
}
