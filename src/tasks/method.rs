//! The task-management requests an agent sends (2025-11-25).

/// The task-management requests an agent sends.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Method {
    Get,
    Result,
    Cancel,
    List,
}

impl Method {
    pub(super) fn parse(method: &str) -> Option<Self> {
        Some(match method {
            "tasks/get" => Self::Get,
            "tasks/result" => Self::Result,
            "tasks/cancel" => Self::Cancel,
            "tasks/list" => Self::List,
            _ => return None,
        })
    }

    pub(super) fn name(self) -> &'static str {
        match self {
            Self::Get => "tasks/get",
            Self::Result => "tasks/result",
            Self::Cancel => "tasks/cancel",
            Self::List => "tasks/list",
        }
    }
}
