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
}
