//! A member of a JSON document set or taken out in place, through a concrete syntax tree: every
//! other byte of the text (comments, indentation, key order, trailing commas or none) stays as
//! the author wrote it. Used on clients' config files (`install`) and on toolshelf's own
//! (`add`, `remove`).

use jsonc_parser::{
    ParseOptions,
    cst::{CstInputValue, CstObject, CstRootNode},
};
use serde_json::Value;

/// `text` as JSON; comments and trailing commas are read (VS Code's files have them).
pub(crate) fn parse(text: &str) -> Result<Value, String> {
    jsonc_parser::parse_to_serde_value::<Value>(text, &options()).map_err(|error| error.to_string())
}

/// `text` with the member at `path` set to `value`, objects along the way made when missing;
/// an empty `text` is a new document. Err says why the text cannot be edited.
pub(crate) fn set(text: &str, path: &[&str], value: &Value) -> Result<String, String> {
    let (last, parents) = path.split_last().ok_or("an empty path")?;
    let root = root(text)?;
    let mut object = root.object_value().ok_or("it is not a JSON object")?;
    for (depth, key) in parents.iter().enumerate() {
        object = match object.get(key) {
            Some(member) => member
                .object_value()
                .ok_or_else(|| format!("its `{}` is not an object", path[..=depth].join(".")))?,
            None => object
                .append(key, CstInputValue::Object(Vec::new()))
                .object_value()
                .ok_or("cannot add an object")?,
        };
    }
    match object.get(last) {
        Some(member) => member.set_value(input(value)),
        None => {
            object.append(last, input(value));
        }
    }
    Ok(root.to_string())
}

/// `text` without the member at `path`, and without each of its `prune` nearest parents that
/// this leaves empty; `None` when there is no such member.
pub(crate) fn remove(text: &str, path: &[&str], prune: usize) -> Result<Option<String>, String> {
    let root = root(text)?;
    let mut objects: Vec<CstObject> = vec![root.object_value().ok_or("it is not a JSON object")?];
    let (last, parents) = path.split_last().ok_or("an empty path")?;
    for key in parents {
        let Some(object) = objects
            .last()
            .and_then(|object| object.get(key))
            .and_then(|member| member.object_value())
        else {
            return Ok(None);
        };
        objects.push(object);
    }
    let Some(member) = objects.last().and_then(|object| object.get(last)) else {
        return Ok(None);
    };
    member.remove();
    for depth in (parents.len().saturating_sub(prune)..parents.len()).rev() {
        let emptied = objects[depth + 1].properties().is_empty();
        if !emptied {
            break;
        }
        if let Some(parent) = objects[depth].get(parents[depth]) {
            parent.remove();
        }
    }
    Ok(Some(root.to_string()))
}

fn options() -> ParseOptions {
    ParseOptions {
        allow_comments: true,
        allow_trailing_commas: true,
        allow_loose_object_property_names: false,
        ..ParseOptions::default()
    }
}

fn root(text: &str) -> Result<CstRootNode, String> {
    let text = if text.trim().is_empty() { "{}\n" } else { text };
    CstRootNode::parse(text, &options()).map_err(|error| error.to_string())
}

/// serde_json's value as the tree's input, keys in their order.
fn input(value: &Value) -> CstInputValue {
    match value {
        Value::Null => CstInputValue::Null,
        Value::Bool(flag) => CstInputValue::Bool(*flag),
        Value::Number(number) => CstInputValue::Number(number.to_string()),
        Value::String(text) => CstInputValue::String(text.clone()),
        Value::Array(items) => CstInputValue::Array(items.iter().map(input).collect()),
        Value::Object(members) => CstInputValue::Object(
            members
                .iter()
                .map(|(key, value)| (key.clone(), input(value)))
                .collect(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_member_is_set_and_taken_out_with_every_other_byte_kept() {
        let text = "{\n    \"a\": 1, // one\n    \"b\": {\"c\": 2}\n}\n";
        let added = set(text, &["b", "d", "e"], &json!([true])).expect("set");
        assert!(
            added.starts_with("{\n    \"a\": 1, // one\n    \"b\": {"),
            "{added}"
        );
        assert_eq!(
            parse(&added).expect("parse"),
            json!({"a": 1, "b": {"c": 2, "d": {"e": [true]}}})
        );
        let removed = remove(&added, &["b", "d", "e"], 1)
            .expect("remove")
            .expect("was there");
        assert_eq!(
            parse(&removed).expect("parse"),
            json!({"a": 1, "b": {"c": 2}})
        );
        assert_eq!(remove(text, &["x", "y"], 1), Ok(None));
        assert!(set("[1]", &["a"], &json!(1)).is_err());
    }
}
