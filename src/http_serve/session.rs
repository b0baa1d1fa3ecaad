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
        ReadResourceRequestParams, ReadResourceResponse, ServerConfig, SetLevelRequestParams,
        SubscribeRequestParams, UnsubscribeRequestParams, UpdateTaskParams,
    },
    service::{NotificationContext, RequestContext},
};

use crate::{
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
    /// The sessions' own shelves, by number, for shutdown.
    own: DashMap<u64, Toolshelf>,
    next: AtomicU64,
    /// `use_tool` calls in flight of clients without a session, all together.
    sessionless_calls: AtomicUsize,
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
            next: AtomicU64::new(0),
            sessionless_calls: AtomicUsize::new(0),
        })
    }

    /// A handler for rmcp: a new session's, or a sessionless request's.
    pub(super) fn handler(self: &Arc<Self>) -> HttpSession {
        HttpSession {
            sessions: self.clone(),
            own: OnceLock::new(),
            calls: AtomicUsize::new(0),
        }
    }

    /// Stops every child of every session and of the shared shelf.
    pub(super) async fn shutdown(&self) {
        let own: Vec<Toolshelf> = self.own.iter().map(|entry| entry.value().clone()).collect();
        self.own.clear();
        futures::future::join_all(own.iter().map(Toolshelf::shutdown)).await;
        self.shared.shutdown().await;
        self.servers.shutdown().await;
    }

    pub(super) fn open_sessions(&self) -> usize {
        self.own.len()
    }

    /// The text of `/metrics`, its gauges read now.
    pub(super) fn metrics(&self) -> String {
        let own: usize = self
            .own
            .iter()
            .map(|entry| entry.value().own_children_running())
            .sum();
        let running = self.servers.running() + own + self.shared.own_children_running();
        self.metrics.scrape(running, self.open_sessions())
    }
}

/// rmcp's handler for one session (or one sessionless request).
pub(super) struct HttpSession {
    sessions: Arc<Sessions>,
    /// Set at `initialize`: the session's own shelf and its number.
    own: OnceLock<(u64, Toolshelf)>,
    /// The session's `use_tool` calls in flight.
    calls: AtomicUsize,
}

/// Counts a call in flight until it drops.
struct InFlight<'a>(&'a AtomicUsize);

impl<'a> InFlight<'a> {
    /// Counts one more call, unless `limit` are in flight already.
    fn enter(count: &'a AtomicUsize, limit: usize) -> Option<Self> {
        count
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |now| {
                (now < limit).then_some(now + 1)
            })
            .ok()
            .map(|_| Self(count))
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The JSON-RPC code of a request refused for a limit of `serve --http`.
const LIMIT_REACHED: ErrorCode = ErrorCode(-32000);

impl HttpSession {
    fn shelf(&self) -> &Toolshelf {
        match self.own.get() {
            Some((_, own)) => own,
            None => &self.sessions.shared,
        }
    }
}

impl Drop for HttpSession {
    fn drop(&mut self) {
        if let Some((number, own)) = self.own.take() {
            self.sessions.own.remove(&number);
            // Outside a runtime (the process is ending) the process guard stops the children.
            if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                runtime.spawn(async move { own.shutdown().await });
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
        let (_, own) = self.own.get_or_init(|| {
            let number = self.sessions.next.fetch_add(1, Ordering::Relaxed);
            let sessions = &self.sessions;
            let own = Toolshelf::new(
                &sessions.config,
                Some(sessions.servers.clone()),
                &sessions.surface,
            );
            self.sessions.own.insert(number, own.clone());
            (number, own)
        });
        own.initialize(request, context).await
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
        let limits = &self.sessions.config.http;
        // A client without a session has no budget of its own: those calls share one, as
        // large as the sessions' count.
        let (count, limit, whose, key) = match self.own.get() {
            Some(_) => (
                &self.calls,
                limits.max_calls_per_session,
                "this session has",
                "http.maxCallsPerSession",
            ),
            None => (
                &self.sessions.sessionless_calls,
                limits.max_sessions,
                "clients without a session have",
                "http.maxSessions",
            ),
        };
        let Some(_in_flight) = InFlight::enter(count, limit) else {
            return Err(McpError::new(
                LIMIT_REACHED,
                format!(
                    "{whose} as many use_tool calls in flight as toolshelf runs at once ({limit}, {key} in the config): wait for one to answer, then call again"
                ),
                None,
            ));
        };
        if self.own.get().is_none() && request.name == USE_TOOL {
            self.sessions
                .shared
                .open_named(request.arguments.as_ref())
                .await;
        }
        self.shelf().call_tool(request, context).await
    }
}
