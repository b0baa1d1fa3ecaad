//! The agent's `_meta` on a `use_tool` call and what of it reaches the child. Keys of the
//! agent's own (`traceparent`, `tracestate`, vendor keys) pass as written. Keys MCP reserves
//! (a prefix with a `modelcontextprotocol` or `mcp` label: protocol version, client info and
//! capabilities, log level) describe the agent's hop to toolshelf, not toolshelf's hop to the
//! child, and stay behind; so does `progressToken`, which toolshelf replaces with its own and
//! maps back.

use std::borrow::Cow;

use indexmap::IndexMap;
use rmcp::model::{JsonObject, ProgressToken};
use serde::{Serialize, ser::SerializeMap};
use serde_json::value::RawValue;

const PROGRESS_TOKEN: &str = "progressToken";

/// What a call's `_meta` asks of toolshelf and passes to the child.
#[derive(Default)]
pub(crate) struct CallMeta {
    pub progress: Option<ProgressToken>,
    pub forwarded: ForwardedMeta,
}

/// The `_meta` entries the child gets, in the agent's order, values as the agent wrote them.
#[derive(Default, Debug)]
pub(crate) struct ForwardedMeta(Vec<(String, Box<RawValue>)>);

impl ForwardedMeta {
    /// The agent passes nothing on.
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl CallMeta {
    /// From the raw `_meta` of a call; `None` when it does not read as an object with a valid
    /// `progressToken`, or when it has keys MCP reserves: those (a per-request protocol version)
    /// are checked on rmcp's request path.
    pub(crate) fn from_raw(raw: &RawValue) -> Option<CallMeta> {
        let entries: IndexMap<Cow<'_, str>, &RawValue> = serde_json::from_str(raw.get()).ok()?;
        let mut meta = CallMeta::default();
        for (key, value) in entries {
            if key == PROGRESS_TOKEN {
                meta.progress = Some(serde_json::from_str(value.get()).ok()?);
            } else if reserved(&key) {
                return None;
            } else {
                meta.forwarded.0.push((key.into_owned(), value.to_owned()));
            }
        }
        Some(meta)
    }

    /// From `_meta` as rmcp decoded it (its request path): reserved keys are dropped.
    pub(crate) fn from_object(meta: &serde_json::Map<String, serde_json::Value>) -> CallMeta {
        let mut call = CallMeta::default();
        for (key, value) in meta {
            if key == PROGRESS_TOKEN {
                call.progress = serde_json::from_value(value.clone()).ok();
            } else if !reserved(key)
                && let Ok(value) = serde_json::value::to_raw_value(value)
            {
                call.forwarded.0.push((key.clone(), value));
            }
        }
        call
    }
}

/// The child's `_meta`: toolshelf's progress token, then the agent's entries.
pub(crate) struct ChildMeta<'a> {
    pub progress_token: i64,
    pub forwarded: &'a ForwardedMeta,
    /// MCP's own keys of toolshelf's hop to a child on 2026-07-28 (its protocol version,
    /// identity and capabilities).
    pub hop: Option<&'a JsonObject>,
}

impl Serialize for ChildMeta<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let hop = self.hop.map_or(0, JsonObject::len);
        let mut map = serializer.serialize_map(Some(1 + self.forwarded.0.len() + hop))?;
        map.serialize_entry(PROGRESS_TOKEN, &self.progress_token)?;
        for (key, value) in &self.forwarded.0 {
            map.serialize_entry(key, value)?;
        }
        for (key, value) in self.hop.into_iter().flatten() {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

/// A key MCP reserves for itself: its prefix (before `/`) has a `modelcontextprotocol` or `mcp`
/// label (`io.modelcontextprotocol/protocolVersion`, `dev.mcp.x/y`).
fn reserved(key: &str) -> bool {
    key.split_once('/').is_some_and(|(prefix, _)| {
        prefix
            .split('.')
            .any(|label| label == "modelcontextprotocol" || label == "mcp")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(text: &str) -> Box<RawValue> {
        RawValue::from_string(text.to_owned()).expect("JSON")
    }

    #[test]
    fn the_agents_keys_pass_as_written_and_mcps_own_do_not() {
        let meta = CallMeta::from_raw(&raw(
            r#"{"traceparent":"00-0af7-01","progressToken":"p1","x.example/n":1.50}"#,
        ))
        .expect("readable");
        assert_eq!(
            meta.progress,
            Some(ProgressToken(rmcp::model::NumberOrString::String(
                "p1".into()
            )))
        );
        let child = serde_json::to_string(&ChildMeta {
            hop: None,
            progress_token: 7,
            forwarded: &meta.forwarded,
        })
        .expect("encode");
        assert_eq!(
            child,
            r#"{"progressToken":7,"traceparent":"00-0af7-01","x.example/n":1.50}"#
        );
        for key in ["io.modelcontextprotocol/protocolVersion", "dev.mcp/x"] {
            let text = format!(r#"{{"{key}":1}}"#);
            assert!(CallMeta::from_raw(&raw(&text)).is_none(), "{key}");
        }
        for key in ["mcpx/a", "example.com/mcp", "modelcontextprotocol"] {
            assert!(!reserved(key), "{key}");
        }
        assert!(CallMeta::from_raw(&raw(r#"{"progressToken":[1]}"#)).is_none());
        assert!(CallMeta::from_raw(&raw("[]")).is_none());
    }

    #[test]
    fn rmcps_decoded_meta_loses_only_reserved_keys() {
        let object = serde_json::json!({
            "io.modelcontextprotocol/clientInfo": {"name": "agent"},
            "progressToken": 3,
            "traceparent": "00-ab-01",
        });
        let meta = CallMeta::from_object(object.as_object().expect("object"));
        assert!(meta.progress.is_some());
        assert_eq!(meta.forwarded.0.len(), 1);
        assert_eq!(meta.forwarded.0[0].0, "traceparent");
    }
}
