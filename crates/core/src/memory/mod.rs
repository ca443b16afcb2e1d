//! Memory the model keeps across sessions, in layers:
//!
//! 1. the index, `MEMORY.md`, one short line per topic, always in the prompt ([`MemoryStore::index_text`]);
//! 2. topic files, markdown with a small front matter (`name`, `description`), which the model reads on demand
//!    (the index line gives the path) — so the prompt pays for a line per memory, not for every memory.
//!
//! Two scopes: the user's (`<config_dir>/memory/`, follows the user into every project) and the project's
//! (`<project_root>/.tandem/memory/`, inside the workspace so it can be reviewed and shared like code).
//! Saving goes through [`MemoryStore::plan_save`] (what the permission preview shows) and
//! [`MemoryStore::save`] (the same change, written atomically).

pub mod index;

use std::fs::{self, File};
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::fs_util;
use index::{INDEX_FILE, MAX_INDEX_BYTES, MAX_INDEX_LINES};

/// Where a memory is kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum MemoryScope {
    /// This project's.
    Project,
    /// The user's, in every project.
    User,
}

impl MemoryScope {
    pub fn as_str(self) -> &'static str {
        match self {
            MemoryScope::User => "user",
            MemoryScope::Project => "project",
        }
    }
}

/// One saved memory as the index lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemoryTopic {
    /// The topic file.
    pub path: PathBuf,
    /// Its index line (title, file link and description), without the list marker.
    pub line: String,
}

/// The two memory directories of a session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemoryStore {
    pub user_dir: PathBuf,
    pub project_dir: PathBuf,
}

/// What a save will write, computed before asking permission and written as is by [`MemoryStore::save`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SavePlan {
    pub scope: MemoryScope,
    /// The title, on one line.
    pub title: String,
    pub topic_path: PathBuf,
    /// The topic file now (`None` when it does not exist).
    pub old_topic: Option<String>,
    pub new_topic: String,
    pub index_path: PathBuf,
    /// The index now (`None` when it does not exist).
    pub old_index: Option<String>,
    pub new_index: String,
    /// Entries in `new_index`.
    pub entries: usize,
    /// The topic's file name and index line, to upsert again if the index changed after planning.
    file: String,
    line: String,
}

impl SavePlan {
    /// Saving would change nothing on disk.
    pub fn is_noop(&self) -> bool {
        self.old_topic.as_deref() == Some(self.new_topic.as_str())
            && self.old_index.as_deref() == Some(self.new_index.as_str())
    }
}

impl MemoryStore {
    /// User memory in `<config_dir>/memory`, project memory in `<project_root>/.tandem/memory`.
    pub fn new(config_dir: &Path, project_root: &Path) -> Self {
        MemoryStore { user_dir: config_dir.join("memory"), project_dir: project_root.join(".tandem").join("memory") }
    }

    pub fn dir(&self, scope: MemoryScope) -> &Path {
        match scope {
            MemoryScope::User => &self.user_dir,
            MemoryScope::Project => &self.project_dir,
        }
    }

    /// The index file of a scope.
    pub fn index_path(&self, scope: MemoryScope) -> PathBuf {
        self.dir(scope).join(INDEX_FILE)
    }

    /// The topic file a title is saved to (whether or not it exists).
    pub fn topic_path(&self, title: &str, scope: MemoryScope) -> PathBuf {
        self.dir(scope).join(index::file_name(&index::one_line(title)))
    }

    /// The text placed in the prompt: both indexes with headings and the absolute directory of each scope, or ""
    /// when both are empty. Read fresh each time (cheap: two small files), so saves show up on the next turn.
    /// An index grown past the limits by hand is cut, with a note, so it can't crowd the prompt.
    /// The topics both indexes list (project first), for `/memory`: each topic file and its index line.
    pub fn topics(&self) -> Vec<MemoryTopic> {
        let mut topics = Vec::new();
        for scope in [MemoryScope::Project, MemoryScope::User] {
            // Only a regular file: a FIFO in its place would block the read forever.
            let path = self.index_path(scope);
            let regular = std::fs::metadata(&path).is_ok_and(|meta| meta.is_file());
            let index = if regular { std::fs::read_to_string(&path).unwrap_or_default() } else { String::new() };
            for line in index.lines() {
                if let Some(file) = index::entry_file(line) {
                    topics.push(MemoryTopic {
                        path: self.dir(scope).join(file),
                        line: line.trim_start_matches("- ").to_owned(),
                    });
                }
            }
        }
        topics
    }

    pub fn index_text(&self) -> String {
        let sections: Vec<(MemoryScope, Option<String>)> =
            [MemoryScope::User, MemoryScope::Project].into_iter().map(|s| (s, self.prompt_index(s))).collect();
        if sections.iter().all(|(_, text)| text.is_none()) {
            return String::new();
        }
        let mut out = String::from(
            "# Memory\n\nMemories saved in earlier sessions, one line per topic. Each link is a file in that \
             section's directory: Read it when the topic is relevant to the task.\n",
        );
        for (scope, text) in sections {
            let title = match scope {
                MemoryScope::User => "User memory",
                MemoryScope::Project => "Project memory",
            };
            out.push_str(&format!("\n## {title} ({})\n\n", self.dir(scope).display()));
            out.push_str(text.as_deref().unwrap_or("(no entries)"));
            out.push('\n');
        }
        out
    }

    /// One scope's index for the prompt, cut to the limits; `None` when missing or blank.
    fn prompt_index(&self, scope: MemoryScope) -> Option<String> {
        let path = self.index_path(scope);
        // A linked index (to `/proc/self/environ`, say) would put another file into every prompt.
        if links_on_the_way(self.dir(scope), &path) || !std::fs::metadata(&path).ok()?.is_file() {
            return None;
        }
        let mut bytes = Vec::new();
        File::open(&path).ok()?.take(2 * MAX_INDEX_BYTES as u64).read_to_end(&mut bytes).ok()?;
        let text = String::from_utf8_lossy(&bytes);
        let text = text.trim();
        if text.is_empty() {
            return None;
        }
        let mut kept = String::new();
        let mut lines = text.lines();
        for line in lines.by_ref() {
            if kept.lines().count() >= MAX_INDEX_LINES || kept.len() + line.len() + 1 > MAX_INDEX_BYTES {
                let more = 1 + lines.count();
                kept.push_str(&format!(
                    "[… index cut at the limit; {more} more line{} in {}]",
                    if more == 1 { "" } else { "s" },
                    path.display()
                ));
                return Some(kept);
            }
            kept.push_str(line);
            kept.push('\n');
        }
        Some(kept.trim_end().to_owned())
    }

    /// What saving a memory would write, or `Err` with a message for the model (empty fields, an index at its
    /// limits, unreadable files). Same title → same topic file, and its index line is replaced, not duplicated.
    pub fn plan_save(
        &self,
        title: &str,
        description: &str,
        content: &str,
        scope: MemoryScope,
    ) -> Result<SavePlan, String> {
        let title = index::one_line(title);
        let description = index::one_line(description);
        let content = content.trim_matches('\n').trim_end();
        for (field, value) in [("title", title.as_str()), ("description", description.as_str()), ("content", content)] {
            if value.trim().is_empty() {
                return Err(format!("Not saved: the memory's {field} is empty."));
            }
        }
        let file = index::file_name(&title);
        let topic_path = self.dir(scope).join(&file);
        let index_path = self.index_path(scope);
        // Nothing is read through a link either: a repository's `MEMORY.md` linked elsewhere would have its size
        // (or that it is a directory) told to the model before anyone approved the save.
        for path in [&topic_path, &index_path] {
            if links_on_the_way(self.dir(scope), path) {
                return Err(format!(
                    "Not saved: {} is reached through a symbolic link; memory is only kept in plain files.",
                    path.display()
                ));
            }
        }
        let old_topic = read_if_exists(&topic_path)?;
        let old_index = read_if_exists(&index_path)?;
        let line = index::index_line(&title, &file, &description);
        let current = old_index.as_deref().unwrap_or("");
        let new_index = index::upsert(current, &file, &line);
        index::check_limits(current, &new_index, &index_path)?;
        Ok(SavePlan {
            scope,
            new_topic: format!("---\nname: {title}\ndescription: {description}\n---\n{content}\n"),
            entries: index::entry_count(&new_index),
            title,
            topic_path,
            old_topic,
            index_path,
            old_index,
            new_index,
            file,
            line,
        })
    }

    /// Writes the topic file, then its index line, each atomically (temporary file + rename), creating the
    /// directory when needed. The topic goes first so the index never links to a missing file. If the index
    /// changed since the plan was made (another session saved meanwhile), the line is upserted into the current
    /// index instead of overwriting it; the limits are checked again (an error of kind `Other` names them).
    pub fn save(&self, plan: &SavePlan) -> io::Result<()> {
        for path in [&plan.topic_path, &plan.index_path] {
            let dir = path.parent().unwrap_or(path);
            if links_on_the_way(dir, path) {
                return Err(io::Error::other(format!(
                    "{} is reached through a symbolic link; memory is only written to plain files",
                    path.display()
                )));
            }
        }
        let current = read_if_exists(&plan.index_path).map_err(io::Error::other)?;
        let new_index = if current == plan.old_index {
            plan.new_index.clone()
        } else {
            let current = current.as_deref().unwrap_or("");
            let updated = index::upsert(current, &plan.file, &plan.line);
            index::check_limits(current, &updated, &plan.index_path).map_err(io::Error::other)?;
            updated
        };
        fs_util::write_atomic_create_dirs(&plan.topic_path, plan.new_topic.as_bytes())?;
        fs_util::write_atomic_create_dirs(&plan.index_path, new_index.as_bytes())
    }
}

/// Whether `file`, its directory `dir` or the directory above that (`.tandem`, the config dir) is a symbolic
/// link: memory files are plain files in plain directories.
fn links_on_the_way(dir: &Path, file: &Path) -> bool {
    [Some(file), Some(dir), dir.parent()]
        .into_iter()
        .flatten()
        .any(|path| std::fs::symlink_metadata(path).is_ok_and(|meta| meta.file_type().is_symlink()))
}

/// A file's text, `None` when it does not exist; other failures are messages for the model.
fn read_if_exists(path: &Path) -> Result<Option<String>, String> {
    match fs::read(path) {
        Ok(bytes) => Ok(Some(String::from_utf8_lossy(&bytes).into_owned())),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(err) => Err(format!("Cannot read {}: {err}", path.display())),
    }
}

#[cfg(test)]
mod tests;
