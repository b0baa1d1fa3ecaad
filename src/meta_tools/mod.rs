//! The two tools the agent sees, their schemas and descriptions, and the `instructions` of the
//! `initialize` result. Everything here is built once, at start-up, from the config.

mod message_size;
mod open_toolbox;
mod use_tool;

use std::sync::Arc;

use rmcp::model::{CallToolResult, ContentBlock, ErrorData, JsonObject, ResultType, Tool};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::{
    agent_message::{self, AgentId},
    agent_tasks::TaskRequest,
    call_meta::ForwardedMeta,
    children::{ProgressTarget, ToolResultJson},
    config::{Config, ToolFilter},
    error::ToolError,
    schema_check::SchemaCheck,
    toolboxes::Toolboxes,
};
use open_toolbox::OpenToolboxArgs;
pub(crate) use use_tool::UseToolInput;
use use_tool::{UseToolArgs, UseToolFailure};

pub(crate) const OPEN_TOOLBOX: &str = "open_toolbox";
pub(crate) const USE_TOOL: &str = "use_tool";

/// The agent-facing surface of toolshelf.
pub(crate) struct MetaTools {
    open_check: SchemaCheck<OpenToolboxArgs>,
    use_check: SchemaCheck<UseToolArgs>,
    tools: Vec<Tool>,
    instructions: String,
}

impl MetaTools {
    pub(crate) fn new(config: &Config) -> Self {
        let open_check = SchemaCheck::<OpenToolboxArgs>::new();
        let use_check = SchemaCheck::<UseToolArgs>::new();
        let names: Vec<&str> = config.toolboxes.keys().map(String::as_str).collect();

        let mut open_schema = advertised(open_check.schema());
        if let Some(toolbox) = open_schema
            .get_mut("properties")
            .and_then(|properties| properties.get_mut("toolbox"))
            .and_then(Value::as_object_mut)
        {
            toolbox.insert("enum".into(), json!(names));
        }
        let mut open_description = String::from(
            "Start a toolbox's MCP servers and list their tools, under each server (name, description, inputSchema; no inputSchema: it declares no arguments). A server's status is ready, idle (stopped while unused; its next call starts it) or failed (with the error). Call it before use_tool. Toolboxes:",
        );
        for toolbox in config.toolboxes.values() {
            open_description.push_str(&format!("\n- {}", toolbox.name));
            if !toolbox.description.is_empty() {
                open_description.push_str(&format!(": {}", toolbox.description));
            }
        }
        let use_description = "Call a tool of an opened toolbox. `tool` is {toolbox, server, name} as listed by open_toolbox; `arguments` is the tool's input object. Returns the tool's own result.";
        let tools = vec![
            Tool::new(
                OPEN_TOOLBOX,
                open_description,
                Arc::new(object(open_schema)),
            ),
            Tool::new(
                USE_TOOL,
                use_description,
                Arc::new(object(advertised(use_check.schema()))),
            ),
        ];
        Self {
            open_check,
            use_check,
            tools,
            instructions: instructions(config),
        }
    }

    pub(crate) fn tools(&self) -> &[Tool] {
        &self.tools
    }

    pub(crate) fn instructions(&self) -> &str {
        &self.instructions
    }

    pub(crate) async fn open_toolbox(&self, toolboxes: &Toolboxes, input: Value) -> CallToolResult {
        open_toolbox::open_toolbox(&self.open_check, toolboxes, input)
            .await
            .unwrap_or_else(ToolError::into_result)
    }

    pub(crate) async fn use_tool(
        &self,
        toolboxes: &Toolboxes,
        input: UseToolInput,
        cancel: &CancellationToken,
        progress: Option<ProgressTarget>,
        meta: &ForwardedMeta,
        task: Option<TaskRequest<'_>>,
    ) -> UseToolAnswer {
        let answer = use_tool::use_tool(
            &self.use_check,
            toolboxes,
            input,
            cancel,
            progress,
            meta,
            task,
        );
        match answer.await {
            Ok(result) => UseToolAnswer::Forwarded(result),
            Err(UseToolFailure::Tool(error)) => UseToolAnswer::Failed(error.into_result()),
            Err(UseToolFailure::Child(error)) => UseToolAnswer::Refused(error),
        }
    }
}

/// What `use_tool` answers: the child's result as the child encoded it, toolshelf's own error
/// result, or a child's JSON-RPC error that only the agent can act on (URL elicitation
/// required), as the child wrote it.
pub(crate) enum UseToolAnswer {
    Forwarded(ToolResultJson),
    Failed(CallToolResult),
    Refused(ErrorData),
}

impl UseToolAnswer {
    /// The answer as a typed value, for rmcp's request path (the direct path writes the
    /// child's bytes instead: `line`).
    pub(crate) fn into_result(self) -> Result<CallToolResult, ErrorData> {
        Ok(match self {
            UseToolAnswer::Forwarded(result) => {
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
            UseToolAnswer::Failed(result) => result,
            UseToolAnswer::Refused(error) => return Err(error),
        })
    }

    /// The answer line to request `id`; the result with `resultType` only if
    /// `with_result_type` (the agent's session is on protocol 2026-07-28 or later).
    pub(crate) fn line(self, id: &AgentId, with_result_type: bool) -> serde_json::Result<Vec<u8>> {
        match self {
            UseToolAnswer::Forwarded(result) => {
                agent_message::response_line(id, |out| result.encode_into(out, with_result_type))
            }
            UseToolAnswer::Failed(mut result) => {
                result.result_type = with_result_type.then_some(ResultType::COMPLETE);
                agent_message::response_line(id, |out| serde_json::to_writer(out, &result))
            }
            UseToolAnswer::Refused(error) => agent_message::error_data_line(Some(id), &error),
        }
    }
}

/// A checking schema as shown to clients: without the root title and description schemars
/// takes from the Rust type, which would only repeat the tool's description.
fn advertised(schema: &Value) -> Value {
    let mut schema = schema.clone();
    if let Some(object) = schema.as_object_mut() {
        object.remove("title");
        object.remove("description");
    }
    schema
}

fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(object) => object,
        _ => JsonObject::new(),
    }
}

/// The `instructions` of `initialize`: what toolshelf is, the toolboxes, and a real example.
fn instructions(config: &Config) -> String {
    let mut text = String::from(
        "toolshelf groups MCP servers into toolboxes. Call open_toolbox with a toolbox name to start its servers and list their tools, then call use_tool to run one of them.\n\nToolboxes:",
    );
    for toolbox in config.toolboxes.values() {
        let servers: Vec<&str> = toolbox.servers.iter().map(|s| s.name.as_str()).collect();
        text.push_str(&format!("\n- {}", toolbox.name));
        if !toolbox.description.is_empty() {
            text.push_str(&format!(": {}", toolbox.description));
        }
        text.push_str(&format!(" (servers: {})", servers.join(", ")));
    }
    if let Some(toolbox) = config.toolboxes.values().next()
        && let Some(server) = toolbox.servers.first()
    {
        // Nothing has started yet, so no tool's arguments are known: step 2 is a pattern with
        // placeholders that cannot pass for a complete call, never a call that would fail.
        let (name, which) = match &server.tool_filter {
            ToolFilter::Only(names) if !names.is_empty() => (names[0].clone(), String::new()),
            _ => (
                "TOOL".to_owned(),
                format!(
                    ", TOOL the name of a tool listed under server \"{}\"",
                    server.name
                ),
            ),
        };
        let open = json!({ "toolbox": toolbox.name });
        let tool = json!({ "toolbox": toolbox.name, "server": server.name, "name": name });
        text.push_str(&format!(
            "\n\nExample:\n1. open_toolbox {open}\n2. use_tool {{\"tool\":{tool},\"arguments\":ARGS}} with ARGS the object its inputSchema in step 1's result asks for{which} (no inputSchema: leave \"arguments\" out)"
        ));
    }
    text
}
