//! The server's event streams: a POST's answer as events, and the GET stream of what the
//! server sends on its own, resumed with `Last-Event-ID` after a drop.

use super::*;

impl Streamable {
    /// Passes a response stream's messages on until the answer to `awaited` came; a stream that
    /// ends before is resumed from its last event id.
    pub(super) async fn read_events(
        &self,
        response: reqwest::Response,
        awaited: Option<Box<RawValue>>,
        initialize: bool,
    ) {
        let mut stream = EventStream::new(response, CHILD_MESSAGE_LIMIT);
        let mut last_id: Option<String> = None;
        let mut retry = None;
        let mut empty_ends = 0;
        loop {
            let ended = match stream.next().await {
                Ok(Some(event)) => {
                    if event.id.is_some() {
                        last_id = event.id;
                    }
                    retry = event.retry.or(retry);
                    if event.data.trim_ascii().is_empty() {
                        continue;
                    }
                    empty_ends = 0;
                    let answered = awaited.as_deref().is_some_and(|id| {
                        serde_json::from_slice::<BridgeKeys<'_>>(&event.data)
                            .is_ok_and(|envelope| envelope.answers(id))
                    });
                    if answered && initialize {
                        self.note_protocol(&event.data);
                    }
                    self.bridge.deliver(&event.data).await;
                    if answered {
                        self.drain(stream).await;
                        return;
                    }
                    continue;
                }
                Ok(None) => None,
                Err(StreamError::Broken(reason)) => Some(reason),
                Err(StreamError::TooLarge) => {
                    self.bridge.lose(&too_large());
                    return;
                }
            };
            // The stream ended before the answer (or carried no request's answer at all).
            let Some(id) = awaited.as_deref() else { return };
            let Some(resume_from) = last_id.clone() else {
                let reason = ended.unwrap_or_else(|| "closed by the server".into());
                let message = format!(
                    "the server's response stream ended before its answer ({reason}) and gave no event id to resume from; call the tool again"
                );
                self.bridge.refuse(id, &message).await;
                return;
            };
            empty_ends += 1;
            if empty_ends > EMPTY_RESUMES {
                let message = format!(
                    "the server ended the response stream {EMPTY_RESUMES} times in a row without sending anything; call the tool again"
                );
                self.bridge.refuse(id, &message).await;
                return;
            }
            tokio::time::sleep(retry_delay(retry)).await;
            let Some(response) = self.get_stream(Some(&resume_from)).await else {
                return;
            };
            let status = response.status();
            if !status.is_success() || !content_type(response.headers()).starts_with(EVENT_STREAM) {
                let text = read_limited(response, super::super::ERROR_BODY_LIMIT).await;
                let message = format!(
                    "resuming the response stream failed: {}",
                    self.bridge.failure_text(status, &text)
                );
                self.bridge.refuse(id, &message).await;
                return;
            }
            stream = EventStream::new(response, CHILD_MESSAGE_LIMIT);
        }
    }

    /// Reads what follows an answer on its stream, briefly: a server closes the stream after
    /// the answer, and a response read to its end lets the connection be used again (one
    /// dropped before its end is closed, and the next request pays for a new one).
    pub(super) async fn drain(&self, mut stream: EventStream) {
        let _ = tokio::time::timeout(DRAIN_LIMIT, async {
            while let Ok(Some(event)) = stream.next().await {
                self.bridge.deliver(&event.data).await;
            }
        })
        .await;
    }

    /// Opens a GET event stream (resuming after `last_id`); `None` if the server is gone.
    pub(super) async fn get_stream(&self, last_id: Option<&str>) -> Option<reqwest::Response> {
        let (mut headers, _) = self.headers(None);
        if let Some(last_id) = last_id.and_then(|id| HeaderValue::from_str(id).ok()) {
            headers.insert(LAST_EVENT_ID, last_id);
        }
        self.bridge
            .send(|| {
                self.bridge
                    .request(Method::GET, self.url())
                    .headers(headers.clone())
                    .header(ACCEPT, EVENT_STREAM)
            })
            .await
    }

    /// The server's own messages (list changes, its requests not tied to a call), on the GET
    /// stream, for as long as the server offers one.
    pub(super) async fn listen(&self) {
        let mut last_id: Option<String> = None;
        let mut retry = None;
        loop {
            let (headers, generation) = self.headers(None);
            let had_session = headers.contains_key(SESSION_ID_HEADER);
            let Some(response) = self.get_stream(last_id.as_deref()).await else {
                return;
            };
            let status = response.status();
            if !status.is_success() {
                let text = read_limited(response, super::super::ERROR_BODY_LIMIT).await;
                if status == StatusCode::METHOD_NOT_ALLOWED {
                    return;
                }
                if had_session && forgotten(status, &text) {
                    if let Err(reason) = self.renew(generation).await {
                        tracing::debug!(%reason, "the server's event stream cannot be reopened");
                        return;
                    }
                    last_id = None;
                    continue;
                }
                let message = self.bridge.failure_text(status, &text);
                tracing::debug!(%message, "the server refused its event stream");
                return;
            }
            if !content_type(response.headers()).starts_with(EVENT_STREAM) {
                return;
            }
            let mut stream = EventStream::new(response, CHILD_MESSAGE_LIMIT);
            loop {
                match stream.next().await {
                    Ok(Some(event)) => {
                        if event.id.is_some() {
                            last_id = event.id;
                        }
                        retry = event.retry.or(retry);
                        self.bridge.deliver(&event.data).await;
                    }
                    Ok(None) | Err(StreamError::Broken(_)) => break,
                    Err(StreamError::TooLarge) => {
                        self.bridge.lose(&too_large());
                        return;
                    }
                }
            }
            tokio::time::sleep(retry_delay(retry)).await;
        }
    }
}
