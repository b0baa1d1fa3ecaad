//! Newline-delimited JSON-RPC between the agent and toolshelf (stdio). rmcp's own transport
//! silently drops a line that is not JSON; this one answers it, as JSON-RPC asks: a line that is
//! not JSON gets a parse error (-32700), JSON that is not a message gets an invalid-request error
//! (-32600) with its id when it has one, and toolshelf keeps serving. A notification that cannot
//! be read is only logged, since notifications are never answered.

use std::sync::Arc;

use rmcp::{
    RoleServer,
    model::{
        CallToolRequest, CallToolRequestParams, ClientJsonRpcMessage, ClientRequest, ErrorData,
        GetExtensions, RequestId, ServerJsonRpcMessage,
    },
    service::{RxJsonRpcMessage, TxJsonRpcMessage},
    transport::Transport,
};
use serde::Deserialize;
use serde_json::{Value, value::RawValue};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};

/// The longest line toolshelf reads from the agent; a longer one is answered with an error.
pub(crate) const MAX_AGENT_LINE: usize = 64 * 1024 * 1024;

/// Line transport over an agent's reader and writer.
pub(crate) struct AgentTransport<R, W> {
    read: BufReader<R>,
    line: Vec<u8>,
    /// Set while the rest of an oversized line is skipped.
    discarding: bool,
    write: Arc<tokio::sync::Mutex<W>>,
    /// An answer to a line that could not be read, written before the next read.
    reply: Option<ServerJsonRpcMessage>,
}

impl<R, W> AgentTransport<R, W>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    pub(crate) fn new(read: R, write: W) -> Self {
        Self {
            read: BufReader::new(read),
            line: Vec::new(),
            discarding: false,
            write: Arc::new(tokio::sync::Mutex::new(write)),
            reply: None,
        }
    }

    /// Reads up to the next newline into `self.line`. Cancel-safe: a partial line stays in the
    /// buffer for the next call. `Ok(false)` at end of input.
    async fn read_line(&mut self) -> std::io::Result<bool> {
        loop {
            let available = self.read.fill_buf().await?;
            if available.is_empty() {
                return Ok(false);
            }
            let (chunk, found) = match available.iter().position(|byte| *byte == b'\n') {
                Some(at) => (&available[..=at], true),
                None => (available, false),
            };
            let used = chunk.len();
            if !self.discarding {
                self.line.extend_from_slice(chunk);
            }
            self.read.consume(used);
            if self.line.len() > MAX_AGENT_LINE {
                self.line.clear();
                self.discarding = true;
            }
            if found {
                return Ok(true);
            }
        }
    }

    /// Decides what to do with one complete line.
    fn take_line(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        if std::mem::take(&mut self.discarding) {
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
            self.line.clear();
            return None;
        }
        let text = self.line.strip_suffix(b"\n").unwrap_or(&self.line);
        let text = text.strip_suffix(b"\r").unwrap_or(text);
        let text = text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(text);
        if text.iter().all(u8::is_ascii_whitespace) {
            self.line.clear();
            return None;
        }
        if let Some(call) = tool_call(text) {
            self.line.clear();
            return Some(call);
        }
        let parsed = serde_json::from_slice::<RxJsonRpcMessage<RoleServer>>(text);
        let outcome = match parsed {
            Ok(message) => Some(message),
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
        };
        self.line.clear();
        outcome
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

/// A `tools/call` request decoded directly. rmcp decodes every request by buffering it and
/// trying each request type in turn, which the profile showed to be a fifth of toolshelf's CPU
/// per call; the agent's calls are nearly all `tools/call`. The result is what rmcp's own
/// decoding gives: `_meta` moves from the params into the request's extensions. Anything
/// unusual returns `None` and takes rmcp's path.
fn tool_call(text: &[u8]) -> Option<RxJsonRpcMessage<RoleServer>> {
    let envelope: CallEnvelope<'_> = serde_json::from_slice(text).ok()?;
    if envelope.jsonrpc != "2.0" || envelope.method != "tools/call" {
        return None;
    }
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

impl<R, W> Transport<RoleServer> for AgentTransport<R, W>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let write = self.write.clone();
        async move {
            let mut bytes = serde_json::to_vec(&item).map_err(std::io::Error::other)?;
            bytes.push(b'\n');
            let mut write = write.lock().await;
            write.write_all(&bytes).await?;
            write.flush().await
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            if let Some(reply) = self.reply.take() {
                // Best effort: if this future is dropped mid-write, the reply is not retried.
                if self.send(reply).await.is_err() {
                    return None;
                }
            }
            match self.read_line().await {
                Ok(true) => {}
                Ok(false) => return None,
                Err(error) => {
                    tracing::warn!(%error, "cannot read from the client");
                    return None;
                }
            }
            if let Some(message) = self.take_line() {
                return Some(message);
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.write.lock().await.shutdown().await
    }
}
