//! The servers agent sessions share under `serve --http`: one slot per configured server that
//! is not marked `"sharing": "session"`, started by the first session that needs it, with the
//! port it is given as its agent side (a child's request reaches the session whose call it serves).
#![allow(
    deprecated,
    reason = "SEP-2577 deprecates logging, but revisions before 2026-07-28 have it"
)]

use std::sync::{Arc, Mutex, RwLock};

use indexmap::IndexMap;
use rmcp::model::LoggingLevel;
use tokio_util::sync::CancellationToken;

use super::{ServerSlot, idle, stop_children};
use crate::{
    catalog::cache::CatalogCache,
    children::{Agent, Launch, ProcessRegistry},
    config::{Config, Sharing},
    locks,
    metrics::Metrics,
};

pub(crate) struct SharedServers {
    /// By toolbox, then server; a reload replaces the map.
    slots: RwLock<Arc<Slots>>,
    launch: Arc<Launch>,
    /// Where the shared children's requests and notices go.
    agent: Agent,
    stop: CancellationToken,
    /// Ends the sweeper of the slots before a reload.
    sweeper: Mutex<CancellationToken>,
}

type Slots = IndexMap<(String, String), Arc<ServerSlot>>;

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
        let slots = shared_slots(config, &launch, None);
        let stop = CancellationToken::new();
        let sweeper = stop.child_token();
        idle::spawn_sweeper(slots.values().cloned().collect(), sweeper.clone());
        Arc::new(Self {
            slots: RwLock::new(Arc::new(slots)),
            launch,
            agent,
            stop,
            sweeper: Mutex::new(sweeper),
        })
    }

    /// Takes `config`'s shared servers: those defined as before keep their slot and child,
    /// the others stop once idle (`ServerSlot::retire`), and new ones start on demand.
    pub(crate) fn reload(&self, config: &Config) {
        let before = self.slots();
        let slots = shared_slots(config, &self.launch, Some(&before));
        let sweeper = self.stop.child_token();
        idle::spawn_sweeper(slots.values().cloned().collect(), sweeper.clone());
        locks::lock(&self.sweeper).cancel();
        *locks::lock(&self.sweeper) = sweeper;
        *locks::write(&self.slots) = Arc::new(slots);
        let after = self.slots();
        for slot in before.values() {
            if !after.values().any(|kept| Arc::ptr_eq(kept, slot)) {
                slot.clone().retire();
            }
        }
    }

    fn slots(&self) -> Arc<Slots> {
        locks::read(&self.slots).clone()
    }

    pub(super) fn slot(&self, toolbox: &str, server: &str) -> Option<Arc<ServerSlot>> {
        self.slots()
            .get(&(toolbox.to_owned(), server.to_owned()))
            .cloned()
    }

    pub(crate) fn metrics(&self) -> Option<Arc<Metrics>> {
        self.launch.metrics.clone()
    }

    /// How many shared children run now.
    pub(crate) fn running(&self) -> usize {
        self.slots()
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
        stop_children(self.slots().values(), &self.launch.registry).await;
    }
}

/// A slot per server of `config` that sessions share: `before`'s where the server is defined
/// as it was, else a new one.
fn shared_slots(config: &Config, launch: &Arc<Launch>, before: Option<&Slots>) -> Slots {
    config
        .toolboxes
        .iter()
        .flat_map(|(toolbox, spec)| spec.servers.iter().map(move |server| (toolbox, server)))
        .filter(|(_, server)| server.sharing == Sharing::Shared)
        .map(|(toolbox, server)| {
            let key = (toolbox.clone(), server.name.clone());
            let kept = before
                .and_then(|before| before.get(&key))
                .filter(|slot| *slot.spec == **server)
                .cloned();
            let slot = kept.unwrap_or_else(|| {
                Arc::new(ServerSlot::new(
                    toolbox,
                    server.clone(),
                    launch.clone(),
                    true,
                ))
            });
            (key, slot)
        })
        .collect()
}
