//! The demo's example project: a scratch copy written to a temporary directory, removed when tandem exits.

use std::path::Path;

/// The files of `assets/demo-project`, built into the binary.
pub(super) const FILES: &[(&str, &str)] = &[
    ("README.md", include_str!("../../../../assets/demo-project/README.md")),
    ("greet.sh", include_str!("../../../../assets/demo-project/greet.sh")),
    ("test.sh", include_str!("../../../../assets/demo-project/test.sh")),
];

/// Writes the example project into a new temporary directory.
pub fn scratch_copy() -> std::io::Result<tempfile::TempDir> {
    let dir = tempfile::Builder::new().prefix("tandem-demo-").tempdir()?;
    write_into(dir.path())?;
    Ok(dir)
}

fn write_into(dir: &Path) -> std::io::Result<()> {
    for (name, content) in FILES {
        std::fs::write(dir.join(name), content)?;
    }
    Ok(())
}
