//! The children's prompts: every prompt of the servers a session can use, named
//! `{server}{separator}{prompt}` as flat mode names tools; `prompts/get` of such a name reaches
//! the server's prompt, under the name the server gave it.

use std::sync::Arc;

use futures::future::join_all;
use rmcp::model::{ErrorData, GetPromptRequestParams, GetPromptResult, Prompt};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::{ask, not_found, qualified, split_qualified, with_capability};
use crate::toolboxes::ServerSlot;

/// Every prompt of `servers` that declare prompts, in server order. A server that cannot list
/// them is left out (the log says why).
pub(crate) async fn list(
    servers: &[Arc<ServerSlot>],
    separator: &str,
    cancel: &CancellationToken,
) -> Vec<Prompt> {
    let listed = join_all(servers.iter().map(|slot| async move {
        let child = with_capability(slot, |capabilities| capabilities.prompts.is_some()).await?;
        let items = match child.list_all("prompts/list", "prompts", cancel).await {
            Ok(items) => items,
            Err(error) => {
                tracing::warn!(toolbox = %slot.toolbox, server = %slot.spec.name, %error, "prompts/list failed; its prompts are left out");
                return None;
            }
        };
        let prompts = items.into_iter().filter_map(|item| {
            let prompt: Prompt = serde_json::from_value(item).ok()?;
            shown(slot, separator, prompt)
        });
        Some(prompts.collect::<Vec<_>>())
    }))
    .await;
    listed.into_iter().flatten().flatten().collect()
}

/// `prompt` as the agent sees it: the config's overrides applied (alias in place of its name,
/// title, description, the server's and the prompt's tags in `_meta`); `None` when hidden.
fn shown(slot: &ServerSlot, separator: &str, mut prompt: Prompt) -> Option<Prompt> {
    let change = slot.spec.prompts.get(&prompt.name);
    if change.is_some_and(|change| change.hidden) {
        return None;
    }
    let name = change
        .and_then(|change| change.alias.as_deref())
        .unwrap_or(&prompt.name);
    prompt.name = qualified(&slot.spec.name, separator, name);
    if let Some(change) = change {
        if change.title.is_some() {
            prompt.title = change.title.clone();
        }
        if change.description.is_some() {
            prompt.description = change.description.clone();
        }
    }
    let own = change
        .map(|change| change.tags.as_slice())
        .unwrap_or_default();
    prompt.meta = crate::catalog::tagged(prompt.meta.take(), &slot.spec.tags, own);
    Some(prompt)
}

/// The prompt of `slot` that `name` (an alias or a name) stands for, unless it is hidden.
pub(super) fn canonical<'a>(slot: &'a ServerSlot, name: &'a str) -> Option<&'a str> {
    let prompts = &slot.spec.prompts;
    if let Some((canonical, _)) = prompts
        .iter()
        .find(|(_, change)| change.alias.as_deref() == Some(name))
    {
        return Some(canonical);
    }
    (!prompts.get(name).is_some_and(|change| change.hidden)).then_some(name)
}

/// The prompt `request.name` names, from its server.
pub(crate) async fn get(
    servers: &[Arc<ServerSlot>],
    separator: &str,
    mut request: GetPromptRequestParams,
    cancel: &CancellationToken,
) -> Result<GetPromptResult, ErrorData> {
    let qualified_name = request.name.clone();
    let unknown = || async {
        let listed = list(servers, separator, cancel).await;
        not_found(
            "Prompt",
            &qualified_name,
            listed.iter().map(|prompt| prompt.name.as_str()),
        )
    };
    let Some((server, name)) = split_qualified(&qualified_name, separator) else {
        return Err(unknown().await);
    };
    let Some(slot) = servers.iter().find(|slot| slot.spec.name == server) else {
        return Err(unknown().await);
    };
    let Some(name) = canonical(slot, name) else {
        return Err(unknown().await);
    };
    let Some(child) = with_capability(slot, |capabilities| capabilities.prompts.is_some()).await
    else {
        return Err(unknown().await);
    };
    request.name = name.to_owned();
    let mut params = json!({ "name": request.name });
    if let Some(arguments) = request.arguments {
        params["arguments"] = serde_json::Value::Object(arguments);
    }
    ask(slot, &child, "prompts/get", params, cancel).await
}
