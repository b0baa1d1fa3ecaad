//! A child's `result` as it wrote it, owned. One the general way read (`RouteKeys`) is copied out
//! of the line it came in; a plain answer's comes with a copy of that whole line, and the answer
//! to the agent is built in it: the agent's envelope is written over the child's, in front of
//! the result, and `}` and a newline after it. The profile of forwarded large results showed the
//! two copies of the result (out of the line, into the answer) among toolshelf's largest costs;
//! this spares one.
//! The line is copied rather than taken from the reader: a reader whose buffer is taken grows a
//! new one for the next large line, and glibc maps a buffer of 1 MiB or more afresh each time
//! (`main`'s allocator settings), page faults for every large result.

use std::ops::Range;

use serde_json::value::RawValue;

use crate::jsonrpc::line_writer::Line;

#[derive(Debug)]
pub(crate) enum ResultText {
    Copied(Box<RawValue>),
    /// The child's line, newline included, and where the result lies in it. Valid JSON: the
    /// line was checked before it came here (`plain_answer`).
    InLine {
        line: String,
        result: Range<usize>,
    },
}

impl From<Box<RawValue>> for ResultText {
    fn from(raw: Box<RawValue>) -> Self {
        Self::Copied(raw)
    }
}

impl ResultText {
    pub(crate) fn get(&self) -> &str {
        match self {
            Self::Copied(raw) => raw.get(),
            Self::InLine { line, result } => line.get(result.clone()).unwrap_or_default(),
        }
    }

    /// The answer line `start` + the result from byte `skip` on + `}` and a newline, built in
    /// the child's line when `start` fits in front of the result there (the agent's envelope is
    /// usually shorter than the child's, whose id toolshelf counts from 2^40); `None` when it
    /// does not, or the result was copied.
    pub(crate) fn answer_in_place(&mut self, start: &[u8], skip: usize) -> Option<Line> {
        let Self::InLine { line, result } = self else {
            return None;
        };
        let from = (result.start + skip).checked_sub(start.len())?;
        // A whole line has at least the envelope's `}` and its newline after the result.
        if result.end + 2 > line.len() || skip > result.len() {
            return None;
        }
        let end = result.end;
        let mut bytes = std::mem::take(line).into_bytes();
        bytes[from..from + start.len()].copy_from_slice(start);
        bytes[end..end + 2].copy_from_slice(b"}\n");
        bytes.truncate(end + 2);
        Some(Line::starting_at(bytes, from))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn in_line(line: &str, result: &str) -> ResultText {
        let at = line.find(result).expect("the result is in the line");
        ResultText::InLine {
            line: line.to_owned(),
            result: at..at + result.len(),
        }
    }

    #[test]
    fn an_answer_is_built_around_the_result_where_it_fits() {
        let child = "{\"jsonrpc\":\"2.0\",\"id\":1099511627786,\"result\":{\"content\":[]}}\r\n";
        let mut text = in_line(child, r#"{"content":[]}"#);
        assert_eq!(text.get(), r#"{"content":[]}"#);
        let line = text
            .answer_in_place(br#"{"jsonrpc":"2.0","id":"a","result":"#, 0)
            .expect("fits");
        assert_eq!(
            line.bytes(),
            b"{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"result\":{\"content\":[]}}\n"
        );
        // With a member put first: the result's `{` is written over.
        let mut text = in_line(child, r#"{"content":[]}"#);
        let line = text
            .answer_in_place(br#"{"id":7,"result":{"resultType":"complete","#, 1)
            .expect("fits");
        assert_eq!(
            line.bytes(),
            b"{\"id\":7,\"result\":{\"resultType\":\"complete\",\"content\":[]}}\n"
        );
    }

    #[test]
    fn an_envelope_longer_than_the_childs_does_not_fit() {
        let child = "{\"id\":1,\"result\":{}}\n";
        let mut text = in_line(child, "{}");
        let long = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":\"{}\",\"result\":",
            "x".repeat(40)
        );
        assert!(text.answer_in_place(long.as_bytes(), 0).is_none());
        assert_eq!(text.get(), "{}", "the result is still there");
        let mut copied = ResultText::from(RawValue::from_string("{}".into()).expect("JSON"));
        assert!(
            copied
                .answer_in_place(b"{\"id\":1,\"result\":", 0)
                .is_none()
        );
        assert_eq!(copied.get(), "{}");
    }
}
