//! toolshelf's MCP client role toward one child: who it says it is, and what it does with the
//! notifications a child sends on its own.

#![allow(
    deprecated,
    reason = "SEP-2577 deprecates logging, but children still send it"
)]

use rmcp::{
    ClientHandler, RoleClient,
    model::{ClientCapabilities, ClientConfig, Implementation, LoggingMessageNotificationParam},
    service::NotificationContext,
};

/// The client handler of one child connection.
#[derive(Debug, Clone, Default)]
pub(crate) struct ChildClient;

#[allow(
    deprecated,
    reason = "SEP-2577 deprecates logging, but children still send it"
)]
impl ClientHandler for ChildClient {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("toolshelf", env!("CARGO_PKG_VERSION")),
        )
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let logger = params.logger.as_deref().unwrap_or("");
        tracing::info!(level = ?params.level, logger, data = %params.data, "child log message");
    }
}
