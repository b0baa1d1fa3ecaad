//! `use_tool {tool: {toolbox, server, name}, arguments?}`: the meta-tool's contract. The input is
//! checked against its schema before anything else, then resolved step by step (toolbox, open,
//! server, tool) and forwarded; the child's result comes back unchanged.

use indexmap::IndexMap;
use rmcp::model::JsonObject;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, value::RawValue};

use crate::{
    child_call::{self, CallFailure, CallParts, Target},
    children::ToolResultJson,
    error::{Context, ToolError},
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

    /// From an identifier and arguments read already (`use_tool_line`): what `from_raw` makes of
    /// the same input.
    pub(crate) fn from_parts(
        toolbox: &str,
        server: &str,
        name: &str,
        arguments: Option<&RawValue>,
    ) -> Self {
        let mut tool = JsonObject::new();
        tool.insert("toolbox".into(), toolbox.into());
        tool.insert("server".into(), server.into());
        tool.insert("name".into(), name.into());
        let mut object = JsonObject::new();
        object.insert("tool".into(), Value::Object(tool));
        if arguments.is_some() {
            object.insert("arguments".into(), Value::Object(JsonObject::new()));
        }
        Self {
            checked: Ok(Value::Object(object)),
            arguments: arguments.map(RawValue::to_owned),
        }
    }

    /// `toolbox/server/name` as far as the identifier has them (it is checked later).
    pub(crate) fn tool_named(&self) -> String {
        let tool = self.checked.as_ref().ok().map(|input| &input["tool"]);
        ["toolbox", "server", "name"]
            .map(|key| {
                tool.and_then(|tool| tool[key].as_str())
                    .unwrap_or("?")
                    .to_owned()
            })
            .join("/")
    }

    /// The tool's own arguments, as the agent wrote them.
    pub(crate) fn arguments(&self) -> Option<&RawValue> {
        self.arguments.as_deref()
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

pub(crate) async fn use_tool(
    check: &SchemaCheck<UseToolArgs>,
    toolboxes: &Toolboxes,
    input: UseToolInput,
    parts: CallParts<'_>,
) -> Result<ToolResultJson, CallFailure> {
    let checked = input
        .checked
        .map_err(|violation| ToolError::InvalidUseTool(vec![violation]))?;
    let UseToolArgs { tool, .. } = check.check(checked).map_err(ToolError::InvalidUseTool)?;
    let ToolId {
        toolbox,
        server,
        name,
    } = tool;
    let boxed = toolboxes.find(&toolbox, Context::UseTool)?;
    if !boxed.is_open() {
        // A tool a search showed this session may be called at once: its toolbox opens now.
        if !toolboxes.search().was_shown(&toolbox, &server, &name) {
            return Err(CallFailure::Tool(ToolError::ToolboxNotOpen { toolbox }));
        }
        super::open_toolbox::open(toolboxes, boxed).await?;
        if !boxed.is_open() {
            super::open_toolbox::describe(toolboxes, boxed)?;
        }
    }
    let slot = boxed.find_server(&server)?;
    let target = Target {
        toolbox: &toolbox,
        server: &server,
        slot,
        name: &name,
    };
    let parts = CallParts {
        arguments: input.arguments.as_deref(),
        ..parts
    };
    child_call::call(toolboxes, target, parts).await
}
