//! `open_toolbox {query}`: the tools of every toolbox that best match what the agent wants to
//! do, best first, with what it needs to call each (its full identifier, description and input
//! schema), starting nothing. The text is a line per tool, its arguments as a signature, which
//! an agent reads in fewer tokens than JSON; `structuredContent` has the whole schemas. A
//! toolbox whose servers never listed their tools (in this run or in the persisted catalog) is
//! not searched, and the answer says so with the fix; a server that could not start is named
//! with its error instead, since opening its toolbox again would not list it. The tools an
//! answer shows are remembered
//! for the session: `use_tool` opens their toolbox on demand.

use rmcp::model::{CallToolResult, ContentBlock, JsonObject};
use serde::Serialize;
use serde_json::{Value, value::RawValue};

use super::{
    open_toolbox::{Search, declares_arguments},
    signature,
};
use crate::{
    catalog::{CatalogTool, Source},
    error::{Context, ToolError},
    search::{Entry, SearchIndex},
    toolboxes::{ServerState, Toolboxes},
};

/// What a search answers.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SearchAnswer<'a> {
    tools: Vec<Match<'a>>,
    /// Toolboxes with a server that never started, so its tools are not known yet.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    not_searched: Vec<&'a str>,
    /// Servers whose tools are not known because they could not start, with why.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    failed: Vec<&'a Failed>,
    #[serde(skip_serializing_if = "Option::is_none")]
    hint: Option<String>,
}

/// A server not searched because it could not start (or the config leaves it unable to).
#[derive(Serialize)]
struct Failed {
    toolbox: String,
    server: String,
    error: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Match<'a> {
    toolbox: &'a str,
    server: &'a str,
    /// The name to call it by: its alias, where it has one.
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<&'a str>,
    /// Left out when it declares no arguments, as in `open_toolbox`'s listing; without its
    /// `$schema` dialect, which tells an agent nothing about the arguments.
    #[serde(skip_serializing_if = "Option::is_none")]
    input_schema: Option<JsonObject>,
    #[serde(skip_serializing_if = "Option::is_none")]
    execution: Option<&'a RawValue>,
}

pub(super) fn search(
    toolboxes: &Toolboxes,
    search: Search,
    code: bool,
) -> Result<CallToolResult, ToolError> {
    if let Some(within) = &search.within {
        toolboxes.find(within, Context::OpenToolbox)?;
    }
    let (index, never_started, failed) = session_index(toolboxes);
    let within = search.within.as_deref();
    let found = index.search_where(&search.query, search.limit, |entry| {
        within.is_none_or(|toolbox| entry.toolbox == toolbox)
    });
    toolboxes
        .search()
        .shown(found.iter().map(|found| found.entry));
    // The tools as listed now, for their schemas (the index keeps only what it ranks on).
    let listed: Vec<(&Entry, Option<CatalogTool>)> = found
        .iter()
        .map(|found| (found.entry, listed_tool(toolboxes, found.entry)))
        .collect();
    let tools = listed
        .iter()
        .map(|(entry, tool)| Match {
            toolbox: &entry.toolbox,
            server: &entry.server,
            name: &entry.name,
            description: Some(entry.description.as_str()).filter(|text| !text.is_empty()),
            input_schema: tool
                .as_ref()
                .map(|tool| tool.tool.input_schema.as_ref())
                .filter(|schema| declares_arguments(schema))
                .map(|schema| {
                    let mut schema = schema.clone();
                    schema.remove("$schema");
                    schema
                }),
            // "forbidden" is what saying nothing means.
            execution: tool
                .as_ref()
                .and_then(|tool| tool.execution.as_deref())
                .filter(|execution| !execution.get().contains("\"forbidden\"")),
        })
        .collect::<Vec<_>>();
    let wanted = |toolbox: &str| within.is_none_or(|within| within == toolbox);
    let not_searched: Vec<&str> = never_started
        .iter()
        .map(String::as_str)
        .filter(|toolbox| wanted(toolbox))
        .collect();
    let failed: Vec<&Failed> = failed
        .iter()
        .filter(|failed| wanted(&failed.toolbox))
        .collect();
    let hint = match (tools.is_empty(), not_searched.first()) {
        (_, Some(toolbox)) => Some(format!(
            "open_toolbox {} lists the tools of a toolbox not searched, and later searches include them.",
            serde_json::json!({ "toolbox": toolbox })
        )),
        (true, None) => Some(
            "No tool matches these words: try other words for what the tool does, or open a toolbox to see all its tools.".to_owned(),
        ),
        (false, None) => None,
    };
    let answer = SearchAnswer {
        tools,
        not_searched,
        failed,
        hint,
    };
    let text = text(&answer, code);
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = Some(serde_json::to_value(&answer).unwrap_or(Value::Null));
    Ok(result)
}

/// The answer as the agent reads it: a line per tool, best first, as
/// `toolbox/server/name(arguments): description` (in code mode, as the script's call:
/// `await call_tool("toolbox/server/name", {arguments}): description`), then what was not
/// searched.
fn text(answer: &SearchAnswer<'_>, code: bool) -> String {
    let mut text = String::new();
    if !answer.tools.is_empty() {
        text.push_str(match code {
            true => "Best first, as the call in a run_code script (? optional): description",
            false => "Best first, as toolbox/server/name(arguments; ? optional): description",
        });
    }
    for tool in &answer.tools {
        let line = match code {
            true => super::code_calls::call_line(
                tool.toolbox,
                tool.server,
                tool.name,
                tool.input_schema.as_ref(),
            ),
            false => {
                let arguments = tool
                    .input_schema
                    .as_ref()
                    .map(signature::arguments)
                    .unwrap_or_default();
                format!(
                    "{}/{}/{}({arguments})",
                    tool.toolbox, tool.server, tool.name
                )
            }
        };
        text.push_str(&format!("\n{line}"));
        if let Some(execution) = tool.execution {
            text.push_str(&format!(" execution: {}", execution.get()));
        }
        if let Some(description) = tool.description {
            text.push_str(&format!(": {}", description.trim()));
        }
    }
    for failed in &answer.failed {
        text.push_str(&format!(
            "\nNot searched: server '{}' of toolbox '{}', which could not start: {}",
            failed.server, failed.toolbox, failed.error
        ));
    }
    if !answer.not_searched.is_empty() {
        text.push_str(&format!(
            "\nNot searched (their tools are not known yet): {}.",
            answer.not_searched.join(", ")
        ));
    }
    if let Some(hint) = &answer.hint {
        text.push_str(&format!("\n{hint}"));
    }
    text.trim_start().to_owned()
}

/// The session's index of every tool its toolboxes know now (from a live server or the
/// persisted catalog); the toolboxes with a server whose tools are not known because it never
/// started here and no earlier run kept its list (opening the toolbox lists it); and the
/// servers whose tools are not known because they could not start (opening again would not).
fn session_index(toolboxes: &Toolboxes) -> (std::sync::Arc<SearchIndex>, Vec<String>, Vec<Failed>) {
    let mut revisions = Vec::new();
    let (mut never_started, mut failed) = (Vec::new(), Vec::new());
    for toolbox in toolboxes.all() {
        for slot in &toolbox.servers {
            slot.recall();
            if slot.catalog.source() == Source::None {
                let error = match (&slot.spec.unavailable, slot.state()) {
                    (Some(reason), _) => Some(reason.clone()),
                    (None, ServerState::Failed(reason)) => Some(reason.to_string()),
                    (None, _) => None,
                };
                match error {
                    Some(error) => failed.push(Failed {
                        toolbox: toolbox.spec.name.clone(),
                        server: slot.spec.name.clone(),
                        error,
                    }),
                    None if !never_started.contains(&toolbox.spec.name) => {
                        never_started.push(toolbox.spec.name.clone());
                    }
                    None => {}
                }
            }
            revisions.push(slot.catalog.revision());
        }
    }
    let index = toolboxes.search().index(revisions, || {
        let mut entries = Vec::new();
        for toolbox in toolboxes.all() {
            for slot in &toolbox.servers {
                for tool in toolboxes.tools_of(slot).iter() {
                    entries.push(Entry::new(&toolbox.spec.name, &slot.spec.name, tool));
                }
            }
        }
        entries
    });
    (index, never_started, failed)
}

/// `entry`'s tool as its server lists it now, if it still does.
fn listed_tool(toolboxes: &Toolboxes, entry: &Entry) -> Option<CatalogTool> {
    let slot = toolboxes.get(&entry.toolbox)?.server(&entry.server)?;
    toolboxes.tool_of(slot, &entry.canonical)
}
