//! Starting a child: spawn (or connect), `initialize` (or, for a child that refuses it,
//! `server/discover` on a second process), then `tools/list`, all within its startup timeout.

use std::{
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicU64, AtomicUsize},
    },
    time::Instant,
};

use rmcp::{
    ServiceExt,
    handler::client::ClientHandler,
    model::{ProtocolVersion, RequestMetaObject},
    service::{ClientInitializeError, ClientLifecycleMode, ClientServiceExt},
};

use super::{
    Launch,
    child_transport::{ChildTransport, FirstLine, not_json_rpc},
    client::{ChildClient, Hop},
    link::Link,
    remote::HTTP_FAILURE,
    tool_calls::ToolCalls,
    tool_list,
};
use crate::{
    catalog::ServerCatalog,
    catalog::cache::{ListIdentity, Offer},
    config::ServerSpec,
    jsonrpc::line_writer::LineWriter,
};

use super::{
    call_error::StartError,
    child::{self, Child, DEATH_REPORT_WAIT, stop_in_background},
};

/// How a start talks to the child before its first call.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Era {
    /// `initialize` on the newest 2025 revision rmcp offers; the child picks its own.
    Legacy,
    /// `server/discover`, then every request with its own `_meta` (2026-07-28).
    Modern,
}

/// A start that did not succeed, and whether the child refused `initialize` itself.
pub(super) enum Attempt {
    Refused { cause: String, end: String },
    Failed(StartError),
}

impl Child {
    /// Spawns the server, initializes it and lists its tools into `catalog`, all within its
    /// startup timeout. On any failure the process is being stopped when this returns.
    ///
    /// `initialize` comes first: every child of the 2025 revisions answers it at once, and most
    /// that know 2026-07-28 too. One that refuses it with an error may speak only 2026-07-28:
    /// a second process of it is asked with `server/discover` (a probe first would make every
    /// legacy child that ignores it wait out a timeout).
    pub(crate) async fn start(
        launch: &Launch,
        toolbox: &str,
        spec: Arc<ServerSpec>,
        catalog: Arc<ServerCatalog>,
    ) -> Result<Child, StartError> {
        let began = Instant::now();
        let legacy = Self::start_as(Era::Legacy, launch, toolbox, &spec, &catalog, began).await;
        let (cause, end) = match legacy {
            Ok(child) => return Ok(child),
            Err(Attempt::Failed(error)) => return Err(error),
            Err(Attempt::Refused { cause, end }) => (cause, end),
        };
        let modern = Self::start_as(Era::Modern, launch, toolbox, &spec, &catalog, began).await;
        let modern = match modern {
            Ok(child) => return Ok(child),
            Err(Attempt::Failed(error)) => error.to_string(),
            Err(Attempt::Refused { cause, .. }) => cause,
        };
        Err(StartError::Protocol {
            stage: "initialize",
            cause: format!(
                "{cause}; asked with server/discover (protocol 2026-07-28) instead, it failed too: {modern}"
            ),
            end,
        })
    }

    async fn start_as(
        era: Era,
        launch: &Launch,
        toolbox: &str,
        spec: &Arc<ServerSpec>,
        catalog: &Arc<ServerCatalog>,
        began: Instant,
    ) -> Result<Child, Attempt> {
        let span = tracing::info_span!("child", toolbox = %toolbox, server = %spec.name);
        let protocol = (era == Era::Modern).then_some(ProtocolVersion::V_2026_07_28.as_str());
        let (link, ends) = Link::open(&launch.registry, spec, protocol, span.clone())
            .map_err(|error| Attempt::Failed(error.into()))?;

        let oversized = Arc::new(AtomicBool::new(false));
        let stopping = Arc::new(AtomicBool::new(false));
        let calls = ToolCalls::default();
        let input = LineWriter::spawn(ends.write);
        let mut client = ChildClient {
            catalog: catalog.clone(),
            span: span.clone(),
            stopping: stopping.clone(),
            calls: calls.clone(),
            input: input.clone(),
            relist_timeout: spec.call_timeout,
            agent: launch.agent.clone(),
            origin: format!("{toolbox}/{}", spec.name).into(),
            hop: None,
        };
        if era == Era::Modern {
            let info = client.get_info();
            let meta = RequestMetaObject::with_client_context(
                ProtocolVersion::V_2026_07_28,
                info.client_info,
                info.capabilities,
            );
            client.hop = Some(Arc::new(Hop::new(meta, launch.agent.log_level())));
        }
        let first_line = FirstLine::default();
        let transport = ChildTransport::new(
            ends.read,
            input.clone(),
            calls.clone(),
            oversized.clone(),
            first_line.clone(),
        );
        let hop = client.hop();
        let handshake = async {
            let session = match era {
                Era::Legacy => client.clone().serve(transport).await,
                Era::Modern => {
                    let discover = ClientLifecycleMode::Discover {
                        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                    };
                    client
                        .clone()
                        .serve_with_lifecycle(transport, discover)
                        .await
                }
            };
            let session = session.map_err(|error| {
                // A request that failed over HTTP was not refused by the server's MCP side.
                let refused = matches!(
                    &error,
                    ClientInitializeError::JsonRpcError(error) if error.code.0 != HTTP_FAILURE
                );
                (refused, "initialize", error.to_string())
            })?;
            // The startup timeout bounds the whole handshake; each page gets all of it.
            let tools = tool_list::list_tools(&calls, &input, spec.startup_timeout, hop.as_deref())
                .await
                .map_err(|error| (false, "tools/list", error))?;
            Ok::<_, (bool, &'static str, String)>((session, tools))
        };
        let left = spec.startup_timeout.saturating_sub(began.elapsed());
        let outcome = tokio::time::timeout(left, handshake).await;
        let (session, tools) = match outcome {
            Ok(Ok(started)) => started,
            Ok(Err((refused, stage, cause))) => {
                // A child that died mid-handshake is explained by its exit, not by which pipe
                // operation happened to notice first.
                let cause = match link.wait_ended(DEATH_REPORT_WAIT).await {
                    true => link.end_cause().to_owned(),
                    false => cause,
                };
                let cause = not_json_rpc(&first_line).unwrap_or(cause);
                let end = link.describe_end();
                if refused && era == Era::Legacy {
                    // Its exit is part of the plan, not news for the log.
                    link.expect_end();
                    stop_in_background(link);
                    return Err(Attempt::Refused { cause, end });
                }
                stop_in_background(link);
                return Err(Attempt::Failed(StartError::Protocol { stage, cause, end }));
            }
            Err(_) => {
                let mut end = link.describe_end();
                if let Some(said) = not_json_rpc(&first_line) {
                    end.push_str("; ");
                    end.push_str(&said);
                }
                stop_in_background(link);
                return Err(Attempt::Failed(StartError::Timeout {
                    limit: spec.startup_timeout,
                    end,
                }));
            }
        };
        let startup = began.elapsed();
        let answer = session.peer().peer_info();
        let offer = Offer::of(&launch.agent.child_capabilities());
        catalog.replace(tools, &ListIdentity::of(answer.as_deref(), offer));
        if era == Era::Legacy
            && let Some(level) = launch.agent.log_level()
        {
            child::set_log_level(session.peer(), level).await;
        }
        tracing::debug!(parent: &span, tools = catalog.tools().len(), startup_ms = startup.as_millis() as u64, "child ready");
        Ok(Child {
            peer: session.peer().clone(),
            session: tokio::sync::Mutex::new(Some(session)),
            spec: spec.clone(),
            startup,
            link,
            input,
            calls,
            oversized,
            stopping,
            in_flight: AtomicUsize::new(0),
            last_used_ms: AtomicU64::new(0),
            born: Instant::now(),
            client,
        })
    }
}
