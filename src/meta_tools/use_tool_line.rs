//! The request an agent sends over and over, read in one pass: a plain `use_tool` call, no
//! task, no `_meta` but a progress token (which rmcp's clients put on every call). The general
//! way reads such a line three times (the envelope, the call's params, `use_tool`'s input):
//! per call, this pass saves what `benches/instructions.py` counts (docs/performance.md). A line
//! this reader does not take whole (any other shape, key or type, a duplicate key, an escape)
//! goes the general way, which gives it the same outcome (`session::door`'s tests compare the
//! two on every one-byte change of their seeds).
//!
//! The envelope is walked where it lies (`skim::Cursor`), not decoded by serde_json: every key
//! must be one of the few known, written plainly and once; every value is one of the texts
//! expected (`"2.0"`), a string without escapes or control characters, an integer in plain
//! digits, the id (checked as JSON), or `use_tool`'s input, passed over and then read by the
//! one reader of that input every path uses (`UseToolInput::plain`, which checks it).

use rmcp::model::{NumberOrString, ProgressToken};

use super::{USE_TOOL, UseToolInput};
use crate::jsonrpc::{
    envelope::AgentId,
    skim::{self, Cursor},
    valid_json,
};

/// A plain `use_tool` call: the agent's id, the call's input, and the progress token it gave.
pub(crate) struct PlainCall {
    pub id: AgentId,
    pub input: UseToolInput,
    pub progress: Option<ProgressToken>,
}

/// What the walk found, each member at most once.
#[derive(Default)]
struct LineMembers<'a> {
    jsonrpc: Option<&'a str>,
    id: Option<&'a str>,
    method: Option<&'a str>,
    params: bool,
    name: Option<&'a str>,
    meta: bool,
    progress: Option<ProgressToken>,
    /// `use_tool`'s input as written, which `UseToolInput::plain` reads.
    input: Option<&'a str>,
}

/// The `use_tool` call `line` is, if it is a plain one.
pub(crate) fn read(line: &[u8]) -> Option<PlainCall> {
    let line = std::str::from_utf8(line).ok()?;
    let mut found = LineMembers::default();
    let mut cursor = Cursor::new(line);
    cursor.object(|cursor, key| found.envelope(cursor, key))?;
    let plain = cursor.at_end()
        && found.jsonrpc == Some(r#""2.0""#)
        && found.method == Some(r#""tools/call""#)
        && found.name.and_then(skim::string) == Some(USE_TOOL);
    if !plain {
        return None;
    }
    let id = AgentId::from_json(found.id?)?;
    Some(PlainCall {
        id,
        input: UseToolInput::plain(found.input?)?,
        progress: found.progress,
    })
}

/// Sets `slot` to `value`; `None` if it was set already (a key written twice).
fn once<T>(slot: &mut Option<T>, value: T) -> Option<()> {
    slot.is_none().then(|| *slot = Some(value))
}

/// Marks an object member read; `None` if it was already.
fn first(seen: &mut bool) -> Option<()> {
    (!std::mem::replace(seen, true)).then_some(())
}

impl<'a> LineMembers<'a> {
    fn envelope(&mut self, cursor: &mut Cursor<'a>, key: &str) -> Option<()> {
        match key {
            "jsonrpc" => once(&mut self.jsonrpc, cursor.value()?),
            "method" => once(&mut self.method, cursor.value()?),
            "id" => once(&mut self.id, cursor.checked_value()?),
            "params" => {
                first(&mut self.params)?;
                cursor.object(|cursor, key| self.params(cursor, key))
            }
            _ => None,
        }
    }

    fn params(&mut self, cursor: &mut Cursor<'a>, key: &str) -> Option<()> {
        match key {
            "name" => once(&mut self.name, cursor.value()?),
            // Passed over here, checked where it is read.
            "arguments" => once(&mut self.input, cursor.value()?),
            // A progress token and nothing else. Any other key (the agent's own, which the
            // child gets, or MCP's, which are checked) goes the general way.
            "_meta" => {
                first(&mut self.meta)?;
                cursor.object(|cursor, key| match key {
                    "progressToken" => once(&mut self.progress, progress_token(cursor.value()?)?),
                    _ => None,
                })?;
                self.progress.as_ref().map(drop)
            }
            _ => None,
        }
    }
}

/// The text of a string value without escapes or control characters, which is then JSON as it
/// stands; `None` for any other value.
fn plain_string(value: &str) -> Option<&str> {
    skim::string(value).filter(|text| text.bytes().all(|byte| byte >= b' ' && byte != b'\\'))
}

/// A progress token as `CallMeta::from_raw` reads it, when it is a plain string or a
/// non-negative integer in plain digits; `None` sends the line the general way (a fraction, a
/// `null`, `1.0`, an escape), which reads it or refuses it.
fn progress_token(value: &str) -> Option<ProgressToken> {
    if let Some(text) = plain_string(value) {
        return Some(ProgressToken(NumberOrString::String(text.into())));
    }
    valid_json::plain_integer(value).map(|number| ProgressToken(NumberOrString::Number(number)))
}

#[cfg(test)]
#[path = "use_tool_line_tests.rs"]
mod tests;
