//! Newline-delimited JSON-RPC with one child, in place of rmcp's stdio transport, for two reasons:
//!
//! - **Size.** rmcp's codec silently drops a line over its limit, leaving the call to wait for its
//!   timeout. Here a message over `CHILD_MESSAGE_LIMIT` ends the connection at once and says so
//!   (`oversized`), so calls in flight fail immediately with a reason that names the limit.
//! - **Speed.** Responses to direct tool calls (`tool_calls`) and their progress are taken out of
//!   the stream here and handed to the waiting call undecoded; rmcp sees everything else
//!   (its own requests' responses, the child's other notifications and requests).

use std::{
    borrow::Cow,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
};

use rmcp::{
    RoleClient,
    model::{NumberOrString, RequestId},
    service::{RxJsonRpcMessage, TxJsonRpcMessage},
    transport::Transport,
};
use serde::Deserialize;
use serde_json::value::RawValue;
use tokio::io::AsyncRead;

use super::plain_answer;
use super::result_text::ResultText;
use super::tool_calls::{ChildAnswer, ChildProgress, FIRST_ID, ToolCalls};
use crate::jsonrpc::{
    line_reader::{LineRead, LineReader},
    line_writer::{self, LineWriter},
};

/// The largest message toolshelf reads from a child.
pub(crate) const CHILD_MESSAGE_LIMIT: usize = 64 * 1024 * 1024;

/// What a message over `CHILD_MESSAGE_LIMIT` is reported as, whatever carried it.
pub(crate) fn too_large() -> String {
    format!(
        "the server sent a message larger than {} MiB, the most toolshelf reads from a server",
        CHILD_MESSAGE_LIMIT / (1024 * 1024)
    )
}

/// The child's first line on stdout, set once it came: `Some(line)` when it was not a JSON-RPC
/// message. A program that is no MCP server (or one that prints a banner or logs to stdout)
/// is then told apart from a server that died.
pub(crate) type FirstLine = Arc<std::sync::OnceLock<Option<String>>>;

/// The start of a line that is not a message, as an error quotes it.
const QUOTED_CHARS: usize = 80;

/// What a start that failed should say of the child's first line, if it was not JSON-RPC.
pub(crate) fn not_json_rpc(first: &FirstLine) -> Option<String> {
    let line = first.get()?.as_ref()?;
    Some(format!(
        "its first line on stdout was not JSON-RPC: {line:?}; an MCP server over stdio writes only JSON-RPC messages to stdout: check that the command starts an MCP server (and not, e.g., its installer or a shell profile that prints), and that it logs to stderr"
    ))
}

/// Line transport over a child's stdout (read) and stdin (write, through `LineWriter`).
pub(crate) struct ChildTransport<R> {
    lines: LineReader<R>,
    write: LineWriter,
    calls: ToolCalls,
    oversized: Arc<AtomicBool>,
    first_line: FirstLine,
}

/// Just enough of a message to route it.
#[derive(Deserialize)]
struct RouteKeys<'a> {
    #[serde(default)]
    id: Option<RequestId>,
    #[serde(borrow, default)]
    method: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    result: Option<&'a RawValue>,
    #[serde(borrow, default)]
    error: Option<&'a RawValue>,
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct ErrorBody {
    code: i32,
    message: String,
    data: Option<Box<RawValue>>,
}

/// The id of a direct call, if `id` is one.
fn direct_id(id: &NumberOrString) -> Option<i64> {
    match id {
        NumberOrString::Number(number) if *number >= FIRST_ID => Some(*number),
        _ => None,
    }
}

impl<R: AsyncRead + Send + Unpin + 'static> ChildTransport<R> {
    pub(crate) fn new(
        read: R,
        write: LineWriter,
        calls: ToolCalls,
        oversized: Arc<AtomicBool>,
        first_line: FirstLine,
    ) -> Self {
        Self {
            lines: LineReader::new(read, CHILD_MESSAGE_LIMIT),
            write,
            calls,
            oversized,
            first_line,
        }
    }

    /// Keeps the first line's start if it is not a message (read twice, once per child).
    fn note_first(&self, text: &[u8]) {
        if self.first_line.get().is_some() {
            return;
        }
        let message = serde_json::from_slice::<RxJsonRpcMessage<RoleClient>>(text).is_ok();
        let quoted = (!message).then(|| {
            let line = String::from_utf8_lossy(text);
            let line = line.trim_end();
            match line.char_indices().nth(QUOTED_CHARS) {
                Some((end, _)) => format!("{}…", &line[..end]),
                None => line.to_owned(),
            }
        });
        let _ = self.first_line.set(quoted);
    }

    /// Handles a message that belongs to a direct call (its result copied); true when it did.
    fn take_direct(&self, envelope: &RouteKeys<'_>) -> bool {
        match (&envelope.method, &envelope.id) {
            (None, Some(id)) => {
                let Some(id) = direct_id(id) else {
                    return false;
                };
                let answer = match (envelope.result, envelope.error) {
                    (Some(result), None) => {
                        ChildAnswer::Result(ResultText::Copied(result.to_owned()))
                    }
                    (None, Some(error)) => match serde_json::from_str::<ErrorBody>(error.get()) {
                        Ok(error) => ChildAnswer::Error {
                            code: error.code,
                            message: error.message,
                            data: error.data,
                        },
                        Err(error) => ChildAnswer::Error {
                            code: -32603,
                            message: format!(
                                "the server sent an error that cannot be read: {error}"
                            ),
                            data: None,
                        },
                    },
                    _ => ChildAnswer::Error {
                        code: -32603,
                        message: "the server sent a response with neither a result nor an error"
                            .into(),
                        data: None,
                    },
                };
                self.calls.answer(id, answer);
                true
            }
            (Some(method), None) if method == "notifications/progress" => {
                let Some(params) = envelope.params else {
                    return false;
                };
                let Ok(progress) = serde_json::from_str::<ChildProgress<'_>>(params.get()) else {
                    return false;
                };
                let Some(id) = direct_id(&progress.token.0) else {
                    return false;
                };
                if self.calls.progress(id, &progress).is_none() {
                    tracing::debug!(id, "ignoring progress for a call that is not waiting");
                }
                true
            }
            _ => false,
        }
    }

    /// Decodes one line for rmcp; `None` for a line that is not a message (logged) or that a
    /// direct call took. The line is checked for UTF-8 once, whole, not string by string. A
    /// direct call's plain answer (`plain_answer`) is handed on in a copy of the whole line, in
    /// place of a copy of the result alone, so its answer is built in that copy; any other line
    /// is read by serde_json.
    fn decode(&self, text: &[u8]) -> Option<RxJsonRpcMessage<RoleClient>> {
        self.note_first(text);
        let Ok(line) = std::str::from_utf8(text) else {
            return for_rmcp(text);
        };
        if let Some((id, result)) = plain_answer::direct_result(line) {
            let mut copy = String::with_capacity(line.len() + 1);
            copy.push_str(line);
            copy.push('\n');
            let result = ResultText::InLine { line: copy, result };
            self.calls.answer(id, ChildAnswer::Result(result));
            return None;
        }
        if let Ok(envelope) = serde_json::from_str::<RouteKeys<'_>>(line)
            && self.take_direct(&envelope)
        {
            return None;
        }
        for_rmcp(text)
    }
}

/// A line for rmcp, decoded; `None` (logged) if it is not a message.
fn for_rmcp(text: &[u8]) -> Option<RxJsonRpcMessage<RoleClient>> {
    match serde_json::from_slice::<RxJsonRpcMessage<RoleClient>>(text) {
        Ok(message) => Some(message),
        Err(error) => {
            tracing::debug!(%error, "ignoring a line from the server that is not a message");
            None
        }
    }
}

impl<R> Drop for ChildTransport<R> {
    fn drop(&mut self) {
        self.calls.close();
    }
}

impl<R: AsyncRead + Send + Unpin + 'static> Transport<RoleClient> for ChildTransport<R> {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let write = self.write.clone();
        async move { write.send(line_writer::encode(&item)?).await }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            let ended = match self.lines.next(true).await {
                Ok(LineRead::Complete) => false,
                Ok(LineRead::End) => true,
                Ok(LineRead::TooLong) => {
                    self.oversized.store(true, Ordering::Release);
                    tracing::warn!(
                        limit = CHILD_MESSAGE_LIMIT,
                        "a message from the server exceeded the size limit; closing its connection"
                    );
                    true
                }
                Err(error) => {
                    tracing::warn!(%error, "cannot read from the server");
                    true
                }
            };
            if ended {
                // Calls waiting fail now; rmcp's own requests fail when this returns `None`.
                self.calls.close();
                return None;
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
        self.write.close().await;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::ServerJsonRpcMessage;
    use serde_json::json;
    use tokio::io::AsyncWriteExt;

    use super::*;
    use crate::children::{
        progress_out::{CurrentToken, ProgressOut, ProgressTarget},
        request_lines::{CallRequest, request_line},
    };

    #[tokio::test]
    async fn direct_answers_are_taken_out_and_the_rest_goes_to_rmcp() {
        let (mut child, ours) = tokio::io::duplex(1 << 16);
        let (input, _child_in) = tokio::io::duplex(1 << 16);
        let (agent_out, _agent) = tokio::io::duplex(1 << 16);
        let calls = ToolCalls::default();
        let mut transport = ChildTransport::new(
            ours,
            LineWriter::spawn(input),
            calls.clone(),
            Arc::default(),
            FirstLine::default(),
        );
        let target = ProgressTarget {
            out: ProgressOut::Lines(LineWriter::spawn(agent_out)),
            token: CurrentToken::new(Some(rmcp::model::ProgressToken(NumberOrString::Number(1)))),
        };
        let mut ticket = calls.register(Some(target), None, None).expect("open");
        let meta = Default::default();
        let call = CallRequest {
            name: "echo",
            arguments: None,
            meta: &meta,
            task: None,
            hop: None,
            retry: None,
        };
        let line = request_line(ticket.id, call).expect("encode");
        let request: serde_json::Value = serde_json::from_slice(&line).expect("JSON");
        assert_eq!(
            request["params"]["_meta"]["progressToken"],
            json!(ticket.id)
        );

        let id = ticket.id;
        let lines = [
            "not json".to_owned(),
            json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": id, "progress": 1}}).to_string(),
            json!({"jsonrpc": "2.0", "id": id, "result": {"content": [], "_meta": {"k": 1}}}).to_string(),
            json!({"jsonrpc": "2.0", "id": 0, "result": {}}).to_string(),
            json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}).to_string(),
        ];
        for line in lines {
            child
                .write_all(format!("{line}\n").as_bytes())
                .await
                .expect("write");
        }
        // rmcp sees its own response and the notification, nothing of the direct call.
        assert!(matches!(
            transport.receive().await,
            Some(ServerJsonRpcMessage::Response(_))
        ));
        let Ok(ChildAnswer::Result(result)) = ticket.answer.try_recv() else {
            panic!("the direct call was answered first");
        };
        assert_eq!(result.get(), r#"{"content":[],"_meta":{"k":1}}"#);
        assert!(matches!(
            transport.receive().await,
            Some(ServerJsonRpcMessage::Notification(_))
        ));
        // The end of the stream fails every call still waiting.
        let mut waiting = calls.register(None, None, None).expect("open");
        drop(child);
        assert!(transport.receive().await.is_none());
        assert!(waiting.answer.try_recv().is_err());
        assert!(calls.register(None, None, None).is_none());
    }
}
