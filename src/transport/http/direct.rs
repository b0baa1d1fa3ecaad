//! The requests of a 2025-era session that its door serves (`use_tool` calls, 2025-11-25
//! tasks), answered in the gate, past rmcp's service, as stdio hands them to the door too.
//! rmcp's path costs a request its decoding into typed enums, a trip through the session's
//! service, a stream of its own, and the child's result decoded and encoded again; this path
//! reads the envelope, hands the request to the session (`SessionState::take`), and writes the
//! answer's bytes as a JSON body.
//!
//! It takes only what it can answer exactly as rmcp would: a POST in a session still open,
//! from a client rmcp's checks would admit (a loopback or allowed `Host`, no `Origin`, both media
//! types accepted, a JSON body of a stated length within the limit), calling a child's tool
//! without asking for progress (that needs a stream back) or with arguments no child could read
//! (refused at once, so no stream is needed; rmcp would answer 415); a 2025-11-25 session's
//! `tasks/…` requests and task-augmented calls, which only the door serves; and the
//! cancellation of such a request. Everything else goes to rmcp unchanged.

use std::{
    panic::AssertUnwindSafe,
    pin::Pin,
    sync::Arc,
    task::{Context, Poll},
};

use bytes::Bytes;
use futures::FutureExt;
use http::{HeaderMap, HeaderName, Method, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Either, Full, Limited};
use hyper::body::Incoming;

use super::{
    access_log::AccessEntry,
    response::{Body, respond},
    session_streams::{DirectCallGuard, SessionStreams},
    sessions::Sessions,
};
use crate::{
    jsonrpc::envelope::{self, AgentId, Incoming as Message},
    jsonrpc::line_writer::Line,
    revision::{PROTOCOL_VERSION_HEADER, SESSION_ID_HEADER},
    session::{
        SessionState,
        door::{PendingAnswer, Request as DoorRequest, Routing},
        in_flight::{Cancelled, InUse},
        raw_arguments::RawArguments,
    },
};

/// A request's body as rmcp gets it: untouched, or read already by the direct path.
pub(super) type PassedBody = Either<Incoming, Full<Bytes>>;

/// What the direct path did with a request.
pub(super) enum RoutedRequest {
    Answered(Response<Body>),
    /// rmcp's to serve.
    Passed(Request<PassedBody>),
}

pub(super) struct DirectPath {
    sessions: Arc<Sessions>,
    streams: Arc<SessionStreams>,
    /// The `Host` values rmcp admits: (host, port if the entry names one).
    hosts: Vec<(String, Option<u16>)>,
    max_body: u64,
}

impl DirectPath {
    pub(super) fn new(
        sessions: Arc<Sessions>,
        streams: Arc<SessionStreams>,
        allowed_hosts: &[String],
    ) -> Self {
        let max_body = sessions.limits().max_body_bytes as u64;
        Self {
            hosts: allowed_hosts
                .iter()
                .filter_map(|allowed| {
                    let authority = http::uri::Authority::try_from(allowed.trim()).ok()?;
                    Some((bare_host(authority.host()).to_owned(), authority.port_u16()))
                })
                .collect(),
            sessions,
            streams,
            max_body,
        }
    }

    /// Answers `request` if it is this path's, noting the call it names in `access`. A POST it
    /// passes to rmcp goes with its body read, a `tools/call`'s arguments beside it as written
    /// (`RawArguments`), unless its stated length is over the limit, which rmcp refuses.
    pub(super) async fn route(
        &self,
        request: Request<Incoming>,
        access: Option<&mut AccessEntry>,
    ) -> RoutedRequest {
        let over_limit = single_value(request.headers(), header::CONTENT_LENGTH)
            .and_then(|length| length.parse::<u64>().ok())
            .is_some_and(|length| length > self.max_body);
        if request.method() != Method::POST || over_limit {
            return RoutedRequest::Passed(request.map(Either::Left));
        }
        // A session ended (DELETE, expiry) is gone before its handler is: rmcp's 404. The guard
        // keeps the session from expiring while its call runs, to the call's end even when the
        // client goes away before it (the call's task holds it).
        let own = self
            .own_session(&request)
            .and_then(|(id, state)| Some((self.streams.direct_call(id)?, state)));
        let (parts, body) = request.into_parts();
        let body = match Limited::new(body, self.max_body as usize).collect().await {
            Ok(body) => body.to_bytes(),
            Err(error) => {
                return RoutedRequest::Answered(super::response::unread(self.max_body, &*error));
            }
        };
        if let Some((in_use, state)) = own
            && let Some(response) = self.serve(&state, &body, in_use, access).await
        {
            return RoutedRequest::Answered(response);
        }
        RoutedRequest::Passed(for_rmcp(parts, body))
    }

    /// The session a request may be served in past rmcp, if it is one this path takes.
    fn own_session<'r>(
        &self,
        request: &'r Request<Incoming>,
    ) -> Option<(&'r str, Arc<SessionState>)> {
        if request.method() != Method::POST {
            return None;
        }
        let headers = request.headers();
        let id = headers.get(SESSION_ID_HEADER)?.to_str().ok()?;
        let state = self.sessions.by_id(id)?;
        let version = state.protocol()?;
        let admitted = !headers.contains_key(header::ORIGIN)
            && self.host_allowed(headers)
            && accepts_json_and_events(headers)
            && single_value(headers, header::CONTENT_TYPE)
                .is_some_and(|value| value.eq_ignore_ascii_case("application/json"))
            && single_value(headers, header::CONTENT_LENGTH)
                .and_then(|length| length.parse::<u64>().ok())
                .is_some_and(|length| length <= self.max_body)
            && headers
                .get(PROTOCOL_VERSION_HEADER)
                .is_none_or(|given| given.as_bytes() == version.as_str().as_bytes());
        admitted.then_some((id, state))
    }

    fn host_allowed(&self, headers: &HeaderMap) -> bool {
        let Some(authority) = single_value(headers, header::HOST)
            .and_then(|host| http::uri::Authority::try_from(host).ok())
        else {
            return false;
        };
        let (host, port) = (bare_host(authority.host()), authority.port_u16());
        self.hosts.iter().any(|(allowed, allowed_port)| {
            allowed.eq_ignore_ascii_case(host) && allowed_port.is_none_or(|p| Some(p) == port)
        })
    }

    /// The answer to a message this path takes; `None` passes it to rmcp.
    async fn serve(
        &self,
        state: &Arc<SessionState>,
        body: &[u8],
        in_use: DirectCallGuard,
        access: Option<&mut AccessEntry>,
    ) -> Option<Response<Body>> {
        match state.route(body) {
            Routing::Door(id, request) => {
                if request.needs_a_stream() {
                    return None;
                }
                if let Some(access) = access {
                    access.call = request.tool_named();
                }
                Some(answer(state, id, request, in_use).await)
            }
            Routing::Other(Message::Notification { method, params })
                if method == "notifications/cancelled" =>
            {
                let (id, _) = envelope::cancelled_request(params)?;
                match state.cancel(&id) {
                    Cancelled::Direct => {
                        tracing::debug!(%id, "call cancelled by the client");
                        Some(respond(StatusCode::ACCEPTED, None, Bytes::new()))
                    }
                    // Not one of this path's calls: rmcp's, or none.
                    Cancelled::Rmcp(_) | Cancelled::Unknown => None,
                }
            }
            _ => None,
        }
    }
}

/// `body` as rmcp gets it: a `tools/call`'s object of arguments taken out and put beside the
/// request as written, since rmcp's decoding would alter its numbers.
fn for_rmcp(mut parts: http::request::Parts, body: Bytes) -> Request<PassedBody> {
    let body = match RawArguments::split_message(&body) {
        Some((rest, arguments)) => {
            parts.extensions.insert(arguments);
            parts
                .headers
                .insert(header::CONTENT_LENGTH, rest.len().into());
            Bytes::from(rest)
        }
        None => body,
    };
    Request::from_parts(parts, Either::Right(Full::new(body)))
}

/// Runs one request to its end (a client that goes away does not cut it short, as on rmcp's
/// path) and answers with its result.
async fn answer(
    state: &Arc<SessionState>,
    id: AgentId,
    request: DoorRequest,
    in_use: DirectCallGuard,
) -> Response<Body> {
    let progress = state.progress_to_session(&request);
    let answer = match state.take(&id, request, progress) {
        Ok(answer) => answer,
        Err(_) => return json(Ok(InUse::answer(&id))),
    };
    let mut call = RunToEnd {
        answer: Some(answer),
        in_use: Some(in_use),
    };
    match AssertUnwindSafe(&mut call).catch_unwind().await {
        Ok(Some(line)) => json(line),
        // Cancelled: an event stream that ends without an answer, as rmcp's does.
        Ok(None) => respond(StatusCode::OK, Some("text/event-stream"), Bytes::new()),
        Err(_) => {
            call.answer = None;
            tracing::error!("a call ended without an answer: it panicked");
            json(Ok(envelope::error_line(
                None,
                rmcp::model::ErrorCode::INTERNAL_ERROR,
                "toolshelf failed while serving this call (its log has why); the call may have run, so check its effect before calling again",
            )))
        }
    }
}

/// A call's answer, awaited by its request; dropped before its end (the client went away), the
/// rest runs in a task of its own, the session held until then. Spawning every call instead
/// cost an aligned allocation and a trip through the scheduler each.
struct RunToEnd {
    answer: Option<PendingAnswer>,
    in_use: Option<DirectCallGuard>,
}

impl Future for RunToEnd {
    type Output = Option<serde_json::Result<Line>>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let Some(answer) = self.answer.as_mut() else {
            return Poll::Ready(None);
        };
        let line = std::task::ready!(answer.as_mut().poll(cx));
        self.answer = None;
        self.in_use = None;
        Poll::Ready(line)
    }
}

impl Drop for RunToEnd {
    fn drop(&mut self) {
        let (Some(answer), Ok(runtime)) =
            (self.answer.take(), tokio::runtime::Handle::try_current())
        else {
            return;
        };
        let in_use = self.in_use.take();
        runtime.spawn(async move {
            let _held = in_use;
            answer.await
        });
    }
}

/// The value of a header given once, its parameters (after `;`) left out.
fn single_value(headers: &HeaderMap, name: HeaderName) -> Option<&str> {
    let mut values = headers.get_all(name).iter();
    let value = values.next()?.to_str().ok()?;
    if values.next().is_some() {
        return None;
    }
    let essence = memchr::memchr(b';', value.as_bytes()).map_or(value, |at| &value[..at]);
    Some(essence.trim_ascii())
}

/// `Accept` lists both `application/json` and `text/event-stream`, without weights (a weighted
/// list is rmcp's to judge). One pass over each value's bytes: every request of a session has it.
fn accepts_json_and_events(headers: &HeaderMap) -> bool {
    let (mut json, mut events) = (false, false);
    for value in headers.get_all(header::ACCEPT) {
        let Ok(value) = value.to_str() else {
            return false;
        };
        if memchr::memchr2(b';', b'"', value.as_bytes()).is_some() {
            return false;
        }
        for entry in value.as_bytes().split(|byte| *byte == b',') {
            let entry = entry.trim_ascii();
            json |= entry.eq_ignore_ascii_case(b"application/json");
            events |= entry.eq_ignore_ascii_case(b"text/event-stream");
        }
    }
    json && events
}

/// A `Host`'s name without the brackets of an IPv6 address, compared without regard to case.
fn bare_host(host: &str) -> &str {
    host.trim_matches(['[', ']'])
}

fn json(line: serde_json::Result<impl Into<Line>>) -> Response<Body> {
    let line = line.map(Into::into).unwrap_or_else(|error| {
        tracing::error!(%error, "an answer could not be encoded");
        envelope::error_line(
            None,
            rmcp::model::ErrorCode::INTERNAL_ERROR,
            "toolshelf could not encode the answer to this call (its log has why); the call may have run, so check its effect before calling again",
        )
        .into()
    });
    respond(StatusCode::OK, Some("application/json"), line)
}

#[cfg(test)]
mod tests {
    use http::HeaderValue;

    use super::*;

    fn headers(name: HeaderName, values: &[&str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for value in values {
            headers.append(
                name.clone(),
                HeaderValue::from_str(value).expect("a header value"),
            );
        }
        headers
    }

    #[test]
    fn both_media_types_unweighted_are_what_this_path_takes() {
        let accepts = |values: &[&str]| accepts_json_and_events(&headers(header::ACCEPT, values));
        assert!(accepts(&["application/json, text/event-stream"]));
        assert!(accepts(&["TEXT/Event-Stream,application/JSON"]));
        assert!(accepts(&["application/json", "text/event-stream"]));
        assert!(accepts(&[" application/json ,\ttext/event-stream , */*"]));
        for refused in [
            &["application/json"][..],
            &["text/event-stream"],
            &["application/json;q=0.9, text/event-stream"],
            &["application/json, text/event-stream; charset=\"utf-8\""],
            &["application/json, \"text/event-stream\""],
            &["application/jsonx, text/event-stream"],
            &[],
        ] {
            assert!(!accepts(refused), "{refused:?}");
        }
        let mut opaque = headers(header::ACCEPT, &["application/json, text/event-stream"]);
        opaque.append(
            header::ACCEPT,
            HeaderValue::from_bytes(b"\xff").expect("a header value"),
        );
        assert!(!accepts_json_and_events(&opaque));
    }

    #[test]
    fn a_single_value_is_its_essence_and_a_repeated_header_has_none() {
        let one = headers(header::CONTENT_TYPE, &[" application/json ; charset=utf-8"]);
        assert_eq!(
            single_value(&one, header::CONTENT_TYPE),
            Some("application/json")
        );
        let two = headers(header::CONTENT_LENGTH, &["1", "1"]);
        assert_eq!(single_value(&two, header::CONTENT_LENGTH), None);
        assert_eq!(single_value(&two, header::HOST), None);
        assert_eq!(bare_host("[::1]"), "::1");
        assert_eq!(bare_host("LocalHost"), "LocalHost");
    }
}
