//! `use_tool {tool: {toolbox, server, name}, arguments?}`: seed 003's contract. The input is
//! checked against its schema before anything else, then resolved step by step (toolbox, open,
//! server, tool) and forwarded; the child's result comes back unchanged.

use std::time::Instant;

use indexmap::IndexMap;
use rmcp::model::{ErrorData, JsonObject};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, value::RawValue};
use tokio_util::sync::CancellationToken;

use super::message_size;
use crate::{
    agent_tasks::TaskRequest,
    call_meta::ForwardedMeta,
    children::{CallError, Caller, ProgressTarget, ToolResultJson, child_error},
    error::{Context, DownstreamKind, ToolError},
    metrics::Outcome,
    schema_check::{SchemaCheck, Violation, ViolationKind},
    toolboxes::Toolboxes,
};

/// `use_tool`'s input as the agent sent it. The tool's own `arguments` stay raw JSON: they are
/// the child's business, passed on byte for byte, and may hold what toolshelf's parser refuses
/// (nesting deeper than 128 levels, a lone surrogate escape, `1e400`). The rest, the identifier,
/// is checked against the schema, with `{}` in place of an object of arguments.
pub(crate) struct UseToolInput {
    checked: Result<Value, Violation>,
    arguments: Option<Box<RawValue>>,
}

impl UseToolInput {
    /// From the raw JSON of `params.arguments`.
    pub(crate) fn from_raw(raw: &RawValue) -> Self {
        let Ok(members) = serde_json::from_str::<IndexMap<String, &RawValue>>(raw.get()) else {
            // Not an object: the check reports its type.
            return Self {
                checked: readable("", raw),
                arguments: None,
            };
        };
        let mut object = JsonObject::new();
        let mut arguments = None;
        for (key, value) in members {
            if key == "arguments" && value.get().starts_with('{') {
                arguments = Some(value.to_owned());
                object.insert(key, Value::Object(JsonObject::new()));
                continue;
            }
            match readable(&key, value) {
                Ok(value) => {
                    object.insert(key, value);
                }
                Err(violation) => {
                    return Self {
                        checked: Err(violation),
                        arguments: None,
                    };
                }
            }
        }
        Self {
            checked: Ok(Value::Object(object)),
            arguments,
        }
    }

    /// From arguments rmcp has already decoded.
    pub(crate) fn from_object(mut object: JsonObject) -> Self {
        let arguments = match object.get_mut("arguments") {
            Some(value @ Value::Object(_)) => {
                let taken = std::mem::replace(value, Value::Object(JsonObject::new()));
                serde_json::value::to_raw_value(&taken).ok()
            }
            _ => None,
        };
        Self {
            checked: Ok(Value::Object(object)),
            arguments,
        }
    }
}

/// `raw` as a value toolshelf can check, or why it cannot be read.
fn readable(path: &str, raw: &RawValue) -> Result<Value, Violation> {
    serde_json::from_str(raw.get()).map_err(|error| Violation {
        path: path.to_owned(),
        message: format!("cannot be read ({error}); send plain JSON"),
        kind: ViolationKind::Other,
    })
}

/// Input of `use_tool`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct UseToolArgs {
    /// Which tool to call, as listed by open_toolbox.
    pub tool: ToolId,
    /// The tool's own arguments, matching its inputSchema. Defaults to {}.
    #[serde(default)]
    #[expect(
        dead_code,
        reason = "declared for the schema; the arguments themselves travel raw (UseToolInput)"
    )]
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

/// How many times a call retries when the child it took was retired (idle) under it.
const RETRIES: usize = 3;

/// A child's JSON-RPC error that asks the client to send its user to a URL first (2025-11-25,
/// URL-mode elicitation); its `data` holds the elicitations.
const URL_ELICITATION_REQUIRED: i32 = -32042;

/// Why `use_tool` gives no result.
pub(crate) enum UseToolFailure {
    /// toolshelf's own error (seed 003's texts).
    Tool(ToolError),
    /// A child's JSON-RPC error that only the agent can act on, passed on as the child wrote it.
    Child(ErrorData),
}

impl From<ToolError> for UseToolFailure {
    fn from(error: ToolError) -> Self {
        Self::Tool(error)
    }
}

pub(crate) async fn use_tool(
    check: &SchemaCheck<UseToolArgs>,
    toolboxes: &Toolboxes,
    input: UseToolInput,
    cancel: &CancellationToken,
    progress: Option<ProgressTarget>,
    meta: &ForwardedMeta,
    task: Option<TaskRequest<'_>>,
) -> Result<ToolResultJson, UseToolFailure> {
    let checked = input
        .checked
        .map_err(|violation| ToolError::InvalidUseTool(vec![violation]))?;
    let UseToolArgs { tool, .. } = check.check(checked).map_err(ToolError::InvalidUseTool)?;
    let arguments = input.arguments.as_deref();
    let ToolId {
        toolbox,
        server,
        name,
    } = tool;
    let Some(boxed) = toolboxes.get(&toolbox) else {
        return Err(UseToolFailure::Tool(ToolError::ToolboxUnknown {
            context: Context::UseTool,
            known: toolboxes.names().map(str::to_owned).collect(),
            toolbox,
        }));
    };
    if !boxed.is_open() {
        return Err(UseToolFailure::Tool(ToolError::ToolboxNotOpen { toolbox }));
    }
    let Some(slot) = boxed.server(&server) else {
        return Err(UseToolFailure::Tool(ToolError::ServerUnknown {
            known: boxed.servers.iter().map(|s| s.spec.name.clone()).collect(),
            toolbox,
            server,
        }));
    };
    // Only `serve --http` keeps metrics; the labels are copied for it alone.
    let measured = toolboxes
        .metrics()
        .map(|metrics| (metrics, toolbox.clone(), server.clone(), Instant::now()));
    let forwarded = async {
        let downstream = |kind: DownstreamKind, error: String| ToolError::Downstream {
            toolbox: toolbox.clone(),
            server: server.clone(),
            name: name.clone(),
            kind,
            error,
        };
        for _ in 0..RETRIES {
            // A server that is not running (never started, crashed, idle) starts here.
            let child = slot.ensure().await.map_err(|reason| {
                downstream(
                    DownstreamKind::ServerUnavailable,
                    format!("the server is not available: {reason}"),
                )
            })?;
            let Some(canonical) = slot.catalog.resolve(&name) else {
                return Err(UseToolFailure::Tool(ToolError::ToolUnknown {
                    known: slot.catalog.names(),
                    toolbox,
                    server,
                    name,
                }));
            };
            let _in_flight = child.begin_call();
            if !slot.is_current(&child) {
                continue; // retired for idleness just now: take the next one
            }
            tracing::debug!(toolbox = %toolbox, server = %server, tool = %canonical, called_as = %name, "forwarding call");
            return match child
                .call(
                    &canonical,
                    arguments,
                    cancel,
                    Caller {
                        agent: toolboxes.agent().clone(),
                        progress,
                    },
                    meta,
                    task.and_then(|task| task.ask.for_child(slot.catalog.requires_task(&canonical))),
                )
                .await
            {
                Ok(result) => {
                    slot.answered();
                    let result = match task {
                        Some(task) => task.tasks.created(&toolbox, &server, &child, result),
                        None => result,
                    };
                    message_size::check(result)
                        .map_err(|error| downstream(DownstreamKind::ResultTooLarge, error).into())
                }
                Err(error) => {
                    tracing::warn!(toolbox = %toolbox, server = %server, tool = %canonical, called_as = %name, error = %error, "call failed");
                    Err(match error {
                        CallError::Protocol {
                            code: URL_ELICITATION_REQUIRED,
                            message,
                            data,
                        } => {
                            UseToolFailure::Child(child_error(URL_ELICITATION_REQUIRED, message, data))
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
    if let Some((metrics, toolbox, server, began)) = measured {
        let outcome = match &forwarded {
            Ok(result) if result.is_error() => Outcome::ToolError,
            Ok(_) => Outcome::Ok,
            Err(_) => Outcome::Failed,
        };
        metrics.call(&toolbox, &server, outcome, began.elapsed());
    }
    forwarded
}
