//! rmcp's requests of a session: `initialize`, the tool list and `tools/call` of the meta-tools
//! (or flat mode's tools), prompts, resources, completions, subscriptions and 2026-07-28 tasks.
#![allow(
    deprecated,
    reason = "SEP-2577 deprecates logging and roots; revisions before 2026-07-28 have them"
)]

use std::{future::Future, sync::Arc};

use futures::future::{BoxFuture, join_all};
use rmcp::{
    ErrorData as McpError, RoleServer, ServerHandler,
    model::{
        CallToolRequestParams, CallToolResponse, CancelTaskParams, CompleteRequestParams,
        CompleteResult, GetPromptRequestParams, GetPromptResponse, GetTaskParams, GetTaskResult,
        InitializeRequestParams, InitializeResult, ListPromptsResult, ListResourceTemplatesResult,
        ListResourcesResult, ListToolsResult, PaginatedRequestParams, ProtocolVersion,
        ReadResourceRequestParams, ReadResourceResponse, ServerConfig, SetLevelRequestParams,
        SubscribeRequestParams, SubscriptionFilter, UnsubscribeRequestParams, UpdateTaskParams,
    },
    service::{NotificationContext, RequestContext, SubscriptionContext},
};
use serde_json::Value;

use super::{Session, SessionState, input_rounds::RoundEnd, raw_arguments::RawArguments};
use crate::{
    child_call::CallAnswer,
    child_offers::{self, ResourceRoutes},
    children::ProgressOut,
    jsonrpc::call_meta::CallMeta,
    meta_tools::{OPEN_TOOLBOX, RUN_CODE, USE_TOOL},
    tasks::{self, TaskAsk},
    toolboxes::ServerSlot,
};

// The handlers that reach children box their work: rmcp spawns a task per request whose future
// holds the handler's, and moves it several times; a large one made every request copy tens of
// kilobytes (callgrind of `serve --http` showed the copies).
impl ServerHandler for Session {
    fn get_info(&self) -> ServerConfig {
        (*self.state().served().info).clone()
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(self.state().listen_filter(requested))
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        Box::pin(self.state().listen_for(context)).await
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, McpError> {
        let state = self.begin()?;
        context.peer.set_peer_info(request.clone());
        state.agent.connect(context.peer.clone());
        let result = self.negotiate_initialize(&request)?;
        state.agreed(result.protocol_version.clone());
        Ok(result)
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.state().set_log_level(request.level).await;
        Ok(())
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.initialized(&context);
        self.state().start_flat();
        crate::resident_code::start_up_ended();
    }

    async fn on_roots_list_changed(&self, _context: NotificationContext<RoleServer>) {
        if !self.state().agent.roots_change() {
            return;
        }
        let running = self.state().served().toolboxes.running();
        join_all(running.iter().map(|child| child.roots_changed())).await;
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, McpError> {
        let task = self
            .state()
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
        self.state()
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
        self.state()
            .agent
            .tasks()
            .update(&request.task_id, request.input_responses)
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        self.offering(|on| async move {
            let prompts = child_offers::list_prompts(&on.servers, &on.separator, &context.ct).await;
            Ok(ListPromptsResult::with_all_items(prompts))
        })
        .await
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        self.offering(|on| async move {
            child_offers::get_prompt(&on.servers, &on.separator, request, &context.ct)
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
        self.offering(|on| async move {
            let resources = on.routes.list(&on.servers, &context.ct).await;
            Ok(ListResourcesResult::with_all_items(resources))
        })
        .await
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        self.offering(|on| async move {
            let templates = on.routes.templates(&on.servers, &context.ct).await;
            Ok(ListResourceTemplatesResult::with_all_items(templates))
        })
        .await
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        self.offering(|on| async move {
            let read = on.routes.read(&on.servers, &request.uri, &context.ct).await;
            read.map(ReadResourceResponse::Complete)
        })
        .await
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.offering(|on| async move {
            let method = "resources/subscribe";
            on.routes
                .subscription(&on.servers, method, &request.uri, &context.ct)
                .await?;
            on.state.agent.subscribe(&request.uri, true);
            Ok(())
        })
        .await
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.state().agent.subscribe(&request.uri, false);
        self.offering(|on| async move {
            let method = "resources/unsubscribe";
            on.routes
                .subscription(&on.servers, method, &request.uri, &context.ct)
                .await
        })
        .await
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        self.offering(|on| async move {
            let routes = on.routes;
            child_offers::complete(&on.servers, &on.separator, routes, request, &context.ct).await
        })
        .await
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Box::pin(async move {
            let served = self.state().served();
            let tools = match &served.flat {
                Some(flat) => flat.tools(&served.toolboxes).await,
                None => served.meta.tools().to_vec(),
            };
            Ok(ListToolsResult::with_all_items(tools))
        })
        .await
    }

    async fn call_tool(
        &self,
        mut request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        Box::pin(async move {
            let inner = self.state();
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
            let flat = inner.is_flat();
            if !flat && request.name == OPEN_TOOLBOX {
                let input = meta_tool_input(&context, request.arguments)?;
                let audited = super::audit_trail::AuditedOpen::of(&input);
                let served = inner.served();
                let result = served.meta.open_toolbox(&served.toolboxes, input).await;
                if let Some(audited) = audited {
                    inner.audit_open(audited, &result);
                }
                return Ok(result.into());
            }
            if !flat && request.name == RUN_CODE && inner.served().meta.runs_code() {
                let input = meta_tool_input(&context, request.arguments)?;
                let meta = CallMeta::from_object(&context.meta);
                let progress = inner.progress_for(&meta, &context).zip(meta.progress);
                let result = inner.run_code(input, &context.ct, progress.clone()).await;
                if let Some((progress, _)) = progress {
                    progress.flush().await;
                }
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
            let _in_flight = inner.enter_call()?;
            let arguments = RawArguments::of_call(&context, request.arguments.take());
            let call = inner.child_call(&request.name, arguments);
            if !flat && inner.is_sessionless() {
                inner.open_named(&call).await;
            }
            let meta = CallMeta::from_object(&context.meta);
            // 2026-07-28: an agent that declared the tasks extension gets a task for a tool that
            // requires one.
            let tasks = capabilities
                .as_ref()
                .is_some_and(|capabilities| capabilities.supports_tasks());
            let ask = tasks.then_some(TaskAsk::IfRequired);
            let answer = if sessionless {
                let capabilities = capabilities.unwrap_or_default();
                match inner
                    .in_rounds(call, request, capabilities, meta, ask, &context)
                    .await?
                {
                    RoundEnd::Done(answer) => answer,
                    RoundEnd::InputRequired(result) => {
                        return Ok(CallToolResponse::InputRequired(result));
                    }
                }
            } else {
                let progress = inner.progress_for(&meta, &context);
                let out = progress.clone().map(ProgressOut::Peer);
                let answer = inner.call(call, &context.ct, meta, ask, out).await;
                if let Some(progress) = progress {
                    progress.flush().await;
                }
                answer
            };
            if let CallAnswer::Forwarded(result) = &answer
                && tasks
                && let Some(created) = tasks::as_created(result)
            {
                return Ok(CallToolResponse::Task(created));
            }
            Ok(answer.into_result()?.into())
        })
        .await
    }
}

/// The input of a meta-tool's call: its arguments as the transport kept them raw, else as rmcp
/// read them.
fn meta_tool_input(
    context: &RequestContext<RoleServer>,
    arguments: Option<rmcp::model::JsonObject>,
) -> Result<Value, McpError> {
    match RawArguments::of(context) {
        Some(raw) => serde_json::from_str(raw.get()).map_err(|error| {
            McpError::invalid_params(
                format!("Invalid params for tools/call: the arguments cannot be read ({error}); send plain JSON"),
                None,
            )
        }),
        None => Ok(Value::Object(arguments.unwrap_or_default())),
    }
}

/// What the children offer the agent besides tools, at one request.
struct Offering<'a> {
    /// The servers whose prompts and resources the agent sees: in flat mode the served ones,
    /// else those of the open toolboxes.
    servers: Vec<Arc<ServerSlot>>,
    /// The separator of their prompts' names.
    separator: String,
    /// Which server each resource URI the agent was shown belongs to.
    routes: &'a ResourceRoutes,
    state: &'a SessionState,
}

impl Session {
    /// Runs `work` on what the children offer now: the one body of the prompt, resource and
    /// completion requests, boxed for the reason above.
    fn offering<'a, T, Work, Done>(&'a self, work: Work) -> BoxFuture<'a, Result<T, McpError>>
    where
        Work: FnOnce(Offering<'a>) -> Done + Send + 'a,
        Done: Future<Output = Result<T, McpError>> + Send + 'a,
    {
        Box::pin(async move {
            let state = self.state();
            let (servers, separator) = state.offering_servers().await;
            let routes = &state.resources;
            work(Offering {
                servers,
                separator,
                routes,
                state,
            })
            .await
        })
    }
}
