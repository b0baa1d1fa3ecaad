//! Newline-delimited JSON-RPC between the agent and toolshelf (stdio). Every request gets
//! exactly one answer, as JSON-RPC asks, under the id the agent wrote: `jsonrpc::envelope`
//! reads each line leniently, `session::in_flight` keeps the ids in flight (a duplicate is
//! refused; rmcp gets ids of its own, since its typed ids hold neither `1.5` nor numbers past
//! 64 bits). A line that is not JSON gets a parse error (-32700), JSON that is not a message an
//! invalid-request error (-32600, `"id": null` when no id can be read), a known method with
//! unreadable params -32602; toolshelf keeps serving. A notification that cannot be read is
//! only logged.
//!
//! Once the session is initialized, the requests the session's door serves go there
//! (`router`); everything else goes to rmcp. All output, rmcp's and the door's, is written
//! through one `LineWriter`, in the order it was queued.

use std::{future::Future, sync::Arc, time::Duration};

use rmcp::{
    RoleServer, ServiceExt,
    model::ErrorCode,
    service::{RxJsonRpcMessage, ServerInitializeError, TxJsonRpcMessage},
    transport::Transport,
};
use tokio::io::AsyncRead;

use crate::{
    config::Config,
    flat::FlatSpec,
    jsonrpc::{
        envelope,
        line_reader::{LineRead, LineReader},
        line_writer::LineWriter,
    },
    reload::Reloads,
    session::{Session, SessionState, Setup, Surface, Who},
};

mod rmcp_request;
mod router;

use router::{RoutedLine, Router};

/// The longest line toolshelf reads from the agent; a longer one is answered with an error.
pub(crate) const MAX_AGENT_LINE: usize = 64 * 1024 * 1024;

/// How long calls in flight may still answer once the agent's input ended (rmcp waits as long
/// for its own), or once the server is stopping.
const DRAIN_AT_END: Duration = Duration::from_secs(5);
const DRAIN_AT_STOP: Duration = Duration::from_secs(2);

/// Line transport over an agent's reader and writer.
pub(crate) struct StdioTransport<R> {
    lines: LineReader<R>,
    write: LineWriter,
    route: Router,
    /// An answer to a line that could not be served, written before the next read.
    reply: Option<Vec<u8>>,
}

impl<R: AsyncRead + Send + Unpin + 'static> StdioTransport<R> {
    fn new(read: R, write: LineWriter, state: Arc<SessionState>) -> Self {
        Self {
            lines: LineReader::new(read, MAX_AGENT_LINE),
            route: Router::new(state, write.clone()),
            write,
            reply: None,
        }
    }

    /// Decides what to do with one line: a message for rmcp, or nothing (an answer is queued).
    fn take_line(&mut self, line: LineRead) -> Option<RxJsonRpcMessage<RoleServer>> {
        let routed = if line == LineRead::TooLong {
            // The line is gone, but its start is kept: the id is usually there.
            let id = envelope::id_in_head(self.lines.text());
            RoutedLine::Reply(envelope::error_line(
                id.as_ref(),
                ErrorCode::INVALID_REQUEST,
                &format!(
                    "message over the {} MiB limit; send smaller arguments",
                    MAX_AGENT_LINE / (1024 * 1024)
                ),
            ))
        } else {
            self.route.line(self.lines.text())
        };
        match routed {
            RoutedLine::Rmcp(message) => Some(message),
            RoutedLine::Reply(answer) => {
                self.reply = Some(answer);
                None
            }
            RoutedLine::Done => None,
        }
    }
}

impl<R: AsyncRead + Send + Unpin + 'static> Transport<RoleServer> for StdioTransport<R> {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let line = self.route.encode(item);
        let write = self.write.clone();
        async move {
            match line {
                Some(line) => write.send(line?).await,
                None => Ok(()),
            }
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            if let Some(reply) = self.reply.take() {
                // Best effort: if this future is dropped mid-write, the reply is not retried.
                if self.write.send(reply).await.is_err() {
                    return None;
                }
            }
            let line = match self.lines.next(false).await {
                Ok(LineRead::End) => {
                    self.route.answers().drain(DRAIN_AT_END).await;
                    return None;
                }
                Ok(line) => line,
                Err(error) => {
                    tracing::warn!(%error, "cannot read from the client");
                    return None;
                }
            };
            if let Some(message) = self.take_line(line) {
                return Some(message);
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.route.answers().drain(DRAIN_AT_STOP).await;
        self.write.close().await;
        Ok(())
    }
}

/// Why `serve` stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("the MCP client did not complete initialization: {0}")]
    Initialize(String),
}

/// Serves MCP on stdin/stdout until the client disconnects or `shutdown` resolves, then stops
/// every child.
pub async fn serve(
    config: &Config,
    flat: Option<Arc<FlatSpec>>,
    shutdown: impl Future<Output = ()>,
    reloads: Reloads,
) -> Result<(), ServeError> {
    let (stdin, stdout) = rmcp::transport::stdio_pipes();
    let out = LineWriter::spawn(stdout);
    let state = SessionState::new(
        config,
        &Surface::new(config, flat.clone()),
        Setup::default(),
    );
    tokio::spawn(reload_each(state.clone(), flat, reloads));
    state.identify(Who {
        caller: None,
        session: "stdio".to_owned(),
        counted: false,
    });
    let transport = StdioTransport::new(stdin, out, state.clone());
    let outcome = serve_on(Session::One(state.clone()), transport, shutdown).await;
    state.shutdown().await;
    outcome
}

/// Serves each config of `reloads` from the moment it comes (the one session swaps to it).
async fn reload_each(
    state: Arc<SessionState>,
    mut flat: Option<Arc<FlatSpec>>,
    mut reloads: Reloads,
) {
    while let Some(config) = reloads.recv().await {
        match crate::reload::flat_of(flat.as_deref(), &config) {
            Ok(reloaded) => flat = reloaded,
            Err(problem) => {
                tracing::error!(%problem, "the config was not reloaded: it cannot be served flat; the running one stays");
                continue;
            }
        }
        state
            .reload(&config, &Surface::new(&config, flat.clone()), None)
            .await;
        tracing::info!(
            toolboxes = config.toolboxes.len(),
            "the reloaded config is served"
        );
    }
}

async fn serve_on<T, E, A>(
    session: Session,
    transport: T,
    shutdown: impl Future<Output = ()>,
) -> Result<(), ServeError>
where
    T: rmcp::transport::IntoTransport<RoleServer, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    tokio::pin!(shutdown);
    let running = tokio::select! {
        running = session.serve(transport) => match running {
            Ok(running) => running,
            // Input ended before a session began: a client that connected and left (a probe, a
            // 2026-07-28 client that only discovered), or empty input. A normal end.
            Err(ServerInitializeError::ConnectionClosed(_)) => {
                tracing::debug!("the client left before starting a session");
                return Ok(());
            }
            Err(error) => return Err(ServeError::Initialize(error.to_string())),
        },
        () = &mut shutdown => return Ok(()),
    };
    tracing::debug!("client initialized");
    let stop = running.cancellation_token();
    let waiting = running.waiting();
    tokio::pin!(waiting);
    tokio::select! {
        _ = &mut waiting => tracing::debug!("client disconnected"),
        () = &mut shutdown => {
            tracing::info!("shutting down");
            stop.cancel();
            let _ = waiting.await;
        }
    }
    Ok(())
}
