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
