//! One accepted connection, served by hyper until it ends, or closed by toolshelf when its client
//! is too slow to send a request's headers (`http.headerReadTimeout`) or leaves it idle between
//! requests (`http.connectionIdleTimeout`). Without them a client that sends its headers a byte
//! a minute, or opens connections and sends nothing, holds a socket and a task for ever.
//!
//! hyper's own header timeout starts when it waits for a request, so it would close idle
//! keep-alive connections at the header limit too; the two limits are kept apart here instead:
//! the connection's reads and its requests (from headers read to response body sent) are watched,
//! and one timer per connection checks them.

use std::{
    pin::Pin,
    sync::{
        Arc,
        atomic::{AtomicU64, AtomicUsize, Ordering},
    },
    task::{Context, Poll},
    time::{Duration, Instant},
};

use bytes::Bytes;
use hyper::body::{Body as HttpBody, Frame, SizeHint};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::Body;

/// The timeouts of every connection, and how many are open.
pub(super) struct Connections {
    header_read: Duration,
    idle: Duration,
    open: Arc<AtomicUsize>,
}

impl Connections {
    pub(super) fn new(header_read: Duration, idle: Duration) -> Self {
        Self {
            header_read,
            idle,
            open: Arc::default(),
        }
    }

    /// Connections open now.
    pub(super) fn open(&self) -> usize {
        self.open.load(Ordering::Relaxed)
    }

    /// A new connection's watch: wrap its stream with [`ConnectionWatch::stream`], each response with
    /// [`ConnectionWatch::response`], and run it until [`ConnectionWatch::expired`].
    pub(super) fn accepted(&self) -> ConnectionWatch {
        self.open.fetch_add(1, Ordering::Relaxed);
        let epoch = Instant::now();
        ConnectionWatch {
            state: Arc::new(State {
                epoch,
                last_activity: AtomicU64::new(0),
                headers_since: AtomicU64::new(NOT_READING),
                requests: AtomicUsize::new(0),
            }),
            header_read: self.header_read,
            idle: self.idle,
            open: self.open.clone(),
        }
    }
}

/// `State::headers_since` when no request's headers are being read.
const NOT_READING: u64 = u64::MAX;

/// What one connection's timer looks at; times are in µs since `epoch`.
struct State {
    epoch: Instant,
    /// The last byte read or response finished.
    last_activity: AtomicU64,
    /// When the first byte of a request whose headers are not all read yet came.
    headers_since: AtomicU64,
    /// Requests whose headers were read and whose response body was not all sent.
    requests: AtomicUsize,
}

impl State {
    fn now(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_micros()).unwrap_or(u64::MAX - 1)
    }
}

pub(super) struct ConnectionWatch {
    state: Arc<State>,
    header_read: Duration,
    idle: Duration,
    open: Arc<AtomicUsize>,
}

/// Why a connection was closed.
#[derive(Debug, Clone, Copy)]
pub(super) enum Expired {
    HeaderRead,
    Idle,
}

impl ConnectionWatch {
    pub(super) fn stream<S>(&self, inner: S) -> WatchedStream<S> {
        WatchedStream {
            inner,
            state: self.state.clone(),
        }
    }

    /// Marks a request as begun (its headers are read): the connection is not idle until the
    /// response's body has been sent or dropped.
    pub(super) fn request(&self) -> RequestGuard {
        self.state.requests.fetch_add(1, Ordering::Relaxed);
        self.state
            .headers_since
            .store(NOT_READING, Ordering::Relaxed);
        RequestGuard {
            state: self.state.clone(),
        }
    }

    /// Resolves when the connection has gone past one of its limits.
    pub(super) async fn expired(&self) -> Expired {
        loop {
            let state = &self.state;
            let now = state.now();
            let wait = if state.requests.load(Ordering::Relaxed) > 0 {
                self.idle
            } else {
                let (since, limit, why) = match state.headers_since.load(Ordering::Relaxed) {
                    NOT_READING => (
                        state.last_activity.load(Ordering::Relaxed),
                        self.idle,
                        Expired::Idle,
                    ),
                    since => (since, self.header_read, Expired::HeaderRead),
                };
                let limit = u64::try_from(limit.as_micros()).unwrap_or(u64::MAX / 2);
                let deadline = since.saturating_add(limit);
                if now >= deadline {
                    return why;
                }
                Duration::from_micros(deadline - now)
            };
            tokio::time::sleep(wait).await;
        }
    }
}

impl Drop for ConnectionWatch {
    fn drop(&mut self) {
        self.open.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Held by a response's body: the request it answers ends when the body is sent or dropped.
pub(super) struct RequestGuard {
    state: Arc<State>,
}

impl Drop for RequestGuard {
    fn drop(&mut self) {
        self.state
            .last_activity
            .store(self.state.now(), Ordering::Relaxed);
        self.state.requests.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A response body that holds its request's guard.
pub(super) struct GuardedBody {
    inner: Body,
    _guard: RequestGuard,
}

impl GuardedBody {
    pub(super) fn new(inner: Body, guard: RequestGuard) -> Self {
        Self {
            inner,
            _guard: guard,
        }
    }
}

impl HttpBody for GuardedBody {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// A connection's socket, noting when bytes come in.
pub(super) struct WatchedStream<S> {
    inner: S,
    state: Arc<State>,
}

impl<S: AsyncRead + Unpin> AsyncRead for WatchedStream<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if buf.filled().len() > before {
            let state = &self.state;
            let now = state.now();
            state.last_activity.store(now, Ordering::Relaxed);
            // Bytes between requests are the start of the next one's headers.
            if state.requests.load(Ordering::Relaxed) == 0 {
                let _ = state.headers_since.compare_exchange(
                    NOT_READING,
                    now,
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                );
            }
        }
        polled
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for WatchedStream<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}
