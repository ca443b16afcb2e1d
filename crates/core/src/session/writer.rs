//! Appending to transcripts, and forking them.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::{
    CompactTrigger, FORMAT_VERSION, LineReader, SessionError, SessionLine, SessionMeta, is_valid_id, now_secs,
    read_header, session_path, sessions_dir,
};
use crate::conversation::Message;

/// Pending bytes past which [`SessionWriter::append`] hands them to the OS without waiting for the end of the
/// turn, so that a turn with huge tool results does not hold them all in memory twice.
const SPILL_BYTES: usize = 1 << 20;

/// Appends lines to one transcript.
///
/// Lines are serialized whole into a pending buffer before any byte reaches the file, so a serialization error
/// never leaves half a line; [`SessionWriter::flush`] writes them with `O_APPEND` and `fdatasync`s once per turn.
/// Whatever is pending is flushed on drop as well (errors ignored: there is no one left to tell).
#[derive(Debug)]
pub struct SessionWriter {
    file: File,
    path: PathBuf,
    id: String,
    pending: Vec<u8>,
    /// Bytes written since the last sync.
    dirty: bool,
}

/// `{"type":"message",…}` from a borrowed message: the same bytes as [`SessionLine::Message`] without cloning
/// the message (tool results can be megabytes).
#[derive(Serialize)]
#[serde(tag = "type", rename = "message")]
struct MessageRef<'a> {
    message: &'a Message,
    at: u64,
}

impl SessionWriter {
    /// Creates `<data_dir>/sessions/<meta.id>.jsonl` (refusing to overwrite an existing file) and writes the
    /// header to disk at once, so that a session file is never empty.
    pub fn create(data_dir: &Path, meta: SessionMeta) -> io::Result<SessionWriter> {
        check_id(&meta.id)?;
        let dir = ensure_sessions_dir(data_dir)?;
        let path = session_path(data_dir, &meta.id);
        let writer = SessionWriter::create_file(path, meta)?;
        sync_dir(&dir);
        Ok(writer)
    }

    /// Creates a transcript at `path` (its directory too): a subagent's, next to its parent session's.
    pub fn create_at(path: &Path, meta: SessionMeta) -> io::Result<SessionWriter> {
        check_id(&meta.id)?;
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        SessionWriter::create_file(path.to_path_buf(), meta)
    }

    fn create_file(path: std::path::PathBuf, meta: SessionMeta) -> io::Result<SessionWriter> {
        let file = private_options().append(true).create_new(true).open(&path)?;
        lock_for_writing(&file)?;
        let mut writer = SessionWriter { file, path, id: meta.id.clone(), pending: Vec::new(), dirty: false };
        writer.append(&SessionLine::Session(meta))?;
        writer.flush()?;
        Ok(writer)
    }

    /// Opens an existing transcript to keep appending to it (a resumed session). When the file ends in the middle
    /// of a line (a crash mid-write), a newline goes first so the next line is not glued onto the torn one.
    pub fn reopen(path: &Path) -> Result<SessionWriter, SessionError> {
        let io_err = |e| SessionError::io(path, e);
        let meta = read_header(&mut LineReader::open(path).map_err(io_err)?, path)?;
        let mut file = OpenOptions::new().read(true).append(true).open(path).map_err(io_err)?;
        lock_for_writing(&file).map_err(|err| match err.kind() {
            io::ErrorKind::WouldBlock => SessionError::InUse { path: path.to_path_buf(), id: meta.id.clone() },
            _ => io_err(err),
        })?;
        let mut pending = Vec::new();
        if file.metadata().map_err(io_err)?.len() > 0 {
            let mut last = [0u8];
            file.seek(SeekFrom::End(-1)).map_err(io_err)?;
            file.read_exact(&mut last).map_err(io_err)?;
            if last[0] != b'\n' {
                pending.push(b'\n');
            }
        }
        Ok(SessionWriter { file, path: path.to_path_buf(), id: meta.id, pending, dirty: false })
    }

    /// Queues one line. It reaches the file at the next [`flush`](Self::flush) (or earlier when a lot is pending).
    pub fn append(&mut self, line: &SessionLine) -> io::Result<()> {
        self.push(line)
    }

    /// Queues a `message` line stamped now, without cloning the message.
    pub fn append_message(&mut self, message: &Message) -> io::Result<()> {
        self.push(&MessageRef { message, at: now_secs() })
    }

    /// Queues a compaction: the boundary, then the new history, which becomes the current context on load.
    pub fn append_compaction(
        &mut self,
        trigger: CompactTrigger,
        pre_tokens: u64,
        history: &[Message],
    ) -> io::Result<()> {
        let at = now_secs();
        self.push(&SessionLine::CompactBoundary { trigger, pre_tokens, at, messages: history.len() })?;
        for message in history {
            self.push(&MessageRef { message, at })?;
        }
        Ok(())
    }

    /// Queues a restored history ([`SessionLine::Restore`]): the line, then `history` with a prompt line before
    /// the message each of `prompts` (number, message index) starts at, so a later load finds them again.
    pub fn append_restore(&mut self, to_seq: u64, history: &[Message], prompts: &[(u64, usize)]) -> io::Result<()> {
        let at = now_secs();
        self.push(&SessionLine::Restore { to_seq, at, messages: history.len() })?;
        for (index, message) in history.iter().enumerate() {
            for (seq, _) in prompts.iter().filter(|(_, start)| *start == index) {
                self.push(&SessionLine::Prompt { seq: *seq })?;
            }
            self.push(&MessageRef { message, at })?;
        }
        Ok(())
    }

    /// Writes everything pending and syncs the file's data to disk; call at the end of every turn. One write and
    /// one `fdatasync` per turn, nothing when nothing changed.
    pub fn flush(&mut self) -> io::Result<()> {
        self.write_pending()?;
        if self.dirty {
            self.file.sync_data()?;
            self.dirty = false;
        }
        Ok(())
    }

    /// Hands what is pending to the operating system without syncing: a killed process (not a lost machine)
    /// then keeps every line written so far. Cheap enough to call after every message.
    pub fn write_through(&mut self) -> io::Result<()> {
        self.write_pending()
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    fn push<T: Serialize>(&mut self, value: &T) -> io::Result<()> {
        let start = self.pending.len();
        if let Err(err) = serde_json::to_writer(&mut self.pending, value) {
            self.pending.truncate(start);
            return Err(io::Error::new(io::ErrorKind::InvalidData, err));
        }
        self.pending.push(b'\n');
        if self.pending.len() >= SPILL_BYTES {
            self.write_pending()?;
        }
        Ok(())
    }

    /// Writes the pending bytes, keeping whatever a failed write left unwritten for the next try, so a retry
    /// after a full disk continues exactly where the file stopped instead of repeating part of a line.
    fn write_pending(&mut self) -> io::Result<()> {
        let mut written = 0;
        let result = loop {
            if written == self.pending.len() {
                break Ok(());
            }
            match self.file.write(&self.pending[written..]) {
                Ok(0) => break Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => written += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => break Err(e),
            }
        };
        self.dirty |= written > 0;
        self.pending.drain(..written);
        if self.pending.len() < SPILL_BYTES && self.pending.capacity() > SPILL_BYTES * 2 {
            // One huge message grew the buffer: give the room back rather than hold it for the session's life.
            self.pending.shrink_to(SPILL_BYTES);
        }
        result
    }
}

impl Drop for SessionWriter {
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

/// Forks the transcript at `source_path` into `<data_dir>/sessions/<new_id>.jsonl`: a new header (same cwd,
/// provider and model, `forked_from` the source's id), then every line of the source after its header, byte for
/// byte. The source is only read. The fork is written to a temporary file and renamed into place, so it appears
/// complete or not at all; an existing session with `new_id` is never overwritten.
pub fn fork(data_dir: &Path, source_path: &Path, new_id: &str) -> io::Result<PathBuf> {
    check_id(new_id)?;
    let mut reader = LineReader::open(source_path)?;
    let source = read_header(&mut reader, source_path).map_err(into_io)?;
    let meta = SessionMeta {
        id: new_id.to_string(),
        created_at: now_secs(),
        version: FORMAT_VERSION,
        forked_from: Some(source.id.clone()),
        ..source
    };
    let dir = ensure_sessions_dir(data_dir)?;
    let path = session_path(data_dir, new_id);
    // tempfile creates files readable by the owner only, like `private_options`.
    let mut temp = tempfile::Builder::new().prefix(".fork-").suffix(".tmp").tempfile_in(&dir)?;
    {
        let mut out = io::BufWriter::with_capacity(256 * 1024, temp.as_file_mut());
        serde_json::to_writer(&mut out, &SessionLine::Session(meta)).map_err(io::Error::other)?;
        out.write_all(b"\n")?;
        let last = copy_tracking_last(&mut reader.into_inner(), &mut out)?;
        if last.is_some_and(|b| b != b'\n') {
            out.write_all(b"\n")?;
        }
        out.flush()?;
    }
    temp.as_file().sync_all()?;
    temp.persist_noclobber(&path).map_err(|e| e.error)?;
    sync_dir(&dir);
    Ok(path)
}

/// Copies everything, returning the last byte copied (to end a torn last line before anything is appended).
fn copy_tracking_last(from: &mut BufReader<File>, to: &mut impl Write) -> io::Result<Option<u8>> {
    let mut buf = vec![0u8; 256 * 1024];
    let mut last = None;
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) => return Ok(last),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        to.write_all(&buf[..n])?;
        last = Some(buf[n - 1]);
    }
}

fn check_id(id: &str) -> io::Result<()> {
    if is_valid_id(id) {
        Ok(())
    } else {
        Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("invalid session id {id:?}: use 1 to 128 ASCII letters, digits, '-' or '_'"),
        ))
    }
}

fn into_io(err: SessionError) -> io::Error {
    match err {
        SessionError::Io { source, .. } => source,
        other => io::Error::new(io::ErrorKind::InvalidData, other.to_string()),
    }
}

/// Transcripts hold code, command output and whatever else went through the session: owner-only, like shell
/// history.
fn ensure_sessions_dir(data_dir: &Path) -> io::Result<PathBuf> {
    let dir = sessions_dir(data_dir);
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(&dir)?;
    Ok(dir)
}

/// Makes this process the session's only writer while the file is open: a second tandem resuming it is refused
/// instead of interleaving its messages. The lock is the kernel's (`flock`), so a process that crashed leaves
/// none behind.
///
/// A lock this process just gave up can still be held for a moment by a child it was starting (a command, a
/// hook): between fork and exec the child shares the file's descriptor. So a busy lock is tried again for up to
/// [`LOCK_GRACE`] before the session counts as open elsewhere.
fn lock_for_writing(file: &File) -> io::Result<()> {
    let deadline = std::time::Instant::now() + LOCK_GRACE;
    loop {
        match rustix::fs::flock(file, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
            Err(err) if err == rustix::io::Errno::WOULDBLOCK && std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            result => return result.map_err(io::Error::from),
        }
    }
}

/// How long a busy session lock is tried again ([`lock_for_writing`]).
const LOCK_GRACE: std::time::Duration = std::time::Duration::from_millis(300);

fn private_options() -> OpenOptions {
    let mut options = OpenOptions::new();
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options
}

/// Makes a new directory entry durable (best effort: some file systems refuse to sync directories).
fn sync_dir(dir: &Path) {
    #[cfg(unix)]
    if let Ok(dir) = File::open(dir) {
        let _ = dir.sync_all();
    }
    #[cfg(not(unix))]
    let _ = dir;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::{ContentBlock, Role};

    #[test]
    fn a_huge_message_is_not_kept_in_memory_once_written() {
        let dir = tempfile::tempdir().unwrap();
        let meta = SessionMeta { id: "big".into(), ..SessionMeta::new("/p", "anthropic", "claude-sonnet-4-5") };
        let mut writer = SessionWriter::create(dir.path(), meta).unwrap();
        let text = "word ".repeat(4 << 20);
        writer.append_message(&Message { role: Role::Assistant, content: vec![ContentBlock::text(text)] }).unwrap();
        writer.flush().unwrap();
        assert!(writer.pending.capacity() <= SPILL_BYTES * 2, "{} bytes kept", writer.pending.capacity());
    }

    /// Seen in CI: a session closed and reopened in one process was "in use" — a command being started at that
    /// moment held the lock through the descriptor its fork had copied.
    #[test]
    fn a_lock_given_up_a_moment_later_is_waited_for_and_one_kept_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let meta = SessionMeta { id: "held".into(), ..SessionMeta::new("/p", "anthropic", "claude-sonnet-4-5") };
        let path = SessionWriter::create(dir.path(), meta).unwrap().path().to_path_buf();
        let holder = File::open(&path).unwrap();
        lock_for_writing(&holder).unwrap();
        let release = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(50));
            drop(holder);
        });
        let writer = SessionWriter::reopen(&path);
        release.join().unwrap();
        assert!(writer.is_ok(), "{:?}", writer.err());
        assert!(matches!(SessionWriter::reopen(&path), Err(SessionError::InUse { .. })), "held by the first");
    }
}
