//! A child's `tools/call` result as the child encoded it. It is forwarded byte for byte, never
//! decoded into typed content and encoded again, with one exception the protocol requires:
//! `resultType`, which sessions on protocol 2026-07-28 or later must carry and earlier ones never
//! see, is set for the agent's session whatever the child's session said; and a
//! `structuredContent` that is not an object (allowed from 2026-07-28 on) reaches an agent on an
//! earlier revision as the first text block instead, as rmcp 3.11 does for its own servers.

use std::borrow::Cow;

use indexmap::IndexMap;
use serde::Deserialize;
use serde_json::value::RawValue;

use super::result_text::ResultText;
use crate::jsonrpc::{line_writer::Line, skim};

/// A tool result's discriminator on protocol 2026-07-28 and later.
const COMPLETE: &str = "complete";

#[derive(Debug)]
pub(crate) struct ToolResultJson {
    raw: ResultText,
    /// The child wrote `"resultType": "complete"`.
    has_result_type: bool,
    /// The child's `structuredContent` is there and is not a JSON object.
    non_object_output: bool,
    /// `isError: true`.
    is_error: bool,
}

impl ToolResultJson {
    /// Checks the shape of a tool result: an object whose `content`, if any, is a list of
    /// objects with a string `type`, whose `isError`, if any, is a boolean, and whose
    /// `resultType`, if any, is `"complete"` (the other kinds answer requests toolshelf never
    /// makes); none of these four written twice. Anything else comes back as it was. `raw` is
    /// valid JSON (checked with the line it came in: `ResultText`), so it is skimmed, not
    /// decoded again: a 1 MB text block is passed over a word at a time.
    pub(crate) fn check(raw: ResultText) -> Result<Self, ResultText> {
        let Some(shape) = Shape::read(raw.get()) else {
            return Err(raw);
        };
        Ok(Self {
            raw,
            has_result_type: shape.has_result_type,
            non_object_output: shape.non_object_output,
            is_error: shape.is_error,
        })
    }

    /// The child said the call failed (`isError: true`).
    pub(crate) fn is_error(&self) -> bool {
        self.is_error
    }

    /// The JSON as the child wrote it.
    pub(crate) fn json(&self) -> &str {
        self.raw.get()
    }

    /// The answer line: `start` (the answer's envelope up to its result, e.g.
    /// `{"jsonrpc":"2.0","id":7,"result":`), the result as `encode_into` writes it, `}` and a
    /// newline; built around the result in the child's line where it can be (`ResultText`).
    pub(crate) fn answer_line(
        mut self,
        mut start: Vec<u8>,
        with_result_type: bool,
    ) -> serde_json::Result<Line> {
        let envelope = start.len();
        let skip = match (with_result_type, self.has_result_type) {
            (false, _) if self.non_object_output => None,
            (true, false) => {
                let empty = self.json()[1..].trim_start().starts_with('}');
                start.extend_from_slice(br#"{"resultType":"complete""#);
                if !empty {
                    start.push(b',');
                }
                Some(1)
            }
            (false, true) => None,
            _ => Some(0),
        };
        if let Some(line) = skip.and_then(|skip| self.raw.answer_in_place(&start, skip)) {
            return Ok(line);
        }
        start.truncate(envelope);
        self.encode_into(&mut start, with_result_type)?;
        start.extend_from_slice(b"}\n");
        Ok(start.into())
    }

    /// Appends the result to `out`, with `"resultType": "complete"` if and only if
    /// `with_result_type` (the agent's session is on protocol 2026-07-28 or later).
    fn encode_into(&self, out: &mut Vec<u8>, with_result_type: bool) -> serde_json::Result<()> {
        let json = self.json();
        if !with_result_type && self.non_object_output {
            return legacy_output(json, out);
        }
        match (with_result_type, self.has_result_type) {
            (true, false) => {
                let rest = &json[1..];
                out.reserve(json.len() + 32);
                out.extend_from_slice(br#"{"resultType":"complete""#);
                if !rest.trim_start().starts_with('}') {
                    out.push(b',');
                }
                out.extend_from_slice(rest.as_bytes());
            }
            (false, true) => {
                // Rare: a child on a newer protocol than the agent. Only the top level is read.
                let mut fields: IndexMap<Cow<'_, str>, &RawValue> = serde_json::from_str(json)?;
                fields.shift_remove("resultType");
                serde_json::to_writer(out, &fields)?;
            }
            _ => {
                // Room for the envelope's end too, so a large result is copied once.
                out.reserve(json.len() + 8);
                out.extend_from_slice(json.as_bytes());
            }
        }
        Ok(())
    }
}

/// What `check` reads of a result.
#[derive(Default)]
struct Shape {
    has_result_type: bool,
    non_object_output: bool,
    is_error: bool,
}

impl Shape {
    fn read(json: &str) -> Option<Self> {
        const KEYS: [&str; 4] = ["content", "isError", "resultType", "structuredContent"];
        let mut seen = [false; KEYS.len()];
        let mut shape = Self::default();
        skim::Cursor::new(json).object(|cursor, key| {
            let Some(slot) = KEYS.iter().position(|known| *known == skim::unescaped(key)) else {
                return cursor.value().map(drop);
            };
            if std::mem::replace(&mut seen[slot], true) {
                return None;
            }
            // Each of the four may be null: the same as absent.
            if cursor.at_null() {
                return cursor.value().map(drop);
            }
            match KEYS[slot] {
                "content" => cursor.array(|block| {
                    let mut types = 0;
                    block.object(|member, key| {
                        let value = member.value()?;
                        if skim::unescaped(key) == "type" {
                            skim::string(value)?;
                            types += 1;
                        }
                        Some(())
                    })?;
                    (types == 1).then_some(())
                }),
                "isError" => {
                    shape.is_error = match cursor.value()? {
                        "true" => true,
                        "false" => false,
                        _ => return None,
                    };
                    Some(())
                }
                "resultType" => {
                    let value = cursor.value()?;
                    if skim::string(value).map(skim::unescaped).as_deref() != Some(COMPLETE) {
                        return None;
                    }
                    shape.has_result_type = true;
                    Some(())
                }
                _ => {
                    shape.non_object_output = !cursor.value()?.starts_with('{');
                    Some(())
                }
            }
        })?;
        Some(shape)
    }
}

/// `json` for an agent before 2026-07-28, which requires `structuredContent` to be an object:
/// without `resultType` and with the non-object value moved to the first text block, unless that
/// block already holds the same value (clients read a typed result from there).
fn legacy_output(json: &str, out: &mut Vec<u8>) -> serde_json::Result<()> {
    #[derive(Deserialize)]
    struct Text {
        #[serde(rename = "type")]
        kind: String,
        text: String,
    }
    let mut fields: IndexMap<Cow<'_, str>, &RawValue> = serde_json::from_str(json)?;
    fields.shift_remove("resultType");
    let Some(value) = fields.shift_remove("structuredContent") else {
        return serde_json::to_writer(out, &fields);
    };
    let value: serde_json::Value = serde_json::from_str(value.get())?;
    let mut content: Vec<&RawValue> = match fields.get("content") {
        Some(content) => serde_json::from_str(content.get())?,
        None => Vec::new(),
    };
    let held = content.first().is_some_and(|first| {
        serde_json::from_str::<Text>(first.get()).is_ok_and(|block| {
            block.kind == "text"
                && serde_json::from_str::<serde_json::Value>(&block.text).is_ok_and(|v| v == value)
        })
    });
    let block;
    if !value.is_null() && !held {
        block = serde_json::value::to_raw_value(
            &serde_json::json!({ "type": "text", "text": value.to_string() }),
        )?;
        content.insert(0, &block);
    }
    let content = serde_json::value::to_raw_value(&content)?;
    fields.insert(Cow::Borrowed("content"), &content);
    serde_json::to_writer(out, &fields)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(text: &str) -> Result<ToolResultJson, ResultText> {
        ToolResultJson::check(RawValue::from_string(text.to_owned()).expect("JSON").into())
    }

    /// An answer built in the child's line is the answer built anew, whatever the sessions'
    /// revisions and the result.
    #[test]
    fn an_answer_in_the_childs_line_is_the_same_answer() {
        let start = br#"{"jsonrpc":"2.0","id":"call-7","result":"#;
        for text in [
            r#"{"content":[{"type":"text","text":"a \"b\" ü"}],"x":1.50}"#,
            r#"{"content":[],"resultType":"complete"}"#,
            r#"{"content":[],"structuredContent":[1]}"#,
            "{ }",
            "{}",
        ] {
            for with_result_type in [false, true] {
                let line = format!(r#"{{"jsonrpc":"2.0","id":1099511627776,"result":{text}}}"#);
                let at = line.find(text).expect("in the line");
                let in_line = ResultText::InLine {
                    line: format!("{line}\n"),
                    result: at..at + text.len(),
                };
                let answer = |raw: ResultText| {
                    ToolResultJson::check(raw)
                        .expect("a result")
                        .answer_line(start.to_vec(), with_result_type)
                        .expect("encoded")
                        .bytes()
                        .to_vec()
                };
                let copied = RawValue::from_string(text.to_owned()).expect("JSON");
                assert_eq!(
                    String::from_utf8(answer(in_line)),
                    String::from_utf8(answer(copied.into())),
                    "{text}, with resultType: {with_result_type}"
                );
            }
        }
    }

    #[test]
    fn tool_result_shapes() {
        for good in [
            r#"{"content":[{"type":"text","text":"hi"}]}"#,
            r#"{"content":[],"isError":true,"structuredContent":{"a":1},"_meta":{}}"#,
            r#"{"content":[{"type":"some-future-block","x":1}]}"#,
            r#"{"resultType":"complete","content":[]}"#,
            r#"{"content":null,"isError":null,"resultType":null,"structuredContent":null}"#,
            r#"{ "\u0063ontent" : [ {"text":"a \"type\": [", "type" : "text"} ] , "isError" : false }"#,
        ] {
            assert!(result(good).is_ok(), "{good}");
        }
        for bad in [
            r#"[]"#,
            r#"{"content":"hi"}"#,
            r#"{"content":[{"text":"no type"}]}"#,
            r#"{"content":[],"isError":"yes"}"#,
            r#"{"resultType":"input_required","inputRequests":{}}"#,
            r#"{"content":[["text"]]}"#,
            r#"{"content":[{"type":"text","type":"image"}]}"#,
            r#"{"content":[{"type":null}]}"#,
            r#"{"content":[],"content":[]}"#,
            r#"{"isError":true,"isError":false}"#,
            r#"{"resultType":1}"#,
            r#""text""#,
        ] {
            assert!(result(bad).is_err(), "{bad}");
        }
    }

    /// `text` as the agent gets it, with or without `resultType`.
    fn encode(text: &str, with_result_type: bool) -> String {
        let mut out = Vec::new();
        result(text)
            .expect("a result")
            .encode_into(&mut out, with_result_type)
            .expect("encode");
        String::from_utf8(out).expect("utf-8")
    }

    #[test]
    fn result_type_follows_the_agent_session() {
        let plain = r#"{"content":[{"type":"text","text":"a \"b\" ü"}],"x":1.50}"#;
        let typed =
            r#"{"content":[{"type":"text","text":"a \"b\" ü"}],"resultType":"complete","x":1.50}"#;
        assert_eq!(encode(plain, false), plain);
        assert_eq!(encode(typed, true), typed);
        assert_eq!(
            encode(plain, true),
            r#"{"resultType":"complete","content":[{"type":"text","text":"a \"b\" ü"}],"x":1.50}"#
        );
        assert_eq!(encode(typed, false), plain);
        assert_eq!(encode("{ }", true), r#"{"resultType":"complete" }"#);
    }

    #[test]
    fn non_object_output_reaches_a_legacy_agent_as_the_first_text_block() {
        let listed = r#"{"content":[{"type":"text","text":"Found 2"}],"structuredContent":["a","b"],"isError":false}"#;
        assert_eq!(
            encode(listed, true),
            format!(r#"{{"resultType":"complete",{}"#, &listed[1..])
        );
        assert_eq!(
            encode(listed, false),
            r#"{"content":[{"type":"text","text":"[\"a\",\"b\"]"},{"type":"text","text":"Found 2"}],"isError":false}"#
        );
        let held = r#"{"content":[{"type":"text","text":"[1, 2]"}],"structuredContent":[1,2]}"#;
        assert_eq!(
            encode(held, false),
            r#"{"content":[{"type":"text","text":"[1, 2]"}]}"#
        );
        assert_eq!(
            encode(r#"{"structuredContent":7,"resultType":"complete"}"#, false),
            r#"{"content":[{"type":"text","text":"7"}]}"#
        );
        let object = r#"{"content":[],"structuredContent":{"a":[1]}}"#;
        assert_eq!(encode(object, false), object);
    }
}
