//! `use_tool {tool: {toolbox, server, name}, arguments?}`: the meta-tool's contract. The input is
//! checked against its schema before anything else, then resolved step by step (toolbox, open,
//! server, tool) and forwarded; the child's result comes back unchanged.

use std::{collections::HashSet, sync::Mutex};

use indexmap::IndexMap;
use rmcp::model::JsonObject;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, value::RawValue};

use crate::{
    child_call::{self, CallFailure, CallParts, Target},
    children::ToolResultJson,
    error::{Context, ToolError},
    jsonrpc::envelope,
    locks,
    schema_check::{SchemaCheck, Violation, ViolationKind},
    toolboxes::{ServerSlot, ServerState, Toolbox, Toolboxes},
};

/// `use_tool`'s input as the agent sent it. The tool's own `arguments` stay raw JSON: they are
/// the child's business, passed on byte for byte, and may hold what toolshelf's parser refuses
/// (nesting deeper than 128 levels, a lone surrogate escape, `1e400`). The rest, the identifier,
/// is checked against the schema, with `{}` in place of an object of arguments.
pub(crate) struct UseToolInput {
    checked: Result<Identifier, Violation>,
    arguments: Option<Box<RawValue>>,
}

/// The identifier to check: the input as a JSON value, or a plain line's three strings, which
/// become that value only when the schema has not yet judged them (`CheckedIdentifiers`).
enum Identifier {
    Value(Value),
    Plain(ToolId),
}

impl UseToolInput {
    /// From the raw JSON of `params.arguments`: the one reader of `use_tool`'s input, whatever
    /// path the call took.
    pub(crate) fn from_raw(raw: &RawValue) -> Self {
        Self::plain(raw.get()).unwrap_or_else(|| Self::general(raw))
    }

    /// The input of a plain call, read in one pass: no key but `tool` and `arguments`, each
    /// once; the identifier three non-empty strings without escapes, no other key; the arguments
    /// an object, or none. `None` for any other input, or text that is not JSON: the general
    /// reading gives a plain input the same outcome, its identifier then a JSON value to check.
    pub(crate) fn plain(text: &str) -> Option<Self> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Plain<'a> {
            #[serde(borrow)]
            tool: PlainTool<'a>,
            #[serde(borrow, default, deserialize_with = "envelope::present")]
            arguments: Option<&'a RawValue>,
        }
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct PlainTool<'a> {
            toolbox: &'a str,
            server: &'a str,
            name: &'a str,
        }
        let Plain { tool, arguments } = serde_json::from_str(text).ok()?;
        let parts = [tool.toolbox, tool.server, tool.name];
        let plain = parts.iter().all(|part| !part.is_empty())
            && arguments.is_none_or(|arguments| arguments.get().starts_with('{'));
        plain.then(|| Self {
            checked: Ok(Identifier::Plain(ToolId {
                toolbox: tool.toolbox.to_owned(),
                server: tool.server.to_owned(),
                name: tool.name.to_owned(),
            })),
            arguments: arguments.map(RawValue::to_owned),
        })
    }

    /// Any other input: each member read as a JSON value but the arguments, kept as written.
    fn general(raw: &RawValue) -> Self {
        let Ok(members) = serde_json::from_str::<IndexMap<String, &RawValue>>(raw.get()) else {
            // Not an object: the check reports its type.
            return Self {
                checked: readable("", raw).map(Identifier::Value),
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
            checked: Ok(Identifier::Value(Value::Object(object))),
            arguments,
        }
    }

    /// The identifier's toolbox, server and name, each as far as the input has it as a string
    /// (it is checked later).
    pub(crate) fn named(&self) -> [Option<&str>; 3] {
        let tool = match &self.checked {
            Ok(Identifier::Plain(tool)) => {
                return [&tool.toolbox, &tool.server, &tool.name].map(|part| Some(part.as_str()));
            }
            Ok(Identifier::Value(input)) => Some(&input["tool"]),
            Err(_) => None,
        };
        ["toolbox", "server", "name"].map(|key| tool.and_then(|tool| tool[key].as_str()))
    }

    /// `toolbox/server/name` as far as the identifier has them, `?` for a part it has not.
    pub(crate) fn tool_named(&self) -> String {
        self.named().map(|part| part.unwrap_or("?")).join("/")
    }

    /// Whether `use_tool`'s schema finds the input valid.
    #[cfg(test)]
    pub(crate) fn is_valid(&self) -> bool {
        static CHECK: std::sync::OnceLock<SchemaCheck<UseToolArgs>> = std::sync::OnceLock::new();
        match &self.checked {
            Ok(Identifier::Plain(_)) => true,
            Ok(Identifier::Value(input)) => CHECK
                .get_or_init(SchemaCheck::new)
                .check(input.clone())
                .is_ok(),
            Err(_) => false,
        }
    }

    /// The tool's own arguments, as the agent wrote them.
    pub(crate) fn arguments(&self) -> Option<&RawValue> {
        self.arguments.as_deref()
    }

    /// A call that gave no arguments: the check reports the missing identifier.
    pub(crate) fn empty() -> Self {
        Self {
            checked: Ok(Identifier::Value(Value::Object(JsonObject::new()))),
            arguments: None,
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
#[derive(Debug, Clone, PartialEq, Eq, Hash, Deserialize, JsonSchema)]
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
    checked: &CheckedIdentifiers,
    toolboxes: &Toolboxes,
    input: UseToolInput,
    parts: CallParts<'_>,
) -> Result<ToolResultJson, CallFailure> {
    let identifier = input
        .checked
        .map_err(|violation| ToolError::InvalidUseTool(vec![violation]))?;
    let tool = match identifier {
        Identifier::Value(value) => check.check(value).map_err(ToolError::InvalidUseTool)?.tool,
        Identifier::Plain(tool) => checked.check(check, tool)?,
    };
    let ToolId {
        toolbox,
        server,
        name,
    } = tool;
    let boxed = toolboxes.find(&toolbox, Context::UseTool)?;
    if !boxed.is_open() {
        // A tool a search showed this session may be called at once: its toolbox opens now.
        if !toolboxes.search().was_shown(&toolbox, &server, &name) {
            return Err(CallFailure::Tool(not_open(boxed, toolbox, server, name)));
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

/// Why a toolbox that is not open cannot take a call of `server`'s tool `name`: the server
/// could not start when the toolbox was opened (with its error), else the toolbox was never
/// opened.
fn not_open(boxed: &Toolbox, toolbox: String, server: String, name: String) -> ToolError {
    let slot = boxed.server(&server);
    match slot.map(ServerSlot::state) {
        Some(ServerState::Failed(reason)) => ToolError::OpenedWithoutServer {
            by_config: slot.is_some_and(|slot| slot.spec.unavailable.is_some()),
            toolbox,
            server,
            name,
            reason: reason.to_string(),
        },
        _ => ToolError::ToolboxNotOpen { toolbox },
    }
}

/// The plain identifiers `use_tool`'s schema found valid. A plain line's identifier is three
/// strings and nothing else, so the schema's verdict on it depends on those alone: each is
/// checked once, and a call that names it again skips making the JSON value the check reads
/// and the check itself (a seventh of the instructions of a forwarded call).
pub(crate) struct CheckedIdentifiers {
    valid: Mutex<HashSet<ToolId, foldhash::fast::RandomState>>,
}

/// Identifiers kept at most: far more tools than an agent calls, and a bound on what names the
/// agent makes up can hold.
const IDENTIFIERS_KEPT: usize = 4096;

impl CheckedIdentifiers {
    pub(crate) fn new() -> Self {
        Self {
            valid: Mutex::default(),
        }
    }

    fn check(&self, schema: &SchemaCheck<UseToolArgs>, tool: ToolId) -> Result<ToolId, ToolError> {
        if locks::lock(&self.valid).contains(&tool) {
            return Ok(tool);
        }
        let mut identifier = JsonObject::new();
        identifier.insert("toolbox".into(), tool.toolbox.as_str().into());
        identifier.insert("server".into(), tool.server.as_str().into());
        identifier.insert("name".into(), tool.name.as_str().into());
        let mut input = JsonObject::new();
        input.insert("tool".into(), Value::Object(identifier));
        schema
            .check(Value::Object(input))
            .map_err(ToolError::InvalidUseTool)?;
        let mut valid = locks::lock(&self.valid);
        if valid.len() < IDENTIFIERS_KEPT {
            valid.insert(tool.clone());
        }
        Ok(tool)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(toolbox: &str) -> ToolId {
        ToolId {
            toolbox: toolbox.into(),
            server: "s".into(),
            name: "n".into(),
        }
    }

    #[test]
    fn a_plain_identifier_is_judged_by_the_schema_once_and_only_a_valid_one_is_kept() {
        let (schema, checked) = (SchemaCheck::<UseToolArgs>::new(), CheckedIdentifiers::new());
        assert_eq!(checked.check(&schema, tool("t")).ok(), Some(tool("t")));
        assert!(locks::lock(&checked.valid).contains(&tool("t")));
        assert_eq!(checked.check(&schema, tool("t")).ok(), Some(tool("t")));
        // What a plain line never holds, the schema still refuses, as the general way does.
        let Err(ToolError::InvalidUseTool(violations)) = checked.check(&schema, tool("")) else {
            panic!("an empty toolbox name passed");
        };
        let general = UseToolInput::from_raw(
            &RawValue::from_string(r#"{"tool":{"toolbox":"","server":"s","name":"n"}}"#.into())
                .expect("JSON"),
        );
        let Ok(Identifier::Value(value)) = general.checked else {
            panic!("the general way could not read the input");
        };
        assert_eq!(
            format!("{:?}", Some(violations)),
            format!("{:?}", schema.check(value).err())
        );
        assert_eq!(locks::lock(&checked.valid).len(), 1);
    }

    #[test]
    fn identifiers_kept_are_bounded() {
        let (schema, checked) = (SchemaCheck::<UseToolArgs>::new(), CheckedIdentifiers::new());
        for at in 0..IDENTIFIERS_KEPT + 10 {
            assert!(checked.check(&schema, tool(&format!("t{at}"))).is_ok());
        }
        assert_eq!(locks::lock(&checked.valid).len(), IDENTIFIERS_KEPT);
    }

    #[test]
    fn a_plain_input_is_read_as_the_general_way_reads_it() {
        let raw = |text: &str| RawValue::from_string(text.into()).expect("JSON");
        for text in [
            r#"{"tool":{"toolbox":"t","server":"s","name":"n"}}"#,
            r#"{"arguments":{"n":1.50},"tool":{"name":"n","server":"s","toolbox":"t"}}"#,
        ] {
            let (plain, general) = (UseToolInput::plain(text), UseToolInput::general(&raw(text)));
            let plain = plain.expect("plain");
            assert_eq!(plain.tool_named(), general.tool_named());
            assert_eq!(
                plain.arguments().map(RawValue::get),
                general.arguments().map(RawValue::get)
            );
        }
        // Anything else is the general way's: an escape, an empty part, arguments that are not
        // an object, a key twice or another key.
        for text in [
            r#"{"tool":{"toolbox":"\u0074","server":"s","name":"n"}}"#,
            r#"{"tool":{"toolbox":"","server":"s","name":"n"}}"#,
            r#"{"tool":{"toolbox":"t","server":"s","name":"n"},"arguments":null}"#,
            r#"{"tool":{"toolbox":"t","server":"s","name":"n"},"arguments":[]}"#,
            r#"{"tool":{"toolbox":"t","server":"s","name":"n","name":"m"}}"#,
            r#"{"tool":{"toolbox":"t","server":"s","name":"n"},"x":1}"#,
        ] {
            assert!(UseToolInput::plain(text).is_none(), "{text}");
        }
    }
}
