//! A tool's arguments from the command line: a JSON object (`--args`, `--args-file`), then
//! `KEY=VALUE` pairs typed by the tool's input schema (`count=3` is a number when the schema says
//! so, a string otherwise) and `KEY:=JSON` pairs taken as JSON, as httpie does.

use rmcp::model::JsonObject;
use serde_json::Value;

/// `text` as a JSON object, or what is wrong with it.
pub(super) fn object(text: &str) -> Result<JsonObject, String> {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(object)) => Ok(object),
        Ok(other) => Err(format!(
            "the tool's arguments must be a JSON object such as '{{\"path\": \"a.txt\"}}', not {}",
            crate::schema_check::json_type(&other)
        )),
        Err(error) => Err(format!(
            "the tool's arguments are not JSON ({error}); give an object such as '{{\"path\": \"a.txt\"}}'"
        )),
    }
}

/// `base` with each pair set on it, typed by `schema`'s properties.
pub(super) fn typed(
    mut base: JsonObject,
    pairs: &[String],
    schema: &JsonObject,
) -> Result<JsonObject, String> {
    for pair in pairs {
        let (key, value) = match pair.split_once(":=") {
            Some((key, json)) if !key.contains('=') => {
                let value = serde_json::from_str(json).map_err(|error| {
                    format!("{pair}: after ':=' comes JSON ({error}); use KEY=VALUE for a string")
                })?;
                (key, value)
            }
            _ => {
                let Some((key, text)) = pair.split_once('=') else {
                    return Err(format!(
                        "{pair}: arguments are KEY=VALUE or KEY:=JSON (or --args '{{…}}')"
                    ));
                };
                (key, typed_value(key, text, schema)?)
            }
        };
        if key.is_empty() {
            return Err(format!("{pair}: the argument has no name"));
        }
        base.insert(key.to_owned(), value);
    }
    Ok(base)
}

/// `text` as the type `schema` gives property `key`: a string unless it says otherwise.
fn typed_value(key: &str, text: &str, schema: &JsonObject) -> Result<Value, String> {
    let declared = schema
        .get("properties")
        .and_then(|properties| properties.get(key))
        .and_then(|property| property.get("type"));
    let kind = match declared {
        Some(Value::String(kind)) => kind.as_str(),
        // `["integer", "null"]`: the first type that is not null.
        Some(Value::Array(kinds)) => kinds
            .iter()
            .filter_map(Value::as_str)
            .find(|kind| *kind != "null")
            .unwrap_or("string"),
        _ => "string",
    };
    let wrong = |what: &str| {
        format!("{key}={text}: the tool's schema says {what}; give one, or pass {key}:=JSON")
    };
    match kind {
        "integer" => text
            .parse::<i64>()
            .map(Value::from)
            .map_err(|_| wrong("an integer")),
        "number" => match serde_json::from_str::<Value>(text) {
            Ok(number @ Value::Number(_)) => Ok(number),
            _ => Err(wrong("a number")),
        },
        "boolean" => match text {
            "true" => Ok(Value::Bool(true)),
            "false" => Ok(Value::Bool(false)),
            _ => Err(wrong("true or false")),
        },
        "array" | "object" => {
            serde_json::from_str(text).map_err(|_| wrong(&format!("JSON ({kind})")))
        }
        _ => Ok(Value::String(text.to_owned())),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn schema() -> JsonObject {
        json!({"type": "object", "properties": {
            "count": {"type": "integer"}, "ratio": {"type": "number"}, "on": {"type": "boolean"},
            "tags": {"type": "array"}, "name": {"type": "string"}, "maybe": {"type": ["integer", "null"]}
        }})
        .as_object()
        .cloned()
        .expect("an object")
    }

    fn pairs(items: &[&str]) -> Vec<String> {
        items.iter().map(|item| (*item).to_owned()).collect()
    }

    #[test]
    fn pairs_take_their_schema_s_types() {
        let typed = typed(
            object(r#"{"name": "base", "keep": 1}"#).expect("object"),
            &pairs(&[
                "count=3",
                "ratio=0.5",
                "on=true",
                "tags=[1,2]",
                "name=007",
                "maybe=4",
                "free=x",
                "raw:={\"a\":1}",
                "eq=a=b",
            ]),
            &schema(),
        )
        .expect("typed");
        assert_eq!(
            Value::Object(typed),
            json!({"name": "007", "keep": 1, "count": 3, "ratio": 0.5, "on": true, "tags": [1, 2],
                   "maybe": 4, "free": "x", "raw": {"a": 1}, "eq": "a=b"})
        );
    }

    #[test]
    fn a_value_that_is_not_its_type_or_a_pair_that_is_not_one_is_refused() {
        let refused = |items: &[&str]| {
            typed(JsonObject::new(), &pairs(items), &schema()).expect_err("refused")
        };
        assert!(refused(&["count=three"]).contains("says an integer"));
        assert!(refused(&["on=yes"]).contains("true or false"));
        assert!(refused(&["raw:={"]).contains("after ':=' comes JSON"));
        assert!(refused(&["lonely"]).contains("KEY=VALUE"));
        assert!(
            object("[1]")
                .expect_err("not an object")
                .contains("not an array")
        );
        assert!(object("{").expect_err("not JSON").contains("not JSON"));
    }
}
