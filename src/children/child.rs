//! One started child: its process, its MCP client session and the tools it listed. Starting,
//! calling and stopping a child all happen here.

use std::{
    sync::Arc,
    time::{Duration, Instant},
};

use rmcp::{
    RoleClient, ServiceExt,
    model::{
        CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotificationParam,
        ClientRequest, JsonObject, ServerResult, Tool,
    },
    service::{PeerRequestOptions, RunningService, ServiceError},
};
use tokio_util::sync::CancellationToken;

use super::{
    client::ChildClient,
    process::{Process, SpawnError},
    registry::ProcessRegistry,
};
use crate::config::ServerSpec;

/// How long to wait for a dead child's exit status and last stderr lines before reporting.
const DEATH_REPORT_WAIT: Duration = Duration::from_millis(500);

/// A child that answered `initialize` and `tools/list`.
pub(crate) struct Child {
    pub spec: Arc<ServerSpec>,
    /// The tools the agent may see and call, after `toolFilters`, in the child's order.
    pub tools: Vec<Tool>,
    /// Time from spawn to the end of `tools/list`.
    pub startup: Duration,
    peer: rmcp::Peer<RoleClient>,
    session: tokio::sync::Mutex<Option<RunningService<RoleClient, ChildClient>>>,
    process: Process,
}

/// Why a child could not be started. The text is shown to the agent.
#[derive(Debug, thiserror::Error)]
pub(crate) enum StartError {
    #[error(transparent)]
    Spawn(#[from] SpawnError),
    #[error("did not finish starting within {limit:?} (startupTimeout): {end}")]
    Timeout { limit: Duration, end: String },
    #[error("{stage} failed: {cause}; {end}")]
    Protocol {
        stage: &'static str,
        cause: String,
        end: String,
    },
}

/// Why a forwarded call failed; the text becomes `{downstream error}` of seed 003.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CallError {
    #[error("{message} (JSON-RPC error {code})")]
    Protocol { code: i32, message: String },
    #[error("no response within {limit:?} (callTimeout); the call was cancelled at the server")]
    Timeout { limit: Duration },
    #[error("the server stopped before answering: {end}")]
    Died { end: String },
    #[error("the call was cancelled by the client")]
    Cancelled,
    #[error("{0}")]
    Other(String),
}

impl Child {
    /// Spawns the server, initializes it and lists its tools, all within its startup timeout.
    /// On any failure the process is stopped before this returns.
    pub(crate) async fn start(
        registry: &Arc<ProcessRegistry>,
        toolbox: &str,
        spec: Arc<ServerSpec>,
    ) -> Result<Child, StartError> {
        let span = tracing::info_span!("child", toolbox = %toolbox, server = %spec.name);
        let began = Instant::now();
        let (process, pipes) = Process::spawn(registry, &spec, span.clone())?;
        tracing::debug!(parent: &span, pid = ?process.pid, "child spawned");

        let handshake = async {
            let session = ChildClient
                .serve((pipes.stdout, pipes.stdin))
                .await
                .map_err(|error| ("initialize", error.to_string()))?;
            let tools = session
                .peer()
                .list_all_tools()
                .await
                .map_err(|error| ("tools/list", error.to_string()))?;
            Ok::<_, (&'static str, String)>((session, tools))
        };
        let outcome = tokio::time::timeout(spec.startup_timeout, handshake).await;
        let (session, tools) = match outcome {
            Ok(Ok(started)) => started,
            Ok(Err((stage, cause))) => {
                // A child that died mid-handshake is explained by its exit, not by which pipe
                // operation happened to notice first.
                let cause = match process.wait_ended(DEATH_REPORT_WAIT).await {
                    Some(_) => "the server closed the connection".to_owned(),
                    None => cause,
                };
                process.stop().await;
                return Err(StartError::Protocol {
                    stage,
                    cause,
                    end: process.describe_end(),
                });
            }
            Err(_) => {
                process.stop().await;
                return Err(StartError::Timeout {
                    limit: spec.startup_timeout,
                    end: process.describe_end(),
                });
            }
        };
        let startup = began.elapsed();
        let tools: Vec<Tool> = tools
            .into_iter()
            .filter(|tool| spec.tool_filter.keeps(&tool.name))
            .collect();
        tracing::info!(parent: &span, tools = tools.len(), startup_ms = startup.as_millis() as u64, "child ready");
        Ok(Child {
            peer: session.peer().clone(),
            session: tokio::sync::Mutex::new(Some(session)),
            spec,
            tools,
            startup,
            process,
        })
    }

    pub(crate) fn tool(&self, name: &str) -> Option<&Tool> {
        self.tools.iter().find(|tool| tool.name == name)
    }

    /// True once the child's process has ended or its connection is closed.
    pub(crate) fn is_gone(&self) -> bool {
        self.process.exit().is_some() || self.peer.is_transport_closed()
    }

    /// "the process exited with status 1; last stderr lines: …"
    pub(crate) fn describe_end(&self) -> String {
        self.process.describe_end()
    }

    /// Forwards `tools/call` and returns the child's result as it came. `cancel` is the agent's
    /// cancellation of its own request: the child is told at once.
    pub(crate) async fn call(
        &self,
        name: &str,
        arguments: Option<JsonObject>,
        cancel: &CancellationToken,
    ) -> Result<CallToolResult, CallError> {
        let mut params = CallToolRequestParams::new(name.to_owned());
        params.arguments = arguments;
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let options =
            PeerRequestOptions::with_timeout(self.spec.call_timeout).reset_timeout_on_progress();
        let handle = self
            .peer
            .send_request_with_option(request, options)
            .await
            .map_err(|error| self.call_error(error))?;
        let id = handle.id.clone();
        tokio::select! {
            response = handle.await_response() => match response {
                Ok(ServerResult::CallToolResult(result)) => Ok(result),
                Ok(_) => Err(CallError::Other(
                    "the server answered tools/call with a result that is not a tool result".into(),
                )),
                Err(error) => Err(self.call_error(error)),
            },
            () = cancel.cancelled() => {
                let notice = CancelledNotificationParam::new(Some(id), Some("cancelled by the client".into()));
                let _ = self.peer.notify_cancelled(notice).await;
                Err(CallError::Cancelled)
            }
        }
    }

    fn call_error(&self, error: ServiceError) -> CallError {
        match error {
            ServiceError::McpError(error) => CallError::Protocol {
                code: error.code.0,
                message: error.message.into_owned(),
            },
            ServiceError::Timeout { timeout } => CallError::Timeout { limit: timeout },
            ServiceError::TransportClosed | ServiceError::TransportSend(_) => {
                CallError::Died { end: String::new() }
            }
            ServiceError::Cancelled { .. } => CallError::Cancelled,
            other => CallError::Other(other.to_string()),
        }
    }

    /// Fills in how the process ended, once it has (bounded wait).
    pub(crate) async fn explain(&self, error: CallError) -> CallError {
        match error {
            CallError::Died { .. } => {
                self.process.wait_ended(DEATH_REPORT_WAIT).await;
                CallError::Died {
                    end: self.process.describe_end(),
                }
            }
            other => other,
        }
    }

    /// Closes the session (the child's stdin), then stops the process: SIGTERM, then SIGKILL.
    pub(crate) async fn shutdown(&self) {
        if let Some(mut session) = self.session.lock().await.take() {
            let _ = tokio::time::timeout(Duration::from_secs(1), session.close()).await;
        }
        self.process.stop().await;
    }
}
