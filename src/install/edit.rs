//! One server entry set in, or taken out of, a client's config text, every other byte kept: the
//! JSON (with comments) through `json_edit`, the TOML through `toml_edit`'s document.

use serde_json::Value;

use crate::{clients::Format, json_edit};

/// `text` with `servers_key.name` set to `entry`, made when missing; an empty `text` is a new
/// file. Err says why the text cannot be edited.
pub(super) fn set(
    format: Format,
    text: &str,
    servers_key: &str,
    name: &str,
    entry: &Value,
) -> Result<String, String> {
    match format {
        Format::Json => json_edit::set(text, &[servers_key, name], entry),
        Format::Toml => set_toml(text, servers_key, name, entry),
    }
}

/// `text` without `servers_key.name` (and without `servers_key` when that leaves it empty);
/// `None` when there is no such entry.
pub(super) fn remove(
    format: Format,
    text: &str,
    servers_key: &str,
    name: &str,
) -> Result<Option<String>, String> {
    match format {
        Format::Json => json_edit::remove(text, &[servers_key, name], 1),
        Format::Toml => remove_toml(text, servers_key, name),
    }
}

/// The entry `servers_key.name` of `text`, as JSON, if there is one.
pub(super) fn entry(
    format: Format,
    text: &str,
    servers_key: &str,
    name: &str,
) -> Result<Option<Value>, String> {
    let document: Value = match format {
        Format::Json if text.trim().is_empty() => return Ok(None),
        Format::Json => json_edit::parse(text)?,
        Format::Toml => toml_edit::de::from_str(text).map_err(|error| error.to_string())?,
    };
    Ok(document
        .get(servers_key)
        .and_then(|servers| servers.get(name))
        .cloned())
}

fn set_toml(text: &str, servers_key: &str, name: &str, entry: &Value) -> Result<String, String> {
    let mut document: toml_edit::DocumentMut = text
        .parse()
        .map_err(|error: toml_edit::TomlError| error.to_string())?;
    let servers = document
        .entry(servers_key)
        .or_insert_with(|| {
            let mut table = toml_edit::Table::new();
            table.set_implicit(true);
            toml_edit::Item::Table(table)
        })
        .as_table_mut()
        .ok_or_else(|| format!("its `{servers_key}` is not a table"))?;
    let Value::Object(members) = entry else {
        return Err("the entry is not an object".into());
    };
    match servers
        .get_mut(name)
        .and_then(toml_edit::Item::as_table_mut)
    {
        // Replaced key by key, so the table keeps its place and its comments.
        Some(existing) => {
            let stale: Vec<String> = existing
                .iter()
                .map(|(key, _)| key.to_owned())
                .filter(|key| !members.contains_key(key))
                .collect();
            for key in stale {
                existing.remove(&key);
            }
            for (key, value) in members {
                let same = existing
                    .get(key)
                    .and_then(|item| item.as_value())
                    .is_some_and(|old| toml_to_json(old) == *value);
                if !same {
                    existing.insert(key, toml_edit::value(toml_value(value)?));
                }
            }
        }
        None => {
            let mut table = toml_edit::Table::new();
            for (key, value) in members {
                table.insert(key, toml_edit::value(toml_value(value)?));
            }
            servers.insert(name, toml_edit::Item::Table(table));
        }
    }
    Ok(document.to_string())
}

fn remove_toml(text: &str, servers_key: &str, name: &str) -> Result<Option<String>, String> {
    let mut document: toml_edit::DocumentMut = text
        .parse()
        .map_err(|error: toml_edit::TomlError| error.to_string())?;
    let Some(servers) = document
        .get_mut(servers_key)
        .and_then(|item| item.as_table_like_mut())
    else {
        return Ok(None);
    };
    if servers.remove(name).is_none() {
        return Ok(None);
    }
    if servers.is_empty() {
        document.remove(servers_key);
    }
    Ok(Some(document.to_string()))
}

fn toml_value(value: &Value) -> Result<toml_edit::Value, String> {
    Ok(match value {
        Value::String(text) => text.as_str().into(),
        Value::Bool(flag) => (*flag).into(),
        Value::Number(number) => match number.as_i64() {
            Some(integer) => integer.into(),
            None => number.as_f64().unwrap_or_default().into(),
        },
        Value::Array(items) => {
            let mut array = toml_edit::Array::new();
            for item in items {
                array.push(toml_value(item)?);
            }
            toml_edit::Value::Array(array)
        }
        Value::Object(members) => {
            let mut table = toml_edit::InlineTable::new();
            for (key, item) in members {
                table.insert(key, toml_value(item)?);
            }
            toml_edit::Value::InlineTable(table)
        }
        Value::Null => return Err("TOML has no null".into()),
    })
}

fn toml_to_json(value: &toml_edit::Value) -> Value {
    toml_edit::de::from_str::<Value>(&format!("v = {value}"))
        .ok()
        .and_then(|mut document| document.get_mut("v").map(Value::take))
        .unwrap_or(Value::Null)
}
