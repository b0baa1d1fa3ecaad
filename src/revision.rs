//! MCP revisions, grouped by what toolshelf does differently for them.

use http::HeaderName;
use rmcp::model::ProtocolVersion;

/// The streamable HTTP transport's headers, the same for the children toolshelf calls and for
/// `serve --http`. Kept parsed: a header looked up by its text has the text parsed first.
/// A session's id:
pub(crate) const SESSION_ID_HEADER: HeaderName = HeaderName::from_static("mcp-session-id");
/// The protocol revision a 2025-06-18 or later client speaks:
pub(crate) const PROTOCOL_VERSION_HEADER: HeaderName =
    HeaderName::from_static("mcp-protocol-version");

/// The protocol versions, as far as toolshelf serves them differently.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Protocol {
    /// Before 2025-11-25: no tasks.
    Early,
    /// 2025-11-25: tasks are requested in `params.task` and managed with `tasks/…` requests.
    Tasks,
    /// 2026-07-28 or later: results carry `resultType`; tasks are an extension rmcp serves.
    ResultType,
}

impl Protocol {
    pub(crate) fn of(version: &ProtocolVersion) -> Self {
        let version = version.as_str();
        if version >= ProtocolVersion::V_2026_07_28.as_str() {
            Protocol::ResultType
        } else if version >= ProtocolVersion::V_2025_11_25.as_str() {
            Protocol::Tasks
        } else {
            Protocol::Early
        }
    }
}
