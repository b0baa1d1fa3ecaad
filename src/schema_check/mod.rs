//! Typed input checked against the JSON Schema schemars derives from its Rust type.
//!
//! The schema is generated once and compiled at its first check; `check` then reports every
//! violation (not only the first) with a dotted path and a message that says what to change,
//! before serde turns the value into `T`. The config file and the two meta-tools both go
//! through here, so a schema and the type it describes can never disagree (the config's is kept
//! in the binary as text, which a unit test holds to what its types derive).

use std::{marker::PhantomData, sync::OnceLock};

use schemars::{JsonSchema, generate::SchemaSettings};
use serde::de::DeserializeOwned;
use serde_json::Value;

mod draft7;
mod explain;
mod patterns;
mod trimmed;

use draft7::keywords_outside_draft7;
pub(crate) use explain::json_type;
pub(crate) use patterns::is_name;
pub(crate) use trimmed::without_annotations;

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
    /// Compiled at the first check, not at start: the meta-tools' two were a third of the
    /// instructions toolshelf ran before it could answer `initialize`.
    validator: OnceLock<jsonschema::Validator>,
    _type: PhantomData<fn() -> T>,
}

impl<T: JsonSchema + DeserializeOwned> SchemaCheck<T> {
    /// Derives `T`'s schema (inlined, no `$ref`s).
    pub(crate) fn new() -> Self {
        Self {
            schema: schema_of::<T>(),
            validator: OnceLock::new(),
            _type: PhantomData,
        }
    }

    /// The compiled schema.
    ///
    /// # Panics
    /// Only if schemars derives a schema jsonschema cannot compile: a bug in a type of this
    /// crate, found by the first test that touches it, never by input.
    fn validator(&self) -> &jsonschema::Validator {
        self.validator
            .get_or_init(|| compiled(&without_annotations(&self.schema)))
    }

    /// The schema, as advertised to clients and editors.
    pub(crate) fn schema(&self) -> &Value {
        &self.schema
    }

    /// Every violation of the schema by `value`, in document order.
    pub(crate) fn violations(&self, value: &Value) -> Vec<Violation> {
        explain::violations(self.validator(), &self.schema, value)
    }

    /// Checks `value` and deserialises it.
    pub(crate) fn check(&self, value: Value) -> Result<T, Vec<Violation>> {
        // Valid input is the common case (every `use_tool` call): the yes/no check is cheaper
        // than collecting errors, which only happens when there are some.
        if !self.validator().is_valid(&value) {
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
    /// The schema's text without its annotations (`without_annotations`): all a check reads.
    checked: &'static str,
    /// The whole schema, annotations included, which only messages read (an `anyOf`'s
    /// description): made only when a value has violations.
    annotated: fn() -> Value,
}

impl CheckOnce {
    /// `checked` must be `annotated()` without its annotations: a violation's schema path is
    /// looked up in the annotated one.
    pub(crate) fn new(checked: &'static str, annotated: fn() -> Value) -> Self {
        Self { checked, annotated }
    }

    /// Every violation of the schema by `value`, in document order.
    pub(crate) fn violations(&self, value: &Value) -> Vec<Violation> {
        let schema = trimmed::for_value(self.checked, value)
            // Only text that is not JSON, which a unit test of each such text rules out.
            .unwrap_or_else(|| without_annotations(&(self.annotated)()));
        let validator = compiled(&schema);
        if validator.is_valid(value) {
            return Vec::new();
        }
        explain::violations(&validator, &(self.annotated)(), value)
    }
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
        // Read as draft 7: checking a schema against 2020-12's meta-schema (its validator then
        // built at run time) was 8 M of the 13 M instructions of toolshelf's start-up. Our
        // schemas use only keywords that mean the same in both (checked in debug builds).
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
