//! A line from a child that answers a direct call, read without serde_json in one pass: its
//! routing keys read where they are (`skim`), its values checked as JSON as they are passed over
//! (`jsonrpc::valid_json`). serde_json's check of a large result, a word at a time, was most of
//! the instructions toolshelf ran on it. Only the plainest answer is read here; any other line goes
//! the general way (`child_transport`'s `RouteKeys`), which reads this one to the same effect.

use std::ops::Range;

use super::tool_calls::FIRST_ID;
use crate::jsonrpc::{skim::Cursor, valid_json};

/// The id of the direct call `line` answers and where its result lies, if `line` is JSON and
/// an object whose keys are `jsonrpc`, `id` (a direct call's, in plain digits) and `result`,
/// each written without escapes and once; `None` for anything else.
pub(super) fn direct_result(line: &str) -> Option<(i64, Range<usize>)> {
    let (mut id, mut result) = (None, None);
    // The walk checks the keys, colons, commas and brackets; each value is checked here: the id's
    // digits, the others as JSON.
    let mut cursor = Cursor::new(line);
    cursor.object(|cursor, key| {
        match key {
            "jsonrpc" => drop(cursor.checked_value()?),
            "id" if id.is_none() => id = Some(direct_id(cursor.value()?)?),
            "result" if result.is_none() => result = Some(cursor.checked_value()?),
            // `method`, `error`, `params`, a key written twice or with escapes, any other.
            _ => return None,
        }
        Some(())
    })?;
    let (id, result) = (id?, result?);
    if !cursor.at_end() {
        return None;
    }
    let start = result.as_ptr() as usize - line.as_ptr() as usize;
    Some((id, start..start + result.len()))
}

/// The id written as `digits`, if it is a direct call's.
fn direct_id(digits: &str) -> Option<i64> {
    valid_json::plain_integer(digits).filter(|id| *id >= FIRST_ID)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_plain_answer_to_a_direct_call_is_read_here() {
        let line = r#"{"jsonrpc":"2.0","id":1099511627777,"result":{"content":[]}}"#;
        let (id, result) = direct_result(line).expect("a direct result");
        assert_eq!((id, &line[result]), (FIRST_ID + 1, r#"{"content":[]}"#));
        let spaced = r#" { "result" : [1] , "id" : 1099511627776 } "#;
        assert_eq!(
            direct_result(spaced).map(|(id, result)| (id, &spaced[result])),
            Some((FIRST_ID, "[1]"))
        );
        for other in [
            // Not a direct call's id, or not one written plainly.
            r#"{"id":7,"result":{}}"#,
            r#"{"id":1099511627777.0,"result":{}}"#,
            r#"{"id":"1099511627777","result":{}}"#,
            r#"{"id":99999999999999999999,"result":{}}"#,
            r#"{"id":01099511627777,"result":{}}"#,
            // Keys the general way reads, or reads otherwise.
            r#"{"id":1099511627777,"result":{},"error":null}"#,
            r#"{"id":1099511627777,"method":"x","result":{}}"#,
            r#"{"id":1099511627777,"result":{},"result":{}}"#,
            r#"{"\u0069d":1099511627777,"result":{}}"#,
            r#"{"id":1099511627777}"#,
            r#"[1099511627777,{}]"#,
            // Not JSON, though its keys read well.
            "{\"id\":1099511627777,\"result\":{\"text\":\"a\u{1}b\"}}",
            r#"{"id":1099511627777,"result":{"a":01}}"#,
            r#"{"id":1099511627777,"result":{}} x"#,
            r#"{"id":1099511627777,"result":{},}"#,
            r#"{"jsonrpc":2.0.1,"id":1099511627777,"result":{}}"#,
            r#"{"jsonrpc":"2.0" "id":1099511627777,"result":{}}"#,
            r#"{"id":1099511627777,"result":{"a":[1,]}}"#,
            "{\"id\":1099511627777,\"result\":\"\u{1f}\"}",
        ] {
            assert_eq!(direct_result(other), None, "{other}");
        }
    }

    /// What serde_json reads of `line`: its id and its result as written, if it is JSON.
    fn serde_reads(line: &str) -> Option<(i64, String)> {
        let value: serde_json::Value = serde_json::from_str(line).ok()?;
        let result = serde_json::to_string(value.get("result")?).ok()?;
        Some((value.get("id")?.as_i64()?, result))
    }

    #[test]
    fn what_is_read_here_is_what_serde_json_reads_for_each_one_byte_change() {
        const BYTES: &[u8] = b"\"\\{}[],:0123456789-+.eEtfnu \t\n\r\x01a";
        let seed = r#"{"jsonrpc":"2.0","id":1099511627777,"result":{"content":[{"type":"text","text":"h\u00e9 \" x"}],"isError":false}}"#;
        let mut lines = vec![seed.as_bytes().to_vec()];
        for at in 0..=seed.len() {
            for byte in BYTES {
                let mut put = seed.as_bytes().to_vec();
                put.insert(at, *byte);
                lines.push(put);
                if at < seed.len() {
                    let mut replaced = seed.as_bytes().to_vec();
                    replaced[at] = *byte;
                    lines.push(replaced);
                }
            }
        }
        let mut taken = 0;
        for line in lines {
            let Ok(line) = String::from_utf8(line) else {
                continue;
            };
            if let Some((id, result)) = direct_result(&line) {
                taken += 1;
                let ours = serde_json::from_str::<serde_json::Value>(&line[result])
                    .map(|result| (id, serde_json::to_string(&result).expect("encodes")));
                assert_eq!(ours.ok(), serde_reads(&line), "{line}");
            }
        }
        assert!(taken > 1_000, "{taken}");
    }
}
