//! Why a child could not be started or a call of it failed: the text the agent is shown.

use std::time::Duration;

use serde_json::value::RawValue;

use super::{
    child_transport::{self},
    exit::SpawnError,
};
use crate::error::DownstreamKind;

/// Why a child could not be started. The text is shown to the agent.
#[derive(Debug, thiserror::Error)]
pub(crate) enum StartError {
    #[error(transparent)]
    Spawn(#[from] SpawnError),
    #[error("did not finish starting within {limit:?} (startupTimeout): {end}")]
    Timeout { limit: Duration, end: String },
    #[error("{stage} failed: {cause}; {end}")]
    Protocol {
        stage: &'static str,
        cause: String,
        end: String,
    },
}

/// Why a forwarded call failed; the text becomes the `{downstream error}` of use_tool's error table.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CallError {
    #[error("{message} (JSON-RPC error {code})")]
    Protocol {
        code: i32,
        message: String,
        data: Option<Box<RawValue>>,
    },
    #[error(
        "the server gave no answer within {limit:?} (callTimeout; {elapsed:.1?} in all) and was told to cancel the call; it did not report a failure: check the server's log for this call, and raise callTimeout if the tool needs longer"
    )]
    Timeout { limit: Duration, elapsed: Duration },
    #[error("the server stopped before answering: {end}")]
    Died { end: String },
    #[error("{}; the server was stopped", child_transport::too_large())]
    TooLarge,
    #[error("the call was cancelled by the client")]
    Cancelled,
    #[error(
        "the server asked the client for input, which could not be given: {message}; the MCP client must answer what the server asks (sampling, elicitation, roots), or the tool must be called so that it needs no input"
    )]
    Unanswered { message: String },
    #[error("the server answered tools/call with something that is not a tool result: {0}")]
    NotAToolResult(String),
    /// Not expected: the arguments are JSON already.
    #[error(
        "toolshelf could not encode the request for the server ({0}); this is a toolshelf bug, please report it with the arguments"
    )]
    Unencodable(String),
    #[error("the server's answer to {method} does not follow the MCP schema: {error}")]
    Unreadable { method: &'static str, error: String },
}

/// A child's JSON-RPC error, from its members as the child wrote them.
pub(crate) fn child_error(
    code: i32,
    message: String,
    data: Option<Box<RawValue>>,
) -> rmcp::model::ErrorData {
    let data = data.and_then(|data| serde_json::from_str(data.get()).ok());
    rmcp::model::ErrorData::new(rmcp::model::ErrorCode(code), message, data)
}

impl CallError {
    /// The child's own JSON-RPC error as it wrote it (code, message, data); any other failure
    /// back as it was.
    pub(crate) fn into_child_error(self) -> Result<rmcp::model::ErrorData, Self> {
        match self {
            CallError::Protocol {
                code,
                message,
                data,
            } => Ok(child_error(code, message, data)),
            other => Err(other),
        }
    }

    /// What kind of failure this is, for programs.
    pub(crate) fn kind(&self) -> DownstreamKind {
        match self {
            CallError::Protocol { .. }
            | CallError::Unanswered { .. }
            | CallError::NotAToolResult(_)
            | CallError::Unencodable(_)
            | CallError::Unreadable { .. } => DownstreamKind::ChildError,
            CallError::Timeout { .. } => DownstreamKind::Timeout,
            CallError::Died { .. } => DownstreamKind::ServerUnavailable,
            CallError::TooLarge => DownstreamKind::ResultTooLarge,
            CallError::Cancelled => DownstreamKind::Cancelled,
        }
    }
}
