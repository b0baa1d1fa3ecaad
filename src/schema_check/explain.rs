//! A schema's violations in words: each error of jsonschema turned into a dotted path and a
//! message that says what to change.

use jsonschema::error::{TypeKind, ValidationErrorKind};
use serde_json::Value;

use super::{ALIAS_PATTERN, NAME_PATTERN, TAG_PATTERN, Violation, ViolationKind};
use crate::suggest;

/// Every violation of `schema` (as compiled into `validator`) by `value`, in document order.
pub(super) fn violations(
    validator: &jsonschema::Validator,
    schema: &Value,
    value: &Value,
) -> Vec<Violation> {
    let mut found = Vec::new();
    for error in validator.iter_errors(value) {
        describe(&error, schema, value, &mut found);
    }
    found
}

/// Turns a JSON pointer into a readable path: `/a/b~1c/0` in `root` becomes `a.b/c[0]` when
/// `b/c` holds an array.
fn dotted(root: &Value, pointer: &str) -> String {
    let mut path = String::new();
    let mut at = Some(root);
    for segment in pointer.split('/').skip(1) {
        let key = segment.replace("~1", "/").replace("~0", "~");
        match at {
            Some(Value::Array(items)) => {
                path.push_str(&format!("[{key}]"));
                at = key.parse::<usize>().ok().and_then(|index| items.get(index));
            }
            other => {
                if !path.is_empty() {
                    path.push('.');
                }
                at = other.and_then(|value| value.get(&key));
                path.push_str(&key);
            }
        }
    }
    path
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

/// The schema node that holds the keyword an error points at.
fn keyword_parent<'a>(schema: &'a Value, schema_path: &str) -> Option<&'a Value> {
    let parent = schema_path
        .rsplit_once('/')
        .map_or("", |(parent, _)| parent);
    schema.pointer(parent)
}

fn describe(
    error: &jsonschema::ValidationError<'_>,
    schema: &Value,
    root: &Value,
    out: &mut Vec<Violation>,
) {
    let path = dotted(root, error.instance_path().as_str());
    let node = keyword_parent(schema, error.schema_path().as_str());
    let (path, message, kind) = match error.kind() {
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            let allowed: Vec<&str> = node
                .and_then(|node| node.get("properties"))
                .and_then(Value::as_object)
                .map(|properties| properties.keys().map(String::as_str).collect())
                .unwrap_or_default();
            for key in unexpected {
                let hint = match suggest::closest(key, allowed.iter().copied()) {
                    Some(close) => format!(" (did you mean '{close}'?)"),
                    None => String::new(),
                };
                out.push(Violation {
                    path: join(&path, key),
                    message: format!("unknown key{hint}, allowed keys: {}", allowed.join(", ")),
                    kind: ViolationKind::UnknownKey,
                });
            }
            return;
        }
        ValidationErrorKind::MinProperties { .. } => {
            let example = match path.rsplit('.').next() {
                Some("toolboxes") => {
                    ", such as \"dev\": {\"description\": \"…\", \"mcpServers\": {\"fs\": {\"command\": \"npx\", \"args\": [\"-y\", \"@modelcontextprotocol/server-filesystem\", \".\"]}}} (`toolshelf import` makes them from an MCP client's config)"
                }
                Some("mcpServers") => {
                    ", such as \"fs\": {\"command\": \"npx\", \"args\": [\"-y\", \"@modelcontextprotocol/server-filesystem\", \".\"]}"
                }
                _ => "",
            };
            (
                path,
                format!("is empty; add at least one entry{example}"),
                ViolationKind::Empty,
            )
        }
        ValidationErrorKind::Required { property } => {
            let key = property.as_str().unwrap_or_default();
            (
                path,
                format!("missing required key '{key}'"),
                ViolationKind::Missing,
            )
        }
        ValidationErrorKind::Type { kind } => {
            let expected = match kind {
                TypeKind::Single(single) => single.to_string(),
                // `null` is how schemars marks an optional field; it is no advice to give.
                TypeKind::Multiple(set) => set
                    .iter()
                    .map(|one| one.to_string())
                    .filter(|one| one != "null")
                    .collect::<Vec<_>>()
                    .join(" or "),
            };
            (
                path,
                format!(
                    "must be {} {expected}, not {}",
                    article(&expected),
                    json_type(error.instance())
                ),
                ViolationKind::Other,
            )
        }
        ValidationErrorKind::MinLength { limit: 1 } => {
            (path, "must not be empty".to_owned(), ViolationKind::Empty)
        }
        ValidationErrorKind::PropertyNames { error: inner } => {
            let name = inner.instance().as_str().unwrap_or_default().to_owned();
            let message = match inner.kind() {
                ValidationErrorKind::Pattern { pattern } if pattern == NAME_PATTERN => {
                    "invalid name, use 1 to 64 letters, digits, '_' or '-'".to_owned()
                }
                _ => format!("invalid name: {inner}"),
            };
            (join(&path, &name), message, ViolationKind::Other)
        }
        ValidationErrorKind::Pattern { pattern } => {
            let value = error.instance().as_str().unwrap_or_default();
            let message = if pattern == TAG_PATTERN {
                format!(
                    "invalid tag '{value}', use lowercase letters, digits and '-', at least 2 characters, starting and ending with a letter or digit (e.g. \"read-only\")"
                )
            } else if pattern == ALIAS_PATTERN {
                format!(
                    "invalid alias '{value}', use 2 to 64 lowercase letters, digits, '_' or '-' (e.g. \"git_status\")"
                )
            } else {
                format!("'{value}' does not match the pattern {pattern}")
            };
            (path, message, ViolationKind::Other)
        }
        ValidationErrorKind::Minimum { limit } => (
            path,
            format!("must be at least {limit}"),
            ViolationKind::Other,
        ),
        ValidationErrorKind::AnyOf { .. } | ValidationErrorKind::OneOfNotValid { .. } => {
            let accepted = node
                .and_then(|node| node.get("description"))
                .and_then(Value::as_str)
                .map(|text| lowercase_first(text.trim_end_matches('.')))
                .unwrap_or_else(|| "of an accepted shape".to_owned());
            (path, format!("must be {accepted}"), ViolationKind::Other)
        }
        _ => (path, error.to_string(), ViolationKind::Other),
    };
    out.push(Violation {
        path,
        message,
        kind,
    });
}

fn lowercase_first(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}

fn article(word: &str) -> &'static str {
    if word.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    }
}

/// "a string", "an array"…: what `value` is, for messages.
pub(crate) fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointers_become_dotted_paths() {
        let root =
            serde_json::json!({"tool": {"name": 1}, "a/b": {"c~d": [0, {"e": 1}]}, "7": {"8": 0}});
        assert_eq!(dotted(&root, ""), "");
        assert_eq!(dotted(&root, "/tool/name"), "tool.name");
        assert_eq!(dotted(&root, "/a~1b/c~0d/0"), "a/b.c~d[0]");
        assert_eq!(dotted(&root, "/a~1b/c~0d/1/e"), "a/b.c~d[1].e");
        assert_eq!(dotted(&root, "/7/8"), "7.8");
    }
}
