//! The tool a call names, as the agent wrote it: what a `requestState` is bound to.

use crate::{
    child_call::CallAnswer,
    error::{DownstreamKind, ToolError},
};

/// The tool a call of `use_tool` names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ToolName {
    pub toolbox: String,
    pub server: String,
    pub name: String,
}

impl ToolName {
    /// "toolbox/server": the child, as its requests name it.
    pub(super) fn origin(&self) -> String {
        format!("{}/{}", self.toolbox, self.server)
    }

    /// The answer to a call of this tool whose task inside toolshelf ended without one.
    pub(super) fn stopped_inside(&self, error: &tokio::task::JoinError) -> CallAnswer {
        let ToolName {
            toolbox,
            server,
            name,
        } = self.clone();
        CallAnswer::Failed(
            ToolError::Downstream {
                toolbox,
                server,
                name,
                kind: DownstreamKind::Cancelled,
                error: format!("the call stopped inside toolshelf ({error}); call the tool again"),
            }
            .into_result(),
        )
    }
}

impl std::fmt::Display for ToolName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}/{}", self.toolbox, self.server, self.name)
    }
}
