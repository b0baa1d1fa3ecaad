//! How a server's tools changed between two lists, and which of that is drift.

use super::{CatalogTool, Source};

/// How a server's tools changed between two lists, by canonical name.
#[derive(Debug, Default, PartialEq, Eq, serde::Serialize)]
pub(crate) struct Changes {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub added: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub removed: Vec<String>,
    /// Same name, but its schema, description, title, annotations, alias, tags or task support
    /// differ.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub changed: Vec<String>,
}

/// Of `changes` to a list that came from `source`, what is drift: a tool added to a list that a
/// client offering less was given is none, since the server may list it only to a client
/// offering more. `None` when nothing drifted.
pub(crate) fn drift(mut changes: Changes, source: Source) -> Option<Changes> {
    if source.of_fewer_offers() {
        changes.added.clear();
    }
    (changes != Changes::default()).then_some(changes)
}

/// How `after` differs from `before`; `None` when it does not.
pub(crate) fn changes(before: &[CatalogTool], after: &[CatalogTool]) -> Option<Changes> {
    let find =
        |tools: &[CatalogTool], name: &str| tools.iter().position(|tool| tool.name() == name);
    let mut changes = Changes::default();
    for tool in after {
        match find(before, tool.name()) {
            None => changes.added.push(tool.name().to_owned()),
            Some(at) if !before[at].same_as(tool) => changes.changed.push(tool.name().to_owned()),
            Some(_) => {}
        }
    }
    changes.removed = before
        .iter()
        .filter(|tool| find(after, tool.name()).is_none())
        .map(|tool| tool.name().to_owned())
        .collect();
    (changes != Changes::default()).then_some(changes)
}
