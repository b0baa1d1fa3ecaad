//! Asking the user to confirm a call an access rule says must be confirmed: an elicitation of
//! toolshelf's own, sent to the agent of the session whose call it is before the call is
//! forwarded. The call goes on only if the user accepts; a client that cannot be asked (it did
//! not declare elicitation) gets a refusal that names the rule.

use rmcp::model::ServerRequest;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::{
    children::{Agent, Relayed},
    error::{ToolError, Unconfirmed},
};

/// Asks the user whether the call of `toolbox`/`server`/`name` may go on, as `rule` (its path
/// in the config) requires.
pub(super) async fn ask(
    agent: &Agent,
    (toolbox, server, name): (&str, &str, &str),
    rule: &str,
    cancel: &CancellationToken,
) -> Result<(), ToolError> {
    let refused = |why: Unconfirmed| ToolError::Unconfirmed {
        toolbox: toolbox.to_owned(),
        server: server.to_owned(),
        name: name.to_owned(),
        rule: rule.to_owned(),
        why,
    };
    let request = json!({
        "method": "elicitation/create",
        "params": {
            "message": format!("Allow the tool {name} of {toolbox}/{server} to run? toolshelf asks because of the rule {rule}."),
            "requestedSchema": {"type": "object", "properties": {}},
        },
    });
    let request: ServerRequest = serde_json::from_value(request)
        .map_err(|error| refused(Unconfirmed::NotAsked(error.to_string())))?;
    let nobody = || Vec::new();
    // The question takes the way a question of the server's own would: a 2026-07-28 client
    // answers it as a round of the call in flight to that server, which is this call. It is
    // toolshelf's question all the same, and the refusal says so.
    let origin = format!("{toolbox}/{server}");
    let answer = agent
        .relay(
            Relayed::Elicitation,
            request,
            &origin,
            None,
            &nobody,
            cancel,
        )
        .await
        .map_err(|error| {
            let from = format!(" from {origin} ");
            let reason = error.message.replacen(&from, " from toolshelf ", 1);
            refused(Unconfirmed::NotAsked(reason))
        })?;
    let answer = serde_json::to_value(&answer).unwrap_or_default();
    match answer["action"].as_str() {
        Some("accept") => Ok(()),
        Some("decline") => Err(refused(Unconfirmed::Declined)),
        _ => Err(refused(Unconfirmed::Cancelled)),
    }
}
