//! Code mode's way of showing tools: each as the line a script calls it with,
//! `await call_tool("toolbox/server/name", {arguments})`, its arguments as `signature` writes
//! them (`?`: optional), in `open_toolbox`'s answers.

use rmcp::model::{CallToolResult, ContentBlock, JsonObject};
use serde_json::Value;

use super::signature;
use crate::code_mode::CALL_TOOL;

/// The call of tool `name` of `server` in `toolbox` that takes `schema`.
pub(super) fn call_line(
    toolbox: &str,
    server: &str,
    name: &str,
    schema: Option<&JsonObject>,
) -> String {
    let arguments = schema.map(signature::arguments).unwrap_or_default();
    match arguments.is_empty() {
        true => format!("await {CALL_TOOL}(\"{toolbox}/{server}/{name}\")"),
        false => format!("await {CALL_TOOL}(\"{toolbox}/{server}/{name}\", {{{arguments}}})"),
    }
}

/// `open_toolbox {toolbox}`'s answer with each tool's `call` line beside its schema; its text
/// (the answer as compact JSON) written again.
pub(super) fn with_calls(mut result: CallToolResult) -> CallToolResult {
    let Some(Value::Object(opened)) = result.structured_content.as_mut() else {
        return result;
    };
    let toolbox = opened
        .get("toolbox")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let servers = opened.get_mut("servers").and_then(Value::as_array_mut);
    for server in servers.into_iter().flatten() {
        let name = server
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let tools = server.get_mut("tools").and_then(Value::as_array_mut);
        for tool in tools.into_iter().flatten().filter_map(Value::as_object_mut) {
            let called = tool
                .get("alias")
                .or(tool.get("name"))
                .and_then(Value::as_str);
            let schema = tool.get("inputSchema").and_then(Value::as_object);
            let line = call_line(&toolbox, &name, called.unwrap_or_default(), schema);
            tool.insert("call".into(), Value::String(line));
        }
    }
    let text = Value::Object(opened.clone()).to_string();
    result.content = vec![ContentBlock::text(text)];
    result
}
