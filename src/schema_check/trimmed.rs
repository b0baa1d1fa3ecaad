//! A schema as it is compiled, smaller than as it is written. jsonschema's cost to compile a
//! schema (and to check it against its meta-schema first) grows with the schema's size, and the
//! config's is large, most of it for settings a config rarely has: compiling all of it was most
//! of toolshelf's start-up. What is cut never changes a check's outcome: annotations, which no
//! validator reads, the subschemas of members the checked value does not have, and patterns
//! that every string they apply to matches.

use serde_json::{Map, Value};

use super::patterns;
use crate::jsonrpc::skim::Cursor;

/// What a schema says for people and editors only; no validator reads it.
const ANNOTATIONS: &[&str] = &["description", "title", "default", "examples"];

/// `schema` without its annotations.
pub(crate) fn without_annotations(schema: &Value) -> Value {
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

/// The parts of `schema` (JSON text) that can apply to `value`: every subschema under
/// `properties` that names a member `value` does not have at that place is left out. Such a
/// subschema is never applied, and `additionalProperties` reads only the names under
/// `properties`, which no member of `value` then has either; `required` stays. Subschemas of
/// `additionalProperties` and `items` are cut to what any of the members or items they apply to
/// has, and a pattern that every string it applies to matches is cut (`patterns`). Read from
/// the text in one pass (`skim`), a part built only once it is kept: building all of the
/// config's schema was a quarter of start-up's instructions, mostly allocations. `None` when
/// `schema` is not JSON.
pub(super) fn for_value(schema: &str, value: &Value) -> Option<Value> {
    trim(&mut Cursor::new(schema), &[value])
}

/// The schema at `cursor`, passed over, trimmed for `values`.
fn trim(cursor: &mut Cursor<'_>, values: &[&Value]) -> Option<Value> {
    in_place_or_whole(cursor, |cursor| trim_object(cursor, values))
}

/// What `read` makes of the part at `cursor`, or else the part kept whole: it is not an object
/// (or an array, for `read`s of one), or an object with an escaped key, whose names would not
/// be compared with the ones they stand for. Trimming is only ever a saving.
fn in_place_or_whole<'a>(
    cursor: &mut Cursor<'a>,
    read: impl FnOnce(&mut Cursor<'a>) -> Option<Value>,
) -> Option<Value> {
    let start = cursor.clone();
    if let Some(read) = read(cursor) {
        return Some(read);
    }
    *cursor = start;
    parsed(cursor.value()?)
}

fn trim_object(cursor: &mut Cursor<'_>, values: &[&Value]) -> Option<Value> {
    let mut kept = Map::new();
    // The names under `properties` once read, which `additionalProperties` leaves to them.
    let mut named: Option<Vec<&str>> = None;
    // `additionalProperties` written before `properties`: trimmed once the names are known.
    let mut deferred = None;
    cursor.object(|cursor, keyword| {
        if keyword.contains('\\') {
            return None;
        }
        let subschema = match keyword {
            "properties" => {
                let (applied, names) = trim_properties(cursor, values)?;
                named = Some(names);
                applied
            }
            "additionalProperties" => match &named {
                Some(names) => trim(cursor, &others(values, names))?,
                None => {
                    deferred = Some(cursor.value()?);
                    // Holds the keyword's place.
                    Value::Null
                }
            },
            "items" => {
                let items: Vec<&Value> = values
                    .iter()
                    .filter_map(|value| value.as_array())
                    .flatten()
                    .collect();
                trim(cursor, &items)?
            }
            "anyOf" | "oneOf" | "allOf" => {
                in_place_or_whole(cursor, |cursor| trim_branches(cursor, values))?
            }
            "not" => trim(cursor, values)?,
            "propertyNames" => {
                let names: Vec<Value> = values
                    .iter()
                    .filter_map(|value| value.as_object())
                    .flat_map(|object| object.keys())
                    .map(|name| Value::String(name.clone()))
                    .collect();
                trim(cursor, &names.iter().collect::<Vec<_>>())?
            }
            "pattern" => match parsed(cursor.value()?)? {
                // A pattern that every string it applies to matches cannot fail: cut, so it is
                // never compiled.
                Value::String(pattern) if all_match(&pattern, values) => return Some(()),
                pattern => pattern,
            },
            _ => parsed(cursor.value()?)?,
        };
        kept.insert(keyword.to_owned(), subschema);
        Some(())
    })?;
    if let Some(text) = deferred {
        let others = others(values, named.as_deref().unwrap_or_default());
        let trimmed = trim(&mut Cursor::new(text), &others)?;
        kept.insert("additionalProperties".to_owned(), trimmed);
    }
    Some(Value::Object(kept))
}

/// The subschemas under `properties` at `cursor` that name a member of `values`, and every
/// name written there.
fn trim_properties<'a>(
    cursor: &mut Cursor<'a>,
    values: &[&Value],
) -> Option<(Value, Vec<&'a str>)> {
    let (mut applied, mut names) = (Map::new(), Vec::new());
    cursor.object(|cursor, name| {
        if name.contains('\\') {
            return None;
        }
        names.push(name);
        let members: Vec<&Value> = values.iter().filter_map(|value| value.get(name)).collect();
        if members.is_empty() {
            cursor.value()?;
        } else {
            applied.insert(name.to_owned(), trim(cursor, &members)?);
        }
        Some(())
    })?;
    Some((Value::Object(applied), names))
}

/// The members of `values` that no name under `properties` takes.
fn others<'v>(values: &[&'v Value], named: &[&str]) -> Vec<&'v Value> {
    values
        .iter()
        .filter_map(|value| value.as_object())
        .flat_map(|object| object.iter())
        .filter(|(name, _)| !named.contains(&name.as_str()))
        .map(|(_, member)| member)
        .collect()
}

fn trim_branches(cursor: &mut Cursor<'_>, values: &[&Value]) -> Option<Value> {
    let mut branches = Vec::new();
    cursor.array(|cursor| {
        branches.push(trim(cursor, values)?);
        Some(())
    })?;
    Some(Value::Array(branches))
}

/// A part kept whole; `None` when it is not JSON.
fn parsed(schema: &str) -> Option<Value> {
    serde_json::from_str(schema).ok()
}

/// Whether every string among `values` matches `pattern` (known to `patterns`), which is
/// then never failed; so too when there is no string.
fn all_match(pattern: &str, values: &[&Value]) -> bool {
    values
        .iter()
        .filter_map(|value| value.as_str())
        .all(|text| patterns::matches(pattern, text) == Some(true))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::schema_check::{NAME_PATTERN, TAG_PATTERN};

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
            for_value(&schema.to_string(), &value),
            Some(
                json!({"type": "object", "required": ["toolboxes"], "properties": {
                "toolboxes": {"type": "object", "additionalProperties": server_of(json!({
                    "command": {"type": "string"}, "url": {"type": "string"}}))},
                "list": {"type": "array", "items": server_of(json!({}))}}})
            )
        );
        assert_eq!(for_value("{", &value), None);
        // `\u0062` is `b`: a key written with an escape keeps its object whole.
        let escaped = r#"{"properties": {"a\u0062": {"type": "string"}, "c": {}}}"#;
        assert_eq!(
            for_value(escaped, &json!({"ab": 1})),
            Some(json!({"properties": {"ab": {"type": "string"}, "c": {}}}))
        );
    }

    #[test]
    fn a_pattern_every_string_matches_is_cut() {
        let schema = json!({"type": "object", "propertyNames": {"pattern": NAME_PATTERN},
            "additionalProperties": {"type": "string", "pattern": TAG_PATTERN},
            "properties": {"x": {"pattern": "^x$"}}});
        let trimmed = |value: Value| for_value(&schema.to_string(), &value).expect("JSON");
        assert_eq!(
            trimmed(json!({"a-1": "read-only", "b": 2})),
            json!({"type": "object", "propertyNames": {},
                "additionalProperties": {"type": "string"}, "properties": {}})
        );
        assert_eq!(
            trimmed(json!({"a b": "read-only", "x": "x"})),
            json!({"type": "object", "propertyNames": {"pattern": NAME_PATTERN},
                "additionalProperties": {"type": "string"},
                "properties": {"x": {"pattern": "^x$"}}})
        );
        assert_eq!(
            trimmed(json!({"c": "Read"}))["additionalProperties"],
            json!({"type": "string", "pattern": TAG_PATTERN})
        );
    }
}
