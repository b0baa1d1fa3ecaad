//! Whether text is JSON (RFC 8259), checked in one pass that reads a string's plain stretch
//! with vector instructions: memchr finds its closing quote or next backslash, and the least
//! byte before it, which the compiler computes 16 bytes at a time, says whether a control
//! character is among them. It serves the lines from children that answer calls
//! (`children::plain_answer`): serde_json reads a string a word at a time, which on a large
//! forwarded result was most of what toolshelf ran (docs/performance.md). A value found here is trusted as
//! serde_json's would be (`skim` then reads the text), so this check accepts nothing serde_json
//! refuses; it may refuse what serde_json accepts past it (nesting deeper than `MAX_DEPTH`), and
//! its caller then asks serde_json.

/// The deepest nesting checked here; deeper text is answered `false`.
const MAX_DEPTH: usize = 128;

/// Where the JSON value that starts at byte `start` of `text` ends, if a valid one starts there.
pub(crate) fn value_end(text: &str, start: usize) -> Option<usize> {
    let mut check = Check {
        bytes: text.as_bytes(),
        at: start,
    };
    check.value(0).then_some(check.at)
}

/// The integer `text` writes in plain digits, as JSON writes one (no sign, no leading zero), if
/// it fits an `i64`; `None` for any other text.
pub(crate) fn plain_integer(text: &str) -> Option<i64> {
    let digits = text.bytes().all(|byte| byte.is_ascii_digit());
    (digits && (text == "0" || !text.starts_with('0')))
        .then(|| text.parse().ok())
        .flatten()
}

struct Check<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Check<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    /// A value at `depth` containers deep; the check stops at the first fault.
    fn value(&mut self, depth: usize) -> bool {
        match self.peek() {
            Some(b'"') => self.string(),
            Some(b'{') => depth < MAX_DEPTH && self.members(depth + 1),
            Some(b'[') => depth < MAX_DEPTH && self.elements(depth + 1),
            Some(b't') => self.word(b"true"),
            Some(b'f') => self.word(b"false"),
            Some(b'n') => self.word(b"null"),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => false,
        }
    }

    fn word(&mut self, word: &[u8]) -> bool {
        let found = self.bytes[self.at..].starts_with(word);
        self.at += word.len();
        found
    }

    /// An object's members, from its `{`.
    fn members(&mut self, depth: usize) -> bool {
        self.items(b'}', |check| {
            if check.peek() != Some(b'"') || !check.string() {
                return false;
            }
            check.space();
            if check.peek() != Some(b':') {
                return false;
            }
            check.at += 1;
            check.space();
            check.value(depth)
        })
    }

    /// An array's elements, from its `[`.
    fn elements(&mut self, depth: usize) -> bool {
        self.items(b']', |check| check.value(depth))
    }

    /// Items separated by commas up to `close`, from the opening bracket.
    fn items(&mut self, close: u8, mut item: impl FnMut(&mut Self) -> bool) -> bool {
        self.at += 1;
        self.space();
        if self.peek() == Some(close) {
            self.at += 1;
            return true;
        }
        loop {
            if !item(self) {
                return false;
            }
            self.space();
            match self.peek() {
                Some(b',') => {
                    self.at += 1;
                    self.space();
                }
                Some(byte) if byte == close => {
                    self.at += 1;
                    return true;
                }
                _ => return false,
            }
        }
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`; a digit after a leading `0` is
    /// left for the caller, which refuses it as it refuses anything after a value.
    fn number(&mut self) -> bool {
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        match self.peek() {
            Some(b'0') => self.at += 1,
            Some(b'1'..=b'9') => self.digits(),
            _ => return false,
        }
        if self.peek() == Some(b'.') {
            self.at += 1;
            if !self.some_digits() {
                return false;
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.at += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.at += 1;
            }
            if !self.some_digits() {
                return false;
            }
        }
        true
    }

    fn some_digits(&mut self) -> bool {
        let start = self.at;
        self.digits();
        self.at > start
    }

    fn digits(&mut self) {
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.at += 1;
        }
    }

    /// A string, from its opening quote: no control character, each escape one JSON knows.
    fn string(&mut self) -> bool {
        self.at += 1;
        loop {
            let rest = &self.bytes[self.at..];
            // A short stretch is read a byte at a time, a control character found on the way; the
            // rest of a longer one found by memchr, then checked whole.
            let short = rest
                .iter()
                .take(SHORT)
                .position(|&byte| matches!(byte, b'"' | b'\\') || byte < b' ');
            let plain = match short {
                Some(at) if rest[at] < b' ' => return false,
                Some(at) => at,
                None if rest.len() <= SHORT => rest.len(),
                None => {
                    let long = &rest[SHORT..];
                    let plain = memchr::memchr2(b'"', b'\\', long).unwrap_or(long.len());
                    if !no_control_character(&long[..plain]) {
                        return false;
                    }
                    SHORT + plain
                }
            };
            self.at += plain;
            match self.peek() {
                Some(b'"') => {
                    self.at += 1;
                    return true;
                }
                Some(b'\\') => {
                    self.at += 1;
                    match self.peek() {
                        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => {
                            self.at += 1;
                        }
                        Some(b'u') => {
                            let hex = self.bytes.get(self.at + 1..self.at + 5);
                            if !hex.is_some_and(|hex| hex.iter().all(u8::is_ascii_hexdigit)) {
                                return false;
                            }
                            self.at += 5;
                        }
                        _ => return false,
                    }
                }
                // The text ended inside the string.
                _ => return false,
            }
        }
    }
}

/// Strings up to this long (most keys, ids and names) are read a byte at a time: memchr's
/// vector search costs more to set up than such a string costs to read (a short answer read by
/// memchr alone ran more instructions than serde_json's read of it).
const SHORT: usize = 16;

/// How many bytes of `string` (a string's text from some place on) come before its first quote
/// or backslash, or its length if it has neither.
pub(crate) fn plain_stretch(string: &[u8]) -> usize {
    let short = &string[..string.len().min(SHORT)];
    if let Some(at) = short.iter().position(|byte| matches!(byte, b'"' | b'\\')) {
        return at;
    }
    short.len()
        + memchr::memchr2(b'"', b'\\', &string[short.len()..]).unwrap_or(string.len() - short.len())
}

/// Whether `text` (part of a string) holds no control character: its least byte, a reduction
/// the compiler turns into vector minimums, is a space or more.
fn no_control_character(text: &[u8]) -> bool {
    text.iter().fold(u8::MAX, |least, &byte| least.min(byte)) >= 0x20
}

#[cfg(test)]
#[path = "valid_json_tests.rs"]
mod tests;
