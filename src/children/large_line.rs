//! A large line from a child that answers a direct call, read without serde_json: checked in one
//! pass (`jsonrpc::valid_json`), its routing keys then read where they are (`skim`). serde_json's
//! check of a 1 MB result, a word at a time, was half of the instructions toolshelf ran on it.
//! Only the plainest answer is read here; any other line goes the general way
//! (`child_transport`'s `RouteKeys`), which reads this one to the same effect.

use std::ops::Range;

use super::tool_calls::FIRST_ID;
use crate::jsonrpc::{skim::Cursor, valid_json};

/// The id of the direct call `line` answers and where its result lies, if `line` is JSON and
/// an object whose keys are `jsonrpc`, `id` (a direct call's, in plain digits) and `result`,
/// each written without escapes and once; `None` for anything else.
pub(super) fn direct_result(line: &str) -> Option<(i64, Range<usize>)> {
    let (mut id, mut result) = (None, None);
    // The keys first, which refuses most other lines before the whole line is checked.
    Cursor::new(line).object(|cursor, key| {
        let value = cursor.value()?;
        match key {
            "jsonrpc" => {}
            "id" if id.is_none() => id = Some(direct_id(value)?),
            "result" if result.is_none() => result = Some(value),
            // `method`, `error`, `params`, a key written twice or with escapes, any other.
            _ => return None,
        }
        Some(())
    })?;
    let (id, result) = (id?, result?);
    if !valid_json::is_json(line) {
        return None;
    }
    let start = result.as_ptr() as usize - line.as_ptr() as usize;
    Some((id, start..start + result.len()))
}

/// The id written as `digits`, if it is a direct call's.
fn direct_id(digits: &str) -> Option<i64> {
    if !digits.bytes().all(|byte| byte.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok().filter(|id| *id >= FIRST_ID)
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
        ] {
            assert_eq!(direct_result(other), None, "{other}");
        }
    }
}
