//! Reading JSON already known to be valid, without checking it again: a `RawValue`'s text, which
//! serde_json checked when it read the line. A value is passed over by finding its end, a
//! string's a word at a time, so a 1 MB tool result is not decoded a second time to read the
//! few members toolshelf needs. On text that is not valid JSON it never panics; it may answer
//! `None` or read nonsense.

use std::borrow::Cow;

/// The members of the object `json`, as (key as written between its quotes, value as written);
/// `None` if `json` is not an object.
pub(crate) fn members(json: &str) -> Option<Members<'_>> {
    json.starts_with('{').then_some(Members { json, at: 1 })
}

/// The elements of the array `json`, as written; `None` if `json` is not an array.
pub(crate) fn elements(json: &str) -> Option<Elements<'_>> {
    json.starts_with('[').then_some(Elements { json, at: 1 })
}

/// A key or string value as written between its quotes, with its escapes undone (`\u0061` and
/// `a` are the same key).
pub(crate) fn unescaped(written: &str) -> Cow<'_, str> {
    if !written.contains('\\') {
        return Cow::Borrowed(written);
    }
    serde_json::from_str::<String>(&format!("\"{written}\""))
        .map_or(Cow::Borrowed(written), Cow::Owned)
}

/// The text of a string value as written (`"…"`), without its quotes; `None` for another value.
pub(crate) fn string(value: &str) -> Option<&str> {
    value.strip_prefix('"')?.strip_suffix('"')
}

pub(crate) struct Members<'a> {
    json: &'a str,
    at: usize,
}

impl<'a> Iterator for Members<'a> {
    type Item = (&'a str, &'a str);

    fn next(&mut self) -> Option<Self::Item> {
        let bytes = self.json.as_bytes();
        let key_start = skip_space(bytes, self.at);
        if bytes.get(key_start) != Some(&b'"') {
            return None;
        }
        let key_end = string_end(bytes, key_start);
        let colon = skip_space(bytes, key_end);
        let (value, after) = value_at(self.json, skip_space(bytes, colon + 1))?;
        self.at = after;
        let key = self.json.get(key_start + 1..key_end.checked_sub(1)?)?;
        Some((key, value))
    }
}

pub(crate) struct Elements<'a> {
    json: &'a str,
    at: usize,
}

impl<'a> Iterator for Elements<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<Self::Item> {
        let start = skip_space(self.json.as_bytes(), self.at);
        if matches!(self.json.as_bytes().get(start), None | Some(b']')) {
            return None;
        }
        let (value, after) = value_at(self.json, start)?;
        self.at = after;
        Some(value)
    }
}

/// The value that starts at `start`, and where the next member or element starts.
fn value_at(json: &str, start: usize) -> Option<(&str, usize)> {
    let bytes = json.as_bytes();
    let end = value_end(bytes, start);
    // Nothing there (`[}` in text that is not JSON): stop rather than go round in place.
    if end == start {
        return None;
    }
    let value = json.get(start..end)?;
    let after = skip_space(bytes, end);
    let next = if bytes.get(after) == Some(&b',') {
        after + 1
    } else {
        after
    };
    Some((value, next))
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
    while let Some(found) = bytes
        .get(at..)
        .and_then(|rest| memchr::memchr2(b'"', b'\\', rest))
    {
        at += found;
        if bytes[at] == b'"' {
            return at + 1;
        }
        // A backslash and the character it escapes.
        at += 2;
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

    #[test]
    fn members_and_elements_as_written() {
        let json = r#"{ "a" : [1, {"b": "x\"]}"}, "\\"] , "k\"ey":null,"n":-1.5e3,"o":{}}"#;
        let read: Vec<_> = members(json).expect("an object").collect();
        assert_eq!(
            read,
            [
                ("a", r#"[1, {"b": "x\"]}"}, "\\"]"#),
                (r#"k\"ey"#, "null"),
                ("n", "-1.5e3"),
                ("o", "{}")
            ]
        );
        let items: Vec<_> = elements(read[0].1).expect("an array").collect();
        assert_eq!(items, ["1", r#"{"b": "x\"]}"}"#, r#""\\""#]);
        assert_eq!(unescaped(read[1].0), r#"k"ey"#);
        assert_eq!(unescaped(r"\u0063ontent"), "content");
        assert_eq!(string(r#""x""#), Some("x"));
        assert_eq!(string("1"), None);
        assert_eq!(members("{}").expect("an object").count(), 0);
        assert_eq!(elements("[ ]").expect("an array").count(), 0);
        assert!(members("[]").is_none() && elements("{}").is_none());
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
        ] {
            let _ = members(broken).map(Iterator::count);
            let _ = elements(broken).map(Iterator::count);
        }
    }
}
