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
        // A member written twice, the second time empty: serde_json refuses the duplicate.
        call("").replace(
            r#""name":"use_tool""#,
            r#""_meta":{"progressToken":0},"_meta":{},"name":"use_tool""#,
        ),
        call("").replace(r#""method""#, r#""params":{},"method""#),
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

/// The reader as serde_json's derive would write it, the shape this one takes: what it takes
/// must be read the same way, and what serde_json refuses must not be taken.
mod derived {
    use rmcp::model::ProgressToken;
    use serde::Deserialize;
    use serde_json::value::RawValue;

    use crate::jsonrpc::envelope::present;

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
        #[serde(rename = "_meta", borrow, default, deserialize_with = "present")]
        meta: Option<&'a RawValue>,
    }

    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Meta {
        #[serde(rename = "progressToken")]
        progress_token: ProgressToken,
    }

    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Arguments<'a> {
        #[serde(borrow)]
        tool: Tool<'a>,
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

    /// id, tool, arguments and progress token as `super::read_as` writes them.
    pub(super) fn read(line: &[u8]) -> Option<String> {
        let Line {
            jsonrpc,
            id,
            method,
            params,
        } = serde_json::from_slice(line).ok()?;
        let Arguments { tool, arguments } = params.arguments;
        let plain = jsonrpc == "2.0"
            && method == "tools/call"
            && params.name == super::USE_TOOL
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
        Some(format!(
            "{} {}/{}/{} {:?} {:?}",
            id.get(),
            tool.toolbox,
            tool.server,
            tool.name,
            arguments.map(RawValue::get),
            progress.map(|token| serde_json::json!(token))
        ))
    }
}

fn read_as(line: &[u8]) -> Option<String> {
    read(line).map(|call| {
        format!(
            "{} {} {:?} {:?}",
            call.id.json(),
            call.input.tool_named(),
            call.input.arguments().map(RawValue::get),
            call.progress.map(|token| serde_json::json!(token))
        )
    })
}

const SEEDS: [&str; 5] = [
    r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"_meta":{"progressToken":7},"name":"use_tool","arguments":{"tool":{"toolbox":"a","server":"b","name":"c"},"arguments":{}}}}"#,
    r#" { "params" : { "arguments" : { "arguments" : { "x" : [ 1 , "\u00e9\"" ] } , "tool" : { "name" : "c" , "server" : "b" , "toolbox" : "a" } } , "name" : "use_tool" } , "method" : "tools/call" , "id" : "r-1" , "jsonrpc" : "2.0" } "#,
    r#"{"jsonrpc":"2.0","id":-12,"method":"tools/call","params":{"name":"use_tool","_meta":{"progressToken":"p"},"arguments":{"tool":{"toolbox":"ab","server":"sv","name":"t1"}}}}"#,
    r#"{"jsonrpc":"2.0","id":0,"method":"tools/call","params":{"name":"use_tool","arguments":{"arguments":{"a":{"b":[true,false,null,-1.5e3]}},"tool":{"toolbox":"a","server":"b","name":"c"}},"_meta":{"progressToken":10}}}"#,
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"use_tool\",\"arguments\":{\"tool\":{\"toolbox\":\"é\",\"server\":\"𝄞\",\"name\":\"c\"}}}}\r",
];

/// Bytes that make or break JSON or this shape, put in and replaced at every place of a seed.
const BYTES: &[u8] = b"\"\\{}[],:0123456789-+.eEtfnu \t\n\r\x01a/_";

#[test]
fn what_is_taken_is_what_serde_json_reads_for_every_seed_and_each_of_its_one_byte_changes() {
    let (mut taken, mut serde_takes) = (0, 0);
    for seed in SEEDS {
        let seed = seed.as_bytes();
        assert!(read(seed).is_some(), "{}", String::from_utf8_lossy(seed));
        let mut texts = vec![seed.to_vec()];
        for at in 0..=seed.len() {
            if at < seed.len() {
                let mut cut = seed.to_vec();
                cut.remove(at);
                texts.push(cut);
            }
            for byte in BYTES {
                let mut put = seed.to_vec();
                put.insert(at, *byte);
                texts.push(put);
                if at < seed.len() {
                    let mut replaced = seed.to_vec();
                    replaced[at] = *byte;
                    texts.push(replaced);
                }
            }
        }
        for text in texts {
            let (ours, serde_json) = (read_as(&text), derived::read(&text));
            taken += usize::from(ours.is_some());
            serde_takes += usize::from(serde_json.is_some());
            if ours.is_some() {
                assert_eq!(ours, serde_json, "{}", String::from_utf8_lossy(&text));
            }
        }
    }
    // Of the changed lines serde_json reads as plain calls (white space, another id, another
    // name), this takes all but a few: those with an escape, which go the general way.
    assert!(taken * 100 >= serde_takes * 95, "{taken} of {serde_takes}");
}
