//! The errors the agent gets for `tasks/…` requests: a handle that is not a task, a child's
//! failure passed on with what toolshelf knows of it.

use super::{Method, Route};

use rmcp::model::ErrorData;

use crate::children::CallError;

/// A child's answer that the tasks extension cannot show the agent.
pub(super) fn not_a_task(method: Method, handle: &str) -> ErrorData {
    ErrorData::internal_error(
        format!(
            "the server's answer to {} for task '{handle}' is not what the MCP schema says (a task, or a result object); toolshelf cannot pass it on. Ask again with tasks/get; if it keeps failing, the server does not follow the schema.",
            method.name()
        ),
        None,
    )
}

/// A child's task (2025-11-25: `ttl`, `pollInterval`) as the tasks extension has it.
/// The child's failure as the agent's error: the child's own JSON-RPC error as it came, or
/// toolshelf's account of what went wrong on the way.
pub(super) fn failed(
    method: Method,
    handle: Option<&str>,
    route: &Route,
    error: CallError,
) -> ErrorData {
    match error.into_child_error() {
        Ok(error) => error,
        Err(other) => {
            let task = handle.map_or_else(String::new, |handle| format!(" for task '{handle}'"));
            ErrorData::internal_error(
                format!(
                    "{}{task} to server '{}' (toolbox '{}') failed: {other}. Ask again; if the server stopped, call use_tool again to start a new task.",
                    method.name(),
                    route.server,
                    route.toolbox
                ),
                None,
            )
        }
    }
}

pub(super) fn unreadable(method: Method, route: &Route) -> ErrorData {
    ErrorData::internal_error(
        format!(
            "server '{}' (toolbox '{}') answered {} with something that is not a JSON object; the server does not follow the MCP schema",
            route.server,
            route.toolbox,
            method.name()
        ),
        None,
    )
}
