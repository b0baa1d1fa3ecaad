//! Arguments every child can read. A tool's arguments travel as the agent wrote them, and JSON
//! allows what common MCP servers cannot parse: a number beyond a double's range (`1e400`), a
//! lone surrogate escape (`"\ud800"`), nesting deeper than their parser's limit (serde_json, and
//! so every rmcp server, stops at 128 levels for the whole message). Such a server drops the
//! request without a word, and the agent would wait out `callTimeout` for an answer that never
//! comes. So before anything is sent, the arguments are checked against I-JSON (RFC 7493) and a
//! nesting limit, and a call that breaks them is refused at once with the path of what broke.
//!
//! Not refused: numbers that lose precision or underflow to zero (every JSON parser reads
//! them), and raw UTF-8, which is valid already (the agent's line is read as UTF-8).

use std::{borrow::Cow, collections::HashSet};

use crate::{
    jsonrpc::skim,
    schema_check::{Violation, ViolationKind},
};

/// How deep arguments may nest, the arguments object itself being level 1. The request that
/// carries them to a child adds three levels (the message, `params`, `arguments`' own object
/// counts here), so 100 leaves room under the 128 of serde_json's parser.
pub(crate) const MAX_DEPTH: usize = 100;

/// Objects with more keys than this are checked for duplicates through a hash set; smaller ones
/// by comparing with each earlier key, which allocates nothing.
const LINEAR_KEYS: usize = 16;

/// The longest piece of the input quoted in a violation.
const QUOTED: usize = 40;

/// `Ok` when `raw`, a JSON text (already known to be well-formed), is I-JSON nested at most
/// [`MAX_DEPTH`] deep; else the first thing that is not, under the path `arguments…`.
pub(crate) fn check(raw: &str) -> Result<(), Violation> {
    let mut scan = Scan {
        bytes: raw.as_bytes(),
        text: raw,
        at: 0,
        path: Vec::new(),
        keys: Vec::new(),
    };
    scan.value(1)
}

/// One step of the path to a value.
enum Step<'a> {
    /// A key as written between its quotes (escapes not decoded).
    Key(&'a str),
    Index(usize),
}

struct Scan<'a> {
    bytes: &'a [u8],
    text: &'a str,
    at: usize,
    path: Vec<Step<'a>>,
    /// The keys of the objects being read, innermost last (each object remembers where its own
    /// begin), decoded only when they hold an escape.
    keys: Vec<Cow<'a, str>>,
}

impl<'a> Scan<'a> {
    fn value(&mut self, depth: usize) -> Result<(), Violation> {
        self.skip_space();
        match self.bytes.get(self.at) {
            Some(b'{') | Some(b'[') if depth > MAX_DEPTH => Err(self.refuse(format!(
                "nesting goes deeper than {MAX_DEPTH} levels, more than MCP servers can read; send arguments nested at most {MAX_DEPTH} deep"
            ))),
            Some(b'{') => self.object(depth),
            Some(b'[') => self.array(depth),
            Some(b'"') => {
                let start = self.at;
                if let Some(surrogate) = self.string()? {
                    return Err(self.refuse(lone_surrogate("string", &self.text[start..self.at], surrogate)));
                }
                Ok(())
            }
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(_) => self.literal(),
            None => Err(self.unreadable()),
        }
    }

    fn object(&mut self, depth: usize) -> Result<(), Violation> {
        self.at += 1;
        let first_key = self.keys.len();
        // This object's keys once there are more than LINEAR_KEYS of them.
        let mut large: Option<HashSet<Cow<'a, str>>> = None;
        self.skip_space();
        if self.bytes.get(self.at) == Some(&b'}') {
            self.at += 1;
            return Ok(());
        }
        loop {
            self.skip_space();
            let start = self.at;
            if self.bytes.get(start) != Some(&b'"') {
                return Err(self.unreadable());
            }
            let surrogate = self.string()?;
            let quoted = &self.text[start..self.at];
            let key = &quoted[1..quoted.len() - 1];
            if let Some(surrogate) = surrogate {
                return Err(self.refuse(lone_surrogate("key", quoted, surrogate)));
            }
            if self.is_duplicate(first_key, &mut large, skim::unescaped(key)) {
                return Err(self.refuse(format!(
                    "key {} appears twice in one object, and servers keep different ones; send each key once",
                    shortened(quoted)
                )));
            }
            self.skip_space();
            if self.bytes.get(self.at) != Some(&b':') {
                return Err(self.unreadable());
            }
            self.at += 1;
            self.path.push(Step::Key(key));
            self.value(depth + 1)?;
            self.path.pop();
            self.skip_space();
            match self.bytes.get(self.at) {
                Some(b',') => self.at += 1,
                Some(b'}') => {
                    self.at += 1;
                    self.keys.truncate(first_key);
                    return Ok(());
                }
                _ => return Err(self.unreadable()),
            }
        }
    }

    /// Whether `key` was seen before in this object (its keys are `self.keys[first_key..]`, or
    /// `large`); remembers it if not.
    fn is_duplicate(
        &mut self,
        first_key: usize,
        large: &mut Option<HashSet<Cow<'a, str>>>,
        key: Cow<'a, str>,
    ) -> bool {
        if let Some(set) = large {
            return !set.insert(key);
        }
        if self.keys[first_key..].contains(&key) {
            return true;
        }
        self.keys.push(key);
        if self.keys.len() - first_key > LINEAR_KEYS {
            *large = Some(self.keys.drain(first_key..).collect());
        }
        false
    }

    fn array(&mut self, depth: usize) -> Result<(), Violation> {
        self.at += 1;
        self.skip_space();
        if self.bytes.get(self.at) == Some(&b']') {
            self.at += 1;
            return Ok(());
        }
        let mut index = 0;
        loop {
            self.path.push(Step::Index(index));
            self.value(depth + 1)?;
            self.path.pop();
            self.skip_space();
            match self.bytes.get(self.at) {
                Some(b',') => {
                    self.at += 1;
                    index += 1;
                }
                Some(b']') => {
                    self.at += 1;
                    return Ok(());
                }
                _ => return Err(self.unreadable()),
            }
        }
    }

    /// Moves past a string; the first lone surrogate escape in it, if any.
    fn string(&mut self) -> Result<Option<u16>, Violation> {
        self.at += 1;
        let mut lone = None;
        // A high surrogate waiting for its low half, right after it.
        let mut pending: Option<u16> = None;
        loop {
            match self.bytes.get(self.at) {
                Some(b'"') => {
                    self.at += 1;
                    return Ok(lone.or(pending));
                }
                Some(b'\\') if self.bytes.get(self.at + 1) == Some(&b'u') => {
                    let unit = self.hex4(self.at + 2).ok_or_else(|| self.unreadable())?;
                    self.at += 6;
                    match (pending.take(), unit) {
                        (None, 0xD800..=0xDBFF) => pending = Some(unit),
                        (None, 0xDC00..=0xDFFF) => {
                            lone.get_or_insert(unit);
                        }
                        (Some(_), 0xDC00..=0xDFFF) | (None, _) => {}
                        (Some(high), 0xD800..=0xDBFF) => {
                            lone.get_or_insert(high);
                            pending = Some(unit);
                        }
                        (Some(high), _) => {
                            lone.get_or_insert(high);
                        }
                    }
                }
                Some(b'\\') => {
                    if let Some(high) = pending.take() {
                        lone.get_or_insert(high);
                    }
                    self.at += 2;
                }
                Some(_) => {
                    if let Some(high) = pending.take() {
                        lone.get_or_insert(high);
                    }
                    self.at += 1;
                }
                None => return Err(self.unreadable()),
            }
        }
    }

    fn hex4(&self, from: usize) -> Option<u16> {
        let digits = self.text.get(from..from + 4)?;
        u16::from_str_radix(digits, 16).ok()
    }

    fn number(&mut self) -> Result<(), Violation> {
        let start = self.at;
        let mut exponent = false;
        while let Some(byte) = self.bytes.get(self.at) {
            match byte {
                b'0'..=b'9' | b'-' | b'+' | b'.' => {}
                b'e' | b'E' => exponent = true,
                _ => break,
            }
            self.at += 1;
        }
        let literal = &self.text[start..self.at];
        // Without an exponent, only more than 308 digits can go past f64::MAX (1.8e308).
        if !exponent && literal.len() < 300 {
            return Ok(());
        }
        match literal.parse::<f64>() {
            Ok(number) if number.is_finite() => Ok(()),
            Ok(_) => Err(self.refuse(format!(
                "number {} is outside the range of a double, so servers cannot read it; send a number within ±1.7976931348623157e308 (or the value as a string)",
                shortened(literal)
            ))),
            Err(_) => Err(self.unreadable()),
        }
    }

    fn literal(&mut self) -> Result<(), Violation> {
        for word in ["true", "false", "null"] {
            if self.text[self.at..].starts_with(word) {
                self.at += word.len();
                return Ok(());
            }
        }
        Err(self.unreadable())
    }

    fn skip_space(&mut self) {
        while matches!(self.bytes.get(self.at), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    /// Not expected: the text was read as JSON before it came here.
    fn unreadable(&self) -> Violation {
        self.refuse(format!(
            "is not well-formed JSON at byte {}; send plain JSON",
            self.at
        ))
    }

    fn refuse(&self, message: String) -> Violation {
        let mut path = String::from("arguments");
        for step in &self.path {
            match step {
                Step::Key(key) if is_plain(key) => {
                    path.push('.');
                    path.push_str(key);
                }
                Step::Key(key) => {
                    path.push_str("[\"");
                    path.push_str(&shortened(key));
                    path.push_str("\"]");
                }
                Step::Index(index) => path.push_str(&format!("[{index}]")),
            }
        }
        Violation {
            path,
            message,
            kind: ViolationKind::Other,
        }
    }
}

fn lone_surrogate(what: &str, quoted: &str, unit: u16) -> String {
    format!(
        "{what} {} holds a lone surrogate \\u{unit:04x}, which is not Unicode text, so servers cannot read it; send the character as UTF-8 or as a full surrogate pair",
        shortened(quoted)
    )
}

/// A key that reads unquoted in a dotted path.
fn is_plain(key: &str) -> bool {
    !key.is_empty()
        && key
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'-')
}

fn shortened(text: &str) -> String {
    if text.chars().count() <= QUOTED {
        return text.to_owned();
    }
    let head: String = text.chars().take(QUOTED).collect();
    format!("{head}…")
}

#[cfg(test)]
#[path = "i_json_tests.rs"]
mod tests;
