//! MCP revisions, grouped by what toolshelf does differently for them.

use rmcp::model::ProtocolVersion;

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
