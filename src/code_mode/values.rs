//! Values crossing the sandbox's edge: a tool's arguments leave a script as JSON, and a tool's
//! result comes back as the Python value of that JSON.

use monty_types::{DictPairs, MontyObject};
use serde_json::{Map, Number, Value};

/// The JSON of a value a script passed or returned: Python's `None`, booleans, numbers,
/// strings, lists, tuples, sets and dicts as JSON has them; a dict's key that is not a string
/// as its text (as `json.dumps` writes an int key); anything else (bytes, dates, objects) as
/// its `repr`, since JSON has no type for it.
pub(super) fn to_json(object: MontyObject) -> Value {
    match object {
        MontyObject::None => Value::Null,
        MontyObject::Bool(value) => Value::Bool(value),
        MontyObject::Int(value) => Value::from(value),
        MontyObject::BigInt(value) => {
            let text = value.to_string();
            serde_json::from_str::<Number>(&text).map_or(Value::String(text), Value::Number)
        }
        // NaN and the infinities, which JSON cannot hold, become null, as JavaScript's do.
        MontyObject::Float(value) => Number::from_f64(value).map_or(Value::Null, Value::Number),
        MontyObject::String(text) => Value::String(text),
        MontyObject::List(items)
        | MontyObject::Tuple(items)
        | MontyObject::Set(items)
        | MontyObject::FrozenSet(items) => Value::Array(items.into_iter().map(to_json).collect()),
        MontyObject::NamedTuple { values, .. } => {
            Value::Array(values.into_iter().map(to_json).collect())
        }
        MontyObject::Dict(pairs) => {
            let mut object = Map::new();
            for (key, value) in pairs {
                let key = match key {
                    MontyObject::String(key) => key,
                    other => other.to_string(),
                };
                object.insert(key, to_json(value));
            }
            Value::Object(object)
        }
        other => Value::String(other.to_string()),
    }
}

/// The Python value of `value`: `None`, `bool`, `int` (of any size), `float`, `str`, `list`,
/// `dict`.
pub(super) fn from_json(value: Value) -> MontyObject {
    match value {
        Value::Null => MontyObject::None,
        Value::Bool(value) => MontyObject::Bool(value),
        Value::Number(number) => match (number.as_i64(), number.as_f64()) {
            (Some(int), _) => MontyObject::Int(int),
            (None, _) if number.is_u64() => number.to_string().parse().map_or(
                MontyObject::Float(number.as_f64().unwrap_or_default()),
                MontyObject::BigInt,
            ),
            (None, float) => MontyObject::Float(float.unwrap_or_default()),
        },
        Value::String(text) => MontyObject::String(text),
        Value::Array(items) => MontyObject::List(items.into_iter().map(from_json).collect()),
        Value::Object(object) => MontyObject::Dict(
            object
                .into_iter()
                .map(|(key, value)| (MontyObject::String(key), from_json(value)))
                .collect::<DictPairs>(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn json_goes_in_and_comes_out_the_same() {
        let value = json!({"a": [1, -2, 18446744073709551615_u64, 1.5, "x", null, true], "b": {}});
        assert_eq!(to_json(from_json(value.clone())), value);
    }

    #[test]
    fn what_json_cannot_hold_is_written_as_python_shows_it() {
        let pairs = vec![(MontyObject::Int(1), MontyObject::Bytes(b"hi".to_vec()))];
        let value = to_json(MontyObject::Dict(pairs.into()));
        assert_eq!(value, json!({"1": "b'hi'"}));
        assert_eq!(to_json(MontyObject::Float(f64::NAN)), Value::Null);
    }
}
