//! `use_tool` calls served beside rmcp's request handling. rmcp runs every request through its
//! loop (a task per request, a channel for the response, a task to send it, the typed result
//! encoded again); for the request an agent sends over and over, the profile showed that to be
//! most of toolshelf's cost per call. Once the session is initialized, the agent transport hands
//! a `use_tool` call here instead: decoded straight from its line, run in a task of its own, and
//! answered with the child's result bytes as they came.
//!
//! It behaves as rmcp's path does: a call cancelled by `notifications/cancelled` gets no
//! response, and calls in flight when the input ends may still answer for a while (`drain`).

use std::{
    borrow::Cow,
    collections::HashMap,
    sync::{Arc, Mutex, MutexGuard},
    time::Duration,
};

use rmcp::model::{JsonObject, ProgressToken, ProtocolVersion, RequestId};
use serde::Deserialize;
use tokio_util::{sync::CancellationToken, task::TaskTracker};

use crate::{
    json_lines::LineWriter,
    meta_tools::{USE_TOOL, UseToolAnswer},
    server::Toolshelf,
};

/// A `use_tool` request, decoded in one pass from its line.
#[derive(Deserialize)]
struct UseToolRequest<'a> {
    jsonrpc: &'a str,
    id: RequestId,
    method: &'a str,
    #[serde(borrow)]
    params: UseToolParams<'a>,
}

/// The params of a `use_tool` call this path serves. Anything else (another field, another
/// tool) goes to rmcp.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UseToolParams<'a> {
    #[serde(borrow)]
    name: Cow<'a, str>,
    #[serde(default)]
    arguments: Option<JsonObject>,
    #[serde(rename = "_meta", default)]
    meta: Option<RequestMeta>,
}

/// Only a progress token: a request with other metadata (an inline protocol version, client
/// info) takes rmcp's path, which checks it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RequestMeta {
    #[serde(rename = "progressToken", default)]
    progress_token: Option<ProgressToken>,
}

type Running = Arc<Mutex<HashMap<RequestId, CancellationToken>>>;

/// The `use_tool` calls in flight on this path.
pub(crate) struct AgentCalls {
    shelf: Toolshelf,
    out: LineWriter,
    running: Running,
    tasks: TaskTracker,
    /// The session is on protocol 2026-07-28 or later: results carry `resultType`.
    with_result_type: bool,
}

impl AgentCalls {
    pub(crate) fn new(shelf: Toolshelf, out: LineWriter) -> Self {
        Self {
            shelf,
            out,
            running: Running::default(),
            tasks: TaskTracker::new(),
            with_result_type: false,
        }
    }

    /// The protocol version the session agreed on in `initialize`.
    pub(crate) fn set_protocol(&mut self, version: &ProtocolVersion) {
        self.with_result_type = version.as_str() >= ProtocolVersion::V_2026_07_28.as_str();
    }

    /// Starts the request on `line` if it is a `use_tool` call this path serves; `false` leaves
    /// the line to rmcp.
    pub(crate) fn try_start(&self, line: &[u8]) -> bool {
        let Ok(UseToolRequest {
            jsonrpc: "2.0",
            id,
            method: "tools/call",
            params,
        }) = serde_json::from_slice::<UseToolRequest<'_>>(line)
        else {
            return false;
        };
        if params.name != USE_TOOL {
            return false;
        }
        let progress = params.meta.and_then(|meta| meta.progress_token);
        let arguments = params.arguments;
        let cancel = CancellationToken::new();
        running(&self.running).insert(id.clone(), cancel.clone());
        let shelf = self.shelf.clone();
        let out = self.out.clone();
        let calls = self.running.clone();
        let with_result_type = self.with_result_type;
        let task = async move {
            let answer = shelf.use_tool(arguments, &cancel, progress).await;
            let wanted = running(&calls).remove(&id).is_some() && !cancel.is_cancelled();
            if !wanted {
                tracing::debug!(%id, "dropping the response to a cancelled call");
                return;
            }
            match response_line(&id, answer, with_result_type) {
                Ok(line) => {
                    if let Err(error) = out.send(line).await {
                        tracing::debug!(%id, %error, "the response could not be sent");
                    }
                }
                Err(error) => tracing::error!(%id, %error, "the response could not be encoded"),
            }
        };
        self.tasks.spawn(task);
        true
    }

    /// Cancels call `id` if it runs here (the agent sent `notifications/cancelled`).
    pub(crate) fn cancel(&self, id: &RequestId) {
        if let Some(cancel) = running(&self.running).remove(id) {
            tracing::debug!(%id, "call cancelled by the client");
            cancel.cancel();
        }
    }

    /// Waits up to `limit` for the calls in flight to answer; no call starts afterwards.
    pub(crate) async fn drain(&self, limit: Duration) {
        self.tasks.close();
        if tokio::time::timeout(limit, self.tasks.wait())
            .await
            .is_err()
        {
            tracing::warn!("calls still in flight after {limit:?} were not answered");
        }
    }
}

fn running(calls: &Running) -> MutexGuard<'_, HashMap<RequestId, CancellationToken>> {
    calls.lock().unwrap_or_else(|poison| poison.into_inner())
}

/// `{"jsonrpc":"2.0","id":…,"result":…}` and a newline, the result written as it came.
fn response_line(
    id: &RequestId,
    answer: UseToolAnswer,
    with_result_type: bool,
) -> serde_json::Result<Vec<u8>> {
    let mut line = Vec::with_capacity(128);
    line.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    serde_json::to_writer(&mut line, id)?;
    line.extend_from_slice(br#","result":"#);
    answer.encode_into(&mut line, with_result_type)?;
    line.extend_from_slice(b"}\n");
    Ok(line)
}
