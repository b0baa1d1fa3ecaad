//! A remote server's HTTP failures in words: the status, the body's text, a connection or TLS
//! error (an untrusted certificate said as such).

use reqwest::StatusCode;
use serde::Deserialize;

/// "HTTP 401 Unauthorized".
pub(super) fn describe_status(status: StatusCode) -> String {
    match status.canonical_reason() {
        Some(reason) => format!("HTTP {} {reason}", status.as_u16()),
        None => format!("HTTP {}", status.as_u16()),
    }
}

/// A JSON-RPC error's message from an error body, or the body's text in one line.
pub(super) fn error_text(body: &[u8]) -> String {
    #[derive(Deserialize)]
    struct Body {
        error: Message,
    }
    #[derive(Deserialize)]
    struct Message {
        message: String,
    }
    if let Ok(body) = serde_json::from_slice::<Body>(body) {
        return body.error.message;
    }
    let text = String::from_utf8_lossy(body);
    let text: Vec<&str> = text.split_whitespace().collect();
    crate::children::child::excerpt(&text.join(" "))
}

/// Up to `limit` bytes of a body; whatever arrived if it breaks.
pub(super) async fn read_limited(mut response: reqwest::Response, limit: usize) -> Vec<u8> {
    let mut body = Vec::new();
    while body.len() < limit {
        match response.chunk().await {
            Ok(Some(chunk)) => body.extend_from_slice(&chunk),
            Ok(None) | Err(_) => break,
        }
    }
    body.truncate(limit);
    body
}

/// What went wrong, from an HTTP client error and its causes, without the URL (which may hold
/// a key).
pub(super) fn describe_error(error: &reqwest::Error) -> String {
    let mut parts = Vec::new();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        parts.push(cause.to_string());
        source = cause.source();
    }
    // hyper's causes repeat each other ("client error (Connect)", "tcp connect error", the OS
    // error): the last one says it plainly.
    match parts.last() {
        Some(last) if error.is_connect() => last.clone(),
        _ if error.is_timeout() => "the server did not answer in time".into(),
        _ => {
            parts.dedup();
            if parts.is_empty() {
                error.to_string()
            } else {
                parts.join(": ")
            }
        }
    }
}

/// True when TLS refused the server's certificate.
pub(super) fn untrusted_certificate(error: &reqwest::Error) -> bool {
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        if matches!(
            tls_error(cause),
            Some(rustls::Error::InvalidCertificate(_) | rustls::Error::NoCertificatesPresented)
        ) {
            return true;
        }
        source = cause.source();
    }
    false
}

/// The TLS error in `error`, also where I/O errors wrap it (hyper's connector wraps twice).
pub(super) fn tls_error<'a>(
    error: &'a (dyn std::error::Error + 'static),
) -> Option<&'a rustls::Error> {
    if let Some(tls) = error.downcast_ref::<rustls::Error>() {
        return Some(tls);
    }
    let inner = error.downcast_ref::<std::io::Error>()?.get_ref()?;
    tls_error(inner)
}
