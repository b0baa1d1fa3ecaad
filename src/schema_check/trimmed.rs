//! A schema as it is compiled, smaller than as it is written. jsonschema's cost to compile a
//! schema (and to check it against its meta-schema first) grows with the schema's size, and the
//! config's is large, most of it for settings a config rarely has: compiling all of it was most
//! of toolshelf's start-up. What is cut never changes a check's outcome: annotations, which no
//! validator reads, and the subschemas of members the checked value does not have.

use serde_json::{Map, Value};

/// What a schema says for people and editors only; no validator reads it.
const ANNOTATIONS: &[&str] = &["description", "title", "default", "examples"];

/// `schema` without its annotations.
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

/// The parts of `schema` that can apply to `value`: every subschema under `properties` that
/// names a member `value` does not have at that place is left out. Such a subschema is never
/// applied, and `additionalProperties` reads only the names under `properties`, which no member
/// of `value` then has either; `required` stays. Subschemas of `additionalProperties` and
/// `items` are cut to what any of the members or items they apply to has.
pub(super) fn for_value(schema: &Value, value: &Value) -> Value {
    for_values(schema, &[value])
}

fn for_values(schema: &Value, values: &[&Value]) -> Value {
    let Value::Object(map) = schema else {
        return schema.clone();
    };
    let mut kept = Map::new();
    for (keyword, subschema) in map {
        let subschema = match (keyword.as_str(), subschema) {
            ("properties", Value::Object(properties)) => {
                let mut applied = Map::new();
                for (name, subschema) in properties {
                    let members: Vec<&Value> =
                        values.iter().filter_map(|value| value.get(name)).collect();
                    if !members.is_empty() {
                        applied.insert(name.clone(), for_values(subschema, &members));
                    }
                }
                Value::Object(applied)
            }
            ("additionalProperties", Value::Object(_)) => {
                let named = map.get("properties").and_then(Value::as_object);
                let others: Vec<&Value> = values
                    .iter()
                    .filter_map(|value| value.as_object())
                    .flat_map(|object| object.iter())
                    .filter(|(name, _)| !named.is_some_and(|named| named.contains_key(*name)))
                    .map(|(_, member)| member)
                    .collect();
                for_values(subschema, &others)
            }
            ("items", Value::Object(_)) => {
                let items: Vec<&Value> = values
                    .iter()
                    .filter_map(|value| value.as_array())
                    .flatten()
                    .collect();
                for_values(subschema, &items)
            }
            ("anyOf" | "oneOf" | "allOf", Value::Array(branches)) => Value::Array(
                branches
                    .iter()
                    .map(|branch| for_values(branch, values))
                    .collect(),
            ),
            ("not", _) => for_values(subschema, values),
            _ => subschema.clone(),
        };
        kept.insert(keyword.clone(), subschema);
    }
    Value::Object(kept)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn annotations_go_and_properties_named_like_them_stay() {
        let schema = json!({
            "description": "d", "title": "t", "type": "object",
            "properties": {"description": {"type": "string", "default": "x"}},
            "anyOf": [{"examples": [1], "const": {"title": 1}}],
            "required": ["description"]
        });
        assert_eq!(
            without_annotations(&schema),
            json!({
                "type": "object",
                "properties": {"description": {"type": "string"}},
                "anyOf": [{"const": {"title": 1}}],
                "required": ["description"]
            })
        );
    }

    #[test]
    fn only_what_applies_to_the_value_stays() {
        let server = json!({"type": "object", "additionalProperties": false, "properties": {
            "command": {"type": "string"}, "env": {"type": "object"}, "url": {"type": "string"}}});
        let schema = json!({"type": "object", "required": ["toolboxes"], "properties": {
            "toolboxes": {"type": "object", "additionalProperties": server},
            "http": {"type": "object"},
            "list": {"type": "array", "items": server}}});
        let value = json!({"toolboxes": {"a": {"command": "x"}, "b": {"url": 1}}, "list": []});
        let server_of = |names: Value| json!({"type": "object", "additionalProperties": false, "properties": names});
        assert_eq!(
            for_value(&schema, &value),
            json!({"type": "object", "required": ["toolboxes"], "properties": {
                "toolboxes": {"type": "object", "additionalProperties": server_of(json!({
                    "command": {"type": "string"}, "url": {"type": "string"}}))},
                "list": {"type": "array", "items": server_of(json!({}))}}})
        );
    }
}
