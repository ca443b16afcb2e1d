//! `rewind_files {user_message_id, dry_run?}`: the files tandem's tools (and Bash commands) changed since that
//! user message go back to how they were just before it; the conversation stays. Answered, as Claude Code does,
//! with `{canRewind, error, filesChanged, insertions, deletions}`; a dry run only says what would change.

use serde_json::{Value, json};
use tandem_core::agent::OpSender;
use tandem_protocol::{Op, RewindOutcome, RewindTarget, SubmissionId};

/// A rewind sent to the session, waiting for its outcome.
#[derive(Debug)]
pub(super) struct Pending {
    request_id: String,
    dry_run: bool,
}

/// Sends the rewind the request asks for; its answer comes with the session's [`tandem_protocol::Event::Rewound`]
/// of the submission returned.
pub(super) fn request(request_id: &str, request: &Value, ops: &OpSender) -> Result<(SubmissionId, Pending), String> {
    let id = match request.get("user_message_id").or_else(|| request.get("user_message_uuid")) {
        Some(Value::String(id)) if !id.trim().is_empty() => id.clone(),
        _ => return Err("rewind_files needs a user_message_id (the uuid of a user message)".into()),
    };
    let dry_run = match request.get("dry_run") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(dry)) => *dry,
        Some(other) => return Err(format!("dry_run {other} is not true or false")),
    };
    let op = Op::Rewind { to: RewindTarget::Message(id), conversation: false, files: true, hunks: None, dry_run };
    let submission = ops.send(op).map_err(|ended| ended.to_string())?;
    Ok((submission, Pending { request_id: request_id.to_owned(), dry_run }))
}

/// The control response for a rewind's outcome. A dry run that can't rewind says so in a success (as the real
/// CLI's `canRewind: false`); a real one that can't find the message is an error.
pub(super) fn answer(pending: &Pending, outcome: Result<RewindOutcome, String>) -> Value {
    // Files may have gone back even when others could not: that is a success whose `error` says what failed.
    let response = match outcome {
        Ok(outcome) => {
            let mut notes = outcome.problems.clone();
            if !outcome.conflicts.is_empty() {
                notes.push(format!("changed outside tandem since, left as they are: {}", outcome.conflicts.join(", ")));
            }
            json!({
                "canRewind": true,
                "error": if notes.is_empty() { Value::Null } else { json!(notes.join("; ")) },
                "filesChanged": outcome.changed.iter().map(|path| path.display().to_string()).collect::<Vec<_>>(),
                "insertions": outcome.insertions,
                "deletions": outcome.deletions,
            })
        }
        Err(why) if pending.dry_run => json!({"canRewind": false, "error": why}),
        Err(why) => return super::failure(&pending.request_id, &why),
    };
    super::success(&pending.request_id, response)
}
