//! toolshelf's MCP client role toward one child: who it says it is, and what it does with the
//! notifications a child sends on its own (a changed tool list, log messages; progress of tool
//! calls is taken by the transport, see `tool_calls`).
#![allow(
    deprecated,
    reason = "SEP-2577 deprecates logging, but children still send it"
)]

use std::{
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::Duration,
};

use rmcp::{
    ClientHandler, RoleClient,
    model::{ClientCapabilities, ClientConfig, Implementation, LoggingMessageNotificationParam},
    service::NotificationContext,
};
use tracing::Instrument;

use super::{tool_calls::ToolCalls, tool_list};
use crate::{catalog::ServerCatalog, json_lines::LineWriter};

/// The client handler of one child connection.
#[derive(Clone)]
pub(crate) struct ChildClient {
    pub catalog: Arc<ServerCatalog>,
    pub span: tracing::Span,
    /// Set when toolshelf begins to stop the child: a list change then needs no re-listing (it
    /// would race the closing connection).
    pub stopping: Arc<AtomicBool>,
    /// The child's direct calls and input, for re-listing its tools.
    pub calls: ToolCalls,
    pub input: LineWriter,
    pub relist_timeout: Duration,
}

impl ClientHandler for ChildClient {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("toolshelf", env!("CARGO_PKG_VERSION")),
        )
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        if self.stopping.load(Ordering::Acquire) {
            return;
        }
        let relist = async {
            match tool_list::list_tools(&self.calls, &self.input, self.relist_timeout).await {
                Ok(tools) => {
                    tracing::info!(tools = tools.len(), "tool list changed; catalog refreshed");
                    self.catalog.replace(tools);
                }
                Err(error) if self.stopping.load(Ordering::Acquire) => {
                    tracing::debug!(%error, "tool list changed while the server stopped");
                }
                Err(error) => tracing::warn!(%error, "tool list changed, but re-listing failed"),
            }
        };
        relist.instrument(self.span.clone()).await;
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _entered = self.span.enter();
        let logger = params.logger.as_deref().unwrap_or("");
        tracing::info!(level = ?params.level, logger, data = %params.data, "child log message");
    }
}
