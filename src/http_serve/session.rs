//! One MCP session over HTTP. A 2025-era client's session (it starts with `initialize`) gets a
//! `Toolshelf` of its own: its open toolboxes, its relays and its `"sharing": "session"`
//! children, which stop when the session ends (DELETE or expiry); every other child is one of
//! the `SharedServers`. A client without a session (2026-07-28) is served by the
//! one shared `Toolshelf`: rmcp makes a handler per request for it, so those handlers are views
//! of the shared one and start nothing of their own; having no place to keep "open", its
//! `use_tool` calls open the toolbox they name.
#![allow(
    deprecated,
    reason = "SEP-2577 deprecates logging, but revisions before 2026-07-28 have it"
)]

use std::sync::{
    Arc, OnceLock,
    atomic::{AtomicU64, AtomicUsize, Ordering},
};

use dashmap::DashMap;
use rmcp::{
    ErrorData as McpError, RoleServer, ServerHandler,
    model::{
        CallToolRequestParams, CallToolResponse, CancelTaskParams, CompleteRequestParams,
        CompleteResult, ErrorCode, GetPromptRequestParams, GetPromptResponse, GetTaskParams,
        GetTaskResult, InitializeRequestParams, InitializeResult, ListPromptsResult,
        ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
        ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse, ServerConfig,
        SetLevelRequestParams, SubscribeRequestParams, UnsubscribeRequestParams, UpdateTaskParams,
    },
    service::{NotificationContext, RequestContext},
};

use crate::{
    agent_requests::AgentRequests,
    config::Config,
    flat::FlatSpec,
    meta_tools::USE_TOOL,
    metrics::Metrics,
    server::{Surface, Toolshelf},
    toolboxes::SharedServers,
};

/// What every session handler shares.
pub(super) struct Sessions {
    config: Arc<Config>,
    /// The servers sessions share (all but those marked `"sharing": "session"`).
    servers: Arc<SharedServers>,
    /// What every session's calls and starts count in.
    metrics: Arc<Metrics>,
    /// Serves the clients without a session.
    shared: Toolshelf,
    /// What every session shows the agent.
    surface: Surface,
    /// The sessions' own parts, by number, for shutdown.
    own: DashMap<u64, Arc<OwnSession>>,
    /// The same, by rmcp's session id once the agent said `notifications/initialized`: what
    /// the gate's direct path serves.
    by_id: DashMap<Box<str>, Arc<OwnSession>>,
    next: AtomicU64,
    /// `use_tool` calls in flight of clients without a session, all together.
    sessionless_calls: Arc<AtomicUsize>,
}

/// A 2025-era session's own part, shared by its rmcp handler and the gate's direct path.
pub(super) struct OwnSession {
    number: u64,
    pub(super) shelf: Toolshelf,
    /// Its `use_tool` calls in flight, on either path.
    calls: Arc<AtomicUsize>,
    /// The protocol version `initialize` agreed on.
    protocol: OnceLock<ProtocolVersion>,
    /// The direct path's requests in flight, by the agent's ids.
    pub(super) requests: AgentRequests,
}

impl OwnSession {
    /// The protocol version `initialize` agreed on.
    pub(super) fn protocol(&self) -> Option<&ProtocolVersion> {
        self.protocol.get()
    }
}

impl Sessions {
    pub(super) fn new(config: Arc<Config>, flat: Option<Arc<FlatSpec>>) -> Arc<Sessions> {
        let metrics = Arc::new(Metrics::default());
        let servers = SharedServers::new(&config, metrics.clone());
        let surface = Surface::new(&config, flat);
        let shared = Toolshelf::new(&config, Some(servers.clone()), &surface);
        Arc::new(Sessions {
            config,
            servers,
            metrics,
            shared,
            surface,
            own: DashMap::new(),
            by_id: DashMap::new(),
            next: AtomicU64::new(0),
            sessionless_calls: Arc::default(),
        })
    }

    /// A handler for rmcp: a new session's, or a sessionless request's.
    pub(super) fn handler(self: &Arc<Self>) -> HttpSession {
        HttpSession {
            sessions: self.clone(),
            own: OnceLock::new(),
            id: OnceLock::new(),
        }
    }

    /// The session rmcp knows by `id`, once it is initialized.
    pub(super) fn by_id(&self, id: &str) -> Option<Arc<OwnSession>> {
        self.by_id.get(id).map(|entry| entry.value().clone())
    }

    pub(super) fn config(&self) -> &Config {
        &self.config
    }

    /// Counts a `use_tool` call in flight for `own` (`None`: a client without a session), or
    /// says which limit refuses it.
    pub(super) fn enter_call(&self, own: Option<&OwnSession>) -> Result<InFlight, McpError> {
        let limits = &self.config.http;
        // A client without a session has no budget of its own: those calls share one, as
        // large as the sessions' count.
        let (count, limit, whose, key) = match own {
            Some(own) => (
                &own.calls,
                limits.max_calls_per_session,
                "this session has",
                "http.maxCallsPerSession",
            ),
            None => (
                &self.sessionless_calls,
                limits.max_sessions,
                "clients without a session have",
                "http.maxSessions",
            ),
        };
        InFlight::enter(count, limit).ok_or_else(|| {
            McpError::new(
                LIMIT_REACHED,
                format!(
                    "{whose} as many use_tool calls in flight as toolshelf runs at once ({limit}, {key} in the config): wait for one to answer, then call again"
                ),
                None,
            )
        })
    }

    /// Stops every child of every session and of the shared shelf.
    pub(super) async fn shutdown(&self) {
        let own: Vec<Arc<OwnSession>> =
            self.own.iter().map(|entry| entry.value().clone()).collect();
        self.own.clear();
        self.by_id.clear();
        futures::future::join_all(own.iter().map(|own| own.shelf.shutdown())).await;
        self.shared.shutdown().await;
        self.servers.shutdown().await;
    }

    pub(super) fn open_sessions(&self) -> usize {
        self.own.len()
    }

    /// The text of `/metrics`, its gauges read now (with `connections` open).
    pub(super) fn metrics(&self, connections: usize) -> String {
        let own: usize = self
            .own
            .iter()
            .map(|entry| entry.value().shelf.own_children_running())
            .sum();
        let running = self.servers.running() + own + self.shared.own_children_running();
        self.metrics
            .scrape(running, self.open_sessions(), connections)
    }
}

/// rmcp's handler for one session (or one sessionless request).
pub(super) struct HttpSession {
    sessions: Arc<Sessions>,
    /// Set at `initialize`: the session's own part.
    own: OnceLock<Arc<OwnSession>>,
    /// rmcp's id of the session, learnt from `notifications/initialized`.
    id: OnceLock<Box<str>>,
}

/// Counts a call in flight until it drops.
pub(super) struct InFlight(Arc<AtomicUsize>);

impl InFlight {
    /// Counts one more call, unless `limit` are in flight already.
    fn enter(count: &Arc<AtomicUsize>, limit: usize) -> Option<Self> {
        count
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |now| {
                (now < limit).then_some(now + 1)
            })
            .ok()
            .map(|_| Self(count.clone()))
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The header rmcp keeps a session's id in.
pub(super) const SESSION_ID_HEADER: &str = "mcp-session-id";

/// The JSON-RPC code of a request refused for a limit of `serve --http`.
const LIMIT_REACHED: ErrorCode = ErrorCode(-32000);

impl HttpSession {
    fn shelf(&self) -> &Toolshelf {
        match self.own.get() {
            Some(own) => &own.shelf,
            None => &self.sessions.shared,
        }
    }
}

impl Drop for HttpSession {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            self.sessions.by_id.remove(&id);
        }
        if let Some(own) = self.own.take() {
            self.sessions.own.remove(&own.number);
            // Outside a runtime (the process is ending) the process guard stops the children.
            if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                runtime.spawn(async move { own.shelf.shutdown().await });
            }
        }
    }
}

impl ServerHandler for HttpSession {
    fn get_info(&self) -> ServerConfig {
        self.shelf().get_info()
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, McpError> {
        let limit = self.sessions.config.http.max_sessions;
        if self.own.get().is_none() && self.sessions.own.len() >= limit {
            return Err(McpError::new(
                LIMIT_REACHED,
                format!(
                    "toolshelf holds as many agent sessions as it may ({limit}, http.maxSessions in the config): end sessions you no longer use (DELETE), wait for idle ones to expire, or raise the limit"
                ),
                None,
            ));
        }
        let own = self.own.get_or_init(|| {
            let sessions = &self.sessions;
            let own = Arc::new(OwnSession {
                number: sessions.next.fetch_add(1, Ordering::Relaxed),
                shelf: Toolshelf::new(
                    &sessions.config,
                    Some(sessions.servers.clone()),
                    &sessions.surface,
                ),
                calls: Arc::default(),
                protocol: OnceLock::new(),
                requests: AgentRequests::default(),
            });
            sessions.own.insert(own.number, own.clone());
            own
        });
        let result = own.shelf.initialize(request, context).await?;
        let _ = own.protocol.set(result.protocol_version.clone());
        Ok(result)
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.shelf().set_level(request, context).await
    }

    async fn on_roots_list_changed(&self, context: NotificationContext<RoleServer>) {
        self.shelf().on_roots_list_changed(context).await
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        let id = context
            .extensions
            .get::<http::request::Parts>()
            .and_then(|request| request.headers.get(SESSION_ID_HEADER))
            .and_then(|id| id.to_str().ok());
        if let (Some(own), Some(id)) = (self.own.get(), id)
            && own.protocol.get().is_some()
            && self.id.set(id.into()).is_ok()
        {
            self.sessions.by_id.insert(id.into(), own.clone());
        }
        self.shelf().on_initialized(context).await
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, McpError> {
        self.shelf().get_task(request, context).await
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.shelf().cancel_task(request, context).await
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.shelf().update_task(request, context).await
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        self.shelf().list_prompts(request, context).await
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        self.shelf().get_prompt(request, context).await
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        self.shelf().list_resources(request, context).await
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        self.shelf().list_resource_templates(request, context).await
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        self.shelf().read_resource(request, context).await
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.shelf().subscribe(request, context).await
    }

    fn accepted_subscription_filter(
        &self,
        requested: &rmcp::model::SubscriptionFilter,
    ) -> Option<rmcp::model::SubscriptionFilter> {
        self.shelf().accepted_subscription_filter(requested)
    }

    async fn listen(&self, context: rmcp::service::SubscriptionContext) -> Result<(), McpError> {
        self.shelf().listen(context).await
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.shelf().unsubscribe(request, context).await
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        self.shelf().complete(request, context).await
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        self.shelf().list_tools(request, context).await
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        if !self.shelf().calls_a_child(&request.name) {
            return self.shelf().call_tool(request, context).await;
        }
        let _in_flight = self.sessions.enter_call(self.own.get().map(Arc::as_ref))?;
        if self.own.get().is_none() && request.name == USE_TOOL {
            self.sessions
                .shared
                .open_named(request.arguments.as_ref())
                .await;
        }
        self.shelf().call_tool(request, context).await
    }
}
