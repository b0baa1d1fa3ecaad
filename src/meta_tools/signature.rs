//! A tool's input schema as one short line for a search answer's text: what the agent needs to
//! write a valid call (argument names, types, which are optional, enumerated values, defaults,
//! the fields of nested objects), without the parameters' descriptions and JSON Schema's
//! punctuation. `a: number, unit?: "c"|"f" = "c", tags?: string[]`. The whole schema stays in
//! the answer's `structuredContent` and in `open_toolbox {toolbox}`.

use serde_json::{Map, Value};

/// Enumerations longer than this are shown as their type.
const MAX_ENUM: usize = 8;
/// Defaults longer than this (as JSON) are left out.
const MAX_DEFAULT: usize = 40;
/// Objects nested deeper than this are shown as `object`.
const MAX_DEPTH: usize = 3;

/// The arguments of `schema`, as `name: type` pairs; the schema as compact JSON when it is an
/// object schema without `properties` that still constrains its arguments.
pub(crate) fn arguments(schema: &Map<String, Value>) -> String {
    match schema.get("properties").and_then(Value::as_object) {
        Some(properties) => fields(properties, schema, 0),
        None => Value::Object(schema.clone()).to_string(),
    }
}

fn fields(properties: &Map<String, Value>, parent: &Map<String, Value>, depth: usize) -> String {
    let required: Vec<&str> = parent
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let mut text = Vec::with_capacity(properties.len());
    for (name, schema) in properties {
        let optional = if required.contains(&name.as_str()) {
            ""
        } else {
            "?"
        };
        let mut field = format!("{name}{optional}: {}", kind(schema, depth));
        if let Some(default) = schema.get("default").map(Value::to_string)
            && default.len() <= MAX_DEFAULT
        {
            field.push_str(&format!(" = {default}"));
        }
        text.push(field);
    }
    text.join(", ")
}

/// The type of a value `schema` accepts, in TypeScript's notation.
fn kind(schema: &Value, depth: usize) -> String {
    let Some(schema) = schema.as_object() else {
        return "any".to_owned();
    };
    if let Some(value) = schema.get("const") {
        return value.to_string();
    }
    if let Some(values) = schema.get("enum").and_then(Value::as_array)
        && !values.is_empty()
        && values.len() <= MAX_ENUM
    {
        return values
            .iter()
            .map(Value::to_string)
            .collect::<Vec<_>>()
            .join("|");
    }
    for union in ["anyOf", "oneOf"] {
        if let Some(branches) = schema.get(union).and_then(Value::as_array) {
            let mut kinds: Vec<String> = Vec::new();
            for branch in branches {
                let branch = kind(branch, depth);
                if !kinds.contains(&branch) {
                    kinds.push(branch);
                }
            }
            return kinds.join("|");
        }
    }
    match schema.get("type") {
        Some(Value::String(name)) => named(name, schema, depth),
        Some(Value::Array(names)) => names
            .iter()
            .filter_map(Value::as_str)
            .map(|name| named(name, schema, depth))
            .collect::<Vec<_>>()
            .join("|"),
        _ if schema.contains_key("properties") => named("object", schema, depth),
        _ => "any".to_owned(),
    }
}

fn named(name: &str, schema: &Map<String, Value>, depth: usize) -> String {
    match name {
        "array" => {
            let item = schema
                .get("items")
                .map_or_else(|| "any".to_owned(), |items| kind(items, depth));
            match item.contains('|') {
                true => format!("({item})[]"),
                false => format!("{item}[]"),
            }
        }
        "object" => match schema.get("properties").and_then(Value::as_object) {
            Some(properties) if depth < MAX_DEPTH && !properties.is_empty() => {
                format!("{{{}}}", fields(properties, schema, depth + 1))
            }
            _ => "object".to_owned(),
        },
        other => other.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn line(schema: Value) -> String {
        arguments(schema.as_object().expect("an object"))
    }

    #[test]
    fn arguments_read_as_a_typed_signature() {
        assert_eq!(
            line(json!({"type": "object", "properties": {
                "a": {"type": "number", "description": "First"},
                "unit": {"type": "string", "enum": ["c", "f"], "default": "c"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "when": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                "at": {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]},
                "mode": {"const": "fast"},
                "raw": {}
            }, "required": ["a"]})),
            r#"a: number, unit?: "c"|"f" = "c", tags?: string[], when?: string|null, at?: {x: integer}, mode?: "fast", raw?: any"#
        );
    }

    #[test]
    fn an_object_schema_without_properties_is_shown_whole() {
        assert_eq!(
            line(json!({"type": "object", "additionalProperties": {"type": "string"}})),
            r#"{"type":"object","additionalProperties":{"type":"string"}}"#
        );
    }
}
