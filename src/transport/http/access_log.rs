//! The access log of `serve --http`: one line per request, at target `toolshelf_access`, off
//! unless `serve --access-log` (or a log filter naming the target) turns it on. A line says what
//! an operator needs to follow a client (HTTP method, path, the session, the caller its token
//! names, the tool a call named,
//! the status and the time until the response's head) and nothing a client sent as a secret or
//! as data: no token or other header value, no argument. A session is named by the first eight
//! characters of its id, enough to tell sessions apart in a log and not enough to take one over.

use std::time::Instant;

use http::{Method, Request, StatusCode};

use crate::revision::SESSION_ID_HEADER;

/// The tracing target of access lines.
pub(super) const TARGET: &str = "toolshelf_access";

/// The log filter directive that turns the access log on.
pub const ACCESS_LOG_FILTER: &str = "toolshelf_access=info";

/// How much of a session id a line shows.
const SESSION_SHOWN: usize = 8;

/// One request on its way through the gate.
pub(super) struct AccessEntry {
    began: Instant,
    method: Method,
    path: String,
    session: Option<String>,
    /// The caller whose token the request carried (`serve --http` with tokens).
    pub(super) caller: Option<std::sync::Arc<str>>,
    /// The tool a call names (`toolbox/server/name`, or a flat name), where the gate read it.
    pub(super) call: Option<String>,
}

impl AccessEntry {
    /// An entry for `request`, or `None` when the access log is off (nothing is recorded then).
    pub(super) fn begin<B>(request: &Request<B>) -> Option<Self> {
        if !tracing::enabled!(target: TARGET, tracing::Level::INFO) {
            return None;
        }
        let session = request
            .headers()
            .get(SESSION_ID_HEADER)
            .and_then(|id| id.to_str().ok())
            .map(|id| id.chars().take(SESSION_SHOWN).collect());
        Some(Self {
            began: Instant::now(),
            method: request.method().clone(),
            path: request.uri().path().to_owned(),
            session,
            caller: None,
            call: None,
        })
    }

    pub(super) fn finish(self, status: StatusCode) {
        tracing::info!(
            target: TARGET,
            method = %self.method,
            path = %self.path,
            session = %self.session.as_deref().unwrap_or("-"),
            caller = %self.caller.as_deref().unwrap_or("-"),
            call = %self.call.as_deref().unwrap_or("-"),
            status = status.as_u16(),
            micros = u64::try_from(self.began.elapsed().as_micros()).unwrap_or(u64::MAX),
            "request"
        );
    }
}
