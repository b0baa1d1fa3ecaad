//! `use_tool {tool: {toolbox, server, name}, arguments?}`: seed 003's contract. The input is
//! checked against its schema before anything else, then resolved step by step (toolbox, open,
//! server, tool) and forwarded; the child's result comes back unchanged.

use rmcp::model::{CallToolResult, JsonObject};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::{
    error::{Context, ToolError},
    schema_check::SchemaCheck,
    toolboxes::{ServerState, Toolboxes},
};

/// Input of `use_tool`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct UseToolArgs {
    /// Which tool to call, as listed by open_toolbox.
    pub tool: ToolId,
    /// The tool's own arguments, matching its inputSchema. Defaults to {}.
    #[serde(default)]
    pub arguments: JsonObject,
}

/// A tool's structured identifier.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ToolId {
    /// An opened toolbox.
    #[schemars(length(min = 1))]
    pub toolbox: String,
    /// A server of that toolbox.
    #[schemars(length(min = 1))]
    pub server: String,
    /// The tool's name on that server.
    #[schemars(length(min = 1))]
    pub name: String,
}

pub(crate) async fn use_tool(
    check: &SchemaCheck<UseToolArgs>,
    toolboxes: &Toolboxes,
    input: Value,
    cancel: &CancellationToken,
) -> Result<CallToolResult, ToolError> {
    let UseToolArgs { tool, arguments } = check.check(input).map_err(ToolError::InvalidUseTool)?;
    let ToolId {
        toolbox,
        server,
        name,
    } = tool;
    let Some(boxed) = toolboxes.get(&toolbox) else {
        return Err(ToolError::ToolboxUnknown {
            context: Context::UseTool,
            known: toolboxes.names().map(str::to_owned).collect(),
            toolbox,
        });
    };
    if !boxed.is_open() {
        return Err(ToolError::ToolboxNotOpen { toolbox });
    }
    let Some(slot) = boxed.server(&server) else {
        return Err(ToolError::ServerUnknown {
            known: boxed.servers.iter().map(|s| s.spec.name.clone()).collect(),
            toolbox,
            server,
        });
    };
    let downstream = |error: String| ToolError::Downstream {
        toolbox: toolbox.clone(),
        server: server.clone(),
        name: name.clone(),
        error,
    };
    let child = match slot.state() {
        ServerState::Ready(child) => child,
        ServerState::Failed(reason) => {
            return Err(downstream(format!(
                "the server failed to start: {reason}\nCall open_toolbox again to retry."
            )));
        }
        ServerState::NotStarted => {
            return Err(downstream(
                "the server has not been started; call open_toolbox again to start it".into(),
            ));
        }
    };
    if child.is_gone() {
        return Err(downstream(format!(
            "the server is not running: {}\nCall open_toolbox again to restart it.",
            child.describe_end()
        )));
    }
    if child.tool(&name).is_none() {
        return Err(ToolError::ToolUnknown {
            known: child.tools.iter().map(|t| t.name.to_string()).collect(),
            server,
            name,
        });
    }
    tracing::debug!(toolbox = %toolbox, server = %server, tool = %name, "forwarding call");
    match child.call(&name, Some(arguments), cancel).await {
        Ok(result) => Ok(result),
        Err(error) => {
            let error = child.explain(error).await;
            tracing::warn!(toolbox = %toolbox, server = %server, tool = %name, error = %error, "call failed");
            Err(downstream(error.to_string()))
        }
    }
}
