//! Newline-delimited JSON over a byte stream, the framing of MCP's stdio transport: a bounded,
//! cancel-safe line reader and a one-message writer, shared by the agent and child transports.

use serde::Serialize;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};

/// What one read produced.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Line {
    /// A whole line is in the buffer (without its newline: see `LineReader::text`).
    Complete,
    /// A line longer than the limit ended; its bytes were dropped.
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
            read: BufReader::new(read),
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
            if self.line.len() > self.limit {
                self.line.clear();
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

    /// The last complete line, without its newline, carriage return or byte-order mark.
    pub(crate) fn text(&self) -> &[u8] {
        let text = self.line.strip_suffix(b"\n").unwrap_or(&self.line);
        let text = text.strip_suffix(b"\r").unwrap_or(text);
        text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(text)
    }
}

/// Writes `message` as one line and flushes it.
pub(crate) async fn write<W: AsyncWrite + Unpin>(
    write: &mut W,
    message: &impl Serialize,
) -> std::io::Result<()> {
    let mut bytes = serde_json::to_vec(message).map_err(std::io::Error::other)?;
    bytes.push(b'\n');
    write.write_all(&bytes).await?;
    write.flush().await
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
        assert_eq!(reader.next(false).await.ok(), Some(Line::Complete));
        assert_eq!(reader.text(), b"ok");
        assert_eq!(reader.next(false).await.ok(), Some(Line::End));
    }
}
