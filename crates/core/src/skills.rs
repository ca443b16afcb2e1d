//! Skills in Claude Code's layout: a directory with a `SKILL.md` in `.claude/skills/` (and tandem's
//! `.tandem/skills/`) of the project, or the user's `~/.claude/skills/` (and `<config dir>/skills/`). Only each
//! skill's name and description go to the model up front (in the `Skill` tool's description, which is part of the
//! cached prefix); the `Skill` tool loads the whole file when the model decides a skill applies.

use std::path::{Path, PathBuf};

use crate::front_matter::Document;

/// One skill.
#[derive(Clone, Debug)]
pub struct Skill {
    pub name: String,
    pub description: String,
    /// The skill's directory (its other files are readable).
    pub dir: PathBuf,
    /// `project` or `user`.
    pub scope: &'static str,
}

impl Skill {
    pub fn file(&self) -> PathBuf {
        self.dir.join(SKILL_FILE)
    }
}

/// The skill file's name in its directory.
pub const SKILL_FILE: &str = "SKILL.md";

/// Every skill found, and what could not be used.
#[derive(Clone, Debug, Default)]
pub struct SkillCatalog {
    pub skills: Vec<Skill>,
    /// One line per problem, `path: why`.
    pub problems: Vec<String>,
}

impl SkillCatalog {
    pub fn find(&self, name: &str) -> Option<&Skill> {
        self.skills.iter().find(|skill| skill.name == name)
    }
}

/// The directories skills are read from, project ones first (a project skill wins over a user one).
pub fn directories(
    project_root: &Path,
    claude_user_dir: Option<&Path>,
    config_dir: &Path,
) -> Vec<(PathBuf, &'static str)> {
    crate::front_matter::extension_dirs("skills", project_root, claude_user_dir, config_dir)
}

/// Reads every skill of `dirs`. Never fails: problems are in the catalog.
pub fn load(dirs: &[(PathBuf, &'static str)]) -> SkillCatalog {
    let mut catalog = SkillCatalog::default();
    for (root, scope) in dirs {
        if !crate::front_matter::readable_dir(root, scope, &mut catalog.problems) {
            continue;
        }
        let Ok(entries) = std::fs::read_dir(root) else { continue };
        let mut dirs: Vec<PathBuf> = entries.flatten().map(|entry| entry.path()).collect();
        for link in dirs.iter().filter(|path| path.is_dir() && !crate::front_matter::is_real_dir(path)) {
            catalog
                .problems
                .push(format!("{}: a symbolic link, which tandem does not follow; not a skill", link.display()));
        }
        dirs.retain(|path| crate::front_matter::is_real_dir(path));
        dirs.sort();
        for dir in dirs {
            let file = dir.join(SKILL_FILE);
            if std::fs::symlink_metadata(&file).is_err() {
                catalog.problems.push(format!("{}: no {SKILL_FILE} in it; not a skill", dir.display()));
                continue;
            }
            match read_skill(&dir, &file, scope) {
                Ok((skill, unused)) => {
                    if !unused.is_empty() {
                        catalog.problems.push(format!(
                            "{}: {} not applied by tandem (the skill loads without it)",
                            file.display(),
                            unused.join(", ")
                        ));
                    }
                    if let Some(existing) = catalog.find(&skill.name) {
                        catalog.problems.push(format!(
                            "{}: the skill {} is also in {}, which is used",
                            file.display(),
                            skill.name,
                            existing.dir.display()
                        ));
                        continue;
                    }
                    catalog.skills.push(skill);
                }
                Err(why) => catalog.problems.push(format!("{}: {why}; the skill is not available", file.display())),
            }
        }
    }
    catalog
}

/// Front matter Claude Code acts on that tandem does not (other fields, like `license`, are only metadata).
const UNAPPLIED_SKILL_FIELDS: &[&str] = &["allowed-tools", "model", "disable-model-invocation", "context", "agent"];

/// The skill, and the fields it has that tandem does not apply.
fn read_skill(dir: &Path, file: &Path, scope: &'static str) -> Result<(Skill, Vec<String>), String> {
    let text = crate::front_matter::read_regular_file(file)?;
    let doc = Document::parse(&text)?;
    let unused: Vec<String> =
        doc.keys().filter(|key| UNAPPLIED_SKILL_FIELDS.contains(key)).map(str::to_owned).collect();
    let folder = dir.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
    let name = doc.text("name").filter(|name| !name.trim().is_empty()).unwrap_or(folder);
    if !name.chars().all(|ch| ch.is_alphanumeric() || matches!(ch, '-' | '_' | ':' | '.')) {
        return Err(format!("the name {name:?} has characters a skill name can't (letters, digits, - and _)"));
    }
    let description = doc
        .text("description")
        .filter(|text| !text.trim().is_empty())
        .or_else(|| {
            let paragraph =
                doc.body.split("\n\n").map(str::trim).find(|part| !part.is_empty() && !part.starts_with('#'));
            paragraph.map(|text| text.chars().take(300).collect())
        })
        .ok_or("it has no description (front matter `description:`), so the model could never know when to use it")?;
    let description = description.split_whitespace().collect::<Vec<_>>().join(" ");
    Ok((Skill { name, description, dir: dir.to_path_buf(), scope }, unused))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skills_are_found_with_their_descriptions() {
        let dir = tempfile::tempdir().unwrap();
        let skills = dir.path().join(".claude/skills");
        std::fs::create_dir_all(skills.join("pdf")).unwrap();
        std::fs::write(
            skills.join("pdf/SKILL.md"),
            "---\nname: pdf-forms\ndescription: Fill in PDF forms.\n  Use when a PDF is mentioned.\n---\n# PDF\nSteps…",
        )
        .unwrap();
        std::fs::create_dir_all(skills.join("empty")).unwrap();
        std::fs::create_dir_all(skills.join("silent")).unwrap();
        std::fs::write(skills.join("silent/SKILL.md"), "---\nname: silent\n---\n# Title only\n").unwrap();
        let catalog = load(&[(skills, "project")]);
        assert_eq!(catalog.skills.len(), 1);
        assert_eq!(catalog.skills[0].name, "pdf-forms");
        assert_eq!(catalog.skills[0].description, "Fill in PDF forms. Use when a PDF is mentioned.");
        let problems = catalog.problems.join("\n");
        assert!(problems.contains("no SKILL.md") && problems.contains("no description"), "{problems}");
    }

    #[cfg(unix)]
    #[test]
    fn a_linked_skill_file_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let secret = dir.path().join("id_rsa");
        std::fs::write(&secret, "-----BEGIN OPENSSH PRIVATE KEY-----\nsecret\n").unwrap();
        let skills = dir.path().join(".claude/skills");
        std::fs::create_dir_all(skills.join("setup")).unwrap();
        std::os::unix::fs::symlink(&secret, skills.join("setup/SKILL.md")).unwrap();
        std::os::unix::fs::symlink(dir.path(), skills.join("linked-dir")).unwrap();
        let catalog = load(&[(skills, "project")]);
        assert!(catalog.skills.is_empty(), "{:?}", catalog.skills);
        let problems = catalog.problems.join("\n");
        assert!(!problems.contains("secret") && problems.contains("symbolic link"), "{problems}");
    }

    /// Found by the twentieth red-team round: a repository that links `.claude/skills` (or `.claude` itself) to a
    /// directory elsewhere had the skills there described to the model, and loaded with a listing of their
    /// directory, unasked. A user's own skills directory may be a link.
    #[cfg(unix)]
    #[test]
    fn a_projects_linked_skills_directory_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = dir.path().join("other-project/.claude/skills");
        std::fs::create_dir_all(elsewhere.join("notes")).unwrap();
        std::fs::write(elsewhere.join("notes/SKILL.md"), "---\nname: notes\ndescription: CANARY\n---\nbody").unwrap();
        let linked_dir = dir.path().join("a/.claude");
        std::fs::create_dir_all(&linked_dir).unwrap();
        std::os::unix::fs::symlink(&elsewhere, linked_dir.join("skills")).unwrap();
        let linked_claude = dir.path().join("b");
        std::fs::create_dir_all(&linked_claude).unwrap();
        std::os::unix::fs::symlink(dir.path().join("other-project/.claude"), linked_claude.join(".claude")).unwrap();
        for skills in [linked_dir.join("skills"), linked_claude.join(".claude/skills")] {
            let catalog = load(&[(skills, "project")]);
            assert!(catalog.skills.is_empty(), "{:?}", catalog.skills);
            assert!(catalog.problems.join("\n").contains("symbolic link"), "{:?}", catalog.problems);
        }
        assert_eq!(load(&[(linked_dir.join("skills"), "user")]).skills.len(), 1, "the user's own link is followed");
    }
}
