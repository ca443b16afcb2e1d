//! What rewind and the API inspector's replay say across the protocol: the prompts a session can go back to,
//! what going back would change, what it did, and what a replayed request got back.

use serde::{Deserialize, Serialize};

/// A prompt the session can go back to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RewindPointView {
    pub seq: u64,
    pub text: String,
    /// The files tandem's tools changed from this prompt on (as shown: relative to the working directory).
    pub files: Vec<String>,
    /// The prompt is still in the conversation: the conversation can go back to it (otherwise only files can).
    pub in_conversation: bool,
}

/// Which prompt a rewind goes back to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", content = "data", rename_all = "snake_case")]
pub enum RewindTarget {
    /// By its number ([`RewindPointView::seq`]).
    Prompt(u64),
    /// By the id its host gave it ([`super::Op::NamePrompt`]).
    Message(String),
}

/// Of one file (as shown in [`RewindFileView::path`]), which hunks of going back go back: one flag per hunk of
/// the diff from `now` to `then` (`tandem_core::tools::diff::hunks`, default context); the rest stay as now.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RewindHunks {
    pub path: String,
    pub restore: Vec<bool>,
    /// [`RewindFileView::now_hash`] of the preview the hunks were chosen in: a file changed since is left alone.
    pub now_hash: Option<String>,
    /// The preview showed it as a conflict: it stays as it is.
    pub conflict: bool,
}

/// One file going back: as it is now and as it was then (`None`: no file).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RewindFileView {
    pub path: String,
    pub now: Option<String>,
    pub then: Option<String>,
    /// A hash of the file as it is now (`None`: missing), sent back with chosen hunks.
    pub now_hash: Option<String>,
    /// Changed outside tandem since tandem last wrote it: it is left as it is.
    pub conflict: bool,
    /// Not text: it goes back whole or not at all (`now`/`then` are not shown).
    pub binary: bool,
    /// It did not exist then: going back removes it.
    pub removed: bool,
    /// Why it is a conflict.
    pub why: Option<String>,
}

/// What a rewind did (or, dry, would do).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RewindOutcome {
    /// The prompt gone back to (front ends put it back in the input), and its number.
    pub prompt: String,
    pub seq: u64,
    /// The conversation now, when it was rewound.
    pub messages: Option<Vec<crate::conversation::Message>>,
    /// Files put back (as shown): as they were, or removed when they did not exist then.
    pub restored: Vec<String>,
    /// Of those, the ones removed.
    pub removed: Vec<String>,
    /// Of those, the ones only some hunks of went back.
    pub partly: Vec<String>,
    /// The same, as full paths.
    pub changed: Vec<std::path::PathBuf>,
    /// Lines going back adds and removes.
    pub insertions: usize,
    pub deletions: usize,
    pub conflicts: Vec<String>,
    pub problems: Vec<String>,
    /// Nothing was done: this is what would be.
    pub dry_run: bool,
}

/// What a replayed request got back.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReplayAnswer {
    pub request: u64,
    /// The body was edited before it was sent.
    pub edited: bool,
    pub text: String,
    /// The tool calls it asked for (`name input`), not run.
    pub tool_calls: Vec<String>,
    pub usage: Option<crate::conversation::Usage>,
    pub error: Option<String>,
}
