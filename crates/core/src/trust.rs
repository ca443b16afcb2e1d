//! What the user trusted of the configuration a repository carries — its hooks, and settings files git tracks
//! that widen permissions — kept in the user's config directory (never in the project, which a repository could
//! fill with a "trusted" mark of its own). Trust covers the configuration exactly as it was (a fingerprint of
//! it): anything changed or added must be trusted again.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

/// Which kind of configuration a trust mark is for; each is kept in its own file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Store {
    /// A project's hooks, keyed by the project root.
    Hooks,
    /// A settings file inside a project that git tracks, keyed by the file's path.
    Settings,
}

impl Store {
    fn file(self, config_dir: &Path) -> PathBuf {
        config_dir.join(match self {
            Store::Hooks => "trusted-hooks.json",
            Store::Settings => "trusted-settings.json",
        })
    }
}

fn read(config_dir: &Path, store: Store) -> Map<String, Value> {
    crate::fs_util::read_json_object(&store.file(config_dir))
}

/// Whether the user trusted exactly this configuration (`fingerprint`) for `key`.
pub fn is_trusted(config_dir: &Path, store: Store, key: &Path, fingerprint: &str) -> bool {
    read(config_dir, store).get(&key.display().to_string()).and_then(Value::as_str) == Some(fingerprint)
}

/// Remembers that the user trusts this configuration (written atomically); the file written.
pub fn trust(config_dir: &Path, store: Store, key: &Path, fingerprint: &str) -> std::io::Result<PathBuf> {
    let mut map = read(config_dir, store);
    map.insert(key.display().to_string(), Value::String(fingerprint.to_owned()));
    let path = store.file(config_dir);
    crate::fs_util::write_json_object(&path, &map)?;
    Ok(path)
}
