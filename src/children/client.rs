//! toolshelf's MCP client role toward one child: who it says it is (with the agent's sampling,
//! elicitation and roots capabilities, relayed), the child's requests to the client (relayed to
//! the agent through `SessionLink`), and the notifications a child sends on its own (a changed tool
//! list, log messages; progress of tool calls is taken by the transport, see `tool_calls`).
#![allow(
    deprecated,
    reason = "SEP-2577 deprecates logging, sampling and roots, but children still use them"
)]

use std::{
    sync::{
        Arc, RwLock,
        atomic::{AtomicBool, Ordering},
    },
    time::Duration,
};

use rmcp::{
    ClientHandler, ErrorData as McpError, RoleClient,
    model::{
        ClientConfig, ClientResult, CreateMessageRequest, CreateMessageRequestParams,
        CreateMessageResult, CustomNotification, ElicitRequest, ElicitRequestParams, ElicitResult,
        Implementation, InputRequiredResult, JsonObject, ListRootsRequest, ListRootsResult,
        LoggingLevel, LoggingMessageNotificationParam, MetaObject, ProtocolVersion,
        RequestMetaObject, ResourceUpdatedNotificationParam, ServerRequest,
    },
    service::{NotificationContext, RequestContext},
};

use futures::future::join_all;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::{
    agent_port::{Agent, RELATED_TASK, Relayed, STATUS_NOTIFICATION},
    request_lines::Retry,
    tool_calls::ToolCalls,
    tool_list,
};
use crate::{
    catalog::ServerCatalog, catalog::cache::Offer, jsonrpc::line_writer::LineWriter, locks,
};

/// The client handler of one child connection.
#[derive(Clone)]
pub(crate) struct ChildClient {
    pub catalog: Arc<ServerCatalog>,
    pub span: tracing::Span,
    /// Set when toolshelf begins to stop the child: a list change then needs no re-listing (it
    /// would race the closing connection).
    pub stopping: Arc<AtomicBool>,
    /// The child's direct calls and input, for re-listing its tools.
    pub calls: ToolCalls,
    pub input: LineWriter,
    pub relist_timeout: Duration,
    /// The agent side, for the child's requests and log messages.
    pub agent: Agent,
    /// "toolbox/server", for log messages and errors.
    pub origin: Arc<str>,
    /// The `_meta` of toolshelf's requests to a child on 2026-07-28, which has no session.
    /// `None` for a child that answered `initialize`.
    pub hop: Option<Arc<Hop>>,
}

/// MCP's `_meta` keys of toolshelf's requests to a child on 2026-07-28: the protocol version,
/// toolshelf's identity and capabilities, and the agent's log level (the revision has no
/// `logging/setLevel`: a level goes with each request).
pub(crate) struct Hop(RwLock<Arc<JsonObject>>);

impl Hop {
    pub(crate) fn new(meta: RequestMetaObject, log_level: Option<LoggingLevel>) -> Self {
        let hop = Self(RwLock::new(Arc::new(meta.0.0)));
        if let Some(level) = log_level {
            hop.set_log_level(level);
        }
        hop
    }

    /// The keys for the next request.
    pub(crate) fn meta(&self) -> Arc<JsonObject> {
        locks::read(&self.0).clone()
    }

    pub(crate) fn set_log_level(&self, level: LoggingLevel) {
        let mut meta = locks::write(&self.0);
        let mut changed = RequestMetaObject(MetaObject((**meta).clone()));
        changed.set_log_level(level);
        *meta = Arc::new(changed.0.0);
    }
}

impl ChildClient {
    /// The `_meta` of the next request to a child on 2026-07-28; `None` for other children.
    pub(crate) fn hop(&self) -> Option<Arc<JsonObject>> {
        self.hop.as_ref().map(|hop| hop.meta())
    }

    /// Relays the child's `request` to the agent: to `caller`'s session when the request is
    /// part of that session's call, else where the route finds. The child's calls in flight do
    /// not time out while the agent (often a person) answers.
    async fn relay(
        &self,
        kind: Relayed,
        request: ServerRequest,
        meta: Option<&RequestMetaObject>,
        caller: Option<&Agent>,
        cancel: &CancellationToken,
    ) -> Result<ClientResult, McpError> {
        let _paused = self.calls.pause_timeouts();
        let task = meta
            .and_then(|meta| meta.0.get(RELATED_TASK))
            .and_then(|related| related.get("taskId"))
            .and_then(serde_json::Value::as_str);
        let relayed = async {
            match caller {
                Some(caller) => {
                    caller
                        .relay(kind, request, &self.origin, task, &Vec::new, cancel)
                        .await
                }
                None => {
                    let callers = || self.calls.callers();
                    self.agent
                        .relay(kind, request, &self.origin, task, &callers, cancel)
                        .await
                }
            }
        };
        relayed.instrument(self.span.clone()).await
    }

    /// The answers of `caller`'s session to what a child on 2026-07-28 asked in an
    /// `input_required` result of its call, for the call's retry. Each request is relayed as if
    /// the child had sent it.
    pub(crate) async fn answer(
        &self,
        asked: InputRequiredResult,
        caller: &Agent,
        cancel: &CancellationToken,
    ) -> Result<Retry, McpError> {
        let requests = asked.input_requests.unwrap_or_default();
        let answers = join_all(requests.into_iter().map(|(key, request)| async move {
            let Some((kind, request)) = Relayed::from_input(request) else {
                return Err(McpError::invalid_params(
                    format!(
                        "input request '{key}' is of a kind toolshelf does not relay (it relays sampling, elicitation and roots)"
                    ),
                    None,
                ));
            };
            let answer = self.relay(kind, request, None, Some(caller), cancel).await?;
            let answer = serde_json::to_value(answer)
                .map_err(|error| McpError::internal_error(error.to_string(), None))?;
            Ok((key, answer))
        }))
        .await;
        Ok(Retry {
            input_responses: answers.into_iter().collect::<Result<_, _>>()?,
            request_state: asked.request_state,
        })
    }
}

fn unexpected(kind: &str) -> McpError {
    McpError::internal_error(
        format!("the MCP client answered {kind} with a result of another kind"),
        None,
    )
}

impl ClientHandler for ChildClient {
    fn get_info(&self) -> ClientConfig {
        // `initialize` names the newest revision that has it: a 2026-07-28 child is reached
        // with `server/discover` instead (`Child::start`).
        ClientConfig::new(
            self.agent.child_capabilities(),
            Implementation::new("toolshelf", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }

    async fn on_tool_list_changed(&self, context: NotificationContext<RoleClient>) {
        if self.stopping.load(Ordering::Acquire) {
            return;
        }
        let relist = async {
            let hop = self.hop();
            let listed = tool_list::list_tools(
                &self.calls,
                &self.input,
                self.relist_timeout,
                hop.as_deref(),
            );
            match listed.await {
                Ok(tools) => {
                    tracing::debug!(tools = tools.len(), "tool list changed; catalog refreshed");
                    let answer = context.peer.peer_info();
                    let offer = Offer::of(&self.agent.child_capabilities());
                    let identity =
                        crate::catalog::cache::ListIdentity::of(answer.as_deref(), offer);
                    let before = self.catalog.tools();
                    self.catalog.replace(tools, &identity);
                    // Servers announce changes that change nothing (server-everything, five
                    // times as it starts): the agent hears of one only when its list differs.
                    if crate::catalog::changes(&before, &self.catalog.tools()).is_some() {
                        self.agent.tool_list_changed().await;
                    }
                }
                Err(error) if self.stopping.load(Ordering::Acquire) => {
                    tracing::debug!(%error, "tool list changed while the server stopped");
                }
                Err(error) => tracing::warn!(%error, "tool list changed, but re-listing failed"),
            }
        };
        relist.instrument(self.span.clone()).await;
    }

    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.agent.resource_updated(params).await;
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.agent.offers_changed(false).await;
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.agent.offers_changed(true).await;
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, McpError> {
        let request = ServerRequest::CreateMessageRequest(CreateMessageRequest::new(params));
        let meta = Some(&context.meta);
        match self
            .relay(Relayed::Sampling, request, meta, None, &context.ct)
            .await?
        {
            ClientResult::CreateMessageResult(result) => Ok(*result),
            _ => Err(unexpected("sampling/createMessage")),
        }
    }

    async fn create_elicitation(
        &self,
        params: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, McpError> {
        let request = ServerRequest::ElicitRequest(ElicitRequest::new(params));
        match self
            .relay(
                Relayed::Elicitation,
                request,
                Some(&context.meta),
                None,
                &context.ct,
            )
            .await?
        {
            ClientResult::ElicitResult(result) => Ok(result),
            _ => Err(unexpected("elicitation/create")),
        }
    }

    async fn list_roots(
        &self,
        context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, McpError> {
        let request = ServerRequest::ListRootsRequest(ListRootsRequest::default());
        let meta = Some(&context.meta);
        match self
            .relay(Relayed::Roots, request, meta, None, &context.ct)
            .await?
        {
            ClientResult::ListRootsResult(result) => Ok(result),
            _ => Err(unexpected("roots/list")),
        }
    }

    async fn on_custom_notification(
        &self,
        notification: CustomNotification,
        _context: NotificationContext<RoleClient>,
    ) {
        if notification.method == STATUS_NOTIFICATION
            && let Some(params) = notification.params
        {
            self.agent.task_status(&self.origin, params).await;
        }
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let logger = params.logger.clone().unwrap_or_default();
        let (level, data) = (params.level, params.data.to_string());
        // Passed to the agent, the message is the agent's business; toolshelf's log keeps it
        // at debug. Without an agent session (`toolshelf check`) it is the user's, at info.
        let callers = || self.calls.callers();
        if self.agent.log(&self.origin, params, &callers).await {
            tracing::debug!(parent: &self.span, ?level, logger, data, "child log message");
        } else {
            tracing::info!(parent: &self.span, ?level, logger, data, "child log message");
        }
    }
}
