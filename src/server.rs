//! toolshelf's MCP server role: answers `initialize`, lists the two meta-tools and dispatches
//! `tools/call` to them. What the agent can fix comes back as an `isError` result; a protocol
//! error only for a tool name that toolshelf does not have.
#![allow(
    deprecated,
    reason = "SEP-2577 deprecates logging and roots; revisions before 2026-07-28 have them"
)]

mod listen;

use std::{future::Future, sync::Arc};

use futures::future::join_all;
use rmcp::{
    ErrorData as McpError, RoleServer, ServerHandler, ServiceExt,
    model::{
        CallToolRequestParams, CallToolResponse, CancelTaskParams, ClientCapabilities,
        CompleteRequestParams, CompleteResult, GetPromptRequestParams, GetPromptResponse,
        GetTaskParams, GetTaskResult, Implementation, InitializeRequestParams, InitializeResult,
        JsonObject, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
        ListToolsResult, LoggingLevel, PaginatedRequestParams, PromptsCapability, ProtocolVersion,
        ReadResourceRequestParams, ReadResourceResponse, ResourcesCapability, ServerCapabilities,
        ServerConfig, SetLevelRequestParams, SubscribeRequestParams, SubscriptionFilter,
        UnsubscribeRequestParams, UpdateTaskParams,
    },
    service::{NotificationContext, RequestContext, ServerInitializeError, SubscriptionContext},
};
use serde_json::{Value, value::RawValue};
use tokio_util::sync::CancellationToken;

use crate::{
    agent_calls::AgentCalls,
    agent_input::{Outcome, ToolName},
    agent_link::AgentLink,
    agent_requests::AgentRequests,
    agent_tasks::{self, TaskAsk, TaskRequest},
    agent_transport::AgentTransport,
    call_meta::CallMeta,
    children::{CurrentToken, PeerProgress, ProgressOut, ProgressTarget},
    config::Config,
    flat::{DEFAULT_SEPARATOR, FlatServing, FlatSpec},
    forward::{CallAnswer, CallParts, ChildErrors},
    json_lines::LineWriter,
    meta_tools::{MetaTools, OPEN_TOOLBOX, USE_TOOL, UseToolInput},
    offers::{self, ResourceRoutes},
    toolboxes::{ServerSlot, SharedServers, Toolboxes},
};

/// The server handler; cheap to clone.
#[derive(Clone)]
pub struct Toolshelf {
    inner: Arc<Inner>,
}

struct Inner {
    toolboxes: Toolboxes,
    meta: Arc<MetaTools>,
    /// Flat mode: the children's tools listed and called by `server:tool` names.
    flat: Option<FlatServing>,
    /// Which server each resource URI the agent was shown belongs to.
    resources: ResourceRoutes,
    info: Arc<ServerConfig>,
    /// The agent's session as the children see it, with the tasks it started.
    agent: Arc<AgentLink>,
}

/// What an agent sees of toolshelf, the same for every session of one serving process: built
/// once from the config (the meta-tools' checks compile schemas).
#[derive(Clone)]
pub(crate) struct Surface {
    meta: Arc<MetaTools>,
    flat: Option<Arc<FlatSpec>>,
    info: Arc<ServerConfig>,
}

impl Surface {
    /// Toolbox mode's two meta-tools, or with `flat` the children's tools by flat names.
    pub(crate) fn new(config: &Config, flat: Option<Arc<FlatSpec>>) -> Self {
        let meta = MetaTools::new(config);
        // Logging: children's log messages are passed on, and the agent's level reaches them.
        // Tasks (the 2026-07-28 extension): a child's task reaches the agent as one.
        // Prompts, resources and completions: the children's, passed on. Any configured server
        // may have them, and which do is known only once they run.
        let mut capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_logging()
            .enable_tasks()
            .enable_completions()
            .build();
        let mut prompts = PromptsCapability::default();
        prompts.list_changed = Some(true);
        capabilities.prompts = Some(prompts);
        let mut resources = ResourcesCapability::default();
        resources.subscribe = Some(true);
        resources.list_changed = Some(true);
        capabilities.resources = Some(resources);
        let instructions = match &flat {
            Some(flat) => {
                // The list is the children's: it changes when theirs do.
                if let Some(tools) = capabilities.tools.as_mut() {
                    tools.list_changed = Some(true);
                }
                flat.instructions()
            }
            None => meta.instructions().to_owned(),
        };
        let info = ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("toolshelf", env!("CARGO_PKG_VERSION")))
            .with_instructions(instructions);
        Self {
            meta: Arc::new(meta),
            flat,
            info: Arc::new(info),
        }
    }
}

/// A call of a child's tool, as the agent made it.
pub(crate) enum ChildCall {
    /// `use_tool` with its input.
    UseTool(UseToolInput),
    /// Flat mode: the tool's flat name and its arguments as the agent wrote them.
    Flat {
        name: String,
        arguments: Option<Box<RawValue>>,
    },
}

impl ChildCall {
    /// The tool the call names, as the agent wrote it (`toolbox/server/name`, or a flat name).
    pub(crate) fn tool_named(&self) -> String {
        match self {
            ChildCall::UseTool(input) => input.tool_named(),
            ChildCall::Flat { name, .. } => name.clone(),
        }
    }

    /// The tool's own arguments, as the agent wrote them.
    pub(crate) fn arguments(&self) -> Option<&RawValue> {
        match self {
            ChildCall::UseTool(input) => input.arguments(),
            ChildCall::Flat { arguments, .. } => arguments.as_deref(),
        }
    }
}

/// Why `serve` stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("the MCP client did not complete initialization: {0}")]
    Initialize(String),
}

impl Toolshelf {
    /// One agent session's shelf, showing `surface`. Its servers are its own, except those in
    /// `shared`.
    pub(crate) fn new(
        config: &Config,
        shared: Option<Arc<SharedServers>>,
        surface: &Surface,
    ) -> Self {
        let agent = Arc::new(AgentLink::default());
        let flat = surface.flat.clone().map(|flat| {
            agent.list_children();
            FlatServing::new(flat)
        });
        Self {
            inner: Arc::new(Inner {
                toolboxes: Toolboxes::new(config, agent.clone(), shared),
                meta: surface.meta.clone(),
                flat,
                resources: ResourceRoutes::default(),
                info: surface.info.clone(),
                agent,
            }),
        }
    }

    pub(crate) fn is_flat(&self) -> bool {
        self.inner.flat.is_some()
    }

    /// Whether a `tools/call` of `name` is a call of a child's tool (it counts against the
    /// limit of calls in flight): any name in flat mode, `use_tool` otherwise.
    pub(crate) fn calls_a_child(&self, name: &str) -> bool {
        self.is_flat() || name == USE_TOOL
    }

    /// The call a `tools/call` of a child's tool makes (rmcp decoded its arguments): `use_tool`'s,
    /// or in flat mode the named tool's.
    fn child_call(&self, name: &str, arguments: Option<JsonObject>) -> ChildCall {
        match self.inner.flat {
            Some(_) => ChildCall::Flat {
                name: name.to_owned(),
                arguments: arguments
                    .and_then(|arguments| serde_json::value::to_raw_value(&arguments).ok()),
            },
            None => ChildCall::UseTool(UseToolInput::from_object(arguments.unwrap_or_default())),
        }
    }

    /// The servers whose prompts and resources the agent sees, and the separator of their
    /// prompts' names: in flat mode the served servers, else those of the open toolboxes.
    async fn offering_servers(&self) -> (Vec<Arc<ServerSlot>>, &str) {
        let inner = &self.inner;
        match &inner.flat {
            Some(flat) => (flat.servers(&inner.toolboxes).await, flat.separator()),
            None => {
                let open = inner
                    .toolboxes
                    .all()
                    .filter(|toolbox| toolbox.is_open())
                    .flat_map(|toolbox| toolbox.servers.iter().cloned());
                (open.collect(), DEFAULT_SEPARATOR)
            }
        }
    }

    /// Where a call's progress goes on rmcp's path: through the request's peer, if the call
    /// has a progress token (a call without one needs no forwarding task).
    fn progress_for(
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
    fn start_flat(&self) {
        if self.inner.flat.is_none() {
            return;
        }
        let shelf = self.clone();
        tokio::spawn(async move {
            if let Some(flat) = &shelf.inner.flat {
                flat.ready(&shelf.inner.toolboxes).await;
            }
        });
    }

    /// Runs `call`; progress goes to the agent through `out` under the call's progress token,
    /// if it gave one, and the rest of its `_meta` that is the agent's own goes to the child.
    /// `task` is the agent's `params.task` (2025-11-25): the call runs as a task if the child
    /// runs it as one.
    pub(crate) async fn call(
        &self,
        call: ChildCall,
        cancel: &CancellationToken,
        meta: CallMeta,
        task: Option<TaskAsk<'_>>,
        out: Option<ProgressOut>,
    ) -> CallAnswer {
        let token = meta
            .progress
            .clone()
            .map(|token| CurrentToken::new(Some(token)));
        self.call_with(call, cancel, meta, task, token, out).await
    }

    /// `call` with the call's progress going under `token`, which may change while it runs.
    async fn call_with(
        &self,
        call: ChildCall,
        cancel: &CancellationToken,
        meta: CallMeta,
        task: Option<TaskAsk<'_>>,
        token: Option<CurrentToken>,
        out: Option<ProgressOut>,
    ) -> CallAnswer {
        let inner = &self.inner;
        let progress = token
            .zip(out)
            .map(|(token, out)| ProgressTarget { out, token });
        let task = task.map(|ask| TaskRequest {
            ask,
            tasks: inner.agent.tasks(),
        });
        let mut parts = CallParts {
            arguments: None,
            cancel,
            progress,
            meta: &meta.forwarded,
            task,
            child_errors: ChildErrors::UrlElicitation,
        };
        match (call, &inner.flat) {
            (ChildCall::Flat { name, arguments }, Some(flat)) => {
                parts.arguments = arguments.as_deref();
                parts.child_errors = ChildErrors::All;
                flat.call(&inner.toolboxes, &name, parts).await
            }
            (ChildCall::UseTool(input), _) => {
                inner.meta.use_tool(&inner.toolboxes, input, parts).await
            }
            (ChildCall::Flat { .. }, None) => {
                CallAnswer::Refused(McpError::internal_error("flat mode is off", None))
            }
        }
    }

    /// Runs `use_tool` for an agent without a session (2026-07-28), for which a child's request
    /// ends the call's round (`agent_input`); a retry with `requestState` continues that call.
    async fn in_rounds(
        &self,
        request: CallToolRequestParams,
        capabilities: ClientCapabilities,
        meta: CallMeta,
        ask: Option<TaskAsk<'static>>,
        context: &RequestContext<RoleServer>,
    ) -> Result<Outcome, McpError> {
        let input = self.inner.agent.input();
        let log_level = context.meta.log_level();
        if let Some(level) = log_level
            && self.inner.agent.log_level() != Some(level)
        {
            // Children have one level per session: the agent's latest.
            self.set_log_level(level).await;
        }
        // The retry's requestState is bound to the tool the call named.
        let tool = match &self.inner.flat {
            Some(flat) => {
                let (toolbox, server, name) = flat.locate(&request.name).unwrap_or_default();
                ToolName {
                    toolbox: toolbox.to_owned(),
                    server: server.to_owned(),
                    name: name.to_owned(),
                }
            }
            None => named_tool(request.arguments.as_ref().unwrap_or(&JsonObject::new())),
        };
        let call = self.child_call(&request.name, request.arguments);
        // Each round is a request of its own, with its own progress token.
        let progress = meta.progress.clone();
        // The first round's progress goes through its request's peer, handed to rmcp before the
        // round's answer; later rounds' progress takes the token of their own request.
        let mut first_round = None;
        let round = match request.request_state {
            Some(state) => input.resume(&state, &tool, request.input_responses, progress)?,
            None => {
                let shelf = self.clone();
                let peer_progress = PeerProgress::start(context.peer.clone());
                first_round = Some(peer_progress.clone());
                let out = ProgressOut::Peer(peer_progress);
                let token = CurrentToken::new(progress);
                let call_token = token.clone();
                input.begin(
                    tool,
                    capabilities,
                    log_level,
                    token,
                    move |stop| async move {
                        shelf
                            .call_with(call, &stop, meta, ask, Some(call_token), Some(out))
                            .await
                    },
                )
            }
        };
        let outcome = input.wait(round, &context.peer, &context.ct).await;
        if let Some(progress) = first_round {
            progress.flush().await;
        }
        Ok(outcome)
    }

    /// Opens the toolbox a `use_tool` call names, if it is configured and not open: a client
    /// without a session (2026-07-28 over HTTP) has no place to keep "open", so its calls open
    /// what they need. A toolbox that cannot open is left to `use_tool`'s own error.
    pub(crate) async fn open_named(&self, arguments: Option<&JsonObject>) {
        let Some(arguments) = arguments else { return };
        let named = named_tool(arguments);
        let toolboxes = &self.inner.toolboxes;
        if let Some(toolbox) = toolboxes.get(&named.toolbox)
            && !toolbox.is_open()
            && let Err(conflicts) = toolboxes.open(toolbox).await
        {
            tracing::warn!(toolbox = %named.toolbox, ?conflicts, "the toolbox a call named cannot open");
        }
    }

    /// The agent's log level: for the running children, and those started later.
    async fn set_log_level(&self, level: LoggingLevel) {
        self.inner.toolboxes.set_log_level(level).await;
    }

    /// Answers the agent's `tasks/get`, `tasks/result`, `tasks/cancel` or `tasks/list`
    /// (2025-11-25) for a task started through `use_tool`.
    pub(crate) async fn task_request(
        &self,
        method: &str,
        params: Option<&RawValue>,
        cancel: &CancellationToken,
    ) -> Result<Box<RawValue>, McpError> {
        self.inner.agent.tasks().serve(method, params, cancel).await
    }

    /// How many of this session's own children run now (shared ones are counted apart).
    pub(crate) fn own_children_running(&self) -> usize {
        self.inner.toolboxes.own_running()
    }

    /// Stops every child; no child is started afterwards.
    pub async fn shutdown(&self) {
        self.inner.toolboxes.shutdown().await;
    }
}

// The handlers that reach children box their work: rmcp spawns a task per request whose future
// holds the handler's, and moves it several times; a large one made every request copy tens of
// kilobytes (callgrind of `serve --http`: a third of the instructions per call).
impl ServerHandler for Toolshelf {
    fn get_info(&self) -> ServerConfig {
        (*self.inner.info).clone()
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(self.listen_filter(requested))
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        Box::pin(self.listen_for(context)).await
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, McpError> {
        context.peer.set_peer_info(request.clone());
        self.inner.agent.connect(context.peer.clone());
        self.negotiate_initialize(&request)
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.set_log_level(request.level).await;
        Ok(())
    }

    async fn on_initialized(&self, _context: NotificationContext<RoleServer>) {
        self.start_flat();
    }

    async fn on_roots_list_changed(&self, _context: NotificationContext<RoleServer>) {
        if !self.inner.agent.roots_change() {
            return;
        }
        let running = self.inner.toolboxes.running();
        join_all(running.iter().map(|child| child.roots_changed())).await;
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, McpError> {
        let task = self
            .inner
            .agent
            .tasks()
            .detailed(&request.task_id, &context.ct)
            .await?;
        Ok(GetTaskResult::new(task))
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.inner
            .agent
            .tasks()
            .cancel(&request.task_id, &context.ct)
            .await
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.inner
            .agent
            .tasks()
            .update(&request.task_id, request.input_responses)
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        Box::pin(async move {
            let (servers, separator) = self.offering_servers().await;
            let prompts = offers::list_prompts(&servers, separator, &context.ct).await;
            Ok(ListPromptsResult::with_all_items(prompts))
        })
        .await
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        Box::pin(async move {
            let (servers, separator) = self.offering_servers().await;
            offers::get_prompt(&servers, separator, request, &context.ct)
                .await
                .map(GetPromptResponse::Complete)
        })
        .await
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        Box::pin(async move {
            let (servers, _) = self.offering_servers().await;
            let resources = self.inner.resources.list(&servers, &context.ct).await;
            Ok(ListResourcesResult::with_all_items(resources))
        })
        .await
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        Box::pin(async move {
            let (servers, _) = self.offering_servers().await;
            let templates = self.inner.resources.templates(&servers, &context.ct).await;
            Ok(ListResourceTemplatesResult::with_all_items(templates))
        })
        .await
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        Box::pin(async move {
            let (servers, _) = self.offering_servers().await;
            self.inner
                .resources
                .read(&servers, &request.uri, &context.ct)
                .await
                .map(ReadResourceResponse::Complete)
        })
        .await
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        Box::pin(async move {
            let (servers, _) = self.offering_servers().await;
            let routes = &self.inner.resources;
            routes
                .subscription(&servers, "resources/subscribe", &request.uri, &context.ct)
                .await?;
            self.inner.agent.subscribe(&request.uri, true);
            Ok(())
        })
        .await
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        Box::pin(async move {
            self.inner.agent.subscribe(&request.uri, false);
            let (servers, _) = self.offering_servers().await;
            let routes = &self.inner.resources;
            routes
                .subscription(&servers, "resources/unsubscribe", &request.uri, &context.ct)
                .await
        })
        .await
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        Box::pin(async move {
            let (servers, separator) = self.offering_servers().await;
            let routes = &self.inner.resources;
            offers::complete(&servers, separator, routes, request, &context.ct).await
        })
        .await
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Box::pin(async move {
            let inner = &self.inner;
            let tools = match &inner.flat {
                Some(flat) => flat.tools(&inner.toolboxes).await,
                None => inner.meta.tools().to_vec(),
            };
            Ok(ListToolsResult::with_all_items(tools))
        })
        .await
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        Box::pin(async move {
            let inner = &self.inner;
            let sessionless = context
                .protocol_version()
                .is_some_and(|version| version >= ProtocolVersion::V_2026_07_28);
            let capabilities = context.client_capabilities();
            if sessionless {
                // Children started by this call are offered what the agent declared on it.
                inner
                    .agent
                    .declare(capabilities.clone().unwrap_or_default());
            }
            let flat = inner.flat.is_some();
            if !flat && request.name == OPEN_TOOLBOX {
                let input = Value::Object(request.arguments.unwrap_or_default());
                let result = inner.meta.open_toolbox(&inner.toolboxes, input).await;
                return Ok(result.into());
            }
            if !flat && request.name != USE_TOOL {
                return Err(McpError::invalid_params(
                    format!(
                        "Unknown tool '{}': toolshelf has two tools, {OPEN_TOOLBOX} and {USE_TOOL}; call tools of a toolbox through {USE_TOOL}",
                        request.name
                    ),
                    None,
                ));
            }
            // A child's tool: through use_tool, or by its flat name.
            let meta = CallMeta::from_object(&context.meta);
            // 2026-07-28: an agent that declared the tasks extension gets a task for a tool that
            // requires one.
            let tasks = capabilities
                .as_ref()
                .is_some_and(|capabilities| capabilities.supports_tasks());
            let ask = tasks.then_some(TaskAsk::IfRequired);
            let answer = if sessionless {
                let capabilities = capabilities.unwrap_or_default();
                match self
                    .in_rounds(request, capabilities, meta, ask, &context)
                    .await?
                {
                    Outcome::Done(answer) => answer,
                    Outcome::InputRequired(result) => {
                        return Ok(CallToolResponse::InputRequired(result));
                    }
                }
            } else {
                let call = self.child_call(&request.name, request.arguments);
                let progress = self.progress_for(&meta, &context);
                let out = progress.clone().map(ProgressOut::Peer);
                let answer = self.call(call, &context.ct, meta, ask, out).await;
                if let Some(progress) = progress {
                    progress.flush().await;
                }
                answer
            };
            if let CallAnswer::Forwarded(result) = &answer
                && tasks
                && let Some(created) = agent_tasks::as_created(result)
            {
                return Ok(CallToolResponse::Task(created));
            }
            Ok(answer.into_result()?.into())
        })
        .await
    }
}

/// The tool `use_tool`'s arguments name, as far as they do (they are checked later).
fn named_tool(arguments: &JsonObject) -> ToolName {
    let part = |key: &str| {
        arguments
            .get("tool")
            .and_then(|tool| tool.get(key))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    ToolName {
        toolbox: part("toolbox"),
        server: part("server"),
        name: part("name"),
    }
}

/// Serves MCP on stdin/stdout until the client disconnects or `shutdown` resolves, then stops
/// every child.
pub async fn serve_stdio(
    config: &Config,
    flat: Option<Arc<FlatSpec>>,
    shutdown: impl Future<Output = ()>,
) -> Result<(), ServeError> {
    let (stdin, stdout) = rmcp::transport::stdio_pipes();
    let out = LineWriter::spawn(stdout);
    let shelf = Toolshelf::new(config, None, &Surface::new(config, flat));
    let requests = AgentRequests::default();
    let calls = AgentCalls::new(shelf.clone(), out.clone(), requests.clone());
    let transport = AgentTransport::new(stdin, out, calls, requests);
    let outcome = serve_on(&shelf, transport, shutdown).await;
    shelf.shutdown().await;
    outcome
}

async fn serve_on<T, E, A>(
    shelf: &Toolshelf,
    transport: T,
    shutdown: impl Future<Output = ()>,
) -> Result<(), ServeError>
where
    T: rmcp::transport::IntoTransport<RoleServer, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    tokio::pin!(shutdown);
    let running = tokio::select! {
        running = shelf.clone().serve(transport) => match running {
            Ok(running) => running,
            // Input ended before a session began: a client that connected and left (a probe, a
            // 2026-07-28 client that only discovered), or empty input. A normal end.
            Err(ServerInitializeError::ConnectionClosed(_)) => {
                tracing::debug!("the client left before starting a session");
                return Ok(());
            }
            Err(error) => return Err(ServeError::Initialize(error.to_string())),
        },
        () = &mut shutdown => return Ok(()),
    };
    tracing::debug!("client initialized");
    let stop = running.cancellation_token();
    let waiting = running.waiting();
    tokio::pin!(waiting);
    tokio::select! {
        _ = &mut waiting => tracing::debug!("client disconnected"),
        () = &mut shutdown => {
            tracing::info!("shutting down");
            stop.cancel();
            let _ = waiting.await;
        }
    }
    Ok(())
}
