//! Server-sent events (the `text/event-stream` format) read from an HTTP response body, bounded
//! in size: what a streamable-HTTP or legacy SSE server sends its client.

use std::time::Duration;

/// One event: its `data` lines joined with `\n`, its type, its id and the reconnection delay
/// the server asked for.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Event {
    pub kind: Option<String>,
    pub data: Vec<u8>,
    pub id: Option<String>,
    pub retry: Option<Duration>,
}

/// The events of one response, read as its body arrives.
pub(super) struct EventStream {
    body: reqwest::Response,
    parser: Parser,
    limit: usize,
    ended: bool,
}

/// Events from bytes as they arrive.
#[derive(Default)]
struct Parser {
    buffer: Vec<u8>,
    /// Where the unread part of `buffer` starts.
    read: usize,
    event: Event,
    has_data: bool,
}

/// Why a stream stopped before its end.
#[derive(Debug)]
pub(super) enum StreamError {
    /// The connection broke (the text says how).
    Broken(String),
    /// An event larger than the limit.
    TooLarge,
}

impl EventStream {
    pub(super) fn new(body: reqwest::Response, limit: usize) -> Self {
        Self {
            body,
            parser: Parser::default(),
            limit,
            ended: false,
        }
    }

    /// The next event, `None` at the end of the stream. Events without data (comments,
    /// keep-alives, a priming event with only an id) are returned too: their id and retry count.
    pub(super) async fn next(&mut self) -> Result<Option<Event>, StreamError> {
        loop {
            if let Some(event) = self.parser.next_event() {
                return Ok(Some(event));
            }
            if self.ended {
                return Ok(None);
            }
            if self.parser.pending() > self.limit {
                return Err(StreamError::TooLarge);
            }
            match self.body.chunk().await {
                Ok(Some(chunk)) => self.parser.push(&chunk),
                Ok(None) => {
                    // An event not closed by a blank line is dropped, as the format says.
                    self.ended = true;
                    return Ok(None);
                }
                Err(error) => return Err(StreamError::Broken(super::describe_error(&error))),
            }
        }
    }
}

impl Parser {
    fn push(&mut self, bytes: &[u8]) {
        self.buffer.drain(..self.read);
        self.read = 0;
        self.buffer.extend_from_slice(bytes);
    }

    /// Bytes held for the event being read.
    fn pending(&self) -> usize {
        self.buffer.len() - self.read + self.event.data.len()
    }

    fn next_event(&mut self) -> Option<Event> {
        while let Some(line) = self.take_line() {
            if let Some(event) = self.field(&line) {
                return Some(event);
            }
        }
        None
    }

    /// The next whole line (CR, LF or CRLF ended), if the buffer holds one.
    fn take_line(&mut self) -> Option<Vec<u8>> {
        let rest = &self.buffer[self.read..];
        let end = rest
            .iter()
            .position(|byte| *byte == b'\n' || *byte == b'\r')?;
        let mut next = end + 1;
        if rest[end] == b'\r' {
            match rest.get(end + 1) {
                Some(b'\n') => next += 1,
                // A CR at the end of what arrived may be half of a CRLF.
                None => return None,
                Some(_) => {}
            }
        }
        let line = rest[..end].to_vec();
        self.read += next;
        Some(line)
    }

    /// Applies one line; a blank line completes the event.
    fn field(&mut self, line: &[u8]) -> Option<Event> {
        if line.is_empty() {
            let mut event = std::mem::take(&mut self.event);
            if !std::mem::take(&mut self.has_data) && event.id.is_none() && event.retry.is_none() {
                return None;
            }
            if event.data.last() == Some(&b'\n') {
                event.data.pop();
            }
            return Some(event);
        }
        if line[0] == b':' {
            return None;
        }
        let (name, value) = match line.iter().position(|byte| *byte == b':') {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &b""[..]),
        };
        match name {
            b"data" => {
                self.event.data.extend_from_slice(value);
                self.event.data.push(b'\n');
                self.has_data = true;
            }
            b"event" => self.event.kind = Some(String::from_utf8_lossy(value).into_owned()),
            b"id" if !value.contains(&0) => {
                self.event.id = Some(String::from_utf8_lossy(value).into_owned());
            }
            b"retry" => {
                if let Some(millis) = std::str::from_utf8(value)
                    .ok()
                    .and_then(|text| text.parse::<u64>().ok())
                {
                    self.event.retry = Some(Duration::from_millis(millis));
                }
            }
            _ => {}
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(chunks: &[&str]) -> Vec<Event> {
        let mut parser = Parser::default();
        let mut found = Vec::new();
        for chunk in chunks {
            parser.push(chunk.as_bytes());
            while let Some(event) = parser.next_event() {
                found.push(event);
            }
        }
        found
    }

    #[test]
    fn events_are_read_across_chunks_and_line_endings() {
        let found = events(&[
            ": keep-alive\r\n\r\nid: e1\nretry: 500\ndata: \n\n",
            "event: message\r\nid: e2\r\ndata: {\"a\":",
            "1}\r",
            "\ndata: second line\r\n\r\nevent: endpoint\ndata: /messages?s=1\n\n",
        ]);
        assert_eq!(
            found,
            vec![
                Event {
                    kind: None,
                    data: Vec::new(),
                    id: Some("e1".into()),
                    retry: Some(Duration::from_millis(500)),
                },
                Event {
                    kind: Some("message".into()),
                    data: b"{\"a\":1}\nsecond line".to_vec(),
                    id: Some("e2".into()),
                    retry: None,
                },
                Event {
                    kind: Some("endpoint".into()),
                    data: b"/messages?s=1".to_vec(),
                    id: None,
                    retry: None,
                },
            ]
        );
    }

    #[test]
    fn an_unfinished_event_is_held() {
        let mut parser = Parser::default();
        parser.push(b"data: {\"partial\": true}\n");
        assert_eq!(parser.next_event(), None);
        assert!(parser.pending() > 0);
    }
}
