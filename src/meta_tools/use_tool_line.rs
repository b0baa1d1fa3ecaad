//! The request an agent sends over and over, read in one pass: a plain `use_tool` call, no
//! `_meta`, no task, its identifier three unescaped, non-empty strings. The general way reads
//! such a line four times (the envelope, the call's params, `use_tool`'s input, the identifier
//! as a JSON value for its schema check): a third of toolshelf's instructions per call. A line
//! this reader does not take whole (any other shape, key or type, a duplicate key, an escape)
//! goes the general way, which gives it the same outcome; one it takes gets the outcome the
//! general way would give, the identifier still judged by `use_tool`'s schema (once per
//! identifier: `use_tool::CheckedIdentifiers`).

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

/// The id and input of the `use_tool` call `line` is, if it is a plain one. The line is checked
/// for UTF-8 once, whole: read as bytes, serde_json checks each string of it on its own (a call
/// per string, a fifth of this reader's instructions).
pub(crate) fn read(line: &[u8]) -> Option<(AgentId, UseToolInput)> {
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
    let id = AgentId::from_raw(id)?;
    let input = UseToolInput::from_parts(tool.toolbox, tool.server, tool.name, arguments);
    Some((id, input))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn taken(line: &str) -> Option<String> {
        read(line.as_bytes()).map(|(id, input)| format!("{} {}", id.json(), input.tool_named()))
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
            call("").replace(r#""name":"use_tool""#, r#""_meta":{},"name":"use_tool""#),
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
