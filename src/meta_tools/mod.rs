//! The two tools the agent sees, their schemas and descriptions, and the `instructions` of the
//! `initialize` result. Everything here is built once, at start-up, from the config.

mod code_calls;
mod open_toolbox;
mod run_code;
mod search;
mod server_status;
pub(crate) mod signature;
mod use_tool;
pub(crate) mod use_tool_line;

use std::sync::Arc;

use rmcp::model::{CallToolResult, JsonObject, Tool};
use serde_json::{Value, json};

use crate::{
    child_call::{CallAnswer, CallParts},
    code_mode::Limits,
    config::{Config, ToolFilter},
    error::ToolError,
    schema_check::SchemaCheck,
    toolboxes::Toolboxes,
};
pub(crate) use open_toolbox::describe;
use open_toolbox::{OpenRequest, OpenToolboxArgs};
pub(crate) use run_code::RUN_CODE;
use run_code::RunCodeArgs;
pub(crate) use use_tool::UseToolInput;
use use_tool::{CheckedIdentifiers, UseToolArgs};

pub(crate) const OPEN_TOOLBOX: &str = "open_toolbox";
pub(crate) const USE_TOOL: &str = "use_tool";

/// The agent-facing surface of toolshelf.
pub(crate) struct MetaTools {
    open_check: SchemaCheck<OpenToolboxArgs>,
    use_check: SchemaCheck<UseToolArgs>,
    use_checked: CheckedIdentifiers,
    /// Code mode's check of `run_code`'s input, when it is on.
    code_check: Option<SchemaCheck<RunCodeArgs>>,
    code_limits: Limits,
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
        let mut open_description = format!(
            "Start a toolbox's MCP servers and list their tools by server (name, description, inputSchema unless it takes no arguments). {} Call it before use_tool, or search every toolbox, starting nothing: {{\"query\": what you want to do}} (limit: 5; toolbox: only that one); use_tool calls what a search found. Toolboxes:",
            server_status::ServerStatus::described()
        );
        for toolbox in config.toolboxes.values() {
            open_description.push_str(&format!("\n- {}", toolbox.name));
            if !toolbox.description.is_empty() {
                open_description.push_str(&format!(": {}", toolbox.description));
            }
        }
        let use_description = "Call a tool of an opened toolbox. `tool` is {toolbox, server, name} as listed by open_toolbox; `arguments` is the tool's input object. Returns the tool's own result.";
        let mut tools = vec![
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
        let code_check = config.code.enabled.then(SchemaCheck::<RunCodeArgs>::new);
        if let Some(check) = &code_check {
            tools.push(Tool::new(
                RUN_CODE,
                run_code::description(),
                Arc::new(object(advertised(check.schema()))),
            ));
        }
        Self {
            open_check,
            use_check,
            use_checked: CheckedIdentifiers::new(),
            code_check,
            code_limits: config.code.limits,
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
        let code = self.runs_code();
        let answer = match open_toolbox::request(&self.open_check, input) {
            Ok(OpenRequest::Open(toolbox)) => open_toolbox::open_named(toolboxes, &toolbox)
                .await
                .map(|opened| match code {
                    true => code_calls::with_calls(opened),
                    false => opened,
                }),
            Ok(OpenRequest::Search(request)) => search::search(toolboxes, request, code),
            Err(error) => Err(error),
        };
        answer.unwrap_or_else(ToolError::into_result)
    }

    /// Whether `run_code` is offered (code mode).
    pub(crate) fn runs_code(&self) -> bool {
        self.code_check.is_some()
    }

    /// What one `run_code` run may spend.
    pub(crate) fn code_limits(&self) -> Limits {
        self.code_limits
    }

    /// `run_code`'s script, once its input passed the schema.
    pub(crate) fn script(&self, input: Value) -> Result<String, ToolError> {
        let Some(check) = &self.code_check else {
            return Err(ToolError::InvalidRunCode(Vec::new()));
        };
        check
            .check(input)
            .map(|args| args.code)
            .map_err(ToolError::InvalidRunCode)
    }

    /// `use_tool`: its identifier checked and resolved, then the call forwarded with `parts`
    /// (whose `arguments` the input replaces).
    pub(crate) async fn use_tool(
        &self,
        toolboxes: &Toolboxes,
        input: UseToolInput,
        parts: CallParts<'_>,
    ) -> CallAnswer {
        use_tool::use_tool(&self.use_check, &self.use_checked, toolboxes, input, parts)
            .await
            .into()
    }
}

/// A checking schema as shown to clients: without the root title and description schemars
/// takes from the Rust type, which would only repeat the tool's description, nor the `null`
/// default of an optional key, which says nothing a missing `required` does not, nor an
/// integer's Rust width.
fn advertised(schema: &Value) -> Value {
    let mut schema = schema.clone();
    if let Some(object) = schema.as_object_mut() {
        object.remove("title");
        object.remove("description");
        let properties = object.get_mut("properties").and_then(Value::as_object_mut);
        for property in properties.into_iter().flat_map(|p| p.values_mut()) {
            if let Some(property) = property.as_object_mut() {
                if property.get("default") == Some(&Value::Null) {
                    property.remove("default");
                }
                // Rust's integer width ("uint32"): the bounds say what an agent needs.
                property.remove("format");
            }
        }
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
        "toolshelf groups MCP servers into toolboxes. Call open_toolbox with a toolbox name to start its servers and list their tools, then call use_tool to run one of them. Not sure which toolbox? open_toolbox {\"query\": \"what you want to do\"} finds the tools across every toolbox.\n\nToolboxes:",
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
