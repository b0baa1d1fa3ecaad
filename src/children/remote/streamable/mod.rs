//! The streamable HTTP transport (2025-03-26 and later), client side: each message of the child's
//! side is POSTed; the answer comes as JSON or as an event stream, which is resumed from its last
//! event id when it ends early; the server's own messages come on a GET stream. The session
//! (`Mcp-Session-Id`) is kept, and renewed when the server has forgotten it.

mod events;
mod outgoing;

use outgoing::Outgoing;

use std::sync::{
    Arc, Mutex,
    atomic::{AtomicBool, Ordering},
};

use bytes::Bytes;
use reqwest::{
    Method, StatusCode,
    header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue},
};
use serde::Deserialize;
use serde_json::value::RawValue;
use tokio::{io::DuplexStream, task::JoinSet};

use super::{
    Bridge, BridgeKeys,
    event_stream::{EventStream, StreamError},
    read_limited, read_lines, retry_delay,
};
use crate::{
    children::child_transport::{CHILD_MESSAGE_LIMIT, too_large},
    jsonrpc::line_reader::LineReader,
    locks,
    revision::{PROTOCOL_VERSION_HEADER, SESSION_ID_HEADER},
};

const MCP_METHOD: HeaderName = HeaderName::from_static("mcp-method");
const MCP_NAME: HeaderName = HeaderName::from_static("mcp-name");
const LAST_EVENT_ID: HeaderName = HeaderName::from_static("last-event-id");
const EVENT_STREAM: &str = "text/event-stream";
const BOTH: HeaderValue = HeaderValue::from_static("application/json, text/event-stream");
/// The revision whose requests name their method and tool in headers.
const HEADERS_REVISION: &str = "2026-07-28";

/// How often in a row a response stream may end with nothing new before the request is given
/// up.
const EMPTY_RESUMES: usize = 3;
/// How long the end of a stream is waited for after its answer.
const DRAIN_LIMIT: std::time::Duration = std::time::Duration::from_millis(200);

/// The session as the server set it.
#[derive(Default)]
struct RemoteSession {
    id: Option<HeaderValue>,
    protocol: Option<HeaderValue>,
    /// The child's `initialize`, sent again when the session must be renewed.
    initialize: Option<Bytes>,
    /// The child's last `logging/setLevel` (the agent's level), sent again on a new session.
    log_level: Option<Bytes>,
    /// Counts renewals, so that requests that failed on one session renew it once.
    generation: u64,
}

struct Streamable {
    bridge: Arc<Bridge>,
    session: Mutex<RemoteSession>,
    renewing: tokio::sync::Mutex<()>,
    listening: AtomicBool,
}

pub(super) async fn run(
    bridge: Arc<Bridge>,
    mut input: LineReader<DuplexStream>,
    protocol: Option<&'static str>,
) {
    let client = Arc::new(Streamable {
        bridge: bridge.clone(),
        session: Mutex::new(RemoteSession {
            protocol: protocol.map(HeaderValue::from_static),
            ..RemoteSession::default()
        }),
        renewing: tokio::sync::Mutex::new(()),
        listening: AtomicBool::new(false),
    });
    let mut posts = JoinSet::new();
    read_lines(&bridge, &mut input, |line| {
        while posts.try_join_next().is_some() {}
        if let Some(outgoing) = Outgoing::read(line) {
            let client = client.clone();
            posts.spawn(async move { client.post(outgoing).await });
        }
    })
    .await;
    posts.abort_all();
    let lost = bridge.ended.borrow().is_some();
    if !lost {
        client.close().await;
    }
}

impl Streamable {
    fn lock(&self) -> std::sync::MutexGuard<'_, RemoteSession> {
        locks::lock(&self.session)
    }

    /// The session's headers for `outgoing` (if any), and the session's generation.
    fn headers(&self, outgoing: Option<&Outgoing>) -> (HeaderMap, u64) {
        let session = self.lock();
        let mut headers = HeaderMap::new();
        if let Some(id) = &session.id {
            headers.insert(SESSION_ID_HEADER, id.clone());
        }
        if let Some(protocol) = &session.protocol {
            headers.insert(PROTOCOL_VERSION_HEADER, protocol.clone());
            if protocol == HEADERS_REVISION
                && let Some(outgoing) = outgoing
            {
                let method = outgoing.method.as_deref().map(HeaderValue::from_str);
                if let Some(Ok(method)) = method {
                    headers.insert(MCP_METHOD, method);
                }
                let name = outgoing.name.as_deref().map(HeaderValue::from_str);
                if let Some(Ok(name)) = name {
                    headers.insert(MCP_NAME, name);
                }
            }
        }
        (headers, session.generation)
    }

    fn url(&self) -> &reqwest::Url {
        &self.bridge.url
    }

    async fn post(self: &Arc<Self>, outgoing: Outgoing) {
        if outgoing.is_initialize() {
            self.lock().initialize = Some(outgoing.body.clone());
        } else if outgoing.method.as_deref() == Some("logging/setLevel") {
            self.lock().log_level = Some(outgoing.body.clone());
        }
        let mut renewed = false;
        loop {
            let (headers, generation) = self.headers(Some(&outgoing));
            let had_session = headers.contains_key(SESSION_ID_HEADER);
            let sent = self.send_post(headers, outgoing.body.clone()).await;
            // A lost connection fails every call through the end of the child's stream.
            let Some(response) = sent else { return };
            let status = response.status();
            if !status.is_success() {
                let text = read_limited(response, super::ERROR_BODY_LIMIT).await;
                if had_session && !renewed && !outgoing.is_initialize() && forgotten(status, &text)
                {
                    // The server did not take the message: it is sent again on a new session.
                    match self.renew(generation).await {
                        Ok(()) => {
                            renewed = true;
                            continue;
                        }
                        Err(reason) => {
                            self.refuse(&outgoing, &reason).await;
                            return;
                        }
                    }
                }
                let message = self.bridge.failure_text(status, &text);
                match (status, outgoing.request_id()) {
                    // A 400 that carries the server's JSON-RPC error is its MCP answer (a server
                    // on 2026-07-28 only refuses `initialize` so): its code and data are kept.
                    (StatusCode::BAD_REQUEST, Some(id)) => {
                        self.bridge.answer_error(id, &text, &message).await;
                    }
                    _ => self.refuse(&outgoing, &message).await,
                }
                return;
            }
            if outgoing.is_initialize() {
                self.keep_session(response.headers());
            }
            self.take_answer(response, &outgoing).await;
            if outgoing.method.as_deref() == Some("notifications/initialized")
                && !self.listening.swap(true, Ordering::AcqRel)
            {
                let client = self.clone();
                tokio::spawn(async move {
                    let stop = client.bridge.stop.clone();
                    tokio::select! {
                        () = client.listen() => {}
                        () = stop.cancelled() => {}
                    }
                });
            }
            return;
        }
    }

    /// POSTs one message; `None` when the server cannot be reached (the connection is lost).
    async fn send_post(&self, headers: HeaderMap, body: Bytes) -> Option<reqwest::Response> {
        self.bridge
            .send(|| {
                self.bridge
                    .request(Method::POST, self.url())
                    .headers(headers.clone())
                    .header(CONTENT_TYPE, "application/json")
                    .header(ACCEPT, BOTH)
                    .body(body.clone())
            })
            .await
    }

    /// Answers a request that the server refused, or logs a refused notification.
    async fn refuse(&self, outgoing: &Outgoing, message: &str) {
        match outgoing.request_id() {
            Some(id) => self.bridge.refuse(id, message).await,
            None => tracing::debug!(
                message = %self.bridge.redact(message),
                method = outgoing.method.as_deref().unwrap_or("(response)"),
                "the server refused a message"
            ),
        }
    }

    fn keep_session(&self, headers: &HeaderMap) {
        if let Some(id) = headers.get(SESSION_ID_HEADER) {
            self.lock().id = Some(id.clone());
        }
    }

    /// Passes on what a successful POST answered: one JSON message (or a batch), or a stream.
    async fn take_answer(&self, response: reqwest::Response, outgoing: &Outgoing) {
        let kind = content_type(response.headers());
        if kind.starts_with(EVENT_STREAM) {
            let awaited = outgoing.request_id().map(ToOwned::to_owned);
            self.read_events(response, awaited, outgoing.is_initialize())
                .await;
            return;
        }
        let body = read_limited(response, CHILD_MESSAGE_LIMIT + 1).await;
        if body.len() > CHILD_MESSAGE_LIMIT {
            self.refuse(outgoing, &too_large()).await;
            return;
        }
        if body.trim_ascii().is_empty() {
            // 202 Accepted: a notification or a response taken. A request's answer will come on
            // the GET stream.
            return;
        }
        for message in batch(&body) {
            if outgoing.is_initialize() {
                self.note_protocol(message);
            }
            self.bridge.deliver(message).await;
        }
    }

    /// After `initialize`: the revision the server chose goes in every later request.
    fn note_protocol(&self, message: &[u8]) {
        #[derive(Deserialize)]
        struct Answer {
            result: Chosen,
        }
        #[derive(Deserialize)]
        struct Chosen {
            #[serde(rename = "protocolVersion")]
            protocol_version: String,
        }
        if let Ok(answer) = serde_json::from_slice::<Answer>(message)
            && let Ok(version) = HeaderValue::from_str(&answer.result.protocol_version)
        {
            self.lock().protocol = Some(version);
        }
    }

    /// Opens a new session after the server forgot the one of `seen` (a restart, an expiry):
    /// the child's `initialize` again, then `notifications/initialized`. Requests that failed on
    /// the same session share one renewal.
    async fn renew(&self, seen: u64) -> Result<(), String> {
        let _turn = self.renewing.lock().await;
        let initialize = {
            let mut session = self.lock();
            if session.generation != seen {
                return Ok(());
            }
            session.id = None;
            session.initialize.clone()
        };
        let Some(initialize) = initialize else {
            return Err(
                "the server forgot the session, and there is no initialize to open a new one"
                    .into(),
            );
        };
        let (headers, _) = self.headers(None);
        let sent = self.send_post(headers, initialize).await;
        let response = sent.ok_or("the server cannot be reached")?;
        let status = response.status();
        if !status.is_success() {
            let text = read_limited(response, super::ERROR_BODY_LIMIT).await;
            return Err(format!(
                "the server forgot the session, and a new one could not be opened: {}",
                self.bridge.failure_text(status, &text)
            ));
        }
        self.keep_session(response.headers());
        // The answer repeats what the child already knows; it is read and dropped.
        let _ = read_limited(response, CHILD_MESSAGE_LIMIT).await;
        let initialized =
            Bytes::from_static(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        let (headers, _) = self.headers(None);
        let _ = self.send_post(headers, initialized).await;
        // The server's log level was the agent's; its answer is not the child's to see again.
        let log_level = self.lock().log_level.clone();
        if let Some(log_level) = log_level {
            let (headers, _) = self.headers(None);
            if let Some(response) = self.send_post(headers, log_level).await {
                let _ = read_limited(response, super::ERROR_BODY_LIMIT).await;
            }
        }
        self.lock().generation += 1;
        tracing::info!(url = %self.bridge.shown_url, "the server forgot the session; a new one was opened");
        Ok(())
    }

    /// Ends the session at the server, if it keeps one (best effort).
    async fn close(&self) {
        let (headers, _) = self.headers(None);
        if !headers.contains_key(SESSION_ID_HEADER) {
            return;
        }
        let request = self
            .bridge
            .request(Method::DELETE, self.url())
            .headers(headers)
            .timeout(super::CONNECT_TIMEOUT);
        let Some((request, _)) = self.bridge.authorize(request).await else {
            return;
        };
        if let Err(error) = request.send().await {
            tracing::debug!(error = %super::describe_error(&error), "the session could not be ended");
        }
    }
}

/// True when the server answered as one that does not know the session: 404, or the 400 "no
/// valid session" that some servers send instead.
fn forgotten(status: StatusCode, body: &[u8]) -> bool {
    status == StatusCode::NOT_FOUND
        || (status == StatusCode::BAD_REQUEST
            && String::from_utf8_lossy(body)
                .to_ascii_lowercase()
                .contains("session"))
}

fn content_type(headers: &HeaderMap) -> &str {
    headers
        .get(CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default()
}

/// The messages of a JSON body: one, or each of a batch.
fn batch(body: &[u8]) -> Vec<&[u8]> {
    if body.trim_ascii_start().first() == Some(&b'[')
        && let Ok(messages) = serde_json::from_slice::<Vec<&RawValue>>(body)
    {
        return messages
            .into_iter()
            .map(|message| message.get().as_bytes())
            .collect();
    }
    vec![body]
}
