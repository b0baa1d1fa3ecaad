//! What a server offers the agent: its tools after `toolFilters`, replaced whole whenever the
//! server is (re)started or says its list changed. Pure data; readers get a cheap snapshot.

use std::sync::{Arc, RwLock};

use rmcp::model::Tool;

use crate::config::ToolFilter;

/// The current tools of one server.
#[derive(Debug)]
pub(crate) struct ServerCatalog {
    filter: ToolFilter,
    tools: RwLock<Arc<[Tool]>>,
}

impl ServerCatalog {
    pub(crate) fn new(filter: ToolFilter) -> Self {
        Self {
            filter,
            tools: RwLock::new(Arc::from(Vec::new())),
        }
    }

    /// Replaces the list with `listed` (the server's whole `tools/list`), filtered.
    pub(crate) fn replace(&self, listed: Vec<Tool>) {
        let kept: Vec<Tool> = listed
            .into_iter()
            .filter(|tool| self.filter.keeps(&tool.name))
            .collect();
        *self
            .tools
            .write()
            .unwrap_or_else(|poison| poison.into_inner()) = Arc::from(kept);
    }

    /// The tools as they are now.
    pub(crate) fn tools(&self) -> Arc<[Tool]> {
        self.tools
            .read()
            .unwrap_or_else(|poison| poison.into_inner())
            .clone()
    }

    pub(crate) fn has(&self, name: &str) -> bool {
        self.tools().iter().any(|tool| tool.name == name)
    }

    pub(crate) fn names(&self) -> Vec<String> {
        self.tools()
            .iter()
            .map(|tool| tool.name.to_string())
            .collect()
    }
}
