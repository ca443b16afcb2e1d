//! Saved sessions: one append-only JSONL transcript per session, resumable after a crash or a week.
//!
//! A session lives in `<data_dir>/sessions/<session-id>.jsonl`. The first line is a [`SessionLine::Session`]
//! header; every later line is one event, appended as it happens by a [`SessionWriter`] and flushed at the end
//! of every turn. Files are never rewritten: appending is the only write, so a crash can at worst leave half a
//! last line, which [`load`] ignores (everything before it is restored).
//!
//! Compaction appends a [`SessionLine::CompactBoundary`] followed by the messages of the new, compacted
//! history. Loading yields the current context (the messages after the last boundary); [`search`] and the
//! summaries still see the whole file. The boundary records how many messages follow it as replayed history so
//! that turn counts and search results do not count them twice.
//!
//! - [`SessionWriter`]: create a session (or reopen one to keep appending), append lines, flush per turn.
//! - [`load`]: restore a session for `--resume` / `--continue`.
//! - [`list`], [`latest_for_cwd`], [`find`], [`format_summary_table`]: `tandem sessions` and the pickers.
//! - [`fork`]: branch a session into a new file, leaving the original untouched.
//! - [`search`], [`search_in`]: phrase search across all transcripts, streamed line by line.

use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Deserializer, Serialize};

use crate::conversation::{Message, Usage};

pub mod cleanup;
mod list;
mod load;
mod search;
mod writer;

#[cfg(test)]
mod tests;

pub use list::{SessionSummary, find, format_summary_table, format_utc, latest_for_cwd, list, unreadable};
pub use load::{LoadedSession, load, load_before_prompt};
pub use search::{SearchHit, search, search_in};
pub use writer::{SessionWriter, fork};

/// The transcript format version this build writes. Headers with a higher version are refused by [`load`]
/// rather than misread.
pub const FORMAT_VERSION: u32 = 1;

/// The directory, under the user data dir, that holds the transcripts.
pub const SESSIONS_DIR: &str = "sessions";

/// Transcript file extension (without the dot).
pub const EXTENSION: &str = "jsonl";

/// The first line of every transcript: what the session is and where it ran.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SessionMeta {
    pub id: String,
    /// The working directory the session ran in; `--continue` picks the latest session of the current one.
    pub cwd: PathBuf,
    pub provider: String,
    /// The model at the start; later `/model` changes are [`SessionLine::Model`] lines.
    pub model: String,
    /// Unix seconds.
    pub created_at: u64,
    pub version: u32,
    /// The session this one was forked from, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forked_from: Option<String>,
}

impl SessionMeta {
    /// A header for a new session, with a fresh random id, the current time and the current format version.
    pub fn new(cwd: impl Into<PathBuf>, provider: impl Into<String>, model: impl Into<String>) -> Self {
        SessionMeta {
            id: new_session_id(),
            cwd: cwd.into(),
            provider: provider.into(),
            model: model.into(),
            created_at: now_secs(),
            version: FORMAT_VERSION,
            forked_from: None,
        }
    }
}

pub use tandem_protocol::CompactTrigger;

/// One line of a transcript. Serialized as a JSON object tagged by `"type"`.
///
/// Deserialization is lenient the way [`load`] is: missing optional fields take defaults; line types this build
/// does not know are an error here (callers that stream a file skip them instead, for forward compatibility).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum SessionLine {
    /// The header; only the first line of a file counts as one.
    Session(SessionMeta),
    /// A conversation message: user text, an assistant reply (thinking with its signature, tool calls) or tool
    /// results. `at` is unix seconds.
    Message { message: Message, at: u64 },
    /// One model response's usage; totals are the sum over the file. `cost_usd` is null when the price is unknown.
    Usage { usage: Usage, cost_usd: Option<f64>, at: u64 },
    /// Compaction: the `messages` message lines that follow are the new history (the current context starts here).
    CompactBoundary {
        trigger: CompactTrigger,
        pre_tokens: u64,
        at: u64,
        /// How many of the following message lines replay the compacted history. Defaults to 0 (then turn counts
        /// and search also count those replayed messages).
        #[serde(default)]
        messages: usize,
    },
    /// The session's title (the latest one wins, so a rename is one more line).
    Title { title: String },
    /// A rewind: only the first `keep` messages of the current history stay. With `to_seq`, the history is cut
    /// where that prompt's [`SessionLine::Prompt`] line stands instead (exact even where a prompt was merged into
    /// the message before it, which `keep`, counted in merged messages, is not).
    Rewind {
        keep: usize,
        at: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        to_seq: Option<u64>,
    },
    /// A rewind to a prompt no longer in the history (compacted or rewound away): the `messages` message lines
    /// that follow, with their prompt lines, are the new history — the conversation as it stood just before
    /// prompt `to_seq`, read back from this file.
    Restore { to_seq: u64, at: u64, messages: usize },
    /// The message lines that follow are the prompt numbered `seq` (its rewind checkpoint).
    Prompt { seq: u64 },
    /// Something the model must be told with the next prompt (what a rewind did); pending until the next
    /// [`SessionLine::Prompt`], so it survives a restart in between.
    Note { text: String },
    /// A `/model` change.
    Model { model: String },
    /// What a file-changing tool call applied: `filePath`, `type` and `structuredPatch` of its structured output.
    Applied { call_id: String, change: serde_json::Value },
}

impl<'de> Deserialize<'de> for SessionLine {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        match RawLine::deserialize(deserializer)?.into_line() {
            Ok(Some(line)) => Ok(line),
            Ok(None) => Err(D::Error::custom("unknown session line type")),
            Err(missing) => Err(D::Error::missing_field(missing)),
        }
    }
}

/// The line kinds this build knows; anything else is [`LineKind::Unknown`] and skipped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum LineKind {
    Session,
    Message,
    Usage,
    CompactBoundary,
    Title,
    Model,
    Rewind,
    Restore,
    Prompt,
    Note,
    Applied,
    #[serde(other)]
    Unknown,
}

/// Every field of every line kind, flat. Reading lines through this instead of the internally tagged enum
/// parses each line once, straight into its fields (serde's tagged enums buffer the whole line first, which
/// doubles the cost of loading big transcripts), and lets unknown line types be skipped rather than fail.
#[derive(Deserialize)]
pub(crate) struct RawLine {
    #[serde(rename = "type")]
    pub(crate) kind: LineKind,
    id: Option<String>,
    cwd: Option<PathBuf>,
    provider: Option<String>,
    model: Option<String>,
    created_at: Option<u64>,
    version: Option<u32>,
    forked_from: Option<String>,
    message: Option<Message>,
    at: Option<u64>,
    usage: Option<Usage>,
    cost_usd: Option<f64>,
    trigger: Option<CompactTrigger>,
    pre_tokens: Option<u64>,
    messages: Option<usize>,
    title: Option<String>,
    keep: Option<usize>,
    to_seq: Option<u64>,
    seq: Option<u64>,
    text: Option<String>,
    call_id: Option<String>,
    change: Option<serde_json::Value>,
}

impl RawLine {
    /// The typed line; `Ok(None)` for an unknown kind, `Err(field)` when a required field is missing.
    pub(crate) fn into_line(self) -> Result<Option<SessionLine>, &'static str> {
        Ok(Some(match self.kind {
            LineKind::Session => SessionLine::Session(SessionMeta {
                id: self.id.ok_or("id")?,
                cwd: self.cwd.ok_or("cwd")?,
                provider: self.provider.unwrap_or_default(),
                model: self.model.unwrap_or_default(),
                created_at: self.created_at.unwrap_or(0),
                version: self.version.unwrap_or(FORMAT_VERSION),
                forked_from: self.forked_from,
            }),
            LineKind::Message => {
                SessionLine::Message { message: self.message.ok_or("message")?, at: self.at.unwrap_or(0) }
            }
            LineKind::Usage => SessionLine::Usage {
                usage: self.usage.ok_or("usage")?,
                cost_usd: self.cost_usd,
                at: self.at.unwrap_or(0),
            },
            LineKind::CompactBoundary => SessionLine::CompactBoundary {
                trigger: self.trigger.unwrap_or(CompactTrigger::Auto),
                pre_tokens: self.pre_tokens.unwrap_or(0),
                at: self.at.unwrap_or(0),
                messages: self.messages.unwrap_or(0),
            },
            LineKind::Title => SessionLine::Title { title: self.title.ok_or("title")? },
            LineKind::Model => SessionLine::Model { model: self.model.ok_or("model")? },
            LineKind::Rewind => {
                SessionLine::Rewind { keep: self.keep.ok_or("keep")?, at: self.at.unwrap_or(0), to_seq: self.to_seq }
            }
            LineKind::Restore => SessionLine::Restore {
                to_seq: self.to_seq.ok_or("to_seq")?,
                at: self.at.unwrap_or(0),
                messages: self.messages.unwrap_or(0),
            },
            LineKind::Prompt => SessionLine::Prompt { seq: self.seq.ok_or("seq")? },
            LineKind::Note => SessionLine::Note { text: self.text.ok_or("text")? },
            LineKind::Applied => {
                SessionLine::Applied { call_id: self.call_id.ok_or("call_id")?, change: self.change.ok_or("change")? }
            }
            LineKind::Unknown => return Ok(None),
        }))
    }
}

/// Problems with saved sessions. Messages name the file (never its contents) and say what to do.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("cannot read session file {}: {source}", path.display())]
    Io { path: PathBuf, source: io::Error },
    #[error(
        "{} is not a tandem session: its first line is not a session header (the file may be empty, \
         or from a crash before anything was saved)",
        path.display()
    )]
    NotASession { path: PathBuf },
    #[error(
        "{} was written by a newer tandem (session format {version}, this build reads up to {FORMAT_VERSION}): \
         upgrade tandem to resume it",
        path.display()
    )]
    UnsupportedVersion { path: PathBuf, version: u32 },
    #[error(
        "session {id} is open in another tandem right now ({}): two writers would interleave its messages. Close \
         the other one, or continue a copy of it with --fork-session",
        path.display()
    )]
    InUse { path: PathBuf, id: String },
    #[error("no saved session matches {query:?} in {}: run `tandem sessions` to list them", dir.display())]
    NotFound { query: String, dir: PathBuf },
    #[error("{query:?} matches {} sessions ({}): type more of the id", candidates.len(), preview(candidates))]
    Ambiguous { query: String, candidates: Vec<String> },
}

/// The first few ids of an ambiguous match: enough to pick a longer prefix, short enough to read.
fn preview(ids: &[String]) -> String {
    let mut out = ids.iter().take(5).map(String::as_str).collect::<Vec<_>>().join(", ");
    if ids.len() > 5 {
        out.push_str(", …");
    }
    out
}

impl SessionError {
    fn io(path: &Path, source: io::Error) -> Self {
        SessionError::Io { path: path.to_path_buf(), source }
    }
}

/// `<data_dir>/sessions`.
pub fn sessions_dir(data_dir: &Path) -> PathBuf {
    data_dir.join(SESSIONS_DIR)
}

/// Where the session with this id lives.
pub fn session_path(data_dir: &Path, id: &str) -> PathBuf {
    sessions_dir(data_dir).join(format!("{id}.{EXTENSION}"))
}

/// A random UUID (version 4 format). Random rather than time-ordered so that the first 8 characters, which
/// `tandem sessions` shows and `--resume` accepts as a prefix, differ between sessions.
pub fn new_session_id() -> String {
    let hi = fastrand::u64(..);
    let lo = fastrand::u64(..);
    let version = (hi & !0xf000) | 0x4000;
    let variant = (lo & !(0xc << 60)) | (0x8 << 60);
    format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        version >> 32,
        (version >> 16) & 0xffff,
        version & 0xffff,
        variant >> 48,
        variant & 0xffff_ffff_ffff
    )
}

/// A session title from the first user prompt: its first non-blank line, whitespace collapsed, cut to 60
/// characters.
pub fn title_from_prompt(prompt: &str) -> String {
    let line = prompt.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
    truncate_chars(&line.split_whitespace().collect::<Vec<_>>().join(" "), 60)
}

/// Whether an id is safe as a file name: ASCII letters, digits, `-` and `_`, 1 to 128 of them. Ids come from
/// the command line (`--resume`, fork), so this keeps them from naming paths outside the sessions directory.
pub fn is_valid_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= 128 && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

pub(crate) fn now_secs() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

/// `s` cut to at most `max` characters, with `…` marking a cut.
pub(crate) fn truncate_chars(s: &str, max: usize) -> String {
    match s.char_indices().nth(max.saturating_sub(1)) {
        Some((cut, _)) if s[cut..].chars().nth(1).is_some() => format!("{}…", &s[..cut]),
        _ => s.to_string(),
    }
}

/// A transcript read one line at a time, without holding more than one line in memory.
pub(crate) struct LineReader {
    reader: BufReader<File>,
    buf: Vec<u8>,
    /// The number (1-based) of the line read last, blank lines counted.
    number: usize,
}

/// One line of a transcript, without its line ending.
pub(crate) struct RawText<'a> {
    /// `None` when the line is not UTF-8, which only a write cut off mid-character or damage can cause.
    pub(crate) text: Option<&'a str>,
    /// Its number in the file (1-based), as an editor shows it.
    pub(crate) number: usize,
}

impl LineReader {
    pub(crate) fn open(path: &Path) -> io::Result<Self> {
        Ok(LineReader { reader: BufReader::with_capacity(256 * 1024, File::open(path)?), buf: Vec::new(), number: 0 })
    }

    /// The underlying reader, positioned just after the last line returned.
    pub(crate) fn into_inner(self) -> BufReader<File> {
        self.reader
    }

    /// The next line, or `None` at the end of the file. Blank lines are skipped.
    pub(crate) fn next_line(&mut self) -> io::Result<Option<RawText<'_>>> {
        loop {
            self.buf.clear();
            if self.reader.read_until(b'\n', &mut self.buf)? == 0 {
                return Ok(None);
            }
            self.number += 1;
            let mut line = self.buf.as_slice();
            while let [rest @ .., b'\n' | b'\r'] = line {
                line = rest;
            }
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let len = line.len();
            return Ok(Some(RawText { text: std::str::from_utf8(&self.buf[..len]).ok(), number: self.number }));
        }
    }
}

/// Reads the header of a transcript: the first non-blank line, which must be a session line.
pub(crate) fn read_header(reader: &mut LineReader, path: &Path) -> Result<SessionMeta, SessionError> {
    let line = reader.next_line().map_err(|e| SessionError::io(path, e))?;
    let not_a_session = || SessionError::NotASession { path: path.to_path_buf() };
    let raw: RawLine =
        line.and_then(|l| l.text).and_then(|t| serde_json::from_str(t).ok()).ok_or_else(not_a_session)?;
    match raw.into_line() {
        Ok(Some(SessionLine::Session(meta))) if meta.version > FORMAT_VERSION => {
            Err(SessionError::UnsupportedVersion { path: path.to_path_buf(), version: meta.version })
        }
        Ok(Some(SessionLine::Session(meta))) => Ok(meta),
        _ => Err(not_a_session()),
    }
}
