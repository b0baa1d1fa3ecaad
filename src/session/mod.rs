//! The session core: one agent session, whatever transport carries it. `SessionState` is the
//! session (open toolboxes, children, calls and requests in flight, protocol version, budget);
//! `Session` is rmcp's handler of it, the only `ServerHandler` in toolshelf; the door serves
//! the requests that skip rmcp (`use_tool` calls, 2025-11-25 `tasks/…`). Both transports hand
//! every request to one of those two, so a feature written here reaches both.
//!
//! What the agent can fix comes back as an `isError` result; a protocol error only for a tool
//! name that toolshelf does not have.

mod audit_trail;
mod budget;
mod calls;
mod code_runs;
pub(crate) mod door;
mod handler;
pub(crate) mod in_flight;
pub(crate) mod input_rounds;
mod listen;
pub(crate) mod raw_arguments;
pub(crate) mod route;
mod served;
pub(crate) mod session_link;
mod state;
mod surface;
mod tool_name;

use std::sync::{Arc, OnceLock};

use rmcp::{ErrorData as McpError, RoleServer, service::NotificationContext};

pub(crate) use audit_trail::Who;
pub(crate) use budget::{CallBudget, LIMIT_REACHED};

pub(crate) use route::SharedChildren;
pub(crate) use state::{SessionState, Setup};
pub(crate) use surface::Surface;

/// rmcp's handler of one agent session. On stdio it is bound to the one session from the start;
/// over HTTP rmcp makes one before it knows whether a session begins (a handler per request for
/// a client without a session), so it binds at `initialize` to a new session from the
/// transport's table, and until then serves as the table's session for clients without one.
pub(crate) enum Session {
    One(Arc<SessionState>),
    InTable {
        table: Arc<dyn SessionTable>,
        bound: OnceLock<Arc<SessionState>>,
        /// The transport's id of the session, once the agent said `notifications/initialized`.
        id: OnceLock<Box<str>>,
    },
}

/// What a transport that holds many sessions gives the core: where a new session comes from,
/// and what to do when one is initialized and when its handler is gone.
pub(crate) trait SessionTable: Send + Sync + 'static {
    /// A new session, or why none may begin (a limit).
    fn begin(&self) -> Result<Arc<SessionState>, McpError>;
    /// The session that serves clients without a session of their own.
    fn sessionless(&self) -> &Arc<SessionState>;
    /// `state` is initialized; the transport's id for it, if it has one.
    fn initialized(
        &self,
        state: &Arc<SessionState>,
        context: &NotificationContext<RoleServer>,
    ) -> Option<Box<str>>;
    /// The handler of `state` is gone: the session ended.
    fn ended(&self, state: Arc<SessionState>, id: Option<Box<str>>);
}

impl Session {
    /// A handler for a transport that holds many sessions in `table`.
    pub(crate) fn in_table(table: Arc<dyn SessionTable>) -> Self {
        Session::InTable {
            table,
            bound: OnceLock::new(),
            id: OnceLock::new(),
        }
    }

    /// The session this handler serves now.
    fn state(&self) -> &Arc<SessionState> {
        match self {
            Session::One(state) => state,
            Session::InTable { table, bound, .. } => bound.get().unwrap_or(table.sessionless()),
        }
    }

    /// The session `initialize` begins: this handler's own, bound now if it was not.
    fn begin(&self) -> Result<&Arc<SessionState>, McpError> {
        if let Session::InTable { table, bound, .. } = self
            && bound.get().is_none()
            && let Err(state) = bound.set(table.begin()?)
        {
            table.ended(state, None);
        }
        Ok(self.state())
    }

    /// Tells the table the session is initialized, remembering its id.
    fn initialized(&self, context: &NotificationContext<RoleServer>) {
        if let Session::InTable { table, bound, id } = self
            && let Some(state) = bound.get()
            && state.protocol().is_some()
            && id.get().is_none()
            && let Some(named) = table.initialized(state, context)
        {
            let _ = id.set(named);
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if let Session::InTable { table, bound, id } = self
            && let Some(state) = bound.take()
        {
            table.ended(state, id.take());
        }
    }
}
