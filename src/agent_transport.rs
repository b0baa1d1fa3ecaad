//! Newline-delimited JSON-RPC between the agent and toolshelf (stdio). rmcp's own transport
//! silently drops a line that is not JSON; this one answers it, as JSON-RPC asks: a line that is
//! not JSON gets a parse error (-32700), JSON that is not a message gets an invalid-request error
//! (-32600) with its id when it has one, and toolshelf keeps serving. A notification that cannot
//! be read is only logged, since notifications are never answered.
//!
//! Once the session is initialized, `use_tool` calls are handed to `agent_calls`, which answers
//! them itself; everything else goes to rmcp. All output, rmcp's and `agent_calls`', is written
//! through one `LineWriter`, in the order it was queued.

use std::time::Duration;

use rmcp::{
    RoleServer,
    model::{
        CallToolRequest, CallToolRequestParams, ClientJsonRpcMessage, ClientNotification,
        ClientRequest, ErrorData, GetExtensions, RequestId, ServerJsonRpcMessage, ServerResult,
    },
    service::{RxJsonRpcMessage, TxJsonRpcMessage},
    transport::Transport,
};
use serde::Deserialize;
use serde_json::{Value, value::RawValue};
use tokio::io::AsyncRead;

use crate::{
    agent_calls::AgentCalls,
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
    calls: AgentCalls,
    /// The client sent `notifications/initialized`: `use_tool` calls go to `calls` from now on.
    initialized: bool,
    /// An answer to a line that could not be read, written before the next read.
    reply: Option<ServerJsonRpcMessage>,
}

impl<R: AsyncRead + Send + Unpin + 'static> AgentTransport<R> {
    pub(crate) fn new(read: R, write: LineWriter, calls: AgentCalls) -> Self {
        Self {
            lines: LineReader::new(read, MAX_AGENT_LINE),
            write,
            calls,
            initialized: false,
            reply: None,
        }
    }

    /// Decides what to do with one line: a message, or an answer to queue.
    fn take_line(&mut self, line: Line) -> Option<RxJsonRpcMessage<RoleServer>> {
        if line == Line::TooLong {
            self.reply = Some(ServerJsonRpcMessage::error(
                ErrorData::invalid_request(
                    format!(
                        "message over the {} MiB limit; send smaller arguments",
                        MAX_AGENT_LINE / (1024 * 1024)
                    ),
                    None,
                ),
                None,
            ));
            return None;
        }
        let text = self.lines.text();
        if text.iter().all(u8::is_ascii_whitespace) {
            return None;
        }
        if self.initialized && self.calls.try_start(text) {
            return None;
        }
        if let Ok(envelope) = serde_json::from_slice::<CallEnvelope<'_>>(text)
            && envelope.jsonrpc == "2.0"
            && envelope.method == "tools/call"
            && let Some(call) = tool_call(envelope)
        {
            return Some(call);
        }
        match serde_json::from_slice::<RxJsonRpcMessage<RoleServer>>(text) {
            Ok(message) => {
                if let ClientJsonRpcMessage::Notification(notification) = &message {
                    match &notification.notification {
                        ClientNotification::InitializedNotification(_) => self.initialized = true,
                        ClientNotification::CancelledNotification(cancelled) => {
                            if let Some(id) = &cancelled.params.request_id {
                                self.calls.cancel(id);
                            }
                        }
                        _ => {}
                    }
                }
                Some(message)
            }
            Err(error) if error.is_syntax() || error.is_eof() => {
                tracing::debug!(%error, "a line from the client is not JSON");
                self.reply = Some(ServerJsonRpcMessage::error(
                    ErrorData::parse_error(format!("Parse error: {error}"), None),
                    None,
                ));
                None
            }
            Err(error) => {
                self.reply = not_a_message(text, &error);
                None
            }
        }
    }
}

/// Just enough of a request to recognise a `tools/call`.
#[derive(Deserialize)]
struct CallEnvelope<'a> {
    jsonrpc: &'a str,
    id: RequestId,
    method: &'a str,
    #[serde(borrow)]
    params: &'a RawValue,
}

/// A `tools/call` request for rmcp, decoded directly. rmcp decodes every request by buffering
/// it and trying each request type in turn, which the profile showed to be a fifth of
/// toolshelf's CPU per call. The result is what rmcp's own decoding gives: `_meta` moves from the
/// params into the request's extensions. Anything unusual returns `None` and takes rmcp's path.
fn tool_call(envelope: CallEnvelope<'_>) -> Option<RxJsonRpcMessage<RoleServer>> {
    let mut params: CallToolRequestParams = serde_json::from_str(envelope.params.get()).ok()?;
    let meta = params.meta.take();
    let mut request = CallToolRequest::new(params);
    if let Some(meta) = meta {
        request.extensions_mut().insert(meta);
    }
    Some(ClientJsonRpcMessage::request(
        ClientRequest::CallToolRequest(request),
        envelope.id,
    ))
}

/// The answer to well-formed JSON that is not a message toolshelf understands.
fn not_a_message(text: &[u8], error: &serde_json::Error) -> Option<ServerJsonRpcMessage> {
    let value: Value = serde_json::from_slice(text).ok()?;
    let id = value
        .get("id")
        .and_then(|id| serde_json::from_value::<RequestId>(id.clone()).ok());
    if id.is_none() && value.get("method").is_some() {
        tracing::debug!(%error, "ignoring a notification that cannot be read");
        return None;
    }
    Some(ServerJsonRpcMessage::error(
        ErrorData::invalid_request(format!("Invalid request: {error}"), None),
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
            self.calls.set_protocol(&initialized.protocol_version);
        }
        let write = self.write.clone();
        async move { write.send(json_lines::encode(&item)?).await }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            if let Some(reply) = self.reply.take() {
                // Best effort: if this future is dropped mid-write, the reply is not retried.
                if self.send(reply).await.is_err() {
                    return None;
                }
            }
            let line = match self.lines.next(false).await {
                Ok(Line::End) => {
                    self.calls.drain(DRAIN_AT_END).await;
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
        self.calls.drain(DRAIN_AT_STOP).await;
        self.write.close().await;
        Ok(())
    }
}
