//! The refusals of a request whose access token is missing or not admitted, as RFC 6750 and
//! RFC 9728 shape them: the status, a `WWW-Authenticate: Bearer` challenge naming the Protected
//! Resource Metadata (where a client learns which authorization server to ask), and a text that
//! says what to do.

use http::{Response, StatusCode, header};

use super::response::{Body, respond};
use crate::resource_server::{Refusal, ResourceServer};

/// No token: the challenge without an error, as RFC 6750 asks.
pub(super) fn missing(server: &ResourceServer) -> Response<Body> {
    let body = format!(
        "toolshelf needs a bearer token: an access token from the authorization server that {} names (an MCP client with OAuth finds it from this answer), or a token toolshelf was given (--tokens-dir)\n",
        server.metadata_url()
    );
    challenged(StatusCode::UNAUTHORIZED, server, None, body)
}

pub(super) fn refused(server: &ResourceServer, refusal: Refusal) -> Response<Body> {
    match refusal {
        Refusal::Invalid(reason) => {
            let body = format!("{reason}\n");
            challenged(
                StatusCode::UNAUTHORIZED,
                server,
                Some(("invalid_token", &reason)),
                body,
            )
        }
        Refusal::Scope(needed) => {
            let reason = format!(
                "the token lacks a scope every request needs ({needed}): ask the authorization server for a token with scope=\"{needed}\""
            );
            let body = format!("{reason}\n");
            let mut response = challenged(
                StatusCode::FORBIDDEN,
                server,
                Some(("insufficient_scope", &reason)),
                body,
            );
            let said = response.headers().get(header::WWW_AUTHENTICATE);
            let with_scope = match said.and_then(|value| value.to_str().ok()) {
                Some(said) => format!("{said}, scope=\"{needed}\""),
                None => format!("Bearer scope=\"{needed}\""),
            };
            if let Ok(scope) = header::HeaderValue::from_str(&with_scope) {
                response
                    .headers_mut()
                    .insert(header::WWW_AUTHENTICATE, scope);
            }
            response
        }
        Refusal::Unavailable(reason) => {
            let mut response = respond(
                StatusCode::SERVICE_UNAVAILABLE,
                Some("text/plain; charset=utf-8"),
                format!("{reason}\n"),
            );
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, header::HeaderValue::from_static("5"));
            response
        }
    }
}

fn challenged(
    status: StatusCode,
    server: &ResourceServer,
    error: Option<(&str, &str)>,
    body: String,
) -> Response<Body> {
    let mut challenge = format!("Bearer resource_metadata=\"{}\"", server.metadata_url());
    if let Some((code, description)) = error {
        // A quoted-string holds no `"` or `\`.
        let description = description.replace(['"', '\\'], "'");
        challenge.push_str(&format!(
            ", error=\"{code}\", error_description=\"{description}\""
        ));
    }
    let mut response = respond(status, Some("text/plain; charset=utf-8"), body);
    if let Ok(value) = header::HeaderValue::from_str(&challenge) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
    response
}
