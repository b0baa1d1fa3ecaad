//! A request as rmcp's message, under rmcp's own id: built from the params as the agent wrote
//! them, so a request whose params do not fit its method is refused with -32602 here.

use rmcp::{
    RoleServer,
    model::{
        CallToolRequest, CallToolRequestParams, ClientJsonRpcMessage, ClientRequest, GetExtensions,
        RequestId,
    },
    service::RxJsonRpcMessage,
};
use serde_json::value::RawValue;

use crate::session::raw_arguments::RawArguments;

/// The methods of MCP requests a client may send: a request for one of these that rmcp can
/// only read as a custom request has params that do not fit, -32602 rather than -32601.
const CLIENT_METHODS: &[&str] = &[
    "ping",
    "initialize",
    "server/discover",
    "completion/complete",
    "logging/setLevel",
    "prompts/get",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "subscriptions/listen",
    "tools/call",
    "tools/list",
    "tasks/get",
    "tasks/update",
    "tasks/cancel",
];

/// Request `method` with `params` as rmcp's message under rmcp's id `internal`, or why the
/// params cannot be read.
pub(super) fn for_rmcp(
    internal: RequestId,
    method: &str,
    params: Option<&RawValue>,
) -> Result<RxJsonRpcMessage<RoleServer>, String> {
    if method == "tools/call" {
        let Some(params) = params else {
            return Err(
                r#"Invalid params: tools/call needs params, e.g. {"name":"open_toolbox","arguments":{"toolbox":"…"}}"#
                    .to_owned(),
            );
        };
        return tool_call(internal, params)
            .map_err(|error| format!("Invalid params for tools/call: {error}"));
    }
    let mut line = Vec::with_capacity(64 + params.map_or(0, |p| p.get().len()));
    line.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    serde_json::to_writer(&mut line, &internal).map_err(|error| error.to_string())?;
    line.extend_from_slice(br#","method":"#);
    serde_json::to_writer(&mut line, method).map_err(|error| error.to_string())?;
    if let Some(params) = params {
        line.extend_from_slice(br#","params":"#);
        line.extend_from_slice(params.get().as_bytes());
    }
    line.push(b'}');
    let message = serde_json::from_slice::<RxJsonRpcMessage<RoleServer>>(&line)
        .map_err(|error| format!("Invalid params for {method}: {error}"))?;
    if let ClientJsonRpcMessage::Request(request) = &message
        && let ClientRequest::CustomRequest(_) = &request.request
        && CLIENT_METHODS.contains(&method)
    {
        return Err(format!(
            "Invalid params for {method}: they do not have the shape the MCP specification gives this method"
        ));
    }
    Ok(message)
}

/// A `tools/call` request for rmcp, decoded directly. rmcp decodes every request by buffering
/// it and trying each request type in turn, which the profile showed to be a fifth of
/// toolshelf's CPU per call. The result is what rmcp's own decoding gives: `_meta` moves from the
/// params into the request's extensions. The arguments go beside it as written
/// (`RawArguments`): rmcp would decode them into values that alter numbers.
fn tool_call(id: RequestId, params: &RawValue) -> serde_json::Result<RxJsonRpcMessage<RoleServer>> {
    let (mut params, arguments) = match RawArguments::split_params(params) {
        Some((rest, arguments)) => (
            serde_json::from_str::<CallToolRequestParams>(rest.get())?,
            Some(arguments),
        ),
        None => (serde_json::from_str(params.get())?, None),
    };
    let meta = params.meta.take();
    let mut request = CallToolRequest::new(params);
    if let Some(meta) = meta {
        request.extensions_mut().insert(meta);
    }
    if let Some(arguments) = arguments {
        request.extensions_mut().insert(arguments);
    }
    Ok(ClientJsonRpcMessage::request(
        ClientRequest::CallToolRequest(request),
        id,
    ))
}
