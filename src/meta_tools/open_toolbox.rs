//! `open_toolbox {toolbox}`: starts what is not running yet and describes the toolbox. The
//! result is compact JSON, once as text and once as `structuredContent`. Tools are listed under
//! their server, so nothing is repeated per tool (toolbox, server, status), and nothing the agent
//! already has (the toolbox's description is in `tools/list`), and no input schema that declares
//! no arguments (`{"type":"object"}`): the result is smaller than the servers' own `tools/list`.

use rmcp::model::{CallToolResult, ContentBlock, JsonObject, ToolAnnotations};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, value::RawValue};

use super::server_status::ServerStatus;
use crate::{
    catalog::{Changes, Source},
    error::{Context, ToolError},
    schema_check::{SchemaCheck, Violation},
    search::SearchIndex,
    toolboxes::{ServerSlot, ServerState, Toolbox, Toolboxes},
};

/// Input of `open_toolbox`: a toolbox to open, or a query to search with (in one toolbox, if
/// `toolbox` is given too).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct OpenToolboxArgs {
    /// The toolbox to open.
    #[schemars(length(min = 1), with = "String")]
    #[serde(default)]
    pub toolbox: Option<String>,
    // `query` and `limit` go undocumented in the schema (the tool's description says them): every
    // byte of this schema is in every agent's context.
    #[schemars(with = "String")]
    #[serde(default)]
    pub query: Option<String>,
    #[schemars(range(min = 1, max = 50), with = "u32")]
    #[serde(default)]
    pub limit: Option<u32>,
}

/// What an `open_toolbox` call asks for.
pub(super) enum OpenRequest {
    Open(String),
    Search(Search),
}

/// A search, as `open_toolbox {query}` asks for it.
pub(crate) struct Search {
    pub query: String,
    pub limit: usize,
    pub within: Option<String>,
}

/// How many tools a search answers when the agent does not say.
const DEFAULT_LIMIT: usize = 5;

impl OpenToolboxArgs {
    /// The request, or why the input is neither an open nor a search.
    fn request(self) -> Result<OpenRequest, Vec<Violation>> {
        let violation =
            |path: &str, message: &str| vec![Violation::other(path.into(), message.into())];
        match self {
            OpenToolboxArgs {
                query: Some(query), ..
            } if !SearchIndex::has_terms(&query) => Err(violation(
                "query",
                "has no word to search for; say in words what you want to do, e.g. \"read a file\"",
            )),
            OpenToolboxArgs {
                query: Some(query),
                toolbox,
                limit,
            } => Ok(OpenRequest::Search(Search {
                query,
                limit: limit.map_or(DEFAULT_LIMIT, |limit| limit as usize),
                within: toolbox,
            })),
            OpenToolboxArgs { limit: Some(_), .. } => Err(violation(
                "limit",
                "only a search takes a limit; add \"query\", or leave \"limit\" out",
            )),
            OpenToolboxArgs {
                toolbox: Some(toolbox),
                ..
            } => Ok(OpenRequest::Open(toolbox)),
            OpenToolboxArgs { .. } => Err(violation(
                "",
                "give \"toolbox\" to open a toolbox, or \"query\" to search the tools of every toolbox",
            )),
        }
    }
}

/// What `open_toolbox` returns.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Opened<'a> {
    pub toolbox: &'a str,
    pub servers: Vec<ServerSummary<'a>>,
    /// Config overrides that name no tool of their server.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ServerSummary<'a> {
    pub name: &'a str,
    pub status: ServerStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Where `tools` came from: "live" (the server, in this run), "cached" (the persisted
    /// catalog, `catalogAge` seconds old) or "cached-fewer-offers" (the persisted list of a
    /// client that offered less than this agent: tools the server lists only to a client that
    /// offers more appear once it has started).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub catalog: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub catalog_age: Option<u64>,
    /// How the tools changed since this toolbox was last opened.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub changes: Option<Changes>,
    pub tools: Vec<ToolSummary<'a>>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ToolSummary<'a> {
    pub name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alias: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<&'a str>,
    /// Left out when it declares no arguments (see [`declares_arguments`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_schema: Option<&'a JsonObject>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<&'a JsonObject>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotations: Option<&'a ToolAnnotations>,
    /// Task support as the server declared it (`{"taskSupport":"required"}`…).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub execution: Option<&'a RawValue>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    pub tags: &'a [String],
}

/// What `input` asks for, once it passed the schema and is an open or a search.
pub(super) fn request(
    check: &SchemaCheck<OpenToolboxArgs>,
    input: Value,
) -> Result<OpenRequest, ToolError> {
    check
        .check(input)
        .and_then(OpenToolboxArgs::request)
        .map_err(ToolError::InvalidOpenToolbox)
}

/// `open_toolbox {toolbox}`: opens it and describes it.
pub(super) async fn open_named(
    toolboxes: &Toolboxes,
    toolbox: &str,
) -> Result<CallToolResult, ToolError> {
    let boxed = toolboxes.find(toolbox, Context::OpenToolbox)?;
    open(toolboxes, boxed).await?;
    describe(toolboxes, boxed)
}

/// Opens `toolbox` as `open_toolbox` does; the error when it does not open.
pub(crate) async fn open(toolboxes: &Toolboxes, toolbox: &Toolbox) -> Result<(), ToolError> {
    if let Err(conflicts) = toolboxes.open(toolbox).await {
        // A toolbox that does not open leaves no process behind.
        toolboxes.close(toolbox).await;
        return Err(ToolError::AliasConflict {
            toolbox: toolbox.spec.name.clone(),
            conflicts,
        });
    }
    Ok(())
}

/// The metadata of an opened toolbox, or the error when none of its servers lists tools.
pub(crate) fn describe(
    toolboxes: &Toolboxes,
    toolbox: &Toolbox,
) -> Result<CallToolResult, ToolError> {
    let states: Vec<ServerState> = toolbox.servers.iter().map(|slot| slot.state()).collect();
    // A server stopped for idleness started fine, and one not started yet may have its tools
    // in the persisted catalog: their tools are known, and the next call starts them. Only a
    // server that could not start (or never did, and is not remembered) is a failure.
    let failure = |slot: &ServerSlot, state: &ServerState| match state {
        _ if slot.lists_tools_in(state) => None,
        ServerState::Failed(reason) => Some(reason.to_string()),
        _ => Some("not started".to_owned()),
    };
    if toolbox
        .servers
        .iter()
        .zip(&states)
        .all(|(slot, state)| failure(slot, state).is_some())
    {
        let failures = toolbox
            .servers
            .iter()
            .zip(&states)
            .map(|(slot, state)| {
                (
                    slot.spec.name.clone(),
                    failure(slot, state).unwrap_or_default(),
                )
            })
            .collect();
        return Err(ToolError::OpenFailed {
            toolbox: toolbox.spec.name.clone(),
            failures,
        });
    }
    let catalogs: Vec<_> = toolbox
        .servers
        .iter()
        .map(|slot| toolboxes.tools_of(slot))
        .collect();
    let mut servers = Vec::with_capacity(states.len());
    for ((slot, state), catalog) in toolbox.servers.iter().zip(&states).zip(&catalogs) {
        let name = slot.spec.name.as_str();
        let source = slot.catalog.source();
        match failure(slot, state) {
            None => servers.push(ServerSummary {
                name,
                status: match state {
                    ServerState::Ready(_) => ServerStatus::Ready,
                    ServerState::NotStarted if slot.is_starting() => ServerStatus::Starting,
                    _ => ServerStatus::Idle,
                },
                error: None,
                catalog: Some(match source {
                    Source::Remembered { nearest: false, .. } => "cached",
                    Source::Remembered { nearest: true, .. } => "cached-fewer-offers",
                    _ => "live",
                }),
                catalog_age: match source {
                    Source::Remembered { listed_at, .. } => {
                        Some(listed_at.elapsed().map_or(0, |age| age.as_secs()))
                    }
                    _ => None,
                },
                changes: slot.catalog.changes_since_shown().map(|mut changes| {
                    let withheld = toolboxes.withheld();
                    for names in [
                        &mut changes.added,
                        &mut changes.removed,
                        &mut changes.changed,
                    ] {
                        names
                            .retain(|tool| !withheld.covers(&slot.toolbox, Some(name), Some(tool)));
                    }
                    changes
                }),
                tools: catalog
                    .iter()
                    .map(|entry| ToolSummary {
                        name: entry.name(),
                        alias: entry.alias.as_deref(),
                        title: entry.title.as_deref(),
                        description: entry.description.as_deref(),
                        input_schema: Some(entry.tool.input_schema.as_ref())
                            .filter(|schema| declares_arguments(schema)),
                        output_schema: entry.tool.output_schema.as_deref(),
                        annotations: entry.tool.annotations.as_ref(),
                        execution: entry.execution.as_deref(),
                        tags: &entry.tags,
                    })
                    .collect(),
            }),
            Some(error) => servers.push(ServerSummary {
                name,
                status: ServerStatus::Failed,
                error: Some(error),
                catalog: None,
                catalog_age: None,
                changes: None,
                tools: Vec::new(),
            }),
        }
    }
    let opened = Opened {
        toolbox: &toolbox.spec.name,
        servers,
        // Config warnings name overrides, which may be of tools withheld from this caller.
        warnings: match toolboxes.withheld().is_empty() {
            true => toolbox.warnings(),
            false => Vec::new(),
        },
    };
    let structured = serde_json::to_value(&opened).unwrap_or(Value::Null);
    let text = structured.to_string();
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = Some(structured);
    Ok(result)
}

/// False for an input schema that only says "an object" (`{"type":"object"}`, with at most an
/// empty `properties` and a `$schema` dialect): it tells the agent nothing, and leaving it out
/// saves about 8 tokens a tool. Anything more (a property, `required`, `additionalProperties`…)
/// is kept whole.
pub(crate) fn declares_arguments(schema: &JsonObject) -> bool {
    let bare = schema.get("type").is_some_and(|kind| kind == "object")
        && schema.iter().all(|(key, value)| match key.as_str() {
            "type" | "$schema" => true,
            "properties" => value.as_object().is_some_and(JsonObject::is_empty),
            _ => false,
        });
    !bare
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn declares(schema: Value) -> bool {
        declares_arguments(schema.as_object().expect("an object"))
    }

    #[test]
    fn a_bare_object_schema_declares_no_arguments() {
        assert!(!declares(json!({"type": "object"})));
        assert!(!declares(json!({"type": "object", "properties": {}})));
        assert!(!declares(
            json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object", "properties": {}})
        ));
    }

    #[test]
    fn any_constraint_is_a_declaration() {
        assert!(declares(json!({"type": "object", "properties": {"a": {}}})));
        assert!(declares(
            json!({"type": "object", "additionalProperties": false})
        ));
        assert!(declares(json!({"type": "object", "required": []})));
        assert!(declares(json!({"type": ["object", "null"]})));
        assert!(declares(json!({"type": "object", "properties": true})));
        assert!(declares(json!({"properties": {}})));
    }
}
