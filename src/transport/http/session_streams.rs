//! Where a 2025-era session's messages go between its HTTP requests and its MCP service: the
//! session manager rmcp's streamable HTTP service is given. rmcp's own (`LocalSessionManager`)
//! runs a worker task per session and passes every message through five channels of whole
//! messages, each holding a block from the start: most of what an idle session cost toolshelf. Here a session is a map entry, one channel of boxed messages into its service and
//! a lock around its routes; what the service sends goes into the right event stream as it is
//! sent, with no task in between.
//!
//! What it keeps from rmcp's: a priming event first on each request's stream, event ids a client
//! can resume from (`Last-Event-ID`), a request's progress and the requests its handling sends
//! (SEP-2260) on that request's stream, everything else on the stream of the session's GET (kept
//! until one is open), an answer nobody read kept a minute for a resume, and extra GET streams
//! kept open but quiet. What differs: a session expires after `sessionIdleTimeout` with nothing
//! from its agent *and nothing in flight*, so a long call keeps its session; and a resume
//! replays the events after the one named, not that one again.

use std::{
    collections::HashMap,
    sync::{
        Arc, Mutex, RwLock, RwLockReadGuard, RwLockWriteGuard, Weak,
        atomic::{AtomicUsize, Ordering},
    },
    time::{Duration, Instant},
};

use crate::{locks, tasks::TaskDeclaration};
use futures::Stream;
use rmcp::{
    RoleServer,
    model::{
        ClientJsonRpcMessage, ClientNotification, GetMeta, JsonRpcMessage, ProgressToken,
        RequestId, ServerJsonRpcMessage,
    },
    transport::{
        Transport,
        common::server_side_http::session_id,
        streamable_http_server::{SessionId, SessionManager, session::ServerSseMessage},
    },
};
use tokio::sync::{mpsc, oneshot};

use super::stream_routes::{Routes, SessionRoutes, Standalone, StreamsError};

/// How long an answer whose stream was gone before it came is kept for a resume.
const UNREAD_ANSWER_KEPT: Duration = Duration::from_secs(60);
/// Messages waiting for the session's service; a full inbox makes the request wait.
const INBOX: usize = 16;

/// Sessions by their id, which every request of a session looks up. The ids are rmcp's random
/// ones, so foldhash (seeded per process) serves: a fraction of SipHash's cost.
type ById<V> = HashMap<SessionId, V, foldhash::fast::RandomState>;

/// Every session's routes, and the clock that ends idle ones.
pub(super) struct SessionStreams {
    sessions: RwLock<ById<Arc<SessionRoutes>>>,
    idle_timeout: Duration,
}

impl SessionStreams {
    /// The manager, and a task that ends sessions idle for `idle_timeout`.
    pub(super) fn start(idle_timeout: Duration) -> Arc<Self> {
        let streams = Arc::new(Self {
            sessions: RwLock::default(),
            idle_timeout,
        });
        let tick = (idle_timeout / 4).clamp(Duration::from_millis(100), Duration::from_secs(30));
        let weak = Arc::downgrade(&streams);
        tokio::spawn(expire_idle(weak, tick));
        streams
    }

    fn sessions(&self) -> RwLockReadGuard<'_, ById<Arc<SessionRoutes>>> {
        locks::read(&self.sessions)
    }

    fn sessions_mut(&self) -> RwLockWriteGuard<'_, ById<Arc<SessionRoutes>>> {
        locks::write(&self.sessions)
    }

    fn session(&self, id: &str) -> Option<Arc<SessionRoutes>> {
        self.sessions().get(id).cloned()
    }

    fn open(&self, id: &SessionId) -> Result<Arc<SessionRoutes>, StreamsError> {
        self.session(id).ok_or(StreamsError::NoSession)
    }

    /// A direct-path call in session `id`, counted until the guard drops; `None`: no such
    /// session (ended or unknown).
    /// Whether session `id` is open.
    pub(super) fn knows(&self, id: &str) -> bool {
        self.session(id).is_some()
    }

    pub(super) fn direct_call(&self, id: &str) -> Option<DirectCallGuard> {
        let session = self.session(id)?;
        session.direct_calls.fetch_add(1, Ordering::AcqRel);
        drop(session.heard());
        Some(DirectCallGuard(session))
    }

    fn remove(&self, id: &str) -> Option<Arc<SessionRoutes>> {
        self.sessions_mut().remove(id)
    }

    /// Ends the sessions nobody used for `idle_timeout` and forgets unread answers past their
    /// minute.
    fn expire_idle(&self) {
        let sessions: Vec<(SessionId, Arc<SessionRoutes>)> = self
            .sessions()
            .iter()
            .map(|(id, session)| (id.clone(), session.clone()))
            .collect();
        for (id, session) in sessions {
            let idle = {
                let mut routes = session.routes();
                routes.requests.retain(|_, stream| {
                    stream
                        .unread_since
                        .is_none_or(|since| since.elapsed() < UNREAD_ANSWER_KEPT)
                });
                session.direct_calls.load(Ordering::Acquire) == 0
                    && !routes.requests.values().any(|stream| stream.to.is_some())
                    && routes.last_heard.elapsed() >= self.idle_timeout
            };
            if idle {
                tracing::debug!("a session idle for sessionIdleTimeout ended");
                if let Some(session) = self.remove(&id) {
                    session.close();
                }
            }
        }
    }
}

async fn expire_idle(streams: Weak<SessionStreams>, tick: Duration) {
    let mut ticks = tokio::time::interval(tick);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        let Some(streams) = streams.upgrade() else {
            return;
        };
        streams.expire_idle();
    }
}

/// Keeps its session from expiring while a direct-path call runs.
pub(super) struct DirectCallGuard(Arc<SessionRoutes>);

impl Drop for DirectCallGuard {
    fn drop(&mut self) {
        drop(self.0.heard());
        self.0.direct_calls.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The half a session's service holds.
pub(super) struct SessionTransport {
    inbox: mpsc::Receiver<Box<ClientJsonRpcMessage>>,
    session: Arc<SessionRoutes>,
}

/// A send to a session that has ended.
#[derive(Debug, thiserror::Error)]
#[error("the session has ended")]
pub(super) struct SessionEnded;

impl Transport<RoleServer> for SessionTransport {
    type Error = SessionEnded;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        // Routed here, not in the future rmcp spawns: messages keep the order they were sent in.
        self.session.deliver(item);
        std::future::ready(Ok(()))
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        self.inbox.recv().await.map(|message| *message)
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.inbox.close();
        Ok(())
    }
}

/// A request's id and progress token. rmcp passes only requests where these are read; anything
/// else gets an id no request has, so nothing is routed to it.
fn request_keys(message: &ClientJsonRpcMessage) -> (RequestId, Option<ProgressToken>) {
    match message {
        JsonRpcMessage::Request(request) => (
            request.id.clone(),
            request.request.get_meta().get_progress_token(),
        ),
        _ => (RequestId::Number(-1), None),
    }
}

fn events(
    mut from: mpsc::UnboundedReceiver<ServerSseMessage>,
) -> impl Stream<Item = ServerSseMessage> + Send + Sync + 'static {
    futures::stream::poll_fn(move |context| from.poll_recv(context))
}

impl SessionManager for SessionStreams {
    type Error = StreamsError;
    type Transport = SessionTransport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let id = session_id();
        let (inbox, receiver) = mpsc::channel(INBOX);
        let session = Arc::new(SessionRoutes {
            routes: Mutex::new(Routes {
                inbox: Some(inbox),
                initialize: None,
                next_stream: 0,
                requests: HashMap::new(),
                by_request: HashMap::new(),
                by_progress: HashMap::new(),
                standalone: Standalone::default(),
                last_heard: Instant::now(),
                declaration: TaskDeclaration::default(),
            }),
            direct_calls: AtomicUsize::new(0),
        });
        self.sessions_mut().insert(id.clone(), session.clone());
        Ok((
            id,
            SessionTransport {
                inbox: receiver,
                session,
            },
        ))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        let session = self.open(id)?;
        let (answer, answered) = oneshot::channel();
        let (request, _) = request_keys(&message);
        session
            .push(message, |routes| {
                routes.initialize = Some((request, answer));
            })
            .await?;
        answered.await.map_err(|_| StreamsError::Ended)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        Ok(self.session(id).is_some())
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        if let Some(session) = self.remove(id) {
            session.close();
        }
        Ok(())
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let session = self.open(id)?;
        let mut stream = None;
        let opened = &mut stream;
        let keys = request_keys(&message);
        session
            .push(message, |routes| {
                *opened = Some(routes.open_request_stream(keys));
            })
            .await?;
        stream.map(events).ok_or(StreamsError::Ended)
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        let session = self.open(id)?;
        let cancelled = match &message {
            JsonRpcMessage::Notification(notification) => match &notification.notification {
                ClientNotification::CancelledNotification(cancelled) => {
                    cancelled.params.request_id.clone()
                }
                _ => None,
            },
            _ => None,
        };
        session
            .push(message, |routes| {
                if let Some(request) = &cancelled {
                    routes.cancelled(request);
                }
            })
            .await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let session = self.open(id)?;
        let mut routes = session.heard();
        Ok(events(routes.standalone.open(None)))
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let session = self.open(id)?;
        let mut routes = session.heard();
        let unknown = || StreamsError::NoSuchEvent(last_event_id.clone());
        let from = match last_event_id.split_once('/') {
            Some((index, number)) => {
                let index = index.parse().map_err(|_| unknown())?;
                let number = number.parse().map_err(|_| unknown())?;
                routes.resume_request(number, index).ok_or_else(unknown)?
            }
            None => {
                let index = last_event_id.parse().map_err(|_| unknown())?;
                routes.standalone.open(Some(index))
            }
        };
        Ok(events(from))
    }
}

#[cfg(test)]
#[path = "session_streams_tests.rs"]
mod tests;
