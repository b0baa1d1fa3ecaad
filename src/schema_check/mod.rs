//! Typed input checked against the JSON Schema schemars derives from its Rust type.
//!
//! The schema is generated and compiled once; `check` then reports every violation (not only
//! the first) with a dotted path and a message that says what to change, before serde turns the
//! value into `T`. The config file and the two meta-tools both go through here, so a schema and
//! the type it describes can never disagree.

use std::marker::PhantomData;

use jsonschema::error::{TypeKind, ValidationErrorKind};
use schemars::{JsonSchema, generate::SchemaSettings};
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::suggest;

mod draft7;
mod trimmed;

use draft7::keywords_outside_draft7;
use trimmed::without_annotations;

/// The pattern every toolbox and server name must match. The config's names, tags and aliases
/// are checked against these three, and their violations are explained in words.
pub(crate) const NAME_PATTERN: &str = "^[A-Za-z0-9_-]{1,64}$";
/// The pattern of a tag: lowercase words joined by `-`.
pub(crate) const TAG_PATTERN: &str = "^[a-z0-9][a-z0-9-]*[a-z0-9]$";
/// The pattern of a tool alias.
pub(crate) const ALIAS_PATTERN: &str = "^[a-z0-9_-]{2,64}$";

/// One way an input breaks its schema.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Violation {
    /// Dotted path of the offending value (`tool.name`, `toolboxes.dev.mcpServers.fs.command`);
    /// empty for the top level.
    pub path: String,
    /// What is wrong and how to fix it.
    pub message: String,
    #[serde(skip)]
    pub kind: ViolationKind,
}

impl Violation {
    /// A problem at `path` that is not one of the kinds a caller tells apart.
    pub(crate) fn other(path: String, message: String) -> Self {
        Self {
            path,
            message,
            kind: ViolationKind::Other,
        }
    }
}

/// The few kinds callers treat differently.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ViolationKind {
    UnknownKey,
    Missing,
    Empty,
    /// A `${VAR}` with no value and no default: it makes its server unavailable, not the
    /// config invalid.
    UnsetVariable,
    Other,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

/// A compiled checker for values of type `T`.
pub(crate) struct SchemaCheck<T> {
    schema: Value,
    validator: jsonschema::Validator,
    _type: PhantomData<fn() -> T>,
}

impl<T: JsonSchema + DeserializeOwned> SchemaCheck<T> {
    /// Derives `T`'s schema (inlined, no `$ref`s) and compiles it.
    ///
    /// # Panics
    /// Only if schemars derives a schema jsonschema cannot compile: a bug in a type of this
    /// crate, found by the first test that touches it, never by input.
    pub(crate) fn new() -> Self {
        let schema = schema_of::<T>();
        let validator = compiled(&without_annotations(&schema));
        Self {
            schema,
            validator,
            _type: PhantomData,
        }
    }

    /// The schema, as advertised to clients and editors.
    pub(crate) fn schema(&self) -> &Value {
        &self.schema
    }

    /// Every violation of the schema by `value`, in document order.
    pub(crate) fn violations(&self, value: &Value) -> Vec<Violation> {
        let mut found = Vec::new();
        for error in self.validator.iter_errors(value) {
            describe(&error, &self.schema, value, &mut found);
        }
        found
    }

    /// Checks `value` and deserialises it.
    pub(crate) fn check(&self, value: Value) -> Result<T, Vec<Violation>> {
        // Valid input is the common case (every `use_tool` call): the yes/no check is cheaper
        // than collecting errors, which only happens when there are some.
        if !self.validator.is_valid(&value) {
            return Err(self.violations(&value));
        }
        serde_json::from_value(value).map_err(|error| {
            vec![Violation {
                path: String::new(),
                message: error.to_string(),
                kind: ViolationKind::Other,
            }]
        })
    }
}

/// A schema that checks each value once, compiled for that value alone
/// (`trimmed::for_value`): for a large schema and a small value, such as the config's.
pub(crate) struct CheckOnce {
    schema: Value,
}

impl CheckOnce {
    pub(crate) fn new(schema: Value) -> Self {
        Self { schema }
    }

    /// Every violation of the schema by `value`, in document order.
    pub(crate) fn violations(&self, value: &Value) -> Vec<Violation> {
        let validator = compiled(&trimmed::for_value(
            &without_annotations(&self.schema),
            value,
        ));
        let mut found = Vec::new();
        for error in validator.iter_errors(value) {
            describe(&error, &self.schema, value, &mut found);
        }
        found
    }
}

/// Builds what the compilation of every schema needs first and keeps: jsonschema's validator
/// of draft 7's meta-schema, a fifth of start-up's instructions. A second thread does it while
/// the first reads the command line and the config (`prepare_config_check`).
pub(crate) fn prepare() {
    let _ = compiled(&serde_json::json!({"type": "object"}));
}

/// `schema` compiled.
///
/// # Panics
/// Only if schemars derives a schema jsonschema cannot compile: a bug in a type of this
/// crate, found by the first test that touches it, never by input.
fn compiled(schema: &Value) -> jsonschema::Validator {
    debug_assert_eq!(
        keywords_outside_draft7(schema),
        Vec::<String>::new(),
        "a schema of ours uses keywords draft 7 would ignore"
    );
    #[allow(clippy::expect_used, reason = "the schema comes from our own types")]
    jsonschema::options()
        // Read as draft 7, whose meta-schema is cheap to build: checking a schema against
        // 2020-12's was 8 M of the 13 M instructions of toolshelf's start-up. Our schemas
        // use only keywords that mean the same in both (checked in debug builds).
        .with_draft(jsonschema::Draft::Draft7)
        .should_validate_formats(false)
        .build(schema)
        .expect("schemars produced a schema jsonschema cannot compile")
}

/// The inlined draft 2020-12 schema of `T`, without the `$schema` key.
pub(crate) fn schema_of<T: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft2020_12()
        .with(|settings| {
            settings.inline_subschemas = true;
            settings.meta_schema = None;
        })
        .into_generator();
    generator.into_root_schema_for::<T>().to_value()
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
