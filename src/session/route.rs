//! Which agent session a shared child's requests and notices reach. A child that one session
//! owns (every child on stdio, a `"sharing": "session"` server over HTTP) has that session's
//! `SessionLink` as its port. A child that sessions share (`serve --http`, the default) has the
//! `SharedSessions`: a request it makes goes to the session whose call it serves, found from the
//! task it names or from the calls in flight to it, and is refused with the reason when that
//! cannot be told. A child on 2026-07-28 asks inside a call's result, so its requests always
//! reach the calling session.
#![allow(
    deprecated,
    reason = "SEP-2577 deprecates sampling, roots and logging, but revisions before 2026-07-28 have them"
)]

use std::sync::{Arc, Mutex, Weak};

use futures::future::BoxFuture;
use rmcp::{
    ErrorData as McpError,
    model::{
        ClientCapabilities, ClientResult, LoggingLevel, LoggingMessageNotificationParam,
        ResourceUpdatedNotificationParam, RootsCapabilities, ServerRequest,
    },
};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::{
    children::{Agent, AgentList, AgentPort, Relayed, severity},
    config::Config,
    locks,
    metrics::Metrics,
    session::session_link::SessionLink,
    toolboxes::SharedServers,
};

/// The sessions that may call shared children, and the log level those children run at.
#[derive(Default)]
pub(crate) struct SharedSessions {
    sessions: Mutex<Vec<Weak<SessionLink>>>,
    /// The most verbose level any session asked for: each session filters to its own.
    log_level: Mutex<Option<LoggingLevel>>,
}

impl SharedSessions {
    /// A session that may call shared children.
    pub(crate) fn join(&self, session: &Arc<SessionLink>) {
        let mut sessions = self.sessions();
        sessions.retain(|session| session.strong_count() > 0);
        sessions.push(Arc::downgrade(session));
    }

    fn sessions(&self) -> std::sync::MutexGuard<'_, Vec<Weak<SessionLink>>> {
        locks::lock(&self.sessions)
    }

    fn live(&self) -> Vec<Arc<SessionLink>> {
        self.sessions().iter().filter_map(Weak::upgrade).collect()
    }
}

impl AgentPort for SharedSessions {
    /// A shared child is offered sampling, elicitation and roots: whether its request can be
    /// answered depends on the session whose call it serves.
    fn child_capabilities(&self) -> ClientCapabilities {
        let mut offered = ClientCapabilities::default();
        offered.sampling = Some(Default::default());
        offered.elicitation = Some(Default::default());
        let mut roots = RootsCapabilities::default();
        roots.list_changed = Some(true);
        offered.roots = Some(roots);
        offered
    }

    fn log_level(&self) -> Option<LoggingLevel> {
        *locks::lock(&self.log_level)
    }

    /// The shared children's new level, if `level` is more verbose than theirs (a less verbose
    /// one would starve another session).
    fn set_log_level(&self, level: LoggingLevel) -> Option<LoggingLevel> {
        let mut current = locks::lock(&self.log_level);
        let lower = current.is_none_or(|current| severity(level) < severity(current));
        lower.then(|| {
            *current = Some(level);
            level
        })
    }

    fn relay<'a>(
        &'a self,
        kind: Relayed,
        request: ServerRequest,
        origin: &'a str,
        task: Option<&'a str>,
        callers: AgentList<'a>,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<ClientResult, McpError>> {
        Box::pin(async move {
            let owner = task.and_then(|task| {
                self.live()
                    .into_iter()
                    .find(|session| session.tasks().related(origin, task).is_some())
            });
            match owner {
                Some(owner) => owner.relay(kind, request, origin, task, cancel).await,
                None => {
                    let caller = only_caller(kind, origin, callers())?;
                    caller
                        .relay(kind, request, origin, task, &Vec::new, cancel)
                        .await
                }
            }
        })
    }

    /// A child's task status notice reaches the session whose task it is.
    fn task_status<'a>(&'a self, origin: &'a str, params: Value) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            for session in self.live() {
                session.task_status(origin, params.clone()).await;
            }
        })
    }

    fn tool_list_changed(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            for session in self.live() {
                session.tool_list_changed().await;
            }
        })
    }

    /// The sessions that subscribed to the resource hear of it.
    fn resource_updated(&self, params: ResourceUpdatedNotificationParam) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            for session in self.live() {
                session.resource_updated(params.clone()).await;
            }
        })
    }

    fn offers_changed(&self, prompts: bool) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            for session in self.live() {
                session.offers_changed(prompts).await;
            }
        })
    }

    /// A shared child's log message reaches the sessions with a call in flight to it (a
    /// message says nothing of the call it is about).
    fn log<'a>(
        &'a self,
        origin: &'a str,
        message: LoggingMessageNotificationParam,
        callers: AgentList<'a>,
    ) -> BoxFuture<'a, bool> {
        Box::pin(async move {
            let mut taken = false;
            for session in callers() {
                taken |= session.log(origin, message.clone(), &Vec::new).await;
            }
            taken
        })
    }
}

/// The one session a shared child's request can be for, or why there is none.
fn only_caller(kind: Relayed, origin: &str, mut callers: Vec<Agent>) -> Result<Agent, McpError> {
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

/// The children every session of one serving process shares, and the port they reach the
/// sessions through.
pub(crate) struct SharedChildren {
    pub(crate) servers: Arc<SharedServers>,
    link: Arc<SharedSessions>,
}

impl SharedChildren {
    /// Every session's starts and calls of them count in `metrics`.
    pub(crate) fn new(config: &Config, metrics: Arc<Metrics>) -> Self {
        let link = Arc::new(SharedSessions::default());
        let servers = SharedServers::new(config, metrics, link.clone());
        Self { servers, link }
    }

    /// `session` may call the shared children from now on.
    pub(crate) fn join(&self, session: &Arc<SessionLink>) {
        self.link.join(session);
    }
}
