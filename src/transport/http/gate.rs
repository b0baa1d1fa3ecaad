//! What stands in front of rmcp's service: the bearer token, `/healthz`, `/readyz`, `/metrics`,
//! the direct path for a session's plain calls, the end of a session (DELETE), and toolshelf's
//! own texts where rmcp's would leave a client without the next step.

use std::sync::Arc;

use super::{
    access_log::AccessEntry,
    caller_view::REQUEST_CALLER,
    callers::{Caller, Callers},
    challenge,
    connection::Connections,
    direct::{DirectPath, RoutedRequest},
    response::{Body, respond, text},
    session_streams::SessionStreams,
    sessions::Sessions,
};
use bytes::Bytes;
use http::{Method, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Full};
use hyper::body::{Body as _, Incoming};
use rmcp::transport::StreamableHttpService;

use crate::{resource_server::ResourceServer, revision::SESSION_ID_HEADER};

/// What stands in front of rmcp's service.
pub(super) struct Gate {
    pub(super) connections: Arc<Connections>,
    pub(super) callers: Option<Callers>,
    /// Checks OAuth access tokens, where `--oauth-issuer` names authorization servers.
    pub(super) resource_server: Option<Arc<ResourceServer>>,
    pub(super) sessions: Arc<Sessions>,
    /// `use_tool` calls of known sessions, answered past rmcp.
    pub(super) direct: DirectPath,
    pub(super) streams: Arc<SessionStreams>,
    /// rmcp's service, called by reference: its `Service::call` clones it (its config, the
    /// allowed hosts and origins) for every request.
    pub(super) mcp: StreamableHttpService<crate::session::Session, SessionStreams>,
}

impl Gate {
    pub(super) async fn route(&self, request: Request<Incoming>) -> Response<Body> {
        let mut access = AccessEntry::begin(&request);
        let response = self.answer(request, access.as_mut()).await;
        if let Some(access) = access {
            access.finish(response.status());
        }
        response
    }

    async fn answer(
        &self,
        mut request: Request<Incoming>,
        mut access: Option<&mut AccessEntry>,
    ) -> Response<Body> {
        let body_unread = !request.body().is_end_stream();
        let path = request.uri().path();
        match path {
            "/healthz" => return text(StatusCode::OK, "alive\n"),
            "/readyz" => return text(StatusCode::OK, "ready\n"),
            // Names of toolboxes and servers are the operator's business: the token guards them.
            "/metrics" | "/mcp" => {}
            _ => {
                if let Some(server) = &self.resource_server
                    && server.metadata_paths().iter().any(|known| known == path)
                {
                    return respond(StatusCode::OK, Some("application/json"), server.metadata());
                }
                let not_found = text(
                    StatusCode::NOT_FOUND,
                    "not found: toolshelf serves MCP at /mcp (and /healthz, /readyz, /metrics)\n",
                );
                return closing(not_found, body_unread);
            }
        }
        let admitted = match self.admit(&request).await {
            Ok(admitted) => admitted,
            Err(refusal) => return closing(refusal, body_unread),
        };
        let mut request_caller = None;
        if let Admitted::Caller(caller) = admitted {
            if let Some(entry) = access.as_deref_mut() {
                entry.caller = Some(caller.name.clone());
            }
            // A session belongs to the caller that began it: to another, it does not exist.
            let session = request.headers().get(SESSION_ID_HEADER);
            let id = session.and_then(|id| id.to_str().ok());
            if id.is_some_and(|id| self.sessions.is_foreign(id, &caller)) {
                let refusal = match request.method() == Method::DELETE {
                    true => not_found_to_end(),
                    false => text(StatusCode::NOT_FOUND, "Not Found: Session not found"),
                };
                return closing(refusal, body_unread);
            }
            request_caller = Some(caller);
        }
        // rmcp's handlers read the caller from the request; the direct path has the session's.
        let for_rmcp = |extensions: &mut http::Extensions, caller: &Option<Caller>| {
            if let Some(caller) = caller {
                extensions.insert(caller.clone());
            }
        };
        match request.uri().path() {
            "/metrics" => respond(
                StatusCode::OK,
                Some("application/openmetrics-text; version=1.0.0; charset=utf-8"),
                self.sessions.metrics(self.connections.open()),
            ),
            _ if request.method() == Method::DELETE => {
                for_rmcp(request.extensions_mut(), &request_caller);
                self.end_session(request).await
            }
            _ => match self.direct.route(request, access).await {
                RoutedRequest::Answered(response) => response,
                // rmcp makes the session's handler inside `handle`, for this caller's view.
                RoutedRequest::Passed(mut request) => {
                    for_rmcp(request.extensions_mut(), &request_caller);
                    let handled = REQUEST_CALLER.scope(request_caller, self.mcp.handle(request));
                    explained(handled.await).await
                }
            },
        }
    }

    /// A client's end of its session: rmcp checks the request (Host, Origin, session header,
    /// protocol version) and ends the session; toolshelf answers 204 where it ended one, and
    /// 404 where no session has the id (rmcp answers 202 to both, and clients such as the
    /// Python SDK take a 202 for a failure).
    async fn end_session(&self, request: Request<Incoming>) -> Response<Body> {
        let known = request
            .headers()
            .get(SESSION_ID_HEADER)
            .and_then(|id| id.to_str().ok())
            .map(|id| self.streams.knows(id));
        let response = explained(self.mcp.handle(request).await).await;
        match (response.status(), known) {
            (StatusCode::ACCEPTED, Some(true)) => {
                respond(StatusCode::NO_CONTENT, None, Bytes::new())
            }
            (StatusCode::ACCEPTED, _) => not_found_to_end(),
            _ => response,
        }
    }

    /// Who sends `request`: anyone when no token is asked, else the caller whose token it
    /// carries (a named token's, or an access token's subject); the refusal to send when it
    /// carries none of them.
    async fn admit(&self, request: &Request<Incoming>) -> Result<Admitted, Response<Body>> {
        if self.callers.is_none() && self.resource_server.is_none() {
            return Ok(Admitted::Anyone);
        }
        let given = request
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| {
                let (scheme, token) = value.split_once(' ')?;
                scheme
                    .eq_ignore_ascii_case("bearer")
                    .then_some(token.trim())
            })
            .unwrap_or_default();
        let named = self
            .callers
            .as_ref()
            .and_then(|callers| callers.identify(given.as_bytes()));
        if let Some(name) = named {
            return Ok(Admitted::Caller(Caller::token(name)));
        }
        let Some(server) = &self.resource_server else {
            return Err(unauthorized(given.is_empty()));
        };
        if given.is_empty() {
            return Err(challenge::missing(server));
        }
        match server.verify(given).await {
            Ok(verified) => Ok(Admitted::Caller(Caller::verified(verified))),
            Err(refusal) => Err(challenge::refused(server, refusal)),
        }
    }
}

/// Who a request comes from, once admitted.
enum Admitted {
    /// No token is asked (loopback, or `--insecure-no-auth`).
    Anyone,
    Caller(Caller),
}

/// `response`, sent before the request's body was read, with `Connection: close` where the
/// request has one. hyper closes such a connection when the body has not all come by then, and
/// says nothing: a client that sent its headers and body apart (httpx does) would send its next
/// request, such as an OAuth client's retry with its new token, into a closed socket.
fn closing(mut response: Response<Body>, body_unread: bool) -> Response<Body> {
    if body_unread {
        response.headers_mut().insert(
            header::CONNECTION,
            header::HeaderValue::from_static("close"),
        );
    }
    response
}

/// A DELETE of a session that does not exist (for this caller).
fn not_found_to_end() -> Response<Body> {
    text(
        StatusCode::NOT_FOUND,
        "Not Found: no session has this id (it ended already: DELETE, idle expiry or a restart of toolshelf); nothing to end\n",
    )
}

/// 401 with `WWW-Authenticate: Bearer` and what to send: whether a token came at all (the
/// token itself is never echoed).
fn unauthorized(missing: bool) -> Response<Body> {
    let (body, error) = match missing {
        true => (
            "toolshelf needs a bearer token, and this request has none: send `Authorization: Bearer TOKEN` with your token (TOOLSHELF_TOKEN, --token-file or your file of --tokens-dir, where toolshelf was started)\n",
            "Bearer",
        ),
        false => (
            "toolshelf does not know the bearer token this request sent: send the token toolshelf was started with (TOOLSHELF_TOKEN, --token-file or your file of --tokens-dir); a token changed there takes a restart of toolshelf, or of the client after changing its copy\n",
            "Bearer error=\"invalid_token\"",
        ),
    };
    let mut refusal = text(StatusCode::UNAUTHORIZED, body);
    refusal.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        header::HeaderValue::from_static(error),
    );
    refusal
}

/// rmcp's response, with toolshelf's answer in place of one that leaves the client without the
/// next step: a `403` that does not say which flag admits the refused `Host` or `Origin`, and
/// a `415` for a body rmcp could not decode.
async fn explained(response: Response<Body>) -> Response<Body> {
    let status = response.status();
    if status != StatusCode::FORBIDDEN && status != StatusCode::UNSUPPORTED_MEDIA_TYPE {
        return response;
    }
    let (parts, body) = response.into_parts();
    let said = body
        .collect()
        .await
        .map(|body| body.to_bytes())
        .unwrap_or_default();
    let ours = match status {
        StatusCode::FORBIDDEN => forbidden(&said),
        _ => undecodable(&said),
    };
    ours.unwrap_or_else(|| Response::from_parts(parts, Full::new(said).boxed()))
}

/// rmcp's text after this prefix is serde_json's reason.
const UNDECODABLE: &[u8] = b"fail to deserialize request body ";

/// For a body rmcp could not decode as a JSON-RPC message (`said`: its 415's text), a JSON-RPC
/// error (the id cannot be read) with the reason and the rules. A tool's arguments that break
/// them on the paths toolshelf reads itself get an error result instead (`child_call::i_json`);
/// this is the rest (a client without a session, a browser's request).
fn undecodable(said: &[u8]) -> Option<Response<Body>> {
    let reason = String::from_utf8_lossy(said.strip_prefix(UNDECODABLE)?);
    let unreadable = ["number out of range", "surrogate", "recursion limit"]
        .iter()
        .any(|kind| reason.contains(kind));
    let (code, message) = match unreadable {
        true => (
            rmcp::model::ErrorCode::PARSE_ERROR,
            format!(
                "Parse error: the request holds JSON that MCP servers cannot read ({reason}): numbers must be within a double's range (±1.7976931348623157e308), strings must have no lone surrogate escape, and nesting must stay under 128 levels; fix the request and send it again"
            ),
        ),
        false => (
            rmcp::model::ErrorCode::INVALID_REQUEST,
            format!(
                "Invalid request: the body is not a JSON-RPC message of MCP ({reason}); send one request, notification or response as a JSON object"
            ),
        ),
    };
    let line = crate::jsonrpc::envelope::error_line(None, code, &message);
    Some(respond(
        StatusCode::BAD_REQUEST,
        Some("application/json"),
        line,
    ))
}

/// For rmcp's refusal of a `Host` or `Origin` (`said`: its 403's text), the flag that admits it.
fn forbidden(said: &[u8]) -> Option<Response<Body>> {
    let text = match said {
        b"Forbidden: Host header is not allowed" => {
            "Forbidden: toolshelf does not serve this Host: it answers loopback names (localhost, 127.0.0.1, [::1]) and the names given with --allowed-host HOST (the name agents reach it by, behind a proxy or in a pod)\n"
        }
        b"Forbidden: Origin header is not allowed" | b"Forbidden: Invalid Origin header" => {
            "Forbidden: toolshelf does not admit this Origin: it admits loopback origins (http or https, any port) and those given with --allowed-origin ORIGIN (e.g. --allowed-origin https://app.example.com:443, or :* for any port)\n"
        }
        _ => return None,
    };
    Some(self::text(StatusCode::FORBIDDEN, text))
}
