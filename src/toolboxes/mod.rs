//! The configured toolboxes and their servers. Opening a toolbox starts every server that is not
//! running, all at once; `slot` owns each server's state and (re)starts, `backoff` paces
//! restarts of failing servers, `idle` stops children nobody uses. Under `serve --http` the
//! servers sessions share live in `shared`, and each session's toolboxes hold those slots
//! beside its own.
#![allow(
    deprecated,
    reason = "SEP-2577 deprecates logging, but revisions before 2026-07-28 have it"
)]

mod backoff;
mod idle;
mod reload;
mod shared;
mod slot;
mod visible;

use std::{
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::Duration,
};

use futures::future::join_all;
use indexmap::IndexMap;
use rmcp::model::LoggingLevel;
use tokio_util::sync::CancellationToken;

pub(crate) use shared::SharedServers;
pub(crate) use slot::{ServerSlot, ServerState};

use crate::{
    catalog::cache::CatalogCache,
    children::{Agent, Child, Launch, ProcessRegistry},
    config::{Config, Policy, Prestart, Sharing, ToolboxSpec, Withheld},
    error::{Context, ToolError},
    metrics::Metrics,
    search::SessionSearch,
};

/// How long shutdown waits for all children before giving up on the stragglers.
pub(crate) const SHUTDOWN_LIMIT: Duration = Duration::from_secs(10);

/// One agent session's toolboxes, fixed at start-up: which are open, and their servers.
pub(crate) struct Toolboxes {
    boxes: IndexMap<String, Arc<Toolbox>>,
    /// The session itself, whose calls these are.
    agent: Agent,
    /// How the session's own children start.
    launch: Arc<Launch>,
    /// The servers every session shares, if sessions share any.
    shared: Option<Arc<SharedServers>>,
    /// When a toolbox opened from the persisted catalog starts its servers.
    prestart: Prestart,
    /// The session's search index and the tools its searches showed.
    search: SessionSearch,
    /// The caller the session's token names (`serve --http` with tokens), for its metrics.
    caller: std::sync::OnceLock<String>,
    /// What the policy withholds from the session's caller.
    withheld: Arc<Withheld>,
    /// The access rules, for the calls they ask the user to confirm.
    policy: Option<Arc<Policy>>,
    stop: CancellationToken,
}

/// How `open` finds a toolbox's tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Opening {
    /// From the servers themselves: every one that is not running starts, and the open waits.
    Live,
    /// From the persisted catalog where it has a server's tools (that server starts as
    /// `Prestart` says); only the others start before the answer.
    Remembered(Prestart),
}

/// One toolbox and its servers.
pub(crate) struct Toolbox {
    pub spec: Arc<ToolboxSpec>,
    pub servers: Vec<Arc<ServerSlot>>,
    open: AtomicBool,
}

impl Toolboxes {
    /// Builds one session's toolboxes: a server marked `"sharing": "session"`, or any server
    /// when nothing is `shared`, gets a slot of the session's own. Starts nothing but the idle
    /// sweeper (which needs a runtime).
    pub(crate) fn new(config: &Config, agent: Agent, shared: Option<Arc<SharedServers>>) -> Self {
        let launch = Arc::new(Launch {
            registry: Arc::new(ProcessRegistry::default()),
            agent: agent.clone(),
            metrics: shared.as_ref().and_then(|shared| shared.metrics()),
            catalogs: CatalogCache::new(&config.catalog),
        });
        Self::assemble(config, agent, launch, shared, None)
    }

    /// The toolboxes of `config`; with `before` (the same session's, under the config before a
    /// reload), its own slots of servers defined as before, its open toolboxes and its caller
    /// are kept.
    fn assemble(
        config: &Config,
        agent: Agent,
        launch: Arc<Launch>,
        shared: Option<Arc<SharedServers>>,
        before: Option<&Toolboxes>,
    ) -> Self {
        let boxes: IndexMap<String, Arc<Toolbox>> = config
            .toolboxes
            .iter()
            .map(|(name, spec)| {
                let earlier = before.and_then(|before| before.boxes.get(name));
                let servers = spec
                    .servers
                    .iter()
                    .map(|server| {
                        let pooled = shared
                            .as_ref()
                            .filter(|_| server.sharing == Sharing::Shared)
                            .and_then(|shared| shared.slot(name, &server.name));
                        let kept = || earlier.and_then(|toolbox| toolbox.own_slot_for(server));
                        pooled.or_else(kept).unwrap_or_else(|| {
                            Arc::new(ServerSlot::new(name, server.clone(), launch.clone(), false))
                        })
                    })
                    .collect();
                let toolbox = Toolbox {
                    spec: spec.clone(),
                    servers,
                    open: AtomicBool::new(earlier.is_some_and(|toolbox| toolbox.is_open())),
                };
                (name.clone(), Arc::new(toolbox))
            })
            .collect();
        let stop = CancellationToken::new();
        let own: Vec<Arc<ServerSlot>> = own_slots(&boxes).cloned().collect();
        idle::spawn_sweeper(own, stop.clone());
        let caller = std::sync::OnceLock::new();
        if let Some(name) = before.and_then(Toolboxes::caller) {
            let _ = caller.set(name.to_owned());
        }
        Self {
            boxes,
            agent,
            launch,
            shared,
            prestart: config.catalog.prestart,
            search: SessionSearch::new(config.search.meaning),
            caller,
            withheld: config.withheld.clone(),
            policy: config.policy.clone(),
            stop,
        }
    }

    pub(crate) fn get(&self, name: &str) -> Option<&Arc<Toolbox>> {
        self.boxes.get(name)
    }

    /// The toolbox called `name`, or use_tool's error naming the known ones (`context`: which
    /// tool or command asked).
    pub(crate) fn find(&self, name: &str, context: Context) -> Result<&Arc<Toolbox>, ToolError> {
        self.get(name).ok_or_else(|| ToolError::ToolboxUnknown {
            context,
            known: self.names().map(str::to_owned).collect(),
            toolbox: name.to_owned(),
        })
    }

    pub(crate) fn names(&self) -> impl Iterator<Item = &str> {
        self.boxes.keys().map(String::as_str)
    }

    pub(crate) fn all(&self) -> impl Iterator<Item = &Arc<Toolbox>> {
        self.boxes.values()
    }

    /// The caller the session's token names, once the transport said it.
    pub(crate) fn caller(&self) -> Option<&str> {
        self.caller.get().map(String::as_str)
    }

    pub(crate) fn set_caller(&self, caller: &str) {
        let _ = self.caller.set(caller.to_owned());
    }

    /// The session's search over its toolboxes' tools.
    pub(crate) fn search(&self) -> &SessionSearch {
        &self.search
    }

    /// The agent session these toolboxes are for.
    pub(crate) fn agent(&self) -> &Agent {
        &self.agent
    }

    /// Cancelled when the session shuts down: work of the session's own stops with it.
    pub(crate) fn stopping(&self) -> CancellationToken {
        self.stop.clone()
    }

    /// Where calls and starts are counted, if anywhere (`serve --http`).
    pub(crate) fn metrics(&self) -> Option<&Arc<Metrics>> {
        self.launch.metrics.as_ref()
    }

    /// How many of the session's own children run now.
    pub(crate) fn own_running(&self) -> usize {
        own_slots(&self.boxes)
            .filter(|slot| slot.live().is_some())
            .count()
    }

    /// Every child that is running now, the shared ones included.
    pub(crate) fn running(&self) -> Vec<Arc<Child>> {
        self.boxes
            .values()
            .flat_map(|toolbox| toolbox.servers.iter().filter_map(|slot| slot.live()))
            .collect()
    }

    /// The session's `logging/setLevel`: its own children take `level`; shared children take
    /// it only if it is more verbose than theirs (each session filters to its own level).
    pub(crate) async fn set_log_level(&self, level: LoggingLevel) {
        let _ = self.agent.set_log_level(level);
        let shared_level = self
            .shared
            .as_ref()
            .and_then(|shared| shared.lower_level(level));
        let changes = self.boxes.values().flat_map(|toolbox| {
            toolbox.servers.iter().filter_map(|slot| {
                let level = if slot.shared { shared_level? } else { level };
                Some((slot.live()?, level))
            })
        });
        let changes: Vec<(Arc<Child>, LoggingLevel)> = changes.collect();
        join_all(
            changes
                .iter()
                .map(|(child, level)| child.set_log_level(*level)),
        )
        .await;
    }

    /// Opens `toolbox` as an agent's `open_toolbox` does: from the persisted catalog where it
    /// can, starting the servers as the config's `prestart` says.
    pub(crate) async fn open(&self, toolbox: &Toolbox) -> Result<(), Vec<String>> {
        self.open_as(toolbox, Opening::Remembered(self.prestart))
            .await
    }

    /// Opens every toolbox of `chosen` at once, as `open_as` does; the alias conflicts of all.
    pub(crate) async fn open_all_as(
        &self,
        chosen: &[&Arc<Toolbox>],
        opening: Opening,
    ) -> Vec<String> {
        join_all(chosen.iter().map(|toolbox| self.open_as(toolbox, opening)))
            .await
            .into_iter()
            .filter_map(Result::err)
            .flatten()
            .collect()
    }

    /// Starts every server of `toolbox` that is not running, concurrently, except those
    /// `opening` takes from the persisted catalog. The toolbox counts as open once any of its
    /// servers lists tools, unless an alias clashes with a tool name: then it stays closed and
    /// the conflicts (with their fixes) are returned; `close` stops its children.
    pub(crate) async fn open_as(
        &self,
        toolbox: &Toolbox,
        opening: Opening,
    ) -> Result<(), Vec<String>> {
        let mut waited = Vec::new();
        for slot in &toolbox.servers {
            match opening {
                Opening::Remembered(prestart) if slot.recall() => {
                    if prestart == Prestart::Background {
                        slot.start_in_background(self.stop.clone());
                    }
                }
                _ => waited.push(slot),
            }
        }
        join_all(waited.iter().map(|slot| slot.ensure())).await;
        let conflicts = toolbox.alias_conflicts();
        if !conflicts.is_empty() {
            toolbox.open.store(false, Ordering::Release);
            return Err(conflicts);
        }
        if toolbox.servers.iter().any(|slot| slot.lists_tools()) {
            toolbox.open.store(true, Ordering::Release);
        }
        Ok(())
    }

    /// Closes `toolbox`: stops the session's own children of it (shared ones stay for the
    /// other sessions); the next open starts afresh.
    pub(crate) async fn close(&self, toolbox: &Toolbox) {
        toolbox.open.store(false, Ordering::Release);
        let own = toolbox.servers.iter().filter(|slot| !slot.shared);
        join_all(own.map(|slot| slot.stop())).await;
    }

    /// Stops the session's own children, concurrently, within `SHUTDOWN_LIMIT`; no process is
    /// started for the session after this begins. Shared children stay.
    pub(crate) async fn shutdown(&self) {
        self.stop.cancel();
        stop_children(own_slots(&self.boxes), &self.launch.registry).await;
    }
}

fn own_slots(boxes: &IndexMap<String, Arc<Toolbox>>) -> impl Iterator<Item = &Arc<ServerSlot>> {
    boxes
        .values()
        .flat_map(|toolbox| toolbox.servers.iter())
        .filter(|slot| !slot.shared)
}

/// Closes `registry` to new processes and stops the children of `slots`, concurrently,
/// within `SHUTDOWN_LIMIT`; whatever is left of the registry's processes is then killed.
async fn stop_children<'a>(
    slots: impl Iterator<Item = &'a Arc<ServerSlot>>,
    registry: &ProcessRegistry,
) {
    registry.close();
    let children: Vec<Arc<Child>> = slots
        .filter_map(|slot| match slot.state() {
            ServerState::Ready(child) => Some(child),
            _ => None,
        })
        .collect();
    let graceful = join_all(children.iter().map(|child| child.shutdown()));
    let _ = tokio::time::timeout(SHUTDOWN_LIMIT, graceful).await;
    let stragglers = registry.stop_all(Duration::from_secs(5)).await;
    if stragglers > 0 {
        tracing::error!(count = stragglers, "children still running after shutdown");
    }
}

impl Toolbox {
    /// Aliases that equal another visible tool's name, across the toolbox's servers that list
    /// tools.
    pub(crate) fn alias_conflicts(&self) -> Vec<String> {
        let catalogs: Vec<(&str, &crate::catalog::ServerCatalog)> = self
            .servers
            .iter()
            .filter(|slot| slot.lists_tools())
            .map(|slot| (slot.spec.name.as_str(), slot.catalog.as_ref()))
            .collect();
        crate::catalog::alias_conflicts(&catalogs)
    }

    /// Overrides that name no tool of their server (of those that list tools).
    pub(crate) fn warnings(&self) -> Vec<String> {
        self.servers
            .iter()
            .filter(|slot| slot.lists_tools())
            .flat_map(|slot| slot.catalog.warnings())
            .collect()
    }

    pub(crate) fn is_open(&self) -> bool {
        self.open.load(Ordering::Acquire)
    }

    pub(crate) fn server(&self, name: &str) -> Option<&ServerSlot> {
        self.servers
            .iter()
            .find(|slot| slot.spec.name == name)
            .map(|slot| &**slot)
    }

    /// The server called `name`, or use_tool's error naming the toolbox's servers.
    pub(crate) fn find_server(&self, name: &str) -> Result<&ServerSlot, ToolError> {
        self.server(name).ok_or_else(|| ToolError::ServerUnknown {
            known: self
                .servers
                .iter()
                .map(|slot| slot.spec.name.clone())
                .collect(),
            toolbox: self.spec.name.clone(),
            server: name.to_owned(),
        })
    }
}
