//! Bounded capture of a command's output stream.
//!
//! A command can print gigabytes (`yes`, a runaway log). The model only ever sees ~30k characters of it, so a
//! stream keeps its first [`HEAD_BYTES`] bytes and a ring of its last [`TAIL_BYTES`] bytes, and only counts the
//! rest: memory stays bounded whatever the command prints.

use std::collections::VecDeque;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Bytes kept from the start of a stream.
pub const HEAD_BYTES: usize = 15_000;
/// Bytes kept from the end of a stream.
pub const TAIL_BYTES: usize = 15_000;
/// At most this much of a stream is saved to its file: a command printing without end (`seq 1 1e18`) must not
/// fill the disk.
pub const MAX_SPILL_BYTES: u64 = 64 * 1024 * 1024;

/// One output stream: head, tail ring, and counts of everything; optionally the whole of it in a file.
#[derive(Debug, Default)]
pub struct Capture {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    total_bytes: u64,
    total_lines: u64,
    last_byte: Option<u8>,
    spill: Option<Spill>,
}

/// Where the whole output goes once it is too big to keep: the file is created only then.
#[derive(Debug)]
struct Spill {
    path: PathBuf,
    file: Option<std::fs::File>,
    failed: bool,
    /// Bytes written to the file so far; past [`MAX_SPILL_BYTES`] the rest is only counted.
    written: u64,
}

impl Capture {
    pub fn new() -> Self {
        Self::default()
    }

    /// A capture that also saves the whole output to `path` when it outgrows what is kept in memory, so the
    /// model can Read or Grep the part left out of the result.
    pub fn spilling_to(path: PathBuf) -> Self {
        Capture { spill: Some(Spill { path, file: None, failed: false, written: 0 }), ..Self::default() }
    }

    /// Whether the saved file stops at [`MAX_SPILL_BYTES`] (the stream went on).
    pub fn spill_truncated(&self) -> bool {
        self.spill.as_ref().is_some_and(|spill| spill.written >= MAX_SPILL_BYTES)
    }

    /// The file holding the whole output, when it was needed and written.
    pub fn spilled_path(&self) -> Option<&Path> {
        self.spill.as_ref().filter(|spill| spill.file.is_some() && !spill.failed).map(|spill| spill.path.as_path())
    }

    fn spill(&mut self, bytes: &[u8]) {
        let Some(spill) = &mut self.spill else { return };
        if spill.failed {
            return;
        }
        if spill.file.is_none() {
            if self.total_bytes + bytes.len() as u64 <= (HEAD_BYTES + TAIL_BYTES) as u64 {
                return;
            }
            // Nothing was dropped yet: head and tail together are everything so far.
            let created = spill.path.parent().map_or(Ok(()), std::fs::create_dir_all).and_then(|()| {
                let mut file = std::fs::File::create(&spill.path)?;
                file.write_all(&self.head)?;
                let (front, back) = self.tail.as_slices();
                file.write_all(front)?;
                file.write_all(back)?;
                Ok(file)
            });
            match created {
                Ok(file) => {
                    spill.file = Some(file);
                    spill.written = self.head.len() as u64 + self.tail.len() as u64;
                }
                Err(_) => {
                    spill.failed = true;
                    return;
                }
            }
        }
        let room = MAX_SPILL_BYTES.saturating_sub(spill.written);
        let bytes = &bytes[..bytes.len().min(usize::try_from(room).unwrap_or(usize::MAX))];
        if let Some(file) = &mut spill.file
            && !bytes.is_empty()
        {
            if file.write_all(bytes).is_err() {
                spill.failed = true;
            }
            spill.written += bytes.len() as u64;
        }
    }

    pub fn push(&mut self, mut bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        self.spill(bytes);
        self.total_bytes += bytes.len() as u64;
        self.total_lines += bytes.iter().filter(|&&b| b == b'\n').count() as u64;
        self.last_byte = bytes.last().copied();
        let room = HEAD_BYTES - self.head.len();
        if room > 0 {
            let take = room.min(bytes.len());
            self.head.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
        }
        if bytes.len() >= TAIL_BYTES {
            self.tail.clear();
            self.tail.extend(&bytes[bytes.len() - TAIL_BYTES..]);
        } else {
            let overflow = (self.tail.len() + bytes.len()).saturating_sub(TAIL_BYTES);
            self.tail.drain(..overflow);
            self.tail.extend(bytes);
        }
    }

    pub fn is_empty(&self) -> bool {
        self.total_bytes == 0
    }

    /// Total bytes seen.
    pub fn len(&self) -> u64 {
        self.total_bytes
    }

    /// Lines seen (a last line without a newline counts).
    pub fn lines(&self) -> u64 {
        self.total_lines + u64::from(self.last_byte.is_some_and(|b| b != b'\n'))
    }

    /// The output as text of at most about `budget` characters: all of it when it fits, otherwise its start and
    /// its end around a line saying how much was left out. Trailing newlines are trimmed.
    pub fn render(&self, budget: usize) -> String {
        let held = self.head.len() + self.tail.len();
        if self.total_bytes as usize <= budget && self.total_bytes as usize == held {
            let mut all = self.head.clone();
            all.extend(self.tail.iter());
            let text = String::from_utf8_lossy(&all);
            return text.trim_end_matches(['\n', '\r']).to_string();
        }
        let half = budget / 2;
        let head = &self.head[..self.head.len().min(half)];
        let tail: Vec<u8> = {
            let skip = self.tail.len().saturating_sub(half);
            self.tail.iter().skip(skip).copied().collect()
        };
        // Cut at UTF-8 boundaries so the shown parts never begin or end with a broken character.
        let head = &head[..utf8_prefix_len(head)];
        let tail_start = tail.iter().position(|&b| (b & 0xC0) != 0x80).unwrap_or(tail.len());
        let tail = &tail[tail_start..];
        let omitted_bytes = self.total_bytes - (head.len() + tail.len()) as u64;
        let shown_lines = head.iter().chain(tail).filter(|&&b| b == b'\n').count() as u64;
        let omitted_lines = self.total_lines.saturating_sub(shown_lines);
        format!(
            "{}\n\n… [{omitted_bytes} characters ({omitted_lines} lines) omitted from the middle; total {} \
             characters, {} lines] …\n\n{}",
            String::from_utf8_lossy(head).trim_end_matches(['\n', '\r']),
            self.total_bytes,
            self.lines(),
            String::from_utf8_lossy(tail).trim_end_matches(['\n', '\r'])
        )
    }
}

/// Length of the longest prefix of `bytes` that does not end inside a UTF-8 character.
fn utf8_prefix_len(bytes: &[u8]) -> usize {
    match std::str::from_utf8(bytes) {
        Ok(_) => bytes.len(),
        Err(err) if err.error_len().is_none() => err.valid_up_to(),
        // Invalid bytes in the middle are shown lossily; only an incomplete character at the end is cut.
        Err(_) => {
            let back = bytes.iter().rev().take(4).position(|&b| (b & 0xC0) != 0x80).map_or(0, |p| p + 1);
            let lead = bytes.len() - back;
            let needed = match bytes.get(lead) {
                Some(b) if *b >= 0xF0 => 4,
                Some(b) if *b >= 0xE0 => 3,
                Some(b) if *b >= 0xC0 => 2,
                _ => 1,
            };
            if back < needed { lead } else { bytes.len() }
        }
    }
}

/// Turns a byte stream into text pieces without splitting multi-byte characters between pieces (for live
/// output, which arrives in arbitrary chunks).
#[derive(Debug, Default)]
pub struct Utf8Stream {
    pending: Vec<u8>,
}

impl Utf8Stream {
    pub fn push(&mut self, bytes: &[u8]) -> String {
        self.pending.extend_from_slice(bytes);
        let complete = utf8_prefix_len(&self.pending);
        let text = String::from_utf8_lossy(&self.pending[..complete]).into_owned();
        self.pending.drain(..complete);
        if self.pending.len() > 4 {
            // Not a character in progress, just garbage: flush it lossily.
            let rest = String::from_utf8_lossy(&self.pending).into_owned();
            self.pending.clear();
            return text + &rest;
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_saved_file_stops_at_its_limit() {
        let dir = tempfile::tempdir().unwrap();
        let mut endless = Capture::spilling_to(dir.path().join("endless.txt"));
        let chunk = vec![b'y'; 1024 * 1024];
        for _ in 0..(MAX_SPILL_BYTES / (1024 * 1024) + 3) {
            endless.push(&chunk);
        }
        assert!(endless.spill_truncated());
        assert_eq!(std::fs::metadata(endless.spilled_path().unwrap()).unwrap().len(), MAX_SPILL_BYTES);
        assert_eq!(endless.len(), MAX_SPILL_BYTES + 3 * 1024 * 1024, "everything is still counted");
    }

    #[test]
    fn big_output_is_saved_whole_to_a_file_and_small_output_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let mut small = Capture::spilling_to(dir.path().join("small.txt"));
        small.push(b"hello\n");
        assert!(small.spilled_path().is_none());
        assert!(!dir.path().join("small.txt").exists());
        let mut big = Capture::spilling_to(dir.path().join("out/big.txt"));
        let mut expected = Vec::new();
        for i in 0..20_000 {
            let line = format!("line {i}\n");
            big.push(line.as_bytes());
            expected.extend_from_slice(line.as_bytes());
        }
        let path = big.spilled_path().unwrap().to_path_buf();
        drop(big);
        assert_eq!(std::fs::read(path).unwrap(), expected);
    }

    #[test]
    fn small_output_is_kept_whole() {
        let mut c = Capture::new();
        c.push(b"hello\n");
        c.push(b"world\n");
        assert_eq!(c.render(30_000), "hello\nworld");
        assert_eq!(c.lines(), 2);
    }

    #[test]
    fn huge_output_keeps_head_and_tail_with_counts() {
        let mut c = Capture::new();
        let chunk = vec![b'a'; 8192];
        for _ in 0..1221 {
            c.push(&chunk);
        }
        c.push(b"\nEND\n");
        assert_eq!(c.len(), 1221 * 8192 + 5);
        assert!(c.head.len() == HEAD_BYTES && c.tail.len() == TAIL_BYTES, "memory stays bounded");
        let text = c.render(30_000);
        assert!(text.len() < 30_300, "{}", text.len());
        assert!(text.starts_with("aaaa"));
        assert!(text.ends_with("aaa\nEND"));
        let omitted = 1221 * 8192 + 5 - 30_000;
        assert!(
            text.contains(&format!("[{omitted} characters (0 lines) omitted from the middle")),
            "{}",
            &text[14_990..15_200]
        );
    }

    #[test]
    fn render_never_splits_characters() {
        let mut c = Capture::new();
        for _ in 0..20_000 {
            c.push("é".as_bytes());
        }
        let text = c.render(1001);
        assert!(!text.contains('\u{fffd}'));
    }

    #[test]
    fn utf8_stream_joins_split_characters() {
        let mut s = Utf8Stream::default();
        let bytes = "héllo".as_bytes();
        assert_eq!(s.push(&bytes[..2]), "h");
        assert_eq!(s.push(&bytes[2..]), "éllo");
        assert_eq!(s.push(b"\xff\xfe ok"), "\u{fffd}\u{fffd} ok");
    }
}
