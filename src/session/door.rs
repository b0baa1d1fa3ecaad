//! The door past rmcp: requests a session serves itself, the same for both transports. rmcp
//! runs every request through its loop (a task per request, a channel for the response, a task
//! to send it, the typed result encoded again); for the request an agent sends over and over,
//! the profile showed that to be most of toolshelf's cost per call. Through the door a
//! `use_tool` call (or flat mode's call of a child's tool) is decoded straight from its params,
//! run in a task of its own, and answered with the child's result bytes as they came; a
//! 2025-11-25 session's `tasks/…` requests, which rmcp does not know, are answered here too.
//!
//! It behaves as rmcp's path does: the transport takes a request (`take`), runs the answer it
//! is given, and writes it back unless the agent cancelled the request meanwhile (`cancel`);
//! such a request gets no response.

use std::{borrow::Cow, sync::Arc};

use futures::future::BoxFuture;
use serde::Deserialize;
use serde_json::value::RawValue;
use tokio_util::sync::CancellationToken;

use super::{
    calls::AgentCall,
    in_flight::{Cancelled, InUse},
    state::SessionState,
};
use crate::{
    child_call,
    children::{PeerProgress, ProgressOut},
    jsonrpc::{
        call_meta::CallMeta,
        envelope::{self, AgentId, Incoming},
        line_writer::Line,
    },
    meta_tools::{USE_TOOL, UseToolInput, use_tool_line},
    revision::Protocol,
    tasks::{SessionTasks, TaskAsk},
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

/// A request the door serves.
pub(crate) enum Request {
    Call(DirectCall),
    /// A 2025-11-25 `tasks/…` request, its params as written.
    Task {
        method: String,
        params: Option<Box<RawValue>>,
    },
}

impl Request {
    /// The request asks for progress notifications, which need a stream back to the agent
    /// beside the answer, unless it is refused at once. A task-augmented call (2025-11-25) does
    /// not: its answer comes as soon as the task exists, and its progress and status notices
    /// go to the session (`progress_to_session`), since only the door serves such a call.
    pub(crate) fn needs_a_stream(&self) -> bool {
        match self {
            Request::Call(call) => {
                call.meta.progress.is_some() && !call.is_refused_at_once() && call.task.is_none()
            }
            Request::Task { .. } => false,
        }
    }

    /// The tool a call names, as the agent wrote it, for a log.
    pub(crate) fn tool_named(&self) -> Option<String> {
        match self {
            Request::Call(call) => Some(call.tool_named()),
            Request::Task { .. } => None,
        }
    }
}

/// The answer to a request the door took: its line, or `None` when the agent cancelled it.
pub(crate) type PendingAnswer = BoxFuture<'static, Option<serde_json::Result<Line>>>;

/// Where a message from the agent goes: to the door, with the request it serves, or to the
/// transport, read the general way (`jsonrpc::envelope`), for rmcp or its own handling.
pub(crate) enum Routing<'a> {
    Door(AgentId, Request),
    Other(Incoming<'a>),
}

impl SessionState {
    /// Where `message` (a stdio line, an HTTP body) goes: the one question both transports ask
    /// of every message once the session is initialized. A plain `use_tool` line is read in one
    /// pass (`door_line`); any other is read the general way, and a request the door serves
    /// (`door_request`) goes to it, which gives a plain line the same outcome.
    pub(crate) fn route<'a>(&self, message: &'a [u8]) -> Routing<'a> {
        if let Some((id, request)) = self.door_line(message) {
            return Routing::Door(id, request);
        }
        match envelope::read(message) {
            Incoming::Request { id, method, params } => match self.door_request(&method, params) {
                Some(request) => Routing::Door(id, request),
                None => Routing::Other(Incoming::Request { id, method, params }),
            },
            other => Routing::Other(other),
        }
    }

    /// The request the door serves, if `method` with `params` is one (the session must have
    /// agreed on a protocol version); `None` leaves it to rmcp.
    fn door_request(&self, method: &str, params: Option<&RawValue>) -> Option<Request> {
        let protocol = self.revision()?;
        if method == "tools/call" {
            return DirectCall::read(self, params?, protocol).map(Request::Call);
        }
        (protocol == Protocol::Tasks && SessionTasks::serves(method)).then(|| Request::Task {
            method: method.to_owned(),
            params: params.map(RawValue::to_owned),
        })
    }

    /// The id and the request of `line` when it is a plain `use_tool` call, read in one pass
    /// (`meta_tools::use_tool_line`); `None`: read the line the general way. A call that asks
    /// for progress is one too: a transport that cannot stream it back checks
    /// `Request::needs_a_stream`.
    fn door_line(&self, line: &[u8]) -> Option<(AgentId, Request)> {
        if self.is_flat() {
            return None;
        }
        let protocol = self.revision()?;
        let plain = use_tool_line::read(line)?;
        let call = DirectCall {
            call: AgentCall::UseTool(plain.input),
            meta: CallMeta {
                progress: plain.progress,
                ..CallMeta::default()
            },
            task: None,
            protocol,
        };
        Some((plain.id, Request::Call(call)))
    }

    /// Takes `request` under the agent's `id`: what answers it, or `InUse` when a request with
    /// that id is in flight. `progress` is where a call's progress goes, if it asked for any.
    pub(crate) fn take(
        self: &Arc<Self>,
        id: &AgentId,
        request: Request,
        progress: Option<ProgressOut>,
    ) -> Result<PendingAnswer, InUse> {
        let in_flight = match &request {
            Request::Call(_) => match self.enter_call() {
                Ok(in_flight) => in_flight,
                Err(refused) => {
                    let line = envelope::error_data_line(Some(id), &refused);
                    return Ok(Box::pin(std::future::ready(Some(line.map(Line::from)))));
                }
            },
            Request::Task { .. } => None,
        };
        let ticket = self.requests().begin_direct(id)?;
        let state = self.clone();
        let id = id.clone();
        // Boxed: both transports spawn this in a task of its own, and tokio moves a task's
        // future several times on its way in and its output on its way out; unboxed, the whole
        // call's state machine was copied each time (callgrind of `serve --http` showed the
        // memcpy).
        Ok(Box::pin(async move {
            let _in_flight = in_flight;
            let cancel = &ticket.cancel;
            let line = match request {
                Request::Call(call) => call.answer(&state, &id, cancel, progress).await,
                Request::Task { method, params } => {
                    match state.task_request(&method, params.as_deref(), cancel).await {
                        Ok(result) => envelope::response_line(&id, |out| {
                            out.extend_from_slice(result.get().as_bytes());
                            Ok(())
                        }),
                        Err(error) => envelope::error_data_line(Some(&id), &error),
                    }
                    .map(Line::from)
                }
            };
            state.requests().finish_direct(&id, &ticket).then_some(line)
        }))
    }

    /// Where a call's progress goes when the request that asked for it has no stream of its
    /// own: the session's rmcp peer, if the call asked for progress.
    pub(crate) fn progress_to_session(&self, request: &Request) -> Option<ProgressOut> {
        let Request::Call(call) = request else {
            return None;
        };
        call.meta.progress.as_ref()?;
        let peer = self.agent.peer()?.clone();
        Some(ProgressOut::Peer(PeerProgress::start(peer)))
    }

    /// The agent cancelled its request `id`: a request the door took stops and gets no answer.
    pub(crate) fn cancel(&self, id: &AgentId) -> Cancelled {
        self.requests().cancel(id)
    }

    /// Answers a `tasks/get`, `tasks/result`, `tasks/cancel` or `tasks/list` of a 2025-11-25
    /// agent for a task started through `use_tool`.
    async fn task_request(
        &self,
        method: &str,
        params: Option<&RawValue>,
        cancel: &CancellationToken,
    ) -> Result<Box<RawValue>, rmcp::ErrorData> {
        self.agent.tasks().serve(method, params, cancel).await
    }
}

/// The call a `tools/call`'s `params` make, its `_meta` and the agent's request to run it as a
/// task, read the general way; `None` for another tool (in a session `flat` or not), another
/// field, or MCP's own `_meta` keys.
fn read_call(
    params: &RawValue,
    flat: bool,
) -> Option<(AgentCall, CallMeta, Option<Box<RawValue>>)> {
    let params = serde_json::from_str::<UseToolParams<'_>>(params.get()).ok()?;
    if !flat && params.name != USE_TOOL {
        return None;
    }
    let meta = match params.meta {
        Some(meta) => CallMeta::from_raw(meta)?,
        None => CallMeta::default(),
    };
    let call = if flat {
        // The name is a child's tool, the arguments are its own.
        AgentCall::Flat {
            name: params.name.into_owned(),
            arguments: params.arguments.map(RawValue::to_owned),
        }
    } else {
        AgentCall::UseTool(match params.arguments {
            Some(arguments) => UseToolInput::from_raw(arguments),
            None => UseToolInput::empty(),
        })
    };
    Some((call, meta, params.task.map(RawValue::to_owned)))
}

/// A call of a child's tool read straight from a `tools/call` request's params.
pub(crate) struct DirectCall {
    call: AgentCall,
    meta: CallMeta,
    /// The agent's request to run the call as a task, as written.
    task: Option<Box<RawValue>>,
    protocol: Protocol,
}

impl DirectCall {
    /// The call `params` ask of `state`'s session on `protocol`; `None` leaves the request to
    /// rmcp (another tool, another field, MCP's own `_meta` keys).
    fn read(state: &SessionState, params: &RawValue, protocol: Protocol) -> Option<Self> {
        let (call, meta, task) = read_call(params, state.is_flat())?;
        Some(Self {
            call,
            meta,
            task,
            protocol,
        })
    }

    /// The call's arguments are refused before anything is sent (`child_call::child_can_read`), so
    /// its answer comes at once and needs no stream, whatever the call asked for.
    fn is_refused_at_once(&self) -> bool {
        self.call
            .arguments()
            .is_some_and(|arguments| !child_call::child_can_read(arguments))
    }

    /// The tool the call names, as the agent wrote it, for a log.
    pub(crate) fn tool_named(&self) -> String {
        self.call.tool_named()
    }

    /// Runs the call and gives the line that answers request `id`.
    async fn answer(
        self,
        state: &SessionState,
        id: &AgentId,
        cancel: &CancellationToken,
        progress: Option<ProgressOut>,
    ) -> serde_json::Result<Line> {
        let task = self
            .task
            .as_deref()
            .filter(|_| self.protocol == Protocol::Tasks)
            .map(TaskAsk::Given);
        let answer = state
            .call(self.call, cancel, self.meta, task, progress)
            .await;
        answer.line(id, self.protocol == Protocol::ResultType)
    }
}

#[cfg(test)]
#[path = "door_tests.rs"]
mod tests;
