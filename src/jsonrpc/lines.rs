//! Newline-delimited JSON over a byte stream, the framing of MCP's stdio transport: a bounded,
//! cancel-safe line reader and a queued line writer, shared by the agent and child transports.

use serde::Serialize;
use tokio::{
    io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader},
    sync::{mpsc, oneshot},
};

/// Read buffer size: a pipe holds 64 KiB, so one read can take what the writer wrote.
const READ_BUFFER: usize = 64 * 1024;

/// How much of an over-long line is kept, for the id of the request it held.
const KEPT_HEAD: usize = 4 * 1024;

/// A line buffer grown past this by a large message is given back once the message is handled,
/// so a 70 MB message does not keep 70 MB resident for good.
const KEPT_CAPACITY: usize = 1024 * 1024;

/// What one read produced.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Line {
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
    read: BufReader<R>,
    line: Vec<u8>,
    limit: usize,
    /// Set while the rest of an over-long line is skipped.
    skipping: bool,
    /// The buffer holds a line already returned; the next read starts a new one.
    returned: bool,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    pub(crate) fn new(read: R, limit: usize) -> Self {
        Self {
            read: BufReader::with_capacity(READ_BUFFER, read),
            line: Vec::new(),
            limit,
            skipping: false,
            returned: false,
        }
    }

    /// Reads the next line. Cancel-safe: bytes of a partial line stay buffered for the next call.
    /// An over-long line is not kept: it is reported once it ends (or at once, with `stop_early`).
    pub(crate) async fn next(&mut self, stop_early: bool) -> std::io::Result<Line> {
        if std::mem::take(&mut self.returned) {
            self.line.clear();
            if self.line.capacity() > KEPT_CAPACITY {
                self.line = Vec::new();
            }
        }
        loop {
            let available = self.read.fill_buf().await?;
            if available.is_empty() {
                return Ok(Line::End);
            }
            let (chunk, found) = match available.iter().position(|byte| *byte == b'\n') {
                Some(at) => (&available[..=at], true),
                None => (available, false),
            };
            let used = chunk.len();
            if !self.skipping {
                self.line.extend_from_slice(chunk);
            }
            self.read.consume(used);
            if !self.skipping && self.line.len() > self.limit {
                self.line.truncate(KEPT_HEAD);
                self.skipping = true;
                if stop_early {
                    self.returned = true;
                    return Ok(Line::TooLong);
                }
            }
            if found {
                self.returned = true;
                return Ok(if std::mem::take(&mut self.skipping) {
                    Line::TooLong
                } else {
                    Line::Complete
                });
            }
        }
    }

    /// The last complete line, without its newline, carriage return or byte-order mark; after
    /// `Line::TooLong`, its first few KiB.
    pub(crate) fn text(&self) -> &[u8] {
        let text = self.line.strip_suffix(b"\n").unwrap_or(&self.line);
        let text = text.strip_suffix(b"\r").unwrap_or(text);
        text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(text)
    }
}

/// `message` as one line, newline included.
pub(crate) fn encode(message: &impl Serialize) -> std::io::Result<Vec<u8>> {
    let mut bytes = serde_json::to_vec(message).map_err(std::io::Error::other)?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// How many lines may wait for the writer before senders wait in turn.
const QUEUE: usize = 256;

/// Queued lines are written together, up to this many bytes per write.
const BATCH: usize = 64 * 1024;

enum Command {
    Line(Vec<u8>),
    Close(oneshot::Sender<()>),
}

/// The writing half of a stream: lines sent from anywhere are written by one task, whole and in
/// the order they were queued, so a sender that is cancelled never leaves half a line behind, and
/// what was queued first is written first. Cheap to clone; the stream closes when the last clone
/// is dropped or `close` is called.
#[derive(Clone)]
pub(crate) struct LineWriter {
    queue: mpsc::Sender<Command>,
}

impl LineWriter {
    pub(crate) fn spawn<W: AsyncWrite + Send + Unpin + 'static>(write: W) -> Self {
        let (queue, commands) = mpsc::channel(QUEUE);
        tokio::spawn(write_lines(write, commands));
        Self { queue }
    }

    /// Queues `line` (which ends with a newline), waiting while the queue is full.
    pub(crate) async fn send(&self, line: Vec<u8>) -> std::io::Result<()> {
        self.queue
            .send(Command::Line(line))
            .await
            .map_err(|_| closed())
    }

    /// Queues `line` unless the queue is full or closed, for what may be dropped (progress).
    pub(crate) fn try_send(&self, line: Vec<u8>) -> bool {
        self.queue.try_send(Command::Line(line)).is_ok()
    }

    /// Writes what is queued, then closes the stream.
    pub(crate) async fn close(&self) {
        let (done, closed) = oneshot::channel();
        if self.queue.send(Command::Close(done)).await.is_ok() {
            let _ = closed.await;
        }
    }
}

fn closed() -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::BrokenPipe, "the stream is closed")
}

async fn write_lines<W: AsyncWrite + Unpin>(mut write: W, mut commands: mpsc::Receiver<Command>) {
    let mut batch = Vec::new();
    while let Some(command) = commands.recv().await {
        let mut close = None;
        match command {
            Command::Line(line) => batch = line,
            Command::Close(done) => close = Some(done),
        }
        while close.is_none() && batch.len() < BATCH {
            match commands.try_recv() {
                Ok(Command::Line(line)) => batch.extend_from_slice(&line),
                Ok(Command::Close(done)) => close = Some(done),
                Err(_) => break,
            }
        }
        if !batch.is_empty() {
            let written = async {
                write.write_all(&batch).await?;
                write.flush().await
            };
            if let Err(error) = written.await {
                tracing::debug!(%error, "the stream cannot be written; closing it");
                return;
            }
            batch.clear();
            if batch.capacity() > KEPT_CAPACITY {
                batch = Vec::new();
            }
        }
        if let Some(done) = close {
            let _ = write.shutdown().await;
            drop(write);
            let _ = done.send(());
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn lines_are_split_trimmed_and_bounded() {
        let input =
            b"\xEF\xBB\xBF{\"a\":1}\r\nthis line is far too long for the limit\nok\n".as_slice();
        let mut reader = LineReader::new(input, 16);
        assert_eq!(reader.next(false).await.ok(), Some(Line::Complete));
        assert_eq!(reader.text(), b"{\"a\":1}");
        assert_eq!(reader.next(false).await.ok(), Some(Line::TooLong));
        assert_eq!(reader.text(), b"this line is far too long for the limit");
        assert_eq!(reader.next(false).await.ok(), Some(Line::Complete));
        assert_eq!(reader.text(), b"ok");
        assert_eq!(reader.next(false).await.ok(), Some(Line::End));
    }
}
