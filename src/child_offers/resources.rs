//! The children's resources: every resource and resource template of the servers a session can
//! use, passed on as the servers wrote them (a URI is the resource's name). A read, a
//! subscription or an unsubscription reaches the server that listed the URI; a URI listed by
//! two servers belongs to the first in config order. A URI no server listed goes to the first
//! server with a template it matches.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
};

use futures::future::join_all;
use rmcp::model::{ErrorCode, ErrorData, ReadResourceResult, Resource, ResourceTemplate};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::{ask, with_capability};
use crate::locks;
use crate::toolboxes::ServerSlot;

/// MCP's error code for a resource that does not exist.
const RESOURCE_NOT_FOUND: ErrorCode = ErrorCode(-32002);

/// Which server each URI and template a session was shown belongs to.
#[derive(Default)]
pub(crate) struct ResourceRoutes {
    routes: Mutex<ResourceTable>,
}

#[derive(Default)]
struct ResourceTable {
    by_uri: HashMap<String, Arc<ServerSlot>>,
    templates: Vec<(String, Arc<ServerSlot>)>,
}

impl ResourceRoutes {
    fn routes(&self) -> std::sync::MutexGuard<'_, ResourceTable> {
        locks::lock(&self.routes)
    }

    /// Every resource of `servers` that declare resources, in server order; a URI is listed
    /// once, by its first server.
    pub(crate) async fn list(
        &self,
        servers: &[Arc<ServerSlot>],
        cancel: &CancellationToken,
    ) -> Vec<Resource> {
        let listed = each(servers, "resources/list", "resources", cancel).await;
        let mut routes = self.routes();
        routes.by_uri.clear();
        let mut resources = Vec::new();
        for (slot, items) in listed {
            for item in items {
                let Ok(resource) = serde_json::from_value::<Resource>(item) else {
                    continue;
                };
                if routes.by_uri.contains_key(&resource.uri) {
                    tracing::debug!(uri = %resource.uri, server = %slot.spec.name, "a URI another server listed first; left out");
                    continue;
                }
                routes.by_uri.insert(resource.uri.clone(), slot.clone());
                resources.push(resource);
            }
        }
        resources
    }

    /// Every resource template of `servers`, in server order.
    pub(crate) async fn templates(
        &self,
        servers: &[Arc<ServerSlot>],
        cancel: &CancellationToken,
    ) -> Vec<ResourceTemplate> {
        let listed = each(
            servers,
            "resources/templates/list",
            "resourceTemplates",
            cancel,
        )
        .await;
        let mut routes = self.routes();
        routes.templates.clear();
        let mut templates = Vec::new();
        for (slot, items) in listed {
            for item in items {
                let Ok(template) = serde_json::from_value::<ResourceTemplate>(item) else {
                    continue;
                };
                routes
                    .templates
                    .push((template.uri_template.clone(), slot.clone()));
                templates.push(template);
            }
        }
        templates
    }

    /// The server `uri` belongs to: the one that listed it, else the first whose template
    /// matches it (the lists are read again once if neither is known).
    async fn owner(
        &self,
        servers: &[Arc<ServerSlot>],
        uri: &str,
        cancel: &CancellationToken,
    ) -> Result<Arc<ServerSlot>, ErrorData> {
        if let Some(slot) = self.known_owner(uri) {
            return Ok(slot);
        }
        self.list(servers, cancel).await;
        self.templates(servers, cancel).await;
        self.known_owner(uri).ok_or_else(|| {
            ErrorData::new(
                RESOURCE_NOT_FOUND,
                format!(
                    "Resource not found: {uri}\nNo server lists it or has a template it matches; list resources/list and resources/templates/list for what there is"
                ),
                Some(json!({ "uri": uri })),
            )
        })
    }

    /// The server of the template `uri_template` (a completion's reference).
    pub(crate) async fn template_owner(
        &self,
        servers: &[Arc<ServerSlot>],
        uri_template: &str,
        cancel: &CancellationToken,
    ) -> Result<Arc<ServerSlot>, ErrorData> {
        let find = |routes: &ResourceTable| {
            routes
                .templates
                .iter()
                .find(|(template, _)| template == uri_template)
                .map(|(_, slot)| slot.clone())
        };
        if let Some(slot) = find(&self.routes()) {
            return Ok(slot);
        }
        self.templates(servers, cancel).await;
        find(&self.routes()).ok_or_else(|| {
            ErrorData::invalid_params(
                format!("Resource template not found: {uri_template}; list resources/templates/list for what there is"),
                None,
            )
        })
    }

    fn known_owner(&self, uri: &str) -> Option<Arc<ServerSlot>> {
        let routes = self.routes();
        if let Some(slot) = routes.by_uri.get(uri) {
            return Some(slot.clone());
        }
        routes
            .templates
            .iter()
            .find(|(template, _)| template_matches(template, uri))
            .map(|(_, slot)| slot.clone())
    }

    /// `resources/read` of `uri`, from its server.
    pub(crate) async fn read(
        &self,
        servers: &[Arc<ServerSlot>],
        uri: &str,
        cancel: &CancellationToken,
    ) -> Result<ReadResourceResult, ErrorData> {
        self.send(servers, "resources/read", uri, cancel).await
    }

    /// `resources/subscribe` or `resources/unsubscribe` of `uri`, at its server.
    pub(crate) async fn subscription(
        &self,
        servers: &[Arc<ServerSlot>],
        method: &'static str,
        uri: &str,
        cancel: &CancellationToken,
    ) -> Result<(), ErrorData> {
        let _: serde_json::Value = self.send(servers, method, uri, cancel).await?;
        Ok(())
    }

    /// Request `method` of `uri` at the server `uri` belongs to.
    async fn send<T: serde::de::DeserializeOwned>(
        &self,
        servers: &[Arc<ServerSlot>],
        method: &'static str,
        uri: &str,
        cancel: &CancellationToken,
    ) -> Result<T, ErrorData> {
        let slot = self.owner(servers, uri, cancel).await?;
        let child = slot.ensure().await.map_err(|reason| {
            ErrorData::internal_error(
                format!(
                    "{method} of {uri}: server '{}' (toolbox '{}') is not available: {reason}",
                    slot.spec.name, slot.toolbox
                ),
                None,
            )
        })?;
        ask(&slot, &child, method, json!({ "uri": uri }), cancel).await
    }
}

/// The items under `key` of each server's answer to `method`, for the servers that declare
/// resources; a server that fails is left out (the log says why).
async fn each(
    servers: &[Arc<ServerSlot>],
    method: &'static str,
    key: &str,
    cancel: &CancellationToken,
) -> Vec<(Arc<ServerSlot>, Vec<serde_json::Value>)> {
    let listed = join_all(servers.iter().map(|slot| async move {
        let child = with_capability(slot, |capabilities| capabilities.resources.is_some()).await?;
        match child.list_all(method, key, cancel).await {
            Ok(items) => Some((slot.clone(), items)),
            Err(error) => {
                tracing::warn!(toolbox = %slot.toolbox, server = %slot.spec.name, %error, "{method} failed; its entries are left out");
                None
            }
        }
    }))
    .await;
    listed.into_iter().flatten().collect()
}

/// One piece of a URI template.
enum Piece<'a> {
    Literal(&'a str),
    /// An expression; `true` when its value may hold `/` (`{+path}`, `{#frag}`).
    Expression(bool),
}

/// Whether `uri` is one `template` (RFC 6570) expands to: its literal parts in order, each
/// expression standing for at least one character (no `/` unless it is a `+` or `#` one).
fn template_matches(template: &str, uri: &str) -> bool {
    let mut pieces = Vec::new();
    let mut parts = template.split('{');
    if let Some(first) = parts.next() {
        pieces.push(Piece::Literal(first));
    }
    for part in parts {
        let Some((expression, literal)) = part.split_once('}') else {
            return false;
        };
        pieces.push(Piece::Expression(
            expression.starts_with('+') || expression.starts_with('#'),
        ));
        pieces.push(Piece::Literal(literal));
    }
    matches(&pieces, uri)
}

fn matches(pieces: &[Piece<'_>], text: &str) -> bool {
    let Some((piece, rest)) = pieces.split_first() else {
        return text.is_empty();
    };
    match piece {
        Piece::Literal(literal) => text
            .strip_prefix(literal)
            .is_some_and(|after| matches(rest, after)),
        Piece::Expression(spans) => text
            .char_indices()
            .skip(1)
            .map(|(at, _)| at)
            .chain(std::iter::once(text.len()))
            .filter(|&end| end > 0)
            .take_while(|&end| *spans || !text[..end].contains('/'))
            .any(|end| matches(rest, &text[end..])),
    }
}

#[cfg(test)]
mod tests {
    use super::template_matches;

    #[test]
    fn templates_match_what_they_expand_to() {
        assert!(template_matches(
            "test://static/resource/{id}",
            "test://static/resource/7"
        ));
        assert!(!template_matches(
            "test://static/resource/{id}",
            "test://static/resource/"
        ));
        assert!(!template_matches(
            "test://static/resource/{id}",
            "test://static/resource/7/8"
        ));
        assert!(template_matches("file:///{+path}", "file:///a/b.txt"));
        assert!(template_matches(
            "repo://{owner}/{name}/readme",
            "repo://me/it/readme"
        ));
        assert!(!template_matches(
            "repo://{owner}/{name}/readme",
            "repo://me/readme"
        ));
        assert!(!template_matches("other://{x}", "test://static/resource/7"));
        assert!(template_matches("plain://exact", "plain://exact"));
    }
}
