//! How a child is reached: a process toolshelf started, or a connection to a remote server.
//! Either way the child's messages flow through a pair of byte streams (`Ends`), so the MCP
//! session, calls and relays above are the same for both.

use std::{sync::Arc, time::Duration};

use super::ends::Ends;
use super::{exit::SpawnError, process::Process, registry::ProcessRegistry, remote::Connection};
use crate::config::{Endpoint, ServerSpec};

pub(crate) enum Link {
    Local(Process),
    Remote(Connection),
}

impl Link {
    /// Starts the process, or the bridge to the server. `protocol` names the revision of a
    /// remote child's requests before it has chosen one.
    pub(crate) fn open(
        registry: &Arc<ProcessRegistry>,
        spec: &ServerSpec,
        protocol: Option<&'static str>,
        span: tracing::Span,
    ) -> Result<(Link, Ends), SpawnError> {
        match &spec.endpoint {
            Endpoint::Local(local) => {
                let (process, pipes) = Process::spawn(registry, local, span.clone())?;
                tracing::debug!(parent: &span, pid = ?process.pid, "child spawned");
                let ends = Ends {
                    read: Box::pin(pipes.stdout),
                    write: Box::pin(pipes.stdin),
                };
                Ok((Link::Local(process), ends))
            }
            Endpoint::Remote(remote) => {
                if registry.is_closed() {
                    return Err(SpawnError::ShuttingDown);
                }
                let (connection, ends) =
                    Connection::open(remote, protocol, span).map_err(SpawnError::Remote)?;
                Ok((Link::Remote(connection), ends))
            }
        }
    }

    /// True once the process exited or the connection is gone.
    pub(crate) fn ended(&self) -> bool {
        match self {
            Link::Local(process) => process.exit().is_some(),
            Link::Remote(connection) => connection.ended(),
        }
    }

    /// Waits up to `limit` for the end to be known in full (exit status, last stderr lines,
    /// the connection's reason); true if the child has ended.
    pub(crate) async fn wait_ended(&self, limit: Duration) -> bool {
        match self {
            Link::Local(process) => process.wait_ended(limit).await.is_some(),
            Link::Remote(connection) => connection.wait_ended(limit).await,
        }
    }

    /// The end that follows is one toolshelf asked for: not news for the log.
    pub(crate) fn expect_end(&self) {
        if let Link::Local(process) = self {
            process.expect_end();
        }
    }

    /// Stops the process (its stdin should be closed already), or ends the session.
    pub(crate) async fn stop(&self) {
        match self {
            Link::Local(process) => {
                process.stop().await;
            }
            Link::Remote(connection) => connection.stop().await,
        }
    }

    /// What a request that failed because the child ended should say (its end tells the rest).
    pub(crate) fn end_cause(&self) -> &'static str {
        match self {
            Link::Local(_) => "the server closed the connection",
            Link::Remote(_) => "the connection ended",
        }
    }

    /// How the child ended, for error messages.
    pub(crate) fn describe_end(&self) -> String {
        match self {
            Link::Local(process) => process.describe_end(),
            Link::Remote(connection) => connection.describe_end(),
        }
    }
}
