//! The session log: a new one, or the one the options continue (copied first when forking), with the conversation
//! to continue from; and the cleaning of old ones.

use std::path::Path;
use std::sync::Arc;

use super::{Places, SessionChoice, SetupError};
use crate::agent::Resume;
use crate::config::ResolvedProvider;
use crate::models::ModelInfo;
use crate::session::{self, SessionMeta, SessionSummary, SessionWriter};

/// The log the session writes, the conversation it continues (none for a new session), and the private directory
/// an unsaved session's log is in.
pub(super) struct OpenedLog {
    pub(super) writer: SessionWriter,
    pub(super) resume: Option<Resume>,
    pub(super) unsaved: Option<Arc<tempfile::TempDir>>,
}

/// Opens the session's log.
pub(super) fn open(
    choice: &SessionChoice,
    places: &Places<'_>,
    resolved: &ResolvedProvider,
    model: &ModelInfo,
    notices: &mut Vec<String>,
) -> Result<OpenedLog, SetupError> {
    let data_dir = &places.paths.data_dir;
    // `--no-session-persistence`: the log is written where nothing lists or resumes it, a private directory
    // removed when the session ends.
    let unsaved = match choice.no_persistence {
        true => Some(Arc::new(private_dir()?)),
        false => None,
    };
    let log_dir = unsaved.as_ref().map_or(data_dir.as_path(), |dir| dir.path());
    let Some(summary) = continued(choice, data_dir, places.cwd)? else {
        let writer = create(choice, log_dir, places.cwd, &resolved.endpoint.name, &model.id)?;
        return Ok(OpenedLog { writer, resume: None, unsaved });
    };
    let loaded = session::load(&summary.path).map_err(|err| SetupError(err.to_string()))?;
    notices.extend(loaded.damage_note());
    if choice.id.is_some() && !choice.fork {
        return Err(SetupError(
            "--session-id with --resume or --continue needs --fork-session (the copy gets the id)".into(),
        ));
    }
    let fork_id = choice.id.clone().map(|id| id.to_ascii_lowercase()).unwrap_or_else(session::new_session_id);
    let path = match (choice.fork, &unsaved) {
        (true, _) => session::fork(log_dir, &summary.path, &fork_id),
        // Continued without being saved: a copy under the same id, which goes away with the session.
        (false, Some(dir)) => session::fork(dir.path(), &summary.path, &summary.id),
        (false, None) => Ok(summary.path.clone()),
    }
    .map_err(|err| SetupError(format!("cannot fork {}: {err}", summary.path.display())))?;
    let writer = SessionWriter::reopen(&path).map_err(|err| SetupError(err.to_string()))?;
    Ok(OpenedLog { writer, resume: Some(Resume::from(loaded)), unsaved })
}

/// The private directory (mode 700) an unsaved session's log is in: removed when the session is dropped, and
/// by the shutdown that a signal or a second Ctrl-C runs, which no destructor survives.
fn private_dir() -> Result<tempfile::TempDir, SetupError> {
    let mut builder = tempfile::Builder::new();
    builder.prefix("tandem-unsaved-");
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700));
    let dir = builder
        .tempdir()
        .map_err(|err| SetupError(format!("--no-session-persistence: cannot make a private directory: {err}")))?;
    crate::fs_util::removed_at_exit::remove_at_exit(dir.path().to_path_buf());
    Ok(dir)
}

/// The saved session `--resume` or `--continue` names, if either is given.
fn continued(choice: &SessionChoice, data_dir: &Path, cwd: &Path) -> Result<Option<SessionSummary>, SetupError> {
    match (&choice.resume, choice.continue_latest) {
        (Some(id), _) if !id.is_empty() => {
            Ok(Some(session::find(data_dir, id).map_err(|err| SetupError(err.to_string()))?))
        }
        (Some(_), _) => {
            Err(SetupError("--resume needs a session id here: see `tandem sessions` (the app can pick one)".into()))
        }
        (None, true) => session::latest_for_cwd(data_dir, cwd).map(Some).ok_or_else(|| {
            SetupError(format!(
                "no saved session to continue in {}: start one with `tandem`{}",
                cwd.display(),
                unreadable_sessions_note(data_dir)
            ))
        }),
        (None, false) => Ok(None),
    }
}

/// A new session's log, under the id asked for or a new one.
fn create(
    choice: &SessionChoice,
    data_dir: &Path,
    cwd: &Path,
    provider: &str,
    model: &str,
) -> Result<SessionWriter, SetupError> {
    if choice.fork {
        return Err(SetupError("--fork-session needs --continue or --resume".into()));
    }
    let mut meta = SessionMeta::new(cwd, provider, model);
    if let Some(id) = &choice.id {
        if !is_uuid(id) {
            return Err(SetupError(format!("invalid --session-id {id:?}: it must be a UUID")));
        }
        meta.id = id.to_ascii_lowercase();
    }
    SessionWriter::create(data_dir, meta).map_err(|err| match err.kind() {
        std::io::ErrorKind::AlreadyExists => {
            SetupError("--session-id: a session with this id exists already (resume it with --resume)".into())
        }
        _ => SetupError(format!("cannot create the session log in {}: {err}", data_dir.display())),
    })
}

/// Deletes sessions older than `cleanupPeriodDays` (30 by default), never `in_use`: a stat per session, done at
/// every start (as Claude Code does), so that disk use has a bound.
pub(super) fn remove_old(data_dir: &Path, days: Option<u64>, in_use: &str) {
    let days = days.unwrap_or(session::cleanup::DEFAULT_PERIOD_DAYS);
    let cleaned = session::cleanup::remove_old(data_dir, days, in_use);
    if cleaned.sessions > 0 {
        tracing::info!(sessions = cleaned.sessions, bytes = cleaned.bytes, days, "removed old sessions");
    }
}

/// For "no saved session": the session files that could not be read at all (a damaged first line), which may be
/// the one the user meant.
fn unreadable_sessions_note(data_dir: &Path) -> String {
    let unreadable = session::unreadable(data_dir);
    match unreadable.as_slice() {
        [] => String::new(),
        [(_, why)] => format!(" (one session file could not be read: {why})"),
        [(_, why), ..] => {
            format!(" ({} session files could not be read, e.g. {why}; `tandem sessions` lists them)", unreadable.len())
        }
    }
}

/// A UUID in its hyphenated form (`8-4-4-4-12` hex digits), the form session ids are written in.
fn is_uuid(text: &str) -> bool {
    text.len() == 36 && uuid::Uuid::try_parse(text).is_ok()
}

#[cfg(test)]
mod tests {
    use super::is_uuid;

    #[test]
    fn session_ids_are_hyphenated_uuids() {
        assert!(is_uuid("123e4567-e89b-12d3-a456-426614174000"));
        assert!(is_uuid("123E4567-E89B-12D3-A456-426614174000"));
        assert!(!is_uuid("123e4567e89b12d3a456426614174000"), "the simple form is not how ids are written");
        assert!(!is_uuid("{123e4567-e89b-12d3-a456-426614174000}"));
        assert!(!is_uuid("123e4567-e89b-12d3-a456-42661417400g"));
    }
}
