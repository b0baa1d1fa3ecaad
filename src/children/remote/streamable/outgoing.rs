//! One message toolshelf sends to the server, read just enough to route its answer.

use super::*;

/// What the bridge needs to know of one outgoing message.
pub(super) struct Outgoing {
    pub(super) body: Bytes,
    pub(super) id: Option<Box<RawValue>>,
    pub(super) method: Option<String>,
    /// The tool, prompt or resource it names, for `Mcp-Name`.
    pub(super) name: Option<String>,
}

impl Outgoing {
    pub(super) fn read(line: Vec<u8>) -> Option<Outgoing> {
        #[derive(Deserialize)]
        struct Message {
            #[serde(default)]
            id: Option<Box<RawValue>>,
            #[serde(default)]
            method: Option<String>,
            #[serde(default)]
            params: Option<Params>,
        }
        #[derive(Deserialize)]
        struct Params {
            #[serde(default)]
            name: Option<String>,
            #[serde(default)]
            uri: Option<String>,
        }
        let message: Message = serde_json::from_slice(&line).ok()?;
        let name = message.params.and_then(|params| params.name.or(params.uri));
        Some(Outgoing {
            body: Bytes::from(line),
            id: message.id,
            method: message.method,
            name,
        })
    }

    /// The request id, for a request (a response to the server has an id too).
    pub(super) fn request_id(&self) -> Option<&RawValue> {
        self.method.as_ref().and(self.id.as_deref())
    }

    pub(super) fn is_initialize(&self) -> bool {
        self.method.as_deref() == Some("initialize")
    }
}
