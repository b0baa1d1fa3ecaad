//! What an agent sees of toolshelf, the same for every session of one serving process: built
//! once from the config (the meta-tools' checks compile schemas).
#![allow(
    deprecated,
    reason = "SEP-2577 deprecates logging; revisions before 2026-07-28 have it"
)]

use std::sync::Arc;

use rmcp::model::{
    Implementation, PromptsCapability, ResourcesCapability, ServerCapabilities, ServerConfig,
};

use crate::{config::Config, flat::FlatSpec, meta_tools::MetaTools};

/// The meta-tools (or flat mode's view of the children) and what `initialize` answers.
#[derive(Clone)]
pub(crate) struct Surface {
    pub(super) meta: Arc<MetaTools>,
    pub(super) flat: Option<Arc<FlatSpec>>,
    pub(super) info: Arc<ServerConfig>,
}

impl Surface {
    /// Toolbox mode's two meta-tools, or with `flat` the children's tools by flat names.
    pub(crate) fn new(config: &Config, flat: Option<Arc<FlatSpec>>) -> Self {
        let meta = MetaTools::new(config);
        // Logging: children's log messages are passed on, and the agent's level reaches them.
        // Tasks (the 2026-07-28 extension): a child's task reaches the agent as one.
        // Prompts, resources and completions: the children's, passed on. Any configured server
        // may have them, and which do is known only once they run.
        let mut capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_logging()
            .enable_tasks()
            .enable_completions()
            .build();
        let mut prompts = PromptsCapability::default();
        prompts.list_changed = Some(true);
        capabilities.prompts = Some(prompts);
        let mut resources = ResourcesCapability::default();
        resources.subscribe = Some(true);
        resources.list_changed = Some(true);
        capabilities.resources = Some(resources);
        let instructions = match &flat {
            Some(flat) => {
                // The list is the children's: it changes when theirs do.
                if let Some(tools) = capabilities.tools.as_mut() {
                    tools.list_changed = Some(true);
                }
                flat.instructions()
            }
            None => meta.instructions().to_owned(),
        };
        let info = ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("toolshelf", env!("CARGO_PKG_VERSION")))
            .with_instructions(instructions);
        Self {
            meta: Arc::new(meta),
            flat,
            info: Arc::new(info),
        }
    }
}
