//! The HTTP+SSE transport of protocol 2024-11-05, client side, for servers that have not moved
//! to streamable HTTP (rmcp no longer ships a client for it): a GET opens the server's event
//! stream, whose first event names the endpoint to POST messages to; every answer comes on the
//! stream. The stream is the session: when it ends, the connection is lost.

use std::sync::Arc;

use bytes::Bytes;
use reqwest::{
    Method,
    header::{ACCEPT, CONTENT_TYPE},
};
use tokio::{io::DuplexStream, sync::watch, task::JoinSet};

use super::{
    Bridge, BridgeKeys,
    event_stream::{EventStream, StreamError},
    read_limited, read_lines,
};
use crate::{
    children::child_transport::{CHILD_MESSAGE_LIMIT, too_large},
    jsonrpc::line_reader::LineReader,
};

pub(super) async fn run(bridge: Arc<Bridge>, mut input: LineReader<DuplexStream>) {
    let (endpoint_tx, endpoint) = watch::channel(None);
    let events = tokio::spawn(listen(bridge.clone(), endpoint_tx));
    let mut posts = JoinSet::new();
    read_lines(&bridge, &mut input, |line| {
        while posts.try_join_next().is_some() {}
        posts.spawn(post(bridge.clone(), endpoint.clone(), Bytes::from(line)));
    })
    .await;
    posts.abort_all();
    events.abort();
}

/// Reads the event stream: the endpoint first, then the server's messages.
async fn listen(bridge: Arc<Bridge>, endpoint: watch::Sender<Option<reqwest::Url>>) {
    let opened = bridge
        .send(|| {
            bridge
                .request(Method::GET, &bridge.url)
                .header(ACCEPT, "text/event-stream")
        })
        .await;
    let Some(response) = opened else { return };
    let status = response.status();
    if !status.is_success() {
        let text = read_limited(response, super::ERROR_BODY_LIMIT).await;
        bridge.lose(&bridge.failure_text(status, &text));
        return;
    }
    let mut stream = EventStream::new(response, CHILD_MESSAGE_LIMIT);
    loop {
        match stream.next().await {
            Ok(Some(event)) => match event.kind.as_deref() {
                Some("endpoint") => {
                    let text = String::from_utf8_lossy(&event.data);
                    match bridge.url.join(text.trim()) {
                        // Messages carry the configured headers: they go to the server's own
                        // origin only.
                        Ok(url) if url.origin() == bridge.url.origin() => {
                            endpoint.send_replace(Some(url));
                        }
                        _ => {
                            bridge.lose(
                                "the server named an endpoint for messages that is not on its own origin; toolshelf sends nothing there",
                            );
                            return;
                        }
                    }
                }
                None | Some("message") => bridge.deliver(&event.data).await,
                Some(_) => {}
            },
            Ok(None) => {
                bridge.lose("the server ended its event stream");
                return;
            }
            Err(StreamError::Broken(reason)) => {
                bridge.lose(&format!("the event stream broke: {reason}"));
                return;
            }
            Err(StreamError::TooLarge) => {
                bridge.lose(&too_large());
                return;
            }
        }
    }
}

/// POSTs one message once the endpoint is known; a refusal answers the request.
async fn post(
    bridge: Arc<Bridge>,
    mut endpoint: watch::Receiver<Option<reqwest::Url>>,
    body: Bytes,
) {
    let Ok(url) = endpoint
        .wait_for(Option::is_some)
        .await
        .map(|url| url.clone())
    else {
        return;
    };
    let Some(url) = url else { return };
    let sent = bridge
        .send(|| {
            bridge
                .request(Method::POST, &url)
                .header(CONTENT_TYPE, "application/json")
                .body(body.clone())
        })
        .await;
    let Some(response) = sent else { return };
    let status = response.status();
    if status.is_success() {
        return;
    }
    let text = read_limited(response, super::ERROR_BODY_LIMIT).await;
    let message = bridge.failure_text(status, &text);
    match serde_json::from_slice::<BridgeKeys<'_>>(&body) {
        Ok(envelope) if envelope.is_request() => {
            if let Some(id) = envelope.id {
                bridge.refuse(id, &message).await;
            }
        }
        _ => tracing::debug!(%message, "the server refused a message"),
    }
}
