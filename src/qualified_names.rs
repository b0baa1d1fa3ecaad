//! Names qualified by their server (the flat naming convention): `{server}{separator}{name}`, split on the first
//! separator, for flat mode's tools and for the children's prompts in both modes; and the
//! JSON-RPC errors of a flat tool name that cannot be routed, byte for byte.

use rmcp::model::{ErrorCode, ErrorData};

/// The convention's separator.
pub const DEFAULT_SEPARATOR: &str = ":";

/// The longest tool name the MCP specification's guidance allows (2025-11-25).
const GUIDANCE_MAX_LEN: usize = 128;

/// `server` and `tool` as one flat name.
pub(crate) fn join(server: &str, separator: &str, tool: &str) -> String {
    let mut name = String::with_capacity(server.len() + separator.len() + tool.len());
    name.push_str(server);
    name.push_str(separator);
    name.push_str(tool);
    name
}

/// The server and tool parts of `name`, split on the first `separator` (the tool part may
/// hold more of them), or the convention's error.
pub(crate) fn split<'a>(name: &'a str, separator: &str) -> Result<(&'a str, &'a str), ErrorData> {
    let Some((server, tool)) = name.split_once(separator) else {
        return Err(ErrorData::invalid_params(
            format!("Tool name must be prefixed with server key: {name}"),
            None,
        ));
    };
    if server.is_empty() || tool.is_empty() {
        return Err(ErrorData::invalid_params(
            format!("Invalid tool name format: {name}"),
            None,
        ));
    }
    Ok((server, tool))
}

/// The convention's error for a name no server has, with the closest listed name when one is close.
pub(super) fn not_found<'a>(name: &str, listed: impl IntoIterator<Item = &'a str>) -> ErrorData {
    let mut message = format!("Tool not found: {name}");
    if let Some(closest) = crate::suggest::closest(name, listed) {
        message.push_str(&format!("\nDid you mean: {closest}?"));
    }
    ErrorData::new(ErrorCode::METHOD_NOT_FOUND, message, None)
}

/// Whether `name` follows the MCP specification's guidance for tool names: 1 to 128 of
/// A-Z, a-z, 0-9, `_`, `-` and `.`.
pub(super) fn follows_guidance(name: &str) -> bool {
    (1..=GUIDANCE_MAX_LEN).contains(&name.len())
        && name
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'_' | b'-' | b'.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_on_the_first_separator() {
        let split = |name| split(name, ":").map_err(|error| error.message.to_string());
        assert_eq!(split("fs:read_file"), Ok(("fs", "read_file")));
        assert_eq!(split("server:tool:sub"), Ok(("server", "tool:sub")));
        assert_eq!(
            split("read_file"),
            Err("Tool name must be prefixed with server key: read_file".into())
        );
        assert_eq!(
            split(":read_file"),
            Err("Invalid tool name format: :read_file".into())
        );
        assert_eq!(
            split("server:"),
            Err("Invalid tool name format: server:".into())
        );
        let error = super::split("x", ":").expect_err("no separator");
        assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
    }

    #[test]
    fn a_longer_separator_splits_the_same_way() {
        assert_eq!(
            split("fs__read__file", "__").map_err(|error| error.message),
            Ok(("fs", "read__file"))
        );
    }

    #[test]
    fn not_found_suggests_a_close_name() {
        let error = not_found("filesytem:read_file", ["filesystem:read_file", "db:query"]);
        assert_eq!(error.code, ErrorCode::METHOD_NOT_FOUND);
        assert_eq!(
            error.message,
            "Tool not found: filesytem:read_file\nDid you mean: filesystem:read_file?"
        );
        assert_eq!(
            not_found("nothing:alike", ["db:query"]).message,
            "Tool not found: nothing:alike"
        );
    }

    #[test]
    fn guidance_refuses_colons_and_long_names() {
        assert!(follows_guidance("fs__read_file"));
        assert!(follows_guidance("admin.tools.list"));
        assert!(!follows_guidance("fs:read_file"));
        assert!(!follows_guidance(&"x".repeat(129)));
    }
}
