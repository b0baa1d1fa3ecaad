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

/// A tool result's discriminator on protocol 2026-07-28 and later.
const COMPLETE: &str = "complete";

#[derive(Debug)]
pub(crate) struct ToolResultJson {
    raw: Box<RawValue>,
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
    /// makes). Anything else comes back as it was.
    pub(crate) fn check(raw: Box<RawValue>) -> Result<Self, Box<RawValue>> {
        #[derive(Deserialize)]
        struct Block<'a> {
            #[serde(rename = "type", borrow)]
            _kind: Cow<'a, str>,
        }
        #[derive(Deserialize)]
        struct Shape<'a> {
            #[serde(rename = "content", borrow, default)]
            _content: Option<Vec<Block<'a>>>,
            #[serde(rename = "isError", default)]
            is_error: Option<bool>,
            #[serde(rename = "resultType", borrow, default)]
            result_type: Option<Cow<'a, str>>,
            #[serde(rename = "structuredContent", borrow, default)]
            structured: Option<&'a RawValue>,
        }
        // A struct also reads from a JSON array: require the object.
        if !raw.get().starts_with('{') {
            return Err(raw);
        }
        let Ok(shape) = serde_json::from_str::<Shape<'_>>(raw.get()) else {
            return Err(raw);
        };
        let is_error = shape.is_error == Some(true);
        let non_object_output = shape
            .structured
            .is_some_and(|value| !value.get().starts_with('{'));
        let has_result_type = match shape.result_type.as_deref() {
            None => Some(false),
            Some(COMPLETE) => Some(true),
            Some(_) => None,
        };
        drop(shape);
        let Some(has_result_type) = has_result_type else {
            return Err(raw);
        };
        Ok(Self {
            raw,
            has_result_type,
            non_object_output,
            is_error,
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

    /// Appends the result to `out`, with `"resultType": "complete"` if and only if
    /// `with_result_type` (the agent's session is on protocol 2026-07-28 or later).
    pub(crate) fn encode_into(
        &self,
        out: &mut Vec<u8>,
        with_result_type: bool,
    ) -> serde_json::Result<()> {
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

    fn result(text: &str) -> Result<ToolResultJson, Box<RawValue>> {
        ToolResultJson::check(RawValue::from_string(text.to_owned()).expect("JSON"))
    }

    #[test]
    fn tool_result_shapes() {
        for good in [
            r#"{"content":[{"type":"text","text":"hi"}]}"#,
            r#"{"content":[],"isError":true,"structuredContent":{"a":1},"_meta":{}}"#,
            r#"{"content":[{"type":"some-future-block","x":1}]}"#,
            r#"{"resultType":"complete","content":[]}"#,
        ] {
            assert!(result(good).is_ok(), "{good}");
        }
        for bad in [
            r#"[]"#,
            r#"{"content":"hi"}"#,
            r#"{"content":[{"text":"no type"}]}"#,
            r#"{"content":[],"isError":"yes"}"#,
            r#"{"resultType":"input_required","inputRequests":{}}"#,
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
