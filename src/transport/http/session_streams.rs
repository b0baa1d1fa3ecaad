//! Where a 2025-era session's messages go between its HTTP requests and its MCP service: the
//! session manager rmcp's streamable HTTP service is given. rmcp's own (`LocalSessionManager`)
//! runs a worker task per session and passes every message through five channels of whole
//! messages, each holding a block of ~16 KiB from the start: most of what an idle session cost
//! toolshelf. Here a session is a map entry, one channel of boxed messages into its service and
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
    collections::{HashMap, VecDeque},
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
        ClientJsonRpcMessage, ClientNotification, GetExtensions, GetMeta, JsonRpcMessage,
        ProgressToken, RequestId, ServerJsonRpcMessage, ServerNotification,
    },
    service::OriginatingRequestId,
    transport::{
        Transport,
        common::server_side_http::session_id,
        streamable_http_server::{SessionId, SessionManager, session::ServerSseMessage},
    },
};
use tokio::sync::{mpsc, oneshot};

/// How long an answer whose stream was gone before it came is kept for a resume.
const UNREAD_ANSWER_KEPT: Duration = Duration::from_secs(60);
/// The reconnection delay a request's stream suggests in its priming event (rmcp's default).
const SSE_RETRY: Duration = Duration::from_secs(3);
/// How many of the GET stream's newest events are kept for a resume or for the next GET.
const STANDALONE_KEPT: usize = 16;
/// Extra GET streams a session keeps open (quiet) before it ends the oldest.
const MAX_QUIET_STREAMS: usize = 32;
/// Messages waiting for the session's service; a full inbox makes the request wait.
const INBOX: usize = 16;

type Events = mpsc::UnboundedSender<ServerSseMessage>;

/// Every session's routes, and the clock that ends idle ones.
pub(super) struct SessionStreams {
    sessions: RwLock<HashMap<SessionId, Arc<Session>>>,
    idle_timeout: Duration,
}

/// Why a session could not take a request. rmcp writes the text into the HTTP answer and its
/// log, so it names no session id (the id is the session's key).
#[derive(Debug, thiserror::Error)]
pub(super) enum StreamsError {
    #[error(
        "the session given in Mcp-Session-Id is not open here: start a new one with initialize"
    )]
    NoSession,
    #[error(
        "the session ended before it answered (DELETE, idle expiry or shutdown): start a new one with initialize"
    )]
    Ended,
    #[error(
        "no stream of this session has event {0} to resume (its answer was read, or kept longer than a minute unread): send the request again if its effect is not there"
    )]
    NoSuchEvent(String),
}

struct Session {
    routes: Mutex<Routes>,
    /// The direct path's calls in flight (rmcp's are the open request streams).
    direct_calls: AtomicUsize,
}

struct Routes {
    /// Into the session's service; `None` once the session is closed.
    inbox: Option<mpsc::Sender<Box<ClientJsonRpcMessage>>>,
    /// The `initialize` request's id, and who waits for its answer.
    initialize: Option<(RequestId, oneshot::Sender<ServerJsonRpcMessage>)>,
    next_stream: u64,
    /// The streams of requests in flight (and of answers nobody read yet), by number.
    requests: HashMap<u64, RequestStream>,
    /// The agent's request ids and progress tokens, and the stream their messages go to.
    by_request: HashMap<RequestId, u64>,
    by_progress: HashMap<ProgressToken, u64>,
    standalone: Standalone,
    last_heard: Instant,
    /// What rmcp's typed results cannot tell a 2025-11-25 agent of tasks, added on the way out.
    declaration: TaskDeclaration,
}

struct RequestStream {
    /// `None` once answered.
    to: Option<Events>,
    /// Every event it carried, in order (its index is the event's), for a resume.
    sent: Vec<ServerSseMessage>,
    request: RequestId,
    progress: Option<ProgressToken>,
    /// When its answer came with nobody reading: kept for a resume until then.
    unread_since: Option<Instant>,
}

#[derive(Default)]
struct Standalone {
    to: Option<Events>,
    /// GET streams opened while another was live: kept open, sent nothing.
    quiet: Vec<Events>,
    /// The newest events with their indexes.
    kept: VecDeque<(u64, ServerSseMessage)>,
    next_index: u64,
    /// The newest index a live stream took.
    delivered: u64,
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

    fn sessions(&self) -> RwLockReadGuard<'_, HashMap<SessionId, Arc<Session>>> {
        locks::read(&self.sessions)
    }

    fn sessions_mut(&self) -> RwLockWriteGuard<'_, HashMap<SessionId, Arc<Session>>> {
        locks::write(&self.sessions)
    }

    fn session(&self, id: &str) -> Option<Arc<Session>> {
        self.sessions().get(id).cloned()
    }

    fn open(&self, id: &SessionId) -> Result<Arc<Session>, StreamsError> {
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

    fn remove(&self, id: &str) -> Option<Arc<Session>> {
        self.sessions_mut().remove(id)
    }

    /// Ends the sessions nobody used for `idle_timeout` and forgets unread answers past their
    /// minute.
    fn expire_idle(&self) {
        let sessions: Vec<(SessionId, Arc<Session>)> = self
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
pub(super) struct DirectCallGuard(Arc<Session>);

impl Drop for DirectCallGuard {
    fn drop(&mut self) {
        drop(self.0.heard());
        self.0.direct_calls.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Session {
    fn routes(&self) -> std::sync::MutexGuard<'_, Routes> {
        locks::lock(&self.routes)
    }

    /// The routes, the session marked as just heard from (or sent to).
    fn heard(&self) -> std::sync::MutexGuard<'_, Routes> {
        let mut routes = self.routes();
        routes.last_heard = Instant::now();
        routes
    }

    /// Hands `message` to the service, once `prepare` (run under the lock) has routed what it
    /// needs to.
    async fn push(
        &self,
        message: ClientJsonRpcMessage,
        prepare: impl FnOnce(&mut Routes),
    ) -> Result<(), StreamsError> {
        let inbox = {
            let mut routes = self.heard();
            let inbox = routes.inbox.clone().ok_or(StreamsError::Ended)?;
            prepare(&mut routes);
            inbox
        };
        inbox
            .send(Box::new(message))
            .await
            .map_err(|_| StreamsError::Ended)
    }

    /// Ends the session: its service's inbox closes and every stream ends.
    fn close(&self) {
        let mut routes = self.routes();
        routes.inbox = None;
        routes.initialize = None;
        routes.requests.clear();
        routes.by_request.clear();
        routes.by_progress.clear();
        routes.standalone = Standalone::default();
    }

    /// Sends what the service sent to the stream it belongs on.
    fn deliver(&self, message: ServerJsonRpcMessage) {
        let mut routes = self.heard();
        let message = routes.declaration.outgoing(message);
        let answers = match &message {
            JsonRpcMessage::Response(response) => Some(&response.id),
            JsonRpcMessage::Error(error) => error.id.as_ref(),
            _ => None,
        };
        if answers.is_some() && routes.initialize.as_ref().map(|(id, _)| id) == answers {
            if let Some((_, waiting)) = routes.initialize.take() {
                let _ = waiting.send(message);
            }
            return;
        }
        match routes.stream_for(&message) {
            Some((stream, last)) => routes.send_on_request(stream, message, last),
            None => routes.standalone.send(message),
        }
    }
}

impl Routes {
    /// The request stream `message` belongs on, and whether it is that request's last.
    fn stream_for(&self, message: &ServerJsonRpcMessage) -> Option<(u64, bool)> {
        let by_request = |id: &RequestId| self.by_request.get(id).copied();
        match message {
            JsonRpcMessage::Response(response) => Some((by_request(&response.id)?, true)),
            JsonRpcMessage::Error(error) => Some((by_request(error.id.as_ref()?)?, true)),
            JsonRpcMessage::Request(request) => {
                let origin = request.request.extensions().get::<OriginatingRequestId>()?;
                Some((by_request(&origin.0)?, false))
            }
            JsonRpcMessage::Notification(notification) => match &notification.notification {
                ServerNotification::ProgressNotification(progress) => Some((
                    *self.by_progress.get(&progress.params.progress_token)?,
                    false,
                )),
                ServerNotification::CancelledNotification(cancelled) => {
                    Some((by_request(cancelled.params.request_id.as_ref()?)?, false))
                }
                _ => None,
            },
        }
    }

    fn send_on_request(&mut self, number: u64, message: ServerJsonRpcMessage, last: bool) {
        let Some(stream) = self.requests.get_mut(&number) else {
            return;
        };
        let event = ServerSseMessage::new(format!("{}/{number}", stream.sent.len()), message);
        let read = stream
            .to
            .as_ref()
            .is_some_and(|to| to.send(event.clone()).is_ok());
        stream.sent.push(event);
        if !last {
            return;
        }
        let (request, progress) = (stream.request.clone(), stream.progress.take());
        self.forget(&request, progress.as_ref(), number);
        if read {
            self.requests.remove(&number);
        } else if let Some(stream) = self.requests.get_mut(&number) {
            stream.to = None;
            stream.unread_since = Some(Instant::now());
        }
    }

    /// Stops routing to stream `number` by the request's id and progress token.
    fn forget(&mut self, request: &RequestId, progress: Option<&ProgressToken>, number: u64) {
        if self.by_request.get(request) == Some(&number) {
            self.by_request.remove(request);
        }
        if let Some(token) = progress
            && self.by_progress.get(token) == Some(&number)
        {
            self.by_progress.remove(token);
        }
    }

    /// A stream for a new request: its priming event sent, its id and progress token routed.
    fn open_request_stream(
        &mut self,
        (request, progress): (RequestId, Option<ProgressToken>),
    ) -> mpsc::UnboundedReceiver<ServerSseMessage> {
        let number = self.next_stream;
        self.next_stream += 1;
        let (to, from) = mpsc::unbounded_channel();
        let priming = ServerSseMessage::priming(format!("0/{number}"), SSE_RETRY);
        let _ = to.send(priming.clone());
        // A request id used again while in flight: the newer request's stream takes it.
        if let Some(older) = self.by_request.insert(request.clone(), number) {
            self.requests.remove(&older);
        }
        if let Some(token) = &progress {
            self.by_progress.insert(token.clone(), number);
        }
        self.requests.insert(
            number,
            RequestStream {
                to: Some(to),
                sent: vec![priming],
                request,
                progress,
                unread_since: None,
            },
        );
        from
    }

    /// The agent cancelled `request`: its stream ends, as rmcp's does.
    fn cancelled(&mut self, request: &RequestId) {
        let Some(number) = self.by_request.get(request).copied() else {
            return;
        };
        if let Some(stream) = self.requests.remove(&number) {
            self.forget(request, stream.progress.as_ref(), number);
        }
    }

    fn resume_request(
        &mut self,
        number: u64,
        after: usize,
    ) -> Option<mpsc::UnboundedReceiver<ServerSseMessage>> {
        let stream = self.requests.get_mut(&number)?;
        let (to, from) = mpsc::unbounded_channel();
        for event in stream.sent.iter().skip(after + 1) {
            let _ = to.send(event.clone());
        }
        if stream.unread_since.is_some() {
            // Answered: the replay was all of it, and now it has been read.
            self.requests.remove(&number);
        } else {
            stream.to = Some(to);
        }
        Some(from)
    }
}

impl Standalone {
    fn send(&mut self, message: ServerJsonRpcMessage) {
        self.next_index += 1;
        let index = self.next_index;
        let event = ServerSseMessage::new(index.to_string(), message);
        if self
            .to
            .as_ref()
            .is_some_and(|to| to.send(event.clone()).is_ok())
        {
            self.delivered = index;
        }
        if self.kept.len() == STANDALONE_KEPT {
            self.kept.pop_front();
        }
        self.kept.push_back((index, event));
    }

    /// A GET stream: the live one, sent the kept events after `after` (by default those no
    /// stream took), or a quiet one beside a live one.
    fn open(&mut self, after: Option<u64>) -> mpsc::UnboundedReceiver<ServerSseMessage> {
        let (to, from) = mpsc::unbounded_channel();
        if self.to.as_ref().is_some_and(|live| !live.is_closed()) {
            self.quiet.retain(|quiet| !quiet.is_closed());
            if self.quiet.len() == MAX_QUIET_STREAMS {
                self.quiet.remove(0);
            }
            self.quiet.push(to);
            return from;
        }
        let after = after.unwrap_or(self.delivered);
        for (index, event) in &self.kept {
            if *index > after {
                let _ = to.send(event.clone());
                self.delivered = *index;
            }
        }
        self.to = Some(to);
        from
    }
}

/// The half a session's service holds.
pub(super) struct SessionTransport {
    inbox: mpsc::Receiver<Box<ClientJsonRpcMessage>>,
    session: Arc<Session>,
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
        let session = Arc::new(Session {
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
mod tests {
    use rmcp::model::{ServerNotification, ToolListChangedNotification};

    use super::*;

    fn list_changed() -> ServerJsonRpcMessage {
        ServerJsonRpcMessage::notification(ServerNotification::ToolListChangedNotification(
            ToolListChangedNotification::default(),
        ))
    }

    fn ids(from: &mut mpsc::UnboundedReceiver<ServerSseMessage>) -> Vec<String> {
        std::iter::from_fn(|| from.try_recv().ok())
            .map(|event| event.event_id.unwrap_or_default())
            .collect()
    }

    #[test]
    fn the_get_stream_gets_what_was_sent_while_none_was_open_and_a_second_one_stays_quiet() {
        let mut standalone = Standalone::default();
        standalone.send(list_changed());
        standalone.send(list_changed());
        let mut live = standalone.open(None);
        assert_eq!(ids(&mut live), ["1", "2"]);
        let mut quiet = standalone.open(None);
        standalone.send(list_changed());
        assert_eq!(ids(&mut live), ["3"]);
        assert_eq!(ids(&mut quiet), Vec::<String>::new());
        // The live stream gone, a resume after event 1 replays what came after it.
        drop(live);
        let mut resumed = standalone.open(Some(1));
        assert_eq!(ids(&mut resumed), ["2", "3"]);
    }

    #[test]
    fn only_the_newest_events_are_kept_for_a_get_stream() {
        let mut standalone = Standalone::default();
        for _ in 0..STANDALONE_KEPT + 4 {
            standalone.send(list_changed());
        }
        let mut live = standalone.open(None);
        let got = ids(&mut live);
        assert_eq!(got.len(), STANDALONE_KEPT);
        assert_eq!(got.first().map(String::as_str), Some("5"));
    }
}
