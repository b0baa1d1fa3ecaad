//! Newline-delimited JSON-RPC between the agent and toolshelf (stdio). Every request gets
//! exactly one answer, as JSON-RPC asks, under the id the agent wrote: `agent_message` reads each
//! line leniently, `agent_requests` keeps the ids in flight (a duplicate is refused; rmcp gets ids
//! of its own, since its typed ids hold neither `1.5` nor numbers past 64 bits). A line that is
//! not JSON gets a parse error (-32700), JSON that is not a message an invalid-request error
//! (-32600, `"id": null` when no id can be read), a known method with unreadable params -32602;
//! toolshelf keeps serving. A notification that cannot be read is only logged.
//!
//! Once the session is initialized, `use_tool` calls are handed to `agent_calls`, which answers
//! them itself; everything else goes to rmcp. All output, rmcp's and `agent_calls`', is written
//! through one `LineWriter`, in the order it was queued.

use std::time::Duration;

use rmcp::{
    RoleServer,
    model::{
        CallToolRequest, CallToolRequestParams, CancelledNotification, CancelledNotificationParam,
        ClientJsonRpcMessage, ClientNotification, ClientRequest, ErrorCode, GetExtensions,
        RequestId, ServerJsonRpcMessage, ServerNotification, ServerResult,
    },
    service::{RxJsonRpcMessage, TxJsonRpcMessage},
    transport::Transport,
};
use serde_json::value::RawValue;
use tokio::io::AsyncRead;

use crate::{
    agent_calls::AgentCalls,
    agent_message::{self, AgentId, Incoming},
    agent_requests::{AgentRequests, Cancelled, InUse},
    agent_tasks,
    json_lines::{self, Line, LineReader, LineWriter},
};

/// The longest line toolshelf reads from the agent; a longer one is answered with an error.
pub(crate) const MAX_AGENT_LINE: usize = 64 * 1024 * 1024;

/// How long calls in flight may still answer once the agent's input ended (rmcp waits as long
/// for its own), or once the server is stopping.
const DRAIN_AT_END: Duration = Duration::from_secs(5);
const DRAIN_AT_STOP: Duration = Duration::from_secs(2);

/// Line transport over an agent's reader and writer.
pub(crate) struct AgentTransport<R> {
    lines: LineReader<R>,
    write: LineWriter,
    route: Router,
    /// An answer to a line that could not be served, written before the next read.
    reply: Option<Vec<u8>>,
}

/// Decides where each message goes; apart from the reader so a line can be routed while the
/// reader's buffer holds it.
struct Router {
    calls: AgentCalls,
    requests: AgentRequests,
    /// The client sent `notifications/initialized`: `use_tool` calls go to `calls` from now on.
    initialized: bool,
}

/// What to do with one line.
#[allow(
    clippy::large_enum_variant,
    reason = "lives for one line and is returned unboxed as rmcp's message; boxing would allocate per message"
)]
enum Routed {
    Rmcp(RxJsonRpcMessage<RoleServer>),
    Reply(Vec<u8>),
    Done,
}

impl<R: AsyncRead + Send + Unpin + 'static> AgentTransport<R> {
    pub(crate) fn new(
        read: R,
        write: LineWriter,
        calls: AgentCalls,
        requests: AgentRequests,
    ) -> Self {
        Self {
            lines: LineReader::new(read, MAX_AGENT_LINE),
            write,
            route: Router {
                calls,
                requests,
                initialized: false,
            },
            reply: None,
        }
    }

    /// Decides what to do with one line: a message for rmcp, or nothing (an answer is queued).
    fn take_line(&mut self, line: Line) -> Option<RxJsonRpcMessage<RoleServer>> {
        let routed = if line == Line::TooLong {
            // The line is gone, but its start is kept: the id is usually there.
            let id = agent_message::id_in_head(self.lines.text());
            Routed::Reply(agent_message::error_line(
                id.as_ref(),
                ErrorCode::INVALID_REQUEST,
                &format!(
                    "message over the {} MiB limit; send smaller arguments",
                    MAX_AGENT_LINE / (1024 * 1024)
                ),
            ))
        } else {
            self.route.line(self.lines.text())
        };
        match routed {
            Routed::Rmcp(message) => Some(message),
            Routed::Reply(answer) => {
                self.reply = Some(answer);
                None
            }
            Routed::Done => None,
        }
    }
}

impl Router {
    fn line(&mut self, text: &[u8]) -> Routed {
        match agent_message::read(text) {
            Incoming::Blank => Routed::Done,
            Incoming::Refused(answer) => Routed::Reply(answer),
            Incoming::Ignored(why) => {
                tracing::debug!(%why, "ignoring a notification that cannot be read");
                Routed::Done
            }
            Incoming::Response => match serde_json::from_slice(text) {
                Ok(message) => Routed::Rmcp(message),
                Err(error) => {
                    tracing::debug!(%error, "ignoring a response that cannot be read");
                    Routed::Done
                }
            },
            Incoming::Notification { method, params } => self.notification(text, &method, params),
            Incoming::Request { id, method, params } => self.request(&id, &method, params),
        }
    }

    fn notification(&mut self, text: &[u8], method: &str, params: Option<&RawValue>) -> Routed {
        if method == "notifications/cancelled" {
            return self.cancelled(params);
        }
        match serde_json::from_slice::<RxJsonRpcMessage<RoleServer>>(text) {
            Ok(message) => {
                if let ClientJsonRpcMessage::Notification(notification) = &message
                    && let ClientNotification::InitializedNotification(_) =
                        &notification.notification
                {
                    self.initialized = true;
                }
                Routed::Rmcp(message)
            }
            Err(error) => {
                tracing::debug!(%method, %error, "ignoring a notification that cannot be read");
                Routed::Done
            }
        }
    }

    /// The agent cancels one of its requests: the call stops, the id is free again, and the
    /// request gets no answer.
    fn cancelled(&mut self, params: Option<&RawValue>) -> Routed {
        let Some((id, reason)) = agent_message::cancelled_request(params) else {
            tracing::debug!("ignoring notifications/cancelled without a requestId");
            return Routed::Done;
        };
        match self.requests.cancel(&id) {
            Cancelled::Direct => {
                tracing::debug!(%id, "call cancelled by the client");
                Routed::Done
            }
            Cancelled::Rmcp(internal) => {
                let params = CancelledNotificationParam::new(Some(internal), reason);
                let notification =
                    ClientNotification::CancelledNotification(CancelledNotification::new(params));
                Routed::Rmcp(ClientJsonRpcMessage::notification(notification))
            }
            Cancelled::Unknown => {
                tracing::debug!(%id, "cancellation of a request that is not in flight");
                Routed::Done
            }
        }
    }

    fn request(&mut self, id: &AgentId, method: &str, params: Option<&RawValue>) -> Routed {
        if self.initialized
            && method == "tools/call"
            && let Some(params) = params
        {
            match self.calls.try_start(id, params) {
                Some(Ok(())) => return Routed::Done,
                Some(Err(_)) => return Routed::Reply(InUse::answer(id)),
                None => {}
            }
        }
        if self.initialized {
            match self.calls.try_start_task_request(id, method, params) {
                Some(Ok(())) => return Routed::Done,
                Some(Err(_)) => return Routed::Reply(InUse::answer(id)),
                None => {}
            }
        }
        let Ok(internal) = self.requests.begin_rmcp(id) else {
            return Routed::Reply(InUse::answer(id));
        };
        match for_rmcp(internal.clone(), method, params) {
            Ok(message) => Routed::Rmcp(message),
            Err(refusal) => {
                self.requests.finish_rmcp(&internal);
                Routed::Reply(agent_message::error_line(
                    Some(id),
                    ErrorCode::INVALID_PARAMS,
                    &refusal,
                ))
            }
        }
    }
}

/// The `_meta` key naming the `subscriptions/listen` request a notification belongs to.
const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// The methods of MCP requests a client may send: a request for one of these that rmcp can
/// only read as a custom request has params that do not fit, -32602 rather than -32601.
const CLIENT_METHODS: &[&str] = &[
    "ping",
    "initialize",
    "server/discover",
    "completion/complete",
    "logging/setLevel",
    "prompts/get",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "subscriptions/listen",
    "tools/call",
    "tools/list",
    "tasks/get",
    "tasks/update",
    "tasks/cancel",
];

/// Request `method` with `params` as rmcp's message under rmcp's id `internal`, or why the
/// params cannot be read.
fn for_rmcp(
    internal: RequestId,
    method: &str,
    params: Option<&RawValue>,
) -> Result<RxJsonRpcMessage<RoleServer>, String> {
    if method == "tools/call" {
        let Some(params) = params else {
            return Err(
                r#"Invalid params: tools/call needs params, e.g. {"name":"open_toolbox","arguments":{"toolbox":"…"}}"#
                    .to_owned(),
            );
        };
        return tool_call(internal, params)
            .map_err(|error| format!("Invalid params for tools/call: {error}"));
    }
    let mut line = Vec::with_capacity(64 + params.map_or(0, |p| p.get().len()));
    line.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    serde_json::to_writer(&mut line, &internal).map_err(|error| error.to_string())?;
    line.extend_from_slice(br#","method":"#);
    serde_json::to_writer(&mut line, method).map_err(|error| error.to_string())?;
    if let Some(params) = params {
        line.extend_from_slice(br#","params":"#);
        line.extend_from_slice(params.get().as_bytes());
    }
    line.push(b'}');
    let message = serde_json::from_slice::<RxJsonRpcMessage<RoleServer>>(&line)
        .map_err(|error| format!("Invalid params for {method}: {error}"))?;
    if let ClientJsonRpcMessage::Request(request) = &message
        && let ClientRequest::CustomRequest(_) = &request.request
        && CLIENT_METHODS.contains(&method)
    {
        return Err(format!(
            "Invalid params for {method}: they do not have the shape the MCP specification gives this method"
        ));
    }
    Ok(message)
}

/// A `tools/call` request for rmcp, decoded directly. rmcp decodes every request by buffering
/// it and trying each request type in turn, which the profile showed to be a fifth of
/// toolshelf's CPU per call. The result is what rmcp's own decoding gives: `_meta` moves from the
/// params into the request's extensions.
fn tool_call(id: RequestId, params: &RawValue) -> serde_json::Result<RxJsonRpcMessage<RoleServer>> {
    let mut params: CallToolRequestParams = serde_json::from_str(params.get())?;
    let meta = params.meta.take();
    let mut request = CallToolRequest::new(params);
    if let Some(meta) = meta {
        request.extensions_mut().insert(meta);
    }
    Ok(ClientJsonRpcMessage::request(
        ClientRequest::CallToolRequest(request),
        id,
    ))
}

impl<R: AsyncRead + Send + Unpin + 'static> Transport<RoleServer> for AgentTransport<R> {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        if let ServerJsonRpcMessage::Response(response) = &item
            && let ServerResult::InitializeResult(initialized) = &response.result
        {
            self.route.calls.set_protocol(&initialized.protocol_version);
        }
        let line = self.route.encode(&item);
        let write = self.write.clone();
        async move {
            match line {
                Some(line) => write.send(line?).await,
                None => Ok(()),
            }
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            if let Some(reply) = self.reply.take() {
                // Best effort: if this future is dropped mid-write, the reply is not retried.
                if self.write.send(reply).await.is_err() {
                    return None;
                }
            }
            let line = match self.lines.next(false).await {
                Ok(Line::End) => {
                    self.route.calls.drain(DRAIN_AT_END).await;
                    return None;
                }
                Ok(line) => line,
                Err(error) => {
                    tracing::warn!(%error, "cannot read from the client");
                    return None;
                }
            };
            if let Some(message) = self.take_line(line) {
                return Some(message);
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.route.calls.drain(DRAIN_AT_STOP).await;
        self.write.close().await;
        Ok(())
    }
}

impl Router {
    /// rmcp's message as a line, an answer under the agent's own id; `None` for an answer
    /// nobody waits for any more (the agent cancelled the request).
    fn encode(&self, item: &ServerJsonRpcMessage) -> Option<std::io::Result<Vec<u8>>> {
        let line = match item {
            ServerJsonRpcMessage::Response(response) => {
                let id = self.agent_id(&response.id)?;
                let declared = self
                    .calls
                    .declares_tasks()
                    .then(|| agent_tasks::declared(&response.result))
                    .flatten();
                agent_message::response_line(&id, |out| match declared {
                    Some(declared) => serde_json::to_writer(out, &declared),
                    None => serde_json::to_writer(out, &response.result),
                })
            }
            ServerJsonRpcMessage::Error(error) => {
                let id = match &error.id {
                    Some(internal) => Some(self.agent_id(internal)?),
                    None => None,
                };
                agent_message::error_data_line(id.as_ref(), &error.error)
            }
            // Only these go on a listen stream; the rest (progress, log messages) pass as they are.
            ServerJsonRpcMessage::Notification(notification)
                if matches!(
                    notification.notification,
                    ServerNotification::SubscriptionsAcknowledgedNotification(_)
                        | ServerNotification::ToolListChangedNotification(_)
                        | ServerNotification::PromptListChangedNotification(_)
                        | ServerNotification::ResourceListChangedNotification(_)
                        | ServerNotification::ResourceUpdatedNotification(_)
                ) =>
            {
                return Some(self.notification_line(item));
            }
            _ => return Some(json_lines::encode(item)),
        };
        Some(line.map_err(std::io::Error::other))
    }

    /// A notification as a line. Those of a `subscriptions/listen` stream name its request in
    /// their `_meta`, by rmcp's id: the agent gets its own.
    fn notification_line(&self, item: &ServerJsonRpcMessage) -> std::io::Result<Vec<u8>> {
        let line = json_lines::encode(item)?;
        if !line
            .windows(SUBSCRIPTION_ID.len())
            .any(|window| window == SUBSCRIPTION_ID.as_bytes())
        {
            return Ok(line);
        }
        let mut message: serde_json::Value =
            serde_json::from_slice(&line).map_err(std::io::Error::other)?;
        let named = message
            .pointer_mut("/params/_meta")
            .and_then(|meta| meta.get_mut(SUBSCRIPTION_ID));
        if let Some(named) = named
            && let Ok(internal) = serde_json::from_value::<RequestId>(named.clone())
            && let Some(id) = self.requests.rmcp_request(&internal)
            && let Ok(agent) = serde_json::from_str(id.json())
        {
            *named = agent;
        }
        let mut line = serde_json::to_vec(&message).map_err(std::io::Error::other)?;
        line.push(b'\n');
        Ok(line)
    }

    fn agent_id(&self, internal: &RequestId) -> Option<AgentId> {
        let id = self.requests.finish_rmcp(internal);
        if id.is_none() {
            tracing::debug!(%internal, "dropping the answer to a cancelled request");
        }
        id
    }
}
