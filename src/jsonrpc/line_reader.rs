//! Reading newline-delimited messages, bounded and cancel-safe.
//!
//! Bytes are read straight into the one buffer a line is taken from (no second buffer to copy
//! them out of: a copy of every byte of a 1 MB result), and a line is found a word at a time
//! (`memchr`).

use tokio::io::{AsyncRead, AsyncReadExt};

/// How much room each read has at least: a pipe holds 64 KiB, so one read can take what the
/// writer wrote.
const READ_SIZE: usize = 64 * 1024;

/// How much of an over-long line is kept, for the id of the request it held.
const KEPT_HEAD: usize = 4 * 1024;

/// A buffer (this reader's, a writer's batch) grown past this by a large message is given back
/// once the message is handled, so a 70 MB message does not keep 70 MB resident for good.
pub(crate) const KEPT_CAPACITY: usize = 1024 * 1024;

/// What one read produced.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum LineRead {
    /// A whole line is in the buffer (without its newline: see `LineReader::text`).
    Complete,
    /// A line longer than the limit ended; its bytes were dropped but for the first few KiB
    /// (`LineReader::text`).
    TooLong,
    /// The stream ended.
    End,
}

/// Reads lines of at most `limit` bytes.
pub(crate) struct LineReader<R> {
    read: R,
    /// What was read and not yet handed on: the current line from `start`, then whatever
    /// followed it in the same read.
    buffer: Vec<u8>,
    start: usize,
    /// The end (past its newline) of the line last returned, which the next call drops.
    returned: Option<usize>,
    /// How far past `start` there is surely no newline.
    searched: usize,
    limit: usize,
    /// Set while the rest of an over-long line is skipped; only its head is in the buffer.
    skipping: bool,
    /// How much of an over-long line is kept.
    head: usize,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    pub(crate) fn new(read: R, limit: usize) -> Self {
        Self {
            read,
            buffer: Vec::new(),
            start: 0,
            returned: None,
            searched: 0,
            limit,
            skipping: false,
            head: KEPT_HEAD,
        }
    }

    /// Reads the next line. Cancel-safe: bytes of a partial line stay buffered for the next call.
    /// An over-long line is not kept: it is reported once it ends (or at once, with `stop_early`,
    /// and then again, with no text, once it ends).
    pub(crate) async fn next(&mut self, stop_early: bool) -> std::io::Result<LineRead> {
        if let Some(end) = self.returned.take() {
            self.start = end;
            self.searched = 0;
        }
        loop {
            let from = self.start + self.searched;
            if let Some(at) = memchr::memchr(b'\n', &self.buffer[from..]) {
                let end = from + at + 1;
                if std::mem::take(&mut self.skipping) || end - self.start > self.limit {
                    // The head is kept, the rest of the line up to its end dropped.
                    let head_end =
                        end.min(self.start + std::mem::replace(&mut self.head, KEPT_HEAD));
                    self.buffer.drain(head_end..end);
                    self.returned = Some(head_end);
                    return Ok(LineRead::TooLong);
                }
                self.returned = Some(end);
                return Ok(LineRead::Complete);
            }
            if self.skipping || self.buffer.len() - self.start > self.limit {
                self.buffer
                    .truncate(self.buffer.len().min(self.start + self.head));
                if !std::mem::replace(&mut self.skipping, true) && stop_early {
                    // Told now, and again (with nothing kept) when the line ends.
                    self.returned = Some(self.buffer.len());
                    self.head = 0;
                    return Ok(LineRead::TooLong);
                }
            }
            self.searched = self.buffer.len() - self.start;
            self.make_room();
            if self.read.read_buf(&mut self.buffer).await? == 0 {
                return Ok(LineRead::End);
            }
        }
    }

    /// Drops what was handed on and leaves room for a read.
    fn make_room(&mut self) {
        if self.start > 0 {
            if self.buffer.capacity() > KEPT_CAPACITY {
                self.buffer = self.buffer[self.start..].to_vec();
            } else {
                self.buffer.drain(..self.start);
            }
            self.start = 0;
        }
        self.buffer.reserve(READ_SIZE);
    }

    /// The last complete line, without its newline, carriage return or byte-order mark; after
    /// `LineRead::TooLong`, its first few KiB.
    pub(crate) fn text(&self) -> &[u8] {
        let end = self.returned.unwrap_or(self.start);
        let text = &self.buffer[self.start..end];
        let text = text.strip_suffix(b"\n").unwrap_or(text);
        let text = text.strip_suffix(b"\r").unwrap_or(text);
        text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every line `input` holds when read `chunk` bytes at a time, with a limit of `limit`.
    async fn lines(input: &[u8], chunk: usize, limit: usize, stop_early: bool) -> Vec<String> {
        let (mut ours, theirs) = tokio::io::duplex(chunk);
        let input = input.to_vec();
        let writer = tokio::spawn(async move {
            use tokio::io::AsyncWriteExt;
            ours.write_all(&input).await
        });
        let mut reader = LineReader::new(theirs, limit);
        let mut read = Vec::new();
        loop {
            let line = reader.next(stop_early).await.expect("read");
            let text = String::from_utf8_lossy(reader.text());
            match line {
                LineRead::End => break,
                LineRead::Complete => read.push(text.into_owned()),
                LineRead::TooLong => read.push(format!("too long: {text}")),
            }
        }
        writer.await.expect("joined").expect("written");
        read
    }

    #[tokio::test]
    async fn lines_are_split_trimmed_and_bounded_whatever_the_reads() {
        let input =
            b"\xEF\xBB\xBF{\"a\":1}\r\nthis line is far too long for the limit\nok\n\n".as_slice();
        for chunk in [1, 2, 7, 64, 4096] {
            assert_eq!(
                lines(input, chunk, 16, false).await,
                [
                    "{\"a\":1}",
                    "too long: this line is far too long for the limit",
                    "ok",
                    ""
                ],
                "{chunk} bytes a read"
            );
        }
    }

    #[tokio::test]
    async fn an_over_long_line_keeps_its_head_and_the_lines_after_it() {
        let mut input = b"first\n".to_vec();
        input.extend(std::iter::repeat_n(b'x', 3 * KEPT_HEAD));
        input.extend_from_slice(b"\nnext\npartial");
        let head = format!("too long: {}", "x".repeat(KEPT_HEAD));
        for chunk in [3, 1000, 100_000] {
            assert_eq!(
                lines(&input, chunk, 100, false).await,
                ["first", head.as_str(), "next"],
                "{chunk} bytes a read"
            );
        }
        // Told at once when asked, with what was read by then, then again (with nothing kept)
        // where it ends.
        let early = lines(&input, 1000, 100, true).await;
        assert_eq!(early.len(), 4, "{early:?}");
        assert!(early[1].starts_with("too long: xxx"), "{}", early[1]);
        assert_eq!(
            [&early[0], &early[2], &early[3]],
            ["first", "too long: ", "next"]
        );
    }

    #[tokio::test]
    async fn a_large_line_is_whole() {
        let mut input = vec![b'y'; 3 * READ_SIZE + 5];
        input.extend_from_slice(b"\nz\n");
        let read = lines(&input, READ_SIZE, usize::MAX, false).await;
        assert_eq!(read.len(), 2);
        assert_eq!(read[0].len(), 3 * READ_SIZE + 5);
        assert_eq!(read[1], "z");
    }
}
