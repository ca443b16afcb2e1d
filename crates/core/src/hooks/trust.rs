//! Which projects' hooks the user trusted, kept in the user's config directory (never in the project, which a
//! repository could fill with a "trusted" mark of its own). Trust covers the hooks exactly as they were: a
//! changed or added project hook must be trusted again.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

const TRUST_FILE: &str = "trusted-hooks.json";

fn file(config_dir: &Path) -> PathBuf {
    config_dir.join(TRUST_FILE)
}

fn read(config_dir: &Path) -> Map<String, Value> {
    crate::tools::fs_util::read_json_object(&file(config_dir))
}

/// Whether the user trusted exactly these project hooks (`fingerprint`) for `project_root`.
pub fn is_trusted(config_dir: &Path, project_root: &Path, fingerprint: &str) -> bool {
    read(config_dir).get(&project_root.display().to_string()).and_then(Value::as_str) == Some(fingerprint)
}

/// Remembers that the user trusts these project hooks (written atomically).
pub fn trust(config_dir: &Path, project_root: &Path, fingerprint: &str) -> std::io::Result<PathBuf> {
    let mut map = read(config_dir);
    map.insert(project_root.display().to_string(), Value::String(fingerprint.to_owned()));
    std::fs::create_dir_all(config_dir)?;
    let path = file(config_dir);
    let mut temp = tempfile::NamedTempFile::new_in(config_dir)?;
    std::io::Write::write_all(
        &mut temp,
        serde_json::to_string_pretty(&Value::Object(map)).unwrap_or_default().as_bytes(),
    )?;
    temp.persist(&path).map_err(|err| err.error)?;
    Ok(path)
}
