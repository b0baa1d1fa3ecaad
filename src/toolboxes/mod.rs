//! The configured toolboxes and their servers. Opening a toolbox starts every server that is not
//! running, all at once; `slot` owns each server's state and (re)starts, `backoff` paces
//! restarts of failing servers, `idle` stops children nobody uses.

mod backoff;
mod idle;
mod slot;

use std::{
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::Duration,
};

use futures::future::join_all;
use indexmap::IndexMap;
use tokio_util::sync::CancellationToken;

pub(crate) use slot::{ServerSlot, ServerState};

use crate::{
    agent_link::AgentLink,
    children::{Child, Launch, ProcessRegistry},
    config::{Config, ToolboxSpec},
};

/// How long shutdown waits for all children before giving up on the stragglers.
pub(crate) const SHUTDOWN_LIMIT: Duration = Duration::from_secs(10);

/// Every configured toolbox, fixed at start-up.
pub(crate) struct Toolboxes {
    boxes: IndexMap<String, Arc<Toolbox>>,
    launch: Launch,
    stop: CancellationToken,
}

/// One toolbox and its servers.
pub(crate) struct Toolbox {
    pub spec: Arc<ToolboxSpec>,
    pub servers: Vec<ServerSlot>,
    open: AtomicBool,
}

impl Toolboxes {
    /// Builds the toolboxes; starts nothing but the idle sweeper (which needs a runtime).
    pub(crate) fn new(config: &Config, agent: Arc<AgentLink>) -> Self {
        let boxes: IndexMap<String, Arc<Toolbox>> = config
            .toolboxes
            .iter()
            .map(|(name, spec)| {
                let servers = spec
                    .servers
                    .iter()
                    .map(|server| ServerSlot::new(name, server.clone()))
                    .collect();
                let toolbox = Toolbox {
                    spec: spec.clone(),
                    servers,
                    open: AtomicBool::new(false),
                };
                (name.clone(), Arc::new(toolbox))
            })
            .collect();
        let stop = CancellationToken::new();
        idle::spawn_sweeper(boxes.values().cloned().collect(), stop.clone());
        Self {
            boxes,
            launch: Launch {
                registry: Arc::new(ProcessRegistry::default()),
                agent,
            },
            stop,
        }
    }

    pub(crate) fn get(&self, name: &str) -> Option<&Arc<Toolbox>> {
        self.boxes.get(name)
    }

    pub(crate) fn names(&self) -> impl Iterator<Item = &str> {
        self.boxes.keys().map(String::as_str)
    }

    pub(crate) fn all(&self) -> impl Iterator<Item = &Arc<Toolbox>> {
        self.boxes.values()
    }

    pub(crate) fn launch(&self) -> &Launch {
        &self.launch
    }

    /// Every child that is running now.
    pub(crate) fn running(&self) -> Vec<Arc<Child>> {
        self.boxes
            .values()
            .flat_map(|toolbox| toolbox.servers.iter().filter_map(ServerSlot::live))
            .collect()
    }

    /// Starts every server of `toolbox` that is not running, concurrently. The toolbox counts as
    /// open once any of its servers is ready, unless an alias clashes with a tool name: then it
    /// stays closed and the conflicts (with their fixes) are returned; `close` stops its children.
    pub(crate) async fn open(&self, toolbox: &Toolbox) -> Result<(), Vec<String>> {
        join_all(toolbox.servers.iter().map(|slot| slot.ensure(&self.launch))).await;
        let conflicts = toolbox.alias_conflicts();
        if !conflicts.is_empty() {
            toolbox.open.store(false, Ordering::Release);
            return Err(conflicts);
        }
        if toolbox.servers.iter().any(|slot| slot.live().is_some()) {
            toolbox.open.store(true, Ordering::Release);
        }
        Ok(())
    }

    /// Closes `toolbox`: stops its children; the next open starts afresh.
    pub(crate) async fn close(&self, toolbox: &Toolbox) {
        toolbox.open.store(false, Ordering::Release);
        join_all(toolbox.servers.iter().map(ServerSlot::stop)).await;
    }

    /// Stops every child, concurrently, within `SHUTDOWN_LIMIT`; no process is started after
    /// this begins.
    pub(crate) async fn shutdown(&self) {
        self.stop.cancel();
        self.launch.registry.close();
        let children: Vec<Arc<Child>> = self
            .boxes
            .values()
            .flat_map(|toolbox| toolbox.servers.iter())
            .filter_map(|slot| match slot.state() {
                ServerState::Ready(child) => Some(child),
                _ => None,
            })
            .collect();
        let graceful = join_all(children.iter().map(|child| child.shutdown()));
        let _ = tokio::time::timeout(SHUTDOWN_LIMIT, graceful).await;
        let stragglers = self.launch.registry.stop_all(Duration::from_secs(5)).await;
        if stragglers > 0 {
            tracing::error!(count = stragglers, "children still running after shutdown");
        }
    }
}

impl Toolbox {
    /// Aliases that equal another visible tool's name, across the toolbox's ready servers.
    pub(crate) fn alias_conflicts(&self) -> Vec<String> {
        let catalogs: Vec<(&str, &crate::catalog::ServerCatalog)> = self
            .servers
            .iter()
            .filter(|slot| slot.live().is_some())
            .map(|slot| (slot.spec.name.as_str(), slot.catalog.as_ref()))
            .collect();
        crate::catalog::alias_conflicts(&catalogs)
    }

    /// Overrides that name no tool of their (ready) server.
    pub(crate) fn warnings(&self) -> Vec<String> {
        self.servers
            .iter()
            .filter(|slot| slot.live().is_some())
            .flat_map(|slot| slot.catalog.warnings())
            .collect()
    }

    pub(crate) fn is_open(&self) -> bool {
        self.open.load(Ordering::Acquire)
    }

    pub(crate) fn server(&self, name: &str) -> Option<&ServerSlot> {
        self.servers.iter().find(|slot| slot.spec.name == name)
    }
}
