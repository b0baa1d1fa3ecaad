//! A client's plain MCP config (`{"mcpServers": {…}}`, the shape of Claude Desktop's, Cursor's,
//! Claude Code's `.mcp.json`, Windsurf's and Cline's files) read as a toolshelf config with one
//! toolbox, `default`. What toolshelf does not use is never dropped silently: a key that a known
//! client writes is named in a warning, any other is a problem of the file.

use serde_json::{Map, Value};

use crate::schema_check::{Violation, ViolationKind};

/// The toolbox a plain file's servers form.
pub(crate) const PLAIN_TOOLBOX: &str = "default";

/// Top-level keys of a client's own settings, tolerated beside `mcpServers` (Claude Desktop).
const TOLERATED_TOP: &[&str] = &["globalShortcut", "preferences"];

/// Server keys of clients' own features that toolshelf has no use for: Cline's and Roo
/// Code's approvals (`autoApprove`, `alwaysAllow`) and request timeout (`timeout`).
const TOLERATED_SERVER: &[&str] = &["autoApprove", "alwaysAllow", "timeout"];

/// toolshelf's own top-level keys, kept as they are.
const OWN_TOP: &[&str] = &["$schema", "defaults", "http"];

/// Whether `value` is a plain file rather than a toolshelf config.
pub(super) fn is_plain(value: &Value) -> bool {
    value.get("mcpServers").is_some() && value.get("toolboxes").is_none()
}

/// A plain file as a toolshelf config; `notes` gets a warning per tolerated key, `problems` a
/// problem per key nothing tolerates.
pub(super) fn as_toolboxes(
    value: &Value,
    notes: &mut Vec<String>,
    problems: &mut Vec<Violation>,
) -> Value {
    let Some(top) = value.as_object() else {
        return value.clone();
    };
    let mut config = Map::new();
    let mut servers = Value::Object(Map::new());
    for (key, item) in top {
        match key.as_str() {
            "mcpServers" => {
                servers = match item.as_object() {
                    Some(given) => Value::Object(
                        given
                            .iter()
                            .filter_map(|(name, server)| {
                                Some((name.clone(), server_entry(name, server, notes)?))
                            })
                            .collect(),
                    ),
                    // Not an object: the schema check says so.
                    None => item.clone(),
                };
            }
            own if OWN_TOP.contains(&own) => {
                config.insert(key.clone(), item.clone());
            }
            tolerated if TOLERATED_TOP.contains(&tolerated) => notes.push(format!(
                "{key}: a setting of the MCP client that wrote this file; toolshelf does not use it"
            )),
            _ => problems.push(Violation {
                path: key.clone(),
                message: format!(
                    "toolshelf does not know this key of a plain mcpServers file (it reads mcpServers, and tolerates {} of Claude Desktop); remove it, or write a toolshelf config with toolboxes (`toolshelf schema`)",
                    TOLERATED_TOP.join(", ")
                ),
                kind: ViolationKind::Other,
            }),
        }
    }
    let mut toolbox = Map::new();
    toolbox.insert("mcpServers".into(), servers);
    let mut toolboxes = Map::new();
    toolboxes.insert(PLAIN_TOOLBOX.into(), Value::Object(toolbox));
    config.insert("toolboxes".into(), Value::Object(toolboxes));
    Value::Object(config)
}

/// A problem's path in the toolshelf shape, as the path of the plain file it came from.
pub(super) fn plain_path(path: &str) -> String {
    path.strip_prefix(&format!("toolboxes.{PLAIN_TOOLBOX}."))
        .unwrap_or(path)
        .to_owned()
}

/// One server of a plain file, without the keys of clients' own features; `None` for one the
/// file marks `"disabled": true`.
fn server_entry(name: &str, server: &Value, notes: &mut Vec<String>) -> Option<Value> {
    let Some(fields) = server.as_object() else {
        return Some(server.clone());
    };
    let mut kept = Map::new();
    for (key, value) in fields {
        match key.as_str() {
            "disabled" => {
                if value == &Value::Bool(true) {
                    notes.push(format!(
                        "mcpServers.{name}: left out, the file marks it \"disabled\": true"
                    ));
                    return None;
                }
            }
            // Cline's name for `type`.
            "transportType" if !fields.contains_key("type") => {
                kept.insert("type".into(), value.clone());
            }
            tolerated if TOLERATED_SERVER.contains(&tolerated) || tolerated == "transportType" => {
                notes.push(format!(
                    "mcpServers.{name}.{key}: a setting of the MCP client that wrote this file; toolshelf does not use it"
                ));
            }
            _ => {
                kept.insert(key.clone(), value.clone());
            }
        }
    }
    Some(Value::Object(kept))
}
