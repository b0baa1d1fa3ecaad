//! What children offer besides tools, passed on in both modes: `prompts` (renamed
//! `{server}{separator}{prompt}`, as flat mode names tools) and `resources` (URIs as the servers
//! wrote them, routed back to the server that listed them), and completions of their
//! arguments. The servers are those a session can use: its open toolboxes', or in flat mode the
//! served ones. A child's JSON-RPC error comes back as it wrote it.

mod prompts;
mod resources;

use std::sync::Arc;

use rmcp::model::{
    CompleteRequestParams, CompleteResult, ErrorData, Reference, ServerCapabilities,
};
use tokio_util::sync::CancellationToken;

pub(crate) use prompts::{get as get_prompt, list as list_prompts};
pub(crate) use resources::ResourceRoutes;

use crate::{
    children::{CallError, Child},
    qualified_names as names,
    toolboxes::ServerSlot,
};

/// `server` and `name` as one name the agent sees.
fn qualified(server: &str, separator: &str, name: &str) -> String {
    names::join(server, separator, name)
}

/// The server and the server's own name of a qualified name.
fn split_qualified<'a>(name: &'a str, separator: &str) -> Option<(&'a str, &'a str)> {
    names::split(name, separator).ok()
}

/// "`kind` not found: NAME", with the closest of `listed` when one is close.
fn not_found<'a>(kind: &str, name: &str, listed: impl IntoIterator<Item = &'a str>) -> ErrorData {
    let mut message = format!("{kind} not found: {name}");
    if let Some(closest) = crate::suggest::closest(name, listed) {
        message.push_str(&format!("\nDid you mean: {closest}?"));
    }
    ErrorData::invalid_params(message, None)
}

/// The running child of `slot` (started if it is not running), if it declares what `has` asks.
/// A server that is not running and is known to lack it (from its last start, or the persisted
/// catalog) is not started for it.
async fn with_capability(
    slot: &ServerSlot,
    has: impl Fn(&ServerCapabilities) -> bool,
) -> Option<Arc<Child>> {
    if slot.live().is_none()
        && let Some(remembered) = slot.catalog.known_capabilities()
        && !has(&remembered)
    {
        return None;
    }
    let child = slot.ensure().await.ok()?;
    child
        .capabilities()
        .is_some_and(|capabilities| has(&capabilities))
        .then_some(child)
}

/// A child's failure to answer `method`, for the agent: its own JSON-RPC error as it wrote it,
/// anything else as an internal error that names the server.
fn child_failure(slot: &ServerSlot, method: &str, error: CallError) -> ErrorData {
    match error.into_child_error() {
        Ok(error) => error,
        Err(error) => ErrorData::internal_error(
            format!(
                "{method} failed at server '{}' (toolbox '{}'): {error}",
                slot.spec.name, slot.toolbox
            ),
            None,
        ),
    }
}

/// Request `method` of `slot`'s child, bounded by the server's call timeout, and its answer as
/// `T`; a failure, an unreadable answer included, as `child_failure` says it.
async fn ask<T: serde::de::DeserializeOwned>(
    slot: &ServerSlot,
    child: &Child,
    method: &'static str,
    params: impl serde::Serialize,
    cancel: &CancellationToken,
) -> Result<T, ErrorData> {
    let answer = child
        .request(method, params, Some(slot.spec.call_timeout), cancel)
        .await
        .map_err(|error| child_failure(slot, method, error))?;
    serde_json::from_str(answer.get()).map_err(|error| {
        let error = CallError::Unreadable {
            method,
            error: error.to_string(),
        };
        child_failure(slot, method, error)
    })
}

/// `completion/complete` of a prompt's or a resource template's argument, at the server whose
/// prompt or template it is.
pub(crate) async fn complete(
    servers: &[Arc<ServerSlot>],
    separator: &str,
    routes: &ResourceRoutes,
    mut request: CompleteRequestParams,
    cancel: &CancellationToken,
) -> Result<CompleteResult, ErrorData> {
    let slot = match &mut request.r#ref {
        Reference::Prompt(prompt) => {
            let qualified_name = prompt.name.clone();
            let found = split_qualified(&qualified_name, separator).and_then(|(server, name)| {
                let slot = servers.iter().find(|slot| slot.spec.name == server)?;
                Some((slot.clone(), prompts::canonical(slot, name)?.to_owned()))
            });
            let Some((slot, name)) = found else {
                return Err(not_found("Prompt", &qualified_name, []));
            };
            prompt.name = name;
            slot
        }
        Reference::Resource(template) => {
            routes
                .template_owner(servers, &template.uri, cancel)
                .await?
        }
        _ => {
            return Err(ErrorData::invalid_params(
                "completion/complete: toolshelf passes on completions of a prompt (ref/prompt) or a resource template (ref/resource) only",
                None,
            ));
        }
    };
    let Some(child) =
        with_capability(&slot, |capabilities| capabilities.completions.is_some()).await
    else {
        return Ok(CompleteResult::default());
    };
    request.meta = None;
    ask(&slot, &child, "completion/complete", &request, cancel).await
}
