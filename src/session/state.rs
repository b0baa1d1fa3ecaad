//! One agent session's state: its open toolboxes and children, its requests in flight, the
//! protocol version it agreed on, and the budget of calls it may have in flight. Every request
//! of the session reaches it, through rmcp (`Session`) or past it (the door), whatever
//! transport carried the request.
#![allow(
    deprecated,
    reason = "SEP-2577 deprecates logging; revisions before 2026-07-28 have it"
)]

use std::sync::{Arc, OnceLock, RwLock};

use rmcp::{
    RoleServer,
    model::{LoggingLevel, ProtocolVersion},
    service::RequestContext,
};
use serde_json::value::RawValue;

use super::{
    budget::{CallBudget, InFlight},
    calls::AgentCall,
    in_flight::RequestsInFlight,
    route::SharedChildren,
    served::Served,
    session_link::SessionLink,
    surface::Surface,
};
use crate::{
    child_offers::ResourceRoutes,
    children::PeerProgress,
    config::Config,
    flat::DEFAULT_SEPARATOR,
    jsonrpc::call_meta::CallMeta,
    meta_tools::UseToolInput,
    revision::Protocol,
    toolboxes::{ServerSlot, SharedServers, Toolboxes},
};

/// One agent session: stdio's one, each 2025-era session over HTTP, and the one that serves
/// HTTP clients without a session.
pub(crate) struct SessionState {
    /// Its toolboxes and what the agent is shown of them, from the config it was last given
    /// (a reload swaps them: `served`).
    served: RwLock<Arc<Served>>,
    /// Which server each resource URI the agent was shown belongs to.
    pub(super) resources: ResourceRoutes,
    /// The agent's session as the children see it, with the tasks it started.
    pub(super) agent: Arc<SessionLink>,
    /// The protocol version `initialize` agreed on, and what toolshelf does differently for it
    /// (read on every call the door takes, so worked out once).
    protocol: OnceLock<(ProtocolVersion, Protocol)>,
    /// The requests the door serves, by the agent's ids.
    requests: RequestsInFlight,
    /// The calls of children's tools it may have in flight, if the transport limits them.
    budget: Option<CallBudget>,
    /// It serves clients without a session (2026-07-28 over HTTP): having no place to keep
    /// "open", their `use_tool` calls open the toolbox they name.
    sessionless: bool,
    /// Who the transport said this session is, for the audit log.
    pub(super) who: OnceLock<super::audit_trail::Who>,
}

/// How a transport sets up a session beyond what every session shows.
#[derive(Default)]
pub(crate) struct Setup {
    /// The servers sessions share (`serve --http`); the rest are the session's own.
    pub(crate) shared: Option<Arc<SharedChildren>>,
    pub(crate) budget: Option<CallBudget>,
    pub(crate) sessionless: bool,
}

impl SessionState {
    /// One agent session showing `surface`.
    pub(crate) fn new(config: &Config, surface: &Surface, setup: Setup) -> Arc<Self> {
        let agent = Arc::new(SessionLink::default());
        let shared = setup.shared.map(|shared| {
            shared.join(&agent);
            shared.servers.clone()
        });
        if surface.flat.is_some() {
            agent.list_children();
        }
        let toolboxes = Toolboxes::new(config, agent.clone(), shared);
        Arc::new(Self {
            served: RwLock::new(Arc::new(Served::new(toolboxes, surface))),
            resources: ResourceRoutes::default(),
            agent,
            protocol: OnceLock::new(),
            requests: RequestsInFlight::default(),
            budget: setup.budget,
            sessionless: setup.sessionless,
            who: OnceLock::new(),
        })
    }

    /// Its toolboxes and what the agent is shown of them, as they are now.
    pub(crate) fn served(&self) -> Arc<Served> {
        crate::locks::read(&self.served).clone()
    }

    /// Serves `served` from now on; what the old one still runs is its callers' to finish.
    pub(super) fn swap_served(&self, served: Served) -> Arc<Served> {
        std::mem::replace(&mut *crate::locks::write(&self.served), Arc::new(served))
    }

    /// Serves `config` (the session's view of a reloaded config) from now on: the open
    /// toolboxes that remain stay open, servers whose definition is unchanged keep their
    /// children, the session's own children of changed or removed servers stop once idle, and
    /// the agent is told the tool list changed. Calls in flight finish on what they started on.
    pub(crate) async fn reload(
        &self,
        config: &Config,
        surface: &Surface,
        shared: Option<Arc<SharedServers>>,
    ) {
        let before = self.served();
        let toolboxes = before.toolboxes.carried(config, shared);
        self.swap_served(Served::new(toolboxes, surface));
        before.toolboxes.retire_replaced(&self.served().toolboxes);
        self.agent.tool_list_changed().await;
    }

    /// The protocol version `initialize` agreed on, once it did.
    pub(crate) fn protocol(&self) -> Option<&ProtocolVersion> {
        self.protocol.get().map(|(version, _)| version)
    }

    /// How toolshelf serves the protocol version agreed on, once there is one.
    pub(crate) fn revision(&self) -> Option<Protocol> {
        self.protocol.get().map(|(_, revision)| *revision)
    }

    pub(super) fn agreed(&self, version: ProtocolVersion) {
        let revision = Protocol::of(&version);
        let _ = self.protocol.set((version, revision));
    }

    /// The agent's requests in flight, by its ids.
    pub(crate) fn requests(&self) -> &RequestsInFlight {
        &self.requests
    }

    /// Counts a call of a child's tool in flight, or says which limit refuses it.
    pub(crate) fn enter_call(&self) -> Result<Option<InFlight>, rmcp::ErrorData> {
        self.budget.as_ref().map(CallBudget::enter).transpose()
    }

    /// Serves clients without a session.
    pub(super) fn is_sessionless(&self) -> bool {
        self.sessionless
    }

    pub(crate) fn is_flat(&self) -> bool {
        self.served().flat.is_some()
    }

    /// The call a `tools/call` of a child's tool makes with `arguments` as the agent wrote
    /// them: `use_tool`'s, or in flat mode the named tool's.
    pub(super) fn child_call(&self, name: &str, arguments: Option<Box<RawValue>>) -> AgentCall {
        match self.is_flat() {
            true => AgentCall::Flat {
                name: name.to_owned(),
                arguments,
            },
            false => AgentCall::UseTool(match arguments {
                Some(arguments) => UseToolInput::from_raw(&arguments),
                None => UseToolInput::empty(),
            }),
        }
    }

    /// The servers whose prompts and resources the agent sees, and the separator of their
    /// prompts' names: in flat mode the served servers, else those of the open toolboxes.
    pub(super) async fn offering_servers(&self) -> (Vec<Arc<ServerSlot>>, String) {
        let served = self.served();
        match &served.flat {
            Some(flat) => (
                flat.servers(&served.toolboxes).await,
                flat.separator().to_owned(),
            ),
            None => {
                let open = served
                    .toolboxes
                    .all()
                    .filter(|toolbox| toolbox.is_open())
                    .flat_map(|toolbox| toolbox.servers.iter().cloned());
                (open.collect(), DEFAULT_SEPARATOR.to_owned())
            }
        }
    }

    /// Where a call's progress goes on rmcp's path: through the request's peer, if the call
    /// has a progress token (a call without one needs no forwarding task).
    pub(super) fn progress_for(
        &self,
        meta: &CallMeta,
        context: &RequestContext<RoleServer>,
    ) -> Option<PeerProgress> {
        meta.progress
            .is_some()
            .then(|| PeerProgress::start(context.peer.clone()))
    }

    /// Flat mode: starts the children now that the agent is initialized (they are told its
    /// capabilities), without holding up the session.
    pub(super) fn start_flat(self: &Arc<Self>) {
        let served = self.served();
        if served.flat.is_none() {
            return;
        }
        tokio::spawn(async move {
            if let Some(flat) = &served.flat {
                flat.ready(&served.toolboxes).await;
            }
        });
    }

    /// The agent's log level: for the running children, and those started later.
    pub(super) async fn set_log_level(&self, level: LoggingLevel) {
        self.served().toolboxes.set_log_level(level).await;
    }

    /// How many of this session's own children run now (shared ones are counted apart).
    pub(crate) fn own_children_running(&self) -> usize {
        self.served().toolboxes.own_running()
    }

    /// Stops every child; no child is started afterwards.
    pub(crate) async fn shutdown(&self) {
        self.served().toolboxes.shutdown().await;
    }
}
