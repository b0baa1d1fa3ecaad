//! The size of what goes back to the agent. A stdio MCP message over `AGENT_MESSAGE_LIMIT` is
//! dropped by common clients (rmcp's codec among them) and the call would never answer; such a
//! result becomes an error that names the limit instead.

use crate::children::ToolResultJson;

/// The largest message toolshelf sends to the agent.
pub(crate) const AGENT_MESSAGE_LIMIT: usize = 16 * 1024 * 1024;

/// Room for the JSON-RPC envelope around a result: `{"jsonrpc":"2.0","id":…,"result":…}`.
const ENVELOPE: usize = 1024;

/// Passes `result` through unless the message carrying it would exceed the limit. The result is
/// forwarded as the child encoded it, so its length is exact.
pub(crate) fn check(result: ToolResultJson) -> Result<ToolResultJson, String> {
    let size = result.json().len();
    if size + ENVELOPE <= AGENT_MESSAGE_LIMIT {
        return Ok(result);
    }
    Err(format!(
        "the result is {:.1} MiB, over the {} MiB limit of one MCP message; ask the tool for less (a smaller range, a page, a filter)",
        size as f64 / (1024.0 * 1024.0),
        AGENT_MESSAGE_LIMIT / (1024 * 1024)
    ))
}
