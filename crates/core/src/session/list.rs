//! Summaries of saved sessions: `tandem sessions`, `--continue`, `--resume <id-prefix>`.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use serde::Deserialize;

use super::{
    EXTENSION, LineKind, LineReader, RawLine, SessionError, SessionLine, is_valid_id, read_header, sessions_dir,
    truncate_chars,
};
use crate::conversation::Role;
use crate::fs_util::normalize;

/// What `tandem sessions` and the resume pickers show about one session.
#[derive(Clone, Debug, PartialEq)]
pub struct SessionSummary {
    pub id: String,
    pub path: PathBuf,
    pub cwd: PathBuf,
    /// Unix seconds, from the header.
    pub created_at: u64,
    /// Unix seconds: the file's modification time, i.e. the last save.
    pub modified_at: u64,
    /// The latest title line.
    pub title: Option<String>,
    /// The first prompt the user typed, cut to 200 characters.
    pub first_prompt: Option<String>,
    /// User messages with text (tool results are not turns; history replayed after a compaction is not counted).
    pub turns: usize,
    pub size_bytes: u64,
    /// `None` when any response's cost is unknown.
    pub cost_usd: Option<f64>,
    /// The current model: the latest `/model` change, or the header's.
    pub model: String,
}

/// Every saved session with at least one message, most recently saved first. Files that are not readable
/// sessions are left out rather than failing the listing; so are sessions with only a header (started and quit
/// before the first prompt), which would otherwise crowd the list and catch `--continue`.
pub fn list(data_dir: &Path) -> Vec<SessionSummary> {
    let mut out: Vec<(std::time::SystemTime, SessionSummary)> = session_files(data_dir)
        .iter()
        .filter_map(|path| summarize(path).ok().map(|summary| (precise_mtime(path), summary)))
        .filter(|(_, (_, messages))| *messages > 0)
        .map(|(modified, (summary, _))| (modified, summary))
        .collect();
    // Sessions saved within the same second (a `/clear` right after an answer) keep their real order.
    out.sort_by(|(a_time, a), (b_time, b)| {
        b_time.cmp(a_time).then(b.created_at.cmp(&a.created_at)).then_with(|| a.id.cmp(&b.id))
    });
    out.into_iter().map(|(_, summary)| summary).collect()
}

/// The session files that can't be read at all (their first line is not a session header: damaged, or cut off
/// by a crash before anything was saved), with why, oldest first: listed apart, so that they are not silently
/// missing.
pub fn unreadable(data_dir: &Path) -> Vec<(PathBuf, String)> {
    let mut out: Vec<(std::time::SystemTime, PathBuf, String)> = session_files(data_dir)
        .into_iter()
        .filter_map(|path| {
            let why = LineReader::open(&path)
                .map_err(|err| SessionError::io(&path, err))
                .and_then(|mut reader| read_header(&mut reader, &path))
                .err()?;
            Some((precise_mtime(&path), path, why.to_string()))
        })
        .collect();
    out.sort();
    out.into_iter().map(|(_, path, why)| (path, why)).collect()
}

/// A file's modification time to the precision the filesystem keeps (the summaries show seconds).
fn precise_mtime(path: &Path) -> std::time::SystemTime {
    fs::metadata(path).and_then(|meta| meta.modified()).unwrap_or(std::time::UNIX_EPOCH)
}

/// The most recently saved session (with at least one message) that ran in `cwd`, for `--continue`. Only
/// headers are read until the newest candidate is found.
pub fn latest_for_cwd(data_dir: &Path, cwd: &Path) -> Option<SessionSummary> {
    let cwd = normalize(cwd);
    let mut candidates: Vec<(std::time::SystemTime, PathBuf)> = session_files(data_dir)
        .into_iter()
        .filter(|path| {
            LineReader::open(path)
                .ok()
                .and_then(|mut reader| read_header(&mut reader, path).ok())
                .is_some_and(|meta| normalize(&meta.cwd) == cwd)
        })
        .map(|path| (precise_mtime(&path), path))
        .collect();
    candidates.sort_by_key(|(modified, _)| std::cmp::Reverse(*modified));
    candidates.into_iter().find_map(|(_, path)| summarize(&path).ok().filter(|(_, n)| *n > 0).map(|(s, _)| s))
}

/// The session whose id is `id_or_prefix`, or the only one whose id starts with it. Unlike [`list`], a session
/// with no messages yet is found too (it was asked for by name).
pub fn find(data_dir: &Path, id_or_prefix: &str) -> Result<SessionSummary, SessionError> {
    let dir = sessions_dir(data_dir);
    let not_found = || SessionError::NotFound { query: id_or_prefix.to_string(), dir: dir.clone() };
    if !is_valid_id(id_or_prefix) {
        return Err(not_found());
    }
    let files = session_files(data_dir);
    let id_of = |path: &Path| path.file_stem().and_then(|s| s.to_str()).map(str::to_string);
    let (exact, prefixed): (Vec<&PathBuf>, Vec<&PathBuf>) = files
        .iter()
        .filter(|p| id_of(p).is_some_and(|id| id.starts_with(id_or_prefix)))
        .partition(|p| id_of(p).as_deref() == Some(id_or_prefix));
    let path = match (exact.first(), prefixed.as_slice()) {
        (Some(path), _) | (None, [path]) => *path,
        (None, []) => return Err(not_found()),
        (None, many) => {
            let mut ids: Vec<String> = many.iter().filter_map(|p| id_of(p)).collect();
            ids.sort();
            return Err(SessionError::Ambiguous { query: id_or_prefix.to_string(), candidates: ids });
        }
    };
    summarize(path).map(|(summary, _)| summary)
}

/// The table `tandem sessions` prints: id (first 8 characters), time of the last save (UTC), directory (`~` for
/// the home directory), title (or the first prompt), turns, cost (`?` when unknown), and the disk space it takes
/// with everything that belongs to it.
pub fn format_summary_table(sessions: &[SessionSummary]) -> String {
    if sessions.is_empty() {
        return "No saved sessions.\n".to_string();
    }
    let home = crate::fs_util::user_home();
    let rows: Vec<[String; 7]> = sessions
        .iter()
        .map(|s| {
            let title = s.title.as_deref().or(s.first_prompt.as_deref()).unwrap_or("(untitled)");
            [
                s.id.chars().take(8).collect(),
                format_utc(s.modified_at),
                truncate_left(&display_dir(&s.cwd, home.as_deref()), 40),
                truncate_chars(&title.split_whitespace().collect::<Vec<_>>().join(" "), 50),
                s.turns.to_string(),
                s.cost_usd.map_or_else(|| "?".to_string(), |c| format!("${c:.2}")),
                crate::fs_util::human_size(super::cleanup::disk_size(&s.path)),
            ]
        })
        .collect();
    let header = ["ID", "TIME", "DIRECTORY", "TITLE", "TURNS", "COST", "SIZE"].map(str::to_string);
    let mut widths = [0usize; 7];
    for row in std::iter::once(&header).chain(&rows) {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for row in std::iter::once(&header).chain(&rows) {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            let pad = " ".repeat(widths[i] - cell.chars().count());
            match i {
                0 => {}
                _ => line.push_str("  "),
            }
            // Numbers right-aligned, text left-aligned.
            if i >= 4 {
                line.push_str(&pad);
                line.push_str(cell);
            } else {
                line.push_str(cell);
                line.push_str(&pad);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// The parts of a line a summary needs; everything else (message text, thinking, tool inputs) is skipped by
/// the parser without being allocated.
#[derive(Deserialize)]
struct ScanLine {
    #[serde(rename = "type")]
    kind: LineKind,
    message: Option<ScanMessage>,
    cost_usd: Option<f64>,
    title: Option<String>,
    model: Option<String>,
    messages: Option<usize>,
}

#[derive(Deserialize)]
struct ScanMessage {
    role: Role,
    content: Vec<ScanBlock>,
}

#[derive(Deserialize)]
struct ScanBlock {
    #[serde(rename = "type")]
    kind: BlockKind,
}

#[derive(Deserialize, PartialEq)]
#[serde(rename_all = "snake_case")]
enum BlockKind {
    Text,
    #[serde(other)]
    Other,
}

/// What [`super::SessionWriter`] puts at the start of an assistant message line. Those lines are most of a
/// transcript's bytes (thinking, tool inputs) and a summary needs nothing from them but their existence, so they
/// are counted without being parsed. Lines written any other way are parsed.
const ASSISTANT_PREFIX: &str = r#"{"type":"message","message":{"role":"assistant""#;

/// One linear pass over a transcript: the summary and the number of message lines.
pub(crate) fn summarize(path: &Path) -> Result<(SessionSummary, usize), SessionError> {
    let io_err = |e| SessionError::io(path, e);
    let metadata = fs::metadata(path).map_err(io_err)?;
    let mut reader = LineReader::open(path).map_err(io_err)?;
    let meta = read_header(&mut reader, path)?;
    let mut summary = SessionSummary {
        id: meta.id,
        path: path.to_path_buf(),
        cwd: meta.cwd,
        created_at: meta.created_at,
        modified_at: mtime_secs(&metadata),
        title: None,
        first_prompt: None,
        turns: 0,
        size_bytes: metadata.len(),
        cost_usd: Some(0.0),
        model: meta.model,
    };
    let mut messages = 0;
    let mut replay_left = 0usize;
    while let Some(line) = reader.next_line().map_err(io_err)? {
        let Some(text) = line.text else { continue };
        if text.starts_with(ASSISTANT_PREFIX) {
            messages += 1;
            replay_left = replay_left.saturating_sub(1);
            continue;
        }
        let Ok(scan) = serde_json::from_str::<ScanLine>(text) else { continue };
        match scan.kind {
            LineKind::Message => {
                let Some(message) = scan.message else { continue };
                messages += 1;
                if replay_left > 0 {
                    replay_left -= 1;
                    continue;
                }
                if message.role == Role::User && message.content.iter().any(|b| b.kind == BlockKind::Text) {
                    summary.turns += 1;
                    if summary.first_prompt.is_none() {
                        summary.first_prompt = first_prompt(text);
                    }
                }
            }
            LineKind::Usage => summary.cost_usd = summary.cost_usd.zip(scan.cost_usd).map(|(total, cost)| total + cost),
            LineKind::CompactBoundary | LineKind::Restore => replay_left = scan.messages.unwrap_or(0),
            LineKind::Title => summary.title = scan.title.or(summary.title),
            LineKind::Model => summary.model = scan.model.unwrap_or(summary.model),
            // Turns a rewind took back were still typed: the count of turns stays.
            LineKind::Session
            | LineKind::Rewind
            | LineKind::Prompt
            | LineKind::Note
            | LineKind::Applied
            | LineKind::Unknown => {}
        }
    }
    Ok((summary, messages))
}

/// The text of a user message line (parsed in full, once per file), cut to 200 characters.
fn first_prompt(line: &str) -> Option<String> {
    match serde_json::from_str::<RawLine>(line).ok()?.into_line() {
        Ok(Some(SessionLine::Message { message, .. })) => Some(truncate_chars(message.text().trim(), 200)),
        _ => None,
    }
}

/// The transcripts in the sessions directory (`*.jsonl`, not hidden: fork temporaries are hidden).
pub(crate) fn session_files(data_dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(sessions_dir(data_dir)) else { return Vec::new() };
    entries
        .filter_map(|entry| entry.ok())
        .filter(|entry| entry.file_type().is_ok_and(|t| t.is_file()))
        .map(|entry| entry.path())
        .filter(|path| {
            path.extension().is_some_and(|e| e == EXTENSION)
                && path.file_name().and_then(|n| n.to_str()).is_some_and(|n| !n.starts_with('.'))
        })
        .collect()
}

fn mtime_secs(metadata: &fs::Metadata) -> u64 {
    metadata.modified().ok().and_then(|t| t.duration_since(UNIX_EPOCH).ok()).map_or(0, |d| d.as_secs())
}

/// `~/…` for paths under the home directory.
fn display_dir(cwd: &Path, home: Option<&Path>) -> String {
    match home.and_then(|home| cwd.strip_prefix(home).ok()) {
        Some(rest) if rest.as_os_str().is_empty() => "~".to_string(),
        Some(rest) => format!("~/{}", rest.display()),
        None => cwd.display().to_string(),
    }
}

/// Keeps the end of a path, which says more than its start.
fn truncate_left(s: &str, max: usize) -> String {
    let count = s.chars().count();
    if count <= max {
        return s.to_string();
    }
    let tail: String = s.chars().skip(count - (max - 1)).collect();
    format!("…{tail}")
}

/// `YYYY-MM-DD HH:MM` (UTC) from unix seconds.
pub fn format_utc(secs: u64) -> String {
    let (year, month, day) = crate::prompt::civil_date(secs);
    let rem = secs % 86_400;
    format!("{year:04}-{month:02}-{day:02} {:02}:{:02}", rem / 3600, rem % 3600 / 60)
}
