//! The size of what goes back to the agent. A stdio MCP message over `AGENT_MESSAGE_LIMIT` is
//! dropped by common clients (rmcp's codec among them) and the call would never answer; such a
//! result becomes an error that names the limit instead.

use std::io::Write;

use rmcp::model::{CallToolResult, ContentBlock};

/// The largest result toolshelf sends to the agent.
pub(crate) const AGENT_MESSAGE_LIMIT: usize = 16 * 1024 * 1024;

/// JSON escaping can make a string at most six times longer (`\u0000`).
const WORST_ESCAPE: usize = 6;

/// Passes `result` through unless its encoding would exceed the limit.
pub(crate) fn check(result: CallToolResult) -> Result<CallToolResult, String> {
    // Cheap bound first: only results that could be large are measured exactly.
    let payload: usize = result.content.iter().map(payload_len).sum();
    if payload.saturating_mul(WORST_ESCAPE) < AGENT_MESSAGE_LIMIT / 2
        && result.structured_content.is_none()
    {
        return Ok(result);
    }
    let size = encoded_len(&result);
    if size <= AGENT_MESSAGE_LIMIT {
        return Ok(result);
    }
    Err(format!(
        "the result is {:.1} MiB, over the {} MiB limit of one MCP message; ask the tool for less (a smaller range, a page, a filter)",
        size as f64 / (1024.0 * 1024.0),
        AGENT_MESSAGE_LIMIT / (1024 * 1024)
    ))
}

/// The bulk of a block; embedded resources are measured exactly.
fn payload_len(content: &ContentBlock) -> usize {
    match content {
        ContentBlock::Text(text) => text.text.len(),
        ContentBlock::Image(image) => image.data.len(),
        ContentBlock::Audio(audio) => audio.data.len(),
        ContentBlock::ResourceLink(_) => 1024,
        _ => AGENT_MESSAGE_LIMIT,
    }
}

/// Bytes of the JSON encoding, counted without building it.
fn encoded_len(result: &CallToolResult) -> usize {
    struct Count(usize);
    impl Write for Count {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len();
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    let _ = serde_json::to_writer(&mut count, result);
    count.0
}
