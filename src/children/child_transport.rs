//! Newline-delimited JSON-RPC with one child, in place of rmcp's stdio transport, for two reasons:
//!
//! - **Size.** rmcp's codec silently drops a line over its limit, leaving the call to wait for its
//!   timeout. Here a message over `CHILD_MESSAGE_LIMIT` ends the connection at once and says so
//!   (`oversized`), so calls in flight fail immediately with a reason that names the limit.
//! - **Speed.** rmcp decodes every response as an untagged union of all result types, trying each
//!   in turn; a tool result is found after a dozen failed attempts, which was a third of
//!   toolshelf's CPU per call. This transport remembers which requests it sent were `tools/call`
//!   and decodes their responses straight as `CallToolResult`, falling back to rmcp's decoding
//!   for everything else (and for a response that is not a plain tool result).

use std::{
    collections::HashSet,
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, Ordering},
    },
};

use rmcp::{
    RoleClient,
    model::{
        CallToolResult, ClientJsonRpcMessage, ClientRequest, RequestId, ServerJsonRpcMessage,
        ServerResult,
    },
    service::{RxJsonRpcMessage, TxJsonRpcMessage},
    transport::Transport,
};
use serde::Deserialize;
use serde_json::value::RawValue;
use tokio::io::{AsyncRead, AsyncWrite};

use crate::json_lines::{self, Line, LineReader};

/// The largest message toolshelf reads from a child.
pub(crate) const CHILD_MESSAGE_LIMIT: usize = 64 * 1024 * 1024;

/// Ids of `tools/call` requests sent to a child and not yet answered. The caller removes an id
/// whose call ended without an answer (timeout, cancellation), so the set stays small.
pub(crate) type PendingToolCalls = Arc<Mutex<HashSet<RequestId>>>;

/// Line transport over a child's stdout (read) and stdin (write).
pub(crate) struct ChildTransport<R, W> {
    lines: LineReader<R>,
    write: Arc<tokio::sync::Mutex<Option<W>>>,
    tool_calls: PendingToolCalls,
    oversized: Arc<AtomicBool>,
}

/// Just enough of a message to route it: its id and, undecoded, its result.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(default)]
    id: Option<RequestId>,
    #[serde(borrow, default)]
    result: Option<&'a RawValue>,
    #[serde(default)]
    method: Option<&'a str>,
}

impl<R, W> ChildTransport<R, W>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    pub(crate) fn new(
        read: R,
        write: W,
        oversized: Arc<AtomicBool>,
        tool_calls: PendingToolCalls,
    ) -> Self {
        Self {
            lines: LineReader::new(read, CHILD_MESSAGE_LIMIT),
            write: Arc::new(tokio::sync::Mutex::new(Some(write))),
            tool_calls,
            oversized,
        }
    }

    fn tool_calls(&self) -> std::sync::MutexGuard<'_, HashSet<RequestId>> {
        self.tool_calls
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }

    /// Decodes one line; `None` for a line that is not a message (logged).
    fn decode(&self, text: &[u8]) -> Option<RxJsonRpcMessage<RoleClient>> {
        if let Ok(envelope) = serde_json::from_slice::<Envelope<'_>>(text)
            && envelope.method.is_none()
            && let (Some(id), Some(result)) = (envelope.id, envelope.result)
            && self.tool_calls().remove(&id)
            && let Ok(result) = serde_json::from_str::<CallToolResult>(result.get())
        {
            return Some(ServerJsonRpcMessage::response(
                ServerResult::CallToolResult(result),
                id,
            ));
        }
        match serde_json::from_slice::<RxJsonRpcMessage<RoleClient>>(text) {
            Ok(message) => Some(message),
            Err(error) => {
                tracing::debug!(%error, "ignoring a line from the server that is not a message");
                None
            }
        }
    }
}

impl<R, W> Transport<RoleClient> for ChildTransport<R, W>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        if let ClientJsonRpcMessage::Request(request) = &item
            && matches!(request.request, ClientRequest::CallToolRequest(_))
        {
            self.tool_calls().insert(request.id.clone());
        }
        let write = self.write.clone();
        async move {
            let mut write = write.lock().await;
            let Some(write) = write.as_mut() else {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::BrokenPipe,
                    "the connection to the server is closed",
                ));
            };
            json_lines::write(write, &item).await
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            match self.lines.next(true).await {
                Ok(Line::Complete) => {}
                Ok(Line::End) => return None,
                Ok(Line::TooLong) => {
                    self.oversized.store(true, Ordering::Release);
                    tracing::warn!(
                        limit = CHILD_MESSAGE_LIMIT,
                        "a message from the server exceeded the size limit; closing its connection"
                    );
                    return None;
                }
                Err(error) => {
                    tracing::warn!(%error, "cannot read from the server");
                    return None;
                }
            }
            let text = self.lines.text();
            if text.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            if let Some(message) = self.decode(text) {
                return Some(message);
            }
        }
    }

    /// Closes the child's stdin, which asks a stdio server to exit.
    async fn close(&mut self) -> Result<(), Self::Error> {
        drop(self.write.lock().await.take());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::{CallToolRequest, CallToolRequestParams, ClientJsonRpcMessage};
    use serde_json::json;
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};

    use super::*;

    #[tokio::test]
    async fn tool_results_are_decoded_directly_and_other_messages_as_rmcp_does() {
        let (child_out, ours_in) = tokio::io::duplex(1 << 16);
        let (ours_out, child_in) = tokio::io::duplex(1 << 16);
        let pending = PendingToolCalls::default();
        let mut transport = ChildTransport::new(ours_in, ours_out, Arc::default(), pending.clone());
        let call = CallToolRequest::new(CallToolRequestParams::new("echo"));
        let request = ClientJsonRpcMessage::request(
            ClientRequest::CallToolRequest(call),
            RequestId::Number(7),
        );
        transport.send(request).await.expect("send");
        let mut sent = tokio::io::BufReader::new(child_in).lines();
        let line = sent.next_line().await.expect("read").expect("a line");
        let sent: serde_json::Value = serde_json::from_str(&line).expect("JSON");
        assert_eq!(sent["method"], json!("tools/call"));
        assert!(
            pending
                .lock()
                .expect("lock")
                .contains(&RequestId::Number(7))
        );

        let mut child = child_out;
        let answers = [
            json!({"jsonrpc": "2.0", "id": 7, "result": {"content": [{"type": "text", "text": "hi"}], "_meta": {"k": 1}}}),
            json!({"jsonrpc": "2.0", "id": 8, "result": {}}),
            json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}),
        ];
        for answer in answers {
            child
                .write_all(format!("not json\n{answer}\n").as_bytes())
                .await
                .expect("write");
        }
        let Some(ServerJsonRpcMessage::Response(response)) = transport.receive().await else {
            panic!("expected the tool result");
        };
        let ServerResult::CallToolResult(result) = response.result else {
            panic!("expected a CallToolResult");
        };
        assert_eq!(
            serde_json::to_value(&result).ok(),
            Some(json!({"content": [{"type": "text", "text": "hi"}], "_meta": {"k": 1}}))
        );
        assert!(pending.lock().expect("lock").is_empty());
        // An id that was not a tool call takes rmcp's decoding.
        assert!(matches!(
            transport.receive().await,
            Some(ServerJsonRpcMessage::Response(_))
        ));
        assert!(matches!(
            transport.receive().await,
            Some(ServerJsonRpcMessage::Notification(_))
        ));
    }
}
