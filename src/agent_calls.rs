//! `use_tool` calls served beside rmcp's request handling. rmcp runs every request through its
//! loop (a task per request, a channel for the response, a task to send it, the typed result
//! encoded again); for the request an agent sends over and over, the profile showed that to be
//! most of toolshelf's cost per call. Once the session is initialized, the agent transport hands
//! a `use_tool` call here instead: decoded straight from its line, run in a task of its own, and
//! answered with the child's result bytes as they came.
//!
//! It behaves as rmcp's path does: a call cancelled by `notifications/cancelled` gets no
//! response, and calls in flight when the input ends may still answer for a while (`drain`).

use std::{borrow::Cow, time::Duration};

use rmcp::model::ProtocolVersion;
use serde::Deserialize;
use serde_json::value::RawValue;
use tokio_util::task::TaskTracker;

use crate::{
    agent_message::{self, AgentId},
    agent_requests::{AgentRequests, InUse},
    call_meta::CallMeta,
    json_lines::LineWriter,
    meta_tools::{USE_TOOL, UseToolInput},
    server::Toolshelf,
};

/// The params of a `use_tool` call this path serves. Anything else (another field, another
/// tool) goes to rmcp.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UseToolParams<'a> {
    #[serde(borrow)]
    name: Cow<'a, str>,
    #[serde(borrow, default)]
    arguments: Option<&'a RawValue>,
    /// A request whose `_meta` has MCP's own keys (an inline protocol version, client info)
    /// takes rmcp's path, which checks them (`CallMeta::from_raw`).
    #[serde(rename = "_meta", borrow, default)]
    meta: Option<&'a RawValue>,
}

/// The `use_tool` calls in flight on this path.
pub(crate) struct AgentCalls {
    shelf: Toolshelf,
    out: LineWriter,
    requests: AgentRequests,
    tasks: TaskTracker,
    /// The session is on protocol 2026-07-28 or later: results carry `resultType`.
    with_result_type: bool,
}

impl AgentCalls {
    pub(crate) fn new(shelf: Toolshelf, out: LineWriter, requests: AgentRequests) -> Self {
        Self {
            shelf,
            out,
            requests,
            tasks: TaskTracker::new(),
            with_result_type: false,
        }
    }

    /// The protocol version the session agreed on in `initialize`.
    pub(crate) fn set_protocol(&mut self, version: &ProtocolVersion) {
        self.with_result_type = version.as_str() >= ProtocolVersion::V_2026_07_28.as_str();
    }

    /// Starts request `id` if `params` make it a `use_tool` call this path serves; `None` leaves
    /// it to rmcp.
    pub(crate) fn try_start(&self, id: &AgentId, params: &RawValue) -> Option<Result<(), InUse>> {
        let params = serde_json::from_str::<UseToolParams<'_>>(params.get()).ok()?;
        if params.name != USE_TOOL {
            return None;
        }
        let meta = match params.meta {
            Some(meta) => CallMeta::from_raw(meta)?,
            None => CallMeta::default(),
        };
        let ticket = match self.requests.begin_direct(id) {
            Ok(ticket) => ticket,
            Err(in_use) => return Some(Err(in_use)),
        };
        let input = match params.arguments {
            Some(arguments) => UseToolInput::from_raw(arguments),
            None => UseToolInput::from_object(Default::default()),
        };
        let shelf = self.shelf.clone();
        let out = self.out.clone();
        let requests = self.requests.clone();
        let with_result_type = self.with_result_type;
        let id = id.clone();
        let task = async move {
            let answer = shelf.use_tool(input, &ticket.cancel, meta).await;
            if !requests.finish_direct(&id, &ticket) {
                tracing::debug!(%id, "dropping the response to a cancelled call");
                return;
            }
            let line =
                agent_message::response_line(&id, |out| answer.encode_into(out, with_result_type));
            match line {
                Ok(line) => {
                    if let Err(error) = out.send(line).await {
                        tracing::debug!(%id, %error, "the response could not be sent");
                    }
                }
                Err(error) => tracing::error!(%id, %error, "the response could not be encoded"),
            }
        };
        self.tasks.spawn(task);
        Some(Ok(()))
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
