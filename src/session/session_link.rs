//! What children may ask of the agent, and what the agent asked of them. A child's sampling,
//! elicitation and roots requests are relayed to the agent's session; the agent's log level and
//! roots changes reach the children. Children are offered only what the agent declared, so a
//! child sees toolshelf as it would see the agent: an agent without roots gets children that
//! use the roots their config gives them, never toolshelf's guess.
//!
//! An agent on 2026-07-28 has no session to send requests on: a child's request reaches it
//! inside the answer to the call the child is running (`input_rounds`).
//!
//! Transport-independent: it holds the agent's rmcp peer, whatever carries it.
#![allow(
    deprecated,
    reason = "SEP-2577 deprecates sampling, roots and logging, but revisions before 2026-07-28 have them"
)]

use std::sync::{
    Arc, Mutex, OnceLock,
    atomic::{AtomicBool, Ordering},
};

use futures::future::BoxFuture;
use rmcp::{
    ErrorData as McpError, Peer, RoleServer,
    model::{
        ClientCapabilities, ClientResult, CustomNotification, ErrorCode, GetMeta, LoggingLevel,
        LoggingMessageNotificationParam, ResourceUpdatedNotification,
        ResourceUpdatedNotificationParam, ServerNotification, ServerRequest,
    },
    service::{PeerRequestOptions, ServiceError, SubscriptionSendError, SubscriptionSink},
};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::{
    children::{AgentList, AgentPort, Relayed, severity},
    locks,
    session::input_rounds::InputRounds,
    tasks::{self, SessionTasks},
};

/// The agent's session as children see it; one per agent session.
#[derive(Default)]
pub(crate) struct SessionLink {
    peer: OnceLock<Peer<RoleServer>>,
    /// What an agent without a session (2026-07-28) declared on its latest call.
    declared: Mutex<Option<ClientCapabilities>>,
    /// The calls of an agent without a session, and the child's requests they carry.
    input: InputRounds,
    /// The tasks the agent started through `use_tool`.
    tasks: SessionTasks,
    /// The level the agent set with `logging/setLevel`; `None`: every message passes.
    log_level: Mutex<Option<LoggingLevel>>,
    /// The session lists the children's tools (flat mode), so it hears when they change;
    /// toolbox mode's two tools never do.
    lists_children: AtomicBool,
    /// The resource URIs the agent subscribed to: their updates reach it.
    subscriptions: Mutex<std::collections::HashSet<String>>,
    /// The agent's `subscriptions/listen` streams (2026-07-28): each gets the changes its
    /// filter accepted.
    listeners: Mutex<Vec<SubscriptionSink>>,
}

/// One `subscriptions/listen` stream, registered until this is dropped.
pub(crate) struct Listening {
    link: Arc<SessionLink>,
    id: rmcp::model::RequestId,
}

impl Drop for Listening {
    fn drop(&mut self) {
        locks::lock(&self.link.listeners).retain(|sink| *sink.id() != self.id);
    }
}

impl SessionLink {
    /// The agent's session began (its `initialize` arrived).
    pub(crate) fn connect(&self, peer: Peer<RoleServer>) {
        if self.peer.set(peer).is_err() {
            tracing::debug!("a second initialize; children keep the first session's peer");
        }
    }

    /// An agent without a session (2026-07-28) made a call declaring `capabilities`.
    pub(crate) fn declare(&self, capabilities: ClientCapabilities) {
        *locks::lock(&self.declared) = Some(capabilities);
    }

    /// The tasks the agent started.
    pub(crate) fn tasks(&self) -> &SessionTasks {
        &self.tasks
    }

    /// A child's `notifications/tasks/status` (2025-11-25) reaches the agent, under the task's
    /// handle, if the task is one the agent started through toolshelf.
    pub(crate) async fn task_status(&self, origin: &str, params: Value) {
        let Some(peer) = self.peer.get() else {
            return; // the tasks extension has no status notifications on stdio
        };
        let Some(params) = self.tasks.status(origin, &params) else {
            return;
        };
        let notification = ServerNotification::CustomNotification(CustomNotification::new(
            tasks::STATUS_NOTIFICATION,
            Some(params),
        ));
        if let Err(error) = peer.send_notification(notification).await {
            tracing::debug!(%error, "a task's status did not reach the MCP client");
        }
    }

    /// The agent's rmcp peer, once its session began.
    pub(crate) fn peer(&self) -> Option<&Peer<RoleServer>> {
        self.peer.get()
    }

    /// The input rounds of an agent without a session.
    pub(crate) fn input(&self) -> &InputRounds {
        &self.input
    }

    fn capabilities(&self) -> Option<ClientCapabilities> {
        match self.peer.get() {
            Some(peer) => Some(peer.peer_info()?.capabilities.clone()),
            None => locks::lock(&self.declared).clone(),
        }
    }

    /// What toolshelf declares to a child: the agent's sampling, elicitation and roots, as the
    /// agent declared them, and nothing it did not.
    pub(crate) fn child_capabilities(&self) -> ClientCapabilities {
        let mut offered = ClientCapabilities::default();
        if let Some(agent) = self.capabilities() {
            offered.sampling = agent.sampling;
            offered.elicitation = agent.elicitation;
            offered.roots = agent.roots;
        }
        offered
    }

    /// The agent declared `roots` with `listChanged`: its changes are worth passing on.
    pub(crate) fn roots_change(&self) -> bool {
        self.capabilities()
            .and_then(|capabilities| capabilities.roots)
            .is_some_and(|roots| roots.list_changed == Some(true))
    }

    /// Relays `request` from child `origin` ("toolbox/server") to the agent and returns its
    /// answer. `task` is the child's id of the task the request is part of, if it said so.
    /// `cancel` is the child's cancellation of its request: the agent is told.
    pub(crate) async fn relay(
        &self,
        kind: Relayed,
        mut request: ServerRequest,
        origin: &str,
        task: Option<&str>,
        cancel: &CancellationToken,
    ) -> Result<ClientResult, McpError> {
        let refused = |why: String| kind.refused(origin, &why);
        let task = task.and_then(|task| self.tasks.related(origin, task));
        let declared = self.capabilities().is_some_and(|c| kind.declared(&c));
        let Some(peer) = self.peer.get() else {
            return match task {
                // A task's questions wait for the agent's tasks/get and tasks/update.
                Some((_, questions)) if declared => {
                    questions.ask(kind, request, cancel).await.map_err(refused)
                }
                _ => self
                    .input
                    .ask(kind, request, origin, cancel)
                    .await
                    .map_err(refused),
            };
        };
        if !declared {
            return Err(refused(format!(
                "the MCP client connected to toolshelf did not declare the {} capability",
                kind.capability()
            )));
        }
        if let Some((handle, _)) = task {
            // The agent knows the task by toolshelf's handle, never by the child's id.
            request.get_meta_mut().0.insert(
                tasks::RELATED_TASK.into(),
                serde_json::json!({ "taskId": handle }),
            );
        }
        let mut handle = peer
            .send_cancellable_request(request, PeerRequestOptions::no_options())
            .await
            .map_err(|error| refused(error.to_string()))?;
        tokio::select! {
            answer = &mut handle.rx => match answer {
                Ok(Ok(result)) => Ok(result),
                Ok(Err(ServiceError::McpError(error))) => Err(error),
                Ok(Err(error)) => Err(refused(error.to_string())),
                Err(_) => Err(refused("the MCP client's session ended".into())),
            },
            () = cancel.cancelled() => {
                let _ = handle.cancel(Some(format!("{origin} cancelled its request"))).await;
                Err(McpError::new(ErrorCode::INTERNAL_ERROR, "cancelled", None))
            }
        }
    }

    /// The session's `tools/list` holds the children's tools (flat mode).
    pub(crate) fn list_children(&self) {
        self.lists_children.store(true, Ordering::Release);
    }

    /// A child's tools changed: an agent whose list holds them hears so.
    pub(crate) async fn tool_list_changed(&self) {
        if !self.lists_children.load(Ordering::Acquire) {
            return;
        }
        self.to_listeners(ServerNotification::ToolListChangedNotification(
            Default::default(),
        ))
        .await;
        if let Some(peer) = self.peer.get()
            && let Err(error) = peer.notify_tool_list_changed().await
        {
            tracing::debug!(%error, "the tool list change did not reach the MCP client");
        }
    }

    /// The agent subscribed to `uri` (or unsubscribed, for `false`).
    pub(crate) fn subscribe(&self, uri: &str, subscribed: bool) {
        let mut subscriptions = locks::lock(&self.subscriptions);
        if subscribed {
            subscriptions.insert(uri.to_owned());
        } else {
            subscriptions.remove(uri);
        }
    }

    /// Registers a `subscriptions/listen` stream until the returned guard drops.
    pub(crate) fn listen(self: &Arc<Self>, sink: SubscriptionSink) -> Listening {
        let id = sink.id().clone();
        locks::lock(&self.listeners).push(sink);
        Listening {
            link: self.clone(),
            id,
        }
    }

    /// `notification` on every listen stream whose filter accepts it (the sink checks).
    async fn to_listeners(&self, notification: ServerNotification) {
        let sinks = locks::lock(&self.listeners).clone();
        for sink in sinks {
            match sink.send(notification.clone()).await {
                Ok(()) | Err(SubscriptionSendError::NotificationNotAccepted(_)) => {}
                Err(error) => {
                    tracing::debug!(%error, "a change did not reach a subscriptions/listen stream");
                }
            }
        }
    }

    /// A child's resource changed: the agent hears so if it subscribed to it.
    pub(crate) async fn resource_updated(&self, params: ResourceUpdatedNotificationParam) {
        self.to_listeners(ServerNotification::ResourceUpdatedNotification(
            ResourceUpdatedNotification::new(params.clone()),
        ))
        .await;
        let subscribed = locks::lock(&self.subscriptions).contains(&params.uri);
        if let (true, Some(peer)) = (subscribed, self.peer.get())
            && let Err(error) = peer.notify_resource_updated(params).await
        {
            tracing::debug!(%error, "a resource update did not reach the MCP client");
        }
    }

    /// A child's prompts or resources changed: the agent, which sees them, hears so.
    pub(crate) async fn offers_changed(&self, prompts: bool) {
        self.to_listeners(if prompts {
            ServerNotification::PromptListChangedNotification(Default::default())
        } else {
            ServerNotification::ResourceListChangedNotification(Default::default())
        })
        .await;
        let Some(peer) = self.peer.get() else { return };
        let sent = if prompts {
            peer.notify_prompt_list_changed().await
        } else {
            peer.notify_resource_list_changed().await
        };
        if let Err(error) = sent {
            tracing::debug!(%error, "a list change did not reach the MCP client");
        }
    }

    /// The agent's `logging/setLevel`.
    pub(crate) fn set_log_level(&self, level: LoggingLevel) {
        *locks::lock(&self.log_level) = Some(level);
    }

    pub(crate) fn log_level(&self) -> Option<LoggingLevel> {
        *locks::lock(&self.log_level)
    }

    /// Passes a child's log message to the agent, its `logger` prefixed with `origin`, if it is
    /// at or above the level the agent asked for. `false` when no agent can take it (then it is
    /// the user's, for toolshelf's own log).
    pub(crate) async fn log(
        &self,
        origin: &str,
        mut message: LoggingMessageNotificationParam,
    ) -> bool {
        message.logger = Some(match message.logger.take() {
            Some(logger) if !logger.is_empty() => format!("{origin}/{logger}"),
            _ => origin.to_owned(),
        });
        let Some(peer) = self.peer.get() else {
            // Without a session the agent asks per call; one that did not ask has chosen.
            let agent = locks::lock(&self.declared).is_some();
            return self.input.log(origin, message) || agent;
        };
        if self
            .log_level()
            .is_some_and(|level| severity(message.level) < severity(level))
        {
            return true;
        }
        peer.notify_logging_message(message).await.is_ok()
    }
}

/// The port of one session's own children (every child on stdio): all they send is this
/// session's.
impl AgentPort for SessionLink {
    fn child_capabilities(&self) -> ClientCapabilities {
        SessionLink::child_capabilities(self)
    }

    fn log_level(&self) -> Option<LoggingLevel> {
        SessionLink::log_level(self)
    }

    fn set_log_level(&self, level: LoggingLevel) -> Option<LoggingLevel> {
        SessionLink::set_log_level(self, level);
        Some(level)
    }

    fn relay<'a>(
        &'a self,
        kind: Relayed,
        request: ServerRequest,
        origin: &'a str,
        task: Option<&'a str>,
        _callers: AgentList<'a>,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<ClientResult, McpError>> {
        Box::pin(SessionLink::relay(
            self, kind, request, origin, task, cancel,
        ))
    }

    fn task_status<'a>(&'a self, origin: &'a str, params: Value) -> BoxFuture<'a, ()> {
        Box::pin(SessionLink::task_status(self, origin, params))
    }

    fn tool_list_changed(&self) -> BoxFuture<'_, ()> {
        Box::pin(SessionLink::tool_list_changed(self))
    }

    fn resource_updated(&self, params: ResourceUpdatedNotificationParam) -> BoxFuture<'_, ()> {
        Box::pin(SessionLink::resource_updated(self, params))
    }

    fn offers_changed(&self, prompts: bool) -> BoxFuture<'_, ()> {
        Box::pin(SessionLink::offers_changed(self, prompts))
    }

    fn log<'a>(
        &'a self,
        origin: &'a str,
        message: LoggingMessageNotificationParam,
        _callers: AgentList<'a>,
    ) -> BoxFuture<'a, bool> {
        Box::pin(SessionLink::log(self, origin, message))
    }
}

#[cfg(test)]
#[path = "session_link_tests.rs"]
mod tests;
