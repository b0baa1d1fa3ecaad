//! `toolshelf serve --http`: MCP over streamable HTTP at `/mcp`, for many agents at once.
//! rmcp's streamable HTTP service speaks the protocol (sessions, SSE streams, sessionless
//! 2026-07-28 requests) and checks `Host`, `Origin` and the body size, with toolshelf's session
//! manager routing each session's messages (`session_streams`); in front of it, toolshelf's
//! `gate` checks the bearer token, answers `/healthz`, `/readyz` and `/metrics`, a session's
//! `DELETE` and its plain `use_tool` calls (`direct`), and words rmcp's refusals so they say
//! what to do. `connection` closes connections that stall or sit idle; `access_log` is the
//! optional line per request. Each session is served by the same core as stdio (`session`).

mod access_log;
mod caller_view;
mod callers;
mod challenge;
mod connection;
mod direct;
mod gate;
mod response;
mod session_streams;
mod sessions;
mod stream_routes;

use std::{convert::Infallible, future::Future, net::SocketAddr, sync::Arc, time::Duration};

use http::Request;
use hyper::body::Incoming;
use hyper_util::{rt::TokioIo, server::graceful::GracefulShutdown};
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

pub use access_log::ACCESS_LOG_FILTER;
pub use callers::{Callers, DEFAULT_CALLER};

use crate::{
    config::{Config, HttpLimits},
    resource_server::{OAuthOptions, ResourceServer},
};
use connection::{Connections, GuardedBody};
use direct::DirectPath;
use gate::Gate;
use response::Body;
use session_streams::SessionStreams;
use sessions::Sessions;

/// Where `serve --http` listens unless told: loopback, a fixed port.
pub const DEFAULT_ADDRESS: &str = "127.0.0.1:8411";
/// How long calls in flight may take to finish after a shutdown signal.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// How `serve --http` is exposed.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    pub address: SocketAddr,
    /// The bearer tokens agents may send, each a named caller; `None`: none is asked.
    pub callers: Option<Callers>,
    /// Serve without a token on a non-loopback address.
    pub insecure_no_auth: bool,
    /// Origins allowed besides loopback ones (`https://app.example.com:443`, `:*` for any port).
    pub allowed_origins: Vec<String>,
    /// `Host` values allowed besides loopback names.
    pub allowed_hosts: Vec<String>,
    /// Flat mode: the children's tools by `server:tool` names instead of the two meta-tools.
    pub flat: Option<Arc<crate::flat::FlatSpec>>,
    /// OAuth access tokens admitted besides the named tokens (toolshelf as a resource server).
    pub oauth: Option<OAuthOptions>,
}

/// Why `serve --http` could not start.
#[derive(Debug, thiserror::Error)]
pub enum HttpServeError {
    #[error("{0}")]
    Refused(String),
    #[error(
        "cannot listen on {address}: {source}; give another address with --http ADDR (or stop what holds this one)"
    )]
    Bind {
        address: SocketAddr,
        source: std::io::Error,
    },
}

/// Serves each config of `reloads` from the moment it comes, unless no caller could satisfy its
/// access rules (then the running one stays).
async fn reload_each(
    sessions: Arc<Sessions>,
    mut flat: Option<Arc<crate::flat::FlatSpec>>,
    callers: Option<Callers>,
    oauth: bool,
    mut reloads: crate::reload::Reloads,
) {
    while let Some(config) = reloads.recv().await {
        let checked = callers::check_policy(config.policy.as_deref(), callers.as_ref(), oauth)
            .and_then(|()| crate::reload::flat_of(flat.as_deref(), &config));
        match checked {
            Ok(reloaded) => flat = reloaded,
            Err(problem) => {
                tracing::error!(%problem, "the config was not reloaded; the running one stays");
                continue;
            }
        }
        let toolboxes = config.toolboxes.len();
        sessions.reload(Arc::new(config), flat.clone()).await;
        tracing::info!(toolboxes, "the reloaded config is served");
    }
}

/// Refuses an exposure that would let anyone on the network use the children: a non-loopback
/// address without a token, unless the user said `--insecure-no-auth`.
pub fn check_exposure(options: &HttpOptions) -> Result<(), HttpServeError> {
    let loopback = options.address.ip().is_loopback();
    let guarded = options.callers.is_some() || options.oauth.is_some();
    match (guarded, loopback, options.insecure_no_auth) {
        (false, false, false) => Err(HttpServeError::Refused(format!(
            "refusing to serve on {} without a token: anyone who can reach it could run your servers' tools. Set a token with TOOLSHELF_TOKEN or --token-file FILE, or one per caller with --tokens-dir DIR (agents send theirs as `Authorization: Bearer TOKEN`), bind a loopback address, or pass --insecure-no-auth to run unprotected",
            options.address
        ))),
        (false, false, true) => {
            tracing::warn!(address = %options.address, "serving WITHOUT AUTHENTICATION on a non-loopback address (--insecure-no-auth): anyone who can reach it can run your servers' tools");
            Ok(())
        }
        (false, true, _) => {
            tracing::info!(address = %options.address, "serving without a token: loopback only, as stdio is");
            Ok(())
        }
        (true, _, _) => Ok(()),
    }
}

/// Serves until `shutdown` resolves, then lets calls in flight finish (at most
/// `SHUTDOWN_GRACE`), ends the sessions and stops every child.
pub async fn serve_http(
    config: Config,
    options: HttpOptions,
    shutdown: impl Future<Output = ()>,
    reloads: crate::reload::Reloads,
) -> Result<(), HttpServeError> {
    let oauth = options.oauth.is_some();
    callers::check_policy(config.policy.as_deref(), options.callers.as_ref(), oauth)
        .map_err(HttpServeError::Refused)?;
    check_exposure(&options)?;
    let listener = tokio::net::TcpListener::bind(options.address)
        .await
        .map_err(|source| HttpServeError::Bind {
            address: options.address,
            source,
        })?;
    let address = listener.local_addr().unwrap_or(options.address);
    let limits = config.http;
    let sessions = Sessions::new(Arc::new(config), options.flat.clone());
    tokio::spawn(reload_each(
        sessions.clone(),
        options.flat.clone(),
        options.callers.clone(),
        oauth,
        reloads,
    ));
    let resource_server = options
        .oauth
        .clone()
        .map(|oauth| Arc::new(ResourceServer::new(oauth)));
    if let Some(resource_server) = &resource_server {
        resource_server.warm_up().await;
    }
    let stop = CancellationToken::new();
    let manager = SessionStreams::start(limits.session_idle_timeout);
    let hosts = allowed_hosts(&options);
    let mcp = StreamableHttpService::new(
        {
            let sessions = sessions.clone();
            move || Ok::<crate::session::Session, std::io::Error>(sessions.handler())
        },
        manager.clone(),
        rmcp_config(&options, &limits, &hosts, stop.clone()),
    );
    let connections = Arc::new(Connections::new(
        limits.header_read_timeout,
        limits.connection_idle_timeout,
    ));
    let gate = Arc::new(Gate {
        connections: connections.clone(),
        callers: options.callers.clone(),
        resource_server,
        sessions: sessions.clone(),
        direct: DirectPath::new(sessions.clone(), manager.clone(), &hosts),
        streams: manager,
        mcp,
    });
    tracing::info!(%address, "serving MCP over HTTP at /mcp");
    let graceful = GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        let (stream, _) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    tracing::warn!(%error, "accepting a connection failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        // With Nagle's algorithm on, each small SSE event waits for the last one's ACK.
        let _ = stream.set_nodelay(true);
        let gate = gate.clone();
        let watch = Arc::new(connections.accepted());
        let stream = TokioIo::new(watch.stream(stream));
        let service = hyper::service::service_fn({
            let watch = watch.clone();
            move |request: Request<Incoming>| {
                let gate = gate.clone();
                let guard = watch.request();
                async move {
                    let response = gate.route(request).await;
                    Ok::<_, Infallible>(response.map(|body| GuardedBody::new(body, guard)))
                }
            }
        });
        let connection =
            hyper::server::conn::http1::Builder::new().serve_connection(stream, service);
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            tokio::select! {
                ended = connection => if let Err(error) = ended {
                    tracing::debug!(%error, "connection ended with an error");
                },
                expired = watch.expired() => {
                    tracing::debug!(?expired, "connection closed: past its time limit");
                }
            }
        });
    }
    tracing::info!(sessions = sessions.open_sessions(), "shutting down");
    drop(listener);
    // Ends the sessions and their streams; a call in flight still gets its answer.
    stop.cancel();
    if tokio::time::timeout(SHUTDOWN_GRACE, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("connections still open after the grace period; closing them");
    }
    sessions.shutdown().await;
    Ok(())
}

/// The `Host` values served: loopback names and `--allowed-host`'s.
fn allowed_hosts(options: &HttpOptions) -> Vec<String> {
    let mut hosts: Vec<String> = ["localhost", "127.0.0.1", "::1", "[::1]"]
        .into_iter()
        .map(String::from)
        .collect();
    hosts.extend(options.allowed_hosts.iter().cloned());
    hosts
}

fn rmcp_config(
    options: &HttpOptions,
    limits: &HttpLimits,
    hosts: &[String],
    stop: CancellationToken,
) -> StreamableHttpServerConfig {
    let mut origins: Vec<String> = ["localhost", "127.0.0.1", "[::1]"]
        .into_iter()
        .flat_map(|host| ["http", "https"].map(|scheme| format!("{scheme}://{host}:*")))
        .collect();
    origins.extend(options.allowed_origins.iter().cloned());
    StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts.to_vec())
        .with_allowed_origins(origins)
        .enforce_origin_validation()
        .with_max_request_body_bytes(limits.max_body_bytes)
        .with_cancellation_token(stop)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(address: &str, token: Option<&str>, insecure: bool) -> HttpOptions {
        HttpOptions {
            address: address.parse().expect("address"),
            callers: Callers::load(token.map(String::from), None).expect("callers"),
            insecure_no_auth: insecure,
            allowed_origins: Vec::new(),
            allowed_hosts: Vec::new(),
            flat: None,
            oauth: None,
        }
    }

    #[test]
    fn a_non_loopback_address_needs_a_token_or_an_explicit_insecure_flag() {
        let refused = check_exposure(&options("0.0.0.0:8411", None, false))
            .expect_err("refused")
            .to_string();
        assert!(refused.contains("token"), "{refused}");
        assert!(refused.contains("TOOLSHELF_TOKEN"), "{refused}");
        assert!(check_exposure(&options("0.0.0.0:8411", Some("t"), false)).is_ok());
        assert!(check_exposure(&options("0.0.0.0:8411", None, true)).is_ok());
        assert!(check_exposure(&options("127.0.0.1:8411", None, false)).is_ok());
        assert!(check_exposure(&options("[::1]:8411", None, false)).is_ok());
    }
}
