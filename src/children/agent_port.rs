//! The port through which children speak to the agent side: a child's requests (sampling,
//! elicitation, roots), its notices (list changes, resource updates, task status) and its log
//! messages go to an `AgentPort`, which the session layer implements (one session's link, or
//! the route shared children use to find the session a request is for). Nothing under
//! `children` names a session type; the port is all they know of what is above them.
#![allow(
    deprecated,
    reason = "SEP-2577 deprecates sampling, roots and logging, but revisions before 2026-07-28 have them"
)]

use std::sync::Arc;

use futures::future::BoxFuture;
use rmcp::{
    ErrorData as McpError,
    model::{
        ClientCapabilities, ClientResult, CreateMessageResult, ElicitResult, ErrorCode,
        InputRequest, ListRootsResult, LoggingLevel, LoggingMessageNotificationParam,
        ResourceUpdatedNotificationParam, ServerRequest,
    },
};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// A child's notice that a task's status changed (2025-11-25).
pub(crate) const STATUS_NOTIFICATION: &str = "notifications/tasks/status";

/// The `_meta` key that ties a message to a task.
pub(crate) const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";

/// The agent side of a child.
pub(crate) type Agent = Arc<dyn AgentPort>;

/// The agent sessions with a call in flight to a child, read only if needed.
pub(crate) type AgentList<'a> = &'a (dyn Fn() -> Vec<Agent> + Send + Sync);

/// Where a child's requests and notices go.
pub(crate) trait AgentPort: Send + Sync + 'static {
    /// What the child is offered.
    fn child_capabilities(&self) -> ClientCapabilities;

    /// The level the child should log at, if one was set.
    fn log_level(&self) -> Option<LoggingLevel>;

    /// The agent asked for `level`: the level the children on this port take now, if it changed.
    fn set_log_level(&self, level: LoggingLevel) -> Option<LoggingLevel>;

    /// Relays `request` of child `origin` ("toolbox/server") and returns the answer. `task` is
    /// the child's id of the task the request belongs to, if it said; `cancel` is the child's
    /// cancellation of its request.
    fn relay<'a>(
        &'a self,
        kind: Relayed,
        request: ServerRequest,
        origin: &'a str,
        task: Option<&'a str>,
        callers: AgentList<'a>,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<ClientResult, McpError>>;

    /// A child's `notifications/tasks/status` (2025-11-25).
    fn task_status<'a>(&'a self, origin: &'a str, params: Value) -> BoxFuture<'a, ()>;

    /// A child's tools changed.
    fn tool_list_changed(&self) -> BoxFuture<'_, ()>;

    /// A child's resource changed.
    fn resource_updated(&self, params: ResourceUpdatedNotificationParam) -> BoxFuture<'_, ()>;

    /// A child's prompts (`true`) or resources changed.
    fn offers_changed(&self, prompts: bool) -> BoxFuture<'_, ()>;

    /// A child's log message. `false` when no agent took it (then it is the user's, for
    /// toolshelf's own log).
    fn log<'a>(
        &'a self,
        origin: &'a str,
        message: LoggingMessageNotificationParam,
        callers: AgentList<'a>,
    ) -> BoxFuture<'a, bool>;
}

/// Whether two ports are the same session.
pub(crate) fn same(a: &Agent, b: &Agent) -> bool {
    std::ptr::addr_eq(Arc::as_ptr(a), Arc::as_ptr(b))
}

/// A request a child relays to the agent.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Relayed {
    Sampling,
    Elicitation,
    Roots,
}

impl Relayed {
    fn method(self) -> &'static str {
        match self {
            Relayed::Sampling => "sampling/createMessage",
            Relayed::Elicitation => "elicitation/create",
            Relayed::Roots => "roots/list",
        }
    }

    /// The error a child gets for a request that cannot reach an agent, and why.
    pub(crate) fn refused(self, origin: &str, why: &str) -> McpError {
        McpError::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!("{} from {origin} cannot be relayed: {why}", self.method()),
            None,
        )
    }

    pub(crate) fn capability(self) -> &'static str {
        match self {
            Relayed::Sampling => "sampling",
            Relayed::Elicitation => "elicitation",
            Relayed::Roots => "roots",
        }
    }

    pub(crate) fn declared(self, capabilities: &ClientCapabilities) -> bool {
        match self {
            Relayed::Sampling => capabilities.sampling.is_some(),
            Relayed::Elicitation => capabilities.elicitation.is_some(),
            Relayed::Roots => capabilities.roots.is_some(),
        }
    }

    /// A child's request as an input request of an `input_required` result (2026-07-28).
    pub(crate) fn into_input(request: ServerRequest) -> Result<InputRequest, String> {
        Ok(match request {
            ServerRequest::CreateMessageRequest(request) => InputRequest::CreateMessage(request),
            ServerRequest::ElicitRequest(request) => InputRequest::Elicitation(request),
            ServerRequest::ListRootsRequest(request) => InputRequest::ListRoots(request),
            _ => return Err("only sampling, elicitation and roots requests can be relayed".into()),
        })
    }

    /// An input request of a child's `input_required` result as the request it stands for.
    pub(crate) fn from_input(request: InputRequest) -> Option<(Self, ServerRequest)> {
        Some(match request {
            InputRequest::CreateMessage(request) => (
                Relayed::Sampling,
                ServerRequest::CreateMessageRequest(request),
            ),
            InputRequest::Elicitation(request) => {
                (Relayed::Elicitation, ServerRequest::ElicitRequest(request))
            }
            InputRequest::ListRoots(request) => {
                (Relayed::Roots, ServerRequest::ListRootsRequest(request))
            }
            _ => return None,
        })
    }

    /// The agent's answer, given as JSON (an input response), as the result it must be.
    pub(crate) fn result(self, answer: Value) -> Result<ClientResult, String> {
        let unreadable = |error: serde_json::Error| {
            format!(
                "the MCP client's answer is not a {} result: {error}",
                self.method()
            )
        };
        Ok(match self {
            Relayed::Sampling => ClientResult::CreateMessageResult(Box::new(
                serde_json::from_value::<CreateMessageResult>(answer).map_err(unreadable)?,
            )),
            Relayed::Elicitation => ClientResult::ElicitResult(
                serde_json::from_value::<ElicitResult>(answer).map_err(unreadable)?,
            ),
            Relayed::Roots => ClientResult::ListRootsResult(
                serde_json::from_value::<ListRootsResult>(answer).map_err(unreadable)?,
            ),
        })
    }
}

/// RFC 5424 order, least severe first.
pub(crate) fn severity(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}
