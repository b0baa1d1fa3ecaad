//! One MCP session over HTTP. A 2025-era client's session (it starts with `initialize`) gets a
//! `Toolshelf` of its own: its open toolboxes, its children, its relays; its children stop when
//! the session ends (DELETE or expiry). A client without a session (2026-07-28) is served by the
//! one shared `Toolshelf`: rmcp makes a handler per request for it, so those handlers are views
//! of the shared one and start nothing of their own; having no place to keep "open", its
//! `use_tool` calls open the toolbox they name.
#![allow(
    deprecated,
    reason = "SEP-2577 deprecates logging, but revisions before 2026-07-28 have it"
)]

use std::sync::{
    Arc, OnceLock,
    atomic::{AtomicU64, Ordering},
};

use dashmap::DashMap;
use rmcp::{
    ErrorData as McpError, RoleServer, ServerHandler,
    model::{
        CallToolRequestParams, CallToolResponse, CancelTaskParams, GetTaskParams, GetTaskResult,
        InitializeRequestParams, InitializeResult, ListToolsResult, PaginatedRequestParams,
        ServerConfig, SetLevelRequestParams, UpdateTaskParams,
    },
    service::{NotificationContext, RequestContext},
};

use crate::{config::Config, meta_tools::USE_TOOL, server::Toolshelf};

/// What every session handler shares.
pub(super) struct Sessions {
    config: Arc<Config>,
    /// Serves the clients without a session.
    shared: Toolshelf,
    /// The sessions' own shelves, by number, for shutdown.
    own: DashMap<u64, Toolshelf>,
    next: AtomicU64,
}

impl Sessions {
    pub(super) fn new(config: Arc<Config>) -> Arc<Sessions> {
        let shared = Toolshelf::new(&config);
        Arc::new(Sessions {
            config,
            shared,
            own: DashMap::new(),
            next: AtomicU64::new(0),
        })
    }

    /// A handler for rmcp: a new session's, or a sessionless request's.
    pub(super) fn handler(self: &Arc<Self>) -> HttpSession {
        HttpSession {
            sessions: self.clone(),
            own: OnceLock::new(),
        }
    }

    /// Stops every child of every session and of the shared shelf.
    pub(super) async fn shutdown(&self) {
        let own: Vec<Toolshelf> = self.own.iter().map(|entry| entry.value().clone()).collect();
        self.own.clear();
        futures::future::join_all(own.iter().map(Toolshelf::shutdown)).await;
        self.shared.shutdown().await;
    }

    pub(super) fn open_sessions(&self) -> usize {
        self.own.len()
    }
}

/// rmcp's handler for one session (or one sessionless request).
pub(super) struct HttpSession {
    sessions: Arc<Sessions>,
    /// Set at `initialize`: the session's own shelf and its number.
    own: OnceLock<(u64, Toolshelf)>,
}

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
        let (_, own) = self.own.get_or_init(|| {
            let number = self.sessions.next.fetch_add(1, Ordering::Relaxed);
            let own = Toolshelf::new(&self.sessions.config);
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
        if self.own.get().is_none() && request.name == USE_TOOL {
            self.sessions
                .shared
                .open_named(request.arguments.as_ref())
                .await;
        }
        self.shelf().call_tool(request, context).await
    }
}
