//! One line from the agent, read the way JSON-RPC 2.0 asks: leniently enough that every request
//! can be answered under its own id. Only the envelope is decoded here; `params`, `result` and
//! `error` stay raw JSON, so a tool's arguments nested 500 levels deep, a lone surrogate escape
//! or `1e400` never stop toolshelf from finding the request's id. Answers toolshelf writes itself
//! (`error_line`, `response_line`) carry the id exactly as the agent wrote it: JSON-RPC allows
//! any number (`1.5`, `123456789012345678901234567890`), which no typed id can hold.

use std::{borrow::Cow, fmt, sync::Arc};

use rmcp::model::ErrorCode;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::value::RawValue;

/// A request id as the agent wrote it (a JSON string or number, verbatim). Shared, not copied:
/// a call's id is held by the calls in flight, its task and its answer (three copies a call,
/// each an allocation, when it was a `Box<str>`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct AgentId(Arc<str>);

impl AgentId {
    /// The id's JSON text, to write into an answer.
    pub(crate) fn json(&self) -> &str {
        &self.0
    }

    /// `raw` as an id, if JSON-RPC allows it: a string or a number.
    pub(crate) fn from_raw(raw: &RawValue) -> Option<Self> {
        Self::from_json(raw.get())
    }

    /// The id written as `text`, JSON already checked, if JSON-RPC allows it.
    pub(crate) fn from_json(text: &str) -> Option<Self> {
        let allowed = text
            .bytes()
            .next()
            .is_some_and(|first| first == b'"' || first == b'-' || first.is_ascii_digit());
        allowed.then(|| AgentId(text.into()))
    }
}

impl fmt::Display for AgentId {
    /// A string id without its quotes (`d1`), a number as written: for messages.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match serde_json::from_str::<Cow<'_, str>>(&self.0) {
            Ok(text) => f.write_str(&text),
            Err(_) => f.write_str(&self.0),
        }
    }
}

/// What a line is.
#[derive(Debug)]
pub(crate) enum Incoming<'a> {
    /// A request: it must get exactly one answer, under `id`.
    Request {
        id: AgentId,
        method: Cow<'a, str>,
        params: Option<&'a RawValue>,
    },
    /// A notification: never answered.
    Notification {
        method: Cow<'a, str>,
        params: Option<&'a RawValue>,
    },
    /// The agent's answer to a request toolshelf sent (the ids are toolshelf's own).
    Response,
    /// Only whitespace: nothing to do.
    Blank,
    /// Not a message toolshelf can take: answer with this line.
    Refused(Vec<u8>),
    /// Not a message, and nothing to answer (a broken notification).
    Ignored(String),
}

/// The members of a JSON-RPC message, each kept raw. A present `null` is `Some`: `"id": null`
/// is not the same as no id.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow, default, deserialize_with = "present")]
    jsonrpc: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    method: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    params: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    result: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    error: Option<&'a RawValue>,
}

/// A member as written, `null` included (`Some("null")`), for `deserialize_with` beside
/// `default`: serde reads a `null` `Option` as `None`, the same as a member that is not there.
pub(crate) fn present<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(deserializer).map(Some)
}

/// The id (and the reason, if given) of the request a `notifications/cancelled` names.
pub(crate) fn cancelled_request(params: Option<&RawValue>) -> Option<(AgentId, Option<String>)> {
    #[derive(Deserialize)]
    struct Params<'a> {
        #[serde(rename = "requestId", borrow)]
        request_id: &'a RawValue,
        #[serde(default)]
        reason: Option<String>,
    }
    let Params { request_id, reason } = serde_json::from_str(params?.get()).ok()?;
    Some((AgentId::from_raw(request_id)?, reason))
}

/// Reads one line (without its newline).
pub(crate) fn read(line: &[u8]) -> Incoming<'_> {
    let Some(first) = line.iter().find(|byte| !byte.is_ascii_whitespace()) else {
        return Incoming::Blank;
    };
    let parse_error = |error: serde_json::Error| {
        Incoming::Refused(error_line(
            None,
            ErrorCode::PARSE_ERROR,
            &format!("Parse error: {error}; send one JSON-RPC message per line"),
        ))
    };
    if *first != b'{' {
        // serde would read a struct from an array too: only an object is a message.
        if let Err(error) = serde_json::from_slice::<serde::de::IgnoredAny>(line) {
            return parse_error(error);
        }
        let message = match first {
            b'[' => {
                "Invalid request: JSON-RPC batches are not supported (MCP removed them in 2025-06-18); send one message per line"
            }
            _ => "Invalid request: a JSON-RPC message is a JSON object",
        };
        return Incoming::Refused(error_line(None, ErrorCode::INVALID_REQUEST, message));
    }
    match serde_json::from_slice::<Envelope<'_>>(line) {
        Ok(envelope) => classify(envelope),
        Err(error) if error.is_syntax() || error.is_eof() => parse_error(error),
        Err(error) => Incoming::Refused(error_line(
            None,
            ErrorCode::INVALID_REQUEST,
            &format!("Invalid request: {error}"),
        )),
    }
}

fn classify(envelope: Envelope<'_>) -> Incoming<'_> {
    let Envelope {
        jsonrpc,
        id,
        method,
        params,
        result,
        error,
    } = envelope;
    let valid_id = id.and_then(AgentId::from_raw);
    let refuse = |id: Option<&AgentId>, message: &str| {
        Incoming::Refused(error_line(id, ErrorCode::INVALID_REQUEST, message))
    };
    let Some(method) = method else {
        if result.is_some() || error.is_some() {
            return Incoming::Response;
        }
        return refuse(
            valid_id.as_ref(),
            "Invalid request: a message needs a `method` (a request or notification), or a `result` or `error` (a response)",
        );
    };
    let Ok(method) = serde_json::from_str::<Cow<'_, str>>(method.get()) else {
        return match id {
            Some(_) => refuse(
                valid_id.as_ref(),
                "Invalid request: `method` must be a string",
            ),
            None => Incoming::Ignored("a notification whose method is not a string".into()),
        };
    };
    if jsonrpc.map(RawValue::get) != Some(r#""2.0""#) {
        return match id {
            Some(_) => refuse(
                valid_id.as_ref(),
                r#"Invalid request: `jsonrpc` must be "2.0""#,
            ),
            None => Incoming::Ignored(format!("notification '{method}' without jsonrpc \"2.0\"")),
        };
    }
    match (id, valid_id) {
        (None, _) => Incoming::Notification { method, params },
        (Some(_), Some(id)) => Incoming::Request { id, method, params },
        (Some(raw), None) => refuse(
            None,
            &format!(
                "Invalid request: the id must be a string or a number, not {}",
                json_kind(raw)
            ),
        ),
    }
}

/// The id of a message of which only the first bytes are known (the rest was over the size
/// limit): a scan of the top-level members, stopping at the `id` or where the bytes end.
pub(crate) fn id_in_head(head: &[u8]) -> Option<AgentId> {
    let mut at = skip_space(head, 0);
    if head.get(at) != Some(&b'{') {
        return None;
    }
    at += 1;
    loop {
        at = skip_space(head, at);
        let key_end = string_end(head, at)?;
        let key = &head[at..key_end];
        at = skip_space(head, key_end);
        if head.get(at) != Some(&b':') {
            return None;
        }
        at = skip_space(head, at + 1);
        let value_end = value_end(head, at)?;
        if key == br#""id""# {
            let raw = std::str::from_utf8(&head[at..value_end]).ok()?;
            let raw = serde_json::from_str::<&RawValue>(raw).ok()?;
            return AgentId::from_raw(raw);
        }
        at = skip_space(head, value_end);
        if head.get(at) != Some(&b',') {
            return None;
        }
        at += 1;
    }
}

fn skip_space(bytes: &[u8], mut at: usize) -> usize {
    while bytes.get(at).is_some_and(u8::is_ascii_whitespace) {
        at += 1;
    }
    at
}

/// The index after the string that starts at `at`.
fn string_end(bytes: &[u8], at: usize) -> Option<usize> {
    if bytes.get(at) != Some(&b'"') {
        return None;
    }
    let mut index = at + 1;
    loop {
        match bytes.get(index)? {
            b'\\' => index += 2,
            b'"' => return Some(index + 1),
            _ => index += 1,
        }
    }
}

/// The index after the value that starts at `at`, if it ends within `bytes`.
fn value_end(bytes: &[u8], at: usize) -> Option<usize> {
    match bytes.get(at)? {
        b'"' => string_end(bytes, at),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut index = at;
            loop {
                match bytes.get(index)? {
                    b'"' => {
                        index = string_end(bytes, index)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(index + 1);
                        }
                    }
                    _ => {}
                }
                index += 1;
            }
        }
        _ => {
            let length = bytes[at..].iter().position(|byte| {
                matches!(byte, b',' | b'}' | b']') || byte.is_ascii_whitespace()
            })?;
            Some(at + length)
        }
    }
}

fn json_kind(raw: &RawValue) -> &'static str {
    match raw.get().bytes().next() {
        Some(b'n') => "null",
        Some(b't' | b'f') => "a boolean",
        Some(b'[') => "an array",
        Some(b'{') => "an object",
        _ => "this value",
    }
}

/// `{"jsonrpc":"2.0","id":…,"error":{"code":…,"message":…}}` and a newline; `"id":null` when
/// the request's id is not known (JSON-RPC requires the member).
pub(crate) fn error_line(id: Option<&AgentId>, code: ErrorCode, message: &str) -> Vec<u8> {
    #[derive(Serialize)]
    struct Error<'a> {
        code: ErrorCode,
        message: &'a str,
    }
    let mut line = envelope(id, "error", 64 + message.len());
    // A struct of a number and a string always encodes.
    let _ = serde_json::to_writer(&mut line, &Error { code, message });
    line.extend_from_slice(b"}\n");
    line
}

/// `{"jsonrpc":"2.0","id":…,"result":…}` and a newline, the result written by `write_result`.
pub(crate) fn response_line(
    id: &AgentId,
    write_result: impl FnOnce(&mut Vec<u8>) -> serde_json::Result<()>,
) -> serde_json::Result<Vec<u8>> {
    let mut line = response_start(id);
    write_result(&mut line)?;
    line.extend_from_slice(b"}\n");
    Ok(line)
}

/// The start of an answer to `id`, up to its result: `{"jsonrpc":"2.0","id":…,"result":`.
pub(crate) fn response_start(id: &AgentId) -> Vec<u8> {
    envelope(Some(id), "result", 128)
}

/// An error answer with `id` and the error toolshelf or rmcp produced.
pub(crate) fn error_data_line(
    id: Option<&AgentId>,
    error: &rmcp::model::ErrorData,
) -> serde_json::Result<Vec<u8>> {
    let mut line = envelope(id, "error", 128);
    serde_json::to_writer(&mut line, error)?;
    line.extend_from_slice(b"}\n");
    Ok(line)
}

/// The start of an answer, up to its `member`'s value: `{"jsonrpc":"2.0","id":…,"member":`,
/// with `"id":null` when the request's id is not known.
fn envelope(id: Option<&AgentId>, member: &str, capacity: usize) -> Vec<u8> {
    let mut line = Vec::with_capacity(capacity);
    line.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    line.extend_from_slice(id.map_or("null", AgentId::json).as_bytes());
    line.extend_from_slice(b",\"");
    line.extend_from_slice(member.as_bytes());
    line.extend_from_slice(b"\":");
    line
}

#[cfg(test)]
#[path = "envelope_tests.rs"]
mod tests;
