//! Which agent session a child's requests and notices reach. A child that one session owns (every
//! child on stdio, a `"sharing": "session"` server over HTTP) has that session's `AgentLink`.
//! A child that sessions share (`serve --http`, the default) has the `SharedLink`: a request it
//! makes goes to the session whose call it serves, found from the task it names or from the
//! calls in flight to it, and is refused with the reason when that cannot be told. A child on
//! 2026-07-28 asks inside a call's result, so its requests always reach the calling session.
#![allow(
    deprecated,
    reason = "SEP-2577 deprecates sampling, roots and logging, but revisions before 2026-07-28 have them"
)]

use std::sync::{Arc, Mutex, Weak};

use rmcp::{
    ErrorData as McpError,
    model::{
        ClientCapabilities, ClientResult, LoggingLevel, LoggingMessageNotificationParam,
        ResourceUpdatedNotificationParam, RootsCapabilities, ServerRequest,
    },
};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::agent_link::{AgentLink, Relayed, severity};
use crate::locks;

/// The agent side of one child.
#[derive(Clone)]
pub(crate) enum AgentRoute {
    /// One session owns the child.
    Own(Arc<AgentLink>),
    /// Every session may call the child.
    Shared(Arc<SharedLink>),
}

/// The sessions that may call shared children, and the log level those children run at.
#[derive(Default)]
pub(crate) struct SharedLink {
    sessions: Mutex<Vec<Weak<AgentLink>>>,
    /// The most verbose level any session asked for: each session filters to its own.
    log_level: Mutex<Option<LoggingLevel>>,
}

impl SharedLink {
    /// A session that may call shared children.
    pub(crate) fn join(&self, session: &Arc<AgentLink>) {
        let mut sessions = self.sessions();
        sessions.retain(|session| session.strong_count() > 0);
        sessions.push(Arc::downgrade(session));
    }

    fn sessions(&self) -> std::sync::MutexGuard<'_, Vec<Weak<AgentLink>>> {
        locks::lock(&self.sessions)
    }

    fn live(&self) -> Vec<Arc<AgentLink>> {
        self.sessions().iter().filter_map(Weak::upgrade).collect()
    }

    /// A session asked for `level`: the shared children's new level, if it is more verbose
    /// than theirs (a less verbose one would starve another session).
    pub(crate) fn lower_level(&self, level: LoggingLevel) -> Option<LoggingLevel> {
        let mut current = locks::lock(&self.log_level);
        let lower = current.is_none_or(|current| severity(level) < severity(current));
        lower.then(|| {
            *current = Some(level);
            level
        })
    }

    fn log_level(&self) -> Option<LoggingLevel> {
        *locks::lock(&self.log_level)
    }
}

impl AgentRoute {
    /// What the child is offered. A shared child is offered sampling, elicitation and roots:
    /// whether its request can be answered depends on the session whose call it serves.
    pub(crate) fn child_capabilities(&self) -> ClientCapabilities {
        match self {
            AgentRoute::Own(agent) => agent.child_capabilities(),
            AgentRoute::Shared(_) => {
                let mut offered = ClientCapabilities::default();
                offered.sampling = Some(Default::default());
                offered.elicitation = Some(Default::default());
                let mut roots = RootsCapabilities::default();
                roots.list_changed = Some(true);
                offered.roots = Some(roots);
                offered
            }
        }
    }

    /// The level the child should log at, if one was set.
    pub(crate) fn log_level(&self) -> Option<LoggingLevel> {
        match self {
            AgentRoute::Own(agent) => agent.log_level(),
            AgentRoute::Shared(shared) => shared.log_level(),
        }
    }

    /// Relays `request` of child `origin` to the session it is for and returns the answer.
    /// `task` is the child's id of the task the request belongs to, if it said; `callers` are
    /// the sessions with a call in flight to the child.
    pub(crate) async fn relay(
        &self,
        kind: Relayed,
        request: ServerRequest,
        origin: &str,
        task: Option<&str>,
        callers: impl FnOnce() -> Vec<Arc<AgentLink>>,
        cancel: &CancellationToken,
    ) -> Result<ClientResult, McpError> {
        let agent = match self {
            AgentRoute::Own(agent) => agent.clone(),
            AgentRoute::Shared(shared) => {
                let owner = task.and_then(|task| {
                    shared
                        .live()
                        .into_iter()
                        .find(|session| session.tasks().related(origin, task).is_some())
                });
                match owner {
                    Some(owner) => owner,
                    None => only_caller(kind, origin, callers())?,
                }
            }
        };
        agent.relay(kind, request, origin, task, cancel).await
    }

    /// A child's task status notice: it reaches the session whose task it is.
    pub(crate) async fn task_status(&self, origin: &str, params: Value) {
        match self {
            AgentRoute::Own(agent) => agent.task_status(origin, params).await,
            AgentRoute::Shared(shared) => {
                for session in shared.live() {
                    session.task_status(origin, params.clone()).await;
                }
            }
        }
    }

    /// A child's tools changed: every session that may call it hears so (if it lists them).
    pub(crate) async fn tool_list_changed(&self) {
        match self {
            AgentRoute::Own(agent) => agent.tool_list_changed().await,
            AgentRoute::Shared(shared) => {
                for session in shared.live() {
                    session.tool_list_changed().await;
                }
            }
        }
    }

    /// A child's resource changed: the sessions that subscribed to it hear so.
    pub(crate) async fn resource_updated(&self, params: ResourceUpdatedNotificationParam) {
        for session in self.sessions() {
            session.resource_updated(params.clone()).await;
        }
    }

    /// A child's prompts (`true`) or resources changed: every session that may use it hears so.
    pub(crate) async fn offers_changed(&self, prompts: bool) {
        for session in self.sessions() {
            session.offers_changed(prompts).await;
        }
    }

    /// The sessions that may use the child.
    fn sessions(&self) -> Vec<Arc<AgentLink>> {
        match self {
            AgentRoute::Own(agent) => vec![agent.clone()],
            AgentRoute::Shared(shared) => shared.live(),
        }
    }

    /// A child's log message: a shared child's reaches the sessions with a call in flight to
    /// it (a message says nothing of the call it is about). `false` when no session took it.
    pub(crate) async fn log(
        &self,
        origin: &str,
        message: LoggingMessageNotificationParam,
        callers: impl FnOnce() -> Vec<Arc<AgentLink>>,
    ) -> bool {
        match self {
            AgentRoute::Own(agent) => agent.log(origin, message).await,
            AgentRoute::Shared(_) => {
                let mut taken = false;
                for session in callers() {
                    taken |= session.log(origin, message.clone()).await;
                }
                taken
            }
        }
    }
}

/// The one session a shared child's request can be for, or why there is none.
fn only_caller(
    kind: Relayed,
    origin: &str,
    mut callers: Vec<Arc<AgentLink>>,
) -> Result<Arc<AgentLink>, McpError> {
    match callers.len() {
        1 => Ok(callers.remove(0)),
        0 => Err(kind.refused(
            origin,
            "it is shared by every agent session and none has a call in flight to it, so no session can answer; a shared server can ask only during a call, or give it \"sharing\": \"session\" in the config to tie it to one session",
        )),
        sessions => Err(kind.refused(
            origin,
            &format!(
                "{sessions} agent sessions have calls in flight to it and its request does not say which call it serves; give the server \"sharing\": \"session\" in the config so each session has its own process"
            ),
        )),
    }
}
