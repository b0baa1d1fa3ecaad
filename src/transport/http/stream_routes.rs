//! Where one session's messages go: the stream of the request they belong to, or the session's
//! GET stream (kept until one is open); the events a client can resume from.

use std::{
    collections::{HashMap, VecDeque},
    sync::{Mutex, atomic::AtomicUsize},
    time::{Duration, Instant},
};

use rmcp::{
    model::{
        ClientJsonRpcMessage, GetExtensions, JsonRpcMessage, ProgressToken, RequestId,
        ServerJsonRpcMessage, ServerNotification,
    },
    service::OriginatingRequestId,
    transport::streamable_http_server::session::ServerSseMessage,
};
use tokio::sync::{mpsc, oneshot};

use crate::{locks, tasks::TaskDeclaration};

/// The reconnection delay a request's stream suggests in its priming event (rmcp's default).
pub(super) const SSE_RETRY: Duration = Duration::from_secs(3);
/// How many of the GET stream's newest events are kept for a resume or for the next GET.
pub(super) const STANDALONE_KEPT: usize = 16;
/// Extra GET streams a session keeps open (quiet) before it ends the oldest.
pub(super) const MAX_QUIET_STREAMS: usize = 32;

type Events = mpsc::UnboundedSender<ServerSseMessage>;

pub(super) struct Routes {
    /// Into the session's service; `None` once the session is closed.
    pub(super) inbox: Option<mpsc::Sender<Box<ClientJsonRpcMessage>>>,
    /// The `initialize` request's id, and who waits for its answer.
    pub(super) initialize: Option<(RequestId, oneshot::Sender<ServerJsonRpcMessage>)>,
    pub(super) next_stream: u64,
    /// The streams of requests in flight (and of answers nobody read yet), by number.
    pub(super) requests: HashMap<u64, RequestStream>,
    /// The agent's request ids and progress tokens, and the stream their messages go to.
    pub(super) by_request: HashMap<RequestId, u64>,
    pub(super) by_progress: HashMap<ProgressToken, u64>,
    pub(super) standalone: Standalone,
    pub(super) last_heard: Instant,
    /// What rmcp's typed results cannot tell a 2025-11-25 agent of tasks, added on the way out.
    pub(super) declaration: TaskDeclaration,
}

pub(super) struct RequestStream {
    /// `None` once answered.
    pub(super) to: Option<Events>,
    /// Every event it carried, in order (its index is the event's), for a resume.
    pub(super) sent: Vec<ServerSseMessage>,
    pub(super) request: RequestId,
    pub(super) progress: Option<ProgressToken>,
    /// When its answer came with nobody reading: kept for a resume until then.
    pub(super) unread_since: Option<Instant>,
}

#[derive(Default)]
pub(super) struct Standalone {
    pub(super) to: Option<Events>,
    /// GET streams opened while another was live: kept open, sent nothing.
    pub(super) quiet: Vec<Events>,
    /// The newest events with their indexes.
    pub(super) kept: VecDeque<(u64, ServerSseMessage)>,
    pub(super) next_index: u64,
    /// The newest index a live stream took.
    pub(super) delivered: u64,
}

impl Routes {
    /// The request stream `message` belongs on, and whether it is that request's last.
    pub(super) fn stream_for(&self, message: &ServerJsonRpcMessage) -> Option<(u64, bool)> {
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

    pub(super) fn send_on_request(
        &mut self,
        number: u64,
        message: ServerJsonRpcMessage,
        last: bool,
    ) {
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
    pub(super) fn forget(
        &mut self,
        request: &RequestId,
        progress: Option<&ProgressToken>,
        number: u64,
    ) {
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
    pub(super) fn open_request_stream(
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
    pub(super) fn cancelled(&mut self, request: &RequestId) {
        let Some(number) = self.by_request.get(request).copied() else {
            return;
        };
        if let Some(stream) = self.requests.remove(&number) {
            self.forget(request, stream.progress.as_ref(), number);
        }
    }

    pub(super) fn resume_request(
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
    pub(super) fn send(&mut self, message: ServerJsonRpcMessage) {
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
    pub(super) fn open(&mut self, after: Option<u64>) -> mpsc::UnboundedReceiver<ServerSseMessage> {
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

/// One session: its routes, and the direct path's calls in flight.
pub(super) struct SessionRoutes {
    pub(super) routes: Mutex<Routes>,
    /// The direct path's calls in flight (rmcp's are the open request streams).
    pub(super) direct_calls: AtomicUsize,
}
impl SessionRoutes {
    pub(super) fn routes(&self) -> std::sync::MutexGuard<'_, Routes> {
        locks::lock(&self.routes)
    }

    /// The routes, the session marked as just heard from (or sent to).
    pub(super) fn heard(&self) -> std::sync::MutexGuard<'_, Routes> {
        let mut routes = self.routes();
        routes.last_heard = Instant::now();
        routes
    }

    /// Hands `message` to the service, once `prepare` (run under the lock) has routed what it
    /// needs to.
    pub(super) async fn push(
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
    pub(super) fn close(&self) {
        let mut routes = self.routes();
        routes.inbox = None;
        routes.initialize = None;
        routes.requests.clear();
        routes.by_request.clear();
        routes.by_progress.clear();
        routes.standalone = Standalone::default();
    }

    /// Sends what the service sent to the stream it belongs on.
    pub(super) fn deliver(&self, message: ServerJsonRpcMessage) {
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
