//! One caller's view of `serve --http`: the config as the policy lets it see it, the tools
//! and instructions shown from that, and the session that serves its clients without a
//! session. rmcp makes a session's handler inside the gate's call (`handle`), so the gate names
//! the request's caller in `REQUEST_CALLER` around it, and the handler is made for that view.

use std::sync::Arc;

use rmcp::{ErrorData as McpError, RoleServer, service::NotificationContext};

use super::{callers::Caller, sessions::Sessions};
use crate::{
    config::Config,
    flat::FlatSpec,
    session::{CallBudget, SessionState, SessionTable, Setup, SharedChildren, Surface, Who},
};

tokio::task_local! {
    /// The caller of the request the gate hands to rmcp, if tokens name callers.
    pub(super) static REQUEST_CALLER: Option<Caller>;
}

/// What one caller sees, and its clients without a session.
pub(super) struct CallerView {
    /// The caller, where tokens name callers.
    pub(super) caller: Option<Caller>,
    pub(super) config: Arc<Config>,
    pub(super) surface: Surface,
    pub(super) sessionless: Arc<SessionState>,
}

impl CallerView {
    pub(super) fn new(
        whole: &Config,
        flat: Option<&FlatSpec>,
        caller: Option<Caller>,
        shared: Arc<SharedChildren>,
    ) -> CallerView {
        let (config, surface) = seen_by(whole, flat, caller.as_ref());
        // A client without a session has no budget of its own: those calls share one, as
        // large as the sessions' count.
        let setup = Setup {
            shared: Some(shared),
            budget: Some(CallBudget::new(
                config.http.max_sessions,
                "clients without a session have",
                "http.maxSessions",
            )),
            sessionless: true,
        };
        let sessionless = SessionState::new(&config, &surface, setup);
        let sessionless_name = "sessionless".to_owned();
        sessionless.identify(match &caller {
            Some(caller) => caller.who(sessionless_name),
            None => Who {
                caller: None,
                session: sessionless_name,
                counted: false,
            },
        });
        CallerView {
            caller,
            config,
            surface,
            sessionless,
        }
    }

    /// The same caller's view of the reloaded `whole`; its sessionless session swaps to it.
    pub(super) async fn reloaded(
        &self,
        whole: &Config,
        flat: Option<&FlatSpec>,
        shared: &SharedChildren,
    ) -> CallerView {
        let (config, surface) = seen_by(whole, flat, self.caller.as_ref());
        let servers = Some(shared.servers.clone());
        self.sessionless.reload(&config, &surface, servers).await;
        CallerView {
            caller: self.caller.clone(),
            config,
            surface,
            sessionless: self.sessionless.clone(),
        }
    }
}

/// What `caller` sees of `whole`, and the surface shown from that.
fn seen_by(
    whole: &Config,
    flat: Option<&FlatSpec>,
    caller: Option<&Caller>,
) -> (Arc<Config>, Surface) {
    let who = caller.map(Caller::identity).unwrap_or_default();
    let config = Arc::new(whole.for_caller(who));
    let flat = flat.map(|flat| Arc::new(flat.within(&config)));
    let surface = Surface::new(&config, flat);
    (config, surface)
}

/// The session table as one caller's handler sees it: its sessions begin in its view.
pub(super) struct CallerTable {
    pub(super) sessions: Arc<Sessions>,
    pub(super) view: Arc<CallerView>,
}

impl SessionTable for CallerTable {
    fn begin(&self) -> Result<Arc<SessionState>, McpError> {
        let state = self.sessions.begin(&self.view)?;
        // A reload since this handler was made has made the caller a new view, and may have
        // passed the sessions by before this one was among them.
        let current = self.sessions.view(self.view.caller.clone());
        if !Arc::ptr_eq(&current, &self.view) {
            let (state, shared) = (state.clone(), self.sessions.shared_servers());
            tokio::spawn(async move {
                state
                    .reload(&current.config, &current.surface, Some(shared))
                    .await;
            });
        }
        Ok(state)
    }

    fn sessionless(&self) -> &Arc<SessionState> {
        &self.view.sessionless
    }

    fn initialized(
        &self,
        state: &Arc<SessionState>,
        context: &NotificationContext<RoleServer>,
    ) -> Option<Box<str>> {
        self.sessions.initialized(state, context)
    }

    fn ended(&self, state: Arc<SessionState>, id: Option<Box<str>>) {
        self.sessions.ended(state, id);
    }
}
