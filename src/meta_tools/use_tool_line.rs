//! The request an agent sends over and over, read in one pass: a plain `use_tool` call, no
//! task, no `_meta` but a progress token (which rmcp's clients put on every call), its
//! identifier three unescaped, non-empty strings. The general way reads
//! such a line four times (the envelope, the call's params, `use_tool`'s input, the identifier
//! as a JSON value for its schema check): a third of toolshelf's instructions per call. A line
//! this reader does not take whole (any other shape, key or type, a duplicate key, an escape)
//! goes the general way, which gives it the same outcome; one it takes gets the outcome the
//! general way would give, the identifier still judged by `use_tool`'s schema (once per
//! identifier: `use_tool::CheckedIdentifiers`).

use rmcp::model::ProgressToken;
use serde::Deserialize;
use serde_json::value::RawValue;

use super::{USE_TOOL, UseToolInput};
use crate::jsonrpc::envelope::{AgentId, present};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Line<'a> {
    #[serde(borrow)]
    jsonrpc: &'a str,
    #[serde(borrow)]
    id: &'a RawValue,
    #[serde(borrow)]
    method: &'a str,
    #[serde(borrow)]
    params: Params<'a>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Params<'a> {
    #[serde(borrow)]
    name: &'a str,
    #[serde(borrow)]
    arguments: Arguments<'a>,
    /// `"_meta": null` is not an absent `_meta`: the general way reads it.
    #[serde(rename = "_meta", borrow, default, deserialize_with = "present")]
    meta: Option<&'a RawValue>,
}

/// A `_meta` this reader takes: a progress token and nothing else. Any other key (the agent's
/// own, which the child gets, or MCP's, which are checked) goes the general way.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Meta {
    /// Read as the general way reads it (`CallMeta::from_raw`): what that refuses (a `null`, a
    /// fraction) sends the line there too.
    #[serde(rename = "progressToken")]
    progress_token: ProgressToken,
}

/// A plain `use_tool` call: the agent's id, the call's input, and the progress token it gave.
pub(crate) struct PlainCall {
    pub id: AgentId,
    pub input: UseToolInput,
    pub progress: Option<ProgressToken>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Arguments<'a> {
    #[serde(borrow)]
    tool: Tool<'a>,
    /// `"arguments": null` is not absent arguments: the general way refuses it.
    #[serde(borrow, default, deserialize_with = "present")]
    arguments: Option<&'a RawValue>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Tool<'a> {
    #[serde(borrow)]
    toolbox: &'a str,
    #[serde(borrow)]
    server: &'a str,
    #[serde(borrow)]
    name: &'a str,
}

/// The `use_tool` call `line` is, if it is a plain one. The line is checked for UTF-8 once,
/// whole: read as bytes, serde_json checks each string of it on its own (a call per string, a
/// fifth of this reader's instructions).
pub(crate) fn read(line: &[u8]) -> Option<PlainCall> {
    let Line {
        jsonrpc,
        id,
        method,
        params,
    } = serde_json::from_str(std::str::from_utf8(line).ok()?).ok()?;
    let Arguments { tool, arguments } = params.arguments;
    let plain = jsonrpc == "2.0"
        && method == "tools/call"
        && params.name == USE_TOOL
        && [tool.toolbox, tool.server, tool.name]
            .iter()
            .all(|part| !part.is_empty())
        && arguments.is_none_or(|arguments| arguments.get().starts_with('{'));
    if !plain {
        return None;
    }
    let progress = match params.meta {
        Some(meta) => Some(
            serde_json::from_str::<Meta>(meta.get())
                .ok()?
                .progress_token,
        ),
        None => None,
    };
    let id = AgentId::from_raw(id)?;
    let input = UseToolInput::from_parts(tool.toolbox, tool.server, tool.name, arguments);
    Some(PlainCall {
        id,
        input,
        progress,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn taken(line: &str) -> Option<String> {
        read(line.as_bytes()).map(|call| {
            let progress = call
                .progress
                .map(|token| format!(" progress {}", serde_json::json!(token)))
                .unwrap_or_default();
            format!("{} {}{progress}", call.id.json(), call.input.tool_named())
        })
    }

    #[test]
    fn a_plain_call_is_taken_and_anything_else_is_left() {
        let call = |rest: &str| {
            format!(
                r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"use_tool","arguments":{{"tool":{{"toolbox":"a","server":"b","name":"c"}}{rest}}}}}}}"#
            )
        };
        assert_eq!(taken(&call("")).as_deref(), Some("7 a/b/c"));
        assert_eq!(
            taken(&call(r#","arguments":{"x":[1]}"#)).as_deref(),
            Some("7 a/b/c")
        );
        // A progress token, as rmcp's clients send one on every call, a number or a string.
        let with_meta = |meta: &str| {
            call("").replace(
                r#""name":"use_tool""#,
                &format!(r#""_meta":{meta},"name":"use_tool""#),
            )
        };
        assert_eq!(
            taken(&with_meta(r#"{"progressToken":0}"#)).as_deref(),
            Some("7 a/b/c progress 0")
        );
        assert_eq!(
            taken(&with_meta(r#"{"progressToken":"p-1"}"#)).as_deref(),
            Some(r#"7 a/b/c progress "p-1""#)
        );
        // Any other `_meta` goes the general way: the agent's own keys (forwarded to the
        // child), MCP's (checked), a token of another type, two tokens, none, or null.
        for meta in [
            r#"{"progressToken":0,"traceparent":"00-1"}"#,
            r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","progressToken":0}"#,
            r#"{"progressToken":1.5}"#,
            r#"{"progressToken":null}"#,
            r#"{"progressToken":0,"progressToken":1}"#,
            "{}",
            "null",
            "[]",
        ] {
            assert_eq!(taken(&with_meta(meta)), None, "{meta}");
        }
        for left in [
            call(r#","arguments":[]"#),
            call(r#","arguments":null"#),
            call(r#","extra":1"#),
            call(r#","arguments":{},"arguments":{}"#),
            call("").replace(r#""c""#, r#""""#),
            call("").replace(r#""c""#, r#""\u0063""#),
            call("").replace(r#""2.0""#, r#""1.0""#),
            call("").replace("use_tool", "open_toolbox"),
            call("").replace("7", "null"),
            call("").replace(r#""name":"use_tool""#, r#""task":{},"name":"use_tool""#),
        ] {
            assert_eq!(taken(&left), None, "{left}");
        }
        // Not UTF-8 (the tool's name a lone 0xff byte): the general way's parse error says where.
        let broken = call("")
            .replace(r#""name":"c""#, r#""name":"?""#)
            .into_bytes();
        let broken: Vec<u8> = broken
            .into_iter()
            .map(|b| if b == b'?' { 0xff } else { b })
            .collect();
        assert!(read(&broken).is_none());
    }
}
