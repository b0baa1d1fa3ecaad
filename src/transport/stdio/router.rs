//! Where each line from the agent goes: once the session is initialized, a request the door
//! serves goes there (`SessionState::take`) and its answer is written when it comes;
//! everything else goes to rmcp under an id of rmcp's own, and rmcp's answers go back under
//! the agent's.

use std::{future::Future, sync::Arc, time::Duration};

use rmcp::{
    RoleServer,
    model::{
        CancelledNotification, CancelledNotificationParam, ClientJsonRpcMessage,
        ClientNotification, ErrorCode, RequestId, ServerJsonRpcMessage, ServerNotification,
    },
    service::RxJsonRpcMessage,
};
use serde_json::value::RawValue;
use tokio_util::task::TaskTracker;

use super::rmcp_request::for_rmcp;
use crate::{
    children::ProgressOut,
    jsonrpc::{
        envelope::{self, AgentId, Incoming},
        line_writer::{self, LineWriter},
    },
    session::{
        SessionState,
        door::{PendingAnswer, Request, Routing},
        in_flight::{Cancelled, InUse},
    },
    tasks::TaskDeclaration,
};

/// Decides where each message goes; apart from the reader so a line can be routed while the
/// reader's buffer holds it.
pub(super) struct Router {
    state: Arc<SessionState>,
    answers: Answers,
    /// The client sent `notifications/initialized`: the door takes requests from now on.
    initialized: bool,
    declaration: TaskDeclaration,
}

/// What to do with one line.
#[allow(
    clippy::large_enum_variant,
    reason = "lives for one line and is returned unboxed as rmcp's message; boxing would allocate per message"
)]
pub(super) enum RoutedLine {
    Rmcp(RxJsonRpcMessage<RoleServer>),
    Reply(Vec<u8>),
    Done,
}

/// The door's answers in flight, each written when it comes.
pub(super) struct Answers {
    out: LineWriter,
    tasks: TaskTracker,
}

impl Answers {
    /// Writes the line `answer` gives for request `id`, unless the agent cancelled it.
    fn spawn(&self, id: AgentId, answer: PendingAnswer) {
        let out = self.out.clone();
        self.tasks.spawn(async move {
            match answer.await {
                Some(Ok(line)) => {
                    if let Err(error) = out.send(line).await {
                        tracing::debug!(%id, %error, "the response could not be sent");
                    }
                }
                Some(Err(error)) => {
                    tracing::error!(%id, %error, "the response could not be encoded");
                }
                None => tracing::debug!(%id, "dropping the response to a cancelled request"),
            }
        });
    }

    /// Waits up to `limit` for the answers in flight; no answer starts afterwards.
    pub(super) fn drain(&self, limit: Duration) -> impl Future<Output = ()> + use<> {
        self.tasks.close();
        let tasks = self.tasks.clone();
        async move {
            if tokio::time::timeout(limit, tasks.wait()).await.is_err() {
                tracing::warn!("calls still in flight after {limit:?} were not answered");
            }
        }
    }
}

impl Router {
    pub(super) fn new(state: Arc<SessionState>, out: LineWriter) -> Self {
        Self {
            state,
            answers: Answers {
                out,
                tasks: TaskTracker::new(),
            },
            initialized: false,
            declaration: TaskDeclaration::default(),
        }
    }

    pub(super) fn answers(&self) -> &Answers {
        &self.answers
    }

    pub(super) fn line(&mut self, text: &[u8]) -> RoutedLine {
        let incoming = match self.initialized {
            true => match self.state.route(text) {
                Routing::Door(id, request) => return self.door(&id, request),
                Routing::Other(incoming) => incoming,
            },
            false => envelope::read(text),
        };
        match incoming {
            Incoming::Blank => RoutedLine::Done,
            Incoming::Refused(answer) => RoutedLine::Reply(answer),
            Incoming::Ignored(why) => {
                tracing::debug!(%why, "ignoring a notification that cannot be read");
                RoutedLine::Done
            }
            Incoming::Response => match serde_json::from_slice(text) {
                Ok(message) => RoutedLine::Rmcp(message),
                Err(error) => {
                    tracing::debug!(%error, "ignoring a response that cannot be read");
                    RoutedLine::Done
                }
            },
            Incoming::Notification { method, params } => self.notification(text, &method, params),
            Incoming::Request { id, method, params } => self.request(&id, &method, params),
        }
    }

    fn notification(&mut self, text: &[u8], method: &str, params: Option<&RawValue>) -> RoutedLine {
        if method == "notifications/cancelled" {
            return self.cancelled(params);
        }
        match serde_json::from_slice::<RxJsonRpcMessage<RoleServer>>(text) {
            Ok(message) => {
                if let ClientJsonRpcMessage::Notification(notification) = &message
                    && let ClientNotification::InitializedNotification(_) =
                        &notification.notification
                {
                    self.initialized = true;
                }
                RoutedLine::Rmcp(message)
            }
            Err(error) => {
                tracing::debug!(%method, %error, "ignoring a notification that cannot be read");
                RoutedLine::Done
            }
        }
    }

    /// The agent cancels one of its requests: the call stops, the id is free again, and the
    /// request gets no answer.
    fn cancelled(&mut self, params: Option<&RawValue>) -> RoutedLine {
        let Some((id, reason)) = envelope::cancelled_request(params) else {
            tracing::debug!("ignoring notifications/cancelled without a requestId");
            return RoutedLine::Done;
        };
        match self.state.cancel(&id) {
            Cancelled::Direct => {
                tracing::debug!(%id, "call cancelled by the client");
                RoutedLine::Done
            }
            Cancelled::Rmcp(internal) => {
                let params = CancelledNotificationParam::new(Some(internal), reason);
                let notification =
                    ClientNotification::CancelledNotification(CancelledNotification::new(params));
                RoutedLine::Rmcp(ClientJsonRpcMessage::notification(notification))
            }
            Cancelled::Unknown => {
                tracing::debug!(%id, "cancellation of a request that is not in flight");
                RoutedLine::Done
            }
        }
    }

    /// A request for rmcp (the door did not take it).
    fn request(&mut self, id: &AgentId, method: &str, params: Option<&RawValue>) -> RoutedLine {
        let requests = self.state.requests();
        let Ok(internal) = requests.begin_rmcp(id) else {
            return RoutedLine::Reply(InUse::answer(id));
        };
        match for_rmcp(internal.clone(), method, params) {
            Ok(message) => RoutedLine::Rmcp(message),
            Err(refusal) => {
                requests.finish_rmcp(&internal);
                RoutedLine::Reply(envelope::error_line(
                    Some(id),
                    ErrorCode::INVALID_PARAMS,
                    &refusal,
                ))
            }
        }
    }
}

impl Router {
    /// Gives `request` to the session's door; its answer is written when it comes.
    fn door(&mut self, id: &AgentId, request: Request) -> RoutedLine {
        let progress = Some(ProgressOut::Lines(self.answers.out.clone()));
        match self.state.take(id, request, progress) {
            Ok(answer) => {
                self.answers.spawn(id.clone(), answer);
                RoutedLine::Done
            }
            Err(_) => RoutedLine::Reply(InUse::answer(id)),
        }
    }
}

/// The `_meta` key naming the `subscriptions/listen` request a notification belongs to.
const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

impl Router {
    /// rmcp's message as a line, an answer under the agent's own id; `None` for an answer
    /// nobody waits for any more (the agent cancelled the request).
    pub(super) fn encode(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> Option<std::io::Result<Vec<u8>>> {
        let item = &self.declaration.outgoing(item);
        let line = match item {
            ServerJsonRpcMessage::Response(response) => {
                let id = self.agent_id(&response.id)?;
                envelope::response_line(&id, |out| serde_json::to_writer(out, &response.result))
            }
            ServerJsonRpcMessage::Error(error) => {
                let id = match &error.id {
                    Some(internal) => Some(self.agent_id(internal)?),
                    None => None,
                };
                envelope::error_data_line(id.as_ref(), &error.error)
            }
            // Only these go on a listen stream; the rest (progress, log messages) pass as they are.
            ServerJsonRpcMessage::Notification(notification)
                if matches!(
                    notification.notification,
                    ServerNotification::SubscriptionsAcknowledgedNotification(_)
                        | ServerNotification::ToolListChangedNotification(_)
                        | ServerNotification::PromptListChangedNotification(_)
                        | ServerNotification::ResourceListChangedNotification(_)
                        | ServerNotification::ResourceUpdatedNotification(_)
                ) =>
            {
                return Some(self.notification_line(item));
            }
            _ => return Some(line_writer::encode(item)),
        };
        Some(line.map_err(std::io::Error::other))
    }

    /// A notification as a line. Those of a `subscriptions/listen` stream name its request in
    /// their `_meta`, by rmcp's id: the agent gets its own.
    fn notification_line(&self, item: &ServerJsonRpcMessage) -> std::io::Result<Vec<u8>> {
        let line = line_writer::encode(item)?;
        if !line
            .windows(SUBSCRIPTION_ID.len())
            .any(|window| window == SUBSCRIPTION_ID.as_bytes())
        {
            return Ok(line);
        }
        let mut message: serde_json::Value =
            serde_json::from_slice(&line).map_err(std::io::Error::other)?;
        let named = message
            .pointer_mut("/params/_meta")
            .and_then(|meta| meta.get_mut(SUBSCRIPTION_ID));
        if let Some(named) = named
            && let Ok(internal) = serde_json::from_value::<RequestId>(named.clone())
            && let Some(id) = self.state.requests().rmcp_request(&internal)
            && let Ok(agent) = serde_json::from_str(id.json())
        {
            *named = agent;
        }
        let mut line = serde_json::to_vec(&message).map_err(std::io::Error::other)?;
        line.push(b'\n');
        Ok(line)
    }

    fn agent_id(&self, internal: &RequestId) -> Option<AgentId> {
        let id = self.state.requests().finish_rmcp(internal);
        if id.is_none() {
            tracing::debug!(%internal, "dropping the answer to a cancelled request");
        }
        id
    }
}
