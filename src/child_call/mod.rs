//! One call of one child's tool, whichever way the agent named it (`use_tool`'s identifier or a
//! flat `server:tool` name): start the server if it is not running, resolve the name (alias or
//! canonical), send the call with its progress, cancellation and task, and turn a failure into
//! toolshelf's error or the child's own. What comes back is a `CallAnswer`, written to the
//! agent by whichever path took the request.

mod confirm;
mod i_json;
mod message_size;

use std::time::Instant;

use rmcp::model::{CallToolResult, ContentBlock, ErrorData, ResultType};
use serde_json::value::RawValue;
use tokio_util::sync::CancellationToken;

use crate::{
    children::{CallError, CallRoute, ProgressTarget, ToolResultJson, child_error},
    error::{DownstreamKind, ToolError},
    jsonrpc::call_meta::ForwardedMeta,
    jsonrpc::envelope::{self, AgentId},
    jsonrpc::line_writer::Line,
    metrics::CallEnd,
    tasks::TaskRequest,
    toolboxes::{ServerSlot, Toolboxes},
};

/// How many times a call retries when the child it took was retired (idle) under it.
const RETRIES: usize = 3;

/// A child's JSON-RPC error that asks the client to send its user to a URL first (2025-11-25,
/// URL-mode elicitation); its `data` holds the elicitations.
const URL_ELICITATION_REQUIRED: i32 = -32042;

/// Why a call gives no result.
pub(crate) enum CallFailure {
    /// toolshelf's own error (use_tool's error table).
    Tool(ToolError),
    /// A child's JSON-RPC error passed on as the child wrote it.
    Child(ErrorData),
}

impl From<ToolError> for CallFailure {
    fn from(error: ToolError) -> Self {
        Self::Tool(error)
    }
}

/// Which of a child's JSON-RPC errors reach the agent as they are; the rest become toolshelf's
/// error result, which names the tool, the server and the toolbox.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum ChildErrors {
    /// Only "URL elicitation required", which only the agent can act on (`use_tool`).
    UrlElicitation,
    /// Every one (flat mode, which forwards a child's errors unchanged).
    All,
}

/// The tool a call is for, as the agent named it.
pub(crate) struct Target<'a> {
    pub toolbox: &'a str,
    pub server: &'a str,
    pub slot: &'a ServerSlot,
    /// The tool's name or alias.
    pub name: &'a str,
}

/// What travels with a call besides its target.
pub(crate) struct CallParts<'a> {
    pub arguments: Option<&'a RawValue>,
    pub cancel: &'a CancellationToken,
    pub progress: Option<ProgressTarget>,
    pub meta: &'a ForwardedMeta,
    pub task: Option<TaskRequest<'a>>,
    pub child_errors: ChildErrors,
}

/// Whether a child can read `arguments` (I-JSON within the nesting limit); `call` refuses them
/// otherwise.
pub(crate) fn child_can_read(arguments: &RawValue) -> bool {
    i_json::check(arguments.get()).is_ok()
}

/// Calls `target` on its server, starting the server if it is not running.
pub(crate) async fn call(
    toolboxes: &Toolboxes,
    target: Target<'_>,
    parts: CallParts<'_>,
) -> Result<ToolResultJson, CallFailure> {
    let Target {
        toolbox,
        server,
        slot,
        name,
    } = target;
    let CallParts {
        arguments,
        cancel,
        mut progress,
        meta,
        task,
        child_errors,
    } = parts;
    // Only `serve --http` keeps metrics.
    let began = toolboxes.metrics().map(|_| Instant::now());
    let downstream = |kind: DownstreamKind, error: String| ToolError::Downstream {
        toolbox: toolbox.to_owned(),
        server: server.to_owned(),
        name: name.to_owned(),
        kind,
        error,
    };
    let forwarded = async {
        if let Some(arguments) = arguments {
            i_json::check(arguments.get())
                .map_err(|violation| ToolError::InvalidUseTool(vec![violation]))?;
        }
        let mut confirmed = false;
        for _ in 0..RETRIES {
            // A server that is not running (never started, crashed, idle) starts here.
            let child = slot.ensure().await.map_err(|reason| {
                downstream(
                    DownstreamKind::ServerUnavailable,
                    format!("the server is not available: {reason}"),
                )
            })?;
            let Some(canonical) = toolboxes.resolve(slot, name) else {
                return Err(CallFailure::Tool(ToolError::ToolUnknown {
                    known: toolboxes.names_of(slot),
                    toolbox: toolbox.to_owned(),
                    server: server.to_owned(),
                    name: name.to_owned(),
                }));
            };
            if !confirmed && let Some(rule) = toolboxes.confirmation(slot, &canonical) {
                let target = (toolbox, server, name);
                confirm::ask(toolboxes.agent(), target, &rule, cancel).await?;
                confirmed = true;
            }
            let _in_flight = child.begin_call();
            if !slot.is_current(&child) {
                continue; // retired for idleness just now: take the next one
            }
            tracing::debug!(toolbox = %toolbox, server = %server, tool = %canonical, called_as = %name, "forwarding call");
            let caller = CallRoute {
                agent: toolboxes.agent().clone(),
                progress: progress.take(),
            };
            let for_child = task.and_then(|task| task.ask.for_child(slot.catalog.requires_task(&canonical)));
            return match child
                .call(&canonical, arguments, cancel, caller, meta, for_child)
                .await
            {
                Ok(result) => {
                    slot.answered();
                    let result = match task {
                        Some(task) => task.tasks.created(toolbox, server, &child, result),
                        None => result,
                    };
                    message_size::check(result)
                        .map_err(|error| downstream(DownstreamKind::ResultTooLarge, error).into())
                }
                Err(error) => {
                    tracing::warn!(toolbox = %toolbox, server = %server, tool = %canonical, called_as = %name, %error, "call failed");
                    Err(match error {
                        CallError::Protocol {
                            code,
                            message,
                            data,
                        } if code == URL_ELICITATION_REQUIRED
                            || child_errors == ChildErrors::All =>
                        {
                            CallFailure::Child(child_error(code, message, data))
                        }
                        other => downstream(other.kind(), other.to_string()).into(),
                    })
                }
            };
        }
        Err(downstream(
            DownstreamKind::ServerUnavailable,
            "the server kept stopping before the call could be sent; try again".into(),
        )
        .into())
    }
    .await;
    if let (Some(metrics), Some(began)) = (toolboxes.metrics(), began) {
        let outcome = match &forwarded {
            Ok(result) if result.is_error() => CallEnd::ToolError,
            Ok(_) => CallEnd::Ok,
            Err(_) => CallEnd::Failed,
        };
        let caller = toolboxes.caller();
        metrics.call(caller, (toolbox, server), outcome, began.elapsed());
    }
    forwarded
}

/// What a call answers: the child's result as the child encoded it, toolshelf's own error
/// result, or a JSON-RPC error (the child's as it wrote it, or toolshelf's for a name it
/// cannot route).
pub(crate) enum CallAnswer {
    Forwarded(ToolResultJson),
    Failed(CallToolResult),
    Refused(ErrorData),
}

impl From<Result<ToolResultJson, CallFailure>> for CallAnswer {
    fn from(outcome: Result<ToolResultJson, CallFailure>) -> Self {
        match outcome {
            Ok(result) => CallAnswer::Forwarded(result),
            Err(CallFailure::Tool(error)) => CallAnswer::Failed(error.into_result()),
            Err(CallFailure::Child(error)) => CallAnswer::Refused(error),
        }
    }
}

impl CallAnswer {
    /// The answer as a typed value, for rmcp's request path (the direct path writes the
    /// child's bytes instead: `line`).
    pub(crate) fn into_result(self) -> Result<CallToolResult, ErrorData> {
        Ok(match self {
            CallAnswer::Forwarded(result) => {
                match serde_json::from_str::<CallToolResult>(result.json()) {
                    Ok(mut result) => {
                        // rmcp drops it again for sessions older than 2026-07-28.
                        result.result_type.get_or_insert(ResultType::COMPLETE);
                        result
                    }
                    Err(error) => CallToolResult::error(vec![ContentBlock::text(format!(
                        "The server's result could not be passed on: {error}. Call the tool again; if it keeps failing, the server's result does not follow the MCP schema."
                    ))]),
                }
            }
            CallAnswer::Failed(result) => result,
            CallAnswer::Refused(error) => return Err(error),
        })
    }

    /// The answer line to request `id`; the result with `resultType` only if
    /// `with_result_type` (the agent's session is on protocol 2026-07-28 or later).
    pub(crate) fn line(self, id: &AgentId, with_result_type: bool) -> serde_json::Result<Line> {
        match self {
            CallAnswer::Forwarded(result) => {
                result.answer_line(envelope::response_start(id), with_result_type)
            }
            CallAnswer::Failed(mut result) => {
                result.result_type = with_result_type.then_some(ResultType::COMPLETE);
                envelope::response_line(id, |out| serde_json::to_writer(out, &result))
                    .map(Line::from)
            }
            CallAnswer::Refused(error) => {
                envelope::error_data_line(Some(id), &error).map(Line::from)
            }
        }
    }
}
