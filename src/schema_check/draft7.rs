//! Our schemas are generated as JSON Schema 2020-12 and checked as draft 7, whose meta-schema
//! costs a fraction of 2020-12's to build at start-up. That is sound only while they use
//! keywords that mean the same in both, which debug builds check on every schema compiled.

use serde_json::Value;

/// The keywords that mean the same in JSON Schema draft 7 and 2020-12.
const SHARED_KEYWORDS: &[&str] = &[
    "additionalProperties",
    "allOf",
    "anyOf",
    "const",
    "default",
    "description",
    "enum",
    "exclusiveMaximum",
    "exclusiveMinimum",
    "format",
    "items",
    "maxItems",
    "maxLength",
    "maxProperties",
    "maximum",
    "minItems",
    "minLength",
    "minProperties",
    "minimum",
    "not",
    "oneOf",
    "pattern",
    "properties",
    "propertyNames",
    "required",
    "title",
    "type",
    "uniqueItems",
];

/// What a schema says for people and editors only; no validator reads it.
const ANNOTATIONS: &[&str] = &["description", "title", "default", "examples"];

/// `schema` without its annotations, as it is compiled: they are four fifths of the config
/// schema's text, and jsonschema copied and checked every one at each start.
pub(super) fn without_annotations(schema: &Value) -> Value {
    let Value::Object(map) = schema else {
        return match schema {
            Value::Array(items) => Value::Array(items.iter().map(without_annotations).collect()),
            other => other.clone(),
        };
    };
    let kept = map
        .iter()
        .filter(|(keyword, _)| !ANNOTATIONS.contains(&keyword.as_str()))
        .map(|(keyword, value)| {
            let value = match (keyword.as_str(), value) {
                // Values, not schemas.
                ("const" | "enum" | "required", _) => value.clone(),
                // Names (which may be `description`) to schemas.
                ("properties", Value::Object(properties)) => Value::Object(
                    properties
                        .iter()
                        .map(|(name, schema)| (name.clone(), without_annotations(schema)))
                        .collect(),
                ),
                _ => without_annotations(value),
            };
            (keyword.clone(), value)
        });
    Value::Object(kept.collect())
}

/// The keywords of `schema`, at any depth, that draft 7 does not read as 2020-12 does.
pub(super) fn keywords_outside_draft7(schema: &Value) -> Vec<String> {
    let mut outside = Vec::new();
    let mut pending = vec![schema];
    while let Some(node) = pending.pop() {
        match node {
            Value::Object(map) => {
                for (keyword, value) in map {
                    if !SHARED_KEYWORDS.contains(&keyword.as_str()) {
                        outside.push(keyword.clone());
                    }
                    match keyword.as_str() {
                        // Values, not schemas.
                        "const" | "default" | "enum" | "required" => {}
                        "properties" => {
                            pending.extend(value.as_object().into_iter().flat_map(|p| p.values()));
                        }
                        _ => pending.push(value),
                    }
                }
            }
            Value::Array(items) => pending.extend(items),
            _ => {}
        }
    }
    outside
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_keyword_draft_7_would_ignore_is_found() {
        let schema = serde_json::json!({"type": "object", "properties": {"prefixItems": {
            "type": "array", "prefixItems": [{"type": "string"}]}}, "enum": [{"$defs": 1}]});
        assert_eq!(keywords_outside_draft7(&schema), ["prefixItems"]);
    }

    #[test]
    fn annotations_go_and_properties_named_like_them_stay() {
        let schema = serde_json::json!({
            "description": "d", "title": "t", "type": "object",
            "properties": {"description": {"type": "string", "default": "x"}},
            "anyOf": [{"examples": [1], "const": {"title": 1}}],
            "required": ["description"]
        });
        assert_eq!(
            without_annotations(&schema),
            serde_json::json!({
                "type": "object",
                "properties": {"description": {"type": "string"}},
                "anyOf": [{"const": {"title": 1}}],
                "required": ["description"]
            })
        );
    }
}
