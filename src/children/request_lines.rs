//! The lines toolshelf writes to a child past rmcp: `tools/call` and other requests under ids
//! of its own, and `notifications/cancelled`.

use rmcp::model::JsonObject;
use serde::Serialize;
use serde_json::value::RawValue;

use crate::{
    jsonrpc::call_meta::{ChildMeta, ForwardedMeta},
    jsonrpc::line_writer::{self},
};

/// What a `tools/call` line carries besides its id.
#[derive(Clone, Copy)]
pub(crate) struct CallRequest<'a> {
    pub name: &'a str,
    pub arguments: Option<&'a RawValue>,
    /// What of the agent's `_meta` the child gets.
    pub meta: &'a ForwardedMeta,
    /// The agent's `task`, when it asked for one.
    pub task: Option<&'a RawValue>,
    /// MCP's keys for a child on 2026-07-28.
    pub hop: Option<&'a JsonObject>,
    /// The answers of the previous round, when the child asked for input (2026-07-28).
    pub retry: Option<&'a Retry>,
}

/// A retried `tools/call` of a child on 2026-07-28: the answers to its input requests and the
/// state it asked to have echoed.
pub(crate) struct Retry {
    pub input_responses: JsonObject,
    pub request_state: Option<String>,
}

/// The request line of call `id`; its progress token is its id, the rest of its `_meta` what the
/// agent's call passes on.
pub(crate) fn request_line(id: i64, call: CallRequest<'_>) -> std::io::Result<Vec<u8>> {
    match plain_request_line(id, &call) {
        Some(line) => Ok(line),
        None => encoded_request_line(id, call),
    }
}

/// The request line of the call an agent makes over and over (no `_meta` of its own to pass on,
/// no task, no retry, a child on a revision before 2026-07-28, a name JSON writes as it is),
/// written byte for byte as `encoded_request_line` writes it: serde_json's writing of it was a
/// large part of a call's instructions, most of them in its string escaping.
fn plain_request_line(id: i64, call: &CallRequest<'_>) -> Option<Vec<u8>> {
    let plain = call.meta.is_empty()
        && call.task.is_none()
        && call.hop.is_none()
        && call.retry.is_none()
        && call
            .name
            .bytes()
            .all(|byte| byte >= b' ' && byte != b'"' && byte != b'\\');
    if !plain {
        return None;
    }
    let arguments = call.arguments.map_or("{}", RawValue::get);
    let mut digits = itoa::Buffer::new();
    let id = digits.format(id).as_bytes();
    let mut line = Vec::with_capacity(112 + call.name.len() + arguments.len());
    for part in [
        br#"{"jsonrpc":"2.0","id":"#.as_slice(),
        id,
        br#","method":"tools/call","params":{"name":""#,
        call.name.as_bytes(),
        br#"","arguments":"#,
        arguments.as_bytes(),
        br#","_meta":{"progressToken":"#,
        id,
        b"}}}\n",
    ] {
        line.extend_from_slice(part);
    }
    Some(line)
}

fn encoded_request_line(id: i64, call: CallRequest<'_>) -> std::io::Result<Vec<u8>> {
    #[derive(Serialize)]
    struct Params<'a> {
        name: &'a str,
        arguments: Arguments<'a>,
        #[serde(rename = "_meta")]
        meta: ChildMeta<'a>,
        #[serde(skip_serializing_if = "Option::is_none")]
        task: Option<&'a RawValue>,
        #[serde(rename = "inputResponses", skip_serializing_if = "Option::is_none")]
        input_responses: Option<&'a JsonObject>,
        #[serde(rename = "requestState", skip_serializing_if = "Option::is_none")]
        request_state: Option<&'a str>,
    }
    direct_request_line(
        id,
        "tools/call",
        Params {
            name: call.name,
            arguments: Arguments(call.arguments),
            meta: ChildMeta {
                progress_token: id,
                forwarded: call.meta,
                hop: call.hop,
            },
            task: call.task,
            input_responses: call.retry.map(|retry| &retry.input_responses),
            request_state: call.retry.and_then(|retry| retry.request_state.as_deref()),
        },
        None,
    )
}

/// The request line of a request toolshelf sends past rmcp (id from `FIRST_ID` on); `hop` is
/// its `_meta` for a child on 2026-07-28 (`params` must then be an object without one).
pub(crate) fn direct_request_line(
    id: i64,
    method: &'static str,
    params: impl Serialize,
    hop: Option<&JsonObject>,
) -> std::io::Result<Vec<u8>> {
    #[derive(Serialize)]
    struct WithHop<'a, P> {
        #[serde(flatten)]
        params: P,
        #[serde(rename = "_meta")]
        hop: &'a JsonObject,
    }
    match hop {
        Some(hop) => request(id, method, WithHop { params, hop }),
        None => request(id, method, params),
    }
}

pub(super) fn request(
    id: i64,
    method: &'static str,
    params: impl Serialize,
) -> std::io::Result<Vec<u8>> {
    #[derive(Serialize)]
    struct Request<P> {
        jsonrpc: &'static str,
        id: i64,
        method: &'static str,
        params: P,
    }
    line_writer::encode(&Request {
        jsonrpc: "2.0",
        id,
        method,
        params,
    })
}

/// A call's arguments as the agent wrote them; `{}` when it gave none.
pub(super) struct Arguments<'a>(Option<&'a RawValue>);

impl Serialize for Arguments<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        match self.0 {
            Some(raw) => raw.serialize(serializer),
            None => serializer.serialize_map(Some(0))?.end(),
        }
    }
}

/// `notifications/cancelled` for call `id`.
pub(crate) fn cancel_line(id: i64, reason: &str) -> Option<Vec<u8>> {
    #[derive(Serialize)]
    struct Params<'a> {
        #[serde(rename = "requestId")]
        request_id: i64,
        reason: &'a str,
    }
    line_writer::encode(&Notification {
        jsonrpc: "2.0",
        method: "notifications/cancelled",
        params: Params {
            request_id: id,
            reason,
        },
    })
    .ok()
}

/// A notification line's members.
#[derive(Serialize)]
pub(super) struct Notification<P> {
    pub(super) jsonrpc: &'static str,
    pub(super) method: &'static str,
    pub(super) params: P,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jsonrpc::call_meta::CallMeta;

    #[test]
    fn a_plain_request_line_is_the_encoded_one_byte_for_byte() {
        let forwarded = CallMeta::default().forwarded;
        let arguments = RawValue::from_string(r#"{"a": [1, "é\n"]}"#.to_owned()).expect("JSON");
        for (name, arguments) in [
            ("echo", None),
            ("echo", Some(&*arguments)),
            ("é/𝄞 x\u{7f}", Some(&*arguments)),
        ] {
            let call = CallRequest {
                name,
                arguments,
                meta: &forwarded,
                task: None,
                hop: None,
                retry: None,
            };
            for id in [0, 1_099_511_627_776, i64::MAX] {
                let plain = plain_request_line(id, &call).expect("plain");
                let encoded = encoded_request_line(id, call).expect("encodes");
                assert_eq!(String::from_utf8(plain), String::from_utf8(encoded));
            }
        }
        // Names serde_json escapes are left to it.
        for name in ["a\"b", "a\\b", "a\u{1}b"] {
            let call = CallRequest {
                name,
                arguments: None,
                meta: &forwarded,
                task: None,
                hop: None,
                retry: None,
            };
            assert!(plain_request_line(1, &call).is_none(), "{name}");
        }
    }
}
