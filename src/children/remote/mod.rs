//! Remote children: a server reached over HTTP instead of a process. A bridge task carries the
//! child's message stream (the lines `ChildTransport` and `tool_calls` read and write for every
//! child) over streamable HTTP (`streamable`) or the HTTP+SSE transport of 2024-11-05
//! (`legacy_sse`), so nothing above the transport knows whether a child is local or remote.

mod bridge;
mod event_stream;
mod http_failure;
mod legacy_sse;
mod streamable;

use bridge::{Bridge, BridgeKeys};
use http_failure::{describe_error, read_limited};

use std::{sync::Arc, time::Duration};

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use tokio::{io::DuplexStream, sync::watch};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::{child_transport::CHILD_MESSAGE_LIMIT, ends::Ends};
use crate::{
    config::{RemoteServer, RemoteTransport},
    http_client::CONNECT_TIMEOUT,
    jsonrpc::{
        line_reader::{LineRead, LineReader},
        line_writer::LineWriter,
    },
    oauth::{Grant, SavedLogin},
};

/// The JSON-RPC error code of a request the server answered with an HTTP error (the message
/// has the status), or that never reached it.
pub(crate) const HTTP_FAILURE: i32 = -32001;

/// Waits before each attempt to connect: a connection refused three times in under a second is
/// a server that is gone, and the calls waiting on it fail at once.
const CONNECT_ATTEMPTS: [Duration; 3] = [
    Duration::ZERO,
    Duration::from_millis(200),
    Duration::from_millis(600),
];

/// The reconnection delay when a server does not set one, and the most toolshelf waits when it
/// does.
const DEFAULT_RETRY: Duration = Duration::from_secs(1);
const MAX_RETRY: Duration = Duration::from_secs(10);

/// How much of an error response's body is read for its message.
const ERROR_BODY_LIMIT: usize = 4096;

/// The duplex buffer between the bridge and the child's line transport.
const PIPE_BUFFER: usize = 64 * 1024;

/// A running bridge to one remote server.
#[derive(Debug)]
pub(crate) struct Connection {
    /// The server's URL without what may be secret.
    shown_url: String,
    stop: CancellationToken,
    ended: watch::Receiver<Option<String>>,
    done: watch::Receiver<bool>,
}

impl Connection {
    /// Starts the bridge; nothing is sent before the child's first message. `protocol` is the
    /// revision to name in requests before the server has chosen one (2026-07-28, which has no
    /// `initialize`).
    pub(crate) fn open(
        server: &RemoteServer,
        protocol: Option<&'static str>,
        span: tracing::Span,
    ) -> Result<(Connection, Ends), String> {
        let shown_url = server.shown_url();
        let http = crate::http_client::shared()?;
        // Read now, so that a server nobody has logged in to fails at once.
        let login = match &server.oauth {
            Some(settings) => Some(SavedLogin::read(server, settings)?),
            None => None,
        };
        let mut headers = HeaderMap::new();
        for (name, value) in &server.headers {
            // Both were checked when the config was read.
            let (Ok(name), Ok(mut value)) = (
                HeaderName::from_bytes(name.as_bytes()),
                HeaderValue::from_str(value),
            ) else {
                continue;
            };
            value.set_sensitive(true);
            headers.append(name, value);
        }
        let secrets = server
            .headers
            .iter()
            .flat_map(|(_, value)| secret_parts(value))
            .collect();
        let (ours, child_write) = tokio::io::duplex(PIPE_BUFFER);
        let (child_read, theirs) = tokio::io::duplex(PIPE_BUFFER);
        let (ended_tx, ended) = watch::channel(None);
        let (done_tx, done) = watch::channel(false);
        let stop = CancellationToken::new();
        let url = server.url.clone();
        let transport = server.transport;
        let bridge_stop = stop.clone();
        let bridge_url = shown_url.clone();
        tokio::spawn(
            async move {
                let grant = match login {
                    Some(login) => Some(Grant::new(url.clone(), login).await),
                    None => None,
                };
                let (grant, refused) = match grant {
                    Some(Ok(grant)) => (Some(grant), None),
                    Some(Err(reason)) => (None, Some(reason)),
                    None => (None, None),
                };
                let bridge = Arc::new(Bridge {
                    http,
                    url,
                    shown_url: bridge_url,
                    headers,
                    secrets,
                    grant,
                    out: LineWriter::spawn(theirs),
                    ended: ended_tx,
                    stop: bridge_stop,
                });
                let input = LineReader::new(ours, CHILD_MESSAGE_LIMIT);
                match (refused, transport) {
                    (Some(reason), _) => bridge.lose(&reason),
                    (None, RemoteTransport::StreamableHttp) => {
                        streamable::run(bridge.clone(), input, protocol).await;
                    }
                    (None, RemoteTransport::Sse) => legacy_sse::run(bridge.clone(), input).await,
                }
                bridge.out.close().await;
                done_tx.send_replace(true);
            }
            .instrument(span),
        );
        Ok((
            Connection {
                shown_url,
                stop,
                ended,
                done,
            },
            Ends {
                read: Box::pin(child_read),
                write: Box::pin(child_write),
            },
        ))
    }

    /// True once the connection is lost or closed.
    pub(crate) fn ended(&self) -> bool {
        *self.done.borrow() || self.ended.borrow().is_some()
    }

    /// Waits up to `limit` for the bridge to finish; true if it has.
    pub(crate) async fn wait_ended(&self, limit: Duration) -> bool {
        let mut done = self.done.clone();
        let _ = tokio::time::timeout(limit, done.wait_for(|done| *done)).await;
        *self.done.borrow()
    }

    /// Ends the session (DELETE, where the server keeps one) and the bridge.
    pub(crate) async fn stop(&self) {
        self.stop.cancel();
        let mut done = self.done.clone();
        // The DELETE is bounded by the connect timeout; the rest is local.
        let _ = tokio::time::timeout(CONNECT_TIMEOUT * 2, done.wait_for(|done| *done)).await;
    }

    /// "the connection to https://host/mcp was lost: …" (or where the server is, while it is
    /// not lost), for error messages.
    pub(crate) fn describe_end(&self) -> String {
        match &*self.ended.borrow() {
            Some(reason) => format!(
                "the connection to {} was lost: {reason}; the next call connects again",
                self.shown_url
            ),
            None => format!("the server is at {}", self.shown_url),
        }
    }
}

/// A header value and, for `Bearer TOKEN` and the like, the token alone.
fn secret_parts(value: &str) -> Vec<String> {
    let mut parts = Vec::new();
    if value.len() >= 4 {
        parts.push(value.to_owned());
    }
    if let Some((_, token)) = value.split_once(' ')
        && token.len() >= 4
    {
        parts.push(token.to_owned());
    }
    parts
}

/// Reads the child's messages (one per line) until its side closes or the bridge stops;
/// `handle` gets each one.
async fn read_lines(
    bridge: &Bridge,
    input: &mut LineReader<DuplexStream>,
    mut handle: impl FnMut(Vec<u8>),
) {
    loop {
        let line = tokio::select! {
            line = input.next(true) => line,
            () = bridge.stop.cancelled() => return,
        };
        match line {
            Ok(LineRead::Complete) => {
                let text = input.text();
                if !text.trim_ascii().is_empty() {
                    handle(text.to_vec());
                }
            }
            // The child's side never writes more than a child may: a line over the limit
            // cannot be sent as one request.
            Ok(LineRead::TooLong) => {
                tracing::warn!("a message to the server is over the size limit; dropped")
            }
            Ok(LineRead::End) | Err(_) => return,
        }
    }
}

/// The delay a server asked for before reconnecting, within bounds.
pub(super) fn retry_delay(asked: Option<Duration>) -> Duration {
    asked.unwrap_or(DEFAULT_RETRY).min(MAX_RETRY)
}
