//! The door's two readers of a call: a plain line in one pass (`use_tool_line`), and the general
//! way (`envelope`, then `read_call`). Whatever the first takes, the second reads the same.

use super::*;
use crate::jsonrpc::envelope::Incoming;

/// What a reader found in a line: id, tool, arguments and progress token.
fn described(
    id: &AgentId,
    call: &AgentCall,
    progress: Option<&rmcp::model::ProgressToken>,
) -> String {
    format!(
        "{} {} {:?} {:?}",
        id.json(),
        call.tool_named(),
        call.arguments().map(RawValue::get),
        progress.map(|token| serde_json::json!(token))
    )
}

fn one_pass(line: &[u8]) -> Option<String> {
    let plain = use_tool_line::read(line)?;
    Some(described(
        &plain.id,
        &AgentCall::UseTool(plain.input),
        plain.progress.as_ref(),
    ))
}

/// The general way's reading, and whether it is of a plain call: nothing forwarded in `_meta`,
/// no task, an input `use_tool`'s schema finds valid.
fn general(line: &[u8]) -> Option<(String, bool)> {
    let Incoming::Request { id, method, params } = envelope::read(line) else {
        return None;
    };
    if method != "tools/call" {
        return None;
    }
    let (call, meta, task) = read_call(params?, false)?;
    let AgentCall::UseTool(input) = &call else {
        return None;
    };
    let plain = meta.forwarded.is_empty() && task.is_none() && input.is_valid();
    Some((described(&id, &call, meta.progress.as_ref()), plain))
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
fn a_line_read_in_one_pass_is_read_as_the_general_way_reads_it() {
    let (mut taken, mut general_takes) = (0, 0);
    for seed in SEEDS {
        let seed = seed.as_bytes();
        assert!(
            one_pass(seed).is_some(),
            "{}",
            String::from_utf8_lossy(seed)
        );
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
            let (one_pass, general) = (one_pass(&text), general(&text));
            taken += usize::from(one_pass.is_some());
            general_takes += usize::from(general.as_ref().is_some_and(|(_, plain)| *plain));
            if let Some(one_pass) = one_pass {
                let general = general.map(|(read, _)| read);
                assert_eq!(
                    Some(one_pass),
                    general,
                    "{}",
                    String::from_utf8_lossy(&text)
                );
            }
        }
    }
    // Of the changed lines the general way reads as plain calls (white space, another id,
    // another name), this takes all but a few: those with an escape.
    assert!(
        taken * 100 >= general_takes * 95,
        "{taken} of {general_takes}"
    );
}
