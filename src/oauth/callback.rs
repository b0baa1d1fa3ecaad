//! The end of a login: the browser is redirected to a loopback address toolshelf listens on
//! (`http://127.0.0.1:PORT/callback`, RFC 8252's loopback redirect) with the authorization
//! code. A few lines of HTTP/1.1, since this is the only request toolshelf ever serves there.

use std::time::Duration;

use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
};

/// How long one browser connection may take to send its request.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// The most of a request read: the redirect's URL is in its first line.
const REQUEST_LIMIT: usize = 16 * 1024;

pub(super) struct Callback {
    listener: TcpListener,
    pub redirect_uri: String,
}

impl Callback {
    /// Listens on loopback, on `port` or any free one.
    pub(super) async fn bind(port: Option<u16>) -> Result<Callback, String> {
        let listener = TcpListener::bind(("127.0.0.1", port.unwrap_or(0)))
            .await
            .map_err(|error| match port {
                Some(port) => format!(
                    "cannot listen on 127.0.0.1:{port} for the login's redirect ({error}); free the port, or change `oauth.callbackPort` (and the client's registered redirect URI)"
                ),
                None => format!("cannot listen on loopback for the login's redirect: {error}"),
            })?;
        let port = listener
            .local_addr()
            .map_err(|error| format!("cannot listen for the login's redirect: {error}"))?
            .port();
        Ok(Callback {
            listener,
            redirect_uri: format!("http://127.0.0.1:{port}/callback"),
        })
    }

    /// Waits for the redirect and answers the browser; the redirect's whole URL, or why the
    /// authorization server refused.
    pub(super) async fn wait(&self) -> Result<String, String> {
        loop {
            let mut stream = match self.listener.accept().await {
                Ok((stream, _)) => stream,
                Err(error) => {
                    // Out of file descriptors and the like: wait rather than spin.
                    tracing::debug!(%error, "accepting the login's redirect failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            };
            let target = match tokio::time::timeout(REQUEST_TIMEOUT, read_target(&mut stream)).await
            {
                Ok(Some(target)) => target,
                _ => continue,
            };
            let Some(query) = target.strip_prefix("/callback?") else {
                answer(&mut stream, "404 Not Found", "Not the login's redirect.").await;
                continue;
            };
            let redirect = format!("{}?{query}", self.redirect_uri);
            let Ok(url) = reqwest::Url::parse(&redirect) else {
                answer(&mut stream, "400 Bad Request", "The redirect is not a URL.").await;
                continue;
            };
            let parameter = |name: &str| {
                url.query_pairs()
                    .find(|(key, _)| key == name)
                    .map(|(_, value)| value.into_owned())
            };
            if let Some(error) = parameter("error") {
                let detail = match parameter("error_description") {
                    Some(description) => format!("{error}: {description}"),
                    None => error,
                };
                let page = format!("The login failed: {detail}. See the terminal.");
                answer(&mut stream, "400 Bad Request", &page).await;
                return Err(format!("the authorization server refused: {detail}"));
            }
            if parameter("code").is_none() {
                answer(&mut stream, "400 Bad Request", "The redirect has no code.").await;
                continue;
            }
            let page = "toolshelf is logged in. You may close this tab.";
            answer(&mut stream, "200 OK", page).await;
            return Ok(redirect);
        }
    }
}

/// The request target of a GET (`/callback?code=…`), from the request's first line.
async fn read_target(stream: &mut TcpStream) -> Option<String> {
    let mut head = Vec::new();
    let mut buffer = [0u8; 2048];
    while !head.windows(2).any(|pair| pair == b"\r\n") {
        let read = stream.read(&mut buffer).await.ok()?;
        if read == 0 || head.len() > REQUEST_LIMIT {
            return None;
        }
        head.extend_from_slice(&buffer[..read]);
    }
    let line = String::from_utf8_lossy(&head);
    let mut parts = line.split_whitespace();
    match (parts.next(), parts.next()) {
        (Some("GET"), Some(target)) => Some(target.to_owned()),
        _ => None,
    }
}

async fn answer(stream: &mut TcpStream, status: &str, text: &str) {
    let body = format!(
        "<!doctype html><meta charset=utf-8><title>toolshelf</title><p>{}</p>\n",
        escape(text)
    );
    let response = format!(
        "HTTP/1.1 {status}\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\ncache-control: no-store\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.shutdown().await;
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
