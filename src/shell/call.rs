//! `toolshelf call TOOLBOX SERVER TOOL [KEY=VALUE | KEY:=JSON]...`: starts only that server,
//! calls the tool once through the same path as `use_tool` (`child_call`), prints the result and
//! stops the server. Text content is printed as text, other blocks as a one-line summary
//! (written to files with `--save-dir`); `--json` prints the whole result as the child wrote it.

use std::{io::Write, path::Path};

use base64::Engine;
use rmcp::model::JsonObject;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::{CommandEnd, arguments, progress::CallProgress};
use std::sync::Arc;

use crate::{
    child_call::{self, CallFailure, CallParts, ChildErrors, Target},
    config::Config,
    error::{Context, ToolError},
    jsonrpc::call_meta::ForwardedMeta,
    session::session_link::SessionLink,
    toolboxes::Toolboxes,
};

/// What `call` was asked.
pub struct ShellCall<'a> {
    pub toolbox: &'a str,
    pub server: &'a str,
    pub tool: &'a str,
    /// `KEY=VALUE` and `KEY:=JSON` pairs, in order.
    pub pairs: &'a [String],
    /// The object of `--args` or `--args-file`, as text.
    pub base: Option<String>,
    pub json: bool,
    pub save_dir: Option<&'a Path>,
}

/// Calls the tool; the result goes to `out`, messages to `err`.
pub async fn call(
    config: &Config,
    request: ShellCall<'_>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> std::io::Result<CommandEnd> {
    let toolboxes = Toolboxes::new(config, Arc::new(SessionLink::default()), None);
    let outcome = call_in(&toolboxes, &request, out, err).await;
    toolboxes.shutdown().await;
    outcome
}

async fn call_in(
    toolboxes: &Toolboxes,
    request: &ShellCall<'_>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> std::io::Result<CommandEnd> {
    let failed = |err: &mut dyn Write, error: ToolError| {
        // Arguments refused before the call is sent are the command line's to fix.
        let outcome = match error {
            ToolError::InvalidUseTool(_) => CommandEnd::Usage,
            _ => CommandEnd::Failed,
        };
        writeln!(err, "error: {}", for_terminal(&error.text())).map(|()| outcome)
    };
    let found = toolboxes
        .find(request.toolbox, Context::UseTool)
        .and_then(|toolbox| toolbox.find_server(request.server));
    let slot = match found {
        Ok(slot) => slot,
        Err(unknown) => return failed(err, unknown),
    };
    let base = match request.base.as_deref().map(arguments::object) {
        Some(Ok(base)) => base,
        Some(Err(problem)) => {
            writeln!(err, "error: {problem}")?;
            return Ok(CommandEnd::Usage);
        }
        None => JsonObject::new(),
    };
    // The schema types `KEY=VALUE`; the remembered list has it without a start, else the start
    // the call needs anyway brings it.
    if !request.pairs.is_empty() && !slot.recall() && slot.live().is_none() {
        let _ = slot.ensure().await;
    }
    let schema = slot
        .catalog
        .resolve(request.tool)
        .and_then(|canonical| {
            let tools = slot.catalog.tools();
            let tool = tools.iter().find(|tool| tool.name() == canonical)?;
            Some(tool.tool.input_schema.clone())
        })
        .unwrap_or_default();
    let arguments = match arguments::typed(base, request.pairs, &schema) {
        Ok(arguments) => arguments,
        Err(problem) => {
            writeln!(err, "error: {problem}")?;
            return Ok(CommandEnd::Usage);
        }
    };
    let raw = serde_json::value::to_raw_value(&arguments).ok();
    let target = Target {
        toolbox: request.toolbox,
        server: request.server,
        slot,
        name: request.tool,
    };
    let label = format!("{}/{} {}", request.toolbox, request.server, request.tool);
    let (shown, progress) = match CallProgress::start(&label) {
        Some((shown, target)) => (Some(shown), Some(target)),
        None => (None, None),
    };
    let parts = CallParts {
        arguments: raw.as_deref(),
        cancel: &CancellationToken::new(),
        progress,
        meta: &ForwardedMeta::default(),
        task: None,
        child_errors: ChildErrors::UrlElicitation,
    };
    let answer = child_call::call(toolboxes, target, parts).await;
    if let Some(shown) = shown {
        shown.finish();
    }
    match answer {
        Ok(result) => {
            if request.json {
                writeln!(out, "{}", result.json())?;
            } else {
                let result: Value = serde_json::from_str(result.json()).unwrap_or_default();
                let shown: &mut dyn Write = if result["isError"] == true { err } else { out };
                print_result(&result, request.save_dir, shown)?;
            }
            Ok(match result.is_error() {
                true => CommandEnd::Failed,
                false => CommandEnd::Done,
            })
        }
        Err(CallFailure::Tool(error)) => failed(err, error),
        Err(CallFailure::Child(error)) => {
            writeln!(
                err,
                "error: the server answered with JSON-RPC error {}: {}",
                error.code.0, error.message
            )?;
            Ok(CommandEnd::Failed)
        }
    }
}

/// Text blocks as text; other blocks summarised (and saved under `save_dir`); a result with no
/// content but `structuredContent` as that JSON.
fn print_result(
    result: &Value,
    save_dir: Option<&Path>,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let blocks = result["content"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    if blocks.is_empty() {
        if let Some(structured) = result.get("structuredContent") {
            writeln!(out, "{structured}")?;
        }
        return Ok(());
    }
    for (index, block) in blocks.iter().enumerate() {
        let kind = block["type"].as_str().unwrap_or_default();
        match kind {
            "text" => {
                // As `cat` would: a text that ends its last line gets no second newline.
                let text = block["text"].as_str().unwrap_or_default();
                write!(out, "{text}")?;
                if !text.ends_with('\n') {
                    writeln!(out)?;
                }
            }
            "image" | "audio" => {
                let mime = block["mimeType"]
                    .as_str()
                    .unwrap_or("application/octet-stream");
                let bytes = decoded(block["data"].as_str().unwrap_or_default());
                let saved = save(save_dir, index, mime, &bytes)?;
                writeln!(out, "[{kind} {mime}, {} bytes{saved}]", bytes.len())?;
            }
            "resource_link" => writeln!(
                out,
                "[resource link {}]",
                block["uri"].as_str().unwrap_or_default()
            )?,
            "resource" => {
                let resource = &block["resource"];
                let uri = resource["uri"].as_str().unwrap_or_default();
                let mime = resource["mimeType"].as_str().unwrap_or("text/plain");
                let bytes = match resource["text"].as_str() {
                    Some(text) => text.as_bytes().to_vec(),
                    None => decoded(resource["blob"].as_str().unwrap_or_default()),
                };
                let saved = save(save_dir, index, mime, &bytes)?;
                writeln!(out, "[resource {uri} {mime}, {} bytes{saved}]", bytes.len())?;
            }
            other => writeln!(out, "[{other}]")?,
        }
    }
    Ok(())
}

fn decoded(base64: &str) -> Vec<u8> {
    base64::engine::general_purpose::STANDARD
        .decode(base64)
        .unwrap_or_default()
}

/// Writes block `index` to `save_dir` as `content-INDEX.EXT`; the text naming the file.
fn save(
    save_dir: Option<&Path>,
    index: usize,
    mime: &str,
    bytes: &[u8],
) -> std::io::Result<String> {
    let Some(folder) = save_dir else {
        return Ok(String::new());
    };
    std::fs::create_dir_all(folder)?;
    let extension = mime
        .split('/')
        .nth(1)
        .and_then(|subtype| subtype.split(['+', ';']).next())
        .filter(|subtype| {
            !subtype.is_empty()
                && subtype
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-')
        })
        .map(|subtype| match subtype {
            "plain" => "txt",
            "jpeg" => "jpg",
            "markdown" => "md",
            other => other,
        })
        .unwrap_or("bin");
    let path = folder.join(format!("content-{index}.{extension}"));
    std::fs::write(&path, bytes)?;
    Ok(format!(", saved to {}", path.display()))
}

/// toolshelf's error text after `error: ` on a terminal: without the agent's leading "Error
/// executing tool: " or "Error ", which read doubled there (`error: Error executing …`).
fn for_terminal(text: &str) -> &str {
    text.strip_prefix("Error executing tool: ")
        .or_else(|| text.strip_prefix("Error "))
        .unwrap_or(text)
}
