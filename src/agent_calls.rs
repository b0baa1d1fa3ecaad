//! `use_tool` calls (and flat mode's calls of children's tools) served beside rmcp's request
//! handling. rmcp runs every request through its
//! loop (a task per request, a channel for the response, a task to send it, the typed result
//! encoded again); for the request an agent sends over and over, the profile showed that to be
//! most of toolshelf's cost per call. Once the session is initialized, the agent transport hands
//! a `use_tool` call here instead: decoded straight from its line, run in a task of its own, and
//! answered with the child's result bytes as they came.
//!
//! It behaves as rmcp's path does: a call cancelled by `notifications/cancelled` gets no
//! response, and calls in flight when the input ends may still answer for a while (`drain`).

use std::{borrow::Cow, future::Future, time::Duration};

use rmcp::model::ProtocolVersion;
use serde::Deserialize;
use serde_json::value::RawValue;
use tokio_util::{sync::CancellationToken, task::TaskTracker};

use crate::{
    agent_message::{self, AgentId},
    agent_requests::{AgentRequests, DirectTicket, InUse},
    agent_tasks::{AgentTasks, TaskAsk},
    call_meta::CallMeta,
    children::ProgressOut,
    forward,
    json_lines::LineWriter,
    meta_tools::UseToolInput,
    server::{ChildCall, Toolshelf},
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
    /// The agent's request to run the call as a task (2025-11-25).
    #[serde(borrow, default)]
    task: Option<&'a RawValue>,
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
    protocol: Protocol,
}

/// What of the session's protocol version the direct path needs to know.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Protocol {
    /// Before 2025-11-25: no tasks.
    Early,
    /// 2025-11-25: tasks are requested in `params.task` and managed with `tasks/…` requests.
    Tasks,
    /// 2026-07-28 or later: results carry `resultType`; tasks are an extension rmcp serves.
    ResultType,
}

impl Protocol {
    pub(crate) fn of(version: &ProtocolVersion) -> Self {
        let version = version.as_str();
        if version >= ProtocolVersion::V_2026_07_28.as_str() {
            Protocol::ResultType
        } else if version >= ProtocolVersion::V_2025_11_25.as_str() {
            Protocol::Tasks
        } else {
            Protocol::Early
        }
    }
}

/// A call of a child's tool read straight from a `tools/call` request's params, the same for
/// both transports that serve it past rmcp (stdio's `AgentCalls`, HTTP's gate).
pub(crate) struct DirectCall {
    call: ChildCall,
    meta: CallMeta,
    /// The agent's request to run the call as a task, as written.
    task: Option<Box<RawValue>>,
    protocol: Protocol,
}

impl DirectCall {
    /// The call `params` ask of `shelf` in a session on `protocol`; `None` leaves the request to
    /// rmcp (another tool, another field, MCP's own `_meta` keys).
    pub(crate) fn read(shelf: &Toolshelf, params: &RawValue, protocol: Protocol) -> Option<Self> {
        let params = serde_json::from_str::<UseToolParams<'_>>(params.get()).ok()?;
        if !shelf.calls_a_child(&params.name) {
            return None;
        }
        let meta = match params.meta {
            Some(meta) => CallMeta::from_raw(meta)?,
            None => CallMeta::default(),
        };
        let call = if shelf.is_flat() {
            // The name is a child's tool, the arguments are its own.
            ChildCall::Flat {
                name: params.name.into_owned(),
                arguments: params.arguments.map(RawValue::to_owned),
            }
        } else {
            ChildCall::UseTool(match params.arguments {
                Some(arguments) => UseToolInput::from_raw(arguments),
                None => UseToolInput::from_object(Default::default()),
            })
        };
        Some(Self {
            call,
            meta,
            task: params.task.map(RawValue::to_owned),
            protocol,
        })
    }

    /// The call asks for progress notifications or to run as a task: both need a stream back
    /// to the agent beside the answer.
    pub(crate) fn needs_a_stream(&self) -> bool {
        self.meta.progress.is_some() || self.task.is_some()
    }

    /// The call's arguments are refused before anything is sent (`forward::child_can_read`), so
    /// its answer comes at once and needs no stream, whatever the call asked for.
    pub(crate) fn is_refused_at_once(&self) -> bool {
        self.call
            .arguments()
            .is_some_and(|arguments| !forward::child_can_read(arguments))
    }

    /// The tool the call names, as the agent wrote it, for a log.
    pub(crate) fn tool_named(&self) -> String {
        self.call.tool_named()
    }

    /// Runs the call and gives the line that answers request `id`.
    pub(crate) async fn answer(
        self,
        shelf: &Toolshelf,
        id: &AgentId,
        cancel: &CancellationToken,
        progress: Option<ProgressOut>,
    ) -> serde_json::Result<Vec<u8>> {
        let task = self
            .task
            .as_deref()
            .filter(|_| self.protocol == Protocol::Tasks)
            .map(TaskAsk::Given);
        // Boxed: both paths spawn this in a task of its own, and tokio moves a task's future
        // several times on its way in and its output on its way out; unboxed, the whole call's
        // state machine was copied each time (callgrind of `serve --http`: ~6,000 instructions
        // of memcpy per call).
        let answer = Box::pin(shelf.call(self.call, cancel, self.meta, task, progress)).await;
        answer.line(id, self.protocol == Protocol::ResultType)
    }
}

impl AgentCalls {
    pub(crate) fn new(shelf: Toolshelf, out: LineWriter, requests: AgentRequests) -> Self {
        Self {
            shelf,
            out,
            requests,
            tasks: TaskTracker::new(),
            protocol: Protocol::Early,
        }
    }

    /// The protocol version the session agreed on in `initialize`.
    pub(crate) fn set_protocol(&mut self, version: &ProtocolVersion) {
        self.protocol = Protocol::of(version);
    }

    /// The session is on 2025-11-25: its initialize and tools/list answers declare tasks.
    pub(crate) fn declares_tasks(&self) -> bool {
        self.protocol == Protocol::Tasks
    }

    /// Starts request `id` if `params` make it a `use_tool` call this path serves; `None` leaves
    /// it to rmcp.
    pub(crate) fn try_start(&self, id: &AgentId, params: &RawValue) -> Option<Result<(), InUse>> {
        let call = DirectCall::read(&self.shelf, params, self.protocol)?;
        let ticket = match self.requests.begin_direct(id) {
            Ok(ticket) => ticket,
            Err(in_use) => return Some(Err(in_use)),
        };
        let shelf = self.shelf.clone();
        let progress = Some(ProgressOut::Lines(self.out.clone()));
        self.spawn_answer(id, ticket, move |id, cancel| async move {
            call.answer(&shelf, &id, &cancel, progress).await
        });
        Some(Ok(()))
    }

    /// Starts request `id`, a `tasks/…` request of an agent on 2025-11-25, if it is one;
    /// `None` leaves it to rmcp.
    pub(crate) fn try_start_task_request(
        &self,
        id: &AgentId,
        method: &str,
        params: Option<&RawValue>,
    ) -> Option<Result<(), InUse>> {
        if self.protocol != Protocol::Tasks || !AgentTasks::serves(method) {
            return None;
        }
        let ticket = match self.requests.begin_direct(id) {
            Ok(ticket) => ticket,
            Err(in_use) => return Some(Err(in_use)),
        };
        let shelf = self.shelf.clone();
        let method = method.to_owned();
        let params = params.map(RawValue::to_owned);
        self.spawn_answer(id, ticket, move |id, cancel| async move {
            match shelf
                .task_request(&method, params.as_deref(), &cancel)
                .await
            {
                Ok(result) => agent_message::response_line(&id, |out| {
                    out.extend_from_slice(result.get().as_bytes());
                    Ok(())
                }),
                Err(error) => agent_message::error_data_line(Some(&id), &error),
            }
        });
        Some(Ok(()))
    }

    /// Runs `work` for request `id` in a task of its own and writes the line it answers with,
    /// unless the agent cancelled the request meanwhile.
    fn spawn_answer<F, Fut>(&self, id: &AgentId, ticket: DirectTicket, work: F)
    where
        F: FnOnce(AgentId, CancellationToken) -> Fut,
        Fut: Future<Output = serde_json::Result<Vec<u8>>> + Send + 'static,
    {
        let out = self.out.clone();
        let requests = self.requests.clone();
        let id = id.clone();
        let line = work(id.clone(), ticket.cancel.clone());
        self.tasks.spawn(async move {
            let line = line.await;
            if !requests.finish_direct(&id, &ticket) {
                tracing::debug!(%id, "dropping the response to a cancelled request");
                return;
            }
            match line {
                Ok(line) => {
                    if let Err(error) = out.send(line).await {
                        tracing::debug!(%id, %error, "the response could not be sent");
                    }
                }
                Err(error) => tracing::error!(%id, %error, "the response could not be encoded"),
            }
        });
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
