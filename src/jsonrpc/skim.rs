//! Reading JSON already known to be valid, without checking it again: a `RawValue`'s text, which
//! serde_json checked when it read the line, a line from a child whose values `valid_json` checks
//! as they are passed over (`children::plain_answer`, `Cursor::checked_value`), or the config's
//! schema as the binary holds it (`schema_check::trimmed`, which parses each part it keeps). A
//! value is passed over by finding its end, a string's a word at a time, so a 1 MB tool result is
//! not decoded a second time to read the few members toolshelf needs. On text that is not valid JSON
//! it never panics; it may answer `None` or read nonsense, except in what it checks itself: an
//! object's keys, colons, commas and brackets, which `plain_answer` and
//! `meta_tools::use_tool_line` rely on to walk a line while they check each value they take.

use std::borrow::Cow;

use super::valid_json;

/// A key or string value as written between its quotes, with its escapes undone (`\u0061` and
/// `a` are the same key).
pub(crate) fn unescaped(written: &str) -> Cow<'_, str> {
    // A byte at a time: keys are short, and `str::contains` sets up a vector search.
    if !written.bytes().any(|byte| byte == b'\\') {
        return Cow::Borrowed(written);
    }
    serde_json::from_str::<String>(&format!("\"{written}\""))
        .map_or(Cow::Borrowed(written), Cow::Owned)
}

/// The text of a string value as written (`"…"`), without its quotes; `None` for another value.
pub(crate) fn string(value: &str) -> Option<&str> {
    value.strip_prefix('"')?.strip_suffix('"')
}

/// A place in JSON text from which objects and arrays are read member by member, each value
/// passed over where it is: a value inside another is not passed over twice (once to find
/// where its container ends, once more when it is read), which for a 1 MB text block in a tool
/// result was three scans of the megabyte.
#[derive(Clone)]
pub(crate) struct Cursor<'a> {
    json: &'a str,
    at: usize,
}

impl<'a> Cursor<'a> {
    /// At the first value of `json`.
    pub(crate) fn new(json: &'a str) -> Self {
        Self {
            json,
            at: skip_space(json.as_bytes(), 0),
        }
    }

    /// The value here as written, passed over; `None` at the end or where no value starts.
    pub(crate) fn value(&mut self) -> Option<&'a str> {
        let start = self.at;
        let end = value_end(self.json.as_bytes(), start);
        // Nothing there (`[}` in text that is not JSON): stop rather than go round in place.
        if end == start {
            return None;
        }
        self.at = end;
        self.json.get(start..end)
    }

    /// The value here as written, passed over and checked as JSON in the same pass
    /// (`valid_json`); `None` where no valid value starts.
    pub(crate) fn checked_value(&mut self) -> Option<&'a str> {
        let start = self.at;
        self.at = valid_json::value_end(self.json, start)?;
        self.json.get(start..self.at)
    }

    /// Whether nothing but white space is left.
    pub(crate) fn at_end(&self) -> bool {
        skip_space(self.json.as_bytes(), self.at) == self.json.len()
    }

    /// Whether the value here is `null`.
    pub(crate) fn at_null(&self) -> bool {
        self.json.as_bytes()[self.at.min(self.json.len())..].starts_with(b"null")
    }

    /// Reads the object here: `member` gets each key as written (between its quotes) with the
    /// cursor at its value, which it must pass over. `None` if this is not an object or
    /// `member` says `None`.
    pub(crate) fn object(
        &mut self,
        mut member: impl FnMut(&mut Self, &'a str) -> Option<()>,
    ) -> Option<()> {
        self.container(b'{', b'}', |cursor| {
            let bytes = cursor.json.as_bytes();
            if bytes.get(cursor.at) != Some(&b'"') {
                return None;
            }
            let key_end = string_end(bytes, cursor.at);
            let key = cursor.json.get(cursor.at + 1..key_end.checked_sub(1)?)?;
            let colon = skip_space(bytes, key_end);
            if bytes.get(colon) != Some(&b':') {
                return None;
            }
            cursor.at = skip_space(bytes, colon + 1);
            member(cursor, key)
        })
    }

    /// Reads the array here: `element` is called with the cursor at each element, which it
    /// must pass over. `None` if this is not an array or `element` says `None`.
    pub(crate) fn array(&mut self, element: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
        self.container(b'[', b']', element)
    }

    fn container(
        &mut self,
        open: u8,
        close: u8,
        mut item: impl FnMut(&mut Self) -> Option<()>,
    ) -> Option<()> {
        let bytes = self.json.as_bytes();
        if bytes.get(self.at) != Some(&open) {
            return None;
        }
        self.at = skip_space(bytes, self.at + 1);
        if bytes.get(self.at) == Some(&close) {
            self.at += 1;
            return Some(());
        }
        loop {
            let before = self.at;
            item(self)?;
            // An item that passed over nothing would be read again forever.
            if self.at == before {
                return None;
            }
            self.at = skip_space(bytes, self.at);
            match bytes.get(self.at) {
                Some(b',') => self.at = skip_space(bytes, self.at + 1),
                Some(byte) if *byte == close => {
                    self.at += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }
}

fn skip_space(bytes: &[u8], mut at: usize) -> usize {
    while bytes
        .get(at)
        .is_some_and(|byte| matches!(byte, b' ' | b'\t' | b'\n' | b'\r'))
    {
        at += 1;
    }
    at
}

/// Where the string whose opening quote is at `start` ends (past its closing quote).
fn string_end(bytes: &[u8], start: usize) -> usize {
    let mut at = start + 1;
    while let Some(rest) = bytes.get(at..) {
        at += valid_json::plain_stretch(rest);
        match bytes.get(at) {
            Some(b'"') => return at + 1,
            // A backslash and the character it escapes.
            Some(_) => at += 2,
            None => break,
        }
    }
    bytes.len()
}

/// Where the value that starts at `start` ends.
fn value_end(bytes: &[u8], start: usize) -> usize {
    match bytes.get(start) {
        Some(b'"') => string_end(bytes, start),
        Some(b'{' | b'[') => {
            let mut depth = 0usize;
            let mut at = start;
            while let Some(byte) = bytes.get(at) {
                match byte {
                    b'"' => {
                        at = string_end(bytes, at);
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return at + 1;
                        }
                    }
                    _ => {}
                }
                at += 1;
            }
            bytes.len()
        }
        _ => {
            let mut at = start;
            while bytes.get(at).is_some_and(|byte| {
                !matches!(byte, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
            }) {
                at += 1;
            }
            at
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every member of the object `json` as written, each array read as its elements.
    fn read(json: &str) -> Option<Vec<(String, String)>> {
        let mut read = Vec::new();
        Cursor::new(json).object(|cursor, key| {
            let is_array = cursor.json.as_bytes().get(cursor.at) == Some(&b'[');
            let value = if is_array {
                let mut items = Vec::new();
                cursor.array(|cursor| {
                    items.push(cursor.value()?.to_owned());
                    Some(())
                })?;
                items.join(" | ")
            } else {
                cursor.value()?.to_owned()
            };
            read.push((key.to_owned(), value));
            Some(())
        })?;
        Some(read)
    }

    #[test]
    fn members_and_elements_as_written() {
        let json = r#"{ "a" : [1, {"b": "x\"]}"}, "\\"] , "k\"ey":null,"n":-1.5e3,"o":{}}"#;
        let members = read(json).expect("an object");
        let pairs: Vec<(&str, &str)> = members
            .iter()
            .map(|(key, value)| (key.as_str(), value.as_str()))
            .collect();
        assert_eq!(
            pairs,
            [
                ("a", r#"1 | {"b": "x\"]}"} | "\\""#),
                (r#"k\"ey"#, "null"),
                ("n", "-1.5e3"),
                ("o", "{}")
            ]
        );
        assert_eq!(unescaped(pairs[1].0), r#"k"ey"#);
        assert_eq!(unescaped(r"\u0063ontent"), "content");
        assert_eq!(string(r#""x""#), Some("x"));
        assert_eq!(string("1"), None);
        assert!(Cursor::new(" null").at_null());
        assert_eq!(read("{ }"), Some(Vec::new()));
        assert_eq!(
            Cursor::new("[ ]").array(|cursor| cursor.value().map(drop)),
            Some(())
        );
        assert!(read("[]").is_none());
        assert!(
            Cursor::new("{}")
                .array(|cursor| cursor.value().map(drop))
                .is_none()
        );
    }

    #[test]
    fn text_that_is_not_json_ends_without_a_panic() {
        for broken in [
            r#"{"a"#,
            r#"{"a":"#,
            r#"{"a":"x\"#,
            "{\"a\":[1,",
            "{:",
            "{\"\"",
            "[}",
            "[,}",
            "",
            "{\"a\":1 2}",
        ] {
            let _ = read(broken);
            let _ = Cursor::new(broken).array(|cursor| cursor.value().map(drop));
            let _ = Cursor::new(broken).at_null();
        }
    }
}
