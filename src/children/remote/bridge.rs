//! The bridge of one remote child: what its tasks share (the HTTP client, the endpoint, the
//! session, the token) and how a request's HTTP failure becomes its JSON-RPC error.

use std::time::Instant;

use reqwest::{StatusCode, header::HeaderMap};
use serde::Deserialize;
use serde_json::value::RawValue;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::{
    CONNECT_ATTEMPTS, HTTP_FAILURE,
    http_failure::{describe_error, describe_status, error_text, untrusted_certificate},
};
use crate::{jsonrpc::line_writer::LineWriter, oauth::Grant};

/// What the bridge tasks of one connection share.
pub(super) struct Bridge {
    pub(super) http: reqwest::Client,
    pub(super) url: reqwest::Url,
    pub(super) shown_url: String,
    /// The configured headers, marked sensitive.
    pub(super) headers: HeaderMap,
    /// The configured header values (and their tokens), kept out of every message.
    pub(super) secrets: Vec<String>,
    /// The OAuth login, for servers with `"auth": "oauth"`.
    pub(super) grant: Option<Grant>,
    /// The child's side: messages from the server, one per line.
    pub(super) out: LineWriter,
    pub(super) ended: watch::Sender<Option<String>>,
    pub(super) stop: CancellationToken,
}

/// The members of a message the bridge routes by.
#[derive(Deserialize)]
pub(super) struct BridgeKeys<'a> {
    #[serde(borrow, default)]
    pub id: Option<&'a RawValue>,
    #[serde(default)]
    pub method: Option<String>,
    #[serde(borrow, default)]
    pub result: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub error: Option<&'a RawValue>,
}

impl BridgeKeys<'_> {
    pub(super) fn is_request(&self) -> bool {
        self.id.is_some() && self.method.is_some()
    }

    /// True for the response to request `id`.
    pub(super) fn answers(&self, id: &RawValue) -> bool {
        self.method.is_none()
            && (self.result.is_some() || self.error.is_some())
            && self.id.is_some_and(|own| own.get() == id.get())
    }
}

impl Bridge {
    /// Passes one message from the server to the child's side.
    pub(super) async fn deliver(&self, message: &[u8]) {
        let text = message.trim_ascii();
        if text.is_empty() {
            return;
        }
        let mut line = Vec::with_capacity(text.len() + 1);
        line.extend_from_slice(text);
        line.push(b'\n');
        let _ = self.out.send(line).await;
    }

    /// Answers the child's request `id` with an error, as if the server had.
    pub(super) async fn refuse(&self, id: &RawValue, message: &str) {
        self.deliver_error(id, HTTP_FAILURE, message, None).await;
    }

    /// Passes on a JSON-RPC error answering request `id`, its message without secrets.
    async fn deliver_error(
        &self,
        id: &RawValue,
        code: i32,
        message: &str,
        data: Option<Box<RawValue>>,
    ) {
        let mut error = serde_json::json!({"code": code, "message": self.redact(message)});
        if let Some(data) = data {
            error["data"] = serde_json::to_value(data).unwrap_or_default();
        }
        let answer = serde_json::json!({"jsonrpc": "2.0", "id": id, "error": error});
        if let Ok(line) = serde_json::to_vec(&answer) {
            self.deliver(&line).await;
        }
    }

    /// Answers request `id` with the server's own JSON-RPC error from an HTTP error `body`
    /// (its code and data, with `message`), or as `refuse` does when the body is not one.
    pub(super) async fn answer_error(&self, id: &RawValue, body: &[u8], message: &str) {
        #[derive(Deserialize)]
        struct Body {
            error: Error,
        }
        #[derive(Deserialize)]
        struct Error {
            code: i32,
            #[serde(default)]
            data: Option<Box<RawValue>>,
        }
        match serde_json::from_slice::<Body>(body) {
            Ok(Body { error }) => {
                self.deliver_error(id, error.code, message, error.data)
                    .await;
            }
            Err(_) => self.refuse(id, message).await,
        }
    }

    /// The connection is gone: every call waiting fails with `reason`, and the next call
    /// connects again.
    pub(super) fn lose(&self, reason: &str) {
        let reason = self.redact(reason);
        tracing::warn!(url = %self.shown_url, %reason, "connection to the server lost");
        self.ended.send_if_modified(|ended| {
            if ended.is_some() {
                return false;
            }
            *ended = Some(reason);
            true
        });
        self.stop.cancel();
    }

    /// `text` without any configured header value or OAuth token (a server may echo a token
    /// back).
    pub(super) fn redact(&self, text: &str) -> String {
        let mut text = text.to_owned();
        for secret in &self.secrets {
            text = text.replace(secret.as_str(), "[redacted]");
        }
        match &self.grant {
            Some(grant) => grant.redact(&text),
            None => text,
        }
    }

    /// A request to the server with the configured headers.
    pub(super) fn request(
        &self,
        method: reqwest::Method,
        url: &reqwest::Url,
    ) -> reqwest::RequestBuilder {
        self.http
            .request(method, url.clone())
            .headers(self.headers.clone())
    }

    /// Sends what `build` makes, trying again while the connection is refused (`CONNECT_ATTEMPTS`),
    /// with the OAuth token where the server has a login (renewed once if the server refuses
    /// it). `None` when the server cannot be reached: the connection is then lost.
    pub(super) async fn send(
        &self,
        build: impl Fn() -> reqwest::RequestBuilder,
    ) -> Option<reqwest::Response> {
        let (response, token) = self.send_authorized(&build).await?;
        if response.status() == StatusCode::UNAUTHORIZED
            && let (Some(grant), Some(token)) = (&self.grant, token)
            && grant.renew(&token).await
        {
            return self
                .send_authorized(&build)
                .await
                .map(|(response, _)| response);
        }
        if response.status() == StatusCode::FORBIDDEN
            && let Some(grant) = &self.grant
        {
            grant.refused(&response);
        }
        Some(response)
    }

    /// `request` with the OAuth token, if the server has a login; the token goes with it.
    /// `None` when there is no valid login: the connection is then lost with what the user
    /// must do.
    pub(super) async fn authorize(
        &self,
        request: reqwest::RequestBuilder,
    ) -> Option<(reqwest::RequestBuilder, Option<String>)> {
        let Some(grant) = &self.grant else {
            return Some((request, None));
        };
        match grant.token().await {
            Ok(token) => Some((request.bearer_auth(&token), Some(token))),
            Err(reason) => {
                self.lose(&reason);
                None
            }
        }
    }

    async fn send_authorized(
        &self,
        build: &impl Fn() -> reqwest::RequestBuilder,
    ) -> Option<(reqwest::Response, Option<String>)> {
        let began = Instant::now();
        let mut cause = String::new();
        for wait in CONNECT_ATTEMPTS {
            // Not even a zero sleep on the first attempt: the timer rounds up to its next
            // millisecond tick, which was most of a remote call's cost.
            if !wait.is_zero() {
                tokio::time::sleep(wait).await;
            }
            let (request, token) = self.authorize(build()).await?;
            match request.send().await {
                Ok(response) => return Some((response, token)),
                Err(error) if untrusted_certificate(&error) => {
                    // Trying again cannot help.
                    self.lose(&format!(
                        "cannot connect: {}; if the server's certificate comes from a private authority, point SSL_CERT_FILE (or SSL_CERT_DIR) at that authority's certificate",
                        describe_error(&error)
                    ));
                    return None;
                }
                Err(error) if error.is_connect() => cause = describe_error(&error),
                Err(error) => {
                    self.lose(&describe_error(&error));
                    return None;
                }
            }
        }
        self.lose(&format!(
            "cannot connect: {cause} ({} attempts in {:.1?})",
            CONNECT_ATTEMPTS.len(),
            began.elapsed()
        ));
        None
    }

    /// "HTTP 401 Unauthorized: <the server's text>", from a response that is not a success
    /// and the start of its body.
    pub(super) fn failure_text(&self, status: StatusCode, body: &[u8]) -> String {
        let detail = error_text(body);
        let mut message = describe_status(status);
        if !detail.is_empty() {
            message.push_str(": ");
            message.push_str(&detail);
        }
        let advice = match (status, &self.grant) {
            (StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN, Some(grant)) => grant.advice(),
            (StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN, None) => {
                "; check the credentials in this server's `headers`".into()
            }
            (StatusCode::NOT_FOUND | StatusCode::METHOD_NOT_ALLOWED, _) => {
                "; check the server's `url` (toolshelf uses it as given)".into()
            }
            _ => String::new(),
        };
        message.push_str(&advice);
        self.redact(&message)
    }
}
