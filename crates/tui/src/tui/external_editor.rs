//! Opening `$VISUAL`/`$EDITOR` on a proposed file content (the `e` key of the permission dialog).

use std::path::Path;
use std::process::Command;

/// Runs the editor on `path` itself (a memory topic file the user wants to change).
pub(super) fn edit_in_place(path: &Path) -> Result<(), String> {
    run_editor(path)
}

/// Writes `content` to a temp file named like `path` (so the editor picks the right syntax), runs the editor
/// on it, and returns what the user saved. The terminal must be restored by the caller around this call.
pub(super) fn edit(path: &Path, content: &str) -> Result<String, String> {
    let extension = path.extension().and_then(|ext| ext.to_str()).map(|ext| format!(".{ext}")).unwrap_or_default();
    let file = tempfile::Builder::new()
        .prefix("tandem-edit-")
        .suffix(&extension)
        .tempfile()
        .map_err(|err| format!("cannot create a temp file: {err}"))?;
    std::fs::write(file.path(), content).map_err(|err| format!("cannot write the temp file: {err}"))?;
    run_editor(file.path())?;
    std::fs::read_to_string(file.path()).map_err(|err| format!("cannot read the edited file: {err}"))
}

/// `$VISUAL`, else `$EDITOR`, else `vi`, on `path`; waits for it to exit.
fn run_editor(path: &Path) -> Result<(), String> {
    let editor = std::env::var("VISUAL")
        .ok()
        .filter(|value| !value.trim().is_empty())
        .or_else(|| std::env::var("EDITOR").ok().filter(|value| !value.trim().is_empty()))
        .unwrap_or_else(|| "vi".to_owned());
    // The editor variable may carry arguments (`code --wait`): let the shell split it.
    let status = Command::new("/bin/sh")
        .arg("-c")
        .arg(format!("{editor} \"$1\""))
        .arg("sh")
        .arg(path)
        .status()
        .map_err(|err| format!("cannot run {editor}: {err}"))?;
    if !status.success() {
        return Err(format!("{editor} exited with {status}; nothing was changed"));
    }
    Ok(())
}
