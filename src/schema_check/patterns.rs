//! The config's three patterns, each also matched by a few lines of code. jsonschema compiles a
//! `pattern` into a regular expression, and the name pattern's bounded repeat (`{1,64}`) made
//! that 0.4 M instructions of every start: `trimmed` cuts a pattern that every string it applies
//! to matches, so a valid config compiles none, and an invalid one keeps it and its message.

use super::{ALIAS_PATTERN, NAME_PATTERN, TAG_PATTERN};

/// Whether `text` matches `pattern`; `None` for a pattern not known here.
pub(super) fn matches(pattern: &str, text: &str) -> Option<bool> {
    Some(match pattern {
        NAME_PATTERN => is_name(text),
        TAG_PATTERN => is_tag(text),
        ALIAS_PATTERN => {
            (2..=64).contains(&text.len())
                && text
                    .bytes()
                    .all(|byte| is_lower_word_byte(byte) || byte == b'_')
        }
        _ => return None,
    })
}

/// Whether `text` matches `NAME_PATTERN`: 1 to 64 ASCII letters, digits, `_` or `-`.
pub(crate) fn is_name(text: &str) -> bool {
    (1..=64).contains(&text.len())
        && text
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'-')
}

fn is_tag(text: &str) -> bool {
    let bytes = text.as_bytes();
    let alphanumeric = |byte: &u8| byte.is_ascii_lowercase() || byte.is_ascii_digit();
    match bytes {
        [first, middle @ .., last] => {
            alphanumeric(first)
                && alphanumeric(last)
                && middle.iter().copied().all(is_lower_word_byte)
        }
        _ => false,
    }
}

fn is_lower_word_byte(byte: u8) -> bool {
    byte.is_ascii_lowercase() || byte.is_ascii_digit() || byte == b'-'
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// Each matcher agrees with the pattern as jsonschema compiles it.
    #[test]
    fn each_matcher_is_its_pattern() {
        let long = "a".repeat(64);
        let longer = "a".repeat(65);
        let texts = [
            "",
            "a",
            "A",
            "ab",
            "a-b",
            "a_b",
            "-a",
            "a-",
            "_a",
            "a b",
            "a.b",
            "é",
            "aé",
            "a\n",
            "\na",
            "ab\n",
            "Ab",
            "a1",
            "1a",
            "--",
            "__",
            "a--b",
            "x:y",
            long.as_str(),
            longer.as_str(),
        ];
        for pattern in [NAME_PATTERN, TAG_PATTERN, ALIAS_PATTERN] {
            let validator = super::super::compiled(&json!({ "pattern": pattern }));
            for text in texts {
                assert_eq!(
                    matches(pattern, text),
                    Some(validator.is_valid(&json!(text))),
                    "{pattern} on {text:?}"
                );
            }
        }
        assert_eq!(matches("^x$", "x"), None);
    }
}
