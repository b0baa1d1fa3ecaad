//! The responses toolshelf writes itself (refusals, its own texts, the direct path's answers),
//! for the gate, its OAuth challenges and the direct path alike.

use std::convert::Infallible;

use bytes::Bytes;
use http::{Response, StatusCode, header};
use http_body_util::{BodyExt, Full, combinators::BoxBody};

pub(super) type Body = BoxBody<Bytes, Infallible>;

pub(super) fn text(status: StatusCode, body: &'static str) -> Response<Body> {
    respond(status, Some("text/plain; charset=utf-8"), body)
}

/// A whole response: `status`, `content_type` (none for an empty body) and `body`.
pub(super) fn respond(
    status: StatusCode,
    content_type: Option<&'static str>,
    body: impl Into<Bytes>,
) -> Response<Body> {
    let mut response = Response::new(Full::new(body.into()).boxed());
    *response.status_mut() = status;
    if let Some(content_type) = content_type {
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            header::HeaderValue::from_static(content_type),
        );
    }
    response
}

/// The answer to a body that could not be read: past the limit (a body of no stated length),
/// or cut short.
pub(super) fn unread(
    limit: u64,
    error: &(dyn std::error::Error + Send + Sync + 'static),
) -> Response<Body> {
    if error.is::<http_body_util::LengthLimitError>() {
        let said = format!(
            "Payload Too Large: request body exceeds {limit} bytes (the config's http.maxBodyBytes)\n"
        );
        return respond(
            StatusCode::PAYLOAD_TOO_LARGE,
            Some("text/plain; charset=utf-8"),
            said,
        );
    }
    tracing::debug!(%error, "a request body could not be read");
    text(
        StatusCode::BAD_REQUEST,
        "Bad Request: the request body could not be read to the length its Content-Length states; send the whole body again\n",
    )
}
