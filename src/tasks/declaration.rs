//! What an agent on 2025-11-25 is told of tasks where rmcp's typed results cannot say it: the
//! `tasks` capability in the answer to `initialize`, and `use_tool`'s `execution` in the tool
//! list. Both transports pass every message a session's rmcp service sends through one of
//! these, which learns the session's version from the `initialize` answer it sees.

use rmcp::model::{CustomResult, ServerJsonRpcMessage, ServerResult};
use serde_json::Value;

use crate::{meta_tools::USE_TOOL, revision::Protocol};

/// What toolshelf declares under `capabilities.tasks` to an agent on 2025-11-25: tasks for
/// `tools/call` (a child that runs tools as tasks can be reached), listing and cancelling.
/// Nothing for the client side: children are not offered task-augmented requests to the agent.
const CAPABILITY: &str = r#"{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}"#;

/// `use_tool`'s own `execution`: the agent may call it as a task; whether the call then runs as
/// one is the child's answer.
const USE_TOOL_EXECUTION: &str = r#"{"taskSupport":"optional"}"#;

/// The rewriting of one session's outgoing messages.
#[derive(Default)]
pub(crate) struct TaskDeclaration {
    /// The session agreed on 2025-11-25.
    declares: bool,
}

impl TaskDeclaration {
    /// `message` as the agent gets it.
    pub(crate) fn outgoing(&mut self, mut message: ServerJsonRpcMessage) -> ServerJsonRpcMessage {
        if let ServerJsonRpcMessage::Response(response) = &mut message {
            if let ServerResult::InitializeResult(result) = &response.result {
                self.declares = Protocol::of(&result.protocol_version) == Protocol::Tasks;
            }
            if self.declares
                && let Some(declared) = declared(&response.result)
            {
                response.result = ServerResult::CustomResult(CustomResult(declared));
            }
        }
        message
    }
}

/// An initialize or tools/list answer with the `tasks` capability and `use_tool`'s
/// `execution`; `None` for other answers.
fn declared(result: &ServerResult) -> Option<Value> {
    match result {
        ServerResult::InitializeResult(result) => {
            let mut value = serde_json::to_value(result).ok()?;
            value["capabilities"]["tasks"] = serde_json::from_str(CAPABILITY).ok()?;
            Some(value)
        }
        ServerResult::ListToolsResult(result) => {
            let mut value = serde_json::to_value(result).ok()?;
            let use_tool = value
                .get_mut("tools")?
                .as_array_mut()?
                .iter_mut()
                .find(|tool| tool["name"] == USE_TOOL)?;
            use_tool["execution"] = serde_json::from_str(USE_TOOL_EXECUTION).ok()?;
            Some(value)
        }
        _ => None,
    }
}
