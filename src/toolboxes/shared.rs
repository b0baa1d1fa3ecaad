//! The servers agent sessions share under `serve --http`: one slot per configured server that
//! is not marked `"sharing": "session"`, started by the first session that needs it, with the
//! port it is given as its agent side (a child's request reaches the session whose call it serves).
#![allow(
    deprecated,
    reason = "SEP-2577 deprecates logging, but revisions before 2026-07-28 have it"
)]

use std::sync::Arc;

use indexmap::IndexMap;
use rmcp::model::LoggingLevel;
use tokio_util::sync::CancellationToken;

use super::{ServerSlot, idle, stop_children};
use crate::{
    catalog::cache::CatalogCache,
    children::{Agent, Launch, ProcessRegistry},
    config::{Config, Sharing},
    metrics::Metrics,
};

pub(crate) struct SharedServers {
    /// By toolbox, then server.
    slots: IndexMap<(String, String), Arc<ServerSlot>>,
    launch: Arc<Launch>,
    /// Where the shared children's requests and notices go.
    agent: Agent,
    stop: CancellationToken,
}

impl SharedServers {
    /// Builds the shared slots; starts nothing but their idle sweeper. Every session's starts
    /// and calls count in `metrics`.
    pub(crate) fn new(config: &Config, metrics: Arc<Metrics>, agent: Agent) -> Arc<Self> {
        let launch = Arc::new(Launch {
            registry: Arc::new(ProcessRegistry::default()),
            agent: agent.clone(),
            metrics: Some(metrics),
            catalogs: CatalogCache::new(&config.catalog),
        });
        let slots: IndexMap<(String, String), Arc<ServerSlot>> = config
            .toolboxes
            .iter()
            .flat_map(|(toolbox, spec)| spec.servers.iter().map(move |server| (toolbox, server)))
            .filter(|(_, server)| server.sharing == Sharing::Shared)
            .map(|(toolbox, server)| {
                let slot = ServerSlot::new(toolbox, server.clone(), launch.clone(), true);
                ((toolbox.clone(), server.name.clone()), Arc::new(slot))
            })
            .collect();
        let stop = CancellationToken::new();
        idle::spawn_sweeper(slots.values().cloned().collect(), stop.clone());
        Arc::new(Self {
            slots,
            launch,
            agent,
            stop,
        })
    }

    pub(super) fn slot(&self, toolbox: &str, server: &str) -> Option<Arc<ServerSlot>> {
        self.slots
            .get(&(toolbox.to_owned(), server.to_owned()))
            .cloned()
    }

    pub(crate) fn metrics(&self) -> Option<Arc<Metrics>> {
        self.launch.metrics.clone()
    }

    /// How many shared children run now.
    pub(crate) fn running(&self) -> usize {
        self.slots
            .values()
            .filter(|slot| slot.live().is_some())
            .count()
    }

    pub(super) fn lower_level(&self, level: LoggingLevel) -> Option<LoggingLevel> {
        self.agent.set_log_level(level)
    }

    /// Stops every shared child; none starts afterwards.
    pub(crate) async fn shutdown(&self) {
        self.stop.cancel();
        stop_children(self.slots.values(), &self.launch.registry).await;
    }
}
