//! Remote children: a server reached over HTTP instead of a process. A bridge task carries the
//! child's message stream (the lines `ChildTransport` and `tool_calls` read and write for every
//! child) over streamable HTTP (`streamable`) or the HTTP+SSE transport of 2024-11-05
//! (`legacy_sse`), so nothing above the transport knows whether a child is local or remote.

mod event_stream;
mod legacy_sse;
mod streamable;

use std::{
    sync::Arc,
    time::{Duration, Instant},
};

use reqwest::{
    StatusCode,
    header::{HeaderMap, HeaderName, HeaderValue},
};
use serde::Deserialize;
use serde_json::value::RawValue;
use tokio::{io::DuplexStream, sync::watch};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::{child_transport::CHILD_MESSAGE_LIMIT, link::Ends};
use crate::{
    config::{RemoteServer, RemoteTransport},
    http_client::CONNECT_TIMEOUT,
    jsonrpc::lines::{Line, LineReader, LineWriter},
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

/// What the bridge tasks of one connection share.
pub(super) struct Bridge {
    http: reqwest::Client,
    url: reqwest::Url,
    shown_url: String,
    /// The configured headers, marked sensitive.
    headers: HeaderMap,
    /// The configured header values (and their tokens), kept out of every message.
    secrets: Vec<String>,
    /// The OAuth login, for servers with `"auth": "oauth"`.
    grant: Option<Grant>,
    /// The child's side: messages from the server, one per line.
    out: LineWriter,
    ended: watch::Sender<Option<String>>,
    stop: CancellationToken,
}

/// The members of a message the bridge routes by.
#[derive(Deserialize)]
pub(super) struct Envelope<'a> {
    #[serde(borrow, default)]
    pub id: Option<&'a RawValue>,
    #[serde(default)]
    pub method: Option<String>,
    #[serde(borrow, default)]
    pub result: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub error: Option<&'a RawValue>,
}

impl Envelope<'_> {
    pub(super) fn is_request(&self) -> bool {
        self.id.is_some() && self.method.is_some()
    }

    /// True for the response to request `id`.
    pub(super) fn answers(&self, id: &RawValue) -> bool {
        self.method.is_none()
            && (self.result.is_some() || self.error.is_some())
            && self.id.is_some_and(|own| own.get() == id.get())
    }
}

impl Bridge {
    /// Passes one message from the server to the child's side.
    pub(super) async fn deliver(&self, message: &[u8]) {
        let text = message.trim_ascii();
        if text.is_empty() {
            return;
        }
        let mut line = Vec::with_capacity(text.len() + 1);
        line.extend_from_slice(text);
        line.push(b'\n');
        let _ = self.out.send(line).await;
    }

    /// Answers the child's request `id` with an error, as if the server had.
    pub(super) async fn refuse(&self, id: &RawValue, message: &str) {
        self.deliver_error(id, HTTP_FAILURE, message, None).await;
    }

    /// Passes on a JSON-RPC error answering request `id`, its message without secrets.
    async fn deliver_error(
        &self,
        id: &RawValue,
        code: i32,
        message: &str,
        data: Option<Box<RawValue>>,
    ) {
        let mut error = serde_json::json!({"code": code, "message": self.redact(message)});
        if let Some(data) = data {
            error["data"] = serde_json::to_value(data).unwrap_or_default();
        }
        let answer = serde_json::json!({"jsonrpc": "2.0", "id": id, "error": error});
        if let Ok(line) = serde_json::to_vec(&answer) {
            self.deliver(&line).await;
        }
    }

    /// Answers request `id` with the server's own JSON-RPC error from an HTTP error `body`
    /// (its code and data, with `message`), or as `refuse` does when the body is not one.
    pub(super) async fn answer_error(&self, id: &RawValue, body: &[u8], message: &str) {
        #[derive(Deserialize)]
        struct Body {
            error: Error,
        }
        #[derive(Deserialize)]
        struct Error {
            code: i32,
            #[serde(default)]
            data: Option<Box<RawValue>>,
        }
        match serde_json::from_slice::<Body>(body) {
            Ok(Body { error }) => {
                self.deliver_error(id, error.code, message, error.data)
                    .await;
            }
            Err(_) => self.refuse(id, message).await,
        }
    }

    /// The connection is gone: every call waiting fails with `reason`, and the next call
    /// connects again.
    pub(super) fn lose(&self, reason: &str) {
        let reason = self.redact(reason);
        tracing::warn!(url = %self.shown_url, %reason, "connection to the server lost");
        self.ended.send_if_modified(|ended| {
            if ended.is_some() {
                return false;
            }
            *ended = Some(reason);
            true
        });
        self.stop.cancel();
    }

    /// `text` without any configured header value or OAuth token (a server may echo a token
    /// back).
    pub(super) fn redact(&self, text: &str) -> String {
        let mut text = text.to_owned();
        for secret in &self.secrets {
            text = text.replace(secret.as_str(), "[redacted]");
        }
        match &self.grant {
            Some(grant) => grant.redact(&text),
            None => text,
        }
    }

    /// A request to the server with the configured headers.
    pub(super) fn request(
        &self,
        method: reqwest::Method,
        url: &reqwest::Url,
    ) -> reqwest::RequestBuilder {
        self.http
            .request(method, url.clone())
            .headers(self.headers.clone())
    }

    /// Sends what `build` makes, trying again while the connection is refused (`CONNECT_ATTEMPTS`),
    /// with the OAuth token where the server has a login (renewed once if the server refuses
    /// it). `None` when the server cannot be reached: the connection is then lost.
    pub(super) async fn send(
        &self,
        build: impl Fn() -> reqwest::RequestBuilder,
    ) -> Option<reqwest::Response> {
        let (response, token) = self.send_authorized(&build).await?;
        if response.status() == StatusCode::UNAUTHORIZED
            && let (Some(grant), Some(token)) = (&self.grant, token)
            && grant.renew(&token).await
        {
            return self
                .send_authorized(&build)
                .await
                .map(|(response, _)| response);
        }
        if response.status() == StatusCode::FORBIDDEN
            && let Some(grant) = &self.grant
        {
            grant.refused(&response);
        }
        Some(response)
    }

    /// `request` with the OAuth token, if the server has a login; the token goes with it.
    /// `None` when there is no valid login: the connection is then lost with what the user
    /// must do.
    pub(super) async fn authorize(
        &self,
        request: reqwest::RequestBuilder,
    ) -> Option<(reqwest::RequestBuilder, Option<String>)> {
        let Some(grant) = &self.grant else {
            return Some((request, None));
        };
        match grant.token().await {
            Ok(token) => Some((request.bearer_auth(&token), Some(token))),
            Err(reason) => {
                self.lose(&reason);
                None
            }
        }
    }

    async fn send_authorized(
        &self,
        build: &impl Fn() -> reqwest::RequestBuilder,
    ) -> Option<(reqwest::Response, Option<String>)> {
        let began = Instant::now();
        let mut cause = String::new();
        for wait in CONNECT_ATTEMPTS {
            // Not even a zero sleep on the first attempt: the timer rounds up to its next
            // millisecond tick, which was most of a remote call's cost.
            if !wait.is_zero() {
                tokio::time::sleep(wait).await;
            }
            let (request, token) = self.authorize(build()).await?;
            match request.send().await {
                Ok(response) => return Some((response, token)),
                Err(error) if untrusted_certificate(&error) => {
                    // Trying again cannot help.
                    self.lose(&format!(
                        "cannot connect: {}; if the server's certificate comes from a private authority, point SSL_CERT_FILE (or SSL_CERT_DIR) at that authority's certificate",
                        describe_error(&error)
                    ));
                    return None;
                }
                Err(error) if error.is_connect() => cause = describe_error(&error),
                Err(error) => {
                    self.lose(&describe_error(&error));
                    return None;
                }
            }
        }
        self.lose(&format!(
            "cannot connect: {cause} ({} attempts in {:.1?})",
            CONNECT_ATTEMPTS.len(),
            began.elapsed()
        ));
        None
    }

    /// "HTTP 401 Unauthorized: <the server's text>", from a response that is not a success
    /// and the start of its body.
    pub(super) fn failure_text(&self, status: StatusCode, body: &[u8]) -> String {
        let detail = error_text(body);
        let mut message = describe_status(status);
        if !detail.is_empty() {
            message.push_str(": ");
            message.push_str(&detail);
        }
        let advice = match (status, &self.grant) {
            (StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN, Some(grant)) => grant.advice(),
            (StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN, None) => {
                "; check the credentials in this server's `headers`".into()
            }
            (StatusCode::NOT_FOUND | StatusCode::METHOD_NOT_ALLOWED, _) => {
                "; check the server's `url` (toolshelf uses it as given)".into()
            }
            _ => String::new(),
        };
        message.push_str(&advice);
        self.redact(&message)
    }
}

/// "HTTP 401 Unauthorized".
pub(super) fn describe_status(status: StatusCode) -> String {
    match status.canonical_reason() {
        Some(reason) => format!("HTTP {} {reason}", status.as_u16()),
        None => format!("HTTP {}", status.as_u16()),
    }
}

/// A JSON-RPC error's message from an error body, or the body's text in one line.
fn error_text(body: &[u8]) -> String {
    #[derive(Deserialize)]
    struct Body {
        error: Message,
    }
    #[derive(Deserialize)]
    struct Message {
        message: String,
    }
    if let Ok(body) = serde_json::from_slice::<Body>(body) {
        return body.error.message;
    }
    let text = String::from_utf8_lossy(body);
    let text: Vec<&str> = text.split_whitespace().collect();
    super::child::excerpt(&text.join(" "))
}

/// Up to `limit` bytes of a body; whatever arrived if it breaks.
pub(super) async fn read_limited(mut response: reqwest::Response, limit: usize) -> Vec<u8> {
    let mut body = Vec::new();
    while body.len() < limit {
        match response.chunk().await {
            Ok(Some(chunk)) => body.extend_from_slice(&chunk),
            Ok(None) | Err(_) => break,
        }
    }
    body.truncate(limit);
    body
}

/// What went wrong, from an HTTP client error and its causes, without the URL (which may hold
/// a key).
pub(super) fn describe_error(error: &reqwest::Error) -> String {
    let mut parts = Vec::new();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        parts.push(cause.to_string());
        source = cause.source();
    }
    // hyper's causes repeat each other ("client error (Connect)", "tcp connect error", the OS
    // error): the last one says it plainly.
    match parts.last() {
        Some(last) if error.is_connect() => last.clone(),
        _ if error.is_timeout() => "the server did not answer in time".into(),
        _ => {
            parts.dedup();
            if parts.is_empty() {
                error.to_string()
            } else {
                parts.join(": ")
            }
        }
    }
}

/// True when TLS refused the server's certificate.
fn untrusted_certificate(error: &reqwest::Error) -> bool {
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        if matches!(
            tls_error(cause),
            Some(rustls::Error::InvalidCertificate(_) | rustls::Error::NoCertificatesPresented)
        ) {
            return true;
        }
        source = cause.source();
    }
    false
}

/// The TLS error in `error`, also where I/O errors wrap it (hyper's connector wraps twice).
fn tls_error<'a>(error: &'a (dyn std::error::Error + 'static)) -> Option<&'a rustls::Error> {
    if let Some(tls) = error.downcast_ref::<rustls::Error>() {
        return Some(tls);
    }
    let inner = error.downcast_ref::<std::io::Error>()?.get_ref()?;
    tls_error(inner)
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
pub(super) async fn read_lines(
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
            Ok(Line::Complete) => {
                let text = input.text();
                if !text.trim_ascii().is_empty() {
                    handle(text.to_vec());
                }
            }
            // The child's side never writes more than a child may: a line over the limit
            // cannot be sent as one request.
            Ok(Line::TooLong) => {
                tracing::warn!("a message to the server is over the size limit; dropped")
            }
            Ok(Line::End) | Err(_) => return,
        }
    }
}

/// The delay a server asked for before reconnecting, within bounds.
pub(super) fn retry_delay(asked: Option<Duration>) -> Duration {
    asked.unwrap_or(DEFAULT_RETRY).min(MAX_RETRY)
}
