//! `tools/list` sent past rmcp, page by page, like the direct tool calls (`tool_calls`): each tool
//! is decoded into rmcp's `Tool` and keeps, beside it, what rmcp's type has no field for
//! (`execution`: whether the tool supports or requires task-augmented calls), so the agent sees
//! it in `open_toolbox`.

use std::time::Duration;

use rmcp::model::JsonObject;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::{
    request_lines::direct_request_line,
    tool_calls::{ChildAnswer, ToolCalls},
};
use crate::{catalog::ListedTool, jsonrpc::line_writer::LineWriter};

/// The most pages one listing reads: a server that keeps returning a cursor is cut off.
const MAX_PAGES: usize = 1000;

/// Lists every tool of the child behind `input`, within `limit` for each page; `hop` is the
/// requests' `_meta` for a child on 2026-07-28.
pub(crate) async fn list_tools(
    calls: &ToolCalls,
    input: &LineWriter,
    limit: Duration,
    hop: Option<&JsonObject>,
) -> Result<Vec<ListedTool>, String> {
    let mut tools = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..MAX_PAGES {
        let Some(mut ticket) = calls.register(None, None, None) else {
            return Err("the connection to the server is closed".into());
        };
        let line =
            request_line(ticket.id, cursor.as_deref(), hop).map_err(|error| error.to_string())?;
        input
            .send(line)
            .await
            .map_err(|_| "the connection to the server is closed".to_owned())?;
        let page = match tokio::time::timeout(limit, &mut ticket.answer).await {
            Ok(Ok(ChildAnswer::Result(page))) => page,
            Ok(Ok(ChildAnswer::Error { code, message, .. })) => {
                return Err(format!("{message} (JSON-RPC error {code})"));
            }
            Ok(Err(_)) => return Err("the connection to the server is closed".into()),
            Err(_) => return Err(format!("no answer to tools/list within {limit:?}")),
        };
        let page: Page = serde_json::from_str(page.get())
            .map_err(|error| format!("the tools/list result does not read: {error}"))?;
        for raw in page.tools {
            tools.push(ListedTool::read(&raw)?);
        }
        match page.next_cursor {
            Some(next) if !next.is_empty() => cursor = Some(next),
            _ => return Ok(tools),
        }
    }
    Err(format!(
        "the server kept answering tools/list with a next page ({MAX_PAGES} pages)"
    ))
}

#[derive(Deserialize)]
struct Page {
    tools: Vec<Box<RawValue>>,
    #[serde(rename = "nextCursor", default)]
    next_cursor: Option<String>,
}

fn request_line(
    id: i64,
    cursor: Option<&str>,
    hop: Option<&JsonObject>,
) -> std::io::Result<Vec<u8>> {
    #[derive(Serialize)]
    struct Params<'a> {
        #[serde(skip_serializing_if = "Option::is_none")]
        cursor: Option<&'a str>,
    }
    direct_request_line(id, "tools/list", Params { cursor }, hop)
}
