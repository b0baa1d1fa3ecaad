//! Message size limits. rmcp's stdio codec silently drops a line over its limit, which would
//! leave the call waiting for its timeout; toolshelf instead watches the child's stdout and, when
//! a message grows past `CHILD_MESSAGE_LIMIT`, ends the connection so the calls fail at once
//! with a reason that names the limit.

use std::{
    pin::Pin,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    task::{Context, Poll},
};

use tokio::io::{AsyncRead, ReadBuf};

/// The largest message toolshelf reads from a child.
pub(crate) const CHILD_MESSAGE_LIMIT: usize = 64 * 1024 * 1024;

/// Reads a child's stdout, failing the stream once a line exceeds `CHILD_MESSAGE_LIMIT`.
pub(crate) struct FrameGuard<R> {
    inner: R,
    line: usize,
    tripped: Arc<AtomicBool>,
}

impl<R> FrameGuard<R> {
    pub(crate) fn new(inner: R, tripped: Arc<AtomicBool>) -> Self {
        Self {
            inner,
            line: 0,
            tripped,
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for FrameGuard<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled {
            let fresh = &buf.filled()[before..];
            self.line = match fresh.iter().rposition(|byte| *byte == b'\n') {
                Some(at) => fresh.len() - at - 1,
                None => self.line + fresh.len(),
            };
            if self.line > CHILD_MESSAGE_LIMIT {
                self.tripped.store(true, Ordering::Release);
                // An error read hands back nothing.
                buf.set_filled(before);
                return Poll::Ready(Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    "a message from the server exceeded the size limit",
                )));
            }
        }
        polled
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::AsyncReadExt;

    use super::*;

    #[tokio::test]
    async fn lines_under_the_limit_pass_and_a_longer_one_trips() {
        let mut data = b"{\"a\":1}\n".to_vec();
        data.extend(std::iter::repeat_n(b'x', CHILD_MESSAGE_LIMIT + 10));
        let tripped = Arc::new(AtomicBool::new(false));
        let mut guard = FrameGuard::new(&data[..], tripped.clone());
        let mut out = Vec::new();
        let result = guard.read_to_end(&mut out).await;
        assert!(result.is_err());
        assert!(tripped.load(Ordering::Acquire));
        assert!(out.starts_with(b"{\"a\":1}\n"));
    }
}
